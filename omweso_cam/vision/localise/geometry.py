"""Quads in image pixels: the result type, corner order with South at the bottom, corners given by a
person, and the small geometry every stage shares (lines meeting, a picture's size and edges)."""

from __future__ import annotations

from dataclasses import dataclass, field

import cv2
import numpy as np


class CornersError(ValueError):
    """Four corner points could not be parsed or do not make a usable quad."""


@dataclass(frozen=True, eq=False)
class BoardLocation:
    """Where the board is: corners TL, TR, BR, BL in image pixels, how it was found, how sure."""

    corners_px: np.ndarray  # (4, 2) float64
    method: str  # "auto" | "markers" | "manual" | "calibration"
    score: float = 0.0
    detail: dict[str, object] = field(default_factory=dict)

    def as_list(self) -> list[list[float]]:
        return [[round(float(x), 2), round(float(y), 2)] for x, y in self.corners_px]


def signed_area(quad: np.ndarray) -> float:
    x, y = quad[:, 0], quad[:, 1]
    return 0.5 * float(np.sum(x * np.roll(y, -1) - np.roll(x, -1) * y))


def quad_diagonal(quad: np.ndarray) -> float:
    """Mean length of a quad's two diagonals (TL-BR, TR-BL): the board's size in pixels."""
    q = np.asarray(quad, np.float64)
    return float(np.linalg.norm(q[2] - q[0]) + np.linalg.norm(q[3] - q[1])) / 2


def corner_error(corners: np.ndarray, reference: np.ndarray) -> float:
    """The worst corner's distance from its twin in ``reference`` (TL, TR, BR, BL both), as a
    fraction of ``reference``'s diagonal (:func:`quad_diagonal`): how far a found board lies from
    the truth, or from where it was calibrated."""
    reference = np.asarray(reference, np.float64)
    worst = float(np.linalg.norm(np.asarray(corners, np.float64) - reference, axis=1).max())
    return worst / quad_diagonal(reference)


def corners_within(corners: np.ndarray, other: np.ndarray, tolerance: float) -> bool:
    """Whether every corner of ``corners`` is within ``tolerance`` (:func:`corner_error`) of its twin
    in ``other``: the same board place, give or take."""
    return corner_error(corners, other) <= tolerance


def clockwise(quad: np.ndarray) -> np.ndarray:
    """The four points in clockwise order on screen (y down), starting anywhere."""
    quad = np.asarray(quad, dtype=np.float64).reshape(4, 2)
    centre = quad.mean(axis=0)
    angles = np.arctan2(quad[:, 1] - centre[1], quad[:, 0] - centre[0])
    ordered = quad[np.argsort(angles)]  # increasing angle is clockwise when y points down
    if signed_area(ordered) < 0:
        ordered = ordered[::-1]
    return ordered


def order_corners(quad: np.ndarray, *, long_side_first: bool | None = None) -> np.ndarray:
    """Order a board quad TL, TR, BR, BL with South at the bottom.

    South is the long side (the one along which the 8 pits of a row run) nearer
    the bottom of the image. ``long_side_first`` says whether the side from the
    clockwise-first point to the next is a long side; ``None`` decides by length.
    """
    return south_at_bottom(clockwise(quad), long_side_first)


def south_at_bottom(pts: np.ndarray, long_side_first: bool | None) -> np.ndarray:
    """Clockwise points rolled so that they read TL, TR, BR, BL (see :func:`order_corners`)."""
    lengths = np.linalg.norm(pts - np.roll(pts, -1, axis=0), axis=1)
    if long_side_first is None:
        long_side_first = lengths[0] + lengths[2] >= lengths[1] + lengths[3]
    long_starts = (0, 2) if long_side_first else (1, 3)
    # The long side nearer the bottom is South: it becomes BR -> BL (clockwise order).
    def mean_y(start: int) -> float:
        return float(pts[start, 1] + pts[(start + 1) % 4, 1]) / 2.0

    south = max(long_starts, key=mean_y)
    # Clockwise TL, TR, BR, BL: the south side runs BR (index 2) -> BL (index 3).
    shift = (south - 2) % 4
    return np.roll(pts, -shift, axis=0)


#: A board whose two long sides lie this level in the picture (their midpoints' heights within this share of
#: the board's diagonal) has no long side clearly nearer the bottom: which is South is a guess.
SOUTH_GUESS_LEVEL = 0.1


