"""The table loop: shoe, camera and dealer inputs folded into round-log events through the engine.

Pure: no threads, no clock, no I/O except through the injected :class:`Recorder`. The runner hands
it one input at a time with the current time (``now``, seconds, monotonic) and calls :meth:`tick`
a few times a second so that waits can expire. Everything the dealer's screen shows comes from
:meth:`TableLoop.view`.

How the three sources combine (the camera's landing spot supplies what the shoe cannot see):

* **shoe + camera**: a card out of the shoe waits (up to ``camera_wait_s``) for the camera to see
  where it lands, and a card on the felt waits (up to ``shoe_wait_s``) for its shoe card. The pair
  is one card: identity from the shoe, decision from the landing spot. A landing at the acting hand
  is a hit (sideways: a double); at a later hand or seat, every hand before it stood; at the
  dealer, every remaining hand stood.
* **shoe only** (camera lost, moved or not fitted): a card for the acting hand is a hit unless the
  dealer touched another decision first (stand, double, split, surrender, rescue).
* **camera only** (hand-held game, or the shoe link is down): the camera's reading is the card;
  a face-down hole card is recorded face down and revealed when turned. While the shoe is down,
  the cards it resends on reconnection are checked against what the camera recorded. The dealer
  keys a card the camera cannot read. In a hand-held game (no shoe fitted) the dealer also
  corrects a card the camera misread, and a round whose payouts are known waits for the dealer's
  check of the cards (Finish round) before it is settled.
"""

from __future__ import annotations

import enum
import json
from collections import Counter, deque
from collections.abc import Callable
from dataclasses import dataclass, replace
from decimal import Decimal
from typing import Any

from dealer_assist.roundlog import (
    Bet,
    CardDealt,
    Event,
    EventError,
    Insurance,
    PlayerAction,
    Question,
    Reveal,
    RoundFold,
    ShoeOrigin,
    dumps_event,
    parse_event,
)
from dealer_assist.rules import (
    DEALER,
    Action,
    Card,
    CardTarget,
    RoundError,
    RuleSet,
    Settlement,
    format_money,
)
from dealer_assist.rules.readings import (
    Evidence,
    Reading,
    card_readings,
    remaining_readings,
    settled_reading,
)
from dealer_assist.table.alarms import Alarm, AlarmBook, AlarmKind
from dealer_assist.table.corrections import ReplayError, face_up_lines, replay_corrected
from dealer_assist.table.pack import PackCount
from dealer_assist.table.pairing import CardsInFlight, LateSighting, MatchKind, Pending
from dealer_assist.table.questions import HeldCard, OpenQuestion, question_text, reading_label
from dealer_assist.table.screen_view import device_state, round_view, settlement_view
from dealer_assist.table.session import Recorder, RoundSession
from dealer_assist.table.sources import (
    DEALER_SPOT,
    AcknowledgeAlarm,
    AnswerQuestion,
    CameraFocus,
    CameraLink,
    CameraMoved,
    CloseInsurance,
    ConfirmFelt,
    CorrectCard,
    Decide,
    FeltCard,
    FeltStacks,
    FeltSwap,
    FinishRound,
    FloorLag,
    HoleCardShown,
    Insure,
    KeyCard,
    NewShoe,
    PlaceBet,
    RecordingFailed,
    RoundResumed,
    ShoeBurn,
    ShoeCard,
    ShoeLink,
    ShoeProblem,
    SignIn,
    SignOut,
    StaffRefused,
    TableInput,
    VoidRound,
    place_words,
    play_order,
)


class Mode(enum.Enum):
    """Which readers the loop trusts right now (shown on the dealer's screen)."""

    SHOE_AND_CAMERA = "shoe + camera"
    SHOE_ONLY = "shoe only"
    CAMERA_ONLY = "camera only"
    NO_READER = "no card reader"


#: Errors a table keeps in memory, the latest: the runner's (inputs the loop raised on: a bug,
#: shown on the screen) and the surveillance store's failed writes (each run of them an alarm).
ERRORS_KEPT = 100


@dataclass(frozen=True, slots=True)
class _Waiting:
    """An input held back: behind a question, or (in its turn) behind the shoe cards out before
    it, numbers 1 to ``drawn`` (None: not yet known, it came while a question was open)."""

    item: TableInput
    drawn: int | None


#: Inputs that go on while a question waits for the dealer's answer; every other input waits
#: behind it, in the order it came, and is taken once the question is answered.
_PASS_A_QUESTION = (AnswerQuestion, VoidRound, AcknowledgeAlarm, CorrectCard, CameraFocus,
                    ShoeProblem, RecordingFailed, SignIn, SignOut, StaffRefused, FloorLag)
#: Touches and sightings that follow the cards already out of the shoe: they wait while a shoe
#: card waits for its landing, so that a card drawn before them is placed first.
_AFTER_THE_CARDS = (Decide, KeyCard, CorrectCard, HoleCardShown, FinishRound)
#: Inputs that act on the round in the order they came: while one waits, those after it wait
#: behind it, and no shoe card drawn after it is placed before it acts.
_IN_TURN = (*_AFTER_THE_CARDS, FeltStacks, PlaceBet, Insure, CloseInsurance)
#: Touches taken only from a signed-in dealer (a touched New shoe too: see :meth:`_unsigned`).
_NEEDS_DEALER = (PlaceBet, Decide, Insure, CloseInsurance, FinishRound, KeyCard, CorrectCard,
                 AnswerQuestion, ConfirmFelt)
#: Inputs held back at most (a question left unanswered while the table goes on dealing).
DEFERRED_KEPT = 1000


