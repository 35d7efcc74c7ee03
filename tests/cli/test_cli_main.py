"""The entry point itself: what it sets up before any command runs."""

from __future__ import annotations

import os

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
