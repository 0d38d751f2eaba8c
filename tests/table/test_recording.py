"""The round-log files under a table's recording directory: never overwritten, one table at a
time, and a write that fails is an alarm while play goes on, with the round kept until it can
be written. Real files in a temporary directory, played through the real loop."""

from __future__ import annotations

import json
import shutil
from datetime import UTC, datetime
from pathlib import Path

import pytest

from dealer_assist.roundlog import settle_log
from dealer_assist.rules import RuleSet
from dealer_assist.table.alarms import Alarm, AlarmKind
from dealer_assist.table.loop import TableLoop
from dealer_assist.table.recording import (
    FileRecorder,
    RecordingError,
    SurveillanceRecorder,
    TeeRecorder,
)
from dealer_assist.table.simulation.world import Player, SimulatedTable
from dealer_assist.table.sources import RecordingFailed, ShoeLink, VoidRound
from tests.surveillance.damage import damage_page
from tests.surveillance.factory import build_recording, golden_logs


def play(loop: TableLoop, world: SimulatedTable, number: int) -> None:
    for _, item in world.round(number):
        loop.handle(item, 0.0)


def shoe_table(recorder: FileRecorder, seed: int = 3) -> tuple[TableLoop, SimulatedTable]:
    loop = TableLoop("s17-6", recorder, has_camera=False)
    loop.dealer = "D1"  # signed in (signing in: test_sign_in.py)
    loop.handle(ShoeLink(True), 0.0)
    world = SimulatedTable(RuleSet.preset("s17-6"), [Player(3, "A")], seed=seed)
    world.camera_sees = False
    return loop, world


def test_a_second_table_given_the_same_directory_is_refused_until_the_first_stops(
        tmp_path: Path) -> None:
    """Two tables with one table id in one directory overwrote each other's rounds."""
    first = FileRecorder(tmp_path)
    with pytest.raises(RecordingError, match=(
            rf"^recording directory {tmp_path} is in use by another table \(pid \d+\): give"
            " each table its own$")):
        FileRecorder(tmp_path)
    first.close()
    FileRecorder(tmp_path).close()


def test_a_round_file_already_there_is_kept_and_the_round_written_beside_it(
        tmp_path: Path) -> None:
    """A table restarted within the second its round ids are numbered from numbers them again."""
    first = FileRecorder(tmp_path)
    loop, world = shoe_table(first)
    play(loop, world, 1)
    [path] = (tmp_path / "rounds").iterdir()
    kept = path.read_text()
    first.close()
    second = FileRecorder(tmp_path)
    loop, world = shoe_table(second, seed=4)
    play(loop, world, 1)
    assert path.read_text() == kept
    again = path.with_name(f"{path.stem}~2.jsonl")
    assert sorted((tmp_path / "rounds").iterdir()) == [path, again]
    assert again.read_text() != kept
    assert settle_log(again.read_text().splitlines()).seats == world.settlements[-1].seats


def test_a_write_that_fails_is_an_alarm_and_the_round_reaches_disk_once_it_can(
        tmp_path: Path) -> None:
    """The rounds folder replaced by a file (as a full or unmounted disk refuses writes): the
    round is settled and shown all the same, the dealer sees why it was not written, and the
    next write that works writes it first."""
    recorder = FileRecorder(tmp_path)
    loop, world = shoe_table(recorder)
    shutil.rmtree(tmp_path / "rounds")
    (tmp_path / "rounds").write_text("not a folder")
    play(loop, world, 1)
    assert loop.rounds_played == 1 and loop.last_settlement is not None
    [alarm] = [a for a in loop.alarms if a.kind is AlarmKind.RECORDING_FAILED]
    assert alarm.text.startswith(f"round-log file {tmp_path / 'rounds'}/")
    assert alarm.text.endswith("(1 write(s) kept to try again): call the technician")
    (tmp_path / "rounds").unlink()
    play(loop, world, 2)
    files = sorted((tmp_path / "rounds").glob("*.jsonl"))
    assert [settle_log(f.read_text().splitlines()).seats for f in files] == [
        s.seats for s in world.settlements]


