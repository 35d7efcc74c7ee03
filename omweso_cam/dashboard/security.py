"""Referee token, CSRF defence, security headers and JSON errors for the dashboard.

Model: anyone who can reach the server may *watch* (GET pages, state, events,
video); every state-changing request is a ``POST`` with a JSON body and the
header ``X-Referee-Token: <token>``. Browsers cannot send a custom header
cross-origin without a CORS preflight, which this server never grants, so the
header doubles as the CSRF defence; an ``Origin`` header, when present, must
also match the server. The pages receive the token once as ``?token=...`` in the
URL printed at start-up, keep it in ``sessionStorage`` (per tab) and remove it
from the address bar; ``Referrer-Policy: no-referrer`` keeps it out of Referer.
"""

from __future__ import annotations

import functools
import hmac
from collections.abc import Callable
from typing import Any, TypeVar, cast
from urllib.parse import urlsplit

from flask import Flask, Response, current_app, jsonify, request
from werkzeug.exceptions import HTTPException

TOKEN_HEADER = "X-Referee-Token"

#: Content-Security-Policy: no inline script or style, nothing from other origins.
CSP = "; ".join(
    (
        "default-src 'self'",
        "script-src 'self'",
        "style-src 'self'",
        "img-src 'self' data: blob:",
        "connect-src 'self'",
        "object-src 'none'",
        "base-uri 'none'",
        "form-action 'self'",
        "frame-ancestors 'none'",
    )
)

SECURITY_HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
    "Cross-Origin-Opener-Policy": "same-origin",
    "Cross-Origin-Resource-Policy": "same-origin",
}

F = TypeVar("F", bound=Callable[..., Any])


class BadRequestBody(ValueError):
    """The JSON body of a request is missing, malformed or has a bad field."""


def is_referee() -> bool:
    """True when the request carries the right referee token header."""
    sent = request.headers.get(TOKEN_HEADER, "")
    expected = str(current_app.config["REFEREE_TOKEN"])
    return bool(sent) and hmac.compare_digest(sent.encode(), expected.encode())


def _same_origin() -> bool:
    origin = request.headers.get("Origin")
    if origin is None or origin == "null":
        return origin is None
    parts = urlsplit(origin)
    return parts.netloc == request.host and parts.scheme == request.scheme


def referee_only(view: F) -> F:
    """Decorator for state-changing views: 403 without the token, 415 without a JSON body."""

    @functools.wraps(view)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        if not _same_origin():
            return error_response(403, "cross-origin request refused")
        if not is_referee():
            return error_response(403, f"referee token required (send header {TOKEN_HEADER})")
        if not request.is_json:
            return error_response(415, "send the request body as application/json")
        return view(*args, **kwargs)

    return cast(F, wrapper)


def json_body() -> dict[str, Any]:
    """The request's JSON object; :class:`BadRequestBody` if it is not one."""
    data = request.get_json(silent=True)
    if not isinstance(data, dict):
        raise BadRequestBody("request body must be a JSON object")
    return data


def error_response(status: int, message: str) -> Response:
    """A JSON error ``{"error": message, "status": status}``."""
    response = jsonify({"error": message, "status": status})
    response.status_code = status
    return response


def _wants_json() -> bool:
    path = request.path
    return path.startswith(("/api/", "/events", "/video/")) or request.method != "GET"


def init_app(app: Flask) -> None:
    """Install security headers and JSON error handlers on ``app``."""

    @app.after_request
    def add_headers(response: Response) -> Response:
        for name, value in SECURITY_HEADERS.items():
            response.headers.setdefault(name, value)
        if request.path.startswith(("/api/", "/events", "/video/")):
            response.headers.setdefault("Cache-Control", "no-store")
        return response

    @app.errorhandler(BadRequestBody)
    def bad_body(error: BadRequestBody) -> Response:
        return error_response(400, str(error))

    @app.errorhandler(HTTPException)
    def http_error(error: HTTPException) -> Response | HTTPException:
        if not _wants_json():
            return error
        status = error.code or 500
        return error_response(status, error.description or error.name)
