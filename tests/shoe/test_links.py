"""The reader and the simulator over real links: pseudo-terminals, socket:// on loopback, spy://,
loop://. Corrupted bytes, dropped and duplicated frames, unplugs, host restarts: every card must
arrive exactly once, in order, never misread."""

from __future__ import annotations

import os
import socket
import threading
import time
import tty
from collections.abc import Callable
from pathlib import Path

import pytest
import serial

from dealer_assist.rules.cards import Card
from dealer_assist.shoe import protocol
from dealer_assist.shoe.decoder import ShoeDecoder
from dealer_assist.shoe.events import (
    CardDrawn,
    CaughtUp,
    LinkDown,
    LinkUp,
    MalformedFrame,
    SequencedEvent,
    ShoeEvent,
    ShoeLoaded,
)
from dealer_assist.shoe.reader import ShoeReader
from dealer_assist.shoe.simulator import (
    Faults,
    PtyLink,
    ShoeSimulator,
    SimLink,
    TcpLink,
    shuffled_spanish_shoe,
)
from tests.shoe.frames import SESSION, card, heartbeat, loaded

PATIENCE_S = 30.0  # a generous bound for a slow shared machine: not a timing assertion


def read_until(
    reader: ShoeReader, done: Callable[[list[ShoeEvent]], bool], what: str
) -> list[ShoeEvent]:
    events: list[ShoeEvent] = []
    deadline = time.monotonic() + PATIENCE_S
    while not done(events):
        if time.monotonic() > deadline:
            pytest.fail(f"gave up waiting for {what}; got {[e.kind for e in events][-20:]}")
        event = reader.get(timeout=0.5)
        if event is not None:
            events.append(event)
    return events


def cards_in(events: list[ShoeEvent]) -> list[Card]:
    return [e.card for e in events if isinstance(e, CardDrawn)]


def has_cards(n: int) -> Callable[[list[ShoeEvent]], bool]:
    return lambda events: len(cards_in(events)) >= n


def make_link(kind: str, tmp_path: Path) -> SimLink:
    return PtyLink(str(tmp_path / "shoe")) if kind == "pty" else TcpLink()


def deal_with_cuts(sim: ShoeSimulator, shoe: list[Card], cut_after: set[int]) -> threading.Thread:
    def dealer() -> None:
        for position, drawn in enumerate(shoe, start=1):
            sim.draw(drawn)
            sim.wait_window()
            if position in cut_after:
                sim.cut_link(0.3)

    thread = threading.Thread(target=dealer, daemon=True)
    thread.start()
    return thread


def assert_exactly_once_in_order(events: list[ShoeEvent], shoe: list[Card]) -> None:
    assert cards_in(events) == shoe  # none lost, duplicated, reordered or misread
    numbered = [e for e in events if isinstance(e, SequencedEvent)]
    assert [e.seq for e in numbered] == list(range(1, len(numbered) + 1))
    assert not any(isinstance(e, MalformedFrame) for e in events)


@pytest.mark.parametrize("kind", ["pty", "socket"])
def test_noise_and_unplugs_lose_nothing(kind: str, tmp_path: Path) -> None:
    shoe = shuffled_spanish_shoe(4, seed=11)
    faults = Faults(corrupt_rate=0.01, seed=5)
    with ShoeSimulator(make_link(kind, tmp_path), faults=faults) as sim:
        sim.load_shoe(4)
        with ShoeReader(sim.url) as reader:
            deal_with_cuts(sim, shoe, cut_after={40, 90, 140})
            events = read_until(reader, has_cards(len(shoe)), "the whole shoe")
            assert sim.wait_all_acked(PATIENCE_S)
        assert_exactly_once_in_order(events, shoe)
        assert isinstance([e for e in events if isinstance(e, SequencedEvent)][0], ShoeLoaded)
        assert sum(isinstance(e, LinkDown) for e in events) >= 3
        assert sum(isinstance(e, LinkUp) for e in events) >= 4
        assert reader.decoder.framing.bad_crc > 0  # the noise really was there
        assert reader.stats.connects >= 4


