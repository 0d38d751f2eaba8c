"""Scoring the detector per physical card on rendered 1280x720 scenes with exact answers.

    python -m dealer_assist.vision.evaluate --set held-out --scenes 200
    python -m dealer_assist.vision.evaluate --set trained --scenes 200
    python -m dealer_assist.vision.evaluate --runtime openvino [--own-shapes]

``--runtime`` scores the files that runtime runs at the table (ONNX Runtime: INT8; OpenVINO:
float, its card regions padded to fixed shapes unless ``--own-shapes``).

A ground-truth card is one with at least one visible corner index. An observation is matched to
a card through its index boxes (IoU >= 0.3 with one of that card's index boxes). It counts as
correct if its code is the card's and the card was not already claimed; a second observation of
one card, a wrong code, or an observation on nothing are false positives. An observation of a
card whose only indices were too covered to be labelled is ignored (neither right nor wrong).

Scores are also given by design and by the camera blur drawn for each frame (none, gaussian
softer or harder than a sigma of 0.7 px, or a motion streak 3, 4 or 5 px long).

``--misses`` also says why each missed card was missed: for each of its visible indices, whether
the detector found no box there, the reader read the box as "not an index", read it right but
below the confidence, or read it as another card (sure or not).

``--frames K`` scores what the table does with a card that lies still: each scene is seen in K
frames by a fixed camera (its light, blur and JPEG quality drawn once, the sensor noise drawn for
each frame), each frame is scored as above, and the frames' cards also go through the table's
frame tracker (:class:`~dealer_assist.vision.tracker.CardTracker` with its defaults). The cards
the tracker holds after the K frames are scored as "tracked": a card is found when a held card's
point lies on it with its code; a held card on another card's place, read as another code, a
second one on one card or on no card is false.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import cv2
import numpy as np

from dealer_assist.vision import options
from dealer_assist.vision import runtime as runtimes
from dealer_assist.vision.artwork import (
    CARD_CODES,
    HELD_OUT_DESIGNS,
    ArtworkError,
    installed_designs,
    load_design,
    load_designs,
)
from dealer_assist.vision.detector import (
    DEFAULT_CONFIDENCE,
    MODELS_DIR,
    CardDetector,
    CardObservation,
    Detections,
    ModelError,
)
from dealer_assist.vision.reader import DEFAULT_READING, READINGS
from dealer_assist.vision.scenes import (
    Blur,
    Scene,
    SceneConfig,
    check_card_width,
    index_quads,
    parse_frame_size,
    render_frames,
    render_scene,
)
from dealer_assist.vision.tracker import CardEvent, CardTracker, EventKind

MATCH_IOU = 0.3
#: Frames the table's tracker (its defaults) takes to confirm a card: the fewest ``--frames``
#: above 1 that can show one.
TRACKER_FRAMES = CardTracker().stable_frames
#: Why one visible index of a missed card gave no right observation (see :func:`miss_causes`).
UNFOUND, NOT_AN_INDEX, UNSURE, MISREAD = ("unfound", "not an index", "below confidence",
                                          "misread")


@dataclass
class Score:
    """Running tally over scenes; ``confusions`` counts (true code, read code) for wrong reads,
    ``by_design`` and ``by_blur`` hold the same tally for each design's scenes and for each
    band of camera blur (:func:`blur_band`)."""

    true_positives: int = 0
    false_positives: int = 0
    false_negatives: int = 0
    ignored: int = 0
    indices: int = 0
    indices_found: int = 0
    confusions: Counter[tuple[str, str]] = field(default_factory=Counter)
    by_design: dict[str, Score] = field(default_factory=dict)
    by_blur: dict[str, Score] = field(default_factory=dict)
    #: missed cards by the causes of their indices (only when the evaluation explains misses)
    misses: Counter[tuple[str, ...]] = field(default_factory=Counter)
    #: what the frame tracker held after each scene's frames (only with several frames a scene)
    tracked: Score | None = None

    @property
    def precision(self) -> float:
        found = self.true_positives + self.false_positives
        return self.true_positives / found if found else 1.0

    @property
    def recall(self) -> float:
        present = self.true_positives + self.false_negatives
        return self.true_positives / present if present else 1.0

    @property
    def index_recall(self) -> float:
        """Share of visible corner indices the detector found (before reading)."""
        return self.indices_found / self.indices if self.indices else 1.0

    def rank_confusion(self) -> Counter[tuple[str, str]]:
        """(true rank, read rank) counts over the wrong reads whose rank is wrong."""
        return self._confusion(0)

    def suit_confusion(self) -> Counter[tuple[str, str]]:
        """(true suit, read suit) counts over the wrong reads whose suit is wrong."""
        return self._confusion(1)

    def _confusion(self, part: int) -> Counter[tuple[str, str]]:
        out: Counter[tuple[str, str]] = Counter()
        for (truth, read), n in self.confusions.items():
            if truth[part] != read[part]:
                out[(truth[part], read[part])] += n
        return out


#: The bands :func:`blur_band` sorts frames into, from sharp to smeared.
BLUR_BANDS = ("none", "gaussian <= 0.7 px", "gaussian > 0.7 px", "motion 3 px", "motion 4 px",
              "motion 5 px")


def blur_band(blur: Blur) -> str:
    """Which of ``BLUR_BANDS`` a frame's camera blur falls in (a longer streak than 5 px counts
    as 5)."""
    if blur.kind == "gaussian":
        return BLUR_BANDS[1] if blur.size <= 0.7 else BLUR_BANDS[2]
    if blur.kind == "motion":
        return f"motion {min(max(round(blur.size), 3), 5)} px"
    return BLUR_BANDS[0]


def box_iou(a: Sequence[float], b: Sequence[float]) -> float:
    """Intersection over union of two boxes ``(x0, y0, x1, y1)``."""
    ix = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
    iy = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
    inter = ix * iy
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter
    return inter / union if union > 0 else 0.0


def score_scene(
    scene: Scene, index_boxes: dict[str, tuple[float, float, float, float]],
    observations: list[CardObservation], score: Score,
) -> set[int]:
    """Add one scene's outcome to ``score``; return the cards (numbers in ``scene.cards``)
    found right. ``index_boxes`` is the scene design's boxes."""
    labelled = {lab.card for lab in scene.labels}
    label_boxes = [(lab.box, lab.card) for lab in scene.labels]
    hidden_boxes = []  # every index of every card, covered or not, for the "ignored" rule
    for k, card in enumerate(scene.cards):
        for quad in index_quads(card, index_boxes[card.code]):
            hidden_boxes.append(((float(quad[:, 0].min()), float(quad[:, 1].min()),
                                  float(quad[:, 0].max()), float(quad[:, 1].max())), k))
    claimed: set[int] = set()
    for obs in observations:
        match = _best(obs, label_boxes)
        if match is None:
            loose = _best(obs, hidden_boxes)
            if loose is not None and scene.cards[loose].code == obs.card:
                score.ignored += 1
            else:
                score.false_positives += 1
            continue
        truth = scene.cards[match].code
        if truth != obs.card:
            score.false_positives += 1
            score.confusions[(truth, obs.card)] += 1
        elif match in claimed:
            score.false_positives += 1
        else:
            claimed.add(match)
            score.true_positives += 1
    score.false_negatives += len(labelled - claimed)
    return claimed


