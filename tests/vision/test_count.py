"""Seed counter: canonical pit crops, the shipped network on rendered boards, calibration, model files."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import pytest

from omweso_cam.vision.count import (
    CountConfig,
    SeedModelError,
    count_crops,
    count_seeds,
    default_seed_model,
    fit_seed_model,
    load_seed_model,
    pit_crops,
    pit_crops_from_image,
    save_seed_model,
    view_of,
    views_for,
)
from omweso_cam.vision.grid import PitGrid, fit_grid
from omweso_cam.vision.rectify import rectify
from tests.vision.drawn import draw_board
from tests.vision.rendered import rendered_crops

CORNERS = np.array([[120.0, 90.0], [840.0, 100.0], [860.0, 470.0], [100.0, 455.0]])


def _smooth_board(rng: np.random.Generator, size: tuple[int, int] = (400, 200)) -> np.ndarray:
    """A smooth random colour image (bilinear sampling of it is nearly exact)."""
    w, h = size
    small = rng.integers(0, 256, (h // 16, w // 16, 3)).astype(np.uint8)
    return cv2.GaussianBlur(cv2.resize(small, (w, h), interpolation=cv2.INTER_CUBIC), (0, 0), 3.0)


def _grid(radius: float, size: tuple[int, int] = (400, 200)) -> PitGrid:
    w, h = size
    xs = (np.arange(8) + 0.5) * w / 8
    ys = (np.arange(4) + 0.5) * h / 4
    centres = np.array([[x, y] for y in ys for x in xs]) + 0.3  # off the pixel lattice on purpose
    return PitGrid(centres, radius, size)


def test_crops_from_the_camera_image_match_crops_of_the_rectified_board() -> None:
    rng = np.random.default_rng(3)
    board = _smooth_board(rng)
    grid = _grid(radius=19.2)  # 2 * 1.25 radii = 48 px: the crop is at the board's own resolution
    same = pit_crops_from_image(board, np.eye(3), grid)
    assert same.shape == (32, 48, 48, 3)
    assert np.mean(np.abs(same.astype(float) - pit_crops(board, grid).astype(float))) < 1.0

    # The same board seen by a camera at twice the resolution: crops through the homography agree.
    camera = cv2.resize(board, (800, 400), interpolation=cv2.INTER_LINEAR)
    board_from_camera = np.array([[0.5, 0, -0.25], [0, 0.5, -0.25], [0, 0, 1]])  # pixel centres aligned
    sharp = pit_crops_from_image(camera, board_from_camera, grid)
    assert np.mean(np.abs(sharp.astype(float) - same.astype(float))) < 2.0
    # A wrong homography (shifted by a quarter pit) does not agree: the test can fail.
    shifted = board_from_camera @ np.array([[1, 0, 20.0], [0, 1, 0], [0, 0, 1]])
    assert np.mean(np.abs(pit_crops_from_image(camera, shifted, grid).astype(float) - same.astype(float))) > 5.0


def _drawn_crops(seed: int, crop_px: int = 48) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    counts = np.array([int(c) for c in rng.integers(0, 7, 32)])
    d = draw_board(list(counts), rng=rng, corners_px=CORNERS)
    board = rectify(d.image, CORNERS)
    config = CountConfig(crop_px=crop_px)
    return pit_crops_from_image(d.image, board.board_from_image, fit_grid(board.image), config=config), counts


def test_shipped_network_counts_fresh_renders_it_never_saw() -> None:
    # Scene seeds far from the training ones (6,000,000+ since 2026-12-03) and from the
    # benchmark's (900,001+); half in the held-out style. Twelve boards (four until 2026-12-03:
    # one smeared board of cream seeds then decided the within-one share). Measured with the
    # network shipped on 2026-12-03: 84.9% exact, 96.1% within one (eight views averaged), NLL
    # 0.576 nats a pit against 0.612 from one view; the network before it: 81.8%, 96.4%, 0.587
    # against 0.655.
    rng = np.random.default_rng(5)
    crops, counts = [], []
    for k in range(12):
        board = [int(c) for c in rng.integers(0, 7, 32)]
        c, n = rendered_crops(1_500_000 + k, ("default", "unseen")[k % 2], board)
        crops.append(c)
        counts.append(n)
    truth = np.concatenate(counts)
    every_view = count_crops(np.concatenate(crops))
    read = np.array(every_view.counts)
    assert np.mean(read == truth) >= 0.75
    assert np.mean(np.abs(read - truth) <= 1) >= 0.95

    def nll(result: object) -> float:
        return float(-np.mean(result.log_likelihoods[np.arange(len(truth)), truth]))  # type: ignore[attr-defined]

    # Eight views must still earn their time. The deeper network gains less from them than the
    # one before (6% here, 5-9% on its validation crops, against 10%), so this bound was 0.9 before
    # 2026-12-03; see docs/vision.md, "A deeper counting network".
    one_view = count_crops(np.concatenate(crops), views=(0,))
    assert nll(every_view) < 0.97 * nll(one_view)


def test_views_are_the_eight_symmetries_of_a_square() -> None:
    x = np.arange(2 * 3 * 5 * 5, dtype=np.float32).reshape(2, 3, 5, 5)
    views = [view_of(x, v) for v in range(8)]
    assert np.array_equal(views[0], x)
    assert len({v.tobytes() for v in views}) == 8
    for v in views:  # each a rearrangement of every crop's pixels, channels kept apart
        assert np.array_equal(np.sort(v.reshape(2, 3, -1), axis=2), np.sort(x.reshape(2, 3, -1), axis=2))
    assert views_for(8) == tuple(range(8))
    assert [views_for(1, first=f) for f in (0, 1, 9)] == [(0,), (1,), (1,)]
    assert views_for(3, first=6) == (6, 7, 0)


def test_counting_in_all_views_does_not_depend_on_which_way_up_a_crop_is() -> None:
    crops, _ = _drawn_crops(11)
    turned = np.ascontiguousarray(crops.transpose(0, 2, 1, 3)[:, ::-1])  # a quarter turn
    every_pit = CountConfig(sure_probability=1.01)  # every pit read in all eight views
    every = count_crops(crops, config=every_pit).log_likelihoods
    np.testing.assert_allclose(count_crops(turned, config=every_pit).log_likelihoods, every, atol=1e-6)
    # One view alone does depend on it (so the check above can fail).
    one = count_crops(crops, views=(0,)).log_likelihoods
    assert np.abs(count_crops(turned, views=(0,)).log_likelihoods - one).max() > 0.01
    # By default only the pits the first view is unsure of are read in the other views.
    default = count_crops(crops).log_likelihoods
    top = np.exp(one).max(axis=1)  # (lowered a little by the outlier share: pits near the line are left out)
    sure, unsure = top >= CountConfig().sure_probability + 0.01, top < CountConfig().sure_probability - 0.01
    assert sure.any() and unsure.any()
    np.testing.assert_allclose(default[sure], one[sure], atol=1e-9)
    np.testing.assert_allclose(default[unsure], every[unsure], atol=1e-9)


def test_likelihoods_are_normalised_and_keep_every_count_possible() -> None:
    crops, _ = _drawn_crops(7)
    result = count_crops(crops)
    p = np.exp(result.log_likelihoods)
    np.testing.assert_allclose(p.sum(axis=1), 1.0, atol=1e-9)
    share = default_seed_model().outlier_share
    assert share > 0 and p.min() >= share / 65 - 1e-12
    assert result.estimates.shape == (32,) and 0.0 < result.confidence <= 1.0


def test_camera_crops_and_rectified_crops_count_alike() -> None:
    rng = np.random.default_rng(8)
    counts = [int(c) for c in rng.integers(0, 5, 32)]
    d = draw_board(counts, rng=rng, corners_px=CORNERS)
    board = rectify(d.image, CORNERS)
    grid = fit_grid(board.image)
    from_camera = count_seeds(board.image, grid, camera_bgr=d.image, board_from_image=board.board_from_image)
    from_board = count_seeds(board.image, grid)
    assert np.mean(np.array(from_camera.counts) == np.array(from_board.counts)) >= 0.8


def test_a_known_position_confirms_but_does_not_refit() -> None:
    crops, _ = rendered_crops(1_500_010, "default", [4] * 8 + [0] * 16 + [4] * 8)
    standard = np.array([4] * 8 + [0] * 16 + [4] * 8)
    model = fit_seed_model(crops, standard, source="known position")
    assert model.notes["refitted"] is False and "distinct counts" in str(model.notes["why"])
    np.testing.assert_array_equal(model.counter.weights, default_seed_model().counter.weights)
    assert 0.0 <= float(model.notes["base_exact"]) <= 1.0  # type: ignore[arg-type]


def test_labelled_crops_refit_the_head_only_when_it_helps_on_held_out_crops() -> None:
    rng = np.random.default_rng(9)
    boards = [[int(c) for c in rng.integers(0, 9, 32)] for _ in range(3)]
    parts = [rendered_crops(1_500_020, "unseen", b) for b in boards]
    crops = np.concatenate([c for c, _ in parts])
    counts = np.concatenate([n for _, n in parts])
    model = fit_seed_model(crops, counts)
    notes = model.notes
    assert model.examples == 96 and isinstance(notes["refitted"], bool)
    helped = float(notes["held_out_nll_refit"]) < float(notes["held_out_nll_base"])  # type: ignore[arg-type]
    assert notes["refitted"] is helped
    if not helped:
        np.testing.assert_array_equal(model.counter.weights, default_seed_model().counter.weights)


def test_bad_labels_are_refused() -> None:
    crops, _ = _drawn_crops(7)
    with pytest.raises(SeedModelError, match="one count per crop"):
        fit_seed_model(crops, [1, 2])
    with pytest.raises(SeedModelError, match="whole numbers"):
        fit_seed_model(crops[:2], [1.5, 2])
    with pytest.raises(SeedModelError, match="holding seeds"):
        fit_seed_model(crops[:2], [0, 0])


def test_seed_model_files_round_trip_and_old_ones_are_named(tmp_path: Path) -> None:
    path = tmp_path / "seeds.json"
    save_seed_model(default_seed_model(), str(path))
    again = load_seed_model(str(path))
    np.testing.assert_allclose(again.counter.weights, default_seed_model().counter.weights, atol=1e-6)
    old = tmp_path / "old.json"
    old.write_text(json.dumps({"format": "omweso-cam-seed-model", "version": 1, "weights": None}))
    with pytest.raises(SeedModelError, match="older omweso-cam"):
        load_seed_model(str(old))
    (tmp_path / "junk.json").write_text("{")
    with pytest.raises(SeedModelError, match="cannot read"):
        load_seed_model(str(tmp_path / "junk.json"))


def test_a_missing_network_file_is_a_clear_error(tmp_path: Path) -> None:
    import dataclasses

    head = dataclasses.replace(default_seed_model().counter, trunk=str(tmp_path / "missing.onnx"))
    model = dataclasses.replace(default_seed_model(), counter=head)
    crops, _ = _drawn_crops(7)
    with pytest.raises(SeedModelError, match="seed counter network"):
        count_crops(crops, model=model)


def test_a_model_fitted_to_another_network_is_refused() -> None:
    import dataclasses

    shipped = default_seed_model()
    assert shipped.counter.trunk_sha256 is not None  # the shipped head names its trunk
    head = dataclasses.replace(shipped.counter, trunk_sha256="0" * 64)
    crops, _ = _drawn_crops(7)
    with pytest.raises(SeedModelError, match="another version of the counting network"):
        count_crops(crops, model=dataclasses.replace(shipped, counter=head))
