from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest

from omweso_cam.vision.frames import (
    CORRUPT,
    DEFAULT_FOLDER_FPS,
    DISCONNECTED,
    ENDED,
    ENDED_EARLY,
    FRAME,
    RECONNECTED,
    STRAY,
    FrameSource,
    SourceConfig,
    SourceError,
    _SharedCapture,
    open_source,
)


def _image(value: int) -> np.ndarray:
    return np.full((24, 32, 3), value, dtype=np.uint8)


def test_folder_in_natural_order_with_stray_and_corrupt_files_reported(tmp_path: Path) -> None:
    for i in (0, 1, 2, 10):
        cv2.imwrite(str(tmp_path / f"frame_{i}.png"), _image(i * 10))
    (tmp_path / "frame_3.png").write_bytes(b"not a png at all")
    (tmp_path / "notes.txt").write_text("hello")
    (tmp_path / "truth.json").write_text("{}")  # a side-car, not stray
    source = open_source(tmp_path, config=SourceConfig(folder_fps=5.0))
    frames = list(source)
    assert source.len_hint == 5
    images = [f for f in frames if f.kind == FRAME]
    assert [f.name for f in images] == ["frame_0.png", "frame_1.png", "frame_2.png", "frame_10.png"]
    assert [int(f.image[0, 0, 0]) for f in images] == [0, 10, 20, 100]  # type: ignore[index]
    assert [f.index for f in images] == [0, 1, 2, 4]
    assert images[-1].timestamp_s == pytest.approx(0.8)
    corrupt = [f for f in frames if f.kind == CORRUPT]
    assert [(f.index, f.name) for f in corrupt] == [(3, "frame_3.png")]
    stray = [f for f in frames if f.kind == STRAY]
    assert [f.name for f in stray] == ["notes.txt"] and stray[0].image is None


@pytest.mark.parametrize(
    ("sidecar", "given", "fps", "assumed"),
    [
        (None, None, DEFAULT_FOLDER_FPS, True),
        ('{"format": "omweso-cam-sequence", "fps": 4}', None, 4.0, False),  # as `omweso-cam render` writes it
        ('{"fps": 4}', 6.0, 6.0, False),  # --fps wins
        ('{"fps": -4}', None, DEFAULT_FOLDER_FPS, True),
        ('{"fps": "4"}', None, DEFAULT_FOLDER_FPS, True),
        ('{"fps": true}', None, DEFAULT_FOLDER_FPS, True),
        ("[4]", None, DEFAULT_FOLDER_FPS, True),
        ("not json {", None, DEFAULT_FOLDER_FPS, True),
    ],
)
def test_a_folder_runs_at_the_rate_given_else_its_sidecars_else_an_assumed_one(
        tmp_path: Path, sidecar: str | None, given: float | None, fps: float, assumed: bool) -> None:
    cv2.imwrite(str(tmp_path / "0.png"), _image(0))
    cv2.imwrite(str(tmp_path / "1.png"), _image(1))
    if sidecar is not None:
        (tmp_path / "truth.json").write_text(sidecar)
    source = open_source(tmp_path, config=SourceConfig(folder_fps=given))
    assert (source.fps, source.fps_assumed) == (fps, assumed)
    assert [f.timestamp_s for f in source] == [0.0, pytest.approx(1.0 / fps)]


@pytest.mark.parametrize("fps", [0.0, -4.0, float("nan"), float("inf")])
def test_a_folder_refuses_a_rate_that_is_no_rate(tmp_path: Path, fps: float) -> None:
    cv2.imwrite(str(tmp_path / "0.png"), _image(0))
    with pytest.raises(SourceError, match="positive number of frames a second"):
        open_source(tmp_path, config=SourceConfig(folder_fps=fps))


