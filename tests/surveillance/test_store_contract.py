"""The contract every recording store keeps (:class:`RecordStore`), run against each one.

The tests use the protocol only. A backend (the ``backend`` fixture's params) says how to make,
reopen, damage, lock and wipe the index of one kind of store; adding an implementation is one more
param. Today: SQLite, on a real file under ``tmp_path``, and PostgreSQL (the room's store), in a
fresh schema of the real server on 127.0.0.1:5432 (tests/postgres.py).
"""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any, Protocol

import pytest

from dealer_assist.surveillance.interface import RecordStore, RoundQuery, StoredOperator
from dealer_assist.surveillance.query import alarms_naming
from dealer_assist.surveillance.replay import load_round
from dealer_assist.surveillance.signing import Signer
from dealer_assist.surveillance.store import (
    GENESIS_HASH,
    DamagedRecordingError,
    Record,
    RecordingError,
    RecordingStore,
    Unreadable,
    UnreadableRecordError,
    canonical_bytes,
    chain_hash,
    format_time,
)
from tests.surveillance.damage import damage_page

START = datetime(2026, 11, 29, 9, 0, tzinfo=UTC)


class Clock:
    """Moves one second on every reading, from 09:00 UTC."""

    def __init__(self) -> None:
        self.now = START

    def __call__(self) -> datetime:
        self.now += timedelta(seconds=1)
        return self.now


class Backend(Protocol):
    """How the contract tests handle one kind of store, from outside it."""

    def create(self) -> RecordStore:
        """A new, empty store (or the existing one, opened to write)."""
        ...

    def reopen(self) -> RecordStore:
        """The store made by :meth:`create`, opened again; refused when there is none."""
        ...

    def damage(self, part: str) -> None:
        """Damage the (closed) store the way failing storage does, so that some, not all, of
        its ``records`` or of its search ``index``'s rounds cannot be read. A backend that cannot
        be damaged from outside skips."""
        ...

    def locked(self) -> AbstractContextManager[None]:
        """Another program holds the store's write lock meanwhile."""
        ...

    def wipe_index(self) -> None:
        """Empty the search index behind the (closed) store's back, leaving the records."""
        ...


@dataclass
class SqliteBackend:
    """A recording directory with ``index.sqlite``; writes wait 0.05 s for a lock, not 30 s."""

    directory: Path
    clock: Clock

    def create(self) -> RecordStore:
        return RecordingStore(self.directory, create=True, clock=self.clock)

    def reopen(self) -> RecordStore:
        return RecordingStore(self.directory, clock=self.clock)

    def damage(self, part: str) -> None:
        damage_page(self.directory, {"records": "records", "index": "rounds"}[part], leaf=1)

    @contextmanager
    def locked(self) -> Iterator[None]:
        lock = sqlite3.connect(self.directory / "index.sqlite", isolation_level=None)
        lock.execute("BEGIN EXCLUSIVE")
        try:
            yield
        finally:
            lock.execute("ROLLBACK")
            lock.close()

    def wipe_index(self) -> None:
        conn = sqlite3.connect(self.directory / "index.sqlite", isolation_level=None)
        try:
            for table in ("rounds", "round_seats", "payout_lines", "frames", "alarms"):
                conn.execute(f"DELETE FROM {table}")
        finally:
            conn.close()


@dataclass
class PostgresBackend:
    """A store in its own schema of the test server; writes wait 0.05 s for a lock."""

    url: str
    schema: str
    directory: Path
    clock: Clock

    def create(self) -> RecordStore:
        from dealer_assist.floor.pgstore import PostgresStore

        try:
            return PostgresStore(self.url, self.directory, schema=self.schema, create=True,
                                 clock=self.clock, lock_timeout_s=0.05)
        except RecordingError:  # made already: opened to write
            return self.reopen()

    def reopen(self) -> RecordStore:
        from dealer_assist.floor.pgstore import PostgresStore

        return PostgresStore(self.url, self.directory, schema=self.schema, clock=self.clock,
                             lock_timeout_s=0.05)

    def damage(self, part: str) -> None:
        pytest.skip("PostgreSQL's pages cannot be damaged from outside the server")

    @contextmanager
    def locked(self) -> Iterator[None]:
        import psycopg
        from psycopg import sql

        with psycopg.connect(self.url) as lock:  # one transaction, rolled back at the end
            lock.execute(sql.SQL("LOCK TABLE {}.records IN EXCLUSIVE MODE").format(
                sql.Identifier(self.schema)))
            yield
            lock.rollback()

    def wipe_index(self) -> None:
        import psycopg
        from psycopg import sql

        from dealer_assist.floor.pgschema import INDEX_TABLES

        with psycopg.connect(self.url, autocommit=True) as conn:
            for table in INDEX_TABLES:
                conn.execute(sql.SQL("DELETE FROM {}.{}").format(sql.Identifier(self.schema),
                                                                 sql.Identifier(table)))


