"""What-if queries on a round: the legal ways it can reach the next card out of the shoe.

A card that arrives while a hand is deciding does not say which decision asked for it. Its
*readings* are the legal ways the round could have reached it: the hand in play hit, doubled
(or redoubled) or split; or it stood and the card belongs to a later hand or the dealer. The
live table keeps the readings its evidence (where the camera saw the card land, whether it lay
sideways) leaves, goes on when one is left, and otherwise asks the dealer which one happened.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from dealer_assist.rules.engine import Action, CardTarget, RoundEngine

#: Decisions that change a wager: two readings that differ in one of them pay differently.
WAGER_ACTIONS = frozenset({Action.DOUBLE, Action.SPLIT, Action.SURRENDER, Action.RESCUE})
#: The decisions a reading may assume, in the order readings are listed. Surrender and rescue
#: leave nothing on the felt for a camera (the dealer takes the cards and half the wager): they
#: happen only by the dealer's touch, so no reading assumes one.
_ORDER = (Action.HIT, Action.DOUBLE, Action.SPLIT, Action.STAND)


@dataclass(frozen=True, slots=True)
class Decision:
    """A player's decision for one hand (``hand`` 0-based, in play order)."""

    seat: int
    hand: int
    action: Action


@dataclass(frozen=True, slots=True)
class Reading:
    """One legal way the next card arrives: ``decisions`` taken in play order, then the card
    goes to ``target``."""

    decisions: tuple[Decision, ...]
    target: CardTarget

    @property
    def asked_by(self) -> Action | None:
        """HIT or DOUBLE when that decision of the target hand asked for the card; None for a
        card owed without a decision (a split hand's second card, the dealer's)."""
        if not self.decisions:
            return None
        last = self.decisions[-1]
        if last.action in (Action.HIT, Action.DOUBLE) and \
                self.target == CardTarget(last.seat, last.hand):
            return last.action
        return None

    @property
    def splits(self) -> bool:
        return any(d.action is Action.SPLIT for d in self.decisions)

    def outcome(self) -> tuple[CardTarget, tuple[Decision, ...]]:
        """What money depends on: the hand the card goes to and every wager-changing decision."""
        return self.target, tuple(d for d in self.decisions if d.action in WAGER_ACTIONS)


def card_readings(engine: RoundEngine, toward: CardTarget | None = None) -> tuple[Reading, ...]:
    """Every legal way the round in ``engine`` reaches its next card, in play order (the hand
    in play taking it first); empty when no card can come. ``toward``: where the card was seen
    landing; then only the readings :func:`remaining_readings` could keep for that landing are
    explored (a stand past it, a split, a card elsewhere are not). ``engine`` is not changed."""
    found: list[Reading] = []
    _explore(engine, (), found, toward)
    return tuple(found)


def _explore(engine: RoundEngine, decisions: tuple[Decision, ...], found: list[Reading],
             toward: CardTarget | None) -> None:
    target = engine.next_card_target()
    if target is not None:
        found.append(Reading(decisions, target))
        return
    acting = engine.acting()
    if acting is None:
        return
    seat, hand = acting
    legal = engine.legal_actions()
    for action in _ORDER:
        if action not in legal or not _may_lead(action, seat, hand, toward):
            continue
        trial = engine.clone()
        trial.action(seat, action, hand=hand)
        _explore(trial, (*decisions, Decision(seat, hand, action)), found, toward)


def _may_lead(action: Action, seat: int, hand: int, toward: CardTarget | None) -> bool:
    """Whether ``action`` by seat ``seat`` hand ``hand`` may end in a card landing ``toward``."""
    if toward is None:
        return True
    if action is Action.SPLIT:
        return False  # a split shows two stacks before a card lands on them
    here = toward.matches(CardTarget(seat, hand))
    if action is Action.STAND:
        return not here and (toward.is_dealer or (toward.seat, toward.hand or 0) > (seat, hand))
    return here


@dataclass(frozen=True, slots=True)
class Evidence:
    """What was seen of a card: where the camera saw it land (None: not seen), and whether it
    lay sideways (a double)."""

    landing: CardTarget | None = None
    sideways: bool = False


def remaining_readings(readings: Iterable[Reading], evidence: Evidence) -> tuple[Reading, ...]:
    """The no-guess rule: the readings the evidence leaves. A landing keeps the readings whose
    card goes there, sideways a double and upright anything else; a split is seen as two stacks
    before any card lands on them, so with a landing no reading splits. Without a landing every
    reading stays. The table goes on only when the result holds one outcome (see
    :func:`settled_reading`), and asks the dealer otherwise."""
    readings = tuple(readings)
    landing = evidence.landing
    if landing is None:
        return readings
    return tuple(
        r for r in readings
        if r.target.matches(landing) and not r.splits
        and (r.asked_by is Action.DOUBLE) == evidence.sideways
    )


def settled_reading(readings: Iterable[Reading]) -> Reading | None:
    """The reading to go on with when every one left puts the card in the same hand with the
    same wagers (None: none left, or they differ: ask)."""
    readings = tuple(readings)
    if not readings or len({r.outcome() for r in readings}) > 1:
        return None
    return readings[0]
