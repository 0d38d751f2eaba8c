"""ONNX Runtime and OpenVINO read the committed sample frames alike, and the table's start-up
picks one of them, saying which and why."""

from __future__ import annotations

import json
import logging
import math
import os
import threading
import time
from pathlib import Path

import cv2
import pytest

from dealer_assist.vision import model_control, runtime
from dealer_assist.vision.detector import MODELS_DIR, CardDetector, CardObservation
from dealer_assist.vision.startup import start_detector, warmup_frames

DATA = Path(__file__).resolve().parents[1] / "data" / "vision"
SAMPLES = sorted(json.loads((DATA / "answers.json").read_text()))


def shipped_pins(role: str) -> tuple[str, ...]:
    stem = "cards" if role == "detector" else "index-reader"
    return tuple(entry["sha256"] for name, entry in model_control.shipped().items()
                 if name.startswith(stem + "."))


def same_cards(a: list[CardObservation], b: list[CardObservation], *, pixels: float,
               confidence: float) -> bool:
    """The same codes, each at the same place within ``pixels`` and as sure within
    ``confidence``."""
    if sorted(c.card for c in a) != sorted(c.card for c in b):
        return False
    for seen in a:
        if not any(other.card == seen.card and math.dist((seen.x, seen.y), (other.x, other.y))
                   <= pixels and abs(seen.confidence - other.confidence) <= confidence
                   and other.sideways == seen.sideways for other in b):
            return False
    return True


@pytest.fixture(scope="module")
def frames() -> dict[str, object]:
    return {name: cv2.imread(str(DATA / name)) for name in SAMPLES}


def test_both_runtimes_are_installed() -> None:
    """The table extra installs both; a table that lacks one would silently run slower."""
    assert runtime.available() == [runtime.ONNXRUNTIME, runtime.OPENVINO]


def test_the_same_float_models_read_the_same_cards_in_either_runtime(frames) -> None:
    """OpenVINO computes in float32 (no bfloat16): the float files read as in ONNX Runtime,
    to a hundredth of confidence and a pixel."""
    files = runtime.model_files(runtime.OPENVINO, MODELS_DIR)
    ort = CardDetector(*files, runtime=runtime.ONNXRUNTIME)
    ov = CardDetector(*files, runtime=runtime.OPENVINO)
    for name, frame in frames.items():
        assert same_cards(ort.detect(frame), ov.detect(frame), pixels=1.0, confidence=0.01), name


def test_each_runtime_with_the_files_it_runs_reads_the_same_cards(frames) -> None:
    """What the table runs in either runtime (ONNX Runtime: INT8; OpenVINO: float) reads
    every sample's cards the same, within 3 px and 0.15 of confidence (INT8's reading of one
    index moves with where its card region begins: double_kennard.jpg's sideways 6C reads
    0.842-0.999 as the region shifts by 2 px, the float file 0.997)."""
    ort = CardDetector(*runtime.model_files(runtime.ONNXRUNTIME, MODELS_DIR),
                       runtime=runtime.ONNXRUNTIME)
    ov = CardDetector(*runtime.model_files(runtime.OPENVINO, MODELS_DIR),
                      runtime=runtime.OPENVINO)
    for name, frame in frames.items():
        assert same_cards(ort.detect(frame), ov.detect(frame), pixels=3.0, confidence=0.15), name


def test_openvino_detector_is_safe_from_several_threads(frames) -> None:
    """The table detects two frames at once on one detector: each thread its own request."""
    from concurrent.futures import ThreadPoolExecutor

    detector = CardDetector(*runtime.model_files(runtime.OPENVINO, MODELS_DIR),
                            runtime=runtime.OPENVINO, threads=1)
    items = list(frames.values()) * 2
    alone = [detector.detect(f) for f in items]
    with ThreadPoolExecutor(2) as pool:
        together = list(pool.map(detector.detect, items))
    assert together == alone