@pytest.fixture(params=["sqlite", "postgres"])
def backend(request: pytest.FixtureRequest, tmp_path: Path,
            monkeypatch: pytest.MonkeyPatch) -> Iterator[Backend]:
    if request.param == "sqlite":
        monkeypatch.setattr(RecordingStore, "busy_timeout_s", 0.05)
        yield SqliteBackend(tmp_path / "recording", Clock())
        return
    if request.param == "postgres":
        from tests.postgres import fresh_schema, server_url

        url = server_url()
        with fresh_schema("contract") as schema:
            yield PostgresBackend(url, schema, tmp_path / "frames", Clock())
        return
    raise AssertionError(f"no backend {request.param}")


@pytest.fixture
def store(backend: Backend) -> Iterator[RecordStore]:
    opened = backend.create()
    yield opened
    opened.close()


# -- what is recorded ---------------------------------------------------------------------------


def settlement(**nets: str) -> dict[str, Any]:
    """A settlement body as the table records it: ``seat2="15.00"`` is seat 2 winning 15.00 on a
    10.00 main bet."""
    seats = [{"seat": int(name.removeprefix("seat")), "player": None, "wager": "10.00",
              "net": net, "hands": [{"cards": ["TH", "9S"], "net": net}],
              "lines": [{"kind": "main", "amount": net}]} for name, net in nets.items()]
    return {"net": str(sum(Decimal(net) for net in nets.values())), "seats": seats}


def play_round(store: RecordStore, round_id: str, table: str = "T1", *,
               nets: dict[str, str] | None = None, alarm: str | None = None) -> int:
    """One round (its start, a card, an alarm if asked, its settlement unless ``nets`` is None);
    returns its round key."""
    start = store.append("round", {"type": "round", "id": round_id, "dealer_id": "D-7"},
                         table=table, round_id=round_id)
    key = start.round_key
    assert key is not None
    store.append("event", {"type": "card", "card": "TH"}, table=table, round_key=key,
                 round_id=round_id)
    if alarm is not None:
        store.append("alarm", {"kind": alarm, "text": "seen"}, table=table, round_key=key,
                     round_id=round_id)
    if nets is not None:
        store.append("settlement", settlement(**nets), table=table, round_key=key,
                     round_id=round_id)
    return key


def add_frame(store: RecordStore, key: int, *, key_frame: bool, content: bytes) -> Record:
    relative = f"frames/2026-11-29/T1/{key:06d}-{hashlib.sha256(content).hexdigest()[:16]}.jpg"
    store.write_file(relative, content)
    return store.append(
        "frame", {"event_index": 1, "key": key_frame, "media_type": "image/jpeg",
                  "width": 4, "height": 3, "size": len(content)},
        table="T1", round_key=key, round_id=f"r-{key}", file=relative,
        sha256=hashlib.sha256(content).hexdigest())


def index_answers(store: RecordStore) -> dict[str, Any]:
    """Everything the search index answers, to compare two states of it."""
    return {
        "rounds": store.indexed_rounds(), "seats": store.indexed_seats(),
        "payouts": store.indexed_payouts(), "alarms": store.indexed_alarms(),
        "search": store.find_rounds(RoundQuery()), "choices": store.search_choices(),
        "video": store.video_frames_before("9999"), "key_files": store.key_frame_files(),
        "records_by_hour": store.record_volume(), "frames_by_hour": store.frame_volume(),
    }


# -- the chain ----------------------------------------------------------------------------------


def test_appended_records_read_back_in_order_each_linked_to_the_one_before(
        store: RecordStore) -> None:
    assert store.head() == (0, GENESIS_HASH)
    assert store.last_seq() == 0 and list(store.records()) == []
    bodies = [{"n": n, "amount": Decimal("2.50") * n} for n in range(1, 6)]
    appended = [store.append("note", body, table="T1") for body in bodies]

    read = list(store.records())
    assert read == appended
    assert [r.seq for r in read] == [1, 2, 3, 4, 5]
    assert [r.body for r in read] == [{"n": n, "amount": str(Decimal("2.50") * n)}
                                      for n in range(1, 6)]
    previous = GENESIS_HASH
    for record in read:
        assert record.prev_hash == previous
        assert record.hash == chain_hash(record.prev_hash, canonical_bytes(record))
        previous = record.hash
    assert [r.at for r in read] == sorted(r.at for r in read)
    assert store.head() == (5, read[-1].hash)
    assert store.last_seq() == 5
    assert list(store.scan()) == read
    assert store.record(3) == read[2]
    assert store.record(6) is None


