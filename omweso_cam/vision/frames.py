"""Frame sources: the start of the data flow (webcam, video file, RTSP/HTTP stream, folder of images).

:func:`open_source` turns what the user typed into a :class:`FrameSource`; iterating it
yields :class:`Frame` values. Faults are frames too, never exceptions in the loop: a
corrupt image, a stray file in a folder, a video that ends before its announced length,
a camera that disconnects (and, with luck, comes back) each yield a frame with
``image=None`` and ``kind``/``error`` saying what happened, so the runner can record it
and carry on.
"""

from __future__ import annotations

import json
import math
import re
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np

#: File suffixes read as images in a frame folder.
IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".bmp", ".tif", ".tiff", ".webp")
#: Side-car files that belong in a frame folder and are not reported as stray.
SIDECAR_NAMES = ("truth.json", "sequence.json", "README.md", "README.txt")
#: The side-cars whose ``fps`` is a frame folder's rate (``omweso-cam render`` writes truth.json).
RATE_SIDECARS = ("truth.json", "sequence.json")
#: The rate of a frame folder that gives none (no ``folder_fps``, no side-car with an ``fps``).
DEFAULT_FOLDER_FPS = 10.0
#: Frame kinds: an image, or a reported fault.
FRAME = "frame"
CORRUPT = "corrupt"
STRAY = "stray_file"
DISCONNECTED = "disconnected"
RECONNECTED = "reconnected"
ENDED_EARLY = "ended_early"
ENDED = "ended"


_DECODE_LOCK = threading.Lock()


def decode_image(data: np.ndarray, flags: int | None = None) -> np.ndarray | None:
    """``cv2.imdecode`` of encoded bytes (default ``IMREAD_COLOR``): None when they do not decode.

    OpenCV's decoders log their own failures on stderr (a broken GIF: "imdecode_ ... can't read
    data"); the callers report a file that does not decode in their own words, once, so OpenCV's
    log is silenced for the call (its level is global: one decode at a time). libjpeg's own
    warnings about damaged data in a JPEG that still decodes ("Corrupt JPEG data: ...") are not
    OpenCV's log and still reach stderr.
    """
    import cv2

    with _DECODE_LOCK:
        level = cv2.utils.logging.getLogLevel()
        cv2.utils.logging.setLogLevel(cv2.utils.logging.LOG_LEVEL_SILENT)
        try:
            return cv2.imdecode(data, cv2.IMREAD_COLOR if flags is None else flags)
        finally:
            cv2.utils.logging.setLogLevel(level)


class SourceError(ValueError):
    """The source cannot be opened at all (no such file, camera, or folder)."""


@dataclass(frozen=True)
class Frame:
    """One item from a source: an image (``kind == "frame"``) or a reported fault (``image is None``).

    ``index`` counts image frames from 0; a fault carries the index of the next image frame.
    """

    index: int
    timestamp_s: float
    image: np.ndarray | None
    kind: str = FRAME
    error: str | None = None
    name: str | None = None

    @property
    def ok(self) -> bool:
        return self.image is not None


@dataclass(frozen=True)
class SourceConfig:
    """How sources are read. Times in seconds."""

    # A frame folder's rate; None: the ``fps`` of its side-car (RATE_SIDECARS), else DEFAULT_FOLDER_FPS.
    folder_fps: float | None = None
    realtime: bool = False
    speed: float = 1.0  # with realtime: 2.0 plays twice as fast
    max_consecutive_bad_reads: int = 5
    reconnect_interval_s: float = 1.0
    reconnect_timeout_s: float = 30.0


class Capture(Protocol):
    """The part of ``cv2.VideoCapture`` a source uses (so tests can pass a fake)."""

    def isOpened(self) -> bool: ...
    def read(self) -> tuple[bool, Any]: ...
    def get(self, prop: int) -> float: ...
    def release(self) -> None: ...


CaptureFactory = Callable[[str | int], Capture]


def _opencv_capture(target: str | int) -> Capture:
    import cv2

    capture: Capture = cv2.VideoCapture(target)
    return capture