@pytest.mark.parametrize("kind", ["pty", "socket"])
def test_an_unplug_without_a_time_lasts_until_plugged_back_in(kind: str, tmp_path: Path) -> None:
    """``cut_link()`` from another thread (a test, an operator) stays cut, with cards drawn
    meanwhile kept by the shoe, until ``restore_link()``; the link is touched only by the
    simulator's own thread (a cut from outside once closed a socket under its select)."""
    with ShoeSimulator(make_link(kind, tmp_path)) as sim:
        sim.load_shoe(6)
        with ShoeReader(sim.url) as reader:
            sim.draw("9S")
            read_until(reader, has_cards(1), "the first card")
            sim.cut_link()
            read_until(reader, lambda ev: any(isinstance(e, LinkDown) for e in ev), "link down")
            sim.draw("7C")
            time.sleep(2.0)  # longer than any timed cut here: still unplugged
            assert not sim.link.connected and sim.unacknowledged >= 1  # the 7C, kept
            sim.restore_link()
            events = read_until(reader, has_cards(1), "the card drawn while unplugged")
        assert cards_in(events) == [Card.parse("7C")]


@pytest.mark.parametrize("kind", ["pty", "socket"])
def test_cards_drawn_while_unplugged_come_back_marked_resent_then_caught_up(
        kind: str, tmp_path: Path) -> None:
    """The cards the shoe kept while unplugged are delivered marked resent, then the reader
    says it has caught up; a card drawn after that is live."""
    with ShoeSimulator(make_link(kind, tmp_path)) as sim:
        sim.load_shoe(6)
        with ShoeReader(sim.url) as reader:
            sim.draw("9S")
            first = read_until(reader, has_cards(1), "the first card")
            sim.cut_link()
            read_until(reader, lambda ev: any(isinstance(e, LinkDown) for e in ev), "link down")
            sim.draw("7C")
            sim.draw("8D")
            sim.restore_link()
            back = read_until(reader, lambda ev: any(isinstance(e, CaughtUp) for e in ev),
                              "the end of the resend")
            sim.draw("2H")
            live = read_until(reader, has_cards(1), "a card drawn after")
    assert [e.resent for e in first if isinstance(e, CardDrawn)] == [False]
    resent = [(e.card.code, e.resent) for e in back if isinstance(e, CardDrawn)]
    assert resent == [("7C", True), ("8D", True)]
    assert isinstance(back[-1], CaughtUp) and back[-1].seq == 4  # the load, 9S, 7C, 8D
    assert [(e.card.code, e.resent) for e in live if isinstance(e, CardDrawn)] == [("2H", False)]


def test_dropped_and_duplicated_frames_over_socket() -> None:
    shoe = shuffled_spanish_shoe(2, seed=3)
    faults = Faults(drop_rate=0.05, duplicate_rate=0.05, seed=9)
    with ShoeSimulator(TcpLink(), faults=faults) as sim:
        sim.load_shoe(2)
        with ShoeReader(sim.url) as reader:
            deal_with_cuts(sim, shoe, cut_after=set())
            events = read_until(reader, has_cards(len(shoe)), "the whole shoe")
        assert_exactly_once_in_order([e for e in events if not isinstance(e, LinkDown)], shoe)
        assert reader.decoder.stats.duplicates > 0 and reader.decoder.stats.gaps > 0


def test_new_shoe_mid_stream_over_a_noisy_pty(tmp_path: Path) -> None:
    first, second = shuffled_spanish_shoe(2, seed=1)[:30], shuffled_spanish_shoe(2, seed=2)[:30]
    with ShoeSimulator(PtyLink(str(tmp_path / "shoe")), faults=Faults(0.01, seed=2)) as sim:
        old = sim.load_shoe(2)
        with ShoeReader(sim.url) as reader:
            sim.deal(first)
            new = sim.load_shoe(2)
            sim.deal(second)
            events = read_until(reader, has_cards(60), "two shoes")
    assert cards_in(events) == first + second
    loads = [e for e in events if isinstance(e, ShoeLoaded)]
    assert [(e.session, e.previous_session, e.previous_seq) for e in loads] == [
        (old, 0, 0),
        (new, old, 31),
    ]


