"""Records API over a real (in-memory) MatchRepository: matches, games with replay boards, export."""

from __future__ import annotations

import json

import pytest
from flask.testing import FlaskClient

from omweso_cam.rules import Move, Position, RuleSet, apply_move
from omweso_cam.store import MatchRepository


@pytest.fixture
def recorded(repository: MatchRepository) -> dict[str, int]:
    """A match with one game of three plies, played with the rules engine."""
    rules = RuleSet.preset("seed")
    match_id = repository.create_match(south="Alice", north="Bongo", rules="seed")
    position = Position.standard()
    game_id = repository.start_game(match_id, number=1, rules="seed", initial=position.notation())
    for n, text in enumerate(["a1", "h4", "b1"], start=1):
        side = position.side_to_move.value
        position = apply_move(position, Move.parse(text), rules).position
        repository.add_ply(game_id, n=n, move=text, side=side, after=position.notation(), frame=10 * n)
    return {"match": match_id, "game": game_id}


def test_matches_list_games(client: FlaskClient, recorded: dict[str, int]) -> None:
    data = client.get("/api/matches").json
    assert [m["id"] for m in data["matches"]] == [recorded["match"]]
    match = data["matches"][0]
    assert (match["south"], match["north"]) == ("Alice", "Bongo")
    assert [(g["id"], g["ply_count"]) for g in match["games"]] == [(recorded["game"], 3)]
    assert data["games"] == []


def test_game_has_a_board_per_ply(client: FlaskClient, recorded: dict[str, int]) -> None:
    game = client.get(f"/api/games/{recorded['game']}").json
    assert game["board"] == [list(r) for r in Position.standard().rows()]
    assert [p["move"] for p in game["plies"]] == ["a1", "h4", "b1"]
    for ply in game["plies"]:
        assert ply["board"] == [list(r) for r in Position.from_notation(ply["after"]).rows()]
        assert sum(map(sum, ply["board"])) == 64
    assert game["plies"][0]["board"][3] == [0, 5, 5, 5, 0, 5, 5, 5]  # RULES.md E02


def test_unknown_game_is_404(client: FlaskClient) -> None:
    assert client.get("/api/games/999").status_code == 404
    assert client.get("/api/games/999/export?fmt=json").status_code == 404
    assert client.get("/api/games/abc").status_code == 404
    assert client.get(f"/api/games/{10**25}").status_code == 404  # past SQLite's integers: was a 500
    assert client.get(f"/api/games/{10**25}/export").status_code == 404


def test_export_json_and_text(client: FlaskClient, recorded: dict[str, int]) -> None:
    response = client.get(f"/api/games/{recorded['game']}/export?fmt=json")
    assert response.status_code == 200 and response.mimetype == "application/json"
    assert "attachment" in response.headers["Content-Disposition"]
    record = json.loads(response.get_data(as_text=True))
    assert [p["move"] for p in record["plies"]] == ["a1", "h4", "b1"]
    assert record["tags"]["South"] == "Alice"
    text = client.get(f"/api/games/{recorded['game']}/export")
    assert text.status_code == 200 and text.mimetype == "text/plain"
    assert "a1" in text.get_data(as_text=True)


def test_export_rejects_unknown_format(client: FlaskClient, recorded: dict[str, int]) -> None:
    response = client.get(f"/api/games/{recorded['game']}/export?fmt=pdf")
    assert response.status_code == 400 and "fmt must be one of" in response.json["error"]


def test_board_rows_of_bad_notation_is_none() -> None:
    from omweso_cam.dashboard.records import board_rows

    assert board_rows(None) is None
    assert board_rows("not a position") is None
    assert board_rows("9,9,9,9,9,9,9,9/0,0,0,0,0,0,0,0/0,0,0,0,0,0,0,0/4,4,4,4,4,4,4,4 S") is None  # 72+32 seeds
    assert board_rows(Position.standard().notation()) == [list(r) for r in Position.standard().rows()]
