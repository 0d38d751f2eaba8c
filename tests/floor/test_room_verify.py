"""``dealer-assist room verify``: the records of real table recordings (the real recorder and
signer), held in a real PostgreSQL, verified against the keys room.toml trusts; a record
missing, rewritten, forked or signed by another key fails it by name."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from dealer_assist.cli import main
from dealer_assist.surveillance.signing import Signer
from dealer_assist.surveillance.store import canonical_bytes, chain_hash
from tests.floor.recorded import Box, open_room, record_box, room_toml
from tests.postgres import fresh_schema, server_url


@pytest.fixture(scope="module")
def boxes(tmp_path_factory: pytest.TempPathFactory) -> list[Box]:
    folder = tmp_path_factory.mktemp("boxes")
    return [record_box(folder / "T1", "T1", 4), record_box(folder / "T2", "T2", 3)]


@pytest.fixture
def schema() -> Iterator[str]:
    server_url()
    with fresh_schema("room") as name:
        yield name


def verify(config: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, dict[str, Any]]:
    status = main(["room", "verify", "--config", str(config), "--json"])
    return status, json.loads(capsys.readouterr().out)


def problems(report: dict[str, Any]) -> list[str]:
    return [d["what"] for chain in report["chains"] for d in chain["discrepancies"]]


def hold(tmp_path: Path, schema: str, boxes: list[Box], **records: Any) -> Path:
    """The boxes' records ingested into the room (``T1=[...]``: these in place of T1's)."""
    room = open_room(server_url(), schema, tmp_path)
    try:
        for box in boxes:
            room.ingest(box.table, box.chain, records.get(box.table, box.records))
    finally:
        room.close()
    return room_toml(tmp_path, server_url(), schema, boxes)


def test_the_records_of_every_table_verify_clean_and_every_round_is_resettled(
        tmp_path: Path, schema: str, boxes: list[Box],
        capsys: pytest.CaptureFixture[str]) -> None:
    config = hold(tmp_path, schema, boxes)
    status, report = verify(config, capsys)
    assert status == 0 and report["clean"] and problems(report) == []
    chains = {chain["table"]: chain for chain in report["chains"]}
    assert set(chains) == {"T1", "T2"}
    for box, rounds in zip(boxes, (4, 3), strict=True):
        chain = chains[box.table]
        assert (chain["chain"], chain["records_held"], chain["next_seq"]) == (
            box.chain, len(box.records), len(box.records) + 1)
        assert chain["rounds_resettled"] == rounds
        assert any(box.signer.public.key_id in note or "checked with the key" in note
                   for note in chain["notices"])
    assert main(["room", "verify", "--config", str(config)]) == 0
    assert "CLEAN in 2 chain(s)" in capsys.readouterr().out


def test_a_record_never_received_is_a_gap_named_by_table_and_number(
        tmp_path: Path, schema: str, boxes: list[Box],
        capsys: pytest.CaptureFixture[str]) -> None:
    t1 = boxes[0].records
    config = hold(tmp_path, schema, boxes, T1=t1[:9] + t1[10:])
    status, report = verify(config, capsys)
    assert status == 1
    [gap] = [d for d in report["chains"][0]["discrepancies"] if "missing" in d["what"]]
    assert gap["table"] == "T1" and gap["seq"] == 11
    assert "records 10 to 10 are missing (never received from the table)" in gap["what"]
    assert report["chains"][0]["next_seq"] == 10


def test_a_record_rewritten_before_the_room_held_it_fails_its_chain_and_its_round(
        tmp_path: Path, schema: str, boxes: list[Box],
        capsys: pytest.CaptureFixture[str]) -> None:
    t1 = list(boxes[0].records)
    index, settled = next((i, r) for i, r in enumerate(t1) if r.kind == "settlement")
    altered = replace(settled, body_text=settled.body_text.replace('"net":"', '"net":"9', 1))
    t1[index] = replace(altered, hash=chain_hash(altered.prev_hash, canonical_bytes(altered)))
    config = hold(tmp_path, schema, boxes, T1=t1)
    status, report = verify(config, capsys)
    assert status == 1
    found = problems(report)
    assert any(f"record {settled.seq + 1} " in what and "does not link" in what
               for what in found)  # the next record still links to the original
    assert any(d["kind"] in ("settlement", "refused") for c in report["chains"]
               for d in c["discrepancies"])  # and the round no longer re-settles


def test_a_record_rewritten_on_the_table_after_the_room_held_it_is_a_fork(
        tmp_path: Path, schema: str, boxes: list[Box],
        capsys: pytest.CaptureFixture[str]) -> None:
    config = hold(tmp_path, schema, boxes)
    t1 = boxes[0].records
    settled = next(r for r in t1 if r.kind == "settlement")
    altered = replace(settled, body_text=settled.body_text.replace('"net":"', '"net":"9', 1))
    altered = replace(altered, hash=chain_hash(altered.prev_hash, canonical_bytes(altered)))
    room = open_room(server_url(), schema, tmp_path)
    try:
        [outcome] = room.ingest("T1", boxes[0].chain, [altered])
        assert outcome.held == settled
    finally:
        room.close()
    status, report = verify(config, capsys)
    assert status == 1
    [fork] = [d for c in report["chains"] for d in c["discrepancies"] if d["kind"] == "fork"]
    assert fork["table"] == "T1" and fork["seq"] == settled.seq
    assert (fork["recorded"], fork["replayed"]) == (settled.hash, altered.hash)
    assert "rewritten on the table" in fork["what"]


def test_a_chain_signed_by_a_key_the_room_does_not_trust_fails_by_name(
        tmp_path: Path, schema: str, boxes: list[Box],
        capsys: pytest.CaptureFixture[str]) -> None:
    config = hold(tmp_path, schema, boxes)
    (tmp_path / "T2.pub").write_text(Signer.generate().public.text + "\n")  # not T2's key
    status, report = verify(config, capsys)
    assert status == 1
    [wrong] = [d for c in report["chains"] for d in c["discrepancies"]]
    assert wrong["kind"] == "signature" and wrong["table"] == "T2"
    assert f"is not a key from {tmp_path / 'T2.pub'}" in wrong["what"]


def test_a_forged_signature_is_named(tmp_path: Path, schema: str, boxes: list[Box],
                                     capsys: pytest.CaptureFixture[str]) -> None:
    t2 = list(boxes[1].records)
    last = t2[-1]
    forger = Signer.generate()
    # a signature naming the table's key id but made by another key
    forged = f"{boxes[1].signer.public.key_id}:{forger.sign(last.hash).split(':', 1)[1]}"
    t2[-1] = replace(last, signature=forged)
    config = hold(tmp_path, schema, boxes, T2=t2)
    status, report = verify(config, capsys)
    assert status == 1
    [bad] = [d for c in report["chains"] for d in c["discrepancies"]]
    assert bad["kind"] == "signature" and bad["seq"] == last.seq and bad["table"] == "T2"
    assert "does not verify" in bad["what"]


def test_a_settlement_the_engine_disagrees_with_is_named_though_signed(
        tmp_path: Path, schema: str, boxes: list[Box],
        capsys: pytest.CaptureFixture[str]) -> None:
    from dealer_assist.surveillance.signed_chain import Evidence, begin_signing
    from dealer_assist.surveillance.store import RecordingStore

    directory = tmp_path / "T3"
    shutil.copytree(boxes[1].directory, directory)
    box = RecordingStore(directory)
    try:
        begin_signing(box, Evidence(boxes[1].signer), "T3")
        start = box.append("round", {"type": "round", "id": "bad-1", "rules": "h17-ddd-6"},
                           table="T2", round_id="bad-1")
        events = [{"type": "bet", "seat": 1, "amount": "10"},
                  {"type": "card", "card": "9S", "to": {"seat": 1, "hand": 0}},
                  {"type": "card", "card": "6S", "to": "dealer"},
                  {"type": "card", "card": "8H", "to": {"seat": 1, "hand": 0}},
                  {"type": "card", "card": "KD", "to": "dealer"},
                  {"type": "action", "seat": 1, "action": "stand", "hand": 0},
                  {"type": "card", "card": "5D", "to": "dealer"}, {"type": "end"}]
        for event in events:
            box.append("event", event, table="T2", round_key=start.round_key, round_id="bad-1")
        box.append("settlement", {"net": "10.00", "seats": [
            {"seat": 1, "player": None, "wager": "10.00", "net": "10.00",
             "hands": [{"cards": ["9S", "8H"], "net": "10.00"}],
             "lines": [{"kind": "main", "amount": "10.00"}]}]},
            table="T2", round_key=start.round_key, round_id="bad-1")  # 17 loses to 21
        t2 = list(box.records())
    finally:
        box.close()
    config = hold(tmp_path, schema, boxes, T2=t2)
    status, report = verify(config, capsys)
    assert status == 1
    wrong = [d for c in report["chains"] for d in c["discrepancies"]]
    assert wrong and all(d["kind"] == "settlement" and d["round_id"] == "bad-1" and
                         d["table"] == "T2" for d in wrong)


def test_a_table_the_room_has_no_key_for_fails_and_a_silent_table_is_listed(
        tmp_path: Path, schema: str, boxes: list[Box],
        capsys: pytest.CaptureFixture[str]) -> None:
    config = hold(tmp_path, schema, boxes)
    (tmp_path / "T9.pub").write_text(Signer.generate().public.text + "\n")
    config.write_text(config.read_text().replace('T2 = "T2.pub"', 'T9 = "T9.pub"'))
    status, report = verify(config, capsys)
    assert status == 1
    [untrusted] = [d for c in report["chains"] for d in c["discrepancies"]
                   if "not one the room trusts" in d["what"]]
    assert untrusted["table"] == "T2"
    assert report["tables_without_records"] == ["T9"]


def test_a_store_that_cannot_be_opened_is_named_with_status_2(
        tmp_path: Path, schema: str, boxes: list[Box],
        capsys: pytest.CaptureFixture[str]) -> None:
    config = room_toml(tmp_path, server_url(), schema, boxes)  # nothing set up in the schema
    assert main(["room", "verify", "--config", str(config)]) == 2
    err = capsys.readouterr().err
    assert "holds no store" in err and schema in err and "password" not in err
