"""Where the two ONNX models run: ONNX Runtime or OpenVINO, one small interface for both.

Each runtime runs the model file it is fastest with: ONNX Runtime the INT8 QDQ files
(``*.int8.onnx``, :mod:`.quantize`), OpenVINO the float files (it runs ONNX Runtime's QDQ files
slower than their float originals; NNCF quantisation for it is not done). OpenVINO runs at float32
precision (``INFERENCE_PRECISION_HINT``): on a CPU with bfloat16 units it would otherwise
compute in bfloat16, and its readings would drift from what the models were scored with.
OpenVINO also runs a model whose input shape changes from call to call (the detector on card
regions) about half as fast as the same model compiled for one fixed shape: a session can be given
``static_shapes``, each compiled once at start, and a blob of one of them runs on that compiled
model (the detector pads its regions up to them, :data:`.detector.REGION_SIDES`, and the reader's
batches, :data:`.detector.READER_BATCH`).
:func:`choose_runtime` measures both on the same warm-up frames, as many at once as the camera
detects, and keeps the faster one.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np

logger = logging.getLogger(__name__)

ONNXRUNTIME = "onnxruntime"
OPENVINO = "openvino"
AUTO = "auto"
RUNTIMES = (ONNXRUNTIME, OPENVINO)
#: What ``[vision] runtime`` may say.
RUNTIME_CHOICES = (AUTO, *RUNTIMES)


class RuntimeUnavailable(RuntimeError):
    """The runtime's package is not installed here."""


class Session(Protocol):
    """One loaded model: how many inputs it takes, its first input's name and shape (``None``
    or a str for a dynamic dim), the input shapes it runs fastest (``static_shapes``: empty when
    every shape runs alike) and ``run(blob)``, its outputs in order. ``run`` is safe to call
    from several threads."""

    input_count: int
    input_name: str
    input_shape: tuple[int | str | None, ...]
    static_shapes: frozenset[tuple[int, ...]]

    def run(self, blob: np.ndarray) -> list[np.ndarray]: ...


class OrtSession:
    """A model in ONNX Runtime (CPU)."""

    def __init__(self, path: Path, threads: int | None) -> None:
        import onnxruntime as ort

        options = ort.SessionOptions()
        options.intra_op_num_threads = threads or os.cpu_count() or 1
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        options.log_severity_level = 3
        self._session = ort.InferenceSession(str(path), options,
                                             providers=["CPUExecutionProvider"])
        inputs = self._session.get_inputs()
        self.input_count = len(inputs)
        self.input_name = inputs[0].name
        self.input_shape = tuple(inputs[0].shape)
        self.static_shapes: frozenset[tuple[int, ...]] = frozenset()

    def run(self, blob: np.ndarray) -> list[np.ndarray]:
        return list(self._session.run(None, {self.input_name: blob}))


