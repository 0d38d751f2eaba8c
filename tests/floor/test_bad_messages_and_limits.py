"""Bad input from one table never stops the floor for the others: a message the room's stores
cannot hold (a number past 64 bits, a NUL character, a lone surrogate, JSON nested too deep) is
a ``message`` alarm, acknowledged, never retried for ever nor crashing the room; a record whose
body the PostgreSQL index cannot hold (a seat settled twice, a body nested too deep) is held and
left out of the index; a key frame over the broker's ``max_payload`` travels without its bytes
instead of holding up its table's forwarding for ever. Over a real JetStream, SQLite and
PostgreSQL."""

from __future__ import annotations

import asyncio
import dataclasses
import json
from pathlib import Path

import pytest

import tests.surveillance.factory as factory
from dealer_assist.floor.wire import WireError, decode_record, encode_record, record_subject
from dealer_assist.surveillance.store import (
    GENESIS_HASH,
    Record,
    RecordingError,
    canonical_bytes,
    chain_hash,
)
from tests.floor.broker import Broker
from tests.floor.floor import (
    BoxTable,
    RoomBackend,
    all_arrived,
    forward,
    held,
    open_room,
    room_alarms,
    wait_for,
)
from tests.floor.test_room_frames import Message, Taking
from tests.postgres import fresh_schema, server_url

_FIELDS = ("seq", "at", "table", "round_key", "round_id", "kind", "body_text", "file", "sha256",
           "hash_format", "prev_hash", "hash", "signature")


def raw_message(table: str, chain: str, record: Record) -> bytes:
    """``record`` as a message on ``table``'s subject, written as any JSON writer would (so a
    lone surrogate travels as its ``\\ud800`` escape)."""
    fields = {name: getattr(record, name) for name in _FIELDS}
    return json.dumps({**fields, "v": 1, "source": table, "chain": chain}).encode()


def poison(box: BoxTable) -> list[bytes]:
    """Messages on T1's subject that no store can hold."""
    first = box.records()[0]
    return [raw_message("T1", box.chain, dataclasses.replace(first, seq=2**63)),
            raw_message("T1", box.chain, dataclasses.replace(first, body_text="a\x00b")),
            raw_message("T1", box.chain, dataclasses.replace(first, body_text="a\ud800b")),
            raw_message("T1", box.chain, dataclasses.replace(first, round_key=2**64)),
            raw_message("T1", box.chain, dataclasses.replace(first, hash_format=2**40)),
            b"[" * 100_000]


def chained(table: str, kinds_and_bodies: list[tuple[str, str]]) -> list[Record]:
    """An unsigned chain of ``table`` (as a table the room does not trust may send it)."""
    out, prev = [], GENESIS_HASH
    for seq, (kind, body) in enumerate(kinds_and_bodies, 1):
        record = Record(seq, "2026-12-04T10:00:00.000000Z", table, 1, "r1", kind, body, None,
                        None, 2, prev, "", None)
        record = dataclasses.replace(record, hash=chain_hash(prev, canonical_bytes(record)))
        out.append(record)
        prev = record.hash
    return out


def unindexable() -> list[Record]:
    """A round whose settlement names seat 1 twice, and an event nested too deep to read."""
    seat = {"seat": 1, "net": "5.00", "wager": "5.00"}
    return chained("EVIL", [("round", "{}"),
                            ("settlement", json.dumps({"net": "10.00", "seats": [seat, seat]})),
                            ("event", "[" * 100_000)])


def publish_all(url: str, messages: list[tuple[str, bytes]]) -> None:
    import nats

    async def send() -> None:
        nc = await nats.connect(url)
        try:
            js = nc.jetstream()
            for _ in range(100):  # until the room has made its stream
                try:
                    await js.stream_info("FLOOR")
                    break
                except Exception:
                    await asyncio.sleep(0.1)
            for number, (subject, data) in enumerate(messages):
                await js.publish(subject, data, headers={"Nats-Msg-Id": f"poison-{number}"})
        finally:
            await nc.close()

    asyncio.run(send())


@pytest.mark.parametrize("number", range(6))
def test_a_message_no_store_can_hold_is_refused_by_the_wire(tmp_path: Path, number: int):
    box = BoxTable(tmp_path / "boxes", "T1")
    with pytest.raises(WireError):
        decode_record(record_subject("T1"), poison(box)[number])


def test_records_the_index_cannot_hold_are_held_and_the_batch_taken(backend: RoomBackend):
    """The room's ``_take`` as its consumer calls it: before, PostgreSQL refused the seat
    settled twice (a RecordingError: the batch retried for ever) and the deep body raised
    RecursionError out of the room."""
    room = Taking(backend, [])
    try:
        records = unindexable()
        room.take(*[Message(record_subject("EVIL"), encode_record("EVIL", "c1", r))
                    for r in records])
        assert room.kinds() == ["untrusted"]
        assert room.room.store is not None
        assert list(room.room.store.chain_records("EVIL", "c1")) == records
    finally:
        room.close()


