"""Localise: find the board's four corners in a camera image (first stage after stability).

Three ways, one result type (:class:`BoardLocation`):

* :func:`find_board` - automatic and markerless: first the 4x8 lattice of round pits
  (Hough circles, again on a contrast-stretched image if need be, a lattice walk that
  steps over hidden pits, a homography; moved a column or a row, or unsheared, when
  its nodes then show rounder rims and keep their circles, see :func:`rim_coherence`;
  believed only when most of its pits are circles and no pit-sized circles lie off
  it), then each side of the board's top face as a line through edge points found
  outward from the lattice: the innermost well-supported line with the board's surface
  colour inside and another colour outside (side faces, shadows and grain lines lose),
  or a pair of supported lines giving opposite sides alike margins when the innermost
  ones do not. One radial lens distortion, fitted so that all sides come out straight
  (plumb line), bends the corners back into the image. Without a lattice: candidate
  quads from colour segmentation and edges, each checked for the pit pattern (which
  also rejects empty tables); then the lattice search again inside the largest dark
  segmented regions, their contrast stretched (a dark board in dim light); last, inside
  the segmented regions warped top-down (a steep, turned camera's elliptical pits);
* :func:`find_markers` - four printed ArUco markers (ids 0..3 = TL, TR, BR, BL
  seen from South) lying just outside the board corners;
* :func:`parse_corners` - four points given by a person.

Corners are always ordered TL, TR, BR, BL with South (the long side nearer the
bottom of the image, unless a calibration says otherwise) at the bottom.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from typing import NamedTuple

import cv2
import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from omweso_cam.vision.grid import lattice_score

#: ArUco dictionary of the printed marker sheet; ids 0..3 are the TL, TR, BR, BL corners.
MARKER_DICTIONARY = cv2.aruco.DICT_4X4_50 if hasattr(cv2, "aruco") else 0
MARKER_IDS = (0, 1, 2, 3)


class CornersError(ValueError):
    """Four corner points could not be parsed or do not make a usable quad."""


@dataclass(frozen=True)
class LocaliseConfig:
    """Tunables of the automatic board finder."""

    work_max_side_px: int = 640  # the image is downscaled to this before searching
    min_board_area_frac: float = 0.06  # of the image area
    max_board_area_frac: float = 0.995
    min_lattice_score: float = 1.6  # pit-pattern contrast (see grid.lattice_score) to accept a segmented quad
    min_pit_lattice_score: float = 0.2  # the same, for the outline found from the pit lattice
    min_pits_seen_to_trust: int = 28  # a 4x8 lattice with this many pits seen as circles needs no colour contrast
    min_pits_in_view_to_trust: int = 20  # ... one the picture cuts, as many of its pits in view as this at least
    min_pits_seen: int = 16  # a lattice with fewer of its pits seen as circles is a guess, not a board
    # The strip between the players' halves may be wider than the rows' pitch (boards made in two
    # halves, a carved ridge): the pit lattice looks for a gap of up to max_gap_of_pitch row
    # pitches there and models one when it is at least min_gap_of_pitch (_fit_gap).
    max_gap_of_pitch: float = 0.7
    min_gap_of_pitch: float = 0.1
    max_stray_circles_frac: float = 0.5  # pit-sized circles inside the lattice but off its pits, of those on them
    # The 32 pits' rims must be rounder than the ring of nodes one step beyond them by this much
    # (rim coherence: ~0.87 on pits, ~0.45-0.5 off them), and at most max_round_beyond of that
    # ring may look like pits (rim coherence over pit_rim_coherence). 72 fresh renders (seeds
    # 555001+) turned 0/90/180 degrees: board lattices step by 0.15-0.5 with at most 8% of the
    # ring round; a dotted cloth's lattice has 41-47% round; lattices on tables without a board
    # (seeds 1800001+) step by 0.01-0.02.
    min_rim_step: float = 0.1
    pit_rim_coherence: float = 0.7
    max_round_beyond: float = 0.25
    colour_clusters: tuple[int, ...] = (2, 3, 4)  # k of the k-means colour segmentations tried
    kmeans_side_px: int = 160  # segmentation runs on an image this wide
    refine_search_frac: float = 0.025  # of the board diagonal, each side of a rough edge
    refine_iterations: int = 2
    max_refined_candidates: int = 6
    # Last resort, when neither the circles nor a segmented quad showed a board: the circle search
    # again inside each of the largest segmented regions, their contrast stretched (a dark board
    # in dim light, whose pits barely differ from its wood). Believed only on a clear pit pattern.
    stretched_regions: int = 3
    stretched_max_level: float = 64.0  # only dark regions (median grey level 0..255 below this) are stretched
    stretched_min_lattice_score: float = 0.5
    # Last of all: the segmented regions that show the pit pattern best (this many, each under
    # max_rectified_area_frac of the image), warped top-down and searched for the pit lattice
    # (see _rectified_board). rectified_pad: the quad's share of the warped image left each side.
    rectified_regions: int = 3
    max_rectified_area_frac: float = 0.9
    rectified_pad: float = 0.08
    rectified_width_px: int = 640
    min_edge_support: float = 25.0  # a segmented quad's sides must sit on edges at least this strong (Sobel units)
    min_pit_radius_frac: float = 0.012  # pit radius range searched, of the image's longer side
    max_pit_radius_frac: float = 0.06
    min_small_pit_radius_frac: float = 0.006  # second try, for small boards: radii from this up
    small_pit_search: bool = True
    pit_search_max_side_px: int = 960  # circles are searched at this size (small boards have small pits)
    hough_edge_threshold: float = 80.0  # Canny high threshold of the circle finder
    hough_min_roundness: float = 0.5  # HOUGH_GRADIENT_ALT circle "perfectness" (0..1)
    # Last circle searches, on the image stretched upright this many times: a camera 45-55
    # degrees from vertical sees the pits 0.7-0.57 as high as wide, which the circle finder
    # misses. Such a lattice needs min_oblique_lattice_score (a table without a board gave one
    # of 0.47; boards 0.9-5).
    oblique_stretches: tuple[float, ...] = (1.4, 1.9)
    min_oblique_lattice_score: float = 0.8
    # Last of the pit searches: pits as discs darker or lighter than the wood around them, where
    # their rims are too faint for the circle finder and seeds' outlines are the strongest edges
    # (dark wood, dim light). See _disc_blobs. Only in the contrast-stretched dark regions.
    disc_search: bool = False
    disc_scale_px: float = 6.0  # each pit radius is searched on the image shrunk to make it this many pixels
    disc_min_response: float = 1.0  # a disc's contrast against the local contrast's RMS at its scale
    max_disc_blobs: int = 400
    disc_radius_of_pitch: float = 0.36
    retry_contrast_clip: float = 3.0  # CLAHE clip limit of the second, contrast-stretched circle search
    candidate_score_ratio: float = 0.6  # refine candidates scoring at least this share of the best
    profiles_per_side: int = 24  # outward profiles searched for each side's edge
    profile_step_of_pitch: float = 0.02  # sample step along a profile, of the pit pitch
    colour_window_of_pitch: float = 0.08  # colour compared this far inside and outside an edge point
    min_edge_points: int = 6  # a side needs at least this many edge points on one line
    # ... and at least this share of its profiles: 0.3 lets a side with a shadow, a side face or a
    # seed-coloured table along part of it keep its own edge instead of the lattice-parallel guess
    # (corners within 1% on 153 fresh renders, seeds 555001+ and 556001+: 76 -> 83; 0.2 gained one
    # more but moved three good corners by 1-3% of the diagonal).
    min_edge_inlier_frac: float = 0.3
    edge_line_tolerance_px: float = 1.5  # RANSAC inlier distance at the pit-search scale
    min_edge_colour_step: float = 6.0  # Lab units: an edge point's outside must differ this much more from the surface
    # A side's edge may turn this much from the pit lattice's prediction. 2 was tried (2026-11-30):
    # within 1% on renders 3100001+ and the stills 182 -> 186, but on renders nobody had tuned on
    # (3200001+, 3300001+, the benchmark's scan 1100001+) 131, 133, 143 -> 131, 136, 141, one board
    # more found on one set and one fewer on another, with single outlines 2-3% worse either way.
    max_edge_turn_deg: float = 4.0
    edge_support_keep: float = 0.8  # lines with this share of the best support compete on being innermost
    edge_candidate_keep: float = 0.4  # lines with this share of it may still win for alike opposite margins
    rim_margin: float = 0.6  # summed rim coherence (32 nodes) by which a lattice placement must win (~0.15 a node of a column)
    rim_steps_polished: int = 4  # placements near a lattice snapped to the circles and measured again
    candidate_separation_of_pitch: float = 0.04  # candidate lines of one side lie at least this far apart
    max_margin_difference_of_pitch: float = 0.15  # opposite margins differing more than this look for an alike pair
    # A band along the board's edge (a bevel, a chamfer) shows a second straight edge beyond the
    # innermost one on three or four sides (see _past_a_band); its width lies in this range (of the pit pitch) ...
    band_width_of_pitch: tuple[float, float] = (0.03, 0.2)
    band_width_spread_of_pitch: float = 0.08  # ... and three or four sides' widths lie within this range
    # A side without an edge line of its own takes the opposite side's margin when its strongest
    # gradient lies further than this from it (see _board_outline).
    max_fallback_margin_difference_of_pitch: float = 0.3
    min_plumb_points: int = 8  # a side takes part in the lens fit with at least this many edge points
    min_plumb_sides: int = 3  # ... and at least this many sides must
    max_lens_k: float = 0.5  # radial coefficients searched (division model, radius in units of the longer side)
    lens_search_steps: int = 5  # the sides' lines are looked for under this many distortions each way, and none
    min_lens_gain_points: int = 4  # ... and under a distortion only if it puts this many more edge points on lines
    min_straightening_px: float = 0.15  # the lens must bring the sides' RMS off-line distance down by this much
    max_straightened_ratio: float = 0.8  # ... and to at most this share of what it was
    edge_step_of_pitch: float = 0.025  # board-edge search step outward from the pits, of the pit pitch
    max_margin_of_pitch: float = 1.3  # the board's edge lies at most this far beyond the outer pit cells
    min_board_edge_strength: float = 8.0  # Sobel units: weaker gradient peaks are not board edges
    min_surface_contrast: float = 15.0  # Lab units: a side's median colour nearer the surface's looks like it
    max_unlike_inside: float = 0.4  # share of the strips just inside an edge allowed to look unlike the surface
    min_unlike_outside: float = 0.6  # share of the strips just outside it that must look unlike it


@dataclass(frozen=True, eq=False)
class BoardLocation:
    """Where the board is: corners TL, TR, BR, BL in image pixels, how it was found, how sure."""

    corners_px: np.ndarray  # (4, 2) float64
    method: str  # "auto" | "markers" | "manual" | "calibration"
    score: float = 0.0
    detail: dict[str, object] = field(default_factory=dict)

    def as_list(self) -> list[list[float]]:
        return [[round(float(x), 2), round(float(y), 2)] for x, y in self.corners_px]


# --------------------------------------------------------------------------- geometry


def _signed_area(quad: np.ndarray) -> float:
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
    if _signed_area(ordered) < 0:
        ordered = ordered[::-1]
    return ordered


def order_corners(quad: np.ndarray, *, long_side_first: bool | None = None) -> np.ndarray:
    """Order a board quad TL, TR, BR, BL with South at the bottom.

    South is the long side (the one along which the 8 pits of a row run) nearer
    the bottom of the image. ``long_side_first`` says whether the side from the
    clockwise-first point to the next is a long side; ``None`` decides by length.
    """
    return _south_at_bottom(clockwise(quad), long_side_first)


def _south_at_bottom(pts: np.ndarray, long_side_first: bool | None) -> np.ndarray:
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
    if _signed_area(quad) <= 0:
        raise CornersError("corners must run clockwise on screen: TL, TR, BR, BL")
    if abs(_signed_area(quad)) < 100.0:
        raise CornersError("corners enclose almost no area")
    if image_size is not None:
        w, h = image_size
        margin = 0.5 * max(w, h)
        if np.any(quad < -margin) or np.any(quad[:, 0] > w + margin) or np.any(quad[:, 1] > h + margin):
            raise CornersError(f"corners lie far outside the {w}x{h} image")


# --------------------------------------------------------------------------- markers


def find_markers(image_bgr: np.ndarray) -> BoardLocation | None:
    """Board corners from four ArUco markers (ids 0..3 = TL, TR, BR, BL), or None.

    Each marker lies just outside its board corner; the corner is the marker's
    own corner nearest the centre of the four markers.
    """
    gray = cv2.cvtColor(image_bgr, cv2.COLOR_BGR2GRAY) if image_bgr.ndim == 3 else image_bgr
    dictionary = cv2.aruco.getPredefinedDictionary(MARKER_DICTIONARY)
    detector = cv2.aruco.ArucoDetector(dictionary, cv2.aruco.DetectorParameters())
    marker_corners, ids, _ = detector.detectMarkers(gray)
    if ids is None:
        return None
    found: dict[int, np.ndarray] = {}
    for corners, marker_id in zip(marker_corners, ids.ravel(), strict=True):
        if int(marker_id) in MARKER_IDS and int(marker_id) not in found:
            found[int(marker_id)] = corners.reshape(4, 2).astype(np.float64)
    if len(found) < 4:
        return None
    centre = np.mean([found[i].mean(axis=0) for i in MARKER_IDS], axis=0)
    quad = np.array(
        [found[i][np.argmin(np.linalg.norm(found[i] - centre, axis=1))] for i in MARKER_IDS]
    )
    try:
        validate_quad(quad)
    except CornersError:
        return None
    return BoardLocation(quad, "markers", 1.0)


def marker_sheet(*, marker_px: int = 400, margin_px: int = 80) -> np.ndarray:
    """A printable page (grayscale uint8) with the four corner markers, labelled."""
    dictionary = cv2.aruco.getPredefinedDictionary(MARKER_DICTIONARY)
    cell = marker_px + 2 * margin_px
    sheet = np.full((2 * cell + 120, 2 * cell), 255, np.uint8)
    names = ("TL", "TR", "BR", "BL")
    slots = ((0, 0), (0, 1), (1, 1), (1, 0))  # (row, col) of each corner on the page
    for marker_id, name, (row, col) in zip(MARKER_IDS, names, slots, strict=True):
        marker = cv2.aruco.generateImageMarker(dictionary, marker_id, marker_px)
        y0, x0 = row * cell + margin_px, col * cell + margin_px
        sheet[y0 : y0 + marker_px, x0 : x0 + marker_px] = marker
        cv2.putText(sheet, f"id {marker_id}: {name} corner", (x0, y0 + marker_px + 40),
                    cv2.FONT_HERSHEY_SIMPLEX, 1.0, 0, 2, cv2.LINE_AA)
    cv2.putText(sheet, "omweso-cam markers: cut out, lay each just outside its board corner (South at the bottom)",
                (20, 2 * cell + 70), cv2.FONT_HERSHEY_SIMPLEX, 0.8, 0, 2, cv2.LINE_AA)
    return sheet


# --------------------------------------------------------------------------- automatic


def _downscale(image: np.ndarray, max_side_px: int) -> tuple[np.ndarray, float]:
    h, w = image.shape[:2]
    scale = min(1.0, max_side_px / max(h, w))
    if scale < 1.0:
        image = cv2.resize(image, (round(w * scale), round(h * scale)), interpolation=cv2.INTER_AREA)
    return image, scale


def _quads_from_mask(mask: np.ndarray, min_area: float, max_area: float) -> list[np.ndarray]:
    contours, _ = cv2.findContours(mask, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
    quads = []
    for contour in contours:
        area = cv2.contourArea(contour)
        if not min_area <= area <= max_area:
            continue
        hull = cv2.convexHull(contour)
        perimeter = cv2.arcLength(hull, True)
        found = None
        for eps in (0.01, 0.02, 0.03, 0.05, 0.08):
            approx = cv2.approxPolyDP(hull, eps * perimeter, True)
            if len(approx) == 4:
                found = approx.reshape(4, 2).astype(np.float64)
                break
        if found is None:
            found = cv2.boxPoints(cv2.minAreaRect(hull)).astype(np.float64)
        quads.append(clockwise(found))
    return quads


def _candidate_masks(small: np.ndarray, config: LocaliseConfig) -> list[np.ndarray]:
    """Binary masks in which the board may be one large blob."""
    h, w = small.shape[:2]
    masks = []
    side = config.kmeans_side_px
    tiny = cv2.resize(small, (side, max(1, round(side * h / w))), interpolation=cv2.INTER_AREA)
    lab = cv2.cvtColor(cv2.GaussianBlur(tiny, (5, 5), 0), cv2.COLOR_BGR2LAB).reshape(-1, 3).astype(np.float32)
    criteria = (cv2.TERM_CRITERIA_EPS + cv2.TERM_CRITERIA_MAX_ITER, 20, 1.0)
    kernel = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (5, 5))
    for k in config.colour_clusters:
        cv2.setRNGSeed(k)  # deterministic k-means
        _, labels, _ = cv2.kmeans(lab, k, None, criteria, 2, cv2.KMEANS_PP_CENTERS)  # type: ignore[call-overload]
        labels = labels.reshape(tiny.shape[:2])
        # Single clusters, and pairs of them: lit and shadowed wood fall into different clusters.
        groups: list[tuple[int, ...]] = [(c,) for c in range(k)]
        if k > 2:
            groups += list(itertools.combinations(range(k), 2))
        for group in groups:
            raw = np.isin(labels, group).astype(np.uint8) * 255
            opened = cv2.morphologyEx(raw, cv2.MORPH_OPEN, kernel)
            closed = cv2.morphologyEx(opened, cv2.MORPH_CLOSE, kernel)
            masks.append(cv2.resize(closed, (w, h), interpolation=cv2.INTER_NEAREST))
    # Edges, closed into regions: boards whose colour is close to the table's.
    gray = cv2.cvtColor(small, cv2.COLOR_BGR2GRAY)
    edges = cv2.Canny(cv2.GaussianBlur(gray, (5, 5), 0), 30, 90)
    edges = cv2.dilate(edges, cv2.getStructuringElement(cv2.MORPH_RECT, (3, 3)))
    filled = np.zeros_like(edges)
    contours, _ = cv2.findContours(edges, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
    cv2.drawContours(filled, contours, -1, 255, thickness=cv2.FILLED)
    masks.append(filled)
    return masks


def _quad_key(quad: np.ndarray, tol: float) -> tuple[int, ...]:
    return tuple(int(v) for v in np.round(quad.ravel() / tol))


def best_orientation(image: np.ndarray, quad: np.ndarray) -> tuple[float, np.ndarray]:
    """(pit-lattice score, ordered corners) of a clockwise quad, trying both long-side choices."""
    best: tuple[float, np.ndarray] = (-np.inf, quad)
    for long_side_first in (True, False):
        ordered = order_corners(quad, long_side_first=long_side_first)
        score = lattice_score(image, ordered)
        if score > best[0]:
            best = (score, ordered)
    return best


def find_board(image_bgr: np.ndarray, *, config: LocaliseConfig = LocaliseConfig()) -> BoardLocation | None:
    """Find the board without markers; None when no quad shows the 4x8 pit pattern."""
    small, scale = _downscale(image_bgr, config.work_max_side_px)
    h, w = small.shape[:2]
    area = float(h * w)
    # The 4x8 lattice of round pits is the strongest evidence there is: when it is found,
    # the board is where it says (edges refine it). Otherwise fall back to segmented regions.
    scores: dict[bytes, float] = {}

    def score_of(lattice: PitLattice) -> float:
        key = lattice.corners.tobytes()
        if key not in scores:
            scores[key] = float(lattice_score(small, lattice.corners * scale))
        return scores[key]

    def trusted(lattice: PitLattice) -> bool:
        # The outline must show the pit pattern too (a dotted cloth's lattice of circles does not),
        # unless nearly every pit was seen as a circle: in dark wood the pits barely differ in
        # colour from the surface, and a cloth's circles do not stop at a 4x8 block. A lattice
        # found only by a last-resort search must show the pattern clearly.
        if lattice.last_resort:
            return score_of(lattice) >= config.min_oblique_lattice_score
        if lattice.seen >= config.min_pits_seen_to_trust or score_of(lattice) >= config.min_pit_lattice_score:
            return True
        # A board the picture cuts: its outline runs past the picture, where the pattern cannot show,
        # so it is judged on its pits in view (at least ``min_pits_in_view_to_trust``): as many of
        # them unseen as a whole board may have.
        in_view = int((~_beyond_picture(lattice.centres, image_bgr.shape)).sum())
        unseen_allowed = len(PIT_NODES) - config.min_pits_seen_to_trust
        return config.min_pits_in_view_to_trust <= in_view < len(PIT_NODES) and lattice.seen >= in_view - unseen_allowed

    lattice = find_pit_lattice(image_bgr, config=config, trusted=trusted, score=score_of)
    if lattice is not None and trusted(lattice):
        return lattice.location(score_of(lattice), "pit lattice")
    candidates: dict[tuple[int, ...], np.ndarray] = {}
    for mask in _candidate_masks(small, config):
        for quad in _quads_from_mask(mask, config.min_board_area_frac * area, config.max_board_area_frac * area):
            candidates.setdefault(_quad_key(quad, 0.02 * max(h, w)), quad)
    quads = list(candidates.values())
    # Each quad in its better orientation, and how clearly it shows the pit pattern; best first.
    scored = sorted((best_orientation(small, quad) for quad in quads), key=lambda item: -item[0])
    return (_segmented_board(image_bgr, small, scale, scored, config)
            or _stretched_board(image_bgr, [q / scale for q in quads], config)
            or _rectified_board(image_bgr, small, scale, scored, config))


def _segmented_board(image_bgr: np.ndarray, small: np.ndarray, scale: float, scored: list[tuple[float, np.ndarray]],
                     config: LocaliseConfig) -> BoardLocation | None:
    """The segmented quad (``small``'s pixels) that shows the pit pattern best, refined onto the image's edges.

    ``scored``: (pit-pattern score, ordered corners) of every segmented quad, best first (:func:`best_orientation`).
    """
    if not scored:
        return None
    best_score = scored[0][0]
    if best_score < config.min_lattice_score:
        return None
    # Several candidates show the pits (a quad a little too big or too small does too);
    # refine each onto the image edges and keep the one whose sides sit on the strongest edges.
    gray = cv2.cvtColor(image_bgr, cv2.COLOR_BGR2GRAY) if image_bgr.ndim == 3 else image_bgr
    gradient = image_gradients(gray)
    best: tuple[float, np.ndarray, float] | None = None
    for score, ordered in scored[: config.max_refined_candidates]:
        if score < max(config.min_lattice_score, config.candidate_score_ratio * best_score):
            continue
        corners = refine_corners(image_bgr, ordered / scale, config=config, gradients=gradient)
        if lattice_score(small, corners * scale) < config.min_lattice_score:
            corners = ordered / scale
        support = edge_support(gradient, corners)
        if best is None or support > best[0]:
            best = (support, corners, score)
    assert best is not None
    if best[0] < config.min_edge_support:
        return None
    return BoardLocation(best[1], "auto", float(best[2]), {"candidates": len(scored), "edge_support": best[0]})


def _stretched_board(image_bgr: np.ndarray, quads: list[np.ndarray], config: LocaliseConfig) -> BoardLocation | None:
    """The pit lattice found inside one of the largest ``quads`` (image pixels) once its contrast is stretched.

    Only dark regions are tried (``stretched_max_level``): what this is for is a dark board in
    dim light, and it keeps the search's cost (about a second a region) off most frames
    without a board. Everything outside the region (grown by 8%) is flattened to a plain grey,
    the inside stretched per channel from its 1st to its 99th percentile: a dark board's pits
    become circles the search sees. The lattice must then show the pit pattern clearly
    (``stretched_min_lattice_score``), as a guard against patterns in tables and cloths.
    """
    if image_bgr.ndim != 3 or not config.stretched_regions:
        return None
    largest = sorted(quads, key=lambda q: -abs(cv2.contourArea(q.astype(np.float32))))[: config.stretched_regions]
    for quad in largest:
        centre = quad.mean(axis=0)
        region = np.zeros(image_bgr.shape[:2], np.uint8)
        cv2.fillConvexPoly(region, np.round(centre + 1.08 * (quad - centre)).astype(np.int32), 255)
        inside = image_bgr[region > 0].astype(np.float32)
        if len(inside) < 100 or float(np.median(inside.mean(axis=1))) >= config.stretched_max_level:
            continue
        lo, hi = np.percentile(inside, 1, axis=0), np.percentile(inside, 99, axis=0)
        stretched = np.clip((image_bgr - lo) * (255.0 / np.maximum(hi - lo, 1.0)), 0, 255).astype(np.uint8)
        stretched[region == 0] = np.median(stretched[region > 0], axis=0) // 2
        # Not the oblique searches: on these last-resort regions they placed a lattice on the
        # wrong thing (one of the 150 scan renders, seeds 1600001+). The pits as discs, though:
        # a dark board's rims can stay faint even stretched (LocaliseConfig.disc_search).
        lattice = find_pit_lattice(stretched, config=replace(config, oblique_stretches=(), disc_search=True))
        if lattice is None:
            continue
        small, scale = _downscale(stretched, config.work_max_side_px)
        score = float(lattice_score(small, lattice.corners * scale))
        if score >= config.stretched_min_lattice_score:
            return lattice.location(score, "pit lattice, contrast stretched")
    return None


def _rectified_board(image_bgr: np.ndarray, small: np.ndarray, scale: float, scored: list[tuple[float, np.ndarray]],
                     config: LocaliseConfig) -> BoardLocation | None:
    """The pit lattice found in a segmented region warped to a top-down view.

    Last resort for a camera well off vertical, or turned so the board's rows run aslant:
    the pits are ellipses the circle finder misses, flattened along a direction the
    upright stretches (``oblique_stretches``) do not undo, and their colour too faint
    against the grain for the segmented quad's pit-pattern score. The region (``small``'s
    pixels) warped so that its quad is a rectangle of the board's proportions makes them
    circles again, whatever the camera's angle; the quad need not be the board's top face
    exactly (a side face, a shadow beside it), only roughly on the table's plane. The
    lattice found there is believed when nearly every pit is a circle (``min_pits_seen_to_trust``)
    or the warped region shows the pit pattern as clearly as a last-resort lattice in the image
    must (``min_oblique_lattice_score``), and mapped back.
    """
    from omweso_cam.vision.rectify import board_aspect

    if not config.rectified_regions:
        return None
    h, w = small.shape[:2]
    plausible = [ordered for _, ordered in scored
                 if abs(cv2.contourArea(ordered.astype(np.float32))) < config.max_rectified_area_frac * h * w]
    # The pits' size is known from the warp: their radius is about a third of the pitch, an eighth of
    # the quad's width; 0.15-0.6 of it is searched (the quad may be a little larger or smaller than the board).
    pitch_frac = (1.0 - 2.0 * config.rectified_pad) / 8.0
    search_config = replace(config, oblique_stretches=(), disc_search=False, small_pit_search=False,
                            pit_search_max_side_px=config.rectified_width_px,
                            min_pit_radius_frac=0.15 * pitch_frac, max_pit_radius_frac=0.6 * pitch_frac)
    for ordered in plausible[: config.rectified_regions]:
        corners = ordered / scale
        aspect = board_aspect(corners, (image_bgr.shape[1], image_bgr.shape[0])) or 2.0
        if aspect < 1.0:  # the quad's first side is a short one: start from the next corner
            corners, aspect = np.roll(corners, -1, axis=0), 1.0 / aspect
        aspect = min(aspect, 4.0)
        width = float(config.rectified_width_px)
        height = width / aspect
        pad = config.rectified_pad
        target = np.array([[pad * width, pad * height], [(1 - pad) * width, pad * height],
                           [(1 - pad) * width, (1 - pad) * height], [pad * width, (1 - pad) * height]], np.float32)
        warp = cv2.getPerspectiveTransform(corners.astype(np.float32), target)
        if not np.all(np.isfinite(warp)) or abs(float(np.linalg.det(warp))) < 1e-12:
            continue  # a degenerate outline (three corners in a line)
        top_down = cv2.warpPerspective(image_bgr, warp, (round(width), round(height)), flags=cv2.INTER_LINEAR,
                                       borderMode=cv2.BORDER_REPLICATE)
        top_small, top_scale = _downscale(top_down, config.work_max_side_px)

        def top_score(lattice: PitLattice, top_small: np.ndarray = top_small, top_scale: float = top_scale) -> float:
            return float(lattice_score(top_small, lattice.corners * top_scale))

        def believed(lattice: PitLattice, top_score: Callable[[PitLattice], float] = top_score) -> bool:
            return lattice.seen >= config.min_pits_seen_to_trust or top_score(lattice) >= config.min_oblique_lattice_score

        lattice = find_pit_lattice(top_down, config=search_config, trusted=believed, score=top_score)
        if lattice is None or not believed(lattice):
            continue
        back = np.linalg.inv(warp)
        found = cv2.perspectiveTransform(lattice.corners.reshape(-1, 1, 2).astype(np.float64), back).reshape(-1, 2)
        centres = cv2.perspectiveTransform(lattice.centres.reshape(-1, 1, 2).astype(np.float64), back).reshape(-1, 2)
        if _signed_area(found) < 0:
            found = found[::-1].copy()
        # The warp keeps the lattice's rows of 8 along TL-TR (both clockwise on screen).
        found = _south_at_bottom(found, True)
        radius = lattice.radius * _row_pitch(centres) / max(_row_pitch(lattice.centres), 1e-6)
        score = float(lattice_score(small, found * scale))
        return BoardLocation(found, "auto", score, {"found_by": "pit lattice, rectified region", "pit_centers_px": centres,
                                                    "pit_radius_px": radius})
    return None


def image_gradients(gray: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    blurred = cv2.GaussianBlur(gray, (5, 5), 0).astype(np.float32)
    return cv2.Sobel(blurred, cv2.CV_32F, 1, 0, ksize=3), cv2.Sobel(blurred, cv2.CV_32F, 0, 1, ksize=3)


def edge_support(gradients: tuple[np.ndarray, np.ndarray], corners: np.ndarray) -> float:
    """Mean image gradient across the quad's sides (median per side, then the weakest-side-weighted mean)."""
    gx, gy = gradients
    h, w = gx.shape
    per_side = []
    for i in range(4):
        a, b = corners[i], corners[(i + 1) % 4]
        d = (b - a) / max(float(np.linalg.norm(b - a)), 1e-9)
        normal = np.array([d[1], -d[0]])
        ts = np.linspace(0.1, 0.9, 40)
        pts = a[None, :] + ts[:, None] * (b - a)[None, :]
        xs = np.clip(np.rint(pts[:, 0]).astype(int), 0, w - 1)
        ys = np.clip(np.rint(pts[:, 1]).astype(int), 0, h - 1)
        per_side.append(float(np.median(np.abs(gx[ys, xs] * normal[0] + gy[ys, xs] * normal[1]))))
    return float(np.mean(per_side) + min(per_side))


