"""The 4x8 lattice of round pits in an image: Hough circles (or discs), a lattice walk that steps
over hidden pits, a homography; placed a column or a row over, or unsheared, when its nodes then
show rounder rims and keep their circles; believed only when most of its pits are circles and no
pit-sized circles lie off it; then the board's outline around it
(:mod:`omweso_cam.vision.localise.outline`)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import replace
from typing import NamedTuple

import cv2
import numpy as np

from omweso_cam.vision.localise.config import LocaliseConfig
from omweso_cam.vision.localise.geometry import (
    BoardLocation,
    beyond_picture,
    downscale,
    signed_area,
    south_at_bottom,
)
from omweso_cam.vision.localise.nodes import PIT_NODES, lattice_points, rim_coherence, widened
from omweso_cam.vision.localise.outline import (
    EdgeImages,
    board_edges,
    board_outline,
    lattice_surface_colour,
)


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


#: The ring of lattice nodes one step beyond the pits (where a board has none).
_BEYOND = np.array([(c, r) for r in range(-1, 5) for c in range(-1, 9) if r in (-1, 4) or c in (-1, 8)], np.float64)


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
    (rows; :func:`nodes.lattice_points`), or the lattice as it was and 0 when no gap of at least
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
            src = widened(src0, float(g))
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


def row_pitch(centres: np.ndarray) -> float:
    """The median distance between neighbouring pits along the rows of 32 pit centres (lattice order)."""
    return float(np.median(np.linalg.norm(np.diff(np.asarray(centres).reshape(4, 8, 2), axis=1), axis=2)))


def _nearest_circles(lattice_to_image: np.ndarray, blobs: np.ndarray,
                     gap: float = 0.0) -> tuple[np.ndarray, float, np.ndarray, np.ndarray]:
    """The lattice's 32 pit centres in the image, their pitch along the rows (median), the
    nearest circle to each pit (index into ``blobs``), and whether it lies within 0.3 pitch."""
    centres = lattice_points(lattice_to_image, PIT_NODES, gap)
    pitch = row_pitch(centres)
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
    small, scale = downscale(image_bgr, config.pit_search_max_side_px)
    gray = cv2.cvtColor(small, cv2.COLOR_BGR2GRAY)
    images = EdgeImages.of(small, gray)

    def lopsided(lattice_to_image: np.ndarray) -> float:
        # A board's margins beyond its pits are alike on opposite sides.
        top, right, bottom, left = board_edges(images, lattice_to_image, config)
        return abs(top - bottom) + abs(left - right)

    def off_picture(points: np.ndarray, margin: float = 0.0) -> np.ndarray:
        return beyond_picture(points, images.gx.shape, margin)

    def rims(lattice_to_image: np.ndarray, radius: float) -> float:
        return float(rim_coherence(images.gx, images.gy, lattice_to_image, PIT_NODES, radius).sum())

    def pits_stop(lattice_to_image: np.ndarray, radius: float) -> bool:
        # A board's pits stop at its edge: the ring of nodes one step beyond them (its margin, the
        # table) shows clearly less round rims than the pits, and hardly any node there looks like
        # a pit; a patterned cloth's lattice has its pattern beyond too, a lattice on a bare table
        # no rims on its pits either. Nodes beyond the image count as no round structure (0.5) in
        # the step and not at all in the share of round ones.
        beyond = cv2.perspectiveTransform(_BEYOND.reshape(-1, 1, 2), lattice_to_image).reshape(-1, 2)
        inside = ~off_picture(beyond)
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
        return set(nearest[on_pit].tolist()), int((~on_pit & ~off_picture(centres, radius)).sum())

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
            surface = lattice_surface_colour(images.lab, lattice_to_image)
            on_base, bare_base = circles_on(lattice_to_image, blobs, radius)
            for between, step in _END_LINES:
                if off_picture(lattice_points(lattice_to_image, between)).any():
                    continue
                end = lattice_surface_colour(images.lab, lattice_to_image, between=between)
                if np.linalg.norm(end - surface) <= config.min_surface_contrast:
                    continue
                moved = _polish(lattice_to_image @ step, blobs)
                if not off_picture(lattice_points(moved, PIT_NODES), radius).any():
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
        corners = board_outline(images, lattice_to_image, config, gap)
        # The lattice knows which sides are long (its rows of 8 run along them).
        if signed_area(corners) < 0:
            corners = corners[::-1].copy()  # a mirrored lattice: clockwise again, a long side still first
        lattice = PitLattice(south_at_bottom(corners / scale, True), centres / scale, radius / scale, len(seen),
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
