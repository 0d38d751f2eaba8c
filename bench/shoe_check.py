"""What checking each card against the shoe costs the camera, against naming it, per frame.

    PYTHONPATH=. python bench/shoe_check.py [--designs anglo kennard] [--rounds 2] [--seed 7]

Renders a scripted deal on the demo's felt (the synthetic camera's seats and card size: each
card shown for 4 frames, the shoe's code in flight for the first 3, now and then another card
than the shoe says, now and then two codes in flight; then the cleared felt) and reads every
frame both ways with one detector (ONNX Runtime, one thread, as the demo camera runs it):
named (``CardDetector.detect`` then ``CardTracker.update``) and verified (``ShoeCheck.read``
then ``ShoeCheck.track``), frame by frame in turn, so that other work on the machine weighs on
both alike. Prints each stage's CPU time of its own thread (mean and 95th percentile a frame):
the detect stage runs in the camera's detection pool, frames at once; the track stage on the
camera's thread, one frame after another. The figures leave out rendering (the same for both).
"verified" is the table's check, which also reads the faint places the detector finds below its
presence (``shoe_check.FAINT_PRESENCE``); "verified-0.25" reads only the places at the
detector's presence, what faint places cost beside it.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from machine import cpu_model  # noqa: E402

from dealer_assist.rules import Card, CardTarget  # noqa: E402
from dealer_assist.table.simulation.synthetic_camera import (  # noqa: E402
    PLAYED_SEATS,
    SyntheticFelt,
    VirtualTable,
)
from dealer_assist.table.sources import DEALER_SPOT, FeltCard, FinishRound  # noqa: E402
from dealer_assist.vision.artwork import (  # noqa: E402
    CARD_CODES,
    installed_designs,
    load_designs,
)
from dealer_assist.vision.detector import DEFAULT_MODEL, CardDetector  # noqa: E402
from dealer_assist.vision.shoe_check import ShoeCheck  # noqa: E402
from dealer_assist.vision.tracker import CardTracker  # noqa: E402


def scripted_frames(design_name: str, rounds: int, seed: int) -> list[tuple[np.ndarray,
                                                                          tuple[str, ...]]]:
    """The deal's frames, each with the shoe's codes in flight while it was grabbed."""
    rng = np.random.default_rng(seed)
    felt = SyntheticFelt(load_designs([design_name])[0], VirtualTable(PLAYED_SEATS), seed=5)
    spots = ([CardTarget(s, 0) for s in PLAYED_SEATS] + [DEALER_SPOT]
             + [CardTarget(s, 0) for s in PLAYED_SEATS]
             + [CardTarget(s, 0) for s in PLAYED_SEATS[:2]])
    frames = []
    for _ in range(rounds):
        for k, spot in enumerate(spots):
            code = str(rng.choice(CARD_CODES))
            shown = str(rng.choice(CARD_CODES)) if k % 5 == 4 else code
            felt.show(FeltCard(Card.parse(shown), spot))
            for f in range(4):
                flight: tuple[str, ...] = (code,) if f < 3 else ()
                if f == 0 and k % 3 == 2:
                    flight = (code, str(rng.choice(CARD_CODES)))
                frames.append((felt.render().image, flight))
        felt.show(FinishRound())
        frames += [(felt.render().image, ()) for _ in range(8)]
    return frames


def measure(design_name: str, rounds: int, seed: int) -> None:
    frames = scripted_frames(design_name, rounds, seed)
    detector = CardDetector(DEFAULT_MODEL, threads=1)
    for image, _ in frames[:3]:
        detector.detect(image)  # warm
    named = CardTracker(stable_frames=2, grace_frames=6)
    checks = {"verified": ShoeCheck(detector, CardTracker(stable_frames=2, grace_frames=6)),
              f"verified-{detector.presence:g}": ShoeCheck(
                  detector, CardTracker(stable_frames=2, grace_frames=6),
                  faint_presence=detector.presence)}
    times: dict[str, tuple[list[float], list[float]]] = {
        name: ([], []) for name in ("named", *checks)}
    for number, (image, flight) in enumerate(frames, 1):
        started = time.thread_time()
        observations = detector.detect(image)
        detected = time.thread_time()
        named.update(number, observations)
        times["named"][0].append(detected - started)
        times["named"][1].append(time.thread_time() - detected)
        for name, check in checks.items():
            check.expect(flight)
            started = time.thread_time()
            reading = check.read(image)
            detected = time.thread_time()
            check.track(number, reading)
            times[name][0].append(detected - started)
            times[name][1].append(time.thread_time() - detected)
    for name, (detect, track) in times.items():
        both = [d + t for d, t in zip(detect, track, strict=True)]
        print(f"deck {design_name}, {name:13s} ({len(frames)} frames): detect stage "
              f"{_ms(detect)}, track stage {_ms(track)}, both {_ms(both)}")


def _ms(values: list[float]) -> str:
    p95 = sorted(values)[min(len(values) - 1, round(0.95 * (len(values) - 1)))]
    return f"{1e3 * statistics.mean(values):.2f} ms (p95 {1e3 * p95:.2f})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--designs", nargs="+", default=["anglo", "kennard"])
    parser.add_argument("--rounds", type=int, choices=range(1, 11), default=2, metavar="1-10")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    missing = [d for d in args.designs if d not in installed_designs()]
    if missing:
        parser.error(f"designs not installed: {', '.join(missing)} (scripts/install-card-art.sh)")
    print(f"CPU: {cpu_model()}, os.cpu_count() = {os.cpu_count()}")
    for design in args.designs:
        measure(design, args.rounds, args.seed)


if __name__ == "__main__":
    main()
