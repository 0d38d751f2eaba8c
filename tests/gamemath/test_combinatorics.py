"""Exact side-bet odds against published figures and against brute-force enumeration."""

from collections import Counter
from decimal import Decimal
from fractions import Fraction
from itertools import product

import pytest

from dealer_assist.gamemath.combinatorics import (
    GameMathError,
    bonus_cost,
    envy_per_seat,
    insurance_house_edge,
    match_the_dealer,
    super_bonus_probability,
)
from dealer_assist.rules.cards import SPANISH_DECK


def test_match_the_dealer_six_decks_matches_published_edge_and_hit_rate() -> None:
    odds = match_the_dealer(6, 4, 9)
    assert round(float(odds.house_edge) * 100, 4) == 3.0555
    assert round(float(odds.hit_frequency) * 100, 3) == 15.411
    assert odds.house_edge == Fraction(1254, 41041)


def test_match_the_dealer_same_paytable_on_eight_decks_is_about_1_42_percent() -> None:
    assert round(float(match_the_dealer(8, 4, 9).house_edge) * 100, 2) == 1.42


def test_match_the_dealer_eight_deck_paytable() -> None:
    # 3:1 / 12:1, the paytable 004 §e gives for eight decks.
    assert match_the_dealer(8, 3, 12).house_edge == Fraction(2184, 73153)


@pytest.mark.parametrize("decks", [2, 4, 5, 6, 8])
def test_match_probabilities_sum_to_one(decks: int) -> None:
    assert sum(match_the_dealer(decks, 4, 9).probabilities.values()) == 1


def test_match_the_dealer_agrees_with_enumerating_a_two_deck_shoe() -> None:
    shoe = Counter({card: 2 for card in SPANISH_DECK})
    counts: Counter[tuple[int, int]] = Counter()
    kinds = list(shoe)
    for up, a, b in product(kinds, repeat=3):
        ways = shoe[up]
        left = shoe.copy()
        left[up] -= 1
        ways *= left[a]
        left[a] -= 1
        ways *= left[b]
        if not ways:
            continue
        suited = (a == up) + (b == up)
        unsuited = (a.rank == up.rank) + (b.rank == up.rank) - suited
        counts[(unsuited, suited)] += ways
    total = sum(counts.values())
    exact = match_the_dealer(2, 4, 9).probabilities
    assert exact[(0, 2)] == 0  # two decks hold only one more card of the up card's rank and suit
    assert {c: Fraction(n, total) for c, n in counts.items()} == {
        c: p for c, p in exact.items() if p
    }


def test_insurance_six_decks_is_24_74_percent() -> None:
    assert insurance_house_edge(6) == Fraction(71, 287)
    assert round(float(insurance_house_edge(6)) * 100, 2) == 24.74


def test_super_bonus_six_decks_is_one_in_668382() -> None:
    assert super_bonus_probability(6) == Fraction(1, 668382)


@pytest.mark.parametrize("decks", [2, 4, 6, 8])
def test_super_bonus_agrees_with_enumerating_the_sevens(decks: int) -> None:
    # Only the four kinds of 7 matter: enumerate up card and three player cards among them.
    sevens = [c for c in SPANISH_DECK if c.rank.value == "7"]
    cards = 48 * decks
    favourable = 0
    for up, a, b, c in product(sevens, repeat=4):
        if decks == 2:
            hit = up.suit.value == "S" and {a.suit.value, b.suit.value, c.suit.value} == {
                "H",
                "C",
                "D",
            }
        else:
            hit = a.suit == b.suit == c.suit
        if not hit:
            continue
        left = Counter({s: decks for s in sevens})
        ways = 1
        for card in (up, a, b, c):
            ways *= left[card]
            left[card] -= 1
        favourable += ways
    expected = Fraction(favourable, cards * (cards - 1) * (cards - 2) * (cards - 3))
    assert super_bonus_probability(decks) == expected


def test_bonus_and_envy_costs() -> None:
    p = super_bonus_probability(6)
    assert bonus_cost(p, Decimal("1000"), Decimal("5")) == Fraction(200, 668382)
    assert envy_per_seat(6, 6) == 6 * p
    with pytest.raises(GameMathError) as error:
        bonus_cost(p, Decimal("1000"), Decimal("0"))
    assert error.value.value == Decimal("0")


@pytest.mark.parametrize("decks", [1, 3, 7, 0])
def test_deck_counts_no_table_has_are_refused(decks: int) -> None:
    with pytest.raises(GameMathError, match="decks must be one of") as error:
        match_the_dealer(decks, 4, 9)
    assert error.value.value == decks


@pytest.mark.parametrize(("unsuited", "suited"), [(-1, 9), (4, -1), (1001, 9), (10**400, 1)])
def test_paytable_outside_0_to_1000_is_refused(unsuited: int, suited: int) -> None:
    with pytest.raises(GameMathError, match="must be 0:1 to 1000:1 a match") as error:
        match_the_dealer(6, unsuited, suited)
    assert error.value.value == (unsuited, suited)


def test_paytable_at_the_limits_is_taken() -> None:
    assert match_the_dealer(6, 1000, 0).pays((2, 0)) == 2000
    assert match_the_dealer(6, 0, 1000).pays((1, 1)) == 1000
