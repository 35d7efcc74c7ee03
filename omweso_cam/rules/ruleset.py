"""Rule variants as data: a frozen ``RuleSet`` with named options and two presets (RULES.md §8)."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from omweso_cam.rules.notation import PITS_PER_SIDE, TOTAL_SEEDS

#: The rule presets (``RuleSet.preset(name)``).
PRESETS = ("seed", "traditional")
#: Results in the order they are checked after a move (RULES.md §5).
RESULTS = ("grand_slam", "both_ends", "front_row", "two_captures_first", "opponent_cannot_move")
#: ``how`` of the result of a game annulled as never-ending (RULES.md §4.8).
NEVER_ENDING = "never_ending"
#: ``how`` of a move that runs past ``max_move_laps`` without ending or repeating.
TOO_LONG = "too_long"
#: Default ``max_move_laps``: far beyond any move a person can sow within the tournament's
#: three-minute limit (RULES.md §6), yet it bounds the engine's work per move.
DEFAULT_MAX_MOVE_LAPS = 100_000
#: The largest ``match_target`` and the most points one result may score: far beyond any match
#: played, and each fits the store's integers with room to add.
MAX_POINTS = 1000
#: A side's seeds (RULES.md §1): a set-up cap above this caps nothing.
SIDE_SEEDS = TOTAL_SEEDS // 2

#: Which laps may be sown clockwise from a reverse pit (RULES.md §4.5):
#:   any_lap            initial, relay and captured-seed laps (the rule book's default);
#:   wikipedia_literal  initial and relay laps only: captured seeds are never sown
#:                      clockwise, whatever the direction of the capturing lap (example E15b);
#:   initial_only       the first lap of the move only;
#:   none               no reverse laps at all.
REVERSE_SCOPES = ("any_lap", "wikipedia_literal", "initial_only", "none")
NEVER_ENDING_POLICIES = ("annul_game", "forbid_move")
NEXT_GAME_FIRST = ("alternate", "loser", "winner")

_SEED_POINTS = (
    ("grand_slam", 12),
    ("both_ends", 2),
    ("front_row", 2),
    ("two_captures_first", 2),
    ("opponent_cannot_move", 1),
)
_TRADITIONAL_POINTS = tuple((how, 1) for how in RESULTS)


class RuleSetError(ValueError):
    """An unknown preset or option, or an option value of the wrong kind."""


@dataclass(frozen=True)
class RuleSet:
    """One variant of the rules. Build it with ``RuleSet.preset(name)`` and ``with_options``.

    ``name`` is the preset it started from; ``overrides()`` lists what differs from it.
    ``points`` maps each result name to the points it scores (``points_for``).
    """

    name: str
    reverse_pits: frozenset[int]
    reverse_scope: str
    no_capture_first_turn: bool
    two_one_opening: bool
    setup_max_per_pit: int | None
    both_ends_win: bool
    front_row_win: bool
    grand_slam_win: bool
    two_captures_first: bool
    points: tuple[tuple[str, int], ...]
    match_target: int
    never_ending_policy: str
    next_game_first: str
    max_move_laps: int | None = DEFAULT_MAX_MOVE_LAPS

    def __post_init__(self) -> None:
        _validate(self)

    @classmethod
    def preset(cls, name: str = "seed") -> RuleSet:
        """``"seed"`` (the default: the brief's tournament rules) or ``"traditional"``."""
        if name == "seed":
            return cls(
                name="seed",
                reverse_pits=frozenset({0, 1, 14, 15}),
                reverse_scope="any_lap",
                no_capture_first_turn=True,
                two_one_opening=True,
                setup_max_per_pit=10,
                both_ends_win=True,
                front_row_win=True,
                grand_slam_win=True,
                two_captures_first=False,
                points=_SEED_POINTS,
                match_target=12,
                never_ending_policy="annul_game",
                next_game_first="alternate",
            )
        if name == "traditional":
            return cls(
                name="traditional",
                reverse_pits=frozenset({0, 1, 14, 15}),
                reverse_scope="any_lap",
                no_capture_first_turn=False,
                two_one_opening=False,
                setup_max_per_pit=None,
                both_ends_win=True,
                front_row_win=False,
                grand_slam_win=False,
                two_captures_first=False,
                points=_TRADITIONAL_POINTS,
                match_target=12,
                never_ending_policy="annul_game",
                next_game_first="alternate",
            )
        raise RuleSetError(f"unknown rules preset {name!r}: expected {' or '.join(map(repr, PRESETS))}")

    @staticmethod
    def option_names() -> tuple[str, ...]:
        """Every option that ``with_options`` accepts."""
        return tuple(f.name for f in dataclasses.fields(RuleSet) if f.name != "name")

    def with_options(self, **options: Any) -> RuleSet:
        """A copy with some options changed; ``points`` may be a partial mapping."""
        unknown = sorted(set(options) - set(self.option_names()))
        if unknown:
            raise RuleSetError(
                f"unknown rules option(s) {', '.join(unknown)}; known: {', '.join(self.option_names())}"
            )
        changes = dict(options)
        if "reverse_pits" in changes:
            pits = changes["reverse_pits"]
            if not isinstance(pits, Iterable) or not all(_whole(c, 0) for c in pits):
                raise RuleSetError(f"reverse_pits must be circuit indices, got {pits!r}")
            changes["reverse_pits"] = frozenset(pits)
        if "points" in changes:
            new = changes["points"]
            if not isinstance(new, Mapping):
                raise RuleSetError(f"points must map result names to points, got {new!r}")
            merged = dict(self.points)
            for how, value in new.items():
                if how not in merged:
                    raise RuleSetError(f"unknown result {how!r} in points; known: {', '.join(RESULTS)}")
                merged[how] = value
            changes["points"] = tuple((how, merged[how]) for how in RESULTS)
        return dataclasses.replace(self, **changes)

    def with_option_strings(self, options: Mapping[str, str]) -> RuleSet:
        """``with_options`` from text values, as given on a command line (``key=value``).

        Booleans are ``true``/``false``, ``none`` is no value, ``reverse_pits`` is a
        comma-separated list of circuit indices, ``points`` is ``how:n,how:n``.
        """
        return self.with_options(**{key: _parse_value(self, key, text) for key, text in options.items()})

    def points_for(self, how: str) -> int:
        """Points scored by a game won by ``how`` (0 for a never-ending, annulled game)."""
        if how in (NEVER_ENDING, TOO_LONG):
            return 0
        for name, value in self.points:
            if name == how:
                return value
        raise RuleSetError(f"unknown result {how!r}")

    def overrides(self) -> dict[str, Any]:
        """Options that differ from this rule set's preset, as JSON-friendly values."""
        base = RuleSet.preset(self.name)
        out: dict[str, Any] = {}
        for name in self.option_names():
            value = getattr(self, name)
            if value != getattr(base, name):
                out[name] = _json_value(name, value)
        return out

    def options(self) -> dict[str, Any]:
        """Every option as JSON-friendly values."""
        return {name: _json_value(name, getattr(self, name)) for name in self.option_names()}

    @classmethod
    def from_name_and_options(cls, name: str, options: Mapping[str, Any] | None = None) -> RuleSet:
        """A preset with JSON-style overrides (as written by ``overrides()``)."""
        rules = cls.preset(name)
        return rules.with_options(**dict(options)) if options else rules


def _json_value(name: str, value: Any) -> Any:
    if name == "reverse_pits":
        return sorted(value)
    if name == "points":
        return dict(value)
    return value


def _parse_value(rules: RuleSet, key: str, text: str) -> Any:
    current = getattr(rules, key, None)
    low = text.strip().lower()
    if key not in RuleSet.option_names():
        raise RuleSetError(f"unknown rules option {key!r}; known: {', '.join(RuleSet.option_names())}")
    if key == "reverse_pits":
        if low in ("", "none"):
            return frozenset()
        return [_int(key, part) for part in low.split(",")]
    if key == "points":
        points: dict[str, int] = {}
        for part in text.split(","):
            how, _, value = part.partition(":")
            points[how.strip()] = _int(key, value)
        return points
    if isinstance(current, bool):
        if low in ("true", "yes", "on", "1"):
            return True
        if low in ("false", "no", "off", "0"):
            return False
        raise RuleSetError(f"option {key} takes true or false, got {text!r}")
    if key in ("setup_max_per_pit", "max_move_laps"):
        return None if low == "none" else _int(key, low)
    if isinstance(current, int):
        return _int(key, low)
    return text.strip()


def _int(key: str, text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise RuleSetError(f"option {key} takes a whole number, got {text!r}") from None


def _whole(value: Any, lowest: int, highest: int | None = None) -> bool:
    """``value`` is a whole number (not a bool) from ``lowest`` to ``highest`` (None: no limit)."""
    return (isinstance(value, int) and not isinstance(value, bool) and value >= lowest
            and (highest is None or value <= highest))


def _validate(rules: RuleSet) -> None:
    def need(ok: bool, message: str) -> None:
        if not ok:
            raise RuleSetError(message)

    need(rules.name in PRESETS, f"unknown rules preset {rules.name!r}")
    need(
        isinstance(rules.reverse_pits, frozenset) and all(
            _whole(c, 0, PITS_PER_SIDE - 1) for c in rules.reverse_pits
        ),
        f"reverse_pits must be circuit indices 0..15, got {rules.reverse_pits!r}",
    )
    need(rules.reverse_scope in REVERSE_SCOPES,
         f"reverse_scope must be one of {', '.join(REVERSE_SCOPES)}, got {rules.reverse_scope!r}")
    for flag in ("no_capture_first_turn", "two_one_opening", "both_ends_win", "front_row_win",
                 "grand_slam_win", "two_captures_first"):
        need(isinstance(getattr(rules, flag), bool), f"{flag} must be true or false")
    need(rules.setup_max_per_pit is None or _whole(rules.setup_max_per_pit, 2, SIDE_SEEDS),
         f"setup_max_per_pit must be none or a number 2..{SIDE_SEEDS}, got {rules.setup_max_per_pit!r}")
    need(
        tuple(how for how, _ in rules.points) == RESULTS and all(_whole(v, 0, MAX_POINTS) for _, v in rules.points),
        f"points must give a number 0..{MAX_POINTS} for each of {', '.join(RESULTS)}",
    )
    need(_whole(rules.match_target, 1, MAX_POINTS),
         f"match_target must be a number 1..{MAX_POINTS}, got {rules.match_target!r}")
    need(rules.max_move_laps is None or _whole(rules.max_move_laps, 1),
         f"max_move_laps must be none or a number >= 1, got {rules.max_move_laps!r}")
    need(rules.never_ending_policy in NEVER_ENDING_POLICIES,
         f"never_ending_policy must be one of {', '.join(NEVER_ENDING_POLICIES)}")
    need(rules.next_game_first in NEXT_GAME_FIRST,
         f"next_game_first must be one of {', '.join(NEXT_GAME_FIRST)}")
