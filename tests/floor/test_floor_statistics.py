"""The room page's Statistics and Storage tabs cover the whole floor: every ingested table's
rounds summed per table, shift and dealer (exact to the cent, narrowed to one table on request)
and the records and key frames the room holds per table and hour, from the room's PostgreSQL
store (a real server, tests/postgres.py); the figures equal those the single-table page gives
for the same records in the box's own recording."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from dealer_assist.floor.pgstore import PostgresStore
from dealer_assist.floor.retention import PRUNE
from dealer_assist.surveillance.access import add_operator
from dealer_assist.surveillance.query import (
    floor_statistics,
    floor_storage_report,
    table_statistics,
)
from dealer_assist.surveillance.store import RecordingStore
from dealer_assist.surveillance.web import create_app
from tests.floor.recorded import Box, record_box
from tests.floor.test_pgstore import NINE, table_chain
from tests.postgres import fresh_schema, server_url
from tests.surveillance.page import CHEAP, PAGE_HEADERS, PASSWORD, login, page_settings

T1 = [{"dealer": "D-1", "cards": ["7S", "KH"], "nets": {1: "15.00", 3: "-10.00"}},
      {"dealer": "D-2", "cards": ["AS", "KD"], "nets": {2: "-10.00"}, "alarm": "shoe"}]
T2 = [{"dealer": "D-1", "cards": ["KH", "2D"], "nets": {3: "250.00"}, "alarm": "vision"},
      {"dealer": "D-1", "cards": ["9C", "3H"], "nets": {1: "-25.50", 2: "7.25"}}]
#: the room, the box T3 recorded on, and how many records each table made
Floor = tuple[PostgresStore, Box, dict[str, int]]


@pytest.fixture
def floor(tmp_path: Path) -> Iterator[Floor]:
    """A room holding T1 (two rounds at 09:00, day shift), T2 (two at 15:00, swing shift) and
    T3 (three golden rounds recorded on a box, key frames and an alarm among them); and how
    many records each table made."""
    with fresh_schema("floorstats") as schema:
        room = PostgresStore(server_url(), tmp_path / "frames", schema=schema, create=True)
        try:
            made = {}
            for table, rounds, start in (("T1", T1, NINE), ("T2", T2, NINE + timedelta(hours=6))):
                chain, records = table_chain(tmp_path / table, table, rounds, start)
                room.ingest(table, chain, records)
                made[table] = len(records)
            box = record_box(tmp_path / "T3", "T3", 3)
            room.ingest("T3", box.chain, box.records)
            made["T3"] = len(box.records)
            yield room, box, made
        finally:
            room.close()


def by_table(rows: list[dict[str, object]]) -> dict[object, dict[str, object]]:
    return {row["table"]: row for row in rows}


def test_statistics_cover_every_table_of_the_floor(floor: Floor) -> None:
    room, box, _ = floor
    rows = by_table(floor_statistics(room, by=("table",)))
    assert sorted(rows) == ["T1", "T2", "T3"]
    t1, t2 = rows["T1"], rows["T2"]
    assert (t1["rounds"], t1["hours"], t1["rounds_per_hour"]) == (2, 1, "2.0")
    assert t1["hands_per_seat"] == {"1": 1, "2": 1, "3": 1}
    assert (t1["paid"], t1["taken"], t1["house_net"]) == ("15.00", "20.00", "5.00")
    assert t1["payouts"] == {"main": "-5.00"} and t1["alarms"] == {"shoe": 1}
    assert (t2["rounds"], t2["paid"], t2["taken"], t2["house_net"]) == (
        2, "257.25", "25.50", "-231.75")
    assert t2["payouts"] == {"main": "231.75"} and t2["alarms"] == {"vision": 1}
    assert t2["hands_per_seat"] == {"1": 1, "2": 1, "3": 1}

    # per shift and dealer, as the single-table page groups them
    grouped = {(r["table"], r["shift"], r["dealer"]): (r["rounds"], r["paid"], r["taken"])
               for r in floor_statistics(room, by=("table", "shift", "dealer"))
               if r["table"] != "T3"}
    assert grouped == {("T1", "day", "D-1"): (1, "15.00", "10.00"),
                       ("T1", "day", "D-2"): (1, "0.00", "10.00"),
                       ("T2", "swing", "D-1"): (2, "257.25", "25.50")}
    dealers = {r["dealer"]: r["rounds"] for r in floor_statistics(room, by=("dealer",))}
    assert dealers["D-1"] == 3 and dealers["D-2"] == 1

    # the filter: one table's rounds only
    assert [r["table"] for r in floor_statistics(room, by=("table",), table="T2")] == ["T2"]
    assert floor_statistics(room, by=("table",), table="T9") == []
    with pytest.raises(ValueError, match="pit"):
        floor_statistics(room, by=("pit",))

    # golden rounds (splits, doubles, side lines): the box's own recording gives the same
    recording = RecordingStore(box.directory)
    try:
        assert floor_statistics(room, table="T3") == table_statistics(recording)
    finally:
        recording.close()
    t3 = rows["T3"]
    assert (t3["rounds"], t3["alarms"], t3["hands_per_seat"]) == (3, {"shoe": 1},
                                                                  {"1": 2, "2": 2})
    assert t3["payouts"] == {"blackjack": "52.50", "lose": "-10.00"}
    assert (t3["paid"], t3["taken"], t3["house_net"]) == ("52.50", "10.00", "-42.50")


def key_frames(box: Box) -> list[tuple[int, int]]:
    """(seq, size) of the key frames the box's records name."""
    return [(r.seq, json.loads(r.body_text)["size"]) for r in box.records
            if r.kind == "frame" and json.loads(r.body_text).get("key", True)]


