"""Placing a card: the decisions that brought it where it went, where its evidence leaves one way
to pay, then the card where the rules put it; else the dealer is asked. A card that comes while a
hand decides is placed by its readings (:mod:`dealer_assist.rules.readings`: the legal plays that
bring it there) less those the evidence (its landing, sideways) rules out."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from dealer_assist.roundlog import CardDealt, Event, PlayerAction, RoundFold
from dealer_assist.rules import Action, CardTarget
from dealer_assist.rules.readings import (
    Evidence,
    Reading,
    card_readings,
    remaining_readings,
    settled_reading,
)
from dealer_assist.table.alarms import Alarm, AlarmKind
from dealer_assist.table.mode import Mode
from dealer_assist.table.questions import HeldCard, QuestionDesk
from dealer_assist.table.sources import place_words, play_order

if TYPE_CHECKING:
    from dealer_assist.table.evidence import CameraEvidence


class PlacingTable(Protocol):
    """What placing a card asks of the table."""

    cards_committed: int
    camera: CameraEvidence
    questions: QuestionDesk
    has_camera: bool
    camera_moved: bool

    @property
    def fold(self) -> RoundFold | None: ...
    @property
    def round_id(self) -> str | None: ...
    @property
    def mode(self) -> Mode: ...
    def alarm(self, kind: AlarmKind, text: str, resolved: bool = False) -> Alarm: ...
    def apply(self, event: Event) -> bool: ...
    def play_moved_on(self) -> None: ...


def hole_card_due(fold: RoundFold | None) -> bool:
    """The next card due in ``fold``'s round is the dealer's hole card."""
    if fold is None or fold.ended:
        return False
    engine = fold.engine
    target = engine.next_card_target()
    return target is not None and target.is_dealer and len(engine.dealer_cards()) == 1


def stand_until(table: PlacingTable, landing: CardTarget | None, by: str) -> bool:
    """Stand every hand in play before ``landing`` (None: before the dealer), as ``by`` showed;
    False (with its alarm) where a hand before it is still owed a card, or a stand is refused."""
    assert table.fold is not None
    engine = table.fold.engine
    while True:
        acting = engine.acting()
        if acting is None or play_order(acting) >= play_order(landing):
            return True
        if engine.next_card_target() is not None:
            table.alarm(
                AlarmKind.ILLEGAL_ACTION,
                f"seat {acting[0]} hand {acting[1] + 1} is still owed a card, but the game "
                f"moved on to {place_words(landing) if landing else 'the dealer'}",
            )
            return False
        if not table.apply(PlayerAction(acting[0], Action.STAND, hand=acting[1], by=by)):
            return False


def commit(table: PlacingTable, held: HeldCard) -> CardTarget | None:
    """Record one card: the decisions that put it where it went (if any), then the card itself
    (with the shoe's numbering of it, when the shoe dealt it, or marked keyed by the dealer).
    Returns where it went; None when it is not recorded (an alarm says why) or not yet: the
    evidence left its play open and the dealer is asked (``table.questions.open``)."""
    fold, card, landing = table.fold, held.card, held.landing
    shown = card.code if card is not None else "a face-down card"
    if fold is not None and fold.engine.deal_complete:
        table.play_moved_on()  # a card after the deal: a hit, a double, the dealer's draw
    if fold is None or fold.ended or not fold.engine.seats():
        settled = f"round {table.round_id} is settled and " if fold is not None and \
            fold.ended else ""
        where = place_words(landing) if landing else "the table"
        table.alarm(
            AlarmKind.ILLEGAL_ACTION, f"{shown} dealt at {where} but "
            f"{settled}no bet is placed{' for the next' if settled else ''}; not recorded",
        )
        return None
    engine = fold.engine
    if engine.next_card_target() is None and engine.acting() is not None and \
            not _place(table, held):
        return None
    return deal(table, held)


def _place(table: PlacingTable, held: HeldCard) -> bool:
    """A card arrived while a hand decides: take the decisions its evidence shows, where they
    leave one way to pay; else ask the dealer (False: asked, or refused)."""
    assert table.fold is not None
    landing = held.landing
    left = remaining_readings(card_readings(table.fold.engine, toward=landing),
                              Evidence(landing, held.sideways))
    reading = settled_reading(left)
    if reading is not None:
        return take(table, reading, _shown_by(table, held))
    readings = left or card_readings(table.fold.engine)
    if not readings:
        table.alarm(AlarmKind.ILLEGAL_ACTION, (
            f"{held.card.code if held.card else 'a card'} dealt but no play can take it "
            f"({table.fold.engine.describe()}); not recorded"))
        return False
    table.questions.ask(held, readings, table.questions.why_open(held, bool(left)))
    return False


def _shown_by(table: PlacingTable, held: HeldCard) -> str:
    """Who showed the decisions that put ``held`` where it went: the dealer for a card keyed
    where it lies, the camera for one it saw land, else the shoe (its card's arrival). A card
    the shoe could not read and the dealer keyed is the shoe's card: with the camera watching,
    its landing is the camera's; without, a place is the dealer's."""
    if held.keyed_by_dealer:
        return "dealer"
    if held.landing is None:
        return "shoe"
    if held.unread is not None and table.mode is not Mode.SHOE_AND_CAMERA:
        return "dealer"
    return "camera"


def take(table: PlacingTable, reading: Reading, by: str) -> bool:
    """Apply a reading's decisions, in play order, as ``by`` showed."""
    for decision in reading.decisions:
        if not table.apply(PlayerAction(decision.seat, decision.action, hand=decision.hand,
                                        by=by)):
            return False
    return True


def deal(table: PlacingTable, held: HeldCard) -> CardTarget | None:
    """Record ``held``'s card where the rules put it now (no decision pending; its
    ``sideways`` is not read): where it went, or None (refused, with its alarm)."""
    assert table.fold is not None
    engine = table.fold.engine
    card, landing = held.card, held.landing
    shown = card.code if card is not None else "a face-down card"
    target = engine.next_card_target()
    if target is None:
        table.alarm(
            AlarmKind.ILLEGAL_ACTION,
            f"{shown} dealt but no card is due ({engine.describe()}); not recorded",
        )
        return None
    to: CardTarget | None = None
    if landing is not None:
        seen = CardTarget(landing.seat, None if landing.seat is None else landing.hand)
        if seen.matches(target):
            to = seen
        else:
            table.alarm(
                AlarmKind.MISPLACED,
                f"{shown} landed at {place_words(landing)} but is due to {target}: "
                f"recorded to {target}",
            )
    hole = hole_card_due(table.fold)
    if not table.apply(CardDealt(card, to, held.face_down, held.origin, held.keyed,
                                 unread=held.unread)):
        return None
    table.cards_committed += 1
    if held.keyed_by_dealer and card is not None:
        # the camera's reading of it, where it lies (else where it went), is no new card
        table.camera.entered_unseen[(card, (landing or target).seat)] += 1
    elif landing is None and card is not None and not hole and table.has_camera and \
            not table.camera_moved:
        # its sighting may still come: as ever with the shoe and camera, after the shoe's link
        # dropped while it waited for its landing, or once the camera is back from an outage
        # that hid its landing (a camera moved goes on tracking, and reports no card it saw)
        table.camera.flight.placed(card, target)
    return target
