"""Board geometry in millimetres and the pinhole camera (with lens distortion) that sees it.

The same `BoardGeometry` and `Camera` draw the picture and produce the ground truth,
so the truth's corners and pit centres are exactly where the renderer put them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import cv2
import numpy as np

from omweso_cam.vision.synth.scene import Scene

#: Pits per rank and ranks on the board.
FILES = 8
RANKS = 4


@dataclass(frozen=True)
class BoardGeometry:
    """Top face of the board in board coordinates (mm, origin at the centre, y North)."""

    pit_centres_mm: np.ndarray  # (32, 2), image order
    pit_radius_x_mm: float
    pit_radius_y_mm: float
    pit_depth_mm: float
    half_width_mm: float
    half_height_mm: float
    corner_radius_mm: float
    thickness_mm: float

    @classmethod
    def from_scene(cls, scene: Scene) -> BoardGeometry:
        """The board `scene` describes."""
        ry = scene.pit_diameter_mm / 2.0
        rx = ry * scene.pit_aspect
        centres = np.zeros((32, 2))
        for i in range(32):
            file_index, rank = i % FILES, RANKS - i // FILES
            row = rank - 1  # 0 = South outer
            gap = scene.centre_gap_mm / 2.0 * (1 if row >= 2 else -1)
            centres[i] = ((file_index - 3.5) * scene.pit_pitch_x_mm, (row - 1.5) * scene.pit_pitch_y_mm + gap)
        if scene.pit_jitter_mm > 0:
            # off-lattice pits, never closer to a neighbour than a fifth of the free wood
            free = min(scene.pit_pitch_x_mm - 2 * rx, scene.pit_pitch_y_mm - 2 * ry)
            sigma = min(scene.pit_jitter_mm, free / 5.0)
            shift = np.random.default_rng(scene.texture_seed + 3).normal(0.0, sigma, (32, 2))
            centres += np.clip(shift, -2.0 * sigma, 2.0 * sigma)
        half_w = 3.5 * scene.pit_pitch_x_mm + rx + scene.margin_x_mm
        half_h = 1.5 * scene.pit_pitch_y_mm + scene.centre_gap_mm / 2.0 + ry + scene.margin_y_mm
        corner = min(scene.corner_radius_mm, 0.9 * min(scene.margin_x_mm + rx, scene.margin_y_mm + ry))
        return cls(centres, rx, ry, scene.pit_depth_mm, half_w, half_h, corner, scene.board_thickness_mm)

    @property
    def corners_mm(self) -> np.ndarray:
        """Sharp corners of the top face, TL (next to a4), TR (h4), BR (h1), BL (a1)."""
        w, h = self.half_width_mm, self.half_height_mm
        return np.array([(-w, h), (w, h), (w, -h), (-w, -h)], dtype=float)

    def outline_mm(self, points_per_corner: int = 10) -> np.ndarray:
        """Closed outline of the (rounded) top face, counter-clockwise, (N, 2)."""
        w, h, r = self.half_width_mm, self.half_height_mm, self.corner_radius_mm
        if r <= 0.5:
            return self.corners_mm[::-1].copy()
        pts = []
        for cx, cy, start in ((w - r, h - r, 0.0), (-w + r, h - r, 90.0), (-w + r, -h + r, 180.0), (w - r, -h + r, 270.0)):
            for k in range(points_per_corner + 1):
                a = math.radians(start + 90.0 * k / points_per_corner)
                pts.append((cx + r * math.cos(a), cy + r * math.sin(a)))
        return np.array(pts)

    def bowl_sphere_radius_mm(self) -> float:
        """Radius of the spherical bowl through the rim (mean radius) and the pit floor."""
        r = (self.pit_radius_x_mm + self.pit_radius_y_mm) / 2.0
        return (r * r + self.pit_depth_mm**2) / (2.0 * self.pit_depth_mm)


@dataclass(frozen=True)
class Camera:
    """Pinhole camera: ``K [R | t]`` plus radial distortion about the image centre."""

    K: np.ndarray  # (3, 3)
    R: np.ndarray  # (3, 3) world -> camera
    t: np.ndarray  # (3,)
    image_size_px: tuple[int, int]
    k1: float = 0.0
    k2: float = 0.0

    @property
    def centre_mm(self) -> np.ndarray:
        """Camera centre in board coordinates."""
        return np.asarray(-self.R.T @ self.t)

    @property
    def focal_px(self) -> float:
        return float(self.K[0, 0])

    def project(self, points: np.ndarray, *, distort: bool = True) -> np.ndarray:
        """Board points (N, 3) or (N, 2) at z=0 -> image pixels (N, 2)."""
        pts = np.asarray(points, dtype=float)
        if pts.ndim != 2 or pts.shape[1] not in (2, 3):
            raise ValueError(f"expected (N, 2) or (N, 3) points, got shape {pts.shape}")
        if pts.shape[1] == 2:
            pts = np.hstack([pts, np.zeros((len(pts), 1))])
        cam = pts @ self.R.T + self.t
        z = np.maximum(cam[:, 2], 1e-6)
        uv = np.stack([cam[:, 0] / z, cam[:, 1] / z], axis=1) * self.focal_px + self.K[:2, 2]
        return self.distort(uv) if distort else uv

    def homography_from_board(self) -> np.ndarray:
        """Image (undistorted) from board-plane (x, y, 1) in mm, 3x3."""
        h = self.K @ np.column_stack([self.R[:, 0], self.R[:, 1], self.t])
        return np.asarray(h / h[2, 2])

    def _centre(self) -> np.ndarray:
        w, h = self.image_size_px
        return np.array([(w - 1) / 2.0, (h - 1) / 2.0])

    def distort(self, uv: np.ndarray) -> np.ndarray:
        """Undistorted pixels -> distorted pixels (Brown radial model, normalised by focal)."""
        if self.k1 == 0.0 and self.k2 == 0.0:
            return uv
        c = self._centre()
        d = (uv - c) / self.focal_px
        r2 = np.sum(d * d, axis=-1, keepdims=True)
        return np.asarray(c + (uv - c) * (1.0 + self.k1 * r2 + self.k2 * r2 * r2))

    def undistort_maps(self) -> tuple[np.ndarray, np.ndarray] | None:
        """``cv2.remap`` maps giving, per distorted output pixel, the undistorted source pixel."""
        if self.k1 == 0.0 and self.k2 == 0.0:
            return None
        w, h = self.image_size_px
        c = self._centre()
        # the maps are smooth: solve on a grid every 4 px and interpolate
        step = 4
        gw, gh = w // step + 2, h // step + 2
        # grid node i sits at pixel (i + 0.5) * step - 0.5, which is where cv2.resize puts it
        xs, ys = np.meshgrid(
            (np.arange(gw, dtype=np.float32) + 0.5) * step - 0.5, (np.arange(gh, dtype=np.float32) + 0.5) * step - 0.5
        )
        dx = (xs - np.float32(c[0])) / np.float32(self.focal_px)
        dy = (ys - np.float32(c[1])) / np.float32(self.focal_px)
        ux, uy = dx.copy(), dy.copy()
        for _ in range(6):  # fixed point of u = d / (1 + k1 r_u^2 + k2 r_u^4)
            r2 = ux * ux + uy * uy
            factor = 1.0 + self.k1 * r2 + self.k2 * r2 * r2
            ux, uy = dx / factor, dy / factor
        f = np.float32(self.focal_px)
        mx = (ux * f + np.float32(c[0])).astype(np.float32)
        my = (uy * f + np.float32(c[1])).astype(np.float32)
        full_w, full_h = gw * step, gh * step
        mx = cv2.resize(mx, (full_w, full_h), interpolation=cv2.INTER_LINEAR)
        my = cv2.resize(my, (full_w, full_h), interpolation=cv2.INTER_LINEAR)
        return np.ascontiguousarray(mx[:h, :w]), np.ascontiguousarray(my[:h, :w])


def look_at_camera(
    scene: Scene,
    board: BoardGeometry,
    *,
    jitter: np.ndarray | None = None,
) -> Camera:
    """Place the camera of ``scene`` so the board fills ``board_fill`` of the frame.

    ``jitter`` (6 values: tilt, azimuth, roll in degrees; x, y shift in px; scale) nudges
    the pose slightly, for camera shake between frames of a sequence.
    """
    j = np.zeros(6) if jitter is None else np.asarray(jitter, dtype=float)
    w, h = scene.image_size_px
    focal = (w / 2.0) / math.tan(math.radians(scene.fov_deg) / 2.0)
    theta = math.radians(scene.tilt_deg + j[0])
    phi = math.radians(scene.azimuth_deg + j[1])
    roll = math.radians(scene.roll_deg + j[2])
    toward_camera = np.array([math.sin(theta) * math.sin(phi), -math.sin(theta) * math.cos(phi), math.cos(theta)])
    forward = -toward_camera
    down_hint = np.array([math.sin(phi), -math.cos(phi), 0.0])
    y_axis = down_hint - np.dot(down_hint, forward) * forward
    y_axis /= np.linalg.norm(y_axis)
    x_axis = np.cross(y_axis, forward)
    # in-plane roll about the optical axis
    xr = math.cos(roll) * x_axis + math.sin(roll) * y_axis
    yr = -math.sin(roll) * x_axis + math.cos(roll) * y_axis
    R = np.stack([xr, yr, forward])

    outline = board.outline_mm(4)
    box = np.vstack(
        [
            np.hstack([outline, np.zeros((len(outline), 1))]),
            np.hstack([outline, np.full((len(outline), 1), -board.thickness_mm)]),
        ]
    )
    fill = scene.board_fill * (1.0 + j[5])
    distance = focal * 2.0 * board.half_width_mm / (fill * w)
    K = np.array([[focal, 0.0, (w - 1) / 2.0], [0.0, focal, (h - 1) / 2.0], [0.0, 0.0, 1.0]])
    uv = np.zeros((len(box), 2))
    for _ in range(6):
        centre = toward_camera * distance
        t = -R @ centre
        cam = Camera(K, R, t, (w, h))
        uv = cam.project(box, distort=False)
        span = max(np.ptp(uv[:, 0]) / w, np.ptp(uv[:, 1]) / h)
        distance *= span / fill
    # move the board off centre within the free margin (a shift of the principal point)
    lo, hi = uv.min(axis=0), uv.max(axis=0)
    mid = (lo + hi) / 2.0
    free = np.maximum(np.array([w, h]) - (hi - lo), 0.0) / 2.0 * 0.9
    target = np.array([w / 2.0, h / 2.0]) + np.array([scene.offset_x, scene.offset_y]) * free + j[3:5]
    K2 = K.copy()
    K2[:2, 2] += target - mid
    return Camera(K2, R, t, (w, h), scene.distortion_k1, scene.distortion_k2)
