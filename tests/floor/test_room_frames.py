"""The room's copy of a key frame is written once, for a record its table's key vouches for,
inside that table chain's folder, never over a file that is there: a fork (a record rewritten on
the box, or a stranger on the table's subject), an untrusted table, a record no trusted key
signs, or a name leading out of the folder writes nothing; a file in the way is kept and
alarmed; a frame lost to a crash between the ingest and its write is written when its record
comes again. The real room (its ``_take``, as the consumer calls it, and once over a real
JetStream) on a real SQLite and PostgreSQL store."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
from pathlib import Path

import pytest

from dealer_assist.floor.config import NatsConfig
from dealer_assist.floor.room import Room
from dealer_assist.floor.wire import encode_record, record_subject
from dealer_assist.surveillance.query import floor_round, floor_round_view
from dealer_assist.surveillance.store import Record, canonical_bytes, chain_hash
from tests.floor.broker import Broker
from tests.floor.floor import (
    BoxTable,
    RoomBackend,
    all_arrived,
    forward,
    open_room,
    room_alarms,
    wait_for,
)
from tests.postgres import fresh_schema, server_url

FORGED = b"\xff\xd8\xff\xe0 FORGED frame"


@pytest.fixture
def box(tmp_path: Path) -> BoxTable:
    table = BoxTable(tmp_path / "boxes", "T1")
    table.play(2)
    return table


class Message:
    """A JetStream message as the room's consumer hands it to ``_take``."""

    def __init__(self, subject: str, data: bytes):
        self.subject, self.data = subject, data


class Taking:
    """The real room over ``backend``'s store, taking messages as its consumer does."""

    def __init__(self, backend: RoomBackend, tables: list[BoxTable]):
        self.backend = backend
        self.room = Room(lambda: backend.open(create=True), NatsConfig("nats://127.0.0.1:1"),
                         {t.name: t.keys() for t in tables})
        self.room.store = backend.open(create=True)
        self.room._resume_checks()  # as Room.run begins

    def take(self, *messages: Message) -> None:
        self.room._take(list(messages))

    def close(self) -> None:
        assert self.room.store is not None
        self.room.store.close()

    def copy(self, table: str, chain: str, record: Record) -> Path:
        return self.backend.directory / "floor" / table / chain / str(record.file)

    def kinds(self) -> list[str]:
        return [alarm.kind for alarm in self.room.alarms]


def message(table: BoxTable, record: Record, frame: bytes | None = None, *,
            subject: str | None = None, chain: str | None = None) -> Message:
    return Message(subject or record_subject(table.name),
                   encode_record(subject.rpartition(".")[2] if subject else table.name,
                                 chain or table.chain, record, frame))


def sent(table: BoxTable, record: Record) -> Message:
    """``record`` as its box forwards it: with its frame's bytes where it is a frame."""
    frame = (table.directory / str(record.file)).read_bytes() if record.kind == "frame" else None
    return message(table, record, frame)


def key_frames(table: BoxTable) -> list[Record]:
    return [r for r in table.records() if r.kind == "frame"]


def rehashed(record: Record, **changes: object) -> Record:
    """``record`` changed and its hash made again (its signature no longer verifies)."""
    changed = dataclasses.replace(record, **changes)  # type: ignore[arg-type]
    return dataclasses.replace(changed, hash=chain_hash(changed.prev_hash,
                                                        canonical_bytes(changed)))


def signed_next(table: BoxTable, file: str, frame: bytes) -> Record:
    """A frame record after the chain's last, signed by the table's own key, naming ``file``."""
    last = table.records()[-1]
    body = {"event_index": 0, "detections": [], "key": True, "media_type": "image/jpeg",
            "width": 1, "height": 1, "size": len(frame)}
    record = rehashed(dataclasses.replace(
        last, seq=last.seq + 1, kind="frame", body_text=json.dumps(body), file=file,
        sha256=hashlib.sha256(frame).hexdigest(), prev_hash=last.hash))
    return dataclasses.replace(record, signature=table.signer.sign(record.hash))


