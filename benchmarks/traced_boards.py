"""Boards path traced by Blender's Cycles: a third renderer, physically based, to see the reader on light it never saw.

``omweso_cam.vision.synth`` (the renderer the reader was built, trained and tuned on) and
``benchmarks/drawn_boards.py`` (the second renderer, flat 2-D drawing) both paint their shading:
a pit's bowl, a seed's highlight, a heap's shadows are formulas. Here they are light: the board
is a 3-D body with its pits carved as bowls (a profile from round to flat-bottomed, a rolled top
edge, sometimes a gap between the halves), every seed a 3-D body (a squashed sphere, turned at
random) dropped into its pit one by one and left where it first rests on the bowl or on the seeds
already there, so heaps pile up and hide their lower seeds the way real ones do; a sun of some
angular size and an area lamp cast soft shadows, the wood and the seeds reflect light onto each
other, and a lens may have depth of field. Everything is drawn from a seed number: the board's
proportions, the wood (grain from Blender's wave texture), the seeds' colour, size, shape and
gloss, the table (cloth, planks, a checked cloth, stone), the light and the camera (up to 40
degrees from vertical, turned and rolled a little, 24-55 mm lenses). The linear render is then
exposed, given a camera's tone curve, sensor noise, vignetting and JPEG compression here.

Nothing here is used for training or tuning. Written 2026-12-04; seeds 9,000,001-9,000,099 were
used to make this renderer right (its truth lines up with its images), and 9,000,001-9,000,040 to
check a counter trained on varnished bowls (not the shipped one); the committed set
``sample_images/traced`` and the benchmark use seeds 9,100,001+ and were read once the renderer
was frozen (docs/vision.md, "Boards path traced by a third renderer").

It needs Blender as a Python module (``bpy``, GPL-3.0-or-later; its wheel is for one Python
version: 4.5 LTS for Python 3.11): ``./scripts/setup-traced``. The suite and the other
benchmarks do not; the images it made are committed with their truth.

    .venv-traced/bin/python benchmarks/traced_boards.py OUT_DIR --count 32 --seed 9100001 [--samples 32]

writes ``traced_<seed>.jpg`` and ``traced_<seed>.json`` (the truth in the format of
``sample_images/stills``: status, counts in the reader's pit order, ``corners_px`` TL TR BR BL
with South at the bottom, ``pit_centers_px``, ``pit_radius_px``, ``image_size``, ``scene``).
"""

from __future__ import annotations

import argparse
import json
import math
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

ROWS, COLS = 4, 8
MM = 0.001  # the scene is built in metres

#: Seed colours (sRGB 0-1): grey nicker nuts, grey-green, brown beans, black and cream pebbles, tan, red-brown.
SEED_COLOURS = ((0.55, 0.57, 0.53), (0.48, 0.52, 0.45), (0.45, 0.30, 0.18), (0.10, 0.10, 0.11),
                (0.86, 0.82, 0.70), (0.68, 0.52, 0.33), (0.50, 0.18, 0.12))
#: Frame sizes (width, height).
FRAMES = ((1280, 720), (960, 540), (1280, 720), (1440, 810))


def _linear(srgb: tuple[float, ...] | np.ndarray) -> list[float]:
    """sRGB (0-1) to the linear values Blender's colour inputs take."""
    c = np.clip(np.asarray(srgb, np.float64), 0, 1)
    return [float(v) for v in np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)]


def _hsv(hue: float, sat: float, val: float) -> np.ndarray:
    """An sRGB colour (R, G, B) from hue (degrees), saturation and value."""
    k = (np.array([5.0, 3.0, 1.0]) + hue / 60.0) % 6
    return val - val * sat * np.clip(np.minimum(k, 4 - k), 0, 1)


