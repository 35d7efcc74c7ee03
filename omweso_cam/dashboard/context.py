"""Per-app objects of the dashboard (kept in ``app.extensions``) and the session interface it drives."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

from flask import Flask, Response, abort, current_app

from omweso_cam.dashboard.security import error_response
from omweso_cam.events import Event, EventBus

#: What a streamed body yields: text (SSE) or bytes (MJPEG).
Chunk = TypeVar("Chunk", str, bytes)

EXTENSION_KEY = "omweso"


class LiveSessionLike(Protocol):
    """What the dashboard needs of ``omweso_cam.runner.LiveSession`` (see its docstring)."""

    bus: EventBus
    repository: Any

    def state(self) -> dict[str, Any]: ...
    def latest_jpeg(self) -> bytes | None: ...
    def latest_raw_jpeg(self) -> bytes | None: ...
    def new_match(
        self,
        *,
        south: str,
        north: str,
        rules: str = "seed",
        options: dict[str, Any] | None = None,
        mode: str = "classical",
        first: str = "S",
    ) -> int: ...
    def confirm_setup(self, position: str) -> None: ...
    def board_restored(self) -> None: ...
    def accept_observed(self) -> None: ...
    def take_back(self) -> None: ...
    def correct_pit(self, square: str, count: int) -> None: ...
    def set_calibration(self, corners_px: list[tuple[float, float]]) -> None: ...


@dataclass
class DashboardContext:
    """Everything one app instance shares between requests.

    ``shutdown`` ends every open stream (set by the server on Ctrl-C); ``streams``
    bounds how many SSE/MJPEG connections are open at once.
    """

    session: LiveSessionLike | None
    max_streams: int
    shutdown: threading.Event = field(default_factory=threading.Event)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _open_streams: int = 0
    # Referee actions run one at a time: the session sees them in the order they came.
    action_lock: threading.Lock = field(default_factory=threading.Lock)
    # Encoded SSE messages by bus seq (see encoded_event).
    encoded_events_kept: int = 64
    _encoded: OrderedDict[int, str] = field(default_factory=OrderedDict)

    def try_open_stream(self) -> bool:
        """Reserve a stream slot; False when :attr:`max_streams` are already open."""
        with self._lock:
            if self._open_streams >= self.max_streams:
                return False
            self._open_streams += 1
            return True

    def close_stream(self) -> None:
        with self._lock:
            self._open_streams = max(0, self._open_streams - 1)

    @property
    def open_streams(self) -> int:
        with self._lock:
            return self._open_streams

    def encoded_event(self, event: Event, encode: Callable[[Event], str]) -> str:
        """``encode(event)``, computed once per bus event however many viewers send it.

        Keeps the last :attr:`encoded_events_kept` messages (by bus ``seq``): viewers are
        at most a few events apart.
        """
        with self._lock:
            cached = self._encoded.get(event.seq)
        if cached is not None:
            return cached
        message = encode(event)
        with self._lock:
            self._encoded[event.seq] = message
            while len(self._encoded) > self.encoded_events_kept:
                self._encoded.popitem(last=False)
        return message


class StreamSlot:
    """One reserved long-lived stream (SSE or MJPEG) of a :class:`DashboardContext`.

    The slot is freed exactly once, by whichever comes first: the body generator ending
    or the response's ``close()`` (a body never read, as for HEAD or an early disconnect,
    must free its slot too). ``on_release`` callbacks run then as well.
    """

    def __init__(self, context: DashboardContext) -> None:
        self._context = context
        self._callbacks: list[Callable[[], None]] = []
        self._released = False
        self._lock = threading.Lock()  # the generator and close() may end on different threads

    def on_release(self, callback: Callable[[], None]) -> None:
        """Run ``callback`` when the slot is freed."""
        self._callbacks.append(callback)

    def release(self) -> None:
        """Free the slot (idempotent)."""
        with self._lock:
            if self._released:
                return
            self._released = True
        try:
            for callback in self._callbacks:
                callback()
        finally:
            self._context.close_stream()

    def response(self, body: Iterable[Chunk], *, mimetype: str) -> Response:
        """A streamed, uncached response of ``body`` that frees this slot when it ends or is closed."""

        def generate() -> Iterator[Chunk]:
            try:
                yield from body
            finally:
                self.release()

        response = Response(generate(), mimetype=mimetype,
                            headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"})
        response.call_on_close(self.release)
        return response


def open_stream_slot(context: DashboardContext) -> StreamSlot | None:
    """Reserve a stream slot, or None when :attr:`DashboardContext.max_streams` are open."""
    return StreamSlot(context) if context.try_open_stream() else None


def streams_full_response() -> Response:
    """The 503 (with ``Retry-After``) for a stream refused because every slot is taken."""
    response = error_response(503, "too many open streams; try again shortly")
    response.headers["Retry-After"] = "5"
    return response


def get_context(app: Flask | None = None) -> DashboardContext:
    """The :class:`DashboardContext` of ``app`` (default: the current app)."""
    target = app if app is not None else current_app
    context: DashboardContext = target.extensions[EXTENSION_KEY]
    return context


def get_session() -> LiveSessionLike:
    """The current app's session, or a 503 response when the app runs without one."""
    session = get_context().session
    if session is None:
        abort(503, description="no live session is running")
    return session
