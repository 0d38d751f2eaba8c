"""Tables forward their signed recordings to the room over a real JetStream: every record
arrives exactly once and in order, through broker restarts, room restarts and tables offline;
a record rewritten on a box after it was forwarded raises a fork alarm."""

from __future__ import annotations

import asyncio
import hashlib
import logging
import re
import sqlite3
from pathlib import Path

import pytest

from dealer_assist.floor import retention
from dealer_assist.floor.config import NatsConfig
from dealer_assist.floor.forwarder import CURSOR_NAME
from dealer_assist.floor.hold_delivery import reached
from dealer_assist.floor.room import Room, RoomThread
from dealer_assist.surveillance.store import (
    RecordingError,
    RecordingStore,
    canonical_bytes,
    chain_hash,
)
from tests.floor.broker import Broker
from tests.floor.floor import (
    LOGS,
    BoxTable,
    RoomBackend,
    all_arrived,
    chains,
    forward,
    held,
    open_room,
    room_alarms,
    wait_for,
)
from tests.surveillance.factory import record_round


@pytest.fixture
def broker(tmp_path: Path):
    running = Broker(tmp_path / "jetstream").start()
    yield running
    running.stop()


def assert_exact_copies(backend: RoomBackend, tables: list[BoxTable]) -> None:
    for table in tables:
        assert held(backend, table) == table.records(), table.name


def test_every_record_of_every_table_arrives_once_in_order(
        backend: RoomBackend, tmp_path: Path, broker: Broker):
    tables = [BoxTable(tmp_path / "boxes", f"T{n}") for n in range(1, 4)]
    room = open_room(backend, broker.url, tables)
    host, forwarders = forward(tables, broker.url)
    try:
        for table in tables:
            table.play(2)
        assert wait_for(all_arrived(backend, tables))
        assert wait_for(lambda: all(f.status.records == 0 for f in forwarders))
        assert_exact_copies(backend, tables)
        assert room_alarms(backend) == []
        assert room.room.ingested == sum(len(t.records()) for t in tables)
    finally:
        host.stop()
        room.stop()


def test_broker_restarted_mid_stream_loses_and_duplicates_nothing(
        backend: RoomBackend, tmp_path: Path, broker: Broker):
    tables = [BoxTable(tmp_path / "boxes", f"T{n}") for n in range(1, 3)]
    room = open_room(backend, broker.url, tables)
    host, forwarders = forward(tables, broker.url)
    try:
        tables[0].play(1)
        assert wait_for(all_arrived(backend, tables[:1]))
        broker.stop()
        for table in tables:  # the tables go on recording while the broker is down
            table.play(2)
        assert wait_for(lambda: not forwarders[0].status.connected, 30)
        assert forwarders[0].status.records > 0
        broker.start()
        assert wait_for(all_arrived(backend, tables), 90)
        assert_exact_copies(backend, tables)
        assert room_alarms(backend) == []
    finally:
        host.stop()
        room.stop()


def test_room_restarted_resumes_where_it_acknowledged(
        backend: RoomBackend, tmp_path: Path, broker: Broker):
    tables = [BoxTable(tmp_path / "boxes", "T1")]
    room = open_room(backend, broker.url, tables)
    host, _ = forward(tables, broker.url)
    try:
        tables[0].play(1)
        assert wait_for(all_arrived(backend, tables))
        room.stop()
        tables[0].play(2)  # forwarded to the broker while the room is away
        room = open_room(backend, broker.url, tables)
        assert wait_for(all_arrived(backend, tables))
        assert_exact_copies(backend, tables)
        assert room_alarms(backend) == []
    finally:
        host.stop()
        room.stop()


def test_a_table_offline_then_back_catches_up_in_order(
        backend: RoomBackend, tmp_path: Path, broker: Broker):
    tables = [BoxTable(tmp_path / "boxes", f"T{n}") for n in range(1, 3)]
    room = open_room(backend, broker.url, tables)
    host, _ = forward(tables, broker.url)
    try:
        for table in tables:
            table.play(1)
        assert wait_for(all_arrived(backend, tables))
        host.stop()  # T1's and T2's boxes lose the network: they go on recording
        tables[0].play(3)
        tables[1].play(1)
        host, _ = forward(tables, broker.url)
        assert wait_for(all_arrived(backend, tables))
        assert_exact_copies(backend, tables)
        assert room_alarms(backend) == []
    finally:
        host.stop()
        room.stop()


