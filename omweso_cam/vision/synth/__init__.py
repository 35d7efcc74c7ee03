"""Synthetic board photos and filmed games with exact ground truth (renderer of test boards).

Public API: `render_board`, `render_sequence`, `Scene`, `Truth`, `BoardRenderer`,
`render_corpus`. Nothing here runs at import time.
"""

from __future__ import annotations

from omweso_cam.rules import board_notation
from omweso_cam.vision.synth.render import BoardRenderer, Truth, render_board
from omweso_cam.vision.synth.scene import STYLES, Scene

__all__ = ["STYLES", "BoardRenderer", "Scene", "Truth", "board_notation", "render_board"]
