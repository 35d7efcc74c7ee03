"""Pit crops with true counts, cut from rendered boards as the live reader cuts them.

    .venv/bin/python benchmarks/counter_data.py --boards 1200 --seed 300000 --out /tmp/counter/train.npz
    .venv/bin/python benchmarks/counter_data.py --boards 200 --seed 800000 --style unseen --out /tmp/counter/unseen.npz
    .venv/bin/python benchmarks/counter_data.py --boards 150 --seed 11000000 --tilt 38 58 --out /tmp/counter/steep.npz
    .venv/bin/python benchmarks/counter_data.py --boards 800 --seed 6400000 --style randomised --dark --counts 0 8 --out /tmp/c/tr_dark.npz
    .venv/bin/python benchmarks/counter_data.py --images /tmp/traced --out /tmp/c/tr_traced.npz

Training data for the seed-count network (``benchmarks/train_counter.py``). Each
board is rendered (default style unless ``--style``), rectified from its true
corners, the true pit centres carried into it, and every pit cut straight from the camera image (:func:`omweso_cam.vision.count.pit_crops_from_image`)
with a margin (``MARGIN``) so the trainer can jitter centre and scale (standing in
for the reader's grid error). Pits a hand hides are dropped. Beside each crop its seeds' centres
as the camera sees them, in the stored crop's pixels (``points``, NaN-padded; what a network
that marks seed centres learns from). ``--counts LO HI`` puts
LO..HI seeds in every pit (``--heaps`` is ``--counts 5 16``); ``--dark`` draws dark seeds
on dark wood (:func:`omweso_cam.vision.synth.scene.dark_colours`); ``--glossy-bowls`` varnishes
every board so its bowls mirror the light (``Scene.bowl_gloss``; the path-traced boards of
``traced_boards.py`` showed that highlight read as a seed), drawn from the board's own seed
apart from the scene, so the boards are otherwise the ones made without it. ``--seed-sizes LO HI``
draws every board's seed length from LO..HI of its pits' diameter (the styles draw 0.20-0.30;
vision_bench's seed-size table showed larger seeds counted worse), apart from the scene too.
``--frame W H`` renders into a frame of that size (the films of ``track_bench.py`` are 800x450,
their pits 24-55 px; at the default 1280x720 few pits are under 36 px), the scene otherwise as drawn.
Seeds never overlap with ``benchmarks/vision_bench.py`` (900,001+) or the
sample corpus (2026). ``--images DIR`` renders nothing: it cuts the pits of every image in DIR
that has a truth JSON beside it (the format of ``sample_images/stills``: boards another renderer
made, such as ``traced_boards.py``'s, or labelled photographs) at their true corners and pit
centres, the same way (``cut_pits``); no seed centres are known there (``points`` all NaN).
"""

from __future__ import annotations

import argparse
import dataclasses
import random
import sys
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from contextlib import nullcontext
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

if TYPE_CHECKING:
    from omweso_cam.vision.count import CountConfig
    from omweso_cam.vision.grid import PitGrid
    from omweso_cam.vision.rectify import RectifiedBoard

#: Stored crops cover this many times the canonical crop (room for jitter).
MARGIN = 4 / 3
STORED_PX = 64
#: Seed centres kept per crop (``points``; a pit of more seeds keeps none: NaN).
MAX_POINTS = 32


#: What ``--heaps`` stands for: every pit 5..16 (rare in games, hardest to count).
HEAPS = (5, 16)


def _board_counts(rnd: random.Random, rng: np.random.Generator, kind: int) -> tuple[int, ...]:
    """Counts of one training board: set-ups, games and boards that spread the count range evenly."""
    from omweso_cam.rules import Position, RuleSet
    from omweso_cam.rules.sample import random_setup
    from omweso_cam.vision.synth.corpus import random_game_position

    rules = RuleSet.preset("seed")
    if kind == 0:
        return Position.standard().board
    if kind == 1:
        return random_setup(rnd, max_per_pit=rnd.choice([6, 10, 16])).board
    if kind == 2:
        for _ in range(20):
            p = random_game_position(rnd, rules, plies=rnd.randint(4, 80))
            if p is not None:
                return p.board
        return random_setup(rnd, max_per_pit=10).board
    if kind == 3:
        return tuple(int(x) for x in rng.integers(0, rnd.choice([4, 8, 13]), 32))
    c = rng.multinomial(64, rng.dirichlet(np.full(32, rnd.uniform(0.2, 0.6))))
    return tuple(int(x) for x in np.minimum(c, 30))


