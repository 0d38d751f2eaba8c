"""Signed, anchored evidence: each rewrite someone who can write the recording (but cannot read
the table's key) makes with the program's own functions is caught by verify with the key; the
anchor log catches a cut tail and a replaced database; a fresh chain over a recording is refused;
operators changed by SQL are reported; old unsigned recordings say they predate signing."""

from __future__ import annotations

import base64
import json
import os
import shutil
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from dealer_assist.cli import main
from dealer_assist.surveillance import Recorder, RecordingStore
from dealer_assist.surveillance.access import add_operator, authenticate, log_command
from dealer_assist.surveillance.anchors import AnchorLog
from dealer_assist.surveillance.evidence_check import TrustedKeys, trusted_keys
from dealer_assist.surveillance.interface import StoredOperator
from dealer_assist.surveillance.replay import ReplayReport, replay
from dealer_assist.surveillance.signed_chain import (
    MAX_REASON,
    Evidence,
    FreshChainRefused,
    KeyMismatchError,
    recorded_reason,
)
from dealer_assist.surveillance.signing import Signer, load_signer, open_table_key
from dealer_assist.table.recording import EvidenceFiles, open_recording, rotate_table_key
from tests.surveillance.attacker import all_records, raise_bet, rechain
from tests.surveillance.factory import StepClock, frame_jpeg, golden_logs, record_round
from tests.surveillance.old_hashes import old_scrypt_hash
from tests.surveillance.page import CHEAP

ROUNDS = ["blackjack-pays-3-to-2", "blackjack-odd-amount", "bonus-5-card-21",
          "blackjack-beats-dealer-blackjack"]
V1 = Path(__file__).parents[1] / "data" / "surveillance" / "v1-recording"


class Table:
    """A signed recording made as the table makes it, with its key files and anchor log."""

    def __init__(self, root: Path):
        self.directory = root / "recording"
        self.files = EvidenceFiles(root / "config" / "T1.key", root / "anchors" / "log.jsonl")
        self.clock = StepClock()

    def evidence(self, new_chain: str | None = None) -> Evidence:
        return replace(self.files, new_chain=new_chain).open(self.directory)

    def record(self, logs: list[list[str]], new_chain: str | None = None) -> None:
        with Recorder.open(self.directory, "T1", clock=self.clock,
                           evidence=self.evidence(new_chain)) as recorder:
            for lines in logs:
                record_round(recorder, lines)

    @property
    def trusted(self) -> TrustedKeys | None:
        return trusted_keys([str(self.files.public_key)])

    def verify(self, *, key: bool = True, anchors: bool = True) -> ReplayReport:
        store = RecordingStore(self.directory)
        try:
            return replay(store, verify=True, trusted=self.trusted if key else None,
                          anchor_log=AnchorLog(self.files.anchor_log) if anchors else None)
        finally:
            store.close()


@pytest.fixture
def table(tmp_path: Path) -> Table:
    made = Table(tmp_path)
    made.record(golden_logs(ROUNDS))
    return made


def _texts(report: ReplayReport, kind: str) -> list[str]:
    return [d.what for d in report.discrepancies if d.kind == kind]


def test_a_signed_recording_verifies_clean_with_its_key_and_anchors(table: Table) -> None:
    report = table.verify()
    assert report.discrepancies == []
    assert any("signatures checked with the key(s) from" in n for n in report.notices)
    assert any("anchor(s) of chain" in n for n in report.notices)
    assert all(r.signature for r in all_records(table.directory))
    assert oct(table.files.key.stat().st_mode & 0o777) == "0o600"
    assert not table.files.key.resolve().is_relative_to(table.directory.resolve())


def test_a_raised_bet_with_its_settlement_recomputed_and_rechained_is_caught(
        table: Table) -> None:
    rechain(table.directory, raise_bet(all_records(table.directory), "bj-1", "500"))
    report = table.verify(anchors=False)
    assert [d for d in report.discrepancies if d.kind in ("chain", "settlement")] == []
    signed = _texts(report, "signature")
    assert signed and all("does not verify with key" in text for text in signed)


def test_signatures_removed_after_a_rewrite_are_caught(table: Table) -> None:
    rechain(table.directory, raise_bet(all_records(table.directory), "bj-1", "500"),
            keep_signatures=False)
    report = table.verify(anchors=False)
    assert any("carries no signature" in t or "without a valid signature" in t
               for t in _texts(report, "signature"))


