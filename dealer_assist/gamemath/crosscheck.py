"""The fast path proven against the round engine: identical shoes in, identical money out.

Each round is dealt from its own shuffled shoe. The engine is driven through its public API by a
player who follows :class:`~dealer_assist.gamemath.strategy.BasicStrategy`, taking cards in the
order the engine asks for them; the fast path replays the same shoe. Per round they must agree on
the main-game net and on how many cards were used; over the run, on every bonus and Match count.

Long check (documented in docs/gamemath.md)::

    python -m dealer_assist.gamemath.crosscheck --rules h17-ddd-6 --rounds 1000000
"""

from __future__ import annotations

import argparse
import multiprocessing
import sys
import time
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from decimal import Decimal

import numpy as np

from dealer_assist.gamemath import fastsim
from dealer_assist.gamemath.simulate import GameRules, print_progress
from dealer_assist.gamemath.strategy import RANK_NUMBER, SUIT_NUMBER, BasicStrategy, Play
from dealer_assist.rules import (
    Action,
    Card,
    RoundEngine,
    RoundIncompleteError,
    RuleSet,
    SeatResult,
    Settlement,
)
from dealer_assist.rules.cards import SPANISH_DECK
from dealer_assist.rules.settlement import Outcome

WAGER = Decimal("10.00")  # a half-wager is $5: the fast path's unit
MATCH_WAGER = Decimal("5.00")
CODE_TO_CARD = {RANK_NUMBER[c.rank] * 4 + SUIT_NUMBER[c.suit]: c for c in SPANISH_DECK}
_ACTIONS = {Play.HIT: Action.HIT, Play.STAND: Action.STAND, Play.DOUBLE: Action.DOUBLE,
            Play.SPLIT: Action.SPLIT, Play.SURRENDER: Action.SURRENDER,
            Play.RESCUE: Action.RESCUE}


class StrategyEngineMismatch(AssertionError):
    """The strategy chose an action the engine calls illegal, or the two sides disagree."""


def play_engine_round(
    rules: RuleSet, strategy: BasicStrategy, cards: Iterator[Card], round_id: str = "check"
) -> tuple[Settlement, int]:
    """One seat plays one round through the engine; returns the settlement and cards used.

    The player keeps their own view of the hands (what they see on the felt) and asks the
    strategy; every decision must be one the engine allows.
    """
    engine = RoundEngine(rules, round_id=round_id)
    engine.bet(seat=1, amount=WAGER)
    if rules.match_the_dealer is not None:
        engine.bet(seat=1, amount=MATCH_WAGER, wager="match")
    hands: list[list[Card]] = [[]]
    doublings: list[int] = [0]
    used = 0
    eligible = rules.super_bonus_for(WAGER) is not None
    while True:
        target = engine.next_card_target() if engine.deal_complete else None
        if not engine.deal_complete or (target is not None and not target.is_dealer):
            card = next(cards)
            used += 1
            dealt_to = engine.card(card)
            if dealt_to.seat is not None:
                hands[dealt_to.hand or 0].append(card)
            continue
        acting = engine.acting()
        if acting is None:
            # The dealer draws only while some result depends on it (rules §3.7).
            try:
                return engine.settle(), used
            except RoundIncompleteError:
                used += 1
                engine.card(next(cards))
                continue
        _, index = acting
        up = engine.up_card
        assert up is not None
        play = strategy.play(hands[index], up, doublings=doublings[index],
                             split_hand=len(hands) > 1, hands=len(hands),
                             super_bonus_eligible=eligible)
        action = _ACTIONS[play]
        legal = engine.legal_actions()
        if action not in legal:
            raise StrategyEngineMismatch(
                f"round {round_id}: strategy plays {action.value} on "
                f"{' '.join(c.code for c in hands[index])} vs {up.code} (doublings "
                f"{doublings[index]}), engine allows {sorted(a.value for a in legal)}: "
                f"{engine.describe()}")
        engine.action(seat=1, action=action)
        if action is Action.DOUBLE:
            doublings[index] += 1
        elif action is Action.SPLIT:
            moved = hands[index].pop()
            hands.insert(index + 1, [moved])
            doublings.insert(index + 1, 0)


@dataclass
class CheckReport:
    """What a cross-check compared and found."""

    rounds: int = 0
    mismatches: list[str] = field(default_factory=list)
    engine_counts: Counter[str] = field(default_factory=Counter)
    fast_counts: Counter[str] = field(default_factory=Counter)

    def merge(self, other: CheckReport) -> None:
        self.rounds += other.rounds
        self.mismatches.extend(other.mismatches)
        self.engine_counts.update(other.engine_counts)
        self.fast_counts.update(other.fast_counts)


_BONUS_KEYS = {
    "5-card": "five_card_21", "6-card": "six_card_21", "7-card": "seven_card_21",
    "678-mixed": "six_seven_eight_mixed", "678-suited": "six_seven_eight_suited",
    "678-spades": "six_seven_eight_spades", "777-mixed": "seven_seven_seven_mixed",
    "777-suited": "seven_seven_seven_suited", "777-spades": "seven_seven_seven_spades",
}
_MATCH_KEYS = {(0, 0): "match_none", (1, 0): "match_one_unsuited", (0, 1): "match_one_suited",
               (2, 0): "match_two_unsuited", (1, 1): "match_suited_and_unsuited",
               (0, 2): "match_two_suited"}
