"""From card sightings on the table plane to the loop's camera inputs: landings, stacks, hole card.

The camera pipeline (detector, frame tracker, calibration) reports when a card *appears* stably
at a point of the table (millimetres in the layout's frame), when one is *removed*, and when one
*changes* reading in place. :class:`FeltTracker` keeps the round's picture of the felt and turns
those into :class:`~dealer_assist.table.sources.FeltCard` (a new card at the dealer or at a seat's
stack), :class:`~dealer_assist.table.sources.FeltStacks` (a pair divided: a split),
:class:`~dealer_assist.table.sources.HoleCardShown` (the dealer's second card appearing: the
face-down hole card turned over; a face-down card has no index to see) and
:class:`~dealer_assist.table.sources.FeltSwap` (a card that changed where it lies).

Pure and independent of how zones are drawn: a ``zone_of(x, y)`` callable says which seat's
card area (or the dealer's) a point is in.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Callable
from dataclasses import dataclass, field

from dealer_assist.rules import Card, CardTarget
from dealer_assist.table.sources import (
    DEALER_SPOT,
    CameraInput,
    FeltCard,
    FeltStacks,
    FeltSwap,
    HoleCardShown,
)

#: zone_of(x, y) -> ("dealer", None), ("seat", n), or None (anywhere else: chips, discard rack).
ZoneOf = Callable[[float, float], tuple[str, int | None] | None]


class SightingKind(enum.Enum):
    APPEARED = "appeared"
    REMOVED = "removed"
    CHANGED = "changed"


@dataclass(frozen=True, slots=True)
class Sighting:
    """One card event from the camera pipeline, on the table plane (mm); ``track`` identifies the
    physical card across events."""

    kind: SightingKind
    card: Card
    x: float
    y: float
    track: int
    sideways: bool = False
    verdict: str | None = None  #: as :class:`~dealer_assist.table.sources.FeltCard` says
    checked: Card | None = None

    def landing(self, spot: CardTarget) -> FeltCard:
        """This card's landing at ``spot``, carrying its check against the shoe."""
        return FeltCard(self.card, spot, self.sideways, verdict=self.verdict,
                        checked=self.checked)


@dataclass(slots=True)
class _Placed:
    track: int
    card: Card
    x: float
    y: float
    order: int = 0  # when it appeared, in this tracker's count


@dataclass(slots=True)
class _Seat:
    stacks: list[list[_Placed]] = field(default_factory=list)
    removed: list[tuple[int, _Placed]] = field(default_factory=list)  # (stack, card) gone
    # a split announced because a pair lost a card: (the new stack, the card that left), until
    # that card is seen again at its new place
    moving: tuple[int, _Placed] | None = None


