"""The entry point itself: what it sets up before any command runs."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from omweso_cam.cli import main

STANDARD = "4,4,4,4,4,4,4,4/0,0,0,0,0,0,0,0/0,0,0,0,0,0,0,0/4,4,4,4,4,4,4,4 S 0 0:0"


def test_opencvs_own_warnings_are_quiet_unless_the_user_asks_for_them(monkeypatch: pytest.MonkeyPatch,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.delenv("OPENCV_LOG_LEVEL", raising=False)
    assert main(["rules", "moves", STANDARD]) == 0
    assert os.environ["OPENCV_LOG_LEVEL"] == "ERROR"
    monkeypatch.setenv("OPENCV_LOG_LEVEL", "DEBUG")
    assert main(["rules", "moves", STANDARD]) == 0
    assert os.environ["OPENCV_LOG_LEVEL"] == "DEBUG"
    capsys.readouterr()


def test_ffmpegs_own_errors_are_quiet_too(tmp_path: Path) -> None:
    # FFmpeg logs through OpenCV, once per process: only a fresh process shows what a user sees.
    (tmp_path / "empty.mp4").write_bytes(b"")
    done = subprocess.run([sys.executable, "-m", "omweso_cam", "track", str(tmp_path / "empty.mp4"),
                           "--out", str(tmp_path / "r.json"), "--no-progress"],
                          capture_output=True, text=True, timeout=120, check=False,
                          env={k: v for k, v in os.environ.items() if not k.startswith("OPENCV_")})
    assert done.returncode == 2 and "cannot open video" in done.stderr
    assert "moov atom" not in done.stderr, done.stderr
