"""Where the shoe knows the card: check the index against that one code instead of naming one of
52, and see apart from it whether a card landed at all.

:func:`verify` gives the reader's probability that the indices at some boxes (one card's, in one
frame or pooled over the frames a tracked card was seen in) show the shoe's code, and a verdict:
``match`` (the reader is sure enough it is that code), ``mismatch`` (every index read is surely
another card: a "switched card" alarm) or ``unsure`` (neither: the table asks, it never alarms
on an unsure reading). :func:`landings` finds the indices at a place that the reader takes for
an index, whatever their code: a card landed there.

    python -m dealer_assist.vision.verify --set held-out --scenes 200
    python -m dealer_assist.vision.verify --set held-out --scenes 60 --frames 10

measures both on rendered scenes, per card with a labelled index: the landing rate, the true
code's verdicts, the verdicts on a wrong code offered instead (a random other card, and the
same rank in the other suit of its colour: clubs for spades, diamonds for hearts, the reader's
commonest confusion), and the naming figures on the same scenes (``evaluate``'s, per card).
With ``--frames K`` each scene is seen in K frames of a fixed camera, and each card is also
scored over them: landed in any frame, its readings over the frames pooled for the verdicts,
its naming as the table's frame tracker holds it after the K frames.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from dealer_assist.vision import options
from dealer_assist.vision.artwork import CARD_CODES, HELD_OUT_DESIGNS, installed_designs
from dealer_assist.vision.detector import (
    DEFAULT_MODEL,
    DEFAULT_READER,
    CardDetector,
    CardObservation,
    ModelError,
)
from dealer_assist.vision.evaluate import (
    MATCH_IOU,
    TRACKER_FRAMES,
    Score,
    box_iou,
    score_scene,
    score_tracked,
)
from dealer_assist.vision.reader import (
    DEFAULT_READING,
    RANK_CLASSES,
    READINGS,
    SUIT_CLASSES,
)
from dealer_assist.vision.scenes import (
    SceneConfig,
    check_card_width,
    parse_frame_size,
    render_frames,
    render_scene,
)
from dealer_assist.vision.tracker import CardTracker
from dealer_assist.vision.verdict import Verdict

#: The least probability of the shoe's code for a match.
ACCEPT = 0.5
#: At most this probability of the shoe's code, with another code read at :data:`SURE_OTHER`
#: or more, for a mismatch.
REJECT = 0.02
SURE_OTHER = 0.7
#: A box is an index (a card is there) when the reader's "not an index" is below this.
INDEX = 0.5
#: The reader's rank class for "not an index".
NOT_AN_INDEX = RANK_CLASSES.index("-")
_COLOUR_MATE = {"S": "C", "C": "S", "H": "D", "D": "H"}
#: Ranks whose index glyphs are each other's half turn. The reader reads an index at every
#: angle, so a 6 and a 9 of one suit are told apart only by where the suit lies beside the
#: rank; a design that prints it otherwise reads one as the other. A reading surely the half-turn
#: twin of the shoe's code is therefore unsure (a question), never a mismatch.
HALF_TURN_TWINS = {"6": "9", "9": "6"}


def half_turn_twin(code: str) -> str | None:
    """The code whose index is ``code``'s turned half round (6 <-> 9 of one suit), if any."""
    twin = HALF_TURN_TWINS.get(code[0])
    return None if twin is None else twin + code[1:]


@dataclass(frozen=True)
class Verification:
    """The reader's probability that the card shows ``code`` (the best over its indices), what
    the reader itself would name (``None``: no index), how sure of that, and the verdict."""

    code: str
    probability: float
    read: str | None
    read_probability: float
    verdict: Verdict

    def to_json(self) -> dict[str, object]:
        return {"code": self.code, "probability": round(self.probability, 4), "read": self.read,
                "read_probability": round(self.read_probability, 4),
                "verdict": self.verdict.value}


def _split(code: str) -> tuple[int, int]:
    if len(code) != 2 or code[0] not in RANK_CLASSES[:-1] or code[1] not in SUIT_CLASSES:
        raise ValueError(f"not a card code: {code!r} (rank A23456789TJQK, suit SHDC)")
    return RANK_CLASSES.index(code[0]), SUIT_CLASSES.index(code[1])


