"""The room's records policy over a real PostgreSQL room store: ``room prune
--records-older-than-hours`` deletes the tables' old records (but their keys and every round on
hold) with a recorded cut that ``room verify`` accepts, and nothing else; a room restarted over
a pruned store (real nats-server) verifies it without alarms, and a box resending a pruned
record is ignored."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import psycopg
import pytest
from psycopg import sql

from dealer_assist.cli import main
from dealer_assist.floor import retention
from dealer_assist.floor.config import NatsConfig, TableKeys
from dealer_assist.floor.pgstore import PostgresStore
from dealer_assist.floor.room import DURABLE, Room, RoomThread
from dealer_assist.floor.wire import STREAM, encode_record, record_subject
from dealer_assist.surveillance.interface import Ingest, RoundQuery
from dealer_assist.surveillance.store import Record
from tests.floor.broker import Broker
from tests.floor.floor import wait_for
from tests.floor.recorded import Box, held_seqs, open_room, record_box, room_toml, take_in
from tests.postgres import fresh_schema, server_url

#: the boxes' records are written from 2026-11-29 09:00 on, two seconds apart; this cuts both
#: chains inside their second round (09:01:00), so each cut moves back to that round's start
MIDDLE = datetime(2026, 11, 29, 10, 1, tzinfo=UTC)


@pytest.fixture(scope="module")
def boxes(tmp_path_factory: pytest.TempPathFactory) -> list[Box]:
    folder = tmp_path_factory.mktemp("boxes")
    return [record_box(folder / "T1", "T1", 3), record_box(folder / "T2", "T2", 2)]


@pytest.fixture
def schema() -> Iterator[str]:
    server_url()
    with fresh_schema("cut") as name:
        yield name


def take_in_all(tmp_path: Path, schema: str, boxes: list[Box]) -> None:
    """The boxes' records and key frames, as the room takes them from the floor."""
    room = open_room(server_url(), schema, tmp_path)
    try:
        for box in boxes:
            take_in(room, box)
    finally:
        room.close()


def verify(config: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, dict[str, Any]]:
    status = main(["room", "verify", "--config", str(config), "--json"])
    return status, json.loads(capsys.readouterr().out)


def problems(report: dict[str, Any]) -> list[str]:
    return [d["what"] for d in report["room"]] + [
        d["what"] for chain in report["chains"] for d in chain["discrepancies"]]


def sql_on(schema: str, statement: str, *params: Any) -> list[tuple[Any, ...]]:
    with psycopg.connect(server_url(), autocommit=True) as conn:
        cur = conn.execute(sql.SQL(statement).format(sql.Identifier(schema)), params)
        return cur.fetchall() if cur.description else []


def chain_no(schema: str, box: Box) -> int:
    return int(sql_on(schema, "SELECT chain_no FROM {}.chain_state WHERE table_key = %s",
                      box.table)[0][0])


def without(schema: str, where: str, *params: Any) -> list[tuple[Any, ...]]:
    """Delete records by hand (as someone with the database would); the rows, to put back."""
    return sql_on(schema, f"DELETE FROM {{}}.records WHERE {where} RETURNING *", *params)


def put_back(schema: str, rows: list[tuple[Any, ...]]) -> None:
    for row in rows:
        marks = ", ".join(["%s"] * len(row))
        sql_on(schema, f"INSERT INTO {{}}.records VALUES ({marks})", *row)


def rounds_found(tmp_path: Path, schema: str) -> set[tuple[str, str | None]]:
    room = open_room(server_url(), schema, tmp_path)
    try:
        return {(f.box, f.round.round_id) for f in room.find_floor_rounds(RoundQuery())}
    finally:
        room.close()