@pytest.mark.parametrize(("body_text", "seen"), [
    ('{"frame": 7}', {"frame": 7}), ("[7]", {}), ("7", {}), ("{not json", {})])
def test_a_records_object_body_is_its_json_object_or_empty_if_altered(
        store: RecordStore, body_text: str, seen: dict[str, Any]) -> None:
    """Readers that look one field up (retention, holds, cuts) never crash on an altered body;
    verification is what reports it."""
    record = replace(store.append("keyframe", {"frame": 7}, table="T1"), body_text=body_text)
    assert record.object_body() == seen


def test_a_store_with_a_signer_signs_each_record_in_the_same_write(backend: Backend) -> None:
    store = backend.create()
    unsigned = store.append("note", {"n": 0}, table="T1")
    store.signer = signer = Signer.generate()
    signed = [store.append("note", {"n": n}, table="T1") for n in (1, 2)]
    store.signer = None
    after = store.append("note", {"n": 3}, table="T1")
    store.close()
    store = backend.reopen()
    try:
        read = list(store.records())
    finally:
        store.close()
    assert read == [unsigned, *signed, after]
    assert (read[0].signature, read[3].signature) == (None, None)
    assert all(signer.public.verifies(r.hash, r.signature or "") for r in read[1:3])


def test_the_same_record_appended_twice_is_two_records_never_one(store: RecordStore) -> None:
    """The chain records what happened: a repeated event is recorded again, not merged."""
    first = store.append("alarm", {"kind": "shoe", "text": "resend"}, table="T1")
    second = store.append("alarm", {"kind": "shoe", "text": "resend"}, table="T1")
    assert (first.seq, second.seq) == (1, 2)
    assert first.body_text == second.body_text and first.hash != second.hash
    assert second.prev_hash == first.hash


def test_records_are_read_from_after_a_number_of_a_kind_or_of_all(store: RecordStore) -> None:
    """``after`` skips the records numbered up to it, with and without a kind asked for."""
    for text in ("a", "b", "c"):
        store.append("alarm", {"kind": "shoe", "text": text}, table="T1")
        store.append("clock", {"synchronised": "unknown"}, table="T1")
    assert [r.object_body()["text"] for r in store.records(kinds=("alarm",), after=2)] == \
        ["b", "c"]
    assert [r.seq for r in store.records(after=4)] == [5, 6]
    assert [r.seq for r in store.records(after=6)] == []
    assert len(list(store.records())) == 6


def test_rounds_get_keys_in_order_and_their_records_are_found_by_key_or_id(
        store: RecordStore) -> None:
    first = play_round(store, "r-1", nets={"seat1": "10.00"})
    store.append("access", {"user": "olga", "action": "search", "target": {}})
    second = play_round(store, "r-2", nets={"seat1": "-10.00"})
    again = play_round(store, "r-1", table="T2")  # round ids may repeat; keys never do

    assert (first, second, again) == (1, 2, 3)
    assert store.last_round_key() == 3
    assert store.round_keys() == [1, 2, 3]
    assert store.round_keys("r-1") == [1, 3]
    assert store.round_keys("r-9") == []
    of_second = list(store.records(round_key=second))
    assert [r.kind for r in of_second] == ["round", "event", "settlement"]
    assert all(r.round_key == second and r.round_id == "r-2" for r in of_second)
    assert store.round_records(second) == of_second
    assert store.round_records(99) == []
    assert [r.round_key for r in store.records(kinds=("settlement",))] == [1, 2]
    assert [r.kind for r in store.records(round_key=first, kinds=("event",))] == ["event"]
    newest = store.latest_records("settlement", 1)
    assert [r.round_key for r in newest] == [2]
    assert [r.seq for r in store.latest_records("round", 5)] == [
        r.seq for r in reversed(list(store.records(kinds=("round",))))]


def test_a_round_record_gets_the_next_key_whatever_key_it_is_given(store: RecordStore) -> None:
    record = store.append("round", {"type": "round", "id": "r-1"}, table="T1", round_key=40,
                          round_id="r-1")
    assert record.round_key == 1


# -- the search index ---------------------------------------------------------------------------