def test_a_whole_recording_stripped_of_keys_and_signatures_fails_with_the_key(
        table: Table) -> None:
    kept = [r for r in all_records(table.directory) if r.kind != "key"]
    rechain(table.directory, kept, keep_signatures=False)
    report = table.verify(anchors=False)
    assert any("no record is signed" in t for t in _texts(report, "signature"))
    anchored = table.verify(key=False)
    assert any("which holds no signed chain: the recording was replaced" in t
               for t in _texts(anchored, "anchor"))


def test_a_deleted_round_rechained_is_caught(table: Table) -> None:
    records = all_records(table.directory)
    victim = next(r.round_key for r in records if r.kind == "round")
    rechain(table.directory, [r for r in records if r.round_key != victim])
    report = table.verify(anchors=False)
    assert [d for d in report.discrepancies if d.kind == "chain"] == []
    assert _texts(report, "signature")


def test_reordered_rows_rechained_are_caught(table: Table) -> None:
    records = all_records(table.directory)
    keys = sorted({r.round_key for r in records if r.round_key is not None})
    first, second = ([r for r in records if r.round_key == key] for key in keys[:2])
    rest = [r for r in records if r.round_key not in keys[:2]]
    at = records.index(first[0])
    rechain(table.directory, [*rest[:at], *second, *first, *rest[at:]])
    report = table.verify(anchors=False)
    assert [d for d in report.discrepancies if d.kind == "chain"] == []
    assert _texts(report, "signature")


def test_a_replaced_frame_with_its_hash_updated_is_caught(table: Table) -> None:
    records = all_records(table.directory)
    index = next(i for i, r in enumerate(records) if r.kind == "frame")
    frame = records[index]
    assert frame.file is not None
    forged, _ = frame_jpeg("2C", 5)
    assert forged != (table.directory / frame.file).read_bytes()
    (table.directory / frame.file).write_bytes(forged)
    import hashlib

    records[index] = replace(frame, sha256=hashlib.sha256(forged).hexdigest())
    rechain(table.directory, records)
    report = table.verify(anchors=False)
    assert [d for d in report.discrepancies if d.kind in ("chain", "file")] == []
    assert any(f"record {frame.seq} (frame" in t for t in _texts(report, "signature")), \
        report.discrepancies


def test_records_appended_by_the_programs_store_without_the_key_are_caught(
        table: Table) -> None:
    with Recorder.open(table.directory, "T1", clock=table.clock) as forger:  # no key
        record_round(forger, golden_logs(["blackjack-pays-3-to-2"])[0])
    report = table.verify(anchors=False)
    texts = _texts(report, "signature")
    assert any("(round, round" in t and "carries no signature" in t for t in texts)
    assert any("(settlement, round" in t for t in texts)


def test_a_key_introduced_without_the_tables_key_is_caught(table: Table) -> None:
    store = RecordingStore(table.directory, signer=Signer.generate())
    intruder = store.signer
    assert intruder is not None
    store.append("key", {"chain": None, "public_key": intruder.public.text,
                         "key_id": intruder.public.key_id, "previous": None, "why": "mine"},
                 table="T1")
    store.append("round", {"type": "round", "id": "forged"}, table="T1", round_id="forged")
    store.close()
    report = table.verify(anchors=False)
    texts = _texts(report, "signature")
    assert any("without a valid signature by key" in t for t in texts)
    assert any("(round, round forged" in t for t in texts)


def test_the_anchor_log_catches_a_cut_tail_with_the_index_rebuilt(table: Table) -> None:
    records = all_records(table.directory)
    last = max(r.round_key for r in records if r.round_key is not None)
    cut = records.index(next(r for r in records if r.round_key == last))
    store = RecordingStore(table.directory)
    store.conn.execute("DELETE FROM records WHERE seq > ?", (records[cut - 1].seq,))
    store.rebuild_index()
    store.close()
    assert table.verify(anchors=False).discrepancies == []  # signatures alone cannot tell
    report = table.verify()
    assert any("is gone: the chain was cut short" in t for t in _texts(report, "anchor"))