def test_records_older_than_the_policy_go_but_a_held_round_and_the_keys_stay_and_verify(
        tmp_path: Path, schema: str, boxes: list[Box],
        capsys: pytest.CaptureFixture[str]) -> None:
    take_in_all(tmp_path, schema, boxes)
    config = room_toml(tmp_path, server_url(), schema, boxes)
    t1, t2 = boxes
    assert main(["room", "hold", "--config", str(config), "T1", "bj-2", "--why", "dispute"]) == 0
    capsys.readouterr()
    frames = tmp_path / "room-frames" / "floor"

    # the cut falls inside round 2 (record 23), on hold: round 1 goes, the key and round 2 stay;
    # T2's moves back to its round 2's start (record 21)
    room = open_room(server_url(), schema, tmp_path)
    try:
        result = retention.prune_room(room, None, "tester", MIDDLE,
                                      records_older_than=timedelta(hours=1))
        assert room.index_mismatches() == []
        [prune] = room.latest_records("floor-prune", 1)
    finally:
        room.close()
    assert result["records"] == 2 * 19 and result["refused"] == []  # records 2 to 20 of each
    cuts = {c["box"]: c for c in json.loads(prune.body_text)["chains"]}
    assert cuts["T1"] == {"box": "T1", "chain": t1.chain, "below": 23, "deleted": 19,
                          "kept": [[1, 1], [21, 22]], "links": {"21": t1.records[19].hash}}
    assert (cuts["T2"]["below"], cuts["T2"]["kept"]) == (21, [[1, 1]])
    assert held_seqs(tmp_path, schema, t1) == [1, *range(21, len(t1.records) + 1)]
    assert ("T1", "bj-3") not in rounds_found(tmp_path, schema)
    assert {("T1", "bj-2"), ("T1", "bj-1"), ("T2", "bj-2")} <= rounds_found(tmp_path, schema)
    gone = [r for r in t1.records[:20] if r.kind == "frame"]
    assert gone and not any((frames / "T1" / t1.chain / str(r.file)).exists() for r in gone)
    status, report = verify(config, capsys)
    assert (status, problems(report)) == (0, [])

    # a record deleted by hand past the cut is a gap; under the cut too (record 1: the key)
    past = without(schema, "chain_no = %s AND seq = 40", chain_no(schema, t1))
    status, report = verify(config, capsys)
    assert status == 1 and any("records 40 to 40 are missing" in p for p in problems(report))
    put_back(schema, past)
    under = without(schema, "chain_no = %s AND seq = 1", chain_no(schema, t1))
    status, report = verify(config, capsys)
    assert status == 1 and any("records 1 to 20 are missing" in p for p in problems(report))
    put_back(schema, under)
    assert verify(config, capsys)[0] == 0

    # the rest by the command: everything is older than an hour but the held round and keys
    assert main(["room", "prune", "--config", str(config), "--records-older-than-hours", "1",
                 "--older-than-hours", "1"]) == 0
    assert f"pruned {len(t1.records) - 34 + len(t2.records) - 20} records" in \
        capsys.readouterr().out
    assert held_seqs(tmp_path, schema, t1) == [1, *range(21, 35)]
    assert held_seqs(tmp_path, schema, t2) == [1]
    assert rounds_found(tmp_path, schema) == {("T1", "bj-2")}
    kept = [r for r in t1.records[20:34] if r.kind == "frame"]
    assert kept and all((frames / "T1" / t1.chain / str(r.file)).is_file() for r in kept)
    assert not any((frames / "T1" / t1.chain / str(r.file)).exists()
                   for r in t1.records[34:] if r.kind == "frame")
    room = open_room(server_url(), schema, tmp_path)
    try:
        assert room.index_mismatches() == []
        # a box resending from an old cursor: what was pruned is ignored, not held again
        outcomes = room.ingest("T1", t1.chain, t1.records)
        assert {o.outcome for o in outcomes[34:]} == {Ingest.PRUNED}
        assert {o.outcome for o in outcomes[20:34]} == {Ingest.DUPLICATE}
        assert room.forks() == []
    finally:
        room.close()
    assert held_seqs(tmp_path, schema, t1) == [1, *range(21, 35)]
    status, report = verify(config, capsys)
    assert (status, problems(report)) == (0, [])

    # a prune record altered, or gone, explains nothing: its holes are gaps
    first = sql_on(schema, "SELECT seq, body FROM {}.records WHERE chain_no = 0 AND"
                   " kind = 'floor-prune' ORDER BY seq LIMIT 1")[0]
    sql_on(schema, "UPDATE {}.records SET body = %s WHERE chain_no = 0 AND seq = %s",
           first[1].replace('"deleted":19', '"deleted":1'), first[0])
    status, report = verify(config, capsys)
    assert status == 1 and any("was altered" in p for p in problems(report))
    assert any("records 2 to 20 are missing" in p for p in problems(report))
    sql_on(schema, "UPDATE {}.records SET body = %s WHERE chain_no = 0 AND seq = %s",
           first[1], first[0])
    assert verify(config, capsys)[0] == 0
    without(schema, "chain_no = 0 AND seq = %s", first[0])
    status, report = verify(config, capsys)
    assert status == 1 and any("records 2 to 20 are missing" in p for p in problems(report))


