"""Matches and set-ups: points over several games, the match winner, who starts next (RULES.md §3, §5)."""

from __future__ import annotations

from dataclasses import dataclass

from omweso_cam.rules.engine import GameResult
from omweso_cam.rules.notation import CIRCUIT, Position, Side, square_name
from omweso_cam.rules.ruleset import NEVER_ENDING, TOO_LONG, RuleSet

SEEDS_PER_SIDE = 32
#: Play modes of a match (RULES.md §6): timing that the tracker enforces, not the engine.
MODES = ("classical", "contract", "blitz")


class SetupError(ValueError):
    """A set-up position the rules do not allow; the message lists every problem."""


class MatchError(ValueError):
    """A game recorded in a match that is already over, or a result that cannot be scored."""


def setup_problems(position: Position, rules: RuleSet) -> list[str]:
    """Everything wrong with ``position`` as a game's set-up (empty list: it is valid).

    A set-up is ply 0 with no captures, each side's 32 seeds on its own 16 pits, and (if
    the rules cap it) no pit above ``setup_max_per_pit``.
    """
    problems: list[str] = []
    if position.ply != 0:
        problems.append(f"a set-up is ply 0, got ply {position.ply}")
    if position.captures != (0, 0):
        problems.append(f"a set-up has no captures yet, got {position.captures[0]}:{position.captures[1]}")
    for side in Side:
        name = "South" if side is Side.SOUTH else "North"
        seeds = position.seeds(side)
        if seeds != SEEDS_PER_SIDE:
            problems.append(f"{name} has {seeds} seeds, a set-up gives each side {SEEDS_PER_SIDE}")
        cap = rules.setup_max_per_pit
        if cap is not None:
            over = [square_name(i) for i in CIRCUIT[side] if position.board[i] > cap]
            if over:
                problems.append(f"{name} has more than {cap} seeds in {', '.join(sorted(over))} (setup_max_per_pit)")
    return problems


def validate_setup(position: Position, rules: RuleSet) -> Position:
    """Return ``position`` if it is a valid set-up under ``rules``; else raise SetupError."""
    problems = setup_problems(position, rules)
    if problems:
        raise SetupError(f"bad set-up {position.notation()}: " + "; ".join(problems))
    return position


@dataclass(frozen=True)
class Match:
    """A match: the results of its games so far, in order (annulled games included).

    ``first_player`` started game 1 (chosen by lot). Who starts each later game follows
    ``rules.next_game_first``; a game annulled (never-ending or too-long move, winner None,
    0 points) is replayed, so the next game is started by the same player as the annulled one.
    """

    rules: RuleSet
    first_player: Side
    results: tuple[GameResult, ...] = ()

    def __post_init__(self) -> None:
        for number, result in enumerate(self.results, start=1):
            if result.how not in (NEVER_ENDING, TOO_LONG) and result.winner is None:
                raise MatchError(f"game {number}: result {result.how!r} has no winner")

    def points(self) -> tuple[int, int]:
        """Points of South and North so far."""
        south = sum(r.points for r in self.results if r.winner is Side.SOUTH)
        north = sum(r.points for r in self.results if r.winner is Side.NORTH)
        return south, north

    def points_of(self, side: Side) -> int:
        """Points of one side so far."""
        return self.points()[side.index]

    @property
    def winner(self) -> Side | None:
        """The match winner: first to ``match_target`` points, or a grand slam at once."""
        south = north = 0
        for result in self.results:
            if result.winner is None:
                continue
            if result.how == "grand_slam":
                return result.winner
            if result.winner is Side.SOUTH:
                south += result.points
            else:
                north += result.points
            if south >= self.rules.match_target:
                return Side.SOUTH
            if north >= self.rules.match_target:
                return Side.NORTH
        return None

    @property
    def is_over(self) -> bool:
        """Whether a side has won the match."""
        return self.winner is not None

    def first_players(self) -> tuple[Side, ...]:
        """Who started each game so far, then who starts the next one (one longer than results)."""
        starters = [self.first_player]
        for result in self.results:
            last = starters[-1]
            if result.winner is None:  # annulled: the game is replayed
                starters.append(last)
            elif self.rules.next_game_first == "alternate":
                starters.append(last.other)
            elif self.rules.next_game_first == "loser":
                starters.append(result.winner.other)
            else:
                starters.append(result.winner)
        return tuple(starters)

    @property
    def next_first_player(self) -> Side:
        """The side that starts the next game."""
        return self.first_players()[-1]

    def with_result(self, result: GameResult) -> Match:
        """The match with one more game played; raises MatchError once the match is over."""
        if self.is_over:
            winner = self.winner
            raise MatchError(f"the match is over: {winner.value if winner else '?'} has won")
        return Match(self.rules, self.first_player, (*self.results, result))
