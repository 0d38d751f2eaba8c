"""INT8 quantisation: the command turns the float exports into models the table can run, with the
decoding tail left in float, and the result still reads cards."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import cv2
import numpy as np
import onnx
import pytest

from dealer_assist.vision import quantize
from dealer_assist.vision.artwork import installed_designs
from dealer_assist.vision.detector import DEFAULT_MODEL, DEFAULT_READER, CardDetector
from dealer_assist.vision.saturation import SAFE_WEIGHT, widest_weight

DATA = Path(__file__).resolve().parents[1] / "data" / "vision"
MODELS = DEFAULT_MODEL.parent


@pytest.mark.parametrize("name", ["cards.int8.onnx", "index-reader.int8.onnx"])
def test_shipped_int8_weights_use_seven_bits_so_no_cpu_saturates_them(name: str) -> None:
    """A CPU without VNNI (AVX2 only) adds each pair of uint8 x int8 products into 16 bits:
    2 x 255 x 64 = 32 640 fits, 2 x 255 x 127 does not (test_without_vnni.py shows it)."""
    assert SAFE_WEIGHT // 2 < widest_weight(MODELS / name) <= SAFE_WEIGHT


def test_shipped_defaults_are_the_quantised_models() -> None:
    assert DEFAULT_MODEL == quantize.quantized_path(MODELS / "cards.onnx")
    assert DEFAULT_READER == quantize.quantized_path(MODELS / "index-reader.onnx")


def test_detector_tail_stays_float() -> None:
    tail = quantize.detector_tail(MODELS / "cards.onnx")
    graph = onnx.load(str(MODELS / "cards.onnx")).graph
    last = max(int(n.name.split("/")[1].split(".")[1]) for n in graph.node
               if n.name.startswith("/model."))
    assert all(name.startswith(f"/model.{last}/") for name in tail)
    # the output convolutions of the box and class branches, and the distribution decoding
    assert {"/model.23/cv2.0/cv2.0.2/Conv", "/model.23/cv3.2/cv3.2.2/Conv",
            "/model.23/dfl/conv/Conv"} <= set(tail)
    # ... but the branches' inner convolutions are quantised
    assert "/model.23/cv2.0/cv2.0.0/conv/Conv" not in tail


@pytest.mark.skipif(not installed_designs(), reason="card artwork not installed; "
                    "scripts/test.sh installs it (scripts/install-card-art.sh)")
def test_quantize_command_writes_models_that_read(tmp_path: Path) -> None:
    for name in ("cards.onnx", "index-reader.onnx"):
        shutil.copy(MODELS / name, tmp_path / name)
    assert quantize.main(["--detector", str(tmp_path / "cards.onnx"),
                          "--reader", str(tmp_path / "index-reader.onnx"),
                          "--frames", "6"]) == 0
    detector_path, reader_path = (tmp_path / "cards.int8.onnx",
                                  tmp_path / "index-reader.int8.onnx")
    ops = {n.op_type for n in onnx.load(str(detector_path)).graph.node}
    assert {"QuantizeLinear", "DequantizeLinear"} <= ops
    assert detector_path.stat().st_size < (tmp_path / "cards.onnx").stat().st_size / 2
    for path in (detector_path, reader_path):
        assert SAFE_WEIGHT // 2 < widest_weight(path) <= SAFE_WEIGHT
    detector = CardDetector(detector_path, reader_path)
    answer = json.loads((DATA / "answers.json").read_text())["split_tigullio.jpg"]
    cards = detector.detect(cv2.imread(str(DATA / "split_tigullio.jpg")))
    assert sorted(c.card for c in cards) == sorted(a["card"] for a in answer["cards"])


@pytest.mark.parametrize(("args", "said"), [
    (["--detector", "/nonexistent.onnx"], "argument --detector: no such file: /nonexistent.onnx"),
    (["--reader", "/nonexistent.onnx"], "argument --reader: no such file: /nonexistent.onnx"),
    (["--frames", "0"], "argument --frames: must be from 1 to 10000, got 0"),
    (["--frames", "-1"], "argument --frames: must be from 1 to 10000, got -1"),
    (["--detector", str(MODELS / "index-reader.onnx")], "(is this the index reader?)"),
])
def test_what_cannot_be_quantised_is_refused_before_rendering(args, said, capsys,
                                                               monkeypatch) -> None:
    def no_rendering(*args, **kwargs):
        raise AssertionError("rendered before the options were checked")

    monkeypatch.setattr(quantize, "render_scene", no_rendering)
    with pytest.raises(SystemExit) as refused:
        quantize.main(args)
    assert refused.value.code == 2
    assert said in capsys.readouterr().err


def test_without_onnx_runtime_it_says_what_is_missing(capsys, monkeypatch) -> None:
    """Not "not a readable ONNX model (ModuleNotFoundError)", as it said of a good model."""
    def no_rendering(*args, **kwargs):
        raise AssertionError("rendered before the modules were checked")

    monkeypatch.setitem(sys.modules, "onnxruntime", None)  # importing it now raises ImportError
    monkeypatch.setattr(quantize, "render_scene", no_rendering)
    with pytest.raises(SystemExit) as refused:
        quantize.main([])
    assert refused.value.code == 2
    err = capsys.readouterr().err
    assert "vision.quantize: needs onnxruntime, which the table's and the training environment " \
        "have: pip install onnx onnxruntime" in err


@pytest.mark.skipif(not installed_designs(), reason="card artwork not installed; "
                    "scripts/test.sh installs it (scripts/install-card-art.sh)")
def test_a_detector_that_finds_no_index_leaves_nothing_to_calibrate_on(
        tmp_path: Path, capsys, monkeypatch) -> None:
    """Said, rather than ONNX Runtime's "No data is collected." traceback."""
    for name in ("cards.onnx", "index-reader.onnx"):
        shutil.copy(MODELS / name, tmp_path / name)
    monkeypatch.setattr(CardDetector, "find_indices",
                        lambda self, frame: np.zeros((0, 4), np.float32))
    with pytest.raises(SystemExit) as refused:
        quantize.main(["--detector", str(tmp_path / "cards.onnx"),
                       "--reader", str(tmp_path / "index-reader.onnx"), "--frames", "1"])
    assert refused.value.code == 2
    assert "the detector found no index in 1 frames: nothing to calibrate the reader on" in \
        capsys.readouterr().err
    assert not list(tmp_path.glob("*.int8.onnx"))
