"""Benchmark of the floor: many simulated tables forwarding to one room over JetStream.

    python bench/floor.py [--tables 200] [--every 30] [--minutes 10] [--outage 60]
        [--window 1,128] [--store postgres|sqlite]
        [--url postgresql://postgres@127.0.0.1:5432/test] [--keep]

Starts its own ``nats-server -js`` on a free port, the room's consumer in a process of its own
(into the room's PostgreSQL store, a fresh schema dropped at the end unless ``--keep``; or
``--store sqlite``), and ``--tables`` simulated table boxes in this process, each dealing one
round every ``--every`` seconds through the real table loop, recorder and forwarder. The tables
deal ``--minutes`` with the broker up; halfway through, the broker is stopped for ``--outage``
seconds while the tables deal on (their stores and cursors keep what the broker cannot take),
then restarted, and the room catches up.

Quotes records/s; the ingest lag (a record's time on the box to its ingest in the room)
p50/p99/max (goal p99 < 2 s) apart for the steady phase and for the records the outage held up
(recorded from the broker's stop until the room caught up, or in flight when it stopped); the
records the room lacked when the broker came back, how long it took to hold them and the
records/s meanwhile; the room's CPU and memory and the PostgreSQL server's CPU (read from /proc:
utime + stime of every process named ``postgres`` on this machine, plus what the server's exited
backends left in its cutime + cstime, before and after: other clients' work on that server
counts too), and this process's (the simulated tables and their forwarders, all in one process
as no real floor is) and its forwarders' thread's. ``--window`` runs the whole scenario once per
value given (records in flight per table's forwarder), one after the other, each with a broker,
a room and a store of its own, so that they compare side by side. Not run in CI.
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
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.machine import cpu_model  # noqa: E402
from dealer_assist.floor.config import NatsConfig, TableKeys  # noqa: E402
from dealer_assist.floor.forwarder import WINDOW, FloorLink  # noqa: E402
from dealer_assist.floor.simulate import SimOptions, run_floor  # noqa: E402
from dealer_assist.surveillance.interface import RecordStore  # noqa: E402
from dealer_assist.surveillance.signing import read_public_keys  # noqa: E402
from dealer_assist.surveillance.store import RecordingStore, parse_time, utc_now  # noqa: E402

CLOCK_TICK = os.sysconf("SC_CLK_TCK")


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


@dataclass(frozen=True)
class RoomStore:
    """Where the room keeps what it ingests: a SQLite store in ``directory``, or the PostgreSQL
    schema ``schema`` at ``url`` (its frame files in ``directory``)."""

    kind: str  # "postgres" or "sqlite"
    directory: str
    url: str = ""
    schema: str = ""

    def open(self, create: bool = False) -> RecordStore:
        if self.kind == "sqlite":
            return RecordingStore(self.directory, create=create)
        from dealer_assist.floor.pgstore import PostgresStore

        return PostgresStore(self.url, self.directory, schema=self.schema, create=create)

    def describe(self) -> str:
        if self.kind == "sqlite":
            return "SQLite (a file of the bench's scratch folder)"
        from dealer_assist.floor.pgstore import describe_url

        return f"PostgreSQL {describe_url(self.url)} (schema {self.schema})"

    def held(self) -> int:
        """Records of other tables' chains the room holds (0 while it cannot be read)."""
        try:
            store = self.open()
        except Exception:
            return 0
        try:
            return sum(chain.held for chain in store.chains())
        finally:
            store.close()

    def drop(self) -> None:
        """Drop the PostgreSQL schema (nothing for SQLite: the scratch folder goes)."""
        if self.kind != "postgres":
            return
        import psycopg
        from psycopg import sql

        with psycopg.connect(self.url, autocommit=True) as conn:
            conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(
                sql.Identifier(self.schema)))