def refine_corners(
    image_bgr: np.ndarray, corners: np.ndarray, *, config: LocaliseConfig = LocaliseConfig(),
    gradients: tuple[np.ndarray, np.ndarray] | None = None,
) -> np.ndarray:
    """Move each side of a rough quad onto the strongest straight edge nearby; corners = intersections."""
    if gradients is None:
        gray = cv2.cvtColor(image_bgr, cv2.COLOR_BGR2GRAY) if image_bgr.ndim == 3 else image_bgr
        gradients = image_gradients(gray)
    gx, gy = gradients
    h, w = gx.shape
    quad = np.asarray(corners, dtype=np.float64).copy()
    window = config.refine_search_frac * quad_diagonal(quad)
    for _ in range(config.refine_iterations):
        lines: list[tuple[tuple[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]] | None] = []
        for i in range(4):
            a, b = quad[i], quad[(i + 1) % 4]
            direction = (b - a) / max(np.linalg.norm(b - a), 1e-9)
            normal = np.array([direction[1], -direction[0]])  # points outward for a clockwise quad
            ts = np.linspace(0.06, 0.94, 64)
            offsets = np.linspace(-window, window, max(9, int(2 * window) + 1))
            pts = a[None, :] + ts[:, None] * (b - a)[None, :]
            samples = pts[:, None, :] + offsets[None, :, None] * normal[None, None, :]
            sx = np.clip(samples[..., 0], 0, w - 1).astype(np.float32)
            sy = np.clip(samples[..., 1], 0, h - 1).astype(np.float32)
            gnx = cv2.remap(gx, sx, sy, cv2.INTER_LINEAR)
            gny = cv2.remap(gy, sx, sy, cv2.INTER_LINEAR)
            strength = np.abs(gnx * normal[0] + gny * normal[1])
            inside = (samples[..., 0] >= 0) & (samples[..., 0] < w) & (samples[..., 1] >= 0) & (samples[..., 1] < h)
            strength = np.where(inside, strength, 0)
            best = np.argmax(strength, axis=1)
            peak = strength[np.arange(len(ts)), best]
            good = peak > max(8.0, 0.35 * float(np.median(peak)))
            if good.sum() < 8:
                lines.append(None)
                continue
            edge_pts = samples[np.arange(len(ts)), best]
            # Lens distortion bends long edges: each corner uses the half of the side next to it.
            halves = []
            for part in (ts <= 0.5, ts >= 0.5):
                sel = good & part if (good & part).sum() >= 6 else good
                vx, vy, x0, y0 = cv2.fitLine(edge_pts[sel].astype(np.float32), cv2.DIST_HUBER, 0, 0.01, 0.01).ravel()
                halves.append((np.array([x0, y0], np.float64), np.array([vx, vy], np.float64)))
            lines.append((halves[0], halves[1]))
        new = quad.copy()
        for i in range(4):
            prev_side, side = lines[(i - 1) % 4], lines[i]
            if prev_side is None or side is None:
                continue
            point = _intersect(prev_side[1], side[0])
            if point is not None and np.linalg.norm(point - quad[i]) < 2 * window:
                new[i] = point
        quad = new
    return quad


