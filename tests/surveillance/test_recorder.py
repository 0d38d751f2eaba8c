"""The recorder: what it stores, how it chains, what it refuses, how it resumes."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path

import pytest

from dealer_assist.roundlog import Bet, CardDealt, RoundStart, read_events, settle_log
from dealer_assist.rules import Card
from dealer_assist.surveillance import Recorder, RecorderStateError, RecordingError, RecordingStore
from dealer_assist.surveillance.replay import load_round, replay, round_keys
from dealer_assist.surveillance.store import GENESIS_HASH, format_time, parse_time
from tests.golden import ROUNDS, assert_subset, expected_for
from tests.surveillance.factory import StepClock, frame_jpeg, golden_logs, record_round


def test_golden_rounds_replay_and_verify_clean(recording: Path) -> None:
    store = RecordingStore(recording)
    report = replay(store, verify=True)
    assert report.discrepancies == []
    assert len(report.rounds) == len(ROUNDS)
    assert {r.status for r in report.rounds} == {"settled"}
    assert report.records_checked == store.head()[0]


def test_recorded_settlements_are_the_golden_answers(recording: Path) -> None:
    store = RecordingStore(recording)
    for key, log in zip(round_keys(store), ROUNDS, strict=True):
        data = load_round(store, key)
        assert data is not None and data.settlement is not None
        # a round id is carried as its text, a numeric one too (docs/rules-decisions.md)
        assert data.round_id == str(json.loads(log.read_text().splitlines()[0])["id"])
        assert_subset(expected_for(log), json.loads(data.settlement.body_text))
        # the recorded log is the golden log, event for event
        golden = [e.event for e in read_events(log.read_text().splitlines())]
        assert [e.event for e in read_events(data.log_lines())] == golden


def test_every_record_links_to_the_one_before(recording: Path) -> None:
    records = list(RecordingStore(recording).records())
    assert records[0].prev_hash == GENESIS_HASH
    assert [r.seq for r in records] == list(range(1, len(records) + 1))
    for before, after in zip(records, records[1:], strict=False):
        assert after.prev_hash == before.hash


def test_frames_are_stored_with_their_hash_and_detections(recording: Path) -> None:
    store = RecordingStore(recording)
    frame = next(store.records(kinds=("frame",)))
    body = frame.body
    assert body["media_type"] == "image/jpeg" and (body["width"], body["height"]) == (480, 270)
    assert body["detections"]["detections"][0]["card"]
    data = (recording / frame.file).read_bytes()
    import hashlib

    assert hashlib.sha256(data).hexdigest() == frame.sha256
    assert body["size"] == len(data)


def _start() -> RoundStart:
    return RoundStart("r-1", "h17-ddd-6", {"table": "T1", "dealer_id": "D-1"})


def test_calls_out_of_order_are_refused_with_reasons(tmp_path: Path) -> None:
    with Recorder.open(tmp_path / "rec", "T1", clock=StepClock()) as recorder:
        with pytest.raises(RecorderStateError, match="no round begun"):
            recorder.event(Bet(1, Decimal("10")))
        with pytest.raises(RecorderStateError, match="call begin_round"):
            recorder.event({"type": "round", "id": "x", "rules": "s17-6"})
        recorder.begin_round(_start())
        index = recorder.event(CardDealt(Card.parse("7S")))
        assert index == 1
        jpeg, _ = frame_jpeg("7S", 0)
        with pytest.raises(RecorderStateError, match="card_event_index 5 is not an event"):
            recorder.frame(jpeg, [], 5)
        with pytest.raises(RecordingError, match="must be JPEG or PNG.*start with 474946"):
            recorder.frame(b"GIF89a....", [], 1)
    with pytest.raises(RecordingError, match="table name 'T 1'"):
        Recorder.open(tmp_path / "rec", "T 1")


def test_opening_a_missing_recording_names_the_directory(tmp_path: Path) -> None:
    with pytest.raises(RecordingError, match=f"{tmp_path / 'nothing'}.*not a recording"):
        RecordingStore(tmp_path / "nothing")


def test_a_png_frame_is_accepted(tmp_path: Path) -> None:
    import cv2
    import numpy as np

    ok, png = cv2.imencode(".png", np.zeros((20, 30, 3), np.uint8))
    assert ok
    with Recorder.open(tmp_path / "rec", "T1", clock=StepClock()) as recorder:
        recorder.begin_round(_start())
        record = recorder.frame(png.tobytes(), None, 0)
    assert record.body["media_type"] == "image/png"
    assert (record.body["width"], record.body["height"]) == (30, 20)
    assert record.file is not None and record.file.endswith(".png")


def test_a_round_begun_over_an_open_one_marks_it_partial(tmp_path: Path) -> None:
    with Recorder.open(tmp_path / "rec", "T1", clock=StepClock()) as recorder:
        first = recorder.begin_round(_start())
        recorder.event(Bet(1, Decimal("10")))
        second = record_round(recorder, golden_logs(["soft-21-stands"])[0])
        store = recorder.store
        assert load_round(store, first).status == "partial"  # type: ignore[union-attr]
        assert load_round(store, second).status == "settled"  # type: ignore[union-attr]
        report = replay(store, verify=True)
    assert report.discrepancies == []


def test_restart_marks_the_open_round_partial_and_carries_the_chain_on(tmp_path: Path) -> None:
    clock = StepClock()
    recorder = Recorder.open(tmp_path / "rec", "T1", clock=clock)
    record_round(recorder, golden_logs(["soft-21-stands"])[0])
    key = recorder.begin_round(_start())
    recorder.event(Bet(1, Decimal("10")))
    recorder.close()  # as if the table box stopped mid-round
    head_before = RecordingStore(tmp_path / "rec").head()

    recorder = Recorder.open(tmp_path / "rec", "T1", clock=clock)
    records = list(recorder.store.records())
    assert records[head_before[0]].prev_hash == head_before[1]
    partial = [r for r in records if r.kind == "partial"]
    assert [r.round_key for r in partial] == [key]
    opened = [r for r in records if r.kind == "open"][-1]
    assert opened.body["partial_rounds"] == [key]
    record_round(recorder, golden_logs(["surrender-returns-half"])[0])
    report = replay(recorder.store, verify=True)
    recorder.close()
    assert report.discrepancies == []
    assert [r.status for r in report.rounds] == ["settled", "partial", "settled"]


def test_a_round_cut_by_a_restart_is_continued_and_settles_whole(tmp_path: Path) -> None:
    """A table restarted mid-round goes on recording the round it was in: its next events follow
    those the store holds, and it settles there, re-settling clean."""
    lines = golden_logs(["soft-21-stands"])[0]
    logged = [item.event for item in read_events(lines)]
    recorder = Recorder.open(tmp_path / "rec", "T1", clock=StepClock())
    key = recorder.begin_round(logged[0])
    recorder.event(logged[1])
    recorder.close()  # killed mid-round: marked partial at the next open

    with Recorder.open(tmp_path / "rec", "T1", clock=StepClock()) as recorder:
        other = recorder.begin_round(_start())
        with pytest.raises(RecorderStateError, match="while round .* is open"):
            recorder.continue_round(key)
        recorder.void_round("a foreign card")
        recorder.continue_round(key)
        for event in logged[2:]:
            recorder.event(event)
        recorder.end_round(settle_log(lines))
        store = recorder.store
        data = load_round(store, key)
        assert data is not None and data.status == "settled"
        assert [item.event for item in read_events(data.log_lines())] == logged
        voided = load_round(store, other)
        assert voided is not None and voided.status == "partial"
        assert json.loads(voided.notes[-1].body_text)["void"] == "a foreign card"
        assert [json.loads(r.body_text)["kind"] for r in voided.alarms] == ["void"]
        report = replay(store, verify=True)
    assert report.discrepancies == []


def test_a_settled_round_that_todays_engine_refuses_is_a_discrepancy(tmp_path: Path) -> None:
    """The table recorded a card where none was due (e.g. a misread); replay names the event."""
    lines = golden_logs(["soft-21-stands"])[0]
    logged = list(read_events(lines))
    settlement = settle_log(lines)
    with Recorder.open(tmp_path / "rec", "T1", clock=StepClock()) as recorder:
        recorder.begin_round(logged[0].event)
        for item in logged[1:-1]:
            recorder.event(item.event)
        extra = recorder.event(CardDealt(Card.parse("5C")))
        recorder.event(logged[-1].event)
        recorder.end_round(settlement)
        report = replay(recorder.store, verify=True)
    [problem] = report.discrepancies
    assert problem.kind == "refused" and problem.round_id == settlement.round_id
    assert f"event {extra} " in problem.what and '"5C"' in problem.what
    assert "refused by today's engine" in problem.what


def test_record_times_are_text_that_sorts_as_time() -> None:
    """Searches compare times as text: strftime's unpadded year 999 sorted after 2026."""
    moments = [datetime(999, 1, 1, tzinfo=UTC), datetime(2026, 11, 29, 13, 5, 7, 123456,
                                                          tzinfo=UTC)]
    texts = [format_time(moment) for moment in moments]
    assert texts == ["0999-01-01T00:00:00.000Z", "2026-11-29T13:05:07.123Z"]
    assert sorted(texts) == texts and [parse_time(t) for t in texts] == [
        moments[0], moments[1].replace(microsecond=123000)]


