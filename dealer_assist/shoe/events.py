"""What a shoe reports, as frozen values.

Every source of shoe data (the framed protocol's :class:`~dealer_assist.shoe.decoder.ShoeDecoder`,
the :class:`~dealer_assist.shoe.ascii.AsciiShoeDecoder` for plain-text shoes, and the
:class:`~dealer_assist.shoe.reader.ShoeReader` for the state of the link) speaks in these events.
``session`` is the shoe-session id (new on each shoe load) and ``seq`` the event's sequence number
within it; together they identify an event exactly once.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any, ClassVar

from dealer_assist.rules.cards import Card


@dataclass(frozen=True, slots=True)
class ShoeEvent:
    """Base of every shoe event; ``kind`` names it in JSON output."""

    kind: ClassVar[str] = "event"

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict: ``{"event": kind, ...fields}``, cards as codes; ``resent`` only
        where true."""
        out: dict[str, Any] = {"event": self.kind}
        for item in fields(self):
            value = getattr(self, item.name)
            if item.name == "resent" and not value:
                continue
            out[item.name] = value.code if isinstance(value, Card) else value
        return out

    def describe(self) -> str:
        """One human line: the kind then ``name=value`` pairs."""
        values = self.to_json()
        kind = values.pop("event")
        return " ".join([kind] + [f"{k}={v}" for k, v in values.items()])


@dataclass(frozen=True, slots=True)
class SequencedEvent(ShoeEvent):
    """An event the shoe numbered; delivered exactly once, in order, and acknowledged.
    ``resent``: delivered after the link was re-opened and before :class:`CaughtUp`: drawn
    while the host could not hear the shoe (or, unavoidably, after it came back and before a
    heartbeat showed the shoe holding nothing unacknowledged, about half a second)."""

    session: int
    seq: int
    resent: bool = field(default=False, kw_only=True)


@dataclass(frozen=True, slots=True)
class CardDrawn(SequencedEvent):
    """A card left the shoe for play. ``index`` is its 1-based position in the shoe."""

    kind: ClassVar[str] = "card"
    card: Card
    index: int

    def describe(self) -> str:
        return f"card {self.card.code} seq={self.seq} index={self.index} session={self.session}"


@dataclass(frozen=True, slots=True)
class BurnCard(SequencedEvent):
    """A card drawn and discarded unplayed; ``card`` is None when the shoe could not read it."""

    kind: ClassVar[str] = "burn"
    card: Card | None
    index: int


@dataclass(frozen=True, slots=True)
class UnreadableCard(SequencedEvent):
    """A card left the shoe but the reader could not identify it."""

    kind: ClassVar[str] = "unreadable"
    index: int


@dataclass(frozen=True, slots=True)
class CutCardReached(SequencedEvent):
    """The cut card came out; ``index`` cards were drawn before it."""

    kind: ClassVar[str] = "cut_card"
    index: int


@dataclass(frozen=True, slots=True)
class ShoeEmpty(SequencedEvent):
    """The shoe has no cards left, after ``cards_drawn`` cards."""

    kind: ClassVar[str] = "shoe_empty"
    cards_drawn: int


@dataclass(frozen=True, slots=True)
class ShoeLoaded(SequencedEvent):
    """A new shoe was loaded (always ``seq == 1`` of a new session).

    ``decks`` is 0 when the shoe does not know; ``spanish`` says 48-card decks (no pip tens).
    ``previous_session``/``previous_seq`` name the last event of the shoe's previous session, so
    the host can tell whether it missed the end of that session (0/0: none or unknown).
    ``assumed``: the shoe said nothing; the decoder assumed a shoe when it started reading (an
    ASCII shoe never reports a load), so this is no reshuffle (in JSON only when true).
    """

    kind: ClassVar[str] = "shoe_loaded"
    decks: int
    spanish: bool
    cards: int
    previous_session: int
    previous_seq: int
    assumed: bool = False

    def to_json(self) -> dict[str, Any]:
        out = ShoeEvent.to_json(self)
        if not self.assumed:
            del out["assumed"]
        return out


