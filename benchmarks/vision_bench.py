"""Vision benchmark: accuracy on sample_images and on fresh renders, speed of a calibrated read and of stability.

    .venv/bin/python benchmarks/vision_bench.py                 # everything (a few minutes)
    .venv/bin/python benchmarks/vision_bench.py --renders 0     # sample_images + speed only

Accuracy rows: sample_images/stills (held to its truth JSON); fresh renders in the
renderer's default style with new scene seeds; fresh renders in its held-out
``unseen`` style (other woods, seed colours, light), never used for tuning; boards drawn by a
second, independent renderer (``benchmarks/drawn_boards.py``: other code, another look), never
used for tuning or training either; sample_images/traced, boards path traced by a third renderer
(``benchmarks/traced_boards.py``, Blender Cycles: carved bowls, 3-D seeds, light that casts
and reflects), read to measure only.
Warnings: how many clear boards the reader marked unreliable (pits too small in the image,
blurred by motion or out of focus) and how well those and the others were counted.
Localisation scan: the markerless finder alone on renders of three styles without a hand:
boards not found, pit lattices placed a column or row off, outlines off. Dotted cloth
(``--dotted``): the same on renders whose table is a cloth of dots (pit-sized circles the pit
search can lock onto), and as many such tables without a board. Pits of the wood's colour
(``--wood-pits``): the scan's own scenes with every board's pits cut in its wood's own colour
(the renderer otherwise draws them 0-40% darker), seen only by their shading.
Occlusion: renders of three styles with and without a hand, read at their true corners:
clear boards called occluded (a shadow, a lamp) and occluded boards said occluded; and drawn
boards with a drawn arm (``--drawn-arms``), by how many pits the arm covers.
Steep cameras: renders of the three styles at 40, 45, 50 and 55 degrees from vertical (beyond
the 35 degrees of every set above), found and read as `omweso-cam read` does.
Pit size: default-style renders at 640x360, 800x450 and 1280x720, read at their true
corners, counting accuracy by pit diameter in the image (what "Camera placement" in the
README rests on).
Focus: the same scenes (three styles, no smear, pits of 36 px or more) rendered sharp and out
of focus by 1-6 px, read at their true corners: counting accuracy and the reader's warning.
Seed size: the same scenes (three styles, no smear, pits of 36 px or more) rendered with seeds
0.22-0.40 of the pit's diameter long (the renderer draws 0.20-0.30, the counter was trained on
those), read at their true corners: counting accuracy, and which way it errs.
Roll (``--roll-renders``): the same scenes with the picture turned 0-90 degrees in its plane, at
the unturned pit size, found and read as `omweso-cam read` does.
Seed calibration (``--seed-calibration-rigs``): what ``omweso-cam calibrate seeds`` on four
labelled photos of a rig buys, with seeds as drawn and large for their pits.
Speed: one core (OpenCV single-threaded), 1280x720 frames, median and p95.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import random
import statistics
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
#: The renderer's three styles, in the order the tables take them.
STYLES = ("default", "unseen", "randomised")


def _accuracy(pairs: list[tuple[np.ndarray | None, dict[str, Any]]]) -> dict[str, Any]:
    from omweso_cam.vision.evaluate import score_reading, summarise
    from omweso_cam.vision.pipeline import BoardReader

    reader = BoardReader()
    rows = [score_reading(reader.read(image), truth) for image, truth in pairs]
    return summarise(rows)


def _samples(name: str) -> list[tuple[np.ndarray | None, dict[str, Any]]]:
    """The images of ``sample_images/<name>`` that have truth beside them, with it."""
    from omweso_cam.vision.evaluate import find_examples
    from omweso_cam.vision.pipeline import load_image

    folder = ROOT / "sample_images" / name
    if not folder.is_dir():
        return []
    return [(load_image(str(e.image))[0], e.truth) for e in find_examples(folder)]


def _renders(n: int, style: str, seed: int) -> list[tuple[np.ndarray | None, dict[str, Any]]]:
    from omweso_cam.vision.synth import Scene, render_board

    out: list[tuple[np.ndarray | None, dict[str, Any]]] = []
    for k in range(n):
        rng = np.random.default_rng(seed + k)
        counts = _counts(k, rng)
        image, truth = render_board(counts, scene=Scene.random(rng, style=style), rng=rng)
        out.append((image, truth.to_json()))
    return out


def _drawn(n: int, seed: int, *, arm: bool = False) -> list[tuple[np.ndarray, dict[str, Any]]]:
    from drawn_boards import drawn_boards  # beside this script, so on its path

    return list(drawn_boards(n, seed, arm=arm))


def _drawn_arms(n: int, seed: int) -> list[list[object]]:
    """Rows (pits the arm covers, boards, said occluded, found and read) of ``n`` drawn boards with a
    drawn arm over them, each read at its true corners, so only the occlusion test decides."""
    from omweso_cam.vision.pipeline import BoardReader

    reader = BoardReader()
    bins = {"1-2": [0, 0, 0], "3 or more": [0, 0, 0]}  # an arm reaching a pit covers one at least
    for image, truth in _drawn(n, seed, arm=True):
        covers = truth["arm_covers"]
        if covers == 0:
            continue
        h, w = image.shape[:2]
        status = reader.at_corners(np.asarray(truth["corners_px"]), (w, h), method="manual").read(image).status
        row = bins["1-2" if covers <= 2 else "3 or more"]
        row[0] += 1
        row[1] += status == "occluded"
        row[2] += status == "ok"
    return [[name, *row] for name, row in bins.items()]


def _counts(k: int, rng: np.random.Generator) -> list[int]:
    """The k-th render's board, a position a game reaches (all 64 seeds on the board): the standard
    set-up, a position after 4-40 random moves, or one with a big heap (in turn).

    Until 2026-12-02 the second and third were 0-10 seeds a pit at random (about 160 in all) and
    heaps drawn from 64 seeds, cut at 20, boards no game shows the camera, where the reader's
    64-seed fit (``ReaderConfig.board_seeds``) could not be measured.
    """
    from omweso_cam.rules import Position, RuleSet
    from omweso_cam.vision.synth.corpus import heavy_position, random_game_position

    if k % 3 == 0:
        return list(Position.standard().board)
    rnd = random.Random(int(rng.integers(2**31)))
    rules = RuleSet.preset("seed")
    if k % 3 == 2:
        return list(heavy_position(rnd, rules).board)
    position = None
    while position is None:  # a random game may end before its plies
        position = random_game_position(rnd, rules, plies=rnd.randint(4, 40))
    return list(position.board)


def _localisation_scan(n: int, seed: int, background: str | None = None,
                       pit_tint: float | None = None) -> list[list[object]]:
    """Rows (style, boards, not found, pit lattice off, outline off) of the markerless finder on renders without a hand.

    "Lattice off": a true pit more than half a pitch from every pit the finder placed
    (a column or row off, sheared); "outline off": a corner more than 0.4 pitch from the
    truth with the pits placed right. With ``background`` (a table every scene is put on),
    each row also holds n tables without a board and how many were taken for a board.
    With ``pit_tint`` every board's pits have that share of its wood's albedo (the renderer
    draws 0.6-1.0; near 1, pits cut in the wood's own colour, seen only by their shading).
    """
    from omweso_cam.vision.localise import find_board
    from omweso_cam.vision.synth import Scene, render_board

    def scene_of(rng: np.random.Generator, style: str) -> Scene:
        scene = Scene.random(rng, style=style, hand=False)
        if pit_tint is not None:
            scene = dataclasses.replace(scene, pit_tint=pit_tint)
        return scene if background is None else dataclasses.replace(scene, background=background)

    rows: list[list[object]] = []
    for i, style in enumerate(STYLES):
        boards = missing = lattice_off = outline_off = 0
        for k in range(n):
            rng = np.random.default_rng(seed + 10_000 * i + k)
            counts = _counts(k, rng)
            image, truth = render_board(counts, scene=scene_of(rng, style), rng=rng)
            if truth.corners_px is None or truth.pit_centers_px is None:
                continue
            boards += 1
            found = find_board(image)
            if found is None:
                missing += 1
                continue
            centres = np.asarray(truth.pit_centers_px)
            pitch = float(np.median(np.linalg.norm(np.diff(centres.reshape(4, 8, 2), axis=1), axis=2)))
            placed = found.detail.get("pit_centers_px")
            if placed is not None and np.linalg.norm(centres[:, None] - np.asarray(placed)[None], axis=2).min(axis=1).max() > 0.5 * pitch:
                lattice_off += 1
            elif np.linalg.norm(found.corners_px - np.asarray(truth.corners_px), axis=1).max() > 0.4 * pitch:
                outline_off += 1
        rows.append([style, boards, missing, lattice_off, outline_off])
        if background is not None:
            taken = 0
            for k in range(n):
                rng = np.random.default_rng(seed + 10_000 * i + 5_000 + k)
                table = dataclasses.replace(scene_of(rng, style), has_board=False)
                taken += find_board(render_board(None, scene=table, rng=rng)[0]) is not None
            rows[-1] += [n, taken]
    return rows


def _occlusion(n: int, seed: int) -> list[list[object]]:
    """Rows (style, clear boards, called occluded, occluded boards, said occluded) of the occlusion test.

    Per style, ``n`` renders without a hand and ``n`` with one (a hand in the scene does not
    always cover the board: the truth says), each read at its true corners, so only the
    occlusion test decides.
    """
    from omweso_cam.vision.pipeline import BoardReader
    from omweso_cam.vision.synth import Scene, render_board

    reader = BoardReader()
    rows: list[list[object]] = []
    for i, style in enumerate(STYLES):
        tally = {"ok": [0, 0], "occluded": [0, 0]}  # truth -> [boards, said occluded]
        for hand in (False, True):
            for k in range(n):
                rng = np.random.default_rng(seed + 10_000 * i + (5_000 if hand else 0) + k)
                counts = [int(c) for c in rng.integers(0, 8, 32)]
                image, truth = render_board(counts, scene=Scene.random(rng, style=style, hand=hand), rng=rng)
                if truth.corners_px is None or truth.status not in tally:
                    continue
                h, w = image.shape[:2]
                status = reader.at_corners(np.asarray(truth.corners_px), (w, h), method="manual").read(image).status
                tally[truth.status][0] += 1
                tally[truth.status][1] += status == "occluded"
        rows.append([style, *tally["ok"], *tally["occluded"]])
    return rows


#: Pit-diameter bins (image pixels) of the pit-size table.
SIZE_BINS = ((0, 24), (24, 30), (30, 36), (36, 44), (44, 56), (56, 80), (80, 10_000))


def _tilted(n: int, seed: int, tilts: tuple[int, ...] = (40, 45, 50, 55)) -> list[list[object]]:
    """Rows (tilt, renders, boards found, read, corners within 1%, 0-6 exact of the pits read) for
    cameras further from vertical than any render set above (up to 35 degrees): ``n`` renders per
    tilt, the three styles in turn, no hand, the standard set-up and mid-games of 0-6 in turn,
    read as ``omweso-cam read`` does (the board found automatically), but without the 64-seed fit
    (the mid-games of 0-6 a pit hold about 96 seeds: the counter is measured alone)."""
    from omweso_cam.vision.localise import corner_error
    from omweso_cam.vision.pipeline import BoardReader, ReaderConfig
    from omweso_cam.vision.synth import Scene, render_board

    reader = BoardReader(config=ReaderConfig(board_seeds=None))
    rows: list[list[object]] = []
    for tilt in tilts:
        found = read = close = exact = pits = 0
        for k in range(n):
            rng = np.random.default_rng(seed + 1000 * tilt + k)
            counts = [4] * 8 + [0] * 16 + [4] * 8 if k % 2 == 0 else [int(c) for c in rng.integers(0, 7, 32)]
            scene = Scene.random(rng, style=STYLES[k % 3], hand=False, tilt_deg=float(tilt))
            image, truth = render_board(counts, scene=scene, rng=rng)
            reading = reader.read(image)
            if reading.corners_px is None or truth.corners_px is None:
                continue
            found += 1
            close += corner_error(np.asarray(reading.corners_px), np.asarray(truth.corners_px)) < 0.01
            if reading.status == "ok" and reading.counts is not None:
                read += 1
                exact += sum(a == b for a, b in zip(reading.counts, counts, strict=True))
                pits += len(counts)
        rows.append([f"{tilt} degrees", n, found, read, close, f"{exact / pits:.1%}" if pits else "n/a"])
    return rows


def _by_pit_size(n: int, seed: int) -> list[list[object]]:
    """Rows (pit diameter bin, boards, 0-6 exact, 0-6 within 1) of renders read at their true corners,
    by the counter alone (0-6 seeds a pit, about 96 in all: no 64-seed fit)."""
    from omweso_cam.vision.pipeline import BoardReader, ReaderConfig
    from omweso_cam.vision.synth import Scene, render_board

    reader = BoardReader(config=ReaderConfig(board_seeds=None))
    per_bin: dict[tuple[int, int], list[int]] = {b: [0, 0, 0, 0] for b in SIZE_BINS}  # boards, pits, exact, within1
    for k in range(n):
        rng = np.random.default_rng(seed + k)
        size = ((640, 360), (800, 450), (1280, 720))[k % 3]
        counts = [int(c) for c in rng.integers(0, 7, 32)]
        image, truth = render_board(counts, scene=Scene.random(rng, image_size_px=size, hand=False), rng=rng)
        if truth.corners_px is None or truth.pit_radius_px is None:
            continue
        h, w = image.shape[:2]
        reading = reader.at_corners(np.array(truth.corners_px), (w, h), method="manual").read(image)
        if reading.counts is None:
            continue
        across = 2.0 * statistics.median(truth.pit_radius_px)
        tally = next(v for (lo, hi), v in per_bin.items() if lo <= across < hi)
        tally[0] += 1
        tally[1] += 32
        tally[2] += sum(a == b for a, b in zip(reading.counts, counts, strict=True))
        tally[3] += sum(abs(a - b) <= 1 for a, b in zip(reading.counts, counts, strict=True))
    return [[f"{lo}-{hi}" if hi < 10_000 else f"{lo}+", t[0], f"{t[2] / t[1]:.1%}", f"{t[3] / t[1]:.1%}"]
            for (lo, hi), t in per_bin.items() if t[0]]


FOCUS_LEVELS = (0.0, 1.0, 2.0, 3.0, 4.5, 6.0)


def _render_from(counts: list[int], scene: Any, state: Any) -> tuple[np.ndarray, Any]:
    """``render_board`` of ``counts`` in ``scene`` from a saved random state: the same seed places and
    noise each time, so renders of one scene varied in one way differ by that alone."""
    from omweso_cam.vision.synth import render_board

    rng = np.random.default_rng()
    rng.bit_generator.state = state
    return render_board(counts, scene=scene, rng=rng)


def _one_scene_at_levels(n: int, seed: int, levels: Sequence[float],
                         vary: Callable[[Any, float], Any]) -> Iterator[tuple[float, Any, list[int]]]:
    """(level, reading, true counts) of ``n`` scenes (three styles in turn, 800x450 and 1280x720, no hand,
    no smear, 0-6 seeds a pit), each rendered at every level (``vary(scene, level)``: the same scene, light
    and seed places) and read at its true corners by the counter alone; boards whose pits are under 36 px,
    which the reader distrusts for their size, and boards it calls occluded are left out."""
    from omweso_cam.vision.pipeline import SMALL_WARNING, BoardReader, ReaderConfig
    from omweso_cam.vision.synth import Scene

    reader = BoardReader(config=ReaderConfig(board_seeds=None))
    for k in range(n):
        rng = np.random.default_rng(seed + k)
        size = ((800, 450), (1280, 720))[k % 2]
        counts = [int(c) for c in rng.integers(0, 7, 32)]
        scene = Scene.random(rng, style=STYLES[k % 3], image_size_px=size, hand=False).with_(motion_blur_px=0.0)
        state = rng.bit_generator.state
        for level in levels:
            image, truth = _render_from(counts, vary(scene, level), state)
            if truth.corners_px is None:
                continue
            h, w = image.shape[:2]
            reading = reader.at_corners(np.array(truth.corners_px), (w, h), method="manual").read(image)
            if reading.counts is None or SMALL_WARNING in reading.observation.unreliable:
                continue
            yield level, reading, counts


def _by_focus(n: int, seed: int) -> list[list[object]]:
    """Rows (focus blur sigma, boards, 0-6 exact, warned out of focus, warned at all) of ``n`` scenes each
    rendered at every level of FOCUS_LEVELS (:func:`_one_scene_at_levels`)."""
    from omweso_cam.vision.pipeline import FOCUS_WARNING

    tally = {f: [0, 0, 0, 0] for f in FOCUS_LEVELS}  # boards, exact pits, warned out of focus, warned
    for focus, reading, counts in _one_scene_at_levels(n, seed, FOCUS_LEVELS,
                                                        lambda scene, f: scene.with_(focus_blur_px=f)):
        warning = reading.observation.unreliable
        t = tally[focus]
        t[0] += 1
        t[1] += sum(a == b for a, b in zip(reading.counts, counts, strict=True))
        t[2] += FOCUS_WARNING in warning
        t[3] += bool(warning)
    return [[f"{f:g}", t[0], f"{t[1] / (32 * t[0]):.1%}", t[2], t[3]] for f, t in tally.items() if t[0]]


#: Seed length over pit diameter for the seed-size table. The first renderer draws 0.20-0.30 (its
#: unseen style 0.17-0.33), and the counter was trained on those; real seeds may be larger for their
#: pits (a small board's pits, large seeds).
SEED_SIZES = (0.22, 0.26, 0.30, 0.33, 0.36, 0.40)


def _by_seed_size(n: int, seed: int) -> list[list[object]]:
    """Rows (seed length / pit diameter, boards, 0-6 exact, read too high, read too low) of ``n`` scenes
    each rendered with seeds of every size in SEED_SIZES (:func:`_one_scene_at_levels`)."""
    tally = {r: [0, 0, 0, 0] for r in SEED_SIZES}  # boards, exact, too high, too low (pits)
    for ratio, reading, counts in _one_scene_at_levels(
            n, seed, SEED_SIZES, lambda scene, r: scene.with_(seed_length_mm=r * scene.pit_diameter_mm)):
        t = tally[ratio]
        t[0] += 1
        t[1] += sum(a == b for a, b in zip(reading.counts, counts, strict=True))
        t[2] += sum(a > b for a, b in zip(reading.counts, counts, strict=True))
        t[3] += sum(a < b for a, b in zip(reading.counts, counts, strict=True))
    return [[f"{r:.2f}", t[0], f"{t[1] / (32 * t[0]):.1%}", f"{t[2] / (32 * t[0]):.1%}", f"{t[3] / (32 * t[0]):.1%}"]
            for r, t in tally.items() if t[0]]


#: In-plane turns of the picture (degrees) of the roll table; the styles draw -25..25.
ROLLS = (0.0, 30.0, 45.0, 60.0, 90.0)


def _by_roll(n: int, seed: int) -> list[list[object]]:
    """Rows (turn, boards, median pit diameter, found, South as rendered, said South is a guess, corners within
    1%, 0-6 exact) of ``n``
    scenes (three styles in turn, no hand, game positions) with the picture turned by each of ROLLS and read as
    ``omweso-cam read`` reads it. Every turn is rendered at the smallest pit size any turn leaves (``board_fill``
    lowered: a board turned across a wide frame must shrink to fit, and the pit-size table already measures
    what that costs), so the rows differ by the turn alone. "South as rendered": the corners come out in the
    renderer's order (South is the long side nearer the bottom of the image, which a quarter turn leaves to
    chance)."""
    from omweso_cam.vision.pipeline import SOUTH_WARNING, BoardReader
    from omweso_cam.vision.synth import Scene

    def diameter(truth: Any) -> float:
        return 2 * float(np.median(truth.pit_radius_px))

    reader = BoardReader()
    # boards, diameters, found, south as rendered, south a guess, corners, exact, pits
    tally: dict[float, list[Any]] = {r: [0, [], 0, 0, 0, 0, 0, 0] for r in ROLLS}
    for k in range(n):
        rng = np.random.default_rng(seed + k)
        counts = _counts(k, rng)
        scene = Scene.random(rng, style=STYLES[k % 3], hand=False)
        state = rng.bit_generator.state
        sizes = {roll: diameter(_render_from(counts, scene.with_(roll_deg=roll), state)[1]) for roll in ROLLS}
        for roll in ROLLS:
            turned = scene.with_(roll_deg=roll)
            image, truth = _render_from(
                counts, turned.with_(board_fill=turned.board_fill * min(sizes.values()) / sizes[roll]), state)
            if truth.corners_px is None:
                continue
            t = tally[roll]
            t[0] += 1
            t[1].append(diameter(truth))
            reading = reader.read(image)
            if reading.counts is None or reading.corners_px is None:
                continue
            t[2] += 1
            true_corners, found = np.asarray(truth.corners_px, float), np.asarray(reading.corners_px, float)
            off = [float(np.linalg.norm(np.roll(found, shift, axis=0) - true_corners, axis=1).max()) for shift in range(4)]
            t[3] += int(np.argmin(off)) == 0
            t[4] += SOUTH_WARNING in reading.observation.unreliable
            t[5] += off[0] < 0.01 * float(np.linalg.norm(true_corners[0] - true_corners[2]))
            small = [i for i, c in enumerate(counts) if c <= 6]
            t[6] += sum(reading.counts[i] == counts[i] for i in small)
            t[7] += len(small)
    return [[f"{r:.0f}", t[0], f"{np.median(t[1]):.0f}", f"{t[2]}/{t[0]}", f"{t[3]}/{t[2]}", f"{t[4]}/{t[2]}",
             f"{t[5]}/{t[2]}", _pct(t[6] / t[7]) if t[7] else "n/a"] for r, t in tally.items() if t[0]]


#: Shares of the board's extent the cut-picture table's pictures lose (on each side in turn).
CUTS = (0.12, 0.25)


def _cut_pictures(n: int, seed: int) -> list[list[object]]:
    """Rows (share of the board cut off, pictures, said cut off, blamed on a hand, no board, read as a whole
    board (of them with 28 or more of 32 pits right)) of ``n`` scenes (three styles in turn, no hand, game
    positions) read whole and with the picture cut on each of its four sides so that each of CUTS of the
    board's extent that way is lost, read as ``omweso-cam read`` reads them. A cut that takes only the
    board's margin leaves its pits whole and the board readable; one through its pits should be said."""
    from omweso_cam.vision.pipeline import BoardReader
    from omweso_cam.vision.synth import Scene, render_board

    reader = BoardReader()
    tally = {cut: [0, 0, 0, 0, 0, 0] for cut in (0.0, *CUTS)}  # pictures, cut off, hand, no board, read, read well
    for k in range(n):
        rng = np.random.default_rng(seed + k)
        counts = _counts(k, rng)
        image, truth = render_board(counts, scene=Scene.random(rng, style=STYLES[k % 3], hand=False), rng=rng)
        if truth.corners_px is None:
            continue
        corners = np.asarray(truth.corners_px, float)
        (x0, y0), (x1, y1) = corners.min(axis=0), corners.max(axis=0)
        pictures = [(0.0, image)]
        for cut in CUTS:
            dx, dy = cut * (x1 - x0), cut * (y1 - y0)
            pictures += [(cut, image[:, : int(x1 - dx)]), (cut, image[:, int(x0 + dx):]),
                         (cut, image[: int(y1 - dy)]), (cut, image[int(y0 + dy):])]  # right, left, bottom, top
        for cut, picture in pictures:
            t = tally[cut]
            t[0] += 1
            reading = reader.read(np.ascontiguousarray(picture))
            if reading.status == "occluded":
                t[1 if "cut off by the edge" in reading.detail else 2] += 1
            elif reading.status == "no_board":
                t[3] += 1
            elif reading.counts is not None:
                t[4] += 1
                t[5] += sum(a == b for a, b in zip(reading.counts, counts, strict=True)) >= 28
    return [[f"{cut:.0%}", t[0], t[1], t[2], t[3], f"{t[4]} ({t[5]})"] for cut, t in tally.items() if t[0]]