def publish(url: str, box: Box, records: list[Record]) -> None:
    """Send records on the box's subject, as a box resending from an old cursor (no message
    id: the broker's de-duplication window does not drop them)."""
    import nats

    async def send() -> None:
        nc = await nats.connect(url)
        try:
            js = nc.jetstream()
            for record in records:
                await js.publish(record_subject(box.table),
                                 encode_record(box.table, box.chain, record))
        finally:
            await nc.close()

    asyncio.run(send())


def drained(url: str) -> bool:
    """The room has taken and acknowledged everything in the stream."""
    import nats

    async def ask() -> bool:
        nc = await nats.connect(url)
        try:
            info = await nc.jetstream().consumer_info(STREAM, DURABLE)
            return bool(info.num_pending == 0 and info.num_ack_pending == 0)
        finally:
            await nc.close()

    try:
        return asyncio.run(ask())
    except Exception:
        return False


def test_a_room_restarted_over_a_pruned_store_verifies_it_and_ignores_a_resent_record(
        tmp_path: Path, schema: str, boxes: list[Box]) -> None:
    broker = Broker(tmp_path / "jetstream").start()
    t1 = boxes[0]
    tables = {"T1": TableKeys("T1", tmp_path / "T1.pub", (t1.signer.public,))}

    def start_room() -> RoomThread:
        return RoomThread(Room(lambda: PostgresStore(server_url(), tmp_path / "room-frames",
                                                     schema=schema, create=True),
                               NatsConfig(broker.url), tables)).start()

    try:
        room = start_room()
        assert wait_for(lambda: drained(broker.url))  # the room's consumer is there
        publish(broker.url, t1, t1.records[:34])  # two rounds, while the room runs
        assert wait_for(lambda: held_seqs(tmp_path, schema, t1) == list(range(1, 35)))
        room.stop()
        assert room.room.alarms == []
        store = open_room(server_url(), schema, tmp_path)
        try:  # round 1 on hold, round 2 and the rest older than the policy
            found = retention.find_round(store, "T1", "bj-3")
            retention.put_hold(store, found, "dispute", "tester")
            assert retention.prune_room(store, None, "tester", MIDDLE + timedelta(days=1),
                                        records_older_than=timedelta(hours=1))["records"] == 15
        finally:
            store.close()
        assert held_seqs(tmp_path, schema, t1) == [1, *range(3, 21)]  # 2, 21 to 34: cut
        room = start_room()  # verifies the store across the cut: no alarm
        publish(broker.url, t1, [t1.records[25], *t1.records[34:]])  # a pruned one again,
        assert wait_for(lambda: drained(broker.url)) and wait_for(  # then the third round
            lambda: held_seqs(tmp_path, schema, t1)[-1] == len(t1.records))
        room.stop()
        assert room.failed is None and room.room.alarms == []
        assert held_seqs(tmp_path, schema, t1) == [1, *range(3, 21),
                                                   *range(35, len(t1.records) + 1)]
    finally:
        broker.stop()
