"""The table checks the shoe's cards by camera: a new card's index checked against the shoe's codes
in flight (match: that card's landing; mismatch: a switched card; unsure: decides nothing, no
alarm), on the verdicts as the loop gets them, through the journal, and on rendered frames read by
the shipped models."""

from __future__ import annotations

from decimal import Decimal

from dealer_assist.rules import Card, CardTarget
from dealer_assist.table.alarms import AlarmKind
from dealer_assist.table.journal_codec import decode_input, encode_input
from dealer_assist.table.pairing import CardsInFlight
from dealer_assist.table.sources import (
    DEALER_SPOT,
    CameraLink,
    ConfirmFelt,
    FeltCard,
    PlaceBet,
    ShoeCard,
    ShoeLink,
    SignIn,
)
from tests.table.test_journal import Setup, run_inputs
from tests.table.test_loop import Table

C = Card.parse


def test_the_loop_hands_the_camera_the_shoe_codes_in_flight_oldest_first():
    cards = CardsInFlight()
    cards.add_shoe(ShoeCard(C("7H")), 0.0, rejected=False)
    cards.add_shoe(ShoeCard(C("TD")), 0.0, rejected=True)  # refused on sight: no landing due
    cards.add_shoe(ShoeCard(C("2C")), 0.0, rejected=False)
    assert cards.codes() == ("7H", "2C")


def test_a_verified_mismatch_is_a_switched_card_at_once():
    table = Table()
    table.send(PlaceBet(1, Decimal("10")), ShoeCard(C("9S")))
    table.send(FeltCard(C("KH"), CardTarget(1, 0), verdict="mismatch", checked=C("9S")))
    # no wait for a matching reading: the camera checked it against 9S and it is surely another
    assert table.kinds() == [AlarmKind.SWITCHED_CARD]
    assert "9S" in table.loop.alarms[0].text and "KH" in table.loop.alarms[0].text
    assert table.seat_cards()[0][0] == ["9S"]


def test_an_unsure_landing_of_another_code_decides_nothing_and_raises_no_alarm():
    table = Table()
    table.send(PlaceBet(1, Decimal("10")), ShoeCard(C("9S")))
    table.send(FeltCard(C("9C"), CardTarget(1, 0), verdict="unsure", checked=C("9S")))
    assert table.loop.cards_committed == 0
    table.wait(0.6)
    # placed by the rules (the deal's first card goes to seat 1), with no switched-card alarm
    assert table.seat_cards()[0][0] == ["9S"]
    assert AlarmKind.SWITCHED_CARD not in table.kinds()


def test_an_unsure_landing_asks_the_dealer_where_the_rules_leave_a_choice():
    table = Table()
    for seat in (1, 2):
        table.send(PlaceBet(seat, Decimal("10")))
    table.card("9S", seat=1)
    table.card("5D", seat=2)
    table.card("6S", seat=None)
    table.card("8H", seat=1)
    table.card("4C", seat=2)
    table.send(ShoeCard(C("QD")))  # the hole card, face down
    table.send(ShoeCard(C("3H")))  # a hit for seat 1, or seat 1 stood and it is seat 2's
    table.send(FeltCard(C("8H"), CardTarget(2, 0), verdict="unsure", checked=C("3H")))
    table.wait(0.6)
    assert table.loop.question is not None  # its place taken from no unsure reading
    assert AlarmKind.SWITCHED_CARD not in table.kinds()


def test_a_felt_card_with_its_verdict_reads_back_and_an_older_record_without_one_too():
    item = FeltCard(C("7H"), CardTarget(2, 1), True, 3.5, verdict="match", checked=C("7H"))
    assert decode_input(encode_input(item)) == item
    older = {"type": "FeltCard", "card": "7H", "spot": {"seat": 2, "hand": 0},
             "sideways": False, "seen_at": None}
    assert decode_input(older) == FeltCard(C("7H"), CardTarget(2, 0))


def test_a_table_restarted_from_its_journal_replays_the_verdicts(tmp_path):
    steps = [SignIn("D1"), ShoeLink(True), CameraLink(True), PlaceBet(1, Decimal("10")),
             PlaceBet(2, Decimal("10")),
             ShoeCard(C("9S")), FeltCard(C("9S"), CardTarget(1, 0), verdict="match",
                                         checked=C("9S")),
             ShoeCard(C("5D")), FeltCard(C("KH"), CardTarget(2, 0), verdict="mismatch",
                                         checked=C("5D")),
             ShoeCard(C("6S")), FeltCard(C("6C"), DEALER_SPOT, verdict="unsure",
                                         checked=C("6S"))]
    before = Setup(tmp_path, has_camera=True)
    first = before.open(now=10.0)
    live = first.loop
    run_inputs(live, first.journal, steps)
    switched = [(a.kind, a.text) for a in live.alarms if a.kind is AlarmKind.SWITCHED_CARD]
    assert len(switched) == 1 and "5D" in switched[0][1] and "KH" in switched[0][1]
    first.journal.close()
    before.close()

    after = Setup(tmp_path, has_camera=True)
    table = after.open(now=3.0)
    assert table.resumed == live.round_id
    assert table.loop.view()["round"] == live.view()["round"]
    assert [(a.kind, a.text) for a in table.loop.alarms
            if a.kind is AlarmKind.SWITCHED_CARD] == switched
    assert table.loop.cards_out == live.cards_out
    table.loop.handle(ConfirmFelt(), 50.0)
    after.close()
