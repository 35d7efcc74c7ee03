"""Seeds: settling them into pit bowls as heaps, and ray-casting them into the board texture.

Each seed is an ellipsoid in board coordinates. Seeds are added one at a time at the
lowest of a few random spots (on the bowl or on seeds already there), so a pit of 20
becomes a mound in which upper seeds partly hide lower ones. A pit keeps its seeds
between frames; seeds are only added on top or lifted off the top.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import cv2
import numpy as np

from omweso_cam.vision.synth.geometry import BoardGeometry
from omweso_cam.vision.synth.scene import Scene, seed_colours

#: Random spots tried for each seed added to a pit (the lowest wins).
_SETTLE_CANDIDATES = 10


@dataclass(frozen=True)
class Seed:
    """One seed: centre (mm, board coordinates), half-axes a >= b >= c (mm), yaw, colour."""

    x: float
    y: float
    z: float
    a: float
    b: float
    c: float
    yaw: float
    rgb: tuple[float, float, float]
    mottle: tuple[float, float, float]  # phases/strength of the surface pattern

    @property
    def contact_radius(self) -> float:
        return (self.a + self.b + self.c) / 3.0


Layout = tuple[tuple[Seed, ...], ...]  # 32 pits, image order


def new_seed(scene: Scene, rng: np.random.Generator) -> Seed:
    """A seed of the scene's palette and size, not yet placed."""
    length = scene.seed_length_mm * rng.uniform(0.85, 1.15)
    a = length / 2.0
    b = a / (scene.seed_aspect * rng.uniform(0.92, 1.08))
    b = min(a, b)
    c = b * rng.uniform(0.78, 0.95)
    colours = scene.seed_rgbs or seed_colours(scene.seed_palette)
    base = np.asarray(colours[int(rng.integers(len(colours)))], dtype=float)
    base = np.clip(base * rng.uniform(0.88, 1.12) + rng.normal(0.0, 4.0, 3), 0, 255)
    r, g, bl = (float(v) for v in base / 255.0)
    mottle = (float(rng.uniform(0, 6.3)), float(rng.uniform(0, 6.3)), float(rng.uniform(0.0, 0.12)))
    return Seed(0.0, 0.0, 0.0, a, b, c, float(rng.uniform(0, math.pi)), (r, g, bl), mottle)


def settle(
    pit_seeds: tuple[Seed, ...],
    count: int,
    pit: int,
    board: BoardGeometry,
    scene: Scene,
    rng: np.random.Generator,
) -> tuple[Seed, ...]:
    """``pit_seeds`` changed to hold ``count`` seeds: top seeds lifted, or new ones dropped on."""
    seeds = list(pit_seeds)
    if count < len(seeds):
        seeds.sort(key=lambda s: s.z)
        return tuple(seeds[:count])
    cx, cy = board.pit_centres_mm[pit]
    rs_bowl = board.bowl_sphere_radius_mm()
    bowl_centre_z = -board.pit_depth_mm + rs_bowl
    aspect = board.pit_radius_x_mm / board.pit_radius_y_mm
    while len(seeds) < count:
        seed = new_seed(scene, rng)
        r = seed.contact_radius
        reach = max(board.pit_radius_y_mm - 0.8 * r, 1.0)
        ang = rng.uniform(0, 2 * math.pi, _SETTLE_CANDIDATES)
        rad = reach * np.sqrt(rng.uniform(0, 1, _SETTLE_CANDIDATES))
        px = rad * np.cos(ang) * aspect
        py = rad * np.sin(ang)
        rho2 = (px / aspect) ** 2 + py**2
        inner = max(rs_bowl - r, 1e-3)
        z = bowl_centre_z - np.sqrt(np.maximum(inner**2 - rho2, 0.0))
        if seeds:
            sx = np.array([s.x - cx for s in seeds])
            sy = np.array([s.y - cy for s in seeds])
            sz = np.array([s.z for s in seeds])
            sr = np.array([s.contact_radius for s in seeds]) + r
            d2 = (px[:, None] - sx[None, :]) ** 2 + (py[:, None] - sy[None, :]) ** 2
            rest = sz[None, :] + np.sqrt(np.maximum(sr[None, :] ** 2 - d2, 0.0))
            rest = np.where(d2 < sr[None, :] ** 2, rest, -np.inf)
            z = np.maximum(z, rest.max(axis=1))
        k = int(np.argmin(z + rng.uniform(0, 0.6, _SETTLE_CANDIDATES)))
        # seeds resting on others tilt a little: shown by a slightly random yaw only
        seeds.append(
            Seed(float(cx + px[k]), float(cy + py[k]), float(z[k]), seed.a, seed.b, seed.c, seed.yaw, seed.rgb, seed.mottle)
        )
    return tuple(seeds)


