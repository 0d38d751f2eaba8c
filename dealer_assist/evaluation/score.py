"""Scoring the card models on rendered sequences: per frame and per physical card over frames.

Per frame, the cards that count are those with a visible corner index in that frame
(:meth:`~dealer_assist.evaluation.render.TrueCard.visible`). Each observation is placed by its
point: the cards under it in that frame, topmost last; it is taken to be of the topmost among
them with its code, or with its code and within :data:`EDGE_REACH` pixels outside, if there is
one, else of the topmost under it. Then:
- right: that card's code, the first observation of it this frame, and the card counts;
- ignored: that card's code but the card does not count (its indices too covered);
- misread: another code (a false card, with the confusion recorded);
- duplicate: a second right observation of one card (a false card);
- stray: on no card (a false card).
Landing: a counted card with any observation on it, whatever its code.

Per card (tracked): the observations of every frame go through the table's
:class:`~dealer_assist.vision.tracker.CardTracker`; the cards it holds after the last frame
(appeared or changed, not removed) are placed by their points in the last frame as above. The
cards that count are those whose index shows in at least ``TRACK_FRAMES`` frames
(:meth:`~dealer_assist.evaluation.render.TrueCard.trackable`).

Precision is right / (right + misread + duplicate + stray); recall is right / cards that count.
Every figure is also kept per group (design, card width band, dealer's row or player's hand,
sideways or not, and per frame the blur drawn).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

from dealer_assist.evaluation.render import Sequence, TrueCard
from dealer_assist.vision.detector import CardObservation
from dealer_assist.vision.tracker import CardEvent, CardTracker, EventKind

#: Card width bands (pixels, inclusive least, exclusive most); the install checks allow 70-95.
WIDTH_BANDS = ((60.0, 70.0, "60-69"), (70.0, 80.0, "70-79"), (80.0, 95.5, "80-95"))
INSTALL_WIDTH = (70.0, 95.5)
#: A report this close (pixels) outside a card of its own code is of that card: a card seen by
#: two corners on one long side (a design with an index at each corner) is placed between them,
#: on its edge, where a box a pixel or two off puts the point just outside it.
EDGE_REACH = 8.0


def width_band(width: float) -> str:
    """The band a card width falls in ("other" outside 60-95 px)."""
    for least, most, name in WIDTH_BANDS:
        if least <= width < most:
            return name
    return "other"


@dataclass
class Tally:
    """Counts behind one precision / recall / landing figure."""

    right: int = 0
    misread: int = 0
    duplicate: int = 0
    stray: int = 0
    ignored: int = 0
    counted: int = 0  # cards that count (the recall's denominator)
    landed: int = 0  # of them, with any observation on them
    confusions: Counter[tuple[str, str]] = field(default_factory=Counter)

    @property
    def false(self) -> int:
        return self.misread + self.duplicate + self.stray

    @property
    def precision(self) -> float:
        reported = self.right + self.false
        return self.right / reported if reported else 1.0

    @property
    def recall(self) -> float:
        return self.right / self.counted if self.counted else 0.0

    @property
    def landing(self) -> float:
        return self.landed / self.counted if self.counted else 0.0

    def add(self, other: Tally) -> None:
        self.right += other.right
        self.misread += other.misread
        self.duplicate += other.duplicate
        self.stray += other.stray
        self.ignored += other.ignored
        self.counted += other.counted
        self.landed += other.landed
        self.confusions.update(other.confusions)

    def to_json(self) -> dict[str, object]:
        return {"precision": round(self.precision, 4), "recall": round(self.recall, 4),
                "landing": round(self.landing, 4), "cards": self.counted, "right": self.right,
                "misread": self.misread, "duplicate": self.duplicate, "stray": self.stray,
                "ignored": self.ignored, "landed": self.landed}


def groups_of(card: TrueCard, sharp: bool) -> list[str]:
    """The groups a card belongs to: ``"all"``, its breakdown groups, and ``"headline"`` when it
    passes the install checks (``sharp``: its sequence's camera is within the bound)."""
    return ["all", f"design:{card.design}", f"width:{width_band(card.width_px)}",
            f"place:{card.place}", f"sideways:{'yes' if card.sideways else 'no'}",
            *(["headline"] if headline(card, sharp) else [])]


def headline(card: TrueCard, sharp: bool) -> bool:
    """True for a card that passes the install checks: 70-95 px wide, in a sharp camera."""
    return sharp and INSTALL_WIDTH[0] <= card.width_px < INSTALL_WIDTH[1]


@dataclass
class Report:
    """Per-frame and per-card tallies, overall, headline and by group."""

    frame: dict[str, Tally] = field(default_factory=dict)
    card: dict[str, Tally] = field(default_factory=dict)

    def tally(self, kind: str, group: str) -> Tally:
        table = self.frame if kind == "frame" else self.card
        return table.setdefault(group, Tally())

    def add(self, other: Report) -> None:
        for kind in ("frame", "card"):
            mine = self.frame if kind == "frame" else self.card
            for group, tally in (other.frame if kind == "frame" else other.card).items():
                mine.setdefault(group, Tally()).add(tally)


def card_reported(seq: Sequence, code: str, x: float, y: float, frame: int) -> TrueCard | None:
    """The card a report of ``code`` at ``(x, y)`` in ``frame`` is taken to be of: the topmost
    card of that code under the point or within :data:`EDGE_REACH` of it, else the topmost card
    under it; None: on no card."""
    around = seq.distances_at(x, y, frame)
    same = [c for c, distance in around if c.code == code and distance >= -EDGE_REACH]
    if same:
        return same[-1]
    here = [c for c, distance in around if distance >= 0]
    return here[-1] if here else None


def _score(report: Report, kind: str, points: Iterable[tuple[str, float, float]],
           seq: Sequence, frame: int, counts: dict[int, bool], extra: list[str]) -> None:
    """Score one set of reported cards (code, x, y) against the cards on the felt in ``frame``;
    ``counts[card number]`` says whether that card counts. ``extra``: groups for every card."""
    cards = seq.cards_on(frame)
    per: dict[int, Tally] = {c.number: Tally() for c in cards}
    stray = Tally()
    claimed: set[int] = set()
    for code, x, y in points:
        card = card_reported(seq, code, x, y, frame)
        if card is None:
            stray.stray += 1
            continue
        t = per[card.number]
        if counts.get(card.number):
            t.landed = 1
        if card.code != code:
            t.misread += 1
            t.confusions[(card.code, code)] += 1
        elif not counts.get(card.number):
            t.ignored += 1
        elif card.number in claimed:
            t.duplicate += 1
        else:
            claimed.add(card.number)
            t.right += 1
    for card in cards:
        t = per[card.number]
        t.counted = int(bool(counts.get(card.number)))
        for name in [*extra, *groups_of(card, seq.sharp)]:
            report.tally(kind, name).add(t)
    for name in ["all", *extra]:  # a false card on no card belongs to no card's groups
        report.tally(kind, name).add(stray)


def score_sequence(seq: Sequence, observed: list[list[CardObservation]]) -> Report:
    """Score one sequence from the observations of each of its frames."""
    if len(observed) != len(seq.frames):
        raise ValueError(f"{len(observed)} frames of observations for {len(seq.frames)} frames")
    report = Report()
    tracker = CardTracker()
    events: list[CardEvent] = []
    for f, observations in enumerate(observed):
        counts = {c.number: c.visible(f) for c in seq.cards_on(f)}
        _score(report, "frame", ((o.card, o.x, o.y) for o in observations), seq, f, counts,
               [f"blur:{seq.blur[f].split()[0]}"])
        events += tracker.update(f, observations)
    held: dict[int, tuple[str, float, float]] = {}
    for event in events:
        if event.kind is EventKind.REMOVED:
            held.pop(event.track, None)
        else:
            held[event.track] = (event.card, event.x, event.y)
    last = len(observed) - 1
    _score(report, "card", held.values(), seq, last,
           {c.number: c.trackable() for c in seq.cards_on(last)}, [])
    return report
