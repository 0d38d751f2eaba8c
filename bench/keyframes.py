"""Benchmark: where a table's key frames go to the room.

    python bench/keyframes.py [--frames 200] [--size 60000]

Sends ``--frames`` key frames of ``--size`` bytes (random bytes, as incompressible as a JPEG)
three ways, each acknowledged before the next as the forwarder does: inside the record's own
JetStream message (what the floor does: one PubAck, one stream), into a JetStream object store
bucket, and as PostgreSQL ``bytea`` rows (each its own committed transaction). Starts its own
``nats-server -js``; PostgreSQL at 127.0.0.1:5432 (user postgres, database test) where it runs.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.floor import Broker  # noqa: E402
from bench.machine import cpu_model  # noqa: E402


async def inline(url: str, frames: list[bytes]) -> float:
    import nats

    nc = await nats.connect(url)
    js = nc.jetstream()
    await js.add_stream(name="KF", subjects=["kf.>"], max_msg_size=8 * 1024 * 1024)
    began = time.perf_counter()
    for number, frame in enumerate(frames):
        await js.publish("kf.T1", b'{"record": "..."}\n' + frame,
                         headers={"Nats-Msg-Id": f"T1.c.{number}"})
    spent = time.perf_counter() - began
    await nc.close()
    return spent


async def object_store(url: str, frames: list[bytes]) -> float:
    import nats

    nc = await nats.connect(url)
    js = nc.jetstream()
    bucket = await js.create_object_store("keyframes")
    began = time.perf_counter()
    for number, frame in enumerate(frames):
        await bucket.put(f"T1/c/{number}", frame)
    spent = time.perf_counter() - began
    await nc.close()
    return spent


def postgres(frames: list[bytes]) -> float | None:
    try:
        import psycopg
    except ImportError:
        return None
    try:
        conn = psycopg.connect("postgresql://postgres@127.0.0.1:5432/test", autocommit=True)
    except psycopg.Error:
        return None
    with conn:
        conn.execute("CREATE TEMP TABLE kf (id int primary key, data bytea not null)")
        began = time.perf_counter()
        for number, frame in enumerate(frames):
            with conn.transaction():
                conn.execute("INSERT INTO kf VALUES (%s, %s)", (number, frame))
        return time.perf_counter() - began


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frames", type=int, default=200)
    parser.add_argument("--size", type=int, default=60_000)
    args = parser.parse_args()
    print(f"CPU: {cpu_model()}, {os.cpu_count()} cores")
    frames = [os.urandom(args.size) for _ in range(args.frames)]
    scratch = Path(tempfile.mkdtemp(prefix="bench-keyframes-"))
    broker = Broker(scratch / "jetstream")
    broker.start()
    try:
        results = {"in the record's JetStream message": asyncio.run(inline(broker.url, frames)),
                   "JetStream object store": asyncio.run(object_store(broker.url, frames)),
                   "PostgreSQL bytea row": postgres(frames)}
    finally:
        broker.stop()
        shutil.rmtree(scratch, ignore_errors=True)
    megabytes = args.frames * args.size / 1e6
    for way, spent in results.items():
        if spent is None:
            print(f"{way}: not measured (no PostgreSQL here)")
        else:
            print(f"{way}: {1000 * spent / args.frames:.2f} ms a frame, "
                  f"{megabytes / spent:.1f} MB/s ({args.frames} frames of {args.size} bytes)")


if __name__ == "__main__":
    main()
