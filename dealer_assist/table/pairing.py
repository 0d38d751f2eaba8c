"""Shoe/camera pairing: the shoe cards out waiting for the camera to see where they land, the
landings waiting for their shoe card, and the cards placed this round with no landing (whose
sightings may still come). It decides which sighting is which card's landing, and only where it
is surely that card's; the loop places the cards. Where the camera checked a new card against
the shoe's cards in flight, its verdict decides: a match is that card's landing, a mismatch its
switched landing, an unsure one decides nothing and raises no alarm.

A sighting that came late (its frame older than the camera's wait when it arrived) is evidence
of no decision: it is never a landing, only checked against where its card went."""

from __future__ import annotations

import enum
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, replace

from dealer_assist.rules import Card, CardTarget
from dealer_assist.shoe.protocol import HEARTBEAT_INTERVAL_S, LINK_TIMEOUT_S
from dealer_assist.table.sources import FeltCard, ShoeCard
from dealer_assist.vision.verdict import Verdict

#: How long a shoe card waits for the camera to see it land (seconds) before it is placed by
#: the rules or asked about; a sighting from a frame older than this shows no decision.
CAMERA_WAIT_S = 1.5
#: How long a landing waits for its shoe card (seconds) before it is a card that never left the
#: shoe; from a shoe that sends heartbeats, also until one comes after the landing (a cable
#: pulled gives no error: the card drawn just after it waits for the link's drop, and is then
#: read from the camera), but never past :data:`SHOE_SILENT_WAIT_S`.
SHOE_WAIT_S = 1.0
#: The longest a landing waits for a heartbeat (seconds): longer than a shoe reader takes to
#: call a silent link down (no frame for ``LINK_TIMEOUT_S``, then the port closed).
SHOE_SILENT_WAIT_S = LINK_TIMEOUT_S + 2 * HEARTBEAT_INTERVAL_S
#: Past this lag (seconds from a frame's grab to its sighting reaching the table) the camera is
#: behind: a sighting is a landing only of its very code's shoe card, and answers no question.
MAX_CAMERA_LAG_S = 0.5


@dataclass(frozen=True, slots=True)
class Pending:
    """A shoe card waiting for its landing, or a landing waiting for its shoe card."""

    since: float
    shoe: ShoeCard | None = None
    felt: FeltCard | None = None
    rejected: bool = False  # a shoe card refused on sight (pip ten, beyond composition)
    stray: bool = False  # a landing at the dealer's seen before this round's first bet
    serial: int = 0  # a shoe card's: how many shoe cards the table had had before it
    #: a shoe card's: a sighting of its code may have been another card's (one of its code
    #: was placed unseen just before), so none is taken for its landing
    unsure: bool = False
    #: a landing's: its frame was older than the camera's wait when it came, so it shows no
    #: decision; it is only checked against where its card went
    late: bool = False
    #: a landing's: the number of the input that reported it, in the order the inputs came
    number: int = 0


class MatchKind(enum.Enum):
    """What became of the first shoe card waiting."""

    LANDED = "landed"  #: the sighting is its landing: place it there
    UNSEEN = "unseen"  #: no sighting is surely its: place it by the rules (or ask)
    SWITCHED = "switched"  #: its landing reads as another card: an alarm; placed as unseen
    LATE = "late"  #: its landing came late: placed as unseen, then the landing checked
    STRAY = "stray"  #: drawn after the last round settled, seen at the dealer's: in no round
    #: with the shoe's link down, ``felt`` (left waiting) reads as a card it has not reported,
    #: landed after this one: placed as unseen, with an alarm; the landing is the camera's
    UNREPORTED_AFTER = "unreported after"
    DROPPED = "dropped"  #: refused on sight (its alarm raised): gone, with its sighting if any


@dataclass(frozen=True, slots=True)
class Match:
    kind: MatchKind
    shoe: ShoeCard
    felt: FeltCard | None = None


class LateSighting(enum.Enum):
    """What a sighting is to the cards placed unseen."""

    NEW = "new"  #: none of them: a card's landing as any other
    TAKEN = "taken"  #: the late sighting of a placed card (or, unsure, of none): nothing to do
    MISPLACED = "misplaced"  #: a placed card's, seen elsewhere than where it was recorded