def _intersect(l1: tuple[np.ndarray, np.ndarray], l2: tuple[np.ndarray, np.ndarray]) -> np.ndarray | None:
    (p, r), (q, s) = l1, l2
    cross = r[0] * s[1] - r[1] * s[0]
    if abs(cross) < 1e-6:
        return None
    t = ((q[0] - p[0]) * s[1] - (q[1] - p[1]) * s[0]) / cross
    return np.asarray(p + t * r)


# --------------------------------------------------------------------------- pit lattice


def _circles(gray: np.ndarray, config: LocaliseConfig, *, small_pits: bool = False) -> np.ndarray:
    """Round pit openings (x, y, r, rank score): Hough circles on the rims.

    ``small_pits`` searches the radii below the usual range (a small or distant board),
    where seeds are circles of pit size too, so it is only a second try.
    """
    side = max(gray.shape[:2])
    if small_pits:
        config = replace(config, min_pit_radius_frac=config.min_small_pit_radius_frac,
                         max_pit_radius_frac=1.5 * config.min_pit_radius_frac)
    circles = cv2.HoughCircles(cv2.GaussianBlur(gray, (5, 5), 0), cv2.HOUGH_GRADIENT_ALT, dp=1.5,
                               minDist=max(4.0, side * config.min_pit_radius_frac * 1.5),
                               param1=config.hough_edge_threshold, param2=config.hough_min_roundness,
                               minRadius=round(side * config.min_pit_radius_frac),
                               maxRadius=round(side * config.max_pit_radius_frac))
    if circles is None:
        return np.zeros((0, 4))
    c = circles.reshape(-1, 3).astype(np.float64)
    return np.hstack([c, (len(c) - np.arange(len(c)))[:, None].astype(np.float64)])


def _disc_blobs(gray: np.ndarray, config: LocaliseConfig) -> np.ndarray:
    """Pits as discs of another shade than the wood around them (x, y, r, rank score), strongest first.

    The circle finder looks for round rims; on dark wood in dim light a pit's rim is faint
    and the seeds' outlines are the strongest edges in it, yet the pit itself is a disc
    darker (or, full of light seeds, lighter) than its surroundings. For each pit radius
    (steps of 1.2 over the circle finder's range), the image is shrunk so the radius is
    ``disc_scale_px`` pixels, seeds are wiped out by an opening and a closing smaller than a
    pit, and a difference of Gaussians (sigma half the radius and the radius) is divided by
    its own local RMS: a disc on low-contrast wood scores like one on a contrasty table, so a
    checked cloth beside the board does not outrank the pits. Local extremes over
    ``disc_min_response``, then the strongest of any overlapping across radii.
    """
    side = max(gray.shape[:2])
    k = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (5, 5))  # under a pit radius of disc_scale_px, over a seed
    xs, ys, rs, responses = [], [], [], []
    radius = side * config.min_pit_radius_frac
    while radius <= side * config.max_pit_radius_frac:
        f = min(1.0, config.disc_scale_px / radius)
        image = cv2.resize(gray, None, fx=f, fy=f, interpolation=cv2.INTER_AREA) if f < 1.0 else gray
        image = cv2.morphologyEx(cv2.morphologyEx(image, cv2.MORPH_OPEN, k), cv2.MORPH_CLOSE, k).astype(np.float32)
        r = radius * f
        dog = cv2.GaussianBlur(image, (0, 0), 0.5 * r) - cv2.GaussianBlur(image, (0, 0), r)
        strength = np.abs(dog / np.sqrt(cv2.GaussianBlur(dog * dog, (0, 0), 2.5 * r) + 1.0))
        peak = (strength == cv2.dilate(strength, k)) & (strength > config.disc_min_response)
        py, px = np.nonzero(peak)
        xs.append(px / f)
        ys.append(py / f)
        rs.append(np.full(len(px), radius))
        responses.append(strength[py, px])
        radius *= 1.2
    if not xs:
        return np.zeros((0, 4))
    found = np.stack([np.concatenate(xs), np.concatenate(ys), np.concatenate(rs), np.concatenate(responses)], axis=1)
    found = found[np.argsort(-found[:, 3])]
    kept: list[int] = []
    for i, (x, y, r, _) in enumerate(found):
        if kept:
            other = found[kept]
            if np.any(np.hypot(other[:, 0] - x, other[:, 1] - y) < 0.8 * np.minimum(other[:, 2], r)):
                continue
        kept.append(i)
        if len(kept) >= config.max_disc_blobs:
            break
    blobs = found[kept]
    blobs[:, 3] = len(blobs) - np.arange(len(blobs))
    return blobs


