"""The room's store over the floor: every ingested chain searchable by table, time, seat,
dealer, card, amount and alarm (also one raised before its round was recorded), projected in
chain order whatever order records arrive in, and the projection rebuilt and checked like the
store's own (a real PostgreSQL, tests/postgres.py)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

import psycopg
import pytest
from psycopg import sql

from dealer_assist.floor.pgstore import PostgresStore
from dealer_assist.surveillance.interface import Ingest, RoundQuery
from dealer_assist.surveillance.signed_chain import Evidence, begin_signing
from dealer_assist.surveillance.signing import Signer
from dealer_assist.surveillance.store import Record, RecordingStore
from tests.postgres import fresh_schema, server_url


class Clock:
    def __init__(self, start: datetime) -> None:
        self.now = start

    def __call__(self) -> datetime:
        self.now += timedelta(seconds=1)
        return self.now


def table_chain(directory: Path, table: str, rounds: list[dict[str, Any]],
                start: datetime) -> tuple[str, list[Record]]:
    """A signed chain of ``rounds`` (dealer, cards, nets by seat, alarm) made on a table box."""
    box = RecordingStore(directory, create=True, clock=Clock(start))
    try:
        chain = begin_signing(box, Evidence(Signer.generate()), table)
        for number, spec in enumerate(rounds, 1):
            round_id = f"{table}-{number}"
            if "early_alarm" in spec:  # raised in play, before the table records the round
                box.append("alarm", {"kind": spec["early_alarm"], "text": "seen",
                                     "round": round_id}, table=table)
            key = box.append("round", {"type": "round", "id": round_id,
                                       "dealer_id": spec["dealer"]},
                             table=table, round_id=round_id).round_key
            for card in spec["cards"]:
                box.append("event", {"type": "card", "card": card}, table=table, round_key=key,
                           round_id=round_id)
            if "alarm" in spec:
                box.append("alarm", {"kind": spec["alarm"], "text": "seen"}, table=table,
                           round_key=key, round_id=round_id)
            nets = spec["nets"]
            box.append("settlement", {"net": str(sum(Decimal(n) for n in nets.values())),
                                      "seats": [{"seat": seat, "player": None, "wager": "10.00",
                                                 "net": net, "hands": [{"net": net}],
                                                 "lines": [{"kind": "main", "amount": net}]}
                                                for seat, net in nets.items()]},
                       table=table, round_key=key, round_id=round_id)
        return chain, list(box.records())
    finally:
        box.close()


@pytest.fixture
def room(tmp_path: Path) -> Iterator[PostgresStore]:
    url = server_url()
    with fresh_schema("floor") as schema:
        store = PostgresStore(url, tmp_path / "frames", schema=schema, create=True)
        try:
            yield store
        finally:
            store.close()


NINE = datetime(2026, 11, 29, 9, 0, tzinfo=UTC)
T1 = [{"dealer": "D-1", "cards": ["7S", "KH"], "nets": {1: "15.00", 3: "-10.00"}},
      {"dealer": "D-2", "cards": ["AS", "10d"], "nets": {2: "-10.00"}, "alarm": "shoe"}]
T2 = [{"dealer": "D-1", "cards": ["KH", "2D"], "nets": {3: "250.00"}, "alarm": "vision"}]


def found(room: PostgresStore, **criteria: Any) -> list[str]:
    return [f"{hit.box}:{hit.round.round_id}"
            for hit in room.find_floor_rounds(RoundQuery(**criteria))]


def test_every_tables_rounds_are_found_by_every_field_the_page_searches(
        room: PostgresStore, tmp_path: Path) -> None:
    chain1, t1 = table_chain(tmp_path / "t1", "T1", T1, NINE)
    chain2, t2 = table_chain(tmp_path / "t2", "T2", T2, NINE + timedelta(minutes=5))
    room.ingest("T1", chain1, t1)
    room.ingest("T2", chain2, t2)

    assert found(room) == ["T2:T2-1", "T1:T1-2", "T1:T1-1"]  # newest first
    assert found(room, table="T1") == ["T1:T1-2", "T1:T1-1"]
    assert found(room, seat=3) == ["T2:T2-1", "T1:T1-1"]
    assert found(room, dealer="D-1") == ["T2:T2-1", "T1:T1-1"]
    assert found(room, card="KH") == ["T2:T2-1", "T1:T1-1"]
    assert found(room, card="AS", table="T1") == ["T1:T1-2"]
    assert found(room, card="TD") == found(room, card="10D") == ["T1:T1-2"]  # dealt as "10d"
    assert found(room, card="kh", dealer="D-1", table="T2") == ["T2:T2-1"]
    assert found(room, amount=Decimal("250")) == ["T2:T2-1"]  # won
    assert found(room, amount=Decimal("15.00")) == ["T1:T1-1"]  # won on seat 1
    assert found(room, amount=Decimal("10")) == ["T2:T2-1", "T1:T1-2", "T1:T1-1"]  # wagered
    assert found(room, amount=Decimal("10"), table="T1", seat=2) == ["T1:T1-2"]
    assert found(room, amount=Decimal("7")) == [] and found(room, amount=Decimal("1E30")) == []
    assert found(room, payout_above=Decimal("100")) == ["T2:T2-1"]
    assert found(room, alarm="shoe") == ["T1:T1-2"] and found(room, alarm="*") == [
        "T2:T2-1", "T1:T1-2"]
    assert found(room, since=NINE + timedelta(minutes=1)) == ["T2:T2-1"]
    assert found(room, until=NINE + timedelta(minutes=1)) == ["T1:T1-2", "T1:T1-1"]
    assert found(room, card="XX") == [] and found(room, seat=2**70) == []
    [hit] = room.find_floor_rounds(RoundQuery(table="T2"))
    assert (hit.chain, hit.round.status, hit.round.net_cents, hit.round.max_payout_cents,
            hit.round.alarms, hit.round.dealer) == (chain2, "settled", 25000, 25000, 1, "D-1")
    assert room.floor_choices() == (["T1", "T2"], ["shoe", "vision"])
    assert room.find_rounds(RoundQuery()) == ([], [])  # the room's own chain holds none
    assert [r.kind for r in room.chain_records("T2", chain2, round_key=hit.round.round_key)] == [
        "round", "event", "event", "alarm", "settlement"]


def test_a_round_is_indexed_once_its_chain_is_unbroken_up_to_it(
        room: PostgresStore, tmp_path: Path) -> None:
    chain, records = table_chain(tmp_path / "t1", "T1", T1, NINE)
    second = next(r.seq for r in records if r.round_id == "T1-2" and r.kind == "round")
    room.ingest("T1", chain, records[second - 1:])  # the second round first: held, not indexed
    assert found(room) == []
    room.ingest("T1", chain, records[1:second - 1])  # record 1 still missing
    assert found(room) == []
    room.ingest("T1", chain, records[:1])
    assert found(room) == ["T1:T1-2", "T1:T1-1"]
    assert found(room, alarm="shoe", card="AS", seat=2) == ["T1:T1-2"]
    assert room.index_mismatches() == []


def test_the_floor_index_is_a_projection_rebuilt_and_checked_from_the_records(
        room: PostgresStore, tmp_path: Path) -> None:
    chain1, t1 = table_chain(tmp_path / "t1", "T1", T1, NINE)
    chain2, t2 = table_chain(tmp_path / "t2", "T2", T2, NINE)
    room.ingest("T1", chain1, t1)
    room.ingest("T2", chain2, t2)
    before = (found(room), found(room, card="KH"), found(room, seat=3),
              found(room, amount=Decimal("250")))
    assert room.index_mismatches() == []

    with psycopg.connect(server_url(), autocommit=True) as conn:  # behind the store's back
        conn.execute(sql.SQL("UPDATE {}.round_seats SET net_cents = 1 WHERE seat = 3").format(
            sql.Identifier(room.schema)))
        conn.execute(sql.SQL("DELETE FROM {}.round_cards WHERE card = 'AS'").format(
            sql.Identifier(room.schema)))
        conn.execute(sql.SQL("DELETE FROM {}.round_amounts WHERE amount_cents = 25000").format(
            sql.Identifier(room.schema)))
    mismatches = room.index_mismatches()
    assert any("round_seats" in m and "differ" in m for m in mismatches)
    assert any("round_cards" in m and "lacks" in m for m in mismatches)
    assert any("round_amounts" in m and "amount 250.00" in m for m in mismatches)
    room.rebuild_index()
    assert room.index_mismatches() == []
    assert (found(room), found(room, card="KH"), found(room, seat=3),
            found(room, amount=Decimal("250"))) == before


def test_a_record_postgresql_cannot_hold_is_refused_by_name_and_nothing_of_the_call_is_held(
        room: PostgresStore, tmp_path: Path) -> None:
    from dataclasses import replace

    from dealer_assist.surveillance.store import RecordingError

    chain, records = table_chain(tmp_path / "t1", "T1", T1[:1], NINE)
    for bad in (replace(records[2], body_text='{"card":"7S\x00"}'),
                replace(records[2], round_key=2**64)):
        with pytest.raises(RecordingError) as refused:
            room.ingest("T1", chain, [records[0], records[1], bad])
        assert f"record {bad.seq}" in str(refused.value) and room.schema in str(refused.value)
    assert room.chains() == [] and list(room.chain_records("T1", chain)) == []
    assert [i.outcome.value for i in room.ingest("T1", chain, records)] == ["new"] * len(records)


def test_an_alarm_raised_before_its_round_was_recorded_is_linked_to_it_across_ingests(
        room: PostgresStore, tmp_path: Path) -> None:
    rounds = [{"dealer": "D-1", "cards": ["7S"], "nets": {1: "5.00"}},
              {"dealer": "D-1", "cards": ["9C"], "nets": {1: "5.00"}, "early_alarm": "switched"}]
    chain, records = table_chain(tmp_path / "t1", "T1", rounds, NINE)
    early = next(r.seq for r in records if r.kind == "alarm")
    room.ingest("T1", chain, records[:early])  # the alarm, its round not yet recorded
    assert found(room, alarm="*") == [] and found(room, alarm="switched") == []
    room.ingest("T1", chain, records[early:])
    assert found(room, alarm="*") == ["T1:T1-2"] and found(room, alarm="switched") == ["T1:T1-2"]
    [hit] = room.find_floor_rounds(RoundQuery(alarm="switched"))
    assert hit.round.alarms == 1
    assert room.index_mismatches() == []
    room.rebuild_index()
    assert found(room, alarm="switched") == ["T1:T1-2"] and room.index_mismatches() == []


def test_a_store_of_schema_1_is_upgraded_on_opening_and_its_index_projected_again(
        room: PostgresStore, tmp_path: Path) -> None:
    chain, records = table_chain(tmp_path / "t1", "T1", T1, NINE)
    room.ingest("T1", chain, records)
    with psycopg.connect(server_url(), autocommit=True) as conn:  # as schema 1 made it
        for statement in ("ALTER TABLE {}.alarms DROP COLUMN round_id",
                          "DROP TABLE {}.round_amounts", *SCHEMA_2,
                          "UPDATE {}.schema_version SET version = 1",
                          "UPDATE {}.round_cards SET card = '10D' WHERE card = 'TD'"):
            conn.execute(sql.SQL(statement).format(sql.Identifier(room.schema)))
    reopened = PostgresStore(server_url(), tmp_path / "frames", schema=room.schema)
    try:
        assert reopened.schema_version() == 3
        assert found(reopened, card="TD") == ["T1:T1-2"]
        assert found(reopened, amount=Decimal("15")) == ["T1:T1-1"]
        assert reopened.index_mismatches() == []
    finally:
        reopened.close()


#: what schema 3 added to schema 2 (the retention cut of each chain), undone
SCHEMA_2 = ("ALTER TABLE {}.chain_state DROP COLUMN pruned_below, DROP COLUMN pruned",)


def test_a_store_of_schema_2_gains_the_retention_cut_without_projecting_its_index_again(
        room: PostgresStore, tmp_path: Path) -> None:
    chain, records = table_chain(tmp_path / "t1", "T1", T1, NINE)
    room.ingest("T1", chain, records[:5])
    with psycopg.connect(server_url(), autocommit=True) as conn:  # as schema 2 made it, with
        for statement in (*SCHEMA_2, "UPDATE {}.schema_version SET version = 2",  # a mark
                          "UPDATE {}.rounds SET note = 'kept as it was'"):  # in its index
            conn.execute(sql.SQL(statement).format(sql.Identifier(room.schema)))
    reopened = PostgresStore(server_url(), tmp_path / "frames", schema=room.schema)
    try:
        assert reopened.schema_version() == 3
        assert {r.round.note for r in reopened.find_floor_rounds(RoundQuery())} == {
            "kept as it was"}  # the index was not projected again
        outcomes = reopened.ingest("T1", chain, records)
        assert [o.outcome for o in outcomes] == [Ingest.DUPLICATE] * 5 + [Ingest.NEW] * (
            len(records) - 5)
    finally:
        reopened.close()
