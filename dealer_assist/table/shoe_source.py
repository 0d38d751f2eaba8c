"""The shoe as a table source: :class:`~dealer_assist.shoe.reader.ShoeReader` events as inputs.

The reader owns the port (``/dev/serial/by-id/...``, a pty, ``socket://``), reconnects, and
delivers every card exactly once and in order; this source maps its events to the loop's small
values. Pip tens and copies beyond the composition are judged by the loop (it counts cards the
camera recorded while the link was down too), and so is a card the shoe dealt but could not read
(or a numbered report it could not decode, which may have been one): a
:class:`~dealer_assist.table.sources.ShoeUnread`, whose place in the round the loop holds until
the dealer keys it. The shoe's other integrity alarms (lid opened mid-shoe, an unreadable burn
card, a card after the shoe ran empty, a count mismatch, the shoe's own alarms) come through as
:class:`~dealer_assist.table.sources.ShoeProblem`. The load an ASCII shoe's decoder assumes when
it starts reading (such a shoe never reports one) is no new shoe: the table's pack count stands.

With ``defer_ack`` (a protocol shoe at a table with a journal) each numbered event's inputs are
handed over as one :class:`~dealer_assist.table.sources.ShoeDelivery`, and the shoe is told the
event is held only when the table acknowledges it, once it is on disk.
"""

from __future__ import annotations

import logging
import threading
from typing import Any

from dealer_assist.logs import describe, guarded
from dealer_assist.roundlog import ShoeOrigin
from dealer_assist.table.sources import (
    NewShoe,
    ShoeBurn,
    ShoeCard,
    ShoeCaughtUp,
    ShoeDelivery,
    ShoeHeard,
    ShoeLink,
    ShoeProblem,
    ShoeUnread,
    Sink,
    TableInput,
)

logger = logging.getLogger(__name__)

# Integrity kinds the loop judges itself (so the dealer sees each alarm once).
_JUDGED_BY_LOOP = ("pip_ten", "excess_copies", "link_down")
# ... and, raised by a card's place that the loop holds (a ShoeUnread), these.
_UNREAD_BY_LOOP = ("unreadable_card", "undecodable")


class SerialShoeSource:
    """Reads a shoe at ``url`` (the dealer-assist protocol, or ``ascii_decks`` for a plain ASCII
    shoe) and hands the table loop its cards, burns, link changes and problems.

    An event it cannot hand on (a bug) is logged with its traceback and raised as a shoe
    problem, and the next is read; an exception that ends the thread is logged likewise and
    reported as the shoe link down, naming it."""

    name = "shoe"

    def __init__(self, url: str, *, ascii_decks: int | None = None, decks: int | None = None,
                 defer_ack: bool = False, resume_from: tuple[int, int] | None = None):
        self.url = url
        self.defer_ack = defer_ack and ascii_decks is None  # an ASCII shoe takes no ACK
        self.resume_from = resume_from
        self.ascii_decks = ascii_decks
        self.decks = decks
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._reader: Any = None  # a ShoeReader once started (imported with pyserial in start)

    def start(self, sink: Sink) -> None:
        from dealer_assist.shoe.events import ShoeEvent
        from dealer_assist.shoe.integrity import ShoeIntegrity
        from dealer_assist.shoe.reader import ShoeReader

        if self.ascii_decks is not None:
            from dealer_assist.shoe.ascii import ASCII_BAUDRATE, AsciiShoeDecoder

            reader = ShoeReader(
                self.url,
                decoder=AsciiShoeDecoder(self.ascii_decks),
                baudrate=ASCII_BAUDRATE,
                heartbeat_timeout=None,
            )
        else:
            reader = ShoeReader(self.url, defer_ack=self.defer_ack,
                                resume_from=self.resume_from, pass_heartbeats=True)
        self._reader = reader
        integrity = ShoeIntegrity(self.ascii_decks or self.decks)
        reader.start()

        from dealer_assist.shoe.events import SequencedEvent

        def hand_on(event: ShoeEvent) -> None:
            items = map_shoe_event(event)
            held = any(isinstance(item, ShoeUnread) for item in items)
            items += [ShoeProblem(alarm.message) for alarm in integrity.check(event)
                      if alarm.kind.value not in _JUDGED_BY_LOOP
                      and not (held and alarm.kind.value in _UNREAD_BY_LOOP)]
            for item in items:
                if isinstance(item, ShoeLink):
                    logger.info("shoe link %s: %s", "up" if item.up else "down", item.detail)
                else:
                    logger.debug("shoe: %s", item)
            if self.defer_ack and isinstance(event, SequencedEvent):
                sink(ShoeDelivery(tuple(items), event.session, event.seq, reader.acknowledge))
                return
            for item in items:
                sink(item)

        def pump() -> None:
            while not self._stop.is_set():
                event = reader.get(timeout=0.1)
                if event is None:
                    continue
                try:
                    hand_on(event)
                except Exception as error:  # one event mishandled: said, and the next read
                    logger.exception("shoe event %r was not handed on", event)
                    sink(ShoeProblem(f"a shoe event was not handled ({describe(error)}): "
                                     "check the felt against the screen; call the technician"))

        def stopped(error: str) -> None:
            sink(ShoeLink(False, f"{self.url}: the shoe reader stopped on an error ({error}); "
                                 "restart the table to bring it back"))

        self._thread = threading.Thread(
            target=guarded(pump, f"the shoe source {self.url}", stopped, logger),
            name="shoe-source", daemon=True,
        )
        self._thread.start()

    def stop(self) -> None:
        """Stop forwarding first, so closing the port is not reported as the link going down."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(2)
        if self._reader is not None:
            self._reader.stop()


def map_shoe_event(event: object) -> list[TableInput]:
    """The table inputs one shoe event stands for (none for lids, gaps, nor for the load an
    ASCII shoe's decoder assumes when it starts reading: no reshuffle); a card resent after the
    link was down is ``held``, the end of the resend is :class:`ShoeCaughtUp`, and a heartbeat
    after every event the shoe sent before it is :class:`ShoeHeard` (which the runner hands on
    only while a landing waits for it; one showing an event missing is nothing)."""
    from dealer_assist.shoe import events as shoe

    if isinstance(event, shoe.CardDrawn):
        return [ShoeCard(event.card, ShoeOrigin(event.session, event.seq, event.index),
                         held=event.resent)]
    if isinstance(event, shoe.UnreadableCard):
        return [ShoeUnread(event.session, event.seq, event.index,
                           "the shoe reported the card unreadable", held=event.resent)]
    if isinstance(event, shoe.MalformedFrame):
        return [ShoeUnread(event.session, event.seq, None,
                           f"undecodable data at byte offset {event.offset}: {event.reason}",
                           held=event.resent)]
    if isinstance(event, shoe.CaughtUp):
        return [ShoeCaughtUp(event.session, event.seq)]
    if isinstance(event, shoe.Heartbeat):
        return [ShoeHeard()] if event.delivered else []
    if isinstance(event, shoe.BurnCard):
        return [ShoeBurn(event.card, held=event.resent)]
    if isinstance(event, shoe.ShoeLoaded):
        return [] if event.assumed else [NewShoe(event.decks, held=event.resent)]
    if isinstance(event, shoe.LinkUp):
        return [ShoeLink(True, event.url)]
    if isinstance(event, shoe.LinkDown):
        return [ShoeLink(False, f"{event.url}: {event.reason}")]
    return []
