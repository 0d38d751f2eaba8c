"""Searching rounds, reading one round for the page, retention, and table statistics."""

from __future__ import annotations

import json
import os
import sqlite3
from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import Decimal
from pathlib import PurePosixPath
from typing import Any

from dealer_assist.rules.money import format_money
from dealer_assist.surveillance.replay import load_round
from dealer_assist.surveillance.store import (
    FRAMES_DIR,
    Record,
    RecordingError,
    RecordingStore,
    canonical_bytes,
    cents,
    chain_hash,
    format_time,
    parse_time,
)


@dataclass(frozen=True, slots=True)
class RoundQuery:
    """Search criteria; every one is optional and they combine with AND."""

    table: str | None = None
    since: datetime | None = None
    until: datetime | None = None
    seat: int | None = None
    alarm: str | None = None  # an alarm kind, or "*" for any alarm
    payout_above: Decimal | None = None  # a seat's net win above this amount
    round_id: str | None = None
    limit: int = 200

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for name in ("table", "seat", "alarm", "round_id"):
            if getattr(self, name) is not None:
                out[name] = getattr(self, name)
        if self.since:
            out["since"] = format_time(self.since)
        if self.until:
            out["until"] = format_time(self.until)
        if self.payout_above is not None:
            out["payout_above"] = format_money(self.payout_above)
        return out


def _money_text(value: int | None) -> str | None:
    return None if value is None else format_money(Decimal(value) / 100)


def search_rounds(store: RecordingStore,
                  query: RoundQuery) -> tuple[list[dict[str, Any]], list[int]]:
    """Rounds matching ``query``, newest first, and the keys of the rounds the search index
    cannot read (damaged pages of it): those are left out, and the rest still found."""
    clauses: list[str] = []
    params: list[Any] = []
    if query.table:
        clauses.append("r.table_id = ?")
        params.append(query.table)
    if query.since:
        clauses.append("r.started_at >= ?")
        params.append(format_time(query.since))
    if query.until:
        clauses.append("r.started_at <= ?")
        params.append(format_time(query.until))
    if query.round_id:
        clauses.append("r.round_id = ?")
        params.append(query.round_id)
    if query.seat is not None:
        clauses.append("EXISTS (SELECT 1 FROM round_seats s WHERE s.round_key = r.round_key"
                       " AND s.seat = ?)")
        params.append(query.seat)
    if query.alarm:
        if query.alarm == "*":
            clauses.append("r.alarms > 0")
        else:
            clauses.append("EXISTS (SELECT 1 FROM alarms a WHERE a.round_key = r.round_key"
                           " AND a.kind = ?)")
            params.append(query.alarm)
    if query.payout_above is not None:
        clauses.append("EXISTS (SELECT 1 FROM round_seats s WHERE s.round_key = r.round_key"
                       " AND s.net_cents > ?)")
        params.append(cents(query.payout_above))

    def select(*more: str) -> str:
        conditions = [*clauses, *more]
        return "SELECT r.* FROM rounds r" + (" WHERE " + " AND ".join(conditions)
                                             if conditions else "")

    limit = max(1, min(query.limit, 5000))
    try:
        rows = store.conn.execute(
            select() + " ORDER BY r.started_at DESC, r.round_key DESC LIMIT ?", [*params, limit]
        ).fetchall()
    except sqlite3.DatabaseError:  # a damaged page: round by round, past it
        rows, unreadable = [], []
        for key in range(1, store.last_round_key() + 1):
            try:
                rows.extend(store.conn.execute(select("r.round_key = ?"), [*params, key]))
            except sqlite3.DatabaseError:
                unreadable.append(key)
        rows.sort(key=lambda row: (str(row["started_at"]), row["round_key"]), reverse=True)
        return [_round_row(row) for row in rows[:limit]], unreadable
    return [_round_row(row) for row in rows], []


def _round_row(row: Any) -> dict[str, Any]:
    return {
        "key": row["round_key"], "round": row["round_id"], "table": row["table_id"],
        "dealer": row["dealer"], "started_at": row["started_at"], "ended_at": row["ended_at"],
        "status": row["status"], "note": row["note"], "net": _money_text(row["net_cents"]),
        "max_payout": _money_text(row["max_payout_cents"]), "events": row["events"],
        "frames": row["frames"], "alarms": row["alarms"],
    }


