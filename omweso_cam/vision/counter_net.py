"""The seed-count network: a small CNN reads one pit crop, a softmax gives P(count) for 0..64.

Two parts, kept apart on purpose:

* the *trunk* (convolutions, in ``calibration/seed_counter.onnx``) turns a pit crop
  (:func:`omweso_cam.vision.count.network_input`: the crop measured against its own
  rim of bare wood) into an embedding. It is stored in 8-bit integers since 2026-12-04
  (``benchmarks/quantise_counter.py``: 0.11 instead of 0.31 ms a crop on one core of the
  development machine, counts as the float network's on the crop and film checks of
  docs/vision.md). ONNX Runtime runs it on one thread, OpenCV's dnn module where ONNX
  Runtime is not installed (slower, and rounding its integers its own way: embeddings
  differ by up to 0.02, the counts they give do not); the reader needs no deep-learning
  framework;
* the *head* (:class:`CounterHead`, plain JSON) is one linear layer from the
  embedding to log-probabilities over counts. It is what a rig calibrates:
  :func:`refit_head` fits it to labelled crops of that rig's board and seeds,
  pulled towards the shipped head so a few examples cannot unlearn the rest.

Both are trained by ``benchmarks/train_counter.py`` on rendered boards.
"""

from __future__ import annotations

import hashlib
import importlib.util
import threading
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

from omweso_cam.observation import MAX_COUNT

COUNTS = MAX_COUNT + 1


class CounterNetError(ValueError):
    """The seed-count network's files are missing or inconsistent."""


@dataclass(frozen=True, eq=False)
class CounterHead:
    """Linear layer embedding -> logits over counts 0..64 (temperature already folded in)."""

    weights: np.ndarray  # (65, E)
    bias: np.ndarray  # (65,)
    trunk: str = "seed_counter.onnx"  # file name, looked up in the calibration folder unless absolute
    input_px: int = 48
    crop_of_radius: float = 1.25
    trunk_sha256: str | None = None  # the trunk file this head was fitted to (checked when it is loaded)

    def __post_init__(self) -> None:
        w = np.asarray(self.weights, np.float64)
        b = np.asarray(self.bias, np.float64)
        if w.ndim != 2 or w.shape[0] != COUNTS or b.shape != (COUNTS,):
            raise CounterNetError(f"head must map an embedding to {COUNTS} counts, got weights {w.shape}, bias {b.shape}")
        if not (np.all(np.isfinite(w)) and np.all(np.isfinite(b))):
            raise CounterNetError("head weights must be finite")
        object.__setattr__(self, "weights", w)
        object.__setattr__(self, "bias", b)

    @property
    def embedding_size(self) -> int:
        return int(self.weights.shape[1])

    def log_probabilities(self, embedding: np.ndarray) -> np.ndarray:
        """(N, E) embeddings -> (N, 65) normalised log-probabilities."""
        z = np.asarray(embedding, np.float64) @ self.weights.T + self.bias
        z -= z.max(axis=1, keepdims=True)
        return np.asarray(z - np.log(np.exp(z).sum(axis=1, keepdims=True)))

    def to_dict(self) -> dict[str, object]:
        return {"trunk": self.trunk, "trunk_sha256": self.trunk_sha256, "input_px": self.input_px,
                "crop_of_radius": self.crop_of_radius,
                "weights": [[round(float(v), 6) for v in row] for row in self.weights],
                "bias": [round(float(v), 6) for v in self.bias]}

    @classmethod
    def from_dict(cls, data: dict[str, object]) -> CounterHead:
        try:
            return cls(np.asarray(data["weights"], np.float64), np.asarray(data["bias"], np.float64),
                       trunk=str(data.get("trunk", "seed_counter.onnx")),
                       input_px=int(data.get("input_px", 48)),  # type: ignore[call-overload]
                       crop_of_radius=float(data.get("crop_of_radius", 1.25)),  # type: ignore[arg-type]
                       trunk_sha256=None if data.get("trunk_sha256") is None else str(data["trunk_sha256"]))
        except CounterNetError:
            raise
        except (KeyError, TypeError, ValueError) as exc:
            raise CounterNetError(f"bad seed counter head: {exc}") from exc


