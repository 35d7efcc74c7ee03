"""Camera intrinsics: chessboard calibration on synthetic views, undistortion, the CLI command."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import pytest

from omweso_cam.cli import main
from omweso_cam.vision.calibration import Calibration
from omweso_cam.vision.intrinsics import IntrinsicsError, calibrate_chessboard, undistort


def _views() -> list[np.ndarray]:
    square = 40
    board = np.full((8 * square, 11 * square), 255, np.uint8)  # 10x7 squares + margin: 9x6 inner corners
    for r in range(7):
        for c in range(10):
            if (r + c) % 2 == 0:
                y, x = (r + 0.5) * square, (c + 0.5) * square
                board[int(y) : int(y) + square, int(x) : int(x) + square] = 0
    h, w = board.shape
    # Views of the flat board through one pinhole camera (f = 600 px), in four poses.
    k = np.array([[600.0, 0, 320], [0, 600.0, 240], [0, 0, 1]])
    to_metres = np.array([[1 / w, 0, -0.5], [0, 1 / w, -0.5 * h / w], [0, 0, 1]])
    views = []
    for ax, ay, az in ((0.3, 0.0, 0.1), (-0.25, 0.3, -0.1), (0.1, -0.35, 0.2), (0.35, 0.3, 0.0)):
        rot, _ = cv2.Rodrigues(np.array([ax, ay, az]))
        pose = np.column_stack([rot[:, 0], rot[:, 1], [0.0, 0.0, 1.6]])
        m = k @ pose @ to_metres
        views.append(cv2.cvtColor(cv2.warpPerspective(board, m / m[2, 2], (640, 480), borderValue=255),
                                  cv2.COLOR_GRAY2BGR))
    return views


def test_calibrates_from_views_of_a_flat_chessboard() -> None:
    intrinsics = calibrate_chessboard(_views(), (9, 6))
    assert intrinsics.image_size == (640, 480)
    assert intrinsics.rms_error_px < 1.0
    assert abs(intrinsics.camera_matrix[0][0] - 600) < 30  # the focal length the views were made with
    assert undistort(_views()[0], intrinsics).shape == (480, 640, 3)


def test_too_few_views_is_a_clear_error() -> None:
    with pytest.raises(IntrinsicsError, match="found in"):
        calibrate_chessboard([np.full((480, 640, 3), 255, np.uint8)] * 3, (9, 6))


def test_cli_writes_intrinsics_into_a_calibration(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    paths = []
    for i, view in enumerate(_views()):
        path = tmp_path / f"view{i}.png"
        cv2.imwrite(str(path), view)
        paths.append(str(path))
    out = tmp_path / "cam.json"
    assert main(["calibrate", "intrinsics", *paths, "--pattern", "9x6", "--out", str(out)]) == 0
    data = json.loads(out.read_text())
    assert data["intrinsics"]["image_size"] == [640, 480]
    assert Calibration.load(out).intrinsics is not None
    assert main(["calibrate", "intrinsics", *paths, "--pattern", "nine", "--out", str(out)]) == 2


@pytest.mark.parametrize(("pattern", "square_mm", "message"),
                         [((2, 6), 25.0, "at least 3x3"), ((0, 0), 25.0, "at least 3x3"),
                          ((9, 6), 0.0, "positive length"), ((9, 6), -25.0, "positive length"),
                          ((9, 6), float("nan"), "positive length")])
def test_a_pattern_or_square_that_cannot_be_is_refused(pattern: tuple[int, int], square_mm: float,
                                                       message: str) -> None:
    # OpenCV raised its own error for a pattern under 3 corners a side (a traceback from the command).
    with pytest.raises(IntrinsicsError, match=message):
        calibrate_chessboard(_views()[:1], pattern, square_mm=square_mm)


def test_the_command_says_what_is_wrong_with_a_tiny_pattern(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "view.png"
    cv2.imwrite(str(path), _views()[0])
    assert main(["calibrate", "intrinsics", str(path), "--pattern", "2x2", "--out", str(tmp_path / "c.json")]) == 2
    assert "at least 3x3" in capsys.readouterr().err
    assert not (tmp_path / "c.json").exists()