class FakeTime:
    """A clock and a sleep for a paced source: sleeping moves the clock; ``slept`` records it."""

    def __init__(self) -> None:
        self.now = 100.0
        self.slept: list[float] = []

    def clock(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.slept.append(round(seconds, 6))
        self.now += seconds


def _paced_folder(folder: Path, frames: int, time: FakeTime) -> FrameSource:
    for i in range(frames):
        cv2.imwrite(str(folder / f"{i}.png"), _image(i))
    return open_source(folder, config=SourceConfig(folder_fps=4.0, realtime=True), clock=time.clock, sleep=time.sleep)


def test_realtime_pacing_uses_the_injected_clock(tmp_path: Path) -> None:
    time = FakeTime()
    assert len(list(_paced_folder(tmp_path, 3, time))) == 3
    assert time.slept == [0.25, 0.25]


def test_a_held_recording_restarts_its_clock_instead_of_rushing(tmp_path: Path) -> None:
    time = FakeTime()
    source = _paced_folder(tmp_path, 4, time)
    assert source.recorded
    frames = iter(source)
    next(frames)
    time.now += 30.0  # held on its first frame (the dashboard waited for a match)
    source.restart_clock()
    assert [frame.index for frame in frames] == [1, 2, 3]
    assert time.slept == [0.25, 0.25]  # paced from where it resumed, not three frames at once


def test_video_file_round_trip(tmp_path: Path) -> None:
    path = tmp_path / "clip.avi"
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"MJPG"), 10.0, (32, 24))
    for i in range(6):
        writer.write(_image(40 * i))
    writer.release()
    frames = list(open_source(path))
    assert [f.kind for f in frames] == [FRAME] * 6
    assert [f.index for f in frames] == list(range(6))
    assert frames[3].timestamp_s == pytest.approx(0.3)
    assert abs(int(frames[3].image[5, 5, 0]) - 120) < 8  # type: ignore[index]


class FakeCapture:
    """Plays a script: an image, None (a failed read), ...; ``opened`` says if it opens."""

    def __init__(self, script: list[Any], *, opened: bool = True, count: int = 0) -> None:
        self.script, self.opened, self.count, self.released = list(script), opened, count, False
        self.releases = 0

    def isOpened(self) -> bool:
        return self.opened

    def read(self) -> tuple[bool, Any]:
        if not self.script:
            return False, None
        item = self.script.pop(0)
        return (item is not None), item

    def get(self, prop: int) -> float:
        return {5: 10.0, 7: float(self.count)}.get(prop, 0.0)

    def release(self) -> None:
        self.released = True
        self.releases += 1


def test_video_with_a_corrupt_frame_and_an_early_end(tmp_path: Path) -> None:
    path = tmp_path / "clip.mp4"
    path.write_bytes(b"x")
    capture = FakeCapture([_image(1), None, _image(2)], count=20)
    config = SourceConfig(max_consecutive_bad_reads=2)
    frames = list(open_source(path, config=config, open_capture=lambda _: capture))
    kinds = [f.kind for f in frames]
    assert kinds[:3] == [FRAME, CORRUPT, FRAME]
    assert kinds[-1] == ENDED_EARLY and "ended after" in (frames[-1].error or "")
    assert capture.released


def test_a_read_that_gives_no_pixels_is_a_failed_read(tmp_path: Path) -> None:
    # A broken stream can answer ok with an empty image; the stability check divided by its width.
    empty = np.zeros((0, 0, 3), np.uint8)

    class SaysOk(FakeCapture):
        def read(self) -> tuple[bool, Any]:
            ok, image = super().read()
            return (True, image) if image is empty else (ok, image)

    path = tmp_path / "clip.mp4"
    path.write_bytes(b"x")
    frames = list(open_source(path, open_capture=lambda _: SaysOk([_image(1), empty, _image(2)], count=3)))
    assert [f.kind for f in frames] == [FRAME, CORRUPT, FRAME]
    assert all(f.image is None or f.image.size for f in frames)


