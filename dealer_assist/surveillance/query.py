"""Searching rounds, reading one round for the page, retention, and table statistics (one
recording's, or the whole floor's in the room's store)."""

from __future__ import annotations

import hashlib
import json
import os
from collections import defaultdict
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

from dealer_assist.rules.money import format_money
from dealer_assist.surveillance.evidence_check import TrustedKeys
from dealer_assist.surveillance.frame_files import (
    FrameFileRefused,
    frame_path,
    read_frame,
    served_type,
)
from dealer_assist.surveillance.interface import (
    CheckedAppend,
    HourVolume,
    IndexedFrame,
    IndexedRound,
    RecordStore,
    RoundQuery,
)
from dealer_assist.surveillance.replay import RoundData, assemble_round, load_round, pruned_by
from dealer_assist.surveillance.round_check import RoundCheck, check_round, check_settlement
from dealer_assist.surveillance.round_words import round_in_words
from dealer_assist.surveillance.store import (
    FRAMES_DIR,
    Record,
    RecordingError,
    format_time,
    hash_holds,
    parse_time,
)


def _money_text(value: int | None) -> str | None:
    return None if value is None else format_money(Decimal(value) / 100)


def search_rounds(store: RecordStore,
                  query: RoundQuery) -> tuple[list[dict[str, Any]], list[int]]:
    """Rounds matching ``query``, newest first, and the keys of the rounds the search index
    cannot read (damaged pages of it): those are left out, and the rest still found."""
    found, unreadable = store.find_rounds(query)
    return [_round_row(row) for row in found], unreadable


def search_floor(store: RecordStore, query: RoundQuery) -> list[dict[str, Any]] | None:
    """Rounds of every table chain the store holds (the floor's room) matching ``query``,
    newest first, each naming its table box and chain; None for a store that holds no floor."""
    find = getattr(store, "find_floor_rounds", None)
    if find is None:
        return None
    return [{"box": found.box, "chain": found.chain, **_round_row(found.round)}
            for found in find(query)]


def _round_row(row: IndexedRound) -> dict[str, Any]:
    return {
        "key": row.round_key, "round": row.round_id, "table": row.table,
        "dealer": row.dealer, "started_at": row.started_at, "ended_at": row.ended_at,
        "status": row.status, "note": row.note, "net": _money_text(row.net_cents),
        "max_payout": _money_text(row.max_payout_cents), "events": row.events,
        "frames": row.frames, "alarms": row.alarms,
    }


def round_view(store: RecordStore, key: int,
               trusted: TrustedKeys | None = None) -> dict[str, Any]:
    """One round as the page shows it, checked as it is shown: its events in words (each with
    the UTC time it happened where the event carries one, ``at``, and when it was written),
    frames in order with their times and the state of their files, alarms (those naming it
    from outside its records too: :func:`alarms_naming`), screens, every line of the
    settlement as recorded and as re-settled, and ``integrity``: whether its records,
    signatures (with ``trusted``: under the table's key), frames and settlement hold
    (:func:`~.round_check.check_round`). All of it is read from the chained records, and the
    records it relies on from outside the round (the alarms naming it, the prune records that
    name its frames) are checked with it; a frame an operator marked to keep (``keyframe``) is
    never taken as pruned. The search index only finds rounds."""
    return round_view_with_frames(store, key, trusted)[0]