def judge(ranks: np.ndarray, suits: np.ndarray, code: str) -> Verification:
    """The verdict on ``code`` from the reader's probabilities for one card's indices (rows of
    ``ranks`` ``(N, 14)`` and ``suits`` ``(N, 4)``, from one frame or several): a match when
    any index reads ``code`` at :data:`ACCEPT` or more; a mismatch when at least one row is an
    index and every index row gives ``code`` at most :data:`REJECT` and another code at
    :data:`SURE_OTHER` or more, none of them ``code``'s :func:`half_turn_twin`; else unsure."""
    return judge_codes(ranks, suits, (code,))[0]


def judge_codes(ranks: np.ndarray, suits: np.ndarray,
                codes: Sequence[str]) -> list[Verification]:
    """:func:`judge` of each of ``codes`` on the same readings, what they share done once."""
    wanted = [_split(code) for code in codes]
    is_index = ranks[:, NOT_AN_INDEX] < INDEX
    if len(ranks) == 0 or not is_index.any():
        return [Verification(code, 0.0, None, 0.0, Verdict.UNSURE) for code in codes]
    if not is_index.all():
        ranks, suits = ranks[is_index], suits[is_index]
    named = ranks[:, :NOT_AN_INDEX].max(axis=1) * suits.max(axis=1)
    row_reads = _reads(ranks, suits)
    best = int(np.argmax(named))
    read = row_reads[best]
    sure_other = bool((named >= SURE_OTHER).all())
    rank_ids, suit_ids = [r for r, _ in wanted], [s for _, s in wanted]
    probabilities = ranks[:, rank_ids] * suits[:, suit_ids]  # (rows, codes)
    best_probability = probabilities.max(axis=0)
    matched = best_probability >= ACCEPT
    rejected = (probabilities <= REJECT).all(axis=0)
    verdicts = []
    for column, code in enumerate(codes):
        if matched[column]:
            verdict = Verdict.MATCH
        elif rejected[column] and sure_other and half_turn_twin(code) not in row_reads:
            verdict = Verdict.MISMATCH
        else:
            verdict = Verdict.UNSURE
        verdicts.append(Verification(code, float(best_probability[column]), read,
                                     float(named[best]), verdict))
    return verdicts


def _reads(ranks: np.ndarray, suits: np.ndarray) -> list[str]:
    """Each row's likeliest code: its likeliest rank (other than "not an index") and suit."""
    return [RANK_CLASSES[r] + SUIT_CLASSES[s] for r, s in
            zip(ranks[:, :NOT_AN_INDEX].argmax(axis=1).tolist(), suits.argmax(axis=1).tolist(),
                strict=True)]


def mismatched_rows(ranks: np.ndarray, suits: np.ndarray, codes: Sequence[str]) -> np.ndarray:
    """For each row ``i`` of ``ranks`` ``(N, 14)`` and ``suits`` ``(N, 4)``, whether that index
    alone is a mismatch for ``codes[i]`` (its :func:`judge` verdict), all rows at once."""
    if len(codes) != len(ranks):
        raise ValueError(f"{len(ranks)} rows and {len(codes)} codes")
    wanted = [_split(code) for code in codes]
    rows = np.arange(len(ranks))
    probability = ranks[rows, [r for r, _ in wanted]] * suits[rows, [s for _, s in wanted]]
    named = ranks[:, :NOT_AN_INDEX].max(axis=1) * suits.max(axis=1)
    twin = np.array([half_turn_twin(code) == read
                     for code, read in zip(codes, _reads(ranks, suits), strict=True)], bool)
    # a row at REJECT or less is no match (ACCEPT lies above it)
    return np.asarray((ranks[:, NOT_AN_INDEX] < INDEX) & (probability <= REJECT)
                      & (named >= SURE_OTHER) & ~twin.reshape(-1), bool)


def verify(detector: CardDetector, frame: np.ndarray, boxes: np.ndarray | Sequence[
        Sequence[float]], code: str) -> Verification:
    """:func:`judge` of ``code`` on the indices at ``boxes`` (frame pixels) of ``frame``."""
    boxes = np.asarray(boxes, np.float32).reshape(-1, 4)
    if len(boxes) == 0:
        _split(code)
        return Verification(code, 0.0, None, 0.0, Verdict.UNSURE)
    ranks, suits = detector.read_probabilities(frame, boxes)
    return judge(ranks, suits, code)


def verify_observation(detector: CardDetector, frame: np.ndarray,
                       observation: CardObservation, code: str) -> Verification:
    """:func:`verify` on a card the detector reported (its corner boxes), whatever it read."""
    return verify(detector, frame, np.array(observation.index_boxes, np.float32), code)


