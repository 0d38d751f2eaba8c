"""The room applies room.toml's ``[retention]`` policy by itself: a real Room (real nats-server,
real PostgreSQL) prunes what is older than the policy at start and again every interval,
recorded as ``room prune`` records it (by "room retention policy"), keeping a round on hold; a
failure is logged and tried again, and ingest goes on."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import psycopg
import pytest
from psycopg import sql

from dealer_assist.cli import main
from dealer_assist.floor import retention
from dealer_assist.floor.config import NatsConfig, RetentionPolicy, TableKeys
from dealer_assist.floor.retention_policy import RETENTION_USER
from dealer_assist.floor.room import Room, RoomThread
from tests.floor.broker import Broker
from tests.floor.floor import wait_for
from tests.floor.recorded import Box, held_seqs, open_room, record_box, room_toml, take_in
from tests.postgres import fresh_schema, server_url


@pytest.fixture(scope="module")
def boxes(tmp_path_factory: pytest.TempPathFactory) -> list[Box]:
    folder = tmp_path_factory.mktemp("boxes")
    return [record_box(folder / "T1", "T1", 3), record_box(folder / "T2", "T2", 2),
            record_box(folder / "T3", "T3", 1)]


@pytest.fixture
def schema() -> Iterator[str]:
    server_url()
    with fresh_schema("policy") as name:
        yield name


def take_in_one(folder: Path, schema: str, box: Box) -> None:
    """A box's records and key frames in the room (recorded days ago: older than the policy)."""
    room = open_room(server_url(), schema, folder)
    try:
        take_in(room, box)
    finally:
        room.close()


def frames(folder: Path, box: Box, records: range) -> list[bool]:
    """Whether the room holds each frame file of ``box``'s records numbered in ``records``."""
    return [(folder / "room-frames" / "floor" / box.table / box.chain / str(r.file)).is_file()
            for r in box.records if r.seq in records and r.kind == "frame" and r.file]


def sql_on(schema: str, statement: str, *params: object) -> list[tuple[object, ...]]:
    with psycopg.connect(server_url(), autocommit=True) as conn:
        cur = conn.execute(sql.SQL(statement).format(sql.Identifier(schema)), params)
        return cur.fetchall() if cur.description else []


def test_the_room_prunes_by_its_policy_at_start_and_every_interval_keeping_a_hold(
        tmp_path: Path, schema: str, boxes: list[Box], caplog: pytest.LogCaptureFixture,
        capsys: pytest.CaptureFixture[str]) -> None:
    t1, t2, t3 = boxes
    config = room_toml(tmp_path, server_url(), schema, boxes)
    for box in (t1, t2):
        take_in_one(tmp_path, schema, box)
    store = open_room(server_url(), schema, tmp_path)
    try:
        hold = retention.put_hold(store, retention.find_round(store, "T1", "bj-2"), "dispute",
                                  "olga")
        assert retention.holds(store) == {(hold.box, hold.chain, hold.round_key): hold}
        assert (hold.round, hold.user, hold.why) == ("bj-2", "olga", "dispute")
    finally:
        store.close()
    assert all(frames(tmp_path, t1, range(1, 100)))

    broker = Broker(tmp_path / "jetstream").start()
    room = RoomThread(Room(
        lambda: open_room(server_url(), schema, tmp_path), NatsConfig(broker.url),
        {box.table: TableKeys(box.table, tmp_path / f"{box.table}.pub", (box.signer.public,))
         for box in boxes},
        retention=RetentionPolicy(frames=timedelta(hours=1), records=timedelta(hours=1)),
        retention_every_s=1.0))
    try:
        room.start()
        # at start: all but the keys (record 1) and T1's round 2 on hold (records 21 to 34)
        assert wait_for(lambda: held_seqs(tmp_path, schema, t2) == [1])
        assert held_seqs(tmp_path, schema, t1) == [1, *range(21, 35)]
        assert all(frames(tmp_path, t1, range(21, 35)))
        assert not any(frames(tmp_path, t1, range(2, 21)))
        assert not any(frames(tmp_path, t1, range(35, 1000)))

        # a failure (the hold's signature gone: no hold is certain) is logged, nothing is
        # pruned, the room goes on; the next interval after it is mended prunes what came since
        signature = sql_on(schema, "SELECT signature, seq FROM {}.records WHERE chain_no = 0"
                           " AND kind = 'floor-hold'")
        sql_on(schema, "UPDATE {}.records SET signature = NULL WHERE chain_no = 0 AND"
               " kind = 'floor-hold'")
        take_in_one(tmp_path, schema, t3)
        assert wait_for(lambda: "retention policy could not be applied" in caplog.text)
        assert len(held_seqs(tmp_path, schema, t3)) == len(t3.records)
        sql_on(schema, "UPDATE {}.records SET signature = %s WHERE chain_no = 0 AND seq = %s",
               *signature[0])
        assert wait_for(lambda: held_seqs(tmp_path, schema, t3) == [1])
        assert held_seqs(tmp_path, schema, t1) == [1, *range(21, 35)]
    finally:
        room.stop()
        broker.stop()
    assert room.failed is None and room.room.alarms == []
    store = open_room(server_url(), schema, tmp_path)
    try:
        prunes = list(store.records(kinds=("floor-prune",)))
    finally:
        store.close()
    assert len(prunes) >= 2 and {p.body["user"] for p in prunes} == {RETENTION_USER}
    assert main(["room", "verify", "--config", str(config)]) == 0, capsys.readouterr().out
