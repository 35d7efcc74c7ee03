"""The reader on boards drawn by the second, independent renderer (``benchmarks/drawn_boards.py``).

That renderer shares no drawing code with ``omweso_cam.vision.synth``, on whose images the reader
was built and trained; these tests keep the reader working on a look it was not tuned on. The
seeds are from the set the renderer was written on (4000001+), not the benchmark's (4100001+).
"""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from omweso_cam.vision.localise import corner_error, find_board
from omweso_cam.vision.pipeline import BoardReader
from tests.vision.benchmark_scripts import load_script


@pytest.fixture(scope="module")
def drawn():
    return load_script("drawn_boards")


def test_a_drawn_board_and_its_truth_agree(drawn):
    image, truth = drawn.draw_board(4_000_003)
    again, _ = drawn.draw_board(4_000_003)
    assert np.array_equal(image, again), "a seed draws the same board every time"
    assert image.dtype == np.uint8 and image.ndim == 3
    assert sum(truth["counts"]) == 64 and len(truth["counts"]) == 32
    outline = np.float32(truth["corners_px"])
    for x, y in truth["pit_centers_px"]:
        assert cv2.pointPolygonTest(outline, (float(x), float(y)), True) > 0
    # South at the bottom: the pits of the image's top row (North's back row) lie above the bottom row's.
    centres = np.asarray(truth["pit_centers_px"])
    assert centres[:8, 1].mean() < centres[24:, 1].mean()
    assert centres[0, 0] < centres[7, 0]


@pytest.mark.parametrize("seed", [4_000_002, 4_000_003, 4_000_010])
def test_a_drawn_board_is_found_and_read(drawn, seed):
    image, truth = drawn.draw_board(seed)
    reading = BoardReader().read(image)
    assert reading.status == "ok", reading.detail
    centres = reading.pit_centers_px
    assert centres is not None
    off = np.linalg.norm(centres - np.asarray(truth["pit_centers_px"]), axis=1) / np.asarray(truth["pit_radius_px"])
    assert off.max() < 0.5, f"a pit {off.max():.2f} radii from its place"
    counts, read = np.asarray(truth["counts"]), np.asarray(reading.counts)
    small = counts <= 6
    assert np.mean(read[small] == counts[small]) >= 0.9, list(zip(counts.tolist(), read.tolist(), strict=True))
    assert np.all(np.abs(read[small] - counts[small]) <= 1)


def test_a_bevel_band_along_the_edge_is_inside_the_outline(drawn):
    # A darker band a tenth of a pitch wide runs along all four sides: the board's edge is its outer
    # edge, not the inner one (2.2% of the diagonal off before the band was looked past).
    image, truth = drawn.draw_board(4_000_015)
    assert truth["edge"] == "darker bevel" and truth["band_of_pitch"] > 0.05
    location = find_board(image)
    assert location is not None
    assert corner_error(location.corners_px, np.asarray(truth["corners_px"])) < 0.01


@pytest.mark.parametrize("seed", [4_000_002, 4_000_004, 4_000_006])
def test_an_arm_over_a_drawn_board_is_seen(drawn, seed):
    image, truth = drawn.draw_board(seed, arm=True)
    assert truth["arm_covers"] >= 3
    assert BoardReader().read(image).status == "occluded"
