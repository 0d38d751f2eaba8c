"""Tampering: one changed byte, a deleted record, an altered frame, a rewritten chain."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from dealer_assist.surveillance import RecordingStore
from dealer_assist.surveillance.replay import replay, verify_chain
from dealer_assist.surveillance.store import canonical_bytes, chain_hash


def _settlement_seq(recording: Path, round_id: str) -> int:
    store = RecordingStore(recording)
    seq = next(r.seq for r in store.records(kinds=("settlement",)) if r.round_id == round_id)
    store.close()
    return seq


def test_one_byte_changed_in_the_database_file_is_named(recording: Path) -> None:
    store = RecordingStore(recording)
    target = next(r for r in store.records(kinds=("event",)) if '"amount":"100.00"' in r.body_text)
    store.close()  # the last connection checkpoints the WAL into index.sqlite
    raw = bytearray((recording / "index.sqlite").read_bytes())
    needle = target.body_text.encode()
    offset = raw.find(needle)
    assert offset >= 0 and raw.find(needle, offset + 1) == -1
    position = offset + needle.index(b"100.00")
    raw[position] = ord("9")  # 100.00 -> 900.00, same length: SQLite reads it without complaint
    (recording / "index.sqlite").write_bytes(bytes(raw))

    problems, _ = verify_chain(RecordingStore(recording))
    assert len(problems) == 1
    problem = problems[0]
    assert problem.kind == "chain" and problem.seq == target.seq
    assert f"record {target.seq} (event, round {target.round_id} on T1) was altered" in problem.what


def test_a_changed_settlement_amount_is_named_by_chain_and_by_replay(recording: Path) -> None:
    seq = _settlement_seq(recording, "sb-1")
    conn = sqlite3.connect(recording / "index.sqlite")
    body = json.loads(conn.execute("SELECT body FROM records WHERE seq=?", (seq,)).fetchone()[0])
    body["seats"][0]["net"] = "1120.00"  # seat 1 claims 100 more
    text = json.dumps(body, sort_keys=True, separators=(",", ":"))
    conn.execute("UPDATE records SET body=? WHERE seq=?", (text, seq))
    conn.commit()
    conn.close()

    report = replay(RecordingStore(recording), verify=True)
    assert [(d.kind, d.seq) for d in report.chain or []] == [("chain", seq)]
    money = [d for d in report.discrepancies if d.kind == "settlement"]
    assert len(money) == 1
    assert money[0].seat == 1 and money[0].round_id == "sb-1"
    assert (money[0].recorded, money[0].replayed) == ("1120.00", "1020.00")
    assert "seat 1: seat net: recorded 1120.00, replayed 1020.00" in money[0].text()


def test_a_rewritten_chain_still_fails_replay_on_the_money(recording: Path) -> None:
    """An attacker who rehashes every later record beats the chain, not the re-settlement."""
    seq = _settlement_seq(recording, "sb-1")
    store = RecordingStore(recording)
    rows = list(store.records())
    conn = store.conn
    body = json.loads(rows[seq - 1].body_text)
    body["seats"][1]["hands"][0]["cards"] = ["KS", "5S", "6C"]
    body["seats"][1]["net"] = "55.00"
    texts = {seq: json.dumps(body, sort_keys=True, separators=(",", ":"))}
    prev = rows[seq - 2].hash
    for record in rows[seq - 1 :]:
        from dataclasses import replace

        changed = replace(record, body_text=texts.get(record.seq, record.body_text), prev_hash=prev)
        new_hash = chain_hash(prev, canonical_bytes(changed))
        conn.execute(
            "UPDATE records SET body=?, prev_hash=?, hash=? WHERE seq=?",
            (changed.body_text, prev, new_hash, record.seq),
        )
        prev = new_hash
    report = replay(store, verify=True)
    assert report.chain == []
    assert report.head_hash != rows[-1].hash  # the head no longer matches one noted earlier
    named = {(d.seat, d.hand, str(d.recorded), str(d.replayed)) for d in report.discrepancies}
    assert (2, 0, "['KS', '5S', '6C']", "['KS', '5S', 'QC']") in named
    assert (2, None, "55.00", "45.00") in named


def test_a_deleted_record_is_a_gap(recording: Path) -> None:
    conn = sqlite3.connect(recording / "index.sqlite")
    conn.execute("DELETE FROM records WHERE seq = 40")
    conn.commit()
    conn.close()
    problems, _ = verify_chain(RecordingStore(recording))
    texts = [p.what for p in problems]
    assert "records 40 to 40 are missing (deleted)" in texts
    assert any(p.seq == 41 and "does not link" in p.what for p in problems)


def test_one_byte_changed_in_a_frame_file_is_named(recording: Path) -> None:
    store = RecordingStore(recording)
    frame = next(store.records(kinds=("frame",)))
    assert frame.file is not None
    path = recording / frame.file
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0x01
    path.write_bytes(bytes(data))
    problems, _ = verify_chain(store)
    assert len(problems) == 1
    assert problems[0].kind == "file" and problems[0].seq == frame.seq
    assert f"{frame.file} of record {frame.seq}" in problems[0].what
    assert "was altered" in problems[0].what


def test_a_deleted_frame_file_without_a_prune_record_is_named(recording: Path) -> None:
    store = RecordingStore(recording)
    frame = next(store.records(kinds=("frame",)))
    assert frame.file is not None
    (recording / frame.file).unlink()
    problems, _ = verify_chain(store)
    assert [p.seq for p in problems] == [frame.seq]
    assert "is missing and no prune record accounts for it" in problems[0].what


def test_an_anchored_head_catches_a_cut_off_end_and_a_rewrite(recording: Path) -> None:
    store = RecordingStore(recording)
    seq, digest = store.head()
    assert replay(store, verify=True, anchors=[(seq, digest)]).discrepancies == []
    store.conn.execute("DELETE FROM records WHERE seq >= ?", (seq - 5,))  # cut off the end
    report = replay(store, verify=True, anchors=[(seq, digest)])
    assert [d.what for d in report.chain or []] == [
        f"anchored record {seq} is gone: the chain was cut short"
    ]
    earlier = store.record(seq - 10)
    assert earlier is not None
    store.conn.execute("UPDATE records SET hash = ? WHERE seq = ?", ("0" * 64, earlier.seq))
    report = replay(store, verify=True, anchors=[(earlier.seq, earlier.hash)])
    assert any("no longer has the anchored hash" in d.what for d in report.chain or [])
