"""Benchmark of the floor: many simulated tables forwarding to one room over JetStream.

    python bench/floor.py [--tables 200] [--every 30] [--minutes 10] [--outage 60]

Starts its own ``nats-server -js`` on a free port, the room's consumer in a process of its own
(into a SQLite store, or PostgreSQL where the build has it; the room's CPU and memory are read
from /proc), and ``--tables`` simulated table boxes in this process, each dealing one round every
``--every`` seconds through the real table loop, recorder and forwarder, for ``--minutes``.
Quotes the ingest lag (a record's time on the box to its ingest in the room) p50/p99 (goal p99 <
2 s), records/s, the room's CPU and memory; then stops the broker for ``--outage`` seconds while
the tables deal on, restarts it and measures how fast the room catches up. Not run in CI.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.machine import cpu_model  # noqa: E402
from dealer_assist.floor.config import NatsConfig, TableKeys  # noqa: E402
from dealer_assist.floor.forwarder import FloorLink  # noqa: E402
from dealer_assist.floor.simulate import SimOptions, run_floor  # noqa: E402
from dealer_assist.surveillance.signing import read_public_keys  # noqa: E402
from dealer_assist.surveillance.store import RecordingStore, parse_time, utc_now  # noqa: E402


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class Broker:
    def __init__(self, store: Path):
        self.store, self.port = store, free_port()
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"nats://127.0.0.1:{self.port}"

    def start(self) -> None:
        self.process = subprocess.Popen(
            ["nats-server", "-js", "-a", "127.0.0.1", "-p", str(self.port), "-sd",
             str(self.store)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for _ in range(200):
            try:
                socket.create_connection(("127.0.0.1", self.port), 0.2).close()
                return
            except OSError:
                time.sleep(0.05)
        raise SystemExit("nats-server did not start")

    def stop(self) -> None:
        if self.process is not None:
            self.process.terminate()
            self.process.wait(30)
            self.process = None


def room_process(url: str, directory: str, keys: dict[str, str], out: str,
                 stop: Any) -> None:
    """The room in a process of its own: consumes until ``stop`` is set, then writes the ingest
    lags (seconds, with each record's time on the box) to ``out``."""
    from dealer_assist.floor.room import Room, RoomThread

    lags: list[tuple[float, float]] = []

    def heard(item: Any, _: Any) -> None:
        at = parse_time(item.record.at)
        lags.append((at.timestamp(), (utc_now() - at).total_seconds()))

    tables = {name: TableKeys(name, Path(path), tuple(read_public_keys(Path(path))))
              for name, path in keys.items()}
    room = RoomThread(Room(lambda: RecordingStore(directory, create=True), NatsConfig(url),
                           tables, on_record=heard, silent_after_s=3600)).start()
    stop.wait()
    room.stop(60)
    Path(out).write_text(json.dumps(lags))


def proc_cpu_s(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def proc_memory_mib(pid: int) -> tuple[float, float]:
    values = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(("VmRSS", "VmHWM")):
            values[line.split(":")[0]] = int(line.split()[1]) / 1024
    return values.get("VmRSS", 0.0), values.get("VmHWM", 0.0)


def held(directory: Path) -> int:
    try:
        store = RecordingStore(directory)
    except Exception:
        return 0
    try:
        return sum(chain.held for chain in store.chains())
    finally:
        store.close()


def make_stream(url: str) -> None:
    import nats

    from dealer_assist.floor.wire import MAX_MESSAGE, RECORDS, STREAM

    async def make() -> None:
        nc = await nats.connect(url)
        await nc.jetstream().add_stream(name=STREAM, subjects=[f"{RECORDS}.>"],
                                        max_msg_size=MAX_MESSAGE)
        await nc.close()

    asyncio.run(make())


def quantile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", type=int, default=200)
    parser.add_argument("--every", type=float, default=30.0)
    parser.add_argument("--minutes", type=float, default=10.0)
    parser.add_argument("--outage", type=float, default=60.0, help="seconds (0: none)")
    args = parser.parse_args()
    print(f"CPU: {cpu_model()}, {os.cpu_count()} cores")
    scratch = Path(tempfile.mkdtemp(prefix="bench-floor-"))
    broker = Broker(scratch / "jetstream")
    broker.start()
    make_stream(broker.url)
    link = FloorLink(broker.url)
    sim = scratch / "tables"
    run_floor(SimOptions(sim, link, args.tables, 0))  # set the tables up: their keys
    keys = {f"SIM{n:03d}": str(sim / f"SIM{n:03d}.evidence" / "table.pub")
            for n in range(1, args.tables + 1)}
    context = multiprocessing.get_context("spawn")
    stop = context.Event()
    lags_file = scratch / "lags.json"
    room_dir = scratch / "room"
    room = context.Process(target=room_process, args=(broker.url, str(room_dir), keys,
                                                      str(lags_file), stop))
    room.start()
    assert room.pid is not None
    rounds = max(1, int(args.minutes * 60 / args.every))
    outage: dict[str, float] = {}
    samples: list[tuple[float, float]] = []

    def watch() -> None:
        while room.is_alive() and not stop.is_set():
            samples.append((proc_cpu_s(room.pid), time.monotonic()))  # type: ignore[arg-type]
            time.sleep(1.0)

    threading.Thread(target=watch, daemon=True).start()

    def cut() -> None:
        time.sleep(args.minutes * 60 * 0.5)
        broker.stop()
        outage["from"] = time.time()
        time.sleep(args.outage)
        before = held(room_dir)
        broker.start()
        outage["to"], outage["held_before"] = time.time(), before

    if args.outage:
        threading.Thread(target=cut, daemon=True).start()
    began, cpu_began, wall_began = time.monotonic(), proc_cpu_s(room.pid), time.time()
    summary = run_floor(SimOptions(sim, link, args.tables, rounds, every_s=args.every),
                        until_forwarded_s=600)
    dealt = time.monotonic() - began
    total = summary["records"]  # every record in the tables' stores, set-up ones too
    deadline = time.monotonic() + 600
    while held(room_dir) < total and time.monotonic() < deadline:
        time.sleep(0.5)
    finished = time.monotonic()
    cpu = proc_cpu_s(room.pid) - cpu_began
    rss, peak = proc_memory_mib(room.pid)
    stop.set()
    room.join(120)
    broker.stop()
    lags = json.loads(lags_file.read_text())
    # the set-up records wait for the room to start, and the outage's for the broker: left out
    steady = [lag for at, lag in lags if at >= wall_began
              and (not outage or not outage["from"] - 5 <= at <= outage["to"] + 60)]
    print(f"tables {args.tables}, one round every {args.every:g} s each, {args.minutes:g} min: "
          f"{summary['rounds']} rounds ({summary['voided']} voided), {total} records "
          f"({summary['failures'] and 'FAILURES ' + str(summary['failures']) or 'no failures'})")
    print(f"room held {held(room_dir)} of {total} records; "
          f"{total / (finished - began):.0f} records/s over the run")
    print(f"ingest lag (box record time to room ingest), outside the outage: p50 "
          f"{statistics.median(steady):.3f} s, p99 {quantile(steady, 0.99):.3f} s, max "
          f"{max(steady):.3f} s over {len(steady)} records")
    share = 100 * cpu / (finished - began)
    print(f"room CPU {cpu:.1f} s over {finished - began:.0f} s ({share:.0f}% of one core); "
          f"memory RSS {rss:.0f} MiB, peak {peak:.0f} MiB")
    if outage:
        backlog = [(at, at + lag) for at, lag in lags if outage["from"] <= at <= outage["to"]]
        done = max((ingested for _, ingested in backlog), default=outage["to"])
        spent = max(1e-3, done - outage["to"])
        print(f"broker outage {args.outage:g} s: {len(backlog)} records recorded meanwhile, all "
              f"ingested {spent:.1f} s after the broker was back ({len(backlog) / spent:.0f} "
              f"records/s catching up, the tables dealing on)")
    print(f"the tables dealt for {dealt:.0f} s")
    shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
