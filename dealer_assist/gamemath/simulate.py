"""Simulate millions of rounds of basic strategy on every core, seeded and repeatable.

A run is cut into fixed chunks, each seeded from ``(seed, chunk number)``, so the same seed and
round count give the same figures whatever the number of processes. Every round is dealt from a
freshly shuffled shoe (the published figures are for a full shoe), one seat, flat bets.
"""

from __future__ import annotations

import math
import multiprocessing
import os
import sys
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

import numpy as np

from dealer_assist.gamemath.combinatorics import GameMathError, check_match_paytable
from dealer_assist.gamemath.strategy import BasicStrategy, chart_for, strategy_table
from dealer_assist.rules import RuleSet
from dealer_assist.rules.cards import ALLOWED_DECKS

CHUNK_ROUNDS = 250_000
#: The longest run: about an hour on 2 cores at 2.3-3.4 million rounds/s, when its 95% interval
#: is already +-0.003% of the edge. Each chunk costs about 2 kB of bookkeeping up front, so far
#: longer runs would also hold gigabytes before the first round is played.
MAX_ROUNDS = 10**10
Z95 = 1.959963984540054


@dataclass(frozen=True)
class GameRules:
    """The house options the game math depends on (a view of the engine's ``RuleSet``)."""

    name: str
    decks: int = 6
    dealer_hits_soft_17: bool = True
    max_doublings: int = 3
    late_surrender: bool = True
    max_hands: int = 4
    split_by_value: bool = True
    match_paytable: tuple[int, int] | None = (4, 9)
    super_bonus_tiers: tuple[tuple[Decimal, Decimal], ...] = (
        (Decimal("5.00"), Decimal("1000.00")), (Decimal("25.00"), Decimal("5000.00")))
    envy_bonus: Decimal = Decimal("50.00")
    seats: int = 7
    min_bet: Decimal = Decimal("5.00")

    def __post_init__(self) -> None:
        if self.decks not in ALLOWED_DECKS:
            raise GameMathError(f"decks must be one of {ALLOWED_DECKS}, got {self.decks}",
                                self.decks)
        if self.max_doublings not in (1, 3):
            raise GameMathError(f"max_doublings must be 1 or 3, got {self.max_doublings}",
                                self.max_doublings)
        if not 1 <= self.max_hands <= 4:
            raise GameMathError(f"max_hands must be 1 to 4, got {self.max_hands}", self.max_hands)
        if self.match_paytable is not None:
            check_match_paytable(*self.match_paytable)

    @classmethod
    def from_ruleset(cls, rules: RuleSet) -> GameRules:
        """From the round engine's ``RuleSet`` (``dealer_assist.rules``)."""
        match = rules.match_the_dealer
        return cls(
            name=rules.name,
            decks=rules.decks,
            dealer_hits_soft_17=rules.dealer_hits_soft_17,
            max_doublings=rules.max_doublings,
            late_surrender=rules.late_surrender,
            max_hands=rules.max_hands,
            split_by_value=rules.split_by_value,
            match_paytable=None if match is None else (match.unsuited, match.suited),
            super_bonus_tiers=tuple((t.min_wager, t.amount) for t in rules.super_bonus_tiers),
            envy_bonus=rules.envy_bonus,
            seats=rules.seats,
            min_bet=rules.min_bet,
        )

    @property
    def chart(self) -> str:
        return chart_for(self.dealer_hits_soft_17, self.max_doublings > 1)

    def strategy(self) -> BasicStrategy:
        """The basic strategy this rule set plays."""
        return BasicStrategy(self.decks, self.dealer_hits_soft_17, self.max_doublings,
                             self.late_surrender, self.max_hands, self.split_by_value)

    def kernel_arguments(self, super_bonus_eligible: bool = True) -> tuple[Any, ...]:
        """The rule arguments of the compiled kernels, after the shoe."""
        return (strategy_table(self.chart), self.decks, self.dealer_hits_soft_17,
                self.max_doublings, self.late_surrender, self.max_hands, self.split_by_value,
                super_bonus_eligible and bool(self.super_bonus_tiers))


