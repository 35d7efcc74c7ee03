"""Stability monitor against the rendered films: per-frame agreement with truth phases, and cost.

    OPENBLAS_NUM_THREADS=1 .venv/bin/python benchmarks/stability_bench.py [FILM ...]

A FILM is a frame folder or video folder with ``truth.json`` (default: every
``sample_images/sequences/*`` and ``sample_images/demo``). Truth: frames whose phase is
"setup", "stable", "illegal_stable" or "restored" (and not their first frame, when the
board just changed) are still boards; frames with ``hand_visible`` must never be "stable".
Reports, per film: still frames said stable, hand frames said stable (must be 0), and the
time of :meth:`StabilityMonitor.update` (median, p95, ms) on frames at 1280x720.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import cv2
import numpy as np

from omweso_cam.resources import samples_dir
from omweso_cam.vision.frames import open_source
from omweso_cam.vision.stability import STABLE, StabilityConfig, StabilityMonitor

STILL_PHASES = ("setup", "stable", "illegal_stable", "restored")


def film_frames(folder: Path) -> tuple[dict, list[np.ndarray]]:
    """Truth and every decoded frame of a film folder."""
    truth = json.loads((folder / "truth.json").read_text())
    spec = folder / truth["video"] if truth.get("video") else folder
    source = open_source(spec)
    images = [f.image for f in source if f.image is not None]
    source.close()
    return truth, images


def evaluate(truth: dict, images: list[np.ndarray], config: StabilityConfig, *, region: bool = False) -> dict:
    """Per-frame agreement of a fresh monitor with the truth phases."""
    monitor = StabilityMonitor(config)
    if region:  # as the runner does once the board is read: watch only the board quad
        h, w = images[0].shape[:2]
        monitor.set_region(np.asarray(truth["frames"][0]["corners_px"], float), (w, h))
    said: list[str] = [monitor.update(image) for image in images]
    still = hand = still_ok = hand_bad = 0
    runs_missed = 0
    frames = truth["frames"]
    for phase in truth["phases"]:
        if phase["phase"] in STILL_PHASES:
            indices = range(phase["start"], min(phase["end"] + 1, len(said)))
            if not any(said[i] == STABLE for i in indices):
                runs_missed += 1
    for i, status in enumerate(said):
        info = frames[i]
        if info.get("hand_visible"):
            hand += 1
            hand_bad += status == STABLE
        elif info["phase"] in STILL_PHASES:
            still += 1
            still_ok += status == STABLE
    return {"frames": len(said), "still": still, "still_stable": still_ok, "hand": hand,
            "hand_stable": hand_bad, "still_runs_missed": runs_missed,
            "said": "".join({"stable": "S", "moving": "m", "hand": "H"}[s] for s in said)}


def timing(images: list[np.ndarray], config: StabilityConfig, corners_px: np.ndarray | None = None
           ) -> tuple[float, float]:
    """Median and p95 ms (this thread's CPU time, one OpenCV thread) of update() on frames scaled to 1280x720,
    watching the board at ``corners_px`` (in the frames' own pixels) if given."""
    cv2.setNumThreads(1)
    monitor = StabilityMonitor(config)
    if corners_px is not None:
        h, w = images[0].shape[:2]
        monitor.set_region(np.asarray(corners_px, float), (w, h))
    big = [cv2.resize(im, (1280, 720)) for im in images[:80]]
    times = []
    for image in big:
        t0 = time.thread_time()
        monitor.update(image)
        times.append((time.thread_time() - t0) * 1000)
    return float(np.median(times)), float(np.percentile(times, 95))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("films", nargs="*", type=Path)
    parser.add_argument("--show", action="store_true", help="print the per-frame answers vs truth")
    parser.add_argument("--stable-frames", type=int, default=1,
                        help="quiet frames before stable (the runner uses settle_s=0.1 s: 1 frame at 4 fps)")
    parser.add_argument("--region", action="store_true", help="watch only the board (truth corners of frame 0)")
    parser.add_argument("--hand-min-frac", type=float, default=StabilityConfig().hand_min_frac)
    args = parser.parse_args(argv)
    films = args.films or [*sorted(p.parent for p in (samples_dir() / "sequences").glob("*/truth.json")),
                           samples_dir() / "demo"]
    config = StabilityConfig(stable_frames=args.stable_frames, hand_min_frac=args.hand_min_frac)
    total = {"still": 0, "still_stable": 0, "hand": 0, "hand_stable": 0}
    for folder in films:
        truth, images = film_frames(folder)
        result = evaluate(truth, images, config, region=args.region)
        med, p95 = timing(images, config, truth["frames"][0]["corners_px"] if args.region else None)
        for k in total:
            total[k] += result[k]
        print(f"{folder.name:20s} still said stable {result['still_stable']}/{result['still']}, "
              f"hand said stable {result['hand_stable']}/{result['hand']}, "
              f"still runs with no stable frame {result['still_runs_missed']}, "
              f"update() at 1280x720 median {med:.2f} ms p95 {p95:.2f} ms")
        if args.show:
            phases = "".join("H" if f.get("hand_visible") else ("S" if f["phase"] in STILL_PHASES else ".")
                             for f in truth["frames"])
            print("  truth", phases)
            print("  said ", result["said"])
    print(f"{'all':20s} still said stable {total['still_stable']}/{total['still']}, "
          f"hand said stable {total['hand_stable']}/{total['hand']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
