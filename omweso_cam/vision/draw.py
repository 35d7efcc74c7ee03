"""Draw: the annotated frame for the dashboard stream (board outline, pits with their read counts)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import cv2
import numpy as np

if TYPE_CHECKING:
    from omweso_cam.vision.pipeline import Reading

_OK = (60, 200, 60)
_BAD = (40, 40, 230)


def annotate(image_bgr: np.ndarray, reading: Reading) -> np.ndarray:
    """A copy of the frame with the board quad, every pit outlined and labelled with its count."""
    out = image_bgr.copy() if image_bgr.ndim == 3 else cv2.cvtColor(image_bgr, cv2.COLOR_GRAY2BGR)
    h, w = out.shape[:2]
    thick = max(1, round(max(h, w) / 640))
    colour = _OK if reading.status == "ok" else _BAD
    if reading.corners_px is not None:
        cv2.polylines(out, [np.round(reading.corners_px).astype(np.int32)], True, colour, thick, cv2.LINE_AA)
        bl, br = reading.corners_px[3], reading.corners_px[2]
        cv2.putText(out, "S", tuple(int(v) for v in (bl + br) / 2 + [0, 18 * thick]), cv2.FONT_HERSHEY_SIMPLEX,
                    0.6 * thick, colour, thick, cv2.LINE_AA)
    centres = reading.pit_centers_px
    if centres is not None and reading.grid is not None and reading.rectified is not None:
        # Pit outlines: the rectified circle mapped back through the homography.
        angles = np.linspace(0, 2 * np.pi, 24, endpoint=False)
        ring = np.stack([np.cos(angles), np.sin(angles)], axis=1) * reading.grid.radius_px
        probs = reading.pit_counts.probabilities.max(axis=1) if reading.pit_counts is not None else None
        outlines = reading.rectified.to_image(reading.grid.centers_px[:, None, :] + ring[None]) / reading.scale
        for i, outline in enumerate(outlines):
            sure = probs is None or probs[i] >= 0.6
            cv2.polylines(out, [np.round(outline).astype(np.int32)], True, _OK if sure else (0, 200, 255),
                          thick, cv2.LINE_AA)
            if reading.counts is not None:
                text = str(reading.counts[i])
                x, y = centres[i]
                size = 0.5 * thick
                (tw, th), _ = cv2.getTextSize(text, cv2.FONT_HERSHEY_SIMPLEX, size, thick)
                org = (int(x - tw / 2), int(y + th / 2))
                cv2.putText(out, text, org, cv2.FONT_HERSHEY_SIMPLEX, size, (0, 0, 0), thick + 2, cv2.LINE_AA)
                cv2.putText(out, text, org, cv2.FONT_HERSHEY_SIMPLEX, size, (255, 255, 255), thick, cv2.LINE_AA)
    label = reading.status if reading.status != "ok" else f"ok  confidence {reading.confidence:.2f}"
    cv2.putText(out, label, (8, 22 * thick), cv2.FONT_HERSHEY_SIMPLEX, 0.6 * thick, (0, 0, 0), thick + 2, cv2.LINE_AA)
    cv2.putText(out, label, (8, 22 * thick), cv2.FONT_HERSHEY_SIMPLEX, 0.6 * thick, colour, thick, cv2.LINE_AA)
    return out