def _position(rnd: random.Random) -> list[int]:
    """The standard set-up one time in four, otherwise a position 1-40 random moves into a game (64 seeds)."""
    from omweso_cam.rules import Position, RuleSet
    from omweso_cam.vision.synth.corpus import heavy_position, random_game_position

    if rnd.random() < 0.25:
        return list(Position.standard().board)
    rules = RuleSet.preset("seed")
    if rnd.random() < 0.3:
        return list(heavy_position(rnd, rules).board)
    position = None
    while position is None:  # a random game may end before its plies
        position = random_game_position(rnd, rules, plies=rnd.randint(1, 40))
    return list(position.board)


def plan(seed: int) -> dict[str, Any]:
    """Every random choice of one scene, from ``seed`` (lengths in mm, angles in degrees, colours sRGB)."""
    rng = np.random.default_rng(seed)
    u = rng.uniform
    pitch = u(52, 75)
    r = pitch * u(0.36, 0.46)
    wood = u(0.2, 0.8) * np.array([1.0, u(0.55, 0.82), u(0.3, 0.6)])  # browns (R, G, B), pale to dark
    if rng.random() < 0.2:  # a painted or stained board of any hue
        wood = _hsv(u(0, 360), u(0.1, 0.7), u(0.15, 0.8))
    seed_base = np.array(SEED_COLOURS[int(rng.integers(len(SEED_COLOURS)))]) * u(0.8, 1.15)
    table_kind = str(rng.choice(["cloth", "planks", "checked", "stone"]))
    width, height = FRAMES[int(rng.integers(len(FRAMES)))]
    return {
        "seed": seed,
        "counts": _position(random.Random(seed)),
        "pitch_x_mm": pitch, "pitch_y_mm": pitch * u(0.9, 1.12),
        "pit_radius_mm": r, "pit_depth_mm": r * u(0.35, 0.75), "pit_power": u(2.0, 4.5),
        "pit_shade": u(0.45, 1.0),  # albedo of the pits against the wood (worn dark to none)
        "margin_x_mm": pitch * u(0.12, 0.55), "margin_y_mm": pitch * u(0.12, 0.55),
        "gap_mm": pitch * u(0.05, 0.35) if rng.random() < 0.3 else 0.0,
        "thickness_mm": u(25, 70), "edge_roll_mm": u(1.0, 4.0),
        "wood_srgb": wood.tolist(), "wood_dark": u(0.72, 0.92), "grain_scale": u(15, 60),
        "grain_distortion": u(1, 8), "wood_roughness": u(0.35, 0.8),
        "seed_srgb": np.clip(seed_base, 0, 1).tolist(), "seed_spread": u(0.05, 0.3),
        "seed_radius_of_pit": u(0.24, 0.34), "seed_flatness": u(0.65, 0.95), "seed_elongation": u(1.0, 1.35), "seed_roughness": u(0.15, 0.6),
        "table": table_kind, "table_srgb": _hsv(u(0, 360), u(0, 0.6), u(0.08, 0.9)).tolist(),
        "table_srgb2": _hsv(u(0, 360), u(0, 0.6), u(0.08, 0.9)).tolist(),
        "sun_elevation": u(35, 85), "sun_azimuth": u(0, 360), "sun_angle": u(0.5, 12),
        "sun_strength": u(0.5, 4.0), "sun_kelvin_tint": u(-1, 1),
        "area_power_w": u(0, 500), "area_size_m": u(0.3, 1.5), "area_azimuth": u(0, 360),
        "area_elevation": u(40, 80), "ambient": u(0.1, 0.8), "ambient_tint": rng.uniform(0.8, 1.0, 3).tolist(),
        "tilt": u(0, 40), "azimuth": u(-15, 15), "roll": u(-6, 6), "lens_mm": u(24, 55), "fill": u(0.5, 0.85),
        "aim_offset": rng.uniform(-0.05, 0.05, 2).tolist(),
        "f_stop": float(u(2.0, 8.0)) if rng.random() < 0.5 else None,
        "width": width, "height": height,
        "exposure_white": u(0.75, 1.05), "gamma": u(0.85, 1.15), "noise": u(0.5, 4.0),
        "vignetting": u(0.0, 0.35), "jpeg_quality": int(rng.integers(75, 96)),
        "has_board": bool(rng.random() >= 0.1),  # one scene in ten: the table alone, framed as if it held a board
    }


