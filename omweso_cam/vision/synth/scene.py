"""Scene parameters of a synthetic board photo: board, seeds, camera, light, table, hand.

A `Scene` is plain data (frozen, JSON-friendly) drawn at random by `Scene.random`;
the renderer turns it plus a position into an image. Three styles exist: ``default``
(what the corpus and the vision tuning use), ``unseen`` (seed colours, woods,
light and tables the reader was never tuned on, for held-out benchmarks) and
``randomised`` (domain randomisation for training the seed counter: the default scenes
with seed, wood and light colours drawn from the whole colour space, so the network
cannot lean on the default palettes; its boards, pits and tables stay the default ones).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

RGB = tuple[int, int, int]

#: Scene styles `Scene.random` knows.
STYLES = ("default", "unseen", "randomised")

# Colour palettes are RGB (converted to BGR only when drawing).
_WOODS_DEFAULT: tuple[RGB, ...] = (
    (222, 190, 145),  # pale (ash, pine)
    (200, 155, 95),  # honey
    (170, 115, 65),  # mid brown
    (150, 80, 45),  # reddish (mahogany)
    (110, 70, 40),  # dark brown
    (70, 45, 28),  # very dark
    (45, 30, 22),  # near black (oiled hardwood)
)
_WOODS_UNSEEN: tuple[RGB, ...] = (
    (160, 150, 135),  # weathered grey
    (205, 120, 60),  # orange teak
    (120, 95, 80),  # greyish walnut
    (235, 215, 180),  # bleached
)
_SEEDS_DEFAULT: dict[str, tuple[RGB, ...]] = {
    "empiki_dark": ((48, 46, 44), (62, 58, 55), (38, 38, 40), (70, 66, 60)),
    "empiki_brown": ((72, 52, 38), (90, 64, 44), (58, 44, 34)),
    "grey_green": ((150, 156, 138), (128, 138, 120), (165, 165, 150), (118, 124, 112)),
}
_SEEDS_UNSEEN: dict[str, tuple[RGB, ...]] = {
    "red_brown": ((130, 52, 34), (112, 45, 30), (150, 70, 45)),
    "cream": ((215, 200, 170), (200, 185, 150), (225, 210, 185)),
    "slate_blue": ((80, 90, 110), (95, 104, 125)),
}
_SKINS: tuple[RGB, ...] = (
    (236, 198, 175),
    (225, 180, 150),
    (200, 150, 115),
    (170, 120, 85),
    (140, 95, 65),
    (110, 72, 50),
    (85, 58, 42),
    (65, 45, 35),
)
_BACKGROUNDS_DEFAULT = ("cloth", "wood", "plain", "pattern", "concrete")
_BACKGROUNDS_UNSEEN = ("tiles", "grass_mat", "newspaper")
#: The prints of a printed cloth ("pattern"), in the order its random draw numbers them. A table
#: of one print is never drawn at random; it is for test images of a kind (a dotted cloth's dots
#: are circles of pit size).
PRINTS = ("checks", "stripes", "dots")
#: Table kinds and arm directions a Scene may name.
BACKGROUNDS = (*_BACKGROUNDS_DEFAULT, *_BACKGROUNDS_UNSEEN, *PRINTS)
HAND_SIDES = ("south", "north", "east", "west")


@dataclass(frozen=True)
class Scene:
    """Everything that makes one synthetic photo look the way it does (lengths in mm).

    Board coordinates: origin at the board centre, x towards file h (East), y towards
    rank 4 (North), z up; the camera stands on South's side.
    """

    # image
    image_size_px: tuple[int, int] = (1280, 720)  # (width, height)
    has_board: bool = True
    style: str = "default"
    texture_seed: int = 0  # grain, cloth and clutter are drawn from this seed
    # board geometry
    pit_diameter_mm: float = 68.0
    pit_pitch_x_mm: float = 82.0
    pit_pitch_y_mm: float = 80.0
    centre_gap_mm: float = 8.0
    margin_x_mm: float = 30.0
    margin_y_mm: float = 28.0
    corner_radius_mm: float = 15.0
    board_thickness_mm: float = 35.0
    pit_depth_mm: float = 22.0
    pit_aspect: float = 1.0  # pit width / pit height (1 = round)
    pit_jitter_mm: float = 0.0  # hand-carved boards: pits off the perfect lattice (std. dev.)
    # wood
    wood_rgb: RGB = (170, 115, 65)
    grain_contrast: float = 0.25
    grain_period_mm: float = 6.0
    grain_waviness: float = 0.5
    pit_tint: float = 0.85  # albedo factor inside the pits (worn, dirty)
    board_gloss: float = 0.1
    # a varnished bowl's reflection of the light (strength, Blinn-Phong exponent); 0 = none. No style
    # draws it (it would change every render): ``benchmarks/counter_data.py --glossy-bowls`` sets it.
    bowl_gloss: float = 0.0
    bowl_shininess: float = 40.0
    # seeds
    seed_palette: str = "empiki_dark"  # a named palette, or "custom" for ``seed_rgbs``
    seed_rgbs: tuple[RGB, ...] = ()  # the seed colours of the "custom" palette
    seed_length_mm: float = 16.0
    seed_aspect: float = 1.15  # length / width
    seed_gloss: float = 0.6
    # camera
    tilt_deg: float = 0.0  # from vertical, camera on South's side
    azimuth_deg: float = 0.0  # camera position swung round the board (0 = due South)
    roll_deg: float = 0.0  # in-plane rotation of the picture
    fov_deg: float = 60.0  # horizontal field of view
    board_fill: float = 0.75  # larger side of the board's bounding box / frame side
    offset_x: float = 0.0  # board centre offset, fraction of the free margin (-1..1)
    offset_y: float = 0.0
    distortion_k1: float = 0.0
    distortion_k2: float = 0.0
    focus_blur_px: float = 0.0
    motion_blur_px: float = 0.0  # half the smear: the board moves this far either side of the exposure's middle
    motion_angle_deg: float = 0.0
    noise_sigma: float = 2.0  # sensor noise, 8-bit levels
    jpeg_quality: int = 90  # 0 = no JPEG round-trip
    vignetting: float = 0.15
    # light
    light_azimuth_deg: float = 120.0
    light_elevation_deg: float = 55.0
    light_rgb: tuple[float, float, float] = (1.0, 1.0, 1.0)
    ambient: float = 0.45
    exposure: float = 1.0
    light_gradient: float = 0.2  # strength of uneven light across the frame
    cast_shadow: float = 0.0  # 0 = none, else darkening of a hard shadow region (0..0.6)
    # table
    background: str = "cloth"
    background_rgb: RGB = (120, 60, 50)
    background_rgb2: RGB = (200, 190, 170)
    clutter_count: int = 2
    # hand
    hand: bool = False
    hand_target: tuple[float, float] = (0.0, 0.0)  # board coords as fractions of half size
    hand_from: str = "south"  # edge the arm comes from: south | north | east | west
    hand_height_mm: float = 60.0
    skin_rgb: RGB = (170, 120, 85)
    sleeve_rgb: RGB | None = None
    hand_scale: float = 1.0
    hand_motion_blur_px: float = 0.0  # the hand moving during the exposure
    extra: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)

    def __post_init__(self) -> None:
        if self.style not in STYLES:
            raise ValueError(f"unknown scene style {self.style!r}; expected one of {STYLES}")
        width, height = self.image_size_px
        if width < 64 or height < 64:
            raise ValueError(f"image_size_px too small: {self.image_size_px}")
        if not 0.0 <= self.tilt_deg < 80.0:
            raise ValueError(f"tilt_deg must be in [0, 80), got {self.tilt_deg}")
        if not 0.05 <= self.board_fill <= 1.0:
            raise ValueError(f"board_fill must be in [0.05, 1], got {self.board_fill}")
        if self.pit_pitch_x_mm <= self.pit_diameter_mm * max(self.pit_aspect, 1.0):
            raise ValueError("pits overlap: pit_pitch_x_mm must exceed the pit width")
        if self.pit_pitch_y_mm <= self.pit_diameter_mm:
            raise ValueError("pits overlap: pit_pitch_y_mm must exceed the pit diameter")
        if self.seed_palette not in {**_SEEDS_DEFAULT, **_SEEDS_UNSEEN, "mixed": (), "custom": ()}:
            raise ValueError(f"unknown seed_palette {self.seed_palette!r}")
        if (self.seed_palette == "custom") != bool(self.seed_rgbs):
            raise ValueError('seed_rgbs must be given exactly when seed_palette is "custom"')
        if self.background not in BACKGROUNDS:
            raise ValueError(f"unknown background {self.background!r}; expected one of {BACKGROUNDS}")
        if self.hand_from not in HAND_SIDES:
            raise ValueError(f"unknown hand_from {self.hand_from!r}; expected one of {HAND_SIDES}")
        if self.pit_jitter_mm < 0:
            raise ValueError(f"pit_jitter_mm must be >= 0, got {self.pit_jitter_mm}")
        if self.pit_depth_mm <= 0 or self.pit_diameter_mm <= 0 or self.seed_length_mm <= 0:
            raise ValueError("pit_depth_mm, pit_diameter_mm and seed_length_mm must be positive")

    def to_json(self) -> dict[str, Any]:
        """The parameters as a JSON-ready dict (tuples become lists). Fields added since
        ``sample_images`` was rendered are left out at their "none" values (no custom seed colours,
        no varnish), so ``render corpus`` writes its truth again byte for byte."""
        data = dataclasses.asdict(self)
        data.pop("extra")
        if not self.seed_rgbs:
            del data["seed_rgbs"]
        if not self.bowl_gloss:
            del data["bowl_gloss"], data["bowl_shininess"]
        return data

    def with_(self, **changes: Any) -> Scene:
        """A copy with some fields changed."""
        return dataclasses.replace(self, **changes)

    @classmethod
    def random(cls, rng: np.random.Generator, *, style: str = "default", **overrides: Any) -> Scene:
        """A scene drawn from the wide distribution of ``style``; ``overrides`` pin fields."""
        if style not in STYLES:
            raise ValueError(f"unknown scene style {style!r}; expected one of {STYLES}")
        unknown = set(overrides) - {f.name for f in dataclasses.fields(cls)}
        if unknown:
            raise TypeError(f"Scene has no field(s) {sorted(unknown)}")
        unseen = style == "unseen"
        u = rng.uniform

        pit_d = u(52.0, 80.0)
        aspect = float(u(1.0, 1.25)) if unseen and rng.random() < 0.5 else 1.0
        pitch_x = pit_d * aspect + u(5.0, 28.0)
        pitch_y = pit_d + u(5.0, 28.0)
        woods = _WOODS_UNSEEN if unseen else _WOODS_DEFAULT
        wood = _jitter_rgb(woods[int(rng.integers(len(woods)))], rng, 14)
        palettes = sorted(_SEEDS_UNSEEN) if unseen else [*sorted(_SEEDS_DEFAULT), "mixed"]
        weights = None if unseen else [0.4, 0.2, 0.3, 0.1]
        palette = str(rng.choice(palettes, p=weights))

        tilt = float(u(0.0, 35.0)) if rng.random() < 0.75 else float(u(0.0, 6.0))
        roll = float(rng.normal(0.0, 7.0))
        roll = float(np.clip(roll, -25.0, 25.0))
        backgrounds = _BACKGROUNDS_UNSEEN if unseen else _BACKGROUNDS_DEFAULT

        light_rgb = (1.0, 1.0, 1.0)
        colour_cast = rng.random()
        if colour_cast < 0.35:  # warm tungsten
            light_rgb = (1.0, float(u(0.8, 0.92)), float(u(0.55, 0.8)))
        elif colour_cast < 0.5:  # cool / daylight-blue
            light_rgb = (float(u(0.8, 0.92)), float(u(0.9, 0.97)), 1.0)
        elif colour_cast < 0.6:  # fluorescent green tint
            light_rgb = (float(u(0.88, 0.95)), 1.0, float(u(0.85, 0.95)))
        if unseen and rng.random() < 0.5:  # strongly coloured stage light
            light_rgb = tuple(float(c) for c in rng.permutation([1.0, u(0.55, 0.75), u(0.4, 0.6)]))  # type: ignore[assignment]

        background = str(rng.choice(backgrounds))
        background_rgb = _random_rgb(rng)
        if background == "wood":
            background_rgb = _jitter_rgb(woods[int(rng.integers(len(woods)))], rng, 25)
        elif background == "concrete":
            grey = int(rng.integers(70, 190))
            background_rgb = _jitter_rgb((grey, grey - 4, grey - 10), rng, 12)
        hand_from = str(rng.choice(["south", "north", "east", "west"], p=[0.55, 0.3, 0.075, 0.075]))
        fields: dict[str, Any] = dict(
            style=style,
            texture_seed=int(rng.integers(0, 2**31 - 1)),
            pit_diameter_mm=float(pit_d),
            pit_aspect=aspect,
            pit_jitter_mm=float(u(0.5, 3.0)) if rng.random() < 0.4 else 0.0,
            pit_pitch_x_mm=float(pitch_x),
            pit_pitch_y_mm=float(pitch_y),
            centre_gap_mm=float(u(0.0, 30.0)) if rng.random() < 0.5 else 0.0,
            margin_x_mm=float(u(12.0, 70.0)),
            margin_y_mm=float(u(10.0, 50.0)),
            corner_radius_mm=float(u(0.0, 60.0)) if rng.random() < 0.7 else 0.0,
            board_thickness_mm=float(u(15.0, 70.0)),
            pit_depth_mm=float(u(0.2, 0.4) * pit_d),
            wood_rgb=wood,
            grain_contrast=float(u(0.05, 0.45)),
            grain_period_mm=float(u(2.5, 12.0)),
            grain_waviness=float(u(0.1, 1.0)),
            pit_tint=float(u(0.6, 1.0)),
            board_gloss=float(u(0.0, 0.35)),
            seed_palette=palette,
            seed_length_mm=float(pit_d * (u(0.2, 0.3) if not unseen else u(0.17, 0.33))),
            seed_aspect=float(u(1.0, 1.45)),
            seed_gloss=float(u(0.2, 1.0)),
            tilt_deg=tilt,
            azimuth_deg=float(rng.normal(0.0, 8.0)),
            roll_deg=roll,
            fov_deg=float(u(45.0, 80.0)),
            board_fill=float(u(0.4, 0.95)),
            offset_x=float(u(-1.0, 1.0)),
            offset_y=float(u(-1.0, 1.0)),
            distortion_k1=float(u(-0.25, 0.08)),
            distortion_k2=float(u(-0.05, 0.05)),
            focus_blur_px=float(u(0.0, 2.5)) if rng.random() < 0.5 else 0.0,
            motion_blur_px=float(u(0.0, 7.0)) if rng.random() < 0.25 else 0.0,
            motion_angle_deg=float(u(0.0, 180.0)),
            noise_sigma=float(u(0.5, 8.0)),
            jpeg_quality=int(rng.integers(45, 96)),
            vignetting=float(u(0.0, 0.45)),
            light_azimuth_deg=float(u(0.0, 360.0)),
            light_elevation_deg=float(u(25.0, 85.0)),
            light_rgb=light_rgb,
            ambient=float(u(0.3, 0.65)),
            exposure=float(u(0.7, 1.25)),
            light_gradient=float(u(0.0, 0.5)),
            cast_shadow=float(u(0.2, 0.55)) if rng.random() < 0.25 else 0.0,
            background=background,
            background_rgb=background_rgb,
            background_rgb2=_random_rgb(rng),
            clutter_count=int(rng.integers(0, 5)),
            hand=False,
            hand_target=(float(u(-1.0, 1.0)), float(u(-1.0, 1.0))),
            hand_from=hand_from,
            hand_height_mm=float(u(30.0, 140.0)),
            skin_rgb=_jitter_rgb(_SKINS[int(rng.integers(len(_SKINS)))], rng, 10),
            sleeve_rgb=_random_rgb(rng) if rng.random() < 0.5 else None,
            hand_scale=float(u(0.85, 1.2)),
            hand_motion_blur_px=float(u(2.0, 14.0)) if rng.random() < 0.5 else 0.0,
        )
        if style == "randomised":
            fields.update(_randomised_colours(rng))
        fields.update(overrides)
        return cls(**fields)


def _randomised_colours(
    rng: np.random.Generator,
    wood_value: tuple[float, float] = (0.15, 0.95),
    seed_value: tuple[float, float] = (0.1, 0.95),
) -> dict[str, Any]:
    """Wood, seed and light colours of a ``randomised`` scene: anywhere in colour space.

    Seeds get one to three colours; a seed colour almost identical to the wood is drawn
    again (up to a few times), as no set of seeds is invisible on its board. The HSV
    value (brightness) of wood and seeds is drawn from ``wood_value`` and ``seed_value``.
    """
    u = rng.uniform
    wood = _hsv_rgb(u(0.0, 6.0), u(0.0, 0.7), u(*wood_value))
    seeds: list[RGB] = []
    for _ in range(int(rng.integers(1, 4))):
        for _attempt in range(6):
            colour = _hsv_rgb(u(0.0, 6.0), u(0.0, 0.85), u(*seed_value))
            if float(np.linalg.norm(np.subtract(colour, wood))) > 30.0:
                break
        seeds.append(colour)
    light = (1.0, 1.0, 1.0)
    if rng.random() < 0.6:
        tint = u(0.5, 1.0, 3)
        light = tuple(float(c) for c in tint / tint.max())  # type: ignore[assignment]
    return {"wood_rgb": wood, "seed_palette": "custom", "seed_rgbs": tuple(seeds), "light_rgb": light}


def dark_colours(rng: np.random.Generator) -> dict[str, Any]:
    """Scene overrides for dark seeds on dark wood (any hue), the counter's hardest colours.

    For training data that stresses the case (``benchmarks/counter_data.py --dark``): wood
    and seeds both in the darker part of the ``randomised`` draw; pass the result to
    `Scene.random` as overrides.
    """
    return _randomised_colours(rng, wood_value=(0.12, 0.45), seed_value=(0.08, 0.45))


def seed_colours(palette: str) -> tuple[RGB, ...]:
    """Base RGB colours of the seeds of ``palette`` (``mixed`` = dark and grey-green)."""
    if palette == "mixed":
        return _SEEDS_DEFAULT["empiki_dark"] + _SEEDS_DEFAULT["grey_green"]
    table = {**_SEEDS_DEFAULT, **_SEEDS_UNSEEN}
    if palette not in table:
        raise ValueError(f"unknown seed_palette {palette!r}")
    return table[palette]


def light_direction(scene: Scene) -> np.ndarray:
    """Unit vector from a board point towards the light (board coordinates)."""
    az = math.radians(scene.light_azimuth_deg)
    el = math.radians(scene.light_elevation_deg)
    return np.array([math.cos(el) * math.cos(az), math.cos(el) * math.sin(az), math.sin(el)])


def _random_rgb(rng: np.random.Generator) -> RGB:
    """A muted colour such as table cloths and clothes have (HSV, moderate saturation)."""
    hue = rng.uniform(0.0, 6.0)
    sat = rng.uniform(0.05, 0.65)
    val = rng.uniform(0.2, 0.9)
    return _hsv_rgb(hue, sat, val)


def _hsv_rgb(hue: float, sat: float, val: float) -> RGB:
    """RGB (0..255) of hue (0..6, in sectors of 60 degrees), saturation and value (0..1)."""
    sector, frac = int(hue), hue - int(hue)
    p, q, t = val * (1 - sat), val * (1 - sat * frac), val * (1 - sat * (1 - frac))
    rgb = [(val, t, p), (q, val, p), (p, val, t), (p, q, val), (t, p, val), (val, p, q)][sector % 6]
    r, g, b = (round(c * 255) for c in rgb)
    return (r, g, b)


def _jitter_rgb(rgb: RGB, rng: np.random.Generator, amount: int) -> RGB:
    r, g, b = (int(np.clip(c + rng.integers(-amount, amount + 1), 0, 255)) for c in rgb)
    return (r, g, b)
