"""Per-app objects of the dashboard (kept in ``app.extensions``) and the session interface it drives."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any, Protocol

from flask import Flask, abort, current_app

from omweso_cam.events import EventBus

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