COMPARED = (*_BONUS_KEYS.values(), *_MATCH_KEYS.values(), "super_bonus", "splits", "surrenders",
            "rescues", "busts", "player_blackjacks", "dealer_blackjacks")


def shuffled_shoes(decks: int, rounds: int, seed: int) -> np.ndarray:
    """One independently shuffled shoe per round, as fast-path card codes."""
    rng = np.random.default_rng(seed)
    base = fastsim.spanish_shoe_codes(decks)
    return np.stack([rng.permutation(base) for _ in range(rounds)])


def check(rules: RuleSet, rounds: int, seed: int, first_round: int = 0) -> CheckReport:
    """Play ``rounds`` shoes through both the engine and the fast path and compare."""
    game = GameRules.from_ruleset(rules)
    strategy = game.strategy()
    shoes = shuffled_shoes(rules.decks, rounds, seed)
    eligible = rules.super_bonus_for(WAGER) is not None
    nets, used, stats = fastsim.replay_rounds(shoes, *game.kernel_arguments(eligible))
    report = CheckReport(rounds=rounds)
    compared = COMPARED if rules.match_the_dealer is not None else [
        k for k in COMPARED if k not in _MATCH_KEYS.values()]
    report.fast_counts.update({k: int(stats[fastsim.S[k]]) for k in compared})
    half = WAGER / 2
    for r in range(rounds):
        round_id = f"{seed}/{first_round + r}"
        cards = (CODE_TO_CARD[int(code)] for code in shoes[r])
        settlement, engine_used = play_engine_round(rules, strategy, cards, round_id)
        seat = settlement.seat(1)
        main_net = sum((h.net for h in seat.hands), Decimal(0))
        fast_net = int(nets[r]) * half
        if main_net != fast_net or engine_used != int(used[r]):
            report.mismatches.append(
                f"round {round_id}: engine net {main_net} with {engine_used} cards, fast path "
                f"{fast_net} with {int(used[r])} cards; shoe starts "
                + " ".join(CODE_TO_CARD[int(c)].code for c in shoes[r][:max(engine_used, 4)]))
        _count_engine(report.engine_counts, seat, settlement)
    return report


def _count_engine(counts: Counter[str], seat: SeatResult, settlement: Settlement) -> None:
    hands = seat.hands
    for hand in hands:
        if hand.bonus is not None:
            counts[_BONUS_KEYS[hand.bonus.value]] += 1
        if hand.outcome is Outcome.SURRENDER:
            counts["surrenders"] += 1
        elif hand.outcome is Outcome.RESCUE:
            counts["rescues"] += 1
        elif hand.outcome is Outcome.BUST:
            counts["busts"] += 1
        elif hand.outcome is Outcome.BLACKJACK:
            counts["player_blackjacks"] += 1
    counts["splits"] += len(hands) - 1
    counts["dealer_blackjacks"] += int(settlement.dealer.blackjack)
    if seat.super_bonus:
        counts["super_bonus"] += 1
    match = seat.match
    if match is not None:
        counts[_MATCH_KEYS[(match.unsuited, match.suited)]] += 1


def _check_chunk(task: tuple[str, int, int, int]) -> CheckReport:
    spec, rounds, seed, first = task
    return check(_rules(spec), rounds, seed, first)


def _rules(spec: str) -> RuleSet:
    import json

    return RuleSet.from_spec(json.loads(spec) if spec.lstrip().startswith("{") else spec)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rules", default="h17-ddd-6", help="preset or JSON rules object")
    parser.add_argument("--rounds", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--workers", type=int, default=None)
    args = parser.parse_args(argv)
    if args.rounds <= 0:
        parser.error(f"--rounds must be positive, got {args.rounds}")
    rules = _rules(args.rules)
    chunk = 5_000
    tasks = [(args.rules, min(chunk, args.rounds - start), args.seed * 1_000_003 + i, start)
             for i, start in enumerate(range(0, args.rounds, chunk))]
    report = CheckReport()
    started = time.perf_counter()
    context = multiprocessing.get_context("fork" if sys.platform == "linux" else "spawn")
    with ProcessPoolExecutor(max_workers=args.workers, mp_context=context) as pool:
        for part in pool.map(_check_chunk, tasks):
            report.merge(part)
            print_progress(report.rounds, args.rounds, time.perf_counter() - started)
    differing = {k: (report.engine_counts[k], report.fast_counts[k]) for k in COMPARED
                 if report.engine_counts[k] != report.fast_counts[k]}
    print(f"{rules.name}: {report.rounds:,} rounds, {len(report.mismatches)} rounds differ, "
          f"counters differing: {differing or 'none'}")
    for line in report.mismatches[:20]:
        print("  " + line)
    print("counts: " + ", ".join(f"{k}={report.engine_counts[k]}" for k in COMPARED))
    return 1 if report.mismatches or differing else 0


if __name__ == "__main__":
    sys.exit(main())
