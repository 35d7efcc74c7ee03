"""omweso-cam: a camera companion for Omweso, the four-row mancala of Uganda."""

from __future__ import annotations

__version__ = "0.1.0"