def round_view(store: RecordingStore, key: int) -> dict[str, Any]:
    """One round as the page shows it: events, frames, alarms, screens and the settlement."""
    data = load_round(store, key)
    if data is None:
        raise RecordingError(f"the recording has no round #{key}", store.directory)
    pruned = {
        row["seq"] for row in store.conn.execute(
            "SELECT seq FROM frames WHERE round_key = ? AND pruned_at IS NOT NULL", (key,))
    }
    events = [
        {"index": index, "seq": record.seq, "at": record.at, "event": _loads(record.body_text)}
        for index, record in enumerate(data.events)
    ]
    frames = []
    for record in data.frames:
        body = _loads(record.body_text) or {}
        frames.append({
            "seq": record.seq, "at": record.at, "event_index": body.get("event_index"),
            "width": body.get("width"), "height": body.get("height"),
            "media_type": body.get("media_type"), "key": body.get("key", True),
            "detections": body.get("detections"), "sha256": record.sha256,
            "file": record.file, "pruned": record.seq in pruned,
        })
    return {
        "key": data.key, "round": data.round_id, "table": data.table, "status": data.status,
        "started_at": data.start.at,
        "notes": [_loads(note.body_text) for note in data.notes],
        "events": events, "frames": frames,
        "alarms": [{"seq": r.seq, "at": r.at, **(_loads(r.body_text) or {})} for r in data.alarms],
        "screens": [{"seq": r.seq, "at": r.at, **(_loads(r.body_text) or {})}
                    for r in data.screens],
        "settlement": _loads(data.settlement.body_text) if data.settlement else None,
    }