#: Seed lengths (share of the pit diameter) of the seed-calibration table: as the renderer draws, and large.
SEED_CALIBRATION_SIZES = (0.26, 0.36, 0.40)


def _seed_calibration(n: int, seed: int) -> list[list[object]]:
    """Rows (seed length / pit diameter, rigs, refitted, 0-6 exact shipped -> calibrated, rigs better / worse)
    of ``n`` rigs (a scene of the three styles in turn, 1280x720, no hand, no smear), each with its seeds at
    every size of SEED_CALIBRATION_SIZES: four photos of game positions (two played, two with a heap) give
    labelled crops, cut as ``omweso-cam read --save-crops`` cuts them and labelled with the truth (as the
    user corrects the reader's counts), which refit the counter's last layer as ``omweso-cam calibrate
    seeds`` does (:func:`fit_seed_model`: kept only if it predicts held-out crops better); six boards of
    0-6 seeds a pit are then read at their true corners by the counter alone (no 64-seed fit), with the
    shipped model and with the rig's own. Rigs whose pits are under 36 px are left out."""
    from omweso_cam.vision.count import fit_seed_model, pit_crops_from_image
    from omweso_cam.vision.pipeline import SMALL_WARNING, BoardReader, ReaderConfig
    from omweso_cam.vision.synth import Scene, render_board

    config = ReaderConfig(board_seeds=None)
    shipped = BoardReader(config=config)
    tally = {r: [0, 0, 0, 0, 0, 0, 0] for r in SEED_CALIBRATION_SIZES}  # rigs, refitted, pits, exact x2, better, worse
    for k in range(n):
        rng = np.random.default_rng(seed + k)
        scene = Scene.random(rng, style=STYLES[k % 3], image_size_px=(1280, 720), hand=False).with_(motion_blur_px=0.0)
        labelled = [_counts(j, rng) for j in (1, 2, 4, 5)]
        tests = [[int(c) for c in rng.integers(0, 7, 32)] for _ in range(6)]
        for ratio in SEED_CALIBRATION_SIZES:
            rig = scene.with_(seed_length_mm=ratio * scene.pit_diameter_mm)
            readings = []
            for i, counts in enumerate(labelled + tests):
                image, truth = render_board(counts, scene=rig, rng=np.random.default_rng([seed + k, i]))
                if truth.corners_px is None:
                    break
                h, w = image.shape[:2]
                reading = shipped.at_corners(np.array(truth.corners_px), (w, h)).read(image)
                if reading.counts is None or reading.grid is None or reading.board_from_input is None \
                        or SMALL_WARNING in reading.observation.unreliable:
                    break
                readings.append((image, truth.corners_px, reading, counts))
            if len(readings) < len(labelled) + len(tests):
                continue
            crops = [pit_crops_from_image(image, reading.board_from_input, reading.grid, config=config.count)
                     for image, _, reading, _ in readings[: len(labelled)]
                     if reading.board_from_input is not None and reading.grid is not None]
            model = fit_seed_model(np.concatenate(crops), np.concatenate(labelled))
            own = BoardReader(config=config, seed_model=model)
            t = tally[ratio]
            t[0] += 1
            t[1] += bool(model.notes.get("refitted"))
            exact = [0, 0]
            for image, corners, reading, counts in readings[len(labelled):]:
                h, w = image.shape[:2]
                again = own.at_corners(np.array(corners), (w, h)).read(image)
                assert reading.counts is not None and again.counts is not None
                exact[0] += sum(a == b for a, b in zip(reading.counts, counts, strict=True))
                exact[1] += sum(a == b for a, b in zip(again.counts, counts, strict=True))
            t[2] += 32 * len(tests)
            t[3] += exact[0]
            t[4] += exact[1]
            t[5] += exact[1] > exact[0]
            t[6] += exact[1] < exact[0]
    return [[f"{r:.2f}", t[0], t[1], f"{t[3] / t[2]:.1%} -> {t[4] / t[2]:.1%}", f"{t[5]} / {t[6]}"]
            for r, t in tally.items() if t[0]]