def round_view_with_frames(store: RecordStore, key: int, trusted: TrustedKeys | None = None
                           ) -> tuple[dict[str, Any], dict[int, tuple[bytes, str]]]:
    """:func:`round_view`, and each frame file's bytes exactly as its check hashed them (by
    record number, with the type to serve them as): what shows the frames beside the view's
    verdict shows these, never a file read again (it may have been replaced since)."""
    data = load_round(store, key)
    if data is None:
        raise RecordingError(f"the recording has no round #{key}", store.directory)
    frames = {record.seq for record in data.frames}
    prunes = [record for record in store.records(kinds=("prune",)) if pruned_by(record) & frames]
    kept = {seq for record in store.records(kinds=("keyframe",))
            if isinstance(seq := record.object_body().get("frame"), int)}
    pruned = {seq for record in prunes for seq in pruned_by(record) if seq in frames}
    linked = alarms_naming(store, data)
    check = check_round(store, data, [*linked, *prunes], pruned, trusted, kept)
    images = {record.seq: (check.frame_bytes[record.seq],
                           served_type(record.object_body().get("media_type")))
              for record in data.frames if record.seq in check.frame_bytes}
    return _round_view(data, check, linked, list(store.head())), images


def alarms_naming(store: RecordStore, data: RoundData) -> list[Record]:
    """The chained alarm records of ``data``'s table that name its round (``round``) from
    outside its records: raised in it before its records began. Of the rounds called alike, an
    alarm names the latest that began before it, else the first."""
    if data.round_id is None:
        return []
    starts = sorted(record.seq for key in store.round_keys(data.round_id)
                    for record in store.records(round_key=key, kinds=("round",))
                    if record.table == data.table)

    def named(seq: int) -> int | None:
        before = [start for start in starts if start < seq]
        return before[-1] if before else starts[0] if starts else None

    return [record for record in store.records(kinds=("alarm",))
            if record.round_key is None and record.table == data.table
            and str(record.object_body().get("round")) == data.round_id
            and named(record.seq) == data.start.seq]


def floor_round(store: RecordStore, box: str, chain: str, key: int) -> RoundData | None:
    """The records of round ``key`` of table ``box``'s chain ``chain`` as the room holds them;
    None where it holds no such round."""
    return assemble_round(key, list(store.chain_records(box, chain, round_key=key)))


def floor_frame_path(store: RecordStore, box: str, chain: str, file: str) -> Path | None:
    """Where the room keeps its copy of a table's frame file (None: a name that is not one of
    a table's frames, :func:`.frame_path`, and so would lead out of that chain's folder)."""
    return frame_path(store.directory / "floor" / box / chain, file, FRAMES_DIR)


def floor_round_view(store: RecordStore, data: RoundData, box: str, chain: str
                     ) -> dict[str, Any]:
    """A round of table ``box``'s chain ``chain`` (:func:`floor_round`) shown as
    :func:`round_view` shows a round; its key frames are the room's copies (``in_room``: the
    file is there; ``file_state`` as its SHA-256 now compares with the record's: intact,
    altered, or missing for a key frame the room lacks), its other frames on the box. Its
    settlement is re-settled here; its chain and signatures are the room's to check as they
    arrive (``room verify``)."""
    check = check_settlement(data, "records, links and signatures are checked by the room as "
                                   "they arrive and by 'room verify'")
    view = _round_view(data, check, [], None)
    view.update(box=box, chain=chain)
    for frame in view["frames"]:
        path = floor_frame_path(store, box, chain, str(frame["file"] or ""))
        try:
            content = None if path is None else read_frame(store.directory, path)
        except FrameFileRefused:
            content, frame["file_state"] = None, "altered"  # not one plain file of the room's
        frame["in_room"] = content is not None
        if content is not None:
            frame["sha256_now"] = hashlib.sha256(content).hexdigest()
            frame["file_state"] = "intact" if frame["sha256_now"] == frame["sha256"] else "altered"
        elif frame["key"] and frame["file"] and frame["file_state"] != "altered":
            frame["file_state"] = "missing"  # the table sends each key frame to the room
    return view


