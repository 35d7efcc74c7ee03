"""Two seed-count networks side by side on held-out pit crops, read as the live reader reads them.

    .venv/bin/python benchmarks/compare_counters.py calibration /tmp/n47 \\
        --sets /tmp/c/val_d.npz /tmp/c/val_r.npz /tmp/c/val_u.npz
    .venv/bin/python benchmarks/compare_counters.py calibration /tmp/n47 --sets /tmp/c/val_sd.npz \\
        --seed-sizes 0.30 0.42      # also by the boards' seed length, as counter_data drew it

Each FOLDER holds a network as ``train_counter.py`` (then ``quantise_counter.py``) writes it:
``seed_model_default.json`` beside its ``seed_counter.onnx``. The crop sets are
``counter_data.py``'s (pits at their true centres); every crop is counted by
:func:`omweso_cam.vision.count.count_crops` with the reader's own settings (eight views of the
pits the first view is unsure of), so the numbers are the reader's, not the trainer's one-view
validation. Printed per set and pooled over the sets: pits of 0-6 and 7-12 seeds, the share
read exactly by each network, and the difference in points. With ``--seed-sizes LO HI`` (the
range the sets were made with) the 0-6 rows are split again by each board's seed length, drawn
from the board's own seed as ``counter_data.py --seed-sizes`` draws it.

This is the first step of judging a candidate network against the shipped one; rules written
before a candidate was trained (docs/vision.md, "Seeds large for their pits") set how much it
must gain and may lose here before it is tried on whole boards and films.
"""

from __future__ import annotations

import argparse
import dataclasses
import itertools
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from train_counter import canonical  # a script beside this one, not a package

if TYPE_CHECKING:
    from omweso_cam.vision.count import SeedModel


def load_model(folder: Path) -> SeedModel:
    """The seed model in ``folder``, its trunk path pointed at the ``seed_counter.onnx`` beside it
    (a network not yet shipped names no file the reader would find) and its checksum left unchecked."""
    from omweso_cam.vision.count import load_seed_model

    model = load_seed_model(str(folder / "seed_model_default.json"))
    head = dataclasses.replace(model.counter, trunk=str((folder / "seed_counter.onnx").resolve()), trunk_sha256=None)
    return dataclasses.replace(model, counter=head)


def best_counts(model: SeedModel, crops: np.ndarray) -> np.ndarray:
    """Each crop's most likely count, as the reader reads it."""
    from omweso_cam.vision.count import CountConfig, count_crops

    config = CountConfig()
    return np.asarray(count_crops(canonical(crops, config.crop_px), model=model, config=config).log_likelihoods.argmax(axis=1))


def _row(name: str, hits: tuple[int, int], n: int) -> str:
    if n == 0:
        return f"| {name} | 0 | - | - | - |"
    a, b = (100.0 * h / n for h in hits)
    return f"| {name} | {n} | {a:.2f}% | {b:.2f}% | {b - a:+.2f} |"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("a", type=Path, help="folder of the network to compare against (e.g. calibration)")
    parser.add_argument("b", type=Path, help="folder of the candidate network")
    parser.add_argument("--sets", type=Path, nargs="+", required=True, help="counter_data.py crop sets (.npz)")
    parser.add_argument("--seed-sizes", type=float, nargs=2, metavar=("LO", "HI"),
                        help="the --seed-sizes the sets were made with: split 0-6 by seed length too")
    args = parser.parse_args(argv)
    for folder in (args.a, args.b):
        if not (folder / "seed_model_default.json").is_file() or not (folder / "seed_counter.onnx").is_file():
            parser.error(f"{folder}: needs seed_model_default.json and seed_counter.onnx")
    models = [load_model(args.a), load_model(args.b)]
    bands = None if args.seed_sizes is None else np.linspace(min(args.seed_sizes), max(args.seed_sizes), 5)
    print(f"| set | pits | {args.a} | {args.b} | difference (points) |")
    print("|---|---|---|---|---|")
    pooled = {"0-6": [0, 0, 0], "7-12": [0, 0, 0]}
    for path in args.sets:
        data = np.load(path)
        counts = data["counts"].astype(np.int64)
        right = [best_counts(m, data["crops"]) == counts for m in models]  # each network, crop by crop
        kinds = {"0-6": counts <= 6, "7-12": (counts >= 7) & (counts <= 12)}
        for kind, sel in kinds.items():
            hits = (int(right[0][sel].sum()), int(right[1][sel].sum()))
            print(_row(f"{path.stem}, {kind}", hits, int(sel.sum())), flush=True)
            pooled[kind][0] += hits[0]
            pooled[kind][1] += hits[1]
            pooled[kind][2] += int(sel.sum())
        if bands is not None:
            share = np.array([np.random.default_rng([int(b), 5]).uniform(bands[0], bands[-1]) for b in data["boards"]])
            for lo, hi in itertools.pairwise(bands):
                sel = kinds["0-6"] & (share >= lo) & (share < hi)
                hits = (int(right[0][sel].sum()), int(right[1][sel].sum()))
                print(_row(f"{path.stem}, 0-6, seeds {lo:.2f}-{hi:.2f} of the pit", hits, int(sel.sum())), flush=True)
    for kind, (ha, hb, n) in pooled.items():
        print(_row(f"all sets, {kind}", (ha, hb), n))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
