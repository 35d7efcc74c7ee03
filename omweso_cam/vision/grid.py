"""Grid: fit the 4x8 pit lattice on the rectified (top-down) board image.

The pits are found on the image, not assumed from proportions: a coarse search
over the board's margins places a regular lattice where the picture differs most
from the bare board surface, each pit centre is then refined locally, and a
robust homography from the ideal lattice to the measured centres absorbs small
errors of the board corners. Also exposes :func:`lattice_score`, the "does this
quad hold a 4x8 pit pattern?" test the localiser uses to reject false boards.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from functools import lru_cache

import cv2
import numpy as np

ROWS = 4
COLS = 8
PIT_COUNT = ROWS * COLS


class GridError(ValueError):
    """The rectified image or the pit grid data is malformed."""


@dataclass(frozen=True)
class GridConfig:
    """Tunables of the pit-lattice fit (fractions are of the rectified board size)."""

    margin_x_fracs: tuple[float, ...] = tuple(round(0.01 * i, 3) for i in range(0, 15))
    margin_y_fracs: tuple[float, ...] = tuple(round(0.02 * i, 3) for i in range(0, 13))
    pit_radius_of_pitch: float = 0.36  # template disc radius used in the lattice search
    search_of_pitch: float = 0.22  # each pit centre moves at most this far when refined
    ransac_threshold_of_pitch: float = 0.12
    min_radius_of_pitch: float = 0.3  # of the smaller of the two pit pitches
    max_radius_of_pitch: float = 0.5
    score_blur_px: float = 1.0  # smoothing of the 128-px-wide check image (wood grain is not a pit)
    rim_score_keep: float = 0.85  # radii whose rim score is this close to the best are rim candidates
    rim_radius_quantile: float = 0.75  # the common radius: this quantile of the pits' own rim radii
    max_rim_shift_of_pitch: float = 0.15  # a pit's measured centre is kept when this close to the lattice's


@dataclass(frozen=True, eq=False)
class PitGrid:
    """The 32 pit centres (image order) and pit radius in rectified-board pixels."""

    centers_px: np.ndarray  # (32, 2) float64
    radius_px: float
    size_px: tuple[int, int]  # (width, height) of the rectified board image
    score: float = 0.0

    def __post_init__(self) -> None:
        centers = np.asarray(self.centers_px, dtype=np.float64)
        if centers.shape != (PIT_COUNT, 2):
            raise GridError(f"expected {PIT_COUNT} pit centres of (x, y), got shape {centers.shape}")
        if not np.all(np.isfinite(centers)) or not self.radius_px > 0:
            raise GridError("pit centres must be finite and the radius positive")
        object.__setattr__(self, "centers_px", centers)

    def to_dict(self) -> dict[str, object]:
        return {
            "centers_px": [[round(float(x), 3), round(float(y), 3)] for x, y in self.centers_px],
            "radius_px": round(float(self.radius_px), 3),
            "size_px": list(self.size_px),
        }

    @classmethod
    def from_dict(cls, data: dict[str, object]) -> PitGrid:
        try:
            centers = np.asarray(data["centers_px"], dtype=np.float64)
            radius = float(data["radius_px"])  # type: ignore[arg-type]
            size = data["size_px"]
            w, h = (int(v) for v in size)  # type: ignore[attr-defined]
        except (KeyError, TypeError, ValueError) as exc:
            raise GridError(f"bad pit grid data: {exc}") from exc
        return cls(centers, radius, (int(w), int(h)))

    def scaled(self, size_px: tuple[int, int]) -> PitGrid:
        """The same grid on a rectified image of another size."""
        sx, sy = size_px[0] / self.size_px[0], size_px[1] / self.size_px[1]
        return PitGrid(self.centers_px * [sx, sy], self.radius_px * float(np.sqrt(sx * sy)), size_px, self.score)


def nominal_grid(size_px: tuple[int, int], margin_x_frac: float = 0.04, margin_y_frac: float = 0.08,
                 radius_of_pitch: float = 0.38) -> PitGrid:
    """A regular lattice with the given margins (used before any image evidence)."""
    w, h = size_px
    centers = _lattice(w, h, margin_x_frac, margin_y_frac)
    pitch = min((w * (1 - 2 * margin_x_frac)) / COLS, (h * (1 - 2 * margin_y_frac)) / ROWS)
    return PitGrid(centers, radius_of_pitch * pitch, size_px)


def grid_from_points(points_px: np.ndarray, radius_px: float, size_px: tuple[int, int]) -> PitGrid | None:
    """A PitGrid from 32 pit centres already in rectified pixels, in any order (sorted into image order).

    None unless they really form 4 rows of 8 (each row's points clearly apart from the next row's).
    """
    pts = np.asarray(points_px, np.float64)
    if pts.shape != (PIT_COUNT, 2) or not np.all(np.isfinite(pts)) or not radius_px > 0:
        return None
    by_y = pts[np.argsort(pts[:, 1])]
    rows = [by_y[i * COLS : (i + 1) * COLS] for i in range(ROWS)]
    for upper, lower in itertools.pairwise(rows):
        if upper[:, 1].max() >= lower[:, 1].min():
            return None
    ordered = np.vstack([row[np.argsort(row[:, 0])] for row in rows])
    return PitGrid(ordered, float(radius_px), size_px)


def _lattice(w: float, h: float, mx: float, my: float) -> np.ndarray:
    x0, x1 = w * mx, w * (1 - mx)
    y0, y1 = h * my, h * (1 - my)
    xs = x0 + (np.arange(COLS) + 0.5) * (x1 - x0) / COLS
    ys = y0 + (np.arange(ROWS) + 0.5) * (y1 - y0) / ROWS
    gx, gy = np.meshgrid(xs, ys)
    return np.stack([gx.ravel(), gy.ravel()], axis=1)


# --------------------------------------------------------------------------- evidence


def surface_colour(rectified_bgr: np.ndarray, lab: np.ndarray | None = None) -> np.ndarray:
    """Lab colour (OpenCV 8-bit scale) of the bare board: the median of a band just inside its edge."""
    if lab is None:
        lab = cv2.cvtColor(rectified_bgr, cv2.COLOR_BGR2LAB).astype(np.float32)
    return rim_median(lab)


def rim_median(values: np.ndarray) -> np.ndarray:
    """The median of per-pixel ``values`` (H, W, C) of a rectified board over a band just inside its edge,
    where a board has plain wood around its pits."""
    return np.asarray(np.median(rim_band(values), axis=0), np.float32)


def rim_band(values: np.ndarray) -> np.ndarray:
    """The pixels (N, C) of ``values`` (H, W, C) in the band just inside a rectified board's edge."""
    h, w, channels = values.shape
    b0, b1 = max(1, round(0.015 * h)), max(2, round(0.05 * h))
    return np.concatenate([
        values[b0:b1].reshape(-1, channels), values[h - b1 : h - b0].reshape(-1, channels),
        values[:, b0:b1].reshape(-1, channels), values[:, w - b1 : w - b0].reshape(-1, channels),
    ])


