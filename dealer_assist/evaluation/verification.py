"""Scoring the table's shoe check on rendered sequences: each card checked against the shoe's
code as it lands, per physical card over the deal.

The shoe names each card as it leaves it; from the frame a card lands its code is in flight,
oldest first, until the camera reports a card matching it (:data:`FLIGHTS`: or, as the table's
pairing does, until a later code's card is matched or its wait is over). Every frame goes
through :class:`~dealer_assist.vision.shoe_check.ShoeCheck` (what the table's camera runs) with
those codes, and each card it reports appearing or changing is placed by its point at that
frame as :func:`~dealer_assist.evaluation.score.card_reported` places a report. Per card that
counts (its index shows in at least ``TRACK_FRAMES`` frames):

- landed: any card reported on it, whatever its code or verdict (the table saw a card land);
- verified: a report on it with its own code and the verdict "match";
- wrong match: a report on it matched to another card's code (a wrong card taken for the
  shoe's: the failure that would move money);
- false switched: a report on it with the verdict "mismatch" (the "switched card" alarm on a
  card that was not switched).

Reports on no card are counted apart (``stray``). Every figure is kept per group as
:mod:`~dealer_assist.evaluation.score` keeps them (design, width band, place, sideways, and the
headline: cards that pass the install checks). Each wrong match is listed too
(:class:`WrongMatch`): the failure to look at one by one. Each card that counts and never
landed is put down to what the camera saw of it (:data:`UNLANDED`), from each frame's readings
at its own indices.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

import cv2
import numpy as np

from dealer_assist.evaluation.render import Sequence, TrueCard
from dealer_assist.evaluation.score import card_reported, groups_of
from dealer_assist.table.pairing import CAMERA_WAIT_S
from dealer_assist.vision.detector import CardDetector
from dealer_assist.vision.reader import RANK_CLASSES, SUIT_CLASSES
from dealer_assist.vision.shoe_check import FAINT_ACCEPT, FrameReading, ShoeCheck
from dealer_assist.vision.tracker import CardEvent, CardTracker, EventKind
from dealer_assist.vision.verdict import Verdict
from dealer_assist.vision.verify import ACCEPT

#: What the camera saw of a card that never landed, over the frames its index shows in:
#: ``not_found``, none of the check's index boxes (found down to its faint presence and taken
#: by the reader for an index) centred on an index of it with no other card over that point;
#: ``not_as_itself``, boxes there, none read as its own code as the check would accept it (at
#: :data:`~dealer_assist.vision.verify.ACCEPT`, a faint box at
#: :data:`~dealer_assist.vision.shoe_check.FAINT_ACCEPT`; that frame's reading alone);
#: ``as_itself_once``, read so in one frame only (the two matched sightings the tracker asks
#: for never came); ``as_itself_twice_or_more``, in two frames or more (the check or the
#: tracker lost a card it read).
UNLANDED = ("not_found", "not_as_itself", "as_itself_once", "as_itself_twice_or_more")

#: How the shoe's codes leave flight (``evaluate --flight``). ``kept``: each only once a card is
#: reported matching it, so an old code stays open to a misread to the deal's end (the harder
#: test). ``table``: as the table's pairing (:class:`~dealer_assist.table.pairing.CardsInFlight`)
#: takes them out while no question is open: also once a later code's card is matched (the
#: older are placed as unseen) and once a code has waited the camera's wait
#: (:data:`~dealer_assist.table.pairing.CAMERA_WAIT_S` at :data:`TABLE_FPS`). Neither lets a
#: landing that matched no code take the oldest code, as the table's pairing may after its
#: mismatch wait: at a table an old code leaves flight sooner still.
FLIGHTS = ("kept", "table")
#: Frames a second the table's camera reads at most: the frame clock of ``table``.
TABLE_FPS = 8
#: The camera's wait in frames at :data:`TABLE_FPS`.
WAIT_FRAMES = round(CAMERA_WAIT_S * TABLE_FPS)


@dataclass
class CheckTally:
    """Counts behind one group's landing and verification figures."""

    counted: int = 0  # cards that count (every rate's denominator)
    landed: int = 0
    verified: int = 0
    wrong_match: int = 0
    false_switched: int = 0
    stray: int = 0
    #: counted cards that never landed, by :data:`UNLANDED` reason
    unlanded: Counter[str] = field(default_factory=Counter)

    def add(self, other: CheckTally) -> None:
        self.counted += other.counted
        self.landed += other.landed
        self.verified += other.verified
        self.wrong_match += other.wrong_match
        self.false_switched += other.false_switched
        self.stray += other.stray
        self.unlanded.update(other.unlanded)

    def rate(self, count: int) -> float:
        return count / self.counted if self.counted else 0.0

    def to_json(self) -> dict[str, object]:
        return {"cards": self.counted, "landed": self.landed, "verified": self.verified,
                "wrong_match": self.wrong_match, "false_switched": self.false_switched,
                "stray": self.stray, "landing": round(self.rate(self.landed), 5),
                "verification": round(self.rate(self.verified), 5),
                "wrong_match_rate": round(self.rate(self.wrong_match), 5),
                "false_switched_rate": round(self.rate(self.false_switched), 5),
                "unlanded": {reason: self.unlanded[reason] for reason in UNLANDED}}


