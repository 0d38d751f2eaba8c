"""A card the shoe dealt but could not read: its place in the round is held until the dealer keys
it (or voids the round), so no later card takes that place and nothing is paid meanwhile.

The first test drives a real ``dealer-assist table`` process reading the shoe simulator over
TCP, killed and started again while the place is held; the others feed the real loop the values
the real shoe source makes of the shoe's events (:func:`map_shoe_event`).
"""

from __future__ import annotations

import json
import os
from decimal import Decimal

import pytest

from dealer_assist.roundlog import settle_log
from dealer_assist.rules import Action, CardTarget
from dealer_assist.shoe.events import MalformedFrame, UnreadableCard
from dealer_assist.shoe.simulator import ShoeSimulator, TcpLink
from dealer_assist.table.alarms import AlarmKind
from dealer_assist.table.shoe_source import map_shoe_event
from dealer_assist.table.sources import (
    DEALER_SPOT,
    CameraLink,
    Decide,
    FeltCard,
    KeyCard,
    PlaceBet,
    ShoeCard,
    VoidRound,
)
from tests.table.test_crash import Table as TableProcess
from tests.table.test_crash import table_config, wait_view
from tests.table.test_loop import C, Table, deal
from tests.table.test_table_cli import post, sign_in


def unread(index: int, seq: int | None = None):
    """What the shoe source hands the table for the shoe's UNREADABLE report of card ``index``."""
    (item,) = map_shoe_event(UnreadableCard(7, seq or index + 1, index))
    return item


def cards_of(view: dict) -> tuple[list[str], list[str | None]]:
    """Seat 1's first hand and the dealer's cards, as the screen shows them."""
    seats = view["round"]["seats"]
    return seats[0]["hands"][0]["cards"], view["round"]["dealer"]["cards"]


@pytest.mark.skipif(os.name != "posix", reason="SIGKILL")
def test_a_card_the_shoe_could_not_read_holds_its_place_until_the_dealer_keys_it(tmp_path):
    """The reviewer's round: 9S, an unreadable card, 6D, 8H, a stand, KC. The unread card was
    skipped and the next cards took its place (seat 1 9S 8H, the dealer 6D KC...), and the round
    settled on them. Now the place is held, through a crash, until the dealer keys the card."""
    link = TcpLink()
    simulator = ShoeSimulator(link).start()
    try:
        simulator.load_shoe(6)
        table = TableProcess(table_config(tmp_path, link.url))
        sign_in(table.screen)
        assert simulator.wait_all_acked(10)
        post(table.screen, {"type": "bet", "seat": 1, "amount": "10"})
        simulator.draw("9S")
        simulator.unreadable()  # the dealer's up card: 7C
        simulator.draw("6D")
        simulator.draw("8H")  # the hole card
        assert simulator.wait_all_acked(10)
        post(table.screen, {"type": "decide", "seat": 1, "action": "stand"})
        simulator.draw("KC")  # the dealer's draw
        assert simulator.wait_all_acked(10)
        view = wait_view(table, lambda v: v["question"] is not None, timeout=10)
        question = view["question"]
        assert question is not None, view["alarms"]
        assert "could not read card 2 of the shoe" in question["text"]
        assert "key it" in question["text"] and question["key"] is True
        # nothing placed past the unread card, nothing paid
        assert view["phase"] == "question" and view["settlement"] is None
        assert cards_of(view) == (["9S"], [])

        table.kill()  # every card above was acknowledged: on the table's disk
        table.start()
        view = wait_view(table, lambda v: v["question"] is not None, timeout=10)
        assert view["question"]["text"] == question["text"]
        assert view["settlement"] is None and cards_of(view) == (["9S"], [])
        post(table.screen, {"type": "confirm_felt"})
        post(table.screen, {"type": "card", "card": "7C"})  # the dealer keys the unread card
        view = wait_view(table, lambda v: v["rounds_played"] == 1)
        assert view["question"] is None and view["settlement"]["net"] == "10.00"
        keyed = [a["text"] for a in view["alarms"] if a["kind"] == "keyed_card"]
        assert len(keyed) == 1 and "could not read card 2 of the shoe" in keyed[0]
        assert "keyed 7C" in keyed[0]
        table.stop()
    finally:
        simulator.stop()
        link.close()
    [log] = (tmp_path / "rec" / "rounds").glob("*.jsonl")
    lines = [json.loads(line) for line in log.read_text().splitlines()]
    cards = [e for e in lines if e["type"] == "card"]
    assert [e["card"] for e in cards] == ["9S", "7C", "6D", "8H", "KC"]
    assert cards[1]["keyed"] is True and "shoe" not in cards[1]
    assert cards[1]["unread"] == {"session": cards[0]["shoe"]["session"], "seq": 3, "index": 2}
    assert cards[0]["at"] <= cards[1]["at"] <= cards[2]["at"]  # when it left the shoe, not keyed
    # seat 1: 9S 6D = 15 stands; the dealer 7C 8H KC = 25: bust
    settlement = settle_log(log.read_text().splitlines())
    assert settlement.to_json()["seats"][0]["net"] == "10.00"


