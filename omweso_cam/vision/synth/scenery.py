"""Everything around the board: the table, clutter, a hand and arm, light and the camera's flaws."""

from __future__ import annotations

import math

import cv2
import numpy as np

from omweso_cam.vision.synth import textures
from omweso_cam.vision.synth.geometry import BoardGeometry, Camera
from omweso_cam.vision.synth.scene import PRINTS, Scene

#: Largest side of a background texture (px).
_MAX_BACKGROUND_PX = 1800


def table_homography(camera: Camera, table_z_mm: float) -> np.ndarray:
    """Image (undistorted) from table-plane (x, y, 1) in mm, the plane z = table_z_mm."""
    R, t = camera.R, camera.t
    h = camera.K @ np.column_stack([R[:, 0], R[:, 1], R[:, 2] * table_z_mm + t])
    return np.asarray(h / h[2, 2])


def render_table(
    scene: Scene,
    camera: Camera,
    table_z_mm: float,
    rng: np.random.Generator,
) -> np.ndarray:
    """The table under the board, in perspective, lit flat: float32 BGR (H, W, 3)."""
    w, h = scene.image_size_px
    image_from_table = table_homography(camera, table_z_mm)
    table_from_image = np.linalg.inv(image_from_table)
    corners = np.array([[0, 0, 1], [w, 0, 1], [w, h, 1], [0, h, 1]], dtype=float)
    mm = corners @ table_from_image.T
    mm = mm[:, :2] / mm[:, 2:3]
    lo = np.clip(mm.min(axis=0) - 20.0, -6000, 6000)
    hi = np.clip(mm.max(axis=0) + 20.0, -6000, 6000)
    extent = hi - lo
    px_per_mm = float(min(1.1 * w / max(extent[0], 1.0), _MAX_BACKGROUND_PX / max(extent.max(), 1.0)))
    px_per_mm = max(px_per_mm, 0.05)
    size = (max(8, int(extent[1] * px_per_mm)), max(8, int(extent[0] * px_per_mm)))
    kind = scene.background
    if kind == "wood":
        tex = textures.wood(
            rng, size, px_per_mm=px_per_mm, base_rgb=scene.background_rgb, grain_contrast=0.3,
            grain_period_mm=float(rng.uniform(4, 12)), waviness=0.6, planks_mm=float(rng.uniform(90, 200)),
        )
    elif kind == "cloth":
        tex = textures.cloth(rng, size, px_per_mm=px_per_mm, rgb=scene.background_rgb)
    elif kind == "pattern" or kind in PRINTS:
        tex = textures.pattern(rng, size, px_per_mm=px_per_mm, rgb=scene.background_rgb, rgb2=scene.background_rgb2,
                               print_kind=None if kind == "pattern" else kind)
    elif kind == "tiles":
        tex = textures.tiles(rng, size, px_per_mm=px_per_mm, rgb=scene.background_rgb, rgb2=scene.background_rgb2)
    elif kind == "concrete":
        tex = textures.concrete(rng, size, px_per_mm=px_per_mm, rgb=scene.background_rgb)
    elif kind == "newspaper":
        tex = textures.newspaper(rng, size, px_per_mm=px_per_mm)
    elif kind == "grass_mat":
        tex = textures.cloth(rng, size, px_per_mm=px_per_mm * 3.0, rgb=(60, 120, 50))
    else:  # plain
        tex = np.empty((*size, 3), np.float32)
        tex[:] = textures.rgb01(scene.background_rgb)
        tex *= 1.0 + textures.smooth_noise(rng, size, 200 * px_per_mm)[..., None] * np.float32(0.06)
    tex = np.ascontiguousarray(tex[..., ::-1])  # RGB -> BGR
    _draw_clutter(tex, scene, rng, px_per_mm)
    # texture px -> table mm -> image
    table_from_tex = np.array([[1 / px_per_mm, 0, lo[0]], [0, -1 / px_per_mm, hi[1]], [0, 0, 1]])
    image_from_tex = image_from_table @ table_from_tex
    return cv2.warpPerspective(tex, image_from_tex, (w, h), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REFLECT)


