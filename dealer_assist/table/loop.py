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

from collections import Counter
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from dealer_assist.roundlog import (
    Bet,
    Event,
    EventError,
    Insurance,
    PlayerAction,
    RoundFold,
    ShoeOrigin,
    UnreadOrigin,
)
from dealer_assist.rules import (
    Card,
    CardTarget,
    RoundEngine,
    RoundError,
    RuleSet,
    Settlement,
)
from dealer_assist.rules.readings import (
    Reading,
)
from dealer_assist.table import placing, shift
from dealer_assist.table.alarms import Alarm, AlarmBook, AlarmKind
from dealer_assist.table.corrections import correct_card, key_card, supervisor_words
from dealer_assist.table.dispatch import InputQueue, Waiting
from dealer_assist.table.evidence import CameraEvidence
from dealer_assist.table.mode import Mode
from dealer_assist.table.pairing import CAMERA_WAIT_S, MAX_CAMERA_LAG_S, SHOE_WAIT_S, Pending
from dealer_assist.table.questions import HeldCard, OpenQuestion, QuestionDesk
from dealer_assist.table.screen_view import table_view
from dealer_assist.table.session import Recorder, RoundSession
from dealer_assist.table.shoe_cards import ShoeCards
from dealer_assist.table.sources import (
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
    ShoeCaughtUp,
    ShoeHeard,
    ShoeLink,
    ShoeProblem,
    ShoeUnread,
    ShownAfterRestart,
    SignIn,
    SignOut,
    StaffRefused,
    TableInput,
    VoidRound,
)

__all__ = ["ERRORS_KEPT", "Mode", "Recorder", "TableLoop"]

#: Errors a table keeps in memory, the latest: the runner's (inputs the loop raised on: a bug,
#: shown on the screen) and the surveillance store's failed writes (each run of them an alarm).
ERRORS_KEPT = 100


