"""Stability: is the board still, is something moving, is a hand over it? (every frame, first stage).

Cheap by design (< 3 ms on a 1280x720 frame): the frame is shrunk to a few
thousand pixels, compared with the previous frame (motion) and with the last
stable frame (what changed), and skin-coloured pixels among the changed ones
mark a hand. "stable" needs ``stable_frames`` quiet frames in a row.
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

STABLE = "stable"
MOVING = "moving"
HAND = "hand"


@dataclass(frozen=True)
class StabilityConfig:
    """Thresholds of the stability check."""

    work_width_px: int = 160  # frames are shrunk to this width
    motion_threshold_levels: int = 12  # grey-level change (0..255) that counts as a changed pixel
    moving_min_frac: float = 0.002  # share of changed pixels (vs the previous frame) that means motion
    hand_min_frac: float = 0.03  # share of skin-coloured changed pixels that means a hand
    stable_frames: int = 3  # quiet frames in a row before "stable"
    skin_cr_range: tuple[int, int] = (135, 180)  # YCrCb skin box, widely used for all skin tones
    skin_cb_range: tuple[int, int] = (80, 135)
    skin_min_luma: int = 40


class StabilityMonitor:
    """Feed every frame to :meth:`update`; it answers "stable", "moving" or "hand"."""

    def __init__(self, config: StabilityConfig = StabilityConfig()) -> None:
        self.config = config
        self._region: np.ndarray | None = None
        self._region_px: np.ndarray | None = None
        self._region_size: tuple[int, int] | None = None
        self._previous: np.ndarray | None = None
        self._reference: np.ndarray | None = None  # last stable frame (grey)
        self._quiet = 0
        self.last_motion_frac = 0.0
        self.last_hand_frac = 0.0

    def set_region(self, corners_px: np.ndarray | None, image_size: tuple[int, int] | None = None) -> None:
        """Watch only the board quad (TL,TR,BR,BL in frame pixels of ``image_size`` (w, h)); None = whole frame."""
        self._region_px = None if corners_px is None else np.asarray(corners_px, np.float64)
        self._region = None
        self._region_size = image_size

    def reset(self) -> None:
        self._previous = self._reference = None
        self._quiet = 0

    def _mask(self, shape: tuple[int, int], frame_size: tuple[int, int]) -> np.ndarray | None:
        if self._region_px is None:
            return None
        if self._region is None or self._region.shape != shape:
            h, w = shape
            fw, fh = self._region_size or frame_size
            pts = self._region_px * [w / fw, h / fh]
            mask = np.zeros(shape, np.uint8)
            cv2.fillConvexPoly(mask, np.round(pts).astype(np.int32), 1)
            self._region = mask.astype(bool)
        return self._region

    def update(self, image_bgr: np.ndarray) -> str:
        """Classify one frame (BGR uint8, any size)."""
        cfg = self.config
        h, w = image_bgr.shape[:2]
        sw = min(cfg.work_width_px, w)
        sh = max(1, round(h * sw / w))
        # Two-step shrink: a cheap stride then INTER_AREA, both fast on large frames.
        step = max(1, w // (4 * sw))
        small = cv2.resize(image_bgr[::step, ::step], (sw, sh), interpolation=cv2.INTER_AREA)
        if small.ndim == 2:
            small = cv2.cvtColor(small, cv2.COLOR_GRAY2BGR)
        ycrcb = cv2.cvtColor(small, cv2.COLOR_BGR2YCrCb)
        grey = ycrcb[..., 0].astype(np.int16)
        region = self._mask((sh, sw), (w, h))
        n = float(region.sum()) if region is not None else float(sh * sw)
        if n == 0:
            region, n = None, float(sh * sw)

        def frac(mask: np.ndarray) -> float:
            return float((mask & region).sum() if region is not None else mask.sum()) / n

        previous, self._previous = self._previous, grey
        if previous is None or previous.shape != grey.shape:
            self._quiet = 0
            self._reference = None
            return MOVING
        motion = np.abs(grey - previous) > cfg.motion_threshold_levels
        self.last_motion_frac = frac(motion)
        skin = ((ycrcb[..., 1] >= cfg.skin_cr_range[0]) & (ycrcb[..., 1] <= cfg.skin_cr_range[1])
                & (ycrcb[..., 2] >= cfg.skin_cb_range[0]) & (ycrcb[..., 2] <= cfg.skin_cb_range[1])
                & (ycrcb[..., 0] >= cfg.skin_min_luma))
        changed = motion
        if self._reference is not None and self._reference.shape == grey.shape:
            changed = motion | (np.abs(grey - self._reference) > 2 * cfg.motion_threshold_levels)
        self.last_hand_frac = frac(skin & changed)
        if self.last_hand_frac >= cfg.hand_min_frac:
            self._quiet = 0
            return HAND
        if self.last_motion_frac >= cfg.moving_min_frac:
            self._quiet = 0
            return MOVING
        self._quiet += 1
        if self._quiet >= cfg.stable_frames:
            self._reference = grey
            return STABLE
        return MOVING