def test_each_alarm_line_carries_the_wall_clock_time_it_was_written(tmp_path: Path) -> None:
    """The alarm's ``at`` is the table's monotonic clock; surveillance matches alarms to video
    and shifts by the UTC time the line was written."""
    written = datetime(2026, 12, 1, 21, 30, 5, 250000, tzinfo=UTC)
    recorder = FileRecorder(tmp_path, clock=lambda: written)
    recorder.write_alarm(Alarm(1, AlarmKind.CAMERA_LOST, "no frame for 2 s", "r-00001", 5.5))
    line = json.loads((tmp_path / "alarms.jsonl").read_text())
    assert line["recorded_at"] == "2026-12-01T21:30:05.250+00:00"
    assert (line["kind"], line["at"], line["round"]) == ("camera_lost", 5.5, "r-00001")
    recorder.close()


def test_a_removed_rounds_folder_is_made_again(tmp_path: Path) -> None:
    recorder = FileRecorder(tmp_path)
    loop, world = shoe_table(recorder)
    shutil.rmtree(tmp_path / "rounds")
    play(loop, world, 1)
    assert len(list((tmp_path / "rounds").glob("*.jsonl"))) == 1
    assert not [a for a in loop.alarms if a.kind is AlarmKind.RECORDING_FAILED]


def test_a_void_that_cannot_be_written_still_ends_the_round(tmp_path: Path) -> None:
    """The round used to stay in play after a failed void write, to be recorded twice."""
    recorder = FileRecorder(tmp_path)
    loop, world = shoe_table(recorder)
    steps = iter(world.round(1))
    while not loop.round_open:
        loop.handle(next(steps)[1], 0.0)
    shutil.rmtree(tmp_path / "void")
    (tmp_path / "void").write_text("not a folder")
    loop.handle(VoidRound("a foreign card"), 0.0)
    assert not loop.round_open
    kinds = [a.kind for a in loop.alarms]
    assert kinds == [AlarmKind.RECORDING_FAILED, AlarmKind.ROUND_VOIDED]


def test_a_damaged_surveillance_store_is_one_alarm_and_every_round_still_reaches_the_files(
        tmp_path: Path) -> None:
    """A surveillance store with a damaged page (a real recording, one page overwritten) stopped
    the table at start with SQLite's "database disk image is malformed", naming no file, or was
    appended to without a word. Now the table plays on its round-log files with one alarm that
    names the database, and the store is left as found."""
    store_dir = tmp_path / "surveillance"
    build_recording(store_dir, golden_logs()[:3])
    damage_page(store_dir, "records", leaf=1)
    before = (store_dir / "index.sqlite").read_bytes()
    store = SurveillanceRecorder(store_dir, "T1")
    loop = TableLoop("s17-6", TeeRecorder(FileRecorder(tmp_path / "files"), store),
                     has_camera=False)
    loop.dealer = "D1"  # signed in (signing in: test_sign_in.py)
    store.on_failure = lambda detail: loop.handle(RecordingFailed(detail), 0.0)  # as cli.py
    loop.handle(ShoeLink(True), 0.0)
    world = SimulatedTable(RuleSet.preset("s17-6"), [Player(3, "A")], seed=3)
    world.camera_sees = False
    play(loop, world, 1)
    play(loop, world, 2)
    store.close()
    [alarm] = [a for a in loop.alarms if a.kind is AlarmKind.RECORDING_FAILED]
    assert alarm.text.startswith(f"surveillance store damaged: {store_dir}/index.sqlite: the"
                                 " index database is damaged (")
    assert alarm.text.endswith("so nothing is written to it: run 'dealer-assist replay --verify'"
                               " on it (the round-log files still record every round): call the"
                               " technician")
    assert len(list((tmp_path / "files" / "rounds").glob("*.jsonl"))) == 2
    assert store.errors[-1] == "round: not written: the store is damaged"
    assert (store_dir / "index.sqlite").read_bytes() == before
