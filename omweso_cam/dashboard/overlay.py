"""Overlay page for streaming software (OBS browser source): transparent, board + score + move in progress."""

from __future__ import annotations

from flask import Blueprint, render_template

bp = Blueprint("overlay", __name__)


@bp.get("/overlay")
def page() -> str:
    return render_template("overlay.html", page="overlay")
