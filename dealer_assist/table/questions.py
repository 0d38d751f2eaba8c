"""The table's question to the dealer: the card it holds, the plays that could have taken it
there (readings), how the screen words them, and the desk that asks it and takes the answer."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from decimal import Decimal
from typing import TYPE_CHECKING, Any, Protocol

from dealer_assist.roundlog import Event, Question, RoundFold, ShoeOrigin, UnreadOrigin
from dealer_assist.rules import Action, Card, CardTarget
from dealer_assist.rules.readings import Evidence, Reading, remaining_readings, settled_reading
from dealer_assist.table.alarms import Alarm, AlarmKind
from dealer_assist.table.mode import Mode
from dealer_assist.table.sources import (
    AnswerQuestion,
    FeltCard,
    KeyCard,
    ShoeCard,
    ShoeUnread,
    TableInput,
    place_words,
)

if TYPE_CHECKING:
    from dealer_assist.table.dispatch import InputQueue
    from dealer_assist.table.evidence import CameraEvidence
    from dealer_assist.table.shoe_cards import ShoeCards

#: The camera's readings a question about an unread card offers, at most.
OFFERS_KEPT = 4


@dataclass(frozen=True, slots=True)
class HeldCard:
    """A card the table cannot place until the dealer answers, as it would be recorded."""

    card: Card | None
    landing: CardTarget | None
    sideways: bool
    face_down: bool = False
    origin: ShoeOrigin | None = None
    keyed: bool = False
    unread: UnreadOrigin | None = None

    @property
    def keyed_by_dealer(self) -> bool:
        """Keyed by the dealer with no shoe report of it (a hand-held game's card no reader
        saw), not a card the shoe dealt unread."""
        return self.keyed and self.unread is None


@dataclass(frozen=True, slots=True)
class OpenQuestion:
    """The one question on the dealer's screen: which of ``choices`` (readings, labelled by
    ``labels`` in the same order) put ``held`` where it went; ``why`` the evidence left it open.

    Or, with ``unread``, the place of a card the shoe dealt but could not read, held until the
    dealer keys it: then ``labels`` name ``options`` (None: no card left the shoe, offered where
    the shoe's report could not be decoded; a card: the camera's reading of it) and ``choices``
    is empty.
    """

    id: int
    round_id: str | None
    held: HeldCard
    choices: tuple[Reading, ...]
    labels: tuple[str, ...]
    text: str
    why: str
    asked_at: float
    unread: ShoeUnread | None = None
    options: tuple[Card | None, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "round": self.round_id,
            "card": self.held.card.code if self.held.card else None,
            "text": self.text,
            "why": self.why,
            "choices": [{"choice": i, "label": label} for i, label in enumerate(self.labels)],
            # the dealer answers by keying the card (the screen offers Key a card)
            "key": self.unread is not None,
        }


def unread_words(unread: ShoeUnread) -> str:
    """A card the shoe could not read, as the dealer's screen names it."""
    if unread.index is None:
        return f"the shoe's report seq {unread.seq} (undecodable: perhaps a card)"
    return f"card {unread.index} of the shoe (seq {unread.seq})"


def reading_label(reading: Reading, hands: Mapping[int, int]) -> str:
    """A reading in the dealer's words: "HIT seat 2", "STAND seat 2, DOUBLE seat 3"; hands are
    numbered from 1 at a seat with more than one (``hands``: seat -> hands there now)."""

    def place(seat: int, hand: int) -> str:
        split = hands.get(seat, 1) > 1 or any(
            d.seat == seat and d.action is Action.SPLIT for d in reading.decisions)
        return f"seat {seat}" + (f" hand {hand + 1}" if split else "")

    words = [f"{d.action.name} {place(d.seat, d.hand)}" for d in reading.decisions]
    if reading.target.is_dealer:
        words.append("to the DEALER")
    elif reading.asked_by is None:
        words.append(f"to {place(reading.target.seat or 0, reading.target.hand or 0)}")
    return ", ".join(words)


def question_text(held: HeldCard, choices: tuple[Reading, ...], labels: tuple[str, ...]) -> str:
    """"JH at seat 2: HIT or DOUBLE?" where every choice puts the card in one place, else
    "Where did JH go?" (the choices' buttons name the plays)."""
    shown = held.card.code if held.card else "The card"
    places = {r.target for r in choices}
    if len(places) == 1 and all(r.asked_by is not None for r in choices) and \
            all(len(r.decisions) == 1 for r in choices):
        verbs = " or ".join(r.asked_by.name for r in choices if r.asked_by is not None)
        return f"{shown} at {labels[0].split(' ', 1)[1]}: {verbs}?"
    return f"Where did {shown} go?"


