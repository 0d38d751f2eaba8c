"""The shipped INT8 models read the same on a CPU without VNNI (AVX2 only) as on this one.

Such a CPU cannot be borrowed here, so QEMU's user-mode emulator stands in for it
(``qemu-x86_64 -cpu Haswell``: AVX2, no AVX-512, no VNNI), running the same interpreter and
packages. A first test shows the emulator takes ONNX Runtime's AVX2 path (its 8-bit products
saturate there); the second that the table's models read every sample frame there exactly as
here, card, place and confidence. ``scripts/test.sh`` installs Debian's qemu-user.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
QEMU = shutil.which("qemu-x86_64")
pytestmark = pytest.mark.skipif(QEMU is None, reason="needs QEMU's user-mode emulator: "
                                "apt-get install qemu-user (scripts/test.sh installs it)")

SATURATION = """
import numpy as np, onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper
k = 64
weights = numpy_helper.from_array(np.full((k, 16), 127, np.int8), "w")
graph = helper.make_graph([helper.make_node("MatMulInteger", ["a", "w"], ["y"])], "g",
    [helper.make_tensor_value_info("a", TensorProto.UINT8, [4, k])],
    [helper.make_tensor_value_info("y", TensorProto.INT32, [4, 16])], [weights])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
print(int(session.run(None, {"a": np.full((4, k), 255, np.uint8)})[0][0, 0]))
"""

READINGS = """
import json
from pathlib import Path
import cv2
from dealer_assist.vision.detector import CardDetector
data = Path("tests/data/vision")
detector = CardDetector()
print(json.dumps({name: sorted((c.card, round(c.x, 2), round(c.y, 2), round(c.confidence, 4))
                               for c in detector.detect(cv2.imread(str(data / name))))
                  for name in sorted(json.loads((data / "answers.json").read_text()))}))
"""


def run_python(code: str, *, emulated: bool) -> str:
    """``code``'s stdout, run by this interpreter natively or under the AVX2-only emulator."""
    interpreter = [os.path.realpath(sys.executable), "-c", code]
    command = [QEMU, "-cpu", "Haswell", *interpreter] if emulated else interpreter
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def test_the_emulated_cpu_saturates_8_bit_products_as_an_avx2_cpu_does() -> None:
    exact = 255 * 127 * 64
    assert int(run_python(SATURATION, emulated=True)) == 32767 * 32 != exact


def test_the_shipped_models_read_the_samples_alike_with_and_without_vnni() -> None:
    answers = json.loads((ROOT / "tests/data/vision/answers.json").read_text())
    native = json.loads(run_python(READINGS, emulated=False))
    assert native == json.loads(run_python(READINGS, emulated=True))
    for name, answer in answers.items():
        assert sorted(c[0] for c in native[name]) == sorted(a["card"] for a in answer["cards"])