class _SharedCapture:
    """A capture one thread reads while another may close it.

    A VideoCapture is not safe to release while another thread reads it (the dashboard's
    frame thread reads, Ctrl-C closes from the main thread), so reads, swaps and the release
    take turns. A stream can hang in a read: :meth:`close` waits for it at most
    ``CLOSE_WAIT_S``, then releases anyway to end the read.
    """

    #: How long :meth:`close` waits for a read in progress before releasing the capture under it.
    CLOSE_WAIT_S = 2.0

    def __init__(self, capture: Capture) -> None:
        self._capture: Capture | None = capture
        self._lock = threading.Lock()
        self.closed = False

    def read(self) -> tuple[bool, Any] | None:
        """The next ``(ok, image)``, or None once closed; a read that gave no pixels (a broken
        stream can say ok with an empty image) is not ok."""
        with self._lock:
            if self.closed or self._capture is None:
                return None
            ok, image = self._capture.read()
        return ok and image is not None and getattr(image, "size", 0) > 0, image

    def release(self) -> None:
        """Let go of the capture (a camera that went away) without closing: :meth:`replace` may follow."""
        with self._lock:
            if self._capture is not None:
                self._capture.release()
                self._capture = None

    def replace(self, capture: Capture) -> bool:
        """Read from ``capture`` from now on; False (and ``capture`` released) once closed."""
        with self._lock:
            if self.closed:
                capture.release()
                return False
            self._capture = capture
            return True

    def close(self) -> None:
        self.closed = True
        waited = self._lock.acquire(timeout=self.CLOSE_WAIT_S)
        try:
            capture, self._capture = self._capture, None  # released once, whatever is called after
            if capture is not None:
                capture.release()
        finally:
            if waited:
                self._lock.release()


class FrameSource:
    """An iterable of :class:`Frame`; ``len_hint`` is the expected number of image frames or None."""

    name: str
    len_hint: int | None
    fps: float | None
    #: Whether ``fps`` is a guess (a frame folder that says nothing of its rate).
    fps_assumed: bool = False
    #: A recording (a video file, a frame folder) rather than a camera or stream: it can wait.
    recorded: bool = False
    _pacer: _Pacer | None = None  # a recording's real-time pacing

    @property
    def rate_note(self) -> str | None:
        """What to tell the user when ``fps`` is a guess (None when it is not)."""
        if not self.fps_assumed or self.fps is None:
            return None
        return (f"{self.name}: frames taken as {self.fps:g} a second (give --fps: the frames a move must agree "
                "for and the timing rules are counted in seconds)")

    def __iter__(self) -> Iterator[Frame]:
        raise NotImplementedError

    def restart_clock(self) -> None:
        """After the consumer held the frames a while: pace the next frame as if it were the first
        (a recording played in real time would otherwise rush to catch up)."""
        if self._pacer is not None:
            self._pacer.restart()

    def close(self) -> None:
        """Release the camera / file (idempotent)."""

    def __enter__(self) -> FrameSource:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class _Pacer:
    """Sleeps so frames come out at their timestamps (``realtime``), with injectable clock."""

    def __init__(self, enabled: bool, clock: Callable[[], float], sleep: Callable[[float], None],
                 speed: float = 1.0) -> None:
        if speed <= 0:
            raise SourceError(f"speed must be > 0, got {speed}")
        self.enabled, self._clock, self._sleep, self._speed = enabled, clock, sleep, speed
        self._start: float | None = None

    def restart(self) -> None:
        self._start = None

    def wait_until(self, timestamp_s: float) -> None:
        if not self.enabled:
            return
        timestamp_s /= self._speed
        now = self._clock()
        if self._start is None:
            self._start = now - timestamp_s
        delay = self._start + timestamp_s - now
        if delay > 0:
            self._sleep(delay)


def _natural_key(path: Path) -> list[object]:
    return [int(t) if t.isdigit() else t.lower() for t in re.split(r"(\d+)", path.name)]


def is_image_file(path: Path) -> bool:
    """Whether ``path`` names an image by its suffix (IMAGE_SUFFIXES, any case)."""
    return path.suffix.lower() in IMAGE_SUFFIXES


