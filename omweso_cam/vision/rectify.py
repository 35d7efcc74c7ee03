"""Rectify: warp the board quad to a fixed-size top-down image (after localise, before grid)."""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np


@dataclass(frozen=True)
class RectifyConfig:
    """Size of the top-down board image (the board's long side runs along its width)."""

    width_px: int = 512
    height_px: int = 256

    @property
    def size_px(self) -> tuple[int, int]:
        return (self.width_px, self.height_px)


@dataclass(frozen=True, eq=False)
class RectifiedBoard:
    """A top-down board image and the homography that produced it."""

    image: np.ndarray  # (height_px, width_px, 3) uint8 BGR
    board_from_image: np.ndarray  # (3, 3): image pixels -> rectified pixels

    def to_image(self, points_px: np.ndarray) -> np.ndarray:
        """Map rectified-board points (N, 2) back to camera-image pixels."""
        image_from_board = np.linalg.inv(self.board_from_image)
        pts = np.asarray(points_px, np.float64).reshape(-1, 1, 2)
        return cv2.perspectiveTransform(pts, image_from_board).reshape(-1, 2)


def board_from_image(corners_px: np.ndarray, size_px: tuple[int, int]) -> np.ndarray:
    """Homography taking the board corners (TL,TR,BR,BL) to the rectified image's corners."""
    w, h = size_px
    target = np.array([[0, 0], [w, 0], [w, h], [0, h]], np.float64)
    corners = np.asarray(corners_px, np.float64).reshape(4, 2)
    return cv2.getPerspectiveTransform(corners.astype(np.float32), target.astype(np.float32)).astype(np.float64)


def rectify(image_bgr: np.ndarray, corners_px: np.ndarray, *, config: RectifyConfig = RectifyConfig()) -> RectifiedBoard:
    """Warp the board to a ``config.width_px`` x ``config.height_px`` top-down image."""
    if image_bgr.ndim != 3 or image_bgr.shape[2] != 3:
        raise ValueError(f"expected an (H, W, 3) BGR image, got shape {image_bgr.shape}")
    matrix = board_from_image(corners_px, config.size_px)
    # INTER_LINEAR is enough: the board usually covers more camera pixels than the warp keeps.
    warped = cv2.warpPerspective(image_bgr, matrix, config.size_px, flags=cv2.INTER_LINEAR,
                                 borderMode=cv2.BORDER_REPLICATE)
    return RectifiedBoard(warped, matrix)