def test_a_record_rewritten_on_the_box_after_forwarding_raises_a_fork(
        backend: RoomBackend, tmp_path: Path, broker: Broker):
    table = BoxTable(tmp_path / "boxes", "T1")
    room = open_room(backend, broker.url, [table])
    host, _ = forward([table], broker.url)
    try:
        table.play(1)
        assert wait_for(all_arrived(backend, [table]))
        host.stop()
        original = table.records()
        # someone with the box's disk rewrites a settled round's bet and re-hashes the chain
        # from there, then winds the forwarder's cursor back so the rewrite is sent
        target = next(r for r in original if r.kind == "event" and '"bet"' in r.body_text)
        conn = sqlite3.connect(table.directory / "index.sqlite")
        prev = target.prev_hash
        for record in original[target.seq - 1:]:
            body = re.sub(r'"amount":"[0-9.]+"', '"amount":"500"', record.body_text) \
                if record.seq == target.seq else record.body_text
            changed = record.__class__(**{**{f: getattr(record, f) for f in record.__slots__},
                                          "body_text": body, "prev_hash": prev})
            digest = chain_hash(prev, canonical_bytes(changed))
            conn.execute("UPDATE records SET body = ?, prev_hash = ?, hash = ? WHERE seq = ?",
                         (body, prev, digest, record.seq))
            prev = digest
        conn.commit()
        conn.close()
        assert table.records()[target.seq - 1].body_text != target.body_text
        (table.directory / CURSOR_NAME).unlink()
        host, _ = forward([table], broker.url)
        assert wait_for(lambda: any(a["kind"] == "fork" for a in room_alarms(backend)))
        fork = next(a for a in room_alarms(backend) if a["kind"] == "fork")
        assert fork["table"] == "T1" and fork["seq"] == target.seq
        assert held(backend, table) == original  # the room's copy is kept, not overwritten
    finally:
        host.stop()
        room.stop()


def test_a_table_silent_past_the_bound_is_alarmed(
        backend: RoomBackend, tmp_path: Path, broker: Broker):
    tables = [BoxTable(tmp_path / "boxes", f"T{n}") for n in range(1, 3)]
    room = open_room(backend, broker.url, tables, silent_after_s=1.0)
    host, _ = forward(tables[:1], broker.url)  # T2's box never comes up
    try:
        tables[0].play(1)
        assert wait_for(lambda: any(a["kind"] == "silent" and a["table"] == "T2"
                                    for a in room_alarms(backend)), 30)
    finally:
        host.stop()
        room.stop()


def test_key_frames_travel_and_other_frames_are_fetched_from_the_box(
        backend: RoomBackend, tmp_path: Path, broker: Broker):
    table = BoxTable(tmp_path / "boxes", "T1")
    with table.recorder() as recorder:
        record_round(recorder, LOGS[0], video_frames=True)
    room = open_room(backend, broker.url, [table])
    host, _ = forward([table], broker.url)
    try:
        assert wait_for(all_arrived(backend, [table]))
        frames = [r for r in table.records() if r.kind == "frame"]
        key = [r for r in frames if '"key":true' in r.body_text]
        video = [r for r in frames if '"key":false' in r.body_text]
        assert key and video
        for record in key:  # in the room's store, as the box holds it
            copy = backend.directory / "floor" / "T1" / table.chain / str(record.file)
            assert hashlib.sha256(copy.read_bytes()).hexdigest() == record.sha256
        for record in video:
            kept = backend.directory / "floor" / "T1" / table.chain / str(record.file)
            assert not kept.exists()
        fetched = room.call(room.room.fetch_frame("T1", video[0].seq))
        assert hashlib.sha256(fetched).hexdigest() == video[0].sha256
        with pytest.raises(RecordingError, match="no frame of T1"):
            room.call(room.room.fetch_frame("T1", 1))  # record 1 is the key record
    finally:
        host.stop()
        room.stop()


