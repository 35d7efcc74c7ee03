"""Count: per-pit likelihood over seed counts 0..64 (after grid, before the Observation).

Every pit is cut as a *canonical crop*: a square centred on the pit, side
``2 * crop_of_radius`` pit radii, resized to ``crop_px``, straight from the camera
image through the board homography (:func:`pit_crops_from_image`; sharper than the
rectified board) or from the rectified board (:func:`pit_crops`). The same code
counts pits cut from a live frame and single-pit crops from a labelled CSV.

Nothing here knows a seed or wood colour. Each crop is measured against its own rim
of bare wood (:func:`network_input`), and a small convolutional network
(:mod:`omweso_cam.vision.counter_net`, trained on rendered boards with strong
colour, light, blur and geometry augmentation by ``benchmarks/train_counter.py``)
gives a probability for every count 0..64. A share of the probability
(``outlier_share``) is spread over all counts so one misread pit never rules out
the truth. A rig is calibrated from labelled crops by refitting the network's last
layer (:func:`fit_seed_model`), kept only when it predicts held-out crops of that
rig better than the shipped one.
"""

from __future__ import annotations

import dataclasses
import functools
import json
from collections.abc import Sequence
from dataclasses import dataclass, field

import cv2
import numpy as np

from omweso_cam.observation import MAX_COUNT
from omweso_cam.vision.counter_net import CounterHead, CounterNetError, embed, refit_head
from omweso_cam.vision.grid import PitGrid


class SeedModelError(ValueError):
    """A seed-appearance model (JSON) is malformed or inconsistent."""


@dataclass(frozen=True)
class CountConfig:
    """Tunables of the seed counter."""

    crop_px: int = 48  # canonical pit crop side (about the rectified image's own resolution)
    crop_of_radius: float = 1.25  # crop half-side in pit radii
    rim_of_radius: float = 1.1  # network input: the crop outside this many pit radii is the wood it is measured against
    rim_unit_offset: float = 16.0  # network input: one unit = the rim's mean level (0..255) plus this
    head_pull: float = 10.0  # calibrating: weight of staying near the shipped head (per example)
    min_refit_examples: int = 20  # fewer labelled crops than this only confirm the shipped head
    min_refit_counts: int = 3  # ... as do crops of fewer distinct counts (a known position: 0s and 4s)
    # A pit's count does not depend on which way up its crop is; the network's errors do. So
    # each pit is read in this many of its eight views (flips and quarter turns) and their
    # log-likelihoods averaged. vision_bench (true corners, pits >= 36 px, 2,225 pits of 0-6):
    # 96.0 % exact with one view, 97.5 % with eight. The network runs once per view, but only
    # on the pits the first view is unsure of (below ``sure_probability``: about one in five;
    # re-reading every pit measured the same 97.5 %). Four views (2026-11-30) read 0-6 nearly
    # as well on the validation crops (95.8 % vs 95.9 %) but a little worse through the whole
    # pipeline (vision_bench: 95.5 / 92.4 / 87.0 % vs 95.6 / 93.2 / 87.4 %) and the fresh films
    # lost a move and raised two false alarms (track_bench --start: 46/48, 2 vs 47/48, 0).
    # Those numbers are the network shipped before 2026-12-03; the deeper one since is unsure of
    # about one pit in seven and gains less from the other views (docs/vision.md, "A deeper
    # counting network"), but on films read through a calibration one view a frame still followed
    # fewer moves than eight (RunnerConfig.fixed_views; docs/tracking.md).
    views: int = 8
    sure_probability: float = 0.9