def _draw_clutter(tex: np.ndarray, scene: Scene, rng: np.random.Generator, px_per_mm: float) -> None:
    """Coins, paper, a phone, a pen, a cup, loose seeds: things found on a playing table."""
    h, w = tex.shape[:2]
    shadow = np.zeros((h, w), np.float32)
    for _ in range(scene.clutter_count):
        cx, cy = rng.uniform(0, w), rng.uniform(0, h)
        kind = int(rng.integers(5))
        colour = tuple(float(c) for c in rng.uniform(0.05, 0.95, 3))
        angle = float(rng.uniform(0, 180))
        if kind == 0:  # coin / bottle cap
            r = int(rng.uniform(10, 16) * px_per_mm)
            cv2.circle(shadow, (int(cx + 3 * px_per_mm), int(cy + 3 * px_per_mm)), r, 1.0, -1)
            cv2.circle(tex, (int(cx), int(cy)), r, colour, -1, cv2.LINE_AA)
            cv2.circle(tex, (int(cx), int(cy)), max(1, int(r * 0.8)), tuple(c * 0.85 for c in colour), 1, cv2.LINE_AA)
        elif kind in (1, 2):  # paper sheet / phone
            size = (210, 297) if kind == 1 else (72, 150)
            box = cv2.boxPoints(((cx, cy), (size[0] * px_per_mm, size[1] * px_per_mm), angle)).astype(np.int32)
            cv2.fillConvexPoly(shadow, box + int(4 * px_per_mm), 1.0)
            fill = (0.9, 0.9, 0.88) if kind == 1 else (0.08, 0.08, 0.1)
            cv2.fillConvexPoly(tex, box, fill, cv2.LINE_AA)
        elif kind == 3:  # pen
            length = 140 * px_per_mm
            dx, dy = math.cos(math.radians(angle)) * length / 2, math.sin(math.radians(angle)) * length / 2
            p0, p1 = (int(cx - dx), int(cy - dy)), (int(cx + dx), int(cy + dy))
            thick = max(1, int(9 * px_per_mm))
            cv2.line(shadow, (p0[0] + thick, p0[1] + thick), (p1[0] + thick, p1[1] + thick), 1.0, thick)
            cv2.line(tex, p0, p1, colour, thick, cv2.LINE_AA)
        else:  # cup seen from above
            r = int(rng.uniform(38, 48) * px_per_mm)
            cv2.circle(shadow, (int(cx + r * 0.4), int(cy + r * 0.4)), r, 1.0, -1)
            cv2.circle(tex, (int(cx), int(cy)), r, colour, -1, cv2.LINE_AA)
            cv2.circle(tex, (int(cx), int(cy)), int(r * 0.85), tuple(c * 0.35 for c in colour), -1, cv2.LINE_AA)
    if scene.clutter_count:
        shadow = np.asarray(cv2.GaussianBlur(shadow, (0, 0), max(1.0, 3 * px_per_mm)), np.float32)
        tex *= (1.0 - 0.4 * shadow)[..., None]


