"""The 21 worked examples of RULES.md (tests/rules/data/rules_examples.jsonl, a copy of the
rule book's file): position after, lap trace, result, illegal moves, never-ending moves."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from omweso_cam.rules import (
    IllegalMoveError,
    Move,
    Position,
    RuleSet,
    apply_move,
    legal_moves,
    successors,
)

DATA = Path(__file__).parent / "data" / "rules_examples.jsonl"
EXAMPLES = [json.loads(line) for line in DATA.read_text(encoding="utf-8").splitlines() if line.strip()]


def _rules(example: dict[str, Any]) -> RuleSet:
    return RuleSet.preset(example["rules"]).with_options(**example["options"])


def _laps(outcome: Any) -> list[dict[str, Any]]:
    laps = []
    for lap in outcome.laps:
        entry = {"kind": lap.kind, "from": lap.origin, "dir": lap.direction, "hand": lap.hand,
                 "last": lap.landing, "then": lap.then}
        if lap.then == "capture":
            entry["captured"] = lap.captured
        laps.append(entry)
    return laps


def test_all_21_examples_are_present() -> None:
    assert len(EXAMPLES) == 21
    assert len({e["id"] for e in EXAMPLES}) == 21


@pytest.mark.parametrize("example", EXAMPLES, ids=[e["id"] for e in EXAMPLES])
def test_example(example: dict[str, Any]) -> None:
    rules = _rules(example)
    position = Position.from_notation(example["position"])
    move = Move.parse(example["move"])
    if example.get("illegal"):
        with pytest.raises(IllegalMoveError, match=example["move"].replace("(", r"\(").replace(")", r"\)")):
            apply_move(position, move, rules)
        assert move not in legal_moves(position, rules)
        return
    outcome = apply_move(position, move, rules)
    assert _laps(outcome) == example["laps"]
    listed = dict(successors(position, rules))
    assert move in listed, f"{move} missing from legal moves {sorted(map(str, listed))}"
    assert listed[move] == outcome
    if example.get("never_ending"):
        assert outcome.never_ending
        assert outcome.result is not None and outcome.result.how == "never_ending"
        assert outcome.result.winner is None and outcome.result.points == 0
        return
    assert not outcome.never_ending
    after = outcome.position
    assert after.notation(short=True) == example["after"]
    assert after.ply == position.ply + 1
    assert after.side_to_move is position.side_to_move.other
    captured = any(lap["then"] == "capture" for lap in example["laps"])
    mover = position.side_to_move.index
    assert after.captures[mover] == position.captures[mover] + int(captured)
    assert after.captures[1 - mover] == position.captures[1 - mover]
    expected = example["result"]
    if expected["how"] is None:
        assert outcome.result is None
    else:
        assert outcome.result is not None
        assert outcome.result.winner is not None
        assert (outcome.result.winner.value, outcome.result.how) == (expected["winner"], expected["how"])
        assert outcome.result.points == rules.points_for(expected["how"])


def test_never_ending_move_is_forbidden_under_forbid_move() -> None:
    example = next(e for e in EXAMPLES if e.get("never_ending"))
    rules = _rules(example).with_options(never_ending_policy="forbid_move")
    position = Position.from_notation(example["position"])
    move = Move.parse(example["move"])
    with pytest.raises(IllegalMoveError, match="never ends"):
        apply_move(position, move, rules)
    assert move not in legal_moves(position, rules)
