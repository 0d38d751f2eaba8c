"""The par sheet: what a table-games manager files for a rule set, as JSON and as a report."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from dealer_assist.gamemath import charts
from dealer_assist.gamemath.combinatorics import (
    MATCH_COMBINATIONS,
    bonus_cost,
    envy_per_seat,
    insurance_house_edge,
    match_the_dealer,
    super_bonus_probability,
)
from dealer_assist.gamemath.simulate import GameRules, SimulationResult

BONUS_21 = (
    ("five_card_21", "5-card 21", "3:2"),
    ("six_card_21", "6-card 21", "2:1"),
    ("seven_card_21", "7-or-more-card 21", "3:1"),
    ("six_seven_eight_mixed", "6-7-8 mixed suits", "3:2"),
    ("six_seven_eight_suited", "6-7-8 same suit", "2:1"),
    ("six_seven_eight_spades", "6-7-8 spades", "3:1"),
    ("seven_seven_seven_mixed", "7-7-7 mixed suits", "3:2"),
    ("seven_seven_seven_suited", "7-7-7 same suit", "2:1"),
    ("seven_seven_seven_spades", "7-7-7 spades", "3:1"),
)
EVENTS = ("player_blackjacks", "dealer_blackjacks", "doublings", "splits", "surrenders",
          "rescues", "busts", "hands")
MATCH_KEYS = ("match_none", "match_one_unsuited", "match_one_suited", "match_two_unsuited",
              "match_suited_and_unsuited", "match_two_suited")


def _exact(value: Fraction) -> str:
    return f"{value.numerator}/{value.denominator}"


def par_sheet(rules: GameRules, result: SimulationResult) -> dict[str, Any]:
    """Every figure of the par sheet; rates are fractions (0.004 is 0.4%), never percent."""
    lo, hi = result.house_edge_ci95
    sheet: dict[str, Any] = {
        "rules": {
            "name": rules.name, "decks": rules.decks,
            "dealer_hits_soft_17": rules.dealer_hits_soft_17,
            "max_doublings": rules.max_doublings, "late_surrender": rules.late_surrender,
            "max_hands": rules.max_hands, "split_by_value": rules.split_by_value,
        },
        "strategy": {"chart": rules.chart, "source": charts.SOURCE},
        "rounds": result.rounds,
        "seed": result.seed,
        "house_edge": result.house_edge,
        "house_edge_ci95": [lo, hi],
        "standard_deviation": result.standard_deviation,
        "hit_frequency": result.frequency("wins"),
        "push_frequency": result.frequency("pushes"),
        "loss_frequency": result.frequency("losses"),
        "average_total_wager": result.average_total_wager,
        "bonus_21": {key: result.frequency(key) for key, _, _ in BONUS_21},
        "events_per_round": {key: result.frequency(key) for key in EVENTS},
        "insurance": {"house_edge": float(insurance_house_edge(rules.decks)),
                      "exact": _exact(insurance_house_edge(rules.decks))},
    }
    sheet["match_dealer"] = _match_section(rules, result)
    sheet["super_bonus"], sheet["envy"] = _super_bonus_sections(rules, result)
    return sheet


def _match_section(rules: GameRules, result: SimulationResult) -> dict[str, Any] | None:
    if rules.match_paytable is None:
        return None
    unsuited, suited = rules.match_paytable
    odds = match_the_dealer(rules.decks, unsuited, suited)
    simulated_return = sum(
        result.counts[key] * (odds.pays(combo) if odds.pays(combo) else -1)
        for key, combo in zip(MATCH_KEYS, MATCH_COMBINATIONS, strict=True)
    ) / result.rounds
    return {
        "unsuited_pays": unsuited,
        "suited_pays": suited,
        "house_edge": float(odds.house_edge),
        "house_edge_exact": _exact(odds.house_edge),
        "hit_frequency": float(odds.hit_frequency),
        "hit_frequency_exact": _exact(odds.hit_frequency),
        "combinations": [
            {"unsuited_matches": combo[0], "suited_matches": combo[1], "pays": odds.pays(combo),
             "probability": float(p), "probability_exact": _exact(p),
             "simulated": result.frequency(key)}
            for (combo, p), key in zip(odds.probabilities.items(), MATCH_KEYS, strict=True)
        ],
        "simulated_house_edge": -simulated_return,
    }


def _super_bonus_sections(
    rules: GameRules, result: SimulationResult
) -> tuple[dict[str, Any], dict[str, Any]]:
    probability = super_bonus_probability(rules.decks)
    tiers = [
        {"min_wager": str(w), "amount": str(a),
         "cost_at_min_wager": float(bonus_cost(probability, a, w))}
        for w, a in rules.super_bonus_tiers
    ]
    super_bonus = {
        "probability": float(probability),
        "probability_exact": _exact(probability),
        "one_in": round(1 / probability),
        "simulated_frequency": result.frequency("super_bonus"),
        "tiers": tiers,
    }
    others = rules.seats - 1
    envies = envy_per_seat(rules.decks, others)
    lowest = rules.super_bonus_tiers[0][0] if rules.super_bonus_tiers else None
    envy: dict[str, Any] = {
        "amount": str(rules.envy_bonus),
        "other_seats": others,
        "expected_payments_per_seat_round": float(envies),
        "expected_amount_per_seat_round": float(envies * Fraction(rules.envy_bonus)),
    }
    if lowest is not None:
        envy["cost_at_lowest_tier_wager"] = float(
            envies * Fraction(rules.envy_bonus) / Fraction(lowest))
    return super_bonus, envy


def _pct(value: float, places: int = 3) -> str:
    return f"{100 * value:.{places}f}%"


def render(sheet: dict[str, Any]) -> str:
    """The par sheet as a plain-text report."""
    r = sheet["rules"]
    lo, hi = sheet["house_edge_ci95"]
    dealer = "hits" if r["dealer_hits_soft_17"] else "stands on"
    doubling = "double-double down (3 doublings)" if r["max_doublings"] > 1 else "one doubling"
    lines = [
        f"PAR SHEET  {r['name']}",
        f"  {r['decks']} Spanish decks, dealer {dealer} soft 17, {doubling}"
        f", late surrender {'on' if r['late_surrender'] else 'off'}, up to {r['max_hands']} hands",
        f"  strategy: chart {sheet['strategy']['chart']} ({charts.SOURCE.split(',')[0]})",
        f"  {sheet['rounds']:,} simulated rounds, seed {sheet['seed']}",
        "",
        "MAIN GAME (per original wager; Super Bonus and Envy not included)",
        f"  house edge          {_pct(sheet['house_edge'])}   95% CI {_pct(lo)} .. {_pct(hi)}",
        f"  standard deviation  {sheet['standard_deviation']:.4f} wagers per round",
        f"  win / push / loss   {_pct(sheet['hit_frequency'], 2)} / "
        f"{_pct(sheet['push_frequency'], 2)} / {_pct(sheet['loss_frequency'], 2)}",
        f"  average total wager {sheet['average_total_wager']:.4f} original wagers per round",
        "",
        "BONUS 21 (frequency per round)",
    ]
    for key, label, pays in BONUS_21:
        freq = sheet["bonus_21"][key]
        one_in = f"1 in {1 / freq:,.0f}" if freq else "not seen"
        lines.append(f"  {label:<20} pays {pays:<4} {freq:.7f}  ({one_in})")
    lines += ["", "EVENTS (per round)"]
    for key, freq in sheet["events_per_round"].items():
        lines.append(f"  {key.replace('_', ' '):<20} {freq:.5f}")
    m = sheet["match_dealer"]
    lines.append("")
    if m is None:
        lines.append("MATCH THE DEALER  not offered")
    else:
        lines += [
            f"MATCH THE DEALER  {m['unsuited_pays']}:1 unsuited,"
            f" {m['suited_pays']}:1 suited (exact)",
            f"  house edge {_pct(m['house_edge'], 4)} ({m['house_edge_exact']}),"
            f" hit frequency {_pct(m['hit_frequency'], 3)};"
            f" simulated house edge {_pct(m['simulated_house_edge'], 2)}",
        ]
        for c in m["combinations"]:
            lines.append(f"  {c['unsuited_matches']} unsuited + {c['suited_matches']} suited"
                         f"  pays {c['pays']:>2}:1  p = {c['probability']:.6f}"
                         f"  (simulated {c['simulated']:.6f})")
    s, e = sheet["super_bonus"], sheet["envy"]
    lines += [
        "",
        f"INSURANCE  house edge {_pct(sheet['insurance']['house_edge'], 2)}"
        f" ({sheet['insurance']['exact']}), knowing only the dealer's ace",
        "",
        f"SUPER BONUS  probability {s['probability']:.3e} per hand (1 in {s['one_in']:,}),"
        f" simulated {s['simulated_frequency']:.3e}",
    ]
    for t in s["tiers"]:
        lines.append(f"  ${t['amount']} from ${t['min_wager']}: costs"
                     f" {_pct(t['cost_at_min_wager'], 4)} of a ${t['min_wager']} wager")
    lines.append(f"ENVY  ${e['amount']} to each other seat: with {e['other_seats']} other players"
                 f" a seat collects ${e['expected_amount_per_seat_round']:.5f} per round"
                 + (f" ({_pct(e['cost_at_lowest_tier_wager'], 4)} of the lowest tier wager)"
                    if "cost_at_lowest_tier_wager" in e else ""))
    return "\n".join(lines)
