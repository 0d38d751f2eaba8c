"""House options of a Spanish 21 table, the presets every install ships, and their validation."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from fractions import Fraction
from typing import Any

from dealer_assist.rules.cards import ALLOWED_DECKS
from dealer_assist.rules.money import MoneyError, parse_money


class RuleSetError(ValueError):
    """A rule set no table may run: an unknown option, a bad value or a forbidden combination."""


@dataclass(frozen=True, slots=True)
class MatchPaytable:
    """Match the Dealer pays ``unsuited``:1 per unsuited match and ``suited``:1 per suited one."""

    unsuited: int
    suited: int

    def odds(self, unsuited_matches: int, suited_matches: int) -> int:
        """Total odds paid for a combination; 0 means the wager loses."""
        return unsuited_matches * self.unsuited + suited_matches * self.suited


@dataclass(frozen=True, slots=True)
class SuperBonusTier:
    """An original wager of at least ``min_wager`` earns ``amount``."""

    min_wager: Decimal
    amount: Decimal


DEFAULT_TIERS = (
    SuperBonusTier(Decimal("5.00"), Decimal("1000.00")),
    SuperBonusTier(Decimal("25.00"), Decimal("5000.00")),
)
#: The most Match the Dealer may pay a match. Published paytables pay at most 12:1; far above,
#: figures built on them stop fitting the par sheet's floats (10**400:1 cannot be divided out).
MAX_MATCH_ODDS = 1000
MATCH_6_DECKS = MatchPaytable(unsuited=4, suited=9)
MATCH_8_DECKS = MatchPaytable(unsuited=3, suited=12)
#: The paytable a deck count sets when the house names no other (spec section 2, 004 section e).
MATCH_BY_DECKS = {6: MATCH_6_DECKS, 8: MATCH_8_DECKS}


@dataclass(frozen=True, slots=True)
class RuleSet:
    """One table's house options. Build with :meth:`preset` or :meth:`from_spec`; validated."""

    name: str
    decks: int
    dealer_hits_soft_17: bool
    double_double_down: bool
    double_for_less: bool
    min_bet: Decimal
    max_bet: Decimal
    match_the_dealer: MatchPaytable | None
    super_bonus_tiers: tuple[SuperBonusTier, ...] = DEFAULT_TIERS
    envy_bonus: Decimal = Decimal("50.00")
    split_by_value: bool = True
    max_hands: int = 4
    late_surrender: bool = True
    insurance: bool = True
    seats: int = 7
    blackjack_pays: Fraction = field(default=Fraction(3, 2))

    def __post_init__(self) -> None:
        problems = self.problems()
        if problems:
            raise RuleSetError(f"rule set {self.name!r}: " + "; ".join(problems))

    def problems(self) -> list[str]:
        """Every reason this rule set is invalid (empty when valid), not just the first."""
        found: list[str] = []
        if self.decks not in ALLOWED_DECKS:
            found.append(
                f"decks must be one of {', '.join(map(str, ALLOWED_DECKS))}, not {self.decks}"
            )
        if self.double_double_down and not self.dealer_hits_soft_17:
            found.append("double-double down is only allowed where the dealer hits soft 17")
        if self.double_for_less and self.double_double_down:
            found.append("double for less is only allowed when double-double down is off")
        if self.min_bet <= 0:
            found.append(f"min_bet must be positive, not {self.min_bet}")
        if self.min_bet > self.max_bet:
            found.append(f"min_bet {self.min_bet} is above max_bet {self.max_bet}")
        if not 1 <= self.max_hands <= 4:
            found.append(f"max_hands must be 1 to 4, not {self.max_hands}")
        if not 1 <= self.seats <= 9:
            found.append(f"seats must be 1 to 9, not {self.seats}")
        if self.envy_bonus < 0:
            found.append(f"envy_bonus must not be negative, not {self.envy_bonus}")
        if self.match_the_dealer is not None and not (
            0 <= self.match_the_dealer.unsuited <= MAX_MATCH_ODDS
            and 0 <= self.match_the_dealer.suited <= MAX_MATCH_ODDS
        ):
            found.append(f"match_the_dealer odds must be 0 to {MAX_MATCH_ODDS} a match")
        mins = [t.min_wager for t in self.super_bonus_tiers]
        if mins != sorted(set(mins)):
            found.append("super_bonus_tiers must have increasing, distinct min_wager")
        if any(t.amount <= 0 or t.min_wager <= 0 for t in self.super_bonus_tiers):
            found.append(
                "super_bonus_tiers need a positive min_wager and a positive amount (a tier that"
                " pays nothing would still owe the other seats Envy: leave its wagers out)"
            )
        return found

    @property
    def max_doublings(self) -> int:
        """How many times one hand may double: 3 with double-double down, else 1."""
        return 3 if self.double_double_down else 1

    def super_bonus_for(self, original_wager: Decimal) -> Decimal | None:
        """The Super Bonus amount an original wager earns, or None below the lowest tier."""
        amount = None
        for tier in self.super_bonus_tiers:
            if original_wager >= tier.min_wager:
                amount = tier.amount
        return amount

    @classmethod
    def preset(cls, name: str) -> RuleSet:
        """One of the named presets (see :data:`PRESETS`)."""
        try:
            return PRESETS[name]
        except KeyError:
            raise RuleSetError(
                f"unknown rules preset {name!r}; presets: {', '.join(sorted(PRESETS))}"
            ) from None

    @classmethod
    def from_spec(cls, spec: object) -> RuleSet:
        """From a log's ``rules``: a preset name or ``{"preset": NAME, option: value, ...}``."""
        if isinstance(spec, str):
            return cls.preset(spec)
        if isinstance(spec, RuleSet):
            return spec
        if not isinstance(spec, Mapping):
            raise RuleSetError(f"rules must be a preset name or an object, got {spec!r}")
        overrides = dict(spec)
        if "preset" not in overrides:
            raise RuleSetError('rules object needs "preset": one of ' + ", ".join(sorted(PRESETS)))
        base = cls.preset(str(overrides.pop("preset")))
        if not overrides:
            return base
        values: dict[str, Any] = {"name": f"{base.name}+custom"}
        for key, raw in overrides.items():
            if key not in OPTION_PARSERS:
                raise RuleSetError(
                    f"unknown house option {key!r}; options: {', '.join(sorted(OPTION_PARSERS))}"
                )
            try:
                values[OPTION_FIELDS.get(key, key)] = OPTION_PARSERS[key](raw)
            except (ValueError, TypeError) as error:
                raise RuleSetError(f"house option {key!r}: {error}") from None
        decks = values.get("decks")
        if decks in ALLOWED_DECKS and "match_the_dealer" not in overrides \
                and base.match_the_dealer is not None:
            # The deck count sets the side bet's paytable unless the house gives its own; where
            # no seed gives one (2, 4 or 5 decks) the side bet is off until the house names one.
            values["match_the_dealer"] = MATCH_BY_DECKS.get(decks)
        return dataclasses.replace(base, **values)


