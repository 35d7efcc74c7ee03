"""The board's top-face outline around a pit lattice: each side a straight line through edge points
found outward from the lattice (the board's surface colour inside, another colour outside),
opposite sides chosen together, and one radial lens distortion fitted so that all sides come out
straight (plumb line)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace

import cv2
import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from omweso_cam.vision.localise.config import LocaliseConfig
from omweso_cam.vision.localise.geometry import intersect
from omweso_cam.vision.localise.nodes import lattice_points


def image_gradients(gray: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    blurred = cv2.GaussianBlur(gray, (5, 5), 0).astype(np.float32)
    return cv2.Sobel(blurred, cv2.CV_32F, 1, 0, ksize=3), cv2.Sobel(blurred, cv2.CV_32F, 0, 1, ksize=3)


#: The lattice's sides (from, to in (col, row) pit units) and their outward directions: top, right, bottom, left.
_SIDES = ((((-0.5, -0.5), (7.5, -0.5)), (0.0, -1.0)), (((7.5, -0.5), (7.5, 3.5)), (1.0, 0.0)),
          (((7.5, 3.5), (-0.5, 3.5)), (0.0, 1.0)), (((-0.5, 3.5), (-0.5, -0.5)), (-1.0, 0.0)))


@dataclass(frozen=True, eq=False)
class EdgeImages:
    """What the board-edge search samples, computed once per image: gradients and blurred Lab colour."""

    gx: np.ndarray
    gy: np.ndarray
    lab: np.ndarray

    @classmethod
    def of(cls, small: np.ndarray, gray: np.ndarray) -> EdgeImages:
        gx, gy = image_gradients(gray)
        lab = cv2.cvtColor(cv2.GaussianBlur(small, (5, 5), 0), cv2.COLOR_BGR2LAB).astype(np.float32)
        return cls(gx, gy, lab)


def board_edges(images: EdgeImages, lattice_to_image: np.ndarray, config: LocaliseConfig,
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

    reference = lattice_surface_colour(lab, lattice_to_image, gap)
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


def board_outline(images: EdgeImages, lattice_to_image: np.ndarray, config: LocaliseConfig,
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
    :func:`board_edges`, unless that lies far from the
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
    reference = lattice_surface_colour(lab, lattice_to_image, gap)

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
                fallback = board_edges(images, lattice_to_image, config, gap)
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
        return _outline_from_offsets(lattice_to_image, board_edges(images, lattice_to_image, config, gap), gap)
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


def lattice_surface_colour(lab: np.ndarray, lattice_to_image: np.ndarray, gap: float = 0.0,
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
        point = intersect(lines[(k - 1) % 4], lines[k])
        if point is None:
            return None
        corners.append(point)
    return lens.distort(np.array(corners, np.float64))
