"""The shoe as the table's source, over a real pseudo-terminal: the simulator speaks the
dealer-assist protocol, ``SerialShoeSource`` reads it and hands the loop its cards, a card the
shoe could not read as ``ShoeUnread`` (its place the loop holds for the dealer to key), and the
problems only a person can resolve (the lid opened mid-shoe, the shoe's own alarm) as
``ShoeProblem`` with the shoe's words. Pip tens and excess copies are the loop's to judge (it
counts the camera's cards too), so the source does not report them."""

from __future__ import annotations

import queue
import socket
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from dealer_assist.roundlog import ShoeOrigin
from dealer_assist.rules.cards import Card
from dealer_assist.shoe.ascii import AsciiShoeDecoder
from dealer_assist.shoe.simulator import PtyLink, ShoeSimulator
from dealer_assist.table.shoe_source import SerialShoeSource, map_shoe_event
from dealer_assist.table.sources import (
    NewShoe,
    ShoeCard,
    ShoeCaughtUp,
    ShoeHeard,
    ShoeLink,
    ShoeProblem,
    ShoeUnread,
)
from tests.shoe.frames import SESSION, card, heartbeat

PATIENCE_S = 30.0  # a generous bound for a slow shared machine: not a timing assertion


def take_until(inputs: queue.Queue, done, what: str) -> list:
    got: list = []
    deadline = time.monotonic() + PATIENCE_S
    while not done(got):
        if time.monotonic() > deadline:
            pytest.fail(f"gave up waiting for {what}; got {got}")
        try:
            got.append(inputs.get(timeout=0.5))
        except queue.Empty:
            pass
    return got


@contextmanager
def listening(tmp_path: Path, inputs: queue.Queue) -> Iterator[ShoeSimulator]:
    """A simulated shoe loaded with six decks on a pty, its events handed to ``inputs`` by a
    started ``SerialShoeSource`` (stopped on the way out)."""
    with ShoeSimulator(PtyLink(str(tmp_path / "shoe"))) as sim:
        sim.load_shoe(6)
        source = SerialShoeSource(sim.url, decks=6)
        source.start(inputs.put)
        try:
            yield sim
        finally:
            source.stop()


def problems(got: list) -> list[str]:
    return [item.text for item in got if isinstance(item, ShoeProblem)]


def test_the_shoes_problems_reach_the_table_in_its_words_and_its_cards_in_order(
        tmp_path: Path) -> None:
    inputs: queue.Queue = queue.Queue()
    with listening(tmp_path, inputs) as sim:
        sim.draw("7S")
        sim.unreadable()
        sim.draw("KH")
        sim.lid(opened=True)
        sim.alarm(3, "jam at the exit rollers")
        sim.draw("TS")  # a pip ten: the loop's to judge, not reported here
        got = take_until(inputs, lambda got: len(problems(got)) >= 2
                         and sum(isinstance(i, ShoeCard) for i in got) >= 3, "two problems")
    assert got[0] == ShoeLink(True, sim.url)
    assert NewShoe(6) in got
    assert [i.card for i in got if isinstance(i, ShoeCard)] == [Card.parse(c)
                                                                for c in ("7S", "KH", "TS")]
    [unread] = [i for i in got if isinstance(i, ShoeUnread)]
    assert (unread.seq, unread.index) == (3, 2)  # the loop holds its place: no second alarm
    assert problems(got) == [
        "lid opened after 3 cards, before the shoe ran out (seq 5)",
        "shoe alarm 3: jam at the exit rollers",
    ]


def test_cards_drawn_while_the_link_was_down_reach_the_table_held_then_caught_up(
        tmp_path: Path) -> None:
    """The table is told which cards the shoe kept while its link was down (``held``) and
    where that resend ends, so it can line them up with what the camera recorded meanwhile."""
    inputs: queue.Queue = queue.Queue()
    with listening(tmp_path, inputs) as sim:
        sim.draw("9S")
        got = take_until(inputs, lambda got: any(isinstance(i, ShoeCard) for i in got),
                         "the first card")
        sim.cut_link()
        got += take_until(inputs, lambda got: any(
            isinstance(i, ShoeLink) and not i.up for i in got), "the link down")
        sim.draw("7C")
        sim.unreadable()
        sim.restore_link()
        got += take_until(inputs, lambda got: any(isinstance(i, ShoeCaughtUp) for i in got),
                          "the end of the resend")
        sim.draw("2H")
        got += take_until(inputs, lambda got: any(isinstance(i, ShoeCard) for i in got),
                          "a card drawn after")
    shoe = [(i.card.code if isinstance(i, ShoeCard) else "unread", i.held) for i in got
            if isinstance(i, ShoeCard | ShoeUnread)]
    assert shoe == [("9S", False), ("7C", True), ("unread", True), ("2H", False)]
    assert [type(i) for i in got if isinstance(i, ShoeCard | ShoeUnread | ShoeCaughtUp)] == [
        ShoeCard, ShoeCard, ShoeUnread, ShoeCaughtUp, ShoeCard]


