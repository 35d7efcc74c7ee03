"""The automatic, markerless board finder (:func:`find_board`): the pit lattice first; without one,
candidate quads from colour segmentation and edges, each checked for the pit pattern and refined
onto the image's edges; then the lattice search again inside the largest dark segmented regions,
their contrast stretched, and last inside the segmented regions warped top-down."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import replace

import cv2
import numpy as np

from omweso_cam.vision.grid import lattice_score
from omweso_cam.vision.localise.config import LocaliseConfig
from omweso_cam.vision.localise.geometry import (
    BoardLocation,
    beyond_picture,
    clockwise,
    downscale,
    intersect,
    order_corners,
    quad_diagonal,
    signed_area,
    south_at_bottom,
)
from omweso_cam.vision.localise.lattice import PitLattice, find_pit_lattice, row_pitch
from omweso_cam.vision.localise.nodes import PIT_NODES
from omweso_cam.vision.localise.outline import image_gradients


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
    small, scale = downscale(image_bgr, config.work_max_side_px)
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
        in_view = int((~beyond_picture(lattice.centres, image_bgr.shape)).sum())
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
        small, scale = downscale(stretched, config.work_max_side_px)
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
        top_small, top_scale = downscale(top_down, config.work_max_side_px)

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
        if signed_area(found) < 0:
            found = found[::-1].copy()
        # The warp keeps the lattice's rows of 8 along TL-TR (both clockwise on screen).
        found = south_at_bottom(found, True)
        radius = lattice.radius * row_pitch(centres) / max(row_pitch(lattice.centres), 1e-6)
        score = float(lattice_score(small, found * scale))
        return BoardLocation(found, "auto", score, {"found_by": "pit lattice, rectified region", "pit_centers_px": centres,
                                                    "pit_radius_px": radius})
    return None


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
            point = intersect(prev_side[1], side[0])
            if point is not None and np.linalg.norm(point - quad[i]) < 2 * window:
                new[i] = point
        quad = new
    return quad
