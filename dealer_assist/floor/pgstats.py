"""The statistics and storage queries of a :class:`.pgstore.PostgresStore` (the room page's
statistics and storage tabs), as functions of its connection: volumes of records and frames per
table and clock hour, the floor's round tallies from the search index, and the bytes the store
takes in PostgreSQL. Each reads in the caller's connection and raises what psycopg raises (the
store reports it as a RecordingError).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import psycopg

from dealer_assist.surveillance.interface import HourVolume, RoundTally


def record_volume(conn: psycopg.Connection[Any]) -> list[HourVolume]:
    """The store's own chain's records per table and clock hour (``size``: their bodies'
    characters plus 200 a record; ``rounds``: those beginning one)."""
    return [HourVolume(row[0], row[1] or "", int(row[2]), int(row[3]), int(row[4]))
            for row in conn.execute(
        "SELECT table_id, substr(at, 1, 13) AS hour, COUNT(*),"
        " SUM(length(body)) + COUNT(*) * 200, COUNT(*) FILTER (WHERE kind = 'round')"
        " FROM records WHERE chain_no = 0 AND table_id IS NOT NULL GROUP BY 1, 2")]


def frame_volume(conn: psycopg.Connection[Any]) -> list[HourVolume]:
    """The store's own chain's frames not pruned, per table and clock hour, and their bytes."""
    return [HourVolume(row[0], row[1] or "", int(row[2]), int(row[3]))
            for row in conn.execute(
        "SELECT table_id, substr(at, 1, 13), COUNT(*), SUM(size) FROM frames"
        " WHERE chain_no = 0 AND pruned_at IS NULL GROUP BY 1, 2")]


def floor_round_tallies(conn: psycopg.Connection[Any], table: str | None = None
                        ) -> list[RoundTally]:
    """The ingested chains' indexed rounds summed per table (as the records name it), clock
    hour of their start and dealer; only ``table``'s where given."""
    where = "r.chain_no > 0" + ("" if table is None else " AND r.table_id = %s")
    params: tuple[Any, ...] = () if table is None else (table,)
    group = "r.table_id, substr(r.started_at, 1, 13), r.dealer"
    joined = "JOIN rounds r ON r.chain_no = {0}.chain_no AND r.round_key = {0}.round_key"
    tallies: dict[tuple[str, str, str | None], dict[str, Any]] = {}

    def tally(row: Sequence[Any]) -> dict[str, Any]:
        return tallies.setdefault((row[0], row[1], row[2]), {
            "rounds": 0, "partial_rounds": 0, "hands_per_seat": {}, "paid_cents": 0,
            "taken_cents": 0, "payouts": {}, "alarms": {}})

    for row in conn.execute(
            f"SELECT {group}, COUNT(*), COUNT(*) FILTER (WHERE r.status = 'partial')"
            f" FROM rounds r WHERE {where} GROUP BY 1, 2, 3", params):
        tally(row).update(rounds=int(row[3]), partial_rounds=int(row[4]))
    for row in conn.execute(
            f"SELECT {group}, s.seat, SUM(s.hands), SUM(GREATEST(s.net_cents, 0)),"
            f" SUM(GREATEST(-s.net_cents, 0)) FROM round_seats s {joined.format('s')}"
            f" WHERE {where} GROUP BY 1, 2, 3, 4", params):
        found = tally(row)
        found["hands_per_seat"][int(row[3])] = int(row[4])
        found["paid_cents"] += int(row[5])
        found["taken_cents"] += int(row[6])
    for row in conn.execute(
            f"SELECT {group}, p.kind, SUM(p.amount_cents) FROM payout_lines p"
            f" {joined.format('p')} WHERE {where} GROUP BY 1, 2, 3, 4", params):
        tally(row)["payouts"][row[3]] = int(row[4])
    for row in conn.execute(
            f"SELECT {group}, a.kind, COUNT(*) FROM alarms a {joined.format('a')}"
            f" WHERE {where} GROUP BY 1, 2, 3, 4", params):
        tally(row)["alarms"][row[3]] = int(row[4])
    return [RoundTally(*key, **values) for key, values in sorted(
        tallies.items(), key=lambda item: (item[0][0], item[0][1], item[0][2] or ""))]

def floor_record_volume(conn: psycopg.Connection[Any]) -> list[HourVolume]:
    """The ingested chains' records per table box and clock hour of their time (``size``:
    their bodies' bytes plus 200 a record for the rest; ``rounds``: those beginning one)."""
    return [HourVolume(row[0], row[1] or "", int(row[2]), int(row[3]), int(row[4]))
            for row in conn.execute(
        "SELECT c.table_key, substr(r.at, 1, 13), COUNT(*), SUM(octet_length(r.body))"
        " + COUNT(*) * 200, COUNT(*) FILTER (WHERE r.kind = 'round') FROM records r"
        " JOIN chain_state c ON c.chain_no = r.chain_no WHERE r.chain_no > 0"
        " GROUP BY 1, 2")]

def floor_key_frame_volume(conn: psycopg.Connection[Any],
                           gone: Iterable[tuple[str, str, int]] = ()) -> list[HourVolume]:
    """The ingested chains' key frames (those whose bytes travel to the room with their
    record) per table box and clock hour, less ``gone`` (box, chain, seq: those the room's
    prunes deleted); ``size``: the bytes their records give."""
    boxes, chains, seqs = ([str(b) for b, _, _ in gone], [str(c) for _, c, _ in gone],
                           [int(s) for _, _, s in gone]) if gone else ([], [], [])
    return [HourVolume(row[0], row[1] or "", int(row[2]), int(row[3]))
            for row in conn.execute(
        "SELECT c.table_key, substr(f.at, 1, 13), COUNT(*), SUM(f.size) FROM frames f"
        " JOIN chain_state c ON c.chain_no = f.chain_no WHERE f.chain_no > 0 AND f.key AND"
        " (c.table_key, c.chain, f.seq) NOT IN (SELECT * FROM unnest(%s::text[],"
        " %s::text[], %s::bigint[])) GROUP BY 1, 2", (boxes, chains, seqs))]

def database_bytes(conn: psycopg.Connection[Any], schema: str) -> int:
    """Bytes ``schema`` takes in PostgreSQL: its tables, their indexes and TOAST."""
    row = conn.execute(
        "SELECT COALESCE(SUM(pg_total_relation_size(c.oid)), 0) FROM pg_class c JOIN"
        " pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = %s AND"
        " c.relkind IN ('r', 'p', 'm')", (schema,)).fetchone()
    return int(row[0]) if row else 0