def test_the_index_finds_rounds_by_every_field_it_supports(store: RecordStore) -> None:
    won = play_round(store, "r-1", nets={"seat1": "25.00", "seat3": "-10.00"}, alarm="shoe")
    lost = play_round(store, "r-2", nets={"seat2": "-10.00"}, alarm="vision")
    other = play_round(store, "r-3", table="T2", nets={"seat1": "5.00"})
    unfinished = play_round(store, "r-4")

    def keys(**criteria: Any) -> list[int]:
        found, unreadable = store.find_rounds(RoundQuery(**criteria))
        assert unreadable == []
        return [row.round_key for row in found]

    assert keys() == [unfinished, other, lost, won]  # newest first
    assert keys(table="T2") == [other]
    assert keys(seat=3) == [won]
    assert keys(seat=1) == [other, won]
    assert keys(alarm="vision") == [lost]
    assert keys(alarm="*") == [lost, won]
    assert keys(payout_above=Decimal("5.00")) == [won]
    assert keys(payout_above=Decimal("4.99")) == [other, won]
    assert keys(round_id="r-2") == [lost]
    started = {row.round_key: row.started_at for row in store.indexed_rounds()}
    assert keys(since=datetime.fromisoformat(started[lost].replace("Z", "+00:00"))) == [
        unfinished, other, lost]
    assert keys(until=datetime.fromisoformat(started[lost].replace("Z", "+00:00"))) == [
        lost, won]
    assert keys(limit=2) == [unfinished, other]
    assert keys(table="T1", alarm="shoe", seat=1) == [won]

    rows = {row.round_key: row for row in store.indexed_rounds()}
    assert rows[won].status == "settled" and rows[won].net_cents == 1500
    assert rows[won].max_payout_cents == 2500 and rows[won].alarms == 1
    assert rows[won].dealer == "D-7" and rows[won].table == "T1"
    assert rows[unfinished].status == "open" and rows[unfinished].net_cents is None
    assert [row.round_key for row in store.open_rounds("T1")] == [unfinished]
    assert store.open_rounds("T2") == []
    assert sorted((s.round_key, s.seat, s.net_cents, s.hands) for s in store.indexed_seats()) == [
        (won, 1, 2500, 1), (won, 3, -1000, 1), (lost, 2, -1000, 1), (other, 1, 500, 1)]
    assert sorted((p.round_key, p.kind, p.amount_cents) for p in store.indexed_payouts()) == [
        (won, "main", -1000), (won, "main", 2500), (lost, "main", -1000), (other, "main", 500)]
    assert sorted((a.round_key, a.kind) for a in store.indexed_alarms()) == [
        (won, "shoe"), (lost, "vision")]
    assert store.search_choices() == (["T1", "T2"], ["shoe", "vision"])


def test_the_index_finds_rounds_by_card_amount_and_dealer(store: RecordStore) -> None:
    """A card dealt or revealed in a round (any spelling of its code), an amount a seat
    wagered, won or lost on some line, and the dealer the round line names."""
    ten = play_round(store, "r-1", nets={"seat1": "25.00"})
    jack = store.append("round", {"type": "round", "id": "r-2", "dealer_id": "D-9"},
                        table="T1", round_id="r-2").round_key
    assert jack is not None
    for event in ({"type": "bet", "seat": 2, "amount": "15"}, {"type": "card", "card": "jh"},
                  {"type": "card", "card": None, "face_down": True},
                  {"type": "reveal", "card": "10S"}):
        store.append("event", event, table="T1", round_key=jack, round_id="r-2")
    store.append("settlement", settlement(seat2="-15.00"), table="T1", round_key=jack,
                 round_id="r-2")

    def keys(**criteria: Any) -> list[int]:
        found, unreadable = store.find_rounds(RoundQuery(**criteria))
        assert unreadable == []
        return [row.round_key for row in found]

    assert keys(card="JH") == [jack]
    assert keys(card="TS") == [jack]  # revealed as "10S"
    assert keys(card="TH") == [ten]
    assert keys(card="QH") == []
    assert keys(amount=Decimal("15")) == [jack]  # lost 15.00
    assert keys(amount=Decimal("25.00")) == [ten]  # won 25.00
    assert keys(amount=Decimal("10")) == [jack, ten]  # each wagered 10.00
    assert keys(amount=Decimal("7")) == []
    assert keys(dealer="D-9") == [jack]
    assert keys(dealer="D-7", card="TH") == [ten]


