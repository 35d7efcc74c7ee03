"""Random set-ups, games and mid-game positions for tests, benchmarks, simulated and rendered scenes.

Randomness is passed in (a ``random.Random``), so every sample is reproducible.
"""

from __future__ import annotations

import random
from collections.abc import Iterator

from omweso_cam.rules.engine import Outcome, successors
from omweso_cam.rules.match import SEEDS_PER_SIDE
from omweso_cam.rules.notation import CIRCUIT, Move, Position, Side
from omweso_cam.rules.ruleset import RuleSet


def random_setup(rng: random.Random, *, max_per_pit: int | None = 10, first: Side = Side.SOUTH) -> Position:
    """A free set-up: each side's 32 seeds dropped one by one into random own pits.

    No pit gets more than ``max_per_pit`` seeds (None: no cap).
    """
    cap = SEEDS_PER_SIDE if max_per_pit is None else max_per_pit
    if cap * 16 < SEEDS_PER_SIDE:
        raise ValueError(f"max_per_pit={max_per_pit} cannot hold 32 seeds on 16 pits")
    board = [0] * 32
    for side in Side:
        pits = list(CIRCUIT[side])
        for _ in range(SEEDS_PER_SIDE):
            open_pits = [i for i in pits if board[i] < cap]
            board[rng.choice(open_pits)] += 1
    return Position(tuple(board), first, 0, (0, 0))


def random_plies(
    initial: Position, rules: RuleSet, rng: random.Random, *, max_plies: int
) -> Iterator[tuple[Move, Outcome]]:
    """Random legal moves played from ``initial``, each with its outcome (never-ending moves skipped).

    Stops after a move that ends the game, when no move is left, or after ``max_plies``.
    """
    position = initial
    for _ in range(max_plies):
        options = [(m, o) for m, o in successors(position, rules) if not o.never_ending]
        if not options:
            return
        move, outcome = rng.choice(options)
        yield move, outcome
        if outcome.result is not None:
            return
        position = outcome.position


def random_game(initial: Position, rules: RuleSet, rng: random.Random, *, max_plies: int = 60) -> list[Move]:
    """A random legal game from ``initial`` (stops at a result, a position without moves or ``max_plies``)."""
    return [move for move, _ in random_plies(initial, rules, rng, max_plies=max_plies)]


def random_position(
    rng: random.Random, rules: RuleSet, *, plies: int, standard_start: bool = False
) -> Position | None:
    """The position after ``plies`` random legal moves from a random (or the standard) set-up.

    Never-ending moves are skipped. Returns None if the game ended before ``plies``.
    """
    position = Position.standard() if standard_start else random_setup(
        rng, max_per_pit=rules.setup_max_per_pit, first=rng.choice(list(Side))
    )
    played = 0
    for _, outcome in random_plies(position, rules, rng, max_plies=plies):
        if outcome.result is not None:
            return None
        position = outcome.position
        played += 1
    return position if played == plies else None


def random_positions(
    rng: random.Random, rules: RuleSet, count: int, *, min_plies: int = 4, max_plies: int = 40
) -> list[Position]:
    """``count`` random mid-game positions (games still running) with random game lengths."""
    found: list[Position] = []
    while len(found) < count:
        position = random_position(rng, rules, plies=rng.randint(min_plies, max_plies))
        if position is not None:
            found.append(position)
    return found
