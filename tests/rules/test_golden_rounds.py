"""Every rule, bonus and refusal of the seeds as a round log with its expected outcome."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import pytest

from dealer_assist.roundlog import LogError, settle_log
from tests.golden import REFUSED, ROUNDS, assert_subset, expected_for


@pytest.mark.parametrize("log", ROUNDS, ids=lambda p: p.stem)
def test_round_settles_as_expected(log: Path) -> None:
    settlement = settle_log(log.read_text().splitlines())
    out = settlement.to_json()
    assert_subset(expected_for(log), out)
    # The contract's arithmetic: a seat's net is the sum of its parts; the table's, of its seats.
    for seat in out["seats"]:
        parts = sum(Decimal(h["net"]) for h in seat["hands"])
        parts += Decimal(seat["match"]["net"]) if seat["match"] else 0
        parts += Decimal(seat["insurance"]["net"]) if seat["insurance"] else 0
        parts += Decimal(seat["super_bonus"]) + Decimal(seat["envy"])
        assert parts == Decimal(seat["net"]), seat
        assert sum(Decimal(line["amount"]) for line in seat["lines"]) == Decimal(seat["net"])
    assert sum(Decimal(s["net"]) for s in out["seats"]) == Decimal(out["net"])


@pytest.mark.parametrize("log", REFUSED, ids=lambda p: p.stem)
def test_log_is_refused_naming_line_and_reason(log: Path) -> None:
    expected = expected_for(log)["error"]
    with pytest.raises(LogError) as caught:
        settle_log(log.read_text().splitlines())
    error = caught.value
    assert error.line == (expected["line"] or None), str(error)
    for fragment in expected["contains"]:
        assert fragment in str(error), f"{fragment!r} not in {error}"


def test_golden_files_exist() -> None:
    assert len(ROUNDS) >= 40 and len(REFUSED) >= 30
