"""A table's recording directory: the store records each round as it is played, the round-log
files are exported from it (so the two cannot disagree), one table at a time, and a store that
cannot be used stops the table at start. Real files and a real SQLite store in a temporary
directory, played through the real loop."""

from __future__ import annotations

import json
import shutil
import sqlite3
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest

from dealer_assist.roundlog import settle_log
from dealer_assist.rules import RuleSet, Settlement
from dealer_assist.surveillance import Recorder, RecordingStore
from dealer_assist.surveillance.export import latest_round
from dealer_assist.table.alarms import Alarm, AlarmKind
from dealer_assist.table.camera_source import Snapshot
from dealer_assist.table.loop import TableLoop
from dealer_assist.table.recording import (
    MemoryRecorder,
    RecordingDirectory,
    RecordingError,
    ReplayedRound,
    StoreOpenError,
    StoreRecorder,
    TableRecording,
    open_recording,
)
from dealer_assist.table.simulation.world import Player, SimulatedTable
from dealer_assist.table.sources import ShoeLink, VoidRound
from tests.surveillance.damage import damage_page
from tests.surveillance.factory import build_recording, golden_logs


def play(loop: TableLoop, world: SimulatedTable, number: int) -> None:
    for _, item in world.round(number):
        loop.handle(item, 0.0)


def shoe_table(recording: TableRecording, seed: int = 3) -> tuple[TableLoop, SimulatedTable]:
    loop = TableLoop("s17-6", recording.recorder, has_camera=False, round_prefix="T1-x")
    loop.dealer = "D1"  # signed in (signing in: test_sign_in.py)
    loop.handle(ShoeLink(True), 0.0)
    world = SimulatedTable(RuleSet.preset("s17-6"), [Player(3, "A")], seed=seed)
    world.camera_sees = False
    return loop, world


def written(recording: TableRecording) -> None:
    """Wait until the store has written and exported what it was handed."""
    deadline = time.monotonic() + 10
    while not recording.store.idle and time.monotonic() < deadline:
        time.sleep(0.005)
    assert recording.store.idle