def test_the_anchor_log_catches_a_database_replaced_by_another_signed_chain(
        table: Table, tmp_path: Path) -> None:
    (table.directory / "index.sqlite").unlink()
    for extra in table.directory.glob("index.sqlite-*"):
        extra.unlink()
    shutil.rmtree(table.directory / "frames")
    own = Evidence(Signer.generate())  # the attacker's key: anything but the table's
    with Recorder.open(table.directory, "T1", clock=table.clock, evidence=own) as forger:
        record_round(forger, golden_logs(["blackjack-pays-3-to-2"])[0], frames=False)
    report = table.verify(key=False)
    assert any("the recording was replaced" in t for t in _texts(report, "anchor"))
    keyed = table.verify(anchors=False)
    assert any("is not a key from" in t for t in _texts(keyed, "signature"))


def test_a_forged_anchor_line_does_not_verify(table: Table) -> None:
    lines = table.files.anchor_log.read_text().splitlines()
    forged = json.loads(lines[-1])
    forged["hash"] = "ab" * 32  # a head the table never signed: a later chain passed off
    table.files.anchor_log.write_text("\n".join([*lines, json.dumps(forged)]) + "\n")
    report = table.verify()
    assert any("its signature does not verify with the chain's keys" in t
               for t in _texts(report, "anchor"))


def test_a_new_chain_is_refused_over_a_chain_that_is_there(table: Table) -> None:
    with pytest.raises(FreshChainRefused, match="holds a chain already"):
        Recorder.open(table.directory, "T1", evidence=table.evidence("by mistake"))


def test_a_fresh_chain_is_refused_where_the_anchor_log_names_one(table: Table) -> None:
    (table.directory / "index.sqlite").unlink()
    shutil.rmtree(table.directory / "frames")
    with pytest.raises(FreshChainRefused, match="names chain"):
        Recorder.open(table.directory, "T1", evidence=table.evidence())
    assert not (table.directory / "index.sqlite").exists() or \
        RecordingStore(table.directory).head()[0] == 0


def test_a_fresh_chain_is_refused_beside_round_files_and_begun_when_the_technician_says_so(
        tmp_path: Path) -> None:
    made = Table(tmp_path)
    (made.directory / "rounds").mkdir(parents=True)
    (made.directory / "rounds" / "r-1.jsonl").write_text('{"type": "round", "id": "r-1"}\n')
    recording = None
    with pytest.raises(ValueError, match="round file"):  # the table's own path
        recording = open_recording(made.directory, "T1", evidence=made.files)
    assert recording is None
    made.record(golden_logs(ROUNDS[:1]), new_chain="index.sqlite lost with the old disk")
    report = made.verify()
    assert report.discrepancies == []
    assert any("begun where a recording had been, by the technician: 'index.sqlite lost"
               in n for n in report.notices)
    first = all_records(made.directory)[0]
    assert first.kind == "key"
    assert json.loads(first.body_text)["new_chain"]["round_files"] == 1


def test_a_new_chain_after_a_lost_database_names_the_chain_it_replaces(table: Table) -> None:
    (table.directory / "index.sqlite").unlink()
    shutil.rmtree(table.directory / "frames")
    table.record(golden_logs(ROUNDS[:1]), new_chain="disk replaced")
    report = table.verify()
    assert report.discrepancies == []
    assert any("(replacing chain" in n for n in report.notices)


def test_a_table_with_another_key_is_refused(table: Table) -> None:
    os.chmod(table.files.key, 0o600)
    table.files.key.unlink()
    with pytest.raises(KeyMismatchError, match="restore the table's key file"):
        table.record([])


def test_a_key_readable_by_others_is_refused(table: Table) -> None:
    os.chmod(table.files.key, 0o644)
    with pytest.raises(ValueError, match="may be read or written by others"):
        load_signer(table.files.key)


def test_a_rotated_key_verifies_and_a_record_signed_by_the_old_key_after_it_does_not(
        table: Table) -> None:
    rotate_table_key(table.directory, "T1", table.files, "yearly rotation")
    table.record(golden_logs(ROUNDS[:1]))
    report = table.verify()
    assert report.discrepancies == []
    assert any("keys rotated:" in n for n in report.notices)
    assert len(table.files.public_key.read_text().split("ed25519:")) == 3  # both keys
    old = all_records(table.directory)[0]
    assert old.signature is not None
    store = RecordingStore(table.directory)
    store.signer = load_signer(table.files.key)
    store.append("alarm", {"kind": "x", "text": "y"}, table="T1")
    store.close()
    assert table.verify(anchors=False).discrepancies == []
    stale = Signer.generate()
    store = RecordingStore(table.directory, signer=stale)
    store.append("alarm", {"kind": "x", "text": "forged"}, table="T1")
    store.close()
    assert any("not by the chain's key" in t
               for t in _texts(table.verify(anchors=False), "signature"))