def surface_difference(rectified_bgr: np.ndarray) -> np.ndarray:
    """Per-pixel colour distance (Lab) from the bare board surface, float32.

    The surface colour is the median of a band just inside the board edge, where
    a board has plain wood around its pits; pits (bowls or seeds) differ from it.
    """
    lab = cv2.cvtColor(rectified_bgr, cv2.COLOR_BGR2LAB).astype(np.float32)
    diff = lab - surface_colour(rectified_bgr, lab)
    # Lightness counts half: shading varies more than hue across a wooden board.
    return np.asarray(np.sqrt(0.25 * diff[..., 0] ** 2 + diff[..., 1] ** 2 + diff[..., 2] ** 2))


@lru_cache(maxsize=32)
def _templates(w: int, h: int, margins_x: tuple[float, ...], margins_y: tuple[float, ...],
               radius_of_pitch: float) -> tuple[np.ndarray, np.ndarray, list[tuple[float, float]]]:
    """Inside-pit and between-pit masks (rows: one margin pair each), flattened."""
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32) + 0.5
    inside_rows, between_rows, pairs = [], [], []
    for mx in margins_x:
        for my in margins_y:
            pitch_x = w * (1 - 2 * mx) / COLS
            pitch_y = h * (1 - 2 * my) / ROWS
            if pitch_y / pitch_x > 1.6 or pitch_x / pitch_y > 1.6:
                continue
            cx = (xx - w * mx) / pitch_x  # lattice coordinates: pit centres at k + 0.5
            cy = (yy - h * my) / pitch_y
            fx, fy = cx - np.floor(cx) - 0.5, cy - np.floor(cy) - 0.5
            in_grid = (cx >= 0) & (cx < COLS) & (cy >= 0) & (cy < ROWS)
            dist = np.sqrt(fx**2 + fy**2)
            inside = in_grid & (dist < radius_of_pitch)
            between = (in_grid & (dist > 0.56)) | (~in_grid)
            inside_rows.append(inside.ravel().astype(np.float32))
            between_rows.append(between.ravel().astype(np.float32))
            pairs.append((mx, my))
    return np.array(inside_rows), np.array(between_rows), pairs