def test_an_alarm_raised_in_a_round_recorded_after_it_is_linked_to_that_round(
        store: RecordStore) -> None:
    """The table records a round when it ends, its alarms as they are raised: an alarm naming
    the round in play (``round``) is linked to it once it is recorded, and found by ``alarm``;
    the round's view finds the same alarms by the chain alone."""

    def named(key: int) -> list[int]:
        data = load_round(store, key)
        assert data is not None
        return [record.seq for record in alarms_naming(store, data)]

    before = play_round(store, "r-1", nets={"seat1": "5.00"})
    switched = store.append("alarm", {"kind": "switched_card", "text": "seat 1", "round": "r-2"},
                            table="T1")
    store.append("alarm", {"kind": "staff", "text": "dealer signed in"}, table="T1")
    store.append("alarm", {"kind": "camera_behind", "text": "late", "round": "r-2"},
                 table="T2")  # another table's round of the same id
    later = play_round(store, "r-2", nets={"seat1": "5.00"})
    misplaced = store.append("alarm", {"kind": "misplaced", "text": "after", "round": "r-2"},
                             table="T1")

    found, _ = store.find_rounds(RoundQuery(alarm="*"))
    assert [row.round_key for row in found] == [later]
    assert found[0].alarms == 2
    assert [row.round_key for row in store.find_rounds(RoundQuery(alarm="switched_card"))[0]
            ] == [later]
    assert sorted((a.round_key, a.kind) for a in store.indexed_alarms()) == [
        (later, "misplaced"), (later, "switched_card")]
    assert before not in [a.round_key for a in store.indexed_alarms()]
    assert named(later) == [switched.seq, misplaced.seq] and named(before) == []
    store.rebuild_index()
    assert store.index_mismatches() == []
    assert sorted((a.round_key, a.kind) for a in store.indexed_alarms()) == [
        (later, "misplaced"), (later, "switched_card")]


def test_the_index_finds_rounds_by_dealer_and_by_a_card_dealt_or_revealed(
        store: RecordStore) -> None:
    def dealt(round_id: str, dealer: str, *events: dict[str, Any]) -> int:
        start = store.append("round", {"type": "round", "id": round_id, "dealer_id": dealer},
                             table="T1", round_id=round_id)
        assert start.round_key is not None
        for event in events:
            store.append("event", event, table="T1", round_key=start.round_key,
                         round_id=round_id)
        return start.round_key

    first = dealt("r-1", "D-1", {"type": "card", "card": "7S"}, {"type": "card", "card": None},
                  {"type": "reveal", "card": "KH"})
    second = dealt("r-2", "D-2", {"type": "card", "card": "KH", "to": "dealer"})
    store.append("note", {"card": "AS"}, table="T1", round_key=second, round_id="r-2")

    def keys(**criteria: Any) -> list[int]:
        return [row.round_key for row in store.find_rounds(RoundQuery(**criteria))[0]]

    assert keys(dealer="D-1") == [first] and keys(dealer="D-9") == []
    assert keys(card="KH") == [second, first]
    assert keys(card="kh", dealer="D-2") == [second]
    assert keys(card="7S") == [first]
    assert keys(card="AS") == []  # only what was dealt or revealed
    assert keys(card="%") == [] and keys(card="K") == []


def test_a_round_marked_partial_is_no_longer_open(store: RecordStore) -> None:
    key = play_round(store, "r-1")
    store.append("partial", {"reason": "the recorder stopped"}, table="T1", round_key=key,
                 round_id="r-1")
    assert store.open_rounds("T1") == []
    [row] = store.indexed_rounds()
    assert (row.status, row.note) == ("partial", "the recorder stopped")


def test_frames_are_kept_found_pruned_and_marked_key(store: RecordStore) -> None:
    key = play_round(store, "r-1")
    kept = add_frame(store, key, key_frame=True, content=b"key frame")
    video = add_frame(store, key, key_frame=False, content=b"video frame")
    spared = add_frame(store, key, key_frame=False, content=b"evidence")

    assert video.file is not None
    assert (store.directory / video.file).read_bytes() == b"video frame"
    found = store.frame(video.seq)
    assert found is not None
    assert (found.file, found.media_type, found.size, found.key, found.pruned_at, found.round_key,
            found.table) == (video.file, "image/jpeg", 11, False, None, key, "T1")
    assert store.frame(9999) is None
    assert store.named_files() == {kept.file, video.file, spared.file}
    assert [f.seq for f in store.video_frames_before("9999")] == [video.seq, spared.seq]
    assert store.video_frames_before(kept.at) == []
    assert store.key_frame_files() == {kept.file}
    [by_hour] = store.frame_volume()
    assert (by_hour.table, by_hour.hour, by_hour.count, by_hour.size) == (
        "T1", "2026-11-29T09", 3, 9 + 11 + 8)

    store.append("keyframe", {"user": "olga", "frame": spared.seq}, table="T1", round_key=key)
    prune = store.append("prune", {"user": "olga", "frames": [video.seq]})
    pruned = store.frame(video.seq)
    assert pruned is not None and pruned.pruned_at == prune.at
    assert store.video_frames_before("9999") == []
    assert store.key_frame_files() == {kept.file, spared.file}
    assert [(v.count, v.size) for v in store.frame_volume()] == [(2, 9 + 8)]