def _bool(raw: object) -> bool:
    if isinstance(raw, bool):
        return raw
    if isinstance(raw, str) and raw.lower() in ("on", "true", "yes", "off", "false", "no"):
        return raw.lower() in ("on", "true", "yes")
    raise ValueError(f"expected true/false or on/off, got {raw!r}")


def _int(raw: object) -> int:
    if isinstance(raw, bool) or not isinstance(raw, (int, str)):
        raise ValueError(f"expected a whole number, got {raw!r}")
    try:
        return int(raw)
    except ValueError:
        raise ValueError(f"expected a whole number, got {raw!r}") from None


def _soft17(raw: object) -> bool:
    text = str(raw).lower()
    if text in ("hit", "h17"):
        return True
    if text in ("stand", "s17"):
        return False
    raise ValueError(f'expected "hit" or "stand", got {raw!r}')


def _money(raw: object) -> Decimal:
    try:
        return parse_money(raw)
    except MoneyError as error:
        raise ValueError(str(error)) from None


def _match(raw: object) -> MatchPaytable | None:
    if raw in (False, None, "off"):
        return None
    if isinstance(raw, Mapping) and set(raw) == {"unsuited", "suited"}:
        return MatchPaytable(unsuited=_int(raw["unsuited"]), suited=_int(raw["suited"]))
    if isinstance(raw, str) and raw in ("6-deck", "8-deck"):
        return MATCH_6_DECKS if raw == "6-deck" else MATCH_8_DECKS
    raise ValueError(
        f'expected "off", "6-deck", "8-deck" or {{"unsuited": N, "suited": N}}, got {raw!r}'
    )


def _tiers(raw: object) -> tuple[SuperBonusTier, ...]:
    if not isinstance(raw, list):
        raise ValueError(f"expected a list of [min_wager, amount] pairs, got {raw!r}")
    tiers = []
    for item in raw:
        if isinstance(item, Mapping):
            item = [item.get("min_wager"), item.get("amount")]
        if not isinstance(item, (list, tuple)) or len(item) != 2:
            raise ValueError(f"expected [min_wager, amount], got {item!r}")
        tiers.append(SuperBonusTier(_money(item[0]), _money(item[1])))
    return tuple(tiers)


# Option name in a round log -> parser. Names follow the rules page's house options table.
OPTION_PARSERS = {
    "decks": _int,
    "soft17": _soft17,
    "dealer_hits_soft_17": _bool,
    "double_double_down": _bool,
    "double_for_less": _bool,
    "min_bet": _money,
    "max_bet": _money,
    "match_the_dealer": _match,
    "super_bonus_tiers": _tiers,
    "envy_bonus": _money,
    "split_by_value": _bool,
    "max_hands": _int,
    "late_surrender": _bool,
    "insurance": _bool,
    "seats": _int,
}
OPTION_FIELDS = {"soft17": "dealer_hits_soft_17"}


def _preset(name: str, decks: int, h17: bool, ddd: bool, match: MatchPaytable | None) -> RuleSet:
    return RuleSet(
        name=name,
        decks=decks,
        dealer_hits_soft_17=h17,
        double_double_down=ddd,
        double_for_less=not ddd,
        min_bet=Decimal("5.00"),
        max_bet=Decimal("1000.00"),
        match_the_dealer=match,
    )


PRESETS: dict[str, RuleSet] = {
    p.name: p
    for p in (
        _preset("h17-ddd-6", 6, True, True, MATCH_6_DECKS),
        _preset("h17-ddd-8", 8, True, True, MATCH_8_DECKS),
        _preset("s17-6", 6, False, False, MATCH_6_DECKS),
        _preset("s17-8", 8, False, False, MATCH_8_DECKS),
        _preset("h17-ddd-2", 2, True, True, None),
    )
}
