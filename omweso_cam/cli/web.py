"""Sub-commands of `omweso-cam` owned by the web feature (placeholder until it lands)."""

from __future__ import annotations

import argparse
from typing import Any


def register(subparsers: Any) -> None:
    del subparsers  # nothing registered yet


def _unused(args: argparse.Namespace) -> int:  # pragma: no cover
    return 0