def _speed(frames: int) -> dict[str, Any]:
    import cv2

    from omweso_cam.vision.calibration import Calibration, check_drift
    from omweso_cam.vision.pipeline import BoardReader
    from omweso_cam.vision.stability import StabilityMonitor
    from omweso_cam.vision.synth import Scene, render_board

    cv2.setNumThreads(1)
    rng = np.random.default_rng(777)
    image, truth = render_board([4] * 8 + [0] * 16 + [4] * 8,
                                scene=Scene.random(rng, image_size_px=(1280, 720), hand=False), rng=rng)
    h, w = image.shape[:2]
    corners = np.asarray(truth.corners_px, float)
    reference = check_drift(image, Calibration(corners, (w, h))).score  # as `calibrate` stores it
    # Every view of each pit averaged (the default), then one view a frame (the fast option,
    # RunnerConfig.fixed_views=1: each frame turns to the next view).
    result: dict[str, Any] = {"frame": f"{w}x{h}"}
    for views, key in ((8, "read"), (1, "read1")):
        reader = BoardReader(Calibration(corners, (w, h), reference_score=reference)).with_views(views)
        first = reader.read(image)  # warm-up: fits and caches the pit grid, as a live session does on its first frame
        assert first.method == "calibration", first.detail
        times = []
        for i in range(frames):
            t0 = time.perf_counter()
            reader.read(image, frame_index=i + 1)
            times.append((time.perf_counter() - t0) * 1000)
        result[f"{key}_median_ms"] = statistics.median(times)
        result[f"{key}_p95_ms"] = float(np.percentile(times, 95))
    monitor = StabilityMonitor()
    noisy = [np.clip(image.astype(np.int16) + rng.integers(-3, 4, image.shape), 0, 255).astype(np.uint8)
             for _ in range(4)]
    stab = []
    for i in range(frames * 2):
        t0 = time.perf_counter()
        monitor.update(noisy[i % 4])
        stab.append((time.perf_counter() - t0) * 1000)
    return result | {"stability_median_ms": statistics.median(stab), "stability_p95_ms": float(np.percentile(stab, 95))}


