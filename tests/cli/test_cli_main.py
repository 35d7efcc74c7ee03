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


REPO = Path(__file__).resolve().parents[2]


def test_an_output_place_that_cannot_be_written_is_said_before_the_work(tmp_path: Path,
                                                                        capsys: pytest.CaptureFixture[str]) -> None:
    import cv2
    import numpy as np

    from omweso_cam.rules import Position
    from omweso_cam.store import MatchRepository

    (tmp_path / "a_file").write_text("not a folder")
    nowhere = tmp_path / "a_file" / "out.json"  # under a file: no one can write there, root neither
    frames = tmp_path / "frames"
    frames.mkdir()
    cv2.imwrite(str(frames / "0.png"), np.zeros((48, 64, 3), np.uint8))
    cv2.imwrite(str(tmp_path / "crop.png"), np.zeros((48, 48, 3), np.uint8))
    (tmp_path / "crops.csv").write_text("path,count\ncrop.png,1\n")
    with MatchRepository(tmp_path / "m.sqlite3") as repo:
        game = repo.start_game(repo.create_match(south="A", north="B"), number=1, rules="seed",
                               initial=Position.standard().notation())
    commands = [
        ["track", str(frames), "--out", str(nowhere), "--no-progress"],
        ["evaluate", str(REPO / "sample_images" / "stills"), "--out", str(nowhere), "--no-progress"],
        ["calibrate", "corners", str(frames / "0.png"), "--out", str(nowhere)],
        ["calibrate", "intrinsics", str(frames / "0.png"), "--out", str(nowhere)],
        ["calibrate", "seeds", "--examples", str(tmp_path / "crops.csv"), "--out", str(nowhere)],
        ["records", "export", str(game), "--db", str(tmp_path / "m.sqlite3"), "--out", str(nowhere)],
        ["render", "stills", "--out", str(nowhere), "--count", "1"],
    ]
    for args in commands:
        assert main(args) == 2, args
        err = capsys.readouterr().err
        assert str(nowhere) in err and "Traceback" not in err, (args, err)