def _best_lattice(diff: np.ndarray, config: GridConfig) -> tuple[float, float, float]:
    """(score, margin_x_frac, margin_y_frac) of the lattice that best matches the pits."""
    h, w = diff.shape
    inside, between, pairs = _templates(w, h, config.margin_x_fracs, config.margin_y_fracs,
                                        config.pit_radius_of_pitch)
    d = diff.ravel().astype(np.float32)
    n_in, n_out = inside.sum(axis=1), between.sum(axis=1)
    mean_in = inside @ d / n_in
    mean_out = between @ d / n_out
    var_out = between @ (d * d) / n_out - mean_out**2
    spread = np.sqrt(np.maximum(var_out, 1e-6)) + 2.0  # seeds make pits vary; the bare wood must not
    scores = (mean_in - mean_out) / spread
    best = int(np.argmax(scores))
    return float(scores[best]), pairs[best][0], pairs[best][1]


def lattice_score(image_bgr: np.ndarray, corners_px: np.ndarray, *, config: GridConfig = GridConfig()) -> float:
    """How strongly the quad (TL,TR,BR,BL; South at the bottom) shows a 4x8 pit pattern.

    Contrast of pits against the between-pit surface in units of its spread;
    a board scores well above 1, a table or a wrong orientation well below.
    """
    from omweso_cam.vision.rectify import board_aspect

    h, w = image_bgr.shape[:2]
    aspect = board_aspect(np.asarray(corners_px, np.float64), (w, h)) or 2.0
    size = (128, int(np.clip(round(128 / aspect / 4) * 4, 36, 92)))  # few distinct sizes: templates are cached
    target = np.array([[0, 0], [size[0], 0], [size[0], size[1]], [0, size[1]]], np.float32)
    board_from_image = cv2.getPerspectiveTransform(np.asarray(corners_px, np.float32), target)
    small = cv2.warpPerspective(image_bgr, board_from_image, size, flags=cv2.INTER_AREA,
                                borderMode=cv2.BORDER_REPLICATE)
    diff = cv2.GaussianBlur(surface_difference(small), (0, 0), config.score_blur_px)
    score, _, _ = _best_lattice(diff, config)
    return score


# --------------------------------------------------------------------------- fit


def _check_board_image(rectified_bgr: np.ndarray) -> None:
    if rectified_bgr.ndim != 3 or rectified_bgr.shape[2] != 3 or rectified_bgr.dtype != np.uint8:
        raise GridError(f"expected an (H, W, 3) uint8 image, got {rectified_bgr.shape} {rectified_bgr.dtype}")


