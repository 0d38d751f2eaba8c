"""The search index of a :class:`.pgstore.PostgresStore` as a projection of its records:
:class:`Projection` folds one chain's records, in chain order, into rows of ``rounds``,
``round_seats``, ``payout_lines``, ``round_amounts``, ``round_cards``, ``frames`` and ``alarms``
and writes them in the caller's transaction (into the tables named with a prefix, for a
projection afresh to compare with). A record whose body the index cannot hold (altered: not a
64-bit number, a NUL character) is left out of it; verification names it. An alarm naming the
round in play (its body's ``round``) is linked to the latest round of that id of its chain and
table, also when that round is projected after it.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import psycopg
from psycopg import sql

from dealer_assist.surveillance.store import MAX_INTEGER, Record, card_code, cents


def copy_rows(cur: psycopg.Cursor[Any], table: str, columns: Sequence[str],
              rows: Iterable[Sequence[Any]]) -> None:
    """COPY ``rows`` into ``table``'s ``columns`` (the bulk path into PostgreSQL)."""
    with cur.copy(sql.SQL("COPY {} ({}) FROM STDIN").format(
            sql.Identifier(table), sql.SQL(", ").join(map(sql.Identifier, columns)))) as copy:
        for row in rows:
            copy.write_row(row)


class Unindexable(ValueError):
    """A record whose (altered) body the index cannot hold: left out of it."""