class TableLoop:
    """Folds table inputs into rounds; one instance per table, driven by one thread. Its
    collaborators: ``shoe`` (the shoe's cards and the pack count), ``camera`` (the camera's
    evidence, paired with the shoe's cards), ``questions`` (the dealer's questions),
    ``inputs`` (which input acts when); the round in play is a :class:`RoundSession`."""

    def __init__(
        self,
        rules_spec: Any,
        recorder: Recorder,
        *,
        table_id: str = "T1",
        round_prefix: str = "r",
        has_shoe: bool = True,
        has_camera: bool = True,
        camera_names: bool = True,
        camera_wait_s: float = CAMERA_WAIT_S,
        shoe_wait_s: float = SHOE_WAIT_S,
        shoe_heartbeats: bool = False,
        mismatch_wait_s: float = 0.5,
        max_camera_lag_s: float = MAX_CAMERA_LAG_S,
        notes: dict[str, str] | None = None,
        round_number: int = 0,
        round_fields: dict[str, Any] | None = None,
    ):
        self.rules = RuleSet.from_spec(rules_spec)
        self.rules_spec = rules_spec
        self.recorder = recorder
        self._recording_fails = False  # the last write to the recorder failed
        self.table_id = table_id
        self.round_prefix = round_prefix
        self.has_shoe = has_shoe
        self.has_camera = has_camera
        #: the camera's reading of a card may be the card (False: its models are accepted only
        #: for checking cards against the shoe's: it counts only while the shoe is up, and a
        #: card the shoe could not read is never offered as the camera read it)
        self.camera_names = camera_names
        self.camera_wait_s = camera_wait_s
        self.shoe_wait_s = shoe_wait_s
        #: the shoe sends heartbeats (the dealer-assist protocol): a landing with no shoe card
        #: waits for one sent after it (:class:`ShoeHeard`) or for the link's drop
        self.shoe_heartbeats = shoe_heartbeats
        self.mismatch_wait_s = mismatch_wait_s
        self.max_camera_lag_s = max_camera_lag_s
        self.floor: FloorLag | None = None  # how far the floor's room is behind (None: no floor)
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
            rules_spec, table_id, round_prefix, round_number, round_fields,
            tell=lambda call: self._record(lambda: call(self.recorder)))
        #: why the round in play was rebuilt after a restart, until the dealer confirms the felt
        self.resumed: str | None = None
        self.insurance_closed = False  # by the dealer's touch, this round
        #: the dealer signed in at the screen (None: nobody; no bets, no round)
        self.dealer: str | None = None
        self.now = 0.0
        self.shoe = ShoeCards(self)
        self.camera = CameraEvidence(self)
        self.questions = QuestionDesk(self)
        self.inputs = InputQueue(self)
        #: input dispatch: each input's handler
        self._handlers: dict[type, Callable[[Any], None]] = {
            ShoeCard: self.shoe.on_card,
            ShoeUnread: self.shoe.on_unread,
            ShoeBurn: self.shoe.on_burn,
            ShoeLink: self.shoe.on_link,
            ShoeCaughtUp: self.shoe.on_caught_up,
            ShoeHeard: self.camera.on_shoe_heard,
            ShoeProblem: self.shoe.on_problem,
            NewShoe: self.shoe.on_new_shoe,
            FeltCard: self.camera.on_felt_card,
            FeltStacks: self.camera.on_felt_stacks,
            FeltSwap: self.camera.on_felt_swap,
            HoleCardShown: self.camera.on_hole_card,
            CameraLink: self.camera.on_camera_link,
            CameraMoved: self.camera.on_camera_moved,
            CameraFocus: self.camera.on_camera_focus,
            PlaceBet: self._on_bet,
            Decide: self._on_decide,
            Insure: self._on_insure,
            CloseInsurance: self._on_close_insurance,
            FinishRound: self._on_finish,
            VoidRound: self._on_void,
            AcknowledgeAlarm: self._on_acknowledge,
            KeyCard: lambda item: key_card(self, item),
            CorrectCard: self._on_correct_card,
            AnswerQuestion: self.questions.on_answer,
            RecordingFailed: self._on_recording_failed,
            FloorLag: self._on_floor_lag,
            RoundResumed: self._on_round_resumed,
            ShownAfterRestart: self._on_shown_after_restart,
            ConfirmFelt: self._on_confirm_felt,
            SignIn: lambda item: shift.sign_in(self, item),
            SignOut: lambda item: shift.sign_out(self, item),
            StaffRefused: lambda item: shift.staff_refused(self, item),
        }

    # ------------------------------------------------------------------ state

    @property
    def mode(self) -> Mode:
        shoe_ok = self.has_shoe and self.shoe_up
        camera_ok = self.camera_trusted()
        if shoe_ok and camera_ok:
            return Mode.SHOE_AND_CAMERA
        if shoe_ok:
            return Mode.SHOE_ONLY
        if camera_ok:
            return Mode.CAMERA_ONLY
        return Mode.NO_READER

    def camera_trusted(self) -> bool:
        """The camera's evidence counts: it is up and where it was calibrated, and, where it may
        not name cards (:attr:`camera_names` False), the shoe is up to name them (with the
        shoe down such a camera counts for nothing, as if it were lost)."""
        return self.has_camera and self.camera_up and not self.camera_moved and \
            (self.camera_names or (self.has_shoe and self.shoe_up))

    @property
    def round_id(self) -> str | None:
        return self._session.round_id

    @property
    def round_open(self) -> bool:
        return self._session.open

    @property
    def fold(self) -> RoundFold | None:
        """The round in play (or the last one) folded through the engine; None before the
        first."""
        return self._session.fold

    @property
    def engine(self) -> RoundEngine | None:
        """The round in play's (or the last one's) engine, for its typed queries (``hands``,
        ``dealer_cards``, ``acting``, ``describe``...); None before the first round. Only the
        loop applies events to it."""
        return None if self.fold is None else self.fold.engine

    def round_lines(self) -> list[str]:
        """The round in play (or the last one) as its round log's lines so far."""
        return list(self._session.lines)

    def show_ended_round(self, lines: list[str]) -> None:
        """Show the ended round whose round-log ``lines`` a checkpoint kept, as before the
        restart (see :meth:`RoundSession.show_ended`)."""
        self._session.show_ended(lines)

    def replace_round(self, fold: RoundFold, lines: list[str]) -> None:
        """The round in play replayed afresh (a corrected card)."""
        self._session.replace(fold, lines)

    @property
    def alarms(self) -> list[Alarm]:
        """This table's alarms: every active one, and the latest done ones."""
        return self._alarms.alarms

    @property
    def alarms_raised(self) -> int:
        """The number of the last alarm raised (alarms are numbered from 1)."""
        return self._alarms.raised

    def named_acknowledgement(self, item: AcknowledgeAlarm) -> AcknowledgeAlarm:
        """``item`` with the kind, text, round and time of the alarm it names, as kept now
        (unchanged where no alarm kept has its number)."""
        alarm = self._alarms.get(item.alarm_id)
        return item if alarm is None else replace(
            item, kind=alarm.kind.name, text=alarm.text, round_id=alarm.round_id,
            raised_at=alarm.at)

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
        return self.shoe.pack.out()

    @property
    def at_rest(self) -> bool:
        """No round open, nothing waiting to pair, and no disagreement holding the last
        round's payouts: a safe point to checkpoint the journal (a restart then shows the
        round's payouts again, or nothing)."""
        return not (self.round_open or self.camera.waiting or self.shoe.awaiting
                    or self.shoe.resent or self.question or self.inputs.deferred
                    or self.disagreements())

    @property
    def question(self) -> OpenQuestion | None:
        """The question waiting for the dealer's answer (None: none)."""
        return self.questions.open

    @property
    def questions_asked(self) -> int:
        """Questions asked since the table started."""
        return self.questions.asked

    @property
    def round_questions(self) -> int:
        """Questions asked this round."""
        return self.questions.round_asked

    @property
    def camera_lag_s(self) -> float | None:
        """The latest sighting's lag: when it came less when its frame was grabbed."""
        return self.camera.lag_s

    # ------------------------------------------------------------------ inputs

    def handle(self, item: TableInput, now: float, at: str | None = None) -> None:
        """Apply one input; never raises for bad table data (it raises alarms instead). While a
        question is open, inputs other than the answer wait behind it (see
        :data:`~dealer_assist.table.dispatch.PASS_A_QUESTION`); a touch waits for the shoe
        cards drawn before it to land. ``at``: when it was handed to the table (UTC,
        ``format_at``), on the events it causes."""
        self.now, self._session.at = now, at
        if type(item) not in self._handlers:
            raise TypeError(f"not a table input: {item!r}")
        self.camera.measure_lag(item)
        if shift.unsigned(self, item):
            self.alarm(AlarmKind.STAFF, f"{shift.touch_words(item)} touched but no dealer is "
                       "signed in: not taken; sign in first")
        else:
            self.inputs.take(item)
        self._settle_if_done()
        self.updates += 1

    def act(self, item: TableInput) -> None:
        """Hand ``item`` to its handler (input dispatch decided it acts now)."""
        self._handlers[type(item)](item)

    def tick(self, now: float, at: str | None = None) -> None:
        """Let waits expire: a resend the shoe never ended, shoe cards the camera never saw,
        landings the shoe never reported."""
        self.now, self._session.at = now, at
        changed = self.shoe.expire_resend(now)
        if changed:
            self.release()
        while self.question is None and self.camera.expire(now):
            changed = True  # what expired may let a waiting input act, and it more waits
        if changed:
            self._settle_if_done()
            self.updates += 1

    def placeable(self, pending: Pending) -> bool:
        """Whether a waiting shoe card may be placed now (see :meth:`InputQueue.placeable`)."""
        return self.inputs.placeable(pending)

    def defer(self, item: TableInput) -> None:
        """``item`` waits behind the open question."""
        self.inputs.defer(Waiting(item, None, number=self.inputs.acting_number))

    def landings_to_record(self) -> bool:
        """With the shoe's link down, a landing the camera reported waits to be read from the
        camera: behind a shoe card, or held back among the inputs."""
        if not self.has_shoe or self.shoe_up:
            return False
        return bool(self.camera.flight.felt) or \
            any(isinstance(w.item, FeltCard) for w in self.inputs.deferred)

    @property
    def input_number(self) -> int:
        """The number of the input acting now, in the order the inputs came."""
        return self.inputs.acting_number

    def defer_in_place(self, item: TableInput, number: int) -> bool:
        """``item``, input ``number``, waits its turn where a question is open or an input in its
        turn that came before it waits (True); else it may act now (False)."""
        if self.question is None and not self.inputs.in_turn_before(number):
            return False
        self.inputs.defer_in_place(item, number)
        return True

    def defer_first(self, item: TableInput) -> None:
        """``item``, acting now, waits first in line for the question its acting opened."""
        self.inputs.defer_first(item)

    def release(self, resent: int | None = None) -> None:
        """Take the inputs that waited, as far as they may go now (see
        :meth:`InputQueue.release`)."""
        self.inputs.release(resent)

    # ------------------------------------------------------------------ dealer

    def _on_bet(self, item: PlaceBet) -> None:
        if self.peek_pending():
            self.alarm(AlarmKind.BET_REFUSED, f"seat {item.seat}: bets are closed, insurance is "
                       f"open in round {self.round_id}: close insurance first")
            return
        if self.fold is not None and not self.fold.ended:
            engine = self.fold.engine
            if engine.dealing_started:
                if not self._close_round(quiet=True):
                    self.alarm(
                        AlarmKind.BET_REFUSED,
                        f"seat {item.seat}: bets are closed, round {self.round_id} is still "
                        f"in play ({engine.describe()})",
                    )
                    return
        if self.fold is None or self.fold.ended:
            self.camera.drop_strays()
            self._start_round()
        try:
            self.apply_or_raise(Bet(item.seat, item.amount, item.wager, item.player, "dealer"))
        except (RoundError, EventError) as error:
            self.alarm(AlarmKind.BET_REFUSED, str(error))

    def _on_decide(self, item: Decide) -> None:
        if self.camera.paired_or_asked(item):
            return
        if not self.round_open:
            self.alarm(
                AlarmKind.ILLEGAL_ACTION,
                f"seat {item.seat}: {item.action.value} entered but no round is in play",
            )
            return
        self.camera.infer_hidden_hole()
        acting = self.fold.engine.acting() if self.fold else None
        hand = item.hand or 0
        if acting is not None and self.camera_trusted() and (item.seat, hand) > acting:
            # With a camera watching, a stand leaves no trace until the game moves on: a
            # decision touched for a later hand means every hand before it stood.
            if not self.stand_until(CardTarget(item.seat, hand), "dealer"):
                return
        self.apply(PlayerAction(item.seat, item.action, item.amount, item.hand, "dealer"))

    def _on_correct_card(self, item: CorrectCard) -> None:
        """A correction may answer what a question asks (a misread card made the next one fit
        no play): the question is withdrawn, the correction made (or refused), and its card
        placed again, on the corrected round."""
        if self._moved_on(item.round_id, "correction"):
            return
        if self.question is not None and self.question.unread is not None:
            correct_card(self, item)  # refused at a shoe's table; the unread card's place held
            return
        question = self.questions.withdraw()
        try:
            correct_card(self, item)
        finally:
            if question is not None:
                held = question.held
                self.commit(held.card, held.landing, held.sideways, held.face_down,
                            held.origin, held.keyed, held.unread)

    def _on_insure(self, item: Insure) -> None:
        if not self.round_open:
            self.alarm(AlarmKind.BET_REFUSED, f"seat {item.seat}: no round is in play")
            return
        if self.insurance_closed:
            self.alarm(AlarmKind.BET_REFUSED, f"seat {item.seat}: the dealer has closed "
                       "insurance; not taken")
            return
        self.camera.infer_hidden_hole()
        self.apply(Insurance(item.seat, item.amount, "dealer"))

    def _on_close_insurance(self, item: CloseInsurance) -> None:
        """Only a peek the screen is keeping hidden is closed by a touch (a game whose hole card
        lies unread closes insurance at its first decision); otherwise nothing to do."""
        if self.camera.paired_or_asked(item):  # the hole card the shoe dealt, before the touch
            return
        self.play_moved_on()

    def play_moved_on(self) -> None:
        """A decision, a card after the deal or the hole card turned while the screen keeps the
        peek hidden: the dealer has moved past insurance, which closes, as if touched (the
        alarm such an input may raise could otherwise name a dealer blackjack)."""
        if self.peek_pending():
            self.insurance_closed = True

    def peek_pending(self) -> bool:
        """Insurance is open and the dealer has not closed it, though the shoe has read the hole
        card: the screen must not show what the peek will find (a dealer blackjack, or that
        there is none) before the dealer has taken every insurance bet."""
        engine = None if self.fold is None or self.fold.ended else self.fold.engine
        return (self.has_shoe and engine is not None and engine.insurance_open
                and engine.hole_card_known and not self.insurance_closed)

    def _on_finish(self, item: FinishRound) -> None:
        if self.camera.paired_or_asked(item):
            return
        if self.peek_pending():  # closing now would show what the peek finds
            self.alarm(AlarmKind.ILLEGAL_ACTION, "the round cannot close while insurance is "
                       "open: take the insurance bets, then Close insurance")
            return
        if self.round_open:
            self._close_round(quiet=False)

    def _moved_on(self, round_id: str | None, what: str) -> bool:
        """Whether a ``what`` begun for round ``round_id`` meets another round in play (or
        none): refused with an alarm, as the screen refuses it when it sees so first."""
        if round_id is None or round_id == self.round_id:
            return False
        now = f"round {self.round_id} is" if self.round_open else "no round is"
        self.alarm(AlarmKind.ILLEGAL_ACTION, f"the {what} approved for round {round_id} was not "
                   f"taken: {now} in play")
        return True

    def _on_void(self, item: VoidRound) -> None:
        if self.fold is None or self.fold.ended or self._moved_on(item.round_id, "void"):
            return
        reason = f"{item.reason} (voided by {supervisor_words(item.supervisor)}; dealer " \
            f"{self.dealer or 'none signed in'})"
        round_id, _ = self._session.void(reason)
        self.shoe.round_voided(round_id)
        self.alarm(AlarmKind.ROUND_VOIDED, f"round {round_id} voided: {reason}")
        self.questions.withdraw()  # its card is in no round now; what waited behind it goes on
        if self.resumed is not None:
            self.resumed = None
            self.resolve(AlarmKind.ROUND_RESUMED)

    def _on_round_resumed(self, item: RoundResumed) -> None:
        if not self.round_open:
            return
        self.resumed = item.detail
        self.alarm(AlarmKind.ROUND_RESUMED, f"{item.detail}: check that the felt matches the "
                   "screen, then touch Confirm felt (or void the round)")

    def _on_shown_after_restart(self, item: ShownAfterRestart) -> None:
        if item.round_id == self.round_id and not self.round_open:
            self.camera.let_felt_pass()

    def _on_confirm_felt(self, item: ConfirmFelt) -> None:
        if self.resumed is not None:
            self.resumed = None
            self.resolve(AlarmKind.ROUND_RESUMED)

    def _on_acknowledge(self, item: AcknowledgeAlarm) -> None:
        named = None
        if item.kind is not None and item.text is not None and item.raised_at is not None:
            named = (item.kind, item.text, item.round_id, item.raised_at)
        self._alarms.acknowledge(item.alarm_id, named)

    def _on_floor_lag(self, item: FloorLag) -> None:
        """The room's lag as the forwarder sees it: shown; past its bound, an alarm (one for a
        spell behind), resolved once the table has caught up under it."""
        was_behind = self.floor is not None and self.floor.behind
        self.floor = item
        if item.behind and not was_behind:
            self.alarm(AlarmKind.FLOOR_BEHIND, (
                f"the surveillance room is {item.records} record(s), {item.seconds:.0f} s behind"
                f" this table ({item.detail or 'the floor broker is slow'}): play goes on and "
                "the table keeps recording; call the technician"))
        elif not item.behind and was_behind:
            self.resolve(AlarmKind.FLOOR_BEHIND)

    def _on_recording_failed(self, item: RecordingFailed) -> None:
        self.alarm(AlarmKind.RECORDING_FAILED, f"{item.detail}: call the technician")

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

    # ------------------------------------------------------------------ rounds

    def _start_round(self) -> None:
        if self.resumed is not None:  # the dealer went on to a new round: the felt was right
            self.resumed = None
            self.resolve(AlarmKind.ROUND_RESUMED)
        self._session.start(self.dealer)
        self.camera.new_round()
        self.questions.round_asked = 0
        self.insurance_closed = False

    def apply_or_raise(self, event: Event) -> CardTarget | None:
        return self._session.apply(event)

    def apply(self, event: Event) -> bool:
        """Apply one event to the round; a refusal becomes an alarm (and nothing is recorded)."""
        try:
            self.apply_or_raise(event)
        except (RoundError, EventError) as error:
            self.alarm(AlarmKind.ILLEGAL_ACTION, str(error))
            return False
        return True

    def stand_until(self, landing: CardTarget | None, by: str) -> bool:
        """Stand every hand in play before ``landing`` (None: before the dealer), as ``by``
        showed."""
        return placing.stand_until(self, landing, by)

    def commit_shoe_card(
        self, shoe: ShoeCard, landing: CardTarget | None = None, sideways: bool = False
    ) -> CardTarget | None:
        """Record a card the shoe dealt, with the shoe's numbering of it, at its arrival (one it
        could not read as keyed by the dealer, with the shoe's report of it): where it went, or
        None (refused, or the dealer is asked)."""
        handed, self._session.at = self._session.at, shoe.at or self._session.at
        try:
            return self.commit(shoe.card, landing, sideways, origin=shoe.origin,
                               keyed=shoe.unread is not None, unread=shoe.unread)
        finally:
            self._session.at = handed

    def commit(
        self, card: Card | None, landing: CardTarget | None, sideways: bool,
        face_down: bool = False, origin: ShoeOrigin | None = None, keyed: bool = False,
        unread: UnreadOrigin | None = None,
    ) -> CardTarget | None:
        """Record one card (see :func:`placing.commit`): where it went, or None (refused, or
        the dealer is asked)."""
        return placing.commit(self, HeldCard(card, landing, sideways, face_down, origin, keyed,
                                             unread))

    def take(self, reading: Reading, by: str) -> bool:
        """Apply a reading's decisions, in play order, as ``by`` showed."""
        return placing.take(self, reading, by)

    def deal(self, card: Card | None, landing: CardTarget | None, face_down: bool,
             origin: ShoeOrigin | None, keyed: bool,
             unread: UnreadOrigin | None = None) -> CardTarget | None:
        """Record a card where the rules put it now (no decision pending)."""
        return placing.deal(self, HeldCard(card, landing, False, face_down, origin, keyed,
                                           unread))

    def hole_card_due(self) -> bool:
        """The next card due is the dealer's hole card."""
        return placing.hole_card_due(self.fold)

    def _settle_if_done(self) -> None:
        """Close the round as soon as nothing more can happen in it, at a table with a shoe; in
        a hand-held game the dealer checks the cards on the felt against the screen (and
        corrects a misread) before touching Finish round."""
        fold = self.fold
        if not self.has_shoe or fold is None or fold.ended or self.camera.flight.shoe or \
                self.camera.flight.felt or self.question is not None:
            return
        engine = fold.engine
        if not engine.dealing_started or engine.acting() is not None or self.peek_pending():
            return  # a seat may still insure (it pays 2:1 on a dealer blackjack)
        if engine.next_card_target() is None:
            self._close_round(quiet=True)

    def _close_round(self, quiet: bool) -> bool:
        try:
            settlement = self._session.close()
        except (RoundError, EventError) as error:
            if not quiet:
                self.alarm(AlarmKind.ILLEGAL_ACTION, f"the round cannot close: {error}")
            return False
        self.last_settlement = settlement
        self.rounds_played += 1
        return True

    # ------------------------------------------------------------------ alarms

    def alarm(self, kind: AlarmKind, text: str, resolved: bool = False) -> Alarm:
        return self._alarms.raise_alarm(kind, text, self.round_id, self.now, resolved)

    def alarm_in(self, round_id: str | None, kind: AlarmKind, text: str) -> Alarm:
        """An alarm about a card of round ``round_id``: where that is not the round in play, it
        holds none of this round's payouts."""
        return self._alarms.raise_alarm(kind, text, round_id, self.now)

    def resolve(self, kind: AlarmKind) -> None:
        self._alarms.resolve(kind)

    def disagreements(self) -> list[Alarm]:
        """This round's disagreement alarms not yet acknowledged: no PAY/TAKE until each is."""
        return [] if self.fold is None else self._alarms.disagreements(self.round_id)

    # ------------------------------------------------------------------ screen

    def view(self) -> dict[str, Any]:
        """Everything the dealer's screen shows, as JSON-able data (see
        :func:`~dealer_assist.table.screen_view.table_view`)."""
        return table_view(self)