def draw_board_body(
    image: np.ndarray,
    board: BoardGeometry,
    camera: Camera,
    scene: Scene,
    side_bgr: np.ndarray,
    light: np.ndarray,
) -> None:
    """Shadow of the board on the table and its visible side faces (in place, undistorted)."""
    outline = board.outline_mm(8)
    top = np.hstack([outline, np.zeros((len(outline), 1))])
    bottom = np.hstack([outline, np.full((len(outline), 1), -board.thickness_mm)])
    h, w = image.shape[:2]
    # shadow on the table: the top outline pushed along the light down to the table
    lz = max(light[2], 0.15)
    cast = top.copy()
    cast[:, :2] -= light[:2] / lz * board.thickness_mm
    cast[:, 2] = -board.thickness_mm
    shadow_pts = np.vstack([camera.project(cast, distort=False), camera.project(bottom, distort=False)])
    mask = np.zeros((h, w), np.float32)
    hull = cv2.convexHull(shadow_pts.astype(np.float32)).astype(np.int32)
    cv2.fillConvexPoly(mask, hull, 1.0, cv2.LINE_AA)
    scale = float(np.ptp(shadow_pts[:, 0])) / (2 * board.half_width_mm)
    mask = np.asarray(cv2.GaussianBlur(mask, (0, 0), max(1.0, 6.0 * scale)), np.float32)
    image *= (1.0 - mask * np.float32(0.5 * (1.0 - scene.ambient * 0.5)))[..., None]
    # side faces: every face of the prism whose outward normal looks at the camera
    cam_c = camera.centre_mm
    n = len(outline)
    for i in range(n):
        j = (i + 1) % n
        edge = outline[j] - outline[i]
        normal = np.array([edge[1], -edge[0], 0.0])  # outward for a CCW outline
        norm = np.linalg.norm(normal)
        if norm < 1e-9:
            continue
        normal /= norm
        mid = np.array([*(outline[i] + outline[j]) / 2.0, -board.thickness_mm / 2.0])
        if np.dot(normal, cam_c - mid) <= 0:
            continue
        quad = np.vstack([top[i], top[j], bottom[j], bottom[i]])
        pts = camera.project(quad, distort=False).astype(np.float32)
        shade = scene.ambient + (1 - scene.ambient) * max(float(np.dot(normal, light)), 0.0)
        colour = tuple(float(c) for c in side_bgr * shade)
        cv2.fillConvexPoly(image, np.round(pts * 16).astype(np.int32), colour, cv2.LINE_AA, shift=4)


