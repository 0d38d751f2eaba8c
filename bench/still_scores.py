"""How far the detector's score of one index moves between frames of a still felt.

    PYTHONPATH=. python bench/still_scores.py [--deals 40] [--seed 11] [--per-card 10]

Renders ``--deals`` deals of the independent renderer (``dealer_assist.evaluation.render``) at
a table's pace, each card lying ``--per-card`` frames before the next lands, the held-out
designs in turn, and searches every card region of every frame down to the shoe check's faint
presence (``shoe_check.FAINT_PRESENCE``), as the check does where it searches. A frame is
*still* where no card landed in it or in the two before (the check's ``CALM`` searches after a
change) and the renderer streaked neither it nor the frame before (a hand passing, which is not
noise: ``still_regions.LEVEL`` was measured without them). Each box of a still frame is paired
with the box of the next still frame overlapping it most (IoU 0.5 or more). Prints, per band
of a faint box's score (below the detector's presence), how many such boxes the next frame
found at the presence or more, and how many any of the still frames after it did, up to
``still_regions.REUSES`` of them (fewer where the next card lands or a frame is streaked
sooner): what standing a faint box for as long as a still region's boxes stand would hide.
Faint boxes overlapping a box at the presence in their own frame (a second report of that
index) are left out. Also prints how many boxes at the presence a still frame found where the
frame before had no box at all. The scores do not depend on the CPU (the INT8 models read alike
with and without VNNI).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections import Counter
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from machine import cpu_model  # noqa: E402

from dealer_assist.evaluation.artwork import felt_textures, load_deck  # noqa: E402
from dealer_assist.evaluation.render import render_sequence  # noqa: E402
from dealer_assist.evaluation.split import load_split  # noqa: E402
from dealer_assist.vision.detector import DEFAULT_MODEL, BoxOverlaps, CardDetector  # noqa: E402
from dealer_assist.vision.shoe_check import FAINT_PRESENCE  # noqa: E402
from dealer_assist.vision.still_regions import CALM, REUSES  # noqa: E402

#: Lower edges of the faint score bands reported.
BANDS = (FAINT_PRESENCE, 0.06, 0.08, 0.10, 0.12, 0.15, 0.20)
#: Least overlap (IoU) of two boxes taken for one index in consecutive frames.
SAME = 0.5
#: Overlap (IoU) with a box at the presence above which a faint box is a second report of it.
SECOND_REPORT = 0.3


def _ious(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    if len(a) == 0 or len(b) == 0:
        return np.zeros((len(a), len(b)))
    return BoxOverlaps.of(a, b).ious()


def measure(deals: int, seed: int, per_card: int) -> None:
    split = load_split()
    designs = sorted(d for d in split.held_out if split.folder(d).exists())
    if not designs:
        sys.exit("no held-out design installed (scripts/install-card-art.sh)")
    decks = {d: load_deck(split.folder(d)) for d in designs}
    textures = felt_textures()
    detector = CardDetector(DEFAULT_MODEL, threads=1)
    presence = detector.presence
    next_sure: Counter[float] = Counter()
    later_sure: Counter[float] = Counter()
    faint: Counter[float] = Counter()
    sure_boxes = from_nothing = 0
    for number in range(deals):
        design = designs[number % len(designs)]
        seq = render_sequence(decks[design], (seed * 100_003 + number) % 2**32,
                              textures=textures, per_card=per_card)
        landed = {card.arrives for card in seq.cards}
        found = [detector.find_scored(frame, FAINT_PRESENCE) for frame in seq.frames]
        streaked = [blur.startswith("motion") for blur in seq.blur]
        still = [all(t - k not in landed for k in range(CALM + 1)) and not streaked[t]
                 and not (t and streaked[t - 1]) for t in range(len(found))]
        for t in range(len(found) - 1):
            if not (still[t] and still[t + 1]):
                continue
            (boxes, scores), (after, after_scores) = found[t], found[t + 1]
            sure = scores >= presence
            sure_boxes += int((after_scores >= presence).sum())
            from_nothing += int(((after_scores >= presence)
                                 & (_ious(after, boxes).max(axis=1, initial=0) < SAME)).sum())
            second = _ious(boxes, boxes[sure]).max(axis=1, initial=0) > SECOND_REPORT
            for i in np.flatnonzero(~sure & ~second):
                band = max(b for b in BANDS if b <= scores[i] + 1e-6)
                faint[band] += 1
                followed = []
                for u in range(t + 1, min(t + 1 + REUSES, len(found))):
                    if not still[u]:
                        break
                    overlap = _ious(boxes[i:i + 1], found[u][0])[0]
                    best = int(overlap.argmax()) if len(overlap) else -1
                    followed.append(best >= 0 and overlap[best] >= SAME
                                    and found[u][1][best] >= presence)
                next_sure[band] += bool(followed and followed[0])
                later_sure[band] += any(followed)
        print(f"deal {number + 1}/{deals}: {design}, {len(seq.frames)} frames", flush=True)
    print(f"\n{deals} deals of seed {seed}, a card every {per_card} frames; faint boxes "
          f"(under the presence {presence:g}) of a still frame, by score: found at the "
          f"presence in the next frame / in any of the still frames up to {REUSES} after it")
    for k, band in enumerate(BANDS):
        top = BANDS[k + 1] if k + 1 < len(BANDS) else presence
        n = faint[band]
        if n:
            print(f"  {band:.2f}-{top:.2f}: {n:6d} boxes, next frame {next_sure[band]:5d} "
                  f"({100 * next_sure[band] / n:4.1f}%), within {REUSES} "
                  f"{later_sure[band]:5d} ({100 * later_sure[band] / n:4.1f}%)")
    print(f"boxes at the presence in still frames: {sure_boxes}, of them where the frame "
          f"before had no box: {from_nothing} ({100 * from_nothing / max(1, sure_boxes):.2f}%)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--deals", type=int, default=40, choices=range(1, 1001),
                        metavar="1-1000")
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--per-card", type=int, default=10, choices=range(4, 61),
                        metavar="4-60", help="frames each card lies before the next lands")
    args = parser.parse_args()
    print(f"CPU: {cpu_model()}, os.cpu_count() = {os.cpu_count()}")
    measure(args.deals, args.seed, args.per_card)


if __name__ == "__main__":
    main()
