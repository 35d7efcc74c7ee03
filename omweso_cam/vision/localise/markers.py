"""Board corners from four printed ArUco markers (ids 0..3 = TL, TR, BR, BL seen from South) lying
just outside the board's corners, and the printable sheet of them."""

from __future__ import annotations

import cv2
import numpy as np

from omweso_cam.vision.localise.geometry import BoardLocation, CornersError, validate_quad

#: ArUco dictionary of the printed marker sheet; ids 0..3 are the TL, TR, BR, BL corners.
MARKER_DICTIONARY = cv2.aruco.DICT_4X4_50 if hasattr(cv2, "aruco") else 0
MARKER_IDS = (0, 1, 2, 3)


def find_markers(image_bgr: np.ndarray) -> BoardLocation | None:
    """Board corners from four ArUco markers (ids 0..3 = TL, TR, BR, BL), or None.

    Each marker lies just outside its board corner; the corner is the marker's
    own corner nearest the centre of the four markers.
    """
    gray = cv2.cvtColor(image_bgr, cv2.COLOR_BGR2GRAY) if image_bgr.ndim == 3 else image_bgr
    dictionary = cv2.aruco.getPredefinedDictionary(MARKER_DICTIONARY)
    detector = cv2.aruco.ArucoDetector(dictionary, cv2.aruco.DetectorParameters())
    marker_corners, ids, _ = detector.detectMarkers(gray)
    if ids is None:
        return None
    found: dict[int, np.ndarray] = {}
    for corners, marker_id in zip(marker_corners, ids.ravel(), strict=True):
        if int(marker_id) in MARKER_IDS and int(marker_id) not in found:
            found[int(marker_id)] = corners.reshape(4, 2).astype(np.float64)
    if len(found) < 4:
        return None
    centre = np.mean([found[i].mean(axis=0) for i in MARKER_IDS], axis=0)
    quad = np.array(
        [found[i][np.argmin(np.linalg.norm(found[i] - centre, axis=1))] for i in MARKER_IDS]
    )
    try:
        validate_quad(quad)
    except CornersError:
        return None
    return BoardLocation(quad, "markers", 1.0)


def marker_sheet(*, marker_px: int = 400, margin_px: int = 80) -> np.ndarray:
    """A printable page (grayscale uint8) with the four corner markers, labelled."""
    dictionary = cv2.aruco.getPredefinedDictionary(MARKER_DICTIONARY)
    cell = marker_px + 2 * margin_px
    sheet = np.full((2 * cell + 120, 2 * cell), 255, np.uint8)
    names = ("TL", "TR", "BR", "BL")
    slots = ((0, 0), (0, 1), (1, 1), (1, 0))  # (row, col) of each corner on the page
    for marker_id, name, (row, col) in zip(MARKER_IDS, names, slots, strict=True):
        marker = cv2.aruco.generateImageMarker(dictionary, marker_id, marker_px)
        y0, x0 = row * cell + margin_px, col * cell + margin_px
        sheet[y0 : y0 + marker_px, x0 : x0 + marker_px] = marker
        cv2.putText(sheet, f"id {marker_id}: {name} corner", (x0, y0 + marker_px + 40),
                    cv2.FONT_HERSHEY_SIMPLEX, 1.0, 0, 2, cv2.LINE_AA)
    cv2.putText(sheet, "omweso-cam markers: cut out, lay each just outside its board corner (South at the bottom)",
                (20, 2 * cell + 70), cv2.FONT_HERSHEY_SIMPLEX, 0.8, 0, 2, cv2.LINE_AA)
    return sheet