def draw_hand(
    image: np.ndarray,
    board: BoardGeometry,
    camera: Camera,
    scene: Scene,
    light: np.ndarray,
    rng: np.random.Generator,
    target_mm: tuple[float, float] | None = None,
) -> np.ndarray:
    """Draw a hand and arm over the board (in place, undistorted); returns its mask (H, W) 0..1.

    The hand hovers ``hand_height_mm`` above ``target_mm`` (default: the scene's
    ``hand_target``), the arm reaching back to the ``hand_from`` edge.
    """
    h, w = image.shape[:2]
    if target_mm is None:
        target_mm = (scene.hand_target[0] * board.half_width_mm, scene.hand_target[1] * board.half_height_mm)
    hz = scene.hand_height_mm
    base_angle = {"south": -90.0, "north": 90.0, "east": 0.0, "west": 180.0}[scene.hand_from]
    angle = math.radians(base_angle + rng.uniform(-25, 25))
    arm_dir = np.array([math.cos(angle), math.sin(angle)])
    k_scale = scene.hand_scale
    # arm axis in 3D: from the wrist back towards the player, rising slightly
    cam_c = camera.centre_mm
    axis_pts = []
    widths = []
    for dist in np.linspace(0.0, 900.0, 19):
        p = np.array([*(np.asarray(target_mm) + arm_dir * dist * k_scale), hz + 0.25 * dist])
        if np.dot(camera.R[2], p - cam_c) < 80.0:  # too close to (or behind) the camera
            break
        axis_pts.append(p)
        widths.append((72.0 if dist < 250 else 92.0) * k_scale if dist > 0 else 80.0 * k_scale)
    mask = np.zeros((h, w), np.uint8)
    if len(axis_pts) < 2:
        return mask.astype(np.float32)
    pts3 = np.array(axis_pts)
    side = np.array([-arm_dir[1], arm_dir[0], 0.0])
    left = camera.project(pts3 + side * np.array(widths)[:, None] / 2, distort=False)
    right = camera.project(pts3 - side * np.array(widths)[:, None] / 2, distort=False)
    centre_px = camera.project(pts3, distort=False)
    px_per_mm = float(np.linalg.norm(left[0] - right[0]) / widths[0])
    sleeve_mask = np.zeros((h, w), np.uint8)
    wrist = 4  # axis index where the wrist (and a sleeve) begins
    for i in range(1, len(pts3)):
        quad = np.array([left[i - 1], left[i], right[i], right[i - 1]])
        target_mask = sleeve_mask if (scene.sleeve_rgb is not None and i > wrist) else mask
        cv2.fillConvexPoly(target_mask, np.round(quad * 4).astype(np.int32), 255, cv2.LINE_AA, shift=2)
    # the hand: palm ahead of the wrist, fingers curled down towards the pit
    forward_img = centre_px[0] - centre_px[1]
    forward_img /= np.linalg.norm(forward_img) + 1e-9
    side_img = np.array([-forward_img[1], forward_img[0]])
    palm_c = centre_px[0] + forward_img * 20 * k_scale * px_per_mm
    ang = math.degrees(math.atan2(forward_img[1], forward_img[0]))
    palm_axes = (int(52 * k_scale * px_per_mm), int(44 * k_scale * px_per_mm))
    cv2.ellipse(mask, (int(palm_c[0]), int(palm_c[1])), palm_axes, ang, 0, 360, 255, -1, cv2.LINE_AA)
    finger_w = max(2, int(20 * k_scale * px_per_mm))
    curl = rng.uniform(0.0, 1.0)  # 0: fist closed round the seeds, 1: fingers out
    spread = rng.uniform(0.0, 0.25)
    for f in range(4):
        off = (f - 1.5) * 18.5 * k_scale * px_per_mm
        base = palm_c + forward_img * 36 * k_scale * px_per_mm + side_img * off
        length = (18 + 40 * curl) * (1.0 - 0.12 * abs(f - 1.2)) * k_scale * px_per_mm
        tip = base + forward_img * length + side_img * off * spread
        cv2.line(mask, (int(base[0]), int(base[1])), (int(tip[0]), int(tip[1])), 255, finger_w, cv2.LINE_AA)
    thumb_side = 1 if rng.random() < 0.5 else -1
    t0 = palm_c + side_img * thumb_side * 34 * k_scale * px_per_mm
    t1 = t0 + (forward_img * 0.8 + side_img * thumb_side * 0.35) * (30 + 15 * curl) * k_scale * px_per_mm
    cv2.line(mask, (int(t0[0]), int(t0[1])), (int(t1[0]), int(t1[1])), 255, int(finger_w * 1.15), cv2.LINE_AA)

    full = cv2.max(mask, sleeve_mask)
    if not full.any():
        return full.astype(np.float32)
    alpha_full = full.astype(np.float32) / 255.0
    bx, by, bw, bh = cv2.boundingRect(full)
    # cast shadow of the hand on the board: pushed away from the light, softened by height
    shadow_pt = np.array([*(np.asarray(target_mm) - light[:2] / max(light[2], 0.15) * hz), 0.0])
    hand_pt = np.array([*target_mm, hz])
    off = camera.project(shadow_pt[None], distort=False)[0] - camera.project(hand_pt[None], distort=False)[0]
    blur = max(1.0, 0.12 * hz * px_per_mm)
    pad = int(3 * blur) + 2
    sx0 = int(max(min(bx, bx + off[0]) - pad, 0))
    sy0 = int(max(min(by, by + off[1]) - pad, 0))
    sx1 = int(min(max(bx + bw, bx + bw + off[0]) + pad, w))
    sy1 = int(min(max(by + bh, by + bh + off[1]) + pad, h))
    if sx1 > sx0 and sy1 > sy0:
        shift = np.array([[1, 0, off[0]], [0, 1, off[1]]], dtype=np.float32)
        roi = alpha_full[sy0:sy1, sx0:sx1]
        shadow = cv2.warpAffine(roi, shift, (sx1 - sx0, sy1 - sy0))
        shadow = cv2.GaussianBlur(shadow, (0, 0), blur)
        image[sy0:sy1, sx0:sx1] *= (1.0 - shadow * np.float32(0.6 * (1 - scene.ambient * 0.5)))[..., None]
    # shading: a height field from the blurred mask gives normals for a soft, round look
    sigma = max(1.0, 12 * k_scale * px_per_mm)
    pad = int(3 * sigma) + 2
    x0, y0 = max(bx - pad, 0), max(by - pad, 0)
    x1, y1 = min(bx + bw + pad, w), min(by + bh + pad, h)
    alpha = alpha_full[y0:y1, x0:x1]
    height = cv2.GaussianBlur(alpha, (0, 0), sigma)
    gx = cv2.Sobel(height, cv2.CV_32F, 1, 0, ksize=3) * np.float32(sigma)
    gy = cv2.Sobel(height, cv2.CV_32F, 0, 1, ksize=3) * np.float32(sigma)
    light_img = camera.R @ light  # light direction in camera axes (x right, y down, z forward)
    norm = np.sqrt(gx * gx + gy * gy + np.float32(1.0))
    diffuse = np.clip((-gx * light_img[0] - gy * light_img[1] - light_img[2]) / norm, 0, 1)
    shade = scene.ambient + (1 - scene.ambient) * diffuse
    skin = textures.rgb01(scene.skin_rgb)[::-1]
    tex = 1.0 + textures.smooth_noise(rng, alpha.shape, max(4.0, 10 * px_per_mm))[..., None] * np.float32(0.025)
    colour = skin[None, None, :] * tex
    if scene.sleeve_rgb is not None:
        sl = (sleeve_mask[y0:y1, x0:x1].astype(np.float32) / 255.0)[..., None]
        colour = colour * (1 - sl) + textures.rgb01(scene.sleeve_rgb)[::-1][None, None, :] * sl
    light_bgr = np.asarray(scene.light_rgb[::-1], np.float32)
    rendered = colour * shade[..., None] * light_bgr
    rendered += (np.float32(0.08) * diffuse**8)[..., None]  # a soft sheen on skin
    a3 = alpha[..., None]
    premultiplied = rendered * a3
    if scene.hand_motion_blur_px >= 1.0:  # a moving hand smears along its motion
        kernel = line_kernel(scene.hand_motion_blur_px, float(rng.uniform(0, 180)))
        premultiplied = np.asarray(cv2.filter2D(premultiplied, -1, kernel), np.float32)
        a3 = np.asarray(cv2.filter2D(alpha, -1, kernel), np.float32)[..., None]
        alpha_full[y0:y1, x0:x1] = a3[..., 0]
    patch = image[y0:y1, x0:x1]
    patch[:] = patch * (1 - a3) + premultiplied
    return alpha_full


