"""What the officer takes away, attacked: the round view and incident report that vouch for a
round, the round-log files exported from a recording, and the operator tool. Each is made with
the real recorder and store, then altered as someone who can write the recording (not read the
table's key) would."""

from __future__ import annotations

import base64
import json
import re
import shutil
import subprocess
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from dealer_assist.cli import main
from dealer_assist.roundlog import settle_log
from dealer_assist.surveillance import Recorder, RecordingStore, frame_files, query
from dealer_assist.surveillance.access import AccessError, access_log, add_operator
from dealer_assist.surveillance.query import round_view
from dealer_assist.surveillance.signing import Signer
from dealer_assist.surveillance.store import canonical_bytes, canonical_json, chain_hash
from dealer_assist.table.recording import rotate_table_key
from tests.surveillance.attacker import all_records
from tests.surveillance.factory import build_recording, golden_logs
from tests.surveillance.page import CHEAP, PASSWORD, add_operators, login, page_client
from tests.surveillance.test_signed_evidence import ROUNDS, Table


@pytest.fixture
def table(tmp_path: Path) -> Table:
    made = Table(tmp_path)
    made.record(golden_logs(ROUNDS))
    return made


def test_a_rotation_key_record_rewritten_to_name_another_key_vouches_for_nothing(
        table: Table) -> None:
    """The key a rotation introduces is the one its signed hash holds: a ``key`` record whose
    body is changed to name the attacker's key (hash and old key's signature kept) does not let
    the attacker's signatures pass the round view, under the table's own key file."""
    rotate_table_key(table.directory, "T1", table.files, "yearly rotation")
    table.record(golden_logs(ROUNDS[1:2]))  # bj-2 again, under the rotated key
    records = all_records(table.directory)
    rotation = [i for i, r in enumerate(records) if r.kind == "key"][1]
    mallory = Signer.generate()
    body = json.loads(records[rotation].body_text)
    body.update(public_key=mallory.public.text, key_id=mallory.public.key_id)
    after = records[rotation + 1:]
    ours = [i for i, r in enumerate(after) if r.round_id == "bj-2"]
    bet = next(i for i in ours if after[i].kind == "event"
               and json.loads(after[i].body_text).get("type") == "bet")
    raised = {**json.loads(after[bet].body_text), "amount": "500"}
    after[bet] = replace(after[bet], body_text=canonical_json(raised))
    lines = [after[i].body_text for i in ours if after[i].kind in ("round", "event")]
    settled = next(i for i in ours if after[i].kind == "settlement")
    after[settled] = replace(after[settled],
                             body_text=canonical_json(settle_log(lines).to_json()))
    store = RecordingStore(table.directory)
    try:
        store.conn.execute("UPDATE records SET body = ? WHERE seq = ?",
                           (canonical_json(body), records[rotation].seq))
        prev = records[rotation].hash  # the record after it still links to it
        for record in after:
            moved = replace(record, prev_hash=prev)
            moved = replace(moved, hash=chain_hash(prev, canonical_bytes(moved)))
            moved = replace(moved, signature=mallory.sign(moved.hash))
            store.conn.execute(
                "UPDATE records SET body = ?, prev_hash = ?, hash = ?, signature = ? WHERE seq = ?",
                (moved.body_text, moved.prev_hash, moved.hash, moved.signature, moved.seq))
            prev = moved.hash
        store.rebuild_index()
        integrity = round_view(store, store.round_keys("bj-2")[-1], table.trusted)["integrity"]
    finally:
        store.close()
    assert not integrity["intact"]
    assert not any(mallory.public.key_id in note for note in integrity["notes"])


def test_a_rounds_settlement_deleted_from_the_middle_of_the_chain_fails_its_view(
        table: Table) -> None:
    """A round's last record deleted while the chain goes on after it: the view does not show
    the round as an intact open round."""
    store = RecordingStore(table.directory)
    try:
        key = store.round_keys("bj-1")[-1]
        settlement = next(r for r in store.records(round_key=key) if r.kind == "settlement")
        assert settlement.seq < store.last_seq()
        store.conn.execute("DELETE FROM records WHERE seq = ?", (settlement.seq,))
        store.rebuild_index()
        view = round_view(store, key, table.trusted)
    finally:
        store.close()
    assert not view["integrity"]["intact"]
    assert any(f"the record after record {settlement.seq - 1} " in problem
               and "missing (deleted)" in problem for problem in view["integrity"]["problems"])


