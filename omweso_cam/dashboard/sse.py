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

from omweso_cam.dashboard.context import (
    get_context,
    get_session,
    open_stream_slot,
    streams_full_response,
)
from omweso_cam.events import Event

bp = Blueprint("events", __name__)

#: Bus event kinds forwarded to browsers ("frame" is not: the video stream shows frames).
FORWARDED_KINDS = frozenset({"state", "ply", "alarm"})


def format_event(kind: str, data: Any, event_id: int | None = None) -> str:
    """One SSE message (``data`` as a single JSON line)."""
    head = f"id: {event_id}\n" if event_id is not None else ""
    return f"{head}event: {kind}\ndata: {json.dumps(data, separators=(',', ':'))}\n\n"


def _encode(event: Event) -> str:
    return format_event(event.kind, event.data, event.seq)


@bp.get("/events")
def stream() -> Response:
    context = get_context()
    session = get_session()
    slot = open_stream_slot(context)
    if slot is None:
        return streams_full_response()
    keepalive_s = float(current_app.config["SSE_KEEPALIVE_S"])
    retry_ms = int(current_app.config["SSE_RETRY_MS"])
    poll_s = min(float(current_app.config["STREAM_POLL_S"]), keepalive_s)
    subscription = session.bus.subscribe(replay_last=False)
    slot.on_release(subscription.close)
    try:
        initial = session.state()
    except BaseException:
        slot.release()
        raise

    def generate() -> Iterator[str]:
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
                # Every viewer sends the same bytes for an event: encode it once.
                yield context.encoded_event(event, _encode)

    return slot.response(generate(), mimetype="text/event-stream")