def publish(url: str, subject: str, data: bytes, message_id: str) -> None:
    import asyncio

    import nats

    async def send() -> None:
        nc = await nats.connect(url)
        try:
            await nc.jetstream().publish(subject, data, headers={"Nats-Msg-Id": message_id})
        finally:
            await nc.close()

    asyncio.run(send())


def test_a_forged_frame_on_the_tables_subject_leaves_the_rooms_copy_intact(
        backend: RoomBackend, box: BoxTable, tmp_path: Path) -> None:
    """The reviewer's attack over a real JetStream: record 8 again, same number and file, a
    FORGED JPEG, published on T1's subject. The fork is alarmed; the room's copy is still the
    table's frame and the floor view still says intact (before, the forged bytes replaced it
    and the view said altered: the original was gone)."""
    broker = Broker(tmp_path / "jetstream").start()
    room = open_room(backend, broker.url, [box])
    host, _ = forward([box], broker.url)
    try:
        assert wait_for(all_arrived(backend, [box]))
        target = key_frames(box)[0]
        copy = backend.directory / "floor" / "T1" / box.chain / str(target.file)
        assert wait_for(copy.is_file)
        forged = rehashed(target, sha256=hashlib.sha256(FORGED).hexdigest())
        publish(broker.url, record_subject("T1"), encode_record("T1", box.chain, forged, FORGED),
                f"T1.{box.chain}.{forged.seq}.{forged.hash[:16]}")
        assert wait_for(lambda: any(a["kind"] == "fork" for a in room_alarms(backend)))
    finally:
        host.stop()
        room.stop()
        broker.stop()
    assert hashlib.sha256(copy.read_bytes()).hexdigest() == target.sha256
    store = backend.open()
    try:
        data = floor_round(store, "T1", box.chain, int(target.round_key or 0))
        assert data is not None
        view = floor_round_view(store, data, "T1", box.chain)
    finally:
        store.close()
    states = {frame["seq"]: frame["file_state"] for frame in view["frames"]}
    assert states[target.seq] == "intact"


def test_a_fork_taken_in_the_same_batch_as_its_record_writes_nothing_of_its_own(
        backend: RoomBackend, box: BoxTable) -> None:
    """The genuine frame and its fork in one batch, the fork first on the wire after the
    genuine: the room holds the first, writes its frame, and the fork's bytes never land."""
    room = Taking(backend, [box])
    try:
        target = key_frames(box)[0]
        forged = rehashed(target, sha256=hashlib.sha256(FORGED).hexdigest())
        room.take(*[sent(box, r) for r in box.records()], message(box, forged, FORGED))
        assert "fork" in room.kinds()
        copy = room.copy("T1", box.chain, target)
        assert hashlib.sha256(copy.read_bytes()).hexdigest() == target.sha256
    finally:
        room.close()


def test_an_untrusted_tables_frame_is_never_written(backend: RoomBackend,
                                                   box: BoxTable) -> None:
    """Table ZZ, which room.toml does not name, sends a 4 MiB frame at a path 100 folders deep:
    its record is held and alarmed, no byte of it reaches the room's disk."""
    room = Taking(backend, [box])
    try:
        junk = b"\xff\xd8" + b"A" * (4 * 1024 * 1024)
        target = key_frames(box)[0]
        deep = rehashed(target, sha256=hashlib.sha256(junk).hexdigest(),
                        file="x/" * 100 + "big.jpg")
        shallow = rehashed(target, sha256=hashlib.sha256(junk).hexdigest(), file="big.jpg")
        room.take(message(box, deep, junk, subject=record_subject("ZZ"), chain="anychain"),
                  message(box, dataclasses.replace(shallow, seq=shallow.seq + 1), junk,
                          subject=record_subject("ZZ"), chain="anychain"))
        assert "untrusted" in room.kinds()
        assert not (backend.directory / "floor" / "ZZ").exists()
    finally:
        room.close()