class OpenVinoSession:
    """A model in OpenVINO (CPU plugin, latency hint, float32), one infer request per thread and
    compiled model. ``threads``: threads per inference; with fewer than the cores, the model runs
    as many inferences at once as fit (``streams``, OpenVINO's parallel executors), as ONNX
    Runtime does for calls from several threads: with one stream OpenVINO queues a second
    thread's call behind the first. ``static_shapes``: input shapes each compiled on their own
    (once, here); a blob of another shape runs on the model compiled for its dynamic shape."""

    _core: Any = None
    _core_lock = threading.Lock()

    def __init__(self, path: Path, threads: int | None,
                 static_shapes: Sequence[tuple[int, ...]] = ()) -> None:
        import openvino as ov

        with OpenVinoSession._core_lock:
            if OpenVinoSession._core is None:
                OpenVinoSession._core = ov.Core()
        core = OpenVinoSession._core
        model = core.read_model(str(path))
        self.input_count = len(model.inputs)
        first = model.inputs[0]
        self.input_name = first.get_any_name()
        self.input_shape = tuple(None if d.is_dynamic else d.get_length()
                                 for d in first.get_partial_shape())
        cores = os.cpu_count() or 1
        per_call = min(threads or cores, cores)
        streams = max(1, cores // per_call)
        config = {"PERFORMANCE_HINT": "LATENCY", "INFERENCE_PRECISION_HINT": "f32",
                  "NUM_STREAMS": streams, "INFERENCE_NUM_THREADS": streams * per_call}
        self._compiled = core.compile_model(model, "CPU", config)
        #: inferences the compiled model runs at once, as OpenVINO reports it
        self.streams = int(self._compiled.get_property("NUM_STREAMS"))
        self._static: dict[tuple[int, ...], Any] = {}
        if not first.get_partial_shape().is_dynamic:
            static_shapes = ()  # a model made for one shape runs only that one
        for shape in dict.fromkeys(tuple(shape) for shape in static_shapes):
            fixed = model.clone()
            fixed.reshape({0: list(shape)})
            self._static[shape] = core.compile_model(fixed, "CPU", config)
        self.static_shapes = frozenset(self._static)
        self._local = threading.local()

    def run(self, blob: np.ndarray) -> list[np.ndarray]:
        compiled = self._static.get(blob.shape, self._compiled)
        requests = getattr(self._local, "requests", None)
        if requests is None:
            requests = self._local.requests = {}
        request = requests.get(id(compiled))
        if request is None:
            request = requests[id(compiled)] = compiled.create_infer_request()
        results = request.infer({0: blob})
        # copies: the request's buffers are reused by its next inference
        return [np.array(results[out]) for out in compiled.outputs]


def open_session(path: Path, runtime: str, threads: int | None, *,
                 static_shapes: Sequence[tuple[int, ...]] = ()) -> OrtSession | OpenVinoSession:
    """``path`` loaded in ``runtime``; raises :class:`RuntimeUnavailable` when its package is
    missing, and the runtime's own exception for a bad file (the caller names the file).
    ``static_shapes`` are compiled on their own where that runs faster (OpenVINO; ONNX Runtime
    runs padded blobs slower than the blobs themselves, and ignores them)."""
    if runtime == ONNXRUNTIME:
        return OrtSession(path, threads)
    if runtime == OPENVINO:
        try:
            import openvino  # noqa: F401
        except ImportError:
            raise RuntimeUnavailable(
                "OpenVINO is not installed (pip install openvino; the table extra has it)"
            ) from None
        return OpenVinoSession(path, threads, static_shapes)
    raise ValueError(f"unknown runtime {runtime!r} (known: {', '.join(RUNTIMES)})")


def available() -> list[str]:
    """The runtimes whose packages import here, ONNX Runtime first."""
    found = []
    for name, module in ((ONNXRUNTIME, "onnxruntime"), (OPENVINO, "openvino")):
        try:
            __import__(module)
        except ImportError:
            continue
        found.append(name)
    return found


def model_files(runtime: str, models_dir: Path) -> tuple[Path, Path]:
    """The shipped detector and reader files ``runtime`` runs best: INT8 QDQ for ONNX Runtime,
    float for OpenVINO."""
    if runtime == OPENVINO:
        return models_dir / "cards.onnx", models_dir / "index-reader.onnx"
    return models_dir / "cards.int8.onnx", models_dir / "index-reader.int8.onnx"


@dataclass(frozen=True)
class Choice:
    """The runtime chosen, why, and each candidate's median milliseconds a warm-up frame."""

    runtime: str
    reason: str
    measured_ms: dict[str, float]


def choose_runtime(candidates: dict[str, Callable[[np.ndarray], Any]],
                   frames: Sequence[np.ndarray], *, rounds: int = 3,
                   at_once: int = 1) -> Choice:
    """The fastest of ``candidates`` (runtime -> a detect function) over ``frames``, timed as
    the camera runs them: ``at_once`` frames detected at once from as many threads (a runtime
    that is faster alone can be slower two at once). Each is run once on the frames to warm it,
    then ``rounds`` times, interleaved so that a busy moment of the machine falls on all alike;
    the median of each round's milliseconds a frame decides. Ties go to the first."""
    if not candidates:
        raise ValueError("no runtime to choose from")
    if len(candidates) == 1 or not frames:
        (name, *_) = candidates
        return Choice(name, "the only candidate: installed, its files pinned"
                      if len(candidates) == 1 else "no warm-up frames to measure on", {})
    batch = list(frames) * max(1, -(-2 * at_once // len(frames)))  # every thread gets work
    times: dict[str, list[float]] = {name: [] for name in candidates}
    with ThreadPoolExecutor(at_once) as pool:
        for detect in candidates.values():
            list(pool.map(detect, batch))
        for _ in range(rounds):
            for name, detect in candidates.items():
                started = time.perf_counter()
                list(pool.map(detect, batch))
                times[name].append((time.perf_counter() - started) * 1e3 / len(batch))
    medians = {name: float(np.median(values)) for name, values in times.items()}
    best = min(medians, key=lambda name: medians[name])
    measured = ", ".join(f"{name} {ms:.1f} ms" for name, ms in medians.items())
    way = "one at a time" if at_once == 1 else f"{at_once} at once"
    return Choice(best, f"fastest on {len(frames)} warm-up frames x {rounds}, {way} "
                  f"({measured})", medians)
