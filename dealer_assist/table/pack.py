"""The pack count: the cards out of the shoe since it was loaded, checked against its composition
by the one owner of that rule (:func:`~dealer_assist.rules.cards.composition_breach`)."""

from __future__ import annotations

from collections import Counter

from dealer_assist.rules import Card
from dealer_assist.rules.cards import Breach, composition_breach


class PackCount:
    """Copies of each card out of a shoe of ``decks`` decks since its shuffle."""

    def __init__(self, decks: int):
        self.decks = decks
        self._out: Counter[Card] = Counter()

    def take(self, card: Card) -> Breach | None:
        """Count ``card`` out, unless it breaks the shoe's composition (a pip ten is never
        counted; a copy beyond the decks is, as it is out): the breach, or None."""
        breach = composition_breach(card, self._out[card], self.decks)
        if breach is None or not breach.pip_ten:
            self._out[card] += 1
        return breach

    def check(self, card: Card) -> Breach | None:
        """The breach counting ``card`` out would be, without counting it."""
        return composition_breach(card, self._out[card], self.decks)

    def foreign(self, card: Card) -> Breach | None:
        """The rule without the count: ``card`` can be in no Spanish shoe (a pip ten)."""
        return composition_breach(card, 0, None)

    def put_back(self, card: Card) -> None:
        """``card`` was counted out for a reading that was wrong."""
        if self._out[card] > 0:
            self._out[card] -= 1

    def out(self) -> Counter[Card]:
        """The copies counted out (a copy)."""
        return Counter(self._out)

    def restore(self, out: Counter[Card]) -> None:
        """Back to a count :meth:`out` gave (a refused correction or keyed card changes
        nothing)."""
        self._out = Counter(out)

    def clear(self) -> None:
        """A new shoe."""
        self._out.clear()
