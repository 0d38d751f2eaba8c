"""What the dealer's screen is sent: one PAY/TAKE line per bet straight from the engine's
settlement, each payout's chips, hands numbered from 1 in the round's state, and the pace."""

from __future__ import annotations

from decimal import Decimal

from dealer_assist.rules import Card, format_money
from dealer_assist.table.chips import ChipSet
from dealer_assist.table.loop import TableLoop
from dealer_assist.table.recording import MemoryRecorder
from dealer_assist.table.screen_view import (
    PaceMeter,
    for_screen,
    settlement_view,
)
from dealer_assist.table.sources import PlaceBet, ShoeCard, ShoeLink
from tests.table.worst_rounds import played


def test_every_bet_of_every_seat_is_its_own_line_with_its_bet_and_reason():
    settlement = played("seven-up").last_settlement
    assert settlement is not None
    shown = settlement_view(settlement)
    for seat, seat_view in zip(settlement.seats, shown["seats"], strict=True):
        assert [line["amount"] for line in seat_view["lines"]] == [
            format_money(line.amount) for line in seat.lines]
        for line, line_view in zip(seat.lines, seat_view["lines"], strict=True):
            assert line_view["text"].endswith(f": {line.reason}")
            assert line_view["hand"] == line.hand  # 0-based, as in the round log
    seat_2 = shown["seats"][1]["lines"]  # split to four hands, Match lost, Envy
    assert [line["bet"] for line in seat_2] == ["Hand 1", "Hand 2", "Hand 3", "Hand 4",
                                                "Match the Dealer", "Envy bonus"]
    assert seat_2[0]["text"] == "Hand 1 ($25.00 bet): BUST"
    assert (seat_2[2]["verb"], seat_2[2]["shown"]) == ("PAY", "$25.00")
    assert seat_2[4]["text"] == "Match the Dealer ($5.00 bet): MATCH loses"
    assert (seat_2[4]["verb"], seat_2[4]["side"]) == ("TAKE", True)
    seat_1 = shown["seats"][0]["lines"]
    assert [(line["bet"], line["side"]) for line in seat_1][-1] == ("Super Bonus", True)
    assert shown["net_shown"] == "$5,755.00"


def test_the_screen_gets_each_payouts_chips_and_nothing_for_what_is_taken():
    loop = played("ace-up")
    view = loop.view()
    shown = for_screen(view, ChipSet.parse(["1", "5", "25"]).offering(["25", "5"]), 42)
    assert shown["pace_per_hour"] == 42 and shown["chips"] == ["1.00", "5.00", "25.00"]
    assert shown["bet_chips"] == ["5.00", "25.00"]
    blackjack = shown["settlement"]["seats"][4]["lines"][0]  # seat 5: 3:2 on $25
    assert blackjack["amount"] == "37.50"
    assert blackjack["chips"]["text"] == "1\u00d7$25 + 2\u00d7$5 + 2\u00d7$1 + $0.50 cash"
    insurance = shown["settlement"]["seats"][0]["lines"][-1]
    assert insurance["verb"] == "TAKE" and insurance["chips"] is None
    assert "chips" not in view["settlement"]["seats"][4]["lines"][0]  # the table's view as was


def test_hands_are_numbered_from_one_in_the_rounds_state():
    """The engine says it so (the screen shifts nothing: no hand is numbered twice)."""
    loop = TableLoop("s17-6", MemoryRecorder(), has_camera=False)
    loop.dealer = "D1"
    loop.handle(ShoeLink(True), 0.0)
    loop.handle(PlaceBet(2, Decimal("10")), 0.1)
    for code in ("8H", "9C", "8S"):
        loop.handle(ShoeCard(Card.parse(code)), 0.2)
    shown = for_screen(loop.view(), ChipSet.parse(["1"]), None)
    assert shown["round"]["state"] == "dealing (next card to dealer)"
    loop.handle(ShoeCard(Card.parse("7D")), 0.3)
    shown = for_screen(loop.view(), ChipSet.parse(["1"]), None)
    assert shown["round"]["state"] == "playing (seat 2 hand 1: 8H 8S = 16 to act)"


class Clock:
    """A clock the test sets (the pace is about time passing, not about this machine's speed)."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_the_pace_is_the_rounds_settled_in_the_last_hour():
    clock = Clock()
    pace = PaceMeter(clock)
    assert pace.observe(0) is None  # too soon to say
    for played_so_far in range(1, 31):  # a round every two minutes for an hour
        clock.now += 120
        assert pace.observe(played_so_far) == 30
    clock.now += 1860  # 31 minutes with no round: the last hour holds the last 15
    assert pace.observe(30) == 15
    assert PaceMeter(Clock()).observe(12) is None  # rounds before it watched are not counted
