"""A simple Spanish 21 basic strategy for the demo's simulated players.

Close to the published charts for 6-8 decks, H17, late surrender, without the card-count
refinements; sensible enough that rounds look like real play (doubles, splits, surrenders, the
odd rescue), not meant to be optimal.
"""

from __future__ import annotations

from dealer_assist.rules import Action, Card, hand_total


def _up_value(up: Card) -> int:
    return 11 if up.points == 1 else up.points


def _pair_action(first: Card, up: int) -> Action | None:
    """Split or not for a pair of ``first``'s value; None: play it as a total."""
    value = first.points
    split_against: dict[int, range | tuple[int, ...]] = {
        1: range(2, 12),
        8: range(2, 12),
        9: (3, 4, 5, 6, 8, 9),
        7: range(2, 8),
        6: (4, 5, 6),
        3: range(3, 8),
        2: range(3, 8),
    }
    wanted = split_against.get(value)
    return Action.SPLIT if wanted is not None and up in wanted else None


def _hard_action(total: int, up: int, cards: int) -> Action:
    if total <= 8:
        return Action.HIT
    if total == 9:
        return Action.DOUBLE if up == 6 and cards == 2 else Action.HIT
    if total == 10:
        return Action.DOUBLE if up <= 7 and cards <= 3 else Action.HIT
    if total == 11:
        return Action.DOUBLE if cards <= 3 else Action.HIT
    if total == 12:
        return Action.HIT
    if total == 13:
        return Action.STAND if up == 6 and cards <= 3 else Action.HIT
    if total in (14, 15, 16):
        low = 4 if total == 14 else 2
        return Action.STAND if low <= up <= 6 and cards <= 4 else Action.HIT
    return Action.STAND


def _soft_action(total: int, up: int, cards: int) -> Action:
    if total <= 16:
        return Action.HIT
    if total == 17:
        return Action.DOUBLE if up == 6 and cards == 2 else Action.HIT
    if total == 18:
        if up in (4, 5, 6) and cards == 2:
            return Action.DOUBLE
        return Action.STAND if up <= 8 else Action.HIT
    return Action.STAND


def choose(cards: list[Card], up: Card, legal: frozenset[Action], doubled: bool) -> Action:
    """The decision for a hand of ``cards`` against the dealer's ``up`` card, among ``legal``."""
    up_value = _up_value(up)
    total, soft = hand_total(cards)
    if doubled:
        # A doubled hand: rescue a weak total against a strong up card, else stand.
        if Action.RESCUE in legal and total <= 16 and up_value >= 9:
            return Action.RESCUE
        return Action.STAND
    if Action.SURRENDER in legal and not soft and up_value == 11 and total in (16, 17):
        return Action.SURRENDER
    if Action.SPLIT in legal and len(cards) == 2:
        split = _pair_action(cards[0], up_value)
        if split is not None:
            return split
    action = (
        _soft_action(total, up_value, len(cards))
        if soft
        else _hard_action(total, up_value, len(cards))
    )
    if action is Action.DOUBLE and Action.DOUBLE not in legal:
        action = Action.HIT
    if action not in legal:
        return Action.STAND
    return action