def build_layout(
    counts: tuple[int, ...],
    board: BoardGeometry,
    scene: Scene,
    rng: np.random.Generator,
    previous: Layout | None = None,
) -> Layout:
    """Seeds for every pit; pits whose count did not change keep their seeds untouched."""
    if len(counts) != 32:
        raise ValueError(f"expected 32 counts, got {len(counts)}")
    old: Layout = previous if previous is not None else tuple(() for _ in range(32))
    return tuple(
        old[i] if len(old[i]) == counts[i] else settle(old[i], counts[i], i, board, scene, rng) for i in range(32)
    )


@dataclass(frozen=True)
class TextureFrame:
    """How board millimetres map to texture pixels: ``col = (x + hw) * s``, ``row = (hh - y) * s``."""

    px_per_mm: float
    half_width_mm: float
    half_height_mm: float

    def to_px(self, x: np.ndarray | float, y: np.ndarray | float) -> tuple[np.ndarray, np.ndarray]:
        return (
            np.asarray((np.asarray(x) + self.half_width_mm) * self.px_per_mm),
            np.asarray((self.half_height_mm - np.asarray(y)) * self.px_per_mm),
        )

    def to_mm(self, col: np.ndarray, row: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return col / self.px_per_mm - self.half_width_mm, self.half_height_mm - row / self.px_per_mm


def ground_point(x: float, y: float, z: float, camera_mm: np.ndarray) -> tuple[float, float, float]:
    """Where the ray from the camera through (x, y, z) meets z=0, and the scale there."""
    cz = float(camera_mm[2])
    k = z / (cz - z)
    return x + (x - camera_mm[0]) * k, y + (y - camera_mm[1]) * k, cz / (cz - z)


def draw_seeds(
    texture: np.ndarray,
    layout: Layout,
    frame: TextureFrame,
    pit_opening: np.ndarray,
    camera_mm: np.ndarray,
    light: np.ndarray,
    scene: Scene,
) -> None:
    """Cast shadows then ray-cast every seed into ``texture`` (float32 RGB, modified in place).

    ``pit_opening`` is a mask (texture size) of the pit openings: a seed below the board
    surface is only visible through an opening (the near rim hides the rest).
    """
    all_seeds = [s for pit in layout for s in pit]
    if not all_seeds:
        return
    h, w = texture.shape[:2]
    s = frame.px_per_mm
    light_rgb = np.asarray(scene.light_rgb, dtype=np.float32)
    ambient = np.float32(scene.ambient)

    # soft shadows on the bowl and board, cast away from the light
    shadow = np.zeros((h, w), np.float32)
    lz = max(light[2], 0.2)
    for seed in all_seeds:
        drop = seed.c + 2.0
        sx, sy = seed.x - light[0] / lz * drop, seed.y - light[1] / lz * drop
        gx, gy, m = ground_point(sx, sy, seed.z - seed.c, camera_mm)
        col, row = frame.to_px(gx, gy)
        axes = (max(1, int(seed.a * m * s * 1.05)), max(1, int(seed.b * m * s * 1.05)))
        cv2.ellipse(shadow, (int(col), int(row)), axes, -math.degrees(seed.yaw), 0, 360, 0.75, -1, cv2.LINE_AA)
        gx, gy, m = ground_point(seed.x, seed.y, seed.z - seed.c, camera_mm)
        col, row = frame.to_px(gx, gy)
        axes = (max(1, int(seed.a * m * s * 0.8)), max(1, int(seed.b * m * s * 0.8)))
        cv2.ellipse(shadow, (int(col), int(row)), axes, -math.degrees(seed.yaw), 0, 360, 1.0, -1, cv2.LINE_AA)
    shadow = np.asarray(cv2.GaussianBlur(shadow, (0, 0), max(0.8, 1.6 * s)), np.float32)
    texture *= (1.0 - shadow * np.float32(0.65) * (1.0 - ambient * 0.6))[..., None]

    zbuf = np.full((h, w), np.inf, np.float32)
    cam = camera_mm.astype(float)
    for seed in all_seeds:
        gx, gy, m = ground_point(seed.x, seed.y, seed.z, cam)
        reach = max(seed.a, seed.c) * m * (1.0 + abs(seed.z) / max(cam[2], 1.0)) * 1.6 + 2.0 / s
        tilt_reach = math.hypot(gx - cam[0], gy - cam[1]) / cam[2] * seed.c * m
        reach += tilt_reach
        c0, r0 = frame.to_px(gx - reach, gy + reach)
        c1, r1 = frame.to_px(gx + reach, gy - reach)
        x0, y0 = max(int(c0), 0), max(int(r0), 0)
        x1, y1 = min(math.ceil(c1) + 1, w), min(math.ceil(r1) + 1, h)
        if x1 <= x0 or y1 <= y0:
            continue
        cols = np.arange(x0, x1, dtype=np.float64)[None, :] + 0.5
        rows = np.arange(y0, y1, dtype=np.float64)[:, None] + 0.5
        px_mm, py_mm = frame.to_mm(cols, rows)
        # ray from the camera through the ground point g: p(t) = C + t (g - C), t = 1 at g
        dx = np.broadcast_to(px_mm - cam[0], (y1 - y0, x1 - x0))
        dy = np.broadcast_to(py_mm - cam[1], (y1 - y0, x1 - x0))
        dz = -cam[2]
        ox, oy, oz = cam[0] - seed.x, cam[1] - seed.y, cam[2] - seed.z
        cy_, sy_ = math.cos(seed.yaw), math.sin(seed.yaw)
        # into the seed frame (rotate by -yaw, scale by the half-axes)
        lox, loy, loz = (ox * cy_ + oy * sy_) / seed.a, (-ox * sy_ + oy * cy_) / seed.b, oz / seed.c
        ldx, ldy, ldz = (dx * cy_ + dy * sy_) / seed.a, (-dx * sy_ + dy * cy_) / seed.b, dz / seed.c
        qa = ldx * ldx + ldy * ldy + ldz * ldz
        qb = 2.0 * (lox * ldx + loy * ldy + loz * ldz)
        qc = lox * lox + loy * loy + loz * loz - 1.0
        disc = qb * qb - 4.0 * qa * qc
        hit = disc > 0
        if not hit.any():
            continue
        sq = np.sqrt(np.maximum(disc, 0.0))
        t = (-qb - sq) / (2.0 * qa)
        qx, qy, qz = lox + t * ldx, loy + t * ldy, loz + t * ldz
        hit_z = seed.z + qz * seed.c
        visible = hit & (t < zbuf[y0:y1, x0:x1])
        visible &= (hit_z >= 0.0) | (pit_opening[y0:y1, x0:x1] > 0)
        if not visible.any():
            continue
        # normal of the ellipsoid: R S^-1 q
        nx_l, ny_l, nz = qx / seed.a, qy / seed.b, qz / seed.c
        nx, ny = nx_l * cy_ - ny_l * sy_, nx_l * sy_ + ny_l * cy_
        norm = np.sqrt(nx * nx + ny * ny + nz * nz) + 1e-9
        nx, ny, nz = nx / norm, ny / norm, nz / norm
        diffuse = np.maximum(nx * light[0] + ny * light[1] + nz * light[2], 0.0)
        vlen = np.sqrt(dx * dx + dy * dy + dz * dz)
        vx, vy, vz = -dx / vlen, -dy / vlen, -dz / vlen
        hx, hy, hz = vx + light[0], vy + light[1], vz + light[2]
        hlen = np.sqrt(hx * hx + hy * hy + hz * hz) + 1e-9
        ndoth = np.maximum((nx * hx + ny * hy + nz * hz) / hlen, 0.0)
        shininess = 12.0 + 60.0 * scene.seed_gloss
        spec = scene.seed_gloss * 0.9 * ndoth**shininess
        # lower seeds of a heap and the underside see less sky
        occl = 0.75 + 0.25 * np.clip(nz * 0.5 + 0.5, 0, 1)
        pattern = 1.0 + seed.mottle[2] * np.sin(9 * qx + seed.mottle[0]) * np.sin(7 * qy + seed.mottle[1])
        alpha = np.clip(disc / (4.0 * qa) * 0.5 * seed.b * m * s, 0.0, 1.0)
        alpha = np.where(visible, alpha, 0.0).astype(np.float32)[..., None]
        albedo = np.asarray(seed.rgb[::-1], dtype=np.float32)  # BGR
        lit = (ambient * occl + (1.0 - ambient) * diffuse)[..., None] * albedo * pattern[..., None]
        colour = lit * light_rgb[::-1] + spec[..., None] * light_rgb[::-1]
        patch = texture[y0:y1, x0:x1]
        patch[:] = patch * (1.0 - alpha) + colour.astype(np.float32) * alpha
        zb = zbuf[y0:y1, x0:x1]
        zb[visible] = t[visible]