def _frame_of(directory: Path) -> tuple[int, int, str]:
    store = RecordingStore(directory)
    try:
        frame = next(iter(store.records(kinds=("frame",))))
    finally:
        store.close()
    assert frame.round_key is not None and frame.file is not None
    return frame.seq, frame.round_key, frame.file


def _rewrite_body(directory: Path, seq: int, **fields: object) -> None:
    """Record ``seq``'s body rewritten in the database with ``fields`` (hash left as it was)."""
    store = RecordingStore(directory)
    try:
        body = {**json.loads(store.record(seq).body_text), **fields}  # type: ignore[union-attr]
        store.conn.execute("UPDATE records SET body = ? WHERE seq = ?",
                           (canonical_json(body), seq))
    finally:
        store.close()


def test_a_frame_records_size_never_becomes_markup_in_the_html_report(tmp_path: Path) -> None:
    """A frame record's ``width`` rewritten to markup (the round then FAILS) must not put a
    script in the report, which could show the reader INTACT; the report runs no script."""
    build_recording(tmp_path, golden_logs(["blackjack-pays-3-to-2"]))
    seq, key, _file = _frame_of(tmp_path)
    _rewrite_body(tmp_path, seq, width=("480' height='270'/></svg><script>document.body."
                                        "innerHTML='INTACT'</script><svg x='"))
    add_operators(tmp_path, audrey="auditor")
    client = page_client(tmp_path)
    login(client, "audrey")
    html = client.get(f"/api/rounds/{key}/export").text
    assert "INTEGRITY FAILED" in html
    assert "<script" not in html
    assert re.search(r"<meta http-equiv='Content-Security-Policy' content=\"default-src 'none';",
                     html)


def test_a_frame_record_naming_another_media_type_still_exports_the_html_report(
        tmp_path: Path) -> None:
    """A frame record altered to name another media type: the round FAILS and its report is
    still made, saying the frame is not drawn (not a 503 as if the recording were busy)."""
    build_recording(tmp_path, golden_logs(["blackjack-pays-3-to-2"]))
    seq, key, _file = _frame_of(tmp_path)
    _rewrite_body(tmp_path, seq, media_type="image/gif")
    add_operators(tmp_path, audrey="auditor")
    client = page_client(tmp_path)
    login(client, "audrey")
    response = client.get(f"/api/rounds/{key}/export")
    assert response.status_code == 200
    assert "INTEGRITY FAILED" in response.text
    assert "not drawn: its record names no JPEG or PNG type" in response.text


def _the_export(directory: Path) -> dict[str, Any]:
    """The one export's access record in the recording at ``directory``."""
    store = RecordingStore(directory)
    try:
        (export,) = [e for e in access_log(store) if e["action"] == "export"]
    finally:
        store.close()
    return export


def _pdf_text(directory: Path, pdf: bytes) -> str:
    """The text ``pdftotext`` reads out of ``pdf`` (written into ``directory``)."""
    report = directory / "report.pdf"
    report.write_bytes(pdf)
    return subprocess.run(["pdftotext", str(report), "-"], check=True, timeout=60,
                          capture_output=True, text=True).stdout


@pytest.mark.parametrize("damage", ["cut short", "not an image"])
def test_the_pdf_report_names_a_frame_file_that_does_not_decode(
        tmp_path: Path, damage: str) -> None:
    """A frame file cut short or replaced by other bytes is evidence: the PDF is still made,
    FAILED, naming the frame, and its export recorded."""
    build_recording(tmp_path, golden_logs(["blackjack-pays-3-to-2"]))
    seq, key, file = _frame_of(tmp_path)
    path = tmp_path / file
    path.write_bytes(path.read_bytes()[:600] if damage == "cut short" else b"not an image")
    add_operators(tmp_path, audrey="auditor")
    client = page_client(tmp_path)
    login(client, "audrey")
    response = client.get(f"/api/rounds/{key}/export.pdf")
    assert response.status_code == 200 and response.content.startswith(b"%PDF")
    export = _the_export(tmp_path)
    assert export["target"]["verdict"] == "FAILED"
    assert export["target"]["sha256"] == response.headers["x-report-sha256"]
    if shutil.which("pdftotext"):
        text = _pdf_text(tmp_path, response.content)
        assert f"frame record {seq}" in text and "does not decode" in text


