"""How fast the adjudicator settles rounds, and how fast `dealer-assist settle` answers.

Run: python bench/settle.py [--rounds N]
Prints rounds settled per second on one core (events already parsed, and from JSON text), and the
CLI's wall time from process start to answer (median of several runs).
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from dealer_assist.roundlog import RoundFold, dumps_event, settle_log  # noqa: E402
from dealer_assist.roundlog.events import RoundStart  # noqa: E402
from tests.rules.random_rounds import random_round  # noqa: E402


def typical_rounds(count: int) -> list[list]:
    rng = random.Random(21)
    return [random_round(rng, "h17-ddd-6") for _ in range(count)]


def bench_in_process(rounds: list[list]) -> float:
    start = time.perf_counter()
    for events in rounds:
        head = events[0]
        assert isinstance(head, RoundStart)
        fold = RoundFold(head)
        for event in events[1:]:
            fold.apply(event)
    return len(rounds) / (time.perf_counter() - start)


def bench_from_text(texts: list[list[str]]) -> float:
    start = time.perf_counter()
    for lines in texts:
        settle_log(lines)
    return len(texts) / (time.perf_counter() - start)


def bench_cli(runs: int) -> float:
    example = ROOT / "tests" / "data" / "rounds" / "super-bonus-1000-with-envy.jsonl"
    exe = Path(sys.executable).with_name("dealer-assist")
    command = [str(exe)] if exe.exists() else [sys.executable, "-m", "dealer_assist"]
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(
            [*command, "settle", str(example), "--json"],
            check=True,
            capture_output=True,
            cwd=ROOT if command[0] == sys.executable else tempfile.gettempdir(),
        )
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=20000)
    parser.add_argument("--cli-runs", type=int, default=15)
    args = parser.parse_args()
    rounds = typical_rounds(args.rounds)
    texts = [[dumps_event(e) for e in events] for events in rounds]
    events_per_round = sum(len(r) for r in rounds) / len(rounds)
    print(f"machine: {os.cpu_count()} cores, Python {sys.version.split()[0]}; one core used")
    print(f"typical round: h17-ddd-6, 1-7 seats, {events_per_round:.1f} events on average")
    print(f"settle, events parsed:  {bench_in_process(rounds):,.0f} rounds/s")
    print(f"settle, from JSON text: {bench_from_text(texts):,.0f} rounds/s")
    print(
        f"dealer-assist settle (CLI, median of {args.cli_runs}): "
        f"{bench_cli(args.cli_runs) * 1000:.0f} ms"
    )


if __name__ == "__main__":
    main()
