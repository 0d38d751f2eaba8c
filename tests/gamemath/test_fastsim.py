"""The compiled fast path: known rounds, exact bookkeeping, seeded repeatability, a short run."""

import numpy as np
import pytest

from dealer_assist.gamemath import fastsim
from dealer_assist.gamemath.simulate import GameRules, simulate
from dealer_assist.gamemath.strategy import RANK_NUMBER, SUIT_NUMBER
from dealer_assist.rules.cards import Card
from tests.gamemath.scenarios import SCENARIOS, Scenario

RULES = {
    "h17-redouble": GameRules("h17-ddd-6", dealer_hits_soft_17=True, max_doublings=3),
    "h17": GameRules("h17-6", dealer_hits_soft_17=True, max_doublings=1),
    "s17": GameRules("s17-6", dealer_hits_soft_17=False, max_doublings=1),
}


def shoe_row(cards: str, decks: int = 6) -> np.ndarray:
    """The given cards first, then the rest of a full shoe."""
    codes = [RANK_NUMBER[c.rank] * 4 + SUIT_NUMBER[c.suit] for c in map(Card.parse, cards.split())]
    rest = list(fastsim.spanish_shoe_codes(decks))
    for code in codes:
        rest.remove(code)
    return np.array(codes + rest, dtype=np.int64)


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda s: s.name)
def test_known_rounds(scenario: Scenario) -> None:
    rules = RULES[scenario.rules]
    nets, used, stats = fastsim.replay_rounds(
        shoe_row(scenario.cards)[None, :], *rules.kernel_arguments()
    )
    assert (int(nets[0]), int(used[0])) == (scenario.net_half_wagers, scenario.cards_used)


def test_bonus_and_super_bonus_are_counted() -> None:
    rows = np.stack([shoe_row("6S 5H 7S 9C 8S"), shoe_row("7D 7H 7D 9C 7D")])
    _, _, stats = fastsim.replay_rounds(rows, *RULES["h17"].kernel_arguments())
    counts = dict(zip(fastsim.STAT_NAMES, stats.tolist(), strict=True))
    assert counts["six_seven_eight_spades"] == 1
    assert counts["seven_seven_seven_suited"] == 1
    assert counts["super_bonus"] == 1
    assert counts["match_one_unsuited"] == 0 and counts["match_two_unsuited"] == 1


def test_same_seed_same_figures_whatever_the_number_of_processes() -> None:
    rules = RULES["h17-redouble"]
    one = simulate(rules, 300_000, seed=11, workers=1)
    two = simulate(rules, 300_000, seed=11, workers=2)
    other = simulate(rules, 300_000, seed=12, workers=1)
    assert one.counts == two.counts
    assert one.counts != other.counts


def test_bookkeeping_adds_up() -> None:
    result = simulate(RULES["h17-redouble"], 200_000, seed=5, workers=1)
    c = result.counts
    assert c["rounds"] == 200_000
    assert c["wins"] + c["pushes"] + c["losses"] == c["rounds"]
    assert c["hands"] == c["rounds"] + c["splits"]
    match = [k for k in fastsim.STAT_NAMES if k.startswith("match_")]
    assert sum(c[k] for k in match) == c["rounds"]
    # Every doubling at least doubles the money on a hand: wager >= rounds + splits + doublings.
    assert c["total_wager"] >= c["hands"] + c["doublings"]


@pytest.mark.parametrize(("chart", "published"), [("h17-redouble", 0.0042), ("s17", 0.0040)])
def test_short_run_is_consistent_with_the_published_edge(chart: str, published: float) -> None:
    # A CI-sized run (a few seconds): the interval is wide, but an error in the rules of the
    # order of a percent shows. The long verification runs are in docs/gamemath.md.
    result = simulate(RULES[chart], 1_000_000, seed=2026, workers=1)
    lo, hi = result.house_edge_ci95
    assert lo - 0.001 <= published <= hi + 0.001


def test_rule_views_no_table_has_are_refused() -> None:
    from dealer_assist.gamemath.combinatorics import GameMathError

    with pytest.raises(GameMathError, match="decks must be one of"):
        GameRules("x", decks=3)
    with pytest.raises(GameMathError, match="max_doublings must be 1 or 3"):
        GameRules("x", max_doublings=2)
    with pytest.raises(GameMathError, match="Match the Dealer odds must be 0:1 to 1000:1"):
        GameRules("x", match_paytable=(4, 10**400))  # refused before a round is played
    with pytest.raises(GameMathError, match="rounds must be 1 to 10000000000, got 0"):
        simulate(RULES["s17"], 0)
    with pytest.raises(GameMathError, match="rounds must be 1 to 10000000000, got 10{18}$"):
        simulate(RULES["s17"], 10**18)  # refused before its chunks are laid out


def test_progress_is_reported_per_chunk_up_to_the_total() -> None:
    seen: list[int] = []
    simulate(
        RULES["s17"],
        600_000,
        seed=1,
        workers=1,
        progress=lambda done, total, seconds: seen.append(done),
    )
    assert seen == [250_000, 500_000, 600_000]
