"""Motion blur of the board, measured on its pits' rims.

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
"""

from __future__ import annotations

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


def rim_edge_widths(image_bgr: np.ndarray, centres_px: np.ndarray, radii_px: np.ndarray) -> np.ndarray:
    """(pits, 16) widths (px) of each pit's rim edge on rays at ``_ANGLES``: the contrast along
    the ray over its steepest slope (a step blurred over w pixels is about w wide)."""
    centres = np.asarray(centres_px, np.float64).reshape(-1, 2)
    radii = np.asarray(radii_px, np.float64).reshape(-1)
    n = len(centres)
    directions = np.stack([np.cos(_ANGLES), np.sin(_ANGLES)], axis=1)
    pts = centres[:, None, None] + (radii[:, None, None, None] * _ALONG[None, None, :, None]) * directions[None, :, None]
    map_x = pts[..., 0].reshape(n * len(_ANGLES), len(_ALONG)).astype(np.float32)
    map_y = pts[..., 1].reshape(n * len(_ANGLES), len(_ALONG)).astype(np.float32)
    samples = cv2.remap(image_bgr, map_x, map_y, cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
    profiles = (cv2.cvtColor(samples, cv2.COLOR_BGR2GRAY) if samples.ndim == 3 else samples).astype(np.float32)
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
    return np.asarray(contrast / np.maximum(slope, 1e-6))


def rim_blur_ratio(image_bgr: np.ndarray, centres_px: np.ndarray, radii_px: np.ndarray) -> float:
    """How much wider the pits' rim edges are along the most blurred orientation than along the
    sharpest (1 = no direction stands out; see the module's docstring)."""
    widths = rim_edge_widths(image_bgr, centres_px, radii_px)
    half = len(_ANGLES) // 2
    by_orientation = np.median(np.concatenate([widths[:, :half], widths[:, half:]]), axis=0)
    return float(by_orientation.max() / max(float(by_orientation.min()), 1e-6))