class TableLoop:
    """Folds table inputs into rounds; one instance per table, driven by one thread."""

    def __init__(
        self,
        rules_spec: Any,
        recorder: Recorder,
        *,
        table_id: str = "T1",
        round_prefix: str = "r",
        has_shoe: bool = True,
        has_camera: bool = True,
        camera_wait_s: float = 1.5,
        shoe_wait_s: float = 1.0,
        mismatch_wait_s: float = 0.5,
        max_camera_lag_s: float = 0.5,
        notes: dict[str, str] | None = None,
        round_number: int = 0,
    ):
        self.rules = RuleSet.from_spec(rules_spec)
        self.rules_spec = rules_spec
        self.recorder = recorder
        self._recording_fails = False  # the last write to the recorder failed
        self.table_id = table_id
        self.round_prefix = round_prefix
        self.has_shoe = has_shoe
        self.has_camera = has_camera
        self.camera_wait_s = camera_wait_s
        self.shoe_wait_s = shoe_wait_s
        self.mismatch_wait_s = mismatch_wait_s
        self.max_camera_lag_s = max_camera_lag_s
        self.camera_lag_s: float | None = None  # of the latest sighting: now - frame grabbed
        self.floor: FloorLag | None = None  # how far the floor's room is behind (None: no floor)
        self._camera_behind = False
        self.questions_asked = 0
        self.round_questions = 0  # this round's
        self._question: OpenQuestion | None = None
        self._deferred: deque[_Waiting] = deque()
        #: while an input in its turn acts: the shoe cards drawn before it (see _placeable)
        self._acting_drawn: int | None = None
        #: shoe cards waiting for their landing, landings for their shoe card, and the cards
        #: placed this round with no landing seen (a late sighting is checked, not taken anew)
        self._flight = CardsInFlight()
        self.notes = dict(notes or {})  # device -> why it is unavailable (shown on screen)
        self.shoe_up = False
        self.camera_up = False
        self.camera_moved = False
        #: this table's alarms: every one still active, and the latest done ones up to
        #: ALARMS_KEPT in all (each is recorded as it is raised; a table runs for weeks)
        self._alarms = AlarmBook(
            lambda alarm: self._record(lambda: self.recorder.write_alarm(alarm)))
        self.rounds_played = 0
        self.cards_committed = 0
        self.updates = 0  # bumped on every change the screen should show
        self.last_settlement: Settlement | None = None
        self._session = RoundSession(
            rules_spec, table_id, round_prefix, round_number,
            tell=lambda call: self._record(lambda: call(self.recorder)))
        #: why the round in play was rebuilt after a restart, until the dealer confirms the felt
        self.resumed: str | None = None
        self._pack = PackCount(self.rules.decks)
        self._awaiting_shoe: deque[Card | None] = deque()
        self._stray_cards: Counter[Card] = Counter()  # out of the shoe in no round (_drop_strays)
        self._insurance_closed = False  # by the dealer's touch, this round
        #: (card, seat: None at the dealer's) the dealer keyed or corrected this round that the
        #: camera has not reported since, there, under that code (it may read one late)
        self._entered_unseen: Counter[tuple[Card, int | None]] = Counter()
        #: (as first recorded, as corrected, seat: None at the dealer) this round: the camera
        #: reading the card anew where it lies, as corrected, is no switched card
        self._corrections: set[tuple[Card, Card, int | None]] = set()
        #: the dealer signed in at the screen (None: nobody; no bets, no round)
        self.dealer: str | None = None
        self._now = 0.0

    # ------------------------------------------------------------------ state

    @property
    def mode(self) -> Mode:
        shoe_ok = self.has_shoe and self.shoe_up
        camera_ok = self.has_camera and self.camera_up and not self.camera_moved
        if shoe_ok and camera_ok:
            return Mode.SHOE_AND_CAMERA
        if shoe_ok:
            return Mode.SHOE_ONLY
        if camera_ok:
            return Mode.CAMERA_ONLY
        return Mode.NO_READER

    @property
    def round_id(self) -> str | None:
        return self._session.round_id

    @property
    def round_open(self) -> bool:
        return self._session.open

    @property
    def engine_view(self) -> dict[str, Any] | None:
        return None if self._fold is None else self._fold.engine.view()

    def round_lines(self) -> list[str]:
        """The round in play (or the last one) as its round log's lines so far."""
        return list(self._lines)

    @property
    def alarms(self) -> list[Alarm]:
        """This table's alarms: every active one, and the latest done ones."""
        return self._alarms.alarms

    @property
    def alarms_raised(self) -> int:
        """The number of the last alarm raised (alarms are numbered from 1)."""
        return self._alarms.raised

    def number_alarms_on_from(self, raised: int) -> None:
        """The next alarm raised is number ``raised + 1`` (a table rebuilt from its journal)."""
        self._alarms.number_on_from(raised)

    def active_alarms(self) -> list[Alarm]:
        return self._alarms.active()

    @property
    def round_number(self) -> int:
        """The number of the latest round started (its id ends with it)."""
        return self._session.number

    @property
    def cards_out(self) -> Counter[Card]:
        """The cards counted out of the shoe since it was shuffled (a copy)."""
        return self._pack.out()

    @property
    def at_rest(self) -> bool:
        """No round open and nothing waiting to pair: a safe point to checkpoint the journal."""
        return not (self.round_open or self._flight.shoe or self._flight.felt
                    or self._awaiting_shoe or self._question or self._deferred)

    # ------------------------------------------------------------------ inputs

    @property
    def question(self) -> OpenQuestion | None:
        """The question waiting for the dealer's answer (None: none)."""
        return self._question

    def handle(self, item: TableInput, now: float, at: str | None = None) -> None:
        """Apply one input; never raises for bad table data (it raises alarms instead). While a
        question is open, inputs other than the answer wait behind it (see
        :data:`_PASS_A_QUESTION`); a touch waits for the shoe cards drawn before it to land.
        ``at``: when it was handed to the table (UTC, ``format_at``), on the events it causes."""
        self._now, self._session.at = now, at
        if type(item) not in _HANDLERS:
            raise TypeError(f"not a table input: {item!r}")
        self._measure_lag(item)
        if self._unsigned(item):
            self._alarm(AlarmKind.STAFF, f"{_touch_words(item)} touched but no dealer is signed"
                        " in: not taken; sign in first")
        elif self._question is not None and not isinstance(item, _PASS_A_QUESTION):
            if not self._sighting_answers(item):
                self._defer(_Waiting(item, None))
        elif isinstance(item, _IN_TURN) and (
                any(isinstance(w.item, _IN_TURN) for w in self._deferred)
                or isinstance(item, _AFTER_THE_CARDS)
                and self._flight.in_flight(self._flight.had)):
            self._defer(_Waiting(item, self._flight.had))
        else:
            self._handle_now(item, self._flight.had)
        self._release()
        self._settle_if_done()
        self.updates += 1

    def _unsigned(self, item: TableInput) -> bool:
        """A touch that needs a signed-in dealer, with none signed in."""
        touched = isinstance(item, _NEEDS_DEALER) or isinstance(item, NewShoe) and item.touched
        return touched and self.dealer is None

    def _handle_now(self, item: TableInput, drawn: int | None) -> None:
        """Act on ``item``, which came after shoe cards 1 to ``drawn``: while one in its turn
        acts, no shoe card drawn after it is placed."""
        if isinstance(item, Decide | FeltStacks | HoleCardShown):
            self._play_moved_on()
        outer, self._acting_drawn = self._acting_drawn, (
            drawn if isinstance(item, _IN_TURN) else None)
        try:
            _HANDLERS[type(item)](self, item)
        finally:
            self._acting_drawn = outer

    def _defer(self, waiting: _Waiting) -> None:
        if len(self._deferred) >= DEFERRED_KEPT:
            self._alarm(AlarmKind.ILLEGAL_ACTION, (
                f"{DEFERRED_KEPT} inputs wait behind the dealer's question; "
                f"{type(waiting.item).__name__} not taken: answer the question or void the round"))
            return
        self._deferred.append(waiting)

    def _placeable(self, pending: Pending) -> bool:
        """Whether a waiting shoe card may be placed now: not while an input that came before
        it has yet to act (one waiting in its turn, or the one acting)."""
        lines = [w.drawn for w in self._deferred
                 if isinstance(w.item, _IN_TURN) and w.drawn is not None]
        if self._acting_drawn is not None:
            lines.append(self._acting_drawn)
        return pending.serial <= min(lines, default=pending.serial)

    def _release(self) -> None:
        """Take the inputs that waited, in order, as far as they may go now: with no question
        open, every one but a touch whose shoe cards (those drawn before it) still wait for
        their landing, and the inputs in their turn after it; then pair what that lets go."""
        while self._deferred and self._question is None:
            blocked = False
            for index, waiting in enumerate(self._deferred):
                drawn = waiting.drawn
                if isinstance(waiting.item, _IN_TURN):
                    if drawn is None:  # it waited for a question: its cards are those out now
                        drawn = self._flight.had
                        self._deferred[index] = _Waiting(waiting.item, drawn)
                    blocked = blocked or isinstance(waiting.item, _AFTER_THE_CARDS) and \
                        self._flight.in_flight(drawn)
                    if blocked:
                        continue
                del self._deferred[index]
                self._handle_now(waiting.item, drawn)
                self._pair()
                break
            else:
                return

    def _measure_lag(self, item: TableInput) -> None:
        """A sighting says when its frame was grabbed: the camera's lag. Past
        ``max_camera_lag_s`` an alarm; while behind, only a landing that reads as the very shoe
        card is taken as its landing (see :meth:`_pair`)."""
        seen_at = getattr(item, "seen_at", None)
        if seen_at is None or not self.has_camera:
            return
        self.camera_lag_s = lag = max(0.0, self._now - seen_at)
        if lag > self.max_camera_lag_s and not self._camera_behind:
            self._camera_behind = True
            self._alarm(AlarmKind.CAMERA_BEHIND, (
                f"the camera's sightings arrive {lag * 1000:.0f} ms after their frames (limit "
                f"{self.max_camera_lag_s * 1000:.0f} ms): the table asks where a card went "
                "rather than take a late sighting for it"))
        elif lag <= self.max_camera_lag_s * 0.8 and self._camera_behind:
            self._camera_behind = False
            self._resolve(AlarmKind.CAMERA_BEHIND)

    def tick(self, now: float, at: str | None = None) -> None:
        """Let waits expire: shoe cards the camera never saw, landings the shoe never reported."""
        self._now, self._session.at = now, at
        changed = False
        while self._question is None and self._expire(now):
            changed = True  # what expired may let a waiting input act, and it more waits
        if changed:
            self._settle_if_done()
            self.updates += 1

    def _expire(self, now: float) -> bool:
        """One pass over the waits (every one stands still while the dealer is asked); True when
        something changed."""
        waiting = len(self._flight.shoe)
        self._pair()
        changed = len(self._flight.shoe) != waiting
        while self._question is None and self._flight.shoe and \
                now - self._flight.shoe[0].since >= self.camera_wait_s and \
                self._placeable(self._flight.shoe[0]):
            pending = self._flight.shoe.popleft()
            changed = True
            if pending.rejected or pending.shoe is None:
                continue
            self._commit_shoe_card(pending.shoe)
            if self._question is not None:
                break  # the dealer is asked where it went; the other waits stand still
            self._alarm(
                AlarmKind.CAMERA_MISSED,
                f"the camera did not see {pending.shoe.card.code} land; recorded from the "
                "shoe where the rules put it (no other play could have taken it there)",
            )
        while self._question is None and self._flight.felt and \
                now - self._flight.felt[0].since >= self.shoe_wait_s and \
                not (self._flight.shoe and not self._placeable(self._flight.shoe[0])):
            # (a landing does not expire while the shoe cards it may pair with wait their turn)
            pending = self._flight.felt.popleft()
            changed = True
            assert pending.felt is not None
            if self.mode is Mode.CAMERA_ONLY:
                self._commit_landing(pending)
                continue
            shown = pending.felt.card.code if pending.felt.card else "a card"
            self._alarm(
                AlarmKind.NOT_FROM_SHOE,
                f"{shown} appeared at {place_words(pending.felt.spot)} but never left the shoe: "
                "not recorded; call the floor",
            )
        if changed:
            self._release()
        return changed

    # ------------------------------------------------------------------ shoe

    def _on_shoe_card(self, item: ShoeCard) -> None:
        card = item.card
        if self._awaiting_shoe:
            # The shoe is resending cards the camera already recorded while the link was down.
            seen = self._awaiting_shoe.popleft()
            self._pack.take(card)
            if seen is not None and seen != card:
                self._alarm(
                    AlarmKind.SWITCHED_CARD,
                    f"the shoe dealt {card.code} but the camera recorded {seen.code} while the "
                    "shoe link was down: a switched card; call the floor",
                )
            return
        rejected = not self._accept_from_shoe(card)
        if self.mode is Mode.SHOE_AND_CAMERA:
            self._flight.add_shoe(item, self._now, rejected)
            self._pair()
        elif not rejected:
            self._commit_shoe_card(item)

    def _accept_from_shoe(self, card: Card) -> bool:
        """Count a card out of the shoe; False (with its alarm) if it cannot be in this game."""
        breach = self._pack.take(card)
        if breach is not None and breach.pip_ten:
            self._alarm(
                AlarmKind.PIP_TEN,
                f"{card.code} left the shoe: there are no tens in a Spanish shoe; "
                "not recorded; call the floor",
            )
            return False
        if breach is not None:
            self._alarm(
                AlarmKind.BEYOND_COMPOSITION,
                f"{card.code} is copy {breach.copy} out of this shoe, but "
                f"{self.rules.decks} decks hold {breach.held}: a foreign card or a "
                "misread; not recorded; call the floor",
            )
            return False
        return True

    def _on_shoe_burn(self, item: ShoeBurn) -> None:
        if item.card is not None and not item.card.is_pip_ten:
            self._pack.take(item.card)

    def _on_shoe_link(self, item: ShoeLink) -> None:
        was = self.shoe_up
        self.shoe_up = item.up
        if item.up:
            self._resolve(AlarmKind.SHOE_LINK_DOWN)
        elif was or self.has_shoe:
            carry_on = (
                "reading cards from the camera until it reconnects"
                if self._camera_trusted()
                else "stop dealing until it reconnects (cards drawn meanwhile arrive then)"
            )
            detail = item.detail or "no detail"
            self._alarm(AlarmKind.SHOE_LINK_DOWN, f"shoe link down ({detail}): {carry_on}")
            # Landings waiting for a shoe card are now read from the camera alone.
            while self._flight.felt:
                pending = self._flight.felt.popleft()
                assert pending.felt is not None
                if self.mode is Mode.CAMERA_ONLY:
                    self._commit_landing(pending)

    def _on_shoe_problem(self, item: ShoeProblem) -> None:
        self._alarm(AlarmKind.SHOE_PROBLEM, item.text)

    def _on_new_shoe(self, item: NewShoe) -> None:
        if item.touched:
            self._alarm(AlarmKind.STAFF, f"dealer {self.dealer} touched New shoe: a freshly "
                        "shuffled pack; the composition count starts again", resolved=True)
        self._pack.clear()
        self._awaiting_shoe.clear()
        if item.decks and item.decks != self.rules.decks:
            self._alarm(
                AlarmKind.SHOE_PROBLEM,
                f"the shoe reports {item.decks} decks but the table's rules say "
                f"{self.rules.decks}",
            )

    # ------------------------------------------------------------------ camera

    def _camera_trusted(self) -> bool:
        return self.has_camera and self.camera_up and not self.camera_moved

    def _on_felt_card(self, item: FeltCard) -> None:
        if not self._camera_trusted():
            return
        if self._late_sighting(item):
            return
        if item.card is None and item.spot.is_dealer and self.mode is not Mode.CAMERA_ONLY:
            return  # the hole card lying face down: the shoe has already said what it is
        if item.card is not None and self._stray_cards[item.card] > 0 and item.spot.is_dealer \
                and self._fold is not None and not self._fold.engine.dealing_started:
            self._stray_cards[item.card] -= 1  # a card out of the shoe in no round, seen landing
            return
        if self.mode is Mode.SHOE_AND_CAMERA or self._flight.shoe:
            self._flight.add_felt(item, self._now)
            self._pair()
        else:
            self._commit_from_camera(item)

    def _late_sighting(self, item: FeltCard) -> bool:
        """The camera's sighting of a card already placed without one (it came after the wait,
        or after the dealer's answer): checked against its place, not taken as a new card
        (True); see :meth:`CardsInFlight.late_sighting`."""
        if item.card is None:
            return False
        verdict, misplaced = self._flight.late_sighting(item.card, item.spot, self._now)
        if misplaced is not None:
            card, target = misplaced
            self._alarm(AlarmKind.MISPLACED, (
                f"{card.code} was recorded at {target}, but the camera saw it (late) at "
                f"{place_words(item.spot)}: check the felt; call the floor"))
        return verdict is not LateSighting.NEW

    def _unsighted(self, card: Card) -> int:
        """How many cards of this code are out of the shoe with no sighting taken for them: a
        sighting of the code is surely one card's only where this is 1."""
        question = self._question
        asked = question is not None and question.held.card == card and \
            question.held.landing is None
        return asked + self._flight.unsighted(card, self._now)

    def _infer_hidden_hole(self) -> None:
        """Camera only: the hole card lies face down, with no index for the camera to see; once
        the game moves on past it (a card at a seat, a split, a decision) it was dealt."""
        if self.mode is Mode.CAMERA_ONLY and self._hole_card_due():
            self._record_hidden_hole()

    def _record_hidden_hole(self) -> None:
        """The hole card lies face down, read by no reader: record that it was dealt (the shoe's
        resend, if its link is down, is checked against that)."""
        if self.has_shoe:
            self._awaiting_shoe.append(None)
        self._commit(None, DEALER_SPOT, False, face_down=True)

    def _commit_from_camera(self, felt: FeltCard) -> None:
        if felt.card is not None and self._entered_unseen[(felt.card, felt.spot.seat)] > 0:
            self._entered_unseen[(felt.card, felt.spot.seat)] -= 1  # entered there, read at last
            return
        if not felt.spot.is_dealer:
            self._infer_hidden_hole()
        face_down = felt.card is None and felt.spot.is_dealer and self._hole_card_due()
        if felt.card is None and not face_down:
            self._alarm(
                AlarmKind.UNREADABLE,
                f"the camera cannot read the card at {place_words(felt.spot)}: enter it or call "
                "the floor",
            )
            return
        if felt.card is not None and not self._accept_unshod(felt.card, "the camera sees"):
            return
        if self.has_shoe:
            self._awaiting_shoe.append(felt.card)
        self._commit(felt.card, felt.spot, felt.sideways, face_down=face_down)

    def _accept_unshod(self, card: Card, who: str) -> bool:
        """A card the shoe did not deal (``who``: "the camera sees", "the dealer keyed"): no
        pip ten, and (without a shoe to count them) no more copies than the decks hold."""
        if card.is_pip_ten:
            self._alarm(
                AlarmKind.PIP_TEN,
                f"{who} {card.code}: there are no tens in a Spanish game; "
                "not recorded; call the floor",
            )
            return False
        if self.has_shoe:
            return True  # counted when the shoe resends it
        breach = self._pack.take(card)
        if breach is not None:
            self._alarm(
                AlarmKind.BEYOND_COMPOSITION,
                f"{card.code} is copy {breach.copy} since the shuffle, but "
                f"{self.rules.decks} decks hold {breach.held}; not recorded",
            )
            return False
        return True

    def _await_reveal(self, card: Card) -> None:
        """The face-down hole card turned over while the shoe's link is down: the shoe's resend
        of it is checked against it, in the place its face-down record holds (not as one card
        more, which would take the shoe's next card for a resend)."""
        if None in self._awaiting_shoe:
            self._awaiting_shoe[self._awaiting_shoe.index(None)] = card

    def _hole_card_due(self) -> bool:
        if self._fold is None or self._fold.ended:
            return False
        engine = self._fold.engine
        target = engine.next_card_target()
        return target is not None and target.is_dealer and len(engine.dealer_cards()) == 1

    def _take_hole_card(self) -> None:
        """The next shoe card is the hole card: the camera cannot read a face-down card, so it is
        recorded from the shoe without waiting for a landing."""
        while self._flight.shoe and self._hole_card_due() and self._question is None and \
                self._placeable(self._flight.shoe[0]):
            pending = self._flight.shoe.popleft()
            if not pending.rejected and pending.shoe is not None:
                self._commit_shoe_card(pending.shoe)

    def _pair(self, force: bool = False) -> None:
        """Place the shoe cards whose landings the camera reported (see
        :meth:`CardsInFlight.next_match`: a landing of another code only after
        ``mismatch_wait_s``, or at once with ``force``, when the game moves on, with the
        switched-card alarm). Nothing pairs while a question is open, nor a shoe card drawn
        after an input yet to act."""
        if self._question is not None:
            return
        self._take_hole_card()
        while self._question is None:
            match = self._flight.next_match(
                self._now, force=force, behind=self._camera_behind,
                mismatch_wait_s=self.mismatch_wait_s,
                sole=self._flight.sole_unsighted(self._now), placeable=self._placeable)
            if match is None:
                return
            shoe, felt = match.shoe, match.felt
            if match.kind is MatchKind.STRAY:
                self._alarm(AlarmKind.ILLEGAL_ACTION, (
                    f"{shoe.card.code} was drawn to the dealer after the last round settled, "
                    "before this round's first bet: in no round; not recorded"))
            elif match.kind is MatchKind.SWITCHED:
                assert felt is not None and felt.card is not None
                self._alarm(
                    AlarmKind.SWITCHED_CARD,
                    f"the shoe dealt {shoe.card.code} but {felt.card.code} is on the felt at "
                    f"{place_words(felt.spot)}: recorded as {shoe.card.code}; call the floor",
                )
                self._commit_shoe_card(shoe)  # another card's sighting: no sure place
            elif match.kind is MatchKind.UNSEEN:
                self._commit_shoe_card(shoe)
            elif match.kind is MatchKind.LANDED:
                assert felt is not None
                self._commit_shoe_card(shoe, felt.spot, felt.sideways)
                self._take_hole_card()

    def _paired_or_asked(self, item: TableInput) -> bool:
        """Pair what can be paired before ``item`` acts (the game moves on); True when that
        opened a question: ``item`` then waits, first in line, for the answer."""
        self._pair(force=True)
        if self._question is None:
            return False
        self._deferred.appendleft(_Waiting(item, self._acting_drawn))
        return True

    def _on_felt_stacks(self, item: FeltStacks) -> None:
        if not self._camera_trusted() or not self.round_open:
            return
        if self._paired_or_asked(item):
            return
        self._infer_hidden_hole()
        assert self._fold is not None
        engine = self._fold.engine
        hands = engine.hands(item.seat)
        if not hands or item.stacks <= len(hands):
            return
        acting = engine.acting()
        splits_now = acting is not None and acting[0] == item.seat and \
            item.from_stack in (None, acting[1]) and Action.SPLIT in engine.legal_actions()
        if not splits_now and self._placed_unseen_first(item):
            return
        # Dividing a stack at a later seat or hand means every hand before it stood.
        if not self._stand_until(CardTarget(item.seat, item.from_stack or 0), "camera"):
            return
        acting = engine.acting()
        if acting is None or acting[0] != item.seat:
            self._alarm(
                AlarmKind.ILLEGAL_ACTION,
                f"{item.stacks} stacks seen at seat {item.seat}, but "
                + ("no hand is in play" if acting is None else f"seat {acting[0]} is to act"),
            )
            return
        self._apply(PlayerAction(item.seat, Action.SPLIT, hand=acting[1], by="camera"))

    def _placed_unseen_first(self, item: TableInput) -> bool:
        """``item`` says hands before a place stood, but shoe cards drawn before the camera saw
        it wait for their landing, and may be those hands' cards: each is placed first as
        unseen. True when that opened a question: ``item`` then waits, first in line."""
        while self._flight.shoe and self._question is None and \
                self._placeable(self._flight.shoe[0]):
            pending = self._flight.shoe.popleft()
            if not pending.rejected and pending.shoe is not None:
                self._commit_shoe_card(pending.shoe)
        if self._question is None:
            return False
        self._deferred.appendleft(_Waiting(item, self._acting_drawn))
        return True

    def _on_hole_card(self, item: HoleCardShown) -> None:
        if not self._camera_trusted() or self._fold is None:
            return
        if self._paired_or_asked(item):
            return
        engine = self._fold.engine
        if self._fold.ended:
            self._check_hole(item.card, self._fold.settlement)
            return
        if not engine.deal_complete:
            hidden_hole = self.mode is Mode.CAMERA_ONLY and self._hole_card_due()
            if item.card is None or not hidden_hole:
                self._alarm(
                    AlarmKind.ILLEGAL_ACTION, "the hole card was turned before the deal ended"
                )
                return
            # Camera only: the face-down hole card was never seen until now, turned over.
            if not self._accept_unshod(item.card, "the camera sees"):
                return
            if self.has_shoe:
                self._awaiting_shoe.append(item.card)
            self._commit(item.card, DEALER_SPOT, False)
            self._stand_until(None, "camera")
            return
        dealer_cards = engine.dealer_cards()
        if len(dealer_cards) >= 2 and dealer_cards[1] is None:
            # A face-down hole card (camera only): reveal first, so a dealer blackjack found
            # at the peek ends the round before anyone is taken to have stood.
            if item.card is None:
                self._alarm(AlarmKind.UNREADABLE, "the camera cannot read the dealer's hole card")
                return
            if not self._accept_unshod(item.card, "the camera sees"):
                return
            self._await_reveal(item.card)
            if not self._apply(Reveal(item.card)):
                return
        elif item.card is not None and len(dealer_cards) >= 2 and dealer_cards[1] != item.card:
            dealt = dealer_cards[1]
            self._alarm(
                AlarmKind.SWITCHED_CARD,
                f"the dealer's hole card shows {item.card.code} but the shoe dealt "
                f"{dealt.code if dealt else 'it face down'}: call the floor",
            )
        elif item.card is not None and self._entered_unseen[(item.card, None)] > 0:
            self._entered_unseen[(item.card, None)] -= 1  # the hole card keyed, read at last
        # Turning the hole card ends the players' turn: every hand still deciding stood.
        self._stand_until(None, "camera")

    def _check_hole(self, card: Card | None, settlement: Settlement | None) -> None:
        """The hole card turned after the round closed (a dealer blackjack found at the peek)."""
        if card is None or settlement is None:
            return
        cards = settlement.dealer.cards
        if len(cards) >= 2 and cards[1] != card.code:
            self._alarm(
                AlarmKind.SWITCHED_CARD,
                f"the dealer's hole card shows {card.code} but {cards[1]} was dealt",
            )

    def _on_felt_swap(self, item: FeltSwap) -> None:
        if not self._camera_trusted():
            return
        if (item.previous, item.card, item.spot.seat) in self._corrections:
            entered = (item.card, item.spot.seat)
            if self._entered_unseen[entered] > 0:
                self._entered_unseen[entered] -= 1  # read at last as the dealer corrected it
            return
        self._alarm(
            AlarmKind.SWITCHED_CARD,
            f"the card at {place_words(item.spot)} changed from {item.previous.code} to "
            f"{item.card.code} where it lies: a switched card; call the floor",
        )

    def _on_camera_link(self, item: CameraLink) -> None:
        self.camera_up = item.up
        if item.up:
            self.camera_moved = False
            self._resolve(AlarmKind.CAMERA_LOST)
            self._resolve(AlarmKind.CAMERA_MOVED)
            return
        self._alarm(
            AlarmKind.CAMERA_LOST,
            f"camera feed lost ({item.detail or 'no detail'}): enter stand, double and split by "
            "touch until it returns",
        )
        self._flush_pending_shoe()

    def _on_camera_moved(self, item: CameraMoved) -> None:
        self.camera_moved = True
        self._alarm(
            AlarmKind.CAMERA_MOVED,
            f"the camera moved ({item.detail}): landing spots ignored until it is recalibrated; "
            "enter stand, double and split by touch",
        )
        self._flush_pending_shoe()

    def _on_camera_focus(self, item: CameraFocus) -> None:
        if item.sharp:
            self._resolve(AlarmKind.CAMERA_SOFT)
            return
        self._alarm(
            AlarmKind.CAMERA_SOFT,
            f"the camera's view is soft ({item.detail}): it will miss more cards, each one an "
            "alarm; call the technician to focus it or clean its lens",
        )

    def _on_floor_lag(self, item: FloorLag) -> None:
        """The room's lag as the forwarder sees it: shown; past its bound, an alarm (one for a
        spell behind), resolved once the table has caught up under it."""
        was_behind = self.floor is not None and self.floor.behind
        self.floor = item
        if item.behind and not was_behind:
            self._alarm(AlarmKind.FLOOR_BEHIND, (
                f"the surveillance room is {item.records} record(s), {item.seconds:.0f} s behind"
                f" this table ({item.detail or 'the floor broker is slow'}): play goes on and "
                "the table keeps recording; call the technician"))
        elif not item.behind and was_behind:
            self._resolve(AlarmKind.FLOOR_BEHIND)

    def _on_recording_failed(self, item: RecordingFailed) -> None:
        self._alarm(AlarmKind.RECORDING_FAILED, f"{item.detail}: call the technician")

    def _record(self, write: Callable[[], None]) -> None:
        """Hand something to the recorder. A write that fails (a full disk, the recording folder
        gone) is an alarm and play goes on: the round is settled and shown, and the recorders
        keep what they could not write (the store's thread goes on with the next record).
        One alarm for a run of failures; another only after a write has worked again."""
        try:
            write()
        except Exception as error:  # whatever a recorder raises, the table must not stop
            if not self._recording_fails:
                self._recording_fails = True  # also stops the alarm's own write re-alarming
                self._on_recording_failed(RecordingFailed(str(error)))
        else:
            self._recording_fails = False

    def _commit_landing(self, pending: Pending) -> None:
        """A landing read from the camera alone, the shoe's card for it never come; one marked
        stray (seen before this round's first bet) is in no round."""
        assert pending.felt is not None
        if pending.stray:
            shown = pending.felt.card.code if pending.felt.card else "a card"
            self._alarm(AlarmKind.ILLEGAL_ACTION, (
                f"{shown} was seen at the dealer's after the last round settled, before this "
                "round's first bet: in no round; not recorded"))
            return
        self._commit_from_camera(pending.felt)

    def _drop_strays(self) -> None:
        """At a new round's first bet: a card out of the shoe since the last round ended (a
        dealer's draw out of habit) belongs to no round: its alarm now, before it could pair into
        this one, and the camera's sighting of it at the dealer's is let pass until this round's
        first card; a sighting there that came first waits, marked, for its shoe card."""
        self._stray_cards.clear()
        while self._flight.shoe and self._placeable(self._flight.shoe[0]):
            pending = self._flight.shoe.popleft()
            if not pending.rejected and pending.shoe is not None:
                self._commit_shoe_card(pending.shoe)  # refused, with its alarm: no round is open
                self._stray_cards[pending.shoe.card] += 1
        self._flight.felt = deque(
            replace(p, stray=True) for p in self._flight.felt
            if p.felt is not None and p.felt.spot.is_dealer)

    def _flush_pending_shoe(self) -> None:
        """Shoe cards waiting for a landing the camera can no longer report: commit them now
        (the first the dealer is asked about stops the rest, which wait for the answer)."""
        while self._flight.shoe and self._question is None and \
                self._placeable(self._flight.shoe[0]):
            pending = self._flight.shoe.popleft()
            if not pending.rejected and pending.shoe is not None:
                self._commit_shoe_card(pending.shoe)
        self._flight.felt.clear()

    # ------------------------------------------------------------------ dealer

    def _on_bet(self, item: PlaceBet) -> None:
        if self._peek_pending():
            self._alarm(AlarmKind.BET_REFUSED, f"seat {item.seat}: bets are closed, insurance is "
                        f"open in round {self.round_id}: close insurance first")
            return
        if self._fold is not None and not self._fold.ended:
            engine = self._fold.engine
            if engine.dealing_started:
                if not self._close_round(quiet=True):
                    self._alarm(
                        AlarmKind.BET_REFUSED,
                        f"seat {item.seat}: bets are closed, round {self.round_id} is still "
                        f"in play ({engine.describe()})",
                    )
                    return
        if self._fold is None or self._fold.ended:
            self._drop_strays()
            self._start_round()
        try:
            self._apply_or_raise(Bet(item.seat, item.amount, item.wager, item.player, "dealer"))
        except (RoundError, EventError) as error:
            self._alarm(AlarmKind.BET_REFUSED, str(error))

    def _on_decide(self, item: Decide) -> None:
        if self._paired_or_asked(item):
            return
        if not self.round_open:
            self._alarm(
                AlarmKind.ILLEGAL_ACTION,
                f"seat {item.seat}: {item.action.value} entered but no round is in play",
            )
            return
        self._infer_hidden_hole()
        acting = self._fold.engine.acting() if self._fold else None
        hand = item.hand or 0
        if acting is not None and self._camera_trusted() and (item.seat, hand) > acting:
            # With a camera watching, a stand leaves no trace until the game moves on: a
            # decision touched for a later hand means every hand before it stood.
            if not self._stand_until(CardTarget(item.seat, hand), "dealer"):
                return
        self._apply(PlayerAction(item.seat, item.action, item.amount, item.hand, "dealer"))

    def _on_key_card(self, item: KeyCard) -> None:
        """A card no reader saw, keyed by the dealer: refused while the shoe reads (it deals
        every card), else recorded where it lies (as a camera landing there would be) or, with
        no place given, where the next card is due; marked keyed, with an alarm."""
        code, spot = item.card.code, item.spot
        if self.has_shoe and self.shoe_up:
            self._alarm(AlarmKind.ILLEGAL_ACTION, f"{code} keyed while the shoe is reading: the "
                        "shoe deals every card; not recorded")
            return
        if self._paired_or_asked(item):
            return
        if not self.round_open:
            self._alarm(AlarmKind.ILLEGAL_ACTION,
                        f"{code} keyed but no round is in play; not recorded")
            return
        to_dealer = spot is not None and spot.is_dealer
        if not to_dealer and self._hole_card_due():  # with no reader at all, too
            self._record_hidden_hole()
        counted_before = self._pack.out()  # _accept_unshod counts it out of the pack
        if not self._accept_unshod(item.card, "the dealer keyed"):
            return
        assert self._fold is not None
        dealer_cards = self._fold.engine.dealer_cards()
        revealed = to_dealer and len(dealer_cards) >= 2 and dealer_cards[1] is None
        went: CardTarget | None = None
        if revealed:
            # The face-down hole card turned over, as the camera's sighting of it would be.
            if self._apply(Reveal(item.card, keyed=True)):
                went = DEALER
                self._await_reveal(item.card)
                self._stand_until(None, "dealer")
        else:
            asked_before = self._question
            went = self._commit(item.card, spot, False, keyed=True)
            if went is None and self._question is not asked_before and self._question:
                # the dealer is asked which play it was: recorded with the answer
                went = spot or self._question.choices[0].target
        if went is None:  # refused (an alarm says why): not out of the pack after all
            self._pack.restore(counted_before)
            return
        if self.has_shoe and not revealed:
            self._awaiting_shoe.append(item.card)  # checked when the shoe resends its cards
        self._entered_unseen[(item.card, went.seat if spot is None else spot.seat)] += 1
        self._alarm(AlarmKind.KEYED_CARD, f"the dealer keyed {code}"
                    + ("" if spot is None else f" at {place_words(spot)}")
                    + ": no reader saw it; recorded as keyed")

    def _on_correct_card(self, item: CorrectCard) -> None:
        """A correction may answer what a question asks (a misread card made the next one fit
        no play): the question is withdrawn, the correction made (or refused), and its card
        placed again, on the corrected round."""
        question, self._question = self._question, None
        try:
            self._correct(item)
        finally:
            if question is not None:
                held = question.held
                self._commit(held.card, held.landing, held.sideways, held.face_down,
                             held.origin, held.keyed)

    def _correct(self, item: CorrectCard) -> None:
        """The dealer corrected the latest card recorded at ``item.at`` (a misread, or a card
        keyed wrong), in a hand-held game (no shoe fitted: a shoe's card stands, and while its
        link is down the cards it resends are checked against the recorded ones). The round is
        replayed with the card corrected and marked so, with an alarm; refused, unchanged, when
        the round as played after the card would not hold with it."""
        code, at = item.card.code, "the dealer" if item.at.is_dealer else str(item.at)
        if self.has_shoe:
            self._alarm(AlarmKind.ILLEGAL_ACTION, f"{code} entered as a correction at a table "
                        "with a shoe: the shoe's card stands; call the floor")
            return
        if self._paired_or_asked(item):
            return
        if self._fold is None or self._fold.ended:
            self._alarm(AlarmKind.ILLEGAL_ACTION,
                        f"{code} entered as a correction but no round is in play; not recorded")
            return
        lying = face_up_lines(self._fold.start, self._lines, item.at,
                              by_hand=item.index is not None)
        if not lying or (item.index is not None and item.index >= len(lying)):
            held = f"{len(lying)} card{'s' if len(lying) != 1 else ''} face up" if lying else \
                "no card"
            which = "" if item.index is None else f" of card {item.index + 1}"
            self._alarm(AlarmKind.ILLEGAL_ACTION, f"{code} entered as a correction{which} at"
                        f" {at}, but {at} holds {held}; not corrected")
            return
        index = lying[-1 if item.index is None else item.index]
        event = parse_event(json.loads(self._lines[index]))
        assert isinstance(event, CardDealt | Reveal)
        old = event.card
        assert old is not None
        if item.was is not None and old != item.was:
            self._alarm(AlarmKind.ILLEGAL_ACTION, (
                f"{code} entered as a correction of {item.was.code} at {at}, but that card there "
                f"is now {old.code} (the table moved on since the screen showed it); not "
                "corrected: look again"))
            return
        if old == item.card:
            self._alarm(AlarmKind.ILLEGAL_ACTION, f"the card at {at} is already {code}")
            return
        counted_before = self._pack.out()
        self._pack.put_back(old)  # out of the pack: the corrected card, not the misread one
        if not self._accept_unshod(item.card, "the dealer corrected a card to"):
            self._pack.restore(counted_before)
            return
        first = event.corrected or old
        lines = list(self._lines)
        lines[index] = dumps_event(replace(
            event, card=item.card, corrected=None if first == item.card else first,
            corrected_by=None if first == item.card else item.supervisor))
        try:
            fold, lines, undue = replay_corrected(self._fold.start, lines)
        except ReplayError as error:
            self._pack.restore(counted_before)
            self._alarm(AlarmKind.ILLEGAL_ACTION, (
                f"{old.code} at {at} cannot be corrected to {code}: the round as played after it"
                f" does not hold with {code} (at line {error.line} of the round log: "
                f"{error.reason}); not corrected: void the round and call the floor"))
            return
        self._session.replace(fold, lines)
        seat = item.at.seat
        if self._entered_unseen[(old, seat)] > 0 and event.keyed:
            # A keyed card the camera has not read: it may yet, as corrected. (A card the camera
            # read and the dealer corrected comes back as a changed reading, a FeltSwap; its
            # line is never keyed, however often corrected.)
            self._entered_unseen[(old, seat)] -= 1
            self._entered_unseen[(item.card, seat)] += 1
        self._corrections.update({(old, item.card, item.at.seat),
                                  (first, item.card, item.at.seat)})
        dropped = "" if not undue else (
            f"; {' '.join(c.code for c in undue)}, drawn by the dealer, "
            + ("is" if len(undue) == 1 else "are") + " no longer due (the dealer stands, or no "
            "result depends on the dealer): not recorded")
        self._alarm(AlarmKind.CORRECTED_CARD, f"the dealer {self.dealer} corrected {old.code} at"
                    f" {at} to {code}, approved by {_supervisor(item.supervisor)}: recorded as "
                    f"corrected{dropped}")

    def _on_insure(self, item: Insure) -> None:
        if not self.round_open:
            self._alarm(AlarmKind.BET_REFUSED, f"seat {item.seat}: no round is in play")
            return
        if self._insurance_closed:
            self._alarm(AlarmKind.BET_REFUSED, f"seat {item.seat}: the dealer has closed "
                        "insurance; not taken")
            return
        self._infer_hidden_hole()
        self._apply(Insurance(item.seat, item.amount, "dealer"))

    def _on_close_insurance(self, item: CloseInsurance) -> None:
        """Only a peek the screen is keeping hidden is closed by a touch (a game whose hole card
        lies unread closes insurance at its first decision); otherwise nothing to do."""
        if self._paired_or_asked(item):  # the hole card the shoe dealt, before the touch
            return
        self._play_moved_on()

    def _play_moved_on(self) -> None:
        """A decision, a card after the deal or the hole card turned while the screen keeps the
        peek hidden: the dealer has moved past insurance, which closes, as if touched (the
        alarm such an input may raise could otherwise name a dealer blackjack)."""
        if self._peek_pending():
            self._insurance_closed = True

    def _peek_pending(self) -> bool:
        """Insurance is open and the dealer has not closed it, though the shoe has read the hole
        card: the screen must not show what the peek will find (a dealer blackjack, or that
        there is none) before the dealer has taken every insurance bet."""
        engine = None if self._fold is None or self._fold.ended else self._fold.engine
        return (self.has_shoe and engine is not None and engine.insurance_open
                and engine.hole_card_known and not self._insurance_closed)

    def _on_finish(self, item: FinishRound) -> None:
        if self._paired_or_asked(item):
            return
        if self._peek_pending():  # closing now would show what the peek finds
            self._alarm(AlarmKind.ILLEGAL_ACTION, "the round cannot close while insurance is "
                        "open: take the insurance bets, then Close insurance")
            return
        if self.round_open:
            self._close_round(quiet=False)

    def _on_void(self, item: VoidRound) -> None:
        if self._fold is None or self._fold.ended:
            return
        reason = f"{item.reason} (voided by {_supervisor(item.supervisor)}; dealer " \
            f"{self.dealer or 'none signed in'})"
        round_id, _ = self._session.void(reason)
        self._alarm(AlarmKind.ROUND_VOIDED, f"round {round_id} voided: {reason}")
        self._question = None  # its card is in no round now; what waited behind it goes on
        if self.resumed is not None:
            self.resumed = None
            self._resolve(AlarmKind.ROUND_RESUMED)

    def _on_round_resumed(self, item: RoundResumed) -> None:
        if not self.round_open:
            return
        self.resumed = item.detail
        self._alarm(AlarmKind.ROUND_RESUMED, f"{item.detail}: check that the felt matches the "
                    "screen, then touch Confirm felt (or void the round)")

    def _on_confirm_felt(self, item: ConfirmFelt) -> None:
        if self.resumed is not None:
            self.resumed = None
            self._resolve(AlarmKind.ROUND_RESUMED)

    def _on_acknowledge(self, item: AcknowledgeAlarm) -> None:
        self._alarms.acknowledge(item.alarm_id)

    # ------------------------------------------------------------------ staff

    def _on_sign_in(self, item: SignIn) -> None:
        """A dealer changes between rounds only: refused while a round is in play."""
        if self.dealer == item.dealer:
            return
        if self.round_open:
            self._alarm(AlarmKind.STAFF, f"{item.dealer} signed in while {self.dealer} deals "
                        f"round {self.round_id}: refused; a dealer changes between rounds")
            return
        before = f" (after {self.dealer})" if self.dealer else ""
        self.dealer = item.dealer
        self._alarm(AlarmKind.STAFF, f"dealer {item.dealer} signed in{before}", resolved=True)

    def _on_sign_out(self, item: SignOut) -> None:
        if self.dealer is None:
            return
        if self.round_open:
            self._alarm(AlarmKind.STAFF, f"{self.dealer} cannot sign out during round "
                        f"{self.round_id}: finish or void it first")
            return
        self._alarm(AlarmKind.STAFF, f"dealer {self.dealer} signed out", resolved=True)
        self.dealer = None

    def _on_staff_refused(self, item: StaffRefused) -> None:
        self._alarm(AlarmKind.STAFF, f"{item.action} refused: {item.why}", resolved=True)

    # ------------------------------------------------------------------ rounds

    def _start_round(self) -> None:
        if self.resumed is not None:  # the dealer went on to a new round: the felt was right
            self.resumed = None
            self._resolve(AlarmKind.ROUND_RESUMED)
        self._session.start(self.dealer)
        self._entered_unseen.clear()
        self._corrections.clear()
        self._flight.placed_unseen.clear()
        self.round_questions = 0
        self._insurance_closed = False

    def _apply_or_raise(self, event: Event) -> CardTarget | None:
        return self._session.apply(event)

    @property
    def _fold(self) -> RoundFold | None:
        return self._session.fold

    @property
    def _lines(self) -> list[str]:
        return self._session.lines

    def _apply(self, event: Event) -> bool:
        """Apply one event to the round; a refusal becomes an alarm (and nothing is recorded)."""
        try:
            self._apply_or_raise(event)
        except (RoundError, EventError) as error:
            self._alarm(AlarmKind.ILLEGAL_ACTION, str(error))
            return False
        return True

    def _stand_until(self, landing: CardTarget | None, by: str) -> bool:
        """Stand every hand in play before ``landing`` (None: before the dealer), as ``by``
        showed."""
        assert self._fold is not None
        engine = self._fold.engine
        while True:
            acting = engine.acting()
            if acting is None or play_order(acting) >= play_order(landing):
                return True
            if engine.next_card_target() is not None:
                self._alarm(
                    AlarmKind.ILLEGAL_ACTION,
                    f"seat {acting[0]} hand {acting[1] + 1} is still owed a card, but the game "
                    f"moved on to {place_words(landing) if landing else 'the dealer'}",
                )
                return False
            if not self._apply(PlayerAction(acting[0], Action.STAND, hand=acting[1], by=by)):
                return False

    def _commit_shoe_card(
        self, shoe: ShoeCard, landing: CardTarget | None = None, sideways: bool = False
    ) -> None:
        """Record a card the shoe dealt, with the shoe's numbering of it, at its arrival."""
        handed, self._session.at = self._session.at, shoe.at or self._session.at
        try:
            self._commit(shoe.card, landing, sideways, origin=shoe.origin)
        finally:
            self._session.at = handed

    def _commit(
        self, card: Card | None, landing: CardTarget | None, sideways: bool,
        face_down: bool = False, origin: ShoeOrigin | None = None, keyed: bool = False,
    ) -> CardTarget | None:
        """Record one card: the decisions that put it where it went (if any), then the card
        itself (with the shoe's numbering of it, when the shoe dealt it, or marked keyed by the
        dealer). Returns where it went; None when it is not recorded (an alarm says why) or not
        yet: the evidence left its play open and the dealer is asked (:attr:`question`)."""
        shown = card.code if card is not None else "a face-down card"
        if self._fold is not None and self._fold.engine.deal_complete:
            self._play_moved_on()  # a card after the deal: a hit, a double, the dealer's draw
        if self._fold is None or self._fold.ended or not self._fold.engine.seats():
            settled = f"round {self.round_id} is settled and " if self._fold is not None and \
                self._fold.ended else ""
            where = place_words(landing) if landing else "the table"
            self._alarm(
                AlarmKind.ILLEGAL_ACTION, f"{shown} dealt at {where} but "
                f"{settled}no bet is placed{' for the next' if settled else ''}; not recorded",
            )
            return None
        engine = self._fold.engine
        if engine.next_card_target() is None and engine.acting() is not None:
            held = HeldCard(card, landing, sideways, face_down, origin, keyed)
            if not self._place(held):
                return None
        return self._deal(card, landing, face_down, origin, keyed)

    def _place(self, held: HeldCard) -> bool:
        """A card arrived while a hand decides: take the decisions its evidence shows, where
        they leave one way to pay; else ask the dealer (False: asked, or refused)."""
        assert self._fold is not None
        landing = held.landing
        left = remaining_readings(card_readings(self._fold.engine, toward=landing),
                                  Evidence(landing, held.sideways))
        reading = settled_reading(left)
        if reading is not None:
            return self._take(reading, "dealer" if held.keyed else
                              "camera" if landing is not None else "shoe")
        readings = left or card_readings(self._fold.engine)
        if not readings:
            self._alarm(AlarmKind.ILLEGAL_ACTION, (
                f"{held.card.code if held.card else 'a card'} dealt but no play can take it "
                f"({self._fold.engine.describe()}); not recorded"))
            return False
        self._ask(held, readings, self._why_open(held, bool(left)))
        return False

    def _why_open(self, held: HeldCard, seen_fits: bool) -> str:
        if held.landing is not None:
            seen = f"the camera saw it land{' sideways' if held.sideways else ''} at " \
                f"{place_words(held.landing)}"
            if not seen_fits:
                return f"{seen}, where no legal play puts it"
            return f"{seen}, which more than one play fits"
        if held.keyed:
            return "the dealer keyed it with no place"
        if self._camera_behind:
            return "the camera is behind: its sighting came too late"
        if self.mode is Mode.SHOE_AND_CAMERA:
            return "the camera did not see it land"
        return "no camera watches the felt and no decision was touched for it"

    def _take(self, reading: Reading, by: str) -> bool:
        """Apply a reading's decisions, in play order, as ``by`` showed."""
        for decision in reading.decisions:
            if not self._apply(PlayerAction(decision.seat, decision.action, hand=decision.hand,
                                            by=by)):
                return False
        return True

    def _deal(self, card: Card | None, landing: CardTarget | None, face_down: bool,
              origin: ShoeOrigin | None, keyed: bool) -> CardTarget | None:
        """Record a card where the rules put it now (no decision pending)."""
        assert self._fold is not None
        engine = self._fold.engine
        shown = card.code if card is not None else "a face-down card"
        target = engine.next_card_target()
        if target is None:
            self._alarm(
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
                self._alarm(
                    AlarmKind.MISPLACED,
                    f"{shown} landed at {place_words(landing)} but is due to {target}: "
                    f"recorded to {target}",
                )
        hole = self._hole_card_due()
        if not self._apply(CardDealt(card, to, face_down, origin, keyed)):
            return None
        self.cards_committed += 1
        if landing is None and card is not None and not hole and \
                self.mode is Mode.SHOE_AND_CAMERA:
            self._flight.placed(card, target, self._now)
        return target

    # ------------------------------------------------------------------ questions

    def _ask(self, held: HeldCard, choices: tuple[Reading, ...], why: str) -> None:
        """Put one question to the dealer: which play put ``held`` where it went."""
        if self._question is not None:  # a card is placed only with no question open
            raise RuntimeError(f"asked about {held} while question {self._question.id} is open")
        self.questions_asked += 1
        self.round_questions += 1
        assert self._fold is not None
        engine = self._fold.engine
        hands = {seat: len(engine.hands(seat)) for seat in engine.seats()}
        labels = tuple(reading_label(r, hands) for r in choices)
        self._question = OpenQuestion(self.questions_asked, self.round_id, held, choices,
                                      labels, question_text(held, choices, labels), why,
                                      self._now)

    def _on_answer(self, item: AnswerQuestion) -> None:
        question = self._question
        if question is None or question.id != item.question:
            open_now = "none is open" if question is None else f"question {question.id} is open"
            self._alarm(AlarmKind.ILLEGAL_ACTION, f"an answer to question {item.question}, but "
                        f"{open_now}; not taken")
            return
        if not 0 <= item.choice < len(question.choices):
            self._alarm(AlarmKind.ILLEGAL_ACTION, (
                f"answer {item.choice} to question {question.id}, which has "
                f"{len(question.choices)} choices; not taken"))
            return
        self._settle_question(item.choice, "dealer")

    def _sighting_answers(self, item: TableInput) -> bool:
        """A late sighting of the card asked about, while its question is open: where it
        leaves one choice, it answers the question; either way it is that card's sighting.
        Not where another card of its code may be the one seen (it waits behind the question)."""
        question = self._question
        assert question is not None
        if not isinstance(item, FeltCard) or item.card is None or not self._camera_trusted() \
                or question.held.card != item.card or question.held.landing is not None \
                or self._unsighted(item.card) > 1:
            return False
        left = remaining_readings(question.choices,
                                  Evidence(item.spot, item.sideways))
        reading = settled_reading(left)
        if reading is not None:
            self._settle_question(question.choices.index(reading), "camera")
        return True

    def _settle_question(self, choice: int, by: str) -> None:
        """Record the question with its answer, then the decisions and the card it chose."""
        question = self._question
        assert question is not None and self._fold is not None
        self._question = None
        held = question.held
        waited = Decimal(str(round(max(0.0, self._now - question.asked_at), 2)))
        dealer = self.dealer if by == "dealer" else None
        self._apply_or_raise(Question(held.card, question.text, question.why, question.labels,
                                      question.labels[choice], by, waited, dealer))
        if self._take(question.choices[choice], by):
            self._deal(held.card, held.landing, held.face_down, held.origin, held.keyed)
        self._alarm(AlarmKind.DEALER_ASKED, (
            f"asked \"{question.text}\" ({question.why}); answered by the {by}"
            f"{f' {dealer}' if dealer else ''} after "
            f"{waited} s: {question.labels[choice]}; round flagged for review"), resolved=True)

    def _settle_if_done(self) -> None:
        """Close the round as soon as nothing more can happen in it, at a table with a shoe; in
        a hand-held game the dealer checks the cards on the felt against the screen (and
        corrects a misread) before touching Finish round."""
        fold = self._fold
        if not self.has_shoe or fold is None or fold.ended or self._flight.shoe or \
                self._flight.felt or self._question is not None:
            return
        engine = fold.engine
        if not engine.dealing_started or engine.acting() is not None or self._peek_pending():
            return  # a seat may still insure (it pays 2:1 on a dealer blackjack)
        if engine.next_card_target() is None:
            self._close_round(quiet=True)

    def _close_round(self, quiet: bool) -> bool:
        try:
            settlement = self._session.close()
        except (RoundError, EventError) as error:
            if not quiet:
                self._alarm(AlarmKind.ILLEGAL_ACTION, f"the round cannot close: {error}")
            return False
        self.last_settlement = settlement
        self.rounds_played += 1
        return True

    # ------------------------------------------------------------------ alarms

    def _alarm(self, kind: AlarmKind, text: str, resolved: bool = False) -> Alarm:
        return self._alarms.raise_alarm(kind, text, self.round_id, self._now, resolved)

    def _resolve(self, kind: AlarmKind) -> None:
        self._alarms.resolve(kind)

    # ------------------------------------------------------------------ screen

    def view(self) -> dict[str, Any]:
        """Everything the dealer's screen shows, as JSON-able data."""
        fold = self._fold
        peek_pending = self._peek_pending()
        engine_view = None if fold is None else round_view(
            fold.engine, self.has_shoe, peek_pending, self._insurance_closed)
        phase = "idle"
        if fold is not None:
            if fold.ended:
                phase = "settled"
            elif not fold.engine.dealing_started:
                phase = "betting"
            elif fold.engine.acting() is not None:
                phase = "playing"
            else:
                phase = "dealing" if not fold.engine.deal_complete else "dealer"
        settlement = None
        if fold is not None and fold.ended and fold.settlement is not None:
            settlement = settlement_view(fold.settlement)
        held = self._disagreements()
        if self.resumed is not None:
            phase, settlement = "resumed", None  # nothing is paid before the felt is checked
        elif peek_pending:
            phase = "insurance"  # what the peek finds is not shown until insurance is closed
        elif phase == "dealer" and fold is not None:
            # The dealer may still draw, but no result depends on it: the payouts are final,
            # and in a hand-held game the round waits for the dealer's check of the cards.
            try:
                settlement = settlement_view(fold.engine.settle())
                phase = "dealer" if self.has_shoe else "check"
            except RoundError:  # still owed: the hole card turned over, say
                settlement = None
        if self._question is not None:
            phase, settlement = "question", None
        elif settlement is not None and held:
            phase, settlement = "hold", None  # no PAY/TAKE while the readers disagree
        return {
            "table": self.table_id,
            "rules": self.rules.name,
            "mode": self.mode.value,
            "devices": {
                "shoe": device_state(self.has_shoe, self.shoe_up, False),
                "camera": device_state(self.has_camera, self.camera_up, self.camera_moved),
            },
            "notes": self.notes,
            "phase": phase,
            "round": engine_view,
            "settlement": settlement,
            "alarms": [a.to_json() for a in self.active_alarms()],
            "alarm_history": [a.to_json() for a in self.alarms[-20:]],
            "rounds_played": self.rounds_played,
            "cards_committed": self.cards_committed,
            "limits": {
                "min": format_money(self.rules.min_bet),
                "max": format_money(self.rules.max_bet),
            },
            "match_offered": self.rules.match_the_dealer is not None,
            "question": None if self._question is None else self._question.to_json(),
            "hold": [a.to_json() for a in held],
            "round_questions": self.round_questions,
            "camera_lag_ms": None if self.camera_lag_s is None or not self.has_camera
            else round(self.camera_lag_s * 1000),
            "floor": None if self.floor is None else {
                "records": self.floor.records, "seconds": round(self.floor.seconds),
                "behind": self.floor.behind, "connected": self.floor.connected},
            "resumed": self.resumed,
            "dealer_id": self.dealer,
            "updates": self.updates,
        }

    def _disagreements(self) -> list[Alarm]:
        """This round's disagreement alarms not yet acknowledged: no PAY/TAKE until each is."""
        return [] if self._fold is None else self._alarms.disagreements(self.round_id)


_HANDLERS: dict[type, Any] = {
    ShoeCard: TableLoop._on_shoe_card,
    ShoeBurn: TableLoop._on_shoe_burn,
    ShoeLink: TableLoop._on_shoe_link,
    ShoeProblem: TableLoop._on_shoe_problem,
    NewShoe: TableLoop._on_new_shoe,
    FeltCard: TableLoop._on_felt_card,
    FeltStacks: TableLoop._on_felt_stacks,
    FeltSwap: TableLoop._on_felt_swap,
    HoleCardShown: TableLoop._on_hole_card,
    CameraLink: TableLoop._on_camera_link,
    CameraMoved: TableLoop._on_camera_moved,
    CameraFocus: TableLoop._on_camera_focus,
    PlaceBet: TableLoop._on_bet,
    Decide: TableLoop._on_decide,
    Insure: TableLoop._on_insure,
    CloseInsurance: TableLoop._on_close_insurance,
    FinishRound: TableLoop._on_finish,
    VoidRound: TableLoop._on_void,
    AcknowledgeAlarm: TableLoop._on_acknowledge,
    KeyCard: TableLoop._on_key_card,
    CorrectCard: TableLoop._on_correct_card,
    AnswerQuestion: TableLoop._on_answer,
    RecordingFailed: TableLoop._on_recording_failed,
    FloorLag: TableLoop._on_floor_lag,
    RoundResumed: TableLoop._on_round_resumed,
    ConfirmFelt: TableLoop._on_confirm_felt,
    SignIn: TableLoop._on_sign_in,
    SignOut: TableLoop._on_sign_out,
    StaffRefused: TableLoop._on_staff_refused,
}


def _supervisor(staff_id: str | None) -> str:
    return "the table" if staff_id is None else f"supervisor {staff_id}"


def _touch_words(item: TableInput) -> str:
    """A touch as the screen names it, for an alarm: "PlaceBet" is "a bet"."""
    return {PlaceBet: "a bet", Decide: "a decision", Insure: "insurance",
            CloseInsurance: "Close insurance", FinishRound: "Finish round", KeyCard: "a card",
            CorrectCard: "a correction", AnswerQuestion: "an answer", ConfirmFelt:
            "Confirm felt", NewShoe: "New shoe"}.get(type(item), type(item).__name__)