class Job(NamedTuple):
    """One board to render (None: as the style draws it)."""

    seed: int
    style: str
    count_range: tuple[int, int] | None  # seeds in every pit, LO..HI
    tilt: tuple[float, float] | None  # camera tilt from vertical, degrees
    dark: bool  # dark seeds on dark wood
    glossy: bool  # varnished bowls
    seed_sizes: tuple[float, float] | None  # seed length as a share of the pit diameter
    frame: tuple[int, int] | None  # camera frame (W, H)


def _crop_points(points_px: np.ndarray, board_from_image: np.ndarray, centre: np.ndarray, half: float) -> np.ndarray:
    """Camera-image points (K, 2) -> pixel coordinates in a stored crop (the inverse of the crop
    maps of :func:`omweso_cam.vision.count.pit_crops_from_image`; pixel centres at whole numbers)."""
    import cv2

    if not len(points_px):
        return np.zeros((0, 2))
    board = cv2.perspectiveTransform(points_px.reshape(-1, 1, 2), board_from_image).reshape(-1, 2)
    return (board - centre + half + 0.5) * (STORED_PX / (2 * half)) - 0.5


#: One board's kept pits: crops, counts, board ids, seed centres (see the module's docstring).
Cropped = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]


def stored_crop_config() -> CountConfig:
    """How the crops are stored: ``STORED_PX`` square, ``MARGIN`` times the reader's crop."""
    from omweso_cam.vision.count import CountConfig

    return CountConfig(crop_px=STORED_PX, crop_of_radius=CountConfig().crop_of_radius * MARGIN)


def cut_pits(image: np.ndarray, corners_px: Any, pit_centers_px: Any, pit_radius_px: Any,
             ) -> tuple[float, RectifiedBoard, PitGrid, np.ndarray]:
    """Cut a board's 32 pits from a camera image as the reader cuts them, at the board's true corners
    and pit centres (truth in the format of ``sample_images/stills``): the scale of the reader's
    working image, the rectified board, the true pit grid carried into it and the stored crops
    (32, STORED_PX, STORED_PX, 3; :func:`stored_crop_config`, room for the trainer's jitter)."""
    import cv2

    from omweso_cam.vision.count import pit_crops_from_image
    from omweso_cam.vision.grid import PitGrid
    from omweso_cam.vision.pipeline import ReaderConfig, prepare_image
    from omweso_cam.vision.rectify import rectify

    config = ReaderConfig()
    work, scale, _ = prepare_image(image, config)
    assert work is not None
    board = rectify(work, np.asarray(corners_px, np.float64) * scale, config=config.rectify)
    # The true pit centres, carried into the rectified board: the crops are centred as a
    # well-fitted grid centres them; the trainer's jitter stands in for grid error.
    true_px = np.asarray(pit_centers_px, np.float64) * scale
    centres = cv2.perspectiveTransform(true_px.reshape(-1, 1, 2), board.board_from_image).reshape(-1, 2)
    radii = np.broadcast_to(np.asarray(pit_radius_px, np.float64), (32,)) * scale
    rim = true_px + np.stack([radii, np.zeros(32)], axis=1)
    rim_board = cv2.perspectiveTransform(rim.reshape(-1, 1, 2), board.board_from_image).reshape(-1, 2)
    radius = float(np.median(np.linalg.norm(rim_board - centres, axis=1)))
    grid = PitGrid(centres, radius, (board.image.shape[1], board.image.shape[0]))
    return scale, board, grid, pit_crops_from_image(work, board.board_from_image, grid, config=stored_crop_config())