def _loads(text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return {"unreadable": text}


def frame_file(store: RecordingStore, seq: int) -> tuple[bytes, str]:
    """The bytes and media type of frame record ``seq``."""
    row = store.conn.execute(
        "SELECT file, media_type, pruned_at FROM frames WHERE seq = ?", (seq,)
    ).fetchone()
    if row is None:
        raise RecordingError(f"no frame record {seq}", store.directory)
    path = store.directory / row["file"]
    if not path.is_file():
        state = "pruned by retention" if row["pruned_at"] else "missing"
        raise RecordingError(f"frame {seq} ({row['file']}) is {state}", store.directory)
    return path.read_bytes(), row["media_type"]


# -- retention ----------------------------------------------------------------------------------

#: The longest retention policy, in hours (100 years): the CLI and the page refuse more, since
#: the cutoff date overflows a few thousand years back.
MAX_PRUNE_HOURS = 876_000


def storage_report(store: RecordingStore) -> dict[str, Any]:
    """Bytes stored per table and clock hour of play, and the average per hour of play."""
    hours: dict[tuple[str, str], dict[str, int]] = defaultdict(
        lambda: {"rounds": 0, "records": 0, "record_bytes": 0, "frame_bytes": 0, "frames": 0})
    for row in store.conn.execute(
        "SELECT table_id, substr(at, 1, 13) AS hour, COUNT(*) AS n,"
        " SUM(length(body)) + COUNT(*) * 200 AS size,"
        " SUM(kind = 'round') AS rounds FROM records WHERE table_id IS NOT NULL"
        " GROUP BY table_id, hour"
    ):
        bucket = hours[(row["table_id"], row["hour"] or "")]  # "": a record with no time
        bucket["records"], bucket["record_bytes"] = row["n"], row["size"]
        bucket["rounds"] = row["rounds"]
    for row in store.conn.execute(
        "SELECT table_id, substr(at, 1, 13) AS hour, COUNT(*) AS n, SUM(size) AS size"
        " FROM frames WHERE pruned_at IS NULL GROUP BY table_id, hour"
    ):
        bucket = hours[(row["table_id"] or "", row["hour"] or "")]
        bucket["frames"], bucket["frame_bytes"] = row["n"], row["size"]
    played = [h for h in hours.values() if h["rounds"] > 0]
    total = sum(h["record_bytes"] + h["frame_bytes"] for h in hours.values())
    on_disk = _disk_bytes(store)
    return {
        "hours": [
            {"table": table, "hour": hour + ":00Z" if hour else "(no time recorded)", **values}
            for (table, hour), values in sorted(hours.items())
        ],
        "hours_of_play": len(played),
        "bytes_total": total,
        "bytes_on_disk": on_disk,
        "bytes_per_hour_of_play": (on_disk // len(played)) if played else 0,
    }


def _disk_bytes(store: RecordingStore) -> int:
    total = 0
    for root, _dirs, files in os.walk(store.directory):
        for name in files:
            try:
                total += os.path.getsize(os.path.join(root, name))
            except OSError:
                continue
    return total


def prune_frames(store: RecordingStore, older_than: timedelta, user: str,
                 now: datetime | None = None) -> dict[str, Any]:
    """Delete non-key frames recorded before ``now - older_than``; key frames and logs stay.

    The pruning is itself a chained ``prune`` record listing the frames, so verification knows
    those files are gone on purpose. The search index says which frames are old video, but it is
    not chained: each is deleted only if its chained record agrees (a frame record, its own hash
    intact and the next record linked to it, not key, never marked key, its file under
    ``frames/``). Those that do not are kept and listed in ``refused`` (``replay --verify`` says
    what was altered). A damaged database is refused before anything is deleted.
    """
    store.check()
    moment = now or store.clock()
    cutoff = format_time(moment - older_than)
    rows = store.conn.execute(
        "SELECT seq, file, size FROM frames WHERE key = 0 AND pruned_at IS NULL AND at < ?"
        " ORDER BY seq", (cutoff,)
    ).fetchall()
    marked: set[int] = set()
    for record in store.records(kinds=("keyframe",)):
        frame = _object_body(record).get("frame")
        if not isinstance(frame, int):
            raise RecordingError(
                f"{record.describe()} does not say which frame it keeps (altered?): nothing was"
                " pruned, since that frame cannot be told from the rest; run"
                " 'dealer-assist replay --verify'", store.db_path)
        marked.add(frame)
    doomed = [row for row in rows if row["seq"] not in marked and _prunable(store, row)]
    refused = sorted({row["seq"] for row in rows} - {row["seq"] for row in doomed})
    if not doomed:
        return {"pruned": 0, "bytes": 0, "cutoff": cutoff, "refused": refused}
    store.append("prune", {"user": user, "cutoff": cutoff, "policy_seconds":
                           int(older_than.total_seconds()), "frames": [r["seq"] for r in doomed]})
    kept = {row["file"] for row in store.conn.execute("SELECT file FROM frames WHERE key = 1")}
    freed = 0
    for row in doomed:
        path = store.directory / row["file"]
        if row["file"] not in kept and path.is_file():
            freed += path.stat().st_size
            path.unlink()
    return {"pruned": len(doomed), "bytes": freed, "cutoff": cutoff, "refused": refused}


def _object_body(record: Record) -> dict[str, Any]:
    """A record's body if it is a JSON object, else empty (verification reports altered ones)."""
    try:
        body = record.body
    except ValueError:
        return {}
    return body if isinstance(body, dict) else {}


def _prunable(store: RecordingStore, row: Any) -> bool:
    """Whether the chained record of an index row the index calls old video says the same."""
    record = store.record(row["seq"])
    if record is None or record.kind != "frame" or record.file != row["file"]:
        return False
    try:
        intact = record.hash == chain_hash(record.prev_hash, canonical_bytes(record))
    except ValueError:  # a link or hash format no longer readable
        intact = False
    if not intact:
        return False
    following = store.conn.execute(
        "SELECT prev_hash FROM records WHERE seq = ?", (record.seq + 1,)).fetchone()
    if following is not None and following["prev_hash"] != record.hash:
        return False
    parts = PurePosixPath(record.file or "").parts
    if len(parts) < 2 or parts[0] != FRAMES_DIR or ".." in parts:
        return False
    return _object_body(record).get("key") is False


def mark_key_frame(store: RecordingStore, seq: int, user: str) -> None:
    """Flag a frame as key (kept by retention), e.g. because it is evidence in a dispute."""
    row = store.conn.execute(
        "SELECT round_key, table_id, pruned_at FROM frames WHERE seq = ?", (seq,)).fetchone()
    if row is None:
        raise RecordingError(f"no frame record {seq}", store.directory)
    if row["pruned_at"]:
        raise RecordingError(f"frame {seq} was already pruned", store.directory)
    store.append("keyframe", {"user": user, "frame": seq}, table=row["table_id"],
                 round_key=row["round_key"])


# -- statistics ---------------------------------------------------------------------------------

DEFAULT_SHIFTS = (("day", 6), ("swing", 14), ("grave", 22))


def shift_of(moment: datetime, shifts: tuple[tuple[str, int], ...] = DEFAULT_SHIFTS) -> str:
    """The shift a UTC moment falls in: shifts are (name, starting hour) in the day's order."""
    ordered = sorted(shifts, key=lambda s: s[1])
    name = ordered[-1][0]
    for shift_name, start in ordered:
        if moment.hour >= start:
            name = shift_name
    return name


def _damaged_index(store: RecordingStore, what: str) -> RecordingError:
    return RecordingError(
        f"the search index is damaged: {what}. It is derived from the chained records, which"
        " 'dealer-assist replay --verify' checks", store.db_path)


def parse_shifts(text: str) -> tuple[tuple[str, int], ...]:
    """``day=6,swing=14,grave=22`` -> shifts; names and starting hours (UTC)."""
    shifts = []
    for part in text.split(","):
        name, _, hour = part.partition("=")
        if not name.strip() or not hour.strip().isdigit() or not 0 <= int(hour) < 24:
            raise ValueError(f"shift {part!r} must be NAME=HOUR with HOUR 0-23 (in {text!r})")
        shifts.append((name.strip(), int(hour)))
    return tuple(shifts)


def table_statistics(store: RecordingStore, *, by: tuple[str, ...] = ("table", "shift", "dealer"),
                     shifts: tuple[tuple[str, int], ...] = DEFAULT_SHIFTS) -> list[dict[str, Any]]:
    """Rounds per hour, hands per seat, payouts by kind and alarms by kind, per group.

    ``by`` picks the grouping among ``table``, ``shift`` and ``dealer``. Rounds per hour counts
    the clock hours in which the group dealt at least one round.
    """
    for name in by:
        if name not in ("table", "shift", "dealer"):
            raise ValueError(f"cannot group statistics by {name!r} (table, shift or dealer)")
    groups: dict[tuple[str, ...], dict[str, Any]] = {}
    group_of: dict[int, tuple[str, ...]] = {}
    for row in store.conn.execute("SELECT * FROM rounds ORDER BY round_key"):
        started = parse_time(row["started_at"])
        values = {"table": row["table_id"], "shift": shift_of(started, shifts),
                  "dealer": row["dealer"] or "(unknown)"}
        group = tuple(values[name] for name in by)
        group_of[row["round_key"]] = group
        stats = groups.setdefault(group, {
            **{name: values[name] for name in by}, "rounds": 0, "partial_rounds": 0,
            "hours": set(), "hands_per_seat": defaultdict(int), "payouts": defaultdict(int),
            "alarms": defaultdict(int), "paid_cents": 0, "taken_cents": 0,
        })
        stats["rounds"] += 1
        stats["partial_rounds"] += row["status"] == "partial"
        stats["hours"].add(row["started_at"][:13])
    def stats_of(key: Any, table: str) -> dict[str, Any]:
        if key not in group_of:
            raise _damaged_index(store, f"{table} has rows for round #{key}, which it does not"
                                        " list")
        return groups[group_of[key]]

    try:
        for row in store.conn.execute(
                "SELECT round_key, seat, net_cents, hands FROM round_seats"):
            stats = stats_of(row["round_key"], "round_seats")
            stats["hands_per_seat"][row["seat"]] += row["hands"]
            if row["net_cents"] > 0:
                stats["paid_cents"] += row["net_cents"]
            else:
                stats["taken_cents"] -= row["net_cents"]
        for row in store.conn.execute("SELECT round_key, kind, amount_cents FROM payout_lines"):
            payouts = stats_of(row["round_key"], "payout_lines")["payouts"]
            payouts[row["kind"]] += row["amount_cents"]
    except TypeError as error:  # text or nothing where the index keeps numbers
        raise _damaged_index(store, f"it holds a value of the wrong type ({error})") from None
    for row in store.conn.execute("SELECT round_key, kind FROM alarms WHERE round_key IS NOT NULL"):
        if row["round_key"] in group_of:
            groups[group_of[row["round_key"]]]["alarms"][row["kind"]] += 1
    result = []
    for stats in groups.values():
        hours = len(stats["hours"])
        rate = Decimal(stats["rounds"]) / hours if hours else Decimal(0)
        result.append({
            **{name: stats[name] for name in by},
            "rounds": stats["rounds"],
            "partial_rounds": stats["partial_rounds"],
            "hours": hours,
            "rounds_per_hour": str(rate.quantize(Decimal("0.1"))),
            "hands_per_seat": {str(k): v for k, v in sorted(stats["hands_per_seat"].items())},
            "payouts": {k: _money_text(v) for k, v in sorted(stats["payouts"].items())},
            "alarms": dict(sorted(stats["alarms"].items())),
            "paid": _money_text(stats["paid_cents"]),
            "taken": _money_text(stats["taken_cents"]),
            "house_net": _money_text(stats["taken_cents"] - stats["paid_cents"]),
        })
    return sorted(result, key=lambda r: tuple(str(r[name]) for name in by))
