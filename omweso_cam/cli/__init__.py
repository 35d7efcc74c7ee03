"""`omweso-cam` entry point: one sub-command module per feature, imported lazily.

Each module in this package exposes ``register(subparsers)``, which adds its
sub-commands and sets ``func`` on them; ``func(args) -> int`` is the exit code.
Heavy imports (OpenCV, Flask) happen inside ``func`` so `omweso-cam rules ...`
starts fast and nothing runs at import time.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence

from omweso_cam import __version__

#: Sub-command modules, in the order their commands appear in ``--help``.
COMMAND_MODULES = ("web", "vision", "track", "rules", "synth")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="omweso-cam",
        description="Camera companion for Omweso: read the board, follow the game, referee it.",
    )
    parser.add_argument("--version", action="version", version=f"omweso-cam {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES:
        module = importlib.import_module(f"omweso_cam.cli.{name}")
        module.register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help(sys.stderr)
        return 2
    # OpenCV's own warnings ("[ WARN:0@0.007] global cap_v4l.cpp:914 ... can't open camera by
    # index") repeat what the command says in its own words; its errors still show. Read when cv2
    # is first imported (inside the commands); a value set by the user wins.
    os.environ.setdefault("OPENCV_LOG_LEVEL", "ERROR")
    # Likewise FFmpeg's, through OpenCV ("[mov,mp4,...] moov atom not found" before "cannot open
    # video ..."; damaged frames the sources report themselves): fatal errors only (AV_LOG_FATAL).
    os.environ.setdefault("OPENCV_FFMPEG_LOGLEVEL", "8")
    try:
        return int(args.func(args) or 0)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0
    except OSError as exc:  # a place that cannot be read or written: said in one line, not a traceback
        where = f"{exc.filename}: " if exc.filename else ""
        print(f"omweso-cam {args.command}: {where}{exc.strerror or exc}", file=sys.stderr)
        return 2
