"""The waitress server wrapper: serving on a free port, stream limits, clean stop with open streams."""

from __future__ import annotations

import http.client
import json
import threading
import time

import pytest
from conftest import REFEREE_TOKEN, FakeSession

from omweso_cam.dashboard import create_app
from omweso_cam.dashboard.context import get_context
from omweso_cam.dashboard.server import DashboardServer, ServerConfig, serve_session


def test_server_stops_cleanly_with_open_streams(session: FakeSession) -> None:
    app = create_app({"REFEREE_TOKEN": REFEREE_TOKEN, "STREAM_POLL_S": 0.1}, session=session)
    server = DashboardServer(app, ServerConfig(port=0, threads=8, reserved_threads=4))
    thread = server.start_in_thread()
    events = http.client.HTTPConnection("127.0.0.1", server.port, timeout=5)
    events.request("GET", "/events")
    response = events.getresponse()
    assert response.status == 200 and response.readline() == b"retry: 2000\n"
    assert get_context(app).open_streams == 1
    server.stop()
    thread.join(10)
    assert not thread.is_alive()
    assert get_context(app).open_streams == 0


def test_stream_limit_keeps_threads_for_the_referee(session: FakeSession) -> None:
    app = create_app({"REFEREE_TOKEN": REFEREE_TOKEN, "STREAM_POLL_S": 0.1}, session=session)
    server = DashboardServer(app, ServerConfig(port=0, threads=6, reserved_threads=2))
    assert get_context(app).max_streams == 4
    thread = server.start_in_thread()
    try:
        viewers = []
        for _ in range(4):
            conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=5)
            conn.request("GET", "/events")
            response = conn.getresponse()
            assert response.status == 200
            # Keep the response: a collected HTTPResponse closes its socket, and the
            # server then (rightly) frees that viewer's slot.
            viewers.append((conn, response))
        extra = http.client.HTTPConnection("127.0.0.1", server.port, timeout=5)
        extra.request("GET", "/video/stream.mjpg")
        assert extra.getresponse().status == 503
        referee = http.client.HTTPConnection("127.0.0.1", server.port, timeout=5)
        referee.request("POST", "/api/correct-pit", body=json.dumps({"square": "a1", "count": 2}),
                        headers={"Content-Type": "application/json", "X-Referee-Token": REFEREE_TOKEN})
        reply = referee.getresponse()
        assert reply.status == 200 and json.loads(reply.read())["ok"] is True
    finally:
        server.stop()
        thread.join(10)


def test_threads_must_exceed_reserve(session: FakeSession) -> None:
    with pytest.raises(ValueError, match="threads"):
        DashboardServer(create_app(session=session), ServerConfig(port=0, threads=4, reserved_threads=4))


def test_serve_session_prints_the_referee_url_and_stops_the_session(session: FakeSession) -> None:
    lines: list[str] = []
    before = set(threading.enumerate())
    started = time.monotonic()
    code = serve_session(session, config=ServerConfig(port=0, threads=8, reserved_threads=4),
                         exit_after_s=0.5, test_config={"REFEREE_TOKEN": "tok"}, announce=lines.append)
    assert code == 0 and time.monotonic() - started < 5
    assert any(line.strip().startswith("referee") and line.endswith("/?token=tok") for line in lines)
    assert lines[-1] == "omweso-cam dashboard stopped."
    assert session.lifecycle == ["start", "stop"]
    left = [t.name for t in set(threading.enumerate()) - before if t.is_alive()]
    assert left == [], f"threads still running after the server stopped: {left}"


class _BrokenSource(FakeSession):
    def start(self) -> None:
        raise ValueError("no camera, stream, video file or folder called 'nope'")


def test_serve_session_refuses_a_source_it_cannot_open() -> None:
    lines: list[str] = []
    config = ServerConfig(port=0, threads=8, reserved_threads=4)
    with pytest.raises(ValueError, match="nope"):
        serve_session(_BrokenSource(), config=config, exit_after_s=5, announce=lines.append)
    assert lines == []  # nothing was announced or served


def test_port_in_use_is_an_oserror(session: FakeSession) -> None:
    app = create_app(session=session)
    first = DashboardServer(app, ServerConfig(port=0, threads=8, reserved_threads=4))
    try:
        with pytest.raises(OSError):
            DashboardServer(create_app(session=FakeSession()),
                            ServerConfig(port=first.port, threads=8, reserved_threads=4))
    finally:
        first.close()


def test_closed_viewers_free_their_slots(session: FakeSession) -> None:
    app = create_app({"REFEREE_TOKEN": REFEREE_TOKEN, "STREAM_POLL_S": 0.05, "SSE_KEEPALIVE_S": 0.1},
                     session=session)
    server = DashboardServer(app, ServerConfig(port=0, threads=8, reserved_threads=4))
    thread = server.start_in_thread()
    try:
        head = http.client.HTTPConnection("127.0.0.1", server.port, timeout=5)
        head.request("HEAD", "/events")
        assert head.getresponse().status == 200
        head.close()
        for path in ("/events", "/video/stream.mjpg"):
            viewer = http.client.HTTPConnection("127.0.0.1", server.port, timeout=5)
            viewer.request("GET", path)
            assert viewer.getresponse().status == 200
            viewer.close()  # the viewer goes away; the next keep-alive write notices
        deadline = time.monotonic() + 5
        while get_context(app).open_streams and time.monotonic() < deadline:
            time.sleep(0.05)
        assert get_context(app).open_streams == 0
        assert session.bus.subscriber_count == 0
    finally:
        server.stop()
        thread.join(10)


def test_loopback_server_refuses_foreign_host_names(session: FakeSession) -> None:
    app = create_app({"REFEREE_TOKEN": REFEREE_TOKEN}, session=session)
    server = DashboardServer(app, ServerConfig(port=0, threads=8, reserved_threads=4))
    thread = server.start_in_thread()
    try:
        for host, status in ((f"127.0.0.1:{server.port}", 200), (f"localhost:{server.port}", 200),
                             (f"rebind.attacker.example:{server.port}", 400)):
            conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=5)
            conn.putrequest("GET", "/api/state", skip_host=True)
            conn.putheader("Host", host)
            conn.endheaders()
            reply = conn.getresponse()
            reply.read()
            assert reply.status == status, host
            conn.close()
    finally:
        server.stop()
        thread.join(10)
