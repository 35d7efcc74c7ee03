"""Motion and focus blur measured on the pits' rims (vision.blur) and the reader's warnings for them."""

from __future__ import annotations

import math
from collections.abc import Callable

import cv2
import numpy as np
import pytest

from omweso_cam.vision.blur import RimBlur
from omweso_cam.vision.evaluate import format_summary, score_reading, summarise
from omweso_cam.vision.pipeline import BoardReader, board_rim_blur
from tests.vision.drawn import Drawn, draw_board

CORNERS = np.array([[150.0, 120.0], [800.0, 90.0], [860.0, 470.0], [120.0, 430.0]])


@pytest.fixture(scope="module")
def drawn() -> Drawn:
    rng = np.random.default_rng(5)
    return draw_board([int(c) for c in rng.integers(0, 5, 32)], rng=rng, corners_px=CORNERS)


def smeared(image: np.ndarray, length_px: int, angle_deg: float) -> np.ndarray:
    """The image as a camera moving ``length_px`` along ``angle_deg`` during the exposure sees it."""
    n = length_px + 1 if length_px % 2 == 0 else length_px
    kernel = np.zeros((n, n), np.float32)
    c, a = n // 2, math.radians(angle_deg)
    dx, dy = c * math.cos(a), c * math.sin(a)
    cv2.line(kernel, (round(c - dx), round(c - dy)), (round(c + dx), round(c + dy)), 1.0, 1, cv2.LINE_AA)
    return cv2.filter2D(image, -1, kernel / kernel.sum())


def rims_at_corners(drawn: Drawn) -> Callable[[np.ndarray], RimBlur]:
    """The rim measure of ``drawn``'s pits, placed once at its true corners, on any version of its image."""
    reading = BoardReader().at_corners(CORNERS, drawn.image.shape[1::-1], method="manual").read(drawn.image)
    assert reading.rectified is not None and reading.grid is not None
    board, grid = reading.rectified, reading.grid
    return lambda image: board_rim_blur(image, board, grid)


def test_rims_widen_across_the_motion_and_not_out_of_focus(drawn: Drawn) -> None:
    rims = rims_at_corners(drawn)

    def ratio(image: np.ndarray) -> float:
        return rims(image).ratio

    sharp = ratio(drawn.image)
    out_of_focus = ratio(cv2.GaussianBlur(drawn.image, (0, 0), 2.5))
    assert sharp < 1.3 and out_of_focus < 1.3
    darker = ratio((smeared(drawn.image, 13, 20) * 0.5).astype(np.uint8))
    assert darker == pytest.approx(ratio(smeared(drawn.image, 13, 20)), rel=0.05)
    for angle in (0, 30, 90, 135):
        short, long = (ratio(smeared(drawn.image, n, angle)) for n in (9, 17))
        assert 1.5 <= short < long, (angle, short, long)


def test_a_board_blurred_by_motion_is_read_with_a_warning(drawn: Drawn) -> None:
    sharp = BoardReader().read(drawn.image)
    assert sharp.status == "ok" and not sharp.observation.unreliable, sharp.detail
    blurred = BoardReader().read(smeared(drawn.image, 13, 20))
    assert blurred.status == "ok" and blurred.counts is not None  # still read, with a warning
    assert "blurred by motion" in blurred.observation.unreliable and "steady the camera" in blurred.detail
    assert "out of focus" not in blurred.observation.unreliable  # one warning for one blur


def test_rims_widen_out_of_focus_whatever_the_light_and_noise(drawn: Drawn) -> None:
    rims = rims_at_corners(drawn)

    def width(image: np.ndarray) -> float:
        return rims(image).width_px

    widths = [width(drawn.image if sigma == 0 else cv2.GaussianBlur(drawn.image, (0, 0), sigma)) for sigma in (0, 2, 4, 6)]
    assert widths == sorted(widths) and widths[0] < 6.0 and widths[-1] > 2 * widths[0], widths
    blurred = cv2.GaussianBlur(drawn.image, (0, 0), 5).astype(np.float32)
    assert width((blurred * 0.5).astype(np.uint8)) == pytest.approx(width(blurred.astype(np.uint8)), rel=0.1)
    # A faint blurred rim's steepest slope is the noise's: such rays are left out, not read as sharp.
    faint = np.clip(blurred * 0.5 + 40 + np.random.default_rng(1).normal(0, 4, blurred.shape), 0, 255).astype(np.uint8)
    assert width(faint) > 2 * widths[0]
    washed_out = np.clip(blurred * 0.2 + 40 + np.random.default_rng(1).normal(0, 8, blurred.shape), 0, 255)
    assert math.isnan(width(washed_out.astype(np.uint8)))  # no rim clear of the noise: no width (its light is warned of)


