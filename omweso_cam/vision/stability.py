"""Stability: is the board still, is something moving, is a hand over it? (every frame, first stage).

Cheap by design (well under 3 ms on a 1280x720 frame) and robust to what a real
webcam does while nothing happens on the board:

* **sensor / compression noise** - the frame (once the board is known, the board and a
  margin around it) is shrunk to about a hundred pixels wide (each small pixel averages
  dozens of camera pixels) and slightly blurred, and
  the change threshold grows with the noise of the current frame pair (a robust
  sigma from the median absolute difference, so a hand covering part of the board
  does not inflate it);
* **small camera shake** - a small pixel counts as changed only when it leaves the
  range (min..max) of its 3x3 neighbourhood in the other frame, both ways round, so
  a shift of up to one small pixel (about 1% of the frame width) changes nothing;
* **exposure drift** - the median difference (a global brightness change) is removed.

A **hand** is a large skin-coloured region that changed: skin-coloured by a broad
YCrCb skin model (all skin tones; no colour of any particular board or renderer)
among the pixels that differ from the previous frame or from the last stable frame,
so a wooden board that happens to be skin-coloured never counts, and a hand held
still over the board still does. After a hand, the seeds get ``settle_frames``
more quiet frames to settle before "stable"; "stable" otherwise needs
``stable_frames`` quiet frames in a row.
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
    """Thresholds of the stability check (levels are grey levels 0..255 of the shrunk frame)."""

    work_width_px: int = 96  # frames are shrunk to this width (about 1% of the width per pixel)
    motion_threshold_levels: int = 10  # least change beyond the neighbourhood range that counts
    noise_sigmas: float = 5.0  # ... or this many robust noise sigmas of the frame pair, if larger
    moving_min_frac: float = 0.002  # share of changed pixels (vs the previous frame) that means motion
    hand_min_frac: float = 0.015  # share of skin-coloured changed pixels that means a hand (of the region)
    stable_frames: int = 3  # quiet frames in a row before "stable"
    settle_frames: int = 0  # extra quiet frames after a hand, for seeds to come to rest
    skin_cr_range: tuple[int, int] = (135, 180)  # YCrCb skin box, widely used for all skin tones
    skin_cb_range: tuple[int, int] = (80, 135)
    skin_min_luma: int = 40
    window_margin: float = 0.25  # with a board to watch: the frame is cut to it plus this share of its size each side


class StabilityMonitor:
    """Feed every frame to :meth:`update`; it answers "stable", "moving" or "hand".

    Diagnostics of the last frame: :attr:`last_motion_frac`, :attr:`last_hand_frac`,
    :attr:`last_threshold` (levels).
    """

    def __init__(self, config: StabilityConfig = StabilityConfig()) -> None:
        self.config = config
        self._region: np.ndarray | None = None
        self._region_px: np.ndarray | None = None
        self._region_size: tuple[int, int] | None = None
        self._window_px: tuple[int, int, int, int] | None = None
        self._previous: np.ndarray | None = None
        self._reference: tuple[np.ndarray, np.ndarray] | None = None  # last stable frame: small grey, Cr and Cb
        # The frames themselves, to look at them again through a new window.
        self._previous_frame: np.ndarray | None = None
        self._reference_frame: np.ndarray | None = None
        # The last stable frame of each of the last rest periods (newest last; see update).
        self._rests: list[np.ndarray] = []
        self._was_stable = False
        self._quiet = 0
        self._needed = config.stable_frames
        self.last_motion_frac = 0.0
        self.last_hand_frac = 0.0
        self.last_threshold = 0.0

    def set_region(self, corners_px: np.ndarray | None, image_size: tuple[int, int] | None = None) -> None:
        """Watch only the board quad (TL,TR,BR,BL in frame pixels of ``image_size`` (w, h)); None = whole frame."""
        self._region_px = None if corners_px is None else np.asarray(corners_px, np.float64)
        self._region = None
        self._region_size = image_size

    def reset(self) -> None:
        """Forget the frames seen (the next frame starts a new quiet run)."""
        self._previous = self._reference = self._previous_frame = self._reference_frame = None
        self._rests = []
        self._was_stable = False
        self._quiet = 0
        self._needed = self.config.stable_frames

    def _window(self, frame_size: tuple[int, int]) -> tuple[int, int, int, int]:
        """The part of the frame watched (x0, y0, x1, y1): the board and a margin around it.

        Shrunk to ``work_width_px`` wide, a board small in the frame would be a few dozen
        small pixels across, pits two or three apart, and an arm reaching over it hidden
        in the 3x3 shake tolerance; the window makes the board most of the work width
        however far the camera is. It moves only when the board leaves it (a read's
        corners differ by a pixel or two each time); the previous and the last stable
        frame are then looked at again through the new window, so no still run is broken.
        """
        fw, fh = frame_size
        window = self._window_px
        pts = self._region_in_frame(frame_size)
        if pts is None:
            window = (0, 0, fw, fh)
        else:
            (x0, y0), (x1, y1) = pts.min(axis=0), pts.max(axis=0)
            mx, my = self.config.window_margin * (x1 - x0), self.config.window_margin * (y1 - y0)
            want = (max(0, int(x0 - mx)), max(0, int(y0 - my)),
                    min(fw, int(np.ceil(x1 + mx))), min(fh, int(np.ceil(y1 + my))))
            if want[2] - want[0] < 8 or want[3] - want[1] < 8:  # a board (nearly) out of the frame
                want = (0, 0, fw, fh)
            # The window kept holds the board and is not much bigger than the one wanted
            # (the whole frame, before the board was found, is replaced).
            if (window is None or not (window[0] <= x0 and window[1] <= y0 and x1 <= window[2] and y1 <= window[3])
                    or window[2] - window[0] > 1.2 * (want[2] - want[0])
                    or window[3] - window[1] > 1.2 * (want[3] - want[1])):
                window = want
        if window != self._window_px:  # the frames seen so far, looked at through the new window
            self._window_px = window
            self._region = None
            if self._previous_frame is not None:
                self._previous = self._look(self._previous_frame, window)[1]
            if self._reference_frame is not None:
                self._reference = _reference_of(*self._look(self._reference_frame, window))
        return window

    def _region_in_frame(self, frame_size: tuple[int, int]) -> np.ndarray | None:
        """The watched board's corners in pixels of a ``frame_size`` frame, or None (whole frame)."""
        if self._region_px is None:
            return None
        rw, rh = self._region_size or frame_size
        return self._region_px * [frame_size[0] / rw, frame_size[1] / rh]

    def _look(self, image_bgr: np.ndarray, window: tuple[int, int, int, int]) -> tuple[np.ndarray, np.ndarray]:
        """The window of a frame shrunk: YCrCb, and its grey (luma) plane slightly blurred."""
        small = self._shrink(image_bgr[window[1]:window[3], window[0]:window[2]])
        ycrcb = cv2.cvtColor(small, cv2.COLOR_BGR2YCrCb)
        return ycrcb, cv2.GaussianBlur(ycrcb[..., 0].astype(np.float32), (3, 3), 0)

    def _mask(self, shape: tuple[int, int], frame_size: tuple[int, int],
              window: tuple[int, int, int, int]) -> np.ndarray | None:
        corners = self._region_in_frame(frame_size)
        if corners is None:
            return None
        if self._region is None or self._region.shape != shape:
            h, w = shape
            x0, y0, x1, y1 = window
            pts = (corners - [x0, y0]) * [w / (x1 - x0), h / (y1 - y0)]
            mask = np.zeros(shape, np.uint8)
            cv2.fillConvexPoly(mask, np.round(pts).astype(np.int32), 1)
            self._region = mask.astype(bool)
        return self._region

    def _shrink(self, image_bgr: np.ndarray) -> np.ndarray:
        """The frame at ``work_width_px`` wide, each pixel the mean of its block (BGR uint8)."""
        h, w = image_bgr.shape[:2]
        sw = min(self.config.work_width_px, w)
        sh = max(1, round(h * sw / w))
        # Bilinear to 4x the work size (each sample is the mean of a 2x2 patch when shrinking
        # a lot), then exact 4x4 block means: each small pixel averages dozens of camera pixels
        # (noise down ~8x) for a fraction of a millisecond even on 1080p.
        if w > 4 * sw:
            image_bgr = cv2.resize(image_bgr, (4 * sw, 4 * sh), interpolation=cv2.INTER_LINEAR)
        small = cv2.resize(image_bgr, (sw, sh), interpolation=cv2.INTER_AREA)
        if small.ndim == 2:
            small = cv2.cvtColor(small, cv2.COLOR_GRAY2BGR)
        return small

    def _changed(self, grey: np.ndarray, other: np.ndarray, region: np.ndarray | None,
                 min_levels: float) -> np.ndarray:
        """Pixels of ``grey`` outside the 3x3 range of ``other`` (and vice versa) by more than the noise."""
        diff = grey - other
        values = diff[region] if region is not None else diff
        offset = float(np.median(values)) if values.size else 0.0  # global exposure change
        sigma = 1.4826 * float(np.median(np.abs(values - offset))) if values.size else 0.0
        threshold = max(min_levels, self.config.noise_sigmas * sigma)
        self.last_threshold = threshold
        kernel = np.ones((3, 3), np.uint8)
        grey = grey - offset
        other_hi, other_lo = cv2.dilate(other, kernel), cv2.erode(other, kernel)
        grey_hi, grey_lo = cv2.dilate(grey, kernel), cv2.erode(grey, kernel)
        return ((grey > other_hi + threshold) | (grey < other_lo - threshold)
                | (other > grey_hi + threshold) | (other < grey_lo - threshold))

    def update(self, image_bgr: np.ndarray) -> str:
        """Classify one frame (BGR uint8, any size). The frame is kept, not copied (see
        :meth:`_window`): a caller must not write into a frame it has passed here."""
        state = self._update(image_bgr)
        if state != STABLE and self._was_stable and self._reference_frame is not None:
            self._rests = [*self._rests[-1:], self._reference_frame]  # a rest period ends
        self._was_stable = state == STABLE
        return state

    def _update(self, image_bgr: np.ndarray) -> str:
        cfg = self.config
        h, w = image_bgr.shape[:2]
        window = self._window((w, h))
        ycrcb, grey = self._look(image_bgr, window)
        sh, sw = grey.shape[:2]
        region = self._mask((sh, sw), (w, h), window)
        n = float(region.sum()) if region is not None else float(sh * sw)
        if n == 0:
            region, n = None, float(sh * sw)

        def frac(mask: np.ndarray) -> float:
            return float((mask & region).sum() if region is not None else mask.sum()) / n

        previous, self._previous = self._previous, grey
        self._previous_frame = image_bgr
        if previous is None or previous.shape != grey.shape:
            self._quiet = 0
            self._reference = None
            return MOVING
        motion = self._changed(grey, previous, region, cfg.motion_threshold_levels)
        threshold = self.last_threshold
        self.last_motion_frac = frac(motion)
        skin = ((ycrcb[..., 1] >= cfg.skin_cr_range[0]) & (ycrcb[..., 1] <= cfg.skin_cr_range[1])
                & (ycrcb[..., 2] >= cfg.skin_cb_range[0]) & (ycrcb[..., 2] <= cfg.skin_cb_range[1])
                & (ycrcb[..., 0] >= cfg.skin_min_luma))

        def against(reference: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
            """The changes that count: since the previous frame, and those since ``reference`` that
            reach out of the board. A hand held still differs from the last stable board, not from
            the previous frame; so do the seeds a move left, on a board that may be skin-coloured
            itself. A hand comes with an arm from beyond the board: only changes reaching out count."""
            since = self._changed(grey, reference[0], region, 2 * cfg.motion_threshold_levels)
            if frac(skin & (motion | since)) < cfg.hand_min_frac:  # no hand either way (most frames)
                return motion
            # Beyond the board an arm may be as light as the table: its colour tells it apart.
            chroma = ycrcb[..., 1:].astype(np.float32)
            moved = since | np.any([self._changed(chroma[..., k], reference[1][..., k], region,
                                                  cfg.motion_threshold_levels) for k in (0, 1)], axis=0)
            out: np.ndarray = motion | (since & _reaching_out(moved, region))
            return out

        reference = self._reference
        if reference is not None and reference[0].shape != grey.shape:
            reference = None
        changed = motion if reference is None else against(reference)
        hand = frac(skin & changed)
        if (reference is not None and hand >= cfg.hand_min_frac and self.last_motion_frac < cfg.moving_min_frac
                and frac(skin & motion) < cfg.hand_min_frac):
            # A hand seen only against the last stable frame, on a frame that does not change: a
            # hand held still, or a reference that held an arm (at a few frames a second one quiet
            # frame after a hand is stable, and a sleeve at the board's edge, not skin, may be still
            # then: the skin-coloured wood it covered differs from it later). The board of an
            # earlier rest period tells them apart: a still hand differs from it too, a hand gone
            # does not. Else every still frame after such a reference was a hand, to the end of
            # the film (seed 2105's 35 px default film, 35 frames).
            for rest in reversed(self._rests):
                if rest is self._reference_frame:
                    continue
                earlier = _reference_of(*self._look(rest, window))
                if earlier[0].shape != grey.shape:
                    continue
                if (seen_hand := frac(skin & against(earlier))) < cfg.hand_min_frac:
                    self._reference, self._reference_frame, hand = earlier, rest, seen_hand
                    break
        self.last_threshold = threshold  # the motion test's (the diagnostics describe the frame pair)
        self.last_hand_frac = hand
        if self.last_hand_frac >= cfg.hand_min_frac:
            self._quiet = 0
            self._needed = cfg.stable_frames + cfg.settle_frames
            return HAND
        if self.last_motion_frac >= cfg.moving_min_frac:
            self._quiet = 0
            return MOVING
        self._quiet += 1
        if self._quiet >= self._needed:
            self._reference = _reference_of(ycrcb, grey)
            self._reference_frame = image_bgr
            self._needed = cfg.stable_frames
            return STABLE
        return MOVING


def _reference_of(ycrcb: np.ndarray, grey: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A stable frame kept as the reference: its grey plane, and its Cr and Cb as floats."""
    return grey, ycrcb[..., 1:].astype(np.float32)


def _reaching_out(changed: np.ndarray, region: np.ndarray | None) -> np.ndarray:
    """The parts of ``changed`` (connected, 8-neighbours) that reach beyond the watched region by
    two small pixels or more (or touch the frame's edge when the whole frame is watched).

    Seeds moved on the board change pixels at most a pixel beyond it (blur); an arm crosses its edge.
    """
    if region is None:
        beyond = np.zeros(changed.shape, bool)
        beyond[[0, -1], :] = beyond[:, [0, -1]] = True
    else:
        grown = cv2.dilate(region.astype(np.uint8), np.ones((5, 5), np.uint8)).astype(bool)
        beyond = grown & ~cv2.dilate(region.astype(np.uint8), np.ones((3, 3), np.uint8)).astype(bool)
    count, labels = cv2.connectedComponents(changed.astype(np.uint8), connectivity=8)
    if count <= 1:
        return np.zeros(changed.shape, bool)
    out = np.unique(labels[beyond & changed])
    return np.isin(labels, out[out > 0])
