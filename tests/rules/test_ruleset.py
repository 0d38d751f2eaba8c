from __future__ import annotations

from decimal import Decimal

import pytest

from dealer_assist.rules import (
    PRESETS,
    MatchPaytable,
    RoundEngine,
    RuleSet,
    RuleSetError,
    WagerError,
)


def test_the_five_presets_of_the_round_log_spec() -> None:
    table = {
        "h17-ddd-6": (6, True, True, False, MatchPaytable(4, 9)),
        "h17-ddd-8": (8, True, True, False, MatchPaytable(3, 12)),
        "s17-6": (6, False, False, True, MatchPaytable(4, 9)),
        "s17-8": (8, False, False, True, MatchPaytable(3, 12)),
        "h17-ddd-2": (2, True, True, False, None),
    }
    assert set(PRESETS) == set(table)
    for name, (decks, h17, ddd, dfl, match) in table.items():
        rules = RuleSet.preset(name)
        assert (rules.decks, rules.dealer_hits_soft_17, rules.double_double_down) == (
            decks,
            h17,
            ddd,
        )
        assert rules.double_for_less is dfl
        assert rules.match_the_dealer == match
        assert (rules.min_bet, rules.max_bet) == (Decimal("5"), Decimal("1000"))
        assert rules.envy_bonus == Decimal("50")


def test_super_bonus_tiers() -> None:
    rules = RuleSet.preset("h17-ddd-6")
    assert rules.super_bonus_for(Decimal("4.99")) is None
    assert rules.super_bonus_for(Decimal("5")) == Decimal("1000")
    assert rules.super_bonus_for(Decimal("24.75")) == Decimal("1000")
    assert rules.super_bonus_for(Decimal("25")) == Decimal("5000")


def test_overrides() -> None:
    rules = RuleSet.from_spec(
        {
            "preset": "s17-6",
            "max_bet": "500",
            "min_bet": 10,
            "decks": 4,
            "envy_bonus": "25",
            "match_the_dealer": {"unsuited": 3, "suited": 10},
            "super_bonus_tiers": [["10", "2000"], ["50", "10000"]],
            "split_by_value": False,
        }
    )
    assert rules.max_bet == Decimal("500") and rules.min_bet == Decimal("10")
    assert rules.decks == 4 and rules.envy_bonus == Decimal("25")
    assert rules.match_the_dealer == MatchPaytable(3, 10)
    assert rules.super_bonus_for(Decimal("49.99")) == Decimal("2000")
    assert not rules.split_by_value
    assert (
        RuleSet.from_spec({"preset": "s17-6", "match_the_dealer": "off"}).match_the_dealer is None
    )


@pytest.mark.parametrize(
    ("spec", "paytable"),
    [
        ({"preset": "h17-ddd-6", "decks": 8}, MatchPaytable(3, 12)),
        ({"preset": "s17-8", "decks": 6}, MatchPaytable(4, 9)),
        ({"preset": "s17-8", "decks": 6, "match_the_dealer": "8-deck"}, MatchPaytable(3, 12)),
        ({"preset": "h17-ddd-2", "decks": 6}, None),  # the side bet stays off
    ],
)
def test_the_deck_count_sets_the_match_paytable(spec: dict, paytable: MatchPaytable) -> None:
    # spec section 2: decks "drives the Match-the-Dealer paytable" (004 section e)
    assert RuleSet.from_spec(spec).match_the_dealer == paytable


@pytest.mark.parametrize("decks", [2, 4, 5])
def test_match_is_off_on_a_deck_count_without_a_paytable(decks: int) -> None:
    # 001 section 2: 2, 4, 5, 6 or 8 decks; only 6 and 8 have a paytable in the seeds (004 e)
    rules = RuleSet.from_spec({"preset": "s17-6", "decks": decks})
    assert rules.decks == decks and rules.match_the_dealer is None
    engine = RoundEngine(rules)
    engine.bet(1, Decimal("10"))
    with pytest.raises(WagerError, match=f"no standard paytable for {decks} decks"):
        engine.bet(1, Decimal("5"), wager="match")
    own = RuleSet.from_spec({"preset": "s17-6", "decks": 2,
                             "match_the_dealer": {"unsuited": 3, "suited": 11}})
    assert own.match_the_dealer == MatchPaytable(3, 11)


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ({"preset": "h17-ddd-6", "soft17": "stand"}, "only allowed where the dealer hits soft 17"),
        ({"preset": "h17-ddd-6", "double_for_less": True}, "double-double down is off"),
        (
            {"preset": "s17-6", "double_double_down": True},
            "only allowed where the dealer hits soft",
        ),
        ({"preset": "s17-6", "decks": 7}, "decks must be one of"),
        ({"preset": "s17-6", "min_bet": "50", "max_bet": "10"}, "above max_bet"),
        ({"preset": "s17-6", "min_bet": "0"}, "must be positive"),
        ({"preset": "s17-6", "max_bet": "ten"}, "house option 'max_bet'"),
        ({"preset": "s17-6", "max_bet": "10.001"}, "whole cents"),
        ({"preset": "s17-6", "surrender_early": True}, "unknown house option"),
        ({"preset": "s17-6", "soft17": "maybe"}, 'expected "hit" or "stand"'),
        ({"preset": "s17-6", "max_hands": 5}, "max_hands"),
        ({"preset": "s17-6", "super_bonus_tiers": [["25", "5000"], ["5", "1000"]]}, "increasing"),
        ({"preset": "s17-6", "match_the_dealer": {"unsuited": 10**400, "suited": 9}},
         "match_the_dealer odds must be 0 to 1000 a match"),
        # A tier paying nothing would still owe every other seat Envy (spec 5): refused.
        ({"preset": "s17-6", "super_bonus_tiers": [["5", "0"], ["25", "5000"]]},
         "positive amount"),
        ({"max_bet": "10"}, 'needs "preset"'),
        ("s21", "unknown rules preset"),
        (42, "preset name or an object"),
    ],
)
def test_invalid_rule_sets_are_refused_with_reasons(spec: object, message: str) -> None:
    with pytest.raises(RuleSetError, match=message):
        RuleSet.from_spec(spec)


def test_every_problem_is_reported_at_once() -> None:
    with pytest.raises(RuleSetError) as caught:
        RuleSet.from_spec({"preset": "h17-ddd-6", "soft17": "stand", "decks": 3, "min_bet": "5000"})
    text = str(caught.value)
    assert "decks" in text and "soft 17" in text and "above max_bet" in text