def held_by_another_writer(directory: Path) -> sqlite3.Connection:
    """The store's database held by another writer (a backup, say) until it is rolled back."""
    holder = sqlite3.connect(directory / "index.sqlite", isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    return holder


def files_equal_store(directory: Path) -> list[str]:
    """Every exported file's lines equal the store's records of its round (the contract); the
    round ids checked."""
    checked = []
    store = RecordingStore(directory)
    try:
        for sub in ("rounds", "void"):
            for path in sorted((directory / sub).glob("*.jsonl")):
                data = latest_round(store, path.stem)
                assert data is not None, f"{path}: no such round in the store"
                assert path.read_text().splitlines() == [r.body_text for r in data.events]
                assert (data.settlement is not None) == (sub == "rounds")
                checked.append(path.stem)
    finally:
        store.close()
    return checked


def test_a_second_table_given_the_same_directory_is_refused_until_the_first_stops(
        tmp_path: Path) -> None:
    """Two tables with one table id in one directory overwrote each other's rounds."""
    first = RecordingDirectory(tmp_path)
    with pytest.raises(RecordingError, match=(
            rf"^recording directory {tmp_path} is in use by another table \(pid \d+\): give"
            " each table its own$")):
        RecordingDirectory(tmp_path)
    first.close()
    RecordingDirectory(tmp_path).close()


def test_after_every_round_the_exported_file_equals_the_stores_records(tmp_path: Path) -> None:
    recording = open_recording(tmp_path, "T1")
    loop, world = shoe_table(recording)
    for number in (1, 2, 3):
        play(loop, world, number)
        written(recording)  # the store read beside its writer, after every round
        assert files_equal_store(tmp_path) == [f"T1-x-{n:05d}" for n in range(1, number + 1)]
    steps = iter(world.round(4))
    while not loop.round_open:
        loop.handle(next(steps)[1], 0.0)
    loop.handle(next(steps)[1], 0.0)
    loop.handle(VoidRound("a foreign card"), 0.0)
    recording.close()
    assert files_equal_store(tmp_path) == [f"T1-x-0000{n}" for n in (1, 2, 3, 4)]
    for path, dealt in zip(sorted((tmp_path / "rounds").glob("*.jsonl")), world.settlements,
                           strict=False):
        assert settle_log(path.read_text().splitlines()).seats == dealt.seats
    reason = (tmp_path / "void" / "T1-x-00004.reason.txt").read_text()
    assert reason.startswith("a foreign card (voided by")


def test_the_store_holds_the_round_in_play_event_by_event(tmp_path: Path) -> None:
    """The store used to see a round only once it ended: a crash lost what it had seen."""
    recording = open_recording(tmp_path, "T1")
    loop, world = shoe_table(recording)
    steps = iter(world.round(1))
    while len(loop.round_lines()) < 4:
        loop.handle(next(steps)[1], 0.0)
    written(recording)
    store = RecordingStore(tmp_path)  # read beside the writer, as the surveillance page does
    try:
        data = latest_round(store, loop.round_id or "")
        assert data is not None and data.status == "open"
        assert [r.body_text for r in data.events] == [
            json.dumps(json.loads(line), sort_keys=True, separators=(",", ":"))
            for line in loop.round_lines()]
    finally:
        store.close()
    assert not list((tmp_path / "rounds").glob("*.jsonl"))  # no file before the round ends
    recording.close()


def test_a_round_rewritten_by_a_correction_is_recorded_again_whole(tmp_path: Path) -> None:
    """A correction replays the round with a card changed: the store keeps the copy as first
    recorded (marked partial) and records the corrected round whole; the file is the latter."""
    recording = open_recording(tmp_path, "T1")
    truth = TableLoop("s17-6", recording.recorder, has_camera=False, round_prefix="T1-x")
    truth.dealer = "D1"
    truth.handle(ShoeLink(True), 0.0)
    world = SimulatedTable(RuleSet.preset("s17-6"), [Player(3, "A")], seed=3)
    world.camera_sees = False
    play(truth, world, 1)
    written(recording)
    [(round_id, lines, settlement)] = [
        (truth.round_id, truth.round_lines(), truth.last_settlement)]
    lines = [line.replace(round_id, "T1-x-00009") for line in lines]
    store = recording.store
    store.begin_round("T1-x-00009", lines[0])
    store.round_event("T1-x-00009", lines[1])
    store.rewrite_round("T1-x-00009", lines[:-1])
    store.round_event("T1-x-00009", lines[-1])
    assert settlement is not None
    store.end_round("T1-x-00009", settlement)
    recording.close()
    assert files_equal_store(tmp_path) == [round_id, "T1-x-00009"]
    reader = RecordingStore(tmp_path)
    try:
        keys = reader.round_keys("T1-x-00009")
        assert len(keys) == 2
        rows = {row.round_key: row for row in reader.indexed_rounds()}
        assert rows[keys[0]].status == "partial" and "correction" in (rows[keys[0]].note or "")
        assert rows[keys[1]].status == "settled"
    finally:
        reader.close()
    assert (tmp_path / "rounds" / "T1-x-00009.jsonl").read_text() == (
        tmp_path / "rounds" / f"{round_id}.jsonl").read_text().replace(
            round_id, "T1-x-00009")


def test_an_export_that_fails_is_an_alarm_and_is_redone_at_the_next_start(
        tmp_path: Path) -> None:
    """The rounds folder replaced by a file (as a full or unmounted disk refuses writes): the
    round is settled and shown all the same, in the store, the failure is reported, and the
    table's next start exports it."""
    recording = open_recording(tmp_path, "T1")
    failures: list[str] = []
    recording.store.on_failure = failures.append
    loop, world = shoe_table(recording)
    shutil.rmtree(tmp_path / "rounds")
    (tmp_path / "rounds").write_text("not a folder")
    play(loop, world, 1)
    written(recording)
    assert loop.rounds_played == 1 and loop.last_settlement is not None
    assert len(failures) == 1 and failures[0].startswith(f"recording store {tmp_path}: end: ")
    # the technician is told the store writes it once it can, or a restart does
    assert "writes its file as soon as it writes again" in failures[0]
    assert recording.pending  # the journal keeps the round until its file is written
    recording.close()
    (tmp_path / "rounds").unlink()
    open_recording(tmp_path, "T1").close()  # the next start exports what the store ended
    [path] = (tmp_path / "rounds").glob("*.jsonl")
    assert settle_log(path.read_text().splitlines()).seats == world.settlements[0].seats
    assert files_equal_store(tmp_path) == [path.stem]


def _round_copies(directory: Path, round_id: str) -> list[str]:
    """The statuses of the store's copies of ``round_id``, oldest first."""
    store = RecordingStore(directory)
    try:
        rows = {row.round_key: row for row in store.indexed_rounds()}
        return [rows[key].status for key in store.round_keys(round_id)]
    finally:
        store.close()


def test_a_round_the_store_refused_mid_round_is_recorded_whole_once_it_writes_again(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The store's database held by another writer for two of a round's records (its patience
    cut to 50 ms): the round is written no further, and at its end, the database free again,
    the store continues its copy after what it holds, settles it and writes its file, once,
    as the table settled it; the recording then holds nothing back (once, the store wrote the
    round's later records around the gap, and held the journal back until a restart)."""
    monkeypatch.setattr(RecordingStore, "busy_timeout_s", 0.05)
    recording = open_recording(tmp_path, "T1")
    failures: list[str] = []
    recording.store.on_failure = failures.append
    loop, world = shoe_table(recording)
    items = [item for _, item in world.round(1)]
    for item in items[:4]:
        loop.handle(item, 0.0)
    written(recording)
    holder = held_by_another_writer(tmp_path)
    for item in items[4:6]:
        loop.handle(item, 0.0)
    written(recording)
    assert recording.pending and not recording.store.complete
    holder.rollback()
    holder.close()
    for item in items[6:]:
        loop.handle(item, 0.0)
    written(recording)
    assert loop.rounds_played == 1
    assert not recording.pending and recording.store.kept_rounds == 0
    recording.close()
    [path] = (tmp_path / "rounds").glob("*.jsonl")
    assert settle_log(path.read_text().splitlines()).seats == world.settlements[0].seats
    assert files_equal_store(tmp_path) == [path.stem]
    assert _round_copies(tmp_path, path.stem) == ["settled"]
    assert len(failures) == 1 and "writes its file as soon as it writes again" in failures[0]


def test_a_round_that_ended_while_the_store_refused_is_recorded_before_the_next_begins(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The database held from a round's middle past its end: the round is kept, and the
    recording holds the journal back. Freed, the next round's beginning first records the kept
    one, so the store holds both, in the order played, each settled as the table settled it."""
    monkeypatch.setattr(RecordingStore, "busy_timeout_s", 0.05)
    recording = open_recording(tmp_path, "T1")
    loop, world = shoe_table(recording)
    items = [item for _, item in world.round(1)]
    for item in items[:4]:
        loop.handle(item, 0.0)
    written(recording)
    holder = held_by_another_writer(tmp_path)
    for item in items[4:]:
        loop.handle(item, 0.0)
    written(recording)
    assert loop.rounds_played == 1 and recording.store.kept_rounds == 1 and recording.pending
    assert not list((tmp_path / "rounds").glob("*.jsonl"))
    holder.rollback()
    holder.close()
    play(loop, world, 2)
    written(recording)
    assert loop.rounds_played == 2 and not recording.pending
    recording.close()
    first, second = sorted((tmp_path / "rounds").glob("*.jsonl"))
    for path, settlement in ((first, world.settlements[0]), (second, world.settlements[1])):
        assert settle_log(path.read_text().splitlines()).seats == settlement.seats
    assert files_equal_store(tmp_path) == [first.stem, second.stem]
    store = RecordingStore(tmp_path)
    try:
        assert store.round_keys(first.stem)[-1] < store.round_keys(second.stem)[0]
    finally:
        store.close()
    assert _round_copies(tmp_path, first.stem) == ["settled"]


def _a_settled_round(recording: TableRecording) -> tuple[list[str], Settlement]:
    """The lines and settlement of a round played at a shoe table, given the id T1-x-00009."""
    loop, world = shoe_table(recording)
    play(loop, world, 1)
    written(recording)
    assert loop.round_id is not None and loop.last_settlement is not None
    return ([line.replace(loop.round_id, "T1-x-00009") for line in loop.round_lines()],
            loop.last_settlement)


@pytest.mark.parametrize("ending", ["corrected, then settled", "voided"])
def test_a_round_the_store_refused_is_recorded_as_it_ended_after_a_correction_or_a_void(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, ending: str) -> None:
    """A round's third line refused (the database held), then, the database free, the round
    corrected (its second line changed: the store's copy is no prefix of it) and settled, or
    voided. The store records the corrected round whole, its first copy marked partial; the
    voided one continues its copy and voids it. The file is the round as it ended, once."""
    monkeypatch.setattr(RecordingStore, "busy_timeout_s", 0.05)
    recording = open_recording(tmp_path, "T1")
    lines, settlement = _a_settled_round(recording)
    store = recording.store
    store.begin_round("T1-x-00009", lines[0])
    store.round_event("T1-x-00009", lines[1])
    written(recording)
    holder = held_by_another_writer(tmp_path)
    store.round_event("T1-x-00009", lines[2])
    written(recording)
    holder.rollback()
    holder.close()
    assert not store.complete
    if ending == "voided":
        store.void_round("T1-x-00009", "voided by D2: the shoe was dropped")
        expected = lines[:3]
    else:
        corrected = json.loads(lines[1])
        corrected["amount"] = "15.00"
        expected = [lines[0], json.dumps(corrected), *lines[2:]]
        store.rewrite_round("T1-x-00009", expected[:-1])
        store.round_event("T1-x-00009", expected[-1])
        store.end_round("T1-x-00009", settlement)
    written(recording)
    assert store.complete and store.kept_rounds == 0 and not recording.pending
    recording.close()
    folder = "void" if ending == "voided" else "rounds"
    path = tmp_path / folder / "T1-x-00009.jsonl"
    assert [json.loads(line) for line in path.read_text().splitlines()] == [
        json.loads(line) for line in expected]
    assert "T1-x-00009" in files_equal_store(tmp_path)
    assert _round_copies(tmp_path, "T1-x-00009") == (
        ["partial"] if ending == "voided" else ["partial", "settled"])


def _played(rounds: int) -> list[tuple[str, list[str], Settlement]]:
    """Rounds played at a shoe table into memory: id, lines, settlement."""
    memory = MemoryRecorder()
    loop = TableLoop("s17-6", memory, has_camera=False, round_prefix="T1-x")
    loop.dealer = "D1"
    loop.handle(ShoeLink(True), 0.0)
    world = SimulatedTable(RuleSet.preset("s17-6"), [Player(3, "A")], seed=3)
    world.camera_sees = False
    for number in range(1, rounds + 1):
        play(loop, world, number)
    return memory.rounds


def _store_idle(store: StoreRecorder) -> None:
    deadline = time.monotonic() + 10
    while not store.idle and time.monotonic() < deadline:
        time.sleep(0.005)
    assert store.idle


def _hand(store: StoreRecorder, round_id: str, lines: list[str], *, begin: bool,
          settlement: Settlement | None = None) -> None:
    """Hand ``store`` lines of a round as the session does: the first begins it where
    ``begin``, the rest are its events; then its end, where ``settlement`` is given."""
    if begin:
        store.begin_round(round_id, lines[0])
    for line in lines[1:] if begin else lines:
        store.round_event(round_id, line)
    if settlement is not None:
        store.end_round(round_id, settlement)


def _alarms_fed_back(store: StoreRecorder) -> list[str]:
    """The store's failure reports, each also raised as an alarm handed to the store, as the
    table does (up to 50, so that a report per retry ends)."""
    reports: list[str] = []

    def raise_alarm(detail: str) -> None:
        reports.append(detail)
        if len(reports) < 50:
            store.write_alarm(Alarm(len(reports), AlarmKind.RECORDING_FAILED, detail, None, 0.0))

    store.on_failure = raise_alarm
    return reports


def test_a_round_resumed_at_a_restart_and_refused_is_written_no_further_until_it_ends(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A round a restart reopened (never begun by this store), one of its events refused: its
    later events are not written around the gap, and at its end the store continues its copy,
    whole and once (once, the copy settled without the refused event)."""
    monkeypatch.setattr(RecordingStore, "busy_timeout_s", 0.05)
    [(round_id, lines, settlement)] = _played(1)
    store = StoreRecorder(tmp_path, "T1")
    assert store.reconcile([ReplayedRound(round_id, tuple(lines[:2]))]) == []
    holder = held_by_another_writer(tmp_path)
    store.round_event(round_id, lines[2])
    _store_idle(store)
    holder.rollback()
    holder.close()
    _hand(store, round_id, lines[3:], begin=False, settlement=settlement)
    _store_idle(store)
    assert store.complete
    store.close()
    assert files_equal_store(tmp_path) == [round_id]
    assert (tmp_path / "rounds" / f"{round_id}.jsonl").read_text().splitlines() == [
        json.dumps(json.loads(line), sort_keys=True, separators=(",", ":")) for line in lines]
    assert _round_copies(tmp_path, round_id) == ["settled"]


def test_kept_rounds_are_recorded_as_soon_as_the_store_writes_and_alarms_go_in_none(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Round A's file refused (the rounds folder a file), so A is kept; round B's fourth line
    refused (the database held), so B is written no further, open in the store. Both put
    right before B ends: at B's end the store records B, then A, and an alarm raised at rest
    then is filed under no round (once, both waited for the next round, whose beginning marked
    B's copy partial, and an alarm at rest was filed in B's open copy)."""
    monkeypatch.setattr(RecordingStore, "busy_timeout_s", 0.05)
    (a, a_lines, a_settled), (b, b_lines, b_settled) = _played(2)
    store = StoreRecorder(tmp_path, "T1")
    (tmp_path / "rounds").write_text("not a folder")
    _hand(store, a, a_lines, begin=True, settlement=a_settled)
    _hand(store, b, b_lines[:3], begin=True)
    _store_idle(store)
    assert store.kept_rounds == 1
    holder = held_by_another_writer(tmp_path)
    store.round_event(b, b_lines[3])
    _store_idle(store)
    holder.rollback()
    holder.close()
    (tmp_path / "rounds").unlink()
    _hand(store, b, b_lines[4:], begin=False, settlement=b_settled)
    _store_idle(store)
    assert store.kept_rounds == 0 and store.complete
    reader = RecordingStore(tmp_path)
    try:  # the position a checkpoint keeps is the store's head, past what it recorded again
        assert store.settled_position(0.0) == reader.head()
    finally:
        reader.close()
    store.write_alarm(Alarm(9, AlarmKind.STAFF, "dealer D1 signed out", None, 1.0))
    _store_idle(store)
    store.close()
    assert sorted(files_equal_store(tmp_path)) == [a, b]
    assert _round_copies(tmp_path, a) == _round_copies(tmp_path, b) == ["settled"]
    reader = RecordingStore(tmp_path)
    try:
        [alarm] = [r for r in reader.records(kinds=("alarm",))
                   if r.object_body()["text"] == "dealer D1 signed out"]
        assert alarm.round_key is None
    finally:
        reader.close()


def test_the_round_in_play_at_a_restart_whose_reconcile_was_refused_is_written_no_further(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A table stopped with two lines of its round in the store; at the restart the database
    is held as the reconcile continues the round (the journal replays five lines): the round's
    later lines are not written around the ones it lacks, and at its end the store continues its
    copy whole (once, it settled a copy missing three lines and exported it as the round)."""
    monkeypatch.setattr(RecordingStore, "busy_timeout_s", 0.05)
    [(round_id, lines, settlement)] = _played(1)
    first = StoreRecorder(tmp_path, "T1")
    first.begin_round(round_id, lines[0])
    first.round_event(round_id, lines[1])
    first.close()
    store = StoreRecorder(tmp_path, "T1")
    holder = held_by_another_writer(tmp_path)
    store.reconcile([ReplayedRound(round_id, tuple(lines[:5]))])
    holder.rollback()
    holder.close()
    _hand(store, round_id, lines[5:], begin=False, settlement=settlement)
    _store_idle(store)
    assert not store.complete  # the failed reconcile is made good by a restart
    store.close()
    assert files_equal_store(tmp_path) == [round_id]
    assert [json.loads(line) for line in
            (tmp_path / "rounds" / f"{round_id}.jsonl").read_text().splitlines()] == [
        json.loads(line) for line in lines]


def test_a_round_begun_while_a_kept_round_is_open_in_the_store_waits_behind_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Round A refused from its fourth line past its end (the database held); freed, but its
    question frame cannot be written (a file where the frames folder goes), so recording A
    fails once more with its copy open in the store as round B begins. B waits behind A (once,
    B's beginning marked A's copy partial, and A was continued on it after B): at B's end A is
    settled in its one copy, then B; the lost frame is reported."""
    monkeypatch.setattr(RecordingStore, "busy_timeout_s", 0.05)
    (a, a_lines, a_settled), (b, b_lines, b_settled) = _played(2)
    store = StoreRecorder(tmp_path, "T1")
    failures: list[str] = []
    store.on_failure = failures.append
    _hand(store, a, a_lines[:3], begin=True)
    frame = np.zeros((8, 8, 3), np.uint8)
    store.keep_question_frame(a, "insurance?", Snapshot(
        frame, time.monotonic(), lambda f: cv2.imencode(".jpg", f)[1].tobytes()))
    _store_idle(store)
    holder = held_by_another_writer(tmp_path)
    _hand(store, a, a_lines[3:], begin=False, settlement=a_settled)
    _store_idle(store)
    holder.rollback()
    holder.close()
    (tmp_path / "frames").write_text("not a folder")
    _hand(store, b, b_lines, begin=True, settlement=b_settled)
    _store_idle(store)
    assert store.complete
    store.close()
    assert sorted(files_equal_store(tmp_path)) == [a, b]
    assert _round_copies(tmp_path, a) == _round_copies(tmp_path, b) == ["settled"]
    reader = RecordingStore(tmp_path)
    try:
        assert reader.round_keys(a)[-1] < reader.round_keys(b)[-1]
    finally:
        reader.close()
    assert any(f"round {a}, kept" in failure for failure in failures)


def test_a_round_file_that_can_never_be_written_raises_one_alarm_not_one_per_retry(
        tmp_path: Path) -> None:
    """A folder where the round's file goes, the database fine: the round is kept and tried
    again after each record the store writes, the "recording failed" alarm among them, as the
    table raises it (once, each retry reported anew, whose alarm's record set off the next
    retry: alarms without end). One report; the round stays kept, the recording incomplete."""
    [(round_id, lines, settlement)] = _played(1)
    (tmp_path / "rounds" / f"{round_id}.jsonl").mkdir(parents=True)
    store = StoreRecorder(tmp_path, "T1")
    reports = _alarms_fed_back(store)
    _hand(store, round_id, lines, begin=True, settlement=settlement)
    _store_idle(store)
    time.sleep(0.2)  # an alarm handed over by the report
    _store_idle(store)
    assert len(reports) == 1 and store.kept_rounds == 1 and not store.complete
    store.close()


def test_a_kept_round_whose_retry_writes_then_fails_alike_raises_no_alarm_per_retry(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A round whose settlement the store refuses every time (a test double: the recorder's
    ``end_round`` raising for that round, a persistent failure after the retry has written the
    settlement screen), with the table's feedback (each report an alarm handed to the store,
    which sets off a retry): one report, not one per retry (once, a report per retry, without
    end)."""
    [(round_id, lines, settlement)] = _played(1)
    real = Recorder.end_round

    def end_round(recorder: Recorder, ended: Any) -> Any:
        if recorder.round_id == round_id:
            raise ValueError("settlement refused")
        return real(recorder, ended)

    monkeypatch.setattr(Recorder, "end_round", end_round)
    store = StoreRecorder(tmp_path, "T1")
    reports = _alarms_fed_back(store)
    _hand(store, round_id, lines, begin=True, settlement=settlement)
    for _ in range(3):  # alarms handed over by the reports, and what they set off
        time.sleep(0.2)
        _store_idle(store)
    assert len(reports) <= 2 and store.kept_rounds == 1 and not store.complete
    store.close()


@pytest.mark.parametrize("ending", ["settled", "voided"])
def test_a_round_whose_closing_failed_halfway_is_closed_once_without_repeating_a_record(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, ending: str) -> None:
    """A settled round's settlement screen written and its settlement refused, or a voided
    round's void alarm written and its closing record refused (a test double: the recorder's
    ``end_round`` raising, or ``void_round`` raising after its alarm, once, for that round: a
    real lock cannot fall between two records), then the next round begins: the first is
    closed in its one copy with one settlement screen, or one void alarm (once, the retry
    wrote each again)."""
    (a, a_lines, a_settled), (b, b_lines, b_settled) = _played(2)
    refused: list[str] = []
    real_end, real_void = Recorder.end_round, Recorder.void_round

    def end_round(recorder: Recorder, ended: Any) -> Any:
        if recorder.round_id == a and not refused:
            refused.append(a)
            raise ValueError("settlement refused")
        return real_end(recorder, ended)

    def void_round(recorder: Recorder, reason: str, **how: bool) -> Any:
        if recorder.round_id == a and not refused:
            refused.append(a)
            recorder.alarm("void", reason)
            raise ValueError("partial record refused")
        return real_void(recorder, reason, **how)

    monkeypatch.setattr(Recorder, "end_round", end_round)
    monkeypatch.setattr(Recorder, "void_round", void_round)
    store = StoreRecorder(tmp_path, "T1")
    if ending == "settled":
        _hand(store, a, a_lines, begin=True, settlement=a_settled)
    else:
        _hand(store, a, a_lines, begin=True)
        store.void_round(a, "voided by D2: the shoe was dropped")
    _store_idle(store)
    assert refused == [a] and store.kept_rounds == 1
    _hand(store, b, b_lines, begin=True, settlement=b_settled)
    _store_idle(store)
    assert store.complete
    store.close()
    assert _round_copies(tmp_path, a) == (["settled"] if ending == "settled" else ["partial"])
    reader = RecordingStore(tmp_path)
    try:
        data = latest_round(reader, a)
        assert data is not None
        screens = [json.loads(r.body_text)["snapshot"]["at"] for r in data.screens]
        voids = [r for r in data.alarms if json.loads(r.body_text)["kind"] == "void"]
    finally:
        reader.close()
    assert screens.count("settlement") == (1 if ending == "settled" else 0)
    assert len(voids) == (1 if ending == "voided" else 0)


def test_a_round_file_refused_is_written_once_the_folder_is_back_and_the_store_writes(
        tmp_path: Path) -> None:
    """The rounds folder replaced by a file as a round ends: the store holds the round but
    cannot write its file. Once the folder can be written, the next round's beginning writes
    it, and the recording holds nothing back; no second copy of the round is made."""
    recording = open_recording(tmp_path, "T1")
    loop, world = shoe_table(recording)
    shutil.rmtree(tmp_path / "rounds")
    (tmp_path / "rounds").write_text("not a folder")
    play(loop, world, 1)
    written(recording)
    assert recording.pending
    (tmp_path / "rounds").unlink()
    play(loop, world, 2)
    written(recording)
    assert not recording.pending
    recording.close()
    assert len(files_equal_store(tmp_path)) == 2
    assert [_round_copies(tmp_path, path.stem)
            for path in sorted((tmp_path / "rounds").glob("*.jsonl"))] == [["settled"]] * 2


def test_each_alarm_line_carries_the_wall_clock_time_it_was_written(tmp_path: Path) -> None:
    """The alarm's ``at`` is the table's monotonic clock; surveillance matches alarms to video
    and shifts by the UTC time the line was written."""
    at = datetime(2026, 12, 1, 21, 30, 5, 250000, tzinfo=UTC)
    recorder = RecordingDirectory(tmp_path, clock=lambda: at)
    recorder.write_alarm(Alarm(1, AlarmKind.CAMERA_LOST, "no frame for 2 s", "r-00001", 5.5))
    line = json.loads((tmp_path / "alarms.jsonl").read_text())
    assert line["recorded_at"] == "2026-12-01T21:30:05.250+00:00"
    assert (line["kind"], line["at"], line["round"]) == ("camera_lost", 5.5, "r-00001")
    recorder.close()


def test_a_removed_rounds_folder_is_made_again(tmp_path: Path) -> None:
    recording = open_recording(tmp_path, "T1")
    loop, world = shoe_table(recording)
    shutil.rmtree(tmp_path / "rounds")
    play(loop, world, 1)
    recording.close()
    assert len(list((tmp_path / "rounds").glob("*.jsonl"))) == 1
    assert not [a for a in loop.alarms if a.kind is AlarmKind.RECORDING_FAILED]


def test_a_damaged_store_stops_the_table_at_start_and_is_left_as_found(tmp_path: Path) -> None:
    """A store with a damaged page (a real recording, one page overwritten): a table cannot run
    without its store, so it is refused at start, naming the database, and left as found."""
    build_recording(tmp_path, golden_logs()[:3])
    damage_page(tmp_path, "records", leaf=1)
    before = (tmp_path / "index.sqlite").read_bytes()
    with pytest.raises(StoreOpenError, match=(
            rf"^recording store {tmp_path}: damaged: {tmp_path}/index.sqlite: .*"
            r"'dealer-assist replay --verify'")):
        open_recording(tmp_path, "T1")
    assert (tmp_path / "index.sqlite").read_bytes() == before
    RecordingDirectory(tmp_path).close()  # nothing left held


def test_a_restart_after_a_correction_the_store_had_not_heard_of_raises_no_alarm(
        tmp_path: Path) -> None:
    """Killed just after a correction, before the store's thread wrote it: the store holds the
    round as first recorded, the journal replays it corrected. That is the correction's earlier
    copy, not a disagreement: recorded again whole, no alarm. A copy matching no version of the
    round is one, naming the record."""
    recording = open_recording(tmp_path, "T1")
    loop, world = shoe_table(recording)
    play(loop, world, 1)
    written(recording)
    dealt = [line.replace("T1-x-00001", "T1-x-00002") for line in loop.round_lines()]
    settlement = loop.last_settlement
    card = next(i for i, line in enumerate(dealt) if json.loads(line)["type"] == "card")
    corrected = list(dealt)  # the card as the dealer corrected it (its code kept: a test)
    corrected[card] = json.dumps({**json.loads(dealt[card]), "corrected": "2D"})
    store = recording.store
    store.begin_round("T1-x-00002", dealt[0])
    for line in dealt[1:card + 2]:  # as first recorded, up to just past the corrected card
        store.round_event("T1-x-00002", line)
    recording.close()  # killed: the store never heard of the correction

    again = open_recording(tmp_path, "T1")
    assert again.store.reconcile([ReplayedRound(
        "T1-x-00002", tuple(corrected), settlement=settlement, earlier=(tuple(dealt),))]) == []
    unheard = ReplayedRound("T1-x-00003", tuple(line.replace("-00002", "-00003")
                                                for line in corrected), settlement=settlement)
    again.store.begin_round("T1-x-00003", dealt[0].replace("-00002", "-00003"))
    again.store.round_event("T1-x-00003", dealt[card])  # a record the journal does not have
    again.close()
    third = open_recording(tmp_path, "T1")
    [problem] = third.store.reconcile([unheard])
    assert problem.startswith("round T1-x-00003: the recording store's record 1 of it differs")
    third.close()
    assert files_equal_store(tmp_path) == ["T1-x-00001", "T1-x-00002", "T1-x-00003"]
    assert [json.loads(line) for line in
            (tmp_path / "rounds" / "T1-x-00002.jsonl").read_text().splitlines()] == [
        json.loads(line) for line in corrected]