def test_the_shoes_heartbeats_reach_the_table_after_the_cards_it_drew_before_them(
        tmp_path: Path) -> None:
    """A heartbeat says the link is alive and every card drawn before it has come: it reaches
    the table as ``ShoeHeard``, after those cards (the runner hands it to the loop only while
    a landing waits for its shoe card)."""
    inputs: queue.Queue = queue.Queue()
    with listening(tmp_path, inputs) as sim:
        sim.draw("4D")
        got = take_until(inputs, lambda got: any(isinstance(i, ShoeCard) for i in got)
                         and isinstance(got[-1], ShoeHeard), "a heartbeat after the card")
    kinds = [type(i) for i in got if isinstance(i, ShoeCard | ShoeHeard)]
    assert ShoeCard in kinds and kinds[-1] is ShoeHeard


def test_a_heartbeat_that_shows_a_card_missing_is_not_handed_on(tmp_path: Path) -> None:
    """A loose plug loses the frame of the card drawn in that moment without the link going
    down; the next heartbeat names it. That heartbeat does not say the shoe has no card for a
    landing (the table would call the card one that never left the shoe): it is not handed
    on, and the one after the resent card is. A scripted shoe over a real socket, so that one
    frame can be lost (the frames built as the decoder tests build them)."""
    inputs: queue.Queue = queue.Queue()
    with socket.create_server(("127.0.0.1", 0)) as server:
        source = SerialShoeSource(f"socket://127.0.0.1:{server.getsockname()[1]}", decks=6)
        source.start(inputs.put)
        try:
            shoe, _ = server.accept()
            with shoe:
                deadline = time.monotonic() + PATIENCE_S
                while True:  # a heartbeat until one is heard (opening the port drops input)
                    shoe.sendall(heartbeat(3))
                    try:
                        if isinstance(inputs.get(timeout=0.2), ShoeHeard):
                            break
                    except queue.Empty:
                        pass
                    if time.monotonic() > deadline:
                        pytest.fail("the shoe's heartbeats were never heard")
                shoe.sendall(card(4, "9S"))
                # card 5 (2C) is lost on the line; the next heartbeat names it
                shoe.sendall(heartbeat(5, pending=(SESSION, 5)))
                shoe.sendall(card(5, "2C") + heartbeat(5))  # resent, then all is delivered
                got = take_until(inputs, lambda got: sum(
                    isinstance(i, ShoeCard) for i in got) == 2 and isinstance(
                        got[-1], ShoeHeard), "the resent card and a heartbeat")
        finally:
            source.stop()
    shown = [i.card.code if isinstance(i, ShoeCard) else "heard" for i in got
             if isinstance(i, ShoeCard | ShoeHeard)]
    assert shown[shown.index("9S"):] == ["9S", "2C", "heard"]  # (before it: syncing ones)


def test_an_ascii_shoes_assumed_load_is_no_new_shoe_and_a_load_it_is_told_of_is():
    """An ASCII shoe never says it was loaded: its decoder assumes a shoe when it starts reading,
    at every start of the table, which must not clear the pack count the journal rebuilt."""
    decoder = AsciiShoeDecoder(2)
    assumed, card = decoder.feed(b"[Game]<Card:9S> ")
    assert assumed.to_json()["assumed"] is True and map_shoe_event(assumed) == []
    assert map_shoe_event(card) == [ShoeCard(Card.parse("9S"), ShoeOrigin(1, 2, 1))]
    (loaded,) = decoder.new_shoe()
    assert "assumed" not in loaded.to_json() and map_shoe_event(loaded) == [NewShoe(2)]
