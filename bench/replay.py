"""How fast a recording is written, and replayed and verified, as a multiple of real time.

Run: python bench/replay.py [--rounds N] [--frame-width W] [--redetect] [--model ONNX]
Records N random legal rounds (a key frame, a real JPEG, at every card event) through the real
recorder (every append fsync'd), then times ``replay --verify`` over the whole recording:
re-settling every round, checking every hash link and every frame file's SHA-256. A table deals
60 to 200 rounds an hour, so the multiple of real time is rounds per second x 3600 / (60..200).
With --redetect it also re-runs the vision module's detector on every key frame (when the vision
module and its model are installed; otherwise it says why and times JPEG decoding alone, the part
of re-detection that does not depend on the model).
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import cv2  # noqa: E402
import numpy as np  # noqa: E402

from dealer_assist.roundlog import CardDealt, RoundFold, RoundStart  # noqa: E402
from dealer_assist.surveillance import Recorder, RecordingStore  # noqa: E402
from dealer_assist.surveillance.replay import (  # noqa: E402
    RedetectUnavailable,
    replay,
    vision_redetector,
)
from tests.rules.random_rounds import random_round  # noqa: E402


def felt_jpeg(card: str, slot: int, width: int) -> bytes:
    height = width * 9 // 16
    image = np.zeros((height, width, 3), np.uint8)
    image[:] = (40, 110, 30)
    noise = np.random.default_rng(slot).integers(0, 12, (height, width, 1), dtype=np.uint8)
    image += noise  # felt texture, so the JPEG is about as large as a real frame
    x, y = 40 + (slot % 8) * width // 9, height // 2
    cv2.rectangle(image, (x, y), (x + width // 20, y + width // 14), (250, 250, 250), -1)
    cv2.putText(image, card, (x + 4, y + 40), cv2.FONT_HERSHEY_SIMPLEX, 1.0, (0, 0, 200), 2)
    ok, encoded = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, 85])
    assert ok
    return encoded.tobytes()


def record(directory: Path, count: int, width: int) -> tuple[int, int, float]:
    """Record ``count`` rounds; returns (records, frames, seconds)."""
    rng = random.Random(8)
    frames = 0
    start = time.perf_counter()
    with Recorder.open(directory, "B1") as recorder:
        for _ in range(count):
            events = random_round(rng, "h17-ddd-6")
            head = events[0]
            assert isinstance(head, RoundStart)
            fold = RoundFold(head)
            recorder.begin_round(head)
            for slot, event in enumerate(events[1:]):
                index = recorder.event(event)
                fold.apply(event)
                if isinstance(event, CardDealt) and event.card is not None:
                    recorder.frame(felt_jpeg(event.card.code, slot, width),
                                   [{"card": event.card.code, "x": 10.0, "y": 10.0}], index)
                    frames += 1
            assert fold.settlement is not None
            recorder.end_round(fold.settlement)
        records = recorder.store.head()[0]
    return records, frames, time.perf_counter() - start


def decode_only(image: bytes) -> list[str]:
    frame = cv2.imdecode(np.frombuffer(image, np.uint8), cv2.IMREAD_COLOR)
    return [] if frame is None else ["??"]


def timed_replay(directory: Path, redetect: object = None) -> tuple[float, int, int]:
    store = RecordingStore(directory)
    start = time.perf_counter()
    report = replay(store, verify=True, redetect=redetect)  # type: ignore[arg-type]
    seconds = time.perf_counter() - start
    store.close()
    frames = sum(r.frames_checked for r in report.rounds)
    problems = [d for d in report.discrepancies if d.kind != "detection"]
    assert not problems, problems[:3]
    return seconds, len(report.rounds), frames


def show(label: str, rounds: int, seconds: float) -> None:
    rate = rounds / seconds
    print(f"{label}: {rounds} rounds in {seconds:.2f} s = {rate:.0f} rounds/s = "
          f"{rate * 3600 / 200:.0f}x real time at 200 rounds/h, "
          f"{rate * 3600 / 60:.0f}x at 60 rounds/h; a 24 h day at 200 rounds/h "
          f"({24 * 200} rounds) in {24 * 200 / rate / 60:.1f} min")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=120)
    parser.add_argument("--frame-width", type=int, default=1280)
    parser.add_argument("--redetect", action="store_true")
    parser.add_argument("--model", default=None)
    args = parser.parse_args()
    print(f"os.cpu_count() = {os.cpu_count()}; {args.rounds} rounds, "
          f"{args.frame_width}x{args.frame_width * 9 // 16} JPEG key frames")
    with tempfile.TemporaryDirectory() as scratch:
        directory = Path(scratch) / "recording"
        records, frames, seconds = record(directory, args.rounds, args.frame_width)
        size = sum(p.stat().st_size for p in directory.rglob("*") if p.is_file())
        print(f"recording: {records} records ({frames} frames, {size / 1e6:.1f} MB) in "
              f"{seconds:.1f} s = {seconds / records * 1000:.1f} ms per fsync'd append, "
              f"{args.rounds / seconds:.1f} rounds/s")
        seconds, rounds, _ = timed_replay(directory)
        show("replay --verify", rounds, seconds)
        if args.redetect:
            try:
                detector = vision_redetector(args.model)
                label = "replay --verify --redetect"
            except RedetectUnavailable as error:
                print(f"re-detection unavailable here: {error}")
                print("timing JPEG decoding alone (a lower bound: add the model's time per frame)")
                detector, label = decode_only, "replay --verify + JPEG decode of every key frame"
            seconds, rounds, checked = timed_replay(directory, detector)
            show(label, rounds, seconds)
            print(f"  {checked} key frames, {seconds / max(checked, 1) * 1000:.1f} ms per frame")


if __name__ == "__main__":
    main()