def landings(detector: CardDetector, frame: np.ndarray,
             place: Sequence[float] | None = None) -> np.ndarray:
    """The index boxes ``(N, 4)`` in ``frame`` the reader takes for an index, whatever their
    code: cards lying there. ``place`` ``(x0, y0, x1, y1)``: only boxes whose centre lies in it."""
    boxes = detector.find_indices(frame)
    if place is not None and len(boxes):
        cx, cy = (boxes[:, 0] + boxes[:, 2]) / 2, (boxes[:, 1] + boxes[:, 3]) / 2
        boxes = boxes[(cx >= place[0]) & (cx <= place[2]) & (cy >= place[1]) & (cy <= place[3])]
    if len(boxes) == 0:
        return boxes
    ranks, _ = detector.read_probabilities(frame, boxes)
    return boxes[ranks[:, NOT_AN_INDEX] < INDEX]


@dataclass
class Tally:
    """Per card with a labelled index: whether it landed, and the verdicts on the true code and
    on two kinds of wrong code; ``naming`` is ``evaluate``'s per-card score on the same scenes."""

    cards: int = 0
    landed: int = 0
    true: Counter[str] = field(default_factory=Counter)
    wrong: Counter[str] = field(default_factory=Counter)
    mate: Counter[str] = field(default_factory=Counter)
    naming: Score = field(default_factory=Score)

    def rate(self, counter: Counter[str], verdict: Verdict) -> float:
        return counter[verdict.value] / self.cards if self.cards else 0.0

    def summary(self) -> str:
        """One line of the figures."""
        return (f"{self.cards} cards; landed {self.landed / max(self.cards, 1):.4f}; true code: "
                f"match {self.rate(self.true, Verdict.MATCH):.4f}, false switched-card "
                f"{self.rate(self.true, Verdict.MISMATCH):.4f}; random wrong code: caught "
                f"{self.rate(self.wrong, Verdict.MISMATCH):.4f}, accepted "
                f"{self.rate(self.wrong, Verdict.MATCH):.4f}; colour mate: caught "
                f"{self.rate(self.mate, Verdict.MISMATCH):.4f}, accepted "
                f"{self.rate(self.mate, Verdict.MATCH):.4f}; naming precision "
                f"{self.naming.precision:.4f} recall {self.naming.recall:.4f}")

    def to_json(self) -> dict[str, object]:
        def part(counter: Counter[str]) -> dict[str, object]:
            return {v.value: counter[v.value] for v in Verdict} | {
                f"{v.value}_rate": round(self.rate(counter, v), 5) for v in Verdict}
        return {"cards": self.cards, "landed": self.landed,
                "landing_rate": round(self.landed / self.cards, 5) if self.cards else 0.0,
                "true_code": part(self.true), "random_wrong_code": part(self.wrong),
                "same_rank_colour_mate": part(self.mate),
                "naming": {"precision": round(self.naming.precision, 5),
                           "recall": round(self.naming.recall, 5),
                           "right": self.naming.true_positives,
                           "false": self.naming.false_positives,
                           "missed": self.naming.false_negatives}}


def measure(detector: CardDetector, designs: list[str], scenes: int, seed: int,
            config: SceneConfig | None = None, frames: int = 1) -> tuple[Tally, Tally | None]:
    """Landing, verification and naming on ``scenes`` rendered scenes of ``designs``, per
    frame; with ``frames`` above 1 each scene is seen in that many frames of a fixed camera
    and the second tally holds each card over them (landed in any frame; verdicts on its
    indices' readings pooled over the frames; naming as the table's frame tracker holds it)."""
    from dealer_assist.vision.artwork import load_designs

    loaded = load_designs(designs)
    rng = np.random.default_rng(seed)
    offers = np.random.default_rng(seed + 1)
    tally, pooled = Tally(), Tally() if frames > 1 else None
    for _ in range(scenes):
        design = loaded[int(rng.integers(len(loaded)))]
        shots = ([render_scene(rng, [design], config)] if frames == 1
                 else render_frames(rng, [design], frames, config))
        labels: dict[int, list[tuple[float, float, float, float]]] = {}
        for label in shots[0].labels:
            labels.setdefault(label.card, []).append(label.box)
        codes = {card: shots[0].cards[card].code for card in labels}
        offered = {card: (code, str(offers.choice([c for c in CARD_CODES if c != code])),
                          code[0] + _COLOUR_MATE[code[1]]) for card, code in codes.items()}
        seen: dict[int, list[tuple[np.ndarray, np.ndarray]]] = {card: [] for card in labels}
        tracker, events = CardTracker(), []
        for number, scene in enumerate(shots):
            found = detector.find_indices(scene.image)
            ranks, suits = (detector.read_probabilities(scene.image, found) if len(found) else
                            (np.zeros((0, len(RANK_CLASSES))), np.zeros((0, len(SUIT_CLASSES)))))
            observations = detector.detect(scene.image)
            score_scene(scene, design.index_boxes, observations, tally.naming)
            events += tracker.update(number, list(observations))
            for card, boxes in labels.items():
                rows = [i for i, box in enumerate(found)
                        if max(box_iou(box, label) for label in boxes) >= MATCH_IOU]
                seen[card].append((ranks[rows], suits[rows]))
                _count(tally, ranks[rows], suits[rows], offered[card])
        if pooled is not None:
            score_tracked(shots[0], events, pooled.naming)
            for card, readings in seen.items():
                _count(pooled, np.concatenate([r for r, _ in readings]),
                       np.concatenate([s for _, s in readings]), offered[card])
    return tally, pooled


