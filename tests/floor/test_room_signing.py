"""The room's own chain is signed with the room's key: a prune record rewritten in SQL with its
hash (and every later record's) recomputed, which verified clean while the chain was not
signed, fails ``room verify`` and explains no hole; a room without its key, or with a key file
others may read, refuses to serve."""

from __future__ import annotations

import json
import stat
from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import psycopg
import pytest
from psycopg import sql

from dealer_assist.cli import main
from dealer_assist.floor import retention
from dealer_assist.floor.cuts import recorded_cuts
from dealer_assist.floor.pgstore import PostgresStore
from dealer_assist.surveillance.signing import Signer, read_public_keys
from dealer_assist.surveillance.store import Record, RecordingError, canonical_bytes, chain_hash
from tests.floor.recorded import Box, open_room, record_box, room_toml
from tests.postgres import fresh_schema, server_url

#: inside both boxes' second round: the cut keeps record 1 and T1's rounds from record 21
MIDDLE = datetime(2026, 11, 29, 10, 1, tzinfo=UTC)


@pytest.fixture(scope="module")
def boxes(tmp_path_factory: pytest.TempPathFactory) -> list[Box]:
    folder = tmp_path_factory.mktemp("boxes")
    return [record_box(folder / "T1", "T1", 3), record_box(folder / "T2", "T2", 2)]


@pytest.fixture
def schema() -> Iterator[str]:
    server_url()
    with fresh_schema("sign") as name:
        yield name


def sql_on(schema: str, statement: str, *params: Any) -> list[tuple[Any, ...]]:
    with psycopg.connect(server_url(), autocommit=True) as conn:
        cur = conn.execute(sql.SQL(statement).format(sql.Identifier(schema)), params)
        return cur.fetchall() if cur.description else []


def verify(config: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, dict[str, Any]]:
    status = main(["room", "verify", "--config", str(config), "--json"])
    return status, json.loads(capsys.readouterr().out)


def problems(report: dict[str, Any]) -> list[str]:
    return [d["what"] for d in report["room"]] + [
        d["what"] for chain in report["chains"] for d in chain["discrepancies"]]


def rewrite_room_chain_from(schema: str, seq: int, body_text: str,
                            upto: int | None = None) -> None:
    """Replace record ``seq`` of the room's chain by one with ``body_text`` and re-chain it and
    every record after it (to ``upto``), hashes recomputed, as someone with write access to the
    database and the docs would: only a signature it cannot make gives it away."""
    columns = ("seq", "at", "table_id", "round_key", "round_id", "kind", "body", "file",
               "sha256", "hash_format", "prev_hash", "hash", "signature")
    rows = sql_on(schema, f"SELECT {', '.join(columns)} FROM {{}}.records WHERE chain_no = 0"
                  " AND seq BETWEEN %s AND %s ORDER BY seq", seq, upto or 2**62)
    prev = rows[0][10]
    for number, row in enumerate(rows):
        record = Record(*row)
        if number == 0:
            record = replace(record, body_text=body_text)
        record = replace(record, prev_hash=prev)
        record = replace(record, hash=chain_hash(prev, canonical_bytes(record)))
        sql_on(schema, "UPDATE {}.records SET body = %s, prev_hash = %s, hash = %s"
               " WHERE chain_no = 0 AND seq = %s", record.body_text, record.prev_hash,
               record.hash, record.seq)
        prev = record.hash


