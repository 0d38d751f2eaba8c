"""Speed of the card detector end to end on this machine's CPUs, ONNX Runtime and OpenVINO side
by side, float and INT8 models, in one run.

    PYTHONPATH=. python bench/detect.py [--runtimes onnxruntime,openvino] [--precisions float,int8]
                                        [--sizes 1280x720,3072x1728] [--frames 40] [--workers 2]
                                        [--card-width LEAST MOST] [--scale 1.0] [--whole-frame]
                                        [--model M --reader R] [--readings twice,four]

Frames are rendered table scenes (held-out designs) stored as JPEG, as a camera or file would
deliver them: 1280x720 with cards 58-95 px wide, 3072x1728 (a 3K camera over a whole 7-seat
felt) with cards 76-90 px, unless ``--card-width`` says otherwise. For each size, runtime and
precision (float: ``cards.onnx`` + ``index-reader.onnx``; INT8: the ``*.int8.onnx`` files) it
prints the milliseconds per stage (JPEG decode, card regions + letterbox, detector inference,
decoding + NMS, reading the indices, grouping; median, mean and 95th percentile) one frame at a
time on all cores (each frame read by every runtime and precision in turn, so that other work on
the machine weighs on all alike), then the frames per second with ``--workers`` frames
detected at once (one thread each), as the table's camera runs them. Then a summary table,
and what the table's ``runtime = "auto"`` would pick here. ``--model``/``--reader`` measure
those files too, as the precision ``given``, beside the shipped pairs ``--precisions`` names (by
default both; ``--precisions given`` measures them alone, ``--precisions int8,given`` beside the
shipped INT8 pair: a candidate model against the shipped one in one run).

OpenVINO runs the card regions padded up to the fixed shapes it compiles at start (what the table
runs, ``shapes=fixed``); ``--own-shapes`` adds it running each region at its own shape, as 0.10
did (``shapes=own``), in the same run. ONNX Runtime runs regions at their own shapes (padded ones
ran slower in it).

``--readings`` measures ways of reading the found indices side by side, each frame read by all
in turn (``CardDetector(reading=...)``, reader.READINGS: "twice", the table's, reads each index
as seen and half a turn, and at the quarter turns too only where unsure; "once" as seen first;
"four" at four quarter turns always, the table's reading before the model card's "Fewer readings
of each index").
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import cv2
import numpy as np
from machine import cpu_model

from dealer_assist.vision import runtime as runtimes
from dealer_assist.vision.artwork import HELD_OUT_DESIGNS, load_designs
from dealer_assist.vision.detector import MODELS_DIR, CardDetector
from dealer_assist.vision.options import SCALE
from dealer_assist.vision.reader import DEFAULT_READING, READINGS
from dealer_assist.vision.scenes import (
    SceneConfig,
    check_card_width,
    parse_frame_size,
    render_scene,
)

#: The precisions measured and their files: float as trained, INT8 as quantised.
PRECISION_FILES = {
    "float": ("cards.onnx", "index-reader.onnx"),
    "int8": ("cards.int8.onnx", "index-reader.int8.onnx"),
}
#: The precision name of the ``--model``/``--reader`` pair.
GIVEN = "given"
#: Cards' width at each frame size unless ``--card-width`` is given (the install's sizes).
CARD_WIDTHS = {(1280, 720): (58.0, 95.0), (3072, 1728): (76.0, 90.0)}
STAGES = ("decode", "regions+letterbox", "inference", "nms", "reading", "grouping", "total")


def decode(jpeg: np.ndarray) -> np.ndarray:
    frame = cv2.imdecode(jpeg, cv2.IMREAD_COLOR)
    if frame is None:
        raise ValueError("could not decode a rendered JPEG frame")
    return frame


def one_at_a_time(detectors: dict[str, CardDetector], jpegs: list[np.ndarray],
                  frames: int) -> dict[str, dict[str, list[float]]]:
    """Milliseconds per stage for ``frames`` frames, one at a time, for each detector: every
    frame is read by each detector in turn, so that whatever else the machine does falls on all
    of them alike (after a warm-up of every frame, so that a runtime's first sight of each input
    shape is not counted)."""
    for detector in detectors.values():
        for jpeg in jpegs:
            detector.detect(decode(jpeg))
    stages = {name: {k: [] for k in STAGES} for name in detectors}
    for i in range(frames):
        for name, detector in detectors.items():
            t0 = time.perf_counter()
            frame = decode(jpegs[i % len(jpegs)])
            t1 = time.perf_counter()
            detector.detect(frame)
            t2 = time.perf_counter()
            times = detector.last_times
            mine = stages[name]
            mine["decode"].append((t1 - t0) * 1e3)
            mine["regions+letterbox"].append(times.preprocess)
            mine["inference"].append(times.inference)
            mine["nms"].append(times.postprocess)
            mine["reading"].append(times.reading)
            mine["grouping"].append(times.grouping)
            mine["total"].append((t2 - t0) * 1e3)
    return stages


def at_once(detector: CardDetector, jpegs: list[np.ndarray], frames: int,
            workers: int) -> tuple[float, float]:
    """Frames per second and the median milliseconds a frame with ``workers`` frames detected
    at once, as the table's camera runs them (``CameraSource(workers=...)``: one detector, one
    runtime thread per call)."""

    def one(index: int) -> float:
        t0 = time.perf_counter()
        detector.detect(decode(jpegs[index % len(jpegs)]))
        return (time.perf_counter() - t0) * 1e3

    with ThreadPoolExecutor(workers) as pool:
        list(pool.map(one, range(max(len(jpegs), 2 * workers))))  # warm-up, every thread
        started = time.perf_counter()
        latencies = list(pool.map(one, range(frames)))
        elapsed = time.perf_counter() - started
    return frames / elapsed, statistics.median(latencies)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runtimes", default=",".join(runtimes.RUNTIMES))
    parser.add_argument("--precisions", default=None,
                        help="float, int8 (the shipped pairs) and given (--model/--reader), "
                        "comma-separated (default: float,int8, and given with --model)")
    parser.add_argument("--sizes", default="1280x720,3072x1728",
                        help="frame sizes WxH, comma-separated")
    parser.add_argument("--model", type=Path, default=None)
    parser.add_argument("--reader", type=Path, default=None)
    parser.add_argument("--scale", type=SCALE, default=1.0)
    parser.add_argument("--frames", type=int, default=40)
    parser.add_argument("--workers", type=int, default=2,
                        help="frames detected at once for the throughput figure (1: skip it)")
    parser.add_argument("--whole-frame", action="store_true",
                        help="run the network on the whole frame, not on card regions")
    parser.add_argument("--own-shapes", action="store_true",
                        help="also measure OpenVINO on each region's own shape (0.10's path)")
    parser.add_argument("--readings", default=DEFAULT_READING,
                        help="ways of reading the indices, comma-separated (twice, once, four)")
    parser.add_argument("--card-width", type=float, nargs=2, default=None,
                        metavar=("LEAST", "MOST"), help="cards' width in the frame, pixels")
    args = parser.parse_args()
    chosen = [r.strip() for r in args.runtimes.split(",") if r.strip()]
    unknown = [r for r in chosen if r not in runtimes.RUNTIMES]
    if unknown or not chosen:
        parser.error(f"--runtimes: unknown {unknown} (known: {', '.join(runtimes.RUNTIMES)})")
    missing = [r for r in chosen if r not in runtimes.available()]
    if missing:
        parser.error(f"--runtimes: not installed here: {', '.join(missing)}")
    if (args.model is None) != (args.reader is None):
        parser.error("--model and --reader go together")
    named = args.precisions or ("float,int8,given" if args.model else "float,int8")
    precisions = [p.strip() for p in named.split(",") if p.strip()]
    known = [*PRECISION_FILES, GIVEN]
    if not precisions or any(p not in known for p in precisions):
        parser.error(f"--precisions: each one of {', '.join(known)}")
    if (GIVEN in precisions) != (args.model is not None):
        parser.error("--precisions: given means the --model and --reader files: "
                     "name both or neither")
    readings = [r.strip() for r in args.readings.split(",") if r.strip()]
    if not readings or any(r not in READINGS for r in readings):
        parser.error(f"--readings: each one of {', '.join(READINGS)}")
    pairs = {p: (args.model, args.reader) if p == GIVEN else
             (MODELS_DIR / PRECISION_FILES[p][0], MODELS_DIR / PRECISION_FILES[p][1])
             for p in precisions}
    try:
        sizes = [parse_frame_size(s.strip()) for s in args.sizes.split(",") if s.strip()]
    except ValueError as bad:
        parser.error(f"--sizes {bad}")
    print(f"cpu_count={os.cpu_count()} cpu={cpu_model()!r}")
    summary: list[tuple[str, str, str, str, str, float, float, float]] = []
    for size in sizes:
        widths = tuple(args.card_width) if args.card_width else CARD_WIDTHS.get(size, (58.0, 95.0))
        try:
            card_width = check_card_width(*widths, size)
        except ValueError as bad:
            parser.error(f"--card-width LEAST MOST at {size[0]}x{size[1]}: {bad}")
        config = SceneConfig(size=size, card_width=card_width)
        rng = np.random.default_rng(7)
        designs = load_designs(list(HELD_OUT_DESIGNS))
        jpegs = [cv2.imencode(".jpg", render_scene(rng, designs, config).image,
                              [cv2.IMWRITE_JPEG_QUALITY, 90])[1] for _ in range(8)]
        label = f"{size[0]}x{size[1]}"
        configs = [(precision, runtime, shapes, reading) for precision in pairs
                   for runtime in chosen for shapes in _shapes(runtime, args.own_shapes)
                   for reading in readings]
        detectors = {"/".join(config): CardDetector(
            *pairs[precision], scale=args.scale, runtime=runtime, regions=not args.whole_frame,
            fixed_shapes=shapes == "fixed", reading=reading)
            for config in configs for precision, runtime, shapes, reading in [config]}
        measured = one_at_a_time(detectors, jpegs, args.frames)
        detectors.clear()
        for precision, runtime, shapes, reading in configs:
            model, reader = pairs[precision]
            stages = measured["/".join((precision, runtime, shapes, reading))]
            print(f"\nframe={label} cards={widths[0]:g}-{widths[1]:g}px runtime={runtime} "
                  f"precision={precision} model={model.name} reader={reader.name} "
                  f"scale={args.scale} regions={not args.whole_frame} shapes={shapes} "
                  f"reading={reading} frames={args.frames}")
            for name, values in stages.items():
                p95 = sorted(values)[int(0.95 * (len(values) - 1))]
                print(f"  {name:<17} median {statistics.median(values):7.2f} ms   "
                      f"mean {statistics.fmean(values):7.2f} ms   p95 {p95:7.2f} ms")
            total = statistics.median(stages["total"])
            fps, latency = float("nan"), float("nan")
            if args.workers > 1:
                threaded = CardDetector(model, reader, scale=args.scale, runtime=runtime,
                                        regions=not args.whole_frame, threads=1,
                                        fixed_shapes=shapes == "fixed", reading=reading)
                fps, latency = at_once(threaded, jpegs, 2 * args.frames, args.workers)
                print(f"  {args.workers} frames at once, one thread each: {fps:.1f} frames/s, "
                      f"each frame {latency:.1f} ms from JPEG to cards (median)")
            summary.append((label, runtime, precision, shapes, reading, total, fps, latency))
    print(f"\nsummary (cpu={cpu_model()!r}, {os.cpu_count()} cores; goal: 30 frames/s, "
          "33 ms a frame one at a time)")
    print(f"  {'frame':<10} {'runtime':<12} {'models':<7} {'shapes':<6} {'reading':<7} "
          f"{'1 at a time':>12} {f'{args.workers} at once':>13} {'each':>9}")
    for label, runtime, precision, shapes, reading, total, fps, latency in summary:
        print(f"  {label:<10} {runtime:<12} {precision:<7} {shapes:<6} {reading:<7} "
              f"{total:9.1f} ms {fps:9.1f} f/s {latency:6.1f} ms")
    for label in dict.fromkeys(row[0] for row in summary):
        rows = [row for row in summary if row[0] == label and row[3] == _shapes(row[1])[0]
                and row[4] == readings[0]
                and row[2] in (GIVEN, _table_precision(row[1]))]
        if rows:
            best = min(rows, key=lambda row: row[5])
            print(f"  runtime = \"auto\" at {label} picks {best[1]} ({best[2]} models, "
                  f"{best[5]:.1f} ms a frame)")


def _shapes(runtime: str, own_too: bool = False) -> list[str]:
    """How ``runtime`` is measured: the table's way first (OpenVINO: regions padded to fixed
    shapes), then OpenVINO on each region's own shape where ``own_too``."""
    if runtime == runtimes.OPENVINO:
        return ["fixed", "own"] if own_too else ["fixed"]
    return ["own"]


def _table_precision(runtime: str) -> str:
    """Which precision the table runs in ``runtime`` (:func:`runtime.model_files`)."""
    detector, _ = runtimes.model_files(runtime, MODELS_DIR)
    return "int8" if detector.name.endswith(".int8.onnx") else "float"


if __name__ == "__main__":
    main()