def image_files(folder: Path) -> list[Path]:
    """The images in ``folder`` (by suffix), in natural order (frame_2 before frame_10)."""
    return sorted((p for p in folder.iterdir() if p.is_file() and is_image_file(p)), key=_natural_key)


class FolderSource(FrameSource):
    """A folder of images in natural order (frame_2 before frame_10), at ``folder_fps``.

    Without ``folder_fps`` the rate is the ``fps`` of the folder's side-car (a folder
    ``omweso-cam render sequence`` wrote says how fast it was filmed), else
    DEFAULT_FOLDER_FPS with ``fps_assumed`` set: the tracker's agreement and the timing
    rules are in seconds, so a folder read at the wrong rate waits too many frames or too few.
    """

    recorded = True

    def __init__(self, folder: Path, *, config: SourceConfig = SourceConfig(),
                 clock: Callable[[], float] = time.monotonic, sleep: Callable[[float], None] = time.sleep) -> None:
        if not folder.is_dir():
            raise SourceError(f"{folder} is not a folder")
        self.name = str(folder)
        fps = config.folder_fps if config.folder_fps is not None else _sidecar_fps(folder)
        if fps is None:
            fps, self.fps_assumed = DEFAULT_FOLDER_FPS, True
        if not (math.isfinite(fps) and fps > 0):
            raise SourceError(f"a frame folder's rate must be a positive number of frames a second, got {fps}")
        self.fps = fps
        self._entries = sorted((p for p in folder.iterdir() if not p.is_dir()), key=_natural_key)
        self.len_hint = sum(map(is_image_file, self._entries))
        self._pacer: _Pacer = _Pacer(config.realtime, clock, sleep, config.speed)
        if self.len_hint == 0:
            raise SourceError(f"{folder} holds no images ({', '.join(IMAGE_SUFFIXES)})")

    def __iter__(self) -> Iterator[Frame]:
        index = 0
        for path in self._entries:
            timestamp = index / self.fps if self.fps else 0.0
            if not is_image_file(path):
                if path.name not in SIDECAR_NAMES and not path.name.startswith("."):
                    yield Frame(index, timestamp, None, STRAY, f"skipped stray file {path.name}", path.name)
                continue
            self._pacer.wait_until(timestamp)
            data = np.fromfile(str(path), dtype=np.uint8)
            image = decode_image(data) if data.size else None
            if image is None:
                yield Frame(index, timestamp, None, CORRUPT, f"cannot decode image {path.name}", path.name)
            else:
                yield Frame(index, timestamp, image, FRAME, None, path.name)
            index += 1


def _sidecar_fps(folder: Path) -> float | None:
    """The positive ``fps`` of the first of the folder's RATE_SIDECARS that gives one (a side-car
    that cannot be read or gives none is passed over: it only describes the frames)."""
    for name in RATE_SIDECARS:
        try:
            data = json.loads((folder / name).read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, ValueError):
            continue
        fps = data.get("fps") if isinstance(data, dict) else None
        if isinstance(fps, int | float) and not isinstance(fps, bool) and math.isfinite(fps) and fps > 0:
            return float(fps)
    return None


