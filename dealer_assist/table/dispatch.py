"""Input dispatch: which input acts now and which waits, in what order. While a question is open
only what may answer or must go on is taken; a touch waits for the shoe cards drawn before it to
land, and no shoe card drawn after an input in its turn is placed before that input acts."""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Protocol

from dealer_assist.table.alarms import Alarm, AlarmKind
from dealer_assist.table.pairing import Pending
from dealer_assist.table.questions import OpenQuestion, QuestionDesk
from dealer_assist.table.sources import (
    AcknowledgeAlarm,
    AnswerQuestion,
    CameraFocus,
    CloseInsurance,
    ConfirmFelt,
    CorrectCard,
    Decide,
    FeltStacks,
    FinishRound,
    FloorLag,
    HoleCardShown,
    Insure,
    KeyCard,
    PlaceBet,
    RecordingFailed,
    RoundResumed,
    ShoeHeard,
    ShoeProblem,
    ShownAfterRestart,
    SignIn,
    SignOut,
    StaffRefused,
    TableInput,
    VoidRound,
)

if TYPE_CHECKING:
    from dealer_assist.table.evidence import CameraEvidence
    from dealer_assist.table.shoe_cards import ShoeCards

#: Inputs that go on while a question waits for the dealer's answer; every other input waits
#: behind it, in the order it came, and is taken once the question is answered. A round
#: resumed after a restart with its question still open says so at once (the dealer checks the
#: felt, and may confirm it, before or after answering).
PASS_A_QUESTION = (AnswerQuestion, VoidRound, AcknowledgeAlarm, CorrectCard, CameraFocus,
                   ShoeProblem, RecordingFailed, SignIn, SignOut, StaffRefused, FloorLag,
                   RoundResumed, ShownAfterRestart, ConfirmFelt, ShoeHeard)
#: Touches and sightings that follow the cards already out of the shoe: they wait while a shoe
#: card waits for its landing, so that a card drawn before them is placed first.
AFTER_THE_CARDS = (Decide, KeyCard, CorrectCard, HoleCardShown, FinishRound)
#: Inputs that act on the round in the order they came: while one waits, those after it wait
#: behind it, and no shoe card drawn after it is placed before it acts.
IN_TURN = (*AFTER_THE_CARDS, FeltStacks, PlaceBet, Insure, CloseInsurance)
#: Inputs held back at most (a question left unanswered while the table goes on dealing).
DEFERRED_KEPT = 1000


@dataclass(frozen=True, slots=True)
class Waiting:
    """An input held back: behind a question, or (in its turn) behind the shoe cards out before
    it, numbers 1 to ``drawn`` (None: not yet known, it came while a question was open or the
    shoe's resend waited). ``resent``: how much of the shoe's resend had come before it, where
    it came while the resend waited (it acts in that place among the resend's cards).
    ``number``: its place in the order the inputs came (:attr:`InputQueue.taken`)."""

    item: TableInput
    drawn: int | None
    resent: int | None = None
    number: int = 0


class DispatchTable(Protocol):
    """What input dispatch asks of the table: its question, the camera's cards in flight, the
    shoe's resend, and acting on one input (its handler)."""

    camera: CameraEvidence
    questions: QuestionDesk
    shoe: ShoeCards

    @property
    def question(self) -> OpenQuestion | None: ...
    def alarm(self, kind: AlarmKind, text: str, resolved: bool = False) -> Alarm: ...
    def play_moved_on(self) -> None: ...
    def act(self, item: TableInput) -> None: ...


