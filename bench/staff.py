"""What checking a staff PIN at the dealer's screen costs, at the default argon2id cost.

    .venv/bin/python bench/staff.py [--checks 20]

1. One right PIN checked (``StaffDesk.check``: argon2id verify, 3 passes over 64 MiB), p50/p99:
   what a sign-in, a void or a correction waits for at the screen.
2. One wrong PIN (the verify, and the failure count written to its 0600 file), p50/p99.
3. An unknown id (the verify against a decoy hash), p50/p99: close to 1 and 2, so the time taken
   does not tell which ids exist.

Prints the CPU model and core count; run it on an idle machine.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from machine import cpu_model  # noqa: E402

from dealer_assist.table.staff import StaffDesk, StaffRegistry  # noqa: E402

PIN = "482913"


def timed(check: Callable[[], object], runs: int) -> list[float]:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        check()
        times.append((time.perf_counter() - start) * 1000)
    return sorted(times)


def shown(name: str, times: list[float]) -> str:
    p99 = times[min(len(times) - 1, round(0.99 * (len(times) - 1)))]
    return f"{name:<28} p50 {statistics.median(times):7.1f} ms   p99 {p99:7.1f} ms"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--checks", type=int, default=20, help="checks of each kind")
    args = parser.parse_args()
    print(f"{cpu_model()}, {os.cpu_count()} cores, Python {platform.python_version()}")
    with tempfile.TemporaryDirectory() as folder:
        registry = StaffRegistry(Path(folder) / "bench.staff.json")
        registry.add("D-7", "dealer", PIN)
        clock = [0.0]
        desk = StaffDesk(registry, clock=lambda: clock[0])

        def wrong() -> object:
            clock[0] += 10_000.0  # past any wait: each try is checked, as a slow guesser's
            return desk.check("D-7", "000000", ("dealer",))

        def unknown() -> object:
            clock[0] += 10_000.0
            return desk.check("NOBODY", "000000", ("dealer",))

        print(shown("right PIN", timed(lambda: desk.check("D-7", PIN, ("dealer",)),
                                       args.checks)))
        print(shown("wrong PIN (count saved)", timed(wrong, args.checks)))
        print(shown("unknown id (decoy hash)", timed(unknown, args.checks)))


if __name__ == "__main__":
    main()