def test_a_frame_no_trusted_key_signs_is_not_written_and_is_alarmed(
        backend: RoomBackend, box: BoxTable) -> None:
    """On T1's own subject, a frame record the room has not held yet (so NEW, no fork) whose
    signature does not verify, and one on a new chain of T1 that no key record begins: neither
    is written; each is a frame alarm."""
    room = Taking(backend, [box])
    try:
        room.take(*[sent(box, r) for r in box.records()])
        assert room.kinds() == []
        genuine = signed_next(box, "frames/2026-12-04/T1/next.jpg", FORGED)
        unsigned = dataclasses.replace(genuine, signature=box.records()[-1].signature)
        stranger = dataclasses.replace(signed_next(box, "frames/own.jpg", FORGED), seq=1,
                                       prev_hash="0" * 64, signature=None)
        stranger = rehashed(stranger)
        room.take(message(box, unsigned, FORGED), message(box, stranger, FORGED, chain="fresh"))
        assert not room.copy("T1", box.chain, unsigned).exists()
        assert not (backend.directory / "floor" / "T1" / "fresh").exists()
        frames = [a for a in room.room.alarms if a.kind == "frame"]
        assert {(a.chain, a.seq) for a in frames} == {(box.chain, unsigned.seq), ("fresh", 1)}
        assert "does not verify" in frames[0].text or "does not verify" in frames[1].text
    finally:
        room.close()


@pytest.mark.parametrize("name", ["x/" * 20 + "deep.jpg", "frames/../../../escape.jpg",
                                  "frames//double.jpg", "frames/./dot.jpg", "/absolute.jpg",
                                  "frames/" + "n" * 260 + ".jpg",
                                  "frames/" + "n" * 250 + ".jpg"])
def test_a_frame_name_leading_out_or_too_deep_is_refused_even_signed(
        backend: RoomBackend, box: BoxTable, name: str) -> None:
    """Even the table's own key cannot make the room write outside floor/T1/CHAIN, nor make
    folders without bound."""
    room = Taking(backend, [box])
    try:
        room.take(*[sent(box, r) for r in box.records()])
        before = sorted(p for p in backend.directory.rglob("*"))
        record = signed_next(box, name, FORGED)
        room.take(message(box, record, FORGED))
        assert sorted(p for p in backend.directory.rglob("*")) == before
        assert [a.kind for a in room.room.alarms] == ["frame"]
        assert "will not write" in room.room.alarms[0].text
    finally:
        room.close()


def test_a_frame_the_file_system_refuses_for_good_is_alarmed_and_the_rest_go_on(
        backend: RoomBackend, box: BoxTable) -> None:
    """A folder where a frame is written aside (a lasting error, which writing the frame again
    would meet again) is the frame's alarm; the room does not retry it forever behind every
    other record, and the next frames are kept."""
    room = Taking(backend, [box])
    try:
        first, *rest = key_frames(box)
        blocked = room.copy("T1", box.chain, first)
        blocked.with_name(blocked.name + "~incoming").mkdir(parents=True)
        room.take(*[sent(box, r) for r in box.records()])
        assert room.kinds() == ["frame"] and "the file system refuses it" in \
            room.room.alarms[0].text
        assert not blocked.exists()
        assert rest and all(room.copy("T1", box.chain, r).is_file() for r in rest)
    finally:
        room.close()


def test_a_file_in_the_way_is_kept_and_alarmed_never_overwritten(
        backend: RoomBackend, box: BoxTable, tmp_path: Path) -> None:
    """The room's copy altered on its disk, and a link planted where another frame goes: when
    the records come again (a box resending), neither is written over nor followed; each is a
    frame alarm. An intact copy is not even rewritten (same file, same inode)."""
    room = Taking(backend, [box])
    try:
        records = box.records()
        room.take(*[sent(box, r) for r in records])
        first, second, third = key_frames(box)[:3]
        altered = room.copy("T1", box.chain, first)
        altered.write_bytes(b"altered in the room")
        planted = room.copy("T1", box.chain, second)
        planted.unlink()
        outside = tmp_path / "outside"
        outside.write_bytes(b"not the room's")
        planted.symlink_to(outside)
        intact = room.copy("T1", box.chain, third)
        inode = os.stat(intact).st_ino
        room.take(*[sent(box, r) for r in records])
        assert altered.read_bytes() == b"altered in the room"
        assert planted.is_symlink() and outside.read_bytes() == b"not the room's"
        assert os.stat(intact).st_ino == inode
        frames = [a for a in room.room.alarms if a.kind == "frame"]
        assert sorted(a.seq for a in frames) == [first.seq, second.seq]
        assert all("kept, not overwritten" in a.text for a in frames)
    finally:
        room.close()