def pit_centres_mm(p: dict[str, Any]) -> np.ndarray:
    """(32, 2) pit centres on the board (x right, y away from South), in the reader's order: a4..h4, ..., a1..h1."""
    xs = (np.arange(COLS) - 3.5) * p["pitch_x_mm"]
    out = []
    for k in range(ROWS):  # k = 0 is row 4, the far row
        i = ROWS - 1 - k  # 0 = row 1, South's back row, nearest the camera
        y = (i - 1.5) * p["pitch_y_mm"] + (p["gap_mm"] / 2 if i >= 2 else -p["gap_mm"] / 2)
        out += [(x, y) for x in xs]
    return np.array(out)


def board_size_mm(p: dict[str, Any]) -> tuple[float, float]:
    """The board's top face, width (along the rows) and depth."""
    w = 7 * p["pitch_x_mm"] + 2 * (p["pit_radius_mm"] + p["margin_x_mm"])
    h = 3 * p["pitch_y_mm"] + p["gap_mm"] + 2 * (p["pit_radius_mm"] + p["margin_y_mm"])
    return w, h


def _bowl(rho: np.ndarray, p: dict[str, Any]) -> np.ndarray:
    """Depth below the top face (mm, negative) of a pit at distance ``rho`` from its centre."""
    t = np.clip(rho / p["pit_radius_mm"], 0, 1)
    return -p["pit_depth_mm"] * (1 - t ** p["pit_power"])


def _surface(xy: np.ndarray, p: dict[str, Any], centres: np.ndarray) -> np.ndarray:
    """Height (mm) of the board's top at points ``xy`` (..., 2): the pits, and the rolled edge."""
    d = np.linalg.norm(xy[..., None, :] - centres, axis=-1).min(axis=-1)
    z = _bowl(d, p)
    w, h = board_size_mm(p)
    to_edge = np.minimum(w / 2 - np.abs(xy[..., 0]), h / 2 - np.abs(xy[..., 1]))
    e = p["edge_roll_mm"]
    inside = np.clip(e - to_edge, 0, e)
    return z - (e - np.sqrt(np.maximum(e * e - inside * inside, 0)))


def _smooth(z: np.ndarray, sigma: float) -> np.ndarray:
    """Separable Gaussian blur of a height field (rounds the pits' rims), edges held."""
    k = np.arange(-int(3 * sigma) - 1, int(3 * sigma) + 2)
    g = np.exp(-0.5 * (k / sigma) ** 2)
    g /= g.sum()
    pad = len(k) // 2
    zp = np.pad(z, pad, mode="edge")
    zp = np.apply_along_axis(lambda v: np.convolve(v, g, mode="same"), 0, zp)
    zp = np.apply_along_axis(lambda v: np.convolve(v, g, mode="same"), 1, zp)
    return zp[pad:-pad, pad:-pad]


