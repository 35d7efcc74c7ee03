"""Engine behaviour beyond the worked examples: first-turn ban, two-one sowing, illegal
moves and their reasons, the lap budget, and the intermediate sowing states."""

from __future__ import annotations

import random

import pytest

from omweso_cam.rules import (
    IllegalMoveError,
    Move,
    Position,
    RuleSet,
    apply_move,
    is_legal,
    legal_moves,
    sowing_states,
    sowing_states_all,
    square_index,
    successors,
)
from omweso_cam.rules.sample import random_positions

SEED = RuleSet.preset("seed")
TRADITIONAL = RuleSet.preset("traditional")
# E08: g1 captures at h2 unless captures are banned.
E08 = "4,4,4,4,4,4,4,2/0,0,0,0,0,0,0,2/1,1,1,1,1,0,0,1/4,4,4,4,4,4,2,0 S"
# E05: a1(cw) is a reverse capture.
E05 = "2,2,1,4,4,4,4,3/2,0,1,1,1,1,1,1/2,2,1,2,2,2,3,3/3,2,0,2,2,2,2,2 S"
E12 = "4,4,4,4,4,4,4,4/0,0,0,0,0,0,0,0/0,2,1,4,2,2,2,0/2,2,1,2,4,6,1,1 S"
E13 = "5,5,6,6,6,6,6,6/0,0,0,0,0,0,0,0/2,1,0,2,1,0,2,1/3,0,1,2,0,1,2,0 S"


@pytest.mark.parametrize("ply", [0, 1])
def test_first_turn_ban_relays_instead_of_capturing(ply: int) -> None:
    position = Position.from_notation(f"{E08} {ply} 0:0")
    outcome = apply_move(position, "g1", SEED)
    assert [lap.then for lap in outcome.laps] == ["relay", "end"]
    assert outcome.position.captures == (0, 0)
    reverse = Position.from_notation(f"{E05} {ply} 0:0")
    assert not any(move.choices for move in legal_moves(reverse, SEED))
    with pytest.raises(IllegalMoveError, match="first turn"):
        apply_move(reverse, "a1(cw)", SEED)


def test_captures_allowed_from_ply_2() -> None:
    position = Position.from_notation(f"{E08} 2 0:0")
    outcome = apply_move(position, "g1", SEED)
    assert outcome.laps[0].then == "capture"
    assert outcome.position.captures == (1, 0)
    assert Move.parse("a1(cw)") in legal_moves(Position.from_notation(f"{E05} 2 0:0"), SEED)


def test_two_one_only_before_any_capture_and_from_three_seeds() -> None:
    fresh = Position.from_notation("4,4,4,4,4,4,4,4/0,0,0,0,0,0,0,0/0,0,0,0,0,0,0,0/3,5,4,4,4,4,4,4 S 0 0:0")
    assert Move.parse("a1(2-1)") in legal_moves(fresh, SEED)
    assert [str(m) for m in legal_moves(fresh, SEED)].count("a1(2-1)") == 1
    outcome = apply_move(fresh, "a1(2-1)", SEED)
    assert outcome.position.rows()[3] == (0, 7, 5, 4, 4, 4, 4, 4)
    assert [lap.kind for lap in outcome.laps] == ["two_one"]
    # A capture by either side ends the two-one opening for both.
    later = Position.from_notation(fresh.notation(short=True) + " 6 0:1")
    assert Move.parse("a1(2-1)") not in legal_moves(later, SEED)
    with pytest.raises(IllegalMoveError, match="no capture has happened"):
        apply_move(later, "a1(2-1)", SEED)
    with pytest.raises(IllegalMoveError, match="exactly 3"):
        apply_move(fresh, "b1(2-1)", SEED)
    with pytest.raises(IllegalMoveError, match="not part of these rules"):
        apply_move(fresh, "a1(2-1)", TRADITIONAL)