def test_a_signature_forged_under_the_tables_key_id_is_named(table: Table) -> None:
    store = RecordingStore(table.directory)
    seq, _ = store.head()
    key_id = load_signer(table.files.key).public.key_id
    store.conn.execute("UPDATE records SET signature = ? WHERE seq = ?",
                       (f"{key_id}:{base64.b64encode(bytes(64)).decode()}", seq))
    store.close()
    texts = _texts(table.verify(anchors=False), "signature")
    assert len(texts) == 1 and f"record {seq} " in texts[0] and "does not verify" in texts[0]


@pytest.mark.parametrize("change", ["insert", "promote", "password"])
def test_operators_changed_by_sql_are_reported(table: Table, change: str) -> None:
    store = RecordingStore(table.directory)
    add_operator(store, "alice", "a long enough password", "auditor", CHEAP)
    if change == "insert":
        store.put_operator(StoredOperator("mallory", "operator", "x"), "2026-01-01T00:00:00Z")
    elif change == "promote":
        store.conn.execute("UPDATE operators SET role = 'operator' WHERE name = 'alice'")
    else:
        store.conn.execute("UPDATE operators SET password = 'scrypt$known' WHERE name='alice'")
    store.close()
    texts = _texts(table.verify(), "operators")
    expected = {"insert": "operator 'mallory' (operator) is in the operators table but no "
                          "record created it",
                "promote": "operator 'alice' is operator in the operators table but auditor",
                "password": "operator 'alice''s password is not the one record"}[change]
    assert len(texts) == 1 and expected in texts[0]


def test_a_password_rehashed_at_login_is_on_the_record_and_one_changed_by_sql_is_not(
        table: Table) -> None:
    store = RecordingStore(table.directory)  # an operator from before argon2id and digests
    store.put_operator(StoredOperator("olga", "operator", old_scrypt_hash("a long enough one")),
                       "2025-01-01T00:00:00Z")
    log_command(store, "operator-set", {"name": "olga", "role": "operator"})
    authenticate(store, "olga", "a long enough one", passwords=CHEAP)  # rehashed, recorded
    store.close()
    assert _texts(table.verify(), "operators") == []
    store = RecordingStore(table.directory)
    store.conn.execute("UPDATE operators SET password = ? WHERE name = 'olga'",
                       (CHEAP.hash("mallory knows this"),))
    store.close()
    assert ["operator 'olga''s password is not the one record" in t
            for t in _texts(table.verify(), "operators")] == [True]


def test_an_unsigned_old_recording_verifies_and_says_it_predates_signing(
        tmp_path: Path) -> None:
    copy = tmp_path / "v1"
    shutil.copytree(V1, copy)
    store = RecordingStore(copy)
    report = replay(store, verify=True)
    assert report.discrepancies == []
    assert any("no record is signed: the recording predates signing" in n
               for n in report.notices)
    keyed = replay(store, verify=True, trusted=TrustedKeys((Signer.generate().public,), "x"))
    assert any("cannot vouch for it" in t for t in _texts(keyed, "signature"))
    store.close()


def test_signing_begun_on_an_unsigned_recording_covers_what_predates_it(
        tmp_path: Path) -> None:
    made = Table(tmp_path)
    with Recorder.open(made.directory, "T1", clock=made.clock) as unsigned:
        record_round(unsigned, golden_logs(ROUNDS[:1])[0])
    before = len(all_records(made.directory))
    made.record(golden_logs(ROUNDS[1:2]))
    report = made.verify()
    assert report.discrepancies == []
    assert any(f"records 1 to {before} predate signing" in n for n in report.notices)
    records = all_records(made.directory)
    rechain(made.directory, raise_bet(records, "bj-1", "500"))
    assert _texts(made.verify(anchors=False), "signature")


