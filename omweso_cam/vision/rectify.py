"""Rectify: warp the board quad to a fixed-size top-down image (after localise, before grid)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import cv2
import numpy as np


@dataclass(frozen=True)
class RectifyConfig:
    """Size of the top-down board image (the board's long side runs along its width).

    The height follows the board's true proportions, measured from the perspective
    of its corners (:func:`board_aspect`), so round pits stay round.
    """

    width_px: int = 512
    default_aspect: float = 2.0  # width / height when the perspective cannot tell
    min_aspect: float = 1.4
    max_aspect: float = 3.2

    def size_px(self, aspect: float | None = None) -> tuple[int, int]:
        a = self.default_aspect if aspect is None else float(np.clip(aspect, self.min_aspect, self.max_aspect))
        return (self.width_px, round(self.width_px / a))


#: Focal length assumed (in units of the image's longer side) when the quad cannot tell it:
#: a camera looking straight along the board keeps one pair of sides parallel.
DEFAULT_FOCAL_OF_SIDE = 0.75


def board_aspect(corners_px: np.ndarray, image_size: tuple[int, int]) -> float | None:
    """Width/height of the real rectangle seen as this quad (TL,TR,BR,BL), or None if unknown.

    Zhang & He's whiteboard method: with square pixels and the principal point at
    the image centre, the quad fixes the focal length and the true aspect ratio.
    When the quad has a pair of parallel sides the focal length is undetermined
    and a typical webcam's (:data:`DEFAULT_FOCAL_OF_SIDE`) is assumed.
    """
    w, h = image_size
    c = np.asarray(corners_px, np.float64).reshape(4, 2) - [w / 2.0, h / 2.0]
    m1, m2, m4, m3 = (np.array([x, y, 1.0]) for x, y in c)  # m1 TL, m2 TR, m4 BR, m3 BL
    den2 = float(np.dot(np.cross(m2, m4), m3))
    den3 = float(np.dot(np.cross(m3, m4), m2))
    if abs(den2) < 1e-9 or abs(den3) < 1e-9:
        return None
    k2 = float(np.dot(np.cross(m1, m4), m3)) / den2
    k3 = float(np.dot(np.cross(m1, m4), m2)) / den3
    n2 = k2 * m2 - m1
    n3 = k3 * m3 - m1
    scale = max(w, h)
    n2, n3 = n2 * [1 / scale, 1 / scale, 1], n3 * [1 / scale, 1 / scale, 1]
    zz = n2[2] * n3[2]
    if abs(n2[2]) < 1e-3 and abs(n3[2]) < 1e-3:
        # Fronto-parallel: the quad's own proportions are the answer.
        width = (np.linalg.norm(c[1] - c[0]) + np.linalg.norm(c[2] - c[3])) / 2
        height = (np.linalg.norm(c[3] - c[0]) + np.linalg.norm(c[2] - c[1])) / 2
        return float(width / height) if height > 0 else None
    f2 = -(n2[0] * n3[0] + n2[1] * n3[1]) / zz if abs(zz) > 1e-6 else -1.0
    if not 0.1 < f2 < 9.0 or min(abs(n2[2]), abs(n3[2])) < 0.02:
        f2 = DEFAULT_FOCAL_OF_SIDE**2
    num = (n2[0] ** 2 + n2[1] ** 2) / f2 + n2[2] ** 2
    den = (n3[0] ** 2 + n3[1] ** 2) / f2 + n3[2] ** 2
    if den <= 0 or num <= 0:
        return None
    return float(np.sqrt(num / den))


@dataclass(frozen=True, eq=False)
class RectifiedBoard:
    """A top-down board image and the homography that produced it."""

    image: np.ndarray  # (height_px, width_px, 3) uint8 BGR
    board_from_image: np.ndarray  # (3, 3): image pixels -> rectified pixels

    @cached_property
    def image_from_board(self) -> np.ndarray:
        """The inverse homography (rectified pixels -> image pixels), computed once."""
        return np.asarray(np.linalg.inv(self.board_from_image))

    def to_image(self, points_px: np.ndarray) -> np.ndarray:
        """Map rectified-board points (..., 2) back to camera-image pixels (same shape)."""
        pts = np.asarray(points_px, np.float64)
        mapped = cv2.perspectiveTransform(pts.reshape(-1, 1, 2), self.image_from_board)
        return np.asarray(mapped.reshape(pts.shape))


def board_from_image(corners_px: np.ndarray, size_px: tuple[int, int]) -> np.ndarray:
    """Homography taking the board corners (TL,TR,BR,BL) to the rectified image's corners."""
    w, h = size_px
    target = np.array([[0, 0], [w, 0], [w, h], [0, h]], np.float64)
    corners = np.asarray(corners_px, np.float64).reshape(4, 2)
    return cv2.getPerspectiveTransform(corners.astype(np.float32), target.astype(np.float32)).astype(np.float64)


def rectify(image_bgr: np.ndarray, corners_px: np.ndarray, *, config: RectifyConfig = RectifyConfig(),
            size_px: tuple[int, int] | None = None) -> RectifiedBoard:
    """Warp the board to a top-down image ``size_px`` (default: ``config.width_px`` wide, true proportions)."""
    if image_bgr.ndim != 3 or image_bgr.shape[2] != 3:
        raise ValueError(f"expected an (H, W, 3) BGR image, got shape {image_bgr.shape}")
    if size_px is None:
        h, w = image_bgr.shape[:2]
        size_px = config.size_px(board_aspect(corners_px, (w, h)))
    matrix = board_from_image(corners_px, size_px)
    # INTER_LINEAR is enough: the board usually covers more camera pixels than the warp keeps.
    warped = cv2.warpPerspective(image_bgr, matrix, size_px, flags=cv2.INTER_LINEAR,
                                 borderMode=cv2.BORDER_REPLICATE)
    return RectifiedBoard(warped, matrix)


@dataclass(frozen=True, eq=False)
class FixedRectifier:
    """Rectification of a board that stays put (a calibrated rig): the pixel maps are built once,
    then each frame is one fixed-point remap, about twice as fast as a perspective warp."""

    board_from_image: np.ndarray  # (3, 3)
    size_px: tuple[int, int]  # (width, height) of the rectified image
    image_size: tuple[int, int]  # (width, height) of the frames it expects
    map1: np.ndarray
    map2: np.ndarray

    @classmethod
    def of(cls, corners_px: np.ndarray, size_px: tuple[int, int], image_size: tuple[int, int]) -> FixedRectifier:
        """The maps for a board at ``corners_px`` (TL,TR,BR,BL) in frames of ``image_size``."""
        matrix = board_from_image(corners_px, size_px)
        w, h = size_px
        xs, ys = np.meshgrid(np.arange(w, dtype=np.float64), np.arange(h, dtype=np.float64))
        grid = np.stack([xs, ys], axis=-1).reshape(-1, 1, 2)
        source = cv2.perspectiveTransform(grid, np.linalg.inv(matrix)).reshape(h, w, 2).astype(np.float32)
        map1, map2 = cv2.convertMaps(source[..., 0], source[..., 1], cv2.CV_16SC2)
        return cls(matrix, (int(w), int(h)), (int(image_size[0]), int(image_size[1])), map1, map2)

    def rectify(self, image_bgr: np.ndarray) -> RectifiedBoard:
        """The top-down board image of one frame (of ``image_size``)."""
        h, w = image_bgr.shape[:2]
        if (w, h) != self.image_size:
            raise ValueError(f"expected a {self.image_size[0]}x{self.image_size[1]} frame, got {w}x{h}")
        warped = cv2.remap(image_bgr, self.map1, self.map2, cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
        return RectifiedBoard(warped, self.board_from_image)