def _pct(v: float) -> str:
    """A share as a percentage, "n/a" for none of none (NaN), as `omweso-cam evaluate` prints it."""
    from omweso_cam.vision.evaluate import shown

    return shown(v)


def _row(name: str, s: dict[str, Any]) -> str:
    return (f"| {name} | {s['images']} | {s['boards_found']}/{s['boards']} | "
            f"{s['corners_within_1pct']}/{s['boards_found']} ({s['corner_error_median']:.4f}) | "
            f"{s['no_board_said']}/{s['no_board_images']} | {s['occluded_said']}/{s['occluded_images']} | "
            f"{s['clear_read_ok']}/{s['clear_images']} | {s['boards_exact']}/{s['boards_scored']} | "
            f"{_pct(s['exact_0_6'])} / {_pct(s['within1_0_6'])} | {_pct(s['exact_7_12'])} / {_pct(s['within1_7_12'])} | "
            f"{_pct(s['exact_13_64'])} / {_pct(s['within1_13_64'])} | {s['ms_total_median']:.0f} / {s['ms_total_p95']:.0f} |")


def _print_table(header: list[str], rows: list[list[object]]) -> list[list[object]]:
    """Print ``rows`` as a Markdown table under ``header`` (after a blank line); return them."""
    print("\n| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for row in rows:
        print("| " + " | ".join(str(v) for v in row) + " |", flush=True)
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--renders", type=int, default=24, help="fresh renders per style (0: none)")
    parser.add_argument("--seed", type=int, default=900_001, help="scene seeds start here (not used in tuning)")
    parser.add_argument("--drawn", type=int, default=24,
                        help="boards drawn by the second, independent renderer (benchmarks/drawn_boards.py; 0: none)")
    parser.add_argument("--drawn-arms", type=int, default=24,
                        help="drawn boards with a drawn arm over them, for the occlusion test (0: none)")
    parser.add_argument("--size-renders", type=int, default=60, help="renders for the pit-size table (0: none)")
    parser.add_argument("--scan", type=int, default=20,
                        help="renders per style for the localisation scan (default, unseen, randomised; 0: none)")
    parser.add_argument("--dotted", type=int, default=0,
                        help="renders per style for the localisation scan on a dotted cloth, and as many tables "
                             "without a board (0: none)")
    parser.add_argument("--wood-pits", type=int, default=0,
                        help="renders per style for the localisation scan with pits of the wood's own colour "
                             "(pit tint 0.98; 0: none)")
    parser.add_argument("--occlusion", type=int, default=20,
                        help="renders per style and hand/no hand for the occlusion table (0: none)")
    parser.add_argument("--tilt-renders", type=int, default=12,
                        help="renders per tilt for the steep-camera table (40-55 degrees; 0: none)")
    parser.add_argument("--focus-renders", type=int, default=12,
                        help="scenes for the focus table, each rendered at 6 levels of focus blur (0: none)")
    parser.add_argument("--seed-size-renders", type=int, default=12,
                        help=f"scenes for the seed-size table, each rendered with seeds of {len(SEED_SIZES)} sizes "
                        "for their pits (0: none)")
    parser.add_argument("--roll-renders", type=int, default=0,
                        help=f"scenes for the roll table, each with the picture turned by {len(ROLLS)} angles (0: none)")
    parser.add_argument("--cut-renders", type=int, default=0,
                        help="scenes for the cut-picture table, each read whole and with the picture cut on each side "
                        f"by {' and '.join(f'{c:.0%}%' for c in CUTS)} of the board (0: none)")  # %% for argparse
    parser.add_argument("--seed-calibration-rigs", type=int, default=0,
                        help="rigs for the seed-calibration table: `calibrate seeds` on four labelled photos, seeds "
                        f"of {len(SEED_CALIBRATION_SIZES)} sizes (0: none)")
    parser.add_argument("--speed-frames", type=int, default=60, help="frames timed for the speed rows (0: none)")
    parser.add_argument("--json", type=Path, help="also write the numbers here")
    args = parser.parse_args(argv)

    results: dict[str, Any] = {}
    print("| set | images | boards found | corners within 1% (median err) | no-board said | occluded said "
          "| clear boards read | boards read exactly | 0-6 exact / within 1 | 7-12 exact / within 1 | 13+ exact / within 1 | ms median / p95 (auto) |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    sets = [("sample_images/stills", lambda: _samples("stills")),
            ("sample_images/traced (path traced by a third renderer)", lambda: _samples("traced"))]
    if args.renders:
        sets += [(f"fresh renders, default style (seeds {args.seed}+)",
                  lambda: _renders(args.renders, "default", args.seed)),
                 (f"fresh renders, unseen style (seeds {args.seed}+)",
                  lambda: _renders(args.renders, "unseen", args.seed))]
    if args.drawn:
        sets.append((f"boards drawn by a second renderer (seeds {args.seed + 3_200_000}+)",
                     lambda: _drawn(args.drawn, args.seed + 3_200_000)))
    for name, make in sets:
        pairs = make()
        if not pairs:
            print(f"| {name} | 0 | (missing) |", flush=True)
            continue
        summary = _accuracy(pairs)
        results[name] = summary
        print(_row(name, summary), flush=True)
    _print_table(["set (auto localisation)", "corners within 0.5% / 1% of the diagonal",
                  "largest pit-centre error per board, median (pit radii)", "boards with every pit within 0.25 radius",
                  "localise + grid ms median"],
                 [[name, f"{s['corners_within_half_pct']} / {s['corners_within_1pct']} of {s['boards_found']}",
                   f"{s['pit_error_max_median']:.3f}", f"{s['pits_all_within_quarter_radius']}/{s['pit_error_boards']}",
                   f"{s['ms_localise_median'] + s['ms_grid_median']:.0f}"] for name, s in results.items()])
    _print_table(["set (the reader's warnings about its counts)", "clear boards read",
                  "warned (of them blurred by motion / out of focus / in poor light)", "0-6 exact on warned boards",
                  "0-6 exact on the others"],
                 [[name, s["clear_read_ok"],
                   f"{s['warned_boards']} ({s['warned_blurred']} / {s['warned_out_of_focus']} / {s['warned_poor_light']})",
                   _pct(s["warned_exact_0_6"]), _pct(s["unwarned_exact_0_6"])] for name, s in results.items()])
    if args.scan:
        results["localisation_scan"] = _print_table(
            [f"localisation scan (no hand, seeds {args.seed + 200_000}+)", "boards", "not found",
             "pit lattice off (a pit over half a pitch out)", "outline off (a corner over 0.4 pitch out)"],
            _localisation_scan(args.scan, args.seed + 200_000))
    if args.dotted:
        results["dotted_scan"] = _print_table(
            [f"dotted cloth (no hand, seeds {args.seed + 800_000}+)", "boards", "not found", "pit lattice off",
             "outline off", "tables without a board", "taken for a board"],
            _localisation_scan(args.dotted, args.seed + 800_000, background="dots"))
    if args.wood_pits:
        results["wood_pits_scan"] = _print_table(
            [f"pits of the wood's colour (no hand, seeds {args.seed + 200_000}+)", "boards", "not found",
             "pit lattice off", "outline off"],
            _localisation_scan(args.wood_pits, args.seed + 200_000, pit_tint=0.98))
    if args.occlusion:
        results["occlusion"] = _print_table(
            [f"occlusion test (true corners, seeds {args.seed + 300_000}+)", "clear boards", "called occluded",
             "occluded boards", "said occluded"],
            _occlusion(args.occlusion, args.seed + 300_000))
    if args.drawn_arms:
        results["drawn_arms"] = _print_table(
            [f"drawn boards with a drawn arm (true corners, seeds {args.seed + 3_500_000}+): pits covered", "boards",
             "said occluded", "read as clear"],
            _drawn_arms(args.drawn_arms, args.seed + 3_500_000))
    if args.tilt_renders:
        results["tilted"] = _print_table(
            [f"camera tilt (seeds {args.seed + 400_000} + 1000 x tilt +)", "renders", "boards found",
             "read (not called occluded)", "corners within 1%", "0-6 exact of the pits read"],
            _tilted(args.tilt_renders, args.seed + 400_000))
    if args.size_renders:
        results["by_pit_size"] = _print_table(
            ["pit diameter in the image (px), default style, true corners", "boards", "0-6 exact", "0-6 within 1"],
            _by_pit_size(args.size_renders, args.seed + 50_000))
    if args.focus_renders:
        results["by_focus"] = _print_table(
            [f"focus blur sigma (px), true corners, pits 36 px+ (seeds {args.seed + 600_000}+)", "boards", "0-6 exact",
             "warned out of focus", "warned (any reason)"],
            _by_focus(args.focus_renders, args.seed + 600_000))
    if args.seed_size_renders:
        results["by_seed_size"] = _print_table(
            [f"seed length / pit diameter, true corners, pits 36 px+ (seeds {args.seed + 700_000}+)", "boards",
             "0-6 exact", "read too high", "read too low"],
            _by_seed_size(args.seed_size_renders, args.seed + 700_000))
    if args.roll_renders:
        results["by_roll"] = _print_table(
            [f"picture turned by (degrees; seeds {args.seed + 950_000}+)", "boards", "pit diameter px (median)",
             "found", "South as rendered", "said South is a guess", "corners within 1%", "0-6 exact"],
            _by_roll(args.roll_renders, args.seed + 950_000))
    if args.cut_renders:
        results["cut_pictures"] = _print_table(
            [f"board's extent cut off by the picture (seeds {args.seed + 2_700_000}+)", "pictures", "said cut off",
             "blamed on a hand", "no board", "read as whole (28+ of 32 right)"],
            _cut_pictures(args.cut_renders, args.seed + 2_700_000))
    if args.seed_calibration_rigs:
        results["seed_calibration"] = _print_table(
            [f"seed length / pit diameter, a rig's own calibration (seeds {args.seed + 750_000}+)", "rigs",
             "refitted", "0-6 exact: shipped -> calibrated", "rigs better / worse"],
            _seed_calibration(args.seed_calibration_rigs, args.seed + 750_000))
    if args.speed_frames > 0:
        results["speed"] = _print_speed(_speed(args.speed_frames))
    if args.json:
        args.json.write_text(json.dumps(results, indent=2, default=float))
    return 0


def _print_speed(speed: dict[str, Any]) -> dict[str, Any]:
    print()
    print(f"Calibrated full read ({speed['frame']}, one OpenCV thread): median {speed['read_median_ms']:.1f} ms, "
          f"p95 {speed['read_p95_ms']:.1f} ms (eight views of each pit, the default; target < 20 ms median)")
    print(f"... one view a frame (RunnerConfig.fixed_views=1): median {speed['read1_median_ms']:.1f} ms, "
          f"p95 {speed['read1_p95_ms']:.1f} ms")
    print(f"Stability check: median {speed['stability_median_ms']:.2f} ms, p95 {speed['stability_p95_ms']:.2f} ms "
          f"(target < 3 ms)")
    return speed


if __name__ == "__main__":
    sys.exit(main())
