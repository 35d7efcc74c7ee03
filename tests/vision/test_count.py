"""Seed counter pieces: camera-resolution pit crops, pit descriptors, descriptor networks, size-scaled filters."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from omweso_cam.vision.count import (
    FEATURE_NAMES,
    CountConfig,
    Network,
    SeedModel,
    SeedModelError,
    descriptor_width,
    estimate_counts,
    fit_likelihood_shape,
    likelihood_score,
    measure,
    pit_crops,
    pit_crops_from_image,
    train_network,
)
from omweso_cam.vision.grid import PitGrid, fit_grid
from omweso_cam.vision.rectify import rectify
from tests.vision.drawn import draw_board

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


def test_descriptor_grows_with_the_seeds_in_a_pit() -> None:
    crops, counts = _drawn_crops(5)
    features = measure(crops, config=CountConfig(descriptor_cells=6))
    assert features.descriptor is not None
    assert features.descriptor.shape == (32, descriptor_width(6)) == (32, 72)
    assert np.all(np.abs(features.descriptor) <= 1.0 + 1e-9)
    strength = features.descriptor[:, :36].mean(axis=1)
    assert strength[counts == 0].max() < strength[counts >= 3].min()
    # Without a descriptor model or config, none is computed (no cost on the live path).
    assert measure(crops).descriptor is None


def test_filters_scale_with_the_crop_size() -> None:
    """The same pits measured from 48 px and 72 px crops give the same seed area (in seeds)."""
    small, counts = _drawn_crops(8, 48)
    large, _ = _drawn_crops(8, 72)
    units_small = measure(small).column("fg_units")
    units_large = measure(large, config=CountConfig(crop_px=72)).column("fg_units")
    held = counts >= 2
    ratio = np.median(units_large[held] / units_small[held])
    assert 0.8 < ratio < 1.25
    assert np.corrcoef(units_large, counts)[0, 1] > 0.8


def _descriptor_model(cells: int, rng: np.random.Generator) -> SeedModel:
    width = len(FEATURE_NAMES) + descriptor_width(cells)
    net = Network(tuple([0.0] * width), tuple([1.0] * width),
                  ((tuple(tuple(float(v) for v in row) for row in rng.normal(0, 0.1, (width, 1))), (2.0,)),))
    return SeedModel(network=net, descriptor_cells=cells)


def test_descriptor_model_checks_its_inputs_and_round_trips() -> None:
    rng = np.random.default_rng(1)
    model = _descriptor_model(3, rng)
    matrix = rng.normal(size=(5, len(FEATURE_NAMES)))
    descriptor = rng.normal(size=(5, descriptor_width(3)))
    out = model.estimate(matrix, descriptor)
    assert out.shape == (5,)
    again = SeedModel.from_dict(model.to_dict())
    assert again.descriptor_cells == 3
    np.testing.assert_allclose(again.estimate(matrix, descriptor), out, atol=1e-4)
    with pytest.raises(SeedModelError, match="descriptors"):
        model.estimate(matrix)
    with pytest.raises(SeedModelError, match="descriptors"):
        model.estimate(matrix, descriptor[:, :-1])
    with pytest.raises(SeedModelError, match="inputs"):
        SeedModel(network=model.network, descriptor_cells=2)
    with pytest.raises(SeedModelError, match="inputs"):
        SeedModel(network=model.network)  # a descriptor network without its descriptor size


def test_measure_gives_a_descriptor_model_its_own_size() -> None:
    crops, _ = _drawn_crops(6)
    model = _descriptor_model(4, np.random.default_rng(2))
    features = measure(crops, model=model)
    assert features.descriptor is not None and features.descriptor.shape == (32, descriptor_width(4))
    assert model.estimate(features.matrix, features.descriptor).shape == (32,)


def test_minibatch_training_fits_a_known_relation() -> None:
    rng = np.random.default_rng(0)
    x = rng.normal(size=(2000, 3))
    y = np.clip(3.0 + 2.0 * x[:, 0] - x[:, 1], 0, None)
    net = train_network(x, y, hidden=(16,), steps=1500, batch_size=128, rng=np.random.default_rng(1))
    assert np.sqrt(np.mean((net(x) - y) ** 2)) < 0.25


def test_likelihood_shape_is_fitted_to_the_errors_it_sees() -> None:
    """Estimates off by about one seed, with a few gross misreads: the fit widens and adds an outlier floor."""
    rng = np.random.default_rng(4)
    counts = rng.integers(0, 10, 4000)
    estimates = counts + rng.normal(0, 0.9, len(counts))
    wild = rng.random(len(counts)) < 0.03
    estimates[wild] = rng.uniform(0, 30, wild.sum())
    narrow = SeedModel(sigma_seeds=0.4, sigma_growth=0.1)
    fitted = fit_likelihood_shape(estimates, counts, narrow)
    assert fitted.sigma_seeds >= 0.7
    assert fitted.outlier_share > 0
    assert likelihood_score(estimates, counts, fitted) > likelihood_score(estimates, counts, narrow) + 0.5
    # Exact estimates need no floor and the narrowest spread on offer.
    exact = fit_likelihood_shape(counts.astype(float), counts, narrow)
    assert exact.outlier_share == 0.0 and exact.sigma_seeds == 0.4


def test_outlier_share_keeps_every_count_possible_and_round_trips() -> None:
    crops, _ = _drawn_crops(7)
    features = measure(crops)
    plain = estimate_counts(features, model=SeedModel())
    floored = estimate_counts(features, model=SeedModel(outlier_share=0.05))
    assert plain.counts == floored.counts
    assert np.exp(floored.log_likelihoods).min() >= 0.05 / 65 - 1e-12
    assert np.exp(plain.log_likelihoods).min() < 1e-6
    np.testing.assert_allclose(np.exp(floored.log_likelihoods).sum(axis=1), 1.0, atol=1e-9)
    assert SeedModel.from_dict(SeedModel(outlier_share=0.05).to_dict()).outlier_share == 0.05
    with pytest.raises(SeedModelError, match="outlier_share"):
        SeedModel(outlier_share=1.0)