def seed_positions(p: dict[str, Any], rng: np.random.Generator) -> list[tuple[float, float, float]]:
    """Where every seed rests (x, y, z of its centre, mm): dropped one by one into its pit, each at the lowest
    of 48 places drawn in the pit where it touches the bowl or a seed already there (a little chance mixed in)."""
    centres = pit_centres_mm(p)
    s = p["seed_radius_of_pit"] * p["pit_radius_mm"] * (1 + math.sqrt(p["seed_elongation"])) / 2  # collision radius
    sz = p["seed_radius_of_pit"] * p["pit_radius_mm"] * p["seed_flatness"]
    ring = np.array([(0.0, 0.0)] + [(a * math.cos(t), a * math.sin(t)) for a in (0.5, 0.85, 1.0)
                                    for t in np.linspace(0, 2 * math.pi, 12, endpoint=False)]) * s
    out = []
    for (cx, cy), n in zip(centres, p["counts"], strict=True):
        placed: list[np.ndarray] = []
        for _ in range(n):
            rad = np.sqrt(rng.uniform(0, 1, 48)) * max(p["pit_radius_mm"] - 0.8 * s, 0.5 * s)
            ang = rng.uniform(0, 2 * math.pi, 48)
            cand = np.stack([cx + rad * np.cos(ang), cy + rad * np.sin(ang)], axis=1)
            # resting on the bowl: highest contact of the seed's underside over a disc of points
            q = cand[:, None, :] + ring[None]
            under = np.sqrt(np.maximum(s * s - (ring ** 2).sum(axis=1), 0))[None] * (sz / s)
            z = (_bowl(np.linalg.norm(q - np.array([cx, cy]), axis=-1), p) + under).max(axis=1)
            for other in placed:  # or resting on a seed
                d2 = ((cand - other[:2]) ** 2).sum(axis=1)
                touch = d2 < (2 * s) ** 2
                z = np.where(touch, np.maximum(z, other[2] + np.sqrt(np.maximum((2 * s) ** 2 - d2, 0)) * (sz / s)), z)
            pick = int(np.argmin(z + rng.uniform(0, 0.3 * sz, len(z))))
            placed.append(np.array([cand[pick, 0], cand[pick, 1], z[pick]]))
        out += [tuple(float(v) for v in c) for c in placed]
    return out


# --- Blender -------------------------------------------------------------------------------------------------


def _node(tree: Any, kind: str, **inputs: Any) -> Any:
    node = tree.nodes.new(kind)
    for name, value in inputs.items():
        node.inputs[name].default_value = value
    return node


def _board_mesh(p: dict[str, Any]) -> Any:
    """The board as one mesh: its top a height field at about 1 mm, four walls, a bottom."""
    import bpy

    centres = pit_centres_mm(p)
    w, h = board_size_mm(p)
    nx, ny = int(w / 1.0) + 1, int(h / 1.0) + 1
    xs, ys = np.linspace(-w / 2, w / 2, nx), np.linspace(-h / 2, h / 2, ny)
    gx, gy = np.meshgrid(xs, ys)
    xy = np.stack([gx, gy], axis=-1)
    z = _smooth(_surface(xy, p, centres), 1.2)
    pit = np.clip(-z / max(p["pit_depth_mm"] * 0.25, 0.5), 0, 1)  # 1 inside a pit, 0 on the flat
    t = p["thickness_mm"]
    top = np.stack([gx, gy, z], axis=-1).reshape(-1, 3)
    idx = np.arange(nx * ny).reshape(ny, nx)
    ring = np.concatenate([idx[0, :], idx[1:, -1], idx[-1, -2::-1], idx[-2:0:-1, 0]])  # boundary, in order
    low = top[ring] * np.array([1, 1, 0]) - np.array([0, 0, t])
    verts = np.concatenate([top, low]) * MM
    faces = np.stack([idx[:-1, :-1], idx[:-1, 1:], idx[1:, 1:], idx[1:, :-1]], axis=-1).reshape(-1, 4).tolist()
    m = len(ring)
    base = nx * ny
    faces += [[int(ring[(k + 1) % m]), int(ring[k]), base + k, base + (k + 1) % m] for k in range(m)]
    faces.append([base + k for k in range(m)][::-1])
    mesh = bpy.data.meshes.new("board")
    mesh.from_pydata(verts.tolist(), [], faces)
    mesh.update()
    values = np.concatenate([pit.reshape(-1), np.zeros(m)]).astype(np.float32)
    attr = mesh.attributes.new("pit", "FLOAT", "POINT")
    attr.data.foreach_set("value", values)
    mesh.shade_smooth()
    obj = bpy.data.objects.new("board", mesh)
    bpy.context.scene.collection.objects.link(obj)
    return obj


def _material(name: str, roughness: float) -> tuple[Any, Any, Any]:
    """A new node material (material, node tree, its Principled BSDF) of the given roughness."""
    import bpy

    mat = bpy.data.materials.new(name)
    mat.use_nodes = True
    bsdf = mat.node_tree.nodes["Principled BSDF"]
    bsdf.inputs["Roughness"].default_value = roughness
    return mat, mat.node_tree, bsdf