def test_replay_cli_verifies_with_key_and_anchor_log(table: Table,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    args = ["replay", str(table.directory), "--verify", "--key", str(table.files.public_key),
            "--anchor-log", str(table.files.anchor_log)]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "CLEAN" in out and "note: signatures checked with the key(s) from" in out
    assert main(["replay", str(table.directory), "--verify"]) == 0
    out = capsys.readouterr().out
    assert "proves nothing against someone who can replace the whole recording" in out
    assert "note: no anchor log given" in out
    rechain(table.directory, raise_bet(all_records(table.directory), "bj-1", "500"))
    assert main(args) == 1
    assert "signature: " in capsys.readouterr().out
    assert main(["replay", str(table.directory), "--key", "missing.pub"]) == 2
    assert "cannot read the public key file" in capsys.readouterr().err
    assert main(["replay", str(table.directory), "--verify", "--anchor-log", "missing"]) == 2
    assert "--anchor-log: no such file: missing" in capsys.readouterr().err


def test_open_table_key_creates_it_once(tmp_path: Path) -> None:
    first = open_table_key(tmp_path / "k" / "t.key", tmp_path / "k" / "t.pub")
    again = open_table_key(tmp_path / "k" / "t.key", tmp_path / "k" / "t.pub")
    assert first.public == again.public
    assert (tmp_path / "k" / "t.pub").read_text().count("ed25519:") == 1


def test_keys_inside_the_recording_are_refused(tmp_path: Path) -> None:
    inside = EvidenceFiles(tmp_path / "rec" / "t.key", tmp_path / "a.jsonl")
    with pytest.raises(ValueError, match="lies in the recording directory"):
        inside.open(tmp_path / "rec")



def test_a_key_frame_deleted_behind_a_prune_record_written_without_the_key_is_caught(
        table: Table) -> None:
    frame = next(r for r in all_records(table.directory) if r.kind == "frame")
    assert frame.file is not None and json.loads(frame.body_text)["key"] is True
    (table.directory / frame.file).unlink()
    store = RecordingStore(table.directory)  # the page's way of writing: no key
    store.append("prune", {"user": "mallory", "frames": [frame.seq], "files": [frame.file]})
    store.close()
    report = table.verify()
    assert [d.seq for d in report.discrepancies] == [frame.seq]
    assert "is a key frame, which retention never deletes" in report.discrepancies[0].what
    assert any("prune or keyframe record(s) are unsigned" in n for n in report.notices)


def test_the_page_checks_each_round_it_shows_against_the_tables_key(table: Table) -> None:
    """The round view's integrity box: clean under the table's key; a bet raised and its
    settlement re-settled and re-chained with the program's own functions (every hash holds)
    fails on the signatures; and a page told another table's key says so."""
    from tests.surveillance.page import add_operators, login, page_client

    add_operators(table.directory, audrey="auditor")

    def view(trusted: TrustedKeys | None) -> dict[str, Any]:
        client = page_client(table.directory, trusted_keys=trusted)
        login(client, "audrey")
        key = client.get("/api/rounds", params={"round": "bj-1"}).json()["rounds"][0]["key"]
        return dict(client.get(f"/api/rounds/{key}").json()["integrity"])

    clean = view(table.trusted)
    assert clean["intact"] and any("from " + str(table.files.public_key) in n
                                   for n in clean["notes"])
    other = view(TrustedKeys((Signer.generate().public,), "other.pub"))
    assert not other["intact"]
    assert any("is not a key from other.pub: the recording was signed by someone else" in p
               for p in other["problems"])

    rechain(table.directory, raise_bet(all_records(table.directory), "bj-1", "500"))
    rewritten = view(table.trusted)
    assert not rewritten["intact"]
    assert any("has a signature that does not verify with key" in p
               for p in rewritten["problems"])
    assert not any("does not match its hash" in p for p in rewritten["problems"])


@pytest.mark.parametrize("given", [
    "x" * (MAX_REASON + 1), "", "   ", "lost\nINFO forged line", "tape\rlost",
    "lost\u2028INFO forged line", "key \u202egnitator", "zero\u200bwidth", "bell\x07",
    "next\x85line"])
def test_a_reason_the_chain_records_is_one_visible_line_of_at_most_200_characters(
        given: str) -> None:
    with pytest.raises(ValueError, match="a reason of 1 to 200 characters on one line"):
        recorded_reason(given)


def test_a_reason_is_recorded_stripped_accents_and_inner_spaces_kept() -> None:
    assert recorded_reason("  Jahreswechsel: Schlüssel ersetzt  ") == \
        "Jahreswechsel: Schlüssel ersetzt"
    assert recorded_reason("y" * MAX_REASON) == "y" * MAX_REASON