def _int(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or \
            not -MAX_INTEGER <= value <= MAX_INTEGER:
        raise Unindexable(f"not a 64-bit number: {value!r}")
    return value


def _optional_int(value: Any) -> int | None:
    return None if value is None else _int(value)


def _str(value: Any) -> str:
    text = str(value)
    if "\x00" in text:
        raise Unindexable("holds a NUL character")
    return text


def _optional_str(value: Any) -> str | None:
    return None if value is None else _str(value)


@dataclass
class _Round:
    """One round's row as the projection folds it."""

    values: dict[str, Any]
    stored: bool  # the row is in the table already (update it, not insert)
    seats: list[tuple[Any, ...]] | None = None  # replaced by a settlement (None: unchanged)
    lines: list[tuple[Any, ...]] = field(default_factory=list)


@dataclass
class _Links:
    """What links alarms to the rounds they name (``round`` in the body), while a batch folds:
    by (round id, table)."""

    latest: dict[tuple[str, str | None], int | None] = field(default_factory=dict)
    waiting: dict[tuple[str, str | None], list[int]] = field(default_factory=dict)  # stored
    linked: list[tuple[int, int]] = field(default_factory=list)  # (round key, seq) of stored


def _amounts(row: _Round) -> set[int]:
    """The amounts a settled round is found by: each seat's wager, and each seat's net and
    line amount won or lost (as a positive amount)."""
    return ({seat[4] for seat in row.seats or []} | {abs(seat[5]) for seat in row.seats or []}
            | {abs(line[4]) for line in row.lines})


_ROUND_COLUMNS = ("table_id", "round_id", "dealer", "started_at", "ended_at", "status", "note",
                  "net_cents", "max_payout_cents", "events", "frames", "alarms", "first_seq",
                  "last_seq")
_FRAME_COLUMNS = ("seq", "round_key", "table_id", "at", "event_index", "file", "sha256", "size",
                  "media_type", "width", "height", "key", "pruned_at")


class Projection:
    """Folds one chain's records, in chain order, into rows of the search index and writes
    them (into the tables named with ``prefix``: a projection afresh to compare with)."""

    def __init__(self, cur: psycopg.Cursor[Any], chain_no: int, prefix: str = ""):
        self.cur, self.chain_no, self.prefix = cur, chain_no, prefix

    def table(self, name: str) -> sql.Identifier:
        return sql.Identifier(self.prefix + name)

    def project(self, records: Sequence[Record]) -> None:
        if not records:
            return
        rounds = self._load_rounds({r.round_key for r in records if r.round_key is not None})
        links = self._waiting({r.round_id for r in records
                               if r.kind == "round" and r.round_id is not None})
        cards: list[tuple[Any, ...]] = []
        alarms: list[list[Any]] = []
        frames: dict[int, dict[str, Any]] = {}
        frame_updates: list[tuple[str, Any, int]] = []  # (column, value, seq) of stored frames
        for record in records:
            try:
                self._fold(record, rounds, cards, alarms, frames, frame_updates, links)
            except (Unindexable, KeyError, TypeError, ValueError, ArithmeticError):
                continue  # verification names the record; the index leaves it out
        self._write(rounds, cards, alarms, frames, frame_updates, links)

    def _waiting(self, round_ids: set[str]) -> _Links:
        """The stored alarms naming one of ``round_ids`` and linked to no round yet."""
        links = _Links()
        if round_ids:
            for seq, round_id, table in self.cur.execute(sql.SQL(
                    "SELECT seq, round_id, table_id FROM {} WHERE chain_no = %s AND round_key IS"
                    " NULL AND round_id = ANY(%s) ORDER BY seq").format(self.table("alarms")),
                    (self.chain_no, sorted(round_ids))).fetchall():
                links.waiting.setdefault((round_id, table), []).append(int(seq))
        return links

    def _latest(self, links: _Links, rounds: dict[int, _Round], round_id: str,
                table: str | None) -> int | None:
        """The key of the latest round of ``round_id`` on ``table`` in this chain so far (its
        row loaded into ``rounds``), or None."""
        name = (round_id, table)
        if name not in links.latest:
            row = self.cur.execute(sql.SQL(
                "SELECT MAX(round_key) FROM {} WHERE chain_no = %s AND round_id = %s AND"
                " table_id IS NOT DISTINCT FROM %s").format(self.table("rounds")),
                (self.chain_no, round_id, table)).fetchone()
            links.latest[name] = None if row is None or row[0] is None else int(row[0])
        key = links.latest[name]
        if key is not None and key not in rounds:
            rounds.update(self._load_rounds({key}))
        return key

    def _load_rounds(self, keys: set[int]) -> dict[int, _Round]:
        if not keys:
            return {}
        query = sql.SQL("SELECT round_key, {} FROM {} WHERE chain_no = %s AND"
                        " round_key = ANY(%s::bigint[])").format(
            sql.SQL(", ").join(map(sql.Identifier, _ROUND_COLUMNS)), self.table("rounds"))
        return {int(row[0]): _Round(dict(zip(_ROUND_COLUMNS, row[1:], strict=True)), True)
                for row in self.cur.execute(query, (self.chain_no, sorted(keys))).fetchall()}

    def _fold(self, record: Record, rounds: dict[int, _Round], cards: list[tuple[Any, ...]],
              alarms: list[list[Any]], frames: dict[int, dict[str, Any]],
              frame_updates: list[tuple[str, Any, int]], links: _Links) -> None:
        try:
            body = json.loads(record.body_text)
        except (ValueError, RecursionError):  # not JSON, or nested too deep to read
            return
        kind, key, seq = record.kind, record.round_key, record.seq
        if kind == "round":
            if key is None:
                return
            extra = body if isinstance(body, dict) else {}
            dealer = extra.get("dealer_id", extra.get("dealer"))
            known = rounds.get(key)
            rounds[key] = _Round({
                "table_id": _str(record.table or ""), "round_id": record.round_id,
                "dealer": _optional_str(dealer), "started_at": record.at, "ended_at": None,
                "status": "open", "note": None, "net_cents": None, "max_payout_cents": None,
                "events": 0, "frames": 0, "alarms": 0, "first_seq": seq, "last_seq": seq,
            }, known is not None and known.stored, known.seats if known else None,
                known.lines if known else [])
            if record.round_id is not None:
                rounds[key].values["alarms"] = self._link(record, key, alarms, links)
            return
        row = rounds.get(key) if key is not None else None
        if kind == "frame" and isinstance(body, dict):
            frames[seq] = {
                "seq": seq, "round_key": key, "table_id": record.table, "at": record.at,
                "event_index": _optional_int(body.get("event_index")), "file": record.file,
                "sha256": record.sha256, "size": _int(body.get("size", 0)),
                "media_type": _str(body.get("media_type", "")),
                "width": _optional_int(body.get("width")),
                "height": _optional_int(body.get("height")), "key": bool(body.get("key", True)),
                "pruned_at": None}
            if frames[seq]["file"] is None or frames[seq]["sha256"] is None:
                del frames[seq]
                raise Unindexable("a frame record names no file")
        elif kind == "alarm" and isinstance(body, dict):
            named = body.get("round")
            round_id = None if named is None else _str(named)
            alarm = [self.chain_no, seq, key, record.table, record.at, _str(body.get("kind")),
                     _str(body.get("text")), round_id]
            if key is None and round_id is not None:  # raised in a round: its latest of that id
                linked = self._latest(links, rounds, round_id, record.table)
                if linked is not None:
                    rounds[linked].values["alarms"] += 1
                alarm[2] = linked
            alarms.append(alarm)
        elif kind == "settlement" and isinstance(body, dict) and row is not None:
            self._settle(row, record, body)
        elif kind == "prune" and isinstance(body, dict):
            for pruned in body.get("frames", []):
                self._frame_update(frames, frame_updates, "pruned_at", record.at, _int(pruned))
        elif kind == "keyframe" and isinstance(body, dict):
            self._frame_update(frames, frame_updates, "key", True, _int(body.get("frame")))
        if row is None:
            return
        values = row.values
        values["last_seq"] = seq
        if kind == "event":
            values["events"] += 1
            card = card_code(body.get("card")) if isinstance(body, dict) and body.get(
                "type") in ("card", "reveal") else None
            if card is not None:
                cards.append((self.chain_no, seq, key, card))
        elif kind == "frame" and isinstance(body, dict):
            values["frames"] += 1
        elif kind == "alarm" and isinstance(body, dict):
            values["alarms"] += 1
        elif kind == "partial":
            reason = body.get("reason") if isinstance(body, dict) else None
            values.update(status="partial", note=_optional_str(reason), ended_at=record.at)

    @staticmethod
    def _link(record: Record, key: int, alarms: list[list[Any]], links: _Links) -> int:
        """Link the alarms naming the round ``record`` starts (raised before it was recorded)
        to it; how many."""
        assert record.round_id is not None
        name = (record.round_id, record.table)
        latest = links.latest.get(name)
        links.latest[name] = key if latest is None else max(latest, key)
        linked = 0
        for alarm in alarms:  # of this batch
            if alarm[2] is None and alarm[7] == record.round_id and alarm[3] == record.table:
                alarm[2] = key
                linked += 1
        for seq in links.waiting.pop(name, []):  # stored
            links.linked.append((key, seq))
            linked += 1
        return linked

    @staticmethod
    def _frame_update(frames: dict[int, dict[str, Any]],
                      frame_updates: list[tuple[str, Any, int]], column: str, value: Any,
                      seq: int) -> None:
        if seq in frames:
            frames[seq][column] = value
        else:
            frame_updates.append((column, value, seq))

    def _settle(self, row: _Round, record: Record, body: dict[str, Any]) -> None:
        values = row.values
        try:
            seats = body.get("seats") or []
            net = _int(cents(body.get("net", "0")))
            payouts = [_int(cents(seat["net"])) for seat in seats]
            seat_rows = [(self.chain_no, record.round_key, _int(int(seat["seat"])),
                          _optional_str(seat.get("player")), _int(cents(seat.get("wager", "0"))),
                          _int(cents(seat["net"])), len(seat.get("hands") or []))
                         for seat in seats]
            lines = [(self.chain_no, record.round_key, _int(int(seat["seat"])),
                      _str(line.get("kind")), _int(cents(line.get("amount", "0"))))
                     for seat in seats for line in seat.get("lines") or []]
            if len({seat[2] for seat in seat_rows}) != len(seat_rows):
                raise Unindexable("a seat is settled twice")  # one row a seat in the index
        except (Unindexable, KeyError, TypeError, ValueError, ArithmeticError, AttributeError):
            values.update(status="settled", ended_at=record.at,
                          note="settlement could not be indexed")
            return
        values.update(status="settled", ended_at=record.at, net_cents=net,
                      max_payout_cents=max(payouts, default=0))
        row.seats, row.lines = seat_rows, lines

    def _write(self, rounds: dict[int, _Round], cards: list[tuple[Any, ...]],
               alarms: list[list[Any]], frames: dict[int, dict[str, Any]],
               frame_updates: list[tuple[str, Any, int]], links: _Links) -> None:
        cur, chain_no = self.cur, self.chain_no
        stored = [(key, row) for key, row in rounds.items() if row.stored]
        if stored:
            cur.executemany(sql.SQL("UPDATE {} SET {} WHERE chain_no = %s AND round_key = %s"
                                    ).format(self.table("rounds"), sql.SQL(", ").join(
                                        sql.SQL("{} = %s").format(sql.Identifier(column))
                                        for column in _ROUND_COLUMNS)),
                            [(*(row.values[c] for c in _ROUND_COLUMNS), chain_no, key)
                             for key, row in stored])
        fresh = [(chain_no, key, *(row.values[c] for c in _ROUND_COLUMNS))
                 for key, row in rounds.items() if not row.stored]
        if fresh:
            copy_rows(cur, self.prefix + "rounds", ("chain_no", "round_key", *_ROUND_COLUMNS),
                      fresh)
        settled = [(key, row) for key, row in rounds.items() if row.seats is not None]
        replaced = [key for key, row in settled if row.stored]
        if replaced:
            for name in ("round_seats", "payout_lines", "round_amounts"):
                cur.execute(sql.SQL("DELETE FROM {} WHERE chain_no = %s AND"
                                    " round_key = ANY(%s::bigint[])").format(self.table(name)),
                            (chain_no, replaced))
        seat_rows = [seat for _, row in settled for seat in row.seats or []]
        if seat_rows:
            copy_rows(cur, self.prefix + "round_seats", ("chain_no", "round_key", "seat",
                                                         "player", "wager_cents", "net_cents",
                                                         "hands"), seat_rows)
        line_rows = [line for _, row in settled for line in row.lines]
        if line_rows:
            copy_rows(cur, self.prefix + "payout_lines",
                      ("chain_no", "round_key", "seat", "kind", "amount_cents"), line_rows)
        amounts = {(chain_no, key, amount) for key, row in settled for amount in _amounts(row)}
        if amounts:
            copy_rows(cur, self.prefix + "round_amounts", ("chain_no", "round_key", "amount_cents"),
                      sorted(amounts))
        if cards:
            copy_rows(cur, self.prefix + "round_cards", ("chain_no", "seq", "round_key", "card"),
                      cards)
        if alarms:
            copy_rows(cur, self.prefix + "alarms", ("chain_no", "seq", "round_key", "table_id",
                                                    "at", "kind", "text", "round_id"), alarms)
        if links.linked:
            cur.executemany(sql.SQL("UPDATE {} SET round_key = %s WHERE chain_no = %s AND"
                                    " seq = %s").format(self.table("alarms")),
                            [(key, chain_no, seq) for key, seq in links.linked])
        if frames:
            copy_rows(cur, self.prefix + "frames", ("chain_no", *_FRAME_COLUMNS),
                      [(chain_no, *(frame[c] for c in _FRAME_COLUMNS))
                       for frame in frames.values()])
        for column, value, seq in frame_updates:
            cur.execute(sql.SQL("UPDATE {} SET {} = %s WHERE chain_no = %s AND seq = %s").format(
                self.table("frames"), sql.Identifier(column)), (value, chain_no, seq))
