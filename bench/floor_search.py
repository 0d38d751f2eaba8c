"""Search across a floor's rounds in the room's PostgreSQL store.

Run: python bench/floor_search.py [--rounds 1000000] [--tables 200] [--searches 50]
        [--url postgresql://postgres@127.0.0.1:5432/test] [--keep]

1. Makes ``--rounds`` rounds over ``--tables`` tables (spread over 30 days: a dealer of 50, one
   to three of seven seats, four cards, a settlement, an alarm in one round of 30, a payout
   over 500.00 in about one of 200), each table's chain hashed and signed with its own Ed25519
   key as a table box makes it (two processes), and loads them into a fresh schema through
   :meth:`PostgresStore.ingest` (its bulk path: COPY), 5,000 records a call; prints records/s.
2. Times ``--searches`` searches of each kind the floor page offers (table, a one-hour time
   range, seat, dealer, card, payout above an amount, an exact amount wagered, won or lost (a
   common one, and a rare one that most often matches nothing), alarm kind, and all of table,
   seat and card together), each for the newest 200 matches, and prints p50/p95 in milliseconds.
The schema is dropped at the end unless ``--keep``.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from tempfile import TemporaryDirectory
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.machine import cpu_model  # noqa: E402
from dealer_assist.floor.pgstore import PostgresStore  # noqa: E402
from dealer_assist.surveillance.interface import RoundQuery  # noqa: E402
from dealer_assist.surveillance.signing import Signer  # noqa: E402
from dealer_assist.surveillance.store import (  # noqa: E402
    GENESIS_HASH,
    HASH_FORMAT,
    Record,
    canonical_bytes,
    canonical_json,
    chain_hash,
    format_time,
)

START = datetime(2026, 11, 1, tzinfo=UTC)
SPAN = timedelta(days=30)
DEALERS = [f"D-{n:03d}" for n in range(50)]
CARDS = [rank + suit for rank in "A23456789JQK" for suit in "SHDC"]  # a Spanish deck: no tens
ALARMS = ["shoe", "vision", "switched-card", "misplaced"]
BATCH = 5000


def table_records(table: str, rounds: int, seed: int) -> tuple[str, list[Record]]:
    """One table's chain of ``rounds`` rounds, signed by a key of its own."""
    rng = random.Random(seed)
    signer = Signer.generate()
    chain = uuid.uuid4().hex
    records: list[Record] = []
    step = SPAN / max(1, rounds)

    def add(at: datetime, kind: str, body: Any, key: int | None = None,
            round_id: str | None = None) -> None:
        prev = records[-1].hash if records else GENESIS_HASH
        record = Record(len(records) + 1, format_time(at), table, key, round_id, kind,
                        canonical_json(body), None, None, HASH_FORMAT, prev, "")
        record = replace(record, hash=chain_hash(prev, canonical_bytes(record)))
        records.append(replace(record, signature=signer.sign(record.hash)))

    add(START, "key", {"chain": chain, "public_key": signer.public.text,
                       "key_id": signer.public.key_id, "previous": None, "why": "a new chain"},
        None)
    for number in range(1, rounds + 1):
        at = START + step * number + timedelta(milliseconds=rng.randrange(1000))
        round_id = f"{table}-{number}"
        add(at, "round", {"type": "round", "id": round_id, "dealer_id": rng.choice(DEALERS)},
            number, round_id)
        for card in rng.sample(CARDS, 4):
            add(at, "event", {"type": "card", "card": card}, number, round_id)
        if rng.randrange(30) == 0:
            add(at, "alarm", {"kind": rng.choice(ALARMS), "text": "seen"}, number, round_id)
        seats = []
        for seat in sorted(rng.sample(range(1, 8), rng.randint(1, 3))):
            net = Decimal(rng.choice(["-10.00", "-25.00", "10.00", "15.00", "25.00", "-5.00"]))
            if rng.randrange(200) == 0:
                net = Decimal(rng.randrange(50_000, 200_000)) / 100
            seats.append({"seat": seat, "player": None, "wager": "10.00", "net": str(net),
                          "hands": [{"net": str(net)}],
                          "lines": [{"kind": "main", "amount": str(net)}]})
        add(at, "settlement", {"net": str(sum(Decimal(s["net"]) for s in seats)),
                               "seats": seats}, number, round_id)
    return chain, records


