"""Server-sent events and the MJPEG stream through the test client (streamed, not buffered)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from conftest import TINY_JPEG, TINY_JPEG_2, FakeSession
from flask import Flask
from flask.testing import FlaskClient

from omweso_cam.dashboard import create_app
from omweso_cam.dashboard.context import get_context


def sse_messages(chunks: Iterator[bytes]) -> Iterator[str]:
    """Yield complete SSE messages (text up to a blank line)."""
    buffer = ""
    for chunk in chunks:
        buffer += chunk.decode("utf-8")
        while "\n\n" in buffer:
            message, buffer = buffer.split("\n\n", 1)
            yield message


def parse(message: str) -> tuple[str | None, Any]:
    fields = dict(line.split(": ", 1) for line in message.splitlines() if not line.startswith(":"))
    return fields.get("event"), json.loads(fields["data"]) if "data" in fields else None


def test_events_start_with_retry_and_the_current_state(client: FlaskClient, session: FakeSession) -> None:
    response = client.get("/events", buffered=False)
    assert response.status_code == 200
    assert response.mimetype == "text/event-stream"
    assert response.headers["Cache-Control"] == "no-store"
    messages = sse_messages(iter(response.response))
    assert next(messages) == "retry: 2000"
    kind, data = parse(next(messages))
    assert kind == "state" and data == session.state()
    response.close()


def test_events_follow_moves_and_alarms(client: FlaskClient, session: FakeSession) -> None:
    response = client.get("/events", buffered=False)
    messages = sse_messages(iter(response.response))
    next(messages), next(messages)
    session.publish_move()
    session.raise_alarm()
    seen = [parse(next(messages)) for _ in range(4)]
    assert [kind for kind, _ in seen] == ["ply", "state", "alarm", "state"]
    assert seen[0][1]["move"] == "a1"
    assert seen[1][1]["last_move"]["move"] == "a1" and seen[1][1]["side_to_move"] == "N"
    assert seen[3][1]["alarm"]["differs"] == ["c2", "d1"]
    response.close()


def test_events_send_keep_alive_comments(client: FlaskClient) -> None:
    response = client.get("/events", buffered=False)
    messages = sse_messages(iter(response.response))
    next(messages), next(messages)
    assert next(messages) == ": keep-alive"  # SSE_KEEPALIVE_S is 0.2 s in the test config
    response.close()


def test_every_viewer_gets_the_same_event_encoded_once(client: FlaskClient, session: FakeSession,
                                                        monkeypatch: Any) -> None:
    from omweso_cam.dashboard import sse

    encoded: list[int | None] = []
    real_format = sse.format_event

    def counting(kind: str, data: Any, event_id: int | None = None) -> str:
        encoded.append(event_id)
        return real_format(kind, data, event_id)

    monkeypatch.setattr(sse, "format_event", counting)
    viewers = [client.get("/events", buffered=False) for _ in range(3)]
    streams = [sse_messages(iter(v.response)) for v in viewers]
    for messages in streams:
        next(messages), next(messages)  # retry, the state on connect (one per viewer)
    assert encoded == [None, None, None]
    session.publish_move()  # a ply and a state event
    received = [[next(messages), next(messages)] for messages in streams]
    assert received[0] == received[1] == received[2]
    assert [parse(m)[0] for m in received[0]] == ["ply", "state"]
    assert len(encoded) == 3 + 2  # each bus event encoded once, not once per viewer
    for viewer in viewers:
        viewer.close()


def test_closing_a_stream_frees_its_slot(app: Flask, client: FlaskClient, session: FakeSession) -> None:
    response = client.get("/events", buffered=False)
    next(iter(response.response))
    assert get_context(app).open_streams == 1
    assert session.bus.subscriber_count == 1
    response.close()
    assert get_context(app).open_streams == 0
    assert session.bus.subscriber_count == 0


def test_streams_beyond_the_limit_get_503() -> None:
    app = create_app({"TESTING": True, "MAX_STREAMS": 1, "STREAM_POLL_S": 0.05}, session=FakeSession())
    client = app.test_client()
    first = client.get("/events", buffered=False)
    second = client.get("/events")
    video = client.get("/video/stream.mjpg")
    assert second.status_code == 503 and video.status_code == 503
    assert second.headers["Retry-After"] == "5"
    first.close()
    again = client.get("/events", buffered=False)
    assert again.status_code == 200
    again.close()


def test_shutdown_ends_open_streams(app: Flask, client: FlaskClient) -> None:
    response = client.get("/events", buffered=False)
    chunks = iter(response.response)
    next(chunks), next(chunks)
    get_context(app).shutdown.set()
    assert list(chunks) == []  # the generator returns instead of waiting for events
    response.close()


def mjpeg_parts(chunks: Iterator[bytes]) -> Iterator[bytes]:
    """The JPEGs of a multipart stream: a boundary first, then each part ends with the next boundary."""
    assert next(chunks) == b"--omweso-frame\r\n"
    for chunk in chunks:
        head, _, rest = chunk.partition(b"\r\n\r\n")
        assert head.startswith(b"Content-Type: image/jpeg\r\nContent-Length: ")
        length = int(head.rsplit(b" ", 1)[1])
        assert rest.endswith(b"\r\n--omweso-frame\r\n") and len(rest) == length + len(b"\r\n--omweso-frame\r\n")
        yield rest[:length]


def test_mjpeg_stream_sends_new_frames(client: FlaskClient, session: FakeSession) -> None:
    response = client.get("/video/stream.mjpg", buffered=False)
    assert response.status_code == 200
    assert response.mimetype == "multipart/x-mixed-replace"
    assert response.mimetype_params["boundary"] == "omweso-frame"
    parts = mjpeg_parts(iter(response.response))
    assert next(parts) == TINY_JPEG
    session.set_frame(TINY_JPEG_2)
    assert next(parts) == TINY_JPEG_2
    response.close()


def test_mjpeg_resends_the_last_frame_when_idle(client: FlaskClient) -> None:
    response = client.get("/video/stream.mjpg", buffered=False)
    parts = mjpeg_parts(iter(response.response))
    assert next(parts) == TINY_JPEG
    assert next(parts) == TINY_JPEG  # after SSE_KEEPALIVE_S (0.2 s): how closed viewers are noticed
    response.close()


def test_streams_whose_body_is_never_read_free_their_slot(app: Flask, client: FlaskClient,
                                                          session: FakeSession) -> None:
    for path in ("/events", "/video/stream.mjpg"):
        response = client.head(path)
        assert response.status_code == 200
        response.close()
    assert get_context(app).open_streams == 0
    assert session.bus.subscriber_count == 0
