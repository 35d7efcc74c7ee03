"""Referee dashboard (Flask): pages, JSON API, server-sent events and MJPEG over a LiveSession.

The dashboard sits at the end of the data flow: it reads ``session.state()``,
listens to ``session.bus`` and forwards the referee's actions to the session.
It never imports OpenCV or ``omweso_cam.vision``: frames arrive as JPEG bytes.
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping
from typing import Any

from flask import Flask

from omweso_cam.dashboard.context import EXTENSION_KEY, DashboardContext, LiveSessionLike
from omweso_cam.resources import web_dir

#: Defaults; override with ``OMWESO_*`` environment variables or ``test_config``.
DEFAULT_CONFIG: dict[str, Any] = {
    # Referee token; generated with secrets.token_urlsafe when empty.
    "REFEREE_TOKEN": "",
    # Requests bigger than this are refused (413): the API only takes small JSON bodies.
    "MAX_CONTENT_LENGTH": 16 * 1024,
    # Server-sent events: comment line after this many idle seconds, client retry delay.
    "SSE_KEEPALIVE_S": 15.0,
    "SSE_RETRY_MS": 2000,
    # MJPEG: at most this many frames per second per viewer.
    "VIDEO_MAX_FPS": 10.0,
    # Long-lived streams (SSE + MJPEG) allowed at once; beyond it they get 503 so that
    # the server always keeps threads free for the referee's requests.
    "MAX_STREAMS": 240,
    # How often a stream checks for server shutdown and client disconnects.
    "STREAM_POLL_S": 1.0,
}


def create_app(
    test_config: Mapping[str, Any] | None = None,
    *,
    session: LiveSessionLike | None = None,
) -> Flask:
    """Build the dashboard app around ``session`` (a LiveSession or anything with its interface).

    Configuration comes from :data:`DEFAULT_CONFIG`, then ``OMWESO_*`` environment
    variables (e.g. ``OMWESO_REFEREE_TOKEN``), then ``test_config``.
    """
    web = web_dir()
    app = Flask(
        __name__,
        template_folder=str(web / "templates"),
        static_folder=str(web / "static"),
        static_url_path="/static",
    )
    app.config.from_mapping(DEFAULT_CONFIG)
    app.config.from_prefixed_env("OMWESO")
    if test_config is not None:
        app.config.from_mapping(test_config)
    token = str(app.config.get("REFEREE_TOKEN") or "") or secrets.token_urlsafe(24)
    app.config["REFEREE_TOKEN"] = token
    app.extensions[EXTENSION_KEY] = DashboardContext(
        session=session, max_streams=int(app.config["MAX_STREAMS"])
    )

    from omweso_cam.dashboard import (
        api,
        calibration,
        live,
        overlay,
        records,
        security,
        setup,
        sse,
        video,
    )

    security.init_app(app)
    for module in (api, live, sse, video, setup, calibration, records, overlay):
        app.register_blueprint(module.bp)
    return app


__all__ = ["DEFAULT_CONFIG", "DashboardContext", "create_app"]
