"""Calibration: the rig's board quad, homography, pit grid and seed appearance as versioned JSON.

Written by ``omweso-cam calibrate``, read by the pipeline. The file is data, never
pickle: ``{"format": "omweso-cam-calibration", "version": 3, "created_at", "image_size",
"corners_px", "board_from_image", "rectified_size", "pit_grid", "seed_model",
"intrinsics", "method", "reference_score"}``. Older versions are migrated on load,
anything malformed raises :class:`CalibrationError` naming the field.

The drift check (:func:`check_drift`) tells whether the board still lies where
the calibration says, so the pipeline can re-localise when it has moved.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from omweso_cam.vision.count import SeedModel, SeedModelError
from omweso_cam.vision.grid import GridError, PitGrid

FORMAT = "omweso-cam-calibration"
VERSION = 3


class CalibrationError(ValueError):
    """A calibration file is missing, unreadable, of another format or malformed."""


@dataclass(frozen=True)
class Intrinsics:
    """Camera matrix and distortion coefficients (OpenCV's model) for a given image size."""

    camera_matrix: tuple[tuple[float, ...], ...]
    dist_coeffs: tuple[float, ...]
    image_size: tuple[int, int]
    rms_error_px: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return {"camera_matrix": [list(r) for r in self.camera_matrix], "dist_coeffs": list(self.dist_coeffs),
                "image_size": list(self.image_size), "rms_error_px": self.rms_error_px}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Intrinsics:
        try:
            matrix = tuple(tuple(float(v) for v in row) for row in data["camera_matrix"])
            coeffs = tuple(float(v) for v in data["dist_coeffs"])
            w, h = data["image_size"]
            if len(matrix) != 3 or any(len(r) != 3 for r in matrix) or len(coeffs) < 4:
                raise ValueError("camera_matrix must be 3x3 and dist_coeffs at least 4 numbers")
            return cls(matrix, coeffs, (int(w), int(h)), float(data.get("rms_error_px", 0.0)))
        except (KeyError, TypeError, ValueError) as exc:
            raise CalibrationError(f"bad intrinsics: {exc}") from exc


@dataclass(frozen=True, eq=False)
class Calibration:
    """Everything the pipeline may know about a rig before it sees a frame."""

    corners_px: np.ndarray  # (4, 2) TL, TR, BR, BL
    image_size: tuple[int, int]  # (width, height) the corners refer to
    rectified_size: tuple[int, int] | None = None  # None: from the board's measured proportions
    pit_grid: PitGrid | None = None
    seed_model: SeedModel | None = None
    intrinsics: Intrinsics | None = None
    method: str = "manual"
    reference_score: float | None = None  # pit-pattern score when calibrated, for the drift check
    created_at: str = field(default_factory=lambda: _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"))

    def __post_init__(self) -> None:
        corners = np.asarray(self.corners_px, dtype=np.float64)
        if corners.shape != (4, 2) or not np.all(np.isfinite(corners)):
            raise CalibrationError(f"corners_px: expected 4 finite (x, y) points, got shape {corners.shape}")
        object.__setattr__(self, "corners_px", corners)

    def rectified_size_px(self) -> tuple[int, int]:
        """Size of the top-down image: as calibrated, else from the board's proportions."""
        if self.rectified_size is not None:
            return self.rectified_size
        from omweso_cam.vision.rectify import RectifyConfig, board_aspect

        return RectifyConfig().size_px(board_aspect(self.corners_px, self.image_size))

    @property
    def board_from_image(self) -> np.ndarray:
        from omweso_cam.vision.rectify import board_from_image

        return board_from_image(self.corners_px, self.rectified_size_px())

    def corners_for(self, image_size: tuple[int, int]) -> np.ndarray:
        """Corners scaled to a frame of another resolution (same camera, same framing)."""
        sx = image_size[0] / self.image_size[0]
        sy = image_size[1] / self.image_size[1]
        return self.corners_px * [sx, sy]

    # ------------------------------------------------------------------ JSON

    def to_dict(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "version": VERSION,
            "created_at": self.created_at,
            "method": self.method,
            "image_size": list(self.image_size),
            "corners_px": [[round(float(x), 3), round(float(y), 3)] for x, y in self.corners_px],
            "board_from_image": [[float(v) for v in row] for row in self.board_from_image],
            "rectified_size": list(self.rectified_size_px()),
            "pit_grid": self.pit_grid.to_dict() if self.pit_grid else None,
            "seed_model": self.seed_model.to_dict() if self.seed_model else None,
            "intrinsics": self.intrinsics.to_dict() if self.intrinsics else None,
            "reference_score": self.reference_score,
        }

    def save(self, path: str | os.PathLike[str]) -> Path:
        """Write the JSON atomically (a crash never leaves half a file)."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=path.name, suffix=".tmp", dir=path.parent)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(self.to_dict(), fh, indent=2)
            fh.write("\n")
        os.replace(tmp, path)
        return path

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> Calibration:
        try:
            text = Path(path).read_text(encoding="utf-8-sig")  # -sig: a byte-order mark, as Windows editors save
        except (OSError, UnicodeDecodeError) as exc:
            raise CalibrationError(f"cannot read calibration {path}: {exc}") from exc
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise CalibrationError(f"calibration {path} is not JSON: {exc}") from exc
        return cls.from_dict(data)

    @classmethod
    def from_dict(cls, data: Any) -> Calibration:
        data = migrate(data)
        try:
            w, h = (int(v) for v in data["image_size"])
            rw, rh = (int(v) for v in data.get("rectified_size") or self_size(data))
            if min(w, h, rw, rh) <= 0:
                raise CalibrationError("image_size and rectified_size must be positive")
            corners = np.asarray(data["corners_px"], dtype=np.float64)
            grid = PitGrid.from_dict(data["pit_grid"]) if data.get("pit_grid") else None
            model = SeedModel.from_dict(data["seed_model"]) if data.get("seed_model") else None
            intr = Intrinsics.from_dict(data["intrinsics"]) if data.get("intrinsics") else None
            ref = data.get("reference_score")
            return cls(corners, (w, h), (rw, rh), grid, model, intr, str(data.get("method", "manual")),
                       None if ref is None else float(ref), str(data.get("created_at", "")))
        except CalibrationError:
            raise
        except (KeyError, TypeError, ValueError, GridError, SeedModelError) as exc:
            raise CalibrationError(f"malformed calibration: {type(exc).__name__}: {exc}") from exc


def self_size(data: dict[str, Any]) -> tuple[int, int]:
    """Rectified size of a calibration dict that does not store one (version 1)."""
    from omweso_cam.vision.rectify import RectifyConfig, board_aspect

    w, h = (int(v) for v in data["image_size"])
    return RectifyConfig().size_px(board_aspect(np.asarray(data["corners_px"], np.float64), (w, h)))


def migrate(data: Any) -> dict[str, Any]:
    """Bring a calibration dict of any known version to the current one (a new dict).

    Version 1 (the first layout) had only ``corners`` and ``image_size``, and
    kept the seed model under ``seeds``. Versions 1 and 2 could hold a seed model of
    hand-made features, which this omweso-cam no longer reads (it counts with a
    network): such a model is dropped, so the rig keeps its corners and grid and
    counts with the shipped network until ``calibrate seeds`` makes it a new one.
    """
    if not isinstance(data, dict):
        raise CalibrationError(f"calibration must be a JSON object, got {type(data).__name__}")
    if data.get("format") != FORMAT:
        raise CalibrationError(f"not an omweso-cam calibration (format {data.get('format')!r}, expected {FORMAT!r})")
    version = data.get("version")
    if not isinstance(version, int) or version < 1:
        raise CalibrationError(f"bad calibration version {version!r}")
    if version > VERSION:
        raise CalibrationError(f"calibration version {version} is newer than this omweso-cam ({VERSION})")
    data = {str(key): value for key, value in data.items()}
    if version == 1:
        if "corners" not in data:
            raise CalibrationError("version 1 calibration without 'corners'")
        data["corners_px"] = data.pop("corners")
        data["seed_model"] = data.pop("seeds", None)
        data.setdefault("method", "manual")
        data["version"] = 2
    if data["version"] == 2:
        model = data.get("seed_model")
        if isinstance(model, dict) and "counter" not in model:
            data["seed_model"] = None
        data["version"] = 3
    for key in ("corners_px", "image_size"):
        if key not in data:
            raise CalibrationError(f"calibration lacks {key!r}")
    return {str(key): value for key, value in data.items()}


# --------------------------------------------------------------------------- drift


@dataclass(frozen=True)
class DriftConfig:
    """When to call the board moved.

    The pit pattern at the calibrated corners is compared with the score measured when the
    rig was calibrated (``min_score_ratio`` of it; :func:`reference_score`, measured by ``calibrate``
    and by the dashboard's calibration page, which until 2026-12-05 stored none); only a calibration
    without that score (a session's lock, an older file) is held to the absolute ``min_score``. Held to both, a
    board of weak contrast (scoring 0.25-0.5 at its own calibration, 3 of the 56 sample
    stills and some of track_bench's films) was "moved" on the very frame it was calibrated
    on, and every frame after was searched for afresh.

    A board the check calls moved but that is found again within ``same_place`` of the
    board's diagonal (each corner) of where it was calibrated has not moved: the pattern
    score of one frame is noisy (0.15-0.36 on the still frames of one such board).
    """

    min_score_ratio: float = 0.55  # of the score measured at calibration time
    min_score: float = 0.5  # without a reference score (grid.lattice_score units)
    same_place: float = 0.02  # found again this close (of the board diagonal): not moved


@dataclass(frozen=True)
class Drift:
    moved: bool
    score: float
    reference: float | None


def reference_score(image_bgr: np.ndarray, corners_px: np.ndarray) -> float:
    """The pit-pattern score of the board at ``corners_px`` in the frame a calibration is made on:
    what :func:`check_drift` later compares each frame with (rounded, as stored)."""
    from omweso_cam.vision.grid import lattice_score

    return round(lattice_score(image_bgr, np.asarray(corners_px, np.float64)), 3)


def check_drift(image_bgr: np.ndarray, calibration: Calibration, *, config: DriftConfig = DriftConfig()) -> Drift:
    """Does the board still show its pit pattern at the calibrated corners?"""
    from omweso_cam.vision.grid import lattice_score

    h, w = image_bgr.shape[:2]
    score = lattice_score(image_bgr, calibration.corners_for((w, h)))
    if calibration.reference_score is None:
        limit = config.min_score
    else:
        limit = config.min_score_ratio * calibration.reference_score
    return Drift(score < limit, score, calibration.reference_score)

