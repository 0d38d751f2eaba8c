"""What checking each card against the shoe costs the camera, against naming it, per frame.

    PYTHONPATH=. python bench/shoe_check.py [--designs anglo kennard] [--rounds 2] [--seed 7]
                                            [--hold 4] [--size 1280x720|3072x1728]
                                            [--reuses K [K ...]]

Renders a scripted deal on the demo's felt (the synthetic camera's seats and card size: each
card shown for ``--hold`` frames, the shoe's code in flight for the first 3, now and then
another card than the shoe says, now and then two codes in flight; then the cleared felt) and
reads every frame both ways with one detector (ONNX Runtime, one thread, as the demo camera runs
it): named (``CardDetector.detect`` then ``CardTracker.update``) and verified
(``ShoeCheck.read`` then ``ShoeCheck.track``), frame by frame in turn, so that other work on the
machine weighs on both alike. Prints each stage's CPU time of its own thread (mean and 95th
percentile a frame): the detect stage runs in the camera's detection pool, frames at once; the
track stage on the camera's thread, one frame after another. The figures leave out rendering
(the same for both). "verified" is the table's check, which also reads the faint places the
detector finds below its presence (``shoe_check.FAINT_PRESENCE``) and keeps the boxes of settled
regions that have not changed, with the readings of their indices read surely as their cards
(``vision.still_regions``); "verified-search" is the same check searching every region of
every frame; "verified-0.25" reads only the places at the detector's
presence, what faint places cost beside it; "verified-reuses-K" (one for each ``--reuses K``) is
the shipped check with a still region's boxes standing at most K frames in a row instead of
``still_regions.REUSES``. The other checks' events are each compared with verified-search's
("the same", or how many differ). Frames are JPEG-coded as a camera
delivers them and decoded once each (the decoding's time printed apart: JPEG to cards is
decoding plus a check's "both").
For the shipped check ("verified") it also prints where its detect stage's time went, in wall
time (the detector's own stage times; the stage figures above are CPU time, so the two need not
add up): finding card regions, comparing still regions with their last search, remembering
searched ones and letterboxing; the detector's inference; turning its output into boxes; and
the rest, mostly reading the indices (cropping, the reader's inference, pooling its turns) with
the check's own bookkeeping.
``--hold`` sets how many frames each card is shown (4; a card a second at 30 frames/s is 30).
``--size 3072x1728`` deals all seven seats on the demo's felt spread over a 3072x1728 frame, the
cards keeping their 80 px (``VirtualTable(scale=2.4)``: a camera over a whole felt); the default
is the demo's 1280x720 view of its played seats. The deal's JPEGs are held in memory, about 1 MB
a 3K frame (a round at ``--hold 30``: 0.5 GB).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import cv2
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from machine import cpu_model  # noqa: E402

from dealer_assist.rules import Card, CardTarget  # noqa: E402
from dealer_assist.table.simulation.synthetic_camera import (  # noqa: E402
    ALL_SEATS,
    FRAME_SIZE,
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
from dealer_assist.vision.still_regions import StillRegions  # noqa: E402
from dealer_assist.vision.tracker import CardTracker  # noqa: E402

#: How the frames are JPEG-coded, as a camera's Motion JPEG delivers them.
JPEG_QUALITY = 90
#: Each ``--size``: the virtual table, its seats dealt (all seven on a whole felt at 3K).
VIEWS = {"{}x{}".format(*table.frame_size): table
         for table in (VirtualTable(PLAYED_SEATS), VirtualTable(ALL_SEATS, scale=2.4))}


def scripted_frames(design_name: str, rounds: int, seed: int, hold: int, table: VirtualTable,
                    ) -> Iterator[tuple[np.ndarray, tuple[str, ...]]]:
    """The deal's frames, each with the shoe's codes in flight while it was grabbed."""
    rng = np.random.default_rng(seed)
    felt = SyntheticFelt(load_designs([design_name])[0], table, seed=5)
    seats = table.seats
    spots = ([CardTarget(s, 0) for s in seats] + [DEALER_SPOT]
             + [CardTarget(s, 0) for s in seats]
             + [CardTarget(s, 0) for s in seats[:2]])
    for _ in range(rounds):
        for k, spot in enumerate(spots):
            code = str(rng.choice(CARD_CODES))
            shown = str(rng.choice(CARD_CODES)) if k % 5 == 4 else code
            felt.show(FeltCard(Card.parse(shown), spot))
            for f in range(hold):
                flight: tuple[str, ...] = (code,) if f < 3 else ()
                if f == 0 and k % 3 == 2:
                    flight = (code, str(rng.choice(CARD_CODES)))
                yield felt.render().image, flight
        felt.show(FinishRound())
        for _ in range(8):
            yield felt.render().image, ()


def measure(design_name: str, rounds: int, seed: int, hold: int, table: VirtualTable,
            reuses: list[int]) -> None:
    frames = [(cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, JPEG_QUALITY])[1], flight)
              for image, flight in scripted_frames(design_name, rounds, seed, hold, table)]
    detector = CardDetector(DEFAULT_MODEL, threads=1)
    for jpeg, _ in frames[:3]:
        detector.detect(cv2.imdecode(jpeg, cv2.IMREAD_COLOR))  # warm
    def tracker() -> CardTracker:  # the demo camera's
        return CardTracker(stable_frames=2, grace_frames=6)

    named = tracker()
    checks = {"verified": ShoeCheck(detector, tracker()),
              "verified-search": ShoeCheck(detector, tracker(), still=False),
              f"verified-{detector.presence:g}": ShoeCheck(
                  detector, tracker(), faint_presence=detector.presence),
              **{f"verified-reuses-{k}": ShoeCheck(detector, tracker(),
                                                   still=StillRegions(reuses=k))
                 for k in reuses}}
    times: dict[str, tuple[list[float], list[float]]] = {
        name: ([], []) for name in ("named", *checks)}
    reported: dict[str, list[tuple[int, str, str, str | None]]] = {name: [] for name in checks}
    decode: list[float] = []
    parts: list[tuple[float, float, float, float]] = []  # the shipped check's, ms a frame
    for number, (jpeg, flight) in enumerate(frames, 1):
        started = time.thread_time()
        image = cv2.imdecode(jpeg, cv2.IMREAD_COLOR)
        decode.append(time.thread_time() - started)
        started = time.thread_time()
        observations = detector.detect(image)
        detected = time.thread_time()
        named.update(number, observations)
        times["named"][0].append(detected - started)
        times["named"][1].append(time.thread_time() - detected)
        for name, check in checks.items():
            check.expect(flight)
            started, wall = time.thread_time(), time.perf_counter()
            reading = check.read(image)
            detected, wall = time.thread_time(), time.perf_counter() - wall
            if name == "verified":
                stages = detector.last_times
                parts.append((stages.preprocess, stages.inference, stages.postprocess,
                              1e3 * wall - stages.preprocess - stages.inference
                              - stages.postprocess))
            reported[name] += [(e.frame, e.kind.value, e.card, e.verdict)
                               for e in check.track(number, reading)]
            times[name][0].append(detected - started)
            times[name][1].append(time.thread_time() - detected)
    size = cv2.imdecode(frames[0][0], cv2.IMREAD_COLOR).shape
    print(f"deck {design_name}, {size[1]}x{size[0]} JPEG at quality {JPEG_QUALITY}, seats "
          f"{','.join(map(str, table.seats))}: decoding {_ms(decode)}")
    width = max(map(len, times))
    for name, (detect, track) in times.items():
        both = [d + t for d, t in zip(detect, track, strict=True)]
        same = "" if name in ("named", "verified-search") else \
            "; events as verified-search's: " + _agreement(reported[name],
                                                           reported["verified-search"])
        print(f"deck {design_name}, {name:{width}s} ({len(frames)} frames): detect stage "
              f"{_ms(detect)}, track stage {_ms(track)}, both {_ms(both)}{same}")
    regions, inference, boxes, reading = (statistics.mean(p) for p in zip(*parts, strict=True))
    print(f"deck {design_name}, verified's detect stage, wall ms a frame: regions, still "
          f"regions and letterboxing {regions:.2f}, detector inference {inference:.2f}, boxes "
          f"{boxes:.2f}, the rest (reading the indices) {reading:.2f}")


def _agreement(events: list[tuple[int, str, str, str | None]],
               other: list[tuple[int, str, str, str | None]]) -> str:
    """"the same" or how many of either's (frame, kind, card, verdict) the other lacks."""
    if events == other:
        return "the same"
    return f"{len(set(events) ^ set(other))} of {len(events)} + {len(other)} differ"