@dataclass(frozen=True)
class SeedModel:
    """How pit crops turn into count likelihoods: the network's head, and how far to trust it.

    ``counter``: the network's last layer (its trunk is the shipped ONNX file it names).
    ``outlier_share`` of the probability is spread evenly over 0..64 (a pit misread
    outright: a hidden heap, a glare), so one bad pit is never ruled out.
    """

    counter: CounterHead
    outlier_share: float = 0.02
    source: str = "default"
    examples: int = 0
    notes: dict[str, object] = field(default_factory=dict, compare=False)

    def __post_init__(self) -> None:
        if not isinstance(self.counter, CounterHead):
            raise SeedModelError("a seed model needs the counting network's head")
        if not 0.0 <= self.outlier_share < 1.0:
            raise SeedModelError(f"outlier_share must be in [0, 1), got {self.outlier_share}")

    def to_dict(self) -> dict[str, object]:
        return {"counter": self.counter.to_dict(), "outlier_share": self.outlier_share, "source": self.source,
                "examples": self.examples, **({"notes": self.notes} if self.notes else {})}

    @classmethod
    def from_dict(cls, data: dict[str, object]) -> SeedModel:
        if not isinstance(data, dict):
            raise SeedModelError("a seed model must be a JSON object")
        if not isinstance(data.get("counter"), dict):
            if "weights" in data or "network" in data:
                raise SeedModelError("this seed model is a feature model of an older omweso-cam; "
                                     "make a new one with `omweso-cam calibrate seeds`")
            raise SeedModelError("a seed model needs a 'counter' (the counting network's head)")
        try:
            notes = data.get("notes", {})
            return cls(
                counter=CounterHead.from_dict(data["counter"]),  # type: ignore[arg-type]
                outlier_share=float(data.get("outlier_share", 0.02)),  # type: ignore[arg-type]
                source=str(data.get("source", "file")),
                examples=int(data.get("examples", 0)),  # type: ignore[call-overload]
                notes=dict(notes) if isinstance(notes, dict) else {},
            )
        except SeedModelError:
            raise
        except (KeyError, TypeError, ValueError) as exc:  # CounterNetError included
            raise SeedModelError(f"bad seed model: {exc}") from exc