def south_is_a_guess(corners: np.ndarray) -> bool:
    """Whether ordered corners (TL, TR, BR, BL, South at the bottom: :func:`order_corners`) took South by
    chance: the board lies across the picture, its long sides nearly level (a turn of about 77 degrees
    or more seen from above). Measured on renders turned 0-90 degrees (``vision_bench.py --roll-renders``):
    the finder kept the renderer's South on 22-23 of 23 boards turned up to 60 degrees, 8 of 22 at 90."""
    q = np.asarray(corners, np.float64).reshape(4, 2)
    north, south = (q[0, 1] + q[1, 1]) / 2.0, (q[2, 1] + q[3, 1]) / 2.0
    return bool(abs(south - north) < SOUTH_GUESS_LEVEL * quad_diagonal(q))


def parse_corners(text: str, *, image_size: tuple[int, int] | None = None) -> BoardLocation:
    """Corners from ``"x,y,x,y,x,y,x,y"`` (TL, TR, BR, BL); kept in the given order.

    Raises :class:`CornersError` for anything but eight finite numbers forming a
    convex quad of non-trivial area (inside the image when its (w, h) is given).
    """
    parts = [p for p in text.replace(";", ",").replace(" ", ",").split(",") if p]
    if len(parts) != 8:
        raise CornersError(f"expected 8 numbers x,y,x,y,x,y,x,y (TL,TR,BR,BL), got {len(parts)} in {text!r}")
    try:
        values = [float(p) for p in parts]
    except ValueError as exc:
        raise CornersError(f"corners must be numbers, got {text!r}") from exc
    quad = np.array(values, dtype=np.float64).reshape(4, 2)
    validate_quad(quad, image_size=image_size)
    return BoardLocation(quad, "manual", 1.0)


def validate_quad(quad: np.ndarray, *, image_size: tuple[int, int] | None = None) -> None:
    """Raise :class:`CornersError` unless ``quad`` is a finite convex quad in TL,TR,BR,BL order."""
    quad = np.asarray(quad, dtype=np.float64)
    if quad.shape != (4, 2):
        raise CornersError(f"expected 4 corners of (x, y), got shape {quad.shape}")
    if not np.all(np.isfinite(quad)):
        raise CornersError("corners must be finite numbers")
    if not cv2.isContourConvex(quad.astype(np.float32).reshape(-1, 1, 2)):
        raise CornersError("corners do not form a convex quad (expected TL, TR, BR, BL)")
    if signed_area(quad) <= 0:
        raise CornersError("corners must run clockwise on screen: TL, TR, BR, BL")
    if abs(signed_area(quad)) < 100.0:
        raise CornersError("corners enclose almost no area")
    if image_size is not None:
        w, h = image_size
        margin = 0.5 * max(w, h)
        if np.any(quad < -margin) or np.any(quad[:, 0] > w + margin) or np.any(quad[:, 1] > h + margin):
            raise CornersError(f"corners lie far outside the {w}x{h} image")


def intersect(l1: tuple[np.ndarray, np.ndarray], l2: tuple[np.ndarray, np.ndarray]) -> np.ndarray | None:
    (p, r), (q, s) = l1, l2
    cross = r[0] * s[1] - r[1] * s[0]
    if abs(cross) < 1e-6:
        return None
    t = ((q[0] - p[0]) * s[1] - (q[1] - p[1]) * s[0]) / cross
    return np.asarray(p + t * r)


def downscale(image: np.ndarray, max_side_px: int) -> tuple[np.ndarray, float]:
    h, w = image.shape[:2]
    scale = min(1.0, max_side_px / max(h, w))
    if scale < 1.0:
        image = cv2.resize(image, (round(w * scale), round(h * scale)), interpolation=cv2.INTER_AREA)
    return image, scale


def beyond_picture(points: np.ndarray, shape: tuple[int, ...], margin: float = 0.0) -> np.ndarray:
    """Which image ``points`` (..., 2) lie beyond a picture of ``shape`` (height, width, ...), or within
    ``margin`` pixels of its edge."""
    h, w = shape[:2]
    x, y = points[..., 0], points[..., 1]
    return np.asarray((x < margin) | (x > w - 1 - margin) | (y < margin) | (y > h - 1 - margin))
