"""The rounds that fill the dealer's screen most, played on a real shoe-only TableLoop: seven
seats, a seat split to four hands, double-double-down, Match the Dealer, insurance, and a Super
Bonus with Envy at every other seat. The simulated shoe deals the cards each seat's script asks
for; the dealer's decisions follow each seat's policy."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from decimal import Decimal

from dealer_assist.rules import Action, Card
from dealer_assist.table.loop import TableLoop
from dealer_assist.table.recording import MemoryRecorder
from dealer_assist.table.sources import (
    CloseInsurance,
    Decide,
    Insure,
    PlaceBet,
    ShoeCard,
    ShoeLink,
    TableInput,
)

#: (cards of the hand, legal actions) -> the action taken
Policy = Callable[[list[str], list[str]], str]


def _value(code: str) -> int:
    rank = code[0]
    return 11 if rank == "A" else 10 if rank in "TJQK" else int(rank)


def total(cards: list[str]) -> int:
    value = sum(_value(c) for c in cards)
    aces = sum(1 for c in cards if c[0] == "A")
    while value > 21 and aces:
        value, aces = value - 10, aces - 1
    return value


def stand_on_17(cards: list[str], legal: list[str]) -> str:
    return "hit" if total(cards) < 17 and "hit" in legal else "stand"


def split_eights(cards: list[str], legal: list[str]) -> str:
    if "split" in legal and [c[0] for c in cards] == ["8", "8"]:
        return "split"
    return stand_on_17(cards, legal)


def double_down_down(cards: list[str], legal: list[str]) -> str:
    """Double (and redouble) while it may, up to 18; then stand."""
    if total(cards) < 18 and "double" in legal:
        return "double"
    return "stand"


def rescue_after_double(cards: list[str], legal: list[str]) -> str:
    if len(cards) == 2 and "double" in legal:
        return "double"
    return "rescue" if "rescue" in legal else "stand"


def always_hit(cards: list[str], legal: list[str]) -> str:
    return "hit" if "hit" in legal else "stand"


@dataclass
class SeatScript:
    seat: int
    cards: list[str]
    policy: Policy = stand_on_17
    match: bool = True
    insure: bool = False
    wager: str = "25"
    player: str | None = None
    _dealt: int = field(default=0, init=False)

    def next_card(self) -> str:
        self._dealt += 1
        return self.cards[self._dealt - 1]


@dataclass
class Round:
    seats: list[SeatScript]
    dealer: list[str]


def ace_up() -> Round:
    """An ace up (no dealer blackjack: A 6, then 9 and K, bust): seven seats each with Match,
    three insured; seat 1 splits 8s to four hands, seat 2 doubles three times, seat 4 rescues
    after a double, seat 5 has blackjack."""
    return Round([
        SeatScript(1, ["8S", "8D", "8H", "8C", "3D", "2C", "9H", "4S", "KD", "5H", "6S", "7D",
                       "9C", "QS"], split_eights, insure=True),
        SeatScript(2, ["5S", "4D", "2C", "3H", "4C", "5D"], double_down_down),
        SeatScript(3, ["AH", "AS", "5C", "2D"], stand_on_17, insure=True),
        SeatScript(4, ["6H", "5C", "2S", "9D"], rescue_after_double),
        SeatScript(5, ["AD", "KC"], stand_on_17),
        SeatScript(6, ["9S", "3C", "KH", "4D"], always_hit, insure=True),
        SeatScript(7, ["QD", "9H", "5S"], stand_on_17),
    ], dealer=["AH", "6C", "9D", "KS"])


def seven_up() -> Round:
    """A 7 of spades up: seat 1's suited 7-7-7 wins the Super Bonus, and each other seat (its own
    player) the Envy bonus; seat 2 splits 8s to four hands, seat 3 doubles three times, seats
    with a 7 in their first two cards win Match the Dealer."""
    return Round([
        SeatScript(1, ["7S", "7S", "7S"], always_hit, player="Ann"),
        SeatScript(2, ["8S", "8D", "8H", "8C", "3D", "2C", "9H", "4S", "KD", "5H", "6S", "7D",
                       "9C", "QS"], split_eights, player="Bo"),
        SeatScript(3, ["5S", "4D", "2C", "3H", "4C", "5D"], double_down_down, player="Cy"),
        SeatScript(4, ["7H", "7D", "5C", "KD"], stand_on_17, player="Di"),
        SeatScript(5, ["7S", "KC"], stand_on_17, player="Ed"),
        SeatScript(6, ["9S", "3C", "4H", "4D"], stand_on_17, player="Flo"),
        SeatScript(7, ["QD", "9H", "5S"], stand_on_17, player="Gus"),
    ], dealer=["7S", "KC", "4C"])


ROUNDS = {"ace-up": ace_up, "seven-up": seven_up}


def shoe_table(table_id: str = "T7") -> TableLoop:
    """A shoe-only table (the dealer D1 signed in) with its shoe linked."""
    loop = TableLoop("h17-ddd-6", MemoryRecorder(), table_id=table_id, has_camera=False)
    loop.dealer = "D1"  # signed in (signing in: test_sign_in.py)
    loop.handle(ShoeLink(True, "test shoe"), 0.0)
    return loop


class Player:
    """Feeds one scripted round into ``loop``, synchronously, as the shoe and the dealer
    would; ``until`` stops it early (at a phase of the screen's view)."""

    def __init__(self, loop: TableLoop, script: Round):
        self.loop = loop
        self.script = script
        self.now = 0.0
        self.dealer_cards = iter(script.dealer)

    def feed(self, item: TableInput) -> None:
        self.now += 0.1
        self.loop.handle(item, self.now)

    def play(self, until: Callable[[dict], bool] | None = None) -> None:
        seats = {s.seat: s for s in self.script.seats}
        for script in self.script.seats:
            self.feed(PlaceBet(script.seat, Decimal(script.wager), "main", script.player))
            if script.match:
                self.feed(PlaceBet(script.seat, Decimal("5"), "match"))
        insured = False
        for _ in range(500):
            view = self.loop.view()
            if until is not None and until(view):
                return
            if view["phase"] == "settled":
                return
            if view["phase"] == "insurance" and not insured:
                for script in self.script.seats:
                    if script.insure:
                        self.feed(Insure(script.seat, Decimal(script.wager) / 2))
                self.feed(CloseInsurance())
                insured = True
                continue
            round_view = view["round"]
            if round_view["acting"] is not None and round_view["legal_actions"]:
                seat, hand = round_view["acting"]
                cards = next(s for s in round_view["seats"] if s["seat"] == seat)["hands"][hand][
                    "cards"]
                action = seats[seat].policy(cards, round_view["legal_actions"])
                self.feed(Decide(seat, Action.parse(action), hand=hand))
                continue
            target = round_view["next_card"]
            if target is None:
                raise AssertionError(f"the round is stuck: {round_view['state']}")
            code = next(self.dealer_cards) if target == "dealer" else \
                seats[target["seat"]].next_card()
            self.feed(ShoeCard(Card.parse(code)))
        raise AssertionError("the round did not settle in 500 steps")


def played(name: str, table_id: str = "T7") -> TableLoop:
    """A table that has just settled the worst round ``name``."""
    loop = shoe_table(table_id)
    Player(loop, ROUNDS[name]()).play()
    assert loop.rounds_played == 1, [a.text for a in loop.alarms]
    return loop