def test_poison_on_one_tables_subject_never_stops_the_room_for_the_others(
        backend: RoomBackend, tmp_path: Path):
    """T1's subject carries messages no store can hold and EVIL's records the index cannot;
    each is alarmed (or held), and T2's records all arrive after them. Before, the room
    retried the batch for ever or its consumer died."""
    broker = Broker(tmp_path / "jetstream").start()
    t1, t2 = BoxTable(tmp_path / "boxes", "T1"), BoxTable(tmp_path / "boxes", "T2")
    t1.play(1)
    room = open_room(backend, broker.url, [t1, t2])
    try:
        publish_all(broker.url, [(record_subject("T1"), data) for data in poison(t1)]
                    + [(record_subject("EVIL"), encode_record("EVIL", "c1", record))
                       for record in unindexable()])
        host, _ = forward([t2], broker.url)
        try:
            t2.play(1)
            assert wait_for(all_arrived(backend, [t2]), 30)
            assert room._thread.is_alive() and room.failed is None
            messages = [a for a in room_alarms(backend) if a["kind"] == "message"]
            assert len(messages) == len(poison(t1))
            assert {a["table"] for a in messages} == {"T1"}
        finally:
            host.stop()
    finally:
        room.stop()
        broker.stop()


def test_a_key_frame_over_the_brokers_max_payload_travels_without_its_bytes(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """A 2 MiB key frame (under the 4 MiB that may travel, over nats-server's default 1 MiB
    max_payload): its record and every record after it reach the room, the frame stays on
    the box, and the room's request for it is answered with why. Before, the forwarder sent
    that record again and again for ever and the table's later records never left the box."""
    box = BoxTable(tmp_path / "boxes", "T1")
    frame_jpeg, calls = factory.frame_jpeg, []

    def one_big(code: str, slot: int) -> tuple[bytes, object]:
        jpeg, detections = frame_jpeg(code, slot)
        calls.append(code)
        return (jpeg + b"\0" * (2 * 1024 * 1024) if len(calls) == 2 else jpeg), detections

    monkeypatch.setattr(factory, "frame_jpeg", one_big)
    box.play(1)
    monkeypatch.setattr(factory, "frame_jpeg", frame_jpeg)
    box.play(1)
    big = [r for r in box.records() if r.kind == "frame" and '"size":2' in r.body_text
           and (box.directory / str(r.file)).stat().st_size > 2 * 1024 * 1024]
    assert len(big) == 1
    broker = Broker(tmp_path / "jetstream").start()
    backend = RoomBackend(tmp_path / "room")
    room = open_room(backend, broker.url, [box])
    host, forwarders = forward([box], broker.url)
    try:
        def arrived() -> bool:
            try:
                return len(held(backend, box)) == len(box.records())
            except RecordingError:  # the room is still creating its store
                return False

        assert wait_for(arrived, 30), forwarders[0].status
        assert held(backend, box) == box.records()
        assert not (backend.directory / "floor" / "T1" / box.chain / str(big[0].file)).exists()
        with pytest.raises(RecordingError, match="max_payload"):
            room.call(room.room.fetch_frame("T1", big[0].seq))
    finally:
        host.stop()
        room.stop()
        broker.stop()


def test_an_alarm_the_store_refuses_is_recorded_when_the_batch_comes_again(tmp_path: Path):
    """A badly signed record is ingested, then its ``key`` alarm waits on a lock another
    session holds on the room's records (as a long prune's DELETE does) past the store's lock
    timeout: nothing is acknowledged, and the batch that comes again records the alarm.
    Before, the room's check had already moved past the record, so its alarm was never
    recorded in that run."""
    import psycopg
    from psycopg import sql

    from dealer_assist.floor.config import NatsConfig
    from dealer_assist.floor.pgstore import PostgresStore
    from dealer_assist.floor.room import Room
    from tests.floor.test_room_frames import message, sent

    box = BoxTable(tmp_path / "boxes", "T1")
    box.play(1)
    records = box.records()
    badly_signed = dataclasses.replace(records[-1], signature=records[-2].signature)
    with fresh_schema("audit") as schema:
        backend = RoomBackend(tmp_path / "room", (server_url(), schema))
        backend.open(create=True).close()
        room = Room(backend.open, NatsConfig("nats://127.0.0.1:1"), {"T1": box.keys()})
        room.store = PostgresStore(server_url(), tmp_path / "room", schema=schema,
                                   signer=backend.signer, lock_timeout_s=1)
        try:
            room._resume_checks()
            room._take([sent(box, r) for r in records[:-1]])
            with psycopg.connect(server_url()) as other:
                other.execute(sql.SQL("SET search_path = {}").format(sql.Identifier(schema)))
                other.execute("LOCK TABLE records IN ROW EXCLUSIVE MODE")
                with pytest.raises(RecordingError):
                    room._take([message(box, badly_signed)])
                other.rollback()
            room._take([message(box, badly_signed)])  # the batch comes again
            recorded = [r.body for r in room.store.records(kinds=("floor-alarm",))]
            assert [(a["kind"], a["seq"]) for a in recorded] == [("key", badly_signed.seq)]
        finally:
            room.store.close()


def test_a_key_record_nested_too_deep_to_read_neither_stops_nor_wedges_the_room(
        backend: RoomBackend):
    """A ``key`` record's body is read to learn the key it names: one nested too deep names
    none. Before, RecursionError left the room's consumer and every restart met it again."""
    records = chained("EVIL", [("key", "[" * 100_000), ("event", "{}")])
    room = Taking(backend, [])
    try:
        room.take(*[Message(record_subject("EVIL"), encode_record("EVIL", "c1", r))
                    for r in records])
        assert room.room.store is not None
        assert list(room.room.store.chain_records("EVIL", "c1")) == records
    finally:
        room.close()
    again = Taking(backend, [])  # a restart verifies what the store holds
    again.close()
