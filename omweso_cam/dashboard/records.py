"""Records: list matches and games, one game ply by ply (with boards for the replay), export."""

from __future__ import annotations

from typing import Any

from flask import Blueprint, Response, jsonify, render_template, request

from omweso_cam.dashboard.context import get_session
from omweso_cam.dashboard.security import error_response
from omweso_cam.store import UnknownRecordError

bp = Blueprint("records", __name__)

EXPORT_FORMATS = {"text": ("text/plain; charset=utf-8", "txt"), "json": ("application/json", "json")}


def _repository() -> Any:
    return get_session().repository


def board_rows(notation: str | None) -> list[list[int]] | None:
    """The 4 ranks (4..1) of 8 counts of a position in notation, or None if it does not parse."""
    if not notation:
        return None
    from omweso_cam.rules import Position

    try:
        rows = Position.from_notation(notation).rows()
    except ValueError:  # NotationError, PositionError: a damaged record still lists its moves
        return None
    return [list(row) for row in rows]


@bp.get("/records")
def page() -> str:
    return render_template("records.html", page="records")


@bp.get("/api/matches")
def matches() -> Response:
    """Every match (newest first) with its games, and games recorded outside a match."""
    repository = _repository()
    games = repository.list_games(None)  # every game, newest first: one query for the whole page
    listed = []
    for match in repository.list_matches():
        own = sorted((g for g in games if g["match_id"] == match["id"]), key=lambda g: g["number"])
        listed.append({**match, "games": own})
    loose = [g for g in games if g["match_id"] is None]
    return jsonify({"matches": listed, "games": loose})


@bp.get("/api/games/<int:game_id>")
def game(game_id: int) -> Response:
    """One game with its plies; ``board`` rows on the game (set-up) and on every ply for the replay."""
    record = _repository().get_game(game_id)
    if record is None:
        return error_response(404, f"no game with id {game_id}")
    record["board"] = board_rows(record.get("initial"))
    for ply in record.get("plies", []):
        ply["board"] = board_rows(ply.get("after"))
    return jsonify(record)


@bp.get("/api/games/<int:game_id>/export")
def export(game_id: int) -> Response:
    """The game record as a download: ``?fmt=text`` (default) or ``?fmt=json``."""
    fmt = request.args.get("fmt", "text")
    if fmt not in EXPORT_FORMATS:
        return error_response(400, f"fmt must be one of {', '.join(EXPORT_FORMATS)}; got {fmt!r}")
    mimetype, suffix = EXPORT_FORMATS[fmt]
    try:
        text = _repository().export_game(game_id, fmt)
    except UnknownRecordError:
        return error_response(404, f"no game with id {game_id}")
    return Response(
        text,
        mimetype=mimetype,
        headers={"Content-Disposition": f'attachment; filename="omweso-game-{game_id}.{suffix}"'},
    )
