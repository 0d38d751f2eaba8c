"""A payout made from the table's chips: the chips and the cash always add up to the amount,
exactly; whatever the chips can make, they make; only the rest is cash."""

from __future__ import annotations

from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dealer_assist.table.chips import ChipError, ChipSet

CENTS = st.integers(min_value=0, max_value=10**9).map(lambda c: Decimal(c) / 100)
CHIP_SETS = st.lists(st.integers(min_value=1, max_value=5_000), min_size=1, max_size=6,
                     unique=True).map(lambda cents: ChipSet(tuple(
                         sorted(Decimal(c) / 100 for c in cents))))


@given(CENTS)
def test_default_chips_make_every_amount_but_what_is_under_fifty_cents(amount):
    breakdown = ChipSet.default().breakdown(amount)
    assert breakdown.total == amount
    assert breakdown.cash == amount % Decimal("0.50")
    assert all(count > 0 for _, count in breakdown.chips)


@given(CHIP_SETS, CENTS)
def test_any_chips_and_the_cash_add_up_to_the_amount_exactly(chips, amount):
    breakdown = chips.breakdown(amount)
    assert sum(v * n for v, n in breakdown.chips) + breakdown.cash == amount
    assert Decimal(0) <= breakdown.cash <= amount
    assert {v for v, _ in breakdown.chips} <= set(chips.values)
    assert [v for v, _ in breakdown.chips] == sorted((v for v, _ in breakdown.chips),
                                                    reverse=True)


@given(CHIP_SETS, st.lists(st.integers(min_value=0, max_value=20), min_size=6, max_size=6))
def test_an_amount_the_chips_make_leaves_no_cash(chips, counts):
    amount = sum((v * n for v, n in zip(chips.values, counts, strict=False)), Decimal("0"))
    assert chips.breakdown(amount).cash == 0


@pytest.mark.parametrize(("amount", "text"), [
    ("0", "nothing"),
    ("37.50", "1\u00d7$25 + 2\u00d7$5 + 1\u00d7$2.50"),
    ("5000", "10\u00d7$500"),
    ("7.75", "1\u00d7$5 + 1\u00d7$2.50 + $0.25 cash"),
    ("0.25", "$0.25 cash"),
])
def test_the_breakdown_as_the_screen_says_it(amount, text):
    assert ChipSet.default().breakdown(Decimal(amount)).text() == text


def test_fewest_chips_where_the_largest_first_is_not():
    assert ChipSet.parse(["10", "25"]).breakdown(Decimal("30")).text() == "3\u00d7$10"


@pytest.mark.parametrize("raw", [[], "5", ["5", "5.0"], ["0"], ["-5"], ["0.001"], ["x"],
                                 [str(n) for n in range(1, 20)], ["0.01", "5000"]])
def test_a_chip_list_that_is_no_set_of_chips_is_refused(raw):
    with pytest.raises(ChipError):
        ChipSet.parse(raw)


def test_a_refund_is_not_a_payout():
    with pytest.raises(ValueError, match="non-negative"):
        ChipSet.default().breakdown(Decimal("-1"))


@given(st.lists(st.integers(min_value=1, max_value=400), min_size=1, max_size=4, unique=True),
       st.integers(min_value=0, max_value=2_000))
def test_the_cash_is_only_what_no_chips_make(chip_cents, amount_cents):
    """Against every sum the chips make up to the amount, counted the slow way."""
    makes = [True] + [False] * amount_cents
    for total in range(1, amount_cents + 1):
        makes[total] = any(c <= total and makes[total - c] for c in chip_cents)
    best = max(t for t in range(amount_cents + 1) if makes[t])
    chips = ChipSet(tuple(sorted(Decimal(c) / 100 for c in chip_cents)))
    assert chips.breakdown(Decimal(amount_cents) / 100).cash == Decimal(amount_cents - best) / 100