def test_cards_after_an_unread_one_wait_and_are_placed_behind_it_once_keyed():
    table = Table(camera=False)
    table.send(PlaceBet(1, Decimal("10")), ShoeCard(C("9S")), unread(2),
               ShoeCard(C("6D")), ShoeCard(C("8H")), Decide(1, Action.STAND),
               ShoeCard(C("KC")))
    assert table.loop.view()["phase"] == "question" and table.loop.view()["settlement"] is None
    assert table.seat_cards() == [[["9S"]]] and table.dealer_codes() == []
    table.wait(600)  # however long: nothing expires, nothing settles
    assert table.loop.rounds_played == 0 and table.loop.question is not None
    table.send(KeyCard(C("7C")))
    assert table.loop.question is None and table.loop.rounds_played == 1
    assert table.seat_cards() == [[["9S", "6D"]]] and table.dealer_codes() == ["7C", "8H", "KC"]
    assert table.settled_json()["seats"][0]["net"] == "10.00"
    card = json.loads(table.recorded_lines()[3])
    assert card["card"] == "7C" and card["keyed"] is True
    assert card["unread"] == {"session": 7, "seq": 3, "index": 2}
    assert table.loop.cards_out[C("7C")] == 1  # counted out of the pack as dealt


def test_a_keyed_card_the_shoe_cannot_hold_is_refused_and_the_place_stays_held():
    table = Table(camera=False, rules="h17-ddd-2")
    table.send(PlaceBet(1, Decimal("10")), ShoeCard(C("9S")), ShoeCard(C("9S")), unread(3))
    table.send(KeyCard(C("9S")))  # a third 9S from two decks
    assert table.kinds()[-1] is AlarmKind.BEYOND_COMPOSITION and table.loop.question is not None
    table.send(KeyCard(C("TH")))
    assert table.kinds()[-1] is AlarmKind.PIP_TEN and table.loop.question is not None
    assert table.loop.cards_out[C("9S")] == 2 and table.seat_cards() == [[["9S"]]]
    table.send(KeyCard(C("4D")))
    assert table.loop.question is None and table.seat_cards() == [[["9S", "4D"]]]


def test_an_undecodable_report_is_held_and_the_dealer_says_whether_a_card_left_the_shoe():
    """A numbered frame that passed its CRC but could not be decoded may have been a card."""
    table = Table(camera=False)
    (held,) = map_shoe_event(MalformedFrame(7, 3, 120, "bad card code '?S'"))
    table.send(PlaceBet(1, Decimal("10")), ShoeCard(C("9S")), held, ShoeCard(C("6D")))
    question = table.loop.view()["question"]
    assert "could not read (seq 3)" in question["text"] and question["key"] is True
    assert table.choices() == ["No card left the shoe"] and table.dealer_codes() == []
    table.answer("No card left the shoe")
    assert table.loop.question is None and table.dealer_codes() == ["6D"]
    assert table.kinds()[-1] is AlarmKind.DEALER_ASKED and "no card left the shoe" in (
        table.loop.alarms[-1].text)
    keyed = Table(camera=False)
    keyed.send(PlaceBet(1, Decimal("10")), ShoeCard(C("9S")), held, ShoeCard(C("6D")),
               KeyCard(C("5H")))
    assert keyed.seat_cards() == [[["9S", "6D"]]] and keyed.dealer_codes() == ["5H"]
    line = json.loads(keyed.loop.round_lines()[3])
    assert line["card"] == "5H" and line["unread"] == {"session": 7, "seq": 3}


@pytest.mark.parametrize("seen_first", [False, True])
def test_the_cameras_reading_of_the_unread_card_is_offered_never_taken_without_the_dealer(
        seen_first):
    table = Table()  # shoe + camera
    table.send(PlaceBet(1, Decimal("10")))
    table.card("9S", 1)
    sighting = FeltCard(C("7C"), DEALER_SPOT)
    table.send(*((sighting, unread(2)) if seen_first else (unread(2), sighting)))
    table.wait(10)
    assert table.loop.question is not None and table.dealer_codes() == []
    assert table.choices() == ["7C, as the camera read it at the dealer"]
    table.answer("7C, as the camera read it at the dealer")
    assert table.loop.question is None and table.dealer_codes() == ["7C"]
    assert AlarmKind.NOT_FROM_SHOE not in table.kinds()  # the sighting was its landing
    assert "took the camera's reading, 7C" in [
        a.text for a in table.loop.alarms if a.kind is AlarmKind.KEYED_CARD][0]
    line = json.loads(table.loop.round_lines()[3])
    assert line["keyed"] is True and line["unread"]["index"] == 2