class Trunk:
    """The trunk network loaded by one engine: ``onnxruntime`` (default when installed) or ``opencv``."""

    def __init__(self, path: str, engine: str | None = None) -> None:
        if engine is None:
            engine = "onnxruntime" if importlib.util.find_spec("onnxruntime") is not None else "opencv"
        if engine not in ("onnxruntime", "opencv"):
            raise ValueError(f"unknown network engine {engine!r}")
        self.engine = engine
        self._lock = threading.Lock()  # one caller at a time (OpenCV's nets are not thread-safe)
        try:
            if engine == "onnxruntime":
                import onnxruntime

                options = onnxruntime.SessionOptions()
                options.intra_op_num_threads = 1  # the reading's time budget is one core's
                options.inter_op_num_threads = 1
                self._session = onnxruntime.InferenceSession(path, options, providers=["CPUExecutionProvider"])
                self._input = self._session.get_inputs()[0].name
            else:
                self._net = cv2.dnn.readNetFromONNX(path)
        except Exception as exc:  # cv2.error, and onnxruntime's own types (they derive from Exception only)
            raise CounterNetError(f"cannot load the seed counter network {path}: {exc}") from exc

    def run(self, batch: np.ndarray) -> np.ndarray:
        """Embeddings (N, E) float64 of a batch (N, 3, S, S)."""
        x = np.ascontiguousarray(batch, np.float32)
        with self._lock:
            if self.engine == "onnxruntime":
                out = self._session.run(None, {self._input: x})[0]
            else:
                self._net.setInput(x)
                out = self._net.forward()
        return np.asarray(out, np.float64).reshape(len(batch), -1)


_TRUNKS: dict[str, tuple[Trunk, str]] = {}  # path -> (trunk, file SHA-256)
_TRUNKS_LOCK = threading.Lock()


def trunk_path(head: CounterHead) -> Path:
    """Where the head's trunk lives: an absolute path, else the package's calibration folder."""
    path = Path(head.trunk)
    if path.is_absolute():
        return path
    from omweso_cam.resources import calibration_dir

    return calibration_dir() / path


def trunk_digest(path: str | Path) -> str:
    """The SHA-256 (hex) of a trunk file: what a head's ``trunk_sha256`` names."""
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def embed(network_input: np.ndarray, head: CounterHead) -> np.ndarray:
    """Run the trunk on a batch (N, 3, S, S) float32; one loaded trunk per file."""
    path = str(trunk_path(head))
    with _TRUNKS_LOCK:
        if path not in _TRUNKS:
            try:
                digest = trunk_digest(path)
            except OSError as exc:
                raise CounterNetError(f"cannot load the seed counter network {path}: {exc}") from exc
            _TRUNKS[path] = (Trunk(path), digest)
        trunk, digest = _TRUNKS[path]
    if head.trunk_sha256 is not None and head.trunk_sha256 != digest:
        raise CounterNetError(f"this seed model was fitted to another version of the counting network than "
                              f"{path}; make it again with `omweso-cam calibrate seeds`")
    if len(network_input) == 0:
        return np.zeros((0, head.embedding_size))
    out = trunk.run(network_input)
    if out.shape[1] != head.embedding_size:
        raise CounterNetError(f"trunk {path} gives {out.shape[1]} numbers per crop, the head reads {head.embedding_size}")
    return out


def refit_head(embedding: np.ndarray, counts: np.ndarray, base: CounterHead, *, pull: float = 1.0,
               steps: int = 300, learning_rate: float = 0.05) -> CounterHead:
    """Fit the head to labelled embeddings, penalised by ``pull`` * ||head - base||^2 (per example).

    Gradient descent (Adam) on the mean negative log-likelihood; the pull keeps counts
    the examples never show as the shipped head has them.
    """
    x = np.asarray(embedding, np.float64)
    y = np.asarray(counts, np.int64)
    if x.ndim != 2 or len(x) != len(y) or len(y) == 0:
        raise CounterNetError(f"need one embedding per count, got {x.shape} for {len(y)} counts")
    w, b = base.weights.copy(), base.bias.copy()
    onehot = np.zeros((len(y), COUNTS))
    onehot[np.arange(len(y)), y] = 1.0
    params = [w, b]
    m = [np.zeros_like(p) for p in params]
    v = [np.zeros_like(p) for p in params]
    for t in range(1, steps + 1):
        z = x @ w.T + b
        z -= z.max(axis=1, keepdims=True)
        p = np.exp(z)
        p /= p.sum(axis=1, keepdims=True)
        g = (p - onehot) / len(y)
        grads = [g.T @ x + 2 * pull * (w - base.weights) / len(y), g.sum(axis=0) + 2 * pull * (b - base.bias) / len(y)]
        for i, gr in enumerate(grads):
            m[i] = 0.9 * m[i] + 0.1 * gr
            v[i] = 0.999 * v[i] + 0.001 * gr * gr
            params[i] -= learning_rate * (m[i] / (1 - 0.9**t)) / (np.sqrt(v[i] / (1 - 0.999**t)) + 1e-8)
    return CounterHead(w, b, trunk=base.trunk, input_px=base.input_px, crop_of_radius=base.crop_of_radius,
                       trunk_sha256=base.trunk_sha256)
