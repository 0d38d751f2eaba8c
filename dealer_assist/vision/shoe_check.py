"""The table camera's reading where a shoe says which cards come next: each new card's index is
checked against the shoe's codes in flight (:func:`~dealer_assist.vision.verify.judge`, its
readings pooled over the frames it has been seen in at its place) instead of naming one of 52.

:class:`ShoeCheck` is the camera's ``detect`` and ``track`` stages in one: :meth:`ShoeCheck.read`
finds and reads the indices of a frame (safe from several threads at once), :meth:`ShoeCheck.track`
(in frame order) reads each index not yet part of a card on the felt as the shoe's code it
matches, else names it as the detector does, marks each with its verdict, and hands the cards to
the frame tracker, whose events then carry the verdict. A card that appeared as a match keeps
its code while its index is not surely another card (a swapped card still reads as changed).
With no shoe card in flight (a hand-held game) it names cards exactly as the detector does.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace

import numpy as np

from dealer_assist.vision.artwork import CARD_CODES
from dealer_assist.vision.detector import (
    CardDetector,
    CardObservation,
    Detections,
    group_indices,
    same_place,
)
from dealer_assist.vision.reader import RANK_CLASSES, SUIT_CLASSES
from dealer_assist.vision.tracker import CardEvent, CardTracker
from dealer_assist.vision.verify import INDEX, NOT_AN_INDEX, Verdict, judge

#: How many of its latest frames an index's readings are pooled over.
POOL_FRAMES = 8


@dataclass(frozen=True)
class FrameReading:
    """A frame's index boxes ``(N, 4)`` that the reader takes for an index, with its rank
    ``(N, 14)`` and suit ``(N, 4)`` probabilities."""

    boxes: np.ndarray
    ranks: np.ndarray
    suits: np.ndarray


@dataclass
class _Place:
    """An index seen at one place over recent frames, its readings kept for pooling."""

    box: np.ndarray
    last_frame: int
    ranks: list[np.ndarray] = field(default_factory=list)
    suits: list[np.ndarray] = field(default_factory=list)

    def add(self, box: np.ndarray, ranks: np.ndarray, suits: np.ndarray, frame: int) -> None:
        self.box, self.last_frame = box, frame
        self.ranks = (self.ranks + [ranks])[-POOL_FRAMES:]
        self.suits = (self.suits + [suits])[-POOL_FRAMES:]


class ShoeCheck:
    """A detector and a frame tracker, with the shoe's codes in flight (:meth:`expect`)."""

    def __init__(self, detector: CardDetector, tracker: CardTracker):
        self.detector = detector
        self.tracker = tracker
        self._codes: tuple[str, ...] = ()
        self._places: list[_Place] = []

    def expect(self, codes: Sequence[str]) -> None:
        """The shoe's cards drawn and not yet landed, oldest first (any thread; never blocks:
        the next frame tracked takes them)."""
        self._codes = tuple(codes)

    def read(self, frame: np.ndarray) -> FrameReading:
        """The indices in ``frame`` and the reader's probabilities for each."""
        if frame is None or frame.ndim != 3 or frame.shape[2] != 3 or frame.dtype != np.uint8:
            shape = None if frame is None else (frame.shape, frame.dtype)
            raise ValueError(f"expected a BGR uint8 image (H, W, 3), got {shape}")
        boxes = self.detector.find_indices(frame)
        if len(boxes) == 0:
            return FrameReading(boxes, np.zeros((0, len(RANK_CLASSES))),
                                np.zeros((0, len(SUIT_CLASSES))))
        ranks, suits = self.detector.read_probabilities(frame, boxes)
        keep = ranks[:, NOT_AN_INDEX] < INDEX
        return FrameReading(boxes[keep], ranks[keep], suits[keep])

    def track(self, frame_number: int, reading: FrameReading) -> list[CardEvent]:
        """The tracker's events for this frame, each index read against the codes in flight."""
        codes = self._codes
        self._places = [p for p in self._places if frame_number - p.last_frame <= POOL_FRAMES]
        named: list[tuple[int, str, float, str | None, str | None]] = []
        for i, box in enumerate(reading.boxes):
            ranks, suits = reading.ranks[i:i + 1], reading.suits[i:i + 1]
            place = self._place(box, ranks, suits, frame_number)
            x0, y0, x1, y1 = (float(v) for v in box)
            on_felt = self.tracker.confirmed_at((x0, y0, x1, y1))
            if on_felt is not None:
                code, verdict = on_felt
                if verdict == Verdict.MATCH.value and \
                        judge(ranks, suits, code).verdict is not Verdict.MISMATCH:
                    named.append((i, code, 1.0, verdict, code))  # as the shoe said it
                    continue
                codes_now: tuple[str, ...] = ()  # a card on the felt is named, not checked
            else:
                codes_now = codes
            named.append((i, *self._judge(place, codes_now, ranks, suits)))
        return self.tracker.update(frame_number, self._cards(reading.boxes, named))

    def _place(self, box: np.ndarray, ranks: np.ndarray, suits: np.ndarray,
               frame: int) -> _Place:
        place = next((p for p in self._places if p.last_frame != frame
                      and same_place(p.box.tolist(), box.tolist())), None)
        if place is None:
            place = _Place(box, frame)
            self._places.append(place)
        place.add(box, ranks, suits, frame)
        return place

    def _judge(self, place: _Place, codes: tuple[str, ...], ranks: np.ndarray,
               suits: np.ndarray) -> tuple[str, float, str | None, str | None]:
        """(code, confidence, verdict, checked) for one index: the first code in flight its
        pooled readings match; else its name (a mismatch when surely none of them); ``""`` as
        the code: neither matched nor named."""
        rank, suit = int(ranks[0, :NOT_AN_INDEX].argmax()), int(suits[0].argmax())
        confidence = float(ranks[0, rank] * suits[0, suit])
        name = RANK_CLASSES[rank] + SUIT_CLASSES[suit] \
            if confidence >= self.detector.confidence else ""
        if not codes:
            return name, confidence, None, None
        pooled_ranks, pooled_suits = np.concatenate(place.ranks), np.concatenate(place.suits)
        verdicts = [judge(pooled_ranks, pooled_suits, code) for code in codes]
        for code, verification in zip(codes, verdicts, strict=True):
            if verification.verdict is Verdict.MATCH:
                return code, verification.probability, Verdict.MATCH.value, code
        if all(v.verdict is Verdict.MISMATCH for v in verdicts):
            return name, confidence, Verdict.MISMATCH.value, codes[0]
        return name, confidence, Verdict.UNSURE.value, codes[0]

    @staticmethod
    def _cards(boxes: np.ndarray, named: list[tuple[int, str, float, str | None, str | None]]
               ) -> list[CardObservation]:
        """The read indices grouped into cards, each carrying its indices' verdict."""
        kept = [entry for entry in named if entry[1]]
        if not kept:
            return []
        rows = [entry[0] for entry in kept]
        detections = Detections(boxes[rows].astype(np.float32),
                                np.array([entry[2] for entry in kept], np.float32),
                                np.array([CARD_CODES.index(entry[1]) for entry in kept],
                                         np.int64))
        checks = {tuple(float(v) for v in boxes[i]): (verdict, checked)
                  for i, _, _, verdict, checked in kept}
        cards = []
        for card in group_indices(detections):
            verdicts = [checks[box] for box in card.index_boxes if box in checks]
            # a card is a match where any index matched, a mismatch where every one did
            verdict, checked = next((v for v in verdicts if v[0] == Verdict.MATCH.value),
                                    verdicts[0] if verdicts else (None, None))
            if verdict == Verdict.MISMATCH.value and \
                    any(v[0] != Verdict.MISMATCH.value for v in verdicts):
                verdict, checked = Verdict.UNSURE.value, checked
            cards.append(replace(card, verdict=verdict, checked=checked))
        return cards
