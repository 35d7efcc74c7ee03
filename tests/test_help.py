"""Every command's and every benchmark's ``--help`` prints (argparse formats help lazily, so a
stray ``%`` in a help string only fails when someone asks for help)."""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

import pytest

from omweso_cam.cli import build_parser

BENCHMARKS = sorted((Path(__file__).resolve().parents[1] / "benchmarks").glob("*.py"))


def _parsers(parser: argparse.ArgumentParser) -> list[argparse.ArgumentParser]:
    """``parser`` and every sub-command's parser under it."""
    found = [parser]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in dict.fromkeys(action.choices.values()):
                found += _parsers(sub)
    return found


def test_every_command_formats_its_help() -> None:
    parsers = _parsers(build_parser())
    assert len(parsers) > 10
    for parser in parsers:
        assert parser.format_help().startswith("usage:"), parser.prog


def test_every_argument_says_what_it_is_for() -> None:
    unexplained = [f"{parser.prog} {'/'.join(action.option_strings) or action.dest}"
                   for parser in _parsers(build_parser()) for action in parser._actions
                   if not isinstance(action, (argparse._HelpAction, argparse._SubParsersAction, argparse._VersionAction))
                   and not action.help]
    assert not unexplained, unexplained


@pytest.mark.parametrize("script", BENCHMARKS, ids=lambda path: path.stem)
def test_benchmark_prints_its_help(script: Path) -> None:
    done = subprocess.run([sys.executable, str(script), "--help"], capture_output=True, text=True,
                          timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.startswith("usage:")