def load(store: PostgresStore, tables: int, rounds: int) -> int:
    per_table = [rounds // tables + (1 if n < rounds % tables else 0) for n in range(tables)]
    count = 0
    with ProcessPoolExecutor(max_workers=2) as pool:
        made = pool.map(table_records, [f"T{n:03d}" for n in range(tables)], per_table,
                        range(tables))
        for n, (chain, records) in enumerate(made):
            for start in range(0, len(records), BATCH):
                store.ingest(f"T{n:03d}", chain, records[start:start + BATCH])
            count += len(records)
            if n % 20 == 19:
                print(f"  {n + 1} tables, {count} records", file=sys.stderr, flush=True)
    return count


def searches(tables: int) -> dict[str, Callable[[random.Random], RoundQuery]]:
    def hour(rng: random.Random) -> RoundQuery:
        since = START + timedelta(minutes=rng.randrange(int(SPAN.total_seconds() // 60)))
        return RoundQuery(since=since, until=since + timedelta(hours=1))

    return {
        "table": lambda rng: RoundQuery(table=f"T{rng.randrange(tables):03d}"),
        "time (1 h)": hour,
        "seat": lambda rng: RoundQuery(seat=rng.randint(1, 7)),
        "dealer": lambda rng: RoundQuery(dealer=rng.choice(DEALERS)),
        "card": lambda rng: RoundQuery(card=rng.choice(CARDS)),
        "amount > 500": lambda rng: RoundQuery(payout_above=Decimal("500")),
        "amount > 1500": lambda rng: RoundQuery(payout_above=Decimal("1500")),
        "amount = common": lambda rng: RoundQuery(
            amount=Decimal(rng.choice(["10.00", "15.00", "25.00", "5.00"]))),
        "amount = rare": lambda rng: RoundQuery(
            amount=Decimal(rng.randrange(50_000, 200_000)) / 100),
        "alarm": lambda rng: RoundQuery(alarm=rng.choice(ALARMS)),
        "table+seat+card": lambda rng: RoundQuery(table=f"T{rng.randrange(tables):03d}",
                                                  seat=rng.randint(1, 7),
                                                  card=rng.choice(CARDS)),
    }


def timed(store: PostgresStore, make: Callable[[random.Random], RoundQuery],
          count: int) -> Iterator[tuple[float, int]]:
    rng = random.Random(7)
    for _ in range(count):
        query = make(rng)
        began = time.perf_counter()
        found = store.find_floor_rounds(query)
        yield (time.perf_counter() - began) * 1000, len(found)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=1_000_000)
    parser.add_argument("--tables", type=int, default=200)
    parser.add_argument("--searches", type=int, default=50)
    parser.add_argument("--url", default="postgresql://postgres@127.0.0.1:5432/test")
    parser.add_argument("--keep", action="store_true", help="keep the schema afterwards")
    parser.add_argument("--schema", help="search the floor a run with --keep loaded into this "
                        "schema (give its --tables), loading nothing")
    args = parser.parse_args()
    print(f"CPU: {cpu_model()}, {os.cpu_count()} cores")
    schema = args.schema or f"bench_floor_{uuid.uuid4().hex[:8]}"
    with TemporaryDirectory() as frames:
        store = PostgresStore(args.url, frames, schema=schema, create=args.schema is None)
        try:
            if args.schema is None:
                began = time.perf_counter()
                records = load(store, args.tables, args.rounds)
                seconds = time.perf_counter() - began
                store.analyze()
                print(f"loaded {args.rounds} rounds of {args.tables} tables: {records} signed "
                      f"records in {seconds:.0f} s ({records / seconds:.0f} records/s, signing "
                      f"and hashing included) into schema {schema}")
            print(f"{'search':<18}{'p50 ms':>8}{'p95 ms':>8}{'max ms':>8}{'found':>8}")
            for name, make in searches(args.tables).items():
                list(timed(store, make, 3))  # warm the cache
                results = list(timed(store, make, args.searches))
                times = sorted(t for t, _ in results)
                p95 = times[min(len(times) - 1, int(len(times) * 0.95))]
                print(f"{name:<18}{statistics.median(times):>8.1f}{p95:>8.1f}{times[-1]:>8.1f}"
                      f"{statistics.median(n for _, n in results):>8.0f}")
        finally:
            if not args.keep and args.schema is None:
                import psycopg
                from psycopg import sql

                with psycopg.connect(args.url, autocommit=True) as conn:
                    conn.execute(sql.SQL("DROP SCHEMA {} CASCADE").format(
                        sql.Identifier(schema)))
            store.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