def test_records_are_counted_per_table_and_hour(store: RecordStore) -> None:
    play_round(store, "r-1", nets={"seat1": "10.00"})
    play_round(store, "r-2", table="T2")
    store.append("access", {"user": "olga"})  # no table: not counted
    volumes = {(v.table, v.hour): (v.count, v.rounds) for v in store.record_volume()}
    assert volumes == {("T1", "2026-11-29T09"): (3, 1), ("T2", "2026-11-29T09"): (2, 1)}
    assert all(v.size > 0 for v in store.record_volume())


def test_the_index_is_a_projection_rebuilt_from_the_records_alone(backend: Backend) -> None:
    store = backend.create()
    play_round(store, "r-1", nets={"seat1": "10.00"}, alarm="shoe")
    key = play_round(store, "r-2", nets={"seat2": "-10.00"})
    video = add_frame(store, key, key_frame=False, content=b"video")
    store.append("prune", {"user": "olga", "frames": [video.seq]})
    play_round(store, "r-3")
    before = index_answers(store)
    assert store.index_mismatches() == [] and store.index_mismatches(whole=False) == []
    store.close()

    backend.wipe_index()
    store = backend.reopen()
    try:
        assert store.find_rounds(RoundQuery()) == ([], [])
        assert store.index_mismatches() != []
        store.rebuild_index()
        assert index_answers(store) == before
        assert store.index_mismatches() == []
        store.rebuild_index()  # again: the same projection
        assert index_answers(store) == before
    finally:
        store.close()


# -- operators ----------------------------------------------------------------------------------


def test_operators_are_stored_replaced_and_removed(store: RecordStore) -> None:
    store.put_operator(StoredOperator("olga", "operator", "scrypt$1"), format_time(START))
    store.put_operator(StoredOperator("ann", "auditor", "scrypt$2"), format_time(START))
    store.put_operator(StoredOperator("olga", "auditor", "scrypt$3"), format_time(START))
    assert store.operators() == [StoredOperator("ann", "auditor", "scrypt$2"),
                                 StoredOperator("olga", "auditor", "scrypt$3")]
    assert store.operator("olga") == StoredOperator("olga", "auditor", "scrypt$3")
    assert store.operator("nobody") is None
    assert store.delete_operator("ann") is True
    assert store.delete_operator("ann") is False
    assert store.operators() == [StoredOperator("olga", "auditor", "scrypt$3")]


# -- lifetime -----------------------------------------------------------------------------------


def test_a_store_reopened_after_close_keeps_everything_and_continues_the_chain(
        backend: Backend) -> None:
    store = backend.create()
    play_round(store, "r-1", nets={"seat1": "10.00"}, alarm="shoe")
    add_frame(store, 1, key_frame=True, content=b"frame")
    play_round(store, "r-2")
    store.put_operator(StoredOperator("olga", "operator", "scrypt$1"), format_time(START))
    store.checkpoint()
    records, head, answers = list(store.records()), store.head(), index_answers(store)
    store.close()

    store = backend.reopen()
    try:
        assert list(store.records()) == records
        assert store.head() == head
        assert index_answers(store) == answers
        assert store.operators() == [StoredOperator("olga", "operator", "scrypt$1")]
        assert store.storage_problems() == [] and store.storage_problems(thorough=True) == []
        store.check()
        following = store.append("round", {"type": "round", "id": "r-3"}, table="T1",
                                  round_id="r-3")
        assert (following.seq, following.prev_hash, following.round_key) == (
            head[0] + 1, head[1], 3)
    finally:
        store.close()


def test_opening_a_store_that_is_not_there_is_refused(backend: Backend) -> None:
    with pytest.raises(RecordingError) as refused:
        backend.reopen()
    assert not isinstance(refused.value, DamagedRecordingError)


def test_a_locked_store_refuses_writes_by_name_and_loses_nothing(store: RecordStore,
                                                                  backend: Backend) -> None:
    play_round(store, "r-1", nets={"seat1": "10.00"})
    head = store.head()
    with backend.locked():
        with pytest.raises(RecordingError) as refused:
            store.append("note", {"n": 1})
        assert not isinstance(refused.value, DamagedRecordingError)
        assert str(store.location) in str(refused.value)
        assert store.head() == head  # still read while another program writes
    assert store.head() == head
    assert store.append("note", {"n": 1}).seq == head[0] + 1


