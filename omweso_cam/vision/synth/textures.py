"""Procedural textures (float32 RGB in 0..1): wood grain, table cloth, tiles, paper, noise."""

from __future__ import annotations

import math

import cv2
import numpy as np

from omweso_cam.vision.synth.scene import PRINTS, RGB


def smooth_noise(rng: np.random.Generator, shape: tuple[int, int], cell_px: float) -> np.ndarray:
    """Smooth value noise in about -1..1 with features about ``cell_px`` pixels wide."""
    h, w = shape
    gh, gw = max(2, math.ceil(h / cell_px) + 2), max(2, math.ceil(w / cell_px) + 2)
    grid = rng.standard_normal((gh, gw)).astype(np.float32)
    big = cv2.resize(grid, (int(gw * cell_px), int(gh * cell_px)), interpolation=cv2.INTER_CUBIC)
    return np.ascontiguousarray(big[:h, :w]) * np.float32(0.8)


def rgb01(rgb: RGB | tuple[float, float, float]) -> np.ndarray:
    """An RGB triple in 0..255 as a float32 array in 0..1."""
    return np.asarray(rgb, dtype=np.float32) / np.float32(255.0)


def wood(
    rng: np.random.Generator,
    shape: tuple[int, int],
    *,
    px_per_mm: float,
    base_rgb: RGB,
    grain_contrast: float,
    grain_period_mm: float,
    waviness: float,
    planks_mm: float = 0.0,
) -> np.ndarray:
    """Wood with grain running along x: wavy growth rings, fibres and colour drift.

    ``planks_mm`` > 0 adds plank seams across the grain every that many mm. The grain
    changes slowly along x, so it is computed at a quarter of the width and stretched.
    """
    h, w = shape
    squeeze = 4
    ws = max(2, w // squeeze)
    sshape = (h, ws)
    ys = np.arange(h, dtype=np.float32)[:, None] / np.float32(px_per_mm)
    xs = np.arange(ws, dtype=np.float32)[None, :] * np.float32(squeeze / px_per_mm)

    def noise(cell_mm: float) -> np.ndarray:
        # features cell_mm across the grain, squeeze times longer along it
        return smooth_noise(rng, sshape, cell_mm * px_per_mm)

    # growth rings: a slowly bent family of lines along x, ring width varying
    warp = noise(140.0) * np.float32(waviness * 30.0) + noise(35.0) * np.float32(waviness * 3.0)
    width_mod = 1.0 + 0.35 * noise(60.0)
    phase = (ys + warp + np.float32(rng.uniform(-0.03, 0.03)) * xs) / (np.float32(grain_period_mm) * width_mod)
    rings = (np.sin(phase * np.float32(2 * math.pi)) + 1.0) * 0.5
    rings = rings * rings * (0.6 + 0.4 * noise(20.0) ** 2)
    # fibres: fine noise across the grain, long along it
    fibre = cv2.resize(rng.standard_normal((max(2, h // 2), max(2, ws // 8)), dtype=np.float32), (ws, h))
    pores = rng.standard_normal(sshape, dtype=np.float32)
    drift = noise(160.0)
    shade = 1.0 - np.float32(grain_contrast) * rings + np.float32(0.05) * fibre + np.float32(0.03) * pores
    shade += np.float32(0.07) * drift
    base = rgb01(base_rgb)
    small = shade[..., None] * base[None, None, :]
    # darker grain is also a little more saturated (red-brown)
    small[..., 2] *= 1.0 - np.float32(0.15 * grain_contrast) * rings
    out = cv2.resize(small, (w, h), interpolation=cv2.INTER_LINEAR)
    if planks_mm > 0:
        xs_full = np.arange(w, dtype=np.float32) / np.float32(px_per_mm)
        seam = (xs_full % np.float32(planks_mm)) < np.float32(1.2)
        out[:, seam] *= np.float32(0.55)
    return np.asarray(np.clip(out, 0.0, 1.0), dtype=np.float32)


def cloth(rng: np.random.Generator, shape: tuple[int, int], *, px_per_mm: float, rgb: RGB) -> np.ndarray:
    """Woven cloth: fine weave, lint noise and soft folds."""
    h, w = shape
    period = max(2.0, 1.2 * px_per_mm)
    sin_y = np.sin(np.arange(h, dtype=np.float32) * np.float32(2 * math.pi / period))[:, None]
    sin_x = np.sin(np.arange(w, dtype=np.float32) * np.float32(2 * math.pi / period))[None, :]
    weave = np.float32(0.04) * sin_y * sin_x
    folds = smooth_noise(rng, shape, 120.0 * px_per_mm) * np.float32(0.06)
    lint = rng.standard_normal(shape, dtype=np.float32) * np.float32(0.03)
    shade = 1.0 + weave + folds + lint
    return np.asarray(np.clip(shade[..., None] * rgb01(rgb)[None, None, :], 0.0, 1.0), dtype=np.float32)


def pattern(rng: np.random.Generator, shape: tuple[int, int], *, px_per_mm: float, rgb: RGB, rgb2: RGB,
            print_kind: str | None = None) -> np.ndarray:
    """A printed table cloth: checks, stripes or dots in two colours, with cloth weave.

    The print is drawn at random unless ``print_kind`` (one of PRINTS) names it; the draw is
    made either way, so the rest of the texture is the same.
    """
    h, w = shape
    ys = np.arange(h, dtype=np.float32)[:, None] / np.float32(px_per_mm)
    xs = np.arange(w, dtype=np.float32)[None, :] / np.float32(px_per_mm)
    size = np.float32(rng.uniform(20.0, 90.0))
    kind = int(rng.integers(3))
    if print_kind is not None:
        kind = PRINTS.index(print_kind)
    if kind == 0:
        mask = ((xs // size + ys // size) % 2).astype(np.float32)
    elif kind == 1:
        angle = rng.uniform(0, math.pi)
        mask = (((xs * math.cos(angle) + ys * math.sin(angle)) // size) % 2).astype(np.float32)
    else:
        cx = (xs % size) - size / 2
        cy = (ys % size) - size / 2
        mask = ((cx * cx + cy * cy) < (size * 0.3) ** 2).astype(np.float32)
    mask = np.asarray(cv2.GaussianBlur(mask, (0, 0), max(0.6, 0.4 * px_per_mm)), np.float32)
    base = cloth(rng, shape, px_per_mm=px_per_mm, rgb=(255, 255, 255))
    colour = (1 - mask)[..., None] * rgb01(rgb) + mask[..., None] * rgb01(rgb2)
    return np.asarray(np.clip(base * colour, 0.0, 1.0), dtype=np.float32)


def tiles(rng: np.random.Generator, shape: tuple[int, int], *, px_per_mm: float, rgb: RGB, rgb2: RGB) -> np.ndarray:
    """Ceramic tiles with grout lines and per-tile shade."""
    h, w = shape
    size = rng.uniform(80.0, 250.0) * px_per_mm
    ys = np.arange(h, dtype=np.float32)[:, None]
    xs = np.arange(w, dtype=np.float32)[None, :]
    grout = ((xs % size) < 2.5 * px_per_mm) | ((ys % size) < 2.5 * px_per_mm)
    ids = (xs // size) * 7 + (ys // size) * 13
    shade = 0.92 + 0.08 * np.sin(ids * 1.7)
    img = shade[..., None] * rgb01(rgb)[None, None, :]
    img = np.where(grout[..., None], rgb01(rgb2)[None, None, :] * np.float32(0.8), img)
    img += smooth_noise(rng, shape, 50 * px_per_mm)[..., None] * np.float32(0.03)
    return np.clip(img, 0.0, 1.0).astype(np.float32)


def concrete(rng: np.random.Generator, shape: tuple[int, int], *, px_per_mm: float, rgb: RGB) -> np.ndarray:
    """A concrete or earth floor: blotches at several scales and fine grit."""
    shade = 1.0 + 0.10 * smooth_noise(rng, shape, 300 * px_per_mm) + 0.06 * smooth_noise(rng, shape, 40 * px_per_mm)
    grit = rng.standard_normal(shape, dtype=np.float32) * np.float32(0.05)
    shade = shade + grit
    return np.asarray(np.clip(shade[..., None] * rgb01(rgb)[None, None, :], 0.0, 1.0), dtype=np.float32)


def newspaper(rng: np.random.Generator, shape: tuple[int, int], *, px_per_mm: float) -> np.ndarray:
    """Newsprint: grey lines of 'text' in columns on off-white paper."""
    h, w = shape
    img = np.full((h, w, 3), (0.86, 0.85, 0.80), np.float32)
    line_mm = rng.uniform(3.0, 5.0)
    col_mm = rng.uniform(40.0, 70.0)
    for y in np.arange(0, h / px_per_mm, line_mm):
        for x0 in np.arange(0, w / px_per_mm, col_mm):
            length = col_mm * rng.uniform(0.5, 0.92)
            p0 = (int(x0 * px_per_mm), int(y * px_per_mm))
            p1 = (int((x0 + length) * px_per_mm), int(y * px_per_mm))
            cv2.line(img, p0, p1, (0.35, 0.35, 0.35), max(1, int(1.4 * px_per_mm)))
    return cv2.GaussianBlur(img, (0, 0), 0.8)