def _one_image(path: Path) -> Cropped | None:
    """The pits of one image with a truth JSON beside it (``--images``; boards numbered by the
    scene's seed when the truth has one); None for an image or truth that cannot be read, or
    without a board."""
    import json

    import cv2

    try:
        truth = json.loads(path.with_suffix(".json").read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return None
    if (not isinstance(truth, dict) or truth.get("status") != "ok" or truth.get("corners_px") is None
            or truth.get("counts") is None):
        return None
    image = cv2.imread(str(path), cv2.IMREAD_COLOR)
    if image is None:
        return None
    *_, crops = cut_pits(image, truth["corners_px"], truth["pit_centers_px"], truth["pit_radius_px"])
    keep = np.ones(32, bool)
    if truth.get("pit_occlusion") is not None:
        keep &= np.asarray(truth["pit_occlusion"]) < 0.02
    scene = truth.get("scene")
    seed = scene.get("seed", 0) if isinstance(scene, dict) else 0
    n = int(keep.sum())
    return (crops[keep], np.asarray(truth["counts"], np.int16)[keep], np.full(n, seed, np.int64),
            np.full((n, MAX_POINTS, 2), np.nan, np.float32))


def _one_board(job: Job) -> Cropped | None:
    import cv2

    from omweso_cam.vision.synth import Scene
    from omweso_cam.vision.synth.render import BoardRenderer
    from omweso_cam.vision.synth.scene import dark_colours

    seed, style, count_range, tilt, dark, glossy, seed_sizes, frame = job
    rng = np.random.default_rng(seed)
    rnd = random.Random(seed)
    if count_range is None:
        counts = _board_counts(rnd, rng, seed % 5)
    else:
        counts = tuple(int(x) for x in rng.integers(count_range[0], count_range[1] + 1, 32))
    pinned: dict[str, object] = {} if tilt is None else {"tilt_deg": rnd.uniform(*tilt)}
    if dark:
        pinned.update(dark_colours(rng))
    if frame is not None:
        pinned["image_size_px"] = frame
    scene = Scene.random(rng, style=style, hand=rnd.random() < 0.15, **pinned)
    if glossy:
        varnish = np.random.default_rng([seed, 3])
        scene = dataclasses.replace(scene, bowl_gloss=float(varnish.uniform(0.15, 0.8)),
                                    bowl_shininess=float(varnish.uniform(10.0, 80.0)))
    if seed_sizes is not None:
        share = float(np.random.default_rng([seed, 5]).uniform(*seed_sizes))
        scene = scene.with_(seed_length_mm=share * scene.pit_diameter_mm)
    renderer = BoardRenderer(scene)  # what render_board does, keeping the seed layout and camera
    image, truth = renderer.render(counts, rng, keep_layout=False)
    if truth.corners_px is None or truth.pit_centers_px is None:
        return None
    if rnd.random() < 0.5:  # the reader mostly sees compressed frames
        _, buf = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, rnd.randint(60, 95)])
        image = cv2.imdecode(buf, cv2.IMREAD_COLOR)
    scale, board, grid, crops = cut_pits(image, truth.corners_px, truth.pit_centers_px, truth.pit_radius_px)
    centres, radius = grid.centers_px, grid.radius_px
    keep = np.ones(32, bool)
    if truth.pit_occlusion is not None:
        keep &= np.asarray(truth.pit_occlusion) < 0.02
    # Every seed's centre as the camera sees it, in its crop's pixels (NaN past a pit's count).
    assert renderer.layout is not None
    points = np.full((32, MAX_POINTS, 2), np.nan, np.float32)
    half = stored_crop_config().crop_of_radius * radius
    for i, pit in enumerate(renderer.layout):
        assert len(pit) == counts[i]
        if pit and len(pit) <= MAX_POINTS:
            seen = renderer.camera.project(np.array([[s.x, s.y, s.z] for s in pit])) * scale
            points[i, : len(pit)] = _crop_points(seen, board.board_from_image, centres[i], half)
    board_id = np.full(int(keep.sum()), seed, np.int64)
    return crops[keep], np.asarray(counts, np.int16)[keep], board_id, points[keep]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--boards", type=int)
    parser.add_argument("--seed", type=int)
    parser.add_argument("--images", type=Path, metavar="DIR",
                        help="instead of rendering: cut the pits of every image in DIR with a truth JSON beside it "
                             "(the format of sample_images/stills, e.g. traced_boards.py's boards)")
    parser.add_argument("--style", default="default")
    parser.add_argument("--heaps", action="store_true", help="only boards of heaps (5..16 seeds in every pit)")
    parser.add_argument("--counts", type=int, nargs=2, metavar=("LO", "HI"),
                        help="LO..HI seeds in every pit (instead of the mix of set-ups, games and spreads)")
    parser.add_argument("--dark", action="store_true", help="dark seeds on dark wood, any hue")
    parser.add_argument("--glossy-bowls", action="store_true", help="varnished boards: the bowls mirror the light")
    parser.add_argument("--tilt", type=float, nargs=2, metavar=("LO", "HI"),
                        help="camera tilt from vertical drawn from [LO, HI] degrees (default: the style's own, 0-35)")
    parser.add_argument("--seed-sizes", type=float, nargs=2, metavar=("LO", "HI"),
                        help="seed length drawn from [LO, HI] of the pit diameter (default: the style's own, 0.20-0.30)")
    parser.add_argument("--frame", type=int, nargs=2, metavar=("W", "H"),
                        help="camera frame size in pixels (default: the styles' 1280 720; the films' 800 450 "
                             "gives pits of 24-55 px, as on a board far from the camera)")
    parser.add_argument("--workers", type=int, default=2, help="processes (1: in this one)")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    from tqdm import tqdm

    tilt = None if args.tilt is None else (min(args.tilt), max(args.tilt))
    if args.heaps and args.counts:
        parser.error("--heaps is --counts 5 16; give one of them")
    count_range = HEAPS if args.heaps else None if args.counts is None else (min(args.counts), max(args.counts))
    if count_range is not None and not 0 <= count_range[0] <= count_range[1] <= 64:
        parser.error("--counts must lie within 0..64")
    seed_sizes = None if args.seed_sizes is None else (min(args.seed_sizes), max(args.seed_sizes))
    if seed_sizes is not None and not 0 < seed_sizes[0] <= seed_sizes[1] < 1:
        parser.error("--seed-sizes must lie between 0 and 1 (shares of the pit diameter)")
    frame = None if args.frame is None else (args.frame[0], args.frame[1])
    if frame is not None and min(frame) < 64:
        parser.error("--frame must be at least 64 pixels each way")
    work: Callable[[Any], Cropped | None]
    jobs: list[Any]
    if args.images is not None:
        from omweso_cam.vision.frames import image_files

        if not args.images.is_dir():
            parser.error(f"--images: {args.images} is not a folder")
        work, jobs = _one_image, [p for p in image_files(args.images) if p.with_suffix(".json").exists()]
    elif args.boards is None or args.seed is None:
        parser.error("give --boards and --seed (boards to render), or --images DIR")
    else:
        work, jobs = _one_board, [Job(args.seed + k, args.style, count_range, tilt, args.dark, args.glossy_bowls,
                                      seed_sizes, frame) for k in range(args.boards)]
    crops, counts, boards, points = [], [], [], []
    with ProcessPoolExecutor(args.workers) if args.workers > 1 else nullcontext() as pool:
        results = map(work, jobs) if pool is None else pool.map(work, jobs, chunksize=4)
        for result in tqdm(results, total=len(jobs), desc="boards"):
            if result is not None:
                crops.append(result[0])
                counts.append(result[1])
                boards.append(result[2])
                points.append(result[3])
    if not counts:
        parser.error("no board to cut: " + ("no image in --images has a board in its truth" if args.images else "none rendered"))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    c = np.concatenate(counts)
    np.savez_compressed(args.out, crops=np.concatenate(crops), counts=c, boards=np.concatenate(boards),
                        points=np.concatenate(points))
    print(f"{len(c)} pits from {len(crops)} boards -> {args.out}; counts histogram:",
          np.bincount(c, minlength=13)[:31].tolist())
    return 0


if __name__ == "__main__":
    sys.exit(main())
