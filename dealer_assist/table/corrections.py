"""Corrections: a hand-held round replayed with a card the dealer corrected, as the live table
would have recorded it; and where each face-up card of a round lies."""

from __future__ import annotations

import json

from dealer_assist.roundlog import (
    CardDealt,
    Event,
    EventError,
    PlayerAction,
    Reveal,
    RoundFold,
    RoundStart,
    dumps_event,
    parse_event,
)
from dealer_assist.rules import DEALER, Action, Card, CardTarget, HandStatus, RoundError
from dealer_assist.table.sources import play_order


class ReplayError(Exception):
    """A corrected round that does not hold: ``line`` (1-based) is refused, ``reason`` why."""

    def __init__(self, line: int, reason: str):
        super().__init__(reason)
        self.line, self.reason = line, reason


def replay_corrected(start: RoundStart,
                     lines: list[str]) -> tuple[RoundFold, list[str], list[Card]]:
    """Fold a round's lines afresh, after a card in them was corrected, as the live table would
    have recorded the round with that card. A stand the loop wrote for a hand that no longer
    decides (a blackjack, a 21, a bust, the dealer's blackjack) is moot and dropped; where play
    moved past a hand that now still decides (a bust corrected to 20), that hand stood, as the
    loop writes when play moves on; a dealer's draw no result depends on any more is dropped and
    returned, for the alarm to name. Any other refusal raises :class:`ReplayError` (line
    numbers 1-based)."""
    fold = RoundFold(start)
    kept = lines[:1]
    undue: list[Card] = []
    events = [parse_event(json.loads(line)) for line in lines[1:]]
    for number, (line, event) in enumerate(zip(lines[1:], events, strict=True), start=2):
        following = events[number - 1] if number - 1 < len(events) else None
        try:
            fold.apply(event)
            if isinstance(event, Reveal):  # turning the hole card ends the players' turn
                kept.append(line)
                kept.extend(dumps_event(stand) for stand in _stands_before(fold, event, None))
                continue
        except (RoundError, EventError) as error:
            if _moot_stand(fold, event):
                continue
            if _undue_dealer_card(fold, event):
                assert isinstance(event, CardDealt) and event.card is not None
                undue.append(event.card)
                continue
            stands = _stands_before(fold, event, following)
            if not stands:
                raise ReplayError(number, str(error)) from None
            try:
                fold.apply(event)
            except (RoundError, EventError) as still:
                raise ReplayError(number, str(still)) from None
            kept.extend(dumps_event(stand) for stand in stands)
        kept.append(line)
    return fold, kept, undue


def _moot_stand(fold: RoundFold, event: Event) -> bool:
    if not isinstance(event, PlayerAction) or event.action is not Action.STAND:
        return False
    if fold.engine.dealer_blackjack:
        return True  # the peek ended the round: nobody is taken to have stood
    hands = fold.engine.hands(event.seat)
    hand = event.hand if event.hand is not None else 0
    return hand < len(hands) and hands[hand].status is not HandStatus.OPEN and \
        fold.engine.acting() != (event.seat, hand)


def _undue_dealer_card(fold: RoundFold, event: Event) -> bool:
    """A card drawn to the dealer's hand that, with the corrected card, no hand's result depends
    on (rules §3.7)."""
    engine = fold.engine
    return (isinstance(event, CardDealt) and event.card is not None
            and (event.to is None or event.to.is_dealer) and engine.deal_complete
            and engine.hole_card_known and engine.acting() is None
            and engine.next_card_target() is None)


def _stands_before(fold: RoundFold, event: Event, following: Event | None) -> list[PlayerAction]:
    """The stands the live loop writes when play moves past hands still deciding: applied to
    ``fold`` for every hand in play before the place ``event`` acts on or lands at (the dealer's
    for a reveal or a dealer's card), and returned; none where ``event`` names no place. A hit
    or a double is a place only where its card (``following``) was seen landing there, or was
    keyed by the dealer for it: one the camera saw elsewhere (misplaced) may have been the
    earlier hand's, so no stand is taken from it."""
    if isinstance(event, Reveal) or (isinstance(event, CardDealt) and event.to is not None
                                     and event.to.is_dealer):
        landing: CardTarget | None = None
    elif isinstance(event, CardDealt) and event.to is not None:
        landing = CardTarget(event.to.seat, event.to.hand or 0)
    elif isinstance(event, PlayerAction):
        landing = CardTarget(event.seat, event.hand or 0)
        if event.action in (Action.HIT, Action.DOUBLE) and not (
                isinstance(following, CardDealt)
                and (following.to.seat == event.seat if following.to is not None
                     else following.keyed)):
            return []
    else:
        return []
    engine, stands = fold.engine, []
    while (acting := engine.acting()) is not None and \
            play_order(acting) < play_order(landing) and engine.next_card_target() is None:
        # taken when ``event`` moved play past it: its time is that event's
        stand = PlayerAction(acting[0], Action.STAND, hand=acting[1],
                             at=None if isinstance(event, RoundStart) else event.at)
        fold.apply(stand)
        stands.append(stand)
    return stands


def _split_moves(lying: list[tuple[int, CardTarget]], seat: int,
                 hand: int) -> list[tuple[int, CardTarget]]:
    """Where the cards lie once ``seat``'s ``hand`` is split: its second card starts the next
    hand, and the seat's later hands move up one."""
    pair = [i for i, where in lying if where == CardTarget(seat, hand)]
    moved = []
    for i, where in lying:
        if where.seat == seat and where.hand is not None and where.hand > hand:
            where = CardTarget(seat, where.hand + 1)
        elif pair[1:] and i == pair[1]:
            where = CardTarget(seat, hand + 1)
        moved.append((i, where))
    return moved


def face_up_lines(start: RoundStart, lines: list[str], at: CardTarget,
                  by_hand: bool = False) -> list[int]:
    """The line indices of the cards recorded face up at ``at`` (the dealer, or a seat's
    hand: where each card lies now, a split having moved a pair's second card to the new
    hand), in the order they came; ``by_hand``: a whole seat's hand by hand, as the screen
    shows them."""
    fold = RoundFold(start)
    lying: list[tuple[int, CardTarget]] = []  # (line, where the card lies) face up
    for index, line in enumerate(lines[1:], start=1):
        event = parse_event(json.loads(line))
        target = fold.apply(event)
        split = fold.engine.acting()  # after a split, the split hand, owed its second card
        if isinstance(event, Reveal):
            lying.append((index, DEALER))
        elif isinstance(event, CardDealt) and event.card is not None and target is not None:
            lying.append((index, target))
        elif isinstance(event, PlayerAction) and event.action is Action.SPLIT and split:
            lying = _split_moves(lying, *split)
    matching = [(where.hand or 0, i) for i, where in lying if at.matches(where)]
    return [i for _, i in (sorted(matching) if by_hand else matching)]