def test_camera_disconnects_and_comes_back(tmp_path: Path) -> None:
    now = [0.0]
    opened = [FakeCapture([_image(1), None, None]), FakeCapture([], opened=False),
              FakeCapture([_image(2)])]

    def open_capture(_: str | int) -> FakeCapture:
        return opened.pop(0) if opened else FakeCapture([], opened=False)

    def sleep(s: float) -> None:
        now[0] += s

    config = SourceConfig(max_consecutive_bad_reads=1, reconnect_interval_s=1.0, reconnect_timeout_s=5.0)
    frames = list(open_source("0", config=config, open_capture=open_capture,
                              clock=lambda: now[0], sleep=sleep))
    kinds = [f.kind for f in frames]
    assert kinds == [FRAME, DISCONNECTED, RECONNECTED, FRAME, DISCONNECTED, ENDED]
    assert [f.index for f in frames if f.kind == FRAME] == [0, 1]


def test_sources_that_cannot_open_give_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(SourceError, match="no camera, stream, video file or folder"):
        open_source(tmp_path / "missing.mp4")
    with pytest.raises(SourceError, match="holds no images"):
        open_source(tmp_path)
    with pytest.raises(SourceError, match="cannot open camera"):
        open_source("rtsp://example.invalid/stream", open_capture=lambda _: FakeCapture([], opened=False))
    bad_video = tmp_path / "bad.mp4"
    bad_video.write_bytes(b"garbage")
    with pytest.raises(SourceError, match="cannot open video"):
        open_source(bad_video)


def test_a_frame_opencv_cannot_decode_is_reported_without_its_log(tmp_path: Path, capfd: Any) -> None:
    cv2.imwrite(str(tmp_path / "frame_0.png"), _image(0))
    (tmp_path / "frame_1.png").write_bytes(b"GIF89a\x01\x00\x01\x00\x00\x00\x00;")  # a broken GIF named .png
    frames = list(open_source(tmp_path, config=SourceConfig(folder_fps=5.0)))
    assert [f.kind for f in frames] == [FRAME, CORRUPT]
    assert "imdecode" not in capfd.readouterr().err


class SlowCapture(FakeCapture):
    """Reads take a while; a release during a read is recorded (OpenCV's VideoCapture is not safe then)."""

    def __init__(self, frames: int, read_s: float) -> None:
        super().__init__([_image(i) for i in range(frames)], count=frames)
        self.read_s, self.reading, self.released_mid_read, self.reads_after_release = read_s, False, False, 0

    def read(self) -> tuple[bool, Any]:
        if self.released:
            self.reads_after_release += 1
        self.reading = True
        time.sleep(self.read_s)
        self.reading = False
        return super().read()

    def release(self) -> None:
        self.released_mid_read |= self.reading
        super().release()


def test_a_closed_capture_is_released_once() -> None:
    capture = FakeCapture([_image(1)])
    shared = _SharedCapture(capture)
    shared.close()
    shared.release()
    shared.close()
    assert capture.releases == 1
    assert shared.read() is None


@pytest.mark.parametrize("target", ["video", "0"])
def test_closing_from_another_thread_waits_for_the_read_in_progress(tmp_path: Path, target: str) -> None:
    # The dashboard's frame thread iterates the source; Ctrl-C closes it from the main thread.
    capture = SlowCapture(frames=50, read_s=0.05)
    path = tmp_path / "game.mp4"
    path.write_bytes(b"not read: the capture is fake")
    source = open_source(str(path) if target == "video" else target, open_capture=lambda _: capture)
    frames: list[Any] = []
    thread = threading.Thread(target=lambda: frames.extend(source))
    thread.start()
    while not frames:
        time.sleep(0.01)
    while not capture.reading:
        time.sleep(0.001)
    source.close()
    thread.join(5)
    assert not thread.is_alive()
    assert capture.released and not capture.released_mid_read
    assert capture.reads_after_release == 0
    assert 0 < len(frames) < 50
