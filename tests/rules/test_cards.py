from __future__ import annotations

import pytest

from dealer_assist.rules import (
    ALL_CARDS,
    SPANISH_DECK,
    Card,
    CardCodeError,
    Rank,
    Suit,
    hand_total,
    spanish_shoe,
)


def test_all_52_codes_parse_and_print_canonically() -> None:
    assert len(ALL_CARDS) == 52
    for card in ALL_CARDS:
        assert Card.parse(card.code) == card
        assert Card.parse(card.code.lower()) == card
        assert str(card) == card.code
        assert eval(repr(card)) == card  # repr round-trips


@pytest.mark.parametrize(
    ("text", "rank", "suit"),
    [
        ("7S", Rank.SEVEN, Suit.SPADES),
        ("kd", Rank.KING, Suit.DIAMONDS),
        ("10h", Rank.TEN, Suit.HEARTS),
        ("TC", Rank.TEN, Suit.CLUBS),
        (" ah ", Rank.ACE, Suit.HEARTS),
    ],
)
def test_parse(text: str, rank: Rank, suit: Suit) -> None:
    assert Card.parse(text) == Card(rank, suit)


def test_ten_prints_as_T() -> None:
    assert Card.parse("10S").code == "TS"
    assert Card.parse("10S").is_pip_ten


@pytest.mark.parametrize("bad", ["", "1S", "11S", "7X", "S7", "77", "JOKER", None, 7, "7SS"])
def test_bad_codes_are_refused_naming_the_input(bad: object) -> None:
    with pytest.raises(CardCodeError, match="not a card code"):
        Card.parse(bad)


def test_spanish_deck_has_no_tens() -> None:
    assert len(SPANISH_DECK) == 48
    assert not any(c.is_pip_ten for c in SPANISH_DECK)


@pytest.mark.parametrize("decks", [2, 4, 5, 6, 8])
def test_shoe_composition(decks: int) -> None:
    shoe = spanish_shoe(decks)
    assert sum(shoe.values()) == 48 * decks
    assert set(shoe.values()) == {decks}


@pytest.mark.parametrize("decks", [1, 3, 7, 0])
def test_shoe_refuses_other_deck_counts(decks: int) -> None:
    with pytest.raises(ValueError, match="decks must be one of"):
        spanish_shoe(decks)


@pytest.mark.parametrize(
    ("codes", "total", "soft"),
    [
        ("AS KD", 21, True),
        ("AS AH", 12, True),
        ("AS AH 9C", 21, True),
        ("AS 6D 9C", 16, False),
        ("KS QS", 20, False),
        ("5S 6S AS", 12, False),
        ("AS 6H", 17, True),
        ("2S 3S", 5, False),
    ],
)
def test_hand_total(codes: str, total: int, soft: bool) -> None:
    assert hand_total([Card.parse(c) for c in codes.split()]) == (total, soft)


def test_the_composition_rule_has_one_owner():
    from dealer_assist.rules.cards import Breach, composition_breach

    assert composition_breach(Card.parse("TH"), 0, 6) == Breach(pip_ten=True)
    assert composition_breach(Card.parse("TH"), 0, None) == Breach(pip_ten=True)
    assert composition_breach(Card.parse("7H"), 5, 6) is None
    assert composition_breach(Card.parse("7H"), 6, 6) == Breach(pip_ten=False, copy=7, held=6)
    assert composition_breach(Card.parse("7H"), 99, None) is None  # decks unknown: not counted