def test_a_prune_record_rewritten_with_its_hash_recomputed_fails_verify_and_cuts_nothing(
        tmp_path: Path, schema: str, boxes: list[Box],
        capsys: pytest.CaptureFixture[str]) -> None:
    config = room_toml(tmp_path, server_url(), schema, boxes)
    room = open_room(server_url(), schema, tmp_path)
    t1 = boxes[0]
    try:
        for box in boxes:
            room.ingest(box.table, box.chain, box.records)
        retention.prune_room(room, None, "tester", MIDDLE, records_older_than=timedelta(hours=1))
        [prune] = room.latest_records("floor-prune", 1)
        room.append("floor-alarm", {"kind": "silent", "table": "T2", "text": "later"})
    finally:
        room.close()
    assert verify(config, capsys)[0] == 0

    # round 2 of T1 (records 21 to 34) deleted by hand, and the prune record made to say
    # its cut took them: below 35, links to record 34
    sql_on(schema, "DELETE FROM {}.records WHERE chain_no = (SELECT chain_no FROM"
           " {}.chain_state WHERE table_key = 'T1') AND seq BETWEEN 21 AND 34".replace(
               "{}.chain_state", f'"{schema}".chain_state'))
    body = json.loads(prune.body_text)
    for cut in body["chains"]:
        if cut["box"] == "T1":
            cut.update(below=35, deleted=33, kept=[[1, 1]], links={"35": t1.records[33].hash})
    rewrite_room_chain_from(schema, prune.seq, json.dumps(body, separators=(",", ":"),
                                                          sort_keys=True))
    status, report = verify(config, capsys)
    assert status == 1, problems(report)
    found = problems(report)
    # the rewritten record is named, and its cuts explain nothing: both boxes' holes are gaps
    assert any(f"record {prune.seq}" in p and "signature that does not verify" in p
               for p in found), found
    assert any(f"record {prune.seq}" in p and "no valid signature by the room's key" in p
               for p in found), found
    assert any("records 2 to 34 are missing" in p for p in found), found
    assert any("records 2 to 20 are missing" in p for p in found), found
    room = open_room(server_url(), schema, tmp_path)
    try:
        assert recorded_cuts(room).chains == {}
    finally:
        room.close()


def test_an_unsigned_hold_appended_in_sql_fails_verify_and_stops_retention(
        tmp_path: Path, schema: str, boxes: list[Box],
        capsys: pytest.CaptureFixture[str]) -> None:
    config = room_toml(tmp_path, server_url(), schema, boxes)
    room = open_room(server_url(), schema, tmp_path)
    try:
        for box in boxes:
            room.ingest(box.table, box.chain, box.records)
        seq, head = room.head()
    finally:
        room.close()
    assert verify(config, capsys)[0] == 0
    t1 = boxes[0]
    forged = Record(seq + 1, "2026-12-01T00:00:00.000000Z", None, None, None, "floor-hold",
                    json.dumps({"box": "T1", "chain": t1.chain, "round_key": 3, "round": "bj-3",
                                "user": "mallory", "why": "keep it"}), None, None, 1, head, "")
    forged = replace(forged, hash=chain_hash(head, canonical_bytes(forged)))
    sql_on(schema, "INSERT INTO {}.records (chain_no, seq, at, kind, body, hash_format,"
           " prev_hash, hash) VALUES (0, %s, %s, %s, %s, 1, %s, %s)", forged.seq, forged.at,
           forged.kind, forged.body_text, forged.prev_hash, forged.hash)
    status, report = verify(config, capsys)
    assert status == 1
    assert any(f"record {forged.seq}" in p and "carries no signature" in p
               for p in problems(report)), problems(report)
    assert main(["room", "prune", "--config", str(config), "--records-older-than-hours",
                 "1"]) == 2
    assert "no hold is certain" in capsys.readouterr().err
    assert main(["room", "holds", "--config", str(config)]) == 2