def test_a_damaged_store_names_what_it_cannot_read_and_reads_the_rest(backend: Backend) -> None:
    store = backend.create()
    for n in range(3):
        play_round(store, f"r-{n}", nets={"seat1": "10.00"})
    for n in range(60):  # enough records to fill several pages of storage
        store.append("note", {"n": n, "padding": "x" * 400}, table="T1")
    head = store.head()
    store.close()

    backend.damage("records")
    store = backend.reopen()
    try:
        with pytest.raises(DamagedRecordingError):
            store.check()
        assert store.storage_problems() != []
        scanned = list(store.scan())
        assert [item.seq for item in scanned] == list(range(1, head[0] + 1))
        lost = [item.seq for item in scanned if isinstance(item, Unreadable)]
        assert lost and len(lost) < head[0]
        assert all(isinstance(item, Record) for item in scanned if item.seq not in lost)
        with pytest.raises(UnreadableRecordError) as unreadable:
            store.record(lost[0])
        assert unreadable.value.seq == lost[0] and unreadable.value.reason
        assert store.last_seq() == head[0]
        with pytest.raises(DamagedRecordingError):  # read whole, not past the damage
            list(store.records())
        in_rounds = {item.seq for item in scanned
                     if isinstance(item, Record) and item.round_key is not None}
        assert store.round_keys() == [1, 2, 3]
        assert {item.seq for key in store.round_keys() for item in store.round_records(key)
                if isinstance(item, Record)} == in_rounds
    finally:
        store.close()


def test_a_damaged_search_index_gives_the_rounds_it_can_read_and_names_the_rest(
        backend: Backend) -> None:
    store = backend.create()
    for n in range(90):  # enough rounds to fill several pages of the index
        play_round(store, f"r-{n}", nets={"seat1": "10.00"})
    store.close()

    backend.damage("index")
    store = backend.reopen()
    try:
        found, unreadable = store.find_rounds(RoundQuery(limit=5000))
        assert unreadable and found
        assert sorted([row.round_key for row in found] + unreadable) == list(range(1, 91))
        assert [row.round_key for row in found] == sorted(
            (row.round_key for row in found), reverse=True)
        assert store.round_keys() == list(range(1, 91))  # the records still give every round
        with pytest.raises(DamagedRecordingError):
            store.indexed_rounds()
    finally:
        store.close()


# -- other tables' chains, ingested verbatim ----------------------------------------------------


def box_chain(directory: Path, table: str, rounds: int) -> tuple[str, list[Record]]:
    """A table box's signed chain, made by a real SQLite store: its chain id and records."""
    from dealer_assist.surveillance.signed_chain import Evidence, begin_signing

    box = RecordingStore(directory, create=True, clock=Clock())
    try:
        chain = begin_signing(box, Evidence(Signer.generate()), table)
        for n in range(1, rounds + 1):
            play_round(box, f"{table}-{n}", table=table, nets={"seat1": "10.00"})
        return chain, list(box.records())
    finally:
        box.close()


def rewritten(record: Record, **changes: Any) -> Record:
    """``record`` altered on the box and re-hashed (its signature no longer fits)."""
    from dataclasses import replace

    altered = replace(record, **changes)
    return replace(altered, hash=chain_hash(altered.prev_hash, canonical_bytes(altered)))


def test_ingested_chains_are_held_verbatim_side_by_side_in_chain_order(
        store: RecordStore, tmp_path: Path) -> None:
    from dealer_assist.surveillance.interface import Ingest

    chain1, t1 = box_chain(tmp_path / "t1", "T1", 2)
    chain2, t2 = box_chain(tmp_path / "t2", "T2", 1)
    chain1b, t1b = box_chain(tmp_path / "t1b", "T1", 1)  # T1 began a new chain
    assert len({chain1, chain2, chain1b}) == 3
    for a, b, c in zip(t1, t2 + [None] * 9, t1b + [None] * 9, strict=False):
        assert [i.outcome for i in store.ingest("T1", chain1, [a])] == [Ingest.NEW]
        if b is not None:
            store.ingest("T2", chain2, [b])
        if c is not None:
            store.ingest("T1", chain1b, [c])

    assert list(store.chain_records("T1", chain1)) == t1
    assert list(store.chain_records("T2", chain2)) == t2
    assert list(store.chain_records("T1", chain1b)) == t1b
    assert list(store.chain_records("T1", chain1, after=3)) == t1[3:]
    assert [r.kind for r in store.chain_records("T1", chain1, round_key=2)] == [
        "round", "event", "settlement"]
    assert all(r.signature for r in store.chain_records("T1", chain1))
    assert {(s.table, s.chain, s.held, s.last_seq, s.next_seq) for s in store.chains()} == {
        ("T1", chain1, len(t1), len(t1), len(t1) + 1),
        ("T2", chain2, len(t2), len(t2), len(t2) + 1),
        ("T1", chain1b, len(t1b), len(t1b), len(t1b) + 1)}
    assert store.head() == (0, GENESIS_HASH) and list(store.records()) == []  # its own: apart
    assert store.forks() == []


