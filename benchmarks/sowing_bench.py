"""Benchmark: intermediate sowing states (one board per lift and per seed dropped) for
every legal move of 1,000 random mid-game positions, against plain successor enumeration.

    .venv/bin/python benchmarks/sowing_bench.py [--positions 1000] [--seed 2026]
"""

from __future__ import annotations

import argparse
import random
import statistics
import time

from omweso_cam.rules import RuleSet, sowing_states_all, successors
from omweso_cam.rules.sample import random_positions


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--positions", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--rules", default="seed")
    args = parser.parse_args()

    rules = RuleSet.preset(args.rules)
    positions = random_positions(random.Random(args.seed), RuleSet.preset("seed"), args.positions)
    print(f"{len(positions)} mid-game positions (seed {args.seed}), rules {args.rules}")
    print(f"{'what':<22} {'positions/s':>12} {'median ms':>10} {'p95 ms':>8} {'worst ms':>9} {'states/pos':>11}")
    for label, function in (("successors", successors), ("sowing_states_all", sowing_states_all)):
        times: list[float] = []
        states = 0
        counts: list[int] = []
        for position in positions:
            start = time.perf_counter()
            found = function(position, rules)
            times.append(time.perf_counter() - start)
            if function is sowing_states_all:
                counts.append(sum(len(entry[2]) for entry in found))  # type: ignore[misc]
                states += counts[-1]
        times_ms = sorted(t * 1000 for t in times)
        per_pos = f"{states / len(positions):>11.0f}" if states else f"{'-':>11}"
        print(
            f"{label:<22} {len(positions) / sum(times):>12.0f} {statistics.median(times_ms):>10.3f} "
            f"{times_ms[int(0.95 * (len(times_ms) - 1))]:>8.3f} {times_ms[-1]:>9.3f} {per_pos}"
        )
    print(f"states per position: median {statistics.median(counts):.0f}, max {max(counts)} "
          "(max_states=5000 per move bounds a never-ending move's list)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
