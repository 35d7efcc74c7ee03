"""Checks for the fields of referee requests; each raises BadRequestBody with a clear message."""

from __future__ import annotations

import math
import re
from typing import Any

from omweso_cam.dashboard.security import BadRequestBody
from omweso_cam.rules import MODES, NotationError, Side, square_index, square_name
from omweso_cam.rules.notation import TOTAL_SEEDS

MAX_SEEDS = TOTAL_SEEDS  # a pit can hold every seed of the game
MAX_NAME_CHARS = 40
MAX_POSITION_CHARS = 200
MAX_OPTIONS = 32
SIDES = tuple(side.value for side in Side)

__all__ = ["MODES", "SIDES", "choice", "corners", "count", "field", "options", "player_name", "position",
           "rules_name", "square"]


def field(body: dict[str, Any], name: str) -> Any:
    """``body[name]``, or a 400 naming the missing field."""
    if name not in body:
        raise BadRequestBody(f"missing field {name!r}")
    return body[name]


def square(value: Any) -> str:
    """A square name like ``"c2"`` (the rules engine's square notation)."""
    try:
        return square_name(square_index(value))
    except NotationError:
        raise BadRequestBody(f"square must be a1..h4, got {value!r}") from None


def count(value: Any) -> int:
    """A seed count 0..64 (a JSON integer, not a bool or a float)."""
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_SEEDS:
        raise BadRequestBody(f"count must be an integer 0..{MAX_SEEDS}, got {value!r}")
    return value


def player_name(value: Any, side: str) -> str:
    """A player's name: 1..40 printable characters."""
    if not isinstance(value, str):
        raise BadRequestBody(f"{side} player's name must be a string")
    name = value.strip()
    if not name or len(name) > MAX_NAME_CHARS or not name.isprintable():
        raise BadRequestBody(f"{side} player's name must be 1..{MAX_NAME_CHARS} printable characters")
    return name


def choice(value: Any, allowed: tuple[str, ...], what: str) -> str:
    """One of ``allowed``."""
    if value not in allowed:
        raise BadRequestBody(f"{what} must be one of {', '.join(allowed)}; got {value!r}")
    return str(value)


def rules_name(value: Any) -> str:
    """A rules preset name (the session checks it exists)."""
    if not isinstance(value, str) or not re.match(r"^[a-z_]{1,32}$", value):
        raise BadRequestBody(f"rules must be a preset name like 'seed', got {value!r}")
    return value


def options(value: Any) -> dict[str, Any]:
    """Rule options: a flat JSON object of scalars or lists of scalars (the session checks names)."""
    if value is None:
        return {}
    if not isinstance(value, dict) or len(value) > MAX_OPTIONS:
        raise BadRequestBody(f"options must be a JSON object with at most {MAX_OPTIONS} entries")
    scalars = (bool, int, float, str, type(None))
    for key, item in value.items():
        if not isinstance(key, str) or not re.match(r"^[a-z_]{1,40}$", key):
            raise BadRequestBody(f"bad option name {key!r}")
        if isinstance(item, list):
            items = item
        elif isinstance(item, dict):  # e.g. "points": {"both_ends": 1}
            items = list(item.values())
        else:
            items = [item]
        if not all(isinstance(x, scalars) for x in items):
            raise BadRequestBody(
                f"option {key!r} must be a scalar, or a list or object of scalars"
            )
    return dict(value)


def position(value: Any) -> str:
    """Position notation text (the session parses and checks it)."""
    if not isinstance(value, str) or not value.strip() or len(value) > MAX_POSITION_CHARS:
        raise BadRequestBody(f"position must be notation text of at most {MAX_POSITION_CHARS} characters")
    return value.strip()


def corners(value: Any) -> list[tuple[float, float]]:
    """Four ``[x, y]`` pixel points, TL, TR, BR, BL, finite and not negative."""
    if not isinstance(value, list) or len(value) != 4:
        raise BadRequestBody("corners_px must be a list of 4 [x, y] points (TL, TR, BR, BL)")
    points: list[tuple[float, float]] = []
    for i, point in enumerate(value):
        if (
            not isinstance(point, list)
            or len(point) != 2
            or not all(isinstance(v, int | float) and not isinstance(v, bool) for v in point)
        ):
            raise BadRequestBody(f"corner {i} must be [x, y] numbers, got {point!r}")
        x, y = float(point[0]), float(point[1])
        if not (math.isfinite(x) and math.isfinite(y)) or x < 0 or y < 0:
            raise BadRequestBody(f"corner {i} must be finite pixel coordinates >= 0, got {point!r}")
        points.append((x, y))
    if len(set(points)) != 4:
        raise BadRequestBody("the four corners must be distinct points")
    return points