def score_tracked(scene: Scene, events: Sequence[CardEvent], score: Score) -> None:
    """Add to ``score`` the cards the frame tracker holds after ``events`` (a track's code is its
    last: appeared, or changed since), each matched to the card its point lies on: one with its
    code if there is one, else the card on top there."""
    held: dict[int, tuple[str, float, float]] = {}
    for event in events:
        if event.kind is EventKind.REMOVED:
            held.pop(event.track, None)
        else:
            held[event.track] = (event.card, event.x, event.y)
    labelled = {lab.card for lab in scene.labels}
    claimed: set[int] = set()
    for code, x, y in held.values():
        under = [k for k, card in enumerate(scene.cards)
                 if cv2.pointPolygonTest(card.corners.astype(np.float32), (x, y), False) >= 0]
        same = [k for k in under if scene.cards[k].code == code]
        if not under:
            score.false_positives += 1
            continue
        card = same[-1] if same else under[-1]  # later cards lie on top
        truth = scene.cards[card].code
        if truth != code:
            score.false_positives += 1
            score.confusions[(truth, code)] += 1
        elif card in claimed:
            score.false_positives += 1
        elif card not in labelled:
            score.ignored += 1  # its indices too covered to be labelled: neither right nor wrong
        else:
            claimed.add(card)
            score.true_positives += 1
    score.false_negatives += len(labelled - claimed)