def line_kernel(length_px: float, angle_deg: float) -> np.ndarray:
    """A normalised straight-line blur kernel: a line about ``2 * length_px`` pixels long (``length_px``
    either side of the exposure's middle), so ``Scene.motion_blur_px`` smears twice its value."""
    n = round(length_px) * 2 + 1
    kernel = np.zeros((n, n), np.float32)
    c = n // 2
    a = math.radians(angle_deg)
    dx, dy = math.cos(a) * c, math.sin(a) * c
    cv2.line(kernel, (round(c - dx), round(c - dy)), (round(c + dx), round(c + dy)), 1.0, 1, cv2.LINE_AA)
    return np.asarray(kernel / kernel.sum(), dtype=np.float32)


def apply_light(image: np.ndarray, scene: Scene, rng: np.random.Generator) -> None:
    """Uneven exposure, colour cast already in the shading, plus an optional hard cast shadow."""
    h, w = image.shape[:2]
    lh, lw = max(8, h // 4), max(8, w // 4)  # light varies slowly: compute it coarse
    ys, xs = np.mgrid[0:lh, 0:lw].astype(np.float32)
    xs = xs / np.float32(lw) - 0.5
    ys = ys / np.float32(lh) - 0.5
    a = rng.uniform(0, 2 * math.pi)
    gain = 1.0 + scene.light_gradient * (np.cos(a) * xs + np.sin(a) * ys) * 1.6
    bx, by = rng.uniform(-0.5, 0.5, 2)
    spot = np.exp(-((xs - bx) ** 2 + (ys - by) ** 2) / np.float32(rng.uniform(0.05, 0.4)))
    gain = gain + np.float32(scene.light_gradient * 0.6) * (spot - 0.5)
    gain *= np.float32(scene.exposure)
    if scene.cast_shadow > 0:
        shadow = np.zeros((h, w), np.float32)
        n = int(rng.integers(3, 7))
        cx, cy = rng.uniform(0, w), rng.uniform(0, h)
        radius = rng.uniform(0.3, 0.8) * max(w, h)
        angles = np.sort(rng.uniform(0, 2 * math.pi, n))
        poly = np.stack(
            [cx + radius * np.cos(angles) * rng.uniform(0.5, 1.5, n), cy + radius * np.sin(angles) * rng.uniform(0.5, 1.5, n)], 1
        )
        cv2.fillPoly(shadow, [np.round(poly * 4).astype(np.int32)], 1.0, cv2.LINE_AA, shift=2)
        edge = float(rng.uniform(1.0, 8.0))
        small = cv2.resize(shadow, (w // 2, h // 2), interpolation=cv2.INTER_AREA)
        shadow = np.asarray(cv2.resize(cv2.GaussianBlur(small, (0, 0), edge / 2), (w, h)), np.float32)
    if scene.vignetting > 0:
        gain *= 1.0 - np.float32(scene.vignetting) * (xs * xs + ys * ys) * 2.0
    full = cv2.resize(gain.astype(np.float32), (w, h), interpolation=cv2.INTER_LINEAR)
    if scene.cast_shadow > 0:
        full *= 1.0 - np.float32(scene.cast_shadow) * shadow
    image *= full[..., None]


def apply_camera(image: np.ndarray, scene: Scene, camera: Camera, rng: np.random.Generator, maps: tuple[np.ndarray, np.ndarray] | None) -> np.ndarray:
    """Lens distortion, focus and motion blur, sensor noise; returns uint8 BGR (JPEG later)."""
    out = image
    if maps is not None:
        out = cv2.remap(out, maps[0], maps[1], cv2.INTER_LINEAR, borderMode=cv2.BORDER_REFLECT)
    if scene.focus_blur_px > 0.3:
        out = cv2.GaussianBlur(out, (0, 0), scene.focus_blur_px)
    if scene.motion_blur_px >= 1.0:
        out = cv2.filter2D(out, -1, line_kernel(scene.motion_blur_px, scene.motion_angle_deg))
    h, w = out.shape[:2]
    sigma = scene.noise_sigma / 255.0
    noise = rng.standard_normal((h, w, 1), dtype=np.float32) * np.float32(sigma)
    # chroma noise is blotchy after demosaicing: draw it at half resolution
    chroma_small = rng.standard_normal(((h + 1) // 2, (w + 1) // 2, 3), dtype=np.float32)
    chroma = cv2.resize(chroma_small, (w, h), interpolation=cv2.INTER_LINEAR) * np.float32(sigma * 0.7)
    shot = cv2.sqrt(np.maximum(out, 0)) * np.float32(0.8)
    out = out + (noise + chroma) * shot + noise * np.float32(0.4)
    return np.asarray(cv2.convertScaleAbs(out, alpha=255.0))


def jpeg_roundtrip(image: np.ndarray, quality: int) -> np.ndarray:
    """The image as a JPEG of ``quality`` would decode (no-op for quality 0)."""
    if quality <= 0:
        return image
    ok, buf = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, int(quality)])
    if not ok:
        raise RuntimeError("JPEG encoding failed")
    decoded = cv2.imdecode(buf, cv2.IMREAD_COLOR)
    if decoded is None:
        raise RuntimeError("JPEG decoding failed")
    return np.asarray(decoded)
