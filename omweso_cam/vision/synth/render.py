"""Render one photo-like frame of a board holding given counts, with exact ground truth.

`BoardRenderer` keeps what stays fixed while a game is filmed (board texture, table,
seed layout); `render_board` is the one-shot form for stills.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import cv2
import numpy as np

from omweso_cam.rules import board_notation
from omweso_cam.vision.synth import scenery, textures
from omweso_cam.vision.synth.geometry import BoardGeometry, Camera, look_at_camera
from omweso_cam.vision.synth.scene import Scene, light_direction
from omweso_cam.vision.synth.seeds import Layout, TextureFrame, build_layout, draw_seeds

#: Largest side of the board texture (px); the texture is drawn a bit finer than the image.
_MAX_TEXTURE_PX = 2000
#: Texture px per image px on the closest part of the board.
_TEXTURE_OVERSAMPLING = 1.05
#: A pit this much covered by the hand makes the frame ``occluded``.
OCCLUDED_PIT_FRACTION = 0.2

Point = tuple[float, float]


class PositionLike(Protocol):
    """What the renderer needs of a rules-engine `Position`."""

    @property
    def board(self) -> tuple[int, ...]: ...

    def notation(self) -> str: ...


@dataclass(frozen=True)
class Truth:
    """Ground truth of one rendered frame (pixels are in the final, distorted image).

    ``status``: ``ok``; ``occluded`` (a hand covers at least `OCCLUDED_PIT_FRACTION` of
    some pit); ``no_board``. ``corners_px``: TL (next to a4), TR (h4), BR (h1), BL (a1)
    of the board's top face, where its edges meet (outside the wood if corners are rounded). ``pit_centers_px``: the centre of every pit opening, image
    order. ``position``: the rules notation when a Position was rendered, else the
    ``R4/R3/R2/R1`` board part.
    """

    status: str
    position: str | None
    counts: tuple[int, ...] | None
    corners_px: tuple[Point, ...] | None
    pit_centers_px: tuple[Point, ...] | None
    pit_radius_px: tuple[float, ...] | None
    pit_occlusion: tuple[float, ...] | None
    hand_visible: bool
    image_size: tuple[int, int]
    in_hand: int = 0
    scene: dict[str, Any] = field(default_factory=dict, compare=False)

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict (points as [x, y] lists rounded to 0.01 px)."""

        def pts(p: tuple[Point, ...] | None) -> list[list[float]] | None:
            return None if p is None else [[round(x, 2), round(y, 2)] for x, y in p]

        return {
            "status": self.status,
            "position": self.position,
            "board": None if self.counts is None else board_notation(self.counts),
            "counts": None if self.counts is None else list(self.counts),
            "corners_px": pts(self.corners_px),
            "pit_centers_px": pts(self.pit_centers_px),
            "pit_radius_px": None if self.pit_radius_px is None else [round(r, 2) for r in self.pit_radius_px],
            "pit_occlusion": None if self.pit_occlusion is None else [round(o, 3) for o in self.pit_occlusion],
            "hand_visible": self.hand_visible,
            "in_hand": self.in_hand,
            "image_size": list(self.image_size),
            "scene": self.scene,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Truth:
        """Inverse of `to_json`."""

        def pts(p: list[list[float]] | None) -> tuple[Point, ...] | None:
            return None if p is None else tuple((float(x), float(y)) for x, y in p)

        return cls(
            status=str(data["status"]),
            position=data.get("position"),
            counts=None if data.get("counts") is None else tuple(int(c) for c in data["counts"]),
            corners_px=pts(data.get("corners_px")),
            pit_centers_px=pts(data.get("pit_centers_px")),
            pit_radius_px=None if data.get("pit_radius_px") is None else tuple(data["pit_radius_px"]),
            pit_occlusion=None if data.get("pit_occlusion") is None else tuple(data["pit_occlusion"]),
            hand_visible=bool(data.get("hand_visible", False)),
            image_size=(int(data["image_size"][0]), int(data["image_size"][1])),
            in_hand=int(data.get("in_hand", 0)),
            scene=dict(data.get("scene", {})),
        )


def counts_of(position: PositionLike | Sequence[int]) -> tuple[tuple[int, ...], str]:
    """(32 counts in image order, notation) of a Position or a plain 32-count sequence."""
    if hasattr(position, "board"):
        counts = tuple(int(c) for c in position.board)
        notation = str(position.notation()) if hasattr(position, "notation") else board_notation(counts)
    else:
        counts = tuple(int(c) for c in position)
        notation = board_notation(counts)
    if len(counts) != 32:
        raise ValueError(f"expected 32 pit counts, got {len(counts)}")
    if any(c < 0 for c in counts):
        raise ValueError(f"negative pit count in {counts}")
    return counts, notation


class BoardRenderer:
    """Renders frames of one scene; keeps the board texture, table and seed layout."""

    def __init__(self, scene: Scene) -> None:
        self.scene = scene
        self.board = BoardGeometry.from_scene(scene)
        self.camera = look_at_camera(scene, self.board)
        self.light = light_direction(scene)
        self._maps: dict[tuple[float, ...], tuple[np.ndarray, np.ndarray] | None] = {}
        self._base: tuple[np.ndarray, np.ndarray, np.ndarray, TextureFrame] | None = None
        self._table_cache: np.ndarray | None = None
        self.layout: Layout | None = None

    # ---- fixed parts -------------------------------------------------------------
    def _texture_frame(self) -> TextureFrame:
        b = self.board
        corners = b.corners_mm
        scale = 0.0
        for cx, cy in corners:
            p = self.camera.project(np.array([[cx, cy], [cx + 1.0, cy], [cx, cy + 1.0]]), distort=False)
            scale = max(scale, float(np.linalg.norm(p[1] - p[0])), float(np.linalg.norm(p[2] - p[0])))
        s = _TEXTURE_OVERSAMPLING * scale
        s = min(s, _MAX_TEXTURE_PX / (2 * b.half_width_mm))
        return TextureFrame(max(s, 0.2), b.half_width_mm, b.half_height_mm)

    def _base_texture(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, TextureFrame]:
        """(lit board texture without seeds, board alpha, pit-opening mask, frame)."""
        if self._base is not None:
            return self._base
        scene, b = self.scene, self.board
        frame = self._texture_frame()
        s = frame.px_per_mm
        w, h = math.ceil(2 * b.half_width_mm * s), math.ceil(2 * b.half_height_mm * s)
        rng = np.random.default_rng(scene.texture_seed)
        albedo = textures.wood(
            rng,
            (h, w),
            px_per_mm=s,
            base_rgb=scene.wood_rgb,
            grain_contrast=scene.grain_contrast,
            grain_period_mm=scene.grain_period_mm,
            waviness=scene.grain_waviness,
        )[..., ::-1].copy()  # BGR
        light = [float(v) for v in self.light]  # python floats keep float32 arrays float32
        light_bgr = np.asarray(scene.light_rgb[::-1], np.float32)
        amb = np.float32(scene.ambient)
        cam = self.camera.centre_mm
        cols = (np.arange(w, dtype=np.float32) + 0.5)[None, :]
        rows = (np.arange(h, dtype=np.float32) + 0.5)[:, None]
        gx, gy = frame.to_mm(cols, rows)
        # flat top: diffuse plus a varnish sheen that moves with the viewpoint
        vx, vy, vz = float(cam[0]) - gx, float(cam[1]) - gy, np.float32(cam[2])
        vlen = np.sqrt(vx * vx + vy * vy + vz * vz)
        hx, hy, hz = vx / vlen + light[0], vy / vlen + light[1], vz / vlen + light[2]
        hz_n = hz / np.sqrt(hx * hx + hy * hy + hz * hz)
        sheen = np.float32(scene.board_gloss) * hz_n ** np.float32(60.0)
        flat = amb + (1 - amb) * np.float32(max(light[2], 0.0))
        tex = albedo * flat * light_bgr + (sheen[..., None] * light_bgr).astype(np.float32)
        opening = np.zeros((h, w), np.uint8)
        self._draw_pits(tex, albedo, opening, frame, cam)
        # bevelled edge: a darker rim a few mm wide, rounded corners cut out by alpha
        alpha = np.zeros((h, w), np.uint8)
        outline = b.outline_mm(16)
        ocol, orow = frame.to_px(outline[:, 0], outline[:, 1])
        poly = np.round(np.stack([ocol, orow], 1) * 16).astype(np.int32)
        cv2.fillPoly(alpha, [poly], 255, cv2.LINE_AA, shift=4)
        edge = cv2.erode(alpha, np.ones((3, 3), np.uint8), iterations=max(1, int(3 * s)))
        edge_f = cv2.GaussianBlur((edge > 0).astype(np.float32), (0, 0), max(0.7, 1.5 * s))
        tex *= (0.78 + 0.22 * edge_f)[..., None]
        alpha_f = alpha.astype(np.float32) / 255.0
        tex *= alpha_f[..., None]  # premultiplied, so the warp blends edges correctly
        self._base = (tex.astype(np.float32), alpha_f, opening, frame)
        return self._base

    def _draw_pits(
        self, tex: np.ndarray, albedo: np.ndarray, opening: np.ndarray, frame: TextureFrame, cam_mm: np.ndarray
    ) -> None:
        scene, b = self.scene, self.board
        s = frame.px_per_mm
        light = [float(v) for v in self.light]  # python floats keep float32 arrays float32
        cam = tuple(float(v) for v in cam_mm)
        light_bgr = np.asarray(scene.light_rgb[::-1], np.float32)
        amb = scene.ambient
        rx, ry = b.pit_radius_x_mm, b.pit_radius_y_mm
        aspect = rx / ry
        rs = b.bowl_sphere_radius_mm()
        czs = -b.pit_depth_mm + rs  # sphere centre height
        h, w = tex.shape[:2]
        for i in range(32):
            cx, cy = (float(v) for v in b.pit_centres_mm[i])
            c0, r0 = frame.to_px(cx - rx - 2, cy + ry + 2)
            c1, r1 = frame.to_px(cx + rx + 2, cy - ry - 2)
            x0, y0, x1, y1 = max(int(c0), 0), max(int(r0), 0), min(int(c1) + 2, w), min(int(r1) + 2, h)
            cols = (np.arange(x0, x1, dtype=np.float32) + 0.5)[None, :]
            rows = (np.arange(y0, y1, dtype=np.float32) + 0.5)[:, None]
            gx, gy = frame.to_mm(cols, rows)
            gx, gy = (np.ascontiguousarray(a) for a in np.broadcast_arrays(gx, gy))
            lx, ly = gx - cx, gy - cy
            inside_n = (lx / rx) ** 2 + (ly / ry) ** 2
            # anti-aliased opening mask: 1 px transition
            edge_px = (1.0 - np.sqrt(inside_n)) * ry * s
            cover = np.clip(edge_px + 0.5, 0, 1).astype(np.float32)
            if not cover.any():
                continue
            # the surface point seen through g (the bowl is below the board plane)
            px_, py_ = gx.copy(), gy.copy()
            for _ in range(4):
                rho2 = ((px_ - cx) / aspect) ** 2 + (py_ - cy) ** 2
                z = np.minimum(czs - np.sqrt(np.maximum(rs * rs - rho2, 0.0)), 0.0)
                k = z / (cam[2] - z)
                px_ = gx - (px_ - cam[0]) * k
                py_ = gy - (py_ - cam[1]) * k
                # stay inside the rim (the near wall hides what lies beyond it)
                ex, ey = (px_ - cx) / rx, (py_ - cy) / ry
                e = np.sqrt(ex * ex + ey * ey)
                over = e > 0.999
                px_ = np.where(over, cx + (px_ - cx) / np.maximum(e, 1e-9) * 0.999, px_)
                py_ = np.where(over, cy + (py_ - cy) / np.maximum(e, 1e-9) * 0.999, py_)
            ux, uy = (px_ - cx) / aspect, py_ - cy
            rho2 = ux * ux + uy * uy
            root = np.sqrt(np.maximum(rs * rs - rho2, 1e-6))
            z = np.minimum(czs - root, 0.0)
            nx, ny, nz = -ux / aspect / rs, -uy / rs, root / rs
            nlen = np.sqrt(nx * nx + ny * ny + nz * nz)
            ndotl = (nx * light[0] + ny * light[1] + nz * light[2]) / nlen
            # shadow of the rim: the ray to the light leaves the sphere below the rim plane
            vdotl = ux * light[0] + uy * light[1] + (z - czs) * light[2]
            z_exit = z - 2.0 * vdotl * light[2]
            lit = np.clip(z_exit / 2.0 + 0.5, 0.0, 1.0) * np.clip(ndotl * 4.0, 0.0, 1.0)
            depth_frac = np.clip(-z / b.pit_depth_mm, 0, 1)
            ao = 1.0 - 0.35 * depth_frac**0.8
            shade = amb * ao + (1 - amb) * np.maximum(ndotl, 0.0) * lit
            # the pit shows the grain where the surface point really is
            sc, sr = frame.to_px(px_, py_)
            sc = np.clip(sc, 0, w - 1).astype(np.float32)
            sr = np.clip(sr, 0, h - 1).astype(np.float32)
            inner_albedo = cv2.remap(albedo, sc, sr, cv2.INTER_LINEAR)
            colour = inner_albedo * np.float32(scene.pit_tint) * shade[..., None].astype(np.float32) * light_bgr
            if scene.bowl_gloss > 0:  # the light mirrored in a varnished bowl, where the light reaches
                vx, vy, vz = cam[0] - px_, cam[1] - py_, cam[2] - z
                vlen = np.sqrt(vx * vx + vy * vy + vz * vz)
                hx, hy, hz = vx / vlen + light[0], vy / vlen + light[1], vz / vlen + light[2]
                ndoth = (nx * hx + ny * hy + nz * hz) / (nlen * np.sqrt(hx * hx + hy * hy + hz * hz))
                spec = np.float32(scene.bowl_gloss) * np.maximum(ndoth, 0.0) ** np.float32(scene.bowl_shininess) * lit
                colour = colour + spec[..., None].astype(np.float32) * light_bgr
            a = cover[..., None]
            patch = tex[y0:y1, x0:x1]
            patch[:] = patch * (1 - a) + colour * a
            opening[y0:y1, x0:x1] = np.maximum(opening[y0:y1, x0:x1], (cover > 0.5).astype(np.uint8))

    def _nominal_table(self) -> np.ndarray:
        """The lit table for the nominal camera (cached)."""
        if self._table_cache is None:
            rng = np.random.default_rng(self.scene.texture_seed + 1)
            table = scenery.render_table(self.scene, self.camera, -self.board.thickness_mm, rng)
            amb = self.scene.ambient
            flat = amb + (1 - amb) * max(self.light[2], 0.0)
            self._table_cache = table * np.float32(flat) * np.asarray(self.scene.light_rgb[::-1], np.float32)
        return self._table_cache

    def _undistort_maps(self, camera: Camera) -> tuple[np.ndarray, np.ndarray] | None:
        key = (camera.focal_px, camera.k1, camera.k2)
        if key not in self._maps:
            self._maps[key] = camera.undistort_maps()
        return self._maps[key]

    # ---- one frame ---------------------------------------------------------------
    def render(
        self,
        position: PositionLike | Sequence[int] | None,
        rng: np.random.Generator,
        *,
        hand: bool | None = None,
        hand_target_mm: tuple[float, float] | None = None,
        hand_from: str | None = None,
        hand_motion_blur_px: float | None = None,
        in_hand: int = 0,
        jitter: np.ndarray | None = None,
        keep_layout: bool = True,
    ) -> tuple[np.ndarray, Truth]:
        """One frame: ``position`` (None = no board on the table) -> (BGR uint8 image, truth).

        With ``keep_layout`` the seeds of pits whose count did not change since the last
        frame stay exactly where they were (a filmed game); seeds are only added or lifted.
        """
        scene = self.scene
        show_hand = scene.hand if hand is None else hand
        hand_scene = scene
        if hand_from is not None:
            hand_scene = hand_scene.with_(hand_from=hand_from)
        if hand_motion_blur_px is not None:
            hand_scene = hand_scene.with_(hand_motion_blur_px=hand_motion_blur_px)
        camera = self.camera if jitter is None else look_at_camera(scene, self.board, jitter=jitter)
        w, h = scene.image_size_px
        light_rng = np.random.default_rng(scene.texture_seed + 2)
        if position is None or not scene.has_board:
            image = self._table_for(camera).copy()
            alpha = None
            if show_hand:
                alpha = scenery.draw_hand(image, self.board, camera, hand_scene, self.light, rng, hand_target_mm)
            scenery.apply_light(image, scene, light_rng)
            out = scenery.apply_camera(image, scene, camera, rng, self._undistort_maps(camera))
            out = scenery.jpeg_roundtrip(out, scene.jpeg_quality)
            visible = bool(alpha is not None and alpha.max() > 0.5)
            truth = Truth("no_board", None, None, None, None, None, None, visible, (w, h), 0, scene.to_json())
            return out, truth

        counts, notation = counts_of(position)
        previous = self.layout if keep_layout else None
        self.layout = build_layout(counts, self.board, scene, rng, previous)
        base, alpha, opening, frame = self._base_texture()
        tex = base.copy()
        draw_seeds(tex, self.layout, frame, opening, self.camera.centre_mm, self.light, scene)

        image = self._table_for(camera).copy()
        side_bgr = textures.rgb01(scene.wood_rgb)[::-1] * np.float32(0.72)
        scenery.draw_board_body(image, self.board, camera, scene, side_bgr, self.light)
        tex_to_mm = np.array(
            [[1 / frame.px_per_mm, 0, -frame.half_width_mm], [0, -1 / frame.px_per_mm, frame.half_height_mm], [0, 0, 1]]
        )
        # pixel centres: texture pixel (c, r) covers [c, c+1); warpPerspective samples at integers
        half = np.array([[1, 0, 0.5], [0, 1, 0.5], [0, 0, 1]])
        image_from_tex = camera.homography_from_board() @ tex_to_mm @ half
        rgba = np.dstack([tex, alpha])
        warped = cv2.warpPerspective(rgba, image_from_tex, (w, h), flags=cv2.INTER_LINEAR)
        walpha = warped[..., 3:4]
        image = image * (1 - walpha) + warped[..., :3]

        hand_alpha = None
        if show_hand:
            hand_alpha = scenery.draw_hand(image, self.board, camera, hand_scene, self.light, rng, hand_target_mm)
        scenery.apply_light(image, scene, light_rng)

        centres_u = camera.project(self.board.pit_centres_mm, distort=False)
        corners = camera.project(self.board.corners_mm)
        centres = camera.distort(centres_u)
        radii = self._pit_radii(camera)
        occlusion = _occlusion(hand_alpha, centres_u, radii) if hand_alpha is not None else (0.0,) * 32
        out = scenery.apply_camera(image.astype(np.float32), scene, camera, rng, self._undistort_maps(camera))
        out = scenery.jpeg_roundtrip(out, scene.jpeg_quality)
        status = "occluded" if max(occlusion) >= OCCLUDED_PIT_FRACTION else "ok"
        truth = Truth(
            status=status,
            position=notation,
            counts=counts,
            corners_px=tuple((float(x), float(y)) for x, y in corners),
            pit_centers_px=tuple((float(x), float(y)) for x, y in centres),
            pit_radius_px=radii,
            pit_occlusion=occlusion,
            hand_visible=bool(hand_alpha is not None and hand_alpha.max() > 0.5),
            image_size=(w, h),
            in_hand=in_hand,
            scene=scene.to_json(),
        )
        return out, truth

    def _table_for(self, camera: Camera) -> np.ndarray:
        """The table as ``camera`` sees it: the cached table, re-projected for a shaken camera."""
        table = self._nominal_table()
        if camera is self.camera:
            return table
        z = -self.board.thickness_mm
        moved = scenery.table_homography(camera, z) @ np.linalg.inv(scenery.table_homography(self.camera, z))
        w, h = self.scene.image_size_px
        return np.asarray(cv2.warpPerspective(table, moved, (w, h), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REFLECT))

    def _pit_radii(self, camera: Camera) -> tuple[float, ...]:
        """Mean projected radius (px) of every pit opening."""
        b = self.board
        angles = np.linspace(0, 2 * math.pi, 8, endpoint=False)
        ring = np.stack([np.cos(angles) * b.pit_radius_x_mm, np.sin(angles) * b.pit_radius_y_mm], 1)
        radii = []
        for c in b.pit_centres_mm:
            pts = camera.project(c + ring)
            centre = camera.project(c[None])[0]
            radii.append(float(np.mean(np.linalg.norm(pts - centre, axis=1))))
        return tuple(radii)


def _occlusion(hand_alpha: np.ndarray, centres: np.ndarray, radii: tuple[float, ...]) -> tuple[float, ...]:
    """Fraction of every pit's disc covered by the hand."""
    h, w = hand_alpha.shape
    out = []
    for (x, y), r in zip(centres, radii, strict=True):
        x0, x1 = int(max(x - r, 0)), int(min(x + r + 1, w))
        y0, y1 = int(max(y - r, 0)), int(min(y + r + 1, h))
        if x1 <= x0 or y1 <= y0:
            out.append(0.0)
            continue
        yy, xx = np.mgrid[y0:y1, x0:x1]
        disc = (xx - x) ** 2 + (yy - y) ** 2 <= r * r
        out.append(float(hand_alpha[y0:y1, x0:x1][disc].mean()) if disc.any() else 0.0)
    return tuple(out)


def render_board(
    position: PositionLike | Sequence[int] | None,
    *,
    scene: Scene,
    rng: np.random.Generator,
) -> tuple[np.ndarray, Truth]:
    """A photo-like BGR image of a board holding ``position`` (a Position or 32 counts).

    ``position=None`` (or ``scene.has_board=False``) renders the table without a board
    (truth status ``no_board``). Deterministic given ``scene`` and the state of ``rng``.
    """
    return BoardRenderer(scene).render(position, rng, keep_layout=False)