class CardsInFlight:
    """The shoe cards out and waiting (``shoe``, numbered as they came), the landings waiting
    (``felt``), and the cards placed this round with no landing taken (``placed_unseen``: card,
    where recorded), each until a sighting of it comes or the round ends; and how many cards
    refused on sight this round left flight with no sighting taken (``refused_unsighted``: they
    lie on the felt, recorded nowhere)."""

    def __init__(self) -> None:
        self.shoe: deque[Pending] = deque()
        self.felt: deque[Pending] = deque()
        self.placed_unseen: list[tuple[Card, CardTarget]] = []
        self.refused_unsighted = 0
        self.had = 0  # shoe cards ever added: each one's serial

    def add_shoe(self, item: ShoeCard, now: float, rejected: bool) -> None:
        self.had += 1
        self.shoe.append(Pending(now, shoe=item, rejected=rejected, serial=self.had))

    def add_felt(self, item: FeltCard, now: float, late: bool = False, number: int = 0) -> None:
        """A landing waiting for its shoe card, reported by input ``number``; ``late``: it shows
        no decision (see :attr:`Pending.late`)."""
        self.felt.append(Pending(now, felt=item, late=late, number=number))

    def may_have_landed(self, card: Card, keyed_at: CardTarget | None = None) -> bool:
        """With the camera lost: whether a shoe card of ``card`` joins the shoe cards waiting,
        to be paired by the usual rules with the landings the camera reported before: while
        one of them waits (none is overtaken), or where one may be its (its code, or
        unreadable) and the dealer did not key it where it lies (``keyed_at``). Otherwise it is
        placed at once: its own landing cannot be seen, so a landing of another code is no
        evidence of it."""
        if not self.felt:
            return False
        return bool(self.shoe) or keyed_at is None and any(_may_be(p, card) for p in self.felt)

    def take_landing(self, card: Card, spot: CardTarget) -> None:
        """The dealer keyed ``card`` where it lies, at ``spot``: the first landing waiting
        there that may be it (its code, or unreadable) is its, and waits no more."""
        index = next((i for i, p in enumerate(self.felt)
                      if _may_be(p, card) and p.felt is not None and p.felt.spot.matches(spot)),
                     None)
        if index is not None:
            del self.felt[index]

    def placed(self, card: Card, target: CardTarget) -> None:
        """``card`` was placed at ``target`` with no landing taken for it."""
        self.placed_unseen.append((card, target))

    def take_unseen(self) -> Pending:
        """Take the first shoe card waiting off the queue with no landing taken for it (the
        caller places it, unless it was refused on sight)."""
        pending = self.shoe.popleft()
        if pending.rejected:
            self.refused_with_no_sighting()
        return pending

    def refused_with_no_sighting(self) -> None:
        """A card refused on sight left flight (or never entered it: the camera out) with no
        sighting taken: it lies on the felt, recorded nowhere."""
        self.refused_unsighted += 1

    def new_round(self) -> None:
        """A new round: the last one's cards placed unseen are no longer checked."""
        self.placed_unseen.clear()
        self.refused_unsighted = 0

    def codes(self) -> tuple[str, ...]:
        """The codes of the shoe cards waiting for their landing, oldest first (for the camera
        to check new cards against)."""
        return tuple(p.shoe.card.code for p in self.shoe if p.shoe is not None and not p.rejected)

    def in_flight(self, drawn: int) -> bool:
        """Whether a shoe card among numbers 1 to ``drawn`` waits for its landing."""
        return any(p.serial <= drawn for p in self.shoe if not p.rejected)

    def unsighted(self, card: Card) -> int:
        """Cards of this code out with no sighting taken for them, waiting or placed unseen."""
        return sum(1 for p in self.shoe if p.shoe is not None and p.shoe.card == card) + \
            sum(1 for p in self.placed_unseen if p[0] == card)

    def sole_unsighted(self) -> bool:
        """Whether the first shoe card waiting is the only card out with no landing taken for it
        (none other waits, none this round was placed unseen or refused unsighted): an
        unreadable landing is then surely its."""
        return len(self.shoe) == 1 and not self.placed_unseen and not self.refused_unsighted

    def late_sighting(self, card: Card,
                      spot: CardTarget) -> tuple[LateSighting, tuple[Card, CardTarget] | None]:
        """A sighting of ``card`` at ``spot``, against the cards placed unseen: the late sighting
        of one (checked against its place: MISPLACED names the card and where it was recorded),
        or a new landing. Where a shoe card of its code waits too, the sighting may be either's:
        it is taken as neither's landing, and no later sighting of that code is taken for the
        waiting card's (it is marked unsure: placed as unseen)."""
        placed = [i for i, p in enumerate(self.placed_unseen) if p[0] == card]
        waiting = [i for i, p in enumerate(self.shoe)
                   if p.shoe is not None and p.shoe.card == card]
        unsure = any(self.shoe[i].unsure for i in waiting)
        if not placed:
            return (LateSighting.TAKEN if unsure else LateSighting.NEW), None
        seen = spot
        fits = [i for i in placed if seen.matches(self.placed_unseen[i][1])]
        if waiting:
            for i in waiting:
                self.shoe[i] = replace(self.shoe[i], unsure=True)
            if fits:
                del self.placed_unseen[fits[0]]
            return LateSighting.TAKEN, None
        if fits:
            del self.placed_unseen[fits[0]]
            return LateSighting.TAKEN, None
        placed_card, target = self.placed_unseen.pop(placed[0])
        return LateSighting.MISPLACED, (placed_card, target)

    def next_match(self, now: float, *, force: bool, behind: bool, mismatch_wait_s: float,
                   sole: bool, placeable: Callable[[Pending], bool],
                   shoe_down: bool = False) -> Match | None:
        """Take the first shoe card waiting off the queue with what became of it, or None: no
        landing waits, or it must wait longer (for its own landing; a landing of another code is
        taken only after ``mismatch_wait_s``, or at once with ``force``; while the camera is
        ``behind``, only its own). A sighting is its landing only where surely its: not one
        whose code two cards out share, nor an unreadable one unless it is the ``sole`` card out
        with no landing, nor a ``late`` one (LATE: placed as unseen, the landing to check); a
        landing of a later shoe card places it first, as unseen, and so, while the shoe's link
        is ``shoe_down``, does a first landing (late or not) that reads as another code, the
        camera not unsure of it, for the last card out and not refused on sight
        (UNREPORTED_AFTER: a card the shoe has not reported, or this one misread or switched;
        the landing is left waiting). A landing the camera checked against this card's code is
        its landing where it matched (it then reads as its code), is taken at once as switched
        where surely another card (a mismatch), and never switched where unsure (placed as
        unseen, no alarm)."""
        if not (self.shoe and self.felt and placeable(self.shoe[0])):
            return None
        head = self.shoe[0]
        shoe = head.shoe
        assert shoe is not None
        felts = [p.felt for p in self.felt]
        index = None if head.unsure else next(
            (i for i, f in enumerate(felts) if f and f.card == shoe.card), None)
        if index is not None and sum(1 for p in self.shoe
                                     if p.shoe and p.shoe.card == shoe.card) > 1:
            # two of this code out of the shoe, one sighting: whose landing it is cannot be
            # told, so it places neither
            del self.felt[index]
            self.take_unseen()
            return Match(MatchKind.DROPPED if head.rejected else MatchKind.UNSEEN, shoe)
        if index is None and any(f and f.card == p.shoe.card for f in felts
                                 for p in list(self.shoe)[1:] if p.shoe):
            # a later card's landing is seen: this one's was missed, and it is placed first
            self.take_unseen()
            return Match(MatchKind.DROPPED if head.rejected else MatchKind.UNSEEN, shoe)
        # (only the last card reported before the drop: a card drawn after another is that one)
        after = _reads_as_another(self.felt, shoe.card) \
            if shoe_down and index is None and not head.rejected and len(self.shoe) == 1 \
            else None
        if after is not None:
            # drawn after it with the link down, or it misread: which, the resend tells
            self.take_unseen()
            return Match(MatchKind.UNREPORTED_AFTER, shoe, after)
        if index is None and behind:
            return None  # the shoe card waits for its own landing, or is asked about
        if index is None:
            # a landing the camera checked against this very card and found surely another:
            # its landing, switched; no wait for another
            index = next((i for i, p in enumerate(self.felt)
                          if p.felt and p.felt.verdict == Verdict.MISMATCH.value
                          and p.felt.checked == shoe.card and not (p.stray or p.late)), None)
        sure = True
        if index is None:
            index = next((i for i, p in enumerate(self.felt)
                          if p.felt and p.felt.card is None and not p.late), None)
            sure = index is None or sole
        if index is None:
            unmarked = [i for i, p in enumerate(self.felt) if not (p.stray or p.late)]
            if not unmarked or (not force and now - head.since < mismatch_wait_s):
                return None
            index = unmarked[0]
        felt, stray, late = felts[index], self.felt[index].stray, self.felt[index].late
        assert felt is not None
        del self.felt[index]
        self.shoe.popleft()
        if head.rejected:
            return Match(MatchKind.DROPPED, shoe, felt)  # the card on the felt is that same card
        if stray:
            return Match(MatchKind.STRAY, shoe, felt)
        if late:  # its own code, seen too late to say where it went or which play took it
            return Match(MatchKind.LATE, shoe, felt)
        if not sure:  # an unreadable landing that may be another card's
            return Match(MatchKind.UNSEEN, shoe, felt)
        if felt.card is not None and felt.card != shoe.card:
            # checked, neither its code nor surely another: no alarm
            if felt.verdict == Verdict.UNSURE.value:
                return Match(MatchKind.UNSEEN, shoe, felt)
            return Match(MatchKind.SWITCHED, shoe, felt)
        return Match(MatchKind.LANDED, shoe, felt)


def _may_be(landing: Pending, card: Card) -> bool:
    """A waiting landing that may be ``card``'s: read as its code, or unreadable."""
    return landing.felt is not None and landing.felt.card in (None, card)


def _reads_as_another(felt: deque[Pending], card: Card) -> FeltCard | None:
    """The first landing waiting (not stray) where it reads as a code other than ``card``'s,
    the camera not unsure that it is ``card`` misread."""
    first = next((p.felt for p in felt if not p.stray), None)
    if first is None or first.card in (None, card) or first.verdict == Verdict.UNSURE.value:
        return None
    return first
