"""Random legal rounds played through the engine, recorded as round-log events."""

from __future__ import annotations

import random
from decimal import Decimal

from dealer_assist.roundlog import (
    Bet,
    CardDealt,
    End,
    Event,
    Insurance,
    PlayerAction,
    RoundStart,
)
from dealer_assist.rules import Action, RoundEngine, RuleSet, spanish_shoe


def random_round(rng: random.Random, preset: str) -> list[Event]:
    """One complete round with random bets and random legal decisions, as events."""
    rules = RuleSet.preset(preset)
    shoe = list(spanish_shoe(rules.decks).elements())
    rng.shuffle(shoe)
    engine = RoundEngine(rules, f"rnd-{rng.randrange(10**6)}")
    events: list[Event] = [RoundStart(engine.round_id, preset)]

    def apply(event: Bet | CardDealt | Insurance | PlayerAction) -> None:
        events.append(event)
        event.apply_to(engine)

    seats = rng.sample(range(1, 8), rng.randint(1, 7))
    for seat in sorted(seats):
        amount = Decimal(rng.choice(["5", "10", "25", "24.75", "100", "1000", "7.35"]))
        apply(Bet(seat, amount, player=rng.choice([None, "P-1", "P-2"])))
        if rules.match_the_dealer and rng.random() < 0.4:
            apply(Bet(seat, min(amount, Decimal(rng.choice(["1", "5", "10"]))), "match"))
    insurance_offered = False
    while True:
        if engine.next_card_target() is not None and not engine.deal_complete:
            apply(CardDealt(shoe.pop()))
            continue
        if engine.insurance_open and not insurance_offered:
            insurance_offered = True
            for seat in sorted(seats):
                if rng.random() < 0.3:
                    apply(Insurance(seat, Decimal("2.00")))
        legal = engine.legal_actions()
        if legal:
            seat, _hand = engine.acting()  # type: ignore[misc]
            action = rng.choice(sorted(legal, key=lambda a: a.value))
            amount = None
            if action is Action.DOUBLE and rules.double_for_less and rng.random() < 0.3:
                amount = Decimal("1.00")
            apply(PlayerAction(seat, action, amount))
            continue
        if engine.next_card_target() is not None:
            apply(CardDealt(shoe.pop()))
            continue
        break
    events.append(End())
    return events