@dataclass(frozen=True)
class WrongMatch:
    """A card taken for another code in flight: the design, the deal (its number in the run;
    -1 where not given), the frame, the card's own code, the code it was taken for, whether it
    is a headline card, the codes in flight then, and whether another report over the deal
    verified the card as itself too."""

    design: str
    deal: int
    frame: int
    card: str
    taken_for: str
    headline: bool
    in_flight: tuple[str, ...]
    verified_too: bool

    def to_json(self) -> dict[str, object]:
        return {"design": self.design, "deal": self.deal, "frame": self.frame,
                "card": self.card, "taken_for": self.taken_for, "headline": self.headline,
                "in_flight": list(self.in_flight), "verified_too": self.verified_too}


@dataclass(frozen=True)
class UnlandedCard:
    """A counted card that never landed: the design, the deal (-1 where not given), the card,
    its width, place and the frame it arrived in, whether it is a headline card, the
    :data:`UNLANDED` reason, the frames an index box of the check was found on it and read as
    itself in, and the best reading there: its own code's probability (the reader's rank
    times suit) and the code read surest, with that probability (``""``: never found)."""

    design: str
    deal: int
    card: str
    width_px: float
    place: str
    arrives: int
    headline: bool
    reason: str
    found: int
    as_itself: int
    own: float
    read_as: str
    read_at: float

    def to_json(self) -> dict[str, object]:
        return {"design": self.design, "deal": self.deal, "card": self.card,
                "width_px": round(self.width_px, 1), "place": self.place,
                "arrives": self.arrives, "headline": self.headline, "reason": self.reason,
                "found": self.found, "as_itself": self.as_itself, "own": round(self.own, 3),
                "read_as": self.read_as, "read_at": round(self.read_at, 3)}


@dataclass
class CheckReport:
    """Per-card tallies by group (:func:`groups_of`), every wrong match and every counted card
    that never landed."""

    card: dict[str, CheckTally] = field(default_factory=dict)
    wrong: list[WrongMatch] = field(default_factory=list)
    unlanded: list[UnlandedCard] = field(default_factory=list)

    def add(self, other: CheckReport) -> None:
        for group, tally in other.card.items():
            self.card.setdefault(group, CheckTally()).add(tally)
        self.wrong += other.wrong
        self.unlanded += other.unlanded


class Flight:
    """The shoe's codes in flight, oldest first, as the evaluation's ``protocol`` (one of
    :data:`FLIGHTS`) keeps them over a deal's frames."""

    def __init__(self, protocol: str = "kept") -> None:
        if protocol not in FLIGHTS:
            raise ValueError(f"no such flight protocol: {protocol!r} (one of {FLIGHTS})")
        self.table = protocol == "table"
        self._codes: list[tuple[str, int]] = []  # (code, the frame it came in flight)

    def arrive(self, code: str, frame: int) -> None:
        """``code`` left the shoe: its card lands in ``frame``."""
        self._codes.append((code, frame))

    def codes(self, frame: int) -> tuple[str, ...]:
        """The codes in flight at ``frame``, oldest first (under ``table``, less those that
        have waited the camera's wait: placed as unseen)."""
        if self.table:
            self._codes = [(code, since) for code, since in self._codes
                           if frame - since < WAIT_FRAMES]
        return tuple(code for code, _ in self._codes)

    def matched(self, code: str) -> None:
        """A card was reported matching ``code``: its landing, out of flight (under ``table``,
        with every older code: a later card's landing paired, the older are placed unseen)."""
        at = next((i for i, (c, _) in enumerate(self._codes) if c == code), None)
        if at is not None:
            del self._codes[0 if self.table else at:at + 1]


def check_sequence(seq: Sequence, detector: CardDetector, deal: int = -1,
                   flight: str = "kept") -> CheckReport:
    """Run the shoe check over ``seq``'s frames with its cards' codes in flight as they land,
    kept as the ``flight`` protocol keeps them (:data:`FLIGHTS`), and score every card it
    reports (``deal``: its number in the run, for the wrong matches)."""
    check = ShoeCheck(detector, CardTracker())
    codes = Flight(flight)
    events: list[CardEvent] = []
    flying: dict[int, tuple[str, ...]] = {}
    sightings = Sightings()
    for number, frame in enumerate(seq.frames):
        for card in seq.cards:
            if card.arrives == number:
                codes.arrive(card.code, number)
        flying[number] = in_flight = codes.codes(number)
        check.expect(in_flight)
        reading = check.read(frame)
        sightings.add(seq, number, reading)
        for event in check.track(number, reading):
            events.append(event)
            if event.verdict == Verdict.MATCH.value:
                codes.matched(event.card)
    return score_checks(seq, events, flying, deal, sightings)


