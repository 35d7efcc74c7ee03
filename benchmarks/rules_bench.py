"""Benchmark: full successor enumeration (every legal move with its outcome and result).

Fixed set of random mid-game positions (seeded: random set-ups, then 4-40 random legal
moves), timed per position under each preset. Run:

    .venv/bin/python benchmarks/rules_bench.py [--positions 1000] [--seed 2026]
"""

from __future__ import annotations

import argparse
import random
import statistics
import time

from omweso_cam.rules import RuleSet, successors
from omweso_cam.rules.sample import random_positions


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--positions", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--repeat", type=int, default=3, help="time each position this many times, keep the best")
    args = parser.parse_args()

    positions = random_positions(random.Random(args.seed), RuleSet.preset("seed"), args.positions)
    print(f"{len(positions)} mid-game positions (seed {args.seed}), best of {args.repeat} per position")
    print(f"{'preset':<12} {'positions/s':>12} {'median ms':>10} {'p95 ms':>8} {'worst ms':>9} {'moves/pos':>10}")
    for name in ("seed", "traditional"):
        rules = RuleSet.preset(name)
        times: list[float] = []
        moves = 0
        for position in positions:
            best = float("inf")
            for _ in range(args.repeat):
                start = time.perf_counter()
                found = successors(position, rules)
                best = min(best, time.perf_counter() - start)
            times.append(best)
            moves += len(found)
        times_ms = sorted(t * 1000 for t in times)
        total = sum(times)
        print(
            f"{name:<12} {len(positions) / total:>12.0f} {statistics.median(times_ms):>10.3f} "
            f"{times_ms[int(0.95 * (len(times_ms) - 1))]:>8.3f} {times_ms[-1]:>9.3f} {moves / len(positions):>10.1f}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
