"""Retention (storage per hour, pruning video but not key frames) and table statistics."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path

import pytest

from dealer_assist.surveillance import Recorder, RecordingStore
from dealer_assist.surveillance.query import (
    mark_key_frame,
    parse_shifts,
    prune_frames,
    shift_of,
    storage_report,
    table_statistics,
)
from dealer_assist.surveillance.replay import replay
from tests.surveillance.factory import GOLDEN_COUNT, StepClock, golden_logs, record_round


def test_storage_is_reported_per_hour_of_play(recording: Path) -> None:
    report = storage_report(RecordingStore(recording))
    # the step clock moves 2 s a reading: the golden rounds span 9:00 to about 10:00
    assert [h["hour"] for h in report["hours"]] == ["2026-11-29T09:00Z", "2026-11-29T10:00Z"]
    assert sum(h["rounds"] for h in report["hours"]) == GOLDEN_COUNT
    assert report["hours_of_play"] == 2
    assert report["bytes_on_disk"] > sum(h["frame_bytes"] for h in report["hours"]) > 0
    assert report["bytes_per_hour_of_play"] == report["bytes_on_disk"] // 2


def test_pruning_removes_old_video_frames_and_keeps_key_frames_and_logs(recording: Path) -> None:
    store = RecordingStore(recording)
    frames = store.conn.execute("SELECT seq, file, key, at FROM frames ORDER BY seq").fetchall()
    video = [f for f in frames if not f["key"]]
    keep = video[0]["seq"]
    mark_key_frame(store, keep, "olga")  # evidence in a dispute: kept from now on
    events_before = len(list(store.records(kinds=("event", "settlement"))))
    cutoff_at = datetime(2026, 11, 29, 9, 30, tzinfo=UTC)
    result = prune_frames(store, timedelta(hours=1), "olga", now=cutoff_at + timedelta(hours=1))
    old_video = [f for f in video if f["at"] < "2026-11-29T09:30:00.000Z" and f["seq"] != keep]
    assert result["pruned"] == len(old_video) > 0 and result["bytes"] > 0
    for frame in frames:
        gone = frame["seq"] in {f["seq"] for f in old_video}
        assert (recording / frame["file"]).exists() != gone, frame["seq"]
    assert len(list(store.records(kinds=("event", "settlement")))) == events_before
    # the pruning is itself chained, so verification knows those files are gone on purpose
    report = replay(store, verify=True)
    assert report.discrepancies == []
    prune = list(store.records(kinds=("prune",)))
    assert len(prune) == 1 and prune[0].body["user"] == "olga"
    again = prune_frames(store, timedelta(hours=1), "olga", now=cutoff_at + timedelta(hours=1))
    assert again["pruned"] == 0


def test_statistics_per_table_shift_and_dealer(tmp_path: Path) -> None:
    day = StepClock(datetime(2026, 11, 29, 13, 30, tzinfo=UTC), timedelta(minutes=1))
    logs = golden_logs(
        [
            "camera-only-hole-card-revealed",
            "super-bonus-1000-with-envy",
            "surrender-returns-half",
            "soft-21-stands",
        ]
    )
    with Recorder.open(tmp_path / "rec", "T7", clock=day) as recorder:
        record_round(recorder, logs[0])  # dealer D-42, 13:3x: day shift
        record_round(recorder, logs[1], alarm=("vision", "card seen in no zone"))
        recorder.alarm("shoe", "E3 card not read")  # between rounds: counted in no round
        day.now = datetime(2026, 11, 29, 14, 10, tzinfo=UTC)
        record_round(recorder, logs[2], alarm=("shoe", "E3 card not read"))
        record_round(recorder, logs[3])
    store = RecordingStore(tmp_path / "rec")
    rows = table_statistics(store, by=("table", "shift", "dealer"))
    assert [(r["table"], r["shift"], r["dealer"], r["rounds"]) for r in rows] == [
        ("T7", "day", "(unknown)", 1),
        ("T7", "day", "D-42", 1),
        ("T7", "swing", "(unknown)", 2),
    ]
    swing = rows[2]
    assert swing["hours"] == 1 and swing["rounds_per_hour"] == "2.0"
    assert swing["alarms"] == {"shoe": 1}
    by_table = table_statistics(store, by=("table",))
    assert len(by_table) == 1
    table = by_table[0]
    assert table["rounds"] == 4 and table["hours"] == 2 and table["rounds_per_hour"] == "2.0"
    assert table["alarms"] == {"shoe": 1, "vision": 1}
    assert table["payouts"]["super-bonus"] == "1000.00"
    assert table["payouts"]["envy"] == "100.00"
    assert table["hands_per_seat"]["1"] >= 2 and table["hands_per_seat"]["5"] == 1
    players_net = store.conn.execute("SELECT SUM(net_cents) FROM rounds").fetchone()[0]
    assert Decimal(table["house_net"]) == -Decimal(players_net) / 100


def test_shifts_and_groupings_are_checked() -> None:
    shifts = parse_shifts("early=5,late=17")
    assert shift_of(datetime(2026, 1, 1, 4, tzinfo=UTC), shifts) == "late"
    assert shift_of(datetime(2026, 1, 1, 5, tzinfo=UTC), shifts) == "early"
    assert shift_of(datetime(2026, 1, 1, 17, tzinfo=UTC), shifts) == "late"
    with pytest.raises(ValueError, match="'late=25' must be NAME=HOUR"):
        parse_shifts("early=5,late=25")
    with pytest.raises(ValueError, match="cannot group statistics by 'pit'"):
        table_statistics(None, by=("pit",))  # type: ignore[arg-type]


def test_pruning_deletes_only_what_the_chained_records_call_old_video(
    recording: Path, tmp_path: Path
) -> None:
    """The search index is not chained: an index edited to call a key frame video, or to point
    a video frame at a file outside the recording, must not make prune delete either file."""
    store = RecordingStore(recording)
    frames = store.conn.execute("SELECT seq, file, key FROM frames ORDER BY seq").fetchall()
    key_frame = next(f for f in frames if f["key"])
    video = [f for f in frames if not f["key"]]
    victim = tmp_path / "outside.txt"
    victim.write_text("not the recording's\n")
    store.conn.execute("UPDATE frames SET key = 0 WHERE seq = ?", (key_frame["seq"],))
    store.conn.execute("UPDATE frames SET file = ? WHERE seq = ?",
                       (f"../{victim.name}", video[0]["seq"]))
    result = prune_frames(store, timedelta(hours=1), "olga",
                          now=datetime(2026, 11, 30, tzinfo=UTC))
    assert result["refused"] == sorted([key_frame["seq"], video[0]["seq"]])
    assert result["pruned"] == len(video) - 1
    assert victim.read_text() == "not the recording's\n"
    assert (recording / key_frame["file"]).is_file()
    assert (recording / video[0]["file"]).is_file()
    assert not (recording / video[1]["file"]).exists()
    prune = list(store.records(kinds=("prune",)))
    assert len(prune) == 1 and key_frame["seq"] not in prune[0].body["frames"]
    store.close()
    from dealer_assist.cli import main

    assert main(["surveillance", "prune", str(recording), "--older-than-hours", "1"]) == 1
    assert victim.read_text() == "not the recording's\n"
