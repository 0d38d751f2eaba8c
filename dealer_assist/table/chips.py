"""The table's chips (``[screen] chips`` in table.toml) and how a payout is made from them.

:meth:`ChipSet.breakdown` pays an amount in chips, the largest first; what no combination of the
chips makes (a 3:2 on an odd wager, say) is left as cash, so the chips and the cash always add up
to the amount, exactly.
"""

from __future__ import annotations

import functools
import heapq
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from decimal import Decimal

from dealer_assist.rules import MoneyError, format_money, parse_money

#: A common set of casino chips, in dollars.
DEFAULT_CHIPS = ("0.50", "1", "2.50", "5", "25", "100", "500")
#: More denominations than any chip tray holds: each is a button-sized item on the screen.
MOST_CHIPS = 12
#: The most chip buttons the screen's bet row offers: with the seven seat buttons, Place and
#: Clear, five keep the row on one line at 800 px wide (tests/table/test_bet_chips.py).
MOST_BET_CHIPS = 5
#: The most the largest chip may be worth in the chips' common unit (the largest amount each
#: chip is a whole number of): a set's table of remainders has that many entries.
_MOST_UNITS = 100_000
_INFINITE = 1 << 62


class ChipError(ValueError):
    """A chip list that is not a set of positive amounts in whole cents (names the entry)."""


def chip_text(amount: Decimal) -> str:
    """``$2.50``, ``$25``, ``$0.25``: as a chip or a sum of cash is named at the table."""
    text = f"${amount:,.2f}"
    return text[:-3] if text.endswith(".00") else text


@dataclass(frozen=True, slots=True)
class Breakdown:
    """A payout as chips (denomination, count; largest first) and the cash the chips cannot
    make."""

    chips: tuple[tuple[Decimal, int], ...]
    cash: Decimal

    @property
    def total(self) -> Decimal:
        return sum((value * count for value, count in self.chips), Decimal("0.00")) + self.cash

    def text(self) -> str:
        """``2\u00d7$25 + 1\u00d7$2.50``, then ``+ $0.25 cash`` when some is left in cash."""
        parts = [f"{count}\u00d7{chip_text(value)}" for value, count in self.chips]
        if self.cash:
            parts.append(f"{chip_text(self.cash)} cash")
        return " + ".join(parts) if parts else "nothing"

    def to_json(self) -> dict[str, object]:
        return {"chips": [{"value": format_money(v), "count": n} for v, n in self.chips],
                "cash": format_money(self.cash), "text": self.text()}


