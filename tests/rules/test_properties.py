"""Hypothesis properties of the engine (RULES.md §4.4 invariants, notation, symmetry)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from omweso_cam.rules import (
    CIRCUIT,
    Move,
    Position,
    RuleSet,
    Side,
    sowing_states_all,
    successors,
)

# A small lap budget keeps the rare huge end-game cycles cheap; the properties hold for
# every move, whatever its outcome.
RULES = {
    name: RuleSet.preset(name).with_options(max_move_laps=2000) for name in ("seed", "traditional")
}
PROFILE = settings(max_examples=60, deadline=None)


@st.composite
def positions(draw: st.DrawFn) -> Position:
    """Any board of 64 seeds, either side to move, early or late in the game."""
    # Seeds go to random pits; a bias towards one side gives lopsided end-games too.
    weights = draw(st.lists(st.integers(0, 4), min_size=32, max_size=32).filter(any))
    pits = [i for i in range(32) for _ in range(weights[i])]
    drops = draw(st.lists(st.sampled_from(pits), min_size=64, max_size=64))
    board = [0] * 32
    for pit in drops:
        board[pit] += 1
    side = draw(st.sampled_from(list(Side)))
    ply = draw(st.integers(0, 40))
    captures = (draw(st.integers(0, 5)), draw(st.integers(0, 5)))
    return Position(tuple(board), side, ply, captures)


rule_names = st.sampled_from(sorted(RULES))


@PROFILE
@given(positions(), rule_names)
def test_seeds_conserved_and_opponent_never_gains(position: Position, name: str) -> None:
    rules = RULES[name]
    opponent = CIRCUIT[position.side_to_move.other]
    for move, outcome, states in sowing_states_all(position, rules):
        assert sum(outcome.position.board) == 64
        previous = position.board
        for state in states:
            assert sum(state.board) + state.in_hand == 64
            assert all(state.board[i] <= previous[i] for i in opponent), move
            previous = state.board


@PROFILE
@given(positions(), rule_names)
def test_moves_start_from_two_or_more_and_cw_laps_capture(position: Position, name: str) -> None:
    for move, outcome in successors(position, RULES[name]):
        assert position[move.start] >= 2
        assert all(lap.then == "capture" for lap in outcome.laps if lap.direction == "cw")
        if not outcome.never_ending:
            last = outcome.laps[-1]
            assert last.then == "end"
            assert outcome.position[last.landing] == 1 or last.kind == "two_one"
            assert outcome.position.ply == position.ply + 1
            assert outcome.position.side_to_move is position.side_to_move.other


@PROFILE
@given(positions())
def test_notation_round_trips(position: Position) -> None:
    assert Position.from_notation(position.notation()) == position
    short = Position.from_notation(position.notation(short=True))
    assert (short.board, short.side_to_move) == (position.board, position.side_to_move)
    for move, _ in successors(position, RULES["traditional"]):
        assert Move.parse(str(move)) == move
        assert Move.parse(str(move), position) == move


@PROFILE
@given(positions(), rule_names)
def test_south_north_mirror_symmetry(position: Position, name: str) -> None:
    rules = RULES[name]
    mirrored = {
        move.mirror(): outcome for move, outcome in successors(position.mirror(), rules)
    }
    original = successors(position, rules)
    assert set(mirrored) == {move for move, _ in original}
    for move, outcome in original:
        other = mirrored[move]
        assert other.never_ending == outcome.never_ending
        assert other.position == outcome.position.mirror()
        assert [(lap.kind, lap.direction, lap.hand, lap.then, lap.captured) for lap in other.laps] == [
            (lap.kind, lap.direction, lap.hand, lap.then, lap.captured) for lap in outcome.laps
        ]
        if outcome.result is None:
            assert other.result is None
        else:
            assert other.result is not None
            assert other.result.how == outcome.result.how
            assert other.result.points == outcome.result.points
            expected_winner = outcome.result.winner.other if outcome.result.winner else None
            assert other.result.winner is expected_winner