def test_the_unread_card_keyed_where_it_lies_after_the_camera_was_lost_is_its_seen_landing():
    """The camera saw a card land at seat 1 but could not read it, its feed was lost (its
    thread stopped on an error: said at once), and the shoe's report of the card came: it could
    not read it either. Keyed where it lies, the card is placed there, and the landing seen
    there is its, not a card that never left the shoe."""
    table = Table()
    deal(table, {1: ("9S", "4H")}, up="6S", hole="KD")
    table.send(FeltCard(None, CardTarget(1, 0)))
    table.send(CameraLink(False, "the camera stopped on an error"), unread(5))
    table.wait(10)
    assert table.loop.question is not None and table.loop.camera.flight.felt
    table.send(KeyCard(C("7C"), CardTarget(1, 0)))
    assert table.loop.question is None and table.seat_cards() == [[["9S", "4H", "7C"]]]
    table.wait(5)
    assert AlarmKind.NOT_FROM_SHOE not in table.kinds()
    assert not table.loop.camera.flight.felt


@pytest.mark.parametrize("lost", [False, True])
def test_a_card_keyed_where_it_lies_waits_behind_a_shoe_card_still_waiting(lost):
    """3D's landing unseen, the next card seen landing at seat 2 and unread by the shoe; keyed
    there, it is not recorded before 3D: 3D is asked about first, with seat 1's hit among the
    choices, as with the camera up (the camera's feed lost or not)."""
    table = Table()
    deal(table, {1: ("9S", "4H"), 2: ("5D", "6C")}, up="6S", hole="KD")
    table.send(ShoeCard(C("3D")), FeltCard(C("8C"), CardTarget(2, 0)))
    if lost:
        table.send(CameraLink(False, "the camera stopped on an error"))
    table.send(unread(9))
    table.send(KeyCard(C("8C"), CardTarget(2, 0)))
    assert table.seat_cards() == [[["9S", "4H"]], [["5D", "6C"]]]
    assert table.choices()[:2] == ["HIT seat 1", "DOUBLE seat 1"]
    table.answer("HIT seat 1")
    table.wait(0.1)  # the waits go on at the next tick
    assert table.seat_cards() == [[["9S", "4H", "3D"]], [["5D", "6C", "8C"]]]
    table.wait(2)
    assert not {AlarmKind.NOT_FROM_SHOE, AlarmKind.SWITCHED_CARD} & set(table.kinds())


def test_a_camera_that_may_not_name_cards_offers_no_reading_of_the_unread_card():
    """A deck accepted only for checking the shoe's cards: the dealer keys the unread card,
    and the camera's reading of it is not among the choices."""
    table = Table()
    table.loop.camera_names = False
    table.send(PlaceBet(1, Decimal("10")))
    table.card("9S", 1)
    table.send(unread(2), FeltCard(C("7C"), DEALER_SPOT))
    table.wait(10)
    assert table.loop.question is not None and table.choices() == []
    table.send(KeyCard(C("7C")))
    assert table.loop.question is None and table.dealer_codes() == ["7C"]


def test_a_sighting_of_a_card_the_shoe_dealt_is_not_offered_for_the_unread_one():
    table = Table()
    table.send(PlaceBet(1, Decimal("10")))
    table.send(ShoeCard(C("9S")), unread(2), ShoeCard(C("6D")))  # 6D waits behind the question
    table.send(FeltCard(C("9S"), CardTarget(1, 0)), FeltCard(C("6D"), CardTarget(1, 0)))
    assert table.choices() == []
    table.send(KeyCard(C("7C")), FeltCard(C("7C"), DEALER_SPOT))
    assert table.loop.question is None
    assert table.seat_cards() == [[["9S", "6D"]]] and table.dealer_codes() == ["7C"]


def test_a_void_lets_the_held_round_go_and_an_unread_card_in_no_round_only_alarms():
    table = Table(camera=False)
    table.send(PlaceBet(1, Decimal("10")), ShoeCard(C("9S")), unread(2))
    table.send(VoidRound("unread card", "S9"))
    assert table.loop.question is None and table.kinds()[-1] is AlarmKind.ROUND_VOIDED
    table.send(unread(3))
    assert table.loop.question is None and table.kinds()[-1] is AlarmKind.SHOE_PROBLEM
    assert "in no round" in table.loop.alarms[-1].text


def test_a_keyed_card_whose_play_is_open_is_asked_about_and_keeps_the_shoes_report():
    """Shoe only: an unread card comes while seat 1 decides on 11, with no touch. Keyed, it is
    the shoe's card that came with no decision touched: where it went is asked, never guessed."""
    table = Table(camera=False)
    table.send(PlaceBet(1, Decimal("10")))
    for code in ("5H", "9S", "6D", "7C"):
        table.send(ShoeCard(C(code)))
    table.send(unread(5), KeyCard(C("JH")))
    assert table.loop.view()["question"]["text"] == "Where did JH go?"
    assert table.choices() == ["HIT seat 1", "DOUBLE seat 1", "STAND seat 1, to the DEALER"]
    table.answer("DOUBLE seat 1")
    lines = [json.loads(line) for line in table.loop.round_lines()]
    assert [e["action"] for e in lines if e["type"] == "action"] == ["double"]
    [keyed] = [e for e in lines if e["type"] == "card" and e["card"] == "JH"]
    assert keyed["keyed"] is True and keyed["unread"] == {"session": 7, "seq": 6, "index": 5}