class InputQueue:
    """The inputs held back (``deferred``, in order), and while one in its turn acts, the shoe
    cards drawn before it (``acting_drawn``); ``taken`` counts the inputs as they come (each
    one's number), ``acting_number`` is the number of the one acting."""

    def __init__(self, table: DispatchTable):
        self.table = table
        self.deferred: deque[Waiting] = deque()
        self.acting_drawn: int | None = None
        self.taken = 0
        self.acting_number = 0

    def take(self, item: TableInput) -> None:
        """Act on ``item`` now, or hold it back behind the question or the cards before it;
        then take what waited, as far as it may go."""
        flight = self.table.camera.flight
        self.taken += 1
        number = self.taken
        if self.table.question is not None and not isinstance(item, PASS_A_QUESTION):
            if not self.table.questions.sighting_answers(item):
                self.defer(Waiting(item, None, number=number))
        elif isinstance(item, AFTER_THE_CARDS) and self.table.shoe.resend_pending:
            # its cards: those out once the resend is lined up as far as it had come
            self.defer(Waiting(item, None, len(self.table.shoe.resent), number))
        elif isinstance(item, IN_TURN) and (
                any(isinstance(w.item, IN_TURN) for w in self.deferred)
                or isinstance(item, AFTER_THE_CARDS) and flight.in_flight(flight.had)):
            # behind one whose cards are not known yet, its cards are not either
            unknown = any(isinstance(w.item, IN_TURN) and w.drawn is None for w in self.deferred)
            resent = len(self.table.shoe.resent) if self.table.shoe.resend_pending else None
            self.defer(Waiting(item, None if unknown else flight.had, resent, number))
        else:
            self.handle_now(item, flight.had, number)
        self.release()

    def in_turn_before(self, number: int) -> bool:
        """An input in its turn that came before input ``number`` is held back."""
        return any(isinstance(w.item, IN_TURN) and w.number < number for w in self.deferred)

    def defer_first(self, item: TableInput) -> None:
        """``item``, acting now, waits first in line for the question its acting opened."""
        self.deferred.appendleft(Waiting(item, self.acting_drawn, number=self.acting_number))

    def defer_in_place(self, item: TableInput, number: int) -> None:
        """``item``, input ``number``, held back in its place: before those that came after
        it."""
        at = next((i for i, w in enumerate(self.deferred) if w.number > number),
                  len(self.deferred))
        self.defer(Waiting(item, None, number=number), at)

    def defer(self, waiting: Waiting, at: int | None = None) -> None:
        """Hold ``waiting`` back, last in line or ``at`` that place."""
        if len(self.deferred) >= DEFERRED_KEPT:
            self.table.alarm(AlarmKind.ILLEGAL_ACTION, (
                f"{DEFERRED_KEPT} inputs wait behind the dealer's question; "
                f"{type(waiting.item).__name__} not taken: answer the question or void the round"))
            return
        self.deferred.insert(len(self.deferred) if at is None else at, waiting)

    def placeable(self, pending: Pending) -> bool:
        """Whether a waiting shoe card may be placed now: not while an input that came before
        it has yet to act (one waiting in its turn, or the one acting)."""
        lines = [w.drawn for w in self.deferred
                 if isinstance(w.item, IN_TURN) and w.drawn is not None]
        if self.acting_drawn is not None:
            lines.append(self.acting_drawn)
        return pending.serial <= min(lines, default=pending.serial)

    def release(self, resent: int | None = None) -> None:
        """Take the inputs that waited, in order, as far as they may go now: with no question
        open, every one but a touch whose shoe cards (those drawn before it) still wait for
        their landing or for the end of the shoe's resend, and the inputs in their turn after
        it; then pair what that lets go. ``resent``: the resend is being lined up, this much of
        it taken: only what came among it, before the rest of it, goes (what waited behind a
        question, or came after the resend ended, waits for the end of the line-up)."""
        while self.deferred and self.table.question is None:
            blocked = False
            for index, waiting in enumerate(self.deferred):
                drawn = waiting.drawn
                if isinstance(waiting.item, AFTER_THE_CARDS) and self.table.shoe.resend_pending \
                        or resent is not None and (waiting.resent is None
                                                   or waiting.resent > resent):
                    blocked = True
                    if not isinstance(waiting.item, IN_TURN):
                        continue
                if isinstance(waiting.item, IN_TURN):
                    if blocked:
                        continue
                    if drawn is None:  # it waited for a question: its cards are those out now
                        drawn = self.table.camera.flight.had
                        self.deferred[index] = replace(waiting, drawn=drawn)
                    blocked = blocked or isinstance(waiting.item, AFTER_THE_CARDS) and \
                        self.table.camera.flight.in_flight(drawn)
                    if blocked:
                        continue
                del self.deferred[index]
                self.handle_now(waiting.item, drawn, waiting.number)
                self.table.camera.pair()
                break
            else:
                return

    def handle_now(self, item: TableInput, drawn: int | None, number: int) -> None:
        """Act on ``item``, input ``number``, which came after shoe cards 1 to ``drawn``: while
        one in its turn acts, no shoe card drawn after it is placed."""
        if isinstance(item, Decide | FeltStacks | HoleCardShown):
            self.table.play_moved_on()
        outer = self.acting_drawn, self.acting_number
        self.acting_drawn = drawn if isinstance(item, IN_TURN) else None
        self.acting_number = number
        try:
            self.table.act(item)
        finally:
            self.acting_drawn, self.acting_number = outer