def test_illegal_move_reasons() -> None:
    position = Position.standard()
    with pytest.raises(IllegalMoveError, match="a4 is not a pit of South"):
        apply_move(position, "a4", SEED)
    with pytest.raises(IllegalMoveError, match="holds 0 seeds"):
        apply_move(position, "a2", SEED)
    with pytest.raises(IllegalMoveError, match="left over"):
        apply_move(Position.from_notation(E12), "a1(ccw,cw)", TRADITIONAL)
    assert not is_legal(position, "a4", SEED)
    assert is_legal(position, "h1", SEED)
    # The error names the move and the position.
    with pytest.raises(IllegalMoveError, match=r"illegal move d2\(cw\) in 4,4"):
        apply_move(position, "d2(cw)", SEED)


def test_apply_move_of_every_listed_move_agrees_with_successors() -> None:
    for position in random_positions(random.Random(3), TRADITIONAL, 25):
        for move, outcome in successors(position, TRADITIONAL):
            assert apply_move(position, move, TRADITIONAL) == outcome
            assert apply_move(position, str(move), TRADITIONAL) == outcome


def test_never_ending_outcome_keeps_the_position_and_annuls() -> None:
    position = Position.from_notation(E13)
    outcome = apply_move(position, "a1", TRADITIONAL)
    assert outcome.never_ending and outcome.position == position
    assert outcome.result is not None
    assert (outcome.result.winner, outcome.result.how, outcome.result.points) == (None, "never_ending", 0)


def test_lap_budget_reports_too_long_not_never_ending() -> None:
    position = Position.from_notation(E12)  # a1 takes 14 laps
    assert len(apply_move(position, "a1", TRADITIONAL).laps) == 14
    assert not apply_move(position, "a1", TRADITIONAL.with_options(max_move_laps=14)).never_ending
    short = apply_move(position, "a1", TRADITIONAL.with_options(max_move_laps=13))
    assert short.never_ending and short.result is not None and short.result.how == "too_long"
    assert len(short.laps) == 13
    forbid = TRADITIONAL.with_options(max_move_laps=13, never_ending_policy="forbid_move")
    assert Move.parse("a1") not in legal_moves(position, forbid)


def _check_states(position: Position, move: Move, rules: RuleSet) -> None:
    outcome = apply_move(position, move, rules)
    states = sowing_states(position, move, rules)
    assert states[0].event == "lift" and states[0].pit == move.start and states[0].lap == 0
    previous = position.board
    for state in states:
        assert sum(state.board) + state.in_hand == 64
        changed = [i for i in range(32) if state.board[i] != previous[i]]
        pit = square_index(state.pit)
        if state.event == "drop":
            assert changed == [pit] and state.board[pit] == previous[pit] + 1
        else:
            assert changed == [pit] and state.board[pit] == 0
        previous = state.board
    last = states[-1]
    if outcome.never_ending:
        # Stops at the lift that starts the repeated lap.
        assert last.event == "lift" and last.lap == len(outcome.laps)
    else:
        assert last.in_hand == 0 and last.event == "drop"
        assert last.lap == len(outcome.laps) - 1
        assert last.board == outcome.position.board
    drops = sum(1 for s in states if s.event == "drop")
    assert drops == sum(lap.hand for lap in outcome.laps)


def test_sowing_states_step_by_step() -> None:
    rng = random.Random(5)
    checked = 0
    for position in [*random_positions(rng, SEED, 20), Position.from_notation(E05), Position.from_notation(E13)]:
        for move in legal_moves(position, TRADITIONAL):
            _check_states(position, move, TRADITIONAL)
            checked += 1
    assert checked > 100


def test_sowing_states_of_a_capture() -> None:
    position = Position.from_notation(E05)
    states = sowing_states(position, "a1(cw)", TRADITIONAL)
    # lift a1, drop a2 b2 c2 (capture at c2: the opponent's outer pit c4, then inner c3),
    # then the captured seeds from a1 counter-clockwise: b1 c1.
    assert [(s.event, s.pit, s.in_hand, s.lap) for s in states] == [
        ("lift", "a1", 3, 0), ("drop", "a2", 2, 0), ("drop", "b2", 1, 0), ("drop", "c2", 0, 0),
        ("lift", "c4", 1, 0), ("lift", "c3", 2, 0), ("drop", "b1", 1, 1), ("drop", "c1", 0, 1),
    ]