class FeltTracker:
    """Folds sightings into camera inputs for the table loop; one per camera.

    ``stack_radius_mm``: a new card within this distance of a card of a stack joins that stack
    (cards of one hand overlap in a fan; two split hands lie further apart).
    """

    def __init__(self, zone_of: ZoneOf, stack_radius_mm: float = 70.0):
        self.zone_of = zone_of
        self.stack_radius_mm = stack_radius_mm
        self._dealer: list[_Placed] = []
        self._dealer_gone: list[_Placed] = []  # dealer's cards lost from view this round
        self._dealer_seen = 0  # cards that appeared at the dealer this round
        self._seats: dict[int, _Seat] = {}
        self._order = 0

    @property
    def empty(self) -> bool:
        """No card is on the felt (as far as the camera has reported)."""
        return not self._dealer and not any(
            stack for seat in self._seats.values() for stack in seat.stacks
        )

    @property
    def hole_card_seen(self) -> bool:
        """The dealer's second card has appeared this round (the hole card turned over)."""
        return self._dealer_seen >= 2

    def reset(self) -> None:
        """A cleared table: the next card starts a new round's picture."""
        self._dealer.clear()
        self._dealer_gone.clear()
        self._dealer_seen = 0
        self._seats.clear()

    def feed(self, sighting: Sighting) -> list[CameraInput]:
        """The camera inputs one sighting stands for (often none)."""
        if sighting.kind is SightingKind.REMOVED:
            inputs = self._remove(sighting.track)
            if self.empty:
                self.reset()
            return inputs
        zone = self.zone_of(sighting.x, sighting.y)
        if sighting.kind is SightingKind.CHANGED:
            previous = self._replace(sighting)
            if previous is not None:
                if zone is None:
                    return []
                spot = DEALER_SPOT if zone[0] == "dealer" else CardTarget(zone[1], 0)
                return [FeltSwap(previous, sighting.card, spot)]
            # The card the tracker knew there has moved away (a split): a new card now lies
            # where it lay.
        if zone is None:
            return []
        self._order += 1
        placed = _Placed(sighting.track, sighting.card, sighting.x, sighting.y, self._order)
        if zone[0] == "dealer":
            again = next((c for c in self._dealer_gone if c.card == placed.card), None)
            if again is not None:  # a dealer's card seen again after a draw covered its index
                self._dealer_gone.remove(again)
                placed.order = again.order
                self._dealer.append(placed)
                return []
            self._dealer.append(placed)
            self._dealer_seen += 1
            if self._dealer_seen == 2:
                return [HoleCardShown(sighting.card)]
            return [sighting.landing(DEALER_SPOT)]
        seat_number = zone[1]
        assert seat_number is not None
        return self._at_seat(seat_number, placed, sighting)

    def _at_seat(self, number: int, placed: _Placed, sighting: Sighting) -> list[CameraInput]:
        seat = self._seats.setdefault(number, _Seat())
        # how far the card lies from each stack's nearest card
        gaps = {index: min(math.hypot(c.x - placed.x, c.y - placed.y) for c in stack)
                for index, stack in enumerate(seat.stacks) if stack}
        nearest = min(gaps, key=gaps.__getitem__, default=None)
        if seat.moving is not None:
            target, moved = seat.moving
            if placed.card.rank == moved.card.rank and \
                    gaps.get(target, 0.0) <= self.stack_radius_mm:
                # the card that left the pair, seen at its new place: the split is recorded
                seat.stacks[target].insert(0, placed)
                seat.moving = None
                return []
        if self._seen_again(seat, placed):
            return []
        if nearest is not None and gaps[nearest] <= self.stack_radius_mm:
            seat.stacks[nearest].append(placed)
            return [sighting.landing(CardTarget(number, nearest))]
        source = self._split_source(seat, placed)
        if source is not None:
            # One card of a pair moved to a new stack beside it: a split, not a new card.
            stack_index, moved = source
            seat.stacks[stack_index] = [c for c in seat.stacks[stack_index] if c is not moved]
            seat.removed = [(i, c) for i, c in seat.removed if c is not moved]
            seat.stacks.insert(stack_index + 1, [placed])
            return [FeltStacks(number, len(seat.stacks), from_stack=stack_index)]
        if seat.moving is not None and not seat.stacks[seat.moving[0]]:
            # the new hand's first card lands before the one moved there is read again
            target = seat.moving[0]
            seat.stacks[target].append(placed)
            return [sighting.landing(CardTarget(number, target))]
        if nearest is not None:
            # Only a split starts a second stack. A card further from the stacks than a fan
            # reaches (a doubled card laid sideways, or a card whose point is a corner because
            # one index is covered) belongs to the nearest one.
            seat.stacks[nearest].append(placed)
            return [sighting.landing(CardTarget(number, nearest))]
        seat.stacks.append([placed])
        return [sighting.landing(CardTarget(number, len(seat.stacks) - 1))]

    @staticmethod
    def _seen_again(seat: _Seat, placed: _Placed) -> bool:
        """A card of a fan lost from view (the next card covered its index) and then read again
        (by its other corner, or uncovered): the same card, put back in its stack, not a new
        one. Read as a new card it was the hand's next card, the card really dealt unseen. A
        card that left a pair may be a split instead (:meth:`_split_source`)."""
        for k, (index, gone) in enumerate(seat.removed):
            stack = seat.stacks[index] if index < len(seat.stacks) else []
            could_split = len(stack) == 1 and stack[0].card.points == gone.card.points
            if gone.card == placed.card and stack and not could_split:
                del seat.removed[k]
                placed.order = gone.order
                seat.stacks[index].append(placed)
                seat.stacks[index].sort(key=lambda c: c.order)
                return True
        return False

    @staticmethod
    def _split_source(seat: _Seat, placed: _Placed) -> tuple[int, _Placed] | None:
        """The two-card stack a same-code card came from: the one it was just removed from, or
        else the most recently dealt-to pair still showing that card, or else one showing that
        rank (the camera may have read the card's suit otherwise before it moved: clubs and
        spades are its commonest confusion). A card like one in a longer hand, lying apart from
        it, is that hand's next card seen by a corner, not a split."""
        for index, moved in reversed(seat.removed):
            if moved.card == placed.card and index < len(seat.stacks):
                if len(seat.stacks[index]) == 1:
                    return index, moved
        for same in (lambda c: c == placed.card, lambda c: c.rank == placed.card.rank):
            candidates = [
                (max(c.order for c in stack), index, card)
                for index, stack in enumerate(seat.stacks)
                if len(stack) == 2
                for card in stack
                if same(card.card)
            ]
            if candidates:
                _, index, card = max(candidates, key=lambda item: item[0])
                return index, card
        return None

    def _remove(self, track: int) -> list[CameraInput]:
        """Forget a card gone from the felt. A pair that loses a card is being split: the card
        was moved to a new stack, where the camera may not read it at once (a lone card read
        below confidence); the split is announced now, before the next card lands on the pair."""
        gone = [c for c in self._dealer if c.track == track]
        if gone:
            self._dealer.remove(gone[0])
            self._dealer_gone.append(gone[0])
            return []
        for number, seat in self._seats.items():
            for index, stack in enumerate(seat.stacks):
                for placed in stack:
                    if placed.track == track:
                        stack.remove(placed)
                        if len(stack) == 1 and stack[0].card.points == placed.card.points \
                                and seat.moving is None:
                            seat.stacks.insert(index + 1, [])
                            seat.moving = (index + 1, placed)
                            return [FeltStacks(number, len(seat.stacks), from_stack=index)]
                        seat.removed.append((index, placed))
                        return []
        return []

    def _replace(self, sighting: Sighting) -> Card | None:
        everywhere = [self._dealer] + [s for seat in self._seats.values() for s in seat.stacks]
        for cards in everywhere:
            for placed in cards:
                if placed.track == sighting.track:
                    previous = placed.card
                    placed.card = sighting.card
                    return previous
        return None
