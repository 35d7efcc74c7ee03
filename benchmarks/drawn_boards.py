"""Boards drawn by a second, independent renderer, to see the reader on images whose look nobody tuned on.

``omweso_cam.vision.synth`` made every image the reader was built, trained and tuned on, so its
look (its wood, its pit shading, its seed shapes, its light) may have leaked into the reader's
rules and weights. This module draws boards with different, simpler code that shares nothing with
that renderer: flat 2-D drawing with a painted bowl shading for each pit, seeds as
shaded ellipses piled in layers (a heap's upper seeds drawn over the lower ones, larger and
lighter, as nearer the camera), a board edge that may carry a darker or lighter bevel band, a
table of cloth, planks or tiles, a perspective warp, light falloff, a colour cast, blur, noise
and JPEG compression. Nothing here is used for training. One rule of the board finder was chosen
on its seeds 4000001+ (the outline looking past a bevel band; docs/vision.md, "Boards drawn by a
second renderer"); the benchmark's seeds (``vision_bench.py --drawn N``: 4100001+) are only read
to measure, a held-out check of how the reader generalises.

Positions are ones a game reaches (the standard set-up, or 1-30 random moves from it), so every
board holds 64 seeds. Truth: the board's outer corners (TL, TR, BR, BL; South at the bottom),
the pit centres and radii in the image, and the counts in the reader's pit order.

    .venv/bin/python benchmarks/drawn_boards.py OUT_DIR --count 12 --seed 4100001 [--arm]   # PNGs + truth.jsonl
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from omweso_cam.rules import Position, RuleSet
from omweso_cam.vision.synth.corpus import random_game_position

#: Seed colours (BGR): grey-green nicker nuts, brown beans, black and cream pebbles, tan seeds.
SEED_COLOURS = ((150, 160, 150), (120, 130, 125), (40, 60, 90), (30, 30, 35), (190, 215, 225), (70, 110, 160))
#: Frame sizes (width, height) the boards are drawn into.
FRAMES = ((1280, 720), (960, 540), (1600, 900))
PITCH = 100.0  # board-space pixels between pit centres


def _noise(rng: np.random.Generator, h: int, w: int, scale: float, octaves: int = 3) -> np.ndarray:
    """Smooth noise of about unit spread: random grids resized up, octave by octave."""
    out = np.zeros((h, w), np.float32)
    amp = 1.0
    for o in range(octaves):
        sh, sw = max(2, int(h / scale * 2**o)), max(2, int(w / scale * 2**o))
        grid = rng.standard_normal((sh, sw)).astype(np.float32)
        out += amp * cv2.resize(grid, (w, h), interpolation=cv2.INTER_CUBIC)
        amp *= 0.5
    return out / 1.5


def _wood(rng: np.random.Generator, h: int, w: int, base: np.ndarray) -> np.ndarray:
    """Wood of colour ``base`` (BGR): wavy grain along the long axis and fine noise."""
    y = np.arange(h, dtype=np.float32)[:, None]
    wobble = _noise(rng, h, w, 200, 2) * rng.uniform(10, 40)
    grain = (np.sin((y + wobble) * rng.uniform(0.05, 0.2)) * 0.5 + 0.5) ** rng.uniform(1, 4)
    shade = 1.0 - rng.uniform(0.05, 0.25) * grain + 0.04 * _noise(rng, h, w, 8, 2)
    return shade[..., None] * base[None, None, :].astype(np.float32)


def _table(rng: np.random.Generator, h: int, w: int) -> np.ndarray:
    """A cloth, a table of planks or a tiled floor, of a random colour."""
    base = rng.uniform(40, 220, 3).astype(np.float32)
    kind = int(rng.integers(3))
    if kind == 0:
        return (1 + 0.08 * _noise(rng, h, w, 60, 4))[..., None] * base
    if kind == 1:
        img = _wood(rng, h, w, base)
        planks = (np.arange(h) // int(rng.integers(60, 160))) % 2
        return img * (1 - 0.07 * planks)[:, None, None].astype(np.float32)
    img = (1 + 0.05 * _noise(rng, h, w, 30, 3))[..., None] * base
    step = int(rng.integers(80, 200))
    img[(np.arange(h) % step) < 3, :] *= 0.6
    img[:, (np.arange(w) % step) < 3] *= 0.6
    return img


def _seed(img: np.ndarray, rng: np.random.Generator, cx: float, cy: float, r: float,
          colour: np.ndarray, light: tuple[float, float]) -> None:
    """Draw one seed: its shadow away from the light, a body darker at its edge, a highlight."""
    h, w = img.shape[:2]
    x0, x1 = max(int(cx - 2 * r), 0), min(int(cx + 2 * r + 2), w)
    y0, y1 = max(int(cy - 2 * r), 0), min(int(cy + 2 * r + 2), h)
    if x1 <= x0 or y1 <= y0:
        return
    yy, xx = np.mgrid[y0:y1, x0:x1].astype(np.float32)
    axes = (r * rng.uniform(0.85, 1.15), r * rng.uniform(0.75, 1.0))
    t = rng.uniform(0, np.pi)

    def radius(ox: float, oy: float) -> np.ndarray:
        dx, dy = xx - ox, yy - oy
        u = (dx * np.cos(t) + dy * np.sin(t)) / axes[0]
        v = (-dx * np.sin(t) + dy * np.cos(t)) / axes[1]
        return np.asarray(np.sqrt(u * u + v * v))

    lx, ly = light
    shadow = np.clip(1.2 - radius(cx - 0.3 * r * lx, cy - 0.3 * r * ly), 0, 1) * 0.45
    img[y0:y1, x0:x1] *= (1 - shadow)[..., None]
    d = radius(cx, cy)
    cover = np.clip((1.0 - d) * r * 0.8, 0, 1)
    body = colour[None, None, :] * (1.05 - 0.45 * d**2)[..., None]
    hd = np.sqrt((xx - cx - 0.35 * r * lx) ** 2 + (yy - cy - 0.35 * r * ly) ** 2) / (0.35 * r)
    body = body + (np.clip(1 - hd, 0, 1) ** 2 * rng.uniform(40, 120))[..., None]
    img[y0:y1, x0:x1] = img[y0:y1, x0:x1] * (1 - cover[..., None]) + body * cover[..., None]


def _pile(rng: np.random.Generator, n: int, pit_r: float, seed_r: float) -> list[tuple[float, float, int]]:
    """Where ``n`` seeds lie in a pit (offsets from its centre, and their layer): the bottom layer first,
    seeds that find no room there on a smaller layer above, and so on."""
    placed: list[tuple[float, float, int]] = []
    for _ in range(n):
        for layer in range(6):
            reach = pit_r * max(0.66 - 0.2 * layer, 0.12)
            spacing = seed_r * (1.75 if layer == 0 else 1.45)
            same = [(x, y) for x, y, k in placed if k == layer]
            spot = None
            for _ in range(40):
                rad, a = reach * np.sqrt(rng.random()), rng.uniform(0, 2 * np.pi)
                x, y = rad * np.cos(a), rad * np.sin(a)
                if all((x - qx) ** 2 + (y - qy) ** 2 > spacing**2 for qx, qy in same):
                    spot = (x, y)
                    break
            if spot is not None or layer == 5:
                spot = spot or (0.0, 0.0)
                placed.append((spot[0], spot[1], layer))
                break
    return placed


#: Skin tones (BGR), light to dark.
SKIN = ((180, 200, 240), (140, 170, 220), (100, 130, 190), (70, 95, 150), (45, 65, 105), (35, 50, 80))


def _arm(image: np.ndarray, truth: dict[str, Any], rng: np.random.Generator) -> tuple[np.ndarray, int]:
    """An arm reaching from the bottom, left or right edge of the frame to a pit (its hand a blunt
    point, shaded across, casting a soft shadow), and how many pits it covers (a third of the
    square around a pit or more)."""
    h, w = image.shape[:2]
    centres = np.asarray(truth["pit_centers_px"])
    r = float(np.median(truth["pit_radius_px"]))
    tip = centres[rng.integers(32)] + rng.normal(0, r * 0.5, 2)
    side = int(rng.integers(3))
    if side == 0:
        base = np.array([rng.uniform(0.2, 0.8) * w, h + 50.0])
    else:
        base = np.array([-50.0 if side == 1 else w + 50.0, rng.uniform(0.4, 1.0) * h])
    d = (tip - base) / np.linalg.norm(tip - base)
    n = np.array([-d[1], d[0]])
    width = r * rng.uniform(2.2, 3.0)
    outline = np.int32([base + n * width / 2, tip - d * r * 1.2 + n * width * 0.6, tip + n * width * 0.25,
                        tip + d * r * 0.6, tip - n * width * 0.25, tip - d * r * 1.2 - n * width * 0.6,
                        base - n * width / 2])
    mask = np.zeros((h, w), np.float32)
    cv2.fillPoly(mask, [outline], 1.0, cv2.LINE_AA)
    shadow = cv2.GaussianBlur(np.roll(mask, (int(r * 0.5), int(r * 0.3)), (0, 1)), (0, 0), r * 0.4)
    out = image.astype(np.float32) * (1 - 0.5 * shadow[..., None])
    skin = np.asarray(SKIN[int(rng.integers(len(SKIN)))], np.float32) * rng.uniform(0.85, 1.15)
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    across = ((xx - base[0]) * n[0] + (yy - base[1]) * n[1]) / (width / 2)
    shade = np.clip(1.0 - 0.35 * across**2, 0.5, 1.0)
    body = skin[None, None, :] * shade[..., None] * (1 + 0.05 * rng.standard_normal((h, w, 1)).astype(np.float32))
    cover = cv2.GaussianBlur(mask, (0, 0), 1.0)[..., None]
    out = out * (1 - cover) + body * cover
    covered = sum(float(mask[max(int(y - r), 0):max(int(y + r), 0), max(int(x - r), 0):max(int(x + r), 0)].mean()) > 0.3
                  for x, y in centres if 0 <= x < w and 0 <= y < h)
    return np.clip(out, 0, 255).astype(np.uint8), int(covered)


def _position(rnd: random.Random) -> list[int]:
    if rnd.random() < 0.25:
        return list(Position.standard().board)
    rules = RuleSet.preset("seed")
    position = None
    while position is None:  # a random game may end before its plies
        position = random_game_position(rnd, rules, plies=rnd.randint(1, 30))
    return list(position.board)


def draw_board(seed: int, *, arm: bool = False) -> tuple[np.ndarray, dict[str, Any]]:
    """One drawn board (BGR uint8, JPEG-compressed) and its truth, from ``seed`` alone; with ``arm``
    an arm reaches over it (truth ``arm_covers``: how many pits it covers; status ``occluded``
    when it covers one or more)."""
    rng = np.random.default_rng(seed)
    counts = _position(random.Random(seed))
    width, height = FRAMES[int(rng.integers(len(FRAMES)))]
    gap = float(rng.uniform(0.1, 0.5)) * PITCH if rng.random() < 0.3 else 0.0
    margin = float(rng.uniform(0.25, 0.6)) * PITCH
    bw, bh = 8 * PITCH + 2 * margin, 4 * PITCH + 2 * margin + gap
    bwi, bhi = int(bw), int(bh)
    base = rng.uniform((20, 50, 90), (90, 140, 200)) if rng.random() < 0.8 else rng.uniform((15, 25, 35), (45, 60, 80))
    board = _wood(rng, bhi, bwi, base)
    pit_r = PITCH * float(rng.uniform(0.36, 0.44))
    stretch = float(rng.uniform(1.0, 1.15)) if rng.random() < 0.3 else 1.0  # pits a little wider than long
    centres = [(margin + (i % 8 + 0.5) * PITCH, margin + (i // 8 + 0.5) * PITCH + (gap if i // 8 >= 2 else 0.0))
               for i in range(32)]
    angle = rng.uniform(0, 2 * np.pi)
    light = (float(np.cos(angle)), float(np.sin(angle)))
    depth = float(rng.uniform(0.35, 0.7))
    yy, xx = np.mgrid[0:bhi, 0:bwi].astype(np.float32)
    for cx, cy in centres:  # each pit a bowl: its wall facing the light lit, the other in shade
        r = pit_r * float(rng.uniform(0.97, 1.03))
        x0, x1, y0, y1 = int(cx - r * stretch - 4), int(cx + r * stretch + 5), int(cy - r - 4), int(cy + r + 5)
        dx, dy = (xx[y0:y1, x0:x1] - cx) / stretch, yy[y0:y1, x0:x1] - cy
        d = np.sqrt(dx * dx + dy * dy) / r
        cover = np.clip((1 - d) * r * 0.5, 0, 1)
        facing = (dx * light[0] + dy * light[1]) / r
        bowl = 1 - depth * (0.5 + 0.5 * facing) * np.clip(d, 0, 1) ** 1.5 - 0.15 * depth
        board[y0:y1, x0:x1] *= (1 - cover * (1 - np.clip(bowl, 0.2, 1.2)))[..., None]
    colour = np.asarray(SEED_COLOURS[int(rng.integers(len(SEED_COLOURS)))], np.float32)
    seed_r = pit_r * float(rng.uniform(0.2, 0.27))
    for (cx, cy), n in zip(centres, counts, strict=True):
        for x, y, layer in sorted(_pile(rng, n, pit_r, seed_r), key=lambda p: p[2]):
            lift = 1.0 + 0.07 * layer
            _seed(board, rng, cx + x * stretch, cy + y, seed_r * lift, colour * rng.uniform(0.8, 1.2) * lift, light)
    band = int(rng.uniform(4, 14))
    edge_kind = int(rng.integers(3))  # no band, a darker bevel, a lighter one
    if edge_kind:
        edge = np.ones((bhi, bwi), np.float32)
        edge[:band, :] = edge[-band:, :] = edge[:, :band] = edge[:, -band:] = 0.8 if edge_kind == 1 else 1.15
        board *= edge[..., None]
    # Into the frame: scaled, turned, the far side foreshortened, corners jittered.
    scale = float(rng.uniform(0.45, 0.85)) * width / bw
    half = np.float32([[-bw / 2, -bh / 2], [bw / 2, -bh / 2], [bw / 2, bh / 2], [-bw / 2, bh / 2]]) * scale
    turn = np.deg2rad(rng.uniform(-12, 12))
    rot = np.float32([[np.cos(turn), -np.sin(turn)], [np.sin(turn), np.cos(turn)]])
    dst = half @ rot.T + np.float32([width / 2 + rng.uniform(-0.1, 0.1) * width,
                                     height / 2 + rng.uniform(-0.08, 0.08) * height])
    tilt = float(rng.uniform(0.0, 0.25))
    top = dst[1, 0] - dst[0, 0]
    dst[0, 0] += tilt * top / 2
    dst[1, 0] -= tilt * top / 2
    dst[:2, 1] += tilt * 0.05 * height
    dst += rng.uniform(-0.006, 0.006, (4, 2)).astype(np.float32) * width
    src = np.float32([[0, 0], [bw, 0], [bw, bh], [0, bh]])
    warp = cv2.getPerspectiveTransform(src, dst)
    table = _table(rng, height, width)
    ones = np.ones((bhi, bwi), np.float32)
    offset = np.float32([[1, 0, 10 * light[0] * -1], [0, 1, 14 * light[1] * -1], [0, 0, 1]])
    shadow = cv2.GaussianBlur(cv2.warpPerspective(ones, warp @ offset, (width, height)), (0, 0), 9)
    table *= (1 - 0.45 * shadow)[..., None]
    mask = cv2.warpPerspective(ones, warp, (width, height))[..., None]
    img = table * (1 - mask) + cv2.warpPerspective(board, warp, (width, height)) * mask
    falloff = (np.linspace(rng.uniform(0.6, 1.0), rng.uniform(0.9, 1.25), width)[None, :]
               * np.linspace(rng.uniform(0.7, 1.0), rng.uniform(0.9, 1.2), height)[:, None])
    img *= falloff[..., None] * rng.uniform(0.85, 1.15, 3)[None, None, :]
    img = 255 * (np.clip(img, 0, 255) / 255) ** rng.uniform(0.8, 1.25)
    blur = float(rng.uniform(0.0, 1.2))
    if blur > 0.3:
        img = cv2.GaussianBlur(img, (0, 0), blur)
    img = np.clip(img + rng.normal(0, rng.uniform(1, 5), img.shape), 0, 255).astype(np.uint8)
    quality = int(rng.integers(70, 95))
    pts = cv2.perspectiveTransform(np.float32(centres)[None], warp)[0]
    side = cv2.perspectiveTransform((np.float32(centres) + np.float32([pit_r, 0]))[None], warp)[0]
    down = cv2.perspectiveTransform((np.float32(centres) + np.float32([0, pit_r]))[None], warp)[0]
    radii = (np.linalg.norm(side - pts, axis=1) * stretch + np.linalg.norm(down - pts, axis=1)) / 2
    truth = {"status": "ok", "corners_px": dst.tolist(), "counts": counts, "pit_centers_px": pts.tolist(),
             "pit_radius_px": radii.tolist(), "drawn_seed": seed,
             "edge": ("none", "darker bevel", "lighter bevel")[edge_kind], "pit_stretch": stretch, "blur_px": blur,
             "margin_of_pitch": margin / PITCH, "gap_of_pitch": gap / PITCH, "band_of_pitch": band / PITCH if edge_kind else 0.0}
    if arm:  # its own draws, so the board is the same with and without it
        img, truth["arm_covers"] = _arm(img, truth, np.random.default_rng([seed, 1]))
        truth["status"] = "occluded" if truth["arm_covers"] else "ok"
    _, jpeg = cv2.imencode(".jpg", img, [cv2.IMWRITE_JPEG_QUALITY, quality])
    return cv2.imdecode(jpeg, cv2.IMREAD_COLOR), truth


def drawn_boards(n: int, seed: int, *, arm: bool = False) -> list[tuple[np.ndarray, dict[str, Any]]]:
    """``n`` drawn boards from seeds ``seed``, ``seed`` + 1, ... (with ``arm``, each with an arm over it)."""
    return [draw_board(seed + k, arm=arm) for k in range(n)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out", type=Path)
    parser.add_argument("--count", type=int, default=12)
    parser.add_argument("--seed", type=int, default=4_100_001)
    parser.add_argument("--arm", action="store_true", help="an arm reaching over each board")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    with open(args.out / "truth.jsonl", "w") as f:
        for k in range(args.count):
            image, truth = draw_board(args.seed + k, arm=args.arm)
            name = f"drawn_{args.seed + k}.png"
            cv2.imwrite(str(args.out / name), image)
            f.write(json.dumps({"image": name} | truth) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
