"""Integrity alarms over a stream of shoe events: small, pure, reused by the live table loop.

``ShoeIntegrity.check(event)`` returns the alarms that event raises, given what came before.
"""

from __future__ import annotations

import enum
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

from dealer_assist.rules.cards import Card, composition_breach
from dealer_assist.shoe.events import (
    BurnCard,
    CardDrawn,
    CountMismatch,
    EventsLost,
    LidOpened,
    LinkDown,
    MalformedFrame,
    ShoeAlarm,
    ShoeEmpty,
    ShoeEvent,
    ShoeLoaded,
    UnreadableCard,
)

_Raise = Callable[["IntegrityKind", str], None]


class IntegrityKind(enum.Enum):
    """Why an alarm was raised."""

    PIP_TEN = "pip_ten"
    """A ten came out of a Spanish shoe, which holds none."""
    EXCESS_COPIES = "excess_copies"
    """More copies of one card than the loaded decks hold: a foreign or re-inserted card."""
    UNREADABLE_CARD = "unreadable_card"
    """A card left the shoe unidentified; the round cannot be adjudicated from the shoe alone."""
    CARD_WHILE_EMPTY = "card_while_empty"
    """A card arrived after the shoe reported itself empty."""
    LID_OPENED_MID_SHOE = "lid_opened_mid_shoe"
    """The shoe's lid opened after cards were drawn and before the shoe ran out."""
    SHOE_REPORTED = "shoe_reported"
    """The shoe raised an alarm of its own."""
    UNDECODABLE = "undecodable"
    """Data from the shoe could not be understood: treat as a possibly lost card."""
    COUNT_MISMATCH = "count_mismatch"
    """At the end of a shoe the cards read do not match its composition (shoes without numbers)."""
    LINK_DOWN = "link_down"
    """The link to the shoe is down; cards drawn meanwhile are not yet known."""
    EVENTS_LOST = "events_lost"
    """The shoe cannot resend events the host lacks: cards drawn then are not known."""


@dataclass(frozen=True, slots=True)
class IntegrityAlarm:
    """One alarm: its kind, a message for the pit, and the event that raised it."""

    kind: IntegrityKind
    message: str
    event: ShoeEvent

    def to_json(self) -> dict[str, object]:
        return {"event": "integrity", "alarm": self.kind.value, "message": self.message}


class ShoeIntegrity:
    """Tracks one shoe's composition and state and raises :class:`IntegrityAlarm` values.

    ``decks`` sets the composition before any :class:`ShoeLoaded` arrives (for shoes that never
    say); a ``ShoeLoaded`` with a deck count replaces it. Without a deck count, copies are not
    checked but every other alarm still is.
    """

    def __init__(self, decks: int | None = None) -> None:
        self.decks: int | None = None
        self.seen: Counter[Card] = Counter()
        self.drawn = 0
        self.empty = False
        self._load(decks)

    def _load(self, decks: int | None) -> None:
        self.decks = decks or None
        self.seen = Counter()
        self.drawn = 0
        self.empty = False

    def check(self, event: ShoeEvent) -> list[IntegrityAlarm]:
        """The alarms ``event`` raises; updates the tracked state."""
        alarms: list[IntegrityAlarm] = []

        def alarm(kind: IntegrityKind, message: str) -> None:
            alarms.append(IntegrityAlarm(kind, message, event))

        if isinstance(event, ShoeLoaded):
            self._load(event.decks or self.decks)
            if not event.spanish:
                alarm(
                    IntegrityKind.PIP_TEN,
                    f"shoe loaded with {event.decks} standard "
                    "52-card decks, which hold pip tens; this is a Spanish 21 table",
                )
        elif isinstance(event, CardDrawn | BurnCard | UnreadableCard):
            what = "burn card" if isinstance(event, BurnCard) else "card"
            if self.empty:
                alarm(
                    IntegrityKind.CARD_WHILE_EMPTY,
                    f"{what} at shoe index {event.index} (seq {event.seq}) after the shoe "
                    f"reported empty",
                )
            self.drawn += 1
            card = None if isinstance(event, UnreadableCard) else event.card
            if card is None:
                alarm(
                    IntegrityKind.UNREADABLE_CARD,
                    f"unreadable {what} at shoe index {event.index} (seq {event.seq})",
                )
            elif not isinstance(event, UnreadableCard):
                self._count(card, what, event, alarm)
        elif isinstance(event, ShoeEmpty):
            self.empty = True
        elif isinstance(event, LidOpened):
            if self.drawn and not self.empty:
                alarm(
                    IntegrityKind.LID_OPENED_MID_SHOE,
                    f"lid opened after {self.drawn} cards, before the shoe ran out "
                    f"(seq {event.seq})",
                )
        elif isinstance(event, ShoeAlarm):
            alarm(IntegrityKind.SHOE_REPORTED, f"shoe alarm {event.code}: {event.text}")
        elif isinstance(event, MalformedFrame):
            alarm(
                IntegrityKind.UNDECODABLE,
                f"undecodable data at byte offset {event.offset} (seq {event.seq}): "
                f"{event.reason}; a card may be missing",
            )
        elif isinstance(event, CountMismatch):
            alarm(
                IntegrityKind.COUNT_MISMATCH,
                f"{event.counted} cards read of {event.expected}; missing "
                f"{', '.join(event.missing) or 'none'}; in excess "
                f"{', '.join(event.excess) or 'none'}",
            )
        elif isinstance(event, EventsLost):
            held = (f"session {event.held_session} seq {event.held_seq}"
                    if event.held_session != event.session else f"seq {event.held_seq}")
            alarm(
                IntegrityKind.EVENTS_LOST,
                f"the shoe cannot resend its events after session {event.session} seq "
                f"{event.last_seq} (it holds them from {held} on): any card drawn in between is "
                "not known; check the felt against the screen",
            )
        elif isinstance(event, LinkDown):
            alarm(IntegrityKind.LINK_DOWN, f"shoe link down ({event.url}): {event.reason}")
        return alarms

    def _count(self, card: Card, what: str, event: CardDrawn | BurnCard, alarm: _Raise) -> None:
        breach = composition_breach(card, self.seen[card], self.decks)
        self.seen[card] += 1
        where = f"shoe index {event.index} (seq {event.seq})"
        if breach is not None and breach.pip_ten:
            alarm(
                IntegrityKind.PIP_TEN,
                f"pip ten {card.code} as {what} at {where}: a Spanish shoe holds no tens",
            )
        elif breach is not None:
            alarm(
                IntegrityKind.EXCESS_COPIES,
                f"{card.code} seen {breach.copy} times at {where}; the shoe holds {breach.held}",
            )
