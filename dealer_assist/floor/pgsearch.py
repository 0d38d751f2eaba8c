"""Reading the search index of a :class:`.pgstore.PostgresStore` (its tables are the
projection of :mod:`.pgprojection`): the rounds a :class:`RoundQuery` finds, each filter one
indexed condition, and the differences between the index and a projection of it afresh (for
``room verify``). Each runs in the caller's connection or transaction and raises what psycopg
raises (the store reports it as a RecordingError). Chain 0 is the store's own.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from decimal import Decimal
from typing import Any

import psycopg
from psycopg import sql

from dealer_assist.rules.money import format_money
from dealer_assist.surveillance.interface import FloorRound, IndexedRound, RoundQuery
from dealer_assist.surveillance.store import MAX_INTEGER, card_code, cents, format_time

#: the columns of a ``rounds`` row (aliased ``r``) an :class:`IndexedRound` is made of
ROUND_COLUMNS = ("r.round_key, r.table_id, r.round_id, r.dealer, r.started_at, r.ended_at,"
                 " r.status, r.note, r.net_cents, r.max_payout_cents, r.events, r.frames,"
                 " r.alarms")


def indexed_round(row: Sequence[Any]) -> IndexedRound:
    return IndexedRound(*row)


def find_rounds(conn: psycopg.Connection[Any], query: RoundQuery, *, own: bool
                ) -> list[FloorRound]:
    """The rounds matching ``query``, newest first: of the store's own chain (``own``) or of
    every ingested chain."""
    clauses = [sql.SQL("r.chain_no = 0" if own else "r.chain_no > 0")]
    params: list[Any] = []

    def where(text: str, *values: Any) -> None:
        clauses.append(sql.SQL(text))
        params.extend(values)

    if query.table:
        where("r.table_id = %s", query.table)
    if query.since:
        where("r.started_at >= %s", format_time(query.since))
    if query.until:
        where("r.started_at <= %s", format_time(query.until))
    if query.round_id:
        where("r.round_id = %s", query.round_id)
    if query.dealer is not None:
        where("r.dealer = %s", query.dealer)
    if query.seat is not None:
        if not -MAX_INTEGER <= query.seat <= MAX_INTEGER:
            return []
        where("EXISTS (SELECT 1 FROM round_seats s WHERE s.chain_no = r.chain_no AND"
              " s.round_key = r.round_key AND s.seat = %s)", query.seat)
    if query.card is not None:
        code = card_code(query.card)
        if code is None:
            return []
        where("EXISTS (SELECT 1 FROM round_cards c WHERE c.chain_no = r.chain_no AND"
              " c.round_key = r.round_key AND c.card = %s)", code)
    if query.amount is not None:
        try:
            amount = cents(query.amount)
        except ArithmeticError:
            return []
        if not -MAX_INTEGER <= amount <= MAX_INTEGER:
            return []
        # one row per round and amount, so the planner's estimate holds: it walks the
        # newest rounds for a common amount, or gathers the few rounds of a rare one
        where("(r.chain_no, r.round_key) IN (SELECT a.chain_no, a.round_key FROM"
              " round_amounts a WHERE a.amount_cents = %s)", amount)
    if query.alarm:
        if query.alarm == "*":
            where("r.alarms > 0")
        else:  # the alarmed rounds newest first (their own index), then the kind
            where("r.alarms > 0 AND EXISTS (SELECT 1 FROM alarms a WHERE"
                  " a.chain_no = r.chain_no AND a.round_key = r.round_key AND a.kind = %s)",
                  query.alarm)
    if query.payout_above is not None:
        above = max(-MAX_INTEGER, min(MAX_INTEGER, cents(query.payout_above)))
        # the round's largest seat net bounds it (indexed); a seat must still be there
        where("r.max_payout_cents > %s AND EXISTS (SELECT 1 FROM round_seats s WHERE"
              " s.chain_no = r.chain_no AND s.round_key = r.round_key AND s.net_cents > %s)",
              above, above)
    limit = max(1, min(query.limit, 5000))
    rows = conn.execute(sql.SQL(
        "SELECT c.table_key, c.chain, {round} FROM rounds r LEFT JOIN chain_state c ON"
        " c.chain_no = r.chain_no WHERE {clauses} ORDER BY r.started_at DESC,"
        " r.chain_no DESC, r.round_key DESC LIMIT {limit}").format(
            round=sql.SQL(ROUND_COLUMNS), clauses=sql.SQL(" AND ").join(clauses),
            limit=sql.Literal(limit)), params).fetchall()
    return [FloorRound(row[0] or "", row[1] or "", indexed_round(row[2:])) for row in rows]


def compare_index(cur: psycopg.Cursor[Any], tables: Mapping[str, Sequence[str]], prefix: str
                  ) -> list[str]:
    """What differs between each of the search index's ``tables`` (by the columns that name a
    row) and its copy projected afresh under ``prefix``, in the caller's transaction."""
    found: list[str] = []
    for table, names in tables.items():
        lacks = _row_names(table, cur.execute(sql.SQL(
            "SELECT {names} FROM (SELECT * FROM {rebuilt} EXCEPT ALL SELECT * FROM {kept})"
            " AS x").format(names=sql.SQL(", ").join(map(sql.Identifier, names)),
                            rebuilt=sql.Identifier(prefix + table),
                            kept=sql.Identifier(table))).fetchall())
        adds = _row_names(table, cur.execute(sql.SQL(
            "SELECT {names} FROM (SELECT * FROM {kept} EXCEPT ALL SELECT * FROM {rebuilt})"
            " AS x").format(names=sql.SQL(", ").join(map(sql.Identifier, names)),
                            rebuilt=sql.Identifier(prefix + table),
                            kept=sql.Identifier(table))).fetchall())
        parts = []
        if differ := [name for name in lacks if name in adds]:
            parts.append(f"its rows for {_listed(differ)} differ from what the records"
                         " give")
        if lacks := [name for name in lacks if name not in differ]:
            parts.append(f"it lacks rows for {_listed(lacks)}")
        if adds := [name for name in adds if name not in differ]:
            parts.append(f"it has rows for {_listed(adds)}, which no record gives")
        if parts:
            found.append(f"the search index table {table} does not match the records:"
                         f" {'; '.join(parts)}")
    return found


def _row_names(table: str, rows: Iterable[Sequence[Any]]) -> list[str]:
    def name(row: Sequence[Any]) -> str:
        where = "" if row[0] == 0 else f" of chain {row[0]}"
        if table == "round_amounts":
            return f"round #{row[1]}{where} amount {format_money(Decimal(row[2]) / 100)}"
        if table in ("rounds", "round_seats", "payout_lines"):
            return f"round #{row[1]}{where}" + (f" seat {row[2]}" if len(row) > 2 else "")
        return f"{table.removesuffix('s').replace('round_', '')} record {row[1]}{where}"

    return list(dict.fromkeys(name(row) for row in rows))


def _listed(names: list[str], shown: int = 5) -> str:
    more = len(names) - shown
    return ", ".join(names[:shown]) + (f" and {more} more" if more > 0 else "")
