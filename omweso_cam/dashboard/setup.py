"""Set-up page: new match (players, rules, mode, who starts) and confirming the read set-up."""

from __future__ import annotations

from typing import Any

from flask import Blueprint, Response, jsonify, render_template

from omweso_cam.dashboard import validate
from omweso_cam.dashboard.actions import run_action
from omweso_cam.dashboard.security import json_body, referee_only
from omweso_cam.rules import PRESETS, RuleSet

bp = Blueprint("setup", __name__)


@bp.get("/setup")
def page() -> str:
    return render_template("setup.html", page="setup")


@bp.get("/api/rules")
def rules() -> Response:
    """Rule presets with their options, for the new-match form."""
    return jsonify({"presets": [_preset(name) for name in PRESETS]})


def _preset(name: str) -> dict[str, Any]:
    return {"name": name, "options": RuleSet.preset(name).options()}


@bp.post("/api/match")
@referee_only
def new_match() -> Response:
    """Start a new match: ``{"south", "north", "rules", "options", "mode", "first"}``."""
    body = json_body()
    south = validate.player_name(validate.field(body, "south"), "South")
    north = validate.player_name(validate.field(body, "north"), "North")
    rules_name = validate.rules_name(body.get("rules", "seed"))
    options = validate.options(body.get("options"))
    mode = validate.choice(body.get("mode", "classical"), validate.MODES, "mode")
    first = validate.choice(body.get("first", "S"), validate.SIDES, "first")
    return run_action(
        lambda s: s.new_match(
            south=south, north=north, rules=rules_name, options=options, mode=mode, first=first
        )
    )


@bp.post("/api/setup/confirm")
@referee_only
def confirm_setup() -> Response:
    """Confirm the set-up: ``{"position": "<notation>"}`` (the grid as corrected by the referee)."""
    position = validate.position(validate.field(json_body(), "position"))
    return run_action(lambda s: s.confirm_setup(position))
