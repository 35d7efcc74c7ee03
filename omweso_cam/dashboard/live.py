"""Live page (board, stream, moves, alarm), the referee's answers to an illegal-sowing alarm, taking back a move."""

from __future__ import annotations

from flask import Blueprint, Response, redirect, render_template, url_for
from werkzeug.wrappers import Response as BaseResponse

from omweso_cam.dashboard import validate
from omweso_cam.dashboard.actions import run_action
from omweso_cam.dashboard.security import json_body, referee_only

bp = Blueprint("live", __name__)


@bp.get("/")
def page() -> str:
    return render_template("live.html", page="live")


@bp.get("/favicon.ico")
def favicon() -> BaseResponse:
    """Browsers ask for /favicon.ico where a page names no icon (an API answer, an image)."""
    return redirect(url_for("static", filename="favicon.svg"), 301)


@bp.post("/api/alarm/board-restored")
@referee_only
def board_restored() -> Response:
    """The referee says the board is back to the last legal position."""
    return run_action(lambda s: s.board_restored())


@bp.post("/api/alarm/accept-observed")
@referee_only
def accept_observed() -> Response:
    """The referee accepts the observed board as the new position."""
    return run_action(lambda s: s.accept_observed())


@bp.post("/api/take-back")
@referee_only
def take_back() -> Response:
    """The referee takes back the game's last move (the record keeps it as an event)."""
    return run_action(lambda s: s.take_back())


@bp.post("/api/correct-pit")
@referee_only
def correct_pit() -> Response:
    """Fix a misread pit: ``{"square": "c2", "count": 3}``."""
    body = json_body()
    square = validate.square(validate.field(body, "square"))
    count = validate.count(validate.field(body, "count"))
    return run_action(lambda s: s.correct_pit(square, count))