def test_storage_lists_every_tables_records_and_key_frames_per_hour(
        floor: Floor) -> None:
    room, box, made = floor
    report = floor_storage_report(room)
    hours = {(h["table"], h["hour"]): h for h in report["hours"]}
    assert sorted(hours) == [("T1", "2026-11-29T09:00Z"), ("T2", "2026-11-29T15:00Z"),
                             ("T3", "2026-11-29T09:00Z")]
    assert (hours[("T1", "2026-11-29T09:00Z")]["records"],
            hours[("T1", "2026-11-29T09:00Z")]["rounds"]) == (made["T1"], 2)
    assert hours[("T2", "2026-11-29T15:00Z")]["records"] == made["T2"]
    t3 = hours[("T3", "2026-11-29T09:00Z")]
    frames = key_frames(box)
    assert frames and (t3["records"], t3["rounds"]) == (made["T3"], 3)
    assert (t3["frames"], t3["frame_bytes"]) == (len(frames), sum(size for _, size in frames))
    assert report["hours_of_play"] == 3
    assert report["bytes_in_database"] > 0
    assert report["bytes_on_disk"] == report["bytes_in_database"] + report["bytes_of_frame_files"]

    # a frame the room's retention deleted is no longer counted as held
    seq, size = frames[0]
    room.append(PRUNE, {"user": "olga", "cutoff": "2026-12-01T00:00:00Z", "policy_seconds": 1,
                        "frames": [["T3", box.chain, seq]], "held": []})
    after = {(h["table"], h["hour"]): h for h in floor_storage_report(room)["hours"]}
    assert (after[("T3", "2026-11-29T09:00Z")]["frames"],
            after[("T3", "2026-11-29T09:00Z")]["frame_bytes"]) == (
        len(frames) - 1, sum(size for _, size in frames) - size)


def test_the_room_pages_tabs_answer_for_the_floor(floor: Floor,
                                                 tmp_path: Path) -> None:
    room, _, _ = floor
    add_operator(room, "olga", PASSWORD, "operator", passwords=CHEAP)
    url, schema = server_url(), room.schema
    client = TestClient(create_app(
        lambda: PostgresStore(url, tmp_path / "frames", schema=schema), page_settings()),
        headers=PAGE_HEADERS)
    assert client.get("/api/stats").status_code == 401
    login(client)
    every = client.get("/api/stats", params={"by": "table"}).json()
    assert every["tables"] == ["T1", "T2", "T3"]
    assert {g["table"]: g["house_net"] for g in every["groups"]} == {
        "T1": "5.00", "T2": "-231.75", "T3": "-42.50"}
    one = client.get("/api/stats", params={"by": "table,dealer", "table": "T2"}).json()
    assert [(g["table"], g["dealer"], g["rounds"]) for g in one["groups"]] == [("T2", "D-1", 2)]
    assert client.get("/api/stats", params={"table": "T" * 300}).status_code == 422
    assert client.get("/api/stats", params={"by": "pit"}).status_code == 422
    storage = client.get("/api/storage").json()
    assert sorted({h["table"] for h in storage["hours"]}) == ["T1", "T2", "T3"]
    targets = [r.body.get("target") for r in room.records(kinds=("access",))
               if r.body.get("action") in ("statistics", "storage")]
    assert {"by": "table,dealer", "table": "T2"} in targets


def test_a_tables_own_page_takes_no_table_filter(tmp_path: Path) -> None:
    box = record_box(tmp_path / "T3", "T3", 1)
    recording = RecordingStore(box.directory)
    try:
        add_operator(recording, "olga", PASSWORD, "operator", passwords=CHEAP)
    finally:
        recording.close()
    client = TestClient(create_app(box.directory, page_settings()), headers=PAGE_HEADERS)
    login(client)
    assert client.get("/api/stats", params={"table": "T3"}).status_code == 400
    answer = client.get("/api/stats", params={"by": "table"}).json()
    assert "tables" not in answer and [g["rounds"] for g in answer["groups"]] == [1]
    assert "bytes_in_database" not in client.get("/api/storage").json()
