"""Run one referee action against the session: serialised, ValueError -> 400, reply with the new state."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from flask import Response, jsonify

from omweso_cam.dashboard.context import LiveSessionLike, get_context, get_session
from omweso_cam.dashboard.security import error_response


def run_action(action: Callable[[LiveSessionLike], Any]) -> Response:
    """Call ``action(session)``; on ValueError nothing changed and the client gets a 400.

    The reply is ``{"ok": true, "result": <return value>, "state": <state()>}``.
    """
    session = get_session()
    with get_context().action_lock:
        try:
            result = action(session)
        except ValueError as error:
            return error_response(400, str(error) or type(error).__name__)
        state = session.state()
    return jsonify({"ok": True, "result": result, "state": state})
