"""Every dashboard route through Flask's test client: pages, API, refusals without the token, 404s."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from conftest import REFEREE_TOKEN, STANDARD, FakeSession
from flask import Flask
from flask.testing import FlaskClient

from omweso_cam.dashboard import create_app
from omweso_cam.resources import web_dir

PAGES = ["/", "/setup", "/calibration", "/records", "/overlay"]

#: Every state-changing route with a valid body, the session call it must make.
ACTIONS: list[tuple[str, dict[str, Any], str]] = [
    ("/api/alarm/board-restored", {}, "board_restored"),
    ("/api/alarm/accept-observed", {}, "accept_observed"),
    ("/api/correct-pit", {"square": "c2", "count": 3}, "correct_pit"),
    ("/api/take-back", {}, "take_back"),
    ("/api/match", {"south": "Alice", "north": "Bongo", "rules": "seed", "options": {},
                    "mode": "blitz", "first": "N"}, "new_match"),
    ("/api/setup/confirm", {"position": STANDARD}, "confirm_setup"),
    ("/api/calibration", {"corners_px": [[10, 12], [600, 15], [610, 400], [5, 395]]}, "set_calibration"),
]


def post(client: FlaskClient, path: str, body: Any, **headers: str) -> Any:
    return client.post(path, data=json.dumps(body), content_type="application/json", headers=headers)


# ---------------------------------------------------------------- pages and headers

@pytest.mark.parametrize("path", PAGES)
def test_pages_render_with_security_headers(client: FlaskClient, path: str) -> None:
    response = client.get(path)
    assert response.status_code == 200
    assert response.mimetype == "text/html"
    csp = response.headers["Content-Security-Policy"]
    assert "script-src 'self'" in csp and "unsafe-inline" not in csp
    assert response.headers["X-Content-Type-Options"] == "nosniff"
    assert response.headers["Referrer-Policy"] == "no-referrer"
    html = response.get_data(as_text=True)
    scripts = re.findall(r"<script([^>]*)>(.*?)</script>", html, re.S)
    assert scripts, "every page loads its script"
    for attrs, body in scripts:
        assert 'src="/static/js/' in attrs and not body.strip(), "no inline scripts (CSP)"
    assert "style=" not in html, "no inline styles (CSP)"


def test_templates_load_nothing_from_other_origins() -> None:
    for path in (web_dir() / "templates").glob("*.html"):
        text = path.read_text(encoding="utf-8")
        assert "http://" not in text and "https://" not in text and "//cdn" not in text, path.name


def test_static_files_are_served(client: FlaskClient) -> None:
    for name in ("js/omweso.js", "js/live.js", "js/setup.js", "js/calibration.js", "js/records.js",
                 "js/overlay.js", "css/board.css", "css/app.css", "css/overlay.css", "favicon.svg"):
        response = client.get(f"/static/{name}")
        assert response.status_code == 200, name
        response.close()


def test_the_icon_is_found_where_browsers_look_for_it(client: FlaskClient) -> None:
    response = client.get("/favicon.ico")
    assert response.status_code == 301 and response.headers["Location"].endswith("/static/favicon.svg")
    for page in ("/", "/setup", "/records", "/calibration", "/overlay"):
        assert 'rel="icon"' in client.get(page).get_data(as_text=True), page


def test_the_board_stylesheet_is_shared_by_the_pages_and_the_overlay(client: FlaskClient) -> None:
    board_link = "/static/css/board.css"
    for page in ("/", "/setup", "/records", "/overlay"):
        assert board_link in client.get(page).get_data(as_text=True), page
    for sheet in ("app.css", "overlay.css"):  # the board's rules are written once, in board.css
        css = client.get(f"/static/css/{sheet}").get_data(as_text=True)
        assert ".pit-hole" not in css and ".board-wood" not in css, sheet


def test_overlay_page_has_transparent_background(client: FlaskClient) -> None:
    css = client.get("/static/css/overlay.css").get_data(as_text=True)
    assert re.search(r"html\.overlay, body\.overlay \{ background: transparent", css)
    assert 'class="overlay"' in client.get("/overlay").get_data(as_text=True)


def test_unknown_page_is_404(client: FlaskClient) -> None:
    assert client.get("/no-such-page").status_code == 404


def test_unknown_api_route_is_json_404(client: FlaskClient) -> None:
    response = client.get("/api/no-such-thing")
    assert response.status_code == 404
    assert response.json is not None and response.json["status"] == 404


def test_get_on_an_action_is_405(client: FlaskClient) -> None:
    assert client.get("/api/correct-pit").status_code == 405


# ---------------------------------------------------------------- read-only API

def test_state_is_the_session_snapshot(client: FlaskClient, session: FakeSession) -> None:
    session.publish_move()
    response = client.get("/api/state")
    assert response.status_code == 200
    assert response.headers["Cache-Control"] == "no-store"
    assert response.json == session.state()
    assert response.json["last_move"]["move"] == "a1"


def test_referee_check(client: FlaskClient) -> None:
    assert client.get("/api/referee").json == {"referee": False}
    assert client.get("/api/referee", headers={"X-Referee-Token": "wrong"}).json == {"referee": False}
    assert client.get("/api/referee", headers={"X-Referee-Token": REFEREE_TOKEN}).json == {"referee": True}


def test_health(client: FlaskClient) -> None:
    assert client.get("/api/health").json == {"ok": True, "session": True, "open_streams": 0}


def test_rules_presets(client: FlaskClient) -> None:
    presets = {p["name"]: p["options"] for p in client.get("/api/rules").json["presets"]}
    assert presets["seed"]["setup_max_per_pit"] == 10
    assert presets["traditional"]["setup_max_per_pit"] is None


def test_without_a_session_state_is_503() -> None:
    app = create_app({"TESTING": True})
    assert app.test_client().get("/api/state").status_code == 503
    assert app.test_client().get("/").status_code == 200


# ---------------------------------------------------------------- token

def test_token_from_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OMWESO_REFEREE_TOKEN", "from-env")
    assert create_app(session=FakeSession()).config["REFEREE_TOKEN"] == "from-env"


def test_generated_tokens_are_long_and_distinct(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OMWESO_REFEREE_TOKEN", raising=False)
    first = create_app(session=FakeSession()).config["REFEREE_TOKEN"]
    second = create_app(session=FakeSession()).config["REFEREE_TOKEN"]
    assert len(first) >= 32 and first != second


# ---------------------------------------------------------------- actions

@pytest.mark.parametrize(("path", "body", "call"), ACTIONS)
def test_action_refused_without_token(client: FlaskClient, session: FakeSession,
                                      path: str, body: dict[str, Any], call: str) -> None:
    session.raise_alarm()
    before = session.state()
    for headers in ({}, {"X-Referee-Token": "wrong"}, {"X-Referee-Token": ""}):
        response = post(client, path, body, **headers)
        assert response.status_code == 403, headers
        assert "referee token" in response.json["error"]
    assert session.calls == [] and session.state() == before


@pytest.mark.parametrize(("path", "body", "call"), ACTIONS)
def test_action_refused_cross_origin(client: FlaskClient, session: FakeSession,
                                     path: str, body: dict[str, Any], call: str) -> None:
    response = post(client, path, body, **{"X-Referee-Token": REFEREE_TOKEN, "Origin": "http://evil.example"})
    assert response.status_code == 403
    assert session.calls == []


@pytest.mark.parametrize(("path", "body", "call"), ACTIONS)
def test_action_needs_json(client: FlaskClient, session: FakeSession,
                           path: str, body: dict[str, Any], call: str) -> None:
    response = client.post(path, data={"x": "1"}, headers={"X-Referee-Token": REFEREE_TOKEN})
    assert response.status_code == 415
    assert session.calls == []


@pytest.mark.parametrize(("path", "body", "call"), ACTIONS)
def test_action_with_token_calls_the_session(client: FlaskClient, session: FakeSession,
                                             path: str, body: dict[str, Any], call: str) -> None:
    session.raise_alarm()
    response = post(client, path, body, **{"X-Referee-Token": REFEREE_TOKEN, "Origin": "http://localhost"})
    assert response.status_code == 200, response.json
    assert response.json["ok"] is True
    assert response.json["state"] == session.state()
    assert [name for name, _ in session.calls] == [call]


def test_action_arguments_reach_the_session(client: FlaskClient, session: FakeSession,
                                            referee_headers: dict[str, str]) -> None:
    post(client, "/api/correct-pit", {"square": "h4", "count": 0}, **referee_headers)
    post(client, "/api/match", ACTIONS[4][1], **referee_headers)
    post(client, "/api/calibration", ACTIONS[6][1], **referee_headers)
    assert session.calls[0] == ("correct_pit", ("h4", 0))
    assert session.calls[1] == ("new_match", {"south": "Alice", "north": "Bongo", "rules": "seed",
                                              "options": {}, "mode": "blitz", "first": "N"})
    assert session.calibration == [(10.0, 12.0), (600.0, 15.0), (610.0, 400.0), (5.0, 395.0)]
    assert session.state()["board"][0][7] == 0


BAD_BODIES: list[tuple[str, Any, str]] = [
    ("/api/correct-pit", [], "JSON object"),
    ("/api/correct-pit", {"count": 3}, "'square'"),
    ("/api/correct-pit", {"square": "i9", "count": 3}, "a1..h4"),
    ("/api/correct-pit", {"square": "c2", "count": 65}, "0..64"),
    ("/api/correct-pit", {"square": "c2", "count": -1}, "0..64"),
    ("/api/correct-pit", {"square": "c2", "count": "3"}, "0..64"),
    ("/api/correct-pit", {"square": "c2", "count": True}, "0..64"),
    ("/api/correct-pit", {"square": "c2", "count": 2.5}, "0..64"),
    ("/api/match", {"south": "", "north": "B"}, "South player's name"),
    ("/api/match", {"south": "A", "north": "x" * 41}, "North player's name"),
    ("/api/match", {"south": "A", "north": "B", "mode": "bullet"}, "mode"),
    ("/api/match", {"south": "A", "north": "B", "first": "E"}, "first"),
    ("/api/match", {"south": "A", "north": "B", "rules": "../etc"}, "rules"),
    ("/api/match", {"south": "A", "north": "B", "options": [1]}, "options"),
    ("/api/match", {"south": "A", "north": "B", "options": {"x": {"y": [1]}}}, "option 'x'"),
    ("/api/setup/confirm", {"position": ""}, "position"),
    ("/api/setup/confirm", {"position": 7}, "position"),
    ("/api/calibration", {"corners_px": [[1, 2], [3, 4], [5, 6]]}, "4 [x, y]"),
    ("/api/calibration", {"corners_px": [[1, 2], [3, 4], [5, 6], [7, "8"]]}, "corner 3"),
    ("/api/calibration", {"corners_px": [[1, 2], [3, 4], [5, 6], [-7, 8]]}, "corner 3"),
    ("/api/calibration", {"corners_px": [[1, 2], [1, 2], [5, 6], [7, 8]]}, "distinct"),
]


@pytest.mark.parametrize(("path", "body", "needle"), BAD_BODIES)
def test_bad_input_is_400_and_changes_nothing(client: FlaskClient, session: FakeSession,
                                              referee_headers: dict[str, str],
                                              path: str, body: Any, needle: str) -> None:
    before = session.state()
    response = post(client, path, body, **referee_headers)
    assert response.status_code == 400
    assert needle in response.json["error"]
    assert session.calls == [] and session.state() == before


def test_session_refusal_is_400_with_its_message(client: FlaskClient, session: FakeSession,
                                                 referee_headers: dict[str, str]) -> None:
    before = session.state()
    response = post(client, "/api/alarm/board-restored", {}, **referee_headers)  # no alarm raised
    assert response.status_code == 400
    assert response.json["error"] == "there is no illegal-sowing alarm to clear"
    response = post(client, "/api/setup/confirm", {"position": "1,2,3 S"}, **referee_headers)
    assert response.status_code == 400 and "bad position notation" in response.json["error"]
    response = post(client, "/api/match", {"south": "A", "north": "B", "rules": "chess"}, **referee_headers)
    assert response.status_code == 400 and "unknown rules preset" in response.json["error"]
    assert session.state() == before


def test_request_body_size_is_bounded(client: FlaskClient, session: FakeSession,
                                      referee_headers: dict[str, str]) -> None:
    response = post(client, "/api/setup/confirm", {"position": "x" * 20_000}, **referee_headers)
    assert response.status_code == 413
    assert session.calls == []


def test_malformed_json_is_400(client: FlaskClient, referee_headers: dict[str, str]) -> None:
    response = client.post("/api/correct-pit", data="{not json", content_type="application/json",
                           headers=referee_headers)
    assert response.status_code == 400


# ---------------------------------------------------------------- video stills

def test_stills(client: FlaskClient, session: FakeSession) -> None:
    from conftest import TINY_JPEG, TINY_JPEG_2

    session.set_frame(TINY_JPEG, raw=TINY_JPEG_2)
    frame = client.get("/video/frame.jpg")
    assert frame.status_code == 200 and frame.mimetype == "image/jpeg" and frame.data == TINY_JPEG
    assert client.get("/video/raw.jpg").data == TINY_JPEG_2


def test_stills_404_before_the_first_frame(client: FlaskClient, session: FakeSession) -> None:
    session.set_frame(None)
    assert client.get("/video/frame.jpg").status_code == 404
    assert client.get("/video/raw.jpg").json["error"] == "no raw frame yet"


def test_app_factory_keeps_apps_apart() -> None:
    first, second = FakeSession(), FakeSession()
    app_one: Flask = create_app({"REFEREE_TOKEN": "a"}, session=first)
    app_two: Flask = create_app({"REFEREE_TOKEN": "b"}, session=second)
    post(app_one.test_client(), "/api/correct-pit", {"square": "a1", "count": 1}, **{"X-Referee-Token": "a"})
    assert first.calls and not second.calls
    assert post(app_two.test_client(), "/api/correct-pit", {"square": "a1", "count": 1},
                **{"X-Referee-Token": "a"}).status_code == 403