def _ramp(tree: Any, fac: Any, low: list[float], high: list[float], at: tuple[float, float] = (0.0, 1.0)) -> Any:
    """A colour ramp from ``low`` to ``high`` (linear RGBA) between ``at``, driven by ``fac``; its colour output."""
    ramp = tree.nodes.new("ShaderNodeValToRGB")
    for element, colour, position in zip(ramp.color_ramp.elements, (low, high), at, strict=True):
        element.color, element.position = colour, position
    tree.links.new(fac, ramp.inputs["Fac"])
    return ramp.outputs["Color"]


def _multiply(tree: Any, a: Any, b: Any, factor: Any) -> Any:
    """Colour output ``a`` multiplied by ``b`` (an output or a linear RGBA value) by ``factor`` (an output or a number)."""
    mix = tree.nodes.new("ShaderNodeMix")
    mix.data_type = "RGBA"
    mix.blend_type = "MULTIPLY"
    tree.links.new(a, mix.inputs["A"])
    for socket, value in (("B", b), ("Factor", factor)):
        if isinstance(value, (list, float)):
            mix.inputs[socket].default_value = value
        else:
            tree.links.new(value, mix.inputs[socket])
    return mix.outputs["Result"]


def _wood_material(p: dict[str, Any]) -> Any:
    mat, tree, bsdf = _material("wood", p["wood_roughness"])
    coords = tree.nodes.new("ShaderNodeTexCoord")
    stretch = _node(tree, "ShaderNodeMapping")  # grain: noise stretched along the rows
    stretch.inputs["Scale"].default_value = (p["grain_scale"] / 12, p["grain_scale"], p["grain_scale"] / 12)
    tree.links.new(coords.outputs["Object"], stretch.inputs["Vector"])
    grain = _node(tree, "ShaderNodeTexNoise", Detail=8.0, Roughness=0.6, Distortion=p["grain_distortion"] / 4)
    tree.links.new(stretch.outputs["Vector"], grain.inputs["Vector"])
    base = np.array(p["wood_srgb"])
    wood = _ramp(tree, grain.outputs["Fac"], [*_linear(base * p["wood_dark"]), 1], [*_linear(base), 1], at=(0.35, 0.65))
    pit = tree.nodes.new("ShaderNodeAttribute")  # 1 inside a pit (the board mesh's "pit" attribute)
    pit.attribute_name = "pit"
    tree.links.new(_multiply(tree, wood, [p["pit_shade"]] * 3 + [1], pit.outputs["Fac"]), bsdf.inputs["Base Color"])
    return mat


def _seed_material(p: dict[str, Any]) -> Any:
    mat, tree, bsdf = _material("seed", p["seed_roughness"])
    info = tree.nodes.new("ShaderNodeObjectInfo")  # each seed its own shade between two colours
    base = np.array(p["seed_srgb"])
    colour = _ramp(tree, info.outputs["Random"], [*_linear(base * (1 - p["seed_spread"])), 1],
                   [*_linear(base * (1 + p["seed_spread"])), 1])
    mottle = _node(tree, "ShaderNodeTexNoise", Scale=300.0, Detail=2.0)
    tree.links.new(_multiply(tree, colour, mottle.outputs["Color"], 0.25), bsdf.inputs["Base Color"])
    return mat


