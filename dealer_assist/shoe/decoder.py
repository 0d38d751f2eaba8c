"""The pure decoder of the framed shoe protocol: bytes in (split anywhere), events out.

It resynchronises after garbage, drops and counts bad frames, delivers each numbered event exactly
once and in order (go-back-N: after a gap nothing is delivered until the shoe resends), and says
what to acknowledge. It never touches a port; :class:`~dealer_assist.shoe.reader.ShoeReader` does.
"""

from __future__ import annotations

import struct
from collections import deque
from dataclasses import dataclass, replace

from dealer_assist.rules.cards import Card, CardCodeError
from dealer_assist.shoe import protocol
from dealer_assist.shoe.events import (
    BurnCard,
    CardDrawn,
    CaughtUp,
    CutCardReached,
    EventsLost,
    Gap,
    Heartbeat,
    LidClosed,
    LidOpened,
    MalformedFrame,
    SequencedEvent,
    ShoeAlarm,
    ShoeEmpty,
    ShoeEvent,
    ShoeLoaded,
    UnreadableCard,
)
from dealer_assist.shoe.protocol import Frame, FrameSplitter, FrameType


@dataclass(slots=True)
class DecoderStats:
    """What the decoder delivered and dropped beyond framing errors (running totals)."""

    delivered: int = 0
    duplicates: int = 0
    out_of_order: int = 0
    gaps: int = 0
    malformed: int = 0
    unexpected: int = 0
    unsynchronised: int = 0


def _parse_card(code: bytes) -> Card:
    return Card.parse(code.decode("ascii"))


def event_from_frame(frame: Frame) -> SequencedEvent:
    """The event a numbered frame carries; a frame that makes no sense becomes
    :class:`MalformedFrame` (same session and seq) naming its offset and why."""
    s, q, p = frame.session, frame.seq, frame.payload
    try:
        if frame.version != protocol.VERSION:
            raise ValueError(f"protocol version {frame.version}, expected {protocol.VERSION}")
        kind = frame.type
        if kind == FrameType.CARD:
            code, index = protocol.CARD_PAYLOAD.unpack(p)
            return CardDrawn(s, q, _parse_card(code), index)
        if kind == FrameType.BURN:
            code, index = protocol.CARD_PAYLOAD.unpack(p)
            card = None if code == protocol.UNREAD_CODE else _parse_card(code)
            return BurnCard(s, q, card, index)
        if kind == FrameType.UNREADABLE:
            return UnreadableCard(s, q, protocol.INDEX_PAYLOAD.unpack(p)[0])
        if kind == FrameType.CUT_CARD:
            return CutCardReached(s, q, protocol.INDEX_PAYLOAD.unpack(p)[0])
        if kind == FrameType.SHOE_EMPTY:
            return ShoeEmpty(s, q, protocol.INDEX_PAYLOAD.unpack(p)[0])
        if kind == FrameType.SHOE_LOADED:
            decks, deck_kind, cards, prev_s, prev_q = protocol.LOADED_PAYLOAD.unpack(p)
            spanish = protocol.DeckKind(deck_kind) is protocol.DeckKind.SPANISH
            return ShoeLoaded(s, q, decks, spanish, cards, prev_s, prev_q)
        if kind == FrameType.ALARM:
            if not p:
                raise ValueError("alarm without a code")
            return ShoeAlarm(s, q, p[0], p[1:].decode("utf-8", "replace"))
        if kind == FrameType.LID_OPENED and not p:
            return LidOpened(s, q)
        if kind == FrameType.LID_CLOSED and not p:
            return LidClosed(s, q)
        raise ValueError(f"frame type {kind:#04x} with {len(p)} payload bytes is not an event")
    except (struct.error, ValueError, UnicodeDecodeError, CardCodeError) as exc:
        return MalformedFrame(s, q, frame.offset, f"{exc} (payload {p.hex()})")