class Sightings:
    """Per card, the frames its index shows in where an index box of the check's reading is
    centred on one of its indices, no other card over that point (``found``), and where one of
    those boxes reads as its own code as the check would accept it (``as_itself``)."""

    def __init__(self) -> None:
        self.found: Counter[int] = Counter()
        self.as_itself: Counter[int] = Counter()
        #: per card, its own code's best probability at its boxes, and the surest reading
        self.own: dict[int, float] = {}
        self.read: dict[int, tuple[str, float]] = {}

    def add(self, seq: Sequence, frame: int, reading: FrameReading) -> None:
        """The check's ``reading`` of ``seq``'s ``frame``."""
        centres = ((reading.boxes[:, :2] + reading.boxes[:, 2:]) / 2).tolist()
        for card in seq.cards_on(frame):
            if not card.visible(frame):
                continue
            rows = [i for i, (x, y) in enumerate(centres)
                    if any(cv2.pointPolygonTest(quad.astype(np.float32), (x, y), False) >= 0
                           for quad in card.index_quads) and _topmost(seq, x, y, frame) is card]
            if not rows:
                continue
            self.found[card.number] += 1
            rank, suit = RANK_CLASSES.index(card.code[0]), SUIT_CLASSES.index(card.code[1])
            accept = np.where(reading.faint[rows], FAINT_ACCEPT, ACCEPT)
            own = reading.ranks[rows, rank] * reading.suits[rows, suit]
            if bool((own >= accept).any()):
                self.as_itself[card.number] += 1
            self.own[card.number] = max(self.own.get(card.number, 0.0), float(own.max()))
            for i in rows:
                r = int(reading.ranks[i].argmax())
                u = int(reading.suits[i].argmax())
                sure = float(reading.ranks[i, r] * reading.suits[i, u])
                if sure > self.read.get(card.number, ("", -1.0))[1]:
                    self.read[card.number] = (RANK_CLASSES[r] + SUIT_CLASSES[u], sure)

    def unlanded(self, card: TrueCard) -> str:
        """The :data:`UNLANDED` reason for ``card``, which never landed."""
        if not self.found[card.number]:
            return UNLANDED[0]
        return UNLANDED[min(self.as_itself[card.number], 2) + 1]

    def missed(self, seq: Sequence, card: TrueCard, deal: int) -> UnlandedCard:
        """``card`` of ``seq``, which never landed, as listed."""
        read_as, read_at = self.read.get(card.number, ("", 0.0))
        return UnlandedCard(seq.design, deal, card.code, card.width_px, card.place,
                            card.arrives, "headline" in groups_of(card, seq.sharp),
                            self.unlanded(card), self.found[card.number],
                            self.as_itself[card.number], self.own.get(card.number, 0.0),
                            read_as, read_at)


def _topmost(seq: Sequence, x: float, y: float, frame: int) -> TrueCard | None:
    """The card on top at ``(x, y)`` in ``frame``; None: on no card."""
    under = [card for card, distance in seq.distances_at(x, y, frame) if distance >= 0]
    return under[-1] if under else None


def score_checks(seq: Sequence, events: list[CardEvent],
                 in_flight: dict[int, tuple[str, ...]] | None = None,
                 deal: int = -1, sightings: Sightings | None = None) -> CheckReport:
    """Score the shoe check's ``events`` over ``seq`` (see the module's docstring);
    ``in_flight``: the codes in flight at each frame, for the wrong matches; ``sightings``:
    what the check read at each card's indices, for the cards that never landed."""
    report = CheckReport()
    per = {card.number: CheckTally() for card in seq.cards}
    stray = CheckTally()
    wrong: list[tuple[TrueCard, CardEvent]] = []
    for event in events:
        if event.kind is EventKind.REMOVED:
            continue
        card = card_reported(seq, event.card, event.x, event.y, event.frame)
        if card is None:
            stray.stray += 1
            continue
        t = per[card.number]
        t.landed = 1
        if event.verdict == Verdict.MATCH.value:
            if event.card == card.code:
                t.verified = 1
            else:
                if card.trackable() and not t.wrong_match:  # listed once a card, as counted
                    wrong.append((card, event))
                t.wrong_match = 1
        elif event.verdict == Verdict.MISMATCH.value:
            t.false_switched = 1
    report.wrong = [WrongMatch(seq.design, deal, event.frame, card.code, event.card,
                               "headline" in groups_of(card, seq.sharp),
                               (in_flight or {}).get(event.frame, ()),
                               bool(per[card.number].verified))
                    for card, event in wrong]
    for card in seq.cards:
        if not card.trackable():
            continue
        t = per[card.number]
        t.counted = 1
        if not t.landed and sightings is not None:
            report.unlanded.append(sightings.missed(seq, card, deal))
            t.unlanded[report.unlanded[-1].reason] = 1
        for name in groups_of(card, seq.sharp):
            report.card.setdefault(name, CheckTally()).add(t)
    report.card.setdefault("all", CheckTally()).add(stray)
    return report
