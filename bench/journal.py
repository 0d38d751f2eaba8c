"""Table journal benchmarks: what a durable append costs, and shoe frame -> durable -> acknowledged.

    .venv/bin/python bench/journal.py [--rounds 30] [--appends 2000] [--dir DIR]

1. One journal record made durable, two ways: the append-only file the table uses (write + fsync)
   and SQLite in WAL mode with ``synchronous=FULL`` (one insert, one commit), p50/p99.
2. End to end at a shoe-only table recording as a table does (its signed store written event by
   event on its own thread, the round files exported from it): the simulated shoe over TCP draws
   each card of ``--rounds`` dealt rounds; from the card stored in the shoe to the shoe hearing
   the table's ACK, which the table sends only once the card is journaled (p50/p99/max). This
   includes the simulated shoe's own send loop (it polls every 5 ms), so it is an upper bound of
   the table's share.

``--dir``: where the files go (default: a temporary folder; give the table's recording disk to
measure that disk). Prints the CPU model and core count; run it on an idle machine.
"""

from __future__ import annotations

import argparse
import os
import platform
import sqlite3
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from machine import cpu_model  # noqa: E402

from dealer_assist.rules import Card, RuleSet  # noqa: E402
from dealer_assist.shoe.simulator import ShoeSimulator, TcpLink  # noqa: E402
from dealer_assist.table.journal import (  # noqa: E402
    JOURNAL_NAME,
    Checkpoint,
    JournalEntry,
    TableJournal,
    _line,
)
from dealer_assist.table.loop import TableLoop  # noqa: E402
from dealer_assist.table.recording import EvidenceFiles, open_recording  # noqa: E402
from dealer_assist.table.runner import TableRunner  # noqa: E402
from dealer_assist.table.shoe_source import SerialShoeSource  # noqa: E402
from dealer_assist.table.simulation.world import Player, SimulatedTable  # noqa: E402
from dealer_assist.table.sources import (  # noqa: E402
    NewShoe,
    ShoeBurn,
    ShoeCard,
)

CONFIG = {"table": "BENCH", "rules": "s17-6", "decks": 6, "shoe": "dealer-assist"}


def quantiles(samples: list[float]) -> str:
    ordered = sorted(samples)

    def at(q: float) -> float:
        return ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000

    return f"p50 {at(0.5):.2f} ms, p99 {at(0.99):.2f} ms, max {ordered[-1] * 1000:.2f} ms"


def bench_storage(directory: Path, appends: int) -> None:
    entry = JournalEntry(12.345, (ShoeCard(Card.parse("7S")),), shoe=(0x1A2B3C4D, 42))
    journal = TableJournal(directory / "bench.journal", Checkpoint(CONFIG, "B", t=0.0))
    took = []
    for _ in range(appends):
        start = time.perf_counter()
        journal.append(entry)
        took.append(time.perf_counter() - start)
    journal.close()
    print(f"append-only file, write + fsync, {appends} records: {quantiles(took)}")
    database = sqlite3.connect(directory / "bench.sqlite", isolation_level=None)
    database.execute("PRAGMA journal_mode=WAL")
    database.execute("PRAGMA synchronous=FULL")
    database.execute("CREATE TABLE IF NOT EXISTS journal (id INTEGER PRIMARY KEY, record BLOB)")
    record = _line(entry.to_json())
    took = []
    for _ in range(appends):
        start = time.perf_counter()
        database.execute("BEGIN")
        database.execute("INSERT INTO journal (record) VALUES (?)", (record,))
        database.execute("COMMIT")
        took.append(time.perf_counter() - start)
    database.close()
    print(f"SQLite WAL synchronous=FULL, insert + commit, {appends} records: {quantiles(took)}")


def bench_end_to_end(directory: Path, rounds: int) -> None:
    samples: list[float] = []
    heard: dict[int, float] = {}
    stored: dict[int, float] = {}
    heard_lock = threading.Condition()

    def acknowledged(session: int, seq: int) -> None:
        with heard_lock:
            heard.setdefault(seq, time.perf_counter())
            heard_lock.notify_all()

    link = TcpLink()
    shoe = ShoeSimulator(link, on_acknowledged=acknowledged).start()
    recording = open_recording(directory / "recording", "BENCH", EvidenceFiles(
        directory / "evidence" / "BENCH.key", directory / "evidence" / "anchors.jsonl"))
    loop = TableLoop("s17-6", recording.recorder, table_id="BENCH", has_camera=False)
    loop.dealer = "D1"  # signed in (signing in: test_sign_in.py)
    journal = TableJournal(directory / "recording" / JOURNAL_NAME,
                           Checkpoint(CONFIG, "BENCH", t=time.monotonic()))
    runner = TableRunner(loop, [SerialShoeSource(link.url, defer_ack=True)], journal=journal,
                         journal_config=CONFIG, recording_pending=lambda: recording.pending)
    world = SimulatedTable(RuleSet.preset("s17-6"), [Player(1, "A"), Player(3, "B")], seed=1)
    world.camera_sees = False

    def wait_heard(seq: int) -> None:
        with heard_lock:
            if not heard_lock.wait_for(lambda: seq in heard, 10):
                raise SystemExit(f"the shoe never heard event {seq} acknowledged")

    with runner:
        for number in range(1, rounds + 1):
            for source, item in world.round(number):
                if isinstance(item, NewShoe):
                    shoe.load_shoe(item.decks)
                    seq = 1
                elif isinstance(item, ShoeCard | ShoeBurn):
                    now = time.perf_counter()
                    if isinstance(item, ShoeCard):
                        seq = shoe.draw(item.card)
                    else:
                        seq = shoe.burn(item.card)
                    stored[seq] = now
                elif source == "dealer":
                    runner.submit(item).wait(10)
                    continue
                else:
                    continue
                wait_heard(seq)
            # a fresh shoe session restarts the numbering: keep this round's figures
            samples.extend(heard[s] - stored[s] for s in stored if s in heard)
            stored.clear()
            heard.clear()
    shoe.stop()
    journal.close()
    recording.close()
    print(f"shoe card stored -> journaled -> ACK heard by the shoe, {len(samples)} cards over "
          f"{loop.rounds_played} rounds: {quantiles(samples)}")



def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--appends", type=int, default=2000)
    parser.add_argument("--dir", type=Path, default=None)
    args = parser.parse_args()
    print(f"CPU: {cpu_model()}, {os.cpu_count()} cores; Python {platform.python_version()}")
    with tempfile.TemporaryDirectory(dir=args.dir) as folder:
        directory = Path(folder)
        print(f"files in {directory}")
        bench_storage(directory, args.appends)
        bench_end_to_end(directory, args.rounds)


if __name__ == "__main__":
    main()
