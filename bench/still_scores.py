"""How often noise lifts a faint index box of a still felt to the detector's presence.

    PYTHONPATH=. python bench/still_scores.py [--deals 40] [--seed 11] [--per-card 10]

Renders ``--deals`` deals of the independent renderer (``dealer_assist.evaluation.render``), the
held-out designs in turn, each card lying ``--per-card`` frames before the next lands, and
searches every card region of every frame down to the shoe check's faint presence
(``shoe_check.FAINT_PRESENCE``). A frame is *still* where no card landed in it or the ``CALM``
frames before and neither it nor the frame before is streaked (a hand passing is not noise).
Each faint box of a still frame (under the presence, and not a second report of a box at the
presence) is read as the check reads it and followed into the still frames after it, up to
``still_regions.REUSES`` of them and the next landing or streak: printed per band of its score,
how many the next frame found at the presence (a box overlapping it at IoU 0.5 or more) and how
many any of those frames did. Boxes read as no index are printed apart (they never hold a
region searched), and of those read as an index, the ones centred on a card's index.
Counts are of box-frames: one faint spot counts in every still frame it is found in.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
from collections import Counter
from pathlib import Path

import cv2
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from machine import cpu_model  # noqa: E402

from dealer_assist.evaluation.artwork import felt_textures, load_deck  # noqa: E402
from dealer_assist.evaluation.render import Sequence, render_sequence  # noqa: E402
from dealer_assist.evaluation.split import load_split  # noqa: E402
from dealer_assist.vision.detector import DEFAULT_MODEL, BoxOverlaps, CardDetector  # noqa: E402
from dealer_assist.vision.shoe_check import FAINT_PRESENCE  # noqa: E402
from dealer_assist.vision.still_regions import CALM, REUSES  # noqa: E402
from dealer_assist.vision.verify import INDEX, NOT_AN_INDEX  # noqa: E402

#: Lower edges of the faint score bands reported.
BANDS = (FAINT_PRESENCE, 0.06, 0.08, 0.10, 0.12, 0.15, 0.20)
#: Least overlap (IoU) of two boxes taken for one index in different frames.
SAME = 0.5
#: Overlap (IoU) with a box at the presence above which a faint box is a second report of it.
SECOND_REPORT = 0.3
GROUPS = ("read as an index", "  of them on a card's index", "read as no index")


def _on_an_index(seq: Sequence, frame: int, x: float, y: float) -> bool:
    """``(x, y)`` lies on an index of the topmost card there in ``frame``, a card with an index
    showing (:meth:`TrueCard.visible`)."""
    under = [card for card, distance in seq.distances_at(x, y, frame) if distance >= 0]
    return bool(under) and under[-1].visible(frame) and any(
        cv2.pointPolygonTest(quad.astype(np.float32), (x, y), False) >= 0
        for quad in under[-1].index_quads)


def measure(deals: int, seed: int, per_card: int) -> None:
    split = load_split()
    designs = sorted(d for d in split.held_out if split.folder(d).exists())
    if not designs:
        sys.exit("no held-out design installed (scripts/install-card-art.sh)")
    decks = {d: load_deck(split.folder(d)) for d in designs}
    textures = felt_textures()
    detector = CardDetector(DEFAULT_MODEL, threads=1)
    presence = detector.presence
    faint: Counter[tuple[str, float]] = Counter()
    next_sure: Counter[tuple[str, float]] = Counter()
    later_sure: Counter[tuple[str, float]] = Counter()
    windows: list[int] = []
    sure_boxes = unheralded = 0
    for number in range(deals):
        design = designs[number % len(designs)]
        seq = render_sequence(decks[design], (seed * 100_003 + number) % 2**32,
                              textures=textures, per_card=per_card)
        landed = {card.arrives for card in seq.cards}
        streaked = [blur.startswith("motion") for blur in seq.blur]
        found = [detector.find_scored(frame, FAINT_PRESENCE) for frame in seq.frames]
        still = [all(t - k not in landed for k in range(CALM + 1)) and not streaked[t]
                 and not (t and streaked[t - 1]) for t in range(len(found))]
        for t in range(len(found) - 1):
            if not (still[t] and still[t + 1]):
                continue
            (boxes, scores), (after, after_scores) = found[t], found[t + 1]
            sure, sure_after = scores >= presence, after_scores >= presence
            heralded = BoxOverlaps.of(after, boxes).ious().max(axis=1, initial=0) >= SAME
            sure_boxes += int(sure_after.sum())
            unheralded += int((sure_after & ~heralded).sum())
            overlap = BoxOverlaps.of(boxes, boxes[sure]).ious().max(axis=1, initial=0)
            second = overlap > SECOND_REPORT
            rows = np.flatnonzero(~sure & ~second)
            if len(rows) == 0:
                continue
            ranks, _ = detector.read_probabilities(seq.frames[t], boxes[rows])
            window = []
            for u in range(t + 1, min(t + 1 + REUSES, len(found))):
                if not still[u]:
                    break
                window.append(u)
            # per window frame, which of the rows it found at the presence
            sure_in = np.array([((BoxOverlaps.of(boxes[rows], found[u][0]).ious() >= SAME)
                                 & (found[u][1] >= presence)).any(axis=1) for u in window])
            for k, (i, is_index) in enumerate(zip(
                    rows, (ranks[:, NOT_AN_INDEX] < INDEX).tolist(), strict=True)):
                band = max(b for b in BANDS if b <= scores[i] + 1e-6)
                followed = sure_in[:, k].tolist()
                groups = [GROUPS[2]]
                if is_index:
                    x, y = (boxes[i, :2] + boxes[i, 2:]) / 2
                    groups = [GROUPS[0]] + \
                        ([GROUPS[1]] if _on_an_index(seq, t, float(x), float(y)) else [])
                for group in groups:
                    faint[group, band] += 1
                    next_sure[group, band] += followed[0]
                    later_sure[group, band] += any(followed)
                windows.append(len(window))
        print(f"deal {number + 1}/{deals}: {design}, {len(seq.frames)} frames", flush=True)
    print(f"\n{deals} deals of seed {seed}, a card every {per_card} frames. Faint boxes (under "
          f"the presence {presence:g}) of a still frame, by score: found at the presence in "
          f"the next frame / in any of the still frames after it (up to {REUSES}; "
          f"{statistics.mean(windows or [0]):.1f} on average, at most {max(windows or [0])})")
    for group in GROUPS:
        print(group)
        for k, band in enumerate(BANDS):
            top = BANDS[k + 1] if k + 1 < len(BANDS) else presence
            n = faint[group, band]
            if n:
                print(f"  {band:.2f}-{top:.2f}: {n:6d} boxes, next frame "
                      f"{next_sure[group, band]:5d} ({100 * next_sure[group, band] / n:4.1f}%), "
                      f"later {later_sure[group, band]:5d} "
                      f"({100 * later_sure[group, band] / n:4.1f}%)")
    print(f"boxes at the presence in still frames: {sure_boxes}, of them with no box of the "
          f"frame before overlapping them (IoU {SAME} or more): {unheralded} "
          f"({100 * unheralded / max(1, sure_boxes):.2f}%)")


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