def _count(tally: Tally, ranks: np.ndarray, suits: np.ndarray,
           offered: tuple[str, str, str]) -> None:
    """One card's readings into ``tally``: landed or not, the verdict on each code offered
    (its own, a random other, its colour mate)."""
    tally.cards += 1
    tally.landed += bool((ranks[:, NOT_AN_INDEX] < INDEX).any())
    for counter, code in zip((tally.true, tally.wrong, tally.mate), offered, strict=True):
        counter[judge(ranks, suits, code).verdict.value] += 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m dealer_assist.vision.verify",
                                     description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--set", choices=["held-out", "trained"], default="held-out")
    parser.add_argument("--scenes", type=options.SCENES, default=200)
    parser.add_argument("--seed", type=options.SEED, default=1000)
    parser.add_argument("--model", type=options.existing_file, default=DEFAULT_MODEL)
    parser.add_argument("--reader", type=options.existing_file, default=DEFAULT_READER)
    parser.add_argument("--runtime", choices=["onnxruntime", "openvino"], default="onnxruntime")
    parser.add_argument("--reading", choices=READINGS, default=DEFAULT_READING,
                        help="how each found index is read (default %(default)s: as seen and half "
                             "a turn, the quarter turns too where unsure; reader.READINGS)")
    parser.add_argument("--size", default="1280x720", help="frame size WxH")
    parser.add_argument("--frames", type=options.FRAMES, default=1, metavar="K",
                        help="see each scene in K frames of a fixed camera and score each card "
                             "over them as well")
    parser.add_argument("--card-width", type=float, nargs=2, metavar=("LEAST", "MOST"),
                        default=SceneConfig().card_width, help="cards' width in pixels")
    args = parser.parse_args(argv)
    try:
        size = parse_frame_size(args.size)
        width = check_card_width(args.card_width[0], args.card_width[1], size)
    except ValueError as bad:
        parser.error(str(bad))
    if 1 < args.frames < TRACKER_FRAMES:
        parser.error(f"--frames must be 1, or at least {TRACKER_FRAMES} (the frames the tracker "
                     "takes to confirm a card)")
    installed = installed_designs()
    designs = list(HELD_OUT_DESIGNS) if args.set == "held-out" else [
        d for d in installed if d not in HELD_OUT_DESIGNS]
    missing = [d for d in designs if d not in installed]
    if missing or not designs:
        parser.error(f"designs not installed: {', '.join(missing) or 'none trained'} "
                     "(scripts/install-card-art.sh)")
    try:
        detector = CardDetector(args.model, args.reader, runtime=args.runtime,
                                reading=args.reading)
    except ModelError as error:
        parser.error(str(error))
    started = time.time()
    tally, pooled = measure(detector, designs, args.scenes, args.seed,
                            SceneConfig(size=size, card_width=width), args.frames)
    if tally.cards == 0:
        print(f"{parser.prog}: no card with a readable index in {args.scenes} scenes",
              file=sys.stderr)
        return 1
    json.dump({"per_frame": tally.to_json()}
              | ({"over_frames": pooled.to_json()} if pooled is not None else {})
              | {"set": args.set, "scenes": args.scenes, "frames": args.frames,
                 "seed": args.seed, "size": list(size), "card_width": list(width),
                 "model": args.model.name, "reader": args.reader.name, "runtime": args.runtime,
                 "reading": args.reading,
                 "seconds": round(time.time() - started)}, sys.stdout)
    print()
    for label, each in (("per frame", tally), (f"over {args.frames} frames", pooled)):
        if each is not None:
            print(f"{args.set}, {label}: {each.summary()}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
