"""Where the two networks' time goes, operator by operator, in ONNX Runtime on this CPU.

    PYTHONPATH=. python bench/detector_ops.py [--frames 8] [--rounds 3] [--card-width 70 95]
                                              [--model M --reader R]

Renders 1280x720 table scenes (held-out designs), reads each with the table's detector (ONNX
Runtime, the INT8 files, one thread) and keeps every input it gives the detector network (one
blob per card region) and the reader (the crops of each frame's found indices, as they are
batched). Each network is then loaded again with ONNX Runtime's profiler on, the same graph
optimisation and one thread, and runs those inputs ``--rounds`` times; the profile's kernel
times are summed by operator type and by node. Prints the CPU, each network's milliseconds a
frame, and the operator types and nodes that take the most of it.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import tempfile
from pathlib import Path

import cv2
import numpy as np
from machine import cpu_model

from dealer_assist.vision.artwork import HELD_OUT_DESIGNS, load_designs
from dealer_assist.vision.detector import DEFAULT_MODEL, DEFAULT_READER, CardDetector
from dealer_assist.vision.scenes import SceneConfig, check_card_width, render_scene

SIZE = (1280, 720)


def recorded_inputs(detector: CardDetector, frames: list[np.ndarray]) -> dict[str, list]:
    """Every blob ``detector`` gives its two networks while reading ``frames``."""
    inputs: dict[str, list] = {"detector": [], "reader": []}
    for role, attribute in (("detector", "_session"), ("reader", "_reader")):
        session = getattr(detector, attribute)
        run = session.run

        def recording(blob, run=run, kept=inputs[role]):
            kept.append(blob.copy())
            return run(blob)

        session.run = recording
    for frame in frames:
        detector.detect(frame)
    return inputs


def profile(path: Path, blobs: list[np.ndarray], rounds: int) -> tuple[collections.Counter,
                                                                         collections.Counter]:
    """Kernel microseconds by operator type and by node over ``rounds`` runs of ``blobs``."""
    import onnxruntime as ort

    with tempfile.TemporaryDirectory() as folder:
        options = ort.SessionOptions()
        options.intra_op_num_threads = 1
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        options.log_severity_level = 3
        session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
        name = session.get_inputs()[0].name
        for blob in blobs:  # warm-up, unprofiled
            session.run(None, {name: blob})
        options.enable_profiling = True
        options.profile_file_prefix = str(Path(folder) / "profile")
        session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
        for _ in range(rounds):
            for blob in blobs:
                session.run(None, {name: blob})
        events = json.loads(Path(session.end_profiling()).read_text())
    by_type: collections.Counter = collections.Counter()
    by_node: collections.Counter = collections.Counter()
    for event in events:
        if event.get("cat") == "Node" and event["name"].endswith("_kernel_time"):
            by_type[event["args"]["op_name"]] += event["dur"]
            by_node[event["name"].removesuffix("_kernel_time")] += event["dur"]
    return by_type, by_node


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--frames", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--card-width", type=float, nargs=2, default=(70.0, 95.0),
                        metavar=("LEAST", "MOST"))
    parser.add_argument("--model", type=Path, default=DEFAULT_MODEL)
    parser.add_argument("--reader", type=Path, default=DEFAULT_READER)
    parser.add_argument("--top", type=int, default=10, help="operator types and nodes shown")
    args = parser.parse_args()
    if args.frames < 1 or args.rounds < 1:
        parser.error("--frames and --rounds: at least 1")
    print(f"cpu_count={os.cpu_count()} cpu={cpu_model()!r}")
    config = SceneConfig(size=SIZE, card_width=check_card_width(*args.card_width, SIZE))
    rng = np.random.default_rng(7)
    designs = load_designs(list(HELD_OUT_DESIGNS))
    frames = [cv2.imdecode(cv2.imencode(".jpg", render_scene(rng, designs, config).image,
                                        [cv2.IMWRITE_JPEG_QUALITY, 90])[1], cv2.IMREAD_COLOR)
              for _ in range(args.frames)]
    detector = CardDetector(args.model, args.reader, threads=1)
    inputs = recorded_inputs(detector, frames)
    for role, path in (("detector", args.model), ("reader", args.reader)):
        blobs = inputs[role]
        pixels = sum(b.shape[0] * b.shape[2] * b.shape[3] for b in blobs) / args.frames
        by_type, by_node = profile(path, blobs, args.rounds)
        total = sum(by_type.values())
        per_frame = total / 1e3 / (args.rounds * args.frames)
        print(f"\n{role} {path.name}: {len(blobs) / args.frames:.1f} runs a frame, "
              f"{pixels:,.0f} input pixels a frame; kernels {per_frame:.2f} ms a frame "
              f"(one thread, {args.frames} frames x {args.rounds} rounds)")
        print("  by operator type:")
        for op, spent in by_type.most_common(args.top):
            ms = spent / 1e3 / (args.rounds * args.frames)
            print(f"    {op:<24} {spent / total:6.1%}  {ms:6.2f} ms")
        print("  by node:")
        for node, spent in by_node.most_common(args.top):
            print(f"    {node[:60]:<60} {spent / total:6.1%}")


if __name__ == "__main__":
    main()
