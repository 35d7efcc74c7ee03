"""Train the seed-count network (a small CNN over one pit crop) and export it for the reader.

The README ("Development") gives the exact commands that made the shipped network.

    python -m venv /tmp/train && /tmp/train/bin/pip install torch==2.13.0 onnx onnxruntime numpy "opencv-python-headless<5" tqdm
    /tmp/train/bin/pip install --no-deps -e .
    /tmp/train/bin/python benchmarks/train_counter.py --train /tmp/counter/train.npz \
        --val /tmp/counter/val.npz --unseen /tmp/counter/unseen.npz --out calibration/

Data comes from ``benchmarks/counter_data.py`` (rendered boards in the default style
and the ``randomised`` style, which draws seed, wood and light colours from the whole
colour space; ``--unseen`` is the held-out style, only reported, never used to choose
anything).
PyTorch is needed only here, never by omweso-cam itself: the trunk is exported to
ONNX (``seed_counter.onnx``, run by ONNX Runtime, or by OpenCV's dnn module without it)
and the last layer (a softmax over counts 0..64 from the trunk's embedding) into the seed model JSON
(``seed_model_default.json``), which is what ``omweso-cam calibrate seeds`` refits.

``--from-shipped calibration`` fine-tunes the network as shipped (its batch normalisation
folded into the convolutions, as the ONNX file holds it) instead of starting afresh; a
shipped trunk in 8-bit integers starts from its weights turned back into floats. The
network written here is in floats: ``benchmarks/quantise_counter.py`` makes the int8 trunk
the reader ships.

Augmentation stands in for what renders lack: any rotation and mirror (pits are
round), centre/scale jitter (grid error), blur and resolution loss, sensor noise,
gain/gamma, and colour mixing with channel swaps (seed and wood colours the
renderer never drew).
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import cv2
import numpy as np

from omweso_cam.observation import MAX_COUNT
from omweso_cam.vision.count import CountConfig, network_input

STORED_MARGIN = 4 / 3  # benchmarks/counter_data.py MARGIN


def canonical(crops64: np.ndarray, size: int) -> np.ndarray:
    """The centre of stored crops, at the reader's canonical size (no augmentation)."""
    s = crops64.shape[1]
    inner = s / STORED_MARGIN
    m = np.array([[size / inner, 0, -(s - inner) / 2 * size / inner], [0, size / inner, -(s - inner) / 2 * size / inner]])
    return np.stack([cv2.warpAffine(c, m, (size, size), flags=cv2.INTER_AREA) for c in crops64])


def augment(crops64: np.ndarray, size: int, rng: np.random.Generator,
            points: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray | None]:
    """Randomly transformed canonical crops (N, size, size, 3) uint8, and the seed centres
    ``points`` (N, K, 2) of the stored crops moved with them (None if not given)."""
    s = crops64.shape[1]
    inner = s / STORED_MARGIN
    out = np.empty((len(crops64), size, size, 3), np.uint8)
    moved = None if points is None else np.array(points, np.float64)
    for i, crop in enumerate(crops64):
        angle = rng.uniform(0, 360)
        zoom = (size / inner) * rng.uniform(0.9, 1.1)
        shift = rng.normal(0, 0.06 * inner, 2)
        m = cv2.getRotationMatrix2D((s / 2 + shift[0], s / 2 + shift[1]), angle, zoom)
        m[:, 2] += size / 2 - (s / 2 + shift)
        img = cv2.warpAffine(crop, m, (size, size), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REFLECT)
        mirror = rng.random() < 0.5
        if mirror:
            img = img[:, ::-1]
        if moved is not None:
            moved[i] = moved[i] @ m[:, :2].T + m[:, 2]
            if mirror:
                moved[i, :, 0] = size - 1 - moved[i, :, 0]
        f = img.astype(np.float32)
        if rng.random() < 0.35:  # resolution loss (a farther camera)
            k = rng.uniform(0.35, 0.8)
            small = cv2.resize(f, (max(8, round(size * k)),) * 2, interpolation=cv2.INTER_AREA)
            f = cv2.resize(small, (size, size), interpolation=cv2.INTER_LINEAR)
        if rng.random() < 0.3:
            f = cv2.GaussianBlur(f, (0, 0), rng.uniform(0.4, 1.3))
        if rng.random() < 0.6:  # colour: mix channels (possibly swapped), gain, gamma
            mix = np.eye(3) + rng.normal(0, 0.12, (3, 3))
            if rng.random() < 0.3:
                mix = mix[rng.permutation(3)]
            f = f @ mix.T.astype(np.float32)
        f = f * rng.uniform(0.6, 1.4) + rng.uniform(-20, 20)
        f = np.clip(f, 0, 255)
        if rng.random() < 0.5:
            f = 255.0 * (f / 255.0) ** rng.uniform(0.7, 1.4)
        f += rng.normal(0, rng.uniform(0, 6), f.shape)
        out[i] = np.clip(f, 0, 255).astype(np.uint8)
    return out, moved