def test_a_room_chain_written_before_signing_goes_on_signed_and_keeps_its_holds_and_cuts(
        tmp_path: Path, schema: str, boxes: list[Box],
        capsys: pytest.CaptureFixture[str]) -> None:
    config = room_toml(tmp_path, server_url(), schema, boxes)
    unsigned = PostgresStore(server_url(), tmp_path / "room-frames", schema=schema, create=True)
    try:  # a room of an earlier build: holds and prunes without a key
        for box in boxes:
            unsigned.ingest(box.table, box.chain, box.records)
        found = retention.find_round(unsigned, "T1", "bj-2")
        unsigned.append("floor-hold", {"user": "olga", "why": "dispute", "box": found.box,
                                       "chain": found.chain, "round_key": found.round_key,
                                       "round": found.round})
    finally:
        unsigned.close()
    status, report = verify(config, capsys)
    assert status == 1 and any("no record is signed" in p for p in problems(report))

    assert main(["room", "prune", "--config", str(config), "--records-older-than-hours",
                 "1"]) == 0  # signing begins: the key record vouches for the hold
    capsys.readouterr()
    room = open_room(server_url(), schema, tmp_path)
    try:
        key, prune = room.latest_records("key", 1)[0], room.latest_records("floor-prune", 1)[0]
        assert key.seq == 2 and key.body["vouches"] == [[1, room.record(1).hash]]
        assert "signing begins after record 1" in key.body["why"]
        assert prune.seq == 3 and prune.signature is not None
        assert [h.round for h in retention.holds(room).values()] == ["bj-2"]
        assert set(recorded_cuts(room).chains) == {("T1", boxes[0].chain),
                                                   ("T2", boxes[1].chain)}
    finally:
        room.close()
    status, report = verify(config, capsys)
    assert (status, problems(report)) == (0, [])
    assert any("record 1 to 1 predate signing" in n or "records 1 to 1 predate signing" in n
               for n in report["room_notices"]), report["room_notices"]

    # the hold from before signing rewritten, its hash recomputed: not the one vouched for;
    # the chain after it re-linked too: the key record's signature fails
    hold = sql_on(schema, "SELECT body FROM {}.records WHERE chain_no = 0 AND seq = 1")[0][0]
    rewrite_room_chain_from(schema, 1, hold.replace('"bj-2"', '"bj-3"'), upto=1)
    room = open_room(server_url(), schema, tmp_path)
    try:
        with pytest.raises(RecordingError, match="does not vouch for it"):
            retention.holds(room)
    finally:
        room.close()
    assert verify(config, capsys)[0] == 1
    rewrite_room_chain_from(schema, 1, hold.replace('"bj-2"', '"bj-3"'))
    room = open_room(server_url(), schema, tmp_path)
    try:
        with pytest.raises(RecordingError, match="introduces a key without a valid signature"):
            retention.holds(room)
    finally:
        room.close()
    assert verify(config, capsys)[0] == 1


def test_room_keygen_makes_a_private_key_and_serve_refuses_without_one(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "T1.pub").write_text(Signer.generate().public.text + "\n")
    config = tmp_path / "room.toml"
    config.write_text('[postgres]\nurl = "postgresql://postgres@127.0.0.1:1/none"\n'
                      '[nats]\nurl = "nats://127.0.0.1:1"\n[tables]\nT1 = "T1.pub"\n'
                      '[signing]\nkey = "keys/room.key"\n')
    key, public = tmp_path / "keys" / "room.key", tmp_path / "keys" / "room.pub"

    assert main(["room", "serve", "--config", str(config), "--no-page"]) == 2
    err = capsys.readouterr().err
    assert f"{key}: no room signing key there" in err and "room keygen --config" in err
    assert main(["room", "prune", "--config", str(config), "--older-than-hours", "1"]) == 2
    assert "no room signing key" in capsys.readouterr().err

    assert main(["room", "keygen", "--config", str(config)]) == 0
    assert "made the room's signing key" in capsys.readouterr().out
    assert stat.S_IMODE(key.stat().st_mode) == 0o600
    made = read_public_keys(public)
    assert main(["room", "keygen", "--config", str(config)]) == 0  # kept, not replaced
    assert "kept" in capsys.readouterr().out and read_public_keys(public) == made

    key.chmod(0o640)  # open to the group: refused, and said so
    assert main(["room", "serve", "--config", str(config), "--no-page"]) == 2
    err = capsys.readouterr().err
    assert "may be read or written by others" in err and "room's key exposed" in err
    key.chmod(0o600)
    link = tmp_path / "keys" / "link.key"
    link.symlink_to(key)
    config.write_text(config.read_text().replace("keys/room.key", "keys/link.key"))
    assert main(["room", "serve", "--config", str(config), "--no-page"]) == 2
    assert "is a link" in capsys.readouterr().err

    # a retention policy is the PostgreSQL store's: refused with a room kept in SQLite
    config.write_text(config.read_text().replace("keys/link.key", "keys/room.key")
                      + "[retention]\nrecords_hours = 24\n")
    assert main(["room", "serve", "--config", str(config), "--no-page", "--sqlite",
                 str(tmp_path / "room")]) == 2
    assert "[retention] is applied to a PostgreSQL store only" in capsys.readouterr().err


