"""Count: per-pit likelihood over seed counts 0..64 (after grid, before the Observation).

Everything works on *canonical pit crops*: a square centred on the pit, side
``2 * crop_of_radius`` pit radii, resized to ``crop_px``. The same code counts
pits cut from a live frame and single-pit crops from a labelled CSV.

Nothing here knows a seed colour. Per frame, the board surface colour (a band
inside the board edge) anchors everything: pixels of a pit whose chroma departs
from the wood, that are brighter than the wood (light seeds, highlights), or
that differ from the empty bowls of the same frame (a per-pixel template from
the pits that look empty, so bowl shading cancels) are seed pixels. One seed's
area is measured on the frame (the distance-transform thickness of blobs: a
seed's half-width even when seeds touch). The features, in units of one seed,
feed a linear model (:class:`SeedModel`, fitted on labelled pits: rendered,
from a known position, or from labelled crops) whose residual spread, growing
with the heap, gives the likelihood over counts.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import math
from dataclasses import dataclass, field

import cv2
import numpy as np

from omweso_cam.observation import MAX_COUNT
from omweso_cam.vision.counter_net import CounterHead, embed, refit_head
from omweso_cam.vision.grid import PitGrid

#: Names of the per-pit features, in the order of :attr:`PitFeatures.matrix` columns.
FEATURE_NAMES = (
    "fg_units", "chroma_units", "bright_units", "texture_units", "blobs", "peaks", "highlights",
    "fill_frac", "fg_units_sq", "fill_x_units",
    "spots_3", "spots_5", "spots_8", "spots_in_fg", "chroma_frac_4", "chroma_frac_10", "bright_frac_15",
    "dark_frac_20", "seed_area_frac", "has_template", "surface_light", "disc_contrast",
    "spots_5_rel", "spots_3_rel", "pit_radius_source", "fg_units_rel",
)


class SeedModelError(ValueError):
    """A seed-appearance model (JSON) is malformed or inconsistent."""


@dataclass(frozen=True)
class CountConfig:
    """Tunables of the seed counter."""

    crop_px: int = 48  # canonical pit crop side (about the rectified image's own resolution)
    crop_of_radius: float = 1.25  # crop half-side in pit radii
    disc_of_radius: float = 1.0  # part of the crop searched for seeds (the pit opening)
    lightness_weight: float = 0.6  # weight of the L channel in template distances
    min_foreground_distance: float = 10.0  # Lab units: never call smaller differences seed
    noise_multiple: float = 3.5  # template threshold in robust noise deviations of empty bowls
    texture_weight: float = 0.7  # how much local texture counts next to colour difference
    chroma_seed_distance: float = 6.0  # rg-chromaticity distance (percent) from the wood that marks a seed pixel
    min_chroma_brightness: float = 35.0  # mean of B, G, R (0..255) below which chromaticity is not trusted
    bright_seed_levels: float = 25.0  # L above the wood that marks a seed pixel (light seed, highlight)
    texture_multiple: float = 2.5  # texture above this multiple of the wood's marks a seed pixel
    empty_max_chroma_frac: float = 0.05  # a pit with fewer seed-coloured pixels may be an empty bowl
    empty_max_bright_frac: float = 0.03
    min_empty_templates: int = 3
    min_blob_area_frac: float = 0.012  # of the pit disc: smaller blobs are noise
    default_seed_area_frac: float = 0.06  # of the pit disc, used when nothing can be measured
    min_seed_area_frac: float = 0.015
    max_seed_area_frac: float = 0.25
    seed_area_of_dt_disc: float = 1.25  # seed area / (pi * its distance-transform peak^2): seeds are ellipses
    highlight_levels: float = 30.0  # a highlight is a local L maximum this far above the wood
    descriptor_cells: int = 0  # pit maps pooled to cells x cells (0: none; a model's own size overrides)
    max_strength: float = 4.0  # seed strength (units of the seed threshold) is clipped here in the descriptor
    descriptor_light_levels: float = 25.0  # Lab L difference that is one unit in the descriptor's lightness map
    rim_of_radius: float = 1.1  # network input: the crop outside this many pit radii is the wood it is measured against
    rim_unit_offset: float = 16.0  # network input: one unit = the rim's mean level (0..255) plus this
    head_pull: float = 1.0  # calibrating the network's head: weight of staying near the shipped head


@dataclass(frozen=True, eq=False)
class Network:
    """A small multilayer perceptron (ReLU hidden layers) over standardised features, as plain data."""

    mean: tuple[float, ...]
    std: tuple[float, ...]
    layers: tuple[tuple[tuple[tuple[float, ...], ...], tuple[float, ...]], ...]  # (weights (in, out), bias)

    def __post_init__(self) -> None:
        width = len(self.mean)
        if len(self.std) != width or width == 0:
            raise SeedModelError(f"network mean/std lengths differ or are empty ({len(self.mean)}/{len(self.std)})")
        for w, b in self.layers:
            if len(w) != width or any(len(row) != len(b) for row in w):
                raise SeedModelError("network layer shapes do not chain")
            width = len(b)
        if width != 1:
            raise SeedModelError("the network's last layer must have one output")

    def __call__(self, matrix: np.ndarray) -> np.ndarray:
        x = (np.asarray(matrix, np.float64) - np.asarray(self.mean)) / np.asarray(self.std)
        for k, (w, b) in enumerate(self.layers):
            x = x @ np.asarray(w) + np.asarray(b)
            if k < len(self.layers) - 1:
                x = np.maximum(x, 0.0)
        return np.asarray(x[:, 0])

    def to_dict(self) -> dict[str, object]:
        return {"mean": [round(v, 6) for v in self.mean], "std": [round(v, 6) for v in self.std],
                "layers": [{"w": [[round(v, 6) for v in row] for row in w], "b": [round(v, 6) for v in b]}
                           for w, b in self.layers]}

    @classmethod
    def from_dict(cls, data: dict[str, object]) -> Network:
        try:
            layers = tuple((tuple(tuple(float(v) for v in row) for row in layer["w"]),
                            tuple(float(v) for v in layer["b"])) for layer in data["layers"])  # type: ignore[attr-defined]
            return cls(tuple(float(v) for v in data["mean"]), tuple(float(v) for v in data["std"]), layers)  # type: ignore[attr-defined]
        except (KeyError, TypeError, ValueError) as exc:
            raise SeedModelError(f"bad network in seed model: {exc}") from exc


def train_network(matrix: np.ndarray, counts: np.ndarray, *, hidden: tuple[int, ...] = (32, 16),
                  steps: int = 3000, learning_rate: float = 3e-3, weight_decay: float = 1e-4,
                  batch_size: int | None = None, rng: np.random.Generator) -> Network:
    """Fit a :class:`Network` (Adam; full batch, or random batches of ``batch_size``) to counts; heaps weigh less."""
    x_all = np.asarray(matrix, np.float64)
    y_all = np.asarray(counts, np.float64)[:, None]
    mean, std = x_all.mean(axis=0), x_all.std(axis=0) + 1e-6
    x_all = (x_all - mean) / std
    x, y = x_all, y_all
    sizes = (x.shape[1], *hidden, 1)
    params = []
    for a, b in itertools.pairwise(sizes):
        params += [rng.normal(0, np.sqrt(2.0 / a), (a, b)), np.zeros(b)]
    m = [np.zeros_like(p) for p in params]
    v = [np.zeros_like(p) for p in params]
    for t in range(1, steps + 1):
        if batch_size is not None and batch_size < len(y_all):
            pick = rng.integers(0, len(y_all), batch_size)
            x, y = x_all[pick], y_all[pick]
        sample_w = 1.0 / (1.0 + y / 4.0)
        acts = [x]
        h = x
        for k in range(0, len(params), 2):
            h = h @ params[k] + params[k + 1]
            if k < len(params) - 2:
                h = np.maximum(h, 0.0)
            acts.append(h)
        grad = 2 * sample_w * (h - y) / len(y)
        grads: list[np.ndarray] = [np.empty(0)] * len(params)
        for k in range(len(params) - 2, -1, -2):
            grads[k] = acts[k // 2].T @ grad + weight_decay * params[k]
            grads[k + 1] = grad.sum(axis=0)
            if k > 0:
                grad = (grad @ params[k].T) * (acts[k // 2] > 0)
        for i, g in enumerate(grads):
            m[i] = 0.9 * m[i] + 0.1 * g
            v[i] = 0.999 * v[i] + 0.001 * g * g
            params[i] -= learning_rate * (m[i] / (1 - 0.9**t)) / (np.sqrt(v[i] / (1 - 0.999**t)) + 1e-8)
    layers = tuple((tuple(tuple(float(c) for c in row) for row in params[k]), tuple(float(c) for c in params[k + 1]))
                   for k in range(0, len(params), 2))
    return Network(tuple(float(c) for c in mean), tuple(float(c) for c in std), layers)


@dataclass(frozen=True)
class SeedModel:
    """How features turn into counts, and how sure that is.

    ``weights`` (one per :data:`FEATURE_NAMES` entry, plus a leading intercept) of
    a linear model; ``None`` uses ``fg_units`` (foreground area in seeds) alone.
    ``network`` (when set) reads the features followed, if ``descriptor_cells`` > 0, by
    the pit's pooled seed-strength and lightness maps (:attr:`PitFeatures.descriptor`).
    ``seed_area_frac`` (of the pit disc) fixes one seed's size; ``None`` measures it
    per frame. The count uncertainty is ``sqrt(sigma_seeds^2 + (sigma_growth * n)^2)``;
    ``outlier_share`` of the probability is spread evenly over 0..64 (a pit misread
    outright: a hidden seed heap, a glare), so one bad pit is never ruled out.
    """

    weights: tuple[float, ...] | None = None
    network: Network | None = None
    counter: CounterHead | None = None
    descriptor_cells: int = 0
    seed_area_frac: float | None = None
    output_scale: float = 1.0  # per-board correction learnt from a known position
    sigma_seeds: float = 0.45
    sigma_growth: float = 0.12
    outlier_share: float = 0.0
    source: str = "default"
    examples: int = 0
    notes: dict[str, object] = field(default_factory=dict, compare=False)

    def __post_init__(self) -> None:
        if self.seed_area_frac is not None and not 0.0 < self.seed_area_frac < 1.0:
            raise SeedModelError(f"seed_area_frac must be in (0, 1), got {self.seed_area_frac}")
        if self.weights is not None and len(self.weights) != len(FEATURE_NAMES) + 1:
            raise SeedModelError(f"expected {len(FEATURE_NAMES) + 1} weights (intercept + {FEATURE_NAMES}), "
                                 f"got {len(self.weights)}")
        if self.weights is not None and not all(math.isfinite(w) for w in self.weights):
            raise SeedModelError("weights must be finite")
        if not (math.isfinite(self.output_scale) and self.output_scale > 0):
            raise SeedModelError(f"output_scale must be positive, got {self.output_scale}")
        if not (self.sigma_seeds > 0 and self.sigma_growth >= 0):
            raise SeedModelError("sigma_seeds must be positive and sigma_growth not negative")
        if not 0.0 <= self.outlier_share < 1.0:
            raise SeedModelError(f"outlier_share must be in [0, 1), got {self.outlier_share}")
        if self.descriptor_cells < 0:
            raise SeedModelError(f"descriptor_cells must not be negative, got {self.descriptor_cells}")
        if self.network is not None and len(self.network.mean) != self.input_width:
            raise SeedModelError(f"network reads {len(self.network.mean)} inputs, this model gives it "
                                 f"{self.input_width} ({len(FEATURE_NAMES)} features + descriptor)")

    @property
    def input_width(self) -> int:
        """How many numbers the network reads per pit: the features, then the descriptor."""
        return len(FEATURE_NAMES) + descriptor_width(self.descriptor_cells)

    def estimate(self, matrix: np.ndarray, descriptor: np.ndarray | None = None) -> np.ndarray:
        """Continuous count estimates for a feature matrix (N, F) and, for a descriptor network, descriptors."""
        if self.network is not None:
            if self.descriptor_cells:
                if descriptor is None or descriptor.shape[1] != descriptor_width(self.descriptor_cells):
                    got = None if descriptor is None else descriptor.shape[1]
                    raise SeedModelError(f"this seed model needs pit descriptors of {self.descriptor_cells}x"
                                         f"{self.descriptor_cells} cells (got width {got})")
                matrix = np.hstack([matrix, descriptor])
            return self.output_scale * self.network(matrix)
        if self.weights is None:
            return self.output_scale * np.asarray(matrix[:, 0], np.float64)
        w = np.asarray(self.weights, np.float64)
        return np.asarray(self.output_scale * (w[0] + matrix @ w[1:]))

    def to_dict(self) -> dict[str, object]:
        return {
            "features": list(FEATURE_NAMES),
            "weights": None if self.weights is None else [round(w, 6) for w in self.weights],
            "network": None if self.network is None else self.network.to_dict(),
            "counter": None if self.counter is None else self.counter.to_dict(),
            "descriptor_cells": self.descriptor_cells,
            "seed_area_frac": self.seed_area_frac,
            "output_scale": self.output_scale,
            "sigma_seeds": self.sigma_seeds,
            "sigma_growth": self.sigma_growth,
            "outlier_share": self.outlier_share,
            "source": self.source,
            "examples": self.examples,
        }

    @classmethod
    def from_dict(cls, data: dict[str, object]) -> SeedModel:
        if not isinstance(data, dict):
            raise SeedModelError("a seed model must be a JSON object")
        features = data.get("features")
        learnt = data.get("weights") is not None or data.get("network") is not None
        if learnt and (not isinstance(features, list) or tuple(features) != FEATURE_NAMES):
            raise SeedModelError(f"seed model features {features} differ from this version's {list(FEATURE_NAMES)}")
        try:
            weights = data.get("weights")
            area = data.get("seed_area_frac")
            network = data.get("network")
            counter = data.get("counter")
            return cls(
                weights=None if weights is None else tuple(float(v) for v in weights),  # type: ignore[attr-defined]
                network=None if network is None else Network.from_dict(network),  # type: ignore[arg-type]
                counter=None if counter is None else CounterHead.from_dict(counter),  # type: ignore[arg-type]
                descriptor_cells=int(data.get("descriptor_cells", 0)),  # type: ignore[call-overload]
                seed_area_frac=None if area is None else float(area),  # type: ignore[arg-type]
                output_scale=float(data.get("output_scale", 1.0)),  # type: ignore[arg-type]
                sigma_seeds=float(data.get("sigma_seeds", 0.45)),  # type: ignore[arg-type]
                sigma_growth=float(data.get("sigma_growth", 0.12)),  # type: ignore[arg-type]
                outlier_share=float(data.get("outlier_share", 0.0)),  # type: ignore[arg-type]
                source=str(data.get("source", "file")),
                examples=int(data.get("examples", 0)),  # type: ignore[call-overload]
            )
        except SeedModelError:
            raise
        except (KeyError, TypeError, ValueError) as exc:  # CounterNetError included
            raise SeedModelError(f"bad seed model: {exc}") from exc


@dataclass(frozen=True, eq=False)
class PitFeatures:
    """What the counter measured in each crop."""

    matrix: np.ndarray  # (N, len(FEATURE_NAMES))
    seed_area_frac: float  # one seed / pit disc, as used
    masks: np.ndarray  # (N, S, S) bool foreground
    descriptor: np.ndarray | None = None  # (N, descriptor_width(cells)): pooled seed-strength and lightness maps

    def column(self, name: str) -> np.ndarray:
        return np.asarray(self.matrix[:, FEATURE_NAMES.index(name)])


@dataclass(frozen=True, eq=False)
class PitCounts:
    """Counter output: per pit log-likelihoods over 0..64, the best counts, an overall confidence."""

    log_likelihoods: np.ndarray  # (N, 65)
    estimates: np.ndarray  # (N,) continuous estimate (the expected count)
    features: PitFeatures | None = None  # the hand-made features, when a feature model counted

    @property
    def counts(self) -> tuple[int, ...]:
        """The most likely count of every pit."""
        return tuple(int(v) for v in np.argmax(self.log_likelihoods, axis=1))

    @property
    def probabilities(self) -> np.ndarray:
        ll = self.log_likelihoods - self.log_likelihoods.max(axis=1, keepdims=True)
        p = np.exp(ll)
        return np.asarray(p / p.sum(axis=1, keepdims=True))

    @property
    def confidence(self) -> float:
        """Mean probability of the chosen count (flat prior), 0..1."""
        return float(self.probabilities.max(axis=1).mean())


# --------------------------------------------------------------------------- crops


def pit_crops(rectified_bgr: np.ndarray, grid: PitGrid, *, config: CountConfig = CountConfig()) -> np.ndarray:
    """Canonical crops (32, S, S, 3) of every pit, image order."""
    s = config.crop_px
    half = config.crop_of_radius * grid.radius_px
    scale = s / (2 * half)
    crops = np.empty((len(grid.centers_px), s, s, 3), np.uint8)
    for i, (x, y) in enumerate(grid.centers_px):
        # Affine map: crop pixel (u, v) <- rectified (x - half + u/scale, ...), pixel centres aligned.
        m = np.array([[scale, 0, -(x - half) * scale], [0, scale, -(y - half) * scale]], np.float64)
        crops[i] = cv2.warpAffine(rectified_bgr, m, (s, s), flags=cv2.INTER_AREA if scale < 1 else cv2.INTER_LINEAR,
                                  borderMode=cv2.BORDER_REPLICATE)
    return crops


def pit_crops_from_image(image_bgr: np.ndarray, board_from_image: np.ndarray, grid: PitGrid, *,
                         config: CountConfig = CountConfig()) -> np.ndarray:
    """Canonical crops (32, S, S, 3) cut straight from the camera image through the board homography.

    The rectified board image is small (a fixed width for the whole board), so its
    pits hold fewer pixels than the camera spent on them; cutting each crop from the
    camera image keeps the seeds as sharp as they were taken. Same geometry as
    :func:`pit_crops` (a square of ``2 * crop_of_radius`` pit radii around each centre).
    """
    s = config.crop_px
    half = config.crop_of_radius * grid.radius_px
    scale = s / (2 * half)
    image_from_board = np.linalg.inv(np.asarray(board_from_image, np.float64))
    crops = np.empty((len(grid.centers_px), s, s, 3), np.uint8)
    for i, (x, y) in enumerate(grid.centers_px):
        # crop pixel (u, v) -> rectified (x - half + (u + 0.5) / scale - 0.5, ...) -> camera image.
        board_from_crop = np.array([[1 / scale, 0, x - half + 0.5 / scale - 0.5],
                                    [0, 1 / scale, y - half + 0.5 / scale - 0.5], [0, 0, 1]], np.float64)
        crops[i] = cv2.warpPerspective(image_bgr, image_from_board @ board_from_crop, (s, s),
                                       flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP, borderMode=cv2.BORDER_REPLICATE)
    return crops


def normalise_crop(crop_bgr: np.ndarray, *, config: CountConfig = CountConfig()) -> np.ndarray:
    """Resize an external single-pit crop (pit centred, side = 2 * crop_of_radius radii) to canonical size."""
    if crop_bgr.ndim == 2:
        crop_bgr = cv2.cvtColor(crop_bgr, cv2.COLOR_GRAY2BGR)
    if crop_bgr.ndim != 3 or crop_bgr.shape[2] not in (3, 4) or min(crop_bgr.shape[:2]) < 4:
        raise ValueError(f"expected a colour pit crop, got shape {crop_bgr.shape}")
    crop_bgr = crop_bgr[..., :3]
    h, w = crop_bgr.shape[:2]
    side = min(h, w)
    y0, x0 = (h - side) // 2, (w - side) // 2
    square = np.ascontiguousarray(crop_bgr[y0 : y0 + side, x0 : x0 + side])
    return cv2.resize(square, (config.crop_px, config.crop_px), interpolation=cv2.INTER_AREA)


def network_input(crops_bgr: np.ndarray, *, config: CountConfig = CountConfig()) -> np.ndarray:
    """Canonical crops (N, S, S, 3) uint8 -> the seed network's input (N, 3, S, S) float32.

    Each crop is measured against its own bare wood: the rim of the crop outside
    ``rim_of_radius`` pit radii (the board around the pit) gives, per channel, the
    level subtracted, and its mean brightness the unit. So a dark frame and a bright
    one, a pale board and a dark one, look alike to the network; what is left is how
    the bowl and its seeds depart from the wood around them.
    """
    crops = np.asarray(crops_bgr)
    if crops.ndim != 4 or crops.shape[-1] != 3:
        raise ValueError(f"expected crops (N, S, S, 3), got shape {crops.shape}")
    n, s = crops.shape[:2]
    rim = np.flatnonzero(~_disc(CountConfig(crop_px=s, crop_of_radius=config.crop_of_radius), config.rim_of_radius))
    # (N, 3, rim pixels) contiguous: a median along the last axis is ten times faster than along a strided one.
    rim_px = np.ascontiguousarray(crops.reshape(n, s * s, 3)[:, rim].transpose(0, 2, 1))
    level = np.median(rim_px, axis=2).astype(np.float32)  # (N, 3)
    f = crops.astype(np.float32)
    unit = level.mean(axis=1) + config.rim_unit_offset  # (N,)
    x = (f - level[:, None, None, :]) / unit[:, None, None, None]
    return np.ascontiguousarray(x.transpose(0, 3, 1, 2))


def descriptor_width(cells: int) -> int:
    """Length of a pit descriptor pooled to ``cells`` x ``cells`` (two maps)."""
    return 2 * cells * cells


def pit_descriptor(strength: np.ndarray, light: np.ndarray, *, cells: int,
                   config: CountConfig = CountConfig()) -> np.ndarray:
    """Pool per-pixel maps (N, S, S) of the pit opening to ``cells`` x ``cells`` each (N, 2 * cells^2).

    ``strength``: how seed-like each pixel is, in units of this frame's seed threshold
    (1 = on the threshold), so it is free of the board's colours and light;
    ``light``: lightness against the empty bowls, in ``descriptor_light_levels``.
    Both are dimensionless, which lets a network trained on one look transfer to others.
    """
    n, s = strength.shape[:2]
    r_px = s / 2 / config.crop_of_radius * config.disc_of_radius
    side = min(s - s % 2, cells * int(np.ceil(2 * r_px / cells)))  # whole pixels per cell when it fits
    lo = (s - side) // 2
    out = []
    for image, limit in ((np.clip(strength, 0.0, config.max_strength), config.max_strength),
                         (np.clip(light, -limit_of_light(), limit_of_light()), limit_of_light())):
        box = np.ascontiguousarray(image[:, lo : lo + side, lo : lo + side], np.float32).reshape(n * side, side)
        pooled = cv2.resize(box, (cells, cells * n), interpolation=cv2.INTER_AREA)
        out.append(pooled.reshape(n, cells * cells) / limit)
    return np.asarray(np.hstack(out), np.float64)


def limit_of_light() -> float:
    """Lightness units (of ``descriptor_light_levels``) beyond which the descriptor clips."""
    return 3.0


def _disc(config: CountConfig, of_radius: float) -> np.ndarray:
    s = config.crop_px
    r_px = s / 2 / config.crop_of_radius * of_radius
    yy, xx = np.mgrid[0:s, 0:s] + 0.5
    return np.asarray((xx - s / 2) ** 2 + (yy - s / 2) ** 2 <= r_px**2)


# --------------------------------------------------------------------------- features


def _lab(crops: np.ndarray) -> np.ndarray:
    n, s = crops.shape[:2]
    lab = cv2.cvtColor(crops.reshape(n * s, s, 3), cv2.COLOR_BGR2LAB).astype(np.float32)
    return lab.reshape(n, s, s, 3)


#: Crop side the pixel-sized filters below were designed at; other sizes scale them.
REFERENCE_CROP_PX = 48


def _px(crop_side: int, size: float) -> float:
    """A filter size in pixels of a ``crop_side`` crop (given at :data:`REFERENCE_CROP_PX`)."""
    return size * crop_side / REFERENCE_CROP_PX


def _kernel(crop_side: int, size: int) -> np.ndarray:
    """An elliptic structuring element of odd side ``size`` at the reference crop size, scaled."""
    k = max(3, round(_px(crop_side, size)) | 1)
    return cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (k, k))


def _texture(lab: np.ndarray) -> np.ndarray:
    """Local texture of lightness: magnitude of a small Laplacian-of-Gaussian, per crop."""
    n, s = lab.shape[:2]
    light = lab[..., 0].reshape(n * s, s)
    smooth = cv2.GaussianBlur(light, (0, 0), _px(s, 1.2))
    lap = np.abs(cv2.Laplacian(smooth, cv2.CV_32F, ksize=3)) * (s / REFERENCE_CROP_PX) ** 2
    return np.asarray(cv2.GaussianBlur(lap, (0, 0), _px(s, 0.8)).reshape(n, s, s))


def _distance(lab: np.ndarray, template: np.ndarray, config: CountConfig) -> np.ndarray:
    d = lab - template
    d *= d
    weights = np.array([config.lightness_weight**2, 1.0, 1.0], np.float32)
    return np.asarray(np.sqrt(d @ weights))


# --------------------------------------------------------------------------- features


def surface_of_crops(crops_bgr: np.ndarray, config: CountConfig = CountConfig()) -> np.ndarray:
    """Wood colour (Lab) seen around the pits: the crop corners outside the pit opening."""
    lab = _lab(crops_bgr)
    outside = ~_disc(config, 1.12)
    return np.asarray(np.median(lab[:, outside].reshape(-1, 3), axis=0))


def measure(crops_bgr: np.ndarray, *, model: SeedModel = SeedModel(), config: CountConfig = CountConfig(),
            surface_lab: np.ndarray | None = None, bowl_crops: np.ndarray | None = None,
            source_radius_px: float | None = None) -> PitFeatures:
    """Seed masks and features of canonical crops (N, S, S, 3).

    ``surface_lab``: the board's wood colour (default: from the crops' corners).
    ``bowl_crops``: crops known to be empty; default: this batch's emptiest-looking pits.
    ``source_radius_px``: the pit radius in the camera image (how sharp the crops can be).
    """
    if crops_bgr.ndim != 4 or crops_bgr.shape[1:] != (config.crop_px, config.crop_px, 3):
        raise ValueError(f"expected crops (N, {config.crop_px}, {config.crop_px}, 3), got {crops_bgr.shape}")
    n = len(crops_bgr)
    lab = _lab(crops_bgr)
    texture = _texture(lab)
    disc = _disc(config, config.disc_of_radius)
    outside = ~_disc(config, 1.12)
    if surface_lab is None:
        surface_lab = np.median(lab[:, outside].reshape(-1, 3), axis=0)
    surface = np.asarray(surface_lab, np.float32)
    # Chromaticity (r, g of rgb / sum) does not change when wood falls into shadow, so a
    # shaded bowl keeps the wood's; seeds of another colour do not. Too dark to tell: no vote.
    bgr = crops_bgr.astype(np.float32)
    total = bgr.sum(axis=3) + 1.0
    surface_bgr = cv2.cvtColor(np.clip(surface, 0, 255).astype(np.uint8).reshape(1, 1, 3), cv2.COLOR_LAB2BGR)
    sb = surface_bgr.reshape(3).astype(np.float32)
    s_rg = np.array([sb[2], sb[1]]) / (sb.sum() + 1.0)
    d_ab = 100.0 * np.sqrt((bgr[..., 2] / total - s_rg[0]) ** 2 + (bgr[..., 1] / total - s_rg[1]) ** 2)
    d_ab = np.where(total > 3 * config.min_chroma_brightness, d_ab, 0.0)
    d_l = lab[..., 0] - surface[0]
    wood_texture = float(np.median(texture[:, outside])) + 1.0
    chroma = d_ab > config.chroma_seed_distance
    bright = d_l > config.bright_seed_levels
    textured = texture > config.texture_multiple * wood_texture
    chroma_frac = _share(chroma, disc)
    bright_frac = _share(bright, disc)

    # Empty bowls: nothing seed-coloured, nothing bright. Their mean is the per-pixel template.
    empties_lab: np.ndarray | None = None
    empties_tex: np.ndarray | None = None
    if bowl_crops is not None and len(bowl_crops):
        empties_lab = _lab(bowl_crops)
        empties_tex = _texture(empties_lab)
    else:
        chosen = np.nonzero((chroma_frac <= config.empty_max_chroma_frac)
                            & (bright_frac <= config.empty_max_bright_frac))[0]
        if len(chosen) >= config.min_empty_templates:
            empties_lab, empties_tex = lab[chosen], texture[chosen]
    template = np.zeros(lab.shape[1:], np.float32)
    if empties_lab is not None and empties_tex is not None:
        template = cv2.GaussianBlur(empties_lab.mean(axis=0), (0, 0), 1.0)
        tex_template = cv2.GaussianBlur(empties_tex.mean(axis=0), (0, 0), 1.0)

        def score_of(lab_: np.ndarray, tex_: np.ndarray) -> np.ndarray:
            return np.asarray(_distance(lab_, template[None], config)
                              + config.texture_weight * np.maximum(tex_ - tex_template[None], 0.0))

        resid = score_of(empties_lab, empties_tex)[:, disc]
        med = float(np.median(resid))
        mad = float(np.median(np.abs(resid - med))) * 1.4826
        threshold = max(config.min_foreground_distance, med + config.noise_multiple * max(mad, 1.0))
        strength = score_of(lab, texture) / threshold
    else:
        # No empty bowl to compare with: seed pixels are those unlike shadowed wood.
        strength = texture / (config.texture_multiple * wood_texture)
    # Strength: how far past the seed threshold a pixel is (> 1 is seed), whichever cue says so.
    strength = np.maximum(strength, np.maximum(d_ab / config.chroma_seed_distance, d_l / config.bright_seed_levels))
    fg = (strength > 1.0) & disc[None]
    light_map = (lab[..., 0] - template[None, ..., 0]) if empties_lab is not None else d_l
    cells = model.descriptor_cells or config.descriptor_cells  # a model's own size wins
    descriptor = (pit_descriptor(strength, light_map / config.descriptor_light_levels, cells=cells, config=config)
                  if cells else None)

    disc_area = float(disc.sum())
    area, blobs, peaks, radii, blob_areas, masks = _blob_stats(fg, config.min_blob_area_frac * disc_area)
    if model.seed_area_frac is not None:
        seed_frac = model.seed_area_frac
    elif len(radii):
        # One seed: a blob no bigger than a seed-sized disc of its own thickness (the
        # distance-transform maximum is a seed's half-width even when seeds touch).
        single = np.pi * np.median(radii) ** 2 * config.seed_area_of_dt_disc
        singles = blob_areas[blob_areas <= 1.5 * single]
        seed_frac = (float(np.median(singles)) if len(singles) >= 3 else single) / disc_area
    else:
        seed_frac = config.default_seed_area_frac
    seed_frac = float(np.clip(seed_frac, config.min_seed_area_frac, config.max_seed_area_frac))

    highlights = _highlights(lab[..., 0], disc, float(surface[0]) + config.highlight_levels)
    fill = area / disc_area
    units = fill / seed_frac
    light = lab[..., 0] - (template[None, ..., 0] if empties_lab is not None else 0.0)
    spots = _spots(light, disc, outside, (3.0, 5.0, 8.0), masks)
    inner = disc
    matrix = np.stack([
        units,
        _share((chroma & masks), disc) / seed_frac,
        _share((bright & masks), disc) / seed_frac,
        _share((textured & masks), disc) / seed_frac,
        blobs.astype(np.float64),
        peaks.astype(np.float64),
        highlights.astype(np.float64),
        fill,
        units**2 / 10.0,
        fill * units,
        spots[0], spots[1], spots[2], spots[3],
        _share((d_ab > 4.0), inner),
        _share((d_ab > 10.0), inner),
        _share((d_l > 15.0), inner),
        _share((d_l < -20.0), inner),
        np.full(len(fill), seed_frac),
        np.full(len(fill), float(empties_lab is not None)),
        np.full(len(fill), float(surface[0]) / 255.0),
        np.abs(lab[..., 0][:, inner].mean(axis=1) - float(surface[0])) / 100.0,
        spots[1] - np.percentile(spots[1], 10),
        spots[0] - np.percentile(spots[0], 10),
        np.full(len(fill), (source_radius_px or config.crop_px / 2 / config.crop_of_radius) / 30.0),
        units - np.percentile(units, 10),
    ], axis=1)
    del n
    return PitFeatures(np.asarray(matrix, np.float64), seed_frac, masks, descriptor)


def _share(mask: np.ndarray, disc: np.ndarray) -> np.ndarray:
    """Per crop, the share of the disc's pixels set in ``mask`` (N, S, S) bool."""
    return np.asarray(np.count_nonzero(mask & disc[None], axis=(1, 2)) / float(np.count_nonzero(disc)))


