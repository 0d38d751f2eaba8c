"""Exact odds of the side bets and fixed bonuses, as fractions, for any deck count and paytable.

Every figure counts cards without replacement from a freshly shuffled Spanish shoe (48 cards a deck,
no pip tens). Dealing order does not matter: the cards of a round are an exchangeable sample.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction
from math import comb

from dealer_assist.rules.cards import ALLOWED_DECKS
from dealer_assist.rules.ruleset import MAX_MATCH_ODDS

CARDS_PER_DECK = 48
TEN_VALUES_PER_DECK = 12  # J, Q, K in four suits


class GameMathError(ValueError):
    """Input no Spanish 21 table has (a deck count, a paytable, a wager); carries the input."""

    def __init__(self, message: str, value: object) -> None:
        super().__init__(message)
        self.value = value


def _check_decks(decks: int) -> None:
    if decks not in ALLOWED_DECKS:
        raise GameMathError(f"decks must be one of {ALLOWED_DECKS}, got {decks!r}", decks)


def check_match_paytable(unsuited_pays: int, suited_pays: int) -> None:
    """Refuse Match the Dealer odds below 0:1 or above ``MAX_MATCH_ODDS``:1 a match."""
    if not (0 <= unsuited_pays <= MAX_MATCH_ODDS and 0 <= suited_pays <= MAX_MATCH_ODDS):
        raise GameMathError(
            f"Match the Dealer odds must be 0:1 to {MAX_MATCH_ODDS}:1 a match, got "
            f"{unsuited_pays}:1 / {suited_pays}:1",
            (unsuited_pays, suited_pays),
        )


# The combinations Match the Dealer distinguishes: (unsuited matches, suited matches).
MATCH_COMBINATIONS: tuple[tuple[int, int], ...] = ((0, 0), (1, 0), (0, 1), (2, 0), (1, 1), (0, 2))


@dataclass(frozen=True, slots=True)
class MatchOdds:
    """Match the Dealer for one deck count and paytable (odds paid per unsuited / suited match)."""

    decks: int
    unsuited_pays: int
    suited_pays: int
    probabilities: dict[tuple[int, int], Fraction]

    def pays(self, combination: tuple[int, int]) -> int:
        """Odds paid for ``(unsuited, suited)`` matches; each match pays on its own (spec §2)."""
        unsuited, suited = combination
        return unsuited * self.unsuited_pays + suited * self.suited_pays

    @property
    def player_return(self) -> Fraction:
        """Expected net win per unit wagered (negative: the house's side)."""
        total = Fraction(0)
        for combination, probability in self.probabilities.items():
            odds = self.pays(combination)
            total += probability * (odds if odds > 0 else -1)
        return total

    @property
    def house_edge(self) -> Fraction:
        return -self.player_return

    @property
    def hit_frequency(self) -> Fraction:
        """Probability that the wager wins anything."""
        return sum(
            (p for c, p in self.probabilities.items() if self.pays(c) > 0), start=Fraction(0)
        )


def match_the_dealer(decks: int, unsuited_pays: int, suited_pays: int) -> MatchOdds:
    """Exact Match the Dealer odds: the player's first two cards against the dealer's up card.

    With the up card removed, ``decks - 1`` cards remain that match it in rank and suit and
    ``3 * decks`` that match in rank only; the player's two cards are any pair of the rest.
    """
    _check_decks(decks)
    check_match_paytable(unsuited_pays, suited_pays)
    remaining = CARDS_PER_DECK * decks - 1
    suited = decks - 1
    unsuited = 3 * decks
    other = remaining - suited - unsuited
    pairs = comb(remaining, 2)
    counts = {
        (0, 0): comb(other, 2),
        (1, 0): unsuited * other,
        (0, 1): suited * other,
        (2, 0): comb(unsuited, 2),
        (1, 1): unsuited * suited,
        (0, 2): comb(suited, 2),
    }
    assert sum(counts.values()) == pairs
    return MatchOdds(
        decks=decks,
        unsuited_pays=unsuited_pays,
        suited_pays=suited_pays,
        probabilities={c: Fraction(n, pairs) for c, n in counts.items()},
    )


def insurance_house_edge(decks: int) -> Fraction:
    """House edge of insurance (pays 2:1) knowing only the dealer's ace: ten-values in the rest."""
    _check_decks(decks)
    remaining = CARDS_PER_DECK * decks - 1
    tens = TEN_VALUES_PER_DECK * decks
    return -Fraction(2 * tens - (remaining - tens), remaining)


def super_bonus_probability(decks: int) -> Fraction:
    """Probability that one hand earns the Super Bonus, when the player always draws a third card.

    Four decks and up: the first three cards are 7s of one suit and the up card a 7 of any suit.
    Two decks: the player's cards are 7♥ 7♣ 7♦ in any order and the up card 7♠ (spec §5).
    The strategy hits a two-card hand that could still make it (the ``$`` plays of the charts).
    """
    _check_decks(decks)
    total = CARDS_PER_DECK * decks
    rest = total - 1
    ordered_three = rest * (rest - 1) * (rest - 2)
    if decks == 2:
        up = Fraction(decks, total)  # one of the two 7♠
        return up * Fraction(6 * decks**3, ordered_three)
    up = Fraction(4 * decks, total)
    # The up card's suit has decks-1 sevens left, each other suit decks.
    same_suit = (decks - 1) * (decks - 2) * (decks - 3)
    other_suits = 3 * decks * (decks - 1) * (decks - 2)
    # Given a seven up, its suit is any of the four equally.
    return up * Fraction(same_suit + other_suits, ordered_three)


def bonus_cost(probability: Fraction, amount: Decimal, wager: Decimal) -> Fraction:
    """Expected payout of a fixed bonus as a fraction of the wager that earns it."""
    if wager <= 0:
        raise GameMathError(f"wager must be positive, got {wager}", wager)
    return probability * Fraction(amount) / Fraction(wager)


def envy_per_seat(decks: int, other_seats: int) -> Fraction:
    """Expected number of Envy payments one seat receives per round from ``other_seats`` players.

    Each other seat's Super Bonus pays this seat one Envy; expectations add, whatever the overlap.
    """
    if other_seats < 0:
        raise GameMathError(f"other_seats must not be negative, got {other_seats}", other_seats)
    return other_seats * super_bonus_probability(decks)