def test_a_board_out_of_focus_is_read_with_a_warning(drawn: Drawn) -> None:
    for sigma in (0.0, 1.0):
        sharp = BoardReader().read(drawn.image if sigma == 0 else cv2.GaussianBlur(drawn.image, (0, 0), sigma))
        assert sharp.status == "ok" and not sharp.observation.unreliable, (sigma, sharp.detail)
    blurred = BoardReader().read(cv2.GaussianBlur(drawn.image, (0, 0), 3.0))
    assert blurred.status == "ok" and blurred.counts is not None
    assert "out of focus" in blurred.observation.unreliable and "focus the camera" in blurred.detail
    assert "blurred by motion" not in blurred.observation.unreliable


def test_small_pits_out_of_focus_are_warned_before_their_rims_are_6_5_px_wide() -> None:
    corners = (CORNERS - CORNERS.mean(axis=0)) * 0.6 + CORNERS.mean(axis=0)  # pits about 37 px
    rng = np.random.default_rng(5)
    small = draw_board([int(c) for c in rng.integers(0, 5, 32)], rng=rng, corners_px=corners)
    reader = BoardReader().at_corners(corners, small.image.shape[1::-1], method="manual")
    for sigma in (0.0, 1.0):
        sharp = reader.read(small.image if sigma == 0 else cv2.GaussianBlur(small.image, (0, 0), sigma))
        assert sharp.status == "ok" and not sharp.observation.unreliable, (sigma, sharp.detail)
    image = cv2.GaussianBlur(small.image, (0, 0), 2.0)
    blurred = reader.read(image)
    assert blurred.rectified is not None and blurred.grid is not None
    assert board_rim_blur(image, blurred.rectified, blurred.grid).width_px < 6.5  # under the width in px alone
    assert "out of focus" in blurred.observation.unreliable


def test_rims_are_shallower_the_poorer_the_light(drawn: Drawn) -> None:
    rims = rims_at_corners(drawn)

    def contrast(image: np.ndarray) -> float:
        return rims(image).contrast

    lit = contrast(drawn.image)
    image = drawn.image.astype(np.float32)
    dim, dark = (contrast(np.clip(image * gain, 0, 255).astype(np.uint8)) for gain in (0.5, 0.1))
    assert lit > 30 and dim == pytest.approx(lit / 2, rel=0.15) and dark < 10 < dim
    assert contrast(np.clip(image * 0.1 + 200, 0, 255).astype(np.uint8)) < 10  # washed out


def test_a_board_in_poor_light_is_read_with_a_warning(drawn: Drawn) -> None:
    reader = BoardReader().at_corners(CORNERS, drawn.image.shape[1::-1], method="manual")
    image = drawn.image.astype(np.float32)
    dim = reader.read(np.clip(image * 0.5, 0, 255).astype(np.uint8))
    assert dim.status == "ok" and not dim.observation.unreliable, dim.detail
    for poor in (image * 0.1, image * 0.1 + 200):  # dark, washed out
        reading = reader.read(np.clip(poor, 0, 255).astype(np.uint8))
        assert reading.status == "ok" and reading.counts is not None  # still read, with a warning
        assert "poor light" in reading.observation.unreliable and "exposure" in reading.detail


def test_a_blank_frame_at_given_corners_is_not_read_as_a_trusted_empty_board() -> None:
    reader = BoardReader().at_corners(CORNERS, (960, 540), method="manual")
    for level in (0, 255):
        reading = reader.read(np.full((540, 960, 3), level, np.uint8))
        assert "poor light" in reading.observation.unreliable, level


def test_evaluate_counts_the_boards_warned_about_apart(drawn: Drawn) -> None:
    truth = {"status": "ok", "counts": list(drawn.counts), "corners_px": CORNERS.tolist()}
    reader = BoardReader()
    dark = (drawn.image * 0.1).astype(np.uint8)
    rows = [score_reading(reader.read(image), truth) for image in (drawn.image, smeared(drawn.image, 13, 20))]
    rows.append(score_reading(reader.at_corners(CORNERS, dark.shape[1::-1], method="manual").read(dark), truth))
    assert not rows[0]["unreliable"] and "blurred by motion" in rows[1]["unreliable"] and "poor light" in rows[2]["unreliable"]
    summary = summarise(rows)
    assert (summary["warned_boards"], summary["warned_blurred"], summary["warned_poor_light"],
            summary["unwarned_boards"]) == (2, 1, 1, 1)
    assert summary["unwarned_exact_0_6"] == rows[0]["exact_0_6"] / rows[0]["pits_0_6"]
    assert "2/3 boards read (1 blurred by motion, 0 out of focus, 1 in poor light)" in format_summary(summary)
