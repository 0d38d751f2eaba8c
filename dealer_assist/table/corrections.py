"""Cards the dealer enters: a card no reader saw, keyed; a misread card in a hand-held game,
corrected, the round replayed with it as the live table would have recorded it; and where each
face-up card of a round lies."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import TYPE_CHECKING, Protocol

from dealer_assist.roundlog import (
    CardDealt,
    Event,
    EventError,
    PlayerAction,
    Reveal,
    RoundFold,
    RoundStart,
    ShoeOrigin,
    dumps_event,
    parse_event,
)
from dealer_assist.rules import DEALER, Action, Card, CardTarget, HandStatus, RoundError
from dealer_assist.table.alarms import Alarm, AlarmKind
from dealer_assist.table.sources import CorrectCard, KeyCard, place_words, play_order

if TYPE_CHECKING:
    from dealer_assist.table.evidence import CameraEvidence
    from dealer_assist.table.questions import OpenQuestion
    from dealer_assist.table.shoe_cards import ShoeCards


class CorrectedTable(Protocol):
    """What a keyed or corrected card asks of the table."""

    has_shoe: bool
    shoe_up: bool
    dealer: str | None
    shoe: ShoeCards
    camera: CameraEvidence

    @property
    def fold(self) -> RoundFold | None: ...
    @property
    def round_open(self) -> bool: ...
    @property
    def question(self) -> OpenQuestion | None: ...
    def apply(self, event: Reveal) -> bool: ...
    def commit(self, card: Card | None, landing: CardTarget | None, sideways: bool,
               face_down: bool = False, origin: ShoeOrigin | None = None,
               keyed: bool = False) -> CardTarget | None: ...
    def stand_until(self, landing: CardTarget | None, by: str) -> bool: ...
    def hole_card_due(self) -> bool: ...
    def round_lines(self) -> list[str]: ...
    def replace_round(self, fold: RoundFold, lines: list[str]) -> None: ...
    def alarm(self, kind: AlarmKind, text: str, resolved: bool = False) -> Alarm: ...


def supervisor_words(staff_id: str | None) -> str:
    """Who approved a void or a correction, for its alarm."""
    return "the table" if staff_id is None else f"supervisor {staff_id}"


def key_card(table: CorrectedTable, item: KeyCard) -> None:
    """A card no reader saw, keyed by the dealer: refused while the shoe reads (it deals
    every card), else recorded where it lies (as a camera landing there would be) or, with
    no place given, where the next card is due; marked keyed, with an alarm."""
    code, spot = item.card.code, item.spot
    if table.has_shoe and table.shoe_up:
        table.alarm(AlarmKind.ILLEGAL_ACTION, f"{code} keyed while the shoe is reading: the "
                    "shoe deals every card; not recorded")
        return
    if table.camera.paired_or_asked(item):
        return
    if not table.round_open:
        table.alarm(AlarmKind.ILLEGAL_ACTION,
                    f"{code} keyed but no round is in play; not recorded")
        return
    to_dealer = spot is not None and spot.is_dealer
    if not to_dealer and table.hole_card_due():  # with no reader at all, too
        table.camera.record_hidden_hole()
    counted_before = table.shoe.pack.out()  # _accept_unshod counts it out of the pack
    if not table.shoe.accept_unshod(item.card, "the dealer keyed"):
        return
    assert table.fold is not None
    dealer_cards = table.fold.engine.dealer_cards()
    revealed = to_dealer and len(dealer_cards) >= 2 and dealer_cards[1] is None
    went: CardTarget | None = None
    if revealed:
        # The face-down hole card turned over, as the camera's sighting of it would be.
        if table.apply(Reveal(item.card, keyed=True)):
            went = DEALER
            table.shoe.await_reveal(item.card)
            table.stand_until(None, "dealer")
    else:
        asked_before = table.question
        went = table.commit(item.card, spot, False, keyed=True)
        if went is None and table.question is not asked_before and table.question:
            # the dealer is asked which play it was: recorded with the answer
            went = spot or table.question.choices[0].target
    if went is None:  # refused (an alarm says why): not out of the pack after all
        table.shoe.pack.restore(counted_before)
        return
    if table.has_shoe and not revealed:
        table.camera.may_be_a_card_placed_unseen(
            f"the dealer keyed {code}" + ("" if spot is None else f" at {place_words(spot)}"))
        table.shoe.record_while_down(item.card)  # checked when the shoe resends its cards
    if revealed:  # (a card placed is noted where it went as it is placed: placing.deal)
        table.camera.entered_unseen[(item.card, None)] += 1
    table.alarm(AlarmKind.KEYED_CARD, f"the dealer keyed {code}"
                + ("" if spot is None else f" at {place_words(spot)}")
                + ": no reader saw it; recorded as keyed")


def correct_card(table: CorrectedTable, item: CorrectCard) -> None:
    """The dealer corrected the latest card recorded at ``item.at`` (a misread, or a card
    keyed wrong), in a hand-held game (no shoe fitted: a shoe's card stands, and while its
    link is down the cards it resends are checked against the recorded ones). The round is
    replayed with the card corrected and marked so, with an alarm; refused, unchanged, when
    the round as played after the card would not hold with it."""
    code, at = item.card.code, "the dealer" if item.at.is_dealer else str(item.at)
    if table.has_shoe:
        table.alarm(AlarmKind.ILLEGAL_ACTION, f"{code} entered as a correction at a table "
                    "with a shoe: the shoe's card stands; call the floor")
        return
    if table.camera.paired_or_asked(item):
        return
    if table.fold is None or table.fold.ended:
        table.alarm(AlarmKind.ILLEGAL_ACTION,
                    f"{code} entered as a correction but no round is in play; not recorded")
        return
    played = table.round_lines()
    lying = face_up_lines(table.fold.start, played, item.at,
                          by_hand=item.index is not None)
    if not lying or (item.index is not None and item.index >= len(lying)):
        held = f"{len(lying)} card{'s' if len(lying) != 1 else ''} face up" if lying else \
            "no card"
        which = "" if item.index is None else f" of card {item.index + 1}"
        table.alarm(AlarmKind.ILLEGAL_ACTION, f"{code} entered as a correction{which} at"
                    f" {at}, but {at} holds {held}; not corrected")
        return
    index = lying[-1 if item.index is None else item.index]
    event = parse_event(json.loads(played[index]))
    assert isinstance(event, CardDealt | Reveal)
    old = event.card
    assert old is not None
    if item.was is not None and old != item.was:
        table.alarm(AlarmKind.ILLEGAL_ACTION, (
            f"{code} entered as a correction of {item.was.code} at {at}, but that card there "
            f"is now {old.code} (the table moved on since the screen showed it); not "
            "corrected: look again"))
        return
    if old == item.card:
        table.alarm(AlarmKind.ILLEGAL_ACTION, f"the card at {at} is already {code}")
        return
    counted_before = table.shoe.pack.out()
    table.shoe.pack.put_back(old)  # out of the pack: the corrected card, not the misread one
    if not table.shoe.accept_unshod(item.card, "the dealer corrected a card to"):
        table.shoe.pack.restore(counted_before)
        return
    first = event.corrected or old
    lines = list(played)
    lines[index] = dumps_event(replace(
        event, card=item.card, corrected=None if first == item.card else first,
        corrected_by=None if first == item.card else item.supervisor))
    try:
        fold, lines, undue = replay_corrected(table.fold.start, lines)
    except ReplayError as error:
        table.shoe.pack.restore(counted_before)
        table.alarm(AlarmKind.ILLEGAL_ACTION, (
            f"{old.code} at {at} cannot be corrected to {code}: the round as played after it"
            f" does not hold with {code} (at line {error.line} of the round log: "
            f"{error.reason}); not corrected: void the round and call the floor"))
        return
    table.replace_round(fold, lines)
    seat = item.at.seat
    if table.camera.entered_unseen[(old, seat)] > 0 and event.keyed:
        # A keyed card the camera has not read: it may yet, as corrected. (A card the camera
        # read and the dealer corrected comes back as a changed reading, a FeltSwap; its
        # line is never keyed, however often corrected.)
        table.camera.entered_unseen[(old, seat)] -= 1
        table.camera.entered_unseen[(item.card, seat)] += 1
    table.camera.corrected.update({(old, item.card, item.at.seat),
                                   (first, item.card, item.at.seat)})
    dropped = "" if not undue else (
        f"; {' '.join(c.code for c in undue)}, drawn by the dealer, "
        + ("is" if len(undue) == 1 else "are") + " no longer due (the dealer stands, or no "
        "result depends on the dealer): not recorded")
    table.alarm(AlarmKind.CORRECTED_CARD, f"the dealer {table.dealer} corrected {old.code} at"
                f" {at} to {code}, approved by {supervisor_words(item.supervisor)}: recorded as "
                f"corrected{dropped}")




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