@pytest.mark.parametrize("form", ["export", "export.pdf"])
def test_a_frame_file_replaced_after_its_check_is_not_what_the_report_shows(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, form: str) -> None:
    """The report shows the frame bytes its integrity check hashed, never the file read again:
    one replaced just after the check read it is not what a report saying INTACT shows. The
    replacement is made from inside the read (the real read, then the attacker's write), which
    stands in for a writer racing the export: only that makes the worst moment certain."""
    build_recording(tmp_path, golden_logs(["blackjack-pays-3-to-2"]))
    seq, key, file = _frame_of(tmp_path)
    path = tmp_path / file
    recorded = path.read_bytes()
    real_read = frame_files.read_frame

    def read_then_replace(base: Path, where: Path) -> bytes | None:
        data = real_read(base, where)
        if where == path:
            path.write_bytes(b"not an image")
        return data

    monkeypatch.setattr(frame_files, "read_frame", read_then_replace)
    monkeypatch.setattr(query, "read_frame", read_then_replace)
    add_operators(tmp_path, audrey="auditor")
    client = page_client(tmp_path)
    login(client, "audrey")
    response = client.get(f"/api/rounds/{key}/{form}")
    assert response.status_code == 200
    assert path.read_bytes() == b"not an image"  # the attacker's write happened
    if form == "export":
        assert "INTACT" in response.text and "INTEGRITY FAILED" not in response.text
        assert base64.b64encode(recorded).decode("ascii") in response.text
        assert base64.b64encode(b"not an image").decode("ascii") not in response.text
        return
    export = _the_export(tmp_path)
    assert export["target"]["verdict"] == "INTACT"
    assert shutil.which("pdftotext"), "pdftotext (poppler-utils) is installed by scripts/test.sh"
    text = _pdf_text(tmp_path, response.content)
    assert f"frame record {seq}" in text and "does not decode" not in text


@pytest.mark.parametrize("round_id", ["../../escaped", "a\x00b", "r" * 300])
def test_export_rounds_writes_no_file_outside_its_folder_for_any_round_id(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], round_id: str) -> None:
    """A round id is the recording's text: ``--export-rounds OUT`` never makes it a path out of
    OUT/void, a crash or the end of the export; the round is refused by name and the others
    are written."""
    recording = tmp_path / "deep" / "rec"
    build_recording(recording, golden_logs(["blackjack-pays-3-to-2"]), frames=False)
    with Recorder.open(recording, "T1") as recorder:
        recorder.begin_round({"type": "round", "id": round_id, "rules": "s17-6"})
        recorder.event({"type": "bet", "seat": 2, "amount": "25"})
        recorder.void_round("voided by supervisor S-3")
    out = tmp_path / "deep" / "out"
    assert main(["replay", str(recording), "--export-rounds", str(out)]) == 0
    printed = capsys.readouterr()
    assert printed.out.splitlines()[-1].endswith(", 1 refused")
    assert "cannot be a file name" in printed.err and "(#2)" in printed.err
    assert (out / "rounds" / "bj-1.jsonl").is_file()
    written = {p for p in tmp_path.rglob("*") if p.is_file()}
    assert {p for p in written if not p.is_relative_to(recording)} == {
        out / "rounds" / "bj-1.jsonl"}


def test_two_tables_rounds_of_one_id_are_refused_by_name_not_one_hidden(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Two tables recording a round of the same id in one store would share one file name:
    neither is written over the other; the id is refused, naming both tables."""
    build_recording(tmp_path, golden_logs(["blackjack-pays-3-to-2"]), frames=False)
    with Recorder.open(tmp_path, "T2") as recorder:
        recorder.begin_round({"type": "round", "id": "bj-1", "rules": "s17-6"})
        recorder.event({"type": "bet", "seat": 2, "amount": "25"})
        recorder.void_round("voided by supervisor S-3")
    out = tmp_path / "out"
    assert main(["replay", str(tmp_path), "--export-rounds", str(out)]) == 0
    printed = capsys.readouterr()
    assert printed.out.splitlines()[-1].endswith("0 round(s) written, 0 already equal, 0 not "
                                                 "ended (open or cut short: no file), 1 refused")
    assert "tables T1, T2 each recorded a round of this id" in printed.err
    assert not (out / "rounds" / "bj-1.jsonl").exists()
    assert not (out / "void" / "bj-1.jsonl").exists()


def test_an_operator_name_with_a_line_break_is_refused(tmp_path: Path) -> None:
    """``1-64 letters, digits or . _ @ -`` means the whole name: ``olga\\n`` (which lists and logs
    as another line) is refused."""
    build_recording(tmp_path, golden_logs(["blackjack-pays-3-to-2"]), frames=False)
    store = RecordingStore(tmp_path)
    try:
        with pytest.raises(AccessError, match="must be 1-64 letters"):
            add_operator(store, "olga\n", PASSWORD, "operator", passwords=CHEAP)
        assert store.operators() == []
    finally:
        store.close()