#: The seed map (``--seed-map-weight``): one cell per 4x4 input pixels (the trunk's 12 px stage),
#: every seed a Gaussian of this many cells that sums to one.
MAP_STRIDE = 4
MAP_SIGMA = 0.6


def seed_maps(points: np.ndarray, size: int) -> np.ndarray:
    """Target seed maps (N, 1, C, C) float32 from seed centres (N, K, 2) in input pixels (NaN: none).

    Each seed adds a Gaussian bump of total weight one at its centre, so a map sums to the
    seeds whose centres lie in the crop (a seed past its edge adds what of it falls inside)."""
    cells = size // MAP_STRIDE
    centre = (np.arange(cells) + 0.5) * MAP_STRIDE - 0.5  # input pixel at each cell's centre
    pts = (np.asarray(points, np.float64) - centre[0]) / MAP_STRIDE  # in cells
    valid = np.isfinite(pts).all(axis=2)
    pts = np.where(valid[..., None], pts, -1e3)
    k = np.arange(cells, dtype=np.float64)
    gx = np.exp(-0.5 * ((k[None, None, :] - pts[..., 0:1]) / MAP_SIGMA) ** 2)  # (N, K, C)
    gy = np.exp(-0.5 * ((k[None, None, :] - pts[..., 1:2]) / MAP_SIGMA) ** 2)
    maps = np.einsum("nky,nkx->nyx", gy, gx) / (2 * math.pi * MAP_SIGMA**2)
    return maps[:, None].astype(np.float32)


def soft_targets(counts: np.ndarray) -> np.ndarray:
    """Training targets: a narrow discretised Gaussian around the true count (wider for heaps)."""
    k = np.arange(MAX_COUNT + 1)[None, :]
    sd = 0.2 + 0.05 * counts[:, None]
    t = np.exp(-0.5 * ((k - counts[:, None]) / sd) ** 2)
    return (t / t.sum(axis=1, keepdims=True)).astype(np.float32)


#: Trunk shapes after the stem (one 5x5 convolution of stride 2 to ``--width`` channels, 48 -> 24
#: px): the stages at 24, 12 and 6 px, each (output width as a multiple of ``--width``, 3x3
#: convolutions), a 2x2 max pool between them.
ARCHS = {
    "small": ((2, 1), (3, 2), (4, 1)),  # the network shipped until 2026-12-03 (about 9 M MACs a crop)
    "deep": ((2, 1), (3, 3), (6, 2)),  # more convolutions at 12 and 6 px (about 16 M MACs)
}