def _ms(values: list[float]) -> str:
    p95 = sorted(values)[min(len(values) - 1, round(0.95 * (len(values) - 1)))]
    return f"{1e3 * statistics.mean(values):.2f} ms (p95 {1e3 * p95:.2f})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--designs", nargs="+", default=["anglo", "kennard"])
    parser.add_argument("--rounds", type=int, choices=range(1, 11), default=2, metavar="1-10")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--hold", type=int, choices=range(4, 61), default=4, metavar="4-60",
                        help="frames each card is shown before the next lands (default 4; a "
                             "card a second at 30 frames/s: 30)")
    parser.add_argument("--size", choices=VIEWS, default="{}x{}".format(*FRAME_SIZE),
                        help="the frame: the demo's view of its played seats (default), or all "
                             "seven seats spread over a 3K frame, cards still 80 px")
    parser.add_argument("--reuses", type=int, nargs="+", default=[], choices=range(1, 31),
                        metavar="1-30", help="also run the check with still regions' boxes "
                                             "standing at most K frames in a row, for each K")
    args = parser.parse_args()
    missing = [d for d in args.designs if d not in installed_designs()]
    if missing:
        parser.error(f"designs not installed: {', '.join(missing)} (scripts/install-card-art.sh)")
    print(f"CPU: {cpu_model()}, os.cpu_count() = {os.cpu_count()}")
    for design in args.designs:
        measure(design, args.rounds, args.seed, args.hold, VIEWS[args.size], args.reuses)


if __name__ == "__main__":
    main()
