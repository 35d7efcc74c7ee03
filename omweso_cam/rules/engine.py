"""The move engine: sowing, captures, relays, reverse laps, results (RULES.md §4-5).

Public entry points: ``legal_moves``, ``is_legal``, ``apply_move``, ``successors``,
``sowing_states`` and ``sowing_states_all``. Everything works on a flat list of 32 ints in
image order; the mover's circuit index ``c`` (0..15) maps to image index ``own[c]`` through
the precomputed tables of ``notation.CIRCUIT``, so a seed dropped is one list increment.

Two modes share one walker: *given* (one move, its choices consumed at each decision
point) and *enumerate* (depth-first over decision points, every choice list).

Never-ending moves (§4.8) are detected exactly, by repetition of the state at the start
of an initial or relay lap after its direction is chosen: (board, origin, hand,
direction, choices used). Storing every state is not needed. Seed by seed, sowing is
injective: from a board, the pit being sown and the seeds in hand, the step before is
unique (a pit just emptied means a lift, otherwise a drop). So within a deterministic
stretch - no capture (the opponent only loses seeds, so no earlier state can come back
after one) and no choice used up - the first state to repeat is the stretch's first one,
the *anchor*; comparing each lap start with the anchor is exact, with O(1) memory.
Example E13 repeats its initial state after 16 laps; random end-games hold cycles of
25,000 and 23.7 million laps, hence the ``max_move_laps`` budget of the RuleSet: a move
still running after that many laps (far beyond what anyone sows within the tournament's
three minutes) is reported as ``too_long`` and, like a never-ending one, annuls the game
(or is forbidden). Set ``max_move_laps=None`` for an unbounded search.

In enumerate mode the search stops at the first repeated state on its path: the move
found there (the path's choices, trailing ccw dropped) is exactly the never-ending move
``apply_move`` also reports. A move that goes round such a loop and only later takes a
reverse lap is still accepted by ``apply_move`` (it is finite), but ``legal_moves`` does
not list it: it ends in the same position as the listed move without the loop, and
listing every number of turns round the loop would make the list infinite.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple

from omweso_cam.rules.notation import (
    CCW,
    CIRCUIT,
    CW,
    Move,
    NotationError,
    Position,
    Side,
    circuit_index,
    owner,
    square_name,
)
from omweso_cam.rules.ruleset import NEVER_ENDING, TOO_LONG, RuleSet

INITIAL = "initial"
RELAY = "relay"
CAPTURE = "capture"
CAPTURE_AFTER_CW = "capture_after_cw"
TWO_ONE = "two_one"
LAP_KINDS = (INITIAL, RELAY, CAPTURE, CAPTURE_AFTER_CW, TWO_ONE)

END = "end"
THEN_RELAY = "relay"
THEN_CAPTURE = "capture"

LIFT = "lift"
DROP = "drop"

#: Default cap on the states recorded per move by ``sowing_states_all``.
DEFAULT_MAX_STATES = 5000

#: End pits (RULES.md §1): own inner circuit 8 and 15.
END_PITS = (8, 15)

#: Lap kinds that may be sown clockwise under each reverse_scope (see ruleset.REVERSE_SCOPES).
_CW_KINDS: dict[str, frozenset[str]] = {
    "any_lap": frozenset({INITIAL, RELAY, CAPTURE, CAPTURE_AFTER_CW}),
    "wikipedia_literal": frozenset({INITIAL, RELAY}),
    "initial_only": frozenset({INITIAL}),
    "none": frozenset(),
}

_CCW_STEP = 1
_CW_STEP = -1
_DIRECTION_NAME = {_CCW_STEP: CCW, _CW_STEP: CW}
_STEP_OF = {CCW: _CCW_STEP, CW: _CW_STEP}


class IllegalMoveError(ValueError):
    """A move that the rules do not allow in the given position; the message says why."""


@dataclass(frozen=True, slots=True)
class GameResult:
    """How a game ended. ``winner`` is None only for a never-ending, annulled game.

    Its JSON form (records, the store, events, the CLI) is ``to_dict()``:
    ``{"winner": "S" | "N" | None, "how": ..., "points": ...}``; ``from_dict`` reads it back.
    """

    winner: Side | None
    how: str
    points: int

    def to_dict(self) -> dict[str, Any]:
        """``{"winner": "S" | "N" | None, "how": str, "points": int}``."""
        return {"winner": None if self.winner is None else self.winner.value, "how": self.how,
                "points": self.points}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> GameResult:
        """Read ``to_dict()`` output; raises NotationError for a missing key or a bad winner."""
        try:
            winner, how, points = data["winner"], data["how"], data["points"]
        except (KeyError, TypeError):
            raise NotationError(f"a game result needs winner, how and points, got {data!r}") from None
        if not isinstance(how, str) or isinstance(points, bool) or not isinstance(points, int):
            raise NotationError(f"bad game result {data!r}: how is text, points a whole number")
        return cls(None if winner is None else Side.parse(winner), how, points)


class Lap(NamedTuple):
    """One lap of a move: where it started, which way, how many seeds, and what followed.

    ``origin`` and ``landing`` are square names; ``then`` is ``"end"``, ``"relay"`` or
    ``"capture"``; ``captured`` counts the seeds taken when ``then == "capture"``.
    ``kind``: initial, relay, capture (captured seeds after a counter-clockwise capture),
    capture_after_cw (captured seeds after a clockwise capture), two_one.
    An immutable named tuple rather than a dataclass: long moves have thousands of laps,
    and a tuple is built several times faster.
    """

    kind: str
    origin: str
    direction: str
    hand: int
    landing: str
    then: str
    captured: int = 0


@dataclass(frozen=True, slots=True)
class Outcome:
    """The result of applying a move.

    ``position`` is the position after the move. For a never-ending move (§4.8) the game
    is annulled: ``never_ending`` is True, ``position`` is the position *before* the move
    and ``result`` is ``GameResult(None, "never_ending", 0)``; ``laps`` runs until the
    repeated state was found.
    """

    position: Position
    laps: tuple[Lap, ...]
    result: GameResult | None
    never_ending: bool = False

    @property
    def captured(self) -> bool:
        """Whether the move contained a capture."""
        return any(lap.then == THEN_CAPTURE for lap in self.laps)


class SowingState(NamedTuple):
    """The board a camera could see part-way through a move.

    ``board``: 32 counts in image order, seeds in the hand NOT on it (so it sums to
    64 - ``in_hand``). ``lap``: 0-based lap index. ``pit``: the square just sown into
    (``event == "drop"``) or just emptied (``"lift"``: the start pit, a relay pit, or one
    of the two opponent pits of a capture, outer pit first). A named tuple, like ``Lap``, for speed.
    """

    board: tuple[int, ...]
    in_hand: int
    lap: int
    pit: str
    event: str


# --- precomputed tables ------------------------------------------------------------------

def _facing(side: Side, offset: int) -> tuple[int, ...]:
    """Image index of the opponent pit facing own circuit pit c (-1 for the outer row).

    offset 0: the opponent's outer pit c-8; offset 1: its inner pit 23-c.
    """
    opp = CIRCUIT[side.other]
    return tuple(
        -1 if c < 8 else (opp[c - 8] if offset == 0 else opp[23 - c]) for c in range(16)
    )


_FACE_OUTER = {side: _facing(side, 0) for side in Side}
_FACE_INNER = {side: _facing(side, 1) for side in Side}
_NAMES = {side: tuple(square_name(i) for i in CIRCUIT[side]) for side in Side}
_SQUARE_NAMES = tuple(square_name(i) for i in range(32))
#: Image indices along a side's circuit, three times round, so that a lap of r < 16 seeds
#: from circuit pit c is one slice: CCW ``seq[c + 1 : c + 1 + r]``, CW the same in the
#: reversed table from ``(-c & 15) + 1``.
_SEQ_CCW = {side: tuple(CIRCUIT[side][k & 15] for k in range(48)) for side in Side}
_SEQ_CW = {side: tuple(CIRCUIT[side][-k & 15] for k in range(48)) for side in Side}
_tuple_new = tuple.__new__


class _Context:
    """Per-(position, rules) constants of one search."""

    __slots__ = (
        "captures_allowed",
        "cw_kinds",
        "face_inner",
        "face_outer",
        "max_laps",
        "max_states",
        "names",
        "own",
        "position",
        "record",
        "reverse",
        "rules",
        "seq_ccw",
        "seq_cw",
        "side",
    )

    def __init__(
        self, position: Position, rules: RuleSet, record: bool, max_states: int | None = None
    ) -> None:
        side = position.side_to_move
        self.position = position
        self.rules = rules
        self.side = side
        self.own = CIRCUIT[side]
        self.face_outer = _FACE_OUTER[side]
        self.face_inner = _FACE_INNER[side]
        self.names = _NAMES[side]
        self.seq_ccw = _SEQ_CCW[side]
        self.seq_cw = _SEQ_CW[side]
        self.captures_allowed = not (rules.no_capture_first_turn and position.ply < 2)
        # The first-turn ban also forbids reverse laps; a reverse lap must capture anyway.
        self.reverse = rules.reverse_pits if self.captures_allowed else frozenset()
        self.cw_kinds = _CW_KINDS[rules.reverse_scope]
        self.record = record
        self.max_states = sys.maxsize if max_states is None else max_states
        self.max_laps = sys.maxsize if rules.max_move_laps is None else rules.max_move_laps

    def cw_captures(self, b: list[int], origin: int, hand: int) -> bool:
        """Whether a clockwise lap of ``hand`` seeds from ``origin`` would capture directly."""
        landing = (origin - hand) & 15
        if landing < 8:
            return False
        count = b[self.own[landing]] + (hand - 1) // 16 + 1
        return count >= 2 and b[self.face_outer[landing]] > 0 and b[self.face_inner[landing]] > 0

    def may_reverse(self, b: list[int], origin: int, hand: int, kind: str) -> bool:
        """Whether this lap start is a decision point (RULES.md §4.5)."""
        return (
            origin in self.reverse
            and kind in self.cw_kinds
            and self.cw_captures(b, origin, hand)
        )


class _Path:
    """Mutable state of one sowing path; copied at each branch of the search."""

    __slots__ = ("anchor", "board", "choices", "consumed", "landings", "laps", "start", "states")

    def __init__(self, board: list[int], start: int) -> None:
        self.board = board
        self.start = start
        self.choices: list[str] = []
        self.consumed = 1
        self.laps: list[tuple[str, int, int, int, int, str, int]] = []
        self.states: list[tuple[tuple[int, ...], int, int, int, str]] = []
        # First lap-start state of the current deterministic stretch (see _walk), or None.
        self.anchor: tuple[list[int], int, int, int] | None = None
        self.landings: list[int] = []  # circuit pits where captures landed, in order

    def copy(self) -> _Path:
        other = _Path(self.board[:], self.start)
        other.choices = self.choices[:]
        other.consumed = self.consumed
        other.laps = self.laps[:]
        other.states = self.states[:]
        other.anchor = self.anchor  # never mutated, safe to share
        other.landings = self.landings[:]
        return other


_Found = tuple[Move, Outcome, tuple[SowingState, ...] | None, int]


def _walk(
    ctx: _Context,
    path: _Path,
    origin: int,
    hand: int,
    kind: str,
    direction: int,
    given: tuple[str, ...] | None,
    out: list[_Found],
) -> None:
    """Sow from a lap start to the end of the move (or to a repeated state).

    ``direction`` is fixed for this first lap; later laps choose at decision points:
    from ``given`` (one move) or by branching (``given is None``: enumerate).
    """
    b = path.board
    own = ctx.own
    face_outer = ctx.face_outer
    face_inner = ctx.face_inner
    record = ctx.record
    max_laps = ctx.max_laps
    seq_ccw = ctx.seq_ccw
    seq_cw = ctx.seq_cw
    states = path.states
    laps = path.laps
    while True:
        lap_index = len(laps)
        if kind in (INITIAL, RELAY):
            anchor = path.anchor
            if anchor is None:
                path.anchor = (b[:], origin, hand, direction)
            elif origin == anchor[1] and hand == anchor[2] and direction == anchor[3] and b == anchor[0]:
                _finish(ctx, path, out, never_ending=True, given=given)
                return
        if lap_index >= max_laps:
            _finish(ctx, path, out, never_ending=True, given=given, too_long=True)
            return
        if record and len(states) >= ctx.max_states:
            record = False  # keep memory bounded: cut at a lap boundary (see sowing_states_all)
        c = origin
        if record:
            in_hand = hand
            for _ in range(hand):
                c = (c + direction) & 15
                b[own[c]] += 1
                in_hand -= 1
                states.append((tuple(b), in_hand, lap_index, own[c], DROP))
        else:
            if hand < 16:
                rounds, rest = 0, hand
            else:
                rounds, rest = divmod(hand, 16)
                for k in own:
                    b[k] += rounds
            if direction == _CCW_STEP:
                for k in seq_ccw[c + 1 : c + 1 + rest]:
                    b[k] += 1
                c = (c + hand) & 15
            else:
                first = (-c & 15) + 1
                for k in seq_cw[first : first + rest]:
                    b[k] += 1
                c = (c - hand) & 15
        landed = own[c]
        count = b[landed]
        if count == 1:
            laps.append((kind, origin, direction, hand, c, END, 0))
            _finish(ctx, path, out, never_ending=False, given=given)
            return
        if c >= 8 and ctx.captures_allowed and b[face_outer[c]] and b[face_inner[c]]:
            outer, inner = face_outer[c], face_inner[c]
            captured = b[outer] + b[inner]
            laps.append((kind, origin, direction, hand, c, THEN_CAPTURE, captured))
            path.landings.append(c)
            path.anchor = None  # the opponent lost seeds: no earlier state can come back
            b[outer] = 0
            if record:
                states.append((tuple(b), captured - b[inner], lap_index, outer, LIFT))
            b[inner] = 0
            if record:
                states.append((tuple(b), captured, lap_index, inner, LIFT))
            kind = CAPTURE if direction == _CCW_STEP else CAPTURE_AFTER_CW
            hand = captured  # sown again from the same origin, which is not lifted
        else:
            laps.append((kind, origin, direction, hand, c, THEN_RELAY, 0))
            b[landed] = 0
            if record:
                states.append((tuple(b), count, lap_index + 1, landed, LIFT))
            kind = RELAY
            origin = c
            hand = count
        # Direction of the next lap.
        direction = _CCW_STEP
        if origin in ctx.reverse and ctx.may_reverse(b, origin, hand, kind):
            if given is None:
                branch = path.copy()
                branch.choices.append(CW)
                _walk(ctx, branch, origin, hand, kind, _CW_STEP, None, out)
                path.choices.append(CCW)
            else:
                used = path.consumed
                if used < len(given):
                    direction = _STEP_OF[given[used]]
                    path.consumed = used + 1
                    path.anchor = None  # a choice used up: a new deterministic stretch


def _finish(
    ctx: _Context,
    path: _Path,
    out: list[_Found],
    *,
    never_ending: bool,
    given: tuple[str, ...] | None,
    too_long: bool = False,
) -> None:
    """Turn a finished path into (move, outcome, states, unused choices) and append it."""
    position = ctx.position
    start = ctx.names[path.start]
    if given is None:
        choices = path.choices
        while choices and choices[-1] == CCW:
            choices = choices[:-1]
        move = Move._trusted(start, tuple(choices))
    else:
        move = Move(start, given)
    names = ctx.names
    laps = tuple([
        _tuple_new(Lap, (kind, names[origin], _DIRECTION_NAME[d], hand, names[landing], then, captured))
        for kind, origin, d, hand, landing, then, captured in path.laps
    ])
    states = (
        tuple([
            _tuple_new(SowingState, (board, in_hand, lap, _SQUARE_NAMES[pit], event))
            for board, in_hand, lap, pit, event in path.states
        ])
        if ctx.record
        else None
    )
    unused = 0 if given is None else max(0, len(given) - path.consumed)
    if never_ending:
        annulled = GameResult(None, TOO_LONG if too_long else NEVER_ENDING, 0)
        out.append((move, Outcome(position, laps, annulled, True), states, unused))
        return
    side = ctx.side
    captures = position.captures
    if path.landings:
        captures = (captures[0] + 1, captures[1]) if side is Side.SOUTH else (captures[0], captures[1] + 1)
    board = tuple(path.board)
    after = Position._trusted(board, side.other, position.ply + 1, captures)
    result = _result(ctx, board, path.landings, captures)
    out.append((move, Outcome(after, laps, result, False), states, unused))


def _result(
    ctx: _Context, board: tuple[int, ...], landings: list[int], captures: tuple[int, int]
) -> GameResult | None:
    """The game result after a completed move, checked in the order of RULES.md §5."""
    rules = ctx.rules
    side = ctx.side
    opp_pits = [board[i] for i in CIRCUIT[side.other]]
    how: str | None = None
    if landings:
        if rules.grand_slam_win and landings[-1] in END_PITS and not any(opp_pits):
            how = "grand_slam"
        elif rules.both_ends_win and 8 in landings and 15 in landings:
            how = "both_ends"
        elif rules.front_row_win and not any(opp_pits[8:]):
            how = "front_row"
        elif (
            rules.two_captures_first
            and captures[side.index] == 2
            and captures[side.other.index] == 0
        ):
            how = "two_captures_first"
    if how is None and max(opp_pits) < 2:
        how = "opponent_cannot_move"
    if how is None:
        return None
    return GameResult(side, how, rules.points_for(how))


def _two_one(ctx: _Context, start: int, out: list[_Found]) -> None:
    """The two-one opening sowing (RULES.md §4.7) from own circuit pit ``start`` (holding 3)."""
    own = ctx.own
    path = _Path(list(ctx.position.board), start)
    b = path.board
    b[own[start]] = 0
    first, second = own[(start + 1) & 15], own[(start + 2) & 15]
    if ctx.record:
        path.states.append((tuple(b), 3, 0, own[start], LIFT))
    b[first] += 1
    if ctx.record:
        path.states.append((tuple(b), 2, 0, first, DROP))
    b[first] += 1
    if ctx.record:
        path.states.append((tuple(b), 1, 0, first, DROP))
    b[second] += 1
    if ctx.record:
        path.states.append((tuple(b), 0, 0, second, DROP))
    path.laps.append((TWO_ONE, start, _CCW_STEP, 3, (start + 2) & 15, END, 0))
    found: list[_Found] = []
    _finish(ctx, path, found, never_ending=False, given=())
    move, outcome, states, unused = found[0]
    out.append((Move(move.start, (), True), outcome, states, unused))


def _two_one_allowed(ctx: _Context) -> bool:
    return ctx.rules.two_one_opening and ctx.position.captures == (0, 0)


def _enumerate(
    position: Position, rules: RuleSet, record: bool, max_states: int | None = None
) -> list[_Found]:
    ctx = _Context(position, rules, record, max_states)
    out: list[_Found] = []
    board = position.board
    own = ctx.own
    two_one = _two_one_allowed(ctx)
    for start in range(16):
        hand = board[own[start]]
        if hand < 2:
            continue
        for direction in (_CCW_STEP, _CW_STEP):
            path = _Path(list(board), start)
            path.board[own[start]] = 0
            if direction == _CW_STEP and not ctx.may_reverse(path.board, start, hand, INITIAL):
                continue
            path.choices.append(_DIRECTION_NAME[direction])
            if record:
                path.states.append((tuple(path.board), hand, 0, own[start], LIFT))
            _walk(ctx, path, start, hand, INITIAL, direction, None, out)
        if two_one and hand == 3:
            _two_one(ctx, start, out)
    if rules.never_ending_policy == "forbid_move":
        out = [found for found in out if not found[1].never_ending]
    return out


def successors(position: Position, rules: RuleSet) -> list[tuple[Move, Outcome]]:
    """Every legal move with its outcome (RULES.md §4), depth-first over decision points.

    Under ``never_ending_policy="annul_game"`` never-ending moves are included with
    ``outcome.never_ending`` True; under ``"forbid_move"`` they are left out.
    """
    return [(move, outcome) for move, outcome, _, _ in _enumerate(position, rules, False)]


def legal_moves(position: Position, rules: RuleSet) -> list[Move]:
    """Every distinct legal move of the side to move (see ``successors``)."""
    return [move for move, _, _, _ in _enumerate(position, rules, False)]


def sowing_states_all(
    position: Position, rules: RuleSet, *, max_states: int | None = DEFAULT_MAX_STATES
) -> list[tuple[Move, Outcome, tuple[SowingState, ...]]]:
    """``successors`` plus, for each move, its ``sowing_states`` - one search for all moves.

    A move's states stop at the first lap boundary past ``max_states`` (None: never), so
    that a never-ending or ``too_long`` move (e.g. 25,000 laps, 170,000 states) does not
    fill the memory; every ordinary move has far fewer (the longest finite move in 1,000
    random mid-game positions took 145 laps). Compare ``len(states)`` with
    ``max_states`` or check ``outcome.never_ending`` to spot a cut list.
    """
    return [
        (move, outcome, states or ())
        for move, outcome, states, _ in _enumerate(position, rules, True, max_states)
    ]


def _run_move(position: Position, move: Move, rules: RuleSet, record: bool) -> _Found:
    """Apply one move, checking it; raises IllegalMoveError with the reason."""
    side = position.side_to_move
    if owner(move.start) is not side:
        raise IllegalMoveError(
            f"illegal move {move} in {position.notation()}: {move.start} is not a pit of "
            f"{'South' if side is Side.SOUTH else 'North'}, the side to move"
        )
    ctx = _Context(position, rules, record)
    start = circuit_index(move.start)
    hand = position.board[ctx.own[start]]

    def illegal(reason: str) -> IllegalMoveError:
        return IllegalMoveError(f"illegal move {move} in {position.notation()}: {reason}")

    if hand < 2:
        raise illegal(f"{move.start} holds {hand} seed{'s' if hand != 1 else ''}; a move starts from a pit of 2 or more")
    out: list[_Found] = []
    if move.two_one:
        if not rules.two_one_opening:
            raise illegal("the two-one opening sowing is not part of these rules")
        if not _two_one_allowed(ctx):
            raise illegal("the two-one sowing is only allowed while no capture has happened in the game")
        if hand != 3:
            raise illegal(f"a two-one sowing needs exactly 3 seeds, {move.start} holds {hand}")
        _two_one(ctx, start, out)
        return out[0]
    given = move.choices
    direction = _STEP_OF[given[0]] if given else _CCW_STEP
    path = _Path(list(position.board), start)
    path.board[ctx.own[start]] = 0
    if direction == _CW_STEP:
        if start not in rules.reverse_pits:
            raise illegal(f"{move.start} is not a reverse pit, so its first lap cannot be clockwise")
        if INITIAL not in ctx.cw_kinds:
            raise illegal(f"reverse_scope={rules.reverse_scope} allows no clockwise first lap")
        if not ctx.captures_allowed:
            raise illegal("no reverse lap on a player's first turn (first-turn capture ban)")
        if not ctx.cw_captures(path.board, start, hand):
            raise illegal(f"a clockwise lap from {move.start} does not capture directly")
    if record:
        path.states.append((tuple(path.board), hand, 0, ctx.own[start], LIFT))
    _walk(ctx, path, start, hand, INITIAL, direction, given, out)
    found = out[0]
    if found[3]:
        raise illegal(
            f"{found[3]} clockwise choice(s) left over: the move has only {len(given) - found[3] - 1} "
            "later decision point(s)"
        )
    if found[1].never_ending and rules.never_ending_policy == "forbid_move":
        raise illegal("the move never ends (never_ending_policy=forbid_move)")
    return found


def apply_move(position: Position, move: Move | str, rules: RuleSet) -> Outcome:
    """Play ``move``: the new position, the lap trace and the game result, if any.

    Raises IllegalMoveError (with the reason) for a move the rules do not allow, and
    NotationError for move text that does not parse.
    """
    if isinstance(move, str):
        move = Move.parse(move)
    return _run_move(position, move, rules, False)[1]


def is_legal(position: Position, move: Move | str, rules: RuleSet) -> bool:
    """Whether ``apply_move`` would accept the move."""
    try:
        apply_move(position, move, rules)
    except IllegalMoveError:
        return False
    return True


def sowing_states(position: Position, move: Move | str, rules: RuleSet) -> tuple[SowingState, ...]:
    """Every board a camera could see during the move: one per lift and per seed dropped.

    The first state is the start pit lifted; the last is the final board (in_hand 0).
    For a never-ending move the states stop where the repetition was found.
    """
    if isinstance(move, str):
        move = Move.parse(move)
    states = _run_move(position, move, rules, True)[2]
    return states or ()