def test_host_restart_mid_shoe_resumes_at_the_first_unacknowledged_card() -> None:
    shoe = shuffled_spanish_shoe(2, seed=8)
    with ShoeSimulator(TcpLink(), faults=Faults(corrupt_rate=0.01, seed=4)) as sim:
        sim.load_shoe(2)
        dealer = deal_with_cuts(sim, shoe, cut_after=set())
        first = ShoeReader(sim.url).start()
        events = read_until(first, has_cards(30), "30 cards")
        first.stop()
        events += list(first.events(idle_timeout=0))  # what it acknowledged but we had not read
        second = ShoeReader(sim.url).start()  # a fresh process: no memory of the first
        got = len(cards_in(events))
        events += read_until(second, has_cards(len(shoe) - got), "the rest of the shoe")
        second.stop()
        dealer.join(PATIENCE_S)
    assert cards_in(events) == shoe


def raw_pty() -> tuple[int, str]:
    master, slave = os.openpty()
    tty.setraw(slave)
    name = os.ttyname(slave)
    os.close(slave)
    return master, name


def until_up(reader: ShoeReader, master: int, frame: bytes) -> None:
    """Write ``frame`` until the reader reports the link up (opening the port flushes input)."""
    deadline = time.monotonic() + PATIENCE_S
    while reader.link_up is not True:
        if time.monotonic() > deadline:
            pytest.fail("the link never came up")
        os.write(master, frame)
        time.sleep(0.05)


def test_silence_raises_link_down_and_heartbeats_bring_it_back() -> None:
    master, path = raw_pty()
    try:
        with ShoeReader(path) as reader:
            until_up(reader, master, heartbeat(0, session=0))
            down = read_until(
                reader, lambda ev: any(isinstance(e, LinkDown) for e in ev), "link down"
            )
            assert "no valid frame for 1.5 s" in down[-1].reason  # type: ignore[attr-defined]
            until_up(reader, master, heartbeat(0, session=0))
            assert isinstance(reader.get(timeout=PATIENCE_S), LinkUp)
    finally:
        os.close(master)


def test_a_silent_link_is_called_down_before_its_port_is_closed(monkeypatch) -> None:
    """The table waits for a silent link's drop before it calls a card landing meanwhile one
    that never left the shoe: ``LinkDown`` is queued before the port is closed (closing a
    ``socket://`` port waits 0.3 s), the real port's close watched as it runs."""
    closed_while: list[bool | None] = []
    opened = serial.serial_for_url

    def watched(url: str, **kwargs):
        port = opened(url, **kwargs)
        close = port.close

        def close_watched() -> None:
            closed_while.append(reader.link_up)
            close()

        port.close = close_watched
        return port

    monkeypatch.setattr(serial, "serial_for_url", watched)
    with socket.create_server(("127.0.0.1", 0)) as server:
        with ShoeReader(f"socket://127.0.0.1:{server.getsockname()[1]}") as reader:
            shoe, _ = server.accept()
            with shoe:
                deadline = time.monotonic() + PATIENCE_S
                while reader.link_up is not True:  # opening the port drops input
                    assert time.monotonic() < deadline, "the link never came up"
                    shoe.sendall(heartbeat(0, session=0))
                    time.sleep(0.05)
                read_until(reader, lambda ev: any(isinstance(e, LinkDown) for e in ev),
                           "link down")  # silence: no frame for 1.5 s
    assert closed_while and closed_while[0] is False


def test_unplug_mid_frame_costs_nothing_already_received() -> None:
    """The first frame is whole, the second is cut in half by the unplug: the first arrives."""
    master, path = raw_pty()
    reader = ShoeReader(path).start()
    try:
        until_up(reader, master, heartbeat(1, pending=(SESSION, 1)))
        os.write(master, loaded() + card(2, "QD")[:7])
        events = read_until(reader, lambda ev: any(isinstance(e, ShoeLoaded) for e in ev), "load")
        os.close(master)
        master = -1
        events += read_until(reader, lambda ev: any(isinstance(e, LinkDown) for e in ev), "down")
        assert "port error" in [e for e in events if isinstance(e, LinkDown)][0].reason
    finally:
        reader.stop()
        if master >= 0:
            os.close(master)
    assert not cards_in(events) and reader.decoder.last_seq == 1