def miss_causes(scene: Scene, claimed: set[int], found: np.ndarray,
                readings: Detections) -> Counter[tuple[str, ...]]:
    """Why each labelled card not in ``claimed`` was missed: one sorted tuple per card, a cause
    per visible index (:data:`UNFOUND`, :data:`NOT_AN_INDEX`, :data:`UNSURE`, :data:`MISREAD`).

    ``found`` is the detector's boxes (``(N, 4)``); ``readings`` those boxes read at confidence 0
    (every box the reader took for an index, however unsure)."""
    causes: dict[int, list[str]] = {}
    for lab in scene.labels:
        if lab.card in claimed:
            continue
        read = _best_box(lab.box, readings.boxes)
        if read is not None:
            code = CARD_CODES[int(readings.class_ids[read])]
            cause = UNSURE if code == scene.cards[lab.card].code else MISREAD
        else:
            cause = NOT_AN_INDEX if _best_box(lab.box, found) is not None else UNFOUND
        causes.setdefault(lab.card, []).append(cause)
    return Counter(tuple(sorted(c)) for c in causes.values())


def _best_box(box: tuple[float, ...], boxes: np.ndarray) -> int | None:
    ious = [box_iou(box, tuple(float(v) for v in b)) for b in boxes]
    return int(np.argmax(ious)) if ious and max(ious) >= MATCH_IOU else None


def _best(obs: CardObservation, boxes: Sequence[tuple[tuple[float, ...], int]]) -> int | None:
    best, best_iou = None, MATCH_IOU
    for ob in obs.index_boxes:
        for box, card in boxes:
            iou = box_iou(ob, box)
            if iou >= best_iou:
                best, best_iou = card, iou
    return best