def _measure_rims(rectified_bgr: np.ndarray, diff: np.ndarray, centres_px: np.ndarray, pitch: float,
                  config: GridConfig) -> tuple[np.ndarray, float]:
    """Each pit's rim near its given centre (the circle of strongest edges), and the pits' radius."""
    gray = cv2.cvtColor(rectified_bgr, cv2.COLOR_BGR2GRAY)
    return _fit_rims(_edge_strength(gray, diff), centres_px, pitch, config)


def fit_grid(rectified_bgr: np.ndarray, *, config: GridConfig = GridConfig()) -> PitGrid:
    """Fit the 32 pit centres and the pit radius on a rectified board image."""
    _check_board_image(rectified_bgr)
    h, w = rectified_bgr.shape[:2]
    diff = surface_difference(rectified_bgr)
    # Coarse: margins on a small copy.
    sw = 128
    sh = int(np.clip(round(128 * h / w / 4) * 4, 36, 92))
    small = cv2.GaussianBlur(cv2.resize(diff, (sw, sh), interpolation=cv2.INTER_AREA), (0, 0), config.score_blur_px)
    score, mx, my = _best_lattice(small, config)
    nominal = _lattice(w, h, mx, my)
    pitch = min(w * (1 - 2 * mx) / COLS, h * (1 - 2 * my) / ROWS)

    # Fine: each pit's rim is a circle of strong edges; find the circle near the nominal centre.
    measured, pit_radius = _measure_rims(rectified_bgr, diff, nominal, pitch, config)

    ideal = _lattice(1.0, 1.0, 0.0, 0.0).astype(np.float32)
    matrix, _ = cv2.findHomography(ideal, measured.astype(np.float32), cv2.RANSAC,
                                   config.ransac_threshold_of_pitch * pitch)
    centers = nominal
    if matrix is not None:
        fitted = cv2.perspectiveTransform(ideal.reshape(-1, 1, 2), matrix).reshape(-1, 2).astype(np.float64)
        if np.max(np.linalg.norm(fitted - nominal, axis=1)) < 0.5 * pitch:
            centers = _trust_rims(fitted, measured, pitch, config)
    return PitGrid(centers, pit_radius, (w, h), score)


def refine_grid(rectified_bgr: np.ndarray, grid: PitGrid, *, config: GridConfig = GridConfig()) -> PitGrid:
    """``grid`` with each pit centre moved onto its rim as seen on the rectified image.

    The lattice a grid comes from is one homography; a wide-angle lens bends the board
    and carving is never perfect, so each pit is measured on its own (the circle of
    strongest edges near its centre, radii searched from the grid's pitch) and kept where
    it stays near the lattice.
    """
    _check_board_image(rectified_bgr)
    h, w = rectified_bgr.shape[:2]
    if (w, h) != tuple(grid.size_px):
        grid = grid.scaled((w, h))
    c = grid.centers_px.reshape(ROWS, COLS, 2)
    pitch = float(min(np.median(np.linalg.norm(np.diff(c, axis=1), axis=2)),
                      np.median(np.linalg.norm(np.diff(c, axis=0), axis=2))))
    measured, radius = _measure_rims(rectified_bgr, surface_difference(rectified_bgr), grid.centers_px, pitch, config)
    return PitGrid(_trust_rims(grid.centers_px, measured, pitch, config), radius, (w, h), grid.score)


def _trust_rims(lattice_px: np.ndarray, measured_px: np.ndarray, pitch: float, config: GridConfig) -> np.ndarray:
    """Each pit's measured centre where it is near the lattice's, else the lattice's (a heap's edge is no rim)."""
    near = np.linalg.norm(measured_px - lattice_px, axis=1) <= config.max_rim_shift_of_pitch * pitch
    return np.where(near[:, None], measured_px, lattice_px).astype(np.float64)


