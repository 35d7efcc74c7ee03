"""Fit the shipped seed-count model on rendered boards (default style only; never the unseen style).

    .venv/bin/python benchmarks/fit_count_model.py --render 120 --out calibration/seed_model_default.json
    .venv/bin/python benchmarks/fit_count_model.py --from-dir DIR ...   (images + truth JSON already rendered)
    .venv/bin/python benchmarks/fit_count_model.py --render 160 --seed 200000 \
        --recalibrate calibration/seed_model_default.json --out calibration/seed_model_default.json
        (keep a model's counter, refit only its likelihood shape: sigmas and outlier share)

Pits are cut as the live reader cuts them (its own localiser and pit grid;
the true corners only where it misses the board), so the model learns the
features it will meet. Prints the fit's accuracy on a
held-out quarter of the boards before writing the model fitted on all of them.
The likelihood shape (count spread, growth with the heap, outlier share) is
chosen by log-probability of the true counts on that held-out quarter.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np


def _examples_from_dir(folder: Path) -> list[tuple[np.ndarray, dict]]:
    import cv2

    out = []
    for truth_path in sorted(folder.glob("*.json")):
        truth = json.loads(truth_path.read_text())
        if truth.get("status") != "ok" or ("style" in truth.get("scene", {}) and truth["scene"]["style"] != "default"):
            continue
        for suffix in (".jpg", ".png"):
            image_path = truth_path.with_suffix(suffix)
            if image_path.exists():
                out.append((cv2.imread(str(image_path)), truth))
                break
    return out


def _examples_rendered(n: int, seed: int) -> list[tuple[np.ndarray, dict]]:
    from omweso_cam.vision.synth import Scene, render_board

    out = []
    for k in range(n):
        rng = np.random.default_rng(seed + k)
        counts = _random_counts(rng, k)
        image, truth = render_board(counts, scene=Scene.random(rng, style="default", hand=False), rng=rng)
        if truth.status == "ok":
            out.append((image, truth.to_json()))
    return out


def _random_counts(rng: np.random.Generator, k: int) -> tuple[int, ...]:
    kind = k % 4
    if kind == 0:
        return tuple([4] * 8 + [0] * 16 + [4] * 8)
    if kind == 1:
        return tuple(int(x) for x in rng.integers(0, 7, 32))
    if kind == 2:
        return tuple(int(x) for x in rng.integers(0, 13, 32))
    c = rng.multinomial(64, rng.dirichlet(np.full(32, 0.4)))
    return tuple(int(x) for x in np.minimum(c, 25))


def features_of(examples: list[tuple[np.ndarray, dict]]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    from omweso_cam.vision.count import CountConfig, measure, pit_crops
    from omweso_cam.vision.grid import fit_grid, surface_colour
    from omweso_cam.vision.pipeline import BoardReader, prepare_image, source_radius
    from omweso_cam.vision.rectify import rectify

    reader = BoardReader()
    rows, counts, boards = [], [], []
    for b, (image, truth) in enumerate(examples):
        # Pits cut as the live reader cuts them (its localiser and grid), so the model learns
        # the features it will see; the true corners only when the reader misses the board.
        work, _, _ = prepare_image(image, reader.config)
        location, _ = reader.locate(work) if work is not None else (None, "")
        true_corners = np.asarray(truth["corners_px"], float)
        diagonal = float(np.linalg.norm(true_corners[2] - true_corners[0]))
        if location is None or np.max(np.linalg.norm(location.corners_px - true_corners, axis=1)) > 0.02 * diagonal:
            board = rectify(image, true_corners)
            grid = fit_grid(board.image)
        else:
            board = rectify(work, location.corners_px)
            grid = reader._grid_for(board, location)
        crops = pit_crops(board.image, grid)
        f = measure(crops, config=CountConfig(), surface_lab=surface_colour(board.image),
                    source_radius_px=source_radius(board, grid))
        rows.append(f.matrix)
        counts.extend(truth["counts"])
        boards.extend([b] * 32)
    return np.vstack(rows), np.asarray(counts, float), np.asarray(boards)


def report(name: str, est: np.ndarray, counts: np.ndarray) -> None:
    read = np.clip(np.round(est), 0, 64)
    for lo, hi in ((0, 6), (7, 12), (13, 64)):
        sel = (counts >= lo) & (counts <= hi)
        if sel.any():
            print(f"{name}: pits {lo}-{hi}: {sel.sum()}, exact {np.mean(read[sel] == counts[sel]):.1%}, "
                  f"within 1 {np.mean(np.abs(read[sel] - counts[sel]) <= 1):.1%}")


def main(argv: list[str] | None = None) -> int:
    from omweso_cam.vision.count import (
        SeedModel,
        fit_likelihood_shape,
        fit_weights,
        likelihood_score,
        load_seed_model,
        save_seed_model,
        train_network,
    )

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--from-dir", type=Path)
    parser.add_argument("--render", type=int, default=0)
    parser.add_argument("--seed", type=int, default=20260)
    parser.add_argument("--ridge", type=float, default=1.0)
    parser.add_argument("--out", type=Path)
    parser.add_argument("--steps", type=int, default=3000)
    parser.add_argument("--cache", type=Path, help="also save the feature matrix here (.npz)")
    parser.add_argument("--features", type=Path, help="use a feature matrix saved with --cache")
    parser.add_argument("--hidden", default="32,16", help="hidden layer sizes")
    parser.add_argument("--decay", type=float, default=1e-3)
    parser.add_argument("--recalibrate", type=Path, help="refit only this model's likelihood shape")
    args = parser.parse_args(argv)
    if args.features:
        cached = np.load(args.features)
        x, y, boards = cached["x"], cached["y"], cached["boards"]
    else:
        examples = _examples_from_dir(args.from_dir) if args.from_dir else []
        if args.render:
            examples += _examples_rendered(args.render, args.seed)
        if len(examples) < 8:
            print("need at least 8 rendered boards", file=sys.stderr)
            return 2
        x, y, boards = features_of(examples)
        if args.cache:
            np.savez(args.cache, x=x, y=y, boards=boards)
    if args.recalibrate:
        old = load_seed_model(str(args.recalibrate))
        est = np.clip(old.estimate(x), 0, 64)
        report("model", est, y)
        new = fit_likelihood_shape(est, y, old)
        print(f"mean log-probability of the true count: {likelihood_score(est, y, old):.3f} "
              f"(sigma {old.sigma_seeds:.3f}, growth {old.sigma_growth:.3f}, outliers {old.outlier_share}) -> "
              f"{likelihood_score(est, y, new):.3f} (sigma {new.sigma_seeds}, growth {new.sigma_growth}, "
              f"outliers {new.outlier_share})")
        if args.out:
            save_seed_model(new, str(args.out))
            print(f"written {args.out}")
        return 0
    held = boards % 4 == 3
    w = fit_weights(x[~held], y[~held], ridge=args.ridge)
    linear = SeedModel(weights=tuple(float(v) for v in w))
    report("linear, held-out boards", np.clip(linear.estimate(x[held]), 0, 64), y[held])
    net = train_network(x[~held], y[~held], steps=args.steps, hidden=tuple(int(v) for v in args.hidden.split(',')), weight_decay=args.decay, rng=np.random.default_rng(args.seed))
    model = SeedModel(network=net)
    report("network, train", np.clip(model.estimate(x[~held]), 0, 64), y[~held])
    report("network, held-out boards", np.clip(model.estimate(x[held]), 0, 64), y[held])
    shape = fit_likelihood_shape(np.clip(model.estimate(x[held]), 0, 64), y[held], model)
    net = train_network(x, y, steps=args.steps, hidden=tuple(int(v) for v in args.hidden.split(',')), weight_decay=args.decay, rng=np.random.default_rng(args.seed))
    model = SeedModel(network=net)
    model = SeedModel(network=net, sigma_seeds=shape.sigma_seeds, sigma_growth=shape.sigma_growth,
                      outlier_share=shape.outlier_share, source="rendered (default style)", examples=len(y))
    print(json.dumps(model.to_dict()))
    if args.out:
        save_seed_model(model, str(args.out))
        print(f"written {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