#: The 32 pit centres in lattice coordinates (col, row), image order.
PIT_NODES: np.ndarray = np.array([(c, r) for r in range(4) for c in range(8)], np.float64)
#: The ring of lattice nodes one step beyond the pits (where a board has none).
_BEYOND = np.array([(c, r) for r in range(-1, 5) for c in range(-1, 9) if r in (-1, 4) or c in (-1, 8)], np.float64)


def lattice_points(lattice_to_image: np.ndarray, lattice: np.ndarray, gap: float = 0.0) -> np.ndarray:
    """Lattice points (col, row) in the image, the strip between rows 1 and 2 widened by ``gap`` rows.

    A board's two halves (rows 0-1 and 2-3) may stand further apart than its rows do; the
    lattice is then one homography of the plane in which row ``r`` lies at
    ``r + gap * clip(r - 1, 0, 1)``: the South half's rows and everything beyond them move by
    ``gap``, points between the halves are spread across the wider strip.
    """
    pts = _widened(lattice, gap)
    return np.asarray(cv2.perspectiveTransform(pts.reshape(-1, 1, 2), lattice_to_image).reshape(-1, 2))


def _widened(lattice: np.ndarray, gap: float) -> np.ndarray:
    """Lattice points (col, row) in the plane of a lattice whose halves stand ``gap`` rows further
    apart (:func:`lattice_points`)."""
    pts = np.array(lattice, np.float64).reshape(-1, 2)
    if gap:
        pts[:, 1] += gap * np.clip(pts[:, 1] - 1.0, 0.0, 1.0)
    return pts


def _lattice_from_blobs(blobs: np.ndarray, choose: Callable[[list[np.ndarray], float], np.ndarray] | None = None,
                        ) -> tuple[np.ndarray, bool] | None:
    """Homography lattice (col, row) -> image of the 4x8 pits among blobs, and whether columns run along u.

    When pits without circles leave the lattice's place on the board open (a hand over
    whole columns, a column in shade), ``choose(placements, pit radius)`` picks among the
    equally full placements. Returns (H, eight_along_first_axis) or None.
    """
    if len(blobs) < 16:
        return None
    best: tuple[int, list[np.ndarray], bool, float] | None = None
    # Pits share one size: try the most populated radius bands.
    bands = np.round(np.log(blobs[:, 2]) / np.log(1.15))
    values, counts = np.unique(bands, return_counts=True)
    for band in values[np.argsort(-counts)][:5]:
        r = float(1.15**band)
        group = blobs[(blobs[:, 2] >= r * 0.75) & (blobs[:, 2] <= r * 1.35)][:120]
        if len(group) < 16:
            continue
        pts = group[:, :2]
        d = np.linalg.norm(pts[:, None] - pts[None], axis=2)
        np.fill_diagonal(d, np.inf)
        nn = np.argsort(d, axis=1)[:, :4]
        vecs = (pts[nn] - pts[:, None]).reshape(-1, 2)
        lens = np.linalg.norm(vecs, axis=1)
        ok = (lens > 1.6 * r) & (lens < 6 * r)
        vecs, lens = vecs[ok], lens[ok]
        if len(vecs) < 16:
            continue
        angles = np.mod(np.arctan2(vecs[:, 1], vecs[:, 0]), np.pi)
        hist, edges = np.histogram(angles, bins=36, range=(0, np.pi))
        a1 = int(np.argmax(hist))
        mask = np.ones(36, bool)
        for off in range(-6, 7):
            mask[(a1 + off) % 36] = False
        a2 = int(np.argmax(np.where(mask, hist, -1)))
        axes = []
        for a in (a1, a2):
            centre = (edges[a] + edges[a + 1]) / 2
            sel = np.abs(np.angle(np.exp(1j * (angles - centre) * 2))) / 2 < np.pi / 36 * 1.5
            if sel.sum() < 4:
                break
            direction = np.array([np.cos(centre), np.sin(centre)])
            axes.append(direction * float(np.median(lens[sel])))
        if len(axes) < 2:
            continue
        coords = _assign_lattice(pts, axes[0], axes[1])
        if coords is None:
            continue
        ids = np.array(sorted(coords))
        cs = np.array([coords[i] for i in ids])
        for along_first in (True, False):
            span = (8, 4) if along_first else (4, 8)
            # The 8x4 window holding most points; it may reach past the points seen (a hand hides
            # whole columns). Equally full windows: the one ``judge`` likes best, else the one
            # centred on the points.
            windows = []
            lo, hi = cs.min(axis=0), cs.max(axis=0)
            middle = (lo + hi) / 2.0
            for i0 in range(min(lo[0], hi[0] - span[0] + 1), max(lo[0], hi[0] - span[0] + 1) + 1):
                for j0 in range(min(lo[1], hi[1] - span[1] + 1), max(lo[1], hi[1] - span[1] + 1) + 1):
                    inside = ((cs[:, 0] >= i0) & (cs[:, 0] < i0 + span[0]) & (cs[:, 1] >= j0)
                              & (cs[:, 1] < j0 + span[1]))
                    off_centre = abs(i0 + (span[0] - 1) / 2 - middle[0]) + abs(j0 + (span[1] - 1) / 2 - middle[1])
                    windows.append((int(inside.sum()), -off_centre, i0, j0, inside))
            n = max((wdw[0] for wdw in windows), default=0)
            if n < 14:
                continue
            full = sorted((wdw for wdw in windows if wdw[0] == n), key=lambda wdw: -wdw[1])
            choices = []
            for _, _, i0, j0, inside in full[: 1 if choose is None else 4]:
                src = (cs[inside] - [i0, j0]).astype(np.float32)
                if not along_first:
                    src = src[:, ::-1].copy()  # (col along 8, row along 4)
                h, _ = cv2.findHomography(src, pts[ids[inside]].astype(np.float32), cv2.RANSAC, 0.3 * r)
                if h is not None:
                    choices.append(h)
            if not choices:
                continue
            if best is None or n > best[0]:
                best = (n, choices, along_first, r)
    if best is None:
        return None
    h = best[1][0] if choose is None else choose(best[1], best[3])
    h = _polish(h, blobs)
    # A board's pits stop at its edge; a dotted table cloth's circles go on beyond the 4x8 block.
    beyond = cv2.perspectiveTransform(_BEYOND.reshape(-1, 1, 2), h).reshape(-1, 2)
    _, pitch, nearest, _ = _nearest_circles(h, blobs)
    pit_r = float(np.median(blobs[nearest, 2]))
    alike = blobs[(blobs[:, 2] > 0.75 * pit_r) & (blobs[:, 2] < 1.35 * pit_r)]
    if len(alike):
        dist = np.linalg.norm(beyond[:, None] - alike[None, :, :2], axis=2).min(axis=1)
        if np.mean(dist < 0.25 * pitch) > 0.3:
            return None
    return h, best[2]


def _polish(lattice_to_image: np.ndarray, blobs: np.ndarray) -> np.ndarray:
    """The lattice refitted on the circles nearest its 32 pits (twice: the first refit moves the pits)."""
    h = lattice_to_image
    for _ in range(2):
        _, _, nearest, close = _nearest_circles(h, blobs)
        if close.sum() < 12:
            break
        refit, _ = cv2.findHomography(PIT_NODES[close].astype(np.float32), blobs[nearest[close], :2].astype(np.float32), 0)
        if refit is None:
            break
        h = refit
    return h


def _fit_gap(lattice_to_image: np.ndarray, blobs: np.ndarray, config: LocaliseConfig) -> tuple[np.ndarray, float]:
    """The lattice refitted with the strip between its halves as wide as the circles say, and that gap
    (rows; :func:`lattice_points`), or the lattice as it was and 0 when no gap of at least
    ``min_gap_of_pitch`` fits them better.

    Evenly spaced rows fitted to such a board put its inner rows three tenths of the gap, and
    its outer rows a tenth, off their pits (and the outline's sides follow them). Every gap from
    0 to ``max_gap_of_pitch`` (a fiftieth of a row at a time) is fitted to the circles nearest
    the pits (each residual capped at a fifth of a pitch, so a circle on a seed costs no more
    than a missing one), the cheapest taken, then once more on the circles nearest that
    lattice's pits. Both halves must show circles. Measured in docs/vision.md ("Boards with a
    gap between their halves").
    """
    h, gap = lattice_to_image, 0.0
    gaps = np.arange(0.0, config.max_gap_of_pitch + 1e-9, 0.02)
    for _ in range(2):  # the second time on the circles nearest the gapped lattice's pits
        _, pitch, nearest, close = _nearest_circles(h, blobs, gap)
        if close[:16].sum() < 6 or close[16:].sum() < 6:  # rows 0-1 and 2-3 (PIT_NODES order)
            break
        src0 = PIT_NODES[close]
        dst = blobs[nearest[close], :2].astype(np.float64)
        cap = (0.2 * pitch) ** 2
        fits = []
        for g in gaps:
            src = _widened(src0, float(g))
            refit, _ = cv2.findHomography(src.astype(np.float32), dst.astype(np.float32), 0)
            if refit is None:
                continue
            res = np.sum((cv2.perspectiveTransform(src.reshape(-1, 1, 2), refit).reshape(-1, 2) - dst) ** 2, axis=1)
            fits.append((float(np.minimum(res, cap).sum()), float(g), refit))
        if not fits:
            break
        _, gap, h = min(fits, key=lambda fit: fit[0])
    if gap < config.min_gap_of_pitch:
        return lattice_to_image, 0.0
    return h, gap


def _row_pitch(centres: np.ndarray) -> float:
    """The median distance between neighbouring pits along the rows of 32 pit centres (lattice order)."""
    return float(np.median(np.linalg.norm(np.diff(np.asarray(centres).reshape(4, 8, 2), axis=1), axis=2)))


def _nearest_circles(lattice_to_image: np.ndarray, blobs: np.ndarray,
                     gap: float = 0.0) -> tuple[np.ndarray, float, np.ndarray, np.ndarray]:
    """The lattice's 32 pit centres in the image, their pitch along the rows (median), the
    nearest circle to each pit (index into ``blobs``), and whether it lies within 0.3 pitch."""
    centres = lattice_points(lattice_to_image, PIT_NODES, gap)
    pitch = _row_pitch(centres)
    dist = np.linalg.norm(centres[:, None] - blobs[None, :, :2], axis=2)
    nearest = np.argmin(dist, axis=1)
    return centres, pitch, nearest, dist[np.arange(len(centres)), nearest] < 0.3 * pitch


def _circled_pits(lattice_to_image: np.ndarray, blobs: np.ndarray) -> int:
    """How many of the lattice's 32 pits have a circle within 0.3 pitch."""
    return int(_nearest_circles(lattice_to_image, blobs)[3].sum())


def _pit_radius(lattice_to_image: np.ndarray, blobs: np.ndarray) -> float:
    """Median radius of the circles nearest the lattice's 32 pits."""
    return float(np.median(blobs[_nearest_circles(lattice_to_image, blobs)[2], 2]))


def _assign_lattice(pts: np.ndarray, u: np.ndarray, v: np.ndarray) -> dict[int, tuple[int, int]] | None:
    """Integer lattice coordinates of points reachable by steps of about u, v (best of a few start points)."""
    best: dict[int, tuple[int, int]] | None = None
    for start in np.argsort(np.linalg.norm(pts - pts.mean(axis=0), axis=1))[:6]:
        coords = _walk_lattice(pts, u, v, int(start))
        if best is None or len(coords) > len(best):
            best = coords
        if len(best) >= 0.9 * len(pts):
            break  # nearly every point reached: other starts cannot do much better
    return best if best is not None and len(best) >= 14 else None


def _walk_lattice(pts: np.ndarray, u: np.ndarray, v: np.ndarray, start: int) -> dict[int, tuple[int, int]]:
    coords = {start: (0, 0)}
    step = {start: (u, v)}
    queue = [start]
    tol = 0.3 * min(np.linalg.norm(u), np.linalg.norm(v))
    while queue:
        i = queue.pop()
        ui, vi = step[i]
        moves = ((1, 0, ui), (-1, 0, -ui), (0, 1, vi), (0, -1, -vi))
        # One step, or two when a pit is hidden (a hand, a heap the circle finder missed): the
        # distances to all eight targets at once.
        targets = np.array([pts[i] + n * vec for _, _, vec in moves for n in (1, 2)])
        dists = np.linalg.norm(pts[None] - targets[:, None], axis=2)
        nearest = np.argmin(dists, axis=1)
        for m, (di, dj, _) in enumerate(moves):
            for n in (1, 2):
                j = int(nearest[2 * m + n - 1])
                if dists[2 * m + n - 1, j] > tol:
                    continue
                if j not in coords:
                    coords[j] = (coords[i][0] + n * di, coords[i][1] + n * dj)
                    # Follow perspective: the next step along this axis is the one just measured.
                    measured = (pts[j] - pts[i]) / n
                    step[j] = (measured * np.sign(di) if di else ui, measured * np.sign(dj) if dj else vi)
                    queue.append(j)
                break
    return coords


