"""Arguments shared by the sub-commands: the match database, and numbers argparse would take
that mean nothing.

``float("nan")``, ``inf`` and negative rates parse as floats, and ``int`` takes port 99999
(the socket layer then binds it modulo 65536); each type here refuses them with a usage
error (exit 2) naming the option, before anything runs. Standard library only, so every
command still starts fast.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path

#: The match database of `serve` and `records` when none is given.
DEFAULT_DB = "omweso-cam.sqlite3"


def add_db_option(parser: argparse.ArgumentParser) -> None:
    """``--db PATH``: the SQLite file of match records."""
    parser.add_argument("--db", default=DEFAULT_DB, metavar="PATH",
                        help=f"SQLite file of match records (default {DEFAULT_DB})")


def check_writable(path: str | Path) -> None:
    """Raise OSError unless a file can be written at ``path`` (its folder is made if missing).

    Asked before long work (tracking a film, evaluating a folder, fitting a calibration), so an
    output place that cannot be written stops the command before the work, not after it.
    """
    import tempfile
    from pathlib import Path

    target = Path(path)
    if target.is_dir():
        raise IsADirectoryError(21, "a folder, not a file", str(target))
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=target.parent, prefix=".omweso-cam-", suffix=".check"):
            pass
    except OSError as exc:  # named as the file the user gave, not the probe
        raise OSError(exc.errno, f"cannot be written ({exc.strerror or exc})", str(target)) from exc


def _number(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        return math.nan


def positive_number(text: str) -> float:
    """A finite number above zero (a frame rate, a replay speed)."""
    value = _number(text)
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"must be a positive number, got {text!r}")
    return value


def seconds(text: str) -> float:
    """A finite number of seconds, zero or more."""
    value = _number(text)
    if not (math.isfinite(value) and value >= 0):
        raise argparse.ArgumentTypeError(f"must be a number of seconds, zero or more, got {text!r}")
    return value


def port(text: str) -> int:
    """A TCP port, 0-65535 (0: any free port)."""
    try:
        value = int(text)
    except ValueError:
        value = -1
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"must be a TCP port from 0 to 65535, got {text!r}")
    return value


def whole_number(minimum: int, maximum: int | None = None) -> Callable[[str], int]:
    """A type for whole numbers of at least ``minimum`` and at most ``maximum`` (a count of images,
    plies, a limit, server threads)."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            value = minimum - 1
        if value < minimum or (maximum is not None and value > maximum):
            span = f"{minimum} or more" if maximum is None else f"{minimum} to {maximum}"
            raise argparse.ArgumentTypeError(f"must be a whole number, {span}, got {text!r}")
        return value

    return parse