def _table_material(p: dict[str, Any]) -> Any:
    mat, tree, bsdf = _material("table", 0.9 if p["table"] == "cloth" else 0.5)
    c1, c2 = [*_linear(p["table_srgb"]), 1], [*_linear(p["table_srgb2"]), 1]
    coords = tree.nodes.new("ShaderNodeTexCoord")
    if p["table"] == "checked":
        tex = _node(tree, "ShaderNodeTexChecker", Scale=float(8 + p["seed"] % 20), Color1=c1, Color2=c2)
        out = tex.outputs["Color"]
    elif p["table"] == "planks":
        tex = _node(tree, "ShaderNodeTexBrick", Scale=2.0, Color1=c1, Color2=c2, Mortar=[0.05, 0.04, 0.03, 1],
                    **{"Mortar Size": 0.005, "Brick Width": 3.0, "Row Height": 0.15})
        out = tex.outputs["Color"]
    else:  # cloth or stone: a mottle between the two colours
        tex = _node(tree, "ShaderNodeTexNoise", Scale=40.0 if p["table"] == "cloth" else 6.0, Detail=6.0)
        out = _ramp(tree, tex.outputs["Fac"], c1, c2 if p["table"] == "stone" else [v * 0.85 for v in c1[:3]] + [1])
    tree.links.new(coords.outputs["Object"], tex.inputs["Vector"])
    tree.links.new(out, bsdf.inputs["Base Color"])
    return mat


def _seeds(p: dict[str, Any], material: Any) -> None:
    import bpy

    rng = np.random.default_rng([p["seed"], 7])
    s = p["seed_radius_of_pit"] * p["pit_radius_mm"] * MM
    shapes = []
    for k in range(3):  # a few shapes, shared by the seeds
        mesh = bpy.data.meshes.new(f"seed{k}")
        import bmesh

        bm = bmesh.new()
        bmesh.ops.create_uvsphere(bm, u_segments=20, v_segments=12, radius=1.0)
        bm.to_mesh(mesh)
        bm.free()
        mesh.shade_smooth()
        mesh.materials.append(material)
        shapes.append(mesh)
    for x, y, z in seed_positions(p, rng):
        obj = bpy.data.objects.new("seed", shapes[int(rng.integers(3))])
        obj.location = (x * MM, y * MM, z * MM)
        long = math.sqrt(p["seed_elongation"])
        obj.scale = (s * long * rng.uniform(0.92, 1.08), s / long * rng.uniform(0.9, 1.0), s * p["seed_flatness"])
        obj.rotation_euler = (rng.normal(0, 0.15), rng.normal(0, 0.15), rng.uniform(0, 2 * math.pi))
        bpy.context.scene.collection.objects.link(obj)


def _lights(p: dict[str, Any]) -> None:
    import bpy

    world = bpy.data.worlds.new("world")
    bpy.context.scene.world = world
    world.use_nodes = True
    bg = world.node_tree.nodes["Background"]
    bg.inputs["Color"].default_value = [*p["ambient_tint"], 1]
    bg.inputs["Strength"].default_value = p["ambient"]
    tint = p["sun_kelvin_tint"]  # warm (tungsten-ish) to cool
    colour = (1.0, 1.0 - 0.15 * max(tint, 0) + 0.03 * max(-tint, 0), 1.0 - 0.35 * max(tint, 0) + 0.1 * max(-tint, 0))
    sun = bpy.data.lights.new("sun", "SUN")
    sun.energy = p["sun_strength"]
    sun.angle = math.radians(p["sun_angle"])
    sun.color = colour
    obj = bpy.data.objects.new("sun", sun)
    obj.rotation_euler = (math.radians(90 - p["sun_elevation"]), 0, math.radians(p["sun_azimuth"]))
    bpy.context.scene.collection.objects.link(obj)
    if p["area_power_w"] > 20:
        area = bpy.data.lights.new("lamp", "AREA")
        area.energy = p["area_power_w"]
        area.size = p["area_size_m"]
        el, az = math.radians(p["area_elevation"]), math.radians(p["area_azimuth"])
        obj = bpy.data.objects.new("lamp", area)
        obj.location = (1.5 * math.cos(el) * math.cos(az), 1.5 * math.cos(el) * math.sin(az), 1.5 * math.sin(el))
        obj.rotation_euler = _look_rotation(np.array(obj.location), np.zeros(3), 0.0)
        bpy.context.scene.collection.objects.link(obj)