def test_the_sample_permissions_let_a_table_publish_only_to_its_own_subject(
        backend: RoomBackend, tmp_path: Path):
    """examples/floor/nats-server.conf: T1 forwards to the room; a record T1 publishes on T2's
    subject is refused by the broker and never reaches the room. The room's hold reaches T1;
    T1 may neither listen to T2's holds nor send one."""
    import nats

    conf = Path(__file__).resolve().parents[2] / "examples" / "floor" / "nats-server.conf"
    broker = Broker(tmp_path / "jetstream", config=conf).start()
    t1, t2 = BoxTable(tmp_path / "boxes", "T1"), BoxTable(tmp_path / "boxes", "T2")
    room = open_room(backend, broker.url_as("room", "sample-room-secret"), [t1, t2])
    host, _ = forward([t1], broker.url_as("T1", "sample-T1-secret"))
    try:
        t1.play(1)
        assert wait_for(all_arrived(backend, [t1]))

        async def forge() -> list[str]:
            errors: list[str] = []

            async def error_cb(error: Exception) -> None:
                errors.append(str(error))

            nc = await nats.connect(broker.url_as("T1", "sample-T1-secret"),
                                    inbox_prefix="_INBOX.T1", error_cb=error_cb)
            with pytest.raises(Exception):  # noqa: B017 (refused: no PubAck ever comes)
                await nc.jetstream().publish("floor.records.T2", b"{}", timeout=2)
            await nc.subscribe("floor.holds.T2")
            await nc.publish("floor.holds.T2", b"{}")
            for _ in range(200):  # the broker's -ERRs for those two, however slow they come
                if sum("floor.holds.t2" in error.lower() for error in errors) >= 2:
                    break
                await asyncio.sleep(0.05)
            await nc.close()
            return errors

        errors = [error.lower() for error in asyncio.run(forge())]
        assert any("permissions violation for publish to \"floor.records.t2\"" in error
                   for error in errors), errors
        assert any("subscription to \"floor.holds.t2\"" in error for error in errors), errors
        assert any("publish to \"floor.holds.t2\"" in error for error in errors), errors
        assert [c.table for c in chains(backend)] == ["T1"]

        # the room's hold reaches T1 through the same permissions
        store = backend.open()
        try:
            start = next(r for r in t1.records() if r.kind == "round")
            assert start.round_key is not None
            found = retention.FloorRoundRef("T1", t1.chain, start.round_key, start.round_id)
            retention.put_hold(store, found, "dispute", "olga")  # type: ignore[arg-type]
        finally:
            store.close()
        room.send_holds()
        assert wait_for(lambda: hold_reached(backend))  # the box's answer, recorded
    finally:
        host.stop()
        room.stop()
        broker.stop()


def hold_reached(backend: RoomBackend) -> bool:
    store = backend.open()
    try:
        return bool(reached(store))
    finally:
        store.close()


class QuickStore(RecordingStore):
    """The SQLite room store, giving up on a lock after half a second (not 30 s)."""

    busy_timeout_s = 0.5


def test_a_store_that_refuses_writes_holds_up_the_room_and_loses_nothing(tmp_path: Path,
                                                                         broker: Broker, caplog):
    table = BoxTable(tmp_path / "boxes", "T1")
    directory = tmp_path / "room"
    room = RoomThread(Room(lambda: QuickStore(directory, create=True), NatsConfig(broker.url),
                           {"T1": table.keys()})).start()
    backend = RoomBackend(directory)
    host, _ = forward([table], broker.url)
    try:
        table.play(1)
        assert wait_for(all_arrived(backend, [table]))
        before = len(held(backend, table))
        lock = sqlite3.connect(directory / "index.sqlite", isolation_level=None)
        lock.execute("BEGIN IMMEDIATE")  # another program holds the room's database
        caplog.set_level(logging.ERROR, "dealer_assist.floor.room")
        table.play(1)
        assert wait_for(lambda: "the room's store refuses the records" in caplog.text)
        assert room.room.ingested == before  # nothing taken, so nothing acknowledged
        lock.execute("ROLLBACK")
        lock.close()
        assert wait_for(all_arrived(backend, [table]))
        assert held(backend, table) == table.records()
        assert room_alarms(backend) == []
    finally:
        host.stop()
        room.stop()
