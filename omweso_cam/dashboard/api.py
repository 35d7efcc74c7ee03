"""JSON API shared by every page: the state snapshot and a referee-token check."""

from __future__ import annotations

from flask import Blueprint, Response, jsonify

from omweso_cam.dashboard.context import get_context, get_session
from omweso_cam.dashboard.security import is_referee

bp = Blueprint("api", __name__, url_prefix="/api")


@bp.get("/state")
def state() -> Response:
    """The session's state snapshot (schema: ``omweso_cam.runner.LiveSession.state``)."""
    return jsonify(get_session().state())


@bp.get("/referee")
def referee() -> Response:
    """``{"referee": true}`` when the request carries the right ``X-Referee-Token``."""
    return jsonify({"referee": is_referee()})


@bp.get("/health")
def health() -> Response:
    """Liveness: whether a session is attached and how many streams are open."""
    context = get_context()
    return jsonify({"ok": True, "session": context.session is not None,
                    "open_streams": context.open_streams})