def test_exclusive_open_and_clean_shutdown() -> None:
    master, path = raw_pty()
    try:
        owner = ShoeReader(path).start()
        until_up(owner, master, heartbeat(0, session=0))
        with ShoeReader(path) as intruder:
            refused = read_until(intruder, lambda ev: bool(ev), "a refusal")
        assert isinstance(refused[0], LinkDown) and "lock" in refused[0].reason
        owner.stop()
        assert not owner._thread.is_alive()
        leftovers = list(owner.events(idle_timeout=0))
        assert leftovers and isinstance(leftovers[-1], LinkDown)
        assert owner.get(timeout=0) is None  # stopped and drained: the end stays visible
        port = serial.serial_for_url(path, exclusive=True)  # the lock was released
        port.close()
    finally:
        os.close(master)


def test_spy_url_on_a_pty(tmp_path: Path) -> None:
    master, path = raw_pty()
    log = tmp_path / "spy.txt"
    try:
        with ShoeReader(f"spy://{path}?file={log}") as reader:
            until_up(reader, master, heartbeat(1, pending=(SESSION, 1)))
            os.write(master, loaded() + card(2, "6S"))
            events = read_until(reader, has_cards(1), "a card")
    finally:
        os.close(master)
    assert cards_in(events) == [Card.parse("6S")]
    assert "RX" in log.read_text()


def test_loop_url_carries_frames_through_the_decoder() -> None:
    port = serial.serial_for_url("loop://", timeout=0.1)
    stream = heartbeat(1, pending=(SESSION, 1)) + loaded() + card(2, "AC") + card(3, "KC")
    for start in range(0, len(stream), 7):
        port.write(stream[start : start + 7])
    decoder = ShoeDecoder()
    events: list[ShoeEvent] = []
    while port.in_waiting:
        events += decoder.feed(port.read(port.in_waiting))
    port.close()
    assert cards_in(events) == [Card.parse("AC"), Card.parse("KC")]


def test_simulator_refuses_events_before_a_shoe_is_loaded_and_bad_fault_rates() -> None:
    sim = ShoeSimulator(TcpLink())
    try:
        with pytest.raises(ValueError, match="load a shoe first"):
            sim.draw("7S")
    finally:
        sim.link.close()
    with pytest.raises(ValueError, match="corrupt_rate"):
        Faults(corrupt_rate=1.5)
    assert protocol.LINK_TIMEOUT_S + 0.5 <= 2.0  # detection bound: timeout plus read slices


@pytest.mark.parametrize("defer_ack", [False, True])
def test_a_shoe_that_cannot_hear_acknowledgements_is_a_link_fault(defer_ack: bool) -> None:
    """The host-to-shoe wire is broken: the shoe keeps naming an event the host acknowledged
    (with ``defer_ack``, once the consumer made it durable and the reader told the shoe)."""
    master, path = raw_pty()
    try:
        with ShoeReader(path, defer_ack=defer_ack) as reader:
            until_up(reader, master, heartbeat(1, pending=(SESSION, 1)))
            os.write(master, loaded())
            if defer_ack:
                read_until(reader, lambda ev: any(isinstance(e, ShoeLoaded) for e in ev), "load")
                reader.acknowledge(SESSION, 1)
            deadline = time.monotonic() + PATIENCE_S
            while reader.link_up is not False and time.monotonic() < deadline:
                os.write(master, heartbeat(1, pending=(SESSION, 1)))
                time.sleep(0.02)
            events = list(reader.events(idle_timeout=0.2))
            down = [e for e in events if isinstance(e, LinkDown)]
            assert down and "not receiving acknowledgements" in down[0].reason
            until_up(reader, master, heartbeat(1))  # it heard us at last: nothing pending
    finally:
        os.close(master)
