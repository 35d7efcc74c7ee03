"""Calibration page: the referee clicks the four board corners on a still frame."""

from __future__ import annotations

from flask import Blueprint, Response, render_template

from omweso_cam.dashboard import validate
from omweso_cam.dashboard.actions import run_action
from omweso_cam.dashboard.security import json_body, referee_only

bp = Blueprint("calibration", __name__)


@bp.get("/calibration")
def page() -> str:
    return render_template("calibration.html", page="calibration")


@bp.post("/api/calibration")
@referee_only
def set_corners() -> Response:
    """Save the board corners: ``{"corners_px": [[x, y] x 4]}`` in TL, TR, BR, BL order, raw-frame pixels."""
    corners = validate.corners(validate.field(json_body(), "corners_px"))
    return run_action(lambda s: s.set_calibration(corners))
