"""Cards, ranks, suits and the Spanish shoe's composition.

All 52 standard codes parse (so a pip ten can be recognised and refused); a Spanish shoe holds 48
cards per deck, no tens. Canonical output is rank then suit: ``7S``, ``KD``, ``AH``, ``TC``.
"""

from __future__ import annotations

import enum
from collections import Counter
from dataclasses import dataclass, field
from functools import cache


class CardCodeError(ValueError):
    """A string that is not a card code."""


class Suit(enum.Enum):
    SPADES = "S"
    HEARTS = "H"
    DIAMONDS = "D"
    CLUBS = "C"


class Rank(enum.Enum):
    ACE = "A"
    TWO = "2"
    THREE = "3"
    FOUR = "4"
    FIVE = "5"
    SIX = "6"
    SEVEN = "7"
    EIGHT = "8"
    NINE = "9"
    TEN = "T"
    JACK = "J"
    QUEEN = "Q"
    KING = "K"


_POINTS = {"A": 1, "T": 10, "J": 10, "Q": 10, "K": 10} | {str(n): n for n in range(2, 10)}

SPANISH_RANKS: tuple[Rank, ...] = tuple(r for r in Rank if r is not Rank.TEN)
ALLOWED_DECKS: tuple[int, ...] = (2, 4, 5, 6, 8)


@dataclass(frozen=True, slots=True)
class Card:
    """One playing card. ``Card.parse("7s") == Card(Rank.SEVEN, Suit.SPADES)``."""

    rank: Rank
    suit: Suit
    code: str = field(init=False, compare=False, repr=False)
    points: int = field(init=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        # Derived once: the engine reads these for every card of every round.
        object.__setattr__(self, "code", self.rank.value + self.suit.value)
        object.__setattr__(self, "points", _POINTS[self.rank.value])

    def __hash__(self) -> int:
        return hash(self.code)

    @classmethod
    def parse(cls, code: object) -> Card:
        """Parse a card code: rank ``A 2-9 T J Q K`` (``10`` means ``T``) then suit ``S H D C``."""
        if isinstance(code, Card):
            return code
        if not isinstance(code, str):
            raise CardCodeError(f"not a card code: {code!r} (expected a string such as '7S')")
        try:
            return _parse_cached(code.strip().upper())
        except KeyError:
            raise CardCodeError(
                f"not a card code: {code!r} (rank A,2-9,T/10,J,Q,K then suit S,H,D,C)"
            ) from None

    @property
    def is_pip_ten(self) -> bool:
        return self.rank is Rank.TEN

    def __str__(self) -> str:
        return self.code

    def __repr__(self) -> str:
        return f"Card.parse({self.code!r})"


_ALL_CODES: dict[str, Card] = {}
for _rank in Rank:
    for _suit in Suit:
        _card = Card(_rank, _suit)
        _ALL_CODES[_card.code] = _card
        if _rank is Rank.TEN:
            _ALL_CODES["10" + _suit.value] = _card


@cache
def _parse_cached(code: str) -> Card:
    return _ALL_CODES[code]


ALL_CARDS: tuple[Card, ...] = tuple(Card(r, s) for s in Suit for r in Rank)
SPANISH_DECK: tuple[Card, ...] = tuple(Card(r, s) for s in Suit for r in SPANISH_RANKS)


def spanish_shoe(decks: int) -> Counter[Card]:
    """The composition of a Spanish shoe: each of the 48 Spanish cards ``decks`` times."""
    if decks not in ALLOWED_DECKS:
        raise ValueError(f"decks must be one of {ALLOWED_DECKS}, got {decks!r}")
    return Counter({card: decks for card in SPANISH_DECK})


@dataclass(frozen=True, slots=True)
class Breach:
    """Why a card cannot come out of a Spanish shoe: a pip ten (``copy`` and ``held`` 0), or
    copy number ``copy`` of a card the decks hold ``held`` of."""

    pip_ten: bool
    copy: int = 0
    held: int = 0


def composition_breach(card: Card, copies_before: int, decks: int | None) -> Breach | None:
    """The composition rule, its one owner (the engine, the shoe's integrity check and the live
    table all ask it): ``card`` cannot come out of a Spanish shoe of ``decks`` decks (None:
    copies unknown, only tens are refused) from which ``copies_before`` copies of it already
    came when it is a pip ten, or one copy more than the decks hold. None: it can."""
    if card.rank is Rank.TEN:
        return Breach(pip_ten=True)
    if decks is not None and copies_before >= decks:
        return Breach(pip_ten=False, copy=copies_before + 1, held=decks)
    return None


def hand_total(cards: list[Card] | tuple[Card, ...]) -> tuple[int, bool]:
    """Best blackjack total and whether it is soft (an ace counted as 11)."""
    total = sum(c.points for c in cards)
    if total <= 11 and any(c.rank is Rank.ACE for c in cards):
        return total + 10, True
    return total, False
