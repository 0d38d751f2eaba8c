"""Naming as the table runs it in a game without a shoe: each frame goes through the table's own
check (:class:`~dealer_assist.vision.shoe_check.ShoeCheck`) with no shoe code ever in flight, so
settled still regions keep their boxes and sure readings (:mod:`dealer_assist.vision.still_regions`)
and faint places are read (and never named), as at the table, where the detector's own naming
(:meth:`~dealer_assist.vision.detector.CardDetector.detect`) reads every frame afresh. Each frame
is read and then tracked before the next is read, as ``--shoe`` runs the check; the table's
camera reads two frames at once, so a region there may settle a frame later.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from dealer_assist.vision.detector import CardDetector, CardObservation
from dealer_assist.vision.shoe_check import ShoeCheck
from dealer_assist.vision.tracker import CardEvent, CardTracker


class _HandedTracker(CardTracker):
    """The table's frame tracker, keeping the cards it was handed each frame."""

    def __init__(self) -> None:
        super().__init__()
        self.handed: list[list[CardObservation]] = []

    def update(self, frame: int, observations: list[CardObservation]) -> list[CardEvent]:
        self.handed.append(list(observations))
        return super().update(frame, observations)


def hand_held_cards(frames: Sequence[np.ndarray], detector: CardDetector,
                    ) -> tuple[list[list[CardObservation]], list[CardEvent]]:
    """The cards the table's check hands its frame tracker in each of ``frames`` (in order) with
    no shoe code in flight, and the tracker's events over them (a :class:`CardTracker` with the
    table's defaults, as the scorer replays them)."""
    tracker = _HandedTracker()
    check = ShoeCheck(detector, tracker)
    events: list[CardEvent] = []
    for number, frame in enumerate(frames):
        events += check.track(number, check.read(frame))
    return tracker.handed, events
