"""Server-sent events at ``/events``: the state snapshot on connect, then every state/ply/alarm event.

Each message is ``event: <kind>``, ``id: <bus seq>`` and one ``data:`` line of
JSON. Idle streams get a ``: keep-alive`` comment every ``SSE_KEEPALIVE_S``
(also how a closed client is noticed), and ``retry:`` tells EventSource how
soon to reconnect. Streams end when the server shuts down.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from flask import Blueprint, Response, current_app

from omweso_cam.dashboard.context import get_context, get_session
from omweso_cam.dashboard.security import error_response

bp = Blueprint("events", __name__)

#: Bus event kinds forwarded to browsers ("frame" is not: the video stream shows frames).
FORWARDED_KINDS = frozenset({"state", "ply", "alarm"})


def format_event(kind: str, data: Any, event_id: int | None = None) -> str:
    """One SSE message (``data`` as a single JSON line)."""
    head = f"id: {event_id}\n" if event_id is not None else ""
    return f"{head}event: {kind}\ndata: {json.dumps(data, separators=(',', ':'))}\n\n"


@bp.get("/events")
def stream() -> Response:
    context = get_context()
    session = get_session()
    if not context.try_open_stream():
        response = error_response(503, "too many open streams; try again shortly")
        response.headers["Retry-After"] = "5"
        return response
    keepalive_s = float(current_app.config["SSE_KEEPALIVE_S"])
    retry_ms = int(current_app.config["SSE_RETRY_MS"])
    poll_s = min(float(current_app.config["STREAM_POLL_S"]), keepalive_s)
    subscription = session.bus.subscribe(replay_last=False)
    released = False

    def release() -> None:
        # Called by the generator's end and by the response's close(), whichever comes first:
        # a response whose body is never read (HEAD, early disconnect) must free its slot too.
        nonlocal released
        if not released:
            released = True
            subscription.close()
            context.close_stream()

    try:
        initial = session.state()
    except BaseException:
        release()
        raise

    def generate() -> Iterator[str]:
        try:
            yield f"retry: {retry_ms}\n\n"
            yield format_event("state", initial)
            idle_s = 0.0
            while not context.shutdown.is_set():
                event = subscription.get(poll_s)
                if event is None:
                    idle_s += poll_s
                    if idle_s >= keepalive_s:
                        idle_s = 0.0
                        yield ": keep-alive\n\n"
                    continue
                if event.kind in FORWARDED_KINDS:
                    idle_s = 0.0
                    yield format_event(event.kind, event.data, event.seq)
        finally:
            release()

    response = Response(
        generate(),
        mimetype="text/event-stream",
        headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"},
    )
    response.call_on_close(release)
    return response