def test_sowing_states_all_matches_each_move() -> None:
    for position in [*random_positions(random.Random(9), SEED, 10), Position.from_notation("3,5,4,4,4,4,4,4/0,0,0,0,0,0,0,0/0,0,0,0,0,0,0,0/3,5,4,4,4,4,4,4 N 1 0:0")]:
        everything = sowing_states_all(position, SEED)
        assert [(m, o) for m, o, _ in everything] == successors(position, SEED)
        for move, _, states in everything:
            assert states == sowing_states(position, move, SEED)


def test_sowing_states_all_cuts_long_moves_at_a_lap_boundary() -> None:
    position = Position.from_notation(E13)
    full = {move: states for move, _, states in sowing_states_all(position, TRADITIONAL, max_states=None)}
    cut = {move: states for move, _, states in sowing_states_all(position, TRADITIONAL, max_states=20)}
    endless = Move.parse("a1")
    assert len(full[endless]) > 60
    assert 20 <= len(cut[endless]) <= 20 + 4  # one lap of 3 seeds plus its lift past the cap
    assert cut[endless] == full[endless][: len(cut[endless])]
    for move, states in cut.items():
        if len(full[move]) <= 20:
            assert states == full[move]


E06 = "3,3,1,1,3,3,3,3/1,1,2,1,2,2,2,1/2,1,1,1,0,0,1,1/2,0,3,4,4,4,4,4 S"
E07 = "4,4,4,0,1,4,4,3/2,0,1,1,1,1,1,1/2,2,0,0,0,4,0,2/0,3,3,3,3,3,3,4 S"
E15 = "3,3,2,3,4,4,4,1/2,1,1,0,1,1,1,1/9,1,1,1,2,2,0,1/2,2,1,2,2,2,2,2 S"


@pytest.mark.parametrize(
    ("scope", "listed", "not_listed"),
    [
        # any_lap: every lap from a reverse pit may go clockwise if it captures directly.
        ("any_lap", ["a1(cw)", "a2(cw,cw)", "f2(ccw,cw)", "a2(ccw,cw)"], []),
        # wikipedia_literal: first and relay laps only; captured seeds never go clockwise,
        # whichever way the capturing lap went (E15b; and E06's second cw is gone).
        # (a2(ccw,cw) stays legal in E15 but means another lap there: the relay from b1.)
        ("wikipedia_literal", ["a1(cw)", "a2(cw)", "f2(ccw,cw)"], ["a2(cw,cw)"]),
        ("initial_only", ["a1(cw)", "a2(cw)"], ["a2(cw,cw)", "f2(ccw,cw)", "a2(ccw,cw)"]),
        ("none", [], ["a1(cw)", "a2(cw)", "a2(cw,cw)", "f2(ccw,cw)", "a2(ccw,cw)"]),
    ],
)
def test_reverse_scope(scope: str, listed: list[str], not_listed: list[str]) -> None:
    rules = TRADITIONAL.with_options(reverse_scope=scope)
    where = {"a1(cw)": E05, "a2(cw)": E06, "a2(cw,cw)": E06, "f2(ccw,cw)": E07, "a2(ccw,cw)": E15}
    for move in listed:
        assert Move.parse(move) in legal_moves(Position.from_notation(where[move]), rules), move
    for move in not_listed:
        position = Position.from_notation(where[move])
        assert Move.parse(move) not in legal_moves(position, rules), move
        assert not is_legal(position, move, rules)
    allowed = {"any_lap": {"initial", "relay", "capture", "capture_after_cw"},
               "wikipedia_literal": {"initial", "relay"}, "initial_only": {"initial"}, "none": set()}[scope]
    for text in set(where.values()):
        for _, outcome in successors(Position.from_notation(text), rules):
            assert {lap.kind for lap in outcome.laps if lap.direction == "cw"} <= allowed