def _look_rotation(eye: np.ndarray, target: np.ndarray, roll_deg: float) -> Any:
    """Euler angles pointing a Blender camera or lamp (looking down its -Z) from ``eye`` at ``target``."""
    from mathutils import Matrix, Vector

    direction = Vector((target - eye).tolist())
    quat = direction.to_track_quat("-Z", "Y")
    return (quat.to_matrix().to_4x4() @ Matrix.Rotation(math.radians(roll_deg), 4, "Z")).to_euler()


def _project(points_m: np.ndarray) -> np.ndarray:
    """Image pixels (x right, y down; pixel centres at +0.5) of world points, through the scene's camera."""
    import bpy
    from bpy_extras.object_utils import world_to_camera_view
    from mathutils import Vector

    scene = bpy.context.scene
    w, h = scene.render.resolution_x, scene.render.resolution_y
    out = []
    for pt in points_m:
        v = world_to_camera_view(scene, scene.camera, Vector(pt.tolist()))
        out.append((v.x * w, (1 - v.y) * h))
    return np.array(out)


def _camera(p: dict[str, Any], corners_m: np.ndarray) -> None:
    """A camera at the plan's tilt, turn and roll, moved in until the board fills ``fill`` of the frame's width
    (and no more than 92% of its height)."""
    import bpy

    cam = bpy.data.cameras.new("camera")
    cam.lens = p["lens_mm"]
    cam.sensor_width = 36.0
    cam.sensor_fit = "HORIZONTAL"
    obj = bpy.data.objects.new("camera", cam)
    bpy.context.scene.collection.objects.link(obj)
    bpy.context.scene.camera = obj
    tilt, az = math.radians(p["tilt"]), math.radians(p["azimuth"])
    direction = np.array([math.sin(tilt) * math.sin(az), -math.sin(tilt) * math.cos(az), math.cos(tilt)])
    w, h = board_size_mm(p)
    target = np.array([p["aim_offset"][0] * w, p["aim_offset"][1] * h, 0.0]) * MM
    distance = 1.0
    for step in range(7):
        eye = target + direction * distance
        obj.location = eye.tolist()
        obj.rotation_euler = _look_rotation(eye, target, p["roll"])
        bpy.context.view_layer.update()
        if step == 6:
            break
        px = _project(corners_m)
        span_x = (px[:, 0].max() - px[:, 0].min()) / p["width"]
        span_y = (px[:, 1].max() - px[:, 1].min()) / p["height"]
        distance *= max(span_x / p["fill"], span_y / 0.92)
    if p["f_stop"]:
        cam.dof.use_dof = True
        cam.dof.focus_distance = float(distance)
        cam.dof.aperture_fstop = p["f_stop"]


