"""The fast path against the real round engine: known rounds, then thousands of random shoes."""

import json
from decimal import Decimal

import pytest

from dealer_assist.gamemath.crosscheck import (
    COMPARED,
    check,
    play_engine_round,
)
from dealer_assist.gamemath.simulate import GameRules
from dealer_assist.rules import Card, RuleSet
from tests.gamemath.scenarios import SCENARIOS, Scenario

ENGINE_RULES = {
    "h17-redouble": RuleSet.preset("h17-ddd-6"),
    "h17": RuleSet.from_spec({"preset": "h17-ddd-6", "double_double_down": False}),
    "s17": RuleSet.preset("s17-6"),
}


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda s: s.name)
def test_engine_settles_the_known_rounds_as_the_fast_path_does(scenario: Scenario) -> None:
    rules = ENGINE_RULES[scenario.rules]
    strategy = GameRules.from_ruleset(rules).strategy()
    cards = iter([Card.parse(c) for c in scenario.cards.split()])
    settlement, used = play_engine_round(rules, strategy, cards)
    seat = settlement.seat(1)
    main = sum((h.net for h in seat.hands), Decimal(0))
    assert (main, used) == (scenario.net_half_wagers * Decimal(5), scenario.cards_used)


def test_super_bonus_scenario_pays_the_tier_through_the_engine() -> None:
    rules = ENGINE_RULES["h17"]
    strategy = GameRules.from_ruleset(rules).strategy()
    cards = iter([Card.parse(c) for c in "7D 7H 7D 9C 7D".split()])
    settlement, _ = play_engine_round(rules, strategy, cards)
    assert settlement.seat(1).super_bonus == Decimal("1000.00")  # $10 wager: the $5 tier


@pytest.mark.parametrize(
    "spec",
    [
        "h17-ddd-6",
        "s17-6",
        '{"preset": "h17-ddd-6", "double_double_down": false}',
        "h17-ddd-2",
        # The fallbacks: no surrender, fewer hands, same-rank splits only.
        '{"preset": "h17-ddd-8", "late_surrender": false, "max_hands": 2}',
        '{"preset": "s17-6", "split_by_value": false, "max_hands": 3}',
    ],
)
def test_fast_path_matches_engine_round_by_round(spec: str) -> None:
    rules = RuleSet.from_spec(json.loads(spec) if spec.startswith("{") else spec)
    report = check(rules, rounds=3000, seed=20261129)
    assert report.mismatches == []
    compared = [k for k in COMPARED if k in report.fast_counts]
    assert {k: report.engine_counts[k] for k in compared} == {
        k: report.fast_counts[k] for k in compared
    }
    # The comparison is not vacuous: these shoes exercise splits, rescues and bonuses.
    assert report.fast_counts["splits"] > 0 and report.fast_counts["rescues"] > 0
    assert report.fast_counts["five_card_21"] + report.fast_counts["six_seven_eight_mixed"] > 0
