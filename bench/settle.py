"""How fast the adjudicator settles rounds, and how fast `dealer-assist settle` answers.

Run: python bench/settle.py [--rounds N]
Prints rounds settled per CPU-second on one core (events parsed, and from JSON text) and the
CLI's wall time from process start to answer (median of several runs).
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from decimal import Decimal
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from dealer_assist.roundlog import (  # noqa: E402
    Bet,
    CardDealt,
    End,
    Event,
    PlayerAction,
    RoundFold,
    RoundStart,
    dumps_event,
    settle_log,
)
from dealer_assist.rules import Action, RoundEngine, RuleSet, spanish_shoe  # noqa: E402


def typical_round(rng: random.Random) -> list[Event]:
    """Three seats (an average table) playing simple sensible decisions, as round-log events."""
    rules = RuleSet.preset("h17-ddd-6")
    shoe = list(spanish_shoe(rules.decks).elements())
    rng.shuffle(shoe)
    engine = RoundEngine(rules, "bench")
    events: list[Event] = [RoundStart("bench", "h17-ddd-6")]
    for seat, amount in ((1, "10"), (3, "25"), (5, "5")):
        events.append(Bet(seat, Decimal(amount)))
        engine.bet(seat, Decimal(amount))
    while True:
        legal = engine.legal_actions()
        if legal:
            seat, hand = engine.acting()  # type: ignore[misc]
            total = engine.view()["seats"]
            cards = next(s for s in total if s["seat"] == seat)["hands"][hand]
            if Action.DOUBLE in legal and cards["total"] in (10, 11) and not cards["doublings"]:
                action = Action.DOUBLE
            elif Action.HIT in legal and cards["total"] < 13:
                action = Action.HIT
            else:
                action = Action.STAND
            events.append(PlayerAction(seat, action))
            engine.action(seat, action)
        elif engine.next_card_target() is not None and len(shoe) > 0:
            card = shoe.pop()
            events.append(CardDealt(card))
            engine.card(card)
        else:
            break
    events.append(End())
    return events


def typical_rounds(count: int) -> list[list[Event]]:
    rng = random.Random(21)
    return [typical_round(rng) for _ in range(count)]


def bench_in_process(rounds: list[list[Event]]) -> float:
    start = time.process_time()
    for events in rounds:
        head = events[0]
        assert isinstance(head, RoundStart)
        fold = RoundFold(head)
        for event in events[1:]:
            fold.apply(event)
    return len(rounds) / (time.process_time() - start)


def bench_from_text(texts: list[list[str]]) -> float:
    start = time.process_time()
    for lines in texts:
        settle_log(lines)
    return len(texts) / (time.process_time() - start)


def bench_cli(runs: int) -> float:
    example = ROOT / "tests" / "data" / "rounds" / "super-bonus-1000-with-envy.jsonl"
    exe = Path(sys.executable).with_name("dealer-assist")
    command = [str(exe)] if exe.exists() else [sys.executable, "-m", "dealer_assist"]
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(
            [*command, "settle", str(example), "--json"],
            check=True,
            capture_output=True,
            cwd=ROOT if command[0] == sys.executable else tempfile.gettempdir(),
        )
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=20000)
    parser.add_argument("--cli-runs", type=int, default=15)
    args = parser.parse_args()
    rounds = typical_rounds(args.rounds)
    texts = [[dumps_event(e) for e in events] for events in rounds]
    events_per_round = sum(len(r) for r in rounds) / len(rounds)
    print(f"machine: {os.cpu_count()} cores, Python {sys.version.split()[0]}; one core used")
    print(f"typical round: h17-ddd-6, 3 seats, {events_per_round:.1f} events on average")
    print("rates are per CPU-second of this process (time.process_time), so other load on the")
    print("machine does not distort them; the CLI time is wall-clock")
    print(f"settle, events parsed:  {bench_in_process(rounds):,.0f} rounds/s")
    print(f"settle, from JSON text: {bench_from_text(texts):,.0f} rounds/s")
    print(
        f"dealer-assist settle (CLI, median of {args.cli_runs}): "
        f"{bench_cli(args.cli_runs) * 1000:.0f} ms"
    )


if __name__ == "__main__":
    main()