def render(p: dict[str, Any], samples: int, workdir: Path) -> tuple[np.ndarray, dict[str, Any]]:
    """Path trace the plan ``p``; return the linear RGB image (float32, h x w x 3) and its truth."""
    import bpy

    bpy.ops.wm.read_factory_settings(use_empty=True)
    scene = bpy.context.scene
    scene.render.engine = "CYCLES"
    scene.cycles.device = "CPU"
    scene.cycles.samples = samples
    scene.cycles.use_adaptive_sampling = True
    scene.cycles.use_denoising = True
    scene.render.resolution_x, scene.render.resolution_y = p["width"], p["height"]
    scene.render.resolution_percentage = 100
    scene.render.image_settings.file_format = "OPEN_EXR"
    scene.render.image_settings.color_depth = "32"
    scene.view_settings.view_transform = "Standard"
    scene.render.filepath = str(workdir / "render.exr")

    if p["has_board"]:
        board = _board_mesh(p)
        board.data.materials.append(_wood_material(p))
        _seeds(p, _seed_material(p))
    bpy.ops.mesh.primitive_plane_add(size=6.0, location=(0, 0, -p["thickness_mm"] * MM))
    bpy.context.active_object.data.materials.append(_table_material(p))
    _lights(p)
    w, h = board_size_mm(p)
    corners_m = np.array([(-w / 2, h / 2, 0), (w / 2, h / 2, 0), (w / 2, -h / 2, 0), (-w / 2, -h / 2, 0)]) * MM
    _camera(p, corners_m)

    bpy.ops.render.render(write_still=True)
    image = bpy.data.images.load(str(workdir / "render.exr"))
    pixels = np.empty(p["width"] * p["height"] * 4, np.float32)
    image.pixels.foreach_get(pixels)
    rgb = pixels.reshape(p["height"], p["width"], 4)[::-1, :, :3].copy()  # Blender's rows run bottom-up
    renderer = f"Blender {bpy.app.version_string} Cycles, {samples} samples, denoised"
    if not p["has_board"]:
        return rgb, {"status": "no_board", "counts": None, "corners_px": None, "image_size": [p["width"], p["height"]],
                     "renderer": renderer, "scene": p}

    centres = pit_centres_mm(p)
    centres3 = np.concatenate([centres, np.zeros((len(centres), 1))], axis=1) * MM
    centres_px = _project(centres3)
    angles = np.linspace(0, 2 * math.pi, 16, endpoint=False)
    rim = np.stack([np.cos(angles), np.sin(angles), np.zeros(16)], axis=1) * p["pit_radius_mm"] * MM
    radii = [float(np.linalg.norm(_project(c + rim) - c_px, axis=1).mean()) for c, c_px in zip(centres3, centres_px, strict=True)]
    truth = {
        "status": "ok", "counts": p["counts"], "corners_px": _project(corners_m).tolist(),
        "pit_centers_px": centres_px.tolist(), "pit_radius_px": radii, "image_size": [p["width"], p["height"]],
        "renderer": renderer, "scene": p,
    }
    return rgb, truth


def develop(rgb: np.ndarray, p: dict[str, Any]) -> np.ndarray:
    """A camera's processing of the linear render: exposure, vignetting, tone curve, noise; BGR uint8."""
    rng = np.random.default_rng([p["seed"], 11])
    h, w = rgb.shape[:2]
    luma = rgb @ np.array([0.2126, 0.7152, 0.0722], np.float32)
    img = rgb * (p["exposure_white"] / max(float(np.percentile(luma, 99)), 1e-6))
    yy, xx = np.mgrid[0:h, 0:w]
    r2 = ((xx - w / 2) ** 2 + (yy - h / 2) ** 2) / ((w / 2) ** 2 + (h / 2) ** 2)
    img = img * (1 - p["vignetting"] * r2)[..., None]
    img = np.clip(img, 0, 1)
    srgb = np.where(img <= 0.0031308, 12.92 * img, 1.055 * img ** (1 / 2.4) - 0.055) ** p["gamma"]
    out = srgb * 255 + rng.normal(0, p["noise"], srgb.shape) * np.sqrt(np.clip(srgb, 0.05, 1))
    return np.clip(out, 0, 255).astype(np.uint8)[..., ::-1]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out", type=Path)
    parser.add_argument("--count", type=int, default=12)
    parser.add_argument("--seed", type=int, default=9_100_001)
    parser.add_argument("--samples", type=int, default=32, help="Cycles samples a pixel (denoised after)")
    args = parser.parse_args(argv)
    try:
        import bpy  # noqa: F401
    except ImportError:
        sys.exit("traced_boards.py needs Blender as a Python module: ./scripts/setup-traced")
    import cv2

    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        for k in range(args.count):
            seed = args.seed + k
            start = time.perf_counter()
            p = plan(seed)
            rgb, truth = render(p, args.samples, Path(tmp))
            name = f"traced_{seed}"
            cv2.imwrite(str(args.out / f"{name}.jpg"), develop(rgb, p), [cv2.IMWRITE_JPEG_QUALITY, p["jpeg_quality"]])
            (args.out / f"{name}.json").write_text(json.dumps(truth, indent=1) + "\n")
            print(f"{name}: {time.perf_counter() - start:.0f} s, tilt {p['tilt']:.0f}, {p['width']}x{p['height']}",
                  flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
