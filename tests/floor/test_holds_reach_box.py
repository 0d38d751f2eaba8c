"""A legal hold put in the room reaches the table box, over a real ``nats-server`` and a real
PostgreSQL room store: the box marks the held round's frames with signed ``keyframe`` records so
its own retention keeps them, the room records ``floor-hold-reached``, a box offline gets the hold
from ``room serve``'s retry once back, a repeat writes nothing, and bad requests are refused."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest

from dealer_assist.cli import main
from dealer_assist.floor.config import NatsConfig
from dealer_assist.floor.hold_delivery import HOLD_REACHED, deliver_now, reached
from dealer_assist.floor.retention import holds
from dealer_assist.floor.wire import HoldRequest, hold_subject
from dealer_assist.surveillance.access import os_account
from dealer_assist.surveillance.query import prune_frames
from dealer_assist.surveillance.store import Record, RecordingStore, utc_now
from tests.floor.broker import Broker
from tests.floor.floor import (
    LOGS,
    BoxTable,
    RoomBackend,
    all_arrived,
    forward,
    open_room,
    room_alarms,
    wait_for,
)
from tests.postgres import fresh_schema, server_url
from tests.surveillance.factory import record_round


@pytest.fixture
def broker(tmp_path: Path) -> Iterator[Broker]:
    running = Broker(tmp_path / "jetstream").start()
    yield running
    running.stop()


@pytest.fixture
def backend(tmp_path: Path) -> Iterator[RoomBackend]:
    with fresh_schema("holds") as schema:
        yield RoomBackend(tmp_path / "frames", (server_url(), schema))


def video_table(root: Path, rounds: int = 2) -> BoxTable:
    """A box that recorded ``rounds`` rounds, each with video frames (not key) beside its key
    frames."""
    table = BoxTable(root, "T1")
    with table.recorder() as recorder:
        for number in range(rounds):
            record_round(recorder, LOGS[number], video_frames=True)
    return table


def room_config(folder: Path, backend: RoomBackend, url: str, table: BoxTable) -> str:
    assert backend.postgres is not None
    (folder / "T1.pub").write_text(table.signer.public.text + "\n")
    backend.save_key(folder)  # the room's commands sign with the running room's key
    config = folder / "room.toml"
    config.write_text(f'[postgres]\nurl = "{backend.postgres[0]}"\nschema = '
                      f'"{backend.postgres[1]}"\nframes = "frames"\n[nats]\nurl = "{url}"\n'
                      '[tables]\nT1 = "T1.pub"\n')
    return str(config)


def round_ids(table: BoxTable) -> list[str]:
    return [str(r.round_id) for r in table.records() if r.kind == "round"]


def video_frames(table: BoxTable, round_id: str) -> list[Record]:
    return [r for r in table.records() if r.kind == "frame" and r.round_id == round_id
            and json.loads(r.body_text).get("key") is False]


def marks(table: BoxTable) -> list[Record]:
    return [r for r in table.records() if r.kind == "keyframe"]


def reached_records(backend: RoomBackend) -> list[Record]:
    store = backend.open()
    try:
        return list(store.records(kinds=(HOLD_REACHED,)))
    finally:
        store.close()


def test_a_hold_reaches_a_running_box_and_its_prune_keeps_the_rounds_frames(
        tmp_path: Path, broker: Broker, backend: RoomBackend,
        capsys: pytest.CaptureFixture[str]) -> None:
    table = video_table(tmp_path / "boxes")
    held_id, other_id = round_ids(table)
    room = open_room(backend, broker.url, [table])
    host, _ = forward([table], broker.url)
    config = room_config(tmp_path, backend, broker.url, table)
    try:
        assert wait_for(all_arrived(backend, [table]))
        assert main(["room", "hold", "--config", config, "T1", held_id,
                     "--why", "dispute 4411"]) == 0
        out = capsys.readouterr().out
        assert f"round {held_id} of T1 on hold" in out and "on the table's box since" in out

        # the box marked every video frame of that round, signed with the table's key
        video = video_frames(table, held_id)
        assert video
        found = marks(table)
        assert sorted(json.loads(r.body_text)["frame"] for r in found) == [r.seq for r in video]
        store = backend.open()
        try:
            hold = next(iter(holds(store).values()))  # type: ignore[arg-type]
        finally:
            store.close()
        for mark in found:
            body = json.loads(mark.body_text)
            assert body["user"] == f"room:{os_account()}" and body["room_hold"] == hold.seq
            assert body["why"] == "dispute 4411" and mark.round_id == held_id
            assert mark.signature and table.signer.public.verifies(mark.hash, mark.signature)
        (record,) = reached_records(backend)
        assert record.body["hold"] == hold.seq and record.body["box"] == "T1"
        assert set(record.body["kept"]) >= {r.seq for r in video}
        assert record.body["pruned"] == []

        # the box's own retention keeps the held round's frames and prunes the other's
        box = RecordingStore(table.directory)
        try:
            pruned = prune_frames(box, timedelta(hours=1), "tech",
                                  now=utc_now() + timedelta(days=1))
        finally:
            box.close()
        assert sorted(pruned["refused"]) == [] and pruned["pruned"] == len(
            video_frames(table, other_id))
        assert all((table.directory / str(r.file)).is_file() for r in video)
        assert not any((table.directory / str(r.file)).exists()
                       for r in video_frames(table, other_id))

        # a repeat of the same hold writes nothing new, on the box or in the room
        before = len(table.records())
        store = backend.open()
        try:
            again = deliver_now(NatsConfig(broker.url), store, hold)
        finally:
            store.close()
        assert again.seq == record.seq and len(table.records()) == before
        assert len(reached_records(backend)) == 1

        # a hold on the pruned round: the box says which frames were gone already
        assert main(["room", "hold", "--config", config, "T1", other_id, "--why", "late"]) == 0
        capsys.readouterr()
        late = next(r for r in reached_records(backend) if r.body["round_key"] != hold.round_key)
        assert late.body["pruned"] == [r.seq for r in video_frames(table, other_id)]
        assert len(table.records()) == before  # nothing left there to mark
        assert main(["room", "holds", "--config", config]) == 0
        assert capsys.readouterr().out.count("on the table's box since") == 2

        # the marks reach the room like every record, and verify there
        assert wait_for(all_arrived(backend, [table]))
        assert room_alarms(backend) == []
    finally:
        host.stop()
        room.stop()


def test_a_box_offline_gets_the_hold_from_room_serves_retry_when_back(
        tmp_path: Path, broker: Broker, backend: RoomBackend,
        capsys: pytest.CaptureFixture[str]) -> None:
    table = video_table(tmp_path / "boxes", rounds=1)
    (held_id,) = round_ids(table)
    room = open_room(backend, broker.url, [table], hold_retry_s=0.5)
    host, _ = forward([table], broker.url)
    config = room_config(tmp_path, backend, broker.url, table)
    try:
        assert wait_for(all_arrived(backend, [table]))
    finally:
        host.stop()  # the box goes offline
    try:
        assert main(["room", "hold", "--config", config, "T1", held_id,
                     "--why", "complaint"]) == 0
        assert "not on the table's box yet" in capsys.readouterr().out
        assert main(["room", "holds", "--config", config]) == 0
        assert "not on the table's box yet" in capsys.readouterr().out
        assert marks(table) == [] and reached_records(backend) == []

        host, _ = forward([table], broker.url)  # back: the room's retry delivers it
        assert wait_for(lambda: len(reached_records(backend)) == 1)
        video = video_frames(table, held_id)
        assert sorted(json.loads(r.body_text)["frame"] for r in marks(table)) == \
            [r.seq for r in video]
        store = backend.open()
        try:
            (delivered,) = reached(store).values()
        finally:
            store.close()
        assert set(delivered.kept) >= {r.seq for r in video} and delivered.pruned == []
        assert main(["room", "holds", "--config", config]) == 0
        assert "on the table's box since" in capsys.readouterr().out
    finally:
        host.stop()
        room.stop()


def test_bad_hold_requests_are_answered_with_an_error_and_the_box_works_on(
        tmp_path: Path, broker: Broker) -> None:
    import nats
    import nats.errors

    table = video_table(tmp_path / "boxes", rounds=1)
    round_key = next(r.round_key for r in table.records() if r.kind == "round")
    assert round_key is not None
    good = HoldRequest(7, table.chain, round_key, "olga", "dispute")
    raw = json.loads(good.encode())
    host, _ = forward([table], broker.url)

    async def ask() -> list[tuple[str, bytes]]:
        nc = await nats.connect(broker.url)
        for _ in range(200):  # until the box listens (its forwarder connects in the background)
            try:
                await nc.request(hold_subject("T1"), b"{}", timeout=10)
                break
            except nats.errors.NoRespondersError:
                await asyncio.sleep(0.1)
        answers = []
        for payload in (
                b"not json", b"[]", b"x" * 40_000,
                json.dumps({**raw, "extra": 1}).encode(),
                json.dumps({**raw, "hold": True}).encode(),
                json.dumps({**raw, "why": ""}).encode(),
                json.dumps({**raw, "chain": "another-chain"}).encode(),
                json.dumps({**raw, "round_key": 999}).encode(),
                good.encode(), good.encode()):
            reply = await nc.request(hold_subject("T1"), payload, timeout=10)
            answers.append(((reply.headers or {}).get("Floor-Error", ""), reply.data))
        await nc.close()
        return answers

    try:
        answers = asyncio.run(ask())
        errors = [error for error, _ in answers[:8]]
        assert all(errors) and all(data == b"" for _, data in answers[:8])
        assert "not valid JSON" in errors[0] and "over 32768" in errors[2]
        assert "exactly the fields" in errors[3] and "hold must be a whole number" in errors[4]
        assert "why must be text" in errors[5]
        assert errors[6] == f"unknown chain another-chain: T1 records chain {table.chain}"
        assert "unknown round 999" in errors[7]
        (first_error, first), (second_error, second) = answers[8:]
        assert first_error == second_error == ""
        video = [r.seq for r in video_frames(table, round_ids(table)[0])]
        assert json.loads(first)["marked"] == video and set(json.loads(first)["kept"]) > set(video)
        assert json.loads(second)["marked"] == []  # the repeat wrote nothing
        assert len(marks(table)) == len(video)
    finally:
        host.stop()

