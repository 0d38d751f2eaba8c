"""The table camera's reading where a shoe says which cards come next: each new card's index is
checked against the shoe's codes in flight (:func:`~dealer_assist.vision.verify.judge`, its
readings pooled over the frames it has been seen in at its place) instead of naming one of 52.

:class:`ShoeCheck` is the camera's ``detect`` and ``track`` stages in one: :meth:`ShoeCheck.read`
finds and reads the indices of a frame (safe from several threads at once), :meth:`ShoeCheck.track`
(in frame order) reads each index not yet part of a card on the felt as the shoe's code it
matches, else names it as the detector does, marks each with its verdict, and hands the cards to
the frame tracker, whose events then carry the verdict. A card that appeared as a match keeps
its code while its index is not surely another card (a swapped card still reads as changed);
where one of its indices is surely another card, an index of it keeps the code only if read as
it (else a swap with one corner read unsurely would never be reported).
An index at no card on the felt that could be the other corner of a card matched since its
place was first seen, and whose place read as a code before the shoe dealt it
(:data:`SHOE_LEAD_FRAMES`), does not match that code: it is that card's corner misread.
With no shoe card in flight (a hand-held game) it names cards as the detector does, from the
boxes and sure readings still regions kept where they stand (``evaluate --hand-held``).
It also reads places the detector is less sure of (faint ones, :data:`FAINT_PRESENCE`), which
count only as a shoe card they surely match, and lets each shoe code in flight be matched by as
many cards a frame as it has copies out (:func:`_one_card_a_code`). A card region that has not
moved and whose cards are all on the felt, read as themselves, keeps the boxes the detector
found in it for a few frames (:mod:`.still_regions`), and the readings of those indices read
surely as their cards on the felt; every other index is read in every frame.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np

from dealer_assist.vision.artwork import CARD_CODES
from dealer_assist.vision.detector import (
    PAIR_DISTANCE,
    SAME_PLACE,
    BoxOverlaps,
    CardDetector,
    CardObservation,
    Detections,
    group_indices,
)
from dealer_assist.vision.reader import RANK_CLASSES, SUIT_CLASSES
from dealer_assist.vision.still_regions import StillRead, StillRegions
from dealer_assist.vision.tracker import CardEvent, CardTracker
from dealer_assist.vision.verdict import Verdict
from dealer_assist.vision.verify import (
    ACCEPT,
    INDEX,
    NOT_AN_INDEX,
    judge_codes,
    mismatched_rows,
)

#: How many of its latest frames an index's readings are pooled over.
POOL_FRAMES = 8
#: The least detector score a place is read at here, below the detector's own: a faint index
#: counts only where it matches a shoe card in flight (it is never named and never raises the
#: switched-card alarm). Chosen on independent deals of another seed than the model card's
#: (docs/vision.md, "Faint indices"): at 0.25 -> 0.04 landing rose 95.7% -> 97.0%, with no
#: more wrong matches or alarms.
FAINT_PRESENCE = 0.04
#: The least probability of a shoe card's code for a faint index to match it (a surer reading
#: than :data:`~.verify.ACCEPT` asks of an index the detector is sure of).
FAINT_ACCEPT = 0.8
#: How many frames before the shoe's word of a card reached the check that card may already be
#: read at its place and still be taken for it anywhere. Beyond that, it is taken for it only
#: where it cannot be the other corner of a card matched since its place was first seen (the
#: shoe's word is late while a question holds it, so a card landing then is still matched).
SHOE_LEAD_FRAMES = 2
_NEVER = np.iinfo(np.int64).max
_CODE_IDS = {code: i for i, code in enumerate(CARD_CODES)}


@dataclass(frozen=True)
class FrameReading:
    """A frame's index boxes ``(N, 4)`` that the reader takes for an index, with its rank
    ``(N, 14)`` and suit ``(N, 4)`` probabilities, and what the detector would name each:
    ``names`` (``""``: below its confidence) at ``confidences`` ``(N,)``. ``faint`` ``(N,)``:
    found below the detector's presence (down to :data:`FAINT_PRESENCE`), never named.
    ``still``: the frame's read of the check's still regions, which tracking it settles."""

    boxes: np.ndarray
    ranks: np.ndarray
    suits: np.ndarray
    names: tuple[str, ...]
    confidences: np.ndarray
    faint: np.ndarray
    still: StillRead | None = None


class _Place:
    """An index seen at one place over recent frames, its latest :data:`POOL_FRAMES`
    readings kept (oldest first) for pooling, in place, the frame it was first seen in, and per
    code the first frame any of its readings gave that code at :data:`~.verify.ACCEPT` or
    more."""

    def __init__(self, box: np.ndarray, frame: int, ranks: np.ndarray, suits: np.ndarray):
        self.box, self.last_frame, self.first_frame = box, frame, frame
        self._ranks = np.empty((POOL_FRAMES, ranks.shape[-1]), ranks.dtype)
        self._suits = np.empty((POOL_FRAMES, suits.shape[-1]), suits.dtype)
        self._count = 0
        self._first_read = np.full((NOT_AN_INDEX, len(SUIT_CLASSES)), _NEVER, np.int64)

    def add(self, box: np.ndarray, ranks: np.ndarray, suits: np.ndarray, frame: int) -> None:
        self.box, self.last_frame = box, frame
        if self._count == POOL_FRAMES:
            self._ranks[:-1], self._suits[:-1] = self._ranks[1:], self._suits[1:]
        else:
            self._count += 1
        self._ranks[self._count - 1], self._suits[self._count - 1] = ranks, suits
        read = np.outer(ranks[:NOT_AN_INDEX], suits) >= ACCEPT
        self._first_read[read] = np.minimum(self._first_read[read], frame)

    def first_read_as(self, code: str) -> int:
        """The first frame this place read as ``code`` (a very large number: never)."""
        return int(self._first_read[RANK_CLASSES.index(code[0]), SUIT_CLASSES.index(code[1])])

    @property
    def ranks(self) -> np.ndarray:
        return self._ranks[:self._count]

    @property
    def suits(self) -> np.ndarray:
        return self._suits[:self._count]


class ShoeCheck:
    """A detector and a frame tracker, with the shoe's codes in flight (:meth:`expect`)."""

    def __init__(self, detector: CardDetector, tracker: CardTracker,
                 faint_presence: float = FAINT_PRESENCE, still: StillRegions | bool = True):
        """``still``: keep the boxes of settled regions that have not changed
        (:mod:`.still_regions`) in a memory of its own (True) or in the one given; False:
        search every region of every frame."""
        self.detector = detector
        self.tracker = tracker
        self.faint_presence = min(faint_presence, detector.presence)
        self._still = StillRegions() if still is True else still or None
        self._codes: tuple[str, ...] = ()
        self._dealt: dict[str, list[int]] = {}
        self._places: list[_Place] = []

    def expect(self, codes: Sequence[str]) -> None:
        """The shoe's cards drawn and not yet landed, oldest first (any thread; never blocks:
        the next frame tracked takes them)."""
        self._codes = tuple(codes)

    def read(self, frame: np.ndarray) -> FrameReading:
        """The indices in ``frame``, the reader's probabilities for each and its name."""
        if frame is None or frame.ndim != 3 or frame.shape[2] != 3 or frame.dtype != np.uint8:
            shape = None if frame is None else (frame.shape, frame.dtype)
            raise ValueError(f"expected a BGR uint8 image (H, W, 3), got {shape}")
        still = None if self._still is None else self._still.begin()
        boxes, scores = self.detector.find_scored(frame, self.faint_presence, still)
        if len(boxes) == 0:
            return FrameReading(boxes, np.zeros((0, len(RANK_CLASSES))),
                                np.zeros((0, len(SUIT_CLASSES))), (), np.zeros(0),
                                np.zeros(0, bool), still)
        ranks, suits = self._probabilities(frame, boxes, still)
        keep = ranks[:, NOT_AN_INDEX] < INDEX
        boxes, ranks, suits = boxes[keep], ranks[keep], suits[keep]
        faint = scores[keep] < self.detector.presence
        rows = np.arange(len(ranks))
        rank_ids, suit_ids = ranks[:, :NOT_AN_INDEX].argmax(axis=1), suits.argmax(axis=1)
        confidences = ranks[rows, rank_ids] * suits[rows, suit_ids]
        # compared as Python floats are: a float32 threshold would round 0.7 down
        named = (confidences.astype(np.float64) >= self.detector.confidence) & ~faint
        names = tuple(RANK_CLASSES[r] + SUIT_CLASSES[s] if ok else ""
                      for r, s, ok in zip(rank_ids.tolist(), suit_ids.tolist(), named.tolist(),
                                          strict=True))
        return FrameReading(boxes, ranks, suits, names, confidences, faint, still)

    def _probabilities(self, frame: np.ndarray, boxes: np.ndarray, still: StillRead | None,
                       ) -> tuple[np.ndarray, np.ndarray]:
        """The reader's probabilities of the indices at ``boxes``: those a still region kept
        with their boxes (read surely as the cards on the felt there), the rest read in
        ``frame``."""
        if still is None:
            return self.detector.read_probabilities(frame, boxes)
        known, kept_ranks, kept_suits = still.readings(boxes)
        if known.all():
            return kept_ranks, kept_suits
        ranks, suits = self.detector.read_probabilities(frame, boxes[~known])
        if known.any():
            ranks = _merged(known, kept_ranks, ranks)
            suits = _merged(known, kept_suits, suits)
        return ranks, suits

    def track(self, frame_number: int, reading: FrameReading) -> list[CardEvent]:
        """The tracker's events for this frame, each index read against the codes in flight."""
        codes = self._codes
        self._note_dealt(codes, frame_number)
        self._places = [p for p in self._places if frame_number - p.last_frame <= POOL_FRAMES]
        places = self._at_places(reading, frame_number)
        on_felt = self.tracker.confirmed_at_each(reading.boxes)
        # a card on the felt that appeared as the shoe's keeps its code unless surely another
        at_felt = [(i, felt) for i, felt in enumerate(on_felt) if felt is not None]
        rows = [i for i, _ in at_felt]
        switched = mismatched_rows(reading.ranks[rows], reading.suits[rows],
                                   [felt[0] for _, felt in at_felt])
        surely_other = {i for i, bad in zip(rows, switched.tolist(), strict=True) if bad}
        # a card one of whose indices is surely another keeps its code only where read as it
        contested = {felt[2] for i, felt in at_felt if i in surely_other}
        kept_code = {i for i, felt in at_felt
                     if felt[1] == Verdict.MATCH.value and i not in surely_other
                     and (felt[2] not in contested or reading.names[i] == felt[0])}
        named: list[tuple[int, str, float, str | None, str | None]] = []
        laid_over: set[int] = set()
        for i, felt in enumerate(on_felt):
            if felt is not None and i in kept_code:
                named.append((i, felt[0], 1.0, felt[1], felt[0]))  # as the shoe said it
                continue
            judged = self._judge(reading, i, places[i], codes if felt is None else (),
                                 new=felt is None)
            if reading.faint[i]:
                if judged[2] == Verdict.MATCH.value and judged[1] >= FAINT_ACCEPT:
                    named.append((i, *judged))  # a faint index counts only as the shoe's card
                continue
            if felt is None and judged[2] == Verdict.MISMATCH.value and \
                    self._other_corner(reading.boxes[i], places[i]):
                continue  # surely a card on the felt nearby: its other corner, not a new card
            if felt is not None and codes and i in surely_other:
                # surely not the card on the felt there: a card laid where it lies (a split's
                # next card, a double laid across) matching a shoe card in flight is a new card
                over = self._judge(reading, i, places[i],
                                   tuple(code for code in codes if code != felt[0]))
                if over[2] == Verdict.MATCH.value:
                    judged = over
                    laid_over.add(i)
            named.append((i, *judged))  # else a card on the felt is named, not checked
        if reading.still is not None:
            # an index read as its card on the felt keeps that reading while its region stands
            sure = np.array([felt is not None and reading.names[i] == felt[0]
                             for i, felt in enumerate(on_felt)], bool)
            settled = np.array([sure[i] or i in kept_code for i in range(len(on_felt))], bool)
            reading.still.settle(reading.boxes, settled, (reading.ranks, reading.suits, sure))
        own: dict[int, list[int]] = {}  # a card on the felt: its indices keeping its code
        for i, felt in at_felt:
            if i in kept_code:
                own.setdefault(felt[2], []).append(i)
        cards = self._cards(reading.boxes, named, laid_over,
                            [rows for rows in own.values() if len(rows) > 1])
        return self.tracker.update(frame_number, _one_card_a_code(cards, codes, reading.boxes,
                                                                  kept_code))

    def _at_places(self, reading: FrameReading, frame: int) -> list[_Place]:
        """Each index's place, its reading added to the place's pool: of the kept places it lies
        at, the one it overlaps best, pairs taken best first (an index and a place at most once
        a frame); else a new place. Two indices half over each other (a card landing beside a
        corner of another) each keep their own pool."""
        boxes = reading.boxes
        kept = np.array([p.box for p in self._places], np.float32).reshape(-1, 4)
        pairs = BoxOverlaps.of(boxes, kept)
        overlap = np.where(pairs.by(SAME_PLACE), pairs.ious(), 0.0)
        chosen: dict[int, int] = {}
        taken: set[int] = set()
        for flat in np.argsort(-overlap, axis=None, kind="stable"):
            i, j = divmod(int(flat), overlap.shape[1])
            if overlap[i, j] <= 0:
                break
            if i not in chosen and j not in taken:
                chosen[i] = j
                taken.add(j)
        places = []
        for i, box in enumerate(boxes):
            if i in chosen:
                place = self._places[chosen[i]]
            else:
                place = _Place(box, frame, reading.ranks, reading.suits)
                self._places.append(place)
            place.add(box, reading.ranks[i], reading.suits[i], frame)
            places.append(place)
        return places

    def _other_corner(self, box: np.ndarray, place: _Place) -> bool:
        """The index at ``box`` reads as a card confirmed on the felt with a corner within a
        card's reach (the pairing's farthest distance, in index sizes): that card's other
        corner (one the tracker holds no place for: the corner it was seen by is covered)."""
        near = self.tracker.confirmed_near(*_card_reach(box))
        return bool(near) and any(v.verdict is Verdict.MATCH for v in judge_codes(
            place.ranks, place.suits, tuple(dict.fromkeys(near))))

    def _note_dealt(self, codes: tuple[str, ...], frame: int) -> None:
        """Keep, per code in flight, the frame each copy of it was first tracked in flight
        (where copies left flight, the oldest went)."""
        counts = Counter(codes)
        self._dealt = {code: (frames := self._dealt.get(code, [])[-n:])
                       + [frame] * (n - len(frames)) for code, n in counts.items()}

    def _misread_corner(self, box: np.ndarray, place: _Place, code: str) -> bool:
        """The index at ``box`` is not ``code``'s card but another's corner misread: its place
        read as ``code`` more than :data:`SHOE_LEAD_FRAMES` frames before the shoe dealt any
        copy of it in flight, and a card matched to a shoe card since the place was first seen
        has a corner within a card's reach (the pairing's farthest distance, in index sizes)."""
        if place.first_read_as(code) >= self._dealt[code][0] - SHOE_LEAD_FRAMES:
            return False
        return self.tracker.matched_near(*_card_reach(box), place.first_frame)

    def _judge(self, reading: FrameReading, i: int, place: _Place, codes: tuple[str, ...],
               new: bool = False) -> tuple[str, float, str | None, str | None]:
        """(code, confidence, verdict, checked) for index ``i``: the code in flight its pooled
        readings match best, the oldest of equals (a place read surely as one code in flight
        and once, less surely, as an older one is the first); else its name (a mismatch when
        surely none of them); ``""`` as the code: neither matched nor named. ``new``: the
        index is at no card on the felt, so a code it matches only as another card's corner
        misread (:meth:`_misread_corner`) is not matched, and matching no other it is ``""``,
        no card."""
        name, confidence = reading.names[i], float(reading.confidences[i])
        if not codes:
            return name, confidence, None, None
        verdicts = judge_codes(place.ranks, place.suits, codes)
        misread = False
        for code, verification in sorted(zip(codes, verdicts, strict=True),
                                         key=lambda pair: -pair[1].probability):
            if verification.verdict is Verdict.MATCH:
                if new and self._misread_corner(reading.boxes[i], place, code):
                    misread = True
                    continue
                return code, verification.probability, Verdict.MATCH.value, code
        if misread:
            return "", 0.0, None, None
        if all(v.verdict is Verdict.MISMATCH for v in verdicts):
            return name, confidence, Verdict.MISMATCH.value, codes[0]
        return name, confidence, Verdict.UNSURE.value, codes[0]

    @staticmethod
    def _cards(boxes: np.ndarray, named: list[tuple[int, str, float, str | None, str | None]],
               laid_over: set[int], whole: list[list[int]]) -> list[CardObservation]:
        """The read indices grouped into cards, each carrying its indices' verdict; a card
        with an index in ``laid_over`` (rows) is ``laid_over`` (a new card, not a change).
        ``whole``: the rows of each card on the felt seen by two or more indices keeping its
        code: they are that card, grouped apart (an index of it is never paired with another
        card's corner misread as its code)."""
        kept = [entry for entry in named if entry[1]]
        if not kept:
            return []
        checks = {tuple(float(v) for v in boxes[i]): (verdict, checked)
                  for i, _, _, verdict, checked in kept}
        over = {tuple(float(v) for v in boxes[i]) for i in laid_over}
        apart = {i for rows in whole for i in rows}
        parts = [[entry for entry in kept if entry[0] in rows] for rows in whole]
        parts.append([entry for entry in kept if entry[0] not in apart])
        cards = []
        for part in parts:
            if not part:
                continue
            rows = [entry[0] for entry in part]
            detections = Detections(
                boxes[rows].astype(np.float32), np.array([entry[2] for entry in part], np.float32),
                np.array([_CODE_IDS[entry[1]] for entry in part], np.int64))
            for card in group_indices(detections):
                verdicts = [checks[box] for box in card.index_boxes if box in checks]
                # a card is a match where any index matched, a mismatch where every one did
                verdict, checked = next((v for v in verdicts if v[0] == Verdict.MATCH.value),
                                        verdicts[0] if verdicts else (None, None))
                if verdict == Verdict.MISMATCH.value and \
                        any(v[0] != Verdict.MISMATCH.value for v in verdicts):
                    verdict, checked = Verdict.UNSURE.value, checked
                cards.append(replace(card, verdict=verdict, checked=checked,
                                     laid_over=any(box in over for box in card.index_boxes)))
        return sorted(cards, key=lambda c: (c.x, c.y))


