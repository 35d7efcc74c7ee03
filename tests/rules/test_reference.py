"""Cross-check of the engine against a slow, independent reference written from RULES.md.

The reference shares no code or tables with the engine: it maps squares from the rule
book's formulas, sows one seed at a time, detects never-ending moves with a set of every
lap-start state seen on the path (the rule book's literal method; the engine instead
compares with one anchor state, relying on the sowing map being injective), and checks
results in the order of §5. Both must agree on every move of a few hundred random
positions under several rule variants.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from omweso_cam.rules import Position, RuleSet, Side, successors
from omweso_cam.rules.sample import random_positions, random_setup

CAP = 3000  # max_move_laps for both engines here, so the huge end-game cycles stay cheap


def _image_index(side: str, i: int) -> int:
    """RULES.md §1: South i (0..7) = file i rank 1, (8..15) = file 15-i rank 2; North ..."""
    if side == "S":
        file, rank = (i, 1) if i < 8 else (15 - i, 2)
    else:
        file, rank = (7 - i, 4) if i < 8 else (i - 8, 3)
    return (4 - rank) * 8 + file


def _name(side: str, i: int) -> str:
    index = _image_index(side, i)
    return "abcdefgh"[index % 8] + str(4 - index // 8)


SCOPE_KINDS = {
    "any_lap": {"initial", "relay", "capture", "capture_after_cw"},
    "wikipedia_literal": {"initial", "relay"},
    "initial_only": {"initial"},
    "none": set(),
}


def reference_moves(position: Position, rules: RuleSet) -> dict[str, tuple[Any, ...]]:
    """move text -> (after notation or None, (winner, how, points) or None, laps)."""
    side = position.side_to_move.value
    opp = "N" if side == "S" else "S"
    own = [_image_index(side, i) for i in range(16)]
    theirs = [_image_index(opp, i) for i in range(16)]
    can_capture = not (rules.no_capture_first_turn and position.ply < 2)
    found: dict[str, tuple[Any, ...]] = {}

    def capture_test(board: list[int], landing: int) -> bool:
        return (
            can_capture and landing >= 8 and board[own[landing]] >= 2
            and board[theirs[landing - 8]] > 0 and board[theirs[23 - landing]] > 0
        )

    def sow(board: list[int], origin: int, hand: int, step: int) -> tuple[list[int], int]:
        board = board[:]
        pit = origin
        for _ in range(hand):
            pit = (pit + step) % 16
            board[own[pit]] += 1
        return board, pit

    def may_reverse(board: list[int], origin: int, hand: int, kind: str) -> bool:
        if not can_capture or origin not in rules.reverse_pits or kind not in SCOPE_KINDS[rules.reverse_scope]:
            return False
        after, landing = sow(board, origin, hand, -1)
        return capture_test(after, landing)

    def move_text(start: int, choices: list[str]) -> str:
        while choices and choices[-1] == "ccw":
            choices = choices[:-1]
        square = _name(side, start)
        return f"{square}({','.join(choices)})" if choices else square

    def finish(board: list[int], landings: list[int], text: str, laps: int) -> None:
        caps = list(position.captures)
        mover = 0 if side == "S" else 1
        if landings:
            caps[mover] += 1
        opp_seeds = [board[i] for i in theirs]
        how = None
        if landings and rules.grand_slam_win and sum(opp_seeds) == 0 and landings[-1] in (8, 15):
            how = "grand_slam"
        elif landings and rules.both_ends_win and 8 in landings and 15 in landings:
            how = "both_ends"
        elif landings and rules.front_row_win and sum(opp_seeds[8:]) == 0:
            how = "front_row"
        elif landings and rules.two_captures_first and caps[mover] == 2 and caps[1 - mover] == 0:
            how = "two_captures_first"
        elif max(opp_seeds) < 2:
            how = "opponent_cannot_move"
        after = Position(tuple(board), Side(opp), position.ply + 1, (caps[0], caps[1]))
        result = None if how is None else (side, how, dict(rules.points)[how])
        found[text] = (after.notation(), result, laps)

    def run(board: list[int], start: int, origin: int, hand: int, kind: str, step: int,
            choices: list[str], seen: set[Any], landings: list[int], laps: int) -> None:
        while True:
            if kind in ("initial", "relay"):
                key = (tuple(board), origin, hand, step)
                if key in seen:
                    found[move_text(start, choices)] = (None, (None, "never_ending", 0), laps)
                    return
                seen = seen | {key}
            if laps >= CAP:
                found[move_text(start, choices)] = (None, (None, "too_long", 0), laps)
                return
            board, landing = sow(board, origin, hand, step)
            laps += 1
            if board[own[landing]] == 1:
                finish(board, landings, move_text(start, choices), laps)
                return
            if capture_test(board, landing):
                hand = board[theirs[landing - 8]] + board[theirs[23 - landing]]
                board[theirs[landing - 8]] = board[theirs[23 - landing]] = 0
                landings = [*landings, landing]
                kind = "capture" if step == 1 else "capture_after_cw"
            else:
                hand, board[own[landing]] = board[own[landing]], 0
                origin, kind = landing, "relay"
            step = 1
            if may_reverse(board, origin, hand, kind):
                run(board[:], start, origin, hand, kind, -1, [*choices, "cw"], seen, landings, laps)
                choices = [*choices, "ccw"]

    for start in range(16):
        hand = position.board[own[start]]
        if hand < 2:
            continue
        board = list(position.board)
        board[own[start]] = 0
        run(board, start, start, hand, "initial", 1, ["ccw"], set(), [], 0)
        if may_reverse(board, start, hand, "initial"):
            run(board, start, start, hand, "initial", -1, ["cw"], set(), [], 0)
        if rules.two_one_opening and position.captures == (0, 0) and hand == 3:
            board = list(position.board)
            board[own[start]] = 0
            board[own[(start + 1) % 16]] += 2
            board[own[(start + 2) % 16]] += 1
            finish(board, [], f"{_name(side, start)}(2-1)", 1)
    if rules.never_ending_policy == "forbid_move":
        found = {k: v for k, v in found.items() if v[0] is not None}
    return found


def engine_moves(position: Position, rules: RuleSet) -> dict[str, tuple[Any, ...]]:
    out: dict[str, tuple[Any, ...]] = {}
    for move, outcome in successors(position, rules):
        result = outcome.result
        key = None if result is None else (result.winner.value if result.winner else None, result.how, result.points)
        after = None if outcome.never_ending else outcome.position.notation()
        assert str(move) not in out, f"{move} listed twice"
        out[str(move)] = (after, key, len(outcome.laps))
    return out


VARIANTS = {
    "seed": RuleSet.preset("seed"),
    "traditional": RuleSet.preset("traditional"),
    "traditional+wikipedia_literal": RuleSet.preset("traditional").with_options(reverse_scope="wikipedia_literal"),
    "seed+initial_only+two_captures_first": RuleSet.preset("seed").with_options(
        reverse_scope="initial_only", two_captures_first=True
    ),
    "traditional+no_reverse+forbid": RuleSet.preset("traditional").with_options(
        reverse_scope="none", never_ending_policy="forbid_move"
    ),
    "seed+all_pits_reverse": RuleSet.preset("seed").with_options(reverse_pits=range(16)),
}


#: Positions found by searching random games: never-ending moves (E13's and one whose cycle
#: takes 1,490 laps), grand slams, and an end-game whose move runs past CAP laps.
SPECIAL = [
    "5,5,6,6,6,6,6,6/0,0,0,0,0,0,0,0/2,1,0,2,1,0,2,1/3,0,1,2,0,1,2,0 S",
    "8,0,1,2,1,2,8,1/4,2,6,3,2,1,6,5/1,0,1,1,1,0,0,1/1,1,1,0,0,0,2,2 N 15 2:5",
    "0,4,7,0,1,5,1,3/12,1,2,3,2,12,8,0/0,0,0,0,0,0,0,1/0,0,0,0,0,0,0,2 N 76 3:8",
    "2,0,0,0,1,6,0,1/3,0,0,0,4,4,0,1/7,0,11,0,2,3,4,3/1,1,3,1,3,2,0,1 S 5 1:0",
    "1,4,0,1,6,1,1,2/0,0,5,1,1,6,0,5/3,1,1,10,1,1,1,0/0,1,3,5,0,2,1,0 N 19 5:1",
]


def _sample() -> list[Position]:
    rng = random.Random(7)
    positions = random_positions(rng, RuleSet.preset("traditional"), 120, min_plies=1, max_plies=60)
    positions += [random_setup(rng, max_per_pit=None, first=rng.choice(list(Side))) for _ in range(30)]
    positions += [Position.from_notation(text) for text in SPECIAL]
    positions += [p.mirror() for p in positions[-len(SPECIAL):]]
    return positions


SAMPLE = _sample()


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_engine_agrees_with_reference(variant: str) -> None:
    rules = VARIANTS[variant].with_options(max_move_laps=CAP)
    compared = 0
    for position in SAMPLE:
        expected = reference_moves(position, rules)
        assert engine_moves(position, rules) == expected, position.notation()
        compared += len(expected)
    assert compared > 1000  # the sample really exercises the engine


def test_sample_covers_the_rare_outcomes() -> None:
    hows = {
        how
        for position in SAMPLE
        for rules in VARIANTS.values()
        for _, result, _ in engine_moves(position, rules.with_options(max_move_laps=CAP)).values()
        if result is not None
        for how in [result[1]]
    }
    assert {"never_ending", "too_long", "grand_slam", "both_ends", "front_row",
            "two_captures_first", "opponent_cannot_move"} <= hows