class QuestionTable(Protocol):
    """What the question desk asks of the table."""

    now: float
    dealer: str | None
    max_camera_lag_s: float
    camera_names: bool
    camera: CameraEvidence
    shoe: ShoeCards
    inputs: InputQueue

    @property
    def round_id(self) -> str | None: ...
    @property
    def fold(self) -> RoundFold | None: ...
    @property
    def mode(self) -> Mode: ...
    def camera_trusted(self) -> bool: ...
    def alarm(self, kind: AlarmKind, text: str, resolved: bool = False) -> Alarm: ...
    def apply_or_raise(self, event: Event) -> CardTarget | None: ...
    def take(self, reading: Reading, by: str) -> bool: ...
    def deal(self, card: Card | None, landing: CardTarget | None, face_down: bool,
             origin: ShoeOrigin | None, keyed: bool,
             unread: UnreadOrigin | None = None) -> CardTarget | None: ...


class QuestionDesk:
    """A table's questions: the ``open`` one (None: none), how many were ``asked`` since the
    table started and this round (``round_asked``); the answer is recorded, then the decisions
    and the card it chose."""

    def __init__(self, table: QuestionTable):
        self.table = table
        self.open: OpenQuestion | None = None
        self.asked = 0
        self.round_asked = 0

    def withdraw(self) -> OpenQuestion | None:
        """Take the open question down unanswered (its card voided, or about to be placed
        again on a corrected round): the question, or None."""
        question, self.open = self.open, None
        return question

    def ask(self, held: HeldCard, choices: tuple[Reading, ...], why: str) -> None:
        """Put one question to the dealer: which play put ``held`` where it went."""
        if self.open is not None:  # a card is placed only with no question open
            raise RuntimeError(f"asked about {held} while question {self.open.id} is open")
        self.asked += 1
        self.round_asked += 1
        assert self.table.fold is not None
        engine = self.table.fold.engine
        hands = {seat: len(engine.hands(seat)) for seat in engine.seats()}
        labels = tuple(reading_label(r, hands) for r in choices)
        self.open = OpenQuestion(self.asked, self.table.round_id, held, choices,
                                      labels, question_text(held, choices, labels), why,
                                      self.table.now)

    def ask_unread(self, unread: ShoeUnread, offers: Iterable[FeltCard] = ()) -> None:
        """Hold the place of a card the shoe dealt but could not read: one question, answered
        by the dealer keying the card (or taking a reading of it the camera ``offers``), or,
        where the shoe's report may have been no card, saying none left the shoe. Nothing else
        is placed, and the round settles not, until it is answered or the round is voided."""
        if self.open is not None:
            raise RuntimeError(f"asked about {unread} while question {self.open.id} is open")
        self.asked += 1
        self.round_asked += 1
        if unread.index is None:
            text = (f"The shoe sent a report it could not read (seq {unread.seq}): if a card "
                    "left the shoe then, key it (Key a card); if none did, touch No card; or "
                    "void the round")
            options: tuple[Card | None, ...] = (None,)
            labels: tuple[str, ...] = ("No card left the shoe",)
        else:
            text = (f"The shoe could not read card {unread.index} of the shoe: key it (Key a "
                    "card), or void the round")
            options, labels = (), ()
        self.open = OpenQuestion(self.asked, self.table.round_id, HeldCard(None, None, False),
                                 (), labels, text, unread.detail, self.table.now,
                                 unread=unread, options=options)
        for felt in offers:
            self.offer(felt)

    def offer(self, felt: FeltCard) -> None:
        """Offer the camera's reading ``felt`` as the unread card the open question holds (the
        dealer still chooses it, or keys another); each card once, at most :data:`OFFERS_KEPT`."""
        question = self.open
        assert question is not None and question.unread is not None and felt.card is not None
        if felt.card in question.options or \
                sum(o is not None for o in question.options) >= OFFERS_KEPT:
            return
        label = f"{felt.card.code}, as the camera read it at {place_words(felt.spot)}"
        self.open = replace(question, options=(*question.options, felt.card),
                            labels=(*question.labels, label))

    def may_be_unread(self, felt: FeltCard) -> bool:
        """Whether the camera's reading ``felt`` may be the card the shoe could not read: the
        camera is trusted and may name cards, and no card of its code is out without a sighting
        (a shoe card waiting for its landing, one placed unseen, one drawn after it waiting
        behind the question)."""
        card = felt.card
        return card is not None and self.table.camera_trusted() and self.table.camera_names \
            and self.table.camera.flight.unsighted(card) == 0 and \
            not any(isinstance(w.item, ShoeCard) and w.item.card == card
                    for w in self.table.inputs.deferred)

    def on_answer(self, item: AnswerQuestion) -> None:
        question = self.open
        if question is None or question.id != item.question:
            open_now = "none is open" if question is None else f"question {question.id} is open"
            self.table.alarm(AlarmKind.ILLEGAL_ACTION, f"an answer to question "
                             f"{item.question}, but {open_now}; not taken")
            return
        if not 0 <= item.choice < len(question.labels):
            self.table.alarm(AlarmKind.ILLEGAL_ACTION, (
                f"answer {item.choice} to question {question.id}, which has "
                f"{len(question.labels)} choices; not taken"))
            return
        if question.unread is not None:
            self.answer_unread(item.choice)
            return
        self.settle(item.choice, "dealer")

    def answer_unread(self, choice: int) -> None:
        """The dealer's answer to a question about an unread card: the camera's reading it
        offered, taken as keyed, or no card left the shoe (an undecodable report)."""
        question = self.open
        assert question is not None and question.unread is not None
        card = question.options[choice]
        if card is not None:
            self.table.shoe.key_unread(question, card, None, "the camera's reading")
            return
        self.open = None
        self.table.alarm(AlarmKind.DEALER_ASKED, (
            f"asked \"{question.text}\" ({question.why}); answered by the dealer "
            f"{self.table.dealer} after {self.waited(question)} s: no card left the shoe; "
            "round flagged for review"), resolved=True)

    def waited(self, question: OpenQuestion) -> Decimal:
        """Seconds from ``question`` to now, as recorded."""
        return Decimal(str(round(max(0.0, self.table.now - question.asked_at), 2)))

    def sighting_answers(self, item: TableInput) -> bool:
        """A late sighting of the card asked about, while its question is open: where it
        leaves one choice, it answers the question; where it leaves several, it is that card's
        sighting; where it leaves none, it is that card's sighting seen where no answer puts it
        (a "card in the wrong place" alarm, as a sighting checked against the answer would
        raise). Not where another card of its code may be the one seen, nor while the camera is
        behind (its frame older than ``max_camera_lag_s``): it waits behind the question, and
        is checked against the card's place once the dealer has answered.

        While an unread card's place is held, the dealer's keyed card answers (True), and a
        sighting that may be that card (no card of its code out and unsighted) is offered as
        its reading; the sighting still waits behind the question, to be paired as the landing
        of the card the dealer keys."""
        question = self.open
        assert question is not None
        if question.unread is not None:
            if isinstance(item, KeyCard):
                self.table.shoe.key_unread(question, item.card, item.spot, None)
                return True
            if isinstance(item, FeltCard) and self.may_be_unread(item):
                self.offer(item)
            return False
        if not isinstance(item, FeltCard) or item.card is None or not self.table.camera_trusted() \
                or question.held.card != item.card or question.held.landing is not None \
                or self.table.camera.lag(item) > self.table.max_camera_lag_s \
                or self.table.camera.unsighted(item.card) > 1:
            return False
        left = remaining_readings(question.choices,
                                  Evidence(item.spot, item.sideways))
        if not left:  # no answer puts it there: the felt disagrees with every one
            self.table.alarm(AlarmKind.MISPLACED, (
                f"{item.card.code} is asked about, but the camera saw it at "
                f"{place_words(item.spot)}, where no answer puts it: check the felt; call the "
                "floor"))
            return True
        reading = settled_reading(left)
        if reading is not None:
            self.settle(question.choices.index(reading), "camera")
        return True

    def settle(self, choice: int, by: str) -> None:
        """Record the question with its answer, then the decisions and the card it chose."""
        question = self.open
        assert question is not None and self.table.fold is not None
        self.open = None
        held = question.held
        waited = self.waited(question)
        dealer = self.table.dealer if by == "dealer" else None
        self.table.apply_or_raise(Question(held.card, question.text, question.why, question.labels,
                                      question.labels[choice], by, waited, dealer))
        if self.table.take(question.choices[choice], by):
            self.table.deal(held.card, held.landing, held.face_down, held.origin, held.keyed,
                            held.unread)
        self.table.alarm(AlarmKind.DEALER_ASKED, (
            f"asked \"{question.text}\" ({question.why}); answered by the {by}"
            f"{f' {dealer}' if dealer else ''} after "
            f"{waited} s: {question.labels[choice]}; round flagged for review"), resolved=True)

    def why_open(self, held: HeldCard, seen_fits: bool) -> str:
        if held.landing is not None:
            seen = f"the camera saw it land{' sideways' if held.sideways else ''} at " \
                f"{place_words(held.landing)}"
            if not seen_fits:
                return f"{seen}, where no legal play puts it"
            return f"{seen}, which more than one play fits"
        if held.keyed_by_dealer:
            return "the dealer keyed it with no place"
        if self.table.camera.behind:
            return "the camera is behind: its sighting came too late"
        if self.table.camera_trusted() or self.table.camera.uncounting():
            return self.table.camera.unseen_words()
        return "no camera watches the felt and no decision was touched for it"

