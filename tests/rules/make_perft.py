"""Generate tests/rules/data/perft.json once (then review and freeze it).

    .venv/bin/python tests/rules/make_perft.py

For each position and preset: number of legal moves, of distinct successor positions
(never-ending moves excluded), of never-ending moves; for a few, the same at depth 2.
Hand-checked entries carry a ``hand_checked`` note explaining the count.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

from omweso_cam.rules import Position, RuleSet, Side, successors
from omweso_cam.rules.sample import random_position, random_setup

OUT = Path(__file__).parent / "data" / "perft.json"
PRESETS = ("seed", "traditional")

HAND_CHECKED = {
    "4,4,4,4,4,4,4,4/0,0,0,0,0,0,0,0/0,0,0,0,0,0,0,0/4,4,4,4,4,4,4,4 S 0 0:0":
        "8 outer pits of 4: one move each (a1..h1); no reverse (first turn, and North's inner "
        "row is empty), no pit of 3 for a two-one; every move ends differently: 8/8 both presets",
    "4,4,4,4,4,4,4,4/0,0,0,0,0,0,0,0/0,0,0,0,0,0,0,0/3,5,4,4,4,4,4,4 S 0 0:0":
        "as the standard opening plus a1(2-1) under seed (a1 holds 3, no capture yet): "
        "seed 9 moves, traditional 8",
    "8,8,8,8,8,8,8,4/0,0,0,0,0,0,0,0/0,0,0,0,0,0,0,0/2,0,2,0,0,0,0,0 S":
        "South has a1=2, c1=2. a1: b1, c1 -> c1 holds 3, relay d1 e1 f1, end. c1: d1, e1, end. "
        "a1(cw) lands in b2 (empty) so no reverse: 2 moves, 2 positions",
    "8,8,8,8,8,8,8,4/0,0,0,0,0,0,0,0/0,0,0,0,0,0,0,2/0,0,0,0,0,0,0,2 S":
        "South h1=2, h2=2. h1: h2 (3), g2 (1): end. h2 (circuit 8): g2, f2: end. North's inner "
        "row is empty so nothing can be captured: 2 moves, 2 positions",
}


def perft(position: Position, rules: RuleSet, depth: int) -> dict[str, int]:
    """Counts at depth 1 (and 2): moves, distinct successors, never-ending moves."""
    found = successors(position, rules)
    after = {o.position for _, o in found if not o.never_ending}
    counts = {
        "moves": len(found),
        "successors": len(after),
        "never_ending": sum(1 for _, o in found if o.never_ending),
    }
    if depth >= 2:
        moves2 = 0
        positions2: set[Position] = set()
        for _, outcome in found:
            if outcome.never_ending or outcome.result is not None:
                continue
            second = successors(outcome.position, rules)
            moves2 += len(second)
            positions2.update(o.position for _, o in second if not o.never_ending)
        counts["moves_depth2"] = moves2
        counts["successors_depth2"] = len(positions2)
    return counts


def positions() -> list[tuple[str, Position, int]]:
    """(category, position, depth) for every entry of the table."""
    rng = random.Random(20261129)
    out: list[tuple[str, Position, int]] = []
    out.append(("opening", Position.standard(), 2))
    out.append(("opening", Position.from_notation(
        "4,4,4,4,4,4,4,4/0,0,0,0,0,0,0,0/0,0,0,0,0,0,0,0/3,5,4,4,4,4,4,4 S 0 0:0"), 2))
    out.append(("opening", Position.from_notation(
        "4,4,4,4,4,4,4,4/0,0,0,0,0,0,0,0/0,0,0,0,1,1,1,1/4,4,4,4,4,4,4,0 N 1 0:0"), 1))
    out.append(("opening", Position.from_notation(
        "4,4,4,4,4,4,4,4/0,0,0,0,0,0,0,0/0,0,0,0,0,0,0,0/4,4,4,4,4,4,4,4 S"), 1))
    for _ in range(6):
        out.append(("free_setup", random_setup(rng, max_per_pit=10), 1))
    out.append(("free_setup", random_setup(rng, max_per_pit=None), 2))
    out.append(("free_setup", random_setup(rng, max_per_pit=None), 1))
    while sum(1 for c, _, _ in out if c == "mid_game") < 10:
        position = random_position(rng, RuleSet.preset("seed"), plies=rng.randint(6, 20))
        if position is not None:
            depth = 2 if sum(1 for c, _, _ in out if c == "mid_game") < 2 else 1
            out.append(("mid_game", position, depth))
    while sum(1 for c, _, _ in out if c == "end_game") < 5:
        position = random_position(rng, RuleSet.preset("traditional"), plies=rng.randint(30, 70))
        if position is not None and min(position.seeds(Side.SOUTH), position.seeds(Side.NORTH)) <= 16:
            out.append(("end_game", position, 1))
    for text in (
        "2,2,1,4,4,4,4,3/2,0,1,1,1,1,1,1/2,2,1,2,2,2,3,3/3,2,0,2,2,2,2,2 S",  # E05
        "3,3,1,1,3,3,3,3/1,1,2,1,2,2,2,1/2,1,1,1,0,0,1,1/2,0,3,4,4,4,4,4 S",  # E06
        "4,4,4,0,1,4,4,3/2,0,1,1,1,1,1,1/2,2,0,0,0,4,0,2/0,3,3,3,3,3,3,4 S",  # E07
        "3,3,2,3,4,4,4,1/2,1,1,0,1,1,1,1/9,1,1,1,2,2,0,1/2,2,1,2,2,2,2,2 S",  # E15
        "0,4,7,0,1,5,1,3/12,1,2,3,2,12,8,0/0,0,0,0,0,0,0,1/0,0,0,0,0,0,0,2 N 76 3:8",
        "2,0,0,0,1,6,0,1/3,0,0,0,4,4,0,1/7,0,11,0,2,3,4,3/1,1,3,1,3,2,0,1 S 5 1:0",
    ):
        out.append(("reverse", Position.from_notation(text), 2 if text.startswith("2,2,1") else 1))
    for text in list(HAND_CHECKED)[2:]:
        out.append(("hand_checked", Position.from_notation(text), 1))
    out.append(("never_ending", Position.from_notation(  # E13: a1 never ends
        "5,5,6,6,6,6,6,6/0,0,0,0,0,0,0,0/2,1,0,2,1,0,2,1/3,0,1,2,0,1,2,0 S"), 1))
    return out


def main() -> int:
    entries: list[dict[str, Any]] = []
    for category, position, depth in positions():
        entry: dict[str, Any] = {"category": category, "position": position.notation(), "depth": depth}
        for name in PRESETS:
            entry[name] = perft(position, RuleSet.preset(name), depth)
        notes = {Position.from_notation(k).notation(): v for k, v in HAND_CHECKED.items()}
        if position.notation() in notes:
            entry["hand_checked"] = notes[position.notation()]
        entries.append(entry)
    OUT.write_text(json.dumps(entries, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {len(entries)} positions to {OUT}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
