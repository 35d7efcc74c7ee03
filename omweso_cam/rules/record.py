"""Game records (our "PGN"): tags, rules, set-up and every ply with the position after it.

Text form::

    [Event "Club night"]
    [South "Alice"]
    [North "Bob"]
    [Rules "seed"]
    [Options "reverse_scope=none; two_one_opening=false"]
    [Setup "4,4,4,4,4,4,4,4/0,0,0,0,0,0,0,0/0,0,0,0,0,0,0,0/4,4,4,4,4,4,4,4 S 0 0:0"]
    [Result "S both_ends 2"]

    1. h1 {4,4,4,4,4,4,4,4/0,0,0,0,0,0,0,0/0,0,0,0,1,1,1,1/4,4,4,4,4,4,4,0 N 1 0:0}
    2. c4 {...}

``Rules``, ``Options``, ``Setup`` and ``Result`` are reserved; other tags are free.
``Result`` is ``*`` (game not over), ``never_ending`` or ``too_long`` (annulled), or
``WINNER HOW POINTS``.
A never-ending ply is written ``N. a1 {never_ending}``. Reading a record replays every
move with the rules engine and checks every stated position and the result.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from omweso_cam.rules.engine import GameResult, IllegalMoveError, apply_move
from omweso_cam.rules.notation import Move, NotationError, Position
from omweso_cam.rules.ruleset import RuleSet, RuleSetError

RESERVED_TAGS = ("Rules", "Options", "Setup", "Result")
_TAG_RE = re.compile(r'\[([A-Za-z][A-Za-z0-9_]*)\s+"((?:[^"\\]|\\.)*)"\]')
_PLY_RE = re.compile(r"(\d+)\.\s+(\S+)\s+\{([^}]*)\}")
NEVER_ENDING_TEXT = "never_ending"
#: Move text of a ply where the referee accepted a board no legal move explains (such a
#: game has no text record; its JSON keeps the board after the ply).
REFEREE_MOVE = "*"


class RecordError(ValueError):
    """A game record that does not parse or does not replay; the message names the place."""


@dataclass(frozen=True)
class RecordedPly:
    """One ply: the move and the position after it (the position before, if never-ending)."""

    move: Move
    after: Position
    never_ending: bool = False


@dataclass(frozen=True)
class GameRecord:
    """A checked game: construction replays every ply and verifies positions and result.

    :meth:`play` checks only the ply it adds (the record it extends is already checked),
    so building a record ply by ply costs one ``apply_move`` per ply.
    """

    rules: RuleSet
    initial: Position
    plies: tuple[RecordedPly, ...] = ()
    tags: tuple[tuple[str, str], ...] = ()
    result: GameResult | None = None

    def __post_init__(self) -> None:
        for name, _ in self.tags:
            if name in RESERVED_TAGS or not re.fullmatch(r"[A-Za-z][A-Za-z0-9_]*", name):
                raise RecordError(f"bad tag name {name!r}")
        position = self.initial
        result: GameResult | None = None
        for number, ply in enumerate(self.plies, start=1):
            if result is not None:
                raise RecordError(f"ply {number} ({ply.move}): the game was already over")
            try:
                outcome = apply_move(position, ply.move, self.rules)
            except IllegalMoveError as exc:
                raise RecordError(f"ply {number}: {exc}") from None
            if outcome.never_ending != ply.never_ending or outcome.position != ply.after:
                expected = NEVER_ENDING_TEXT if outcome.never_ending else outcome.position.notation()
                stated = NEVER_ENDING_TEXT if ply.never_ending else ply.after.notation()
                raise RecordError(
                    f"ply {number} ({ply.move}): the record says {stated}, the rules give {expected}"
                )
            position, result = outcome.position, outcome.result
        if result != self.result:
            raise RecordError(f"the record's result {_result_text(self.result)!r} is not the "
                              f"result of its moves, {_result_text(result)!r}")

    @classmethod
    def _trusted(
        cls,
        rules: RuleSet,
        initial: Position,
        plies: tuple[RecordedPly, ...],
        tags: tuple[tuple[str, str], ...],
        result: GameResult | None,
    ) -> GameRecord:
        """Build without replaying: only for :meth:`play`, which has checked every ply it adds."""
        record = object.__new__(cls)
        for name, value in (("rules", rules), ("initial", initial), ("plies", plies), ("tags", tags),
                            ("result", result)):
            object.__setattr__(record, name, value)
        return record

    # -- building -------------------------------------------------------------------------
    @classmethod
    def from_moves(
        cls,
        initial: Position,
        moves: Iterable[Move | str],
        rules: RuleSet,
        *,
        tags: Mapping[str, str] | Iterable[tuple[str, str]] | None = None,
    ) -> GameRecord:
        """Replay ``moves`` from ``initial``; raises RecordError at the first illegal one."""
        record = cls(rules, initial, (), _tags(tags))
        for move in moves:
            record = record.play(move)
        return record

    def play(self, move: Move | str) -> GameRecord:
        """The record with one more ply; raises RecordError if it is illegal or the game is over."""
        number = len(self.plies) + 1
        try:
            parsed = Move.parse(move, self.position) if isinstance(move, str) else move
        except NotationError as exc:
            raise RecordError(f"ply {number}: {exc}") from None
        if self.result is not None:
            raise RecordError(f"ply {number} ({parsed}): the game is already over")
        try:
            outcome = apply_move(self.position, parsed, self.rules)
        except IllegalMoveError as exc:
            raise RecordError(f"ply {number}: {exc}") from None
        ply = RecordedPly(parsed, outcome.position, outcome.never_ending)
        # ``self`` is checked and ``ply`` was just computed by the engine: no replay needed.
        return GameRecord._trusted(self.rules, self.initial, (*self.plies, ply), self.tags, outcome.result)

    # -- queries ----------------------------------------------------------------------------
    @property
    def position(self) -> Position:
        """The current position (after the last ply)."""
        return self.plies[-1].after if self.plies else self.initial

    @property
    def moves(self) -> tuple[Move, ...]:
        """The moves, one per ply."""
        return tuple(ply.move for ply in self.plies)

    @property
    def options(self) -> dict[str, Any]:
        """Rules options that differ from the preset (``rules.overrides()``)."""
        return self.rules.overrides()

    @property
    def is_over(self) -> bool:
        """Whether the game has ended (won, or annulled as never-ending)."""
        return self.result is not None

    def tag(self, name: str, default: str | None = None) -> str | None:
        """The value of a free tag."""
        return dict(self.tags).get(name, default)

    # -- text form ----------------------------------------------------------------------------
    def to_text(self) -> str:
        """The record as text (see the module docstring); ``GameRecord.parse`` reads it back."""
        lines = [f'[{name} "{_escape(value)}"]' for name, value in self.tags]
        lines.append(f'[Rules "{self.rules.name}"]')
        overrides = self.rules.overrides()
        if overrides:
            text = "; ".join(f"{k}={_option_text(v)}" for k, v in overrides.items())
            lines.append(f'[Options "{_escape(text)}"]')
        lines.append(f'[Setup "{self.initial.notation()}"]')
        lines.append(f'[Result "{_result_text(self.result)}"]')
        lines.append("")
        for number, ply in enumerate(self.plies, start=1):
            after = NEVER_ENDING_TEXT if ply.never_ending else ply.after.notation()
            lines.append(f"{number}. {ply.move} {{{after}}}")
        return "\n".join(lines) + "\n"

    def __str__(self) -> str:
        return self.to_text()

    @classmethod
    def parse(cls, text: str) -> GameRecord:
        """Read a record written by ``to_text``; raises RecordError (line numbers included)."""
        tags: list[tuple[str, str]] = []
        reserved: dict[str, str] = {}
        plies: list[tuple[int, str, str]] = []
        for line_number, raw in enumerate(text.splitlines(), start=1):
            line = raw.strip()
            if not line or line.startswith("#"):
                continue
            tag = _TAG_RE.fullmatch(line)
            ply = _PLY_RE.fullmatch(line)
            if tag:
                name, value = tag[1], _unescape(tag[2])
                if name in RESERVED_TAGS:
                    reserved[name] = value
                else:
                    tags.append((name, value))
            elif ply:
                plies.append((line_number, ply[2], ply[3].strip()))
            else:
                raise RecordError(f"line {line_number}: cannot read {line!r}")
        if "Setup" not in reserved:
            raise RecordError("the record has no [Setup \"...\"] tag")
        rules = _rules(reserved.get("Rules", "seed"), reserved.get("Options", ""))
        try:
            initial = Position.from_notation(reserved["Setup"])
        except NotationError as exc:
            raise RecordError(f"Setup: {exc}") from None
        record = cls(rules, initial, (), tuple(tags))
        for number, (line_number, move_text, after_text) in enumerate(plies, start=1):
            try:
                record = record.play(move_text)
            except RecordError as exc:
                raise RecordError(f"line {line_number}: {exc}") from None
            _check_after(record.plies[-1], after_text, f"line {line_number}, ply {number}")
        stated = reserved.get("Result", "*")
        if stated != _result_text(record.result):
            raise RecordError(
                f"Result {stated!r} is not the result of the moves, {_result_text(record.result)!r}"
            )
        return record

    # -- JSON form -------------------------------------------------------------------------------
    def to_json(self) -> dict[str, Any]:
        """JSON-ready dict: rules, options, initial, tags, plies [{move, after}], result."""
        return {
            "rules": self.rules.name,
            "options": self.rules.overrides(),
            "initial": self.initial.notation(),
            "tags": dict(self.tags),
            "plies": [
                {"move": str(p.move), "after": None if p.never_ending else p.after.notation()}
                for p in self.plies
            ],
            "result": _result_json(self.result),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any] | str) -> GameRecord:
        """Read ``to_json`` output (a dict or its JSON text), replaying and checking it."""
        if isinstance(data, str):
            try:
                data = json.loads(data)
            except json.JSONDecodeError as exc:
                raise RecordError(f"bad record JSON: {exc}") from None
        if not isinstance(data, Mapping):
            raise RecordError("a game record must be a JSON object")
        options = data.get("options") or {}
        if not isinstance(options, Mapping):
            raise RecordError("record 'options' must be an object")
        try:
            rules = RuleSet.from_name_and_options(str(data.get("rules", "seed")), options)
            initial = Position.from_notation(data["initial"])
        except KeyError:
            raise RecordError("record needs an 'initial' position") from None
        except (RuleSetError, NotationError, TypeError) as exc:
            raise RecordError(f"bad record: {exc}") from None
        tags = data.get("tags") or {}
        if not isinstance(tags, Mapping):
            raise RecordError("record 'tags' must be an object")
        record = cls(rules, initial, (), _tags(tags))
        plies = data.get("plies") or []
        if not isinstance(plies, list):
            raise RecordError("record 'plies' must be a list")
        for number, ply in enumerate(plies, start=1):
            if not isinstance(ply, Mapping) or not isinstance(ply.get("move"), str):
                raise RecordError(f"ply {number}: expected {{'move': ..., 'after': ...}}")
            record = record.play(ply["move"])
            after = ply.get("after")
            _check_after(record.plies[-1], NEVER_ENDING_TEXT if after is None else str(after), f"ply {number}")
        stated = data.get("result")
        if stated != _result_json(record.result):
            raise RecordError(f"result {stated!r} is not the result of the moves, {_result_json(record.result)!r}")
        return record


def _check_after(ply: RecordedPly, stated: str, where: str) -> None:
    if stated == NEVER_ENDING_TEXT:
        if not ply.never_ending:
            raise RecordError(f"{where} ({ply.move}): the record says never_ending, the rules give "
                              f"{ply.after.notation()}")
        return
    try:
        position = Position.from_notation(stated)
    except NotationError as exc:
        raise RecordError(f"{where} ({ply.move}): {exc}") from None
    if ply.never_ending or position != ply.after:
        expected = NEVER_ENDING_TEXT if ply.never_ending else ply.after.notation()
        raise RecordError(f"{where} ({ply.move}): the record says {stated}, the rules give {expected}")


def _tags(tags: Mapping[str, str] | Iterable[tuple[str, str]] | None) -> tuple[tuple[str, str], ...]:
    if tags is None:
        return ()
    items = tags.items() if isinstance(tags, Mapping) else tags
    return tuple((str(k), str(v)) for k, v in items)


def _rules(name: str, options: str) -> RuleSet:
    try:
        rules = RuleSet.preset(name)
        pairs: dict[str, str] = {}
        for part in options.split(";"):
            if not part.strip():
                continue
            key, sep, value = part.partition("=")
            if not sep:
                raise RecordError(f"Options: bad entry {part.strip()!r}, expected key=value")
            pairs[key.strip()] = value.strip()
        return rules.with_option_strings(pairs)
    except RuleSetError as exc:
        raise RecordError(f"Rules/Options: {exc}") from None


def _option_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "none"
    if isinstance(value, list):
        return ",".join(map(str, value))
    if isinstance(value, dict):
        return ",".join(f"{k}:{v}" for k, v in value.items())
    return str(value)


def _result_text(result: GameResult | None) -> str:
    if result is None:
        return "*"
    if result.winner is None:
        return result.how  # annulled: never_ending or too_long
    return f"{result.winner.value} {result.how} {result.points}"


def _result_json(result: GameResult | None) -> dict[str, Any] | None:
    return None if result is None else result.to_dict()


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _unescape(value: str) -> str:
    return re.sub(r"\\(.)", lambda m: "\n" if m[1] == "n" else m[1], value)

