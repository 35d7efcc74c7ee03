"""Motion and focus blur of the board, measured on its pits' rims.

A camera (or a board) moving while the shutter is open smears every edge along the motion.
The rim of a pit, a step from the wood into the hole, then widens where the rim runs across
the motion and stays sharp where it runs along it. This module measures that edge's width on
rays through every pit's rim at sixteen angles (its contrast over its steepest slope), folds
opposite sides together into eight orientations, takes the median over the pits for each,
and divides the widest by the narrowest.

The ratio is about 1 for a sharp board and for one evenly blurred (out of focus: every
orientation widens alike), and grows with the length of the motion. Being a ratio it does not
depend on the wood or the light (a board half as bright reads within 2%). It does depend a
little on resolution: a sharp rim is a pixel or two wide at any scale, so the same smear
relative to the pits reads higher in a larger image (a drawn board smeared 13 px read 2.9;
at twice the size, smeared 25 px, 4.3). Perspective squeezes a soft rim's width
across the board by the cosine of the camera's tilt, so a ratio near 1.2 can be geometry alone
at 35 degrees; the reader's limit (``ReaderConfig.max_rim_blur_ratio``) is above that.

A board out of focus widens its rims every way alike, which the ratio cannot see; the rims'
width itself does (:attr:`RimBlur.width_px`): the median width over the rays whose rim stands
well clear of the image noise. On a blurred board sensor noise, not the rim, makes the steepest
slope of a faint rim, and such rays would read sharp. A sharp rim is a few pixels wide at any
scale (4-6 px on renders with pits of 36-105 px, up to 8 px on larger pits, whose rounded lips
are more pixels wide), and a blur hurts counting in proportion to the seeds' size, so the reader
compares the width both with a number of pixels and with the pits' diameter
(``ReaderConfig.max_rim_width_px``, ``max_rim_width_of_diameter``).
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

#: Rays through each rim: sixteen angles, sampled from 0.55 to 1.45 radii from the pit's centre
#: (room for a grid a little off on a blurred board).
_ANGLES = np.arange(16) * (2.0 * np.pi / 16)
_ALONG = np.linspace(0.55, 1.45, 37)
#: Profiles are smoothed along the ray by a Gaussian of this sigma (image px) against noise: on 240
#: renders (seeds 6100000+, 6200000+), 54 of 69 boards smeared 8 px or more reach the reader's limit
#: with it and none of 137 unsmeared ones (39 of 69 without it, in a first script; docs/vision.md,
#: "Motion blur").
SMOOTH_PX = 1.5
#: A ray counts towards the focus width only when its rim's contrast is this many times the
#: noise of the profiles (a robust sigma of their second differences): on renders blurred by 3-6
#: px the faint rims' widths otherwise fell to those of sharp boards (docs/vision.md, "Focus blur").
MIN_CONTRAST_OF_NOISE = 20.0
#: Fewer rays than this clear the noise (a board nearly black, or blurred to nothing): no width.
MIN_CLEAR_RAYS = 16


@dataclass(frozen=True)
class RimBlur:
    """How blurred a board's pit rims are: ``ratio``, the widest orientation's rim width over the
    narrowest (motion: 1 when no direction stands out), and ``width_px``, the median rim width
    over the rays clear of the noise (focus; NaN when too few are); and how deep they are:
    ``contrast``, the median over all rays of the grey levels a rim's profile spans (a dark or
    washed-out board's rims span few, and so do its seeds against the pits)."""

    ratio: float
    width_px: float
    contrast: float


def _rim_edges(image_bgr: np.ndarray, centres_px: np.ndarray,
               radii_px: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
    """Widths (px) and contrasts of each pit's rim edge on rays at ``_ANGLES`` ((pits, 16) each), and
    the noise of the profiles. A ray's width is its contrast over its steepest slope (a step blurred
    over w pixels is about w wide)."""
    centres = np.asarray(centres_px, np.float64).reshape(-1, 2)
    radii = np.asarray(radii_px, np.float64).reshape(-1)
    n = len(centres)
    directions = np.stack([np.cos(_ANGLES), np.sin(_ANGLES)], axis=1)
    pts = centres[:, None, None] + (radii[:, None, None, None] * _ALONG[None, None, :, None]) * directions[None, :, None]
    map_x = pts[..., 0].reshape(n * len(_ANGLES), len(_ALONG)).astype(np.float32)
    map_y = pts[..., 1].reshape(n * len(_ANGLES), len(_ALONG)).astype(np.float32)
    samples = cv2.remap(image_bgr, map_x, map_y, cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
    profiles = (cv2.cvtColor(samples, cv2.COLOR_BGR2GRAY) if samples.ndim == 3 else samples).astype(np.float32)
    second = profiles[:, 2:] - 2.0 * profiles[:, 1:-1] + profiles[:, :-2]
    noise = 1.4826 * float(np.median(np.abs(second))) / np.sqrt(6.0)  # white noise: var(second diff) = 6 var
    step_px = radii[:, None] * (_ALONG[1] - _ALONG[0])
    # Smoothed along the ray (sensor noise otherwise makes the steepest slope, and narrows a
    # smeared rim's width to the noise's): SMOOTH_PX in the image, by the median pit's sample step.
    sigma = SMOOTH_PX / max(float(np.median(step_px)), 1e-6)
    size = 2 * int(np.ceil(3 * sigma)) + 1
    profiles = np.asarray(cv2.GaussianBlur(profiles, (size, 1), sigmaX=sigma, sigmaY=0, borderType=cv2.BORDER_REPLICATE),
                          np.float32)
    profiles = profiles.reshape(n, len(_ANGLES), len(_ALONG))
    slope = np.abs(np.diff(profiles, axis=2)).max(axis=2) / np.maximum(step_px, 1e-6)
    contrast = profiles.max(axis=2) - profiles.min(axis=2)
    return np.asarray(contrast / np.maximum(slope, 1e-6)), contrast, noise


def rim_blur(image_bgr: np.ndarray, centres_px: np.ndarray, radii_px: np.ndarray) -> RimBlur:
    """The blur of the pits' rims at ``centres_px`` with ``radii_px`` in ``image_bgr`` (see the
    module's docstring)."""
    widths, contrast, noise = _rim_edges(image_bgr, centres_px, radii_px)
    half = len(_ANGLES) // 2
    by_orientation = np.median(np.concatenate([widths[:, :half], widths[:, half:]]), axis=0)
    clear = contrast > MIN_CONTRAST_OF_NOISE * noise
    width = float(np.median(widths[clear])) if int(clear.sum()) >= MIN_CLEAR_RAYS else float("nan")
    return RimBlur(ratio=float(by_orientation.max() / max(float(by_orientation.min()), 1e-6)), width_px=width,
                   contrast=float(np.median(contrast)))