class VideoFileSource(FrameSource):
    """A video file; corrupt frames are skipped and reported, an early end is reported."""

    recorded = True

    def __init__(self, path: Path, *, config: SourceConfig = SourceConfig(),
                 open_capture: CaptureFactory = _opencv_capture,
                 clock: Callable[[], float] = time.monotonic, sleep: Callable[[float], None] = time.sleep) -> None:
        if not path.is_file():
            raise SourceError(f"no such video file: {path}")
        self.name = str(path)
        self._config = config
        capture = open_capture(str(path))
        if not capture.isOpened():
            raise SourceError(f"cannot open video {path} (not a video, or codec missing)")
        fps = float(capture.get(5))  # cv2.CAP_PROP_FPS
        self.fps = fps if fps > 0 else None
        count = int(capture.get(7))  # cv2.CAP_PROP_FRAME_COUNT
        self.len_hint = count if count > 0 else None
        self._pacer: _Pacer = _Pacer(config.realtime, clock, sleep, config.speed)
        self._capture = _SharedCapture(capture)

    def __iter__(self) -> Iterator[Frame]:
        index = 0
        bad = 0
        while True:
            timestamp = index / self.fps if self.fps else float(index)
            read = self._capture.read()
            if read is None:
                return
            ok, image = read
            if ok:  # (_SharedCapture.read: ok means an image with pixels)
                bad = 0
                self._pacer.wait_until(timestamp)
                yield Frame(index, timestamp, image)
                index += 1
                continue
            if self.len_hint is None or index >= self.len_hint:
                break  # a normal end
            bad += 1
            if bad > self._config.max_consecutive_bad_reads:
                yield Frame(index, timestamp, None, ENDED_EARLY,
                            f"video ended after {index} of {self.len_hint} frames")
                break
            yield Frame(index, timestamp, None, CORRUPT, f"cannot decode frame {index}")
            index += 1
        self.close()

    def close(self) -> None:
        self._capture.close()


class LiveSource(FrameSource):
    """A webcam index or stream URL; reconnects after a disconnect until ``reconnect_timeout_s``."""

    def __init__(self, target: str | int, *, config: SourceConfig = SourceConfig(),
                 open_capture: CaptureFactory = _opencv_capture,
                 clock: Callable[[], float] = time.monotonic, sleep: Callable[[float], None] = time.sleep) -> None:
        self.name = str(target)
        self.len_hint = None
        self.fps = None
        self._target, self._config, self._open = target, config, open_capture
        self._clock, self._sleep = clock, sleep
        capture = open_capture(target)
        if not capture.isOpened():
            capture.release()
            raise SourceError(f"cannot open camera or stream {target!r}")
        self._capture = _SharedCapture(capture)

    def __iter__(self) -> Iterator[Frame]:
        index = 0
        start = self._clock()
        bad = 0
        while True:
            read = self._capture.read()
            if read is None:
                return
            ok, image = read
            timestamp = self._clock() - start
            if ok:
                bad = 0
                yield Frame(index, timestamp, image)
                index += 1
                continue
            bad += 1
            if bad <= self._config.max_consecutive_bad_reads:
                continue
            yield Frame(index, timestamp, None, DISCONNECTED, f"lost {self.name}")
            if not self._reconnect():
                yield Frame(index, self._clock() - start, None, ENDED,
                            f"{self.name} did not come back within {self._config.reconnect_timeout_s:g} s")
                return
            bad = 0
            yield Frame(index, self._clock() - start, None, RECONNECTED, f"{self.name} is back")

    def _reconnect(self) -> bool:
        self._capture.release()
        deadline = self._clock() + self._config.reconnect_timeout_s
        while not self._capture.closed and self._clock() < deadline:
            self._sleep(self._config.reconnect_interval_s)
            capture = self._open(self._target)
            if capture.isOpened():
                return self._capture.replace(capture)
            capture.release()
        return False

    def close(self) -> None:
        self._capture.close()


def open_source(source: str | int | Path, *, config: SourceConfig = SourceConfig(),
                open_capture: CaptureFactory = _opencv_capture,
                clock: Callable[[], float] = time.monotonic,
                sleep: Callable[[float], None] = time.sleep) -> FrameSource:
    """The frame source for a camera index ("0"), stream URL, video file or folder of images.

    Raises :class:`SourceError` when it cannot be opened at all.
    """
    if isinstance(source, int) or (isinstance(source, str) and source.strip().isdigit()):
        return LiveSource(int(source), config=config, open_capture=open_capture, clock=clock, sleep=sleep)
    text = str(source)
    if re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*://", text):
        return LiveSource(text, config=config, open_capture=open_capture, clock=clock, sleep=sleep)
    path = Path(text)
    if path.is_dir():
        return FolderSource(path, config=config, clock=clock, sleep=sleep)
    if path.is_file():
        return VideoFileSource(path, config=config, open_capture=open_capture, clock=clock, sleep=sleep)
    raise SourceError(f"no camera, stream, video file or folder called {text!r}")
