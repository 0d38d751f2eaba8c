"""A reader that acknowledges only what its consumer made durable (``defer_ack``), and one that
starts where a previous process's durable record ends (``resume_from``): over a real socket to the
simulated shoe, whose store says what it was told is held."""

from __future__ import annotations

import time

from dealer_assist.rules.cards import Card
from dealer_assist.shoe.events import CardDrawn, EventsLost, LinkDown, ShoeEvent, ShoeLoaded
from dealer_assist.shoe.reader import ShoeReader
from dealer_assist.shoe.simulator import ShoeSimulator, TcpLink
from tests.shoe.test_links import PATIENCE_S, cards_in, read_until


def until(condition, what: str) -> None:
    deadline = time.monotonic() + PATIENCE_S
    while not condition():
        assert time.monotonic() < deadline, f"gave up waiting for {what}"
        time.sleep(0.005)


def drain(reader: ShoeReader, seconds: float) -> list[ShoeEvent]:
    """Every event the reader gives in the next ``seconds`` (a bounded wait, even if they never
    stop coming)."""
    events: list[ShoeEvent] = []
    deadline = time.monotonic() + seconds
    while (left := deadline - time.monotonic()) > 0:
        event = reader.get(timeout=left)
        if event is not None:
            events.append(event)
    return events


def test_the_shoe_is_told_only_what_the_consumer_acknowledged() -> None:
    with ShoeSimulator(TcpLink()) as sim:
        session = sim.load_shoe(6)
        for code in ("7S", "8S", "9S"):
            sim.draw(code)
        with ShoeReader(sim.url, defer_ack=True) as reader:
            events = read_until(reader, lambda e: len(cards_in(e)) == 3, "three cards")
            assert [e.seq for e in events if isinstance(e, CardDrawn | ShoeLoaded)] == [1, 2, 3, 4]
            reader.acknowledge(session, 2)  # the load and 7S are on disk, 8S and 9S not yet
            # an ACK naming any later event would have deleted 8S too: the store keeps exactly 2
            until(lambda: sim.unacknowledged == 2, "the shoe to hold 8S and 9S alone")
            reader.acknowledge(session, 4)
            until(lambda: sim.unacknowledged == 0, "the shoe to let go of every card")


def test_a_reader_resumed_after_a_crash_drops_what_was_durable_but_never_acknowledged() -> None:
    with ShoeSimulator(TcpLink()) as sim:
        session = sim.load_shoe(6)
        for code in ("7S", "8S"):
            sim.draw(code)
        first = ShoeReader(sim.url, defer_ack=True).start()
        read_until(first, lambda e: len(cards_in(e)) == 2, "two cards")
        first.stop()  # it wrote both to disk and died before telling the shoe
        assert sim.unacknowledged == 3
        with ShoeReader(sim.url, defer_ack=True, resume_from=(session, 3)) as second:
            until(lambda: sim.unacknowledged == 0, "the resumed reader's RESEND to clear them")
            sim.draw("9S")
            events = read_until(second, lambda e: bool(cards_in(e)), "the next card")
        # 7S and 8S are not delivered twice (a host without state would start again at 7S, the
        # oldest event the shoe held)
        assert cards_in(events) == [Card.parse("9S")]


def test_a_reader_resumed_from_a_position_the_shoe_has_passed_says_so_and_goes_on() -> None:
    """Resumed from an event older than the shoe's oldest held one (the record after it lost,
    as in a damaged journal, though the shoe was told it was held): the events in between
    cannot come any more; the reader says so and delivers what the shoe holds, not waiting for
    a resend that never comes."""
    with ShoeSimulator(TcpLink()) as sim:
        session = sim.load_shoe(6)
        for code in ("7S", "8S", "9S"):
            sim.draw(code)
        with ShoeReader(sim.url, defer_ack=True) as first:
            read_until(first, lambda e: len(cards_in(e)) == 3, "three cards")
            first.acknowledge(session, 4)
            until(lambda: sim.unacknowledged == 0, "the shoe to let go of every card")
        sim.draw("6H")
        with ShoeReader(sim.url, defer_ack=True, resume_from=(session, 2)) as second:
            events = read_until(second, lambda e: bool(cards_in(e)), "the next card")
            [lost] = [e for e in events if isinstance(e, EventsLost)]
            assert lost == EventsLost(session, 2, session, 5)
            assert cards_in(events) == [Card.parse("6H")]
            second.acknowledge(session, 5)
            until(lambda: sim.unacknowledged == 0, "the shoe to let go of 6H")


def test_a_new_shoe_loaded_before_the_old_one_is_durable_repeats_and_loses_nothing() -> None:
    """The consumer has made the old shoe's load durable but not yet its last card when the new
    shoe's load and card arrive, so every heartbeat names that card as the shoe's oldest held
    event. That is an event already delivered (sessions are random ids, not ordered), not a
    later session's events gone: before, the reader reported events lost and delivered the old
    card again, once a heartbeat."""
    with ShoeSimulator(TcpLink()) as sim:
        old = sim.load_shoe(6)
        sim.draw("7S")
        with ShoeReader(sim.url, defer_ack=True) as reader:
            events = read_until(reader, lambda e: len(cards_in(e)) == 1, "the old shoe's card")
            reader.acknowledge(old, 1)  # the load on disk, the 7S not yet
            new = sim.load_shoe(6)
            sim.draw("8S")
            events += read_until(reader, lambda e: len(cards_in(e)) == 1, "the new shoe's card")
            events += drain(reader, 2.0)  # four heartbeats naming the 7S as held
            assert not any(isinstance(e, EventsLost) for e in events)
            assert cards_in(events) == [Card.parse("7S"), Card.parse("8S")]
            assert [(e.session, e.seq) for e in events if isinstance(e, ShoeLoaded)] == [
                (old, 1), (new, 1)]
            reader.acknowledge(new, 2)
            until(lambda: sim.unacknowledged == 0, "the shoe to let go of both shoes' events")


def test_a_consumer_slow_to_make_events_durable_is_not_a_shoe_that_cannot_hear_us() -> None:
    """Nothing acknowledged for longer than six heartbeats (the consumer's disk is slow or
    failing): the shoe keeps naming an event the reader delivered but never told it was held.
    The link stays up; before, the reader said the host-to-shoe line was broken."""
    with ShoeSimulator(TcpLink()) as sim:
        session = sim.load_shoe(6)
        sim.draw("7S")
        with ShoeReader(sim.url, defer_ack=True) as reader:
            events = read_until(reader, lambda e: len(cards_in(e)) == 1, "the card")
            events += drain(reader, 4.0)  # eight heartbeats naming the load as held
            assert not any(isinstance(e, LinkDown) for e in events)
            assert reader.link_up is True
            reader.acknowledge(session, 2)
            until(lambda: sim.unacknowledged == 0, "the shoe to let go of the card")