def test_the_clocks_state_is_recorded_at_open_and_every_hour(tmp_path: Path) -> None:
    """The host clock's synchronisation state, as read, in the ``open`` record and in a
    ``clock`` record once an hour has passed on the store's clock; never guessed."""
    from datetime import timedelta

    states = iter([{"synchronised": True, "offset_ms": "0.250", "source": "adjtimex"},
                   {"synchronised": "unknown", "offset_ms": "unknown", "source": "none"}])
    clock = StepClock(step=timedelta(0))  # moved by hand below
    with Recorder.open(tmp_path, "T1", clock=clock, clock_reader=lambda: next(states)) as rec:
        clock.now += timedelta(minutes=59)
        rec.begin_round(RoundStart("r-1", "h17-ddd-6"))
        rec.event(Bet(1, Decimal("10")))
        clock.now += timedelta(minutes=1)  # an hour since the open record
        rec.alarm("shoe", "E3", "r-1", happened=datetime(2026, 11, 29, 9, 59, tzinfo=UTC))
        rec.event(CardDealt(Card.parse("7S")))
    store = RecordingStore(tmp_path)
    try:
        opened = next(store.records(kinds=("open",)))
        clocks = list(store.records(kinds=("clock",)))
        alarm = next(store.records(kinds=("alarm",)))
    finally:
        store.close()
    assert opened.body["clock"] == {"synchronised": True, "offset_ms": "0.250",
                                    "source": "adjtimex"}
    assert [c.body for c in clocks] == [
        {"synchronised": "unknown", "offset_ms": "unknown", "source": "none"}]
    assert parse_time(clocks[0].at) - parse_time(opened.at) >= timedelta(hours=1)
    assert alarm.body["round"] == "r-1" and alarm.body["happened_at"] == "2026-11-29T09:59:00.000Z"


