"""Pit crops of a fresh render, cut as the reader cuts them at the render's true corners."""

from __future__ import annotations

import numpy as np

from omweso_cam.vision.count import pit_crops_from_image
from omweso_cam.vision.pipeline import BoardReader
from omweso_cam.vision.synth import Scene, render_board


def rendered_crops(seed: int, style: str, counts: list[int]) -> tuple[np.ndarray, np.ndarray]:
    """Pit crops (camera image, true corners, the reader's grid) of a fresh render, and its counts."""
    rng = np.random.default_rng(seed)
    image, truth = render_board(counts, scene=Scene.random(rng, style=style, hand=False), rng=rng)
    reader = BoardReader().at_corners(np.asarray(truth.corners_px), (image.shape[1], image.shape[0]))
    reading = reader.read(image)
    assert reading.rectified is not None and reading.grid is not None
    return pit_crops_from_image(image, reading.rectified.board_from_image, reading.grid), np.asarray(counts)
