"""Perft-style table: legal moves and distinct successors for 36 positions under both
presets, depth 2 for a few (tests/rules/data/perft.json, generated once by make_perft.py
and frozen). Categories: opening, free set-ups, mid-games, end-games, positions with
reverse options, a never-ending move.

Hand-checked (reasoning in each entry's ``hand_checked`` note, and the move lists below):
the standard opening, the opening with a 3-seed pit (two-one), and two small end-games.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from omweso_cam.rules import Position, RuleSet, legal_moves

from .make_perft import PRESETS, perft

TABLE: list[dict[str, Any]] = json.loads((Path(__file__).parent / "data" / "perft.json").read_text("utf-8"))


def test_table_covers_the_categories() -> None:
    assert len(TABLE) >= 30
    categories = {entry["category"] for entry in TABLE}
    assert {"opening", "free_setup", "mid_game", "end_game", "reverse", "never_ending"} <= categories
    assert sum(1 for entry in TABLE if entry["depth"] == 2) >= 4
    assert sum(1 for entry in TABLE if "hand_checked" in entry) >= 4


@pytest.mark.parametrize("entry", TABLE, ids=[f"{i:02d}-{e['category']}" for i, e in enumerate(TABLE)])
def test_perft(entry: dict[str, Any]) -> None:
    position = Position.from_notation(entry["position"])
    for name in PRESETS:
        assert perft(position, RuleSet.preset(name), entry["depth"]) == entry[name], name


@pytest.mark.parametrize(
    ("position", "preset", "moves"),
    [
        ("4,4,4,4,4,4,4,4/0,0,0,0,0,0,0,0/0,0,0,0,0,0,0,0/4,4,4,4,4,4,4,4 S 0 0:0", "seed",
         ["a1", "b1", "c1", "d1", "e1", "f1", "g1", "h1"]),
        ("4,4,4,4,4,4,4,4/0,0,0,0,0,0,0,0/0,0,0,0,0,0,0,0/3,5,4,4,4,4,4,4 S 0 0:0", "seed",
         ["a1", "a1(2-1)", "b1", "c1", "d1", "e1", "f1", "g1", "h1"]),
        ("4,4,4,4,4,4,4,4/0,0,0,0,0,0,0,0/0,0,0,0,0,0,0,0/3,5,4,4,4,4,4,4 S 0 0:0", "traditional",
         ["a1", "b1", "c1", "d1", "e1", "f1", "g1", "h1"]),
        ("8,8,8,8,8,8,8,4/0,0,0,0,0,0,0,0/0,0,0,0,0,0,0,0/2,0,2,0,0,0,0,0 S", "traditional", ["a1", "c1"]),
        ("8,8,8,8,8,8,8,4/0,0,0,0,0,0,0,0/0,0,0,0,0,0,0,2/0,0,0,0,0,0,0,2 S", "traditional", ["h1", "h2"]),
    ],
)
def test_hand_checked_move_lists(position: str, preset: str, moves: list[str]) -> None:
    found = sorted(str(m) for m in legal_moves(Position.from_notation(position), RuleSet.preset(preset)))
    assert found == moves