def test_a_frame_lost_to_a_crash_after_its_ingest_is_written_when_it_comes_again(
        backend: RoomBackend, box: BoxTable) -> None:
    """The room stops after the store held a batch and before its frames were written (a
    half-written frame left aside): nothing was acknowledged, so the batch comes again to a
    room restarted; each record is a DUPLICATE and its frame is written, whole, under its
    name; nothing is left aside."""
    records = box.records()
    store = backend.open(create=True)
    try:
        store.ingest("T1", box.chain, records)  # the crash: held, no frame written
    finally:
        store.close()
    frames = key_frames(box)
    aside = backend.directory / "floor" / "T1" / box.chain / f"{frames[0].file}~incoming"
    aside.parent.mkdir(parents=True)
    aside.write_bytes(b"half a fra")
    room = Taking(backend, [box])  # restarted
    try:
        for record in frames:
            assert not room.copy("T1", box.chain, record).exists()
        room.take(*[sent(box, r) for r in records])
        assert room.kinds() == []
        for record in frames:
            copy = room.copy("T1", box.chain, record)
            assert hashlib.sha256(copy.read_bytes()).hexdigest() == record.sha256
            assert os.stat(copy).st_nlink == 1
        assert not aside.exists()
    finally:
        room.close()


def test_after_a_gap_the_tables_frame_is_kept_and_a_forged_one_is_not(
        backend: RoomBackend, box: BoxTable) -> None:
    """A record missing before a key frame (a gap, so the frame's record is not verified in
    order yet): the table's frame is vouched for by the chain's key all the same and written;
    a forged frame past the chain's end, which no key signs, is not."""
    room = Taking(backend, [box])
    try:
        records = box.records()
        frame = key_frames(box)[1]
        forged = signed_next(box, "frames/2026-12-04/T1/forged.jpg", FORGED)
        forged = dataclasses.replace(forged, signature=records[-1].signature)
        room.take(*[sent(box, r) for r in records if r.seq != frame.seq - 1],
                  message(box, forged, FORGED))
        assert "gap" in room.kinds()
        assert [a.seq for a in room.room.alarms if a.kind == "frame"] == [forged.seq]
        copy = room.copy("T1", box.chain, frame)
        assert hashlib.sha256(copy.read_bytes()).hexdigest() == frame.sha256
        assert not room.copy("T1", box.chain, forged).exists()
    finally:
        room.close()


def test_a_frame_the_rooms_retention_deleted_is_not_brought_back_by_a_resend(
        tmp_path: Path, box: BoxTable) -> None:
    """The room's frames policy deleted its copies (recorded in a floor-prune record); the box
    then sends its chain again (a cursor lost): the records are duplicates and the deleted
    frames stay deleted (else the next prune, which skips what it pruned, would keep them
    for ever)."""
    from datetime import timedelta

    from dealer_assist.floor.pgstore import PostgresStore
    from dealer_assist.floor.retention import prune_room

    with fresh_schema("frames") as schema:
        backend = RoomBackend(tmp_path / "room", (server_url(), schema))
        room = Taking(backend, [box])
        try:
            records = box.records()
            room.take(*[sent(box, r) for r in records])
            frames = key_frames(box)
            assert all(room.copy("T1", box.chain, r).is_file() for r in frames)
            store = room.room.store
            assert isinstance(store, PostgresStore)
            answer = prune_room(store, timedelta(hours=1), "tester",
                                store.clock() + timedelta(days=1))
            assert answer["pruned"] == len(frames)
            assert not any(room.copy("T1", box.chain, r).exists() for r in frames)
            room.take(*[sent(box, r) for r in records])
            assert not any(room.copy("T1", box.chain, r).exists() for r in frames)
            assert room.kinds() == []
        finally:
            room.close()
