"""The settlement of a round: value objects with an itemised list of payout lines.

``Settlement.to_json()`` is the ``dealer-assist settle --json`` object of the round-log spec.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from dealer_assist.rules.money import format_money


class Outcome(enum.Enum):
    """How a hand's main wager ended."""

    BLACKJACK = "blackjack"  #: two-card 21 on the original hand, paid 3:2
    WIN = "win"  #: won (even money, or a Bonus 21)
    PUSH = "push"  #: tied the dealer, wager returned
    LOSE = "lose"  #: lower than the dealer, or beaten by a dealer blackjack
    BUST = "bust"  #: over 21, loses whatever the dealer does
    SURRENDER = "surrender"  #: late surrender, half the original wager returned
    RESCUE = "rescue"  #: last doubled portion returned, the rest forfeited


class Bonus21(enum.Enum):
    """A Bonus 21 paid instead of even money on a 21 that was never doubled."""

    FIVE_CARD = "5-card"
    SIX_CARD = "6-card"
    SEVEN_CARD = "7-card"
    S678_MIXED = "678-mixed"
    S678_SUITED = "678-suited"
    S678_SPADES = "678-spades"
    S777_MIXED = "777-mixed"
    S777_SUITED = "777-suited"
    S777_SPADES = "777-spades"


@dataclass(frozen=True, slots=True)
class PayoutLine:
    """One item the dealer pays (positive) or takes (negative), with its reason and odds."""

    seat: int
    hand: int | None
    kind: str
    reason: str
    odds: str | None
    amount: Decimal

    def to_json(self) -> dict[str, Any]:
        return {
            "seat": self.seat,
            "hand": self.hand,
            "kind": self.kind,
            "reason": self.reason,
            "odds": self.odds,
            "amount": format_money(self.amount),
        }


@dataclass(frozen=True, slots=True)
class HandResult:
    cards: tuple[str, ...]
    total: int
    wagered: Decimal
    outcome: Outcome
    bonus: Bonus21 | None
    net: Decimal
    doublings: tuple[Decimal, ...] = ()
    from_split: bool = False

    def to_json(self) -> dict[str, Any]:
        return {
            "cards": list(self.cards),
            "total": self.total,
            "wagered": format_money(self.wagered),
            "outcome": self.outcome.value,
            "bonus": self.bonus.value if self.bonus else None,
            "net": format_money(self.net),
            "doublings": [format_money(d) for d in self.doublings],
            "split": self.from_split,
        }


@dataclass(frozen=True, slots=True)
class MatchResult:
    wagered: Decimal
    suited: int
    unsuited: int
    net: Decimal

    def to_json(self) -> dict[str, Any]:
        return {
            "wagered": format_money(self.wagered),
            "matches": {"suited": self.suited, "unsuited": self.unsuited},
            "net": format_money(self.net),
        }


@dataclass(frozen=True, slots=True)
class InsuranceResult:
    wagered: Decimal
    net: Decimal

    def to_json(self) -> dict[str, Any]:
        return {"wagered": format_money(self.wagered), "net": format_money(self.net)}


@dataclass(frozen=True, slots=True)
class SeatResult:
    seat: int
    player: str | None
    wager: Decimal
    hands: tuple[HandResult, ...]
    match: MatchResult | None
    insurance: InsuranceResult | None
    super_bonus: Decimal
    envy: Decimal
    net: Decimal
    lines: tuple[PayoutLine, ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "seat": self.seat,
            "player": self.player,
            "wager": format_money(self.wager),
            "net": format_money(self.net),
            "hands": [h.to_json() for h in self.hands],
            "match": self.match.to_json() if self.match else None,
            "insurance": self.insurance.to_json() if self.insurance else None,
            "super_bonus": format_money(self.super_bonus),
            "envy": format_money(self.envy),
            "lines": [line.to_json() for line in self.lines],
        }


@dataclass(frozen=True, slots=True)
class DealerResult:
    cards: tuple[str, ...]
    total: int
    blackjack: bool
    bust: bool

    def to_json(self) -> dict[str, Any]:
        return {
            "cards": list(self.cards),
            "total": self.total,
            "blackjack": self.blackjack,
            "bust": self.bust,
        }


@dataclass(frozen=True, slots=True)
class Settlement:
    """What every seat wins or loses in a round, itemised. Nets are from the players' side."""

    round_id: str | None
    rules: Any
    dealer: DealerResult
    seats: tuple[SeatResult, ...]
    net: Decimal
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def house_result(self) -> Decimal:
        """What the house wins: minus the players' total net."""
        return -self.net

    def seat(self, number: int) -> SeatResult:
        for result in self.seats:
            if result.seat == number:
                return result
        raise KeyError(f"seat {number} has no wager in round {self.round_id}")

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"round": self.round_id, "rules": self.rules}
        out.update({k: v for k, v in self.extra.items() if k not in ("round", "rules")})
        out["dealer"] = self.dealer.to_json()
        out["seats"] = [s.to_json() for s in self.seats]
        out["net"] = format_money(self.net)
        return out