class ShoeDecoder:
    """Turns the shoe's byte stream into :class:`ShoeEvent` values.

    ``feed`` may be given any split of the stream. Numbered events come out exactly once, in
    (session, seq) order; a duplicate is dropped; an event beyond the next expected one is held
    back as a :class:`Gap` (reported once per missing point) until the shoe resends. Events the
    shoe can no longer resend (a heartbeat names an oldest held event beyond the next expected:
    an earlier run acknowledged them) are reported as :class:`EventsLost`, and delivery goes on
    from the oldest held, rather than waiting for them for ever. Sessions are random ids, not
    ordered: the decoder remembers how far it delivered each of the last few sessions it left, so
    a held or resent event of one of them (its ACK not yet heard) is known as already delivered.
    After each feed, send :meth:`ack_frame` to the shoe; after a gap, :meth:`resend_frame`.

    After the link is re-opened (:meth:`link_reset`, with a delivery position to go on from),
    numbered events are marked ``resent`` until a heartbeat says the shoe holds nothing
    unacknowledged and has sent nothing not delivered: :class:`CaughtUp` says so there, and
    later events are live.
    """

    # sessions left behind whose delivered end is kept: an event held unacknowledged has at
    # most a window of events after it delivered, so at most that many sessions
    SESSIONS_REMEMBERED = protocol.WINDOW

    def __init__(self) -> None:
        self._splitter = FrameSplitter()
        self.session: int | None = None
        self.last_seq = 0
        self.awaiting_resend = False
        self.stale_heartbeats = 0  # consecutive heartbeats naming one event already acknowledged
        self._stale_pending: tuple[int, int] | None = None  # the event those heartbeats name
        self._gap_reported_at: tuple[int | None, int] | None = None
        self._oldest_held: tuple[int, int] = (0, 0)  # the shoe's, as its last heartbeat said
        self._left: deque[tuple[int, int]] = deque(maxlen=self.SESSIONS_REMEMBERED)
        # the last event the shoe was told is held, where that lags delivery (a reader that
        # acknowledges only what is durable); None: every delivered event is acknowledged
        self.acknowledged: tuple[int, int] | None = None
        #: re-opened and not yet caught up: delivered events are marked resent
        self.resending = False
        self.stats = DecoderStats()

    @property
    def framing(self) -> protocol.FramingStats:
        return self._splitter.stats

    @property
    def frames_seen(self) -> int:
        """Valid frames received so far (heartbeats included): the link's sign of life."""
        return self._splitter.stats.frames

    def link_reset(self) -> None:
        """The link was re-opened: drop any partial frame, keep the delivery position; what
        is delivered from here is marked resent until caught up."""
        self._splitter.reset()
        self.resending = self.session is not None

    def ack_frame(self) -> bytes | None:
        """ACK for everything delivered so far, or None before the first event."""
        if self.session is None:
            return None
        return protocol.encode_frame(FrameType.ACK, self.session, self.last_seq)

    def resend_frame(self) -> bytes:
        """RESEND: "I hold everything up to here; send the rest again now" (0/0: send all)."""
        return protocol.encode_frame(FrameType.RESEND, self.session or 0, self.last_seq)

    def feed(self, data: bytes | bytearray | memoryview) -> list[ShoeEvent]:
        """Decode bytes; return the events they complete, in order."""
        events: list[ShoeEvent] = []
        for frame in self._splitter.feed(data):
            if frame.type == FrameType.HEARTBEAT:
                self._heartbeat(events, frame)
            elif frame.type in (FrameType.ACK, FrameType.RESEND):
                self.stats.unexpected += 1  # our own frames echoed back (loop://)
            else:
                self._numbered(events, frame)
        return events

    def _heartbeat(self, events: list[ShoeEvent], frame: Frame) -> None:
        if len(frame.payload) == protocol.HEARTBEAT_PAYLOAD.size:
            pending_session, pending_seq = protocol.HEARTBEAT_PAYLOAD.unpack(frame.payload)
        else:
            self.stats.malformed += 1
            pending_session = pending_seq = 0
        at, heartbeat = len(events), Heartbeat(frame.session, frame.seq, pending_session,
                                               pending_seq)
        events.append(heartbeat)
        if self.session is None and frame.session != 0:
            # A host without state starts from the oldest event the shoe still holds.
            if pending_session and pending_seq:
                self.session, self.last_seq = pending_session, pending_seq - 1
                self.awaiting_resend = True
            else:
                self.session, self.last_seq = frame.session, frame.seq
        elif self._cannot_resend(pending_session, pending_seq, frame.session):
            self._lost(events, pending_session, pending_seq)
        elif self._behind(frame.session, frame.seq):
            self._gap(events, frame.session, frame.seq)
        if self.awaiting_resend:
            events[at] = replace(heartbeat, delivered=False)
        self._oldest_held = (pending_session, pending_seq)
        if self.resending and (pending_session, pending_seq) == (0, 0) and (
                frame.session == 0 or frame.seq == 0 or self._delivered(frame.session, frame.seq)):
            # Everything the shoe stored before this heartbeat was acknowledged, so delivered;
            # everything after it comes after it.
            events.append(CaughtUp(frame.session, frame.seq))
            self.resending = False
        # The shoe still holds an event we acknowledged: our ACKs are not reaching it. While cards
        # come fast each heartbeat may name a newer event whose ACK is still in flight; only the
        # same event named heartbeat after heartbeat shows that the ACKs are lost.
        unheard = self._acknowledged(pending_session, pending_seq)
        pending = (pending_session, pending_seq)
        if not unheard:
            self.stale_heartbeats = 0
        elif pending == self._stale_pending:
            self.stale_heartbeats += 1
        else:
            self.stale_heartbeats = 1
        self._stale_pending = pending if unheard else None

    def _cannot_resend(self, held_session: int, held_seq: int, shoe_session: int) -> bool:
        """Whether the shoe's oldest held event is beyond the next one we want, in this
        session or in a later one past its first event (a later session's first event names
        the end of ours: see :meth:`_numbered`). ``shoe_session``: the shoe's current session,
        as the same heartbeat says."""
        if self.session is None or held_session == 0 or held_seq == 0:
            return False
        if self._delivered(held_session, held_seq):
            return False  # the shoe has not heard our ACK yet: nothing is lost
        if held_session != self.session and shoe_session == self.session:
            return False  # held before the shoe's session, which is ours: one we passed
        if held_session == self.session:
            return held_seq > self.last_seq + 1
        return held_seq > 1

    def _delivered(self, session: int, seq: int) -> bool:
        """Whether (session, seq) was delivered already, in this session or one we left."""
        if seq <= 0:
            return False
        if session == self.session:
            return seq <= self.last_seq
        return any(session == left and seq <= end for left, end in self._left)

    def _acknowledged(self, session: int, seq: int) -> bool:
        """Whether the shoe was told (session, seq) is held: delivered, and at or before
        :attr:`acknowledged` where that is set."""
        if not self._delivered(session, seq):
            return False
        if self.acknowledged is None:
            return True
        told_session, told_seq = self.acknowledged
        if session == told_session:
            return seq <= told_seq
        order = [left for left, _ in self._left]
        # an event of a session left before the one acknowledged in: an ACK is cumulative
        return session in order and (told_session == self.session or (
            told_session in order and order.index(session) < order.index(told_session)))

    def _move_to(self, session: int, last_seq: int) -> None:
        """Deliver on from (session, last_seq); a session left is remembered with how far it
        was delivered."""
        if self.session is not None and session != self.session:
            self._left.append((self.session, self.last_seq))
        self.session, self.last_seq = session, last_seq

    def _lost(self, events: list[ShoeEvent], held_session: int, held_seq: int) -> None:
        """Go on from the shoe's oldest held event: those before it cannot come any more."""
        events.append(EventsLost(self.session or 0, self.last_seq, held_session, held_seq))
        self._move_to(held_session, held_seq - 1)
        self.awaiting_resend = True  # ask for the held ones now
        self._gap_reported_at = None

    def _behind(self, session: int, last_seq: int) -> bool:
        if self.session is None or session == 0:
            return False  # session 0: a shoe that has never been loaded
        return session != self.session or last_seq > self.last_seq

    def _numbered(self, events: list[ShoeEvent], frame: Frame) -> None:
        session, seq = frame.session, frame.seq
        if self.session is None:
            self.stats.unsynchronised += 1  # wait for a heartbeat to say where to start
        elif session == self.session and seq == self.last_seq + 1:
            self._deliver(events, frame)
        elif session == self.session:
            if seq <= self.last_seq:
                self.stats.duplicates += 1
            else:
                self.stats.out_of_order += 1
                self._gap(events, session, seq)
        elif self._delivered(session, seq):
            self.stats.duplicates += 1  # a resent copy from a session we left
        elif seq == 1 and frame.type == FrameType.SHOE_LOADED:
            event = event_from_frame(frame)
            if (
                isinstance(event, ShoeLoaded)
                and event.previous_session == self.session
                and event.previous_seq > self.last_seq
            ):
                if self._oldest_held == (session, seq):
                    # the shoe holds nothing before this load: the end of the previous
                    # session, which we lack, cannot come any more
                    events.append(EventsLost(self.session, self.last_seq, session, seq))
                    self._deliver(events, frame, event)
                else:
                    self.stats.out_of_order += 1
                    self._gap(events, session, seq)  # the end of the previous session is missing
            else:
                self._deliver(events, frame, event)
        else:
            self.stats.out_of_order += 1
            self._gap(events, session, seq)

    def _deliver(
        self, events: list[ShoeEvent], frame: Frame, event: SequencedEvent | None = None
    ) -> None:
        event = event or event_from_frame(frame)
        if isinstance(event, MalformedFrame):
            self.stats.malformed += 1
        self._move_to(frame.session, frame.seq)
        self.awaiting_resend = False
        self.stats.delivered += 1
        events.append(replace(event, resent=True) if self.resending else event)

    def _gap(self, events: list[ShoeEvent], session: int, seq: int) -> None:
        self.awaiting_resend = True
        point = (self.session, self.last_seq)
        if self._gap_reported_at == point:
            return
        self._gap_reported_at = point
        self.stats.gaps += 1
        events.append(Gap(self.session or 0, self.last_seq, session, seq))