def test_a_record_ingested_again_is_a_duplicate_and_changes_nothing(
        backend: Backend, tmp_path: Path) -> None:
    from dealer_assist.surveillance.interface import Ingest

    chain, records = box_chain(tmp_path / "box", "T1", 1)
    store = backend.create()
    try:
        first = store.ingest("T1", chain, records)
        assert [i.outcome for i in first] == [Ingest.NEW] * len(records)
        assert [i.next_seq for i in first] == [r.seq + 1 for r in records]
        again = store.ingest("T1", chain, [records[1], *records])
        assert [i.outcome for i in again] == [Ingest.DUPLICATE] * (len(records) + 1)
        assert [i.held for i in again] == [records[1], *records]
    finally:
        store.close()
    store = backend.reopen()  # durable, once
    try:
        assert list(store.chain_records("T1", chain)) == records
        [state] = store.chains()
        assert (state.held, state.next_seq, state.missing) == (len(records), len(records) + 1, 0)
    finally:
        store.close()


def test_a_different_record_at_a_held_key_is_a_fork_reported_and_nothing_overwritten(
        backend: Backend, tmp_path: Path) -> None:
    from dealer_assist.surveillance.interface import Ingest

    chain, records = box_chain(tmp_path / "box", "T1", 1)
    settled = next(r for r in records if r.kind == "settlement")
    forged = rewritten(settled, body_text=settled.body_text.replace("10.00", "90.00"))
    resigned = replace_signature(settled)
    store = backend.create()
    try:
        store.ingest("T1", chain, records)
        [outcome] = store.ingest("T1", chain, [forged])
        assert (outcome.outcome, outcome.held) == (Ingest.FORK, settled)
        [outcome] = store.ingest("T1", chain, [resigned])  # same hash, other signature
        assert (outcome.outcome, outcome.held) == (Ingest.FORK, settled)
        store.ingest("T1", chain, [forged])  # offered again: noted once
    finally:
        store.close()
    store = backend.reopen()
    try:
        assert list(store.chain_records("T1", chain)) == records
        forks = store.forks()
        assert [(f.table, f.chain, f.held, f.offered) for f in forks] == [
            ("T1", chain, settled, forged), ("T1", chain, settled, resigned)]
        assert store.forks("T2") == [] and len(store.forks("T1")) == 2
        [state] = store.chains()
        assert state.held == len(records)
    finally:
        store.close()


def replace_signature(record: Record) -> Record:
    from dataclasses import replace

    return replace(record, signature=Signer.generate().sign(record.hash))


def test_records_arriving_out_of_order_are_kept_in_chain_order_and_gaps_are_told(
        store: RecordStore, tmp_path: Path) -> None:
    chain, records = box_chain(tmp_path / "box", "T1", 2)
    one, two, three, four, five = records[:5]
    assert [i.next_seq for i in store.ingest("T1", chain, [one, two, five])] == [2, 3, 3]
    [state] = store.chains()
    assert (state.held, state.last_seq, state.next_seq, state.missing) == (3, 5, 3, 2)
    assert [i.next_seq for i in store.ingest("T1", chain, [four])] == [3]
    assert [i.next_seq for i in store.ingest("T1", chain, [three])] == [6]
    assert list(store.chain_records("T1", chain)) == records[:5]
    [state] = store.chains()
    assert (state.held, state.last_seq, state.next_seq, state.missing) == (5, 5, 6, 0)


def test_a_record_that_cannot_be_keyed_is_refused_and_nothing_is_held(
        store: RecordStore, tmp_path: Path) -> None:
    from dataclasses import replace

    chain, records = box_chain(tmp_path / "box", "T1", 1)
    for table, chain_id, batch in (("", chain, records), ("T1", "", records),
                                   ("T1", chain, [records[0], replace(records[1], seq=0)]),
                                   ("T1\n", chain, records)):
        with pytest.raises(RecordingError):
            store.ingest(table, chain_id, batch)
    assert store.chains() == [] and list(store.chain_records("T1", chain)) == []
