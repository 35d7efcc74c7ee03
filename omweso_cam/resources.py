"""Where shipped data lives: `web/`, `calibration/` and the bundled sample game.

In a source checkout (and an editable install) they are the top-level folders of
the repository; in a wheel they are copied under the package as ``_web`` etc.
"""

from __future__ import annotations

from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent
_REPO = _PACKAGE.parent


def _find(installed: str, source: str) -> Path:
    for candidate in (_PACKAGE / installed, _REPO / source):
        if candidate.exists():
            return candidate
    raise FileNotFoundError(f"shipped data folder {source!r} not found (looked in {_PACKAGE} and {_REPO})")


def web_dir() -> Path:
    """Folder holding the dashboard's ``templates/`` and ``static/``."""
    return _find("_web", "web")


def calibration_dir() -> Path:
    """Folder of board profiles, marker sheet and saved calibrations."""
    return _find("_calibration", "calibration")


def samples_dir() -> Path:
    """Folder of bundled sample images and game sequences."""
    return _find("_samples", "sample_images")