def test_records_cut_off_the_end_of_the_rooms_chain_fail_verify_by_its_anchor_log(
        tmp_path: Path, schema: str, boxes: list[Box],
        capsys: pytest.CaptureFixture[str]) -> None:
    """Whoever can write the database can delete the newest records of the room's chain (a
    hold, so that its round may be pruned): what is left still links and verifies. The anchor
    log outside PostgreSQL holds the chain's head after each record the room appends, so
    ``room verify`` finds the cut."""
    config = room_toml(tmp_path, server_url(), schema, boxes)
    unanchored = config.read_text()
    config.write_text(unanchored + '\n[signing]\nanchor_log = "anchors/room.jsonl"\n')
    room = open_room(server_url(), schema, tmp_path)
    try:
        for box in boxes:
            room.ingest(box.table, box.chain, box.records)
    finally:
        room.close()
    assert main(["room", "hold", "--config", str(config), "T1", "bj-2", "--why",
                 "dispute 4411"]) == 0
    capsys.readouterr()
    (hold_seq, hold_hash), = sql_on(schema, "SELECT seq, hash FROM {}.records WHERE chain_no = 0"
                                    " AND kind = 'floor-hold'")
    anchors = [json.loads(line) for line in (tmp_path / "anchors/room.jsonl").read_text()
               .splitlines()]
    assert [(a["seq"], a["hash"], a["why"]) for a in anchors] == [
        (hold_seq, hold_hash, "floor-hold")]
    status, report = verify(config, capsys)
    assert status == 0, problems(report)
    assert any("1 anchor(s) of chain" in notice for notice in report["room_notices"])

    sql_on(schema, "DELETE FROM {}.records WHERE chain_no = 0 AND seq >= %s", hold_seq)
    status, report = verify(config, capsys)
    assert status == 1
    assert any(f"anchored record {hold_seq} is gone: the chain was cut short" in p
               for p in problems(report)), problems(report)
    # the same store checked without the log: the cut cannot be told, and verify says so
    config.write_text(unanchored)
    status, report = verify(config, capsys)
    assert status == 0, problems(report)
    assert any("keeps no anchor log" in notice for notice in report["room_notices"])


def test_the_rooms_key_rotated_signs_on_and_a_room_left_on_the_old_key_appends_nothing(
        tmp_path: Path, schema: str, boxes: list[Box],
        capsys: pytest.CaptureFixture[str]) -> None:
    """``room keygen --rotate REASON``: the old key signs in the new one, which signs every
    record after it and is added to the public key file, and the chain verifies across the
    rotation, anchored; a room still running with the old key (a ``room serve`` not restarted)
    appends nothing more, since its records would not verify."""
    from dealer_assist.floor.config import load_room_config, open_room_store
    from dealer_assist.surveillance.signing import load_signer

    config = room_toml(tmp_path, server_url(), schema, boxes)
    config.write_text(config.read_text() + '\n[signing]\nanchor_log = "room-anchors.jsonl"\n')
    room = open_room(server_url(), schema, tmp_path)
    old = room.signer
    assert old is not None
    try:
        for box in boxes:
            room.ingest(box.table, box.chain, box.records)
    finally:
        room.close()
    left_running = open_room_store(load_room_config(config), signer=old)
    try:
        assert main(["room", "keygen", "--config", str(config), "--rotate", "\t"]) == 2
        assert "a reason of 1 to 200 characters" in capsys.readouterr().err
        assert main(["room", "keygen", "--config", str(config), "--rotate",
                     "the old key's backup tape was lost"]) == 0
        new = load_signer(tmp_path / "room-signing.key", "the room's")
        assert new.public != old.public
        assert f"the room's key is now {new.public.key_id}" in capsys.readouterr().out
        assert read_public_keys(tmp_path / "room-signing.pub") == [old.public, new.public]
        (rotation,) = [json.loads(body) for body, in sql_on(
            schema, "SELECT body FROM {}.records WHERE chain_no = 0 AND kind = 'key' AND"
            " body LIKE '%%backup tape%%'")]
        assert (rotation["previous"], rotation["key_id"]) == (old.public.key_id,
                                                              new.public.key_id)
        with pytest.raises(RecordingError, match="now signed by another key"):
            left_running.append("floor-alarm", {"kind": "silent", "table": "T1", "text": "x"})
    finally:
        left_running.close()
    assert main(["room", "hold", "--config", str(config), "T1", "bj-2", "--why",
                 "dispute 4412"]) == 0
    capsys.readouterr()
    (signature,), = sql_on(schema, "SELECT signature FROM {}.records WHERE chain_no = 0 AND"
                           " kind = 'floor-hold'")
    assert signature.startswith(new.public.key_id + ":")
    status, report = verify(config, capsys)
    assert status == 0, problems(report)
    assert any("2 anchor(s) of chain" in notice for notice in report["room_notices"])
