"""Intrinsics: optional camera calibration (chessboard or ChArUco) and undistortion (before localise).

Wide-angle webcams bend the board's straight edges; with a calibration from a
dozen photos of a printed chessboard the pipeline undistorts every frame first.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import cv2
import numpy as np

from omweso_cam.vision.calibration import Intrinsics


class IntrinsicsError(ValueError):
    """Not enough usable calibration views."""


def find_chessboard(image_bgr: np.ndarray, pattern: tuple[int, int]) -> np.ndarray | None:
    """Sub-pixel inner corners (N, 2) of a chessboard with ``pattern`` = (columns, rows) inner corners."""
    gray = cv2.cvtColor(image_bgr, cv2.COLOR_BGR2GRAY) if image_bgr.ndim == 3 else image_bgr
    found, corners = cv2.findChessboardCorners(gray, pattern, flags=cv2.CALIB_CB_ADAPTIVE_THRESH
                                               | cv2.CALIB_CB_NORMALIZE_IMAGE)
    if not found:
        return None
    criteria = (cv2.TERM_CRITERIA_EPS + cv2.TERM_CRITERIA_MAX_ITER, 30, 0.01)
    corners = cv2.cornerSubPix(gray, corners, (11, 11), (-1, -1), criteria)
    return np.asarray(corners.reshape(-1, 2), np.float64)


def calibrate_chessboard(images: Sequence[np.ndarray], pattern: tuple[int, int] = (9, 6),
                         *, square_mm: float = 25.0, min_views: int = 3) -> Intrinsics:
    """Camera matrix and distortion from photos of one chessboard in varied poses.

    ``pattern``: inner corners (columns, rows), at least 3 each (OpenCV's chessboard finder
    needs them); ``square_mm``: the printed squares' side, a positive length.
    """
    cols, rows = pattern
    if min(cols, rows) < 3:
        raise IntrinsicsError(f"a chessboard pattern needs at least 3x3 inner corners, got {cols}x{rows}")
    if not (math.isfinite(square_mm) and square_mm > 0):
        raise IntrinsicsError(f"a chessboard square must be a positive length in mm, got {square_mm}")
    grid = np.zeros((cols * rows, 3), np.float32)
    grid[:, :2] = np.mgrid[0:cols, 0:rows].T.reshape(-1, 2) * square_mm
    object_points, image_points = [], []
    size: tuple[int, int] | None = None
    for image in images:
        h, w = image.shape[:2]
        if size is not None and size != (w, h):
            raise IntrinsicsError(f"all views must have one size; got {w}x{h} after {size[0]}x{size[1]}")
        size = (w, h)
        corners = find_chessboard(image, pattern)
        if corners is not None:
            object_points.append(grid)
            image_points.append(corners.astype(np.float32).reshape(-1, 1, 2))
    if size is None or len(image_points) < min_views:
        raise IntrinsicsError(f"chessboard {cols}x{rows} found in {len(image_points)} views, need {min_views}")
    rms, matrix, dist, _, _ = cv2.calibrateCamera(object_points, image_points, size, None, None)
    return Intrinsics(tuple(tuple(float(v) for v in row) for row in matrix),
                      tuple(float(v) for v in np.ravel(dist)), size, float(rms))


def undistort_maps(intrinsics: Intrinsics, image_size: tuple[int, int]) -> tuple[np.ndarray, np.ndarray]:
    """Remap tables that undistort frames of ``image_size`` (the matrix is scaled if the size differs)."""
    matrix = np.array(intrinsics.camera_matrix, np.float64)
    sx = image_size[0] / intrinsics.image_size[0]
    sy = image_size[1] / intrinsics.image_size[1]
    matrix[0] *= sx
    matrix[1] *= sy
    matrix[2] = [0, 0, 1]
    dist = np.array(intrinsics.dist_coeffs, np.float64)
    m1, m2 = cv2.initUndistortRectifyMap(matrix, dist, None, matrix, image_size, cv2.CV_16SC2)
    return m1, m2


def undistort(image_bgr: np.ndarray, intrinsics: Intrinsics) -> np.ndarray:
    """One undistorted frame (for repeated frames keep the maps of :func:`undistort_maps`)."""
    h, w = image_bgr.shape[:2]
    m1, m2 = undistort_maps(intrinsics, (w, h))
    return cv2.remap(image_bgr, m1, m2, cv2.INTER_LINEAR)
