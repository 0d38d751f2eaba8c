"""Whether an INT8 model file reads on this CPU as it read where it was measured.

A CPU without VNNI (AVX2 only) multiplies uint8 activations by int8 weights in pairs and adds
each pair into 16 bits, saturating there: weights within 7 bits (magnitude at most
:data:`SAFE_WEIGHT`, 2 x 255 x 64 = 32 640) never overflow, full 8-bit weights can, and such a
file then misses cards it reads on a VNNI CPU (models/README.md, "CPUs without VNNI"). Decks
enrolled before model 0.11 have 8-bit weights.

:func:`check` refuses a file whose weights pass 7 bits where :func:`saturates` finds that ONNX
Runtime on this CPU saturates 8-bit products: a measurement of the runtime itself (one integer
product whose exact value does not fit 16 bits), not a guess from the CPU's name or flags.
"""

from __future__ import annotations

import functools
from pathlib import Path

import numpy as np

from dealer_assist.vision.model_control import PinError

#: The widest int8 weight whose products no CPU saturates.
SAFE_WEIGHT = 64
#: The probe's inner dimension: 64 products of 255 x 127 in pairs, exactly 2 072 640 where
#: nothing saturates, 32 767 x 32 where each pair is clipped to 16 bits.
_PROBE_DEPTH = 64


class SaturationError(PinError):
    """An INT8 file with 8-bit weights on a CPU that saturates 8-bit products; the message names
    the file, its widest weight and how to quantise it again."""


def widest_weight(path: Path) -> int:
    """The largest magnitude among ``path``'s int8 weights (its int8 initialisers that a
    ``DequantizeLinear`` reads); 0 for a file with none (a float model)."""
    import onnx
    from onnx import numpy_helper

    graph = onnx.load(str(path)).graph
    initialisers = {tensor.name: tensor for tensor in graph.initializer}
    widest = 0
    for node in graph.node:
        if node.op_type != "DequantizeLinear" or node.input[0] not in initialisers:
            continue
        weights = numpy_helper.to_array(initialisers[node.input[0]])
        if weights.dtype == np.int8 and weights.size:
            widest = max(widest, int(np.abs(weights.astype(np.int16)).max()))
    return widest


@functools.cache
def saturates() -> bool:
    """Whether ONNX Runtime on this CPU clips pairs of uint8 x int8 products to 16 bits (no
    VNNI): it multiplies 255s by 127s and compares the sum with the exact one."""
    import onnxruntime as ort
    from onnx import TensorProto, helper, numpy_helper

    weights = numpy_helper.from_array(np.full((_PROBE_DEPTH, 16), 127, np.int8), "w")
    graph = helper.make_graph(
        [helper.make_node("MatMulInteger", ["a", "w"], ["y"])], "probe",
        [helper.make_tensor_value_info("a", TensorProto.UINT8, [4, _PROBE_DEPTH])],
        [helper.make_tensor_value_info("y", TensorProto.INT32, [4, 16])], [weights])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    options = ort.SessionOptions()
    options.log_severity_level = 3
    session = ort.InferenceSession(model.SerializeToString(), options,
                                   providers=["CPUExecutionProvider"])
    (product,) = session.run(None, {"a": np.full((4, _PROBE_DEPTH), 255, np.uint8)})
    return bool((product != 255 * 127 * _PROBE_DEPTH).any())


def check(role: str, path: Path) -> None:
    """Nothing if ``path`` reads here as anywhere: its int8 weights fit 7 bits, or this CPU
    does not saturate 8-bit products; else :class:`SaturationError`."""
    widest = widest_weight(path)
    if widest <= SAFE_WEIGHT or not saturates():
        return
    raise SaturationError(
        f"{path}: the {role}'s INT8 weights use 8 bits (widest {widest}, at most {SAFE_WEIGHT} "
        "is safe) and this CPU adds 8-bit products in 16 bits (no VNNI), where they saturate: "
        "it would miss cards it read where it was accepted. Quantise its float file again "
        "(python -m dealer_assist.vision.quantize, 7-bit weights since model 0.11), then pin "
        "and accept the new files")