def _round_view(data: RoundData, check: RoundCheck, linked: list[Record],
                head: list[Any] | None) -> dict[str, Any]:
    bodies = [_loads(record.body_text) for record in data.events]
    words = round_in_words(bodies)
    events = [
        {"index": index, "seq": record.seq, "at": record.at, "written_at": record.at,
         "happened_at": body.get("at") if isinstance(body, dict) else None,
         "event": body, **words[index]}
        for index, (record, body) in enumerate(zip(data.events, bodies, strict=True))
    ]
    frames = []
    for record in sorted(data.frames, key=_frame_order):
        body = _loads(record.body_text) or {}
        body = body if isinstance(body, dict) else {}
        state = check.frames.get(record.seq, {})
        frames.append({
            "seq": record.seq, "at": record.at, "written_at": record.at,
            "captured_at": body.get("captured_at"), "event_index": body.get("event_index"),
            "width": body.get("width"), "height": body.get("height"),
            "media_type": body.get("media_type"), "key": body.get("key", True),
            "detections": body.get("detections"), "sha256": record.sha256,
            "sha256_now": state.get("sha256"), "file_state": state.get("state"),
            "file": record.file, "pruned": state.get("state") == "pruned",
        })
    alarms = sorted((*data.alarms, *linked), key=lambda r: r.seq)
    return {
        "key": data.key, "round": data.round_id, "table": data.table, "status": data.status,
        "started_at": data.start.at,
        "notes": [_loads(note.body_text) for note in data.notes],
        "events": events, "frames": frames,
        "alarms": [{"seq": r.seq, "at": r.at, **_object(_loads(r.body_text))} for r in alarms],
        "screens": [{"seq": r.seq, "at": r.at, **_object(_loads(r.body_text))}
                    for r in data.screens],
        "settlement": _loads(data.settlement.body_text) if data.settlement else None,
        "settlement_lines": check.settlement,
        "integrity": check.to_json(),
        "chain_head": head,
    }


def _frame_order(record: Record) -> tuple[int, str, int]:
    """Frames in the order they show the round: by event, then by time, then as recorded."""
    body = _loads(record.body_text)
    body = body if isinstance(body, dict) else {}
    index = body.get("event_index")
    when = body.get("captured_at") or record.at
    return (index if isinstance(index, int) else -1, str(when), record.seq)