def build(torch, width: int, *, arch: str, fused: bool = False):  # type: ignore[no-untyped-def]
    """Trunk and head. ``fused``: batch normalisation folded into the convolutions (as the
    exported ONNX file holds them), the form a shipped network is fine-tuned in."""
    nn = torch.nn

    def block(cin: int, cout: int, stride: int = 1, k: int = 3) -> list:
        if fused:
            return [nn.Conv2d(cin, cout, k, stride, k // 2), nn.Identity(), nn.ReLU()]
        return [nn.Conv2d(cin, cout, k, stride, k // 2, bias=False), nn.BatchNorm2d(cout), nn.ReLU()]

    stages = ARCHS[arch]
    layers: list = block(3, width, 2, 5)  # 48 -> 24
    cin = width
    for i, (mult, convs) in enumerate(stages):
        if i:
            layers.append(nn.MaxPool2d(2))  # 24 -> 12 -> 6
        for _ in range(convs):
            layers += block(cin, mult * width)
            cin = mult * width
    trunk = nn.Sequential(*layers, nn.AdaptiveAvgPool2d(1), nn.Flatten())
    head = nn.Linear(cin, MAX_COUNT + 1)
    return trunk, head


def conv_parameters(onnx, graph) -> dict[str, np.ndarray]:  # type: ignore[no-untyped-def]
    """The graph's initialisers in floats, by name; in a quantised trunk (quantise_counter.py)
    a weight or bias fed through DequantizeLinear is given as (q - zero point) * scale under
    the name the convolution reads."""
    values = {init.name: onnx.numpy_helper.to_array(init) for init in graph.initializer}
    for node in graph.node:
        if node.op_type == "DequantizeLinear" and node.input[0] in values:
            q, scale = values[node.input[0]].astype(np.float64), values[node.input[1]].astype(np.float64)
            zero = values[node.input[2]].astype(np.float64) if len(node.input) > 2 and node.input[2] else 0.0
            axis = next((a.i for a in node.attribute if a.name == "axis"), 1)
            if np.ndim(scale) == 1 and q.ndim > 1:  # per channel, along ``axis``
                shape = [1] * q.ndim
                shape[axis] = -1
                scale, zero = scale.reshape(shape), np.reshape(zero, shape) if np.ndim(zero) else zero
            values[node.output[0]] = ((q - zero) * scale).astype(np.float32)
    return values


def load_shipped(torch, trunk, head, onnx_path: Path, head_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Start a fused trunk and its head from a shipped network (ONNX trunk, seed model JSON).

    The head's weights already carry the softmax temperature; a new one is chosen at the end."""
    import onnx

    from omweso_cam.vision.count import load_seed_model

    graph = onnx.load(str(onnx_path)).graph
    values = conv_parameters(onnx, graph)
    convs = [m for m in trunk if isinstance(m, torch.nn.Conv2d)]
    nodes = [n for n in graph.node if n.op_type == "Conv"]
    if len(convs) != len(nodes):
        raise SystemExit(f"{onnx_path}: {len(nodes)} convolutions, the network built here has {len(convs)}")
    with torch.no_grad():
        for conv, node in zip(convs, nodes, strict=True):
            weight, bias = (torch.from_numpy(values[name].copy()) for name in node.input[1:3])
            if weight.shape != conv.weight.shape:
                raise SystemExit(f"{onnx_path}: {node.input[1]} is {tuple(weight.shape)}, expected {tuple(conv.weight.shape)}"
                                 " (wrong --width or --arch?)")
            conv.weight.copy_(weight)
            conv.bias.copy_(bias)
        counter = load_seed_model(str(head_path)).counter
        head.weight.copy_(torch.from_numpy(counter.weights.astype(np.float32)))
        head.bias.copy_(torch.from_numpy(counter.bias.astype(np.float32)))


def evaluate(probs: np.ndarray, counts: np.ndarray) -> dict[str, float]:
    pred = probs.argmax(1)
    out = {}
    for name, lo, hi in (("0-6", 0, 6), ("7-12", 7, 12), ("13+", 13, 64)):
        sel = (counts >= lo) & (counts <= hi)
        if sel.any():
            out[f"exact {name}"] = float((pred[sel] == counts[sel]).mean())
            out[f"within1 {name}"] = float((np.abs(pred[sel] - counts[sel]) <= 1).mean())
    out["nll"] = float(-np.mean(np.log(probs[np.arange(len(counts)), counts] + 1e-9)))
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--train", type=Path, nargs="+", required=True)
    parser.add_argument("--val", type=Path, nargs="+", required=True,
                        help="validation sets (reported one by one; together they choose temperature and outlier share)")
    parser.add_argument("--unseen", type=Path)
    parser.add_argument("--epochs", type=int, default=14)
    parser.add_argument("--width", type=int, default=16)
    parser.add_argument("--arch", choices=sorted(ARCHS), default="deep", help="trunk shape (see ARCHS)")
    parser.add_argument("--batch", type=int, default=128)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--init", type=Path, help="start from this state (model.pt of an earlier run)")
    parser.add_argument("--from-shipped", type=Path, metavar="FOLDER",
                        help="fine-tune the network shipped in FOLDER (seed_counter.onnx + seed_model_default.json; "
                             "batch normalisation stays folded)")
    parser.add_argument("--lr", type=float, default=3e-3)
    parser.add_argument("--seed-map-weight", type=float, default=0.0, metavar="W",
                        help="also train a map of seed centres from the trunk's 12 px stage (a second head, not "
                             "exported; needs --train sets with `points`, counter_data.py), its squared error "
                             "weighted W beside the count loss")
    parser.add_argument("--out", type=Path, required=True, help="folder for seed_counter.onnx/.json")
    args = parser.parse_args(argv)
    import torch

    torch.manual_seed(args.seed)
    torch.set_num_threads(args.threads)
    rng = np.random.default_rng(args.seed)
    config = CountConfig()
    size = config.crop_px

    parts = [np.load(path) for path in args.train]
    x_raw = np.concatenate([part["crops"] for part in parts])
    y = np.concatenate([part["counts"] for part in parts]).astype(np.int64)
    vals = {path.stem: np.load(path) for path in args.val}
    sets = {name: (network_input(canonical(v["crops"], size), config=config), v["counts"].astype(np.int64))
            for name, v in vals.items()}
    val_crops = canonical(np.concatenate([v["crops"] for v in vals.values()]), size)
    xv = network_input(val_crops, config=config)
    yv = np.concatenate([v["counts"] for v in vals.values()]).astype(np.int64)
    if args.unseen:
        un = np.load(args.unseen)
        sets["unseen"] = (network_input(canonical(un["crops"], size), config=config), un["counts"].astype(np.int64))
    # Rare counts are sampled more often (each count's weight ~ 1/sqrt(frequency)).
    freq = np.bincount(y, minlength=MAX_COUNT + 1).astype(np.float64)
    weight = 1.0 / np.sqrt(np.maximum(freq[y], 1.0))
    weight /= weight.sum()

    trunk, head = build(torch, args.width, arch=args.arch, fused=args.from_shipped is not None)
    model = torch.nn.Sequential(trunk, head)
    points = seed_map = None
    if args.seed_map_weight > 0:
        if any("points" not in part for part in parts):
            parser.error("--seed-map-weight needs --train sets with seed centres (`points`: benchmarks/counter_data.py)")
        points = np.concatenate([part["points"] for part in parts])
        # The seed map reads the trunk where its pools leave 12 px: before the second max pool.
        split = [i for i, m in enumerate(trunk) if isinstance(m, torch.nn.MaxPool2d)][1]
        channels = [m for m in trunk[:split] if isinstance(m, torch.nn.Conv2d)][-1].out_channels
        seed_map = torch.nn.Sequential(torch.nn.Conv2d(channels, 32, 3, 1, 1), torch.nn.ReLU(),
                                       torch.nn.Conv2d(32, 1, 1))
    if args.from_shipped:
        load_shipped(torch, trunk, head, args.from_shipped / "seed_counter.onnx",
                     args.from_shipped / "seed_model_default.json")
    if args.init:
        model.load_state_dict(torch.load(args.init))
    steps_per_epoch = len(y) // args.batch
    learned = list(model.parameters()) + ([] if seed_map is None else list(seed_map.parameters()))
    opt = torch.optim.AdamW(learned, lr=args.lr, weight_decay=1e-4)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=args.lr, total_steps=args.epochs * steps_per_epoch)

    def predict(x: np.ndarray) -> np.ndarray:
        model.eval()
        with torch.no_grad():
            out = [torch.softmax(model(torch.from_numpy(x[i : i + 512])), 1).numpy() for i in range(0, len(x), 512)]
        return np.concatenate(out)

    def map_counts(x: np.ndarray) -> np.ndarray:
        """The seed map's own count of every crop: its sum, rounded (a diagnostic; not exported)."""
        assert seed_map is not None
        with torch.no_grad():
            out = [seed_map(trunk[:split](torch.from_numpy(x[i : i + 512]))).sum((1, 2, 3)).numpy()
                   for i in range(0, len(x), 512)]
        return np.rint(np.concatenate(out)).astype(np.int64)

    def report(title: str) -> None:
        scores = {name: evaluate(predict(x), yy) for name, (x, yy) in sets.items()}
        if seed_map is not None:
            for name, (x, yy) in sets.items():
                read, heaps = map_counts(x), (yy >= 7) & (yy <= 12)
                scores[name]["map exact 0-6"] = float((read[yy <= 6] == yy[yy <= 6]).mean())
                scores[name]["map exact 7-12"] = float((read[heaps] == yy[heaps]).mean()) if heaps.any() else math.nan
        print(title + " " + " | ".join(f"{n}: " + ", ".join(f"{k} {v:.3f}" for k, v in r.items())
                                       for n, r in scores.items()), flush=True)

    if args.from_shipped or args.init:
        report("before training")
    for epoch in range(args.epochs):
        model.train()
        if seed_map is not None:
            seed_map.train()
        t0 = time.time()
        total = total_map = 0.0
        for _ in range(steps_per_epoch):
            idx = rng.choice(len(y), args.batch, p=weight)
            crops, moved = augment(x_raw[idx], size, rng, None if points is None else points[idx])
            xb = torch.from_numpy(network_input(crops, config=config))
            tb = torch.from_numpy(soft_targets(y[idx]))
            if seed_map is None:
                loss = -(tb * torch.log_softmax(model(xb), 1)).sum(1).mean()
            else:
                assert moved is not None
                features = trunk[:split](xb)
                loss = -(tb * torch.log_softmax(head(trunk[split:](features)), 1)).sum(1).mean()
                miss = (seed_map(features) - torch.from_numpy(seed_maps(moved, size))) ** 2
                map_loss = miss.sum((1, 2, 3)).mean()
                loss = loss + args.seed_map_weight * map_loss
                total_map += float(map_loss.detach())
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
            total += float(loss.detach())
        maps = "" if seed_map is None else f" (seed map {total_map / steps_per_epoch:.3f})"
        report(f"epoch {epoch + 1}/{args.epochs} loss {total / steps_per_epoch:.3f}{maps} ({time.time() - t0:.0f} s)")

    # Temperature of the softmax, chosen on the validation sets (never the unseen style).
    model.eval()
    with torch.no_grad():
        emb = torch.cat([trunk(torch.from_numpy(xv[i : i + 512])) for i in range(0, len(xv), 512)]).numpy()
    w = head.weight.detach().numpy().astype(np.float64)
    b = head.bias.detach().numpy().astype(np.float64)
    logits = emb @ w.T + b
    best_t, best_nll = 1.0, math.inf
    for t in np.linspace(0.5, 3.0, 26):
        z = logits / t
        z -= z.max(1, keepdims=True)
        nll = float(-np.mean(z[np.arange(len(yv)), yv] - np.log(np.exp(z).sum(1))))
        if nll < best_nll:
            best_t, best_nll = float(t), nll
    args.out.mkdir(parents=True, exist_ok=True)
    torch.save(model.state_dict(), args.out / "model.pt")
    onnx_path = args.out / "seed_counter.onnx"
    torch.onnx.export(trunk, torch.from_numpy(xv[:2]), str(onnx_path), input_names=["crops"],
                      output_names=["embedding"], dynamic_axes={"crops": {0: "n"}, "embedding": {0: "n"}},
                      dynamo=False)
    from omweso_cam.vision.count import SeedModel, count_crops, save_seed_model
    from omweso_cam.vision.counter_net import CounterHead, Trunk, trunk_digest

    exported = Trunk(str(onnx_path))  # the engine the reader will run it with
    drift = float(np.abs(exported.run(xv[:64]) - emb[:64]).max())

    digest = trunk_digest(onnx_path)

    def head_with(trunk: str) -> CounterHead:
        return CounterHead(w / best_t, b / best_t, trunk=trunk, input_px=size, crop_of_radius=config.crop_of_radius,
                           trunk_sha256=digest)

    # A share of probability spread over all counts (a pit misread outright stays possible),
    # chosen on the validation set like the temperature, never below 1%. Evaluated through
    # the reader's own code with the trunk just written (by absolute path).
    best_share, best_nll = 0.01, math.inf
    for share in (0.01, 0.02, 0.05, 0.1):
        ll = count_crops(val_crops, model=SeedModel(head_with(str(onnx_path.resolve())), outlier_share=share),
                         config=config).log_likelihoods
        nll = float(-ll[np.arange(len(yv)), yv].mean())
        if nll < best_nll:
            best_share, best_nll = share, nll
    model = SeedModel(head_with(onnx_path.name), outlier_share=best_share,
                      source=f"rendered ({', '.join(p.stem for p in args.train)}), seed network", examples=len(y))
    save_seed_model(model, str(args.out / "seed_model_default.json"))
    print(f"temperature {best_t:.2f}, outlier share {best_share} (val nll {best_nll:.3f}); "
          f"{exported.engine} vs torch max diff {drift:.2e}; wrote {onnx_path} and seed_model_default.json")
    return 0


if __name__ == "__main__":
    sys.exit(main())
