"""Count: per-pit likelihood over seed counts 0..64 (after grid, before the Observation).

Everything works on *canonical pit crops*: a square centred on the pit, side
``2 * crop_of_radius`` pit radii, resized to ``crop_px``. The same code counts
pits cut from a live frame and single-pit crops from a labelled CSV.

Per crop: seed pixels are those that differ from the empty bowl (a per-pixel
template built from the pits of the same frame that look empty, so it adapts to
the board, its shading and the light), in colour or in texture (highlights and
the dark gaps between seeds show up even when seed and bowl have the same
colour). The visible seed area in units of one seed's area, the number of
separate blobs and the peaks of their distance transform give an estimate; a
monotone curve (calibrated) turns it into a count, whose uncertainty grows with
the heap. The seed size is measured on the frame (compact isolated blobs) unless
a :class:`SeedModel` fixes it.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field, replace

import cv2
import numpy as np

from omweso_cam.observation import MAX_COUNT
from omweso_cam.vision.grid import PitGrid


class SeedModelError(ValueError):
    """A seed-appearance model (JSON) is malformed or inconsistent."""


@dataclass(frozen=True)
class CountConfig:
    """Tunables of the seed counter."""

    crop_px: int = 64  # canonical pit crop side
    crop_of_radius: float = 1.25  # crop half-side in pit radii
    disc_of_radius: float = 0.96  # part of the pit searched for seeds (the rim itself is skipped)
    lightness_weight: float = 0.6  # weight of the L channel in colour distances
    min_foreground_distance: float = 9.0  # Lab units: never call smaller differences seed
    noise_multiple: float = 3.5  # foreground threshold in robust noise deviations of empty bowls
    texture_weight: float = 0.7  # how much local texture counts next to colour difference
    empty_max_area_frac: float = 0.04  # a pit with less foreground than this may serve as an empty bowl
    min_empty_templates: int = 3
    template_passes: int = 2
    min_blob_area_frac: float = 0.012  # of the pit disc: smaller blobs are noise
    default_seed_area_frac: float = 0.075  # of the pit disc, used when nothing can be measured
    min_seed_area_frac: float = 0.02
    max_seed_area_frac: float = 0.25
    seed_area_of_dt_disc: float = 1.25  # seed area / (pi * its distance-transform peak^2): seeds are ellipses


@dataclass(frozen=True)
class SeedModel:
    """Seed appearance: how big one seed looks, how areas map to counts, how sure we are.

    ``curve`` maps "visible seed units" (foreground area / one seed's area) to a
    count by linear interpolation of its knots (monotone); beyond the last knot
    it extrapolates with the last slope. ``seed_area_frac`` is of the pit disc;
    ``None`` means measure it on each frame.
    """

    seed_area_frac: float | None = None
    curve: tuple[tuple[float, float], ...] = ((0.0, 0.0), (6.0, 6.0), (10.0, 11.0), (16.0, 20.0), (24.0, 34.0))
    sigma_seeds: float = 0.35  # count uncertainty of one seed
    sigma_growth: float = 0.06  # extra uncertainty per seed of the estimate
    bowl_lab: tuple[float, ...] | None = None  # mean empty bowl Lab colour (OpenCV 8-bit scale), when known
    source: str = "default"
    examples: int = 0
    notes: dict[str, object] = field(default_factory=dict, compare=False)

    def __post_init__(self) -> None:
        if self.seed_area_frac is not None and not 0.0 < self.seed_area_frac < 1.0:
            raise SeedModelError(f"seed_area_frac must be in (0, 1), got {self.seed_area_frac}")
        if len(self.curve) < 2:
            raise SeedModelError("the area-to-count curve needs at least two knots")
        xs = [k[0] for k in self.curve]
        ys = [k[1] for k in self.curve]
        if any(b <= a for a, b in itertools.pairwise(xs)) or any(b < a for a, b in itertools.pairwise(ys)):
            raise SeedModelError("the area-to-count curve must increase")
        if not (self.sigma_seeds > 0 and self.sigma_growth >= 0):
            raise SeedModelError("sigmas must be positive")

    def count_of_units(self, units: float) -> float:
        xs = [k[0] for k in self.curve]
        ys = [k[1] for k in self.curve]
        if units <= xs[-1]:
            return float(np.interp(units, xs, ys))
        slope = (ys[-1] - ys[-2]) / (xs[-1] - xs[-2])
        return ys[-1] + slope * (units - xs[-1])

    def to_dict(self) -> dict[str, object]:
        return {
            "seed_area_frac": self.seed_area_frac,
            "curve": [list(k) for k in self.curve],
            "sigma_seeds": self.sigma_seeds,
            "sigma_growth": self.sigma_growth,
            "bowl_lab": list(self.bowl_lab) if self.bowl_lab is not None else None,
            "source": self.source,
            "examples": self.examples,
        }

    @classmethod
    def from_dict(cls, data: dict[str, object]) -> SeedModel:
        try:
            bowl = data.get("bowl_lab")
            area = data.get("seed_area_frac")
            return cls(
                seed_area_frac=None if area is None else float(area),  # type: ignore[arg-type]
                curve=tuple((float(a), float(b)) for a, b in data["curve"]),  # type: ignore[attr-defined]
                sigma_seeds=float(data.get("sigma_seeds", 0.35)),  # type: ignore[arg-type]
                sigma_growth=float(data.get("sigma_growth", 0.06)),  # type: ignore[arg-type]
                bowl_lab=None if bowl is None else tuple(float(v) for v in bowl),  # type: ignore[attr-defined]
                source=str(data.get("source", "file")),
                examples=int(data.get("examples", 0)),  # type: ignore[call-overload]
            )
        except (KeyError, TypeError, ValueError) as exc:
            if isinstance(exc, SeedModelError):
                raise
            raise SeedModelError(f"bad seed model: {exc}") from exc


@dataclass(frozen=True, eq=False)
class PitFeatures:
    """What the counter measured in each crop (arrays of one value per pit)."""

    area_frac: np.ndarray  # foreground area / pit disc area
    blobs: np.ndarray  # separate foreground blobs
    peaks: np.ndarray  # distance-transform peaks (seeds seen as bumps)
    seed_area_frac: float  # one seed / pit disc, as used
    masks: np.ndarray  # (N, S, S) bool foreground


@dataclass(frozen=True, eq=False)
class PitCounts:
    """Counter output: per pit log-likelihoods over 0..64, the best counts, an overall confidence."""

    log_likelihoods: np.ndarray  # (N, 65)
    estimates: np.ndarray  # (N,) continuous estimate
    features: PitFeatures

    @property
    def counts(self) -> tuple[int, ...]:
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


def _texture(lab: np.ndarray) -> np.ndarray:
    """Local texture of lightness: magnitude of a small Laplacian-of-Gaussian, per crop."""
    n, s = lab.shape[:2]
    light = lab[..., 0].reshape(n * s, s)
    smooth = cv2.GaussianBlur(light, (0, 0), 1.2)
    lap = np.abs(cv2.Laplacian(smooth, cv2.CV_32F, ksize=3))
    return cv2.GaussianBlur(lap, (0, 0), 0.8).reshape(n, s, s)


def _distance(lab: np.ndarray, template: np.ndarray, config: CountConfig) -> np.ndarray:
    d = lab - template
    d *= d
    weights = np.array([config.lightness_weight**2, 1.0, 1.0], np.float32)
    return np.asarray(np.sqrt(d @ weights))


def measure(crops_bgr: np.ndarray, *, model: SeedModel = SeedModel(),
            config: CountConfig = CountConfig(), bowl_crops: np.ndarray | None = None) -> PitFeatures:
    """Foreground masks and seed features of canonical crops (N, S, S, 3).

    ``bowl_crops`` are crops known to be empty (e.g. from a calibration); without
    them, the emptiest-looking crops of this batch serve as the bowl template.
    """
    if crops_bgr.ndim != 4 or crops_bgr.shape[1:] != (config.crop_px, config.crop_px, 3):
        raise ValueError(f"expected crops (N, {config.crop_px}, {config.crop_px}, 3), got {crops_bgr.shape}")
    lab = _lab(crops_bgr)
    texture = _texture(lab)
    disc = _disc(config, config.disc_of_radius)
    len(lab)

    # 1. Rough bowl colour: the median of all pit pixels that look most like the typical
    #    pit rim (most rims are uncovered), or the calibrated bowl colour.
    if model.bowl_lab is not None:
        bowl = np.array(model.bowl_lab, np.float32)
    else:
        ring = _disc(config, 0.9) & ~_disc(config, 0.6)
        bowl = np.median(lab[:, ring].reshape(-1, 3), axis=0)
    template = np.broadcast_to(bowl, lab.shape[1:]).astype(np.float32)
    tex_template = np.full(lab.shape[1:3], float(np.median(texture[:, disc])), np.float32)

    def score_of(tmpl: np.ndarray, tex_tmpl: np.ndarray) -> np.ndarray:
        colour = _distance(lab, tmpl[None], config)
        return np.asarray(colour + config.texture_weight * np.maximum(texture - tex_tmpl[None], 0.0))

    def threshold_of(residuals: np.ndarray) -> float:
        med = float(np.median(residuals))
        mad = float(np.median(np.abs(residuals - med))) * 1.4826
        return max(config.min_foreground_distance, med + config.noise_multiple * max(mad, 1.0))

    threshold = 2.0 * config.min_foreground_distance
    if bowl_crops is not None and len(bowl_crops):
        # Known empty bowls (calibration): their median is the template, their spread the noise.
        empties_lab = _lab(bowl_crops)
        template = cv2.GaussianBlur(np.median(empties_lab, axis=0).astype(np.float32), (0, 0), 1.0)
        empties_tex = _texture(empties_lab)
        tex_template = cv2.GaussianBlur(np.median(empties_tex, axis=0).astype(np.float32), (0, 0), 1.0)
        resid = (_distance(empties_lab, template[None], config)
                 + config.texture_weight * np.maximum(empties_tex - tex_template[None], 0.0))
        threshold = threshold_of(resid[:, disc])
    else:
        # The emptiest-looking pits of this frame are the bowl template (twice: the
        # first pass uses the rough colour, the second the first template).
        for _ in range(config.template_passes):
            score = score_of(template, tex_template)
            fg_frac = (score[:, disc] > threshold).mean(axis=1)
            limit = max(config.empty_max_area_frac, 1.5 * float(fg_frac.min()))
            chosen = np.nonzero(fg_frac <= limit)[0]
            if len(chosen) < config.min_empty_templates:
                break
            template = cv2.GaussianBlur(lab[chosen].mean(axis=0), (0, 0), 1.0)
            tex_template = cv2.GaussianBlur(texture[chosen].mean(axis=0), (0, 0), 1.0)
            threshold = threshold_of(score_of(template, tex_template)[chosen][:, disc])

    score = score_of(template, tex_template)
    masks = (score > threshold) & disc[None]
    disc_area = float(disc.sum())
    area, blobs, peaks, radii, blob_areas, clean_masks = _blob_stats(
        masks, config.min_blob_area_frac * disc_area)

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
    return PitFeatures(area / disc_area, blobs, peaks, seed_frac, clean_masks)


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
    dil = cv2.dilate(dist, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (5, 5)))
    peak_mask = (dist >= dil) & (dist > 1.5)
    area = np.zeros(n)
    blobs = np.zeros(n, int)
    peaks = np.zeros(n, int)
    clean = np.zeros((n, s, s), bool)
    for i in range(n):
        r, c = divmod(i, cols)
        ys, xs = slice(r * (s + gap), r * (s + gap) + s), slice(c * (s + gap), c * (s + gap) + s)
        clean[i] = keep[ys, xs]
        area[i] = clean[i].sum()
        peaks[i] = int(peak_mask[ys, xs].sum())
    ids = np.nonzero(big)[0]
    tiles = (centroids[ids, 1] // (s + gap)).astype(int) * cols + (centroids[ids, 0] // (s + gap)).astype(int)
    np.add.at(blobs, tiles[tiles < n], 1)
    return area, blobs, peaks, thickness[ids], stats[ids, cv2.CC_STAT_AREA].astype(np.float64), clean


# --------------------------------------------------------------------------- counting


def estimate_counts(features: PitFeatures, *, model: SeedModel = SeedModel()) -> PitCounts:
    """Turn measured features into per-pit log-likelihoods over 0..64."""
    units = features.area_frac / features.seed_area_frac
    n = len(units)
    counts = np.arange(MAX_COUNT + 1, dtype=np.float64)
    estimates = np.zeros(n)
    ll = np.zeros((n, MAX_COUNT + 1))
    for i in range(n):
        mu = model.count_of_units(float(units[i]))
        # Small pits: separate blobs are separate seeds; a blob is at least one seed.
        if units[i] < 4.5 and features.blobs[i] > 0:
            mu = max(mu, float(features.blobs[i]))
        if units[i] < 0.35:
            mu = 0.0
        estimates[i] = mu
        sigma = math.sqrt(model.sigma_seeds**2 + (model.sigma_growth * mu) ** 2)
        ll[i] = -0.5 * ((counts - mu) / sigma) ** 2
    return PitCounts(ll, estimates, features)


def count_crops(crops_bgr: np.ndarray, *, model: SeedModel = SeedModel(), config: CountConfig = CountConfig(),
                bowl_crops: np.ndarray | None = None) -> PitCounts:
    """Count seeds in canonical crops (N, S, S, 3)."""
    return estimate_counts(measure(crops_bgr, model=model, config=config, bowl_crops=bowl_crops), model=model)


def count_seeds(rectified_bgr: np.ndarray, grid: PitGrid, *, model: SeedModel = SeedModel(),
                config: CountConfig = CountConfig()) -> PitCounts:
    """Count the seeds in all 32 pits of a rectified board."""
    return count_crops(pit_crops(rectified_bgr, grid, config=config), model=model, config=config)


# --------------------------------------------------------------------------- calibration


def fit_seed_model(crops_bgr: np.ndarray, counts: list[int] | np.ndarray, *,
                   config: CountConfig = CountConfig(), source: str = "examples") -> SeedModel:
    """Learn seed size, the area-to-count curve and the uncertainty from labelled crops.

    Needs some crops of small counts (1..3) for the seed size; crops labelled 0
    also give the bowl colour.
    """
    counts = np.asarray(counts, dtype=int)
    if len(counts) != len(crops_bgr) or len(counts) == 0:
        raise SeedModelError(f"need one count per crop, got {len(counts)} counts for {len(crops_bgr)} crops")
    if np.any(counts < 0) or np.any(counts > MAX_COUNT):
        raise SeedModelError(f"counts must be in 0..{MAX_COUNT}")
    empties = crops_bgr[counts == 0]
    bowl_lab = None
    if len(empties):
        disc = _disc(config, config.disc_of_radius)
        bowl_lab = tuple(float(v) for v in np.median(_lab(empties)[:, disc].reshape(-1, 3), axis=0))
    features = measure(crops_bgr, model=SeedModel(bowl_lab=bowl_lab), config=config,
                       bowl_crops=empties if len(empties) >= 2 else None)
    small = (counts >= 1) & (counts <= 3)
    if not small.any():
        raise SeedModelError("need at least one example holding 1 to 3 seeds to learn the seed size")
    seed_frac = float(np.median(features.area_frac[small] / counts[small]))
    seed_frac = float(np.clip(seed_frac, config.min_seed_area_frac, config.max_seed_area_frac))
    units = features.area_frac / seed_frac
    # Curve knots: median units of each count present, made increasing.
    knots: list[tuple[float, float]] = [(0.0, 0.0)]
    for c in sorted(set(counts.tolist()) - {0}):
        u = float(np.median(units[counts == c]))
        if u > knots[-1][0] + 1e-3 and c > knots[-1][1]:
            knots.append((u, float(c)))
    if len(knots) < 2:
        knots.append((1.0, 1.0))
    if knots[-1][0] < 24 and len(knots) >= 2:
        # Extend past the data with the mean slope of the upper half of the knots.
        half = knots[len(knots) // 2 :] if len(knots) > 2 else knots
        slope = max((half[-1][1] - half[0][1]) / max(half[-1][0] - half[0][0], 1e-6), 0.5)
        knots.append((knots[-1][0] + 10.0, knots[-1][1] + 10.0 * slope))
    model = SeedModel(seed_area_frac=seed_frac, curve=tuple(knots), bowl_lab=bowl_lab, source=source,
                      examples=len(counts))
    est = estimate_counts(replace(features, seed_area_frac=seed_frac), model=model).estimates
    resid = est - counts
    small_resid = resid[counts <= 3]
    sigma_seeds = float(np.clip(np.sqrt(np.mean(small_resid**2)) if len(small_resid) else 0.35, 0.25, 2.0))
    big = counts >= 4
    growth = 0.06
    if big.any():
        rel = np.abs(resid[big]) / counts[big]
        growth = float(np.clip(np.sqrt(np.mean(rel**2)), 0.03, 0.5))
    return replace(model, sigma_seeds=sigma_seeds, sigma_growth=growth)


# --------------------------------------------------------------------------- files

SEED_MODEL_FORMAT = "omweso-cam-seed-model"
SEED_MODEL_VERSION = 1


def save_seed_model(model: SeedModel, path: str) -> None:
    """Write a seed model as versioned JSON."""
    import json

    data = {"format": SEED_MODEL_FORMAT, "version": SEED_MODEL_VERSION, **model.to_dict()}
    with open(path, "w", encoding="utf-8") as fh:
        json.dump(data, fh, indent=2)
        fh.write("\n")


def load_seed_model(path: str) -> SeedModel:
    """Read a seed model JSON (a bare one, or the ``seed_model`` of a calibration file)."""
    import json

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