@dataclass(frozen=True)
class SimulationResult:
    """Counters of a run and the figures derived from them (fractions of the original wager)."""

    rounds: int
    seed: int
    counts: dict[str, int] = field(repr=False)
    seconds: float = 0.0

    @property
    def house_edge(self) -> float:
        return -self.counts["net_half_units"] / 2 / self.rounds

    @property
    def standard_deviation(self) -> float:
        """Of one round's net, in original wagers."""
        mean = self.counts["net_half_units"] / 2 / self.rounds
        return math.sqrt(max(self.counts["net_squared"] / 4 / self.rounds - mean * mean, 0.0))

    @property
    def house_edge_ci95(self) -> tuple[float, float]:
        half = Z95 * self.standard_deviation / math.sqrt(self.rounds)
        return (self.house_edge - half, self.house_edge + half)

    def frequency(self, name: str) -> float:
        """Occurrences of a counter per round."""
        return self.counts[name] / self.rounds

    @property
    def average_total_wager(self) -> float:
        """Main-game money risked per round, doublings and splits included, in original wagers."""
        return self.counts["total_wager"] / self.rounds


def _chunk_seed(seed: int, index: int) -> int:
    return int(np.random.SeedSequence([seed, index]).generate_state(1, np.uint32)[0])


def _run_chunk(task: tuple[int, int, GameRules]) -> np.ndarray:
    from dealer_assist.gamemath import fastsim

    rounds, chunk_seed, rules = task
    shoe = fastsim.spanish_shoe_codes(rules.decks)
    stats: np.ndarray = fastsim.simulate_chunk(rounds, chunk_seed, shoe,
                                               *rules.kernel_arguments())
    return stats


def _warm_up(rules: GameRules) -> None:
    """Compile (or load from numba's cache) before forking, so workers share the machine code."""
    _run_chunk((10, 0, rules))


def simulate(
    rules: GameRules,
    rounds: int,
    seed: int = 1,
    workers: int | None = None,
    progress: Callable[[int, int, float], None] | None = None,
) -> SimulationResult:
    """Play ``rounds`` rounds with basic strategy; ``workers`` defaults to every core."""
    from dealer_assist.gamemath import fastsim

    if not 0 < rounds <= MAX_ROUNDS:
        raise GameMathError(f"rounds must be 1 to {MAX_ROUNDS}, got {rounds}", rounds)
    started = time.perf_counter()
    _warm_up(rules)
    sizes = [CHUNK_ROUNDS] * (rounds // CHUNK_ROUNDS)
    if rounds % CHUNK_ROUNDS:
        sizes.append(rounds % CHUNK_ROUNDS)
    tasks = [(n, _chunk_seed(seed, i), rules) for i, n in enumerate(sizes)]
    workers = min(workers or os.cpu_count() or 1, len(tasks))
    totals = np.zeros(fastsim.N_STATS, np.int64)
    done = 0
    if workers == 1:
        results: Any = map(_run_chunk, tasks)
        pool = None
    else:
        context = multiprocessing.get_context("fork" if sys.platform == "linux" else "spawn")
        pool = ProcessPoolExecutor(max_workers=workers, mp_context=context)
        results = pool.map(_run_chunk, tasks)
    try:
        for size, stats in zip(sizes, results, strict=True):
            totals += stats
            done += size
            if progress is not None:
                progress(done, rounds, time.perf_counter() - started)
    finally:
        if pool is not None:
            pool.shutdown(cancel_futures=True)
    counts = {name: int(v) for name, v in zip(fastsim.STAT_NAMES, totals, strict=True)}
    return SimulationResult(rounds, seed, counts, time.perf_counter() - started)


def print_progress(done: int, total: int, seconds: float) -> None:
    """A progress line on stderr, rewritten in place."""
    rate = done / seconds if seconds > 0 else 0.0
    left = (total - done) / rate if rate > 0 else 0.0
    sys.stderr.write(f"\r{done:,}/{total:,} rounds ({100 * done / total:.0f}%), "
                     f"{rate:,.0f} rounds/s, {left:.0f} s left ")
    if done == total:
        sys.stderr.write("\n")
    sys.stderr.flush()
