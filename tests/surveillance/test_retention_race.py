"""Pruning and marking a frame at once, on two connections of one real SQLite store in two
threads: the marks are read in the prune record's own write transaction, so a frame marked
before that record is kept, and a frame listed in it can no longer be marked."""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from dealer_assist.surveillance import RecordingStore
from dealer_assist.surveillance.interface import IndexedFrame
from dealer_assist.surveillance.query import mark_key_frame, prune_frames
from dealer_assist.surveillance.replay import replay
from dealer_assist.surveillance.store import RecordingError

CUTOFF = datetime(2026, 11, 29, 9, 30, tzinfo=UTC)


def old_video(recording: Path) -> list[int]:
    store = RecordingStore(recording)
    try:
        return [row.seq for row in store.video_frames_before("2026-11-29T09:30:00.000Z")]
    finally:
        store.close()


def frame_file(recording: Path, seq: int) -> Path:
    store = RecordingStore(recording)
    try:
        frame = store.frame(seq)
        assert frame is not None
        return recording / frame.file
    finally:
        store.close()


class PausingStore(RecordingStore):
    """A store whose ``call``-th reading of the old video frames runs ``between`` after it."""

    def __init__(self, directory: Path, call: int, between: threading.Thread):
        super().__init__(directory)
        self.call, self.between, self.calls = call, between, 0

    def video_frames_before(self, cutoff: str) -> list[IndexedFrame]:
        rows = super().video_frames_before(cutoff)
        self.calls += 1
        if self.calls == self.call:
            self.between.start()
            self.between.join()
        return rows


def test_a_frame_marked_after_prune_read_its_rows_is_kept(recording: Path) -> None:
    video = old_video(recording)
    target = video[len(video) // 2]
    errors: list[BaseException] = []

    def mark() -> None:  # the box's page, on its own connection
        other = RecordingStore(recording)
        try:
            mark_key_frame(other, target, "olga")
        except BaseException as error:  # handed to the test
            errors.append(error)
        finally:
            other.close()

    store = PausingStore(recording, 1, threading.Thread(target=mark))
    result = prune_frames(store, timedelta(hours=1), "piet", now=CUTOFF + timedelta(hours=1))
    assert errors == []
    assert store.calls == 2  # the rows, then again in the prune record's transaction
    prune = list(store.records(kinds=("prune",)))
    assert len(prune) == 1 and target not in prune[0].body["frames"]
    assert result["pruned"] == len(video) - 1 and target not in result["refused"]
    assert frame_file(recording, target).is_file()
    assert not any(frame_file(recording, seq).exists() for seq in video if seq != target)
    assert replay(store, verify=True).discrepancies == []
    store.close()


class ReadThenWait(RecordingStore):
    """A store whose first frame lookup (the mark's check before its transaction) tells
    ``looked`` and then waits for ``go``."""

    def __init__(self, directory: Path, looked: threading.Event, go: threading.Event):
        super().__init__(directory)
        self.looked, self.go, self.lookups = looked, go, 0

    def frame(self, seq: int) -> IndexedFrame | None:
        found = super().frame(seq)
        self.lookups += 1
        if self.lookups == 1:
            self.looked.set()
            self.go.wait()
        return found


def test_a_mark_checked_before_a_prune_and_written_after_it_is_refused(
        recording: Path) -> None:
    video = old_video(recording)
    target = video[0]
    looked, go = threading.Event(), threading.Event()
    errors: list[BaseException] = []

    def mark() -> None:
        other = ReadThenWait(recording, looked, go)
        try:
            mark_key_frame(other, target, "olga")
        except BaseException as error:
            errors.append(error)
        finally:
            other.close()

    marker = threading.Thread(target=mark)
    marker.start()
    assert looked.wait(60)  # the mark saw the frame unpruned, before the prune began
    store = RecordingStore(recording)
    result = prune_frames(store, timedelta(hours=1), "piet", now=CUTOFF + timedelta(hours=1))
    go.set()
    marker.join()
    assert result["pruned"] == len(video)
    assert not frame_file(recording, target).exists()
    assert len(errors) == 1 and isinstance(errors[0], RecordingError)
    assert "already pruned" in str(errors[0])
    assert [r.body["frame"] for r in store.records(kinds=("keyframe",))] == []
    assert replay(store, verify=True).discrepancies == []
    store.close()


def test_a_mark_on_a_pruned_frame_is_refused(recording: Path) -> None:
    store = RecordingStore(recording)
    target = old_video(recording)[0]
    prune_frames(store, timedelta(hours=1), "piet", now=CUTOFF + timedelta(hours=1))
    with pytest.raises(RecordingError, match="already pruned"):
        mark_key_frame(store, target, "olga")
    store.close()
