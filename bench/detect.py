"""Speed of the card detector end to end (1280x720 unless told) on this machine's CPUs.

    PYTHONPATH=. python bench/detect.py [--model M] [--reader R] [--scale 1.0] [--frames 60]
                                        [--whole-frame] [--workers 2]
                                        [--size 3072x1728 --card-width 76 90]

Frames are rendered table scenes (held-out designs) stored as JPEG, as a camera or file would
deliver them; the stages timed are JPEG decode, card regions + letterbox, ONNX Runtime
detector inference, decoding + NMS, reading the indices (crop + reader CNN), and grouping into
cards.
Prints milliseconds per stage (median and 95th percentile) and fps for one frame at a time, then
the frames per second with ``--workers`` frames detected at once (default 2), as the table's
camera runs them.
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

from dealer_assist.vision.artwork import HELD_OUT_DESIGNS, load_designs
from dealer_assist.vision.detector import DEFAULT_MODEL, DEFAULT_READER, CardDetector
from dealer_assist.vision.options import SCALE
from dealer_assist.vision.scenes import (
    SceneConfig,
    check_card_width,
    parse_frame_size,
    render_scene,
)


def decode(jpeg: np.ndarray) -> np.ndarray:
    frame = cv2.imdecode(jpeg, cv2.IMREAD_COLOR)
    if frame is None:
        raise ValueError("could not decode a rendered JPEG frame")
    return frame


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--model", type=Path, default=DEFAULT_MODEL)
    parser.add_argument("--reader", type=Path, default=DEFAULT_READER)
    parser.add_argument("--scale", type=SCALE, default=1.0)
    parser.add_argument("--frames", type=int, default=60)
    parser.add_argument("--workers", type=int, default=2,
                        help="frames detected at once for the throughput figure (1: skip it)")
    parser.add_argument("--whole-frame", action="store_true",
                        help="run the network on the whole frame, not on card regions")
    parser.add_argument("--size", default="1280x720",
                        help="frame size WxH (a 3K camera over a whole table: 3072x1728)")
    parser.add_argument("--card-width", type=float, nargs=2, default=(58.0, 95.0),
                        metavar=("LEAST", "MOST"), help="cards' width in the frame, pixels")
    args = parser.parse_args()
    try:
        size = parse_frame_size(args.size)
    except ValueError as bad:
        parser.error(f"--size {bad}")
    try:
        card_width = check_card_width(*args.card_width)
    except ValueError as bad:
        parser.error(f"--card-width LEAST MOST: {bad}")
    config = SceneConfig(size=size, card_width=card_width)
    rng = np.random.default_rng(7)
    designs = load_designs(list(HELD_OUT_DESIGNS))
    jpegs = [cv2.imencode(".jpg", render_scene(rng, designs, config).image,
                          [cv2.IMWRITE_JPEG_QUALITY, 90])[1] for _ in range(8)]
    detector = CardDetector(args.model, args.reader, scale=args.scale, regions=not args.whole_frame)
    for jpeg in jpegs[:3]:  # warm-up
        detector.detect(decode(jpeg))
    names = ("decode", "regions+letterbox", "inference", "nms", "reading", "grouping", "total")
    stages: dict[str, list[float]] = {k: [] for k in names}
    for i in range(args.frames):
        t0 = time.perf_counter()
        frame = decode(jpegs[i % len(jpegs)])
        t1 = time.perf_counter()
        detector.detect(frame)
        t2 = time.perf_counter()
        times = detector.last_times
        stages["decode"].append((t1 - t0) * 1e3)
        stages["regions+letterbox"].append(times.preprocess)
        stages["inference"].append(times.inference)
        stages["nms"].append(times.postprocess)
        stages["reading"].append(times.reading)
        stages["grouping"].append(times.grouping)
        stages["total"].append((t2 - t0) * 1e3)
    h, w = frame.shape[:2]
    print(f"cpu_count={os.cpu_count()} cpu={cpu_model()!r}")
    print(f"frame={w}x{h} cards={args.card_width[0]:g}-{args.card_width[1]:g}px scale={args.scale} "
          f"regions={not args.whole_frame} "
          f"model={args.model.name} reader={args.reader.name} frames={args.frames}")
    for name, values in stages.items():
        p95 = sorted(values)[int(0.95 * (len(values) - 1))]
        print(f"  {name:<17} median {statistics.median(values):7.2f} ms   p95 {p95:7.2f} ms")
    print(f"  fps (1000 / median total) = {1000 / statistics.median(stages['total']):.1f}")
    if args.workers > 1:
        throughput(args, jpegs)


def throughput(args: argparse.Namespace, jpegs: list[np.ndarray]) -> None:
    """Frames through decode + detection with ``--workers`` frames at once, as the table's camera
    runs them (``CameraSource(workers=...)``: one detector, one ONNX Runtime thread per call)."""
    detector = CardDetector(args.model, args.reader, scale=args.scale,
                            regions=not args.whole_frame, threads=1)

    def one(index: int) -> float:
        t0 = time.perf_counter()
        detector.detect(decode(jpegs[index % len(jpegs)]))
        return (time.perf_counter() - t0) * 1e3

    frames = 2 * args.frames
    with ThreadPoolExecutor(args.workers) as pool:
        list(pool.map(one, range(2 * args.workers)))  # warm-up
        started = time.perf_counter()
        latencies = list(pool.map(one, range(frames)))
        elapsed = time.perf_counter() - started
    print(f"{args.workers} frames at once, one ONNX Runtime thread each, {frames} frames: "
          f"{frames / elapsed:.1f} frames/s, each frame {statistics.median(latencies):.1f} ms "
          f"from JPEG to cards (median)")


if __name__ == "__main__":
    main()