#: The lattice's sides (from, to in (col, row) pit units) and their outward directions: top, right, bottom, left.
_SIDES = ((((-0.5, -0.5), (7.5, -0.5)), (0.0, -1.0)), (((7.5, -0.5), (7.5, 3.5)), (1.0, 0.0)),
          (((7.5, 3.5), (-0.5, 3.5)), (0.0, 1.0)), (((-0.5, 3.5), (-0.5, -0.5)), (-1.0, 0.0)))


@dataclass(frozen=True, eq=False)
class _EdgeImages:
    """What the board-edge search samples, computed once per image: gradients and blurred Lab colour."""

    gx: np.ndarray
    gy: np.ndarray
    lab: np.ndarray

    @classmethod
    def of(cls, small: np.ndarray, gray: np.ndarray) -> _EdgeImages:
        gx, gy = image_gradients(gray)
        lab = cv2.cvtColor(cv2.GaussianBlur(small, (5, 5), 0), cv2.COLOR_BGR2LAB).astype(np.float32)
        return cls(gx, gy, lab)


def _board_edges(images: _EdgeImages, lattice_to_image: np.ndarray, config: LocaliseConfig,
                 gap: float = 0.0) -> list[float]:
    """How far (in pitches) beyond the pit cells' outline each side's top-face edge lies: top, right, bottom, left.

    Along each side's outward direction the candidate edges are the peaks of the image
    gradient across the side. The board's top-face edge is the innermost one with the
    board's own surface (sampled between the pits) on its inside and something else
    on its outside: a grain line has board on both sides, the side face's lower edge and
    the board's shadow have no board on their inside.
    """
    gx, gy, lab = images.gx, images.gy, images.lab
    h, w = gx.shape

    def sample(lat: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        pts = lattice_points(lattice_to_image, lat, gap)
        inside = (pts[:, 0] >= 0) & (pts[:, 0] < w) & (pts[:, 1] >= 0) & (pts[:, 1] < h)
        xs = np.clip(np.rint(pts[:, 0]).astype(int), 0, w - 1)
        ys = np.clip(np.rint(pts[:, 1]).astype(int), 0, h - 1)
        return pts, np.stack([xs, ys], axis=1), inside

    reference = _surface_colour(lab, lattice_to_image, gap)
    like_board = config.min_surface_contrast

    step = config.edge_step_of_pitch
    offsets = np.arange(-3 * step, config.max_margin_of_pitch + 1e-9, step)
    ts = np.linspace(0.1, 0.9, 30)
    sides = []
    for (a, b), outward in _SIDES:
        out, a_, b_ = np.array(outward), np.array(a), np.array(b)
        lat = a_[None, None] + ts[:, None, None] * (b_ - a_)[None, None] + offsets[None, :, None] * out[None, None]
        pts, idx, inside = sample(lat.reshape(-1, 2))
        pts, idx, inside = pts.reshape(len(ts), -1, 2), idx.reshape(len(ts), -1, 2), inside.reshape(len(ts), -1)
        nvec = np.gradient(pts, axis=1)
        nvec /= np.linalg.norm(nvec, axis=2, keepdims=True) + 1e-9
        g = np.abs(gx[idx[..., 1], idx[..., 0]] * nvec[..., 0] + gy[idx[..., 1], idx[..., 0]] * nvec[..., 1]) * inside
        strength = np.median(g, axis=0)
        # The median colour along the side: robust to seeds, grain and a few stray pixels.
        colours = np.where(inside[..., None], lab[idx[..., 1], idx[..., 0]], np.nan)
        seen = inside.any(axis=0)
        colour = np.zeros((len(offsets), 3))
        colour[seen] = np.nanmedian(colours[:, seen], axis=0)
        unlike = np.where(seen, (np.linalg.norm(colour - reference, axis=1) > like_board).astype(float), 1.0)
        peaks = [k for k in range(3, len(offsets) - 1)
                 if strength[k] >= strength[k - 1] and strength[k] >= strength[k + 1]
                 and strength[k] >= config.min_board_edge_strength]
        chosen = None
        for k in peaks:
            inner = unlike[max(0, k - 3) : k - 1].mean()
            outer = unlike[k + 2 : k + 5].mean() if k + 2 < len(offsets) else 1.0
            if inner <= config.max_unlike_inside and outer >= config.min_unlike_outside:
                chosen = k
                break
        if chosen is None:
            # No edge with board inside and something else outside: the strongest edge.
            chosen = int(np.argmax(np.where(offsets >= 0, strength, -1)))
        sides.append(float(max(offsets[chosen], 0.0)))
    return sides


def _board_outline(images: _EdgeImages, lattice_to_image: np.ndarray, config: LocaliseConfig,
                   gap: float = 0.0) -> np.ndarray:
    """The board's top-face corners (lattice order: top-left, top-right, bottom-right, bottom-left of the lattice).

    Each side is a line fitted (RANSAC) through edge points found on profiles running
    outward from the pit lattice, with the board's surface colour inside and another
    colour outside (see :func:`_edge_candidates`); opposite sides are chosen together
    (:func:`_choose_edges`); when their margins then disagree, or a side has no edge, both
    are looked at again with the colour's own gradient beside the grey level's (a side face
    or shadow as light as the top face but of another hue shows no grey-level edge at the
    arris), which is taken only if it leaves alike margins: searched by colour everywhere,
    the table's pattern gave edges far out (on 180 renders, seeds 3100001+, 46 outlines
    better and 43 worse). Chosen on those renders and the sample stills (corners within 1% of
    the diagonal 170 -> 177 of 227 outlines, 12 better, none worse); checked on 2 x 180 renders
    nobody had looked at (3200001+, 3300001+): 130 -> 131 of 175 and 127 -> 131 of 174, 16
    better, 5 worse (by at most 0.7% of the diagonal). A wide-angle lens bows the sides: the
    lines are looked for under the distortion that lines up the most edge points
    (:func:`_lens_lining_up`; a straight line meets a bowed side along part of it only), one
    radial distortion shared by all sides is then fitted to the chosen lines' points so that
    they come out straight (:func:`_plumb_line_lens`), and the corners are where the
    straightened sides meet, distorted back. Looking for the lines under a distortion (since
    2026-11-30, chosen on renders 3100001+ and the stills): within 1% 177 -> 182 of 227, 10
    better, 4 worse; on 3200001+ 131 -> 131 (9 better, 2 worse), on 3300001+ 131 -> 133 (8
    better, 1 worse); on the three sets, boards with the strongest barrel distortion
    (k1 < -0.15) 64 -> 68% within 1%, against 89% for boards with hardly any. A side
    without enough edge points falls back to the lattice-parallel line of
    :func:`_board_edges`, unless that lies far from the
    opposite side's edge line (``max_fallback_margin_difference_of_pitch``): then it
    takes the opposite side's margin. Boards are symmetric, and what a side without an
    edge of its own shows instead is a shadow, the side face, a hand or the table.
    Chosen on 128 boards (sample_images, renders 555001+): 9 outlines off by 2.2-9.7% of
    the diagonal came to 0.5-2.1%, none got worse. Checked on 81 renders (556001+): three
    off by 3.8-16.6% came to 1.6-2.3%, one went from 0.9% to 3.5% (the opposite side's
    line was not the board's edge); on the localisation scan 1600001+ (150 renders): five
    better (2.4-8.5% -> 0.4-1.4%; 16.4 -> 13.3%), one 3.7 -> 3.9%. Mirroring whenever a
    side had no line broke good outlines: true margins in lattice units differ by up to
    ~0.25 pitch between opposite sides (pit centres seen at a tilt).
    """
    gx, gy, lab = images.gx, images.gy, images.lab
    h, w = gx.shape
    reference = _surface_colour(lab, lattice_to_image, gap)

    def side_points(k: int, *, by_colour: bool = False, reference_at: tuple[float, float] = (-0.04, 0.02),
                    within: tuple[float, float] | None = None) -> _EdgePoints:
        (a, b), outward = _SIDES[k]
        return _edge_points(gx, gy, lab, reference, lattice_to_image, np.array(a), np.array(b), np.array(outward),
                            config, by_colour=by_colour, gap=gap, reference_at=reference_at, within=within)

    points = [side_points(k) for k in range(4)]
    bowed = _lens_lining_up(points, (w, h), config)
    candidates = [_edge_candidates(found, bowed, config) for found in points]
    chosen: list[_EdgeCandidate | None] = [None] * 4
    for first, second in ((0, 2), (1, 3)):
        chosen[first], chosen[second] = _choose_edges(candidates[first], candidates[second], config)
        if not _alike(chosen[first], chosen[second], config):
            # Margins unlike on opposite sides: one edge may be a change of hue alone (a side face or
            # a shadow as light as the board's top, but of another colour), which the grey-level
            # gradient misses. Look again with the colour's own gradient; taken only if the margins
            # then agree, as searching everywhere by colour also finds the table's pattern.
            again = [_edge_candidates(side_points(k, by_colour=True), bowed, config) for k in (first, second)]
            by_colour = _choose_edges(again[0], again[1], config)
            if _alike(*by_colour, config):
                chosen[first], chosen[second] = by_colour

    def side_colour(k: int, near: float, far: float) -> np.ndarray:
        """The median Lab colour beyond side ``k`` between offsets ``near`` and ``far`` (pitches)."""
        (a, b), outward = _SIDES[k]
        pts = _profile_points(lattice_to_image, np.array(a), np.array(b), np.array(outward), np.linspace(near, far, 4),
                              config.profiles_per_side, gap).reshape(-1, 2).astype(np.float32)
        seen = (pts[:, 0] >= 0) & (pts[:, 0] < w - 1) & (pts[:, 1] >= 0) & (pts[:, 1] < h - 1)
        if not seen.any():
            return np.full(3, np.nan)
        return np.median(cv2.remap(lab, pts[seen, 0:1], pts[seen, 1:2], cv2.INTER_LINEAR).reshape(-1, 3), axis=0)

    chosen = _past_a_band(chosen, side_points, side_colour, bowed, config)
    fallback: list[float] | None = None
    lines: list[_Edge] = []
    for k, ((a, b), outward) in enumerate(_SIDES):
        pick = chosen[k]
        line = None if pick is None else pick.edge
        if line is None:
            if fallback is None:
                fallback = _board_edges(images, lattice_to_image, config, gap)
            off = fallback[k]
            opposite = chosen[(k + 2) % 4]
            if (opposite is not None
                    and abs(off - opposite.depth_of_pitch) > config.max_fallback_margin_difference_of_pitch):
                off = opposite.depth_of_pitch
            ends = np.array([np.array(a) + off * np.array(outward), np.array(b) + off * np.array(outward)])
            img = lattice_points(lattice_to_image, ends, gap)
            line = _Edge.line(img[0], img[1])
        lines.append(line)
    lens = _plumb_line_lens([line.points for line in lines], (w, h), config)
    corners = _corners_of(lines, lens)
    if corners is None:
        return _outline_from_offsets(lattice_to_image, _board_edges(images, lattice_to_image, config, gap), gap)
    return corners


def _past_a_band(chosen: list[_EdgeCandidate | None], side_points: Callable[..., _EdgePoints],
                 side_colour: Callable[[int, float, float], np.ndarray], lens: _Lens,
                 config: LocaliseConfig) -> list[_EdgeCandidate | None]:
    """The board's outer edges when a band runs along at least three of its sides, else ``chosen``.

    A bevel or chamfer along the board's edge is a band of another shade between the top face
    and the table, with a straight edge on both sides; the innermost edge chosen on a side is
    then the band's inner one. Beyond each chosen edge an edge is looked for with the band's
    colour inside (the colour just outside the chosen edge) and another outside, within
    ``band_width_of_pitch``, and the band's hue (Lab a, b) nearer the top face's than the hue
    beyond it is (a bevel is wood; a shadow on the table, or the table between the board and a
    row of a print's dots, has the table's hue). When three or four sides show one, of widths within
    ``band_width_spread_of_pitch`` of their median, those sides take it: a side face seen at a
    slant, a cast shadow or a hand shows beyond one side or two adjacent ones, not three. A
    fourth side keeps its edge (often the outer one already, the band's inner edge too faint
    there) unless it then leaves unlike opposite margins and an edge beyond it does not. The
    result must leave both pairs of opposite margins alike."""
    sides = [c for c in chosen if c is not None]
    if len(sides) < 4:
        return chosen
    lo, hi = config.band_width_of_pitch
    beyond: list[list[_EdgeCandidate]] = []
    for k, inner in enumerate(sides):
        depth = inner.depth_of_pitch
        found = side_points(k, reference_at=(depth + 0.01, depth + lo), within=(depth + lo, depth + hi))
        top = side_colour(k, depth - 0.06, depth - 0.01)[1:]
        band = side_colour(k, depth + 0.01, depth + lo)[1:]
        beyond.append([c for c in _edge_candidates(found, lens, config) if c.support >= config.edge_support_keep
                       and np.linalg.norm(band - top) < np.linalg.norm(
                           band - side_colour(k, c.depth_of_pitch + 0.02, c.depth_of_pitch + 0.08)[1:])])
    widths = {k: b[0].depth_of_pitch - c.depth_of_pitch for k, (b, c) in enumerate(zip(beyond, sides, strict=True)) if b}
    if len(widths) < 3:
        return chosen
    middle = float(np.median(list(widths.values())))
    banded = [k for k, w in widths.items() if abs(w - middle) <= config.band_width_spread_of_pitch / 2]
    if len(banded) < 3:
        return chosen
    outer: list[_EdgeCandidate | None] = [beyond[k][0] if k in banded else sides[k] for k in range(4)]
    for k in range(4):
        opposite = outer[(k + 2) % 4]
        if k not in banded and not _alike(outer[k], opposite, config):
            alike = [c for c in beyond[k] if _alike(c, opposite, config)]
            if alike:
                outer[k] = alike[0]
    if not (_alike(outer[0], outer[2], config) and _alike(outer[1], outer[3], config)):
        return chosen
    return outer


def _outline_from_offsets(lattice_to_image: np.ndarray, sides: list[float], gap: float = 0.0) -> np.ndarray:
    top, right, bottom, left = sides
    corners_lat = np.array([[-0.5 - left, -0.5 - top], [7.5 + right, -0.5 - top], [7.5 + right, 3.5 + bottom],
                            [-0.5 - left, 3.5 + bottom]], np.float64)
    return lattice_points(lattice_to_image, corners_lat, gap)


#: The lattice points between four pits: the board's surface.
_BETWEEN_PITS = np.array([(c + 0.5, r + 0.5) for r in range(3) for c in range(7)], np.float64)


def _surface_colour(lab: np.ndarray, lattice_to_image: np.ndarray, gap: float = 0.0,
                    between: np.ndarray = _BETWEEN_PITS) -> np.ndarray:
    """Median Lab colour at the lattice points ``between`` (default: between four pits, the board's surface)."""
    pts = lattice_points(lattice_to_image, between, gap)
    h, w = lab.shape[:2]
    xs = np.clip(np.rint(pts[:, 0]).astype(int), 0, w - 1)
    ys = np.clip(np.rint(pts[:, 1]).astype(int), 0, h - 1)
    return np.asarray(np.median(lab[ys, xs], axis=0))


def _profile_points(lattice_to_image: np.ndarray, a: np.ndarray, b: np.ndarray, outward: np.ndarray,
                    offsets: np.ndarray, profiles: int, gap: float = 0.0) -> np.ndarray:
    """Image points (profiles, offsets, 2) on ``profiles`` profiles running outward across one side of
    the lattice (from ``a`` to ``b``, its ends left out), ``offsets`` pitches beyond the outer pit cells."""
    ts = np.linspace(0.06, 0.94, profiles)
    lat = a[None, None] + ts[:, None, None] * (b - a)[None, None] + offsets[None, :, None] * outward[None, None]
    return lattice_points(lattice_to_image, lat, gap).reshape(len(ts), len(offsets), 2)


def _edge_points(gx: np.ndarray, gy: np.ndarray, lab: np.ndarray, reference: np.ndarray, lattice_to_image: np.ndarray,
                 a: np.ndarray, b: np.ndarray, outward: np.ndarray, config: LocaliseConfig, *,
                 by_colour: bool = False, gap: float = 0.0, reference_at: tuple[float, float] = (-0.04, 0.02),
                 within: tuple[float, float] | None = None) -> _EdgePoints:
    """The points on one side's profiles where an edge has the surface's colour inside and another
    colour outside: peaks of the grey level's gradient across the side, or with ``by_colour`` of
    the larger of it and the Lab colour's gradient. The surface's colour is the one seen at
    ``reference_at`` (offsets beyond the outer pit cells, in pitches: just outside them unless
    said otherwise); with ``within`` only edges at those offsets count."""
    h, w = gx.shape
    step = config.profile_step_of_pitch
    offsets = np.arange(-0.15, config.max_margin_of_pitch + 1e-9, step)
    pts = _profile_points(lattice_to_image, a, b, outward, offsets, config.profiles_per_side, gap)
    normal = np.gradient(pts, axis=1)
    normal /= np.linalg.norm(normal, axis=2, keepdims=True) + 1e-9
    mx, my = pts[..., 0].astype(np.float32), pts[..., 1].astype(np.float32)
    inside = (pts[..., 0] >= 0) & (pts[..., 0] < w - 1) & (pts[..., 1] >= 0) & (pts[..., 1] < h - 1)
    g = np.abs(cv2.remap(gx, mx, my, cv2.INTER_LINEAR) * normal[..., 0]
               + cv2.remap(gy, mx, my, cv2.INTER_LINEAR) * normal[..., 1]) * inside
    colour = cv2.remap(lab, mx, my, cv2.INTER_LINEAR)
    if by_colour:
        # The colour's gradient along the profile, on the Sobel's scale (8 times the change per px).
        spacing = np.linalg.norm(np.gradient(pts, axis=1), axis=2)
        g = np.maximum(g, 8.0 * np.linalg.norm(np.gradient(colour, axis=1), axis=2) / np.maximum(spacing, 1e-6) * inside)
    # The surface next to this side (light falls off across a board): just outside the outer pit cells.
    margin = (offsets >= reference_at[0]) & (offsets <= reference_at[1])
    local = colour[:, margin][inside[:, margin]]
    if len(local):
        reference = np.median(local, axis=0)
    dist = np.linalg.norm(colour - reference, axis=2)
    dist = np.where(inside, dist, np.inf)
    n_in = max(2, round(config.colour_window_of_pitch / step))
    gap = max(1, round(0.02 / step))
    # The colour distance's median over every window of n_in offsets along each profile (window
    # s starts at offset s; the last ones are cut short by the profile's end), all at once.
    padded = np.concatenate([dist, np.full((len(pts), n_in - 1), np.nan)], axis=1)
    window_median = np.nanmedian(sliding_window_view(padded, n_in, axis=1), axis=2)
    # Every edge point with the surface's colour inside and another colour outside, per profile.
    found: list[tuple[int, int, np.ndarray]] = []  # (profile, offset index, image point)
    for i in range(len(pts)):
        gi = g[i]
        floor = max(config.min_board_edge_strength, 0.25 * float(gi.max()))
        for k in range(n_in + gap, len(offsets) - 1 - gap):
            if not (gi[k] >= floor and gi[k] >= gi[k - 1] and gi[k] > gi[k + 1]):
                continue
            if within is not None and not within[0] <= offsets[k] <= within[1]:
                continue
            inner = float(window_median[i, k - gap - n_in + 1])
            outer = float(window_median[i, k + gap])
            if inner <= config.min_surface_contrast and outer - inner >= config.min_edge_colour_step:
                # Sub-sample peak position (parabola through the peak and its neighbours).
                denom = gi[k - 1] - 2 * gi[k] + gi[k + 1]
                frac = 0.5 * (gi[k - 1] - gi[k + 1]) / denom if denom < 0 else 0.0
                found.append((i, k, pts[i, k] + np.clip(frac, -0.5, 0.5) * (pts[i, k + 1] - pts[i, k - 1]) / 2))
    k_mid = int(np.median([f[1] for f in found])) if found else len(offsets) // 2
    return _EdgePoints(np.array([f[2] for f in found], np.float64).reshape(-1, 2), np.array([f[0] for f in found], int),
                       offsets[np.array([f[1] for f in found], int)], np.array([pts[0, k_mid], pts[-1, k_mid]]), len(pts))


def _edge_candidates(found: _EdgePoints, lens: _Lens, config: LocaliseConfig) -> list[_EdgeCandidate]:
    """Candidate top-face edges of one side (edge points in image px and their line), innermost first;
    empty when too few edge points agree. Lines are straight once ``lens`` undoes the distortion."""
    if len(found.points) < config.min_edge_points:
        return []
    profile, raw = found.profile, found.points
    edge = lens.undistort(raw)
    # Line hypotheses through pairs of points on different profiles, nearly parallel to the
    # lattice's own prediction of the side; support = number of profiles with a point on it.
    # The top face's edge is straight along the whole side; grain lines and seeds are not.
    i_idx, j_idx = np.triu_indices(len(edge), 1)
    keep = profile[i_idx] != profile[j_idx]
    i_idx, j_idx = i_idx[keep], j_idx[keep]
    d = edge[j_idx] - edge[i_idx]
    norm = np.linalg.norm(d, axis=1)
    predicted = found.direction(lens)
    cos = np.abs(d @ predicted) / np.maximum(norm, 1e-9)
    keep = (norm > 1e-6) & (cos >= np.cos(np.deg2rad(config.max_edge_turn_deg)))
    if not keep.any():
        return []
    i_idx, d, norm = i_idx[keep], d[keep], norm[keep]
    normals = np.stack([-d[:, 1], d[:, 0]], axis=1) / norm[:, None]
    near = np.abs(np.einsum("mk,pk->mp", normals, edge) - np.sum(normals * edge[i_idx], axis=1)[:, None])
    inliers = near < config.edge_line_tolerance_px
    onehot = np.zeros((len(edge), found.profiles))
    onehot[np.arange(len(edge)), profile] = 1.0
    support = ((inliers.astype(np.float64) @ onehot) > 0).sum(axis=1)
    if support.max() < max(config.min_edge_points, config.min_edge_inlier_frac * found.profiles):
        return []
    # Every distinct supported line is a candidate; the caller prefers, among the well-supported
    # ones, the innermost (the side face's edges lie further out).
    counted = inliers.sum(axis=1)
    depth = (inliers.astype(np.float64) @ found.depth_of_pitch) / np.maximum(counted, 1)
    candidates: list[_EdgeCandidate] = []
    for m in np.argsort(-support, kind="stable"):
        if support[m] < config.edge_candidate_keep * support.max():
            break
        if any(abs(depth[m] - c.depth_of_pitch) < config.candidate_separation_of_pitch for c in candidates):
            continue
        candidates.append(_EdgeCandidate(_Edge.through(raw[inliers[m]]), float(depth[m]),
                                         float(support[m] / support.max())))
    return sorted(candidates, key=lambda c: c.depth_of_pitch)


@dataclass(frozen=True, eq=False)
class _EdgePoints:
    """The edge points seen on one side's profiles (image px), which profile and how far out each is."""

    points: np.ndarray  # (n, 2)
    profile: np.ndarray  # (n,) index of the profile each point lies on
    depth_of_pitch: np.ndarray  # (n,) beyond the outer pit cells, in pit pitches
    ends: np.ndarray  # (2, 2) the lattice's prediction of the side (image px): its first and last profile
    profiles: int  # profiles looked along

    def direction(self, lens: _Lens) -> np.ndarray:
        """The lattice's predicted direction of the side (unit vector) once ``lens`` undoes the distortion."""
        ends = lens.undistort(self.ends)
        d = ends[1] - ends[0]
        return np.asarray(d / max(float(np.linalg.norm(d)), 1e-9))


def _line_support(found: _EdgePoints, lens: _Lens, config: LocaliseConfig) -> int:
    """The most edge points on one straight line near the lattice's direction of the side, once ``lens``
    undoes the distortion (a cheap stand-in for :func:`_edge_candidates`'s line search)."""
    if len(found.points) < 2:
        return len(found.points)
    u = lens.undistort(found.points)
    d = found.direction(lens)
    base = np.arctan2(d[1], d[0])
    turns = base + np.deg2rad(np.linspace(-config.max_edge_turn_deg, config.max_edge_turn_deg, 33))
    normals = np.stack([-np.sin(turns), np.cos(turns)], axis=1)
    across = np.sort(normals @ u.T, axis=1)  # (turns, points)
    within = (across[:, None, :] >= across[:, :, None]) & (across[:, None, :] <= across[:, :, None]
                                                           + 2.0 * config.edge_line_tolerance_px)
    return int(within.sum(axis=2).max())


def _lens_lining_up(sides: list[_EdgePoints], image_size: tuple[int, int], config: LocaliseConfig) -> _Lens:
    """The radial distortion under which the most edge points of the four sides lie on straight lines.

    A wide-angle lens bows the board's sides: a straight line then meets a side only along
    part of it, and the plumb-line fit (:func:`_plumb_line_lens`), fed those points, finds
    them straight already. So the sides' lines are looked for under a few distortions first;
    none unless one lines up clearly more points (``min_lens_gain_points``)."""
    w, h = image_size
    none = _Lens((w / 2.0, h / 2.0), float(max(w, h)))
    ks = np.linspace(-config.max_lens_k, config.max_lens_k, 2 * config.lens_search_steps + 1)
    scores = np.array([sum(_line_support(side, replace(none, k=float(k)), config) for side in sides) for k in ks])
    best = int(np.argmax(scores - 1e-3 * np.abs(ks)))  # ties: the smaller distortion
    if scores[best] < scores[len(ks) // 2] + config.min_lens_gain_points:
        return none
    return replace(none, k=float(ks[best]))


@dataclass(frozen=True, eq=False)
class _EdgeCandidate:
    """A straight edge beyond one side of the pit lattice, how far out, how well supported."""

    edge: _Edge
    depth_of_pitch: float  # mean distance beyond the outer pit cells, in pit pitches
    support: float  # share of the side's best-supported line's support


def _choose_edges(first: list[_EdgeCandidate], second: list[_EdgeCandidate], config: LocaliseConfig
                  ) -> tuple[_EdgeCandidate | None, _EdgeCandidate | None]:
    """The top-face edges of two opposite sides: on each the innermost well-supported line, unless
    their margins differ a lot and other supported lines give both sides alike margins (a board's
    margins are usually alike; a grain line, a side face or a shadow shows beyond one side only)."""

    def innermost(cands: list[_EdgeCandidate]) -> _EdgeCandidate | None:
        strong = [c for c in cands if c.support >= config.edge_support_keep]
        return strong[0] if strong else None

    a, b = innermost(first), innermost(second)
    if _alike(a, b, config) is not False:
        return a, b
    alike = [(abs(x.depth_of_pitch - y.depth_of_pitch), x.depth_of_pitch + y.depth_of_pitch, x, y)
             for x in first for y in second if _alike(x, y, config)]
    if not alike:
        return a, b
    _, _, x, y = min(alike, key=lambda t: (round(t[0] / config.max_margin_difference_of_pitch, 1), t[1]))
    return x, y


def _alike(first: _EdgeCandidate | None, second: _EdgeCandidate | None, config: LocaliseConfig) -> bool | None:
    """Whether two opposite sides' edges leave alike margins (None when a side has no edge)."""
    if first is None or second is None:
        return None
    return abs(first.depth_of_pitch - second.depth_of_pitch) <= config.max_margin_difference_of_pitch


@dataclass(frozen=True, eq=False)
class _Edge:
    """One side of the board's top face: the points seen on it (image px), or only a line when none were."""

    origin: np.ndarray
    direction: np.ndarray
    points: np.ndarray = field(default_factory=lambda: np.zeros((0, 2)))

    @classmethod
    def line(cls, a: np.ndarray, b: np.ndarray) -> _Edge:
        """The line through two points (no edge points seen)."""
        d = np.asarray(b, np.float64) - np.asarray(a, np.float64)
        return cls(np.asarray(a, np.float64), d / max(float(np.linalg.norm(d)), 1e-12))

    @classmethod
    def through(cls, points: np.ndarray) -> _Edge:
        """The least-squares line through edge points."""
        pts = np.asarray(points, np.float64)
        vx, vy, x0, y0 = cv2.fitLine(pts.astype(np.float32), cv2.DIST_L2, 0, 0.01, 0.01).ravel()
        return cls(np.array([x0, y0], np.float64), np.array([vx, vy], np.float64), pts)


@dataclass(frozen=True)
class _Lens:
    """Radial distortion about the image centre, one-parameter division model:
    undistorted = centre + (p - centre) / (1 + k r^2), r = |p - centre| / scale_px."""

    centre: tuple[float, float]
    scale_px: float
    k: float = 0.0

    def undistort(self, pts: np.ndarray) -> np.ndarray:
        if self.k == 0.0:
            return np.asarray(pts, np.float64)
        d = np.asarray(pts, np.float64) - self.centre
        r2 = np.sum(d * d, axis=-1, keepdims=True) / self.scale_px**2
        return np.asarray(self.centre + d / (1.0 + self.k * r2))

    def distort(self, pts: np.ndarray) -> np.ndarray:
        if self.k == 0.0:
            return np.asarray(pts, np.float64)
        u = np.asarray(pts, np.float64) - self.centre
        d = u.copy()
        for _ in range(20):  # fixed point of d = u (1 + k |d|^2)
            d = u * (1.0 + self.k * np.sum(d * d, axis=-1, keepdims=True) / self.scale_px**2)
        return np.asarray(self.centre + d)


def _straightness(edges: list[np.ndarray], lens: _Lens) -> float:
    """RMS distance (px) of each side's points from its own best line once undistorted by ``lens``."""
    total, n = 0.0, 0
    for pts in edges:
        u = lens.undistort(pts)
        centred = u - u.mean(axis=0)
        # The smallest singular value measures the spread across the best line.
        smallest = float(np.linalg.svd(centred, compute_uv=False)[-1])
        total += smallest**2
        n += len(u)
    return float(np.sqrt(total / max(n, 1)))


def _plumb_line_lens(edges: list[np.ndarray], image_size: tuple[int, int], config: LocaliseConfig) -> _Lens:
    """The lens that makes the board's sides straight (the plumb-line method), or no distortion.

    A wide-angle lens bows the board's straight sides; one radial coefficient shared by
    all sides is fitted to their edge points. It is kept only when it straightens
    them clearly (noise and a rounded corner do not pass for a lens).
    """
    w, h = image_size
    none = _Lens((w / 2.0, h / 2.0), float(max(w, h)))
    edges = [e for e in edges if len(e) >= config.min_plumb_points]
    if len(edges) < config.min_plumb_sides:
        return none
    base = _straightness(edges, none)
    ks = np.linspace(-config.max_lens_k, config.max_lens_k, 41)
    rms = np.array([_straightness(edges, replace(none, k=float(k))) for k in ks])
    i = int(np.argmin(rms))
    k = float(ks[i])
    if 0 < i < len(ks) - 1:  # parabola through the best and its neighbours
        denom = rms[i - 1] - 2 * rms[i] + rms[i + 1]
        if denom > 0:
            k += float(0.5 * (rms[i - 1] - rms[i + 1]) / denom) * float(ks[1] - ks[0])
    best = _straightness(edges, replace(none, k=k))
    if base - best < config.min_straightening_px or best > config.max_straightened_ratio * base:
        return none
    return replace(none, k=k)


def _corners_of(sides: list[_Edge], lens: _Lens) -> np.ndarray | None:
    """Where consecutive sides meet: lines fitted to the undistorted edge points, corners distorted back."""
    lines = []
    for side in sides:
        if len(side.points) >= 2:
            straight = _Edge.through(lens.undistort(side.points))
            lines.append((straight.origin, straight.direction))
        else:
            straight = _Edge.line(*lens.undistort(np.array([side.origin, side.origin + 50.0 * side.direction])))
            lines.append((straight.origin, straight.direction))
    corners = []
    for k in range(4):
        point = _intersect(lines[(k - 1) % 4], lines[k])
        if point is None:
            return None
        corners.append(point)
    return lens.distort(np.array(corners, np.float64))


class PitLattice(NamedTuple):
    """The 4x8 pit lattice found in an image (image px)."""

    corners: np.ndarray  # of the board's top face, TL, TR, BR, BL
    centres: np.ndarray  # the 32 pit centres, the lattice's own order (it may run either way)
    radius: float  # median radius of the circles seen on pits
    seen: int  # pits seen as circles
    # Found only by a last-resort search (the image stretched upright, LocaliseConfig.oblique_stretches,
    # or pits as discs, LocaliseConfig.disc_search): believed only on a clear pit pattern.
    last_resort: bool = False

    def location(self, score: float, found_by: str) -> BoardLocation:
        """The board where this lattice puts it; ``score`` its pit-pattern score."""
        return BoardLocation(self.corners, "auto", score, {"found_by": found_by, "pit_centers_px": self.centres,
                                                           "pit_radius_px": self.radius})


def find_pit_lattice(image_bgr: np.ndarray, *, config: LocaliseConfig = LocaliseConfig(),
                     trusted: Callable[[PitLattice], bool] | None = None,
                     score: Callable[[PitLattice], float] | None = None) -> PitLattice | None:
    """The board's pits as a lattice of round rims, and the board's outline around it.

    The circle searches run in turn until one gives a lattice ``trusted`` accepts (any
    lattice when None); failing that, the lattice with the most pits seen as circles.
    With ``score`` (how clearly a lattice's outline shows the pit pattern) the searches go
    on while the lattice believed has fewer than ``min_pits_seen_to_trust`` pits seen, and
    a later one is believed instead when it sees more pits and shows the pattern at least
    as clearly. A lattice on few circles can be believed and still be a column or half a
    pitch off: on a tilted board the plain search finds circles on the elliptical pits
    and across neighbours, where a later search, on the image stretched upright, sees the
    pits themselves. (More pits seen alone is not enough: on the demo film a lattice
    through 27 pits' circles was sheared off the board's far end, its pattern less clear
    than the first one's through 25.)
    """
    small, scale = _downscale(image_bgr, config.pit_search_max_side_px)
    gray = cv2.cvtColor(small, cv2.COLOR_BGR2GRAY)
    images = _EdgeImages.of(small, gray)

    def lopsided(lattice_to_image: np.ndarray) -> float:
        # A board's margins beyond its pits are alike on opposite sides.
        top, right, bottom, left = _board_edges(images, lattice_to_image, config)
        return abs(top - bottom) + abs(left - right)

    def beyond_picture(points: np.ndarray, margin: float = 0.0) -> np.ndarray:
        return _beyond_picture(points, images.gx.shape, margin)

    def rims(lattice_to_image: np.ndarray, radius: float) -> float:
        return float(rim_coherence(images.gx, images.gy, lattice_to_image, PIT_NODES, radius).sum())

    def pits_stop(lattice_to_image: np.ndarray, radius: float) -> bool:
        # A board's pits stop at its edge: the ring of nodes one step beyond them (its margin, the
        # table) shows clearly less round rims than the pits, and hardly any node there looks like
        # a pit; a patterned cloth's lattice has its pattern beyond too, a lattice on a bare table
        # no rims on its pits either. Nodes beyond the image count as no round structure (0.5) in
        # the step and not at all in the share of round ones.
        h, w = images.gx.shape
        beyond = cv2.perspectiveTransform(_BEYOND.reshape(-1, 1, 2), lattice_to_image).reshape(-1, 2)
        inside = (beyond[:, 0] >= 0) & (beyond[:, 0] < w) & (beyond[:, 1] >= 0) & (beyond[:, 1] < h)
        around = np.full(len(_BEYOND), 0.5)
        if inside.any():
            around[inside] = rim_coherence(images.gx, images.gy, lattice_to_image, _BEYOND[inside], radius)
        step = rims(lattice_to_image, radius) / len(PIT_NODES) - float(around.mean())
        round_share = float(np.mean(around[inside] > config.pit_rim_coherence)) if inside.sum() >= 6 else 0.0
        return step >= config.min_rim_step and round_share <= config.max_round_beyond

    def choose(placements: list[np.ndarray], radius: float) -> np.ndarray:
        # Round rims where the placement puts pits (the circle finder misses a shaded column,
        # a board margin or the table beyond has none); when rims do not tell the placements
        # apart (a hand hides the column), alike margins on opposite sides.
        scores = [rims(h, radius) for h in placements]
        near_best = [h for h, score in zip(placements, scores, strict=True) if score >= max(scores) - config.rim_margin]
        return min(near_best, key=lopsided)

    def slide(lattice_to_image: np.ndarray, blobs: np.ndarray) -> np.ndarray:
        # The walk can also be a column or row off with more circles on its side (circles on a
        # board's edge or rounded corner, on a patterned cloth), or sheared (a diagonal taken for
        # a row): a placement a step or a shear away, snapped to the circles again, whose nodes
        # show clearly rounder rims wins, until no step wins.
        radius = _pit_radius(lattice_to_image, blobs)
        base = rims(lattice_to_image, radius)
        circles = _circled_pits(lattice_to_image, blobs)
        for _ in range(3):
            # Every step's nodes in one go, then the few best snapped and measured again.
            rough = rim_coherence(images.gx, images.gy, lattice_to_image, _STEP_NODES, radius)
            order = np.argsort(-rough.reshape(len(_LATTICE_STEPS), -1).sum(axis=1))[: config.rim_steps_polished]
            moved = [_polish(lattice_to_image @ _LATTICE_STEPS[i], blobs) for i in order]
            # ... without losing circles: a placement that leaves circled pits behind is not a better one.
            circled = [_circled_pits(h, blobs) for h in moved]
            scores = [rims(h, radius) if n >= circles else -np.inf for h, n in zip(moved, circled, strict=True)]
            top = int(np.argmax(scores))
            if scores[top] < base + config.rim_margin:
                break
            lattice_to_image, base, circles = moved[top], scores[top], circled[top]
        return lattice_to_image

    def circles_on(lattice_to_image: np.ndarray, blobs: np.ndarray, radius: float) -> tuple[set[int], int]:
        # The circles on the lattice's pits, and how many of its pits wholly in the picture have none
        # (a pit the picture's edge cuts shows no circle).
        centres, _, nearest, on_pit = _nearest_circles(lattice_to_image, blobs)
        return set(nearest[on_pit].tolist()), int((~on_pit & ~beyond_picture(centres, radius)).sum())

    def onto_the_board(lattice_to_image: np.ndarray, blobs: np.ndarray) -> np.ndarray:
        # A picture that cuts off the board's end leaves the lattice free to sit a column over, its
        # end column on what lies beside the board's visible end: the placements are as full of
        # circles, or circles in a striped cloth there make that one fuller, and their rims differ by
        # less than ``rim_margin``. But a board's pits lie on its surface: while an end column (or
        # row) in the picture has something unlike the board's surface between its pits, and the
        # step away from it puts pits beyond the picture or within a pit radius of its edge and misses
        # no more circles (circles left behind, and pits wholly in the picture without one), the
        # lattice takes that step.
        radius = _pit_radius(lattice_to_image, blobs)
        for _ in range(2):
            surface = _surface_colour(images.lab, lattice_to_image)
            on_base, bare_base = circles_on(lattice_to_image, blobs, radius)
            for between, step in _END_LINES:
                if beyond_picture(lattice_points(lattice_to_image, between)).any():
                    continue
                end = _surface_colour(images.lab, lattice_to_image, between=between)
                if np.linalg.norm(end - surface) <= config.min_surface_contrast:
                    continue
                moved = _polish(lattice_to_image @ step, blobs)
                if not beyond_picture(lattice_points(moved, PIT_NODES), radius).any():
                    continue
                on, bare = circles_on(moved, blobs, radius)
                both = on_base | on
                if bare + len(both - on) <= bare_base + len(both - on_base):
                    lattice_to_image = moved
                    break
            else:
                break
        return lattice_to_image

    def searches() -> Iterator[tuple[np.ndarray, str]]:
        yield _circles(gray, config), "circles"
        # Low contrast (dark pits in dark wood, dim light, blur): the same search on a locally
        # contrast-stretched image.
        clahe = cv2.createCLAHE(clipLimit=config.retry_contrast_clip, tileGridSize=(8, 8))
        yield _circles(clahe.apply(gray), config), "circles"
        if config.small_pit_search:
            yield _circles(gray, config, small_pits=True), "circles"
        # A steep camera sees the pits as ellipses, flattened along the image's height when it
        # stands on a side of the board: stretched upright, they are circles again.
        for stretch in config.oblique_stretches:
            tall = cv2.resize(gray, (gray.shape[1], round(gray.shape[0] * stretch)), interpolation=cv2.INTER_LINEAR)
            circles = _circles(tall, config)
            circles[:, 1] /= stretch
            yield circles, "oblique"
        if config.disc_search:
            yield _disc_blobs(gray, config), "discs"

    best: PitLattice | None = None  # the lattice with the most pits seen as circles
    believed: PitLattice | None = None  # ... of those ``trusted`` accepts
    for blobs, search in searches():
        found = _lattice_from_blobs(blobs, choose)
        if found is None:
            continue
        lattice_to_image = onto_the_board(slide(found[0], blobs), blobs)
        pits = _pits_seen(lattice_to_image, blobs, config)
        if pits is None:
            continue
        seen, centres, radius = pits
        if search == "discs":
            # Faint rims are why this search ran, so their roundness says nothing; the discs'
            # own pattern stopping at the board is checked (_lattice_from_blobs). Discs show a
            # pit's dark (or seed-filled) inside, not its rim: the radius is the usual share of the pitch.
            radius = config.disc_radius_of_pitch * _nearest_circles(lattice_to_image, blobs)[1]
        elif not pits_stop(lattice_to_image, _pit_radius(lattice_to_image, blobs)):
            continue
        # The lattice is believed on evenly spaced rows; its pits and outline follow the halves.
        lattice_to_image, gap = _fit_gap(lattice_to_image, blobs, config)
        if gap:
            centres = lattice_points(lattice_to_image, PIT_NODES, gap)
        corners = _board_outline(images, lattice_to_image, config, gap)
        # The lattice knows which sides are long (its rows of 8 run along them).
        if _signed_area(corners) < 0:
            corners = corners[::-1].copy()  # a mirrored lattice: clockwise again, a long side still first
        lattice = PitLattice(_south_at_bottom(corners / scale, True), centres / scale, radius / scale, len(seen),
                             search != "circles")
        if trusted is None or trusted(lattice):
            if score is None:
                return lattice
            if believed is None or (lattice.seen > believed.seen and score(lattice) >= score(believed)):
                believed = lattice
            if believed.seen >= config.min_pits_seen_to_trust:
                return believed
        elif best is None or lattice.seen > best.seen:
            best = lattice
    return believed or best


def _step(dc: int, dr: int, shear: int = 0) -> np.ndarray:
    """The lattice placement (col, row) -> (col + shear * row + dc, row + dr), as a homography from the
    new lattice to the old."""
    return np.array([[1.0, shear, dc], [0.0, 1.0, dr], [0.0, 0.0, 1.0]])


def _beyond_picture(points: np.ndarray, shape: tuple[int, ...], margin: float = 0.0) -> np.ndarray:
    """Which image ``points`` (..., 2) lie beyond a picture of ``shape`` (height, width, ...), or within
    ``margin`` pixels of its edge."""
    h, w = shape[:2]
    x, y = points[..., 0], points[..., 1]
    return np.asarray((x < margin) | (x > w - 1 - margin) | (y < margin) | (y > h - 1 - margin))


#: Placements near a lattice: a column or two and a row off, and sheared by a column a row.
_LATTICE_STEPS = [_step(dc, dr, shear)
                  for shear in (-1, 0, 1) for dc in (-2, -1, 0, 1, 2) for dr in (-1, 0, 1) if (shear, dc, dr) != (0, 0, 0)]
#: The 32 pit nodes of every placement in _LATTICE_STEPS, in the lattice's own coordinates, one after another.
_STEP_NODES = np.concatenate([cv2.perspectiveTransform(PIT_NODES.reshape(-1, 1, 2), step).reshape(-1, 2)
                              for step in _LATTICE_STEPS])


#: Each end column and row of the pits: the points between its pits (on a board, its surface), and
#: the step away from it.
_END_LINES = [(np.array([(0.0, r + 0.5) for r in range(3)]), _step(1, 0)),
              (np.array([(7.0, r + 0.5) for r in range(3)]), _step(-1, 0)),
              (np.array([(c + 0.5, 0.0) for c in range(7)]), _step(0, 1)),
              (np.array([(c + 0.5, 3.0) for c in range(7)]), _step(0, -1))]


#: Where :func:`rim_coherence` samples a ring: angles, and radii as fractions of the pit radius.
_RING_ANGLES = np.linspace(0.0, 2.0 * np.pi, 32, endpoint=False)
_RING_RADII = np.linspace(0.75, 1.25, 4)
_RING_SECTORS = 8


def rim_coherence(gx: np.ndarray, gy: np.ndarray, lattice_to_image: np.ndarray, nodes: np.ndarray,
                  radius: float) -> np.ndarray:
    """Per lattice node (col, row): how radial the image gradient is on a ring around a pit's rim there.

    The share of the gradient's energy that points along the radius in each of eight
    sectors of the ring (:func:`rim_sectors`), averaged: about 0.5 where the ring holds no
    round structure (flat wood, grain, cloth, noise, a straight edge), near 1 on a pit's rim
    whatever its colour or lighting (dark wood, shade). Per sector, then averaged: a
    straight edge just touching the ring is radial in one sector only, a rim in all of them.
    """
    share, _ = _radial_share(*_ring_gradients(gx, gy, lattice_to_image, nodes, radius))
    return np.asarray(share.mean(axis=1))


def rim_sectors(gx: np.ndarray, gy: np.ndarray, lattice_to_image: np.ndarray, nodes: np.ndarray,
                radius: float) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Four (nodes, 8) arrays: per node and sector of its ring, the share of the gradient's energy
    along the radius, the gradient's energy (its mean square), how much the gradient keeps one
    orientation (the coherence of its structure tensor: 1 along straight edges, whichever way they
    run; near 0 over seeds or noise, whose edges point every way), and how much it keeps one
    direction (the length of its mean over its mean length: 1 across a single edge, low across
    stripes such as wood grain, whose edges alternate light-dark and dark-light).

    ``radius`` is the pit radius at the lattice's middle (image px); perspective scales it
    by the local pitch.
    """
    g1, g2, radial = _ring_gradients(gx, gy, lattice_to_image, nodes, radius)
    share, energy = _radial_share(g1, g2, radial)
    xx_yy = (g1 * g1 - g2 * g2).sum(axis=(1, 3))
    xy = (g1 * g2).sum(axis=(1, 3))
    coherence = np.sqrt(xx_yy * xx_yy + 4.0 * xy * xy) / np.maximum(energy, 1e-6)
    one_way = np.hypot(g1.sum(axis=(1, 3)), g2.sum(axis=(1, 3))) / np.maximum(np.hypot(g1, g2).sum(axis=(1, 3)), 1e-6)
    samples = len(_RING_RADII) * len(_RING_ANGLES) // _RING_SECTORS
    return share, energy / samples, coherence, one_way


def _ring_gradients(gx: np.ndarray, gy: np.ndarray, lattice_to_image: np.ndarray, nodes: np.ndarray,
                    radius: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The image gradient sampled on each node's ring (:func:`rim_sectors`): its x and y components
    and its component along the radius, each (nodes, radii, sectors, samples a sector)."""
    h, w = gx.shape
    nodes = np.asarray(nodes, np.float64).reshape(-1, 2)
    n = len(nodes)
    half_step = np.array([0.5, 0.0])
    lattice_pts = np.concatenate([nodes, nodes - half_step, nodes + half_step, [[3.0, 1.5], [4.0, 1.5]]])
    image_pts = cv2.perspectiveTransform(lattice_pts.reshape(-1, 1, 2), lattice_to_image).reshape(-1, 2)
    centres = image_pts[:n]
    local_pitch = np.linalg.norm(image_pts[2 * n: 3 * n] - image_pts[n: 2 * n], axis=1)
    middle_pitch = max(float(np.linalg.norm(image_pts[-1] - image_pts[-2])), 1e-9)
    radii = radius * local_pitch / middle_pitch
    normals = np.stack([np.cos(_RING_ANGLES), np.sin(_RING_ANGLES)], axis=1)  # (angles, 2)
    pts = centres[:, None, None] + (radii[:, None, None, None] * _RING_RADII[None, :, None, None]) * normals[None, None]
    xs = np.clip(np.rint(pts[..., 0]).astype(int), 0, w - 1)
    ys = np.clip(np.rint(pts[..., 1]).astype(int), 0, h - 1)
    g1, g2 = gx[ys, xs], gy[ys, xs]
    radial = g1 * normals[None, None, :, 0] + g2 * normals[None, None, :, 1]
    sectors = (n, len(_RING_RADII), _RING_SECTORS, -1)
    return g1.reshape(sectors), g2.reshape(sectors), radial.reshape(sectors)


def _radial_share(g1: np.ndarray, g2: np.ndarray, radial: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per node and sector of :func:`_ring_gradients`' samples: the share of the gradient's energy
    along the radius, and that energy (summed over the sector's samples)."""
    energy = (g1 * g1 + g2 * g2).sum(axis=(1, 3))
    return (radial * radial).sum(axis=(1, 3)) / np.maximum(energy, 1e-6), energy


def _pits_seen(lattice_to_image: np.ndarray, blobs: np.ndarray,
               config: LocaliseConfig) -> tuple[np.ndarray, np.ndarray, float] | None:
    """(indices of the circles on the lattice's 32 pits, the 32 pit centres, the median radius of
    those circles), or None when the lattice is not believable.

    A lattice walked along the wrong steps (a diagonal taken for a row, a hand's edge
    for a pit) predicts pits where no circle is, and leaves pit-sized circles inside
    its outline off its pits.
    """
    centres, pitch, nearest, on_pit = _nearest_circles(lattice_to_image, blobs)
    if on_pit.sum() < config.min_pits_seen:
        return None
    seen = nearest[on_pit]
    radius = float(np.median(blobs[seen, 2]))
    alike = blobs[(blobs[:, 2] > 0.75 * radius) & (blobs[:, 2] < 1.35 * radius)]
    if len(alike):
        lat = cv2.perspectiveTransform(alike[:, None, :2].astype(np.float64), np.linalg.inv(lattice_to_image)).reshape(-1, 2)
        inside = (lat[:, 0] > -0.5) & (lat[:, 0] < 7.5) & (lat[:, 1] > -0.5) & (lat[:, 1] < 3.5)
        off = np.linalg.norm(alike[:, None, :2] - centres[None], axis=2).min(axis=1) > 0.35 * pitch
        if (inside & off).sum() > config.max_stray_circles_frac * on_pit.sum():
            return None
    return np.asarray(seen), centres, radius