@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="one core runs one inference at a time")
def test_openvino_runs_the_cameras_calls_at_once_not_one_after_the_other() -> None:
    """With one thread a call (the camera's workers), OpenVINO compiles one stream per core; with
    its latency hint alone it compiles one, and a second worker's frame waits for the first."""
    files = runtime.model_files(runtime.OPENVINO, MODELS_DIR)
    one_each = runtime.open_session(files[0], runtime.OPENVINO, threads=1)
    all_cores = runtime.open_session(files[0], runtime.OPENVINO, threads=None)
    assert isinstance(one_each, runtime.OpenVinoSession)
    assert isinstance(all_cores, runtime.OpenVinoSession)
    assert one_each.streams == os.cpu_count()
    assert all_cores.streams == 1


def test_a_runtime_named_runs_with_its_files_and_says_so(caplog) -> None:
    caplog.set_level(logging.INFO, "dealer_assist.vision.startup")
    started = start_detector(runtime_choice=runtime.OPENVINO,
                             detector_pins=shipped_pins("detector"),
                             reader_pins=shipped_pins("reader"))
    assert started.runtime == runtime.OPENVINO == started.detector.runtime
    assert started.detector.path.name == "cards.onnx"
    assert started.to_json()["detector"] == {
        "file": "cards.onnx", "version": "0.10",
        "sha256": model_control.shipped()["cards.onnx"]["sha256"]}
    assert "vision: runtime openvino (named in the config)" in caplog.text


def test_auto_measures_both_and_logs_the_choice(caplog) -> None:
    caplog.set_level(logging.INFO, "dealer_assist.vision.startup")
    started = start_detector(detector_pins=shipped_pins("detector"),
                             reader_pins=shipped_pins("reader"), frame_size=(640, 360))
    assert started.runtime in runtime.RUNTIMES
    assert "fastest on 3 warm-up frames" in started.reason
    assert "onnxruntime " in started.reason and "openvino " in started.reason
    assert f"vision: runtime {started.runtime} (fastest" in caplog.text


def test_the_runtime_is_timed_as_the_camera_runs_frames() -> None:
    """A runtime that runs one frame at a time (here: a lock around a 60 ms wait) beats one that
    takes 80 ms but runs two at once when timed alone, and loses when timed two at once, as the
    camera detects. Stand-ins, not runtimes: the real two differ by less than a machine's noise,
    and only waits (no computing) make the difference certain on a loaded machine: 20 ms a frame
    either way (60 against 80 alone, 60 against 40 two at once), the median of three rounds."""
    one_at_a_time = threading.Lock()

    def queued(frame) -> None:
        with one_at_a_time:
            time.sleep(0.06)

    def parallel(frame) -> None:
        time.sleep(0.08)

    candidates = {"queued": queued, "parallel": parallel}
    frames = warmup_frames((64, 36), count=2)
    alone = runtime.choose_runtime(candidates, frames, rounds=3)
    two = runtime.choose_runtime(candidates, frames, rounds=3, at_once=2)
    assert alone.runtime == "queued" and "one at a time" in alone.reason
    assert two.runtime == "parallel" and "2 at once" in two.reason
    assert two.measured_ms["parallel"] < two.measured_ms["queued"]


def test_auto_uses_only_the_runtime_whose_files_are_pinned(caplog) -> None:
    """Only the float files pinned: ONNX Runtime's INT8 files may not run, so OpenVINO runs
    without a measurement, and the log says why ONNX Runtime was left out."""
    floats = model_control.shipped()
    started = start_detector(detector_pins=(floats["cards.onnx"]["sha256"],),
                             reader_pins=(floats["index-reader.onnx"]["sha256"],))
    assert started.runtime == runtime.OPENVINO
    assert "onnxruntime not used" in caplog.text and "cards.int8.onnx" in caplog.text


def test_warmup_frames_give_the_detector_cards_to_read() -> None:
    detector = CardDetector()
    frames = warmup_frames((1280, 720))
    assert len(frames) == 3 and frames[0].shape == (720, 1280, 3)
    assert len(detector.find_indices(frames[0])) > 0


def test_unknown_runtime_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown runtime 'tensorrt'"):
        CardDetector(runtime="tensorrt")


def test_a_file_that_is_no_model_is_named_in_openvino_too(tmp_path) -> None:
    from dealer_assist.vision.detector import ModelError

    bad = tmp_path / "cards.onnx"
    bad.write_bytes(b"not a model")
    with pytest.raises(ModelError, match="not a readable ONNX model") as refused:
        CardDetector(bad, runtime=runtime.OPENVINO)
    assert refused.value.path == bad
