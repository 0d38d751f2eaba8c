"""Each question the table asks is recorded with the camera's view of the felt when it was asked:
a real camera thread (its frames a drawn image: no camera exists here), the real loop, and the
real surveillance store in a temporary recording directory."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import cv2
import numpy as np

from dealer_assist.surveillance.replay import verify_chain
from dealer_assist.surveillance.store import RecordingStore
from dealer_assist.table.camera_source import CameraSource, CameraStages, jpeg
from dealer_assist.table.felt import FeltTracker
from dealer_assist.table.question_frames import QuestionFrames
from dealer_assist.table.recording import StoreRecorder
from dealer_assist.table.sources import HoleCardShown
from tests.table.test_no_guess import C, Table


def _felt_image() -> np.ndarray:
    """A 640x360 frame: green felt with one white card, so its picture can be told apart."""
    image = np.zeros((360, 640, 3), np.uint8)
    image[:] = (40, 110, 30)
    cv2.rectangle(image, (300, 150), (360, 234), (250, 250, 250), -1)
    return image


def _camera() -> CameraSource:
    """A camera thread whose detector sees nothing (every card it should see is missed)."""
    stages = CameraStages(grab=_felt_image, detect=lambda frame: [],
                          track=lambda number, observations: [],
                          to_table=lambda x, y: (x, y), picture=jpeg)
    return CameraSource(stages, FeltTracker(lambda x, y: None), max_fps=20)


def _started(camera: CameraSource) -> CameraSource:
    camera.start(lambda item: None)
    deadline = time.monotonic() + 10
    while camera.snapshot() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    assert camera.snapshot() is not None, "the camera grabbed no frame"
    return camera


class WatchedTable(Table):
    """The no-guess test table, its views shown to a listener as the runner shows them."""

    def __init__(self, listener: QuestionFrames):
        self.listener = listener
        super().__init__()

    def send(self, *items: object) -> None:
        for item in items:
            super().send(item)
            self.listener(self.loop.view())

    def wait(self, seconds: float) -> None:
        super().wait(seconds)
        self.listener(self.loop.view())


class Both:
    """Hands each recorder call to both recorders (the test's memory, and the store)."""

    def __init__(self, *recorders: object):
        self.recorders = recorders

    def __getattr__(self, name: str):
        def call(*args: object) -> None:
            for recorder in self.recorders:
                getattr(recorder, name)(*args)
        return call


@contextmanager
def recorded_table(directory: Path) -> Iterator[WatchedTable]:
    """A table recording into the store in ``directory``, its questions' frames from a running
    camera; seat 2 holds 5H 6D against the dealer's 9S. The store is closed on leaving."""
    camera = _started(_camera())
    store = StoreRecorder(directory, "T1")
    try:
        table = WatchedTable(QuestionFrames(camera, store.keep_question_frame))
        table.loop.recorder = Both(table.recorder, store)
        table.deal({2: ("5H", "6D")}, up="9S", hole="7C")
        yield table
    finally:
        camera.stop()
        store.close()
    assert store.errors == []


def test_a_question_is_recorded_with_the_cameras_frame_tied_to_its_event(tmp_path):
    with recorded_table(tmp_path) as table:
        table.unseen("JH")  # the double's card the camera missed: asked
        table.answer("DOUBLE seat 2")
        table.send(HoleCardShown(C("7C")))
        table.card("2S", None)
        assert table.settled_json()["seats"][0]["net"] == "20.00"

    recording = RecordingStore(tmp_path)
    try:
        events = [r for r in recording.records(kinds=("round", "event"))]
        frames = list(recording.records(kinds=("frame",)))
        assert len(frames) == 1
        frame = frames[0]
        question_at = next(i for i, r in enumerate(events) if r.body.get("type") == "question")
        assert frame.body["event_index"] == question_at
        assert frame.body["key"] is True
        assert frame.body["detections"] == {"question": "Where did JH go?"}
        picture = cv2.imdecode(np.frombuffer((tmp_path / frame.file).read_bytes(), np.uint8),
                               cv2.IMREAD_COLOR)
        assert picture.shape == (360, 640, 3)
        assert picture[190, 330].min() > 200 and picture[20, 20, 1] > picture[20, 20, 0]
        discrepancies, _ = verify_chain(recording)
        assert discrepancies == []
    finally:
        recording.close()


def test_a_round_the_camera_saw_whole_records_no_frame(tmp_path):
    with recorded_table(tmp_path) as table:
        table.card("JH", 2, sideways=True)  # seen landing sideways: a double, nothing to ask
        table.send(HoleCardShown(C("7C")))
        table.card("2S", None)
        assert table.settled_json()["seats"][0]["net"] == "20.00"
    recording = RecordingStore(tmp_path)
    try:
        assert list(recording.records(kinds=("settlement",)))
        assert list(recording.records(kinds=("frame",))) == []
    finally:
        recording.close()


def test_a_camera_without_a_picture_stage_gives_no_snapshot():
    stages = CameraStages(grab=_felt_image, detect=lambda frame: [],
                          track=lambda number, observations: [], to_table=lambda x, y: (x, y))
    camera = CameraSource(stages, FeltTracker(lambda x, y: None), max_fps=20)
    camera.start(lambda item: None)
    try:
        deadline = time.monotonic() + 30
        while camera.frames_processed < 3 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert camera.frames_processed >= 3  # frames were read, and none kept a picture
        assert camera.snapshot() is None
    finally:
        camera.stop()
