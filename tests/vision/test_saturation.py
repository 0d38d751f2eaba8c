"""An enrolled deck's INT8 files with 8-bit weights (quantised before model 0.11) are refused at
start on a CPU that saturates 8-bit products (no VNNI), and run where products are exact.

No AVX2-only CPU can be borrowed here: QEMU's user-mode emulator stands in for one, as in
test_without_vnni.py, whose first test shows it saturates as such a CPU does.
"""

from __future__ import annotations

import json
import platform
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import numpy_helper

from dealer_assist.vision import model_control, runtime, saturation
from dealer_assist.vision.detector import MODELS_DIR
from dealer_assist.vision.model_control import AcceptanceReport, sha256_of
from dealer_assist.vision.saturation import SAFE_WEIGHT, SaturationError, widest_weight
from dealer_assist.vision.startup import start_detector
from tests.vision.test_without_vnni import QEMU, run_python

INT8 = (MODELS_DIR / "cards.int8.onnx", MODELS_DIR / "index-reader.int8.onnx")
DECK_FILES = ("cards-ourdeck.int8.onnx", "index-reader-ourdeck.int8.onnx")


def write_deck(folder: Path, *, eight_bit: bool) -> tuple[Path, Path]:
    """An "enrolled deck" in ``folder``: the shipped INT8 models re-saved under a deck's names
    (so their hashes are not the shipped ones), with a passing acceptance report. With
    ``eight_bit`` each int8 weight is doubled and its scale halved: the same networks quantised
    to full 8-bit weights, as decks were before model 0.11."""
    folder.mkdir(parents=True, exist_ok=True)
    files = []
    for source, name in zip(INT8, DECK_FILES, strict=True):
        model = onnx.load(str(source))
        model.producer_name = "enrol-test"
        if eight_bit:
            _widen_weights(model.graph)
        onnx.save(model, str(folder / name))
        files.append(folder / name)
    detector, reader = files
    AcceptanceReport(deck="ourdeck", detector_sha256=sha256_of(detector),
                     reader_sha256=sha256_of(reader),
                     figures={"precision": 0.997, "recall": 0.996}, cards=3000,
                     scenes=100, source="enrol-check", command="test").write(
        model_control.acceptance_path(detector))
    return detector, reader


def _widen_weights(graph: onnx.GraphProto) -> None:
    initialisers = {tensor.name: tensor for tensor in graph.initializer}
    for node in graph.node:
        if node.op_type != "DequantizeLinear" or node.input[0] not in initialisers:
            continue
        weights = numpy_helper.to_array(initialisers[node.input[0]])
        if weights.dtype != np.int8:
            continue
        scale = initialisers[node.input[1]]
        wide = np.clip(weights.astype(np.int16) * 2, -127, 127).astype(np.int8)
        initialisers[node.input[0]].CopyFrom(numpy_helper.from_array(wide, node.input[0]))
        half = (numpy_helper.to_array(scale) / 2).astype(np.float32)
        scale.CopyFrom(numpy_helper.from_array(half, node.input[1]))


def test_widest_weight_reads_seven_bits_shipped_eight_bits_widened_none_in_float(
        tmp_path: Path) -> None:
    widened = write_deck(tmp_path, eight_bit=True)
    for shipped, wide in zip(INT8, widened, strict=True):
        assert SAFE_WEIGHT // 2 < widest_weight(shipped) <= SAFE_WEIGHT
        assert widest_weight(wide) == 127
    assert widest_weight(MODELS_DIR / "index-reader.onnx") == 0


@pytest.mark.skipif(platform.system() != "Linux" or platform.machine() != "x86_64",
                    reason="reads the CPU's flags from Linux's /proc/cpuinfo on x86-64")
def test_the_probe_says_what_the_cpu_flags_say() -> None:
    """The probe measures the runtime; the flags are the CPU's own word for the same thing."""
    flags = set(Path("/proc/cpuinfo").read_text().split())
    assert saturation.saturates() == (not flags & {"avx512_vnni", "avx_vnni"})


def test_an_eight_bit_deck_starts_here_exactly_when_this_cpu_does_not_saturate(
        tmp_path: Path) -> None:
    files = write_deck(tmp_path, eight_bit=True)
    try:
        start = start_detector(runtime_choice=runtime.ONNXRUNTIME, model=files[0],
                               reader=files[1], detector_pins=(sha256_of(files[0]),),
                               reader_pins=(sha256_of(files[1]),), frame_size=(320, 180))
    except SaturationError:
        assert saturation.saturates()
    else:
        assert not saturation.saturates()
        assert start.models[0].version == "enrolled ourdeck"


START = """
import json
from pathlib import Path
from dealer_assist.vision import runtime, saturation
from dealer_assist.vision.model_control import sha256_of
from dealer_assist.vision.startup import start_detector
said = {"saturates": saturation.saturates()}
for folder in FOLDERS:
    files = [Path(folder) / name for name in DECK_FILES]
    try:
        start = start_detector(runtime_choice=runtime.ONNXRUNTIME, model=files[0],
                               reader=files[1], detector_pins=(sha256_of(files[0]),),
                               reader_pins=(sha256_of(files[1]),), frame_size=(320, 180))
        said[folder] = "started " + start.models[0].version
    except saturation.SaturationError as refused:
        said[folder] = str(refused)
print(json.dumps(said))
"""


@pytest.mark.skipif(QEMU is None, reason="needs QEMU's user-mode emulator: "
                    "apt-get install qemu-user (scripts/test.sh installs it)")
def test_on_a_cpu_without_vnni_an_eight_bit_deck_is_refused_and_a_seven_bit_one_runs(
        tmp_path: Path) -> None:
    eight, seven = tmp_path / "eight", tmp_path / "seven"
    write_deck(eight, eight_bit=True)
    write_deck(seven, eight_bit=False)
    code = (f"FOLDERS = {json.dumps([str(eight), str(seven)])}\n"
            f"DECK_FILES = {json.dumps(DECK_FILES)}\n{START}")
    said = json.loads(run_python(code, emulated=True))
    assert said["saturates"] is True
    refusal = said[str(eight)]
    assert refusal.startswith(f"{eight / DECK_FILES[0]}: the detector's INT8 weights use 8 bits "
                              "(widest 127")
    assert "python -m dealer_assist.vision.quantize" in refusal
    assert said[str(seven)] == "started enrolled ourdeck"