def _spots(light: np.ndarray, disc: np.ndarray, outside: np.ndarray, multiples: tuple[float, ...],
           masks: np.ndarray) -> list[np.ndarray]:
    """Seed-sized blobs per crop: scale-normalised Laplacian-of-Gaussian extrema of lightness.

    A seed is a compact bump (darker or lighter than what surrounds it) whatever
    its colour. Counted at several contrast levels (multiples of the response's
    spread on the wood around the pits); the last list entry counts the middle
    level's spots that lie on the foreground mask.
    """
    n, s = light.shape[:2]
    flat = np.ascontiguousarray(light.reshape(n * s, s), np.float32)
    response = None
    for sigma in (_px(s, 1.5), _px(s, 2.2), _px(s, 3.2)):
        g = cv2.GaussianBlur(flat, (0, 0), sigma)
        r = np.abs(cv2.Laplacian(g, cv2.CV_32F, ksize=3)) * sigma**2
        response = r if response is None else np.maximum(response, r)
    assert response is not None
    dil = cv2.dilate(response, _kernel(s, 5))
    response = response.reshape(n, s, s)
    is_peak = (response >= dil.reshape(n, s, s)) & _disc_like(disc, 0.92)[None]
    noise = float(np.median(response[:, outside])) + 1e-3
    out = [np.asarray((is_peak & (response > k * noise)).sum(axis=(1, 2)), np.float64) for k in multiples]
    mid = multiples[len(multiples) // 2]
    out.append(np.asarray((is_peak & (response > mid * noise) & masks).sum(axis=(1, 2)), np.float64))
    return out


def _disc_like(disc: np.ndarray, of: float) -> np.ndarray:
    """A smaller concentric disc (``of`` of the given disc's radius)."""
    s = disc.shape[0]
    r = np.sqrt(disc.sum() / np.pi) * of
    yy, xx = np.mgrid[0:s, 0:s] + 0.5
    return np.asarray((xx - s / 2) ** 2 + (yy - s / 2) ** 2 <= r * r)


def _highlights(light: np.ndarray, disc: np.ndarray, min_level: float) -> np.ndarray:
    """Specular highlights per crop: local maxima of lightness above ``min_level`` (one per glossy seed)."""
    n, s = light.shape[:2]
    flat = light.reshape(n * s, s)
    smooth = cv2.GaussianBlur(flat, (0, 0), _px(s, 1.0))
    dil = cv2.dilate(smooth, _kernel(s, 7))
    peaks = (smooth >= dil) & (smooth > min_level)
    peaks = peaks.reshape(n, s, s) & disc[None]
    return np.asarray(peaks.sum(axis=(1, 2)))


def _blob_stats(masks: np.ndarray, min_blob_px: float) -> tuple[
        np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per-crop foreground area, blob and peak counts, plus per-blob thickness and area.

    All crops are laid out as tiles of one mosaic so OpenCV labels them in one call.
    """
    n, s = masks.shape[:2]
    cols = min(8, n)
    rows = -(-n // cols)
    gap = 4
    mosaic = np.zeros((rows * (s + gap), cols * (s + gap)), np.uint8)
    for i in range(n):
        r, c = divmod(i, cols)
        mosaic[r * (s + gap) : r * (s + gap) + s, c * (s + gap) : c * (s + gap) + s] = masks[i]
    kernel = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (3, 3))
    mosaic = cv2.morphologyEx(mosaic, cv2.MORPH_OPEN, kernel)
    mosaic = cv2.morphologyEx(mosaic, cv2.MORPH_CLOSE, kernel)
    count, labels, stats, centroids = cv2.connectedComponentsWithStats(mosaic, connectivity=8)
    big = stats[:, cv2.CC_STAT_AREA] >= min_blob_px
    big[0] = False
    keep = big[labels]
    dist = cv2.distanceTransform(keep.astype(np.uint8), cv2.DIST_L2, 3)
    thickness = np.zeros(count, np.float32)
    np.maximum.at(thickness, labels[keep], dist[keep])
    dil = cv2.dilate(dist, _kernel(s, 5))
    peak_mask = (dist >= dil) & (dist > _px(s, 1.5))
    blobs = np.zeros(n, int)
    def tiles_of(image: np.ndarray) -> np.ndarray:
        t = image.reshape(rows, s + gap, cols, s + gap).transpose(0, 2, 1, 3)[:, :, :s, :s]
        return np.asarray(t.reshape(rows * cols, s, s)[:n])

    clean = tiles_of(keep)
    area = np.count_nonzero(clean, axis=(1, 2)).astype(np.float64)
    peaks = np.count_nonzero(tiles_of(peak_mask), axis=(1, 2))
    ids = np.nonzero(big)[0]
    tiles = (centroids[ids, 1] // (s + gap)).astype(int) * cols + (centroids[ids, 0] // (s + gap)).astype(int)
    np.add.at(blobs, tiles[tiles < n], 1)
    return area, blobs, peaks, thickness[ids], stats[ids, cv2.CC_STAT_AREA].astype(np.float64), clean


# --------------------------------------------------------------------------- counting


def estimate_counts(features: PitFeatures, *, model: SeedModel = SeedModel()) -> PitCounts:
    """Turn measured features into per-pit log-likelihoods over 0..64."""
    mu = np.clip(model.estimate(features.matrix, features.descriptor), 0.0, float(MAX_COUNT))
    # Nothing seen at all is an empty pit, whatever the model's intercept says.
    mu = np.where(features.column("fg_units") < 0.3, 0.0, mu)
    counts = np.arange(MAX_COUNT + 1, dtype=np.float64)
    sigma = np.sqrt(model.sigma_seeds**2 + (model.sigma_growth * mu) ** 2)
    ll = -0.5 * ((counts[None, :] - mu[:, None]) / sigma[:, None]) ** 2
    ll -= np.log(np.exp(ll - ll.max(axis=1, keepdims=True)).sum(axis=1, keepdims=True)) + ll.max(axis=1, keepdims=True)
    if model.outlier_share > 0:
        ll = np.log((1.0 - model.outlier_share) * np.exp(ll) + model.outlier_share / len(counts))
    return PitCounts(ll, mu, features)


def count_crops(crops_bgr: np.ndarray, *, model: SeedModel = SeedModel(), config: CountConfig = CountConfig(),
                surface_lab: np.ndarray | None = None, bowl_crops: np.ndarray | None = None,
                source_radius_px: float | None = None) -> PitCounts:
    """Count seeds in canonical crops (N, S, S, 3): the model's network when it has one, else its features."""
    if model.counter is not None:
        return count_with_network(crops_bgr, model, config=config)
    features = measure(crops_bgr, model=model, config=config, surface_lab=surface_lab, bowl_crops=bowl_crops,
                       source_radius_px=source_radius_px)
    return estimate_counts(features, model=model)


def embed_crops(crops_bgr: np.ndarray, head: CounterHead, *, config: CountConfig = CountConfig()) -> np.ndarray:
    """The network trunk's embedding (N, E) of canonical crops of any size (resized to the head's input)."""
    crops = np.asarray(crops_bgr)
    if crops.ndim != 4 or crops.shape[-1] != 3:
        raise ValueError(f"expected crops (N, S, S, 3), got shape {crops.shape}")
    if crops.shape[1:3] != (head.input_px, head.input_px):
        crops = np.stack([cv2.resize(c, (head.input_px, head.input_px), interpolation=cv2.INTER_AREA) for c in crops])
    net_config = dataclasses.replace(config, crop_px=head.input_px, crop_of_radius=head.crop_of_radius)
    return embed(network_input(crops, config=net_config), head)


def count_with_network(crops_bgr: np.ndarray, model: SeedModel, *, config: CountConfig = CountConfig()) -> PitCounts:
    """Per-pit log-likelihoods from the seed network (``model.counter``), outlier share mixed in."""
    if model.counter is None:
        raise SeedModelError("this seed model has no network")
    ll = model.counter.log_probabilities(embed_crops(crops_bgr, model.counter, config=config))
    if model.outlier_share > 0:
        ll = np.log((1.0 - model.outlier_share) * np.exp(ll) + model.outlier_share / ll.shape[1])
    p = np.exp(ll)
    estimates = (p * np.arange(ll.shape[1])).sum(axis=1) / p.sum(axis=1)
    return PitCounts(ll, estimates)


def count_seeds(rectified_bgr: np.ndarray, grid: PitGrid, *, model: SeedModel = SeedModel(),
                config: CountConfig = CountConfig(), source_radius_px: float | None = None,
                camera_bgr: np.ndarray | None = None, board_from_image: np.ndarray | None = None) -> PitCounts:
    """Count the seeds in all 32 pits of a rectified board (``source_radius_px``: pit radius in the camera image).

    With the camera image and the homography that rectified it, pits are cut from the
    camera image (:func:`pit_crops_from_image`: sharper seeds); else from the rectified board.
    """
    from omweso_cam.vision.grid import surface_colour

    if camera_bgr is not None and board_from_image is not None:
        crops = pit_crops_from_image(camera_bgr, board_from_image, grid, config=config)
    else:
        crops = pit_crops(rectified_bgr, grid, config=config)
    if model.counter is not None:
        return count_with_network(crops, model, config=config)
    return count_crops(crops, model=model, config=config, surface_lab=surface_colour(rectified_bgr),
                       source_radius_px=source_radius_px)


# --------------------------------------------------------------------------- fitting


def fit_weights(matrix: np.ndarray, counts: np.ndarray, *, ridge: float = 1.0) -> np.ndarray:
    """Ridge least squares of counts on features (intercept first), weighting heaps less."""
    x = np.hstack([np.ones((len(matrix), 1)), matrix])
    # Big heaps are noisier: weight each example by 1 / (1 + count / 4).
    w = 1.0 / (1.0 + counts / 4.0)
    xw = x * w[:, None]
    reg = ridge * np.eye(x.shape[1])
    reg[0, 0] = 0.0
    return np.asarray(np.linalg.solve(xw.T @ x + reg, xw.T @ counts))


def fit_sigmas(estimates: np.ndarray, counts: np.ndarray) -> tuple[float, float]:
    """(sigma_seeds, sigma_growth) from residuals: a floor for small pits, growth for heaps."""
    resid = estimates - counts
    small = counts <= 3
    sigma_seeds = float(np.sqrt(np.mean(resid[small] ** 2))) if small.any() else 0.45
    big = counts >= 4
    growth = float(np.sqrt(np.mean((resid[big] / counts[big]) ** 2))) if big.any() else 0.12
    return float(np.clip(sigma_seeds, 0.3, 3.0)), float(np.clip(growth, 0.04, 0.6))


def likelihood_score(estimates: np.ndarray, counts: np.ndarray, model: SeedModel) -> float:
    """Mean log-probability a model's likelihood shape gives the true counts (higher is better)."""
    mu = np.clip(np.asarray(estimates, np.float64), 0.0, float(MAX_COUNT))
    grid = np.arange(MAX_COUNT + 1, dtype=np.float64)
    sigma = np.sqrt(model.sigma_seeds**2 + (model.sigma_growth * mu) ** 2)
    ll = -0.5 * ((grid[None, :] - mu[:, None]) / sigma[:, None]) ** 2
    p = np.exp(ll - ll.max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)
    p = (1.0 - model.outlier_share) * p + model.outlier_share / len(grid)
    truth = np.asarray(counts, int)
    return float(np.mean(np.log(np.maximum(p[np.arange(len(truth)), truth], 1e-300))))


def fit_likelihood_shape(estimates: np.ndarray, counts: np.ndarray, model: SeedModel, *,
                         sigma_seeds: tuple[float, ...] = (0.4, 0.5, 0.6, 0.7, 0.8, 1.0),
                         sigma_growth: tuple[float, ...] = (0.1, 0.15, 0.2, 0.25, 0.3, 0.35),
                         outlier_share: tuple[float, ...] = (0.0, 0.01, 0.02, 0.04)) -> SeedModel:
    """The model with the (sigma_seeds, sigma_growth, outlier_share) that best predict labelled counts.

    Chosen on a grid by mean log-probability of the truth (held-out labels make it calibrated).
    """
    best = model
    best_score = -np.inf
    for s0, growth, share in itertools.product(sigma_seeds, sigma_growth, outlier_share):
        candidate = dataclasses.replace(model, sigma_seeds=s0, sigma_growth=growth, outlier_share=share)
        score = likelihood_score(estimates, counts, candidate)
        if score > best_score:
            best, best_score = candidate, score
    return best


def fit_seed_model(crops_bgr: np.ndarray, counts: list[int] | np.ndarray, *, config: CountConfig = CountConfig(),
                   source: str = "examples", surface_lab: np.ndarray | None = None,
                   min_examples_for_weights: int = 100, base: SeedModel | None = None,
                   source_radius_px: float | None = None) -> SeedModel:
    """Learn a seed model from labelled crops of one board and light (or many).

    With at least ``min_examples_for_weights`` crops of at least 3 distinct counts,
    a linear model over the features is fitted (and the seed size learnt from crops
    of 1..4 seeds). With fewer, or a known position such as the standard set-up
    (counts 0 and 4 only), the ``base`` model (default: the shipped one) is kept
    and only rescaled so that its counts match the labels on average.
    """
    counts = np.asarray(counts, dtype=np.float64)
    if len(counts) != len(crops_bgr) or len(counts) == 0:
        raise SeedModelError(f"need one count per crop, got {len(counts)} counts for {len(crops_bgr)} crops")
    if np.any(counts < 0) or np.any(counts > MAX_COUNT) or np.any(counts != np.round(counts)):
        raise SeedModelError(f"counts must be whole numbers in 0..{MAX_COUNT}")
    if not np.any(counts > 0):
        raise SeedModelError("need at least one labelled crop holding seeds")
    reference = base or default_seed_model()
    if reference.counter is not None:
        head = refit_head(embed_crops(crops_bgr, reference.counter, config=config), counts.astype(np.int64),
                          reference.counter, pull=config.head_pull)
        return dataclasses.replace(reference, counter=head, source=source, examples=len(counts))
    empties = crops_bgr[counts == 0]
    bowls = empties if len(empties) >= 2 else None
    if len(counts) >= min_examples_for_weights and len(set(counts.tolist())) >= 3:
        features = measure(crops_bgr, config=config, surface_lab=surface_lab, bowl_crops=bowls)
        small = (counts >= 1) & (counts <= 4)
        seed_frac = None
        if small.any():
            area = features.column("fg_units")[small] * features.seed_area_frac
            seed_frac = float(np.clip(np.median(area / counts[small]), config.min_seed_area_frac,
                                      config.max_seed_area_frac))
            features = measure(crops_bgr, model=SeedModel(seed_area_frac=seed_frac), config=config,
                               surface_lab=surface_lab, bowl_crops=bowls)
        weights = tuple(float(v) for v in fit_weights(features.matrix, counts))
        model = SeedModel(weights=weights, seed_area_frac=seed_frac, source=source, examples=len(counts))
    else:
        # Measured exactly as a live frame is (its own empty-bowl guess), so the scale carries over.
        features = measure(crops_bgr, model=reference, config=config, surface_lab=surface_lab,
                           source_radius_px=source_radius_px)
        raw = np.clip(reference.estimate(features.matrix, features.descriptor), 0.0, MAX_COUNT)
        held = counts > 0
        denominator = float(np.sum(raw[held] ** 2))
        scale = float(np.sum(raw[held] * counts[held]) / denominator) if denominator > 0 else 1.0
        model = SeedModel(weights=reference.weights, network=reference.network,
                          descriptor_cells=reference.descriptor_cells, seed_area_frac=reference.seed_area_frac,
                          output_scale=float(np.clip(reference.output_scale * scale, 0.3, 4.0)),
                          outlier_share=reference.outlier_share, source=source, examples=len(counts))
    estimates = np.clip(model.estimate(features.matrix, features.descriptor), 0, MAX_COUNT)
    sigma_seeds, growth = fit_sigmas(estimates, counts)
    return SeedModel(weights=model.weights, network=model.network, descriptor_cells=model.descriptor_cells,
                     seed_area_frac=model.seed_area_frac,
                     output_scale=model.output_scale, sigma_seeds=sigma_seeds, sigma_growth=growth,
                     outlier_share=model.outlier_share,
                     source=source, examples=len(counts))


def default_seed_model() -> SeedModel:
    """The shipped model (fitted on rendered boards: benchmarks/fit_count_model.py), or the area-only fallback."""
    from omweso_cam.resources import calibration_dir

    try:
        return load_seed_model(str(calibration_dir() / "seed_model_default.json"))
    except (FileNotFoundError, SeedModelError):
        return SeedModel()


# --------------------------------------------------------------------------- files

SEED_MODEL_FORMAT = "omweso-cam-seed-model"
SEED_MODEL_VERSION = 1


def save_seed_model(model: SeedModel, path: str) -> None:
    """Write a seed model as versioned JSON."""
    data = {"format": SEED_MODEL_FORMAT, "version": SEED_MODEL_VERSION, **model.to_dict()}
    with open(path, "w", encoding="utf-8") as fh:
        json.dump(data, fh, indent=2)
        fh.write("\n")


def load_seed_model(path: str) -> SeedModel:
    """Read a seed model JSON (a bare one, or the ``seed_model`` of a calibration file)."""
    try:
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise SeedModelError(f"cannot read seed model {path}: {exc}") from exc
    if isinstance(data, dict) and isinstance(data.get("seed_model"), dict):
        data = data["seed_model"]
    elif not isinstance(data, dict) or data.get("format") != SEED_MODEL_FORMAT:
        raise SeedModelError(f"{path} is not an omweso-cam seed model (format {SEED_MODEL_FORMAT!r})")
    elif data.get("version") != SEED_MODEL_VERSION:
        raise SeedModelError(f"unsupported seed model version {data.get('version')!r}")
    return SeedModel.from_dict(data)
