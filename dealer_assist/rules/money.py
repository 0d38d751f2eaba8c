"""Exact money: ``Decimal`` in whole cents, parsed from strings or JSON numbers, never floats."""

from __future__ import annotations

import re
from decimal import ROUND_FLOOR, Decimal, InvalidOperation

CENT = Decimal("0.01")
ZERO = Decimal("0.00")
#: No stake, limit or payout at a table comes near this; above it a payout's arithmetic could
#: run past ``Decimal``'s 28 digits and round away cents, so such amounts are refused.
MOST = Decimal("999999999999.99")
#: A decimal amount as text, ASCII digits only: ``Decimal`` alone also reads full-width and other
#: scripts' digits and underscores, which no pit system writes and a person could misread.
_DECIMAL_TEXT = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?", re.ASCII)


class MoneyError(ValueError):
    """An amount that is not exact money in whole cents."""


def parse_money(value: object, what: str = "amount") -> Decimal:
    """Parse ``"10"``, ``"7.50"``, ``12.5`` or a ``Decimal``; refuse NaN and fractions of a cent."""
    if isinstance(value, bool) or value is None:
        raise MoneyError(f"{what} must be a decimal amount, got {value!r}")
    if isinstance(value, float):
        # JSON parsed without parse_float=Decimal: repr is the shortest text that round-trips.
        value = repr(value)
    text = str(value).strip()
    try:
        amount = Decimal(text)
    except InvalidOperation:
        raise MoneyError(f"{what} must be a decimal amount, got {value!r}") from None
    if not amount.is_finite():
        raise MoneyError(f"{what} must be a finite amount, got {value!r}")
    if not _DECIMAL_TEXT.fullmatch(text):
        raise MoneyError(f"{what} must be written with the digits 0-9, got {value!r}")
    if amount.copy_abs() > MOST:  # copy_abs: abs() would overflow on an exponent like 1e999999999
        raise MoneyError(f"{what} is too large, got {value!r} (at most {MOST:f})")
    if amount != amount.quantize(CENT):
        raise MoneyError(f"{what} must be in whole cents, got {value!r}")
    return amount.quantize(CENT)


def cents(amount: Decimal) -> Decimal:
    """Round a computed payout down to the cent: breakage below a cent stays with the house."""
    return amount.quantize(CENT, rounding=ROUND_FLOOR)


def format_money(amount: Decimal) -> str:
    """Canonical text for JSON output: ``"7.50"``, ``"-10.00"``."""
    return f"{amount.quantize(CENT):f}"