def _edge_strength(gray: np.ndarray, diff: np.ndarray) -> np.ndarray:
    """Edge magnitude of brightness and of the difference from the surface (rims show in one or both)."""
    g = cv2.GaussianBlur(gray, (0, 0), 1.0).astype(np.float32)
    d = cv2.GaussianBlur(diff, (0, 0), 1.0)
    mag = np.asarray(cv2.magnitude(cv2.Sobel(g, cv2.CV_32F, 1, 0), cv2.Sobel(g, cv2.CV_32F, 0, 1)))
    return mag + np.asarray(cv2.magnitude(cv2.Sobel(d, cv2.CV_32F, 1, 0), cv2.Sobel(d, cv2.CV_32F, 0, 1)))


def _ring_scores(edges: np.ndarray, centres: np.ndarray, offsets: np.ndarray, radii: np.ndarray) -> np.ndarray:
    """Mean edge strength on circles: (pits, offsets, radii)."""
    h, w = edges.shape
    angles = np.linspace(0, 2 * np.pi, 24, endpoint=False)
    ring = np.stack([np.cos(angles), np.sin(angles)], axis=1)  # (A, 2)
    pts = (centres[:, None, None, None, :] + offsets[None, :, None, None, :]
           + radii[None, None, :, None, None] * ring[None, None, None, :, :])
    xs = np.clip(np.rint(pts[..., 0]).astype(np.int32), 0, w - 1)
    ys = np.clip(np.rint(pts[..., 1]).astype(np.int32), 0, h - 1)
    samples = np.sort(edges[ys, xs], axis=3)  # sorting 24 values is several times faster than np.median
    # The median over the circle, not the mean: a rim must be edgy all round, not in one spot.
    n = samples.shape[3]
    median = 0.5 * (samples[..., (n - 1) // 2] + samples[..., n // 2])
    return np.asarray(median + 0.5 * samples.mean(axis=3))


def _fit_rims(edges: np.ndarray, nominal: np.ndarray, pitch: float, config: GridConfig) -> tuple[np.ndarray, float]:
    """Pit centres (32, 2) and one common pit radius from the rim edges.

    Coarse to fine: each pit's best circle over offsets and radii; each pit's rim is the
    largest radius nearly as good as its best (the rim is the outermost circle: seeds
    inside make smaller circles too); the common radius is an upper quantile of those
    (``rim_radius_quantile``: a heap hides its rim and shows only smaller circles, a bare
    pit shows the rim); then each centre is refined at that radius.
    """
    search = config.search_of_pitch * pitch
    step = max(1.0, search / 5)
    grid1 = np.arange(-search, search + 1e-6, step)
    offsets = np.stack(np.meshgrid(grid1, grid1), axis=-1).reshape(-1, 2)
    radii = np.linspace(config.min_radius_of_pitch, config.max_radius_of_pitch, 9) * pitch
    scores = _ring_scores(edges, nominal, offsets, radii)  # (P, O, R)
    per_pit = scores.max(axis=1)  # (P, R)
    good = per_pit >= config.rim_score_keep * per_pit.max(axis=1, keepdims=True)
    rims = (len(radii) - 1) - np.argmax(good[:, ::-1], axis=1)  # each pit's largest good radius
    r_index = int(np.floor(np.quantile(rims, config.rim_radius_quantile)))
    radius = float(radii[r_index])
    best = offsets[np.argmax(scores[:, :, r_index], axis=1)]
    fine = np.arange(-step, step + 1e-6, max(0.5, step / 3))
    fine_offsets = np.stack(np.meshgrid(fine, fine), axis=-1).reshape(-1, 2)
    fine_radii = radius + np.linspace(-0.5, 0.5, 5) * (radii[1] - radii[0])
    centres = nominal + best
    scores = _ring_scores(edges, centres, fine_offsets, fine_radii)
    radius = float(fine_radii[int(np.argmax(np.median(scores.max(axis=1), axis=0)))])
    k = int(np.argmin(np.abs(fine_radii - radius)))
    centres = centres + fine_offsets[np.argmax(scores[:, :, k], axis=1)]
    return centres, radius