def _merged(known: np.ndarray, kept: np.ndarray, read: np.ndarray) -> np.ndarray:
    """Rows of ``kept`` where ``known`` ``(N,)``, of ``read`` elsewhere, in order."""
    merged = np.empty((len(known), read.shape[1]), read.dtype)
    merged[known], merged[~known] = kept, read
    return merged


def _card_reach(box: np.ndarray) -> tuple[tuple[float, float], float]:
    """The centre of the index at ``box`` and a card's reach from it in pixels: the pairing's
    farthest distance, in index sizes."""
    size = float(max(box[2] - box[0], box[3] - box[1]))
    return ((box[0] + box[2]) / 2, (box[1] + box[3]) / 2), PAIR_DISTANCE[1] * size


def _one_card_a_code(cards: list[CardObservation], codes: Sequence[str], boxes: np.ndarray,
                     kept_rows: set[int]) -> list[CardObservation]:
    """``cards`` with each shoe code in flight matched by at most as many cards as it has
    copies in flight: where more cards of one frame match it, the surest keep the match and the
    rest are unsure (two places both read as one shoe card; the table asks about an unsure
    landing and never alarms on it), except one within a card's reach of a card that kept it
    (that card's other corner, unpaired). Cards keeping a code they appeared with (any of their
    indices among ``kept_rows``' boxes) are left as they are."""
    kept = {tuple(float(v) for v in boxes[i]) for i in kept_rows}
    room = Counter(codes)
    claims = sorted((k for k, card in enumerate(cards)
                     if card.verdict == Verdict.MATCH.value
                     and not any(box in kept for box in card.index_boxes)),
                    key=lambda k: -cards[k].confidence)
    out = list(cards)
    won: list[CardObservation] = []
    for k in claims:
        card = out[k]
        if room[card.card] > 0:
            room[card.card] -= 1
            won.append(card)
        elif not any(other.card == card.card and _within_reach(other, card) for other in won):
            out[k] = replace(card, verdict=Verdict.UNSURE.value)
    return out


def _within_reach(a: CardObservation, b: CardObservation) -> bool:
    """An index of ``a`` and one of ``b`` lie within a card's reach of each other (the
    pairing's farthest distance, in index sizes): the two corners of one card, not paired."""
    for box_a in a.index_boxes:
        for box_b in b.index_boxes:
            size = max(box_a[2] - box_a[0], box_a[3] - box_a[1], box_b[2] - box_b[0],
                       box_b[3] - box_b[1])
            if math.dist(((box_a[0] + box_a[2]) / 2, (box_a[1] + box_a[3]) / 2),
                         ((box_b[0] + box_b[2]) / 2, (box_b[1] + box_b[3]) / 2)) \
                    <= PAIR_DISTANCE[1] * size:
                return True
    return False