@dataclass(frozen=True, slots=True)
class LidOpened(SequencedEvent):
    kind: ClassVar[str] = "lid_opened"


@dataclass(frozen=True, slots=True)
class LidClosed(SequencedEvent):
    kind: ClassVar[str] = "lid_closed"


@dataclass(frozen=True, slots=True)
class ShoeAlarm(SequencedEvent):
    """An alarm the shoe itself raised (jam, sensor fault, ...), with its code and text."""

    kind: ClassVar[str] = "shoe_alarm"
    code: int
    text: str


@dataclass(frozen=True, slots=True)
class MalformedFrame(SequencedEvent):
    """A numbered frame that passed its CRC but could not be understood (or, from an ASCII shoe,
    text that is not a known message). ``offset`` is the byte offset in the stream since the
    decoder started. Treat it as a possibly lost card."""

    kind: ClassVar[str] = "malformed"
    offset: int
    reason: str


@dataclass(frozen=True, slots=True)
class Heartbeat(ShoeEvent):
    """The shoe is alive; ``last_seq`` is the last sequence number it sent in ``session``;
    ``pending_session``/``pending_seq`` name the oldest event it holds unacknowledged (0/0: none).
    A host without state synchronises on it. ``delivered``: every event the shoe sent before it
    has been delivered (False: one is missing, and the decoder waits for its resend)."""

    kind: ClassVar[str] = "heartbeat"
    session: int
    last_seq: int
    pending_session: int
    pending_seq: int
    delivered: bool = field(default=True, kw_only=True)

    def to_json(self) -> dict[str, Any]:
        out = ShoeEvent.to_json(self)
        if self.delivered:
            del out["delivered"]
        return out


@dataclass(frozen=True, slots=True)
class Gap(ShoeEvent):
    """Events are missing: the host has ``session``/``last_seq`` and saw ``received_session``/
    ``received_seq``. The reader asks the shoe to resend; nothing after the gap is delivered
    until it is filled."""

    kind: ClassVar[str] = "gap"
    session: int
    last_seq: int
    received_session: int
    received_seq: int


@dataclass(frozen=True, slots=True)
class EventsLost(ShoeEvent):
    """The shoe cannot resend what the host lacks: the host has ``session``/``last_seq``, and
    the oldest event the shoe still holds is ``held_session``/``held_seq`` (a heartbeat says
    so); the events in between were acknowledged (by an earlier run of the host) and discarded.
    The decoder goes on from the oldest held; cards drawn in between are not known."""

    kind: ClassVar[str] = "events_lost"
    session: int
    last_seq: int
    held_session: int
    held_seq: int


@dataclass(frozen=True, slots=True)
class CaughtUp(ShoeEvent):
    """After the link was re-opened, every event the shoe held is delivered: a heartbeat showed
    it holding nothing unacknowledged, its last event ``session``/``seq``. Events after it are
    live."""

    kind: ClassVar[str] = "caught_up"
    session: int
    seq: int


@dataclass(frozen=True, slots=True)
class CountMismatch(ShoeEvent):
    """At the end of a shoe from a shoe without sequence numbers, the cards counted do not match
    the composition: ``missing`` were never read (lost or unreadable), ``excess`` came out more
    often than the decks hold (misread or foreign)."""

    kind: ClassVar[str] = "count_mismatch"
    session: int
    counted: int
    expected: int
    missing: tuple[str, ...]
    excess: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class LinkUp(ShoeEvent):
    """Valid frames are arriving from the shoe at ``url``."""

    kind: ClassVar[str] = "link_up"
    url: str


@dataclass(frozen=True, slots=True)
class LinkDown(ShoeEvent):
    """The link to the shoe at ``url`` is lost (port gone, or no frame within the heartbeat
    timeout). Cards drawn meanwhile arrive after the link comes back."""

    kind: ClassVar[str] = "link_down"
    url: str
    reason: str