def test_a_record_stands_when_the_clock_record_after_it_is_refused(tmp_path: Path,
                                                                   monkeypatch) -> None:
    """Another writer takes the database between an alarm and the hourly clock record after it
    (the clock reader, called between the two, takes it): the alarm is written once and the call
    returns it (once, it raised after the alarm's commit, so the table's store, keeping the
    alarm to try again, wrote it twice); the clock record follows the next record instead."""
    import sqlite3
    from datetime import timedelta

    monkeypatch.setattr(RecordingStore, "busy_timeout_s", 0.05)
    holders: list[sqlite3.Connection] = []
    armed = False

    def reader() -> dict[str, str]:
        if armed and not holders:
            holders.append(sqlite3.connect(tmp_path / "index.sqlite", isolation_level=None))
            holders[0].execute("BEGIN EXCLUSIVE")
        return {"synchronised": "unknown", "offset_ms": "unknown", "source": "none"}

    clock = StepClock(step=timedelta(0))
    with Recorder.open(tmp_path, "T1", clock=clock, clock_reader=reader) as rec:
        clock.now += timedelta(hours=1)
        armed = True
        first = rec.alarm("shoe", "E3")
        holders[0].rollback()
        holders[0].close()
        second = rec.alarm("shoe", "E4")
    store = RecordingStore(tmp_path)
    try:
        kinds = [(r.kind, r.object_body().get("text")) for r in store.records(after=first.seq - 1)]
    finally:
        store.close()
    assert second.seq == first.seq + 1
    assert kinds == [("alarm", "E3"), ("alarm", "E4"), ("clock", None)]


def test_the_clock_reader_says_unknown_rather_than_guess() -> None:
    from dealer_assist.surveillance.clock_state import clock_state

    state = clock_state()
    assert state["synchronised"] in (True, False, "unknown")
    assert state["source"] in ("adjtimex", "timedatectl", "adjtimex+timedatectl", "none")
    if state["synchronised"] is not True:
        assert state["offset_ms"] == "unknown"
    else:
        Decimal(state["offset_ms"])  # a number where the kernel gives one
