"""Rounds per second of the par-sheet simulator on this machine, on one core and on all of them.

Run: PYTHONPATH=. python bench/simulate.py [--rounds N]
"""

from __future__ import annotations

import argparse
import os
import time

from dealer_assist.gamemath.simulate import GameRules, simulate


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=10_000_000)
    args = parser.parse_args()
    rules = GameRules("h17-ddd-6")
    simulate(rules, 10_000, seed=0, workers=1)  # compile or load numba's cache first
    cpus = os.cpu_count() or 1
    print(f"cpu_count={cpus}  rules={rules.name}  rounds={args.rounds:,}")
    for workers in sorted({1, cpus}):
        started = time.perf_counter()
        result = simulate(rules, args.rounds, seed=1, workers=workers)
        seconds = time.perf_counter() - started
        print(f"workers={workers}: {args.rounds / seconds:,.0f} rounds/s "
              f"({seconds:.1f} s; house edge {100 * result.house_edge:.3f}%)")


if __name__ == "__main__":
    main()
