"""SIGKILL the recorder mid-round: nothing it had returned is lost, and a restart carries on."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

from dealer_assist.surveillance import Recorder, RecordingStore
from dealer_assist.surveillance.replay import load_round, replay
from tests.surveillance.factory import golden_logs, record_round

ROOT = Path(__file__).parents[2]


def _kill_after(recording: Path, heads_wanted: int, pause: bool) -> list[tuple[int, str]]:
    """Start the writer, read ``heads_wanted`` durable heads, SIGKILL it; the heads it reported."""
    command = [sys.executable, "-m", "tests.surveillance.crash_writer", str(recording)]
    if pause:
        command.append(str(heads_wanted))
    writer = subprocess.Popen(
        command,
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert writer.stdout is not None
    heads = []
    try:
        while len(heads) < heads_wanted:
            line = writer.stdout.readline()
            assert line, f"the writer stopped early (status {writer.poll()})"
            seq, digest = line.split()
            heads.append((int(seq), digest))
    finally:
        writer.send_signal(signal.SIGKILL)
        writer.wait()
    assert writer.returncode == -signal.SIGKILL
    return heads


def _assert_nothing_lost(store: RecordingStore, heads: list[tuple[int, str]]) -> None:
    for seq, digest in heads:
        record = store.record(seq)
        assert record is not None, f"record {seq} was reported durable but is gone"
        assert record.hash == digest


def test_sigkill_mid_round_loses_nothing_and_restart_carries_on(tmp_path: Path) -> None:
    recording = tmp_path / "rec"
    # 90 heads is two rounds and part of a third; the writer waits there, mid-round
    heads = _kill_after(recording, 90, pause=True)

    store = RecordingStore(recording)
    _assert_nothing_lost(store, heads)
    unfinished = [
        row[0] for row in store.conn.execute("SELECT round_key FROM rounds WHERE status = 'open'")
    ]
    assert len(unfinished) == 1, "the killed round is kept, still open"
    killed = unfinished[0]
    assert replay(store, verify=True).discrepancies == []
    store.close()

    with Recorder.open(recording, "T2") as recorder:
        data = load_round(recorder.store, killed)
        assert data is not None and data.status == "partial"
        assert len(data.events) > 1, "the events of the killed round are kept"
        record_round(recorder, golden_logs(["soft-21-stands"])[0])
        report = replay(recorder.store, verify=True)
    assert report.discrepancies == []
    statuses = [r.status for r in report.rounds]
    assert statuses.count("partial") == 1 and statuses[-1] == "settled"
    assert statuses.count("settled") >= 3


def test_sigkill_at_any_moment_keeps_a_valid_chain(tmp_path: Path) -> None:
    recording = tmp_path / "rec"
    heads = _kill_after(recording, 70, pause=False)  # the writer races on; the kill lands anywhere
    with Recorder.open(recording, "T2") as recorder:
        _assert_nothing_lost(recorder.store, heads)
        record_round(recorder, golden_logs(["soft-21-stands"])[0])
        report = replay(recorder.store, verify=True)
    assert report.discrepancies == []
    assert report.rounds[-1].status == "settled"
    assert all(r.status in ("settled", "partial") for r in report.rounds)
