"""The table's chips (``[screen] chips`` in table.toml) and how a payout is made from them.

:meth:`ChipSet.breakdown` pays an amount with as few chips as it can, largest first; what no
combination of the chips makes (a 3:2 on an odd wager, say) is left as cash, so the chips and the
cash always add up to the amount, exactly.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from decimal import Decimal

from dealer_assist.rules import MoneyError, format_money, parse_money

#: A common set of casino chips, in dollars.
DEFAULT_CHIPS = ("0.50", "1", "2.50", "5", "25", "100", "500")
#: More denominations than any chip tray holds: each is a button-sized item on the screen.
MOST_CHIPS = 12
#: The fewest-chips table covers amounts up to this many of the set's common unit (the largest
#: sum that every chip is a whole number of), and at least twice the largest chip; above it the
#: largest chip is taken first until the rest is in range.
_TABLE_UNITS = 20_000
#: The most the largest chip may be worth in that unit (the table's size is bounded by it).
_MOST_UNITS = 100_000


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
    """The denominations of a table's chips, smallest first (distinct, positive, whole cents)."""

    values: tuple[Decimal, ...]
    _unit: int = field(init=False, repr=False, compare=False)
    _fewest: list[int] = field(init=False, repr=False, compare=False)
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
        cents = [int(v * 100) for v in self.values]
        unit = math.gcd(*cents)
        if cents[-1] // unit > _MOST_UNITS:
            raise ChipError(f"the largest chip, {format_money(self.values[-1])}, is more than "
                            f"{_MOST_UNITS:,} times {format_money(Decimal(unit) / 100)} (the "
                            "chips' common unit): leave out the smallest chips")
        fewest, last = _fewest_table([c // unit for c in cents],
                                     max(_TABLE_UNITS, 2 * (cents[-1] // unit)))
        object.__setattr__(self, "_unit", unit)
        object.__setattr__(self, "_fewest", fewest)
        object.__setattr__(self, "_last", last)

    @classmethod
    def parse(cls, raw: object) -> ChipSet:
        """A chip list as table.toml gives it: strings (or numbers) of money, any order."""
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
        return cls(tuple(sorted(values)))

    @classmethod
    def default(cls) -> ChipSet:
        """The set of :data:`DEFAULT_CHIPS` (built once)."""
        return _default()

    def breakdown(self, amount: Decimal) -> Breakdown:
        """``amount`` (>= 0, whole cents) as the fewest chips that make as much of it as any
        chips can, the rest in cash."""
        if amount < 0 or amount != amount.quantize(Decimal("0.01")):
            raise ValueError(f"a payout is a non-negative amount in whole cents, got {amount}")
        units, odd_cents = divmod(int(amount * 100), self._unit)
        sizes = [int(v * 100) // self._unit for v in self.values]
        counts = [0] * len(sizes)
        limit = len(self._fewest) - 1
        if units > limit:  # far above the table: the largest chip first, down into it
            counts[-1] = (units - limit + sizes[-1] - 1) // sizes[-1]
            units -= counts[-1] * sizes[-1]
        made = units
        while self._fewest[made] < 0:
            made -= 1  # the largest part of it the chips can make (0 always can)
        left = units - made
        while made:
            chip = self._last[made]
            counts[chip] += 1
            made -= sizes[chip]
        chips = tuple((self.values[i], counts[i]) for i in reversed(range(len(sizes)))
                      if counts[i])
        cash = Decimal(left * self._unit + odd_cents) / 100
        return Breakdown(chips, cash.quantize(Decimal("0.01")))


@functools.cache
def _default() -> ChipSet:
    return ChipSet.parse(DEFAULT_CHIPS)


def _fewest_table(sizes: list[int], limit: int) -> tuple[list[int], list[int]]:
    """For each amount 0..limit (in units): the fewest chips that make it exactly (-1: none
    does) and the index of the last chip taken; ties go to the larger chip."""
    fewest = [-1] * (limit + 1)
    last = [-1] * (limit + 1)
    fewest[0] = 0
    for amount in range(1, limit + 1):
        best = -1
        for index in reversed(range(len(sizes))):
            rest = amount - sizes[index]
            if rest >= 0 and fewest[rest] >= 0 and (best < 0 or fewest[rest] + 1 < best):
                best = fewest[rest] + 1
                last[amount] = index
        fewest[amount] = best
    return fewest, last