@dataclass(frozen=True, eq=False)
class PitCounts:
    """Counter output: per pit log-likelihoods over 0..64, the best counts, an overall confidence."""

    log_likelihoods: np.ndarray  # (N, 65)
    estimates: np.ndarray  # (N,) the expected count

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
    centres = np.asarray(grid.centers_px, np.float64)
    map_x, map_y = _crop_maps(np.asarray(board_from_image, np.float64).tobytes(), centres.tobytes(),
                              float(grid.radius_px), config.crop_px, config.crop_of_radius)
    crops = cv2.remap(image_bgr, map_x, map_y, cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
    return crops.reshape(len(centres), config.crop_px, config.crop_px, -1)


@functools.lru_cache(maxsize=4)
def _crop_maps(board_from_image: bytes, centres: bytes, radius_px: float, crop_px: int, crop_of_radius: float
               ) -> tuple[np.ndarray, np.ndarray]:
    """Camera-image coordinates (N * S, S) of every crop pixel, for one :func:`cv2.remap` of all crops.

    Cached: a calibrated board keeps its homography and pits from frame to frame.
    """
    m = np.linalg.inv(np.frombuffer(board_from_image, np.float64).reshape(3, 3))
    c = np.frombuffer(centres, np.float64).reshape(-1, 2)
    half = crop_of_radius * radius_px
    # Crop pixel u -> rectified x - half + (u + 0.5) / scale - 0.5 (pixel centres aligned) -> camera image.
    u = (np.arange(crop_px) + 0.5) / (crop_px / (2 * half)) - 0.5 - half
    bx = (c[:, 0, None] + u[None, :])[:, None, :]  # (N, 1, S): along a crop's columns
    by = (c[:, 1, None] + u[None, :])[:, :, None]  # (N, S, 1): along its rows
    w = m[2, 0] * bx + m[2, 1] * by + m[2, 2]
    map_x = ((m[0, 0] * bx + m[0, 1] * by + m[0, 2]) / w).astype(np.float32).reshape(-1, crop_px)
    map_y = ((m[1, 0] * bx + m[1, 1] * by + m[1, 2]) / w).astype(np.float32).reshape(-1, crop_px)
    map_x.setflags(write=False)
    map_y.setflags(write=False)
    return map_x, map_y


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
    rim_px = crops.reshape(n, s * s, 3)[:, rim].transpose(0, 2, 1).reshape(n * 3, -1)  # (N * 3, rim pixels)
    level = (_median_u8(rim_px) if crops.dtype == np.uint8 else np.median(rim_px, axis=1)).reshape(n, 3).astype(np.float32)
    unit = level.mean(axis=1) + config.rim_unit_offset  # (N,)
    x = crops.transpose(0, 3, 1, 2).astype(np.float32, order="C")
    x -= level[:, :, None, None]
    x /= unit[:, None, None, None]
    return x


def _median_u8(rows: np.ndarray) -> np.ndarray:
    """``np.median(rows, axis=1)`` of uint8 rows (R, M), from their histograms (three times faster)."""
    r, m = rows.shape
    cum = np.bincount((np.arange(r)[:, None] * 256 + rows).ravel(), minlength=r * 256).reshape(r, 256).cumsum(axis=1)
    # The sorted row's values at positions (m - 1) // 2 and m // 2: how many values have fewer before them.
    return np.asarray(((cum <= (m - 1) // 2).sum(axis=1) + (cum <= m // 2).sum(axis=1)) / 2.0)


VIEWS = 8  # the symmetries of a square crop


def view_of(batch: np.ndarray, view: int) -> np.ndarray:
    """View ``view`` (0..7) of a batch (N, C, S, S): ``view & 4`` transposes, ``& 1`` mirrors left-right, ``& 2`` up-down."""
    x = batch.transpose(0, 1, 3, 2) if view & 4 else batch
    if view & 1:
        x = x[:, :, :, ::-1]
    if view & 2:
        x = x[:, :, ::-1, :]
    return x


def views_for(count: int, first: int = 0) -> tuple[int, ...]:
    """``count`` distinct views starting at ``first`` (mod 8): consecutive frames read with
    ``first = frame_index * count`` see different views, so an average over frames covers them."""
    count = min(max(int(count), 1), VIEWS)
    return tuple((first + j) % VIEWS for j in range(count))


def _disc(config: CountConfig, of_radius: float) -> np.ndarray:
    s = config.crop_px
    r_px = s / 2 / config.crop_of_radius * of_radius
    yy, xx = np.mgrid[0:s, 0:s] + 0.5
    return np.asarray((xx - s / 2) ** 2 + (yy - s / 2) ** 2 <= r_px**2)


# --------------------------------------------------------------------------- counting


def _head_input(crops_bgr: np.ndarray, head: CounterHead, config: CountConfig) -> np.ndarray:
    """Canonical crops of any size as ``head``'s network input (N, 3, S, S): resized, measured against their rims."""
    crops = np.asarray(crops_bgr)
    if crops.ndim != 4 or crops.shape[-1] != 3:
        raise ValueError(f"expected crops (N, S, S, 3), got shape {crops.shape}")
    if crops.shape[1:3] != (head.input_px, head.input_px):
        crops = np.stack([cv2.resize(c, (head.input_px, head.input_px), interpolation=cv2.INTER_AREA) for c in crops])
    return network_input(crops, config=dataclasses.replace(config, crop_px=head.input_px,
                                                           crop_of_radius=head.crop_of_radius))


def _embed_views(x: np.ndarray, head: CounterHead, views: Sequence[int]) -> np.ndarray:
    """The trunk's embeddings (V, N, E) of network input ``x`` in each of ``views``.

    The rim's level and unit do not depend on the view: crops are normalised once, then turned.
    """
    batch = np.ascontiguousarray(np.concatenate([view_of(x, v) for v in views])) if tuple(views) != (0,) else x
    try:
        out = embed(batch, head)
    except CounterNetError as exc:
        raise SeedModelError(str(exc)) from exc
    return out.reshape(len(views), len(x), -1)


def embed_crops(crops_bgr: np.ndarray, head: CounterHead, *, config: CountConfig = CountConfig(),
                views: Sequence[int] = (0,)) -> np.ndarray:
    """The network trunk's embeddings (V, N, E) of canonical crops of any size (resized to the
    head's input), in each of ``views`` (see :func:`view_of`)."""
    return _embed_views(_head_input(crops_bgr, head, config), head, views)


def count_crops(crops_bgr: np.ndarray, *, model: SeedModel | None = None, config: CountConfig = CountConfig(),
                views: Sequence[int] | None = None) -> PitCounts:
    """Count the seeds in canonical crops (N, S, S, 3): log-likelihoods with the outlier share mixed in.

    ``views`` (default: the first ``config.views``) are averaged in log-likelihood; a pit
    read in the first view with probability ``config.sure_probability`` or more is not
    read in the others.
    """
    model = model or default_seed_model()
    head = model.counter
    views = tuple(views) if views is not None else views_for(config.views)
    x = _head_input(crops_bgr, head, config)
    ll = head.log_probabilities(_embed_views(x, head, views[:1])[0])
    unsure = np.flatnonzero(np.exp(ll.max(axis=1)) < config.sure_probability) if len(views) > 1 else np.zeros(0, int)
    if len(unsure):
        others = _embed_views(x[unsure], head, views[1:])
        mean = (ll[unsure] + sum(head.log_probabilities(e) for e in others)) / len(views)
        # A geometric mean of distributions: normalise again.
        top = mean.max(axis=1, keepdims=True)
        ll[unsure] = mean - top - np.log(np.exp(mean - top).sum(axis=1, keepdims=True))
    if model.outlier_share > 0:
        ll = np.log((1.0 - model.outlier_share) * np.exp(ll) + model.outlier_share / ll.shape[1])
    p = np.exp(ll)
    estimates = (p * np.arange(ll.shape[1])).sum(axis=1) / p.sum(axis=1)
    return PitCounts(ll, estimates)


def count_seeds(rectified_bgr: np.ndarray, grid: PitGrid, *, model: SeedModel | None = None,
                config: CountConfig = CountConfig(), camera_bgr: np.ndarray | None = None,
                board_from_image: np.ndarray | None = None, views: Sequence[int] | None = None) -> PitCounts:
    """Count the seeds in all 32 pits of a board.

    With the camera image and the homography that rectified it, pits are cut from the
    camera image (:func:`pit_crops_from_image`: sharper seeds, and what the network
    was trained on); else from the rectified board.
    """
    if camera_bgr is not None and board_from_image is not None:
        crops = pit_crops_from_image(camera_bgr, board_from_image, grid, config=config)
    else:
        crops = pit_crops(rectified_bgr, grid, config=config)
    return count_crops(crops, model=model, config=config, views=views)


# --------------------------------------------------------------------------- calibrating


def _nll(head: CounterHead, embedding: np.ndarray, counts: np.ndarray) -> float:
    lp = head.log_probabilities(embedding)
    return float(-lp[np.arange(len(counts)), counts].mean())


def fit_seed_model(crops_bgr: np.ndarray, counts: list[int] | np.ndarray, *, config: CountConfig = CountConfig(),
                   source: str = "examples", base: SeedModel | None = None) -> SeedModel:
    """Calibrate the counter to one rig (board, seeds, light) from labelled crops.

    The network's last layer is refitted to the crops (:func:`refit_head`, pulled
    towards ``base``'s, default the shipped model) - but only kept if, fitted on one
    half of the crops, it predicts the other half better than ``base`` does (both
    ways round). Fewer than ``min_refit_examples`` crops, or crops of fewer than
    ``min_refit_counts`` distinct counts (a known position such as the standard
    set-up: only 0s and 4s), keep ``base``: refitting on two counts was measured to
    make every other count worse. ``notes`` says what was decided and why.
    """
    labels = np.asarray(counts, dtype=np.float64)
    if len(labels) != len(crops_bgr) or len(labels) == 0:
        raise SeedModelError(f"need one count per crop, got {len(labels)} counts for {len(crops_bgr)} crops")
    if np.any(labels < 0) or np.any(labels > MAX_COUNT) or np.any(labels != np.round(labels)):
        raise SeedModelError(f"counts must be whole numbers in 0..{MAX_COUNT}")
    if not np.any(labels > 0):
        raise SeedModelError("need at least one labelled crop holding seeds")
    y = labels.astype(np.int64)
    reference = base or default_seed_model()
    head = reference.counter
    embedding = embed_crops(crops_bgr, head, config=config)[0]  # the crops as given (one view)
    read = head.log_probabilities(embedding).argmax(axis=1)
    notes: dict[str, object] = {"base_nll": round(_nll(head, embedding, y), 4),
                                "base_exact": round(float(np.mean(read == y)), 4)}
    distinct = len(set(y.tolist()))
    if len(y) < config.min_refit_examples or distinct < config.min_refit_counts:
        notes["refitted"] = False
        notes["why"] = (f"{len(y)} crops of {distinct} distinct counts: too few to refit "
                        f"(need {config.min_refit_examples} crops of {config.min_refit_counts} counts)")
        return dataclasses.replace(reference, source=source, examples=len(y), notes=notes)
    # Two-fold check on the rig's own crops: does a refitted head predict unseen crops better?
    order = np.random.default_rng(len(y)).permutation(len(y))
    halves = (order[: len(y) // 2], order[len(y) // 2 :])
    base_nll = refit_nll = 0.0
    for fit_idx, test_idx in (halves, halves[::-1]):
        refitted = refit_head(embedding[fit_idx], y[fit_idx], head, pull=config.head_pull)
        base_nll += _nll(head, embedding[test_idx], y[test_idx]) / 2
        refit_nll += _nll(refitted, embedding[test_idx], y[test_idx]) / 2
    notes.update(held_out_nll_base=round(base_nll, 4), held_out_nll_refit=round(refit_nll, 4))
    if not refit_nll < base_nll:
        notes["refitted"] = False
        notes["why"] = "a refitted head predicted held-out crops no better than the shipped one"
        return dataclasses.replace(reference, source=source, examples=len(y), notes=notes)
    notes["refitted"] = True
    return dataclasses.replace(reference, counter=refit_head(embedding, y, head, pull=config.head_pull),
                               source=source, examples=len(y), notes=notes)


@functools.cache
def default_seed_model() -> SeedModel:
    """The shipped model (``calibration/seed_model_default.json`` + ``seed_counter.onnx``), loaded once."""
    from omweso_cam.resources import calibration_dir

    return load_seed_model(str(calibration_dir() / "seed_model_default.json"))


# --------------------------------------------------------------------------- files

SEED_MODEL_FORMAT = "omweso-cam-seed-model"
SEED_MODEL_VERSION = 2  # 1: hand-made features (omweso-cam before the network); not readable


def save_seed_model(model: SeedModel, path: str) -> None:
    """Write a seed model as versioned JSON."""
    data = {"format": SEED_MODEL_FORMAT, "version": SEED_MODEL_VERSION, **model.to_dict()}
    # One line per key: the head's weights are thousands of numbers, not for reading.
    text = "{\n" + ",\n".join(f" {json.dumps(key)}: {json.dumps(value)}" for key, value in data.items()) + "\n}\n"
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(text)


def load_seed_model(path: str) -> SeedModel:
    """Read a seed model JSON (a bare one, or the ``seed_model`` of a calibration file)."""
    try:
        with open(path, encoding="utf-8-sig") as fh:  # -sig: a byte-order mark, as Windows editors save
            data = json.load(fh)
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise SeedModelError(f"cannot read seed model {path}: {exc}") from exc
    if isinstance(data, dict) and isinstance(data.get("seed_model"), dict):
        data = data["seed_model"]
    elif not isinstance(data, dict) or data.get("format") != SEED_MODEL_FORMAT:
        raise SeedModelError(f"{path} is not an omweso-cam seed model (format {SEED_MODEL_FORMAT!r})")
    elif data.get("version") == 1:
        raise SeedModelError(f"{path} is a feature model of an older omweso-cam; "
                             "make a new one with `omweso-cam calibrate seeds`")
    elif data.get("version") != SEED_MODEL_VERSION:
        raise SeedModelError(f"unsupported seed model version {data.get('version')!r}")
    return SeedModel.from_dict(data)