def evaluate(detector: CardDetector, designs: list[str], scenes: int, seed: int,
             explain_misses: bool = False, config: SceneConfig | None = None,
             frames: int = 1, progress: Callable[[str], None] | None = None) -> Score:
    """Render ``scenes`` scenes from ``designs`` (seeded) and score the detector on them;
    ``explain_misses`` also tallies :func:`miss_causes` (reading every index a second time);
    ``config`` changes the scenes (e.g. the cards' size in pixels) from the generator's defaults.
    With ``frames`` above 1 each scene is seen in that many frames of a fixed camera, every frame
    scored, and the tracker's cards after them scored in ``tracked`` (:func:`score_tracked`);
    fewer frames than the tracker takes to confirm a card (:data:`TRACKER_FRAMES`) are refused.

    A design is an installed design's name or a folder of 52 faces (an enrolled deck).
    ``progress`` is told after every tenth of the scenes (and the last) how far the run is."""
    if 1 < frames < TRACKER_FRAMES:
        raise ValueError(f"frames must be 1, or at least {TRACKER_FRAMES} (the frames the "
                         f"tracker takes to confirm a card), got {frames}")
    loaded = [load_design(Path(d)) if Path(d).is_dir() else load_designs([d])[0]
              for d in designs]
    rng = np.random.default_rng(seed)
    score = Score(tracked=Score() if frames > 1 else None)
    started = time.monotonic()
    step = max(1, scenes // 10)
    for done in range(1, scenes + 1):
        design = loaded[int(rng.integers(len(loaded)))]
        shots = ([render_scene(rng, [design], config)] if frames == 1
                 else render_frames(rng, [design], frames, config))
        tracker = CardTracker() if frames > 1 else None
        events: list[CardEvent] = []
        for number, scene in enumerate(shots):
            found = detector.find_indices(scene.image)
            found_labels = sum(_best_box(lab.box, found) is not None for lab in scene.labels)
            observations = detector.detect(scene.image)
            for tally in (score, score.by_design.setdefault(design.name, Score()),
                          score.by_blur.setdefault(blur_band(scene.blur), Score())):
                tally.indices += len(scene.labels)
                tally.indices_found += found_labels
                claimed = score_scene(scene, design.index_boxes, observations, tally)
            if explain_misses:
                readings = detector.read(scene.image, found, confidence=0.0)
                score.misses += miss_causes(scene, claimed, found, readings)
            if tracker is not None:
                events += tracker.update(number, list(observations))
        if score.tracked is not None:
            score_tracked(shots[0], events, score.tracked)
        if progress is not None and (done % step == 0 or done == scenes):
            progress(f"scored {done} of {scenes} scenes in {time.monotonic() - started:.0f} s")
    return score


def report(name: str, score: Score) -> dict[str, object]:
    """A JSON-able summary of a score."""
    return {
        "set": name, "precision": round(score.precision, 4), "recall": round(score.recall, 4),
        "true_positives": score.true_positives, "false_positives": score.false_positives,
        "false_negatives": score.false_negatives, "ignored_partly_hidden": score.ignored,
        "detector_index_recall": round(score.index_recall, 4),
        "wrong_reads": sum(score.confusions.values()),
        "rank_confusion": {f"{t}->{r}": n for (t, r), n in score.rank_confusion().most_common()},
        "suit_confusion": {f"{t}->{r}": n for (t, r), n in score.suit_confusion().most_common()},
        "by_design": {design: {"precision": round(s.precision, 4), "recall": round(s.recall, 4),
                               "wrong_reads": sum(s.confusions.values())}
                      for design, s in sorted(score.by_design.items())},
        "by_blur": {band: _band_summary(score.by_blur[band])
                    for band in BLUR_BANDS if band in score.by_blur},
    } | ({"misses": {_miss_name(causes): n for causes, n in score.misses.most_common()}}
         if score.misses else {}) | ({"tracked": _band_summary(score.tracked)
                                     | {"wrong_reads": sum(score.tracked.confusions.values())}}
                                    if score.tracked is not None else {})


def _band_summary(score: Score) -> dict[str, object]:
    return {"precision": round(score.precision, 4), "recall": round(score.recall, 4),
            "true_positives": score.true_positives, "false_positives": score.false_positives,
            "false_negatives": score.false_negatives}


def _miss_name(causes: tuple[str, ...]) -> str:
    return f"{len(causes)} {'indices' if len(causes) > 1 else 'index'}: " + " + ".join(causes)


def _say(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m dealer_assist.vision.evaluate",
                                     description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--set", choices=["held-out", "trained"], default="held-out")
    parser.add_argument("--designs", nargs="*", default=None,
                        help="override the design set: installed names or folders of faces")
    parser.add_argument("--scenes", type=options.SCENES, default=200)
    parser.add_argument("--seed", type=options.SEED, default=1000)
    parser.add_argument("--model", type=Path, default=None,
                        help="detector file (default: the shipped one the runtime runs)")
    parser.add_argument("--scale", type=options.SCALE, default=1.0)
    parser.add_argument("--reader", type=Path, default=None,
                        help="reader file (default: the shipped one the runtime runs)")
    parser.add_argument("--runtime", choices=runtimes.RUNTIMES, default=runtimes.ONNXRUNTIME)
    parser.add_argument("--own-shapes", action="store_true",
                        help="run each card region at its own shape, not padded to the fixed "
                             "shapes OpenVINO compiles (what 0.10 did)")
    parser.add_argument("--confidence", type=options.FRACTION, default=DEFAULT_CONFIDENCE)
    parser.add_argument("--reading", choices=READINGS, default=DEFAULT_READING,
                        help="how each found index is read (default %(default)s: as seen and half "
                             "a turn, the quarter turns too where unsure; reader.READINGS)")
    parser.add_argument("--presence", type=options.FRACTION, default=0.25,
                        help="least detector score for a place to count as an index")
    parser.add_argument("--whole-frame", action="store_true",
                        help="run the network on the whole frame, not on card regions")
    parser.add_argument("--misses", action="store_true",
                        help="also say why each missed card was missed (slower)")
    parser.add_argument("--card-width", type=float, nargs=2, metavar=("LEAST", "MOST"),
                        default=SceneConfig().card_width,
                        help="cards' width in the frame, in pixels, before the camera tilt "
                             "(default %(default)s: the range the models are trained on)")
    parser.add_argument("--frames", type=options.FRAMES, default=1, metavar="K",
                        help="see each scene in K frames of a fixed camera and score the frame "
                             "tracker's cards after them as well (default 1: one frame a scene)")
    parser.add_argument("--size", default="1280x720",
                        help="frame size WxH (default 1280x720; a 3K camera over a whole "
                             "table: 3072x1728 with --card-width 76 90)")
    args = parser.parse_args(argv)
    try:
        size = parse_frame_size(args.size)
    except ValueError as bad:
        parser.error(f"--size {bad}")
    try:
        least, most = check_card_width(args.card_width[0], args.card_width[1], size)
    except ValueError as bad:
        parser.error(f"--card-width LEAST MOST: {bad}")
    if 1 < args.frames < TRACKER_FRAMES:
        parser.error(f"--frames must be 1, or at least {TRACKER_FRAMES} (the frames the tracker "
                     "takes to confirm a card)")
    config = SceneConfig(size=size, card_width=(least, most))
    installed = installed_designs()
    if args.designs:
        designs = args.designs
    elif args.set == "held-out":
        designs = list(HELD_OUT_DESIGNS)
    else:
        designs = [d for d in installed if d not in HELD_OUT_DESIGNS]
    unknown = [d for d in designs if d not in installed and not Path(d).is_dir()]
    if unknown or not designs:
        what = (f"design {', '.join(unknown)}: not installed and not a folder of faces"
                if unknown else "no trained design installed")
        parser.error(f"{what} (installed: {', '.join(installed) or 'none'}; "
                     "scripts/install-card-art.sh)")
    try:
        shipped = runtimes.model_files(args.runtime, MODELS_DIR)
        detector = CardDetector(args.model or shipped[0], args.reader or shipped[1],
                                scale=args.scale, confidence=args.confidence,
                                presence=args.presence, regions=not args.whole_frame,
                                runtime=args.runtime, fixed_shapes=not args.own_shapes,
                                reading=args.reading)
    except ModelError as error:
        parser.error(str(error))
    started = time.time()
    try:
        score = evaluate(detector, designs, args.scenes, args.seed, explain_misses=args.misses,
                         config=config, frames=args.frames, progress=_say)
    except ArtworkError as error:
        parser.error(str(error))
    if score.true_positives + score.false_negatives == 0:
        print(f"{parser.prog}: no card to score: none of the {args.scenes} scenes shows a "
              f"readable corner index (cards {least:g}-{most:g} px wide in "
              f"{size[0]}x{size[1]} frames)", file=sys.stderr)
        return 1
    summary = report(args.set, score) | {
        "designs": designs, "scenes": args.scenes, "seed": args.seed, "scale": args.scale,
        "reading": args.reading,
        "size": list(size), "card_width": [least, most],
        "confidence": args.confidence, "presence": args.presence,
        "regions": not args.whole_frame, "frames": args.frames, "runtime": args.runtime,
        "model": detector.path.name, "reader": detector.reader_path.name,
        "fixed_shapes": not args.own_shapes,
        "seconds": round(time.time() - started)}
    json.dump(summary, sys.stdout)
    print()
    print(f"{args.set}: precision {score.precision:.4f} recall {score.recall:.4f} "
          f"({score.true_positives} right, {score.false_positives} false, "
          f"{score.false_negatives} missed) on {args.scenes} scenes"
          + (f", {args.frames} frames each" if args.frames > 1 else ""), file=sys.stderr)
    if score.tracked is not None:
        tracked = score.tracked
        print(f"  tracked over {args.frames} frames: precision {tracked.precision:.4f} recall "
              f"{tracked.recall:.4f} ({tracked.true_positives} right, "
              f"{tracked.false_positives} false, {tracked.false_negatives} missed)",
              file=sys.stderr)
    for design, tally in sorted(score.by_design.items()):
        print(f"  {design:<18} precision {tally.precision:.4f} recall {tally.recall:.4f} "
              f"({sum(tally.confusions.values())} wrong reads)", file=sys.stderr)
    for band in BLUR_BANDS:
        if band in score.by_blur:
            tally = score.by_blur[band]
            print(f"  blur {band:<18} precision {tally.precision:.4f} recall {tally.recall:.4f} "
                  f"({tally.true_positives} right, {tally.false_positives} false, "
                  f"{tally.false_negatives} missed)", file=sys.stderr)
    if args.misses:
        print("missed cards, by why each visible index gave no right card:", file=sys.stderr)
        for causes, n in score.misses.most_common():
            print(f"  {n:5d}  {_miss_name(causes)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
