"""The pit lattice's nodes in the image: the 32 pits in lattice coordinates (col, row), where a
lattice homography puts them (the board's halves perhaps further apart than its rows), and how
round the image's gradient is on a ring about each node (rim coherence)."""

from __future__ import annotations

import cv2
import numpy as np

#: The 32 pit centres in lattice coordinates (col, row), image order.
PIT_NODES: np.ndarray = np.array([(c, r) for r in range(4) for c in range(8)], np.float64)


def lattice_points(lattice_to_image: np.ndarray, lattice: np.ndarray, gap: float = 0.0) -> np.ndarray:
    """Lattice points (col, row) in the image, the strip between rows 1 and 2 widened by ``gap`` rows.

    A board's two halves (rows 0-1 and 2-3) may stand further apart than its rows do; the
    lattice is then one homography of the plane in which row ``r`` lies at
    ``r + gap * clip(r - 1, 0, 1)``: the South half's rows and everything beyond them move by
    ``gap``, points between the halves are spread across the wider strip.
    """
    pts = widened(lattice, gap)
    return np.asarray(cv2.perspectiveTransform(pts.reshape(-1, 1, 2), lattice_to_image).reshape(-1, 2))


def widened(lattice: np.ndarray, gap: float) -> np.ndarray:
    """Lattice points (col, row) in the plane of a lattice whose halves stand ``gap`` rows further
    apart (:func:`lattice_points`)."""
    pts = np.array(lattice, np.float64).reshape(-1, 2)
    if gap:
        pts[:, 1] += gap * np.clip(pts[:, 1] - 1.0, 0.0, 1.0)
    return pts


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
