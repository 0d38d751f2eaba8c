"""One frame at a time, a call shares its frame's card regions and the indices to read among
threads (``CardDetector(split=True)``): the cards found must be those of one inference after
another, and the work must really run on more than one thread."""

from __future__ import annotations

import threading

import cv2
import numpy as np
import pytest

from dealer_assist.vision import runtime
from dealer_assist.vision.artwork import HELD_OUT_DESIGNS, installed_designs, load_designs
from dealer_assist.vision.detector import SPLITS, CardDetector, card_regions
from dealer_assist.vision.model_control import MODELS_DIR
from dealer_assist.vision.scenes import SceneConfig, render_scene
from tests.vision.test_runtime import DATA, SAMPLES, same_cards


class ThreadRecordingSession:
    """A runtime session that notes which thread runs each call, then runs it."""

    def __init__(self, session: object) -> None:
        self.session = session
        self.threads: set[str] = set()
        self.calls = 0
        self._lock = threading.Lock()

    def run(self, blob: np.ndarray) -> list[np.ndarray]:
        with self._lock:
            self.threads.add(threading.current_thread().name)
            self.calls += 1
        return self.session.run(blob)  # type: ignore[attr-defined,no-any-return]

    def __getattr__(self, name: str) -> object:
        return getattr(self.session, name)


@pytest.fixture(scope="module")
def frames() -> list[np.ndarray]:
    """The committed samples and 8 rendered held-out tables at 1280x720, cards 70-95 px."""
    samples = [cv2.imread(str(DATA / name)) for name in SAMPLES]
    if not set(HELD_OUT_DESIGNS) <= set(installed_designs()):
        pytest.skip("held-out card artwork not installed; scripts/install-card-art.sh")
    rng = np.random.default_rng(11)
    designs = load_designs(list(HELD_OUT_DESIGNS))
    config = SceneConfig(size=(1280, 720), card_width=(70.0, 95.0))
    return samples + [render_scene(rng, designs, config).image for _ in range(8)]


def test_a_split_call_finds_the_cards_of_one_inference_after_another(frames) -> None:
    split = CardDetector(threads=2, split=True)
    serial = CardDetector(threads=2, split=False)
    assert split.split and not serial.split
    for frame in frames:
        assert same_cards(split.detect(frame), serial.detect(frame), pixels=0.01,
                          confidence=1e-4)
        boxes, scores = split.find_scored(frame, presence=0.04)
        serial_boxes, serial_scores = serial.find_scored(frame, presence=0.04)
        np.testing.assert_allclose(boxes, serial_boxes, atol=0.01)
        np.testing.assert_allclose(scores, serial_scores, atol=1e-4)


def test_a_split_reading_keeps_each_index_in_its_place(frames) -> None:
    """The indices are read in parts on different threads; each row of the probabilities is
    still its own box's, the boxes given in any order."""
    split = CardDetector(threads=2, split=True)
    serial = CardDetector(threads=1)
    frame = frames[-1]
    boxes = serial.find_indices(frame)
    assert len(boxes) >= 10
    backwards = boxes[::-1].copy()
    for given in (boxes, backwards):
        ranks, suits = split.read_probabilities(frame, given)
        serial_ranks, serial_suits = serial.read_probabilities(frame, given)
        np.testing.assert_allclose(ranks, serial_ranks, atol=1e-5)
        np.testing.assert_allclose(suits, serial_suits, atol=1e-5)
    one_box = split.read_probabilities(frame, boxes[:1])
    np.testing.assert_allclose(one_box[0], serial.read_probabilities(frame, boxes[:1])[0],
                               atol=1e-5)


def test_a_split_call_runs_its_regions_and_readings_on_two_threads(frames) -> None:
    detector = CardDetector(threads=2, split=True)
    finder = ThreadRecordingSession(detector._session)
    reader = ThreadRecordingSession(detector._reader)
    detector._session, detector._reader = finder, reader  # type: ignore[assignment]
    frame = next(f for f in frames if len(card_regions(f)) >= 4)
    calls = 0
    # one pool thread may take both parts of a call where the other is slow to wake: over up to
    # 20 calls, both threads must have run regions and readings
    while calls < 20 and (len(finder.threads) < 2 or len(reader.threads) < 2):
        detector.detect(frame)
        calls += 1
    assert finder.calls == calls * len(card_regions(frame))
    assert len(finder.threads) == 2
    assert len(reader.threads) == 2
    assert threading.current_thread().name not in finder.threads | reader.threads


def test_the_camera_threads_and_the_runtimes_choose_whether_a_call_splits() -> None:
    """One thread a call (the camera's workers) never splits; with more, ONNX Runtime splits
    and OpenVINO does not unless told (:data:`SPLITS`, measured in ``bench/split.py``)."""
    assert SPLITS == {runtime.ONNXRUNTIME: True, runtime.OPENVINO: False}
    assert not CardDetector(threads=1).split
    assert not CardDetector(threads=1, split=True).split
    assert CardDetector(threads=2).split
    assert CardDetector(threads=2).threads == 2
    files = runtime.model_files(runtime.OPENVINO, MODELS_DIR)
    assert not CardDetector(*files, runtime=runtime.OPENVINO, threads=2).split
    assert CardDetector(*files, runtime=runtime.OPENVINO, threads=2, split=True).split
    with pytest.raises(ValueError, match="threads must be 1 or more, got 0"):
        CardDetector(threads=0)


class FailingOnceSession:
    """A runtime session whose first call fails, as a runtime error would; later calls run."""

    def __init__(self, session: object) -> None:
        self.session = session
        self.failed = False
        self._lock = threading.Lock()

    def run(self, blob: np.ndarray) -> list[np.ndarray]:
        with self._lock:
            fail, self.failed = not self.failed, True
        if fail:
            raise RuntimeError("inference failed")
        return self.session.run(blob)  # type: ignore[attr-defined,no-any-return]

    def __getattr__(self, name: str) -> object:
        return getattr(self.session, name)


def test_a_failing_inference_on_a_pool_thread_reaches_the_caller_and_the_next_call_works(
        frames) -> None:
    detector = CardDetector(threads=2, split=True)
    serial = CardDetector(threads=1)
    detector._session = FailingOnceSession(detector._session)  # type: ignore[assignment]
    frame = next(f for f in frames if len(card_regions(f)) >= 4)
    with pytest.raises(RuntimeError, match="inference failed"):
        detector.detect(frame)
    assert same_cards(detector.detect(frame), serial.detect(frame), pixels=0.01,
                      confidence=1e-4)