def room_process(url: str, where: RoomStore, keys: dict[str, str], out: str,
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
    room = RoomThread(Room(where.open, NatsConfig(url), tables, on_record=heard,
                           silent_after_s=3600)).start()
    stop.wait()
    room.stop(60)
    Path(out).write_text(json.dumps(lags))


def _stat_fields(pid: int | str) -> tuple[str, list[str]]:
    """A process's name and its /proc stat fields from the state on."""
    text = Path(f"/proc/{pid}/stat").read_text()
    return text[text.index("(") + 1:text.rindex(")")], text[text.rindex(")") + 2:].split()


def proc_cpu_s(pid: int) -> float:
    fields = _stat_fields(pid)[1]
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICK


def postgres_cpu_s() -> float | None:
    """CPU seconds of the PostgreSQL server on this machine so far: utime + stime of every
    process named ``postgres``, plus cutime + cstime (the backends that ended, reaped by the
    postmaster); None where no such process can be read (a server elsewhere)."""
    total, found = 0, False
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            name, fields = _stat_fields(entry.name)
        except (OSError, ValueError):
            continue  # ended meanwhile
        if name == "postgres":
            found = True
            total += sum(int(value) for value in fields[11:15])
    return total / CLOCK_TICK if found else None


def proc_memory_mib(pid: int) -> tuple[float, float]:
    values = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(("VmRSS", "VmHWM")):
            values[line.split(":")[0]] = int(line.split()[1]) / 1024
    return values.get("VmRSS", 0.0), values.get("VmHWM", 0.0)


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


def lag_line(what: str, lags: list[float]) -> str:
    if not lags:
        return f"ingest lag, {what}: no records"
    return (f"ingest lag, {what}: p50 {statistics.median(lags):.3f} s, p99 "
            f"{quantile(lags, 0.99):.3f} s, max {max(lags):.3f} s over {len(lags)} records")


def forwarders_cpu_s(seen: dict[int, float]) -> float:
    """CPU seconds of this process's threads hosting forwarders: ``seen`` (thread id: seconds)
    updated with those alive now, summed (one that ended counts as last seen)."""
    for thread in threading.enumerate():
        if thread.name == "floor-forwarder" and thread.native_id is not None:
            try:
                fields = _stat_fields(f"{os.getpid()}/task/{thread.native_id}")[1]
            except (OSError, ValueError):
                continue  # ended meanwhile
            seen[thread.native_id] = (int(fields[11]) + int(fields[12])) / CLOCK_TICK
    return sum(seen.values())


@dataclass(frozen=True)
class CpuSample:
    at: float
    room: float
    postgres: float | None
    tables: float  # this process: the simulated tables and their forwarders
    forwarders: float  # its thread hosting the forwarders
    broker: tuple[int, float] | None  # the nats-server's pid and CPU seconds (None: stopped)
    stream: int | None  # the messages in the stream (None: the broker is away)


class CpuSamples:
    """CPU seconds of the room, the PostgreSQL server, the simulating process and its
    forwarders' thread, sampled each second by wall time."""

    def __init__(self, room_pid: int, broker: Broker):
        self.room_pid = room_pid
        self.broker = broker
        self.samples: list[CpuSample] = []
        self._forwarders: dict[int, float] = {}
        self._stop = threading.Event()

    def sample(self) -> None:
        process = self.broker.process
        broker = None
        if process is not None:
            try:
                broker = (process.pid, proc_cpu_s(process.pid))
            except OSError:  # stopping
                broker = None
        self.samples.append(CpuSample(time.time(), proc_cpu_s(self.room_pid), postgres_cpu_s(),
                                      proc_cpu_s(os.getpid()),
                                      forwarders_cpu_s(self._forwarders), broker,
                                      stream_messages(self.broker.url)))

    def start(self) -> CpuSamples:
        def watch() -> None:
            while not self._stop.wait(1.0):
                try:
                    self.sample()
                except OSError:  # the room ended
                    return

        self.sample()
        threading.Thread(target=watch, daemon=True).start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self.sample()

    def spent(self, since: float, until: float
              ) -> tuple[float, float | None, float, float, float | None]:
        """CPU seconds of the room, of PostgreSQL, of this process, of its forwarders' thread
        and of the broker (all of a broker started since) between the samples nearest two
        moments."""
        first, last = self.at(since), self.at(until)
        postgres = None if first.postgres is None or last.postgres is None \
            else last.postgres - first.postgres
        broker = None if last.broker is None else last.broker[1] - (
            first.broker[1] if first.broker and first.broker[0] == last.broker[0] else 0.0)
        return (last.room - first.room, postgres, last.tables - first.tables,
                last.forwarders - first.forwarders, broker)

    def at(self, moment: float) -> CpuSample:
        return min(self.samples, key=lambda sample: abs(sample.at - moment))

    def stream_reached(self, count: int, since: float) -> float | None:
        """The first sample's time, from ``since``, at which the stream held ``count``."""
        return next((sample.at for sample in self.samples if sample.at >= since
                     and sample.stream is not None and sample.stream >= count), None)


def stream_messages(url: str) -> int | None:
    """The messages the floor's stream holds (None: the broker does not answer)."""
    import nats

    from dealer_assist.floor.wire import STREAM

    async def quiet(error: Exception) -> None:
        return None

    async def count() -> int:
        nc = await nats.connect(url, allow_reconnect=False, connect_timeout=0.5,
                                error_cb=quiet)
        try:
            return int((await nc.jetstream().stream_info(STREAM)).state.messages)
        finally:
            await nc.close()

    try:
        return asyncio.run(asyncio.wait_for(count(), 1.0))
    except Exception:  # the broker away or starting
        return None


def cpu_line(who: str, seconds: float | None, over: float) -> str:
    if seconds is None:
        return f"{who}: no process of it on this machine to read"
    return f"{who} {seconds:.1f} s over {over:.0f} s ({100 * seconds / over:.0f}% of one core)"


def report_outage(lags: list[tuple[float, float]], outage: dict[str, float], began: float,
                  cpu: CpuSamples, postgres: bool) -> tuple[set[int], list[str]]:
    """The indexes (into ``lags``) of the records the outage held up, and its figures."""
    stopped, back = outage["from"], outage["to"]
    lacked = [at + lag for at, lag in lags if at <= back < at + lag]
    done = max(lacked, default=back)
    spent = max(1e-3, done - back)
    held_up = {n for n, (at, lag) in enumerate(lags)
               if at >= began and at + lag >= stopped and at <= done}
    meanwhile = sum(1 for at, lag in lags if back < at + lag <= done)
    dealt = sum(1 for at, _ in lags if stopped <= at <= back)
    lines = [
        f"broker outage {back - stopped:.0f} s, the tables dealing on: {dealt} records recorded "
        f"meanwhile; the room lacked {len(lacked)} records when the broker came back and held "
        f"them all {spent:.1f} s later ({meanwhile / spent:.0f} records/s ingested while catching"
        " up, the tables' new records included)",
        lag_line("the records the outage held up (recorded from the broker's stop until the room "
                 "caught up, or in flight at the stop)", [lags[n][1] for n in sorted(held_up)])]
    first = min((at + lag for at, lag in lags if at + lag > back), default=back)
    owed = sum(1 for at, _ in lags if at <= back)  # every record recorded by then, set-up ones too
    sent = cpu.stream_reached(owed, back)
    lines.append(f"the room ingested its first record {first - back:.1f} s after the broker came"
                 f" back; the stream held every record recorded by then " + (
                     f"{sent - back:.1f} s after it (sampled each second)" if sent is not None
                     else "at no sample"))
    room, server, tables, forwarders, broker = cpu.spent(back, done)
    lines.append(f"while catching up: {cpu_line('room CPU', room, spent)}"
                 + (f"; {cpu_line('PostgreSQL server CPU', server, spent)}" if postgres else "")
                 + f"; {cpu_line('nats-server CPU', broker, spent)}"
                 + f"; {cpu_line('the simulated tables process CPU', tables, spent)}, of it "
                 f"{cpu_line('its forwarders thread', forwarders, spent)}")
    return held_up, lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", type=int, default=200)
    parser.add_argument("--every", type=float, default=30.0)
    parser.add_argument("--minutes", type=float, default=10.0,
                        help="minutes the tables deal with the broker up")
    parser.add_argument("--outage", type=float, default=60.0, help="seconds (0: none)")
    parser.add_argument("--window", default=str(WINDOW),
                        help="records in flight per forwarder; several, comma-separated, run "
                        "the scenario once each, one after the other")
    parser.add_argument("--store", choices=("postgres", "sqlite"), default="postgres")
    parser.add_argument("--url", default="postgresql://postgres@127.0.0.1:5432/test")
    parser.add_argument("--keep", action="store_true", help="keep the PostgreSQL schema")
    args = parser.parse_args()
    windows = [int(value) for value in args.window.split(",")]
    print(f"CPU: {cpu_model()}, {os.cpu_count()} cores")
    for window in windows:
        if len(windows) > 1:
            print(f"\n== window {window}: records in flight per forwarder ==")
        scenario(args, window)


def scenario(args: argparse.Namespace, window: int) -> None:
    """The whole run with ``window`` records in flight per forwarder: its own broker, room and
    store."""
    scratch = Path(tempfile.mkdtemp(prefix="bench-floor-"))
    where = RoomStore(args.store, str(scratch / "room"), args.url,
                      f"bench_floor_{uuid.uuid4().hex[:8]}")
    where.open(create=True).close()
    print(f"room store: {where.describe()}")
    broker = Broker(scratch / "jetstream")
    try:
        run(args, scratch, where, broker, window)
    finally:
        broker.stop()
        if args.keep and args.store == "postgres":
            print(f"kept schema {where.schema}")
        else:
            where.drop()
        shutil.rmtree(scratch, ignore_errors=True)


def run(args: argparse.Namespace, scratch: Path, where: RoomStore, broker: Broker,
        window: int) -> None:
    broker.start()
    make_stream(broker.url)
    link = FloorLink(broker.url, window=window)
    sim = scratch / "tables"
    run_floor(SimOptions(sim, link, args.tables, 0))  # set the tables up: their keys
    keys = {f"SIM{n:03d}": str(sim / f"SIM{n:03d}.evidence" / "table.pub")
            for n in range(1, args.tables + 1)}
    context = multiprocessing.get_context("spawn")
    stop = context.Event()
    lags_file = scratch / "lags.json"
    room = context.Process(target=room_process, args=(broker.url, where, keys, str(lags_file),
                                                      stop))
    room.start()
    assert room.pid is not None
    rounds = max(1, int((args.minutes * 60 + args.outage) / args.every))
    outage: dict[str, float] = {}

    def cut() -> None:
        time.sleep(args.minutes * 60 * 0.5)
        broker.stop()
        outage["from"] = time.time()
        time.sleep(args.outage)
        broker.start()
        outage["to"] = time.time()

    cutter = threading.Thread(target=cut, daemon=True)
    cpu = CpuSamples(room.pid, broker).start()
    began, wall_began = time.monotonic(), time.time()
    if args.outage:
        cutter.start()
    summary = run_floor(SimOptions(sim, link, args.tables, rounds, every_s=args.every),
                        until_forwarded_s=600 + args.outage)
    dealt = time.monotonic() - began
    total = summary["records"]  # every record in the tables' stores, set-up ones too
    deadline = time.monotonic() + 600
    while where.held() < total and time.monotonic() < deadline:
        time.sleep(0.5)
    finished, wall_finished = time.monotonic(), time.time()
    cpu.stop()
    rss, peak = proc_memory_mib(room.pid)
    stop.set()
    room.join(120)
    if args.outage:
        cutter.join()
    lags = [(float(at), float(lag)) for at, lag in json.loads(lags_file.read_text())]
    print(f"tables {args.tables}, one round every {args.every:g} s each, {dealt:.0f} s of "
          f"dealing: {summary['rounds']} rounds ({summary['voided']} voided), {total} records "
          f"({summary['failures'] and 'FAILURES ' + str(summary['failures']) or 'no failures'})")
    print(f"room held {where.held()} of {total} records; "
          f"{total / (finished - began):.0f} records/s over the run")
    held_up, outage_lines = (report_outage(lags, outage, wall_began, cpu,
                                           where.kind == "postgres") if outage else (set(), []))
    # the set-up records wait for the room to start: left out
    steady = [lag for n, (at, lag) in enumerate(lags) if at >= wall_began and n not in held_up]
    print(lag_line("steady (box record time to room ingest)", steady))
    room_cpu, postgres_cpu, _, _, _ = cpu.spent(wall_began, wall_finished)
    print(f"{cpu_line('room CPU', room_cpu, finished - began)}; memory RSS {rss:.0f} MiB, "
          f"peak {peak:.0f} MiB")
    if where.kind == "postgres":
        print(f"{cpu_line('PostgreSQL server CPU', postgres_cpu, finished - began)} (every "
              "'postgres' process on this machine, /proc utime+stime+cutime+cstime before and "
              "after: other clients' work counts too)")
    for line in outage_lines:
        print(line)


if __name__ == "__main__":
    main()