def _object(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {"unreadable": value}


def _loads(text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return {"unreadable": text}


def frame_file(store: RecordStore, seq: int) -> tuple[bytes, str]:
    """The bytes of frame record ``seq``'s file and the type to serve them as, both as its
    chained record names them, read only where the file is one plain file of the recording's
    frames (:mod:`.frame_files`)."""
    record = store.record(seq)
    if record is None or record.kind != "frame":
        raise RecordingError(f"no frame record {seq}", store.directory)
    path = frame_path(store.directory, record.file, FRAMES_DIR)
    if path is None:
        raise RecordingError(f"frame {seq} names {record.file!r}, not a file of the"
                             " recording's frames", store.directory)
    try:
        data = read_frame(store.directory, path)
    except FrameFileRefused as why:
        raise RecordingError(f"frame {seq} is not served: {why}", store.directory) from None
    if data is None:
        raise RecordingError(f"frame {seq} ({record.file}) is not on disk (its round's view"
                             " says whether retention pruned it)", store.directory)
    return data, served_type(record.object_body().get("media_type"))


# -- retention ----------------------------------------------------------------------------------

#: The longest retention policy, in hours (100 years): the CLI and the page refuse more, since
#: the cutoff date overflows a few thousand years back.
MAX_PRUNE_HOURS = 876_000


def storage_report(store: RecordStore) -> dict[str, Any]:
    """Bytes stored per table and clock hour of play, and the average per hour of play."""
    return _storage(store.record_volume(), store.frame_volume(), _disk_bytes(store))


def floor_storage_report(store: Any) -> dict[str, Any]:
    """:func:`storage_report` for the whole floor in the room's PostgreSQL store: the records of
    every table's chain and the key frames the room holds (less those its retention deleted),
    per table box and clock hour; on disk: the store's schema and the room's frame files."""
    from dealer_assist.floor.retention import pruned_frames

    in_database, frame_files = store.database_bytes(), _disk_bytes(store)
    report = _storage(store.floor_record_volume(),
                      store.floor_key_frame_volume(pruned_frames(store)),
                      in_database + frame_files)
    return {**report, "bytes_in_database": in_database, "bytes_of_frame_files": frame_files}


def _storage(records: list[HourVolume], frames: list[HourVolume], on_disk: int
             ) -> dict[str, Any]:
    hours: dict[tuple[str, str], dict[str, int]] = defaultdict(
        lambda: {"rounds": 0, "records": 0, "record_bytes": 0, "frame_bytes": 0, "frames": 0})
    for volume in records:
        bucket = hours[(volume.table or "", volume.hour)]  # hour "": a record with no time
        bucket["records"], bucket["record_bytes"] = volume.count, volume.size
        bucket["rounds"] = volume.rounds
    for volume in frames:
        bucket = hours[(volume.table or "", volume.hour)]
        bucket["frames"], bucket["frame_bytes"] = volume.count, volume.size
    played = [h for h in hours.values() if h["rounds"] > 0]
    total = sum(h["record_bytes"] + h["frame_bytes"] for h in hours.values())
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


def _disk_bytes(store: RecordStore) -> int:
    total = 0
    for root, _dirs, files in os.walk(store.directory):
        for name in files:
            try:
                total += os.path.getsize(os.path.join(root, name))
            except OSError:
                continue
    return total


def prune_frames(store: RecordStore, older_than: timedelta, user: str,
                 now: datetime | None = None) -> dict[str, Any]:
    """Delete non-key frames recorded before ``now - older_than``; key frames and logs stay.

    The pruning is itself a chained ``prune`` record listing the frames, so verification knows
    those files are gone on purpose. The search index says which frames are old video, but it is
    not chained: each is deleted only if its chained record agrees (a frame record, its own hash
    intact and the next record linked to it, not key, never marked key, its file under
    ``frames/``). Those that do not are kept and listed in ``refused`` (``replay --verify`` says
    what was altered). The marks are read in the write transaction of the ``prune`` record, so a
    frame marked (an operator's mark, a room's hold) before that record is kept, and one listed
    in it can no longer be marked. A damaged database is refused before anything is deleted.
    """
    store.check()
    moment = now or store.clock()
    cutoff = format_time(moment - older_than)
    rows = store.video_frames_before(cutoff)
    candidates = [row for row in rows if _prunable(store, row)]
    doomed: list[IndexedFrame] = []
    disagree: set[int] = set()

    def decide() -> dict[str, Any] | None:
        marked = _marked_frames(store)
        unmarked = {row.seq for row in store.video_frames_before(cutoff)}  # nor pruned since
        doomed[:] = [row for row in candidates if row.seq in unmarked and row.seq not in marked]
        disagree.clear()
        disagree.update(row.seq for row in candidates
                        if row.seq in unmarked and row.seq in marked)
        if not doomed:
            return None
        return {"user": user, "cutoff": cutoff, "policy_seconds":
                int(older_than.total_seconds()), "frames": [r.seq for r in doomed]}

    _append_checked(store, "prune", decide)
    refused = sorted({row.seq for row in rows} - {row.seq for row in candidates} | disagree)
    if not doomed:
        return {"pruned": 0, "bytes": 0, "cutoff": cutoff, "refused": refused}
    kept = store.key_frame_files()
    freed = 0
    for row in doomed:
        path = store.directory / row.file
        if row.file not in kept and path.is_file():
            freed += path.stat().st_size
            path.unlink()
    return {"pruned": len(doomed), "bytes": freed, "cutoff": cutoff, "refused": refused}


def _marked_frames(store: RecordStore) -> set[int]:
    """The frames the chain's ``keyframe`` records mark; RecordingError where one does not say
    which (nothing can be pruned then)."""
    marked: set[int] = set()
    for record in store.records(kinds=("keyframe",)):
        frame = record.object_body().get("frame")
        if not isinstance(frame, int):
            raise RecordingError(
                f"{record.describe()} does not say which frame it keeps (altered?): nothing was"
                " pruned, since that frame cannot be told from the rest; run"
                " 'dealer-assist replay --verify'", store.location)
        marked.add(frame)
    return marked


def _append_checked(store: RecordStore, kind: str,
                    decide: Callable[[], dict[str, Any] | None], *, table: str | None = None,
                    round_key: int | None = None) -> Record | None:
    """``store.append_checked`` (the check and the record in one write transaction); a store
    without it (the room's PostgreSQL store, whose own chain records no video) checks, then
    appends."""
    if isinstance(store, CheckedAppend):
        return store.append_checked(kind, decide, table=table, round_key=round_key)
    body = decide()
    return None if body is None else store.append(kind, body, table=table, round_key=round_key)


def _prunable(store: RecordStore, row: IndexedFrame) -> bool:
    """Whether the chained record of an index row the index calls old video says the same."""
    record = store.record(row.seq)
    if record is None or record.kind != "frame" or record.file != row.file:
        return False
    if not hash_holds(record):
        return False
    following = store.record(record.seq + 1)
    if following is not None and following.prev_hash != record.hash:
        return False
    if frame_path(store.directory, record.file, FRAMES_DIR) is None:
        return False
    return record.object_body().get("key") is False


def mark_key_frame(store: RecordStore, seq: int, user: str) -> None:
    """Flag a frame as key (kept by retention), e.g. because it is evidence in a dispute."""
    found = store.frame(seq)
    if found is None:
        raise RecordingError(f"no frame record {seq}", store.directory)

    def decide() -> dict[str, Any]:
        frame = store.frame(seq)  # read again in the mark's write transaction
        if frame is None or frame.pruned_at:
            raise RecordingError(f"frame {seq} was already pruned", store.directory)
        return {"user": user, "frame": seq}

    _append_checked(store, "keyframe", decide, table=found.table, round_key=found.round_key)


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


def _damaged_index(store: RecordStore, what: str) -> RecordingError:
    return RecordingError(
        f"the search index is damaged: {what}. It is derived from the chained records, which"
        " 'dealer-assist replay --verify' checks", store.location)


def parse_shifts(text: str) -> tuple[tuple[str, int], ...]:
    """``day=6,swing=14,grave=22`` -> shifts; names and starting hours (UTC)."""
    shifts = []
    for part in text.split(","):
        name, _, hour = part.partition("=")
        if not name.strip() or not hour.strip().isdigit() or not 0 <= int(hour) < 24:
            raise ValueError(f"shift {part!r} must be NAME=HOUR with HOUR 0-23 (in {text!r})")
        shifts.append((name.strip(), int(hour)))
    return tuple(shifts)


def table_statistics(store: RecordStore, *, by: tuple[str, ...] = ("table", "shift", "dealer"),
                     shifts: tuple[tuple[str, int], ...] = DEFAULT_SHIFTS) -> list[dict[str, Any]]:
    """Rounds per hour, hands per seat, payouts by kind and alarms by kind, per group.

    ``by`` picks the grouping among ``table``, ``shift`` and ``dealer``. Rounds per hour counts
    the clock hours in which the group dealt at least one round.
    """
    _check_grouping(by)
    groups: dict[tuple[str, ...], dict[str, Any]] = {}
    group_of: dict[int, tuple[str, ...]] = {}
    for row in store.indexed_rounds():
        started = parse_time(row.started_at)
        values = {"table": row.table, "shift": shift_of(started, shifts),
                  "dealer": row.dealer or "(unknown)"}
        group = tuple(values[name] for name in by)
        group_of[row.round_key] = group
        stats = groups.setdefault(group, _new_group(values, by))
        stats["rounds"] += 1
        stats["partial_rounds"] += row.status == "partial"
        stats["hours"].add(row.started_at[:13])
    def stats_of(key: Any, table: str) -> dict[str, Any]:
        if key not in group_of:
            raise _damaged_index(store, f"{table} has rows for round #{key}, which it does not"
                                        " list")
        return groups[group_of[key]]

    try:
        for seat in store.indexed_seats():
            stats = stats_of(seat.round_key, "round_seats")
            stats["hands_per_seat"][seat.seat] += seat.hands
            if seat.net_cents > 0:
                stats["paid_cents"] += seat.net_cents
            else:
                stats["taken_cents"] -= seat.net_cents
        for line in store.indexed_payouts():
            payouts = stats_of(line.round_key, "payout_lines")["payouts"]
            payouts[line.kind] += line.amount_cents
    except TypeError as error:  # text or nothing where the index keeps numbers
        raise _damaged_index(store, f"it holds a value of the wrong type ({error})") from None
    for alarm in store.indexed_alarms():
        if alarm.round_key in group_of:
            groups[group_of[alarm.round_key]]["alarms"][alarm.kind] += 1
    return _statistics_rows(groups, by)


def floor_statistics(store: Any, *, by: tuple[str, ...] = ("table", "shift", "dealer"),
                     shifts: tuple[tuple[str, int], ...] = DEFAULT_SHIFTS,
                     table: str | None = None) -> list[dict[str, Any]]:
    """:func:`table_statistics` over every table's rounds the room's PostgreSQL store holds
    (only ``table``'s where given), summed there per table, hour and dealer."""
    _check_grouping(by)
    groups: dict[tuple[str, ...], dict[str, Any]] = {}
    for tally in store.floor_round_tallies(table):
        values = {"table": tally.table, "shift": _shift_of_hour(tally.hour, shifts),
                  "dealer": tally.dealer or "(unknown)"}
        stats = groups.setdefault(tuple(values[name] for name in by), _new_group(values, by))
        stats["rounds"] += tally.rounds
        stats["partial_rounds"] += tally.partial_rounds
        stats["hours"].add(tally.hour)
        stats["paid_cents"] += tally.paid_cents
        stats["taken_cents"] += tally.taken_cents
        for seat, hands in tally.hands_per_seat.items():
            stats["hands_per_seat"][seat] += hands
        for kind, amount in tally.payouts.items():
            stats["payouts"][kind] += amount
        for kind, count in tally.alarms.items():
            stats["alarms"][kind] += count
    return _statistics_rows(groups, by)


def _check_grouping(by: tuple[str, ...]) -> None:
    for name in by:
        if name not in ("table", "shift", "dealer"):
            raise ValueError(f"cannot group statistics by {name[:40]!r} (table, shift or"
                             " dealer)")
        if by.count(name) > 1:
            raise ValueError(f"groups statistics by {name} twice")


def _shift_of_hour(hour: str, shifts: tuple[tuple[str, int], ...]) -> str:
    """The shift of a clock hour as the index keeps it (``2026-11-29T13``, UTC)."""
    try:
        return shift_of(datetime.strptime(hour, "%Y-%m-%dT%H").replace(tzinfo=UTC), shifts)
    except ValueError:  # an altered time: verification names its record
        return "(unknown)"


def _new_group(values: dict[str, str], by: tuple[str, ...]) -> dict[str, Any]:
    return {**{name: values[name] for name in by}, "rounds": 0, "partial_rounds": 0,
            "hours": set(), "hands_per_seat": defaultdict(int), "payouts": defaultdict(int),
            "alarms": defaultdict(int), "paid_cents": 0, "taken_cents": 0}


def _statistics_rows(groups: dict[tuple[str, ...], dict[str, Any]], by: tuple[str, ...]
                     ) -> list[dict[str, Any]]:
    """The statistics' groups as the page shows them, in the order of their names."""
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
