"""Rounds with a known outcome under basic strategy: cards in deal order, net in half-wagers.

Deal order (one seat): player card, up card, player card, hole card, then the player's draws in
play order, then the dealer's. Shared by the fast-path and the round-engine tests.
"""

from typing import NamedTuple


class Scenario(NamedTuple):
    name: str
    rules: str  # chart: "h17-redouble", "h17" or "s17"
    cards: str
    net_half_wagers: int
    cards_used: int


SCENARIOS = (
    Scenario("player blackjack pays 3:2", "h17-redouble", "AS 9H KD 7C", 3, 4),
    Scenario("dealer blackjack takes the wager", "h17-redouble", "9S AH 9D KC", -2, 4),
    Scenario("player blackjack beats dealer blackjack", "h17-redouble", "AS AH KD KC", 3, 4),
    Scenario("6-7-8 of spades pays 3:1", "h17", "6S 5H 7S 9C 8S", 6, 5),
    Scenario("suited 7-7-7 against a 7 (Super Bonus) pays 2:1", "h17", "7D 7H 7D 9C 7D", 4, 5),
    Scenario("late surrender of 16 against an ace", "h17", "9H AS 7C 5D", -1, 4),
    Scenario("doubled 11 rescued against a 10", "h17-redouble", "6H KS 5C 7D 2C", -2, 5),
    Scenario("redoubled 20 loses to a dealer 21", "h17-redouble", "6H 7S 4C 9D 2C 8C 5D", -8, 7),
    Scenario(
        "8-8 split, one hand doubled, dealer busts", "h17-redouble", "8D 6H 8C KS 3S 9H KD 9C", 6, 8
    ),
    Scenario("doubled 21 wins without the dealer drawing", "h17", "5H 9S 6C 2D KD", 4, 5),
    Scenario("a bust loses without the dealer drawing", "s17", "KH 8S 6C 9D 9H", -2, 5),
    Scenario("five-card 21 pays 3:2", "s17", "2H KS 3C 7D 2D 4S KC", 3, 7),
    Scenario("S17 dealer stands on soft 17", "s17", "KH 6S 8C AD", 2, 4),
    Scenario("H17 dealer hits soft 17", "h17", "KH 6S 8C AD 2C", -2, 5),
)
