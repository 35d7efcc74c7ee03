"""`omweso-cam rules ...`: the rules engine on the command line (moves of a position, play a move)."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

#: Exit code for bad input (notation, options, illegal move), as argparse uses.
EXIT_BAD_INPUT = 2


def register(subparsers: Any) -> None:
    """Add ``rules moves`` and ``rules play``."""
    rules = subparsers.add_parser("rules", help="the rules engine: legal moves, play a move")
    sub = rules.add_subparsers(dest="rules_command", metavar="RULES_COMMAND")
    rules.set_defaults(func=lambda args: _help(rules))

    moves = sub.add_parser(
        "moves",
        help="every legal move of a position with the position after it",
        description="Every legal move of POSITION, one per line: MOVE  AFTER  [RESULT]. "
        "With --jsonl, read one position per stdin line and write one JSON line each.",
    )
    add_rules_arguments(moves)
    moves.add_argument("position", nargs="?", help="position notation, e.g. '4,4,.../... S 0 0:0'")
    moves.add_argument("--jsonl", action="store_true", help="positions from stdin, JSON lines out")
    moves.set_defaults(func=_moves)

    play = sub.add_parser(
        "play",
        help="play one move and print the position after it",
        description="Play MOVE in POSITION; prints the position after it (laps on stderr, "
        "or on stdout with --verbose).",
    )
    add_rules_arguments(play)
    play.add_argument("position", help="position notation")
    play.add_argument("move", help="move notation, e.g. 'e1', 'a1(cw)', 'c1(2-1)'")
    play.add_argument("--verbose", "-v", action="store_true", help="print the lap trace on stdout")
    play.set_defaults(func=_play)

    states = sub.add_parser(
        "states",
        help="the boards a camera sees during a move (one per lift and seed dropped)",
        description="Every intermediate board of MOVE in POSITION: event, pit, lap, seeds in "
        "hand, and the board (seeds in hand not on it), one per line; --json for JSON lines.",
    )
    add_rules_arguments(states)
    states.add_argument("position", help="position notation")
    states.add_argument("move", help="move notation")
    states.add_argument("--json", action="store_true", help="one JSON object per state")
    states.set_defaults(func=_states)


def add_rules_arguments(parser: argparse.ArgumentParser) -> None:
    """``--rules PRESET`` and ``--option/-o KEY=VALUE`` (read them with :func:`rules_from_cli`)."""
    parser.add_argument("--rules", default="seed", help="rules preset: seed (default) or traditional")
    parser.add_argument(
        "--option", "-o", action="append", default=[], metavar="KEY=VALUE",
        help="override a rules option, e.g. reverse_scope=none (repeatable)",
    )


def _help(parser: argparse.ArgumentParser) -> int:
    parser.print_help(sys.stderr)
    return EXIT_BAD_INPUT


def rules_from_cli(preset: str, options: list[str]) -> Any:
    """The RuleSet named by ``--rules PRESET`` with its ``--option KEY=VALUE`` overrides."""
    from omweso_cam.rules import RuleSet

    pairs: dict[str, str] = {}
    for item in options:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise ValueError(f"bad --option {item!r}: expected KEY=VALUE")
        pairs[key.strip()] = value.strip()
    rules = RuleSet.preset(preset)
    return rules.with_option_strings(pairs) if pairs else rules


def _ruleset(args: argparse.Namespace) -> Any:
    return rules_from_cli(args.rules, args.option)


def _position_and_move(args: argparse.Namespace) -> tuple[Any, Any, Any]:
    """(rules, position, move) of ``play``/``states`` (raises ValueError on bad input)."""
    from omweso_cam.rules import Move, Position

    rules = _ruleset(args)
    position = Position.from_notation(args.position)
    return rules, position, Move.parse(args.move, position)


def _fail(message: str) -> int:
    print(f"omweso-cam rules: error: {message}", file=sys.stderr)
    return EXIT_BAD_INPUT


def _result_json(outcome: Any) -> dict[str, Any] | None:
    if outcome.never_ending:
        return {"never_ending": True}
    return None if outcome.result is None else outcome.result.to_dict()


def _moves_json(position_text: str, rules: Any) -> dict[str, Any]:
    from omweso_cam.rules import Position, successors

    position = Position.from_notation(position_text)
    return {
        "position": position_text,
        "moves": [
            {
                "move": str(move),
                "after": None if outcome.never_ending else outcome.position.notation(),
                "result": _result_json(outcome),
            }
            for move, outcome in successors(position, rules)
        ],
    }


def _moves(args: argparse.Namespace) -> int:
    try:
        rules = _ruleset(args)
    except ValueError as exc:
        return _fail(str(exc))
    if args.jsonl:
        if args.position:
            return _fail("--jsonl reads positions from stdin; give no POSITION argument")
        for line in sys.stdin:
            text = line.strip().removeprefix("\ufeff")  # a file saved with a byte-order mark, piped in
            if not text:
                continue
            try:
                record = _moves_json(text, rules)
            except ValueError as exc:
                record = {"position": text, "error": str(exc)}
            print(json.dumps(record), flush=True)
        return 0
    if not args.position:
        return _fail("give a POSITION (or --jsonl to read positions from stdin)")
    try:
        record = _moves_json(args.position, rules)
    except ValueError as exc:
        return _fail(str(exc))
    for entry in record["moves"]:
        after = entry["after"] or "-"
        result = entry["result"]
        if result is None:
            tail = ""
        elif result.get("never_ending"):
            tail = "  never-ending (game annulled)"
        else:
            tail = f"  {result['winner']} wins: {result['how']} ({result['points']} pt)"
        print(f"{entry['move']}\t{after}{tail}")
    return 0


#: A lap trace longer than this many laps is shown as its head and tail only (a
#: never-ending move can run to ``max_move_laps`` laps).
TRACE_HEAD_LAPS = 40
TRACE_TAIL_LAPS = 10


def _play(args: argparse.Namespace) -> int:
    from omweso_cam.rules import apply_move

    try:
        rules, position, move = _position_and_move(args)
        outcome = apply_move(position, move, rules)
    except ValueError as exc:
        return _fail(str(exc))
    trace = sys.stdout if args.verbose else sys.stderr
    laps = outcome.laps
    for number, lap in enumerate(laps, start=1):
        if TRACE_HEAD_LAPS < number <= len(laps) - TRACE_TAIL_LAPS:
            if number == TRACE_HEAD_LAPS + 1:
                hidden = len(laps) - TRACE_HEAD_LAPS - TRACE_TAIL_LAPS
                print(f"... {hidden} laps not shown ...", file=trace)
            continue
        captured = f" ({lap.captured} seeds)" if lap.then == "capture" else ""
        print(
            f"lap {number}: {lap.kind} from {lap.origin} {lap.direction} with {lap.hand}, "
            f"last seed in {lap.landing}: {lap.then}{captured}",
            file=trace,
        )
    if outcome.never_ending:
        how = outcome.result.how if outcome.result is not None else "never_ending"
        reason = (
            f"still sowing after {len(laps)} laps (max_move_laps)"
            if how == "too_long"
            else "it repeats a state and never ends"
        )
        print(f"never-ending move ({reason}): the game is annulled", file=trace)
        print("never_ending")
        return 0
    print(outcome.position.notation())
    if outcome.result is not None:
        result = outcome.result
        winner = result.winner.value if result.winner else "nobody"
        print(f"result: {winner} wins by {result.how}, {result.points} point(s)", file=trace)
    return 0


def _states(args: argparse.Namespace) -> int:
    from omweso_cam.rules import board_notation, sowing_states

    try:
        rules, position, move = _position_and_move(args)
        states = sowing_states(position, move, rules)
    except ValueError as exc:
        return _fail(str(exc))
    for state in states:
        board = board_notation(state.board)
        if args.json:
            print(json.dumps({"event": state.event, "pit": state.pit, "lap": state.lap,
                              "in_hand": state.in_hand, "board": board}))
        else:
            print(f"{state.event:<4} {state.pit} lap {state.lap + 1:<3} hand {state.in_hand:<3} {board}")
    return 0
