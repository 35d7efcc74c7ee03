"""Simple drawn test boards with exact ground truth (independent of the renderer).

A flat board with 4x8 round pits and seeds drawn as shaded ellipses, warped
into a camera image by a known homography. Colours and sizes are parameters so
tests can vary them; nothing in the vision code knows them.
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np


@dataclass(frozen=True)
class Drawn:
    image: np.ndarray
    corners_px: np.ndarray  # TL, TR, BR, BL (South at the bottom)
    counts: tuple[int, ...]
    pit_centers_px: np.ndarray


def draw_board(
    counts: list[int] | tuple[int, ...],
    *,
    rng: np.random.Generator,
    image_size: tuple[int, int] = (960, 540),
    corners_px: np.ndarray | None = None,
    board_bgr: tuple[int, int, int] = (70, 120, 170),
    bowl_bgr: tuple[int, int, int] = (40, 70, 105),
    seed_bgr: tuple[int, int, int] = (60, 60, 55),
    table_bgr: tuple[int, int, int] = (150, 160, 150),
    noise: float = 4.0,
    gap_rows: float = 0.0,
) -> Drawn:
    """Draw a board holding ``counts`` (32, image order) on a table, seen through a homography.

    ``gap_rows``: the strip between the two halves (rows 0-1 and 2-3) this many row pitches wider.
    """
    bw, bh = 800, 400
    margin_x, margin_y = 24, 24
    pitch_x, pitch_y = (bw - 2 * margin_x) / 8, (bh - 2 * margin_y) / (4 + gap_rows)
    radius = 0.4 * min(pitch_x, pitch_y)
    seed_r = radius * 0.26
    board = np.empty((bh, bw, 3), np.uint8)
    board[:] = board_bgr
    yy, xx = np.mgrid[0:bh, 0:bw]
    grain = (8 * np.sin(xx / 7.0 + 3 * np.sin(yy / 40.0))).astype(np.int16)
    board = np.clip(board.astype(np.int16) + grain[..., None], 0, 255).astype(np.uint8)
    centers = []
    for i, n in enumerate(counts):
        cx = margin_x + (i % 8 + 0.5) * pitch_x
        cy = margin_y + (i // 8 + 0.5 + (gap_rows if i // 8 >= 2 else 0.0)) * pitch_y
        centers.append((cx, cy))
        cv2.circle(board, (round(cx), round(cy)), round(radius), bowl_bgr, -1, cv2.LINE_AA)
        placed: list[tuple[float, float]] = []
        for k in range(n):
            # Rings of seeds, growing outwards; heaps beyond one layer overlap.
            for _ in range(40):
                ang = rng.uniform(0, 2 * np.pi)
                rad = rng.uniform(0, radius - seed_r * 1.1) if k else rng.uniform(0, radius * 0.3)
                sx, sy = cx + rad * np.cos(ang), cy + rad * np.sin(ang)
                if all((sx - px) ** 2 + (sy - py) ** 2 > (1.9 * seed_r) ** 2 for px, py in placed) or len(placed) > 9:
                    break
            placed.append((sx, sy))
            angle = rng.uniform(0, 180)
            cv2.ellipse(board, (round(sx + 2), round(sy + 2)), (round(seed_r), round(seed_r * 0.8)), angle, 0, 360,
                        tuple(int(c * 0.5) for c in bowl_bgr), -1, cv2.LINE_AA)
            cv2.ellipse(board, (round(sx), round(sy)), (round(seed_r), round(seed_r * 0.8)), angle, 0, 360,
                        seed_bgr, -1, cv2.LINE_AA)
            cv2.circle(board, (round(sx - seed_r * 0.3), round(sy - seed_r * 0.3)), max(1, round(seed_r * 0.25)),
                       tuple(min(255, c + 120) for c in seed_bgr), -1, cv2.LINE_AA)
    w, h = image_size
    if corners_px is None:
        corners_px = np.array([[0.2 * w, 0.2 * h], [0.8 * w, 0.2 * h], [0.8 * w, 0.8 * h], [0.2 * w, 0.8 * h]])
    corners_px = np.asarray(corners_px, np.float64)
    src = np.array([[0, 0], [bw, 0], [bw, bh], [0, bh]], np.float32)
    image_from_board = cv2.getPerspectiveTransform(src, corners_px.astype(np.float32))
    image = np.empty((h, w, 3), np.uint8)
    image[:] = table_bgr
    warped = cv2.warpPerspective(board, image_from_board, (w, h), flags=cv2.INTER_AREA)
    mask = cv2.warpPerspective(np.full((bh, bw), 255, np.uint8), image_from_board, (w, h), flags=cv2.INTER_LINEAR)
    alpha = (mask.astype(np.float32) / 255.0)[..., None]
    image = (warped * alpha + image * (1 - alpha)).astype(np.float32)
    image += rng.normal(0, noise, image.shape)
    image = np.clip(image, 0, 255).astype(np.uint8)
    pits = cv2.perspectiveTransform(np.array(centers, np.float64).reshape(-1, 1, 2), image_from_board).reshape(-1, 2)
    return Drawn(image, corners_px, tuple(counts), pits)
