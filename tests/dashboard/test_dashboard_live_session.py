"""The dashboard over the real LiveSession: frames from a scripted source, observations from counts.

The vision stage is replaced by a processor that turns each frame into
``Observation.from_counts`` of a scripted board, so this checks the runner,
tracker, store and dashboard together without rendering images.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import pytest
from conftest import ScriptedSource, scripted_live_session
from flask.testing import FlaskClient

from omweso_cam.rules import Move, Position, RuleSet, apply_move

TOKEN = "live-session-token"
HEADERS = {"X-Referee-Token": TOKEN}


@pytest.fixture
def live() -> Iterator[tuple[Any, ScriptedSource, FlaskClient]]:
    with scripted_live_session(TOKEN) as running:
        yield running


def wait_state(client: FlaskClient, predicate: Any, what: str, timeout_s: float = 10.0) -> dict[str, Any]:
    deadline = time.monotonic() + timeout_s
    state: dict[str, Any] = {}
    while time.monotonic() < deadline:
        state = client.get("/api/state").json
        if predicate(state):
            return state
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}; last state: {json.dumps(state)[:600]}")


def post(client: FlaskClient, path: str, body: dict[str, Any]) -> Any:
    return client.post(path, json=body, headers=HEADERS)


def test_a_game_through_the_real_session(live: tuple[Any, ScriptedSource, FlaskClient]) -> None:
    _session, source, client = live
    rules = RuleSet.preset("seed")
    start = Position.standard()
    after_a1 = apply_move(start, Move.parse("a1"), rules).position

    reply = post(client, "/api/match", {"south": "Kato", "north": "Nakato", "rules": "seed", "mode": "classical",
                                        "first": "S"})
    assert reply.status_code == 200, reply.json
    source.show(start.board)
    state = wait_state(client, lambda s: s["setup"] is not None and s["setup"]["observed"] is not None,
                       "the set-up reading")
    assert state["phase"] == "setup" and state["setup"]["valid"] is True
    assert state["setup"]["observed"] == [list(r) for r in start.rows()]

    reply = post(client, "/api/setup/confirm", {"position": start.notation()})
    assert reply.status_code == 200, reply.json
    assert reply.json["state"]["phase"] == "playing"

    events = client.get("/events", buffered=False)
    source.show(after_a1.board)
    state = wait_state(client, lambda s: len(s["plies"]) == 1, "the first ply")
    assert state["plies"][0]["move"] == "a1" and state["side_to_move"] == "N"
    assert state["board"] == [list(r) for r in after_a1.rows()]
    assert [lap["landing"] for lap in state["last_move"]["laps"]] == ["e1", "g2"]  # RULES.md E02

    kinds = []
    for chunk in events.response:
        text = chunk.decode()
        kinds += [line[7:] for line in text.splitlines() if line.startswith("event: ")]
        if "ply" in kinds:
            break
    events.close()
    assert "ply" in kinds

    # An illegal sowing by North: one seed of b4 moved to c3. Flagged, then the referee says it
    # is restored.
    illegal = list(after_a1.board)
    illegal[1] -= 1  # b4 (rank 4 row starts at index 0)
    illegal[10] += 1  # c3
    source.show(tuple(illegal))
    state = wait_state(client, lambda s: s["alarm"] is not None, "the illegal-sowing alarm")
    assert state["phase"] == "illegal" and set(state["alarm"]["differs"]) >= {"b4", "c3"}
    reply = post(client, "/api/alarm/board-restored", {})
    assert reply.status_code == 200, reply.json
    source.show(after_a1.board)
    state = wait_state(client, lambda s: s["alarm"] is None and s["phase"] == "playing", "the alarm to clear")

    # The records pages see the stored game.
    matches = client.get("/api/matches").json["matches"]
    assert matches[0]["south"] == "Kato"
    game_id = matches[0]["games"][0]["id"]
    game = client.get(f"/api/games/{game_id}").json
    assert [p["move"] for p in game["plies"]] == ["a1"]
    assert game["plies"][0]["board"] == [list(r) for r in after_a1.rows()]
    exported = client.get(f"/api/games/{game_id}/export?fmt=json").get_data(as_text=True)
    assert json.loads(exported)["plies"][0]["move"] == "a1"
    assert client.get("/video/frame.jpg").mimetype == "image/jpeg"


def test_session_refusals_become_400(live: tuple[Any, ScriptedSource, FlaskClient]) -> None:
    _session, _source, client = live
    reply = post(client, "/api/alarm/board-restored", {})
    assert reply.status_code == 400 and "no match" in reply.json["error"]
    reply = post(client, "/api/match", {"south": "A", "north": "B", "rules": "chess"})
    assert reply.status_code == 400
    reply = post(client, "/api/match", {"south": "A", "north": "B", "options": {"no_such_option": 1}})
    assert reply.status_code == 400 and "no_such_option" in reply.json["error"]
    reply = post(client, "/api/match", {"south": "A", "north": "B", "options": {"match_target": 10**30}})
    assert reply.status_code == 400 and "match_target" in reply.json["error"]  # SQLite could not store it
    assert client.get("/api/matches").json["matches"] == []
    post(client, "/api/match", {"south": "A", "north": "B"})
    reply = post(client, "/api/setup/confirm", {"position": "4,4/0 S"})
    assert reply.status_code == 400
    assert client.get("/api/state").json["phase"] == "setup"


def test_demo_confirms_a_valid_setup_read_by_the_camera(live: tuple[Any, ScriptedSource, FlaskClient]) -> None:
    from omweso_cam.cli.web import SetupConfirmer

    session, source, client = live
    helper = SetupConfirmer(session, poll_s=0.05)
    helper.start()
    try:
        session.new_match(south="Demo South", north="Demo North")
        bad = list(Position.standard().board)
        bad[24] += 1  # 33 seeds for South: not a valid set-up, must not be confirmed
        source.show(tuple(bad))
        state = wait_state(client, lambda s: s["setup"] and s["setup"]["observed"] is not None, "a reading")
        assert state["setup"]["valid"] is False, state["setup"]
        time.sleep(0.3)
        assert client.get("/api/state").json["phase"] == "setup"
        source.show(Position.standard().board)
        state = wait_state(client, lambda s: s["phase"] == "playing", "the automatic confirmation")
        assert state["position"] == Position.standard().notation()
    finally:
        helper.stop()
