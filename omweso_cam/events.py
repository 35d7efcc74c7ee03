"""In-process publish/subscribe: runner and tracker publish, the dashboard's SSE streams read.

Every subscriber gets its own bounded queue; a slow viewer drops its oldest
events rather than blocking the camera loop. The last event of every ``kind``
is kept so a new subscriber can be brought up to date at once.
"""

from __future__ import annotations

import itertools
import queue
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Event:
    """One published fact: ``kind`` (e.g. ``"state"``, ``"ply"``, ``"alarm"``) and JSON-able data."""

    kind: str
    data: dict[str, Any]
    seq: int = 0
    time_s: float = field(default_factory=time.time)


class Subscription:
    """A subscriber's queue; iterate with :meth:`get` or use as a context manager."""

    def __init__(self, bus: EventBus, maxsize: int) -> None:
        self._bus = bus
        self._queue: queue.Queue[Event] = queue.Queue(maxsize)
        self.dropped = 0

    def _put(self, event: Event) -> None:
        while True:
            try:
                self._queue.put_nowait(event)
                return
            except queue.Full:
                try:
                    self._queue.get_nowait()
                    self.dropped += 1
                except queue.Empty:
                    pass

    def get(self, timeout_s: float | None = None) -> Event | None:
        """Next event, or None after ``timeout_s`` seconds without one."""
        try:
            return self._queue.get(timeout=timeout_s)
        except queue.Empty:
            return None

    def close(self) -> None:
        self._bus._unsubscribe(self)

    def __enter__(self) -> Subscription:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class EventBus:
    """Thread-safe fan-out of :class:`Event` values to any number of subscribers."""

    def __init__(self, *, queue_size: int = 256) -> None:
        self._lock = threading.Lock()
        self._subscribers: list[Subscription] = []
        self._last: dict[str, Event] = {}
        self._seq = itertools.count(1)
        self._queue_size = queue_size

    def publish(self, kind: str, data: dict[str, Any]) -> Event:
        """Number the event and queue it for every subscriber.

        Queuing happens under the bus lock (it never blocks: a full queue drops its oldest),
        so every subscriber sees events in ``seq`` order even when several threads publish.
        """
        with self._lock:
            event = Event(kind, data, next(self._seq))
            self._last[kind] = event
            for sub in self._subscribers:
                sub._put(event)
        return event

    def subscribe(self, *, replay_last: bool = True) -> Subscription:
        """A new subscription; with ``replay_last`` it starts with the latest event of each kind."""
        sub = Subscription(self, self._queue_size)
        with self._lock:
            self._subscribers.append(sub)
            if replay_last:
                for event in sorted(self._last.values(), key=lambda e: e.seq):
                    sub._put(event)
        return sub

    def last(self, kind: str) -> Event | None:
        with self._lock:
            return self._last.get(kind)

    @property
    def subscriber_count(self) -> int:
        with self._lock:
            return len(self._subscribers)

    def _unsubscribe(self, sub: Subscription) -> None:
        with self._lock:
            if sub in self._subscribers:
                self._subscribers.remove(sub)

    def stream(self, *, timeout_s: float = 15.0) -> Iterator[Event | None]:
        """Yield events forever; ``None`` every ``timeout_s`` without one (for keep-alives)."""
        with self.subscribe() as sub:
            while True:
                yield sub.get(timeout_s)
