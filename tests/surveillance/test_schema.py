"""Old recordings: a schema-1 recording opens, is upgraded in place, replays and verifies."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest

from dealer_assist.surveillance import Recorder, RecordingError, RecordingStore
from dealer_assist.surveillance.replay import replay
from dealer_assist.surveillance.store import SCHEMA_VERSION
from tests.surveillance.factory import StepClock, build_v1_recording, golden_logs, record_round

FIXTURE = Path(__file__).parents[1] / "data" / "surveillance" / "v1-recording"
FIXTURE_LOGS = [
    "blackjack-pays-3-to-2",
    "super-bonus-1000-with-envy",
    "split-resplit-order-and-bonus",
]


def _rows(directory: Path) -> list[tuple[object, ...]]:
    conn = sqlite3.connect(directory / "index.sqlite")
    rows = conn.execute("SELECT * FROM records ORDER BY seq").fetchall()
    conn.close()
    return rows


def test_the_committed_fixture_is_what_the_schema_1_helper_builds(tmp_path: Path) -> None:
    build_v1_recording(tmp_path / "v1", golden_logs(FIXTURE_LOGS))
    assert _rows(tmp_path / "v1") == _rows(FIXTURE)


def test_a_schema_1_recording_opens_upgraded_and_replays_clean(tmp_path: Path) -> None:
    copy = tmp_path / "v1"
    shutil.copytree(FIXTURE, copy)
    before = _rows(copy)
    store = RecordingStore(copy)
    assert store.schema_version() == SCHEMA_VERSION
    records = list(store.records())
    # bodies and hashes are never rewritten by an upgrade
    assert [(r.seq, r.body_text, r.hash) for r in records] == [(b[0], b[4], b[8]) for b in before]
    assert {r.hash_format for r in records} == {1}
    assert {r.table for r in records} == {"T9"}
    report = replay(store, verify=True)
    assert report.discrepancies == []
    assert [(r.round_id, r.status) for r in report.rounds] == [
        ("bj-1", "settled"),
        ("spl-2", "settled"),
        ("sb-1", "settled"),
    ]
    assert report.rounds[2].replayed is not None and report.rounds[2].replayed["net"] == "1215.00"
    rows = store.conn.execute("SELECT round_id, table_id, max_payout_cents FROM rounds").fetchall()
    assert [tuple(row) for row in rows] == [
        ("bj-1", "T9", 1500),
        ("spl-2", "T9", 3500),
        ("sb-1", "T9", 102000),
    ]


def test_recording_continues_after_an_upgrade_with_mixed_hash_formats(tmp_path: Path) -> None:
    copy = tmp_path / "v1"
    shutil.copytree(FIXTURE, copy)
    with Recorder.open(copy, "T9", clock=StepClock()) as recorder:
        record_round(recorder, golden_logs(["soft-21-stands"])[0])
        report = replay(recorder.store, verify=True)
        formats = {r.hash_format for r in recorder.store.records()}
    assert formats == {1, 2}
    assert report.discrepancies == [] and len(report.rounds) == 4


def test_an_altered_schema_1_record_is_still_caught(tmp_path: Path) -> None:
    copy = tmp_path / "v1"
    shutil.copytree(FIXTURE, copy)
    conn = sqlite3.connect(copy / "index.sqlite")
    conn.execute("UPDATE records SET body = replace(body, '\"5S\"', '\"5H\"') WHERE seq = 45")
    assert conn.total_changes == 1
    conn.commit()
    conn.close()
    report = replay(RecordingStore(copy), verify=True)
    assert [d.seq for d in report.chain or []] == [45]


def test_a_newer_schema_is_refused_by_name(tmp_path: Path) -> None:
    with Recorder.open(tmp_path / "rec", "T1"):
        pass
    conn = sqlite3.connect(tmp_path / "rec" / "index.sqlite")
    conn.execute("INSERT INTO schema_version VALUES (99, '2030-01-01T00:00:00.000Z', 'future')")
    conn.commit()
    conn.close()
    with pytest.raises(RecordingError, match="schema 99 is newer than this program reads"):
        RecordingStore(tmp_path / "rec")