@dataclass(frozen=True)
class ChipSet:
    """The denominations of a table's chips, smallest first (distinct, positive, whole cents),
    and the ones the screen's bet row offers (``offered``, some of them, smallest first; empty:
    the :data:`MOST_BET_CHIPS` largest)."""

    values: tuple[Decimal, ...]
    offered: tuple[Decimal, ...] = ()
    _unit: int = field(init=False, repr=False, compare=False)
    _least: list[tuple[int, int]] = field(init=False, repr=False, compare=False)
    _last: list[int] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not self.values:
            raise ChipError("must name at least one chip, e.g. [\"1\", \"5\", \"25\"]")
        if len(self.values) > MOST_CHIPS:
            raise ChipError(f"at most {MOST_CHIPS} chips, got {len(self.values)}")
        if list(self.values) != sorted(set(self.values)):
            raise ChipError("chips must be distinct and listed smallest first, got "
                            + ", ".join(format_money(v) for v in self.values))
        if self.values[0] <= 0:
            raise ChipError(f"a chip must be worth more than 0, got {format_money(self.values[0])}")
        if any(v != v.quantize(Decimal("0.01")) for v in self.values):
            raise ChipError("a chip must be worth whole cents, got "
                            + ", ".join(str(v) for v in self.values))
        if len(self.offered) > MOST_BET_CHIPS:
            raise ChipError(f"the bet row offers at most {MOST_BET_CHIPS} chips (its buttons "
                            f"fit one line of the screen), got {len(self.offered)}")
        if list(self.offered) != sorted(set(self.offered)):
            raise ChipError("the bet row's chips must be distinct and listed smallest first")
        strangers = [format_money(v) for v in self.offered if v not in self.values]
        if strangers:
            raise ChipError(f"{', '.join(strangers)} is not one of the table's chips ("
                            + ", ".join(format_money(v) for v in self.values) + ")")
        cents = [int(v * 100) for v in self.values]
        unit = math.gcd(*cents)
        if cents[-1] // unit > _MOST_UNITS:
            raise ChipError(f"the largest chip, {format_money(self.values[-1])}, is more than "
                            f"{_MOST_UNITS:,} times {format_money(Decimal(unit) / 100)} (the "
                            "chips' common unit): leave out the smallest chips")
        least, last = _residues([c // unit for c in cents])
        object.__setattr__(self, "_unit", unit)
        object.__setattr__(self, "_least", least)
        object.__setattr__(self, "_last", last)

    @classmethod
    def parse(cls, raw: object) -> ChipSet:
        """A chip list as table.toml gives it: strings (or numbers) of money, any order."""
        return cls(_amounts(raw))

    def offering(self, raw: object) -> ChipSet:
        """These chips, the bet row offering those of ``raw`` (a chip list as :meth:`parse`
        takes; each one of these chips)."""
        offered = _amounts(raw)
        if not offered:
            raise ChipError("must name at least one of the table's chips")
        return ChipSet(self.values, offered)

    @property
    def bet_row(self) -> tuple[Decimal, ...]:
        """The chips the screen's bet row offers, smallest first."""
        return self.offered or self.values[-MOST_BET_CHIPS:]

    @classmethod
    def default(cls) -> ChipSet:
        """The set of :data:`DEFAULT_CHIPS` (built once)."""
        return _default()

    def breakdown(self, amount: Decimal) -> Breakdown:
        """``amount`` (>= 0, whole cents) as chips, the largest first: the most of it that any
        chips make, each part made of as few chips as make it; the rest in cash."""
        if amount < 0 or amount != amount.quantize(Decimal("0.01")):
            raise ValueError(f"a payout is a non-negative amount in whole cents, got {amount}")
        units, odd_cents = divmod(int(amount * 100), self._unit)
        sizes = [int(v * 100) // self._unit for v in self.values]
        largest = sizes[-1]
        made = units
        while self._least[made % largest][0] > made:
            made -= 1  # not made by any chips; within one largest chip, one is (0 always is)
        counts = [0] * len(sizes)
        rest = made % largest
        counts[-1] = (made - self._least[rest][0]) // largest
        while rest:  # the least value of this residue, back along the chips that made it
            chip = self._last[rest]
            counts[chip] += 1
            rest = (rest - sizes[chip]) % largest
        chips = tuple((self.values[i], counts[i]) for i in reversed(range(len(sizes)))
                      if counts[i])
        cash = Decimal((units - made) * self._unit + odd_cents) / 100
        return Breakdown(chips, cash.quantize(Decimal("0.01")))


def _amounts(raw: object) -> tuple[Decimal, ...]:
    """A list of distinct amounts of money, sorted."""
    if not isinstance(raw, Sequence) or isinstance(raw, (str, bytes)):
        raise ChipError(f"must be a list of amounts such as [\"1\", \"5\"], got {raw!r}")
    values = []
    for index, item in enumerate(raw):
        try:
            values.append(parse_money(item, f"chip {index + 1}"))
        except MoneyError as error:
            raise ChipError(str(error)) from None
    if len(set(values)) != len(values):
        raise ChipError("a chip is listed twice: " + ", ".join(map(format_money, values)))
    return tuple(sorted(values))


@functools.cache
def _default() -> ChipSet:
    return ChipSet.parse(DEFAULT_CHIPS)


def _residues(sizes: list[int]) -> tuple[list[tuple[int, int]], list[int]]:
    """For each remainder r modulo the largest chip: the least amount with that remainder the
    smaller chips make, and how few chips make it ((value, chips); no such amount: value
    INFINITE), and the index of the last chip taken. An amount v is made by the chips exactly
    when v >= that least value of v's remainder (Dijkstra over the remainders)."""
    largest = sizes[-1]
    least = [(_INFINITE, 0)] * largest
    last = [-1] * largest
    least[0] = (0, 0)
    queue = [(0, 0, 0)]
    while queue:
        value, count, rest = heapq.heappop(queue)
        if (value, count) != least[rest]:
            continue
        for index, size in enumerate(sizes[:-1]):
            step = (value + size, count + 1)
            target = (rest + size) % largest
            if step < least[target]:
                least[target] = step
                last[target] = index
                heapq.heappush(queue, (*step, target))
    return least, last
