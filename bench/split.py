"""One frame at a time, three ways side by side: the frame's card regions and indices to read
shared among all cores' threads, each inference on one runtime thread
(``CardDetector(split=True)``), against one inference after another on all the runtime's threads
(``split=False``) and on one runtime thread (``threads=1``, the table camera's calls).

    PYTHONPATH=. python bench/split.py [--runtime onnxruntime] [--size 1280x720]
                                       [--card-width 70 95] [--frames 40] [--rounds 3]

Each way is timed alone in a process of its own, the three in turn ``--rounds`` times (each
round in another order): in one process, an ONNX Runtime session's worker threads spin after
each call and slow whatever runs next, so frame-by-frame interleaving (``bench/detect.py``'s
way) would measure that, not the ways. Frames are rendered held-out tables (seed 7), read from
memory (no JPEG decode: this compares the detector alone). Prints each process's median
milliseconds a frame, then each way's median over the rounds and its ratio to the split's.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

from machine import cpu_model

#: The ways and the detector's settings for each.
WAYS = {"split": {"split": True}, "runtime": {"split": False}, "one-thread": {"threads": 1}}


def child(way: str, runtime: str, size: tuple[int, int], widths: tuple[float, float],
          frames: int) -> float:
    """The median milliseconds a frame for ``way``, in this process."""
    import numpy as np

    from dealer_assist.vision import runtime as runtimes
    from dealer_assist.vision.artwork import HELD_OUT_DESIGNS, load_designs
    from dealer_assist.vision.detector import MODELS_DIR, CardDetector
    from dealer_assist.vision.scenes import SceneConfig, check_card_width, render_scene

    rng = np.random.default_rng(7)
    designs = load_designs(list(HELD_OUT_DESIGNS))
    config = SceneConfig(size=size, card_width=check_card_width(*widths, size))
    images = [render_scene(rng, designs, config).image for _ in range(8)]
    detector = CardDetector(*runtimes.model_files(runtime, MODELS_DIR), runtime=runtime,
                            **WAYS[way])  # type: ignore[arg-type]
    for image in images:  # warm-up: every region shape seen once
        detector.detect(image)
    times = []
    for i in range(frames):
        started = time.perf_counter()
        detector.detect(images[i % len(images)])
        times.append((time.perf_counter() - started) * 1e3)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runtime", default="onnxruntime")
    parser.add_argument("--size", default="1280x720")
    parser.add_argument("--card-width", type=float, nargs=2, default=(70.0, 95.0),
                        metavar=("LEAST", "MOST"))
    parser.add_argument("--frames", type=int, default=40)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--child", choices=list(WAYS), help=argparse.SUPPRESS)
    args = parser.parse_args()
    from dealer_assist.vision.scenes import check_card_width, parse_frame_size

    try:
        size = parse_frame_size(args.size)
        check_card_width(args.card_width[0], args.card_width[1], size)
    except ValueError as bad:
        parser.error(f"--size / --card-width: {bad}")
    if args.frames < 1 or args.rounds < 1:
        parser.error("--frames and --rounds: 1 or more")
    if args.child:
        print(json.dumps(child(args.child, args.runtime, size, tuple(args.card_width),
                               args.frames)))
        return
    print(f"cpu_count={os.cpu_count()} cpu={cpu_model()!r} runtime={args.runtime} "
          f"frame={args.size} cards={args.card_width[0]:g}-{args.card_width[1]:g}px "
          f"frames={args.frames}, one at a time, each way alone in its own process")
    medians: dict[str, list[float]] = {way: [] for way in WAYS}
    for round_ in range(args.rounds):
        turn = list(WAYS)[round_ % len(WAYS):] + list(WAYS)[:round_ % len(WAYS)]
        for way in turn:
            out = subprocess.run(
                [sys.executable, __file__, "--child", way, "--runtime", args.runtime,
                 "--size", args.size, "--card-width", *map(str, args.card_width),
                 "--frames", str(args.frames)], capture_output=True, text=True)
            if out.returncode != 0:
                sys.exit(f"bench/split.py: the {way} process failed:\n{out.stderr}")
            ms = float(json.loads(out.stdout.strip().splitlines()[-1]))
            medians[way].append(ms)
            print(f"  round {round_ + 1}: {way:<10} {ms:7.1f} ms a frame (median)")
    split = statistics.median(medians["split"])
    print(f"medians of {args.rounds} rounds:")
    for way in WAYS:
        ms = statistics.median(medians[way])
        print(f"  {way:<10} {ms:7.1f} ms a frame, {ms / split:.2f}x the split's time")


if __name__ == "__main__":
    main()
