"""The camera's evidence: where each card landed (the landing paired with its shoe card), the
stacks of a split, the hole card turned, a card that changed where it lies, and the camera's
link, position, focus and lag. It says what the felt shows; the table places the cards (see
:class:`EvidenceTable`, what it asks of the table)."""

from __future__ import annotations

from collections import Counter, deque
from dataclasses import replace
from typing import Protocol

from dealer_assist.roundlog import PlayerAction, Reveal, RoundFold
from dealer_assist.rules import Action, Card, CardTarget, Settlement
from dealer_assist.table.alarms import Alarm, AlarmKind
from dealer_assist.table.mode import Mode
from dealer_assist.table.pairing import (
    SHOE_SILENT_WAIT_S,
    CardsInFlight,
    LateSighting,
    MatchKind,
    Pending,
)
from dealer_assist.table.questions import OpenQuestion
from dealer_assist.table.shoe_cards import ShoeCards
from dealer_assist.table.sources import (
    DEALER_SPOT,
    CameraFocus,
    CameraLink,
    CameraMoved,
    FeltCard,
    FeltStacks,
    FeltSwap,
    HoleCardShown,
    ShoeCard,
    ShoeHeard,
    TableInput,
    place_words,
)

#: Matches that place the shoe card with no landing though a sighting was taken with it (another
#: card's, switched; one that may be its; one read after it): a card later read from the camera
#: alone is not its landing misread.
_PLACED_WITH_A_SIGHTING = frozenset({MatchKind.SWITCHED, MatchKind.UNSEEN,
                                     MatchKind.UNREPORTED_AFTER})


class EvidenceTable(Protocol):
    """What the camera's evidence asks of the table: its state, its alarms, and placing cards."""

    now: float
    camera_up: bool
    camera_moved: bool
    has_shoe: bool
    has_camera: bool
    camera_wait_s: float
    shoe_wait_s: float
    shoe_heartbeats: bool
    shoe_up: bool
    mismatch_wait_s: float
    max_camera_lag_s: float
    shoe: ShoeCards

    @property
    def mode(self) -> Mode: ...
    @property
    def round_open(self) -> bool: ...
    @property
    def fold(self) -> RoundFold | None: ...
    @property
    def question(self) -> OpenQuestion | None: ...
    def camera_trusted(self) -> bool: ...
    def alarm(self, kind: AlarmKind, text: str, resolved: bool = False) -> Alarm: ...
    def resolve(self, kind: AlarmKind) -> None: ...
    def apply(self, event: PlayerAction | Reveal) -> bool: ...
    def commit(self, card: Card | None, landing: CardTarget | None, sideways: bool,
               face_down: bool = False) -> CardTarget | None: ...
    def commit_shoe_card(self, shoe: ShoeCard, landing: CardTarget | None = None,
                         sideways: bool = False) -> CardTarget | None: ...
    def stand_until(self, landing: CardTarget | None, by: str) -> bool: ...
    def hole_card_due(self) -> bool: ...
    def placeable(self, pending: Pending) -> bool: ...
    def defer(self, item: TableInput) -> None: ...
    def defer_first(self, item: TableInput) -> None: ...
    @property
    def input_number(self) -> int: ...
    def defer_in_place(self, item: TableInput, number: int) -> bool: ...
    def release(self) -> None: ...


class CameraEvidence:
    """The camera's inputs, taken for a table: ``flight`` pairs its landings with the shoe's
    cards; ``entered_unseen`` and ``corrected`` are the cards the dealer keyed or corrected this
    round (a reading of them is not another card); ``stray_cards`` those out of the shoe in no
    round; ``lag_s`` the latest sighting's lag, ``behind`` while past ``max_camera_lag_s``."""

    def __init__(self, table: EvidenceTable):
        self.table = table
        self.flight = CardsInFlight()
        self.heard_at = float("-inf")  # the shoe's latest heartbeat handed to the table
        self.lag_s: float | None = None  # of the latest sighting: now - frame grabbed
        self.behind = False
        #: out of the shoe in no round (see drop_strays)
        self.stray_cards: Counter[Card] = Counter()
        #: (card, seat: None at the dealer's) the dealer keyed or corrected this round that the
        #: camera has not reported since, there, under that code (it may read one late)
        self.entered_unseen: Counter[tuple[Card, int | None]] = Counter()
        #: (as first recorded, as corrected, seat: None at the dealer) this round: the camera
        #: reading the card anew where it lies, as corrected, is no switched card
        self.corrected: set[tuple[Card, Card, int | None]] = set()
        #: this round the camera reported a card while it counted for nothing (see uncounting)
        self.uncounted = False
        #: shoe cards placed this round with no landing taken that an alarm already says a card
        #: read from the camera alone or keyed may be (see :meth:`may_be_a_card_placed_unseen`)
        self.doubted: Counter[Card] = Counter()
        #: a restarted table shows the settled round whose cards still lie on the felt: the
        #: camera, starting again, reports them as new, so until the next round's first bet a
        #: sighting of one where it lies is let pass, once (see let_felt_pass): how many of
        #: each card are left to pass at each seat (None: the dealer's), and, under card None,
        #: how many unreadable sightings were let pass there
        self.felt_left: Counter[tuple[Card | None, int | None]] = Counter()

    def new_round(self) -> None:
        """A round starts: what the dealer entered, the cards placed unseen, and sightings that
        did not count, were the last round's."""
        self.entered_unseen.clear()
        self.corrected.clear()
        self.uncounted = False
        self.doubted.clear()
        self.felt_left.clear()
        self.flight.new_round()

    def let_felt_pass(self, left: Counter[tuple[Card | None, int | None]] | None = None
                      ) -> None:
        """After a restart that shows the settled round: until the next round's first bet, a
        sighting of one of its cards where it lies (the hole card turned among them, or an
        unreadable one there) is let pass, once for each card at that seat (a camera starting
        again reports every card on the felt as it first sees it, in no order the round was
        dealt in: as landings they would be alarms against the round shown). Any other card,
        one of the round's elsewhere or once more, and a card changing where it lies are
        handled as ever. ``left``: what a checkpoint kept of it (else all the round's cards).
        Known gap: a split hand's second stack is reported as a split, not its first card, so
        that card's pass is left over."""
        if left is not None:
            self.felt_left = Counter(left)
            return
        fold = self.table.fold
        self.felt_left.clear()
        if fold is None:
            return
        engine = fold.engine
        for seat in engine.seats():
            for hand in engine.hands(seat):
                self.felt_left.update((card, seat) for card in hand.cards)
        self.felt_left.update((card, None) for card in engine.dealer_cards() if card is not None)

    def passes(self, card: Card | None, seat: int | None) -> bool:
        """A sighting of ``card`` (None: unreadable) at ``seat`` let pass after a restart (see
        :meth:`let_felt_pass`), its place used up: while the seat has a card left to pass that
        no unreadable sighting may have been, and (read) it is that card."""
        if not self.felt_left:
            return False
        cards_left = sum(n for (shown, at), n in self.felt_left.items()
                         if at == seat and shown is not None)
        if self.felt_left[(None, seat)] >= cards_left:
            return False
        if card is not None:
            if self.felt_left[(card, seat)] <= 0:
                return False
            self.felt_left[(card, seat)] -= 1
            if self.felt_left[(card, seat)] == 0:
                del self.felt_left[(card, seat)]
        else:
            self.felt_left[(None, seat)] += 1
        return True

    def uncounting(self) -> bool:
        """The camera is up where it was calibrated, yet its evidence counts for nothing: it may
        not name cards and the shoe is down (see ``camera_trusted``)."""
        return self.table.has_camera and self.table.camera_up and not self.table.camera_moved \
            and not self.table.camera_trusted()

    def unseen_words(self, card: Card | None = None) -> str:
        """Why no landing is taken for ``card`` (None: "it"): the camera did not see it land,
        or, where its sightings counted for nothing while the shoe was down, it was not counted.
        The words the dealer's question and the missed-card alarm give."""
        if self.uncounting():
            return ("the camera's sightings do not count while the shoe is down (its deck only "
                    "checks the shoe's cards)")
        seen = f"the camera did not see {card.code if card else 'it'} land"
        if self.uncounted:
            return (f"{seen} since the shoe came back (its sightings while the shoe was down "
                    "do not count: its deck only checks the shoe's cards)")
        return seen

    @property
    def waiting(self) -> bool:
        """A shoe card waits for its landing, or a landing for its shoe card."""
        return bool(self.flight.shoe or self.flight.felt)

    def measure_lag(self, item: TableInput) -> None:
        """A sighting says when its frame was grabbed: the camera's lag. Past
        ``max_camera_lag_s`` an alarm; while behind, only a landing that reads as the very shoe
        card is taken as its landing (see :meth:`pair`)."""
        seen_at = getattr(item, "seen_at", None)
        if seen_at is None or not self.table.has_camera:
            return
        self.lag_s = lag = max(0.0, self.table.now - seen_at)
        if lag > self.table.max_camera_lag_s and not self.behind:
            self.behind = True
            self.table.alarm(AlarmKind.CAMERA_BEHIND, (
                f"the camera's sightings arrive {lag * 1000:.0f} ms after their frames (limit "
                f"{self.table.max_camera_lag_s * 1000:.0f} ms): the table asks where a card went "
                "rather than take a late sighting for it"))
        elif lag <= self.table.max_camera_lag_s * 0.8 and self.behind:
            self.behind = False
            self.table.resolve(AlarmKind.CAMERA_BEHIND)

    def expire(self, now: float) -> bool:
        """One pass over the waits (every one stands still while the dealer is asked); True when
        something changed."""
        waiting = len(self.flight.shoe)
        self.pair()
        changed = len(self.flight.shoe) != waiting
        while self.table.question is None and self.flight.shoe and \
                now - self.flight.shoe[0].since >= self.table.camera_wait_s and \
                self.table.placeable(self.flight.shoe[0]):
            changed = True
            if self.table.hole_card_due():
                self._take_hole_card()  # face down: no camera could have seen it land
                continue
            pending = self.flight.take_unseen()
            if pending.rejected or pending.shoe is None:
                continue
            went = self.table.commit_shoe_card(pending.shoe)
            if self.table.question is not None:
                break  # the dealer is asked where it went; the other waits stand still
            if went is None or self.lost:
                continue  # refused (its alarm says so), or no camera to have missed it
            self.table.alarm(
                AlarmKind.CAMERA_MISSED,
                f"{self.unseen_words(pending.shoe.card)}; recorded from the shoe where the "
                "rules put it (no other play could have taken it there)",
            )
        if self.table.mode is Mode.CAMERA_ONLY:
            if self.flight.felt and not self.flight.shoe and self.table.question is None:
                self._read_alone()  # the shoe cards before them placed
                changed = True
        else:
            while self.table.question is None and self.flight.felt and \
                    self._shoe_silent_on(self.flight.felt[0], now) and \
                    not (self.flight.shoe and not self.table.placeable(self.flight.shoe[0])) and \
                    not self.table.shoe.resend_pending:
                # (a landing does not expire while the shoe cards it may pair with wait their
                # turn, or while the shoe resends what it kept while its link was down)
                pending = self.flight.felt.popleft()
                changed = True
                assert pending.felt is not None
                self._never_left_the_shoe(pending.felt)
        if self.lost and self.flight.shoe and not self.flight.felt:
            self._place_unseen_now()  # no landing left for them to wait for
            changed = True
        if changed:
            self.table.release()
        return changed

    def _never_left_the_shoe(self, landing: FeltCard) -> None:
        shown = landing.card.code if landing.card else "a card"
        self.table.alarm(
            AlarmKind.NOT_FROM_SHOE,
            f"{shown} appeared at {place_words(landing.spot)} but never left the shoe: "
            "not recorded; call the floor",
        )

    @property
    def awaits_heartbeat(self) -> bool:
        """A landing waits for its shoe card from a shoe whose heartbeats can say it has none,
        and may expire: no question open, no resend awaited."""
        return bool(self.flight.felt) and self.table.shoe_heartbeats and \
            self.table.question is None and not self.table.shoe.resend_pending

    def on_shoe_heard(self, item: ShoeHeard) -> None:
        self.heard_at = self.table.now

    def _shoe_silent_on(self, pending: Pending, now: float) -> bool:
        """The shoe has had its time to report the card of ``pending``'s landing: ``shoe_wait_s``,
        and from a shoe with heartbeats, one heard since the landing (its link alive) or
        :data:`SHOE_SILENT_WAIT_S` (a link that fell silent is called down before that)."""
        waited = now - pending.since
        if waited < self.table.shoe_wait_s:
            return False
        if not (self.table.shoe_heartbeats and self.table.shoe_up):
            return True
        return self.heard_at > pending.since or waited >= SHOE_SILENT_WAIT_S

    def on_felt_card(self, item: FeltCard) -> None:
        if self.passes(item.card, item.spot.seat):
            return
        if not self.table.camera_trusted():
            self.uncounted = self.uncounted or self.uncounting()
            return
        if self.late_sighting(item):
            return
        if item.card is None and item.spot.is_dealer and self.table.mode is not Mode.CAMERA_ONLY:
            return  # the hole card lying face down: the shoe has already said what it is
        if item.card is not None and self.stray_cards[item.card] > 0 and item.spot.is_dealer \
                and self.table.fold is not None and not self.table.fold.engine.dealing_started:
            self.stray_cards[item.card] -= 1  # a card out of the shoe in no round, seen landing
            return
        if self.table.mode is Mode.SHOE_AND_CAMERA or self.flight.shoe or self.flight.felt:
            # (with landings waiting, this one goes after them)
            self.flight.add_felt(item, self.table.now, late=self.late(item),
                                 number=self.table.input_number)
            self.pair()
        else:
            self._commit_from_camera(item)

    def lag(self, item: FeltCard) -> float:
        """How old the sighting's frame was when it came (0: it does not say)."""
        return 0.0 if item.seen_at is None else max(0.0, self.table.now - item.seen_at)

    def late(self, item: FeltCard) -> bool:
        """A sighting whose frame was older than the camera's wait (``camera_wait_s``) when it
        came: it shows no decision, it is only checked against where its card went. (Past
        ``max_camera_lag_s`` the camera is behind: a sighting is then a landing only of the shoe
        card of its very code, and answers no question.)"""
        return self.lag(item) > self.table.camera_wait_s

    def late_sighting(self, item: FeltCard) -> bool:
        """The camera's sighting of a card already placed without one (it came after the wait,
        or after the dealer's answer): checked against its place, not taken as a new card
        (True); see :meth:`CardsInFlight.late_sighting`."""
        if item.card is None:
            return False
        verdict, misplaced = self.flight.late_sighting(item.card, item.spot)
        if misplaced is not None:
            card, target = misplaced
            self.table.alarm(AlarmKind.MISPLACED, (
                f"{card.code} was recorded at {target}, but the camera saw it (late) at "
                f"{place_words(item.spot)}: check the felt; call the floor"))
        return verdict is not LateSighting.NEW

    def unsighted(self, card: Card) -> int:
        """How many cards of this code are out of the shoe with no sighting taken for them: a
        sighting of the code is surely one card's only where this is 1."""
        question = self.table.question
        asked = question is not None and question.held.card == card and \
            question.held.landing is None
        return asked + self.flight.unsighted(card)

    def infer_hidden_hole(self) -> None:
        """Camera only: the hole card lies face down, with no index for the camera to see; once
        the game moves on past it (a card at a seat, a split, a decision) it was dealt."""
        if self.table.mode is Mode.CAMERA_ONLY and self.table.hole_card_due():
            self.record_hidden_hole()

    def record_hidden_hole(self) -> None:
        """The hole card lies face down, read by no reader: record that it was dealt (the shoe's
        resend, if its link is down, is checked against that)."""
        if self.table.has_shoe:
            self.table.shoe.record_while_down(None)
            self.table.shoe.hole_card = None
        self.table.commit(None, DEALER_SPOT, False, face_down=True)

    def _commit_from_camera(self, felt: FeltCard) -> None:
        if felt.card is not None and self.entered_unseen[(felt.card, felt.spot.seat)] > 0:
            self.entered_unseen[(felt.card, felt.spot.seat)] -= 1  # entered there, read at last
            return
        if not felt.spot.is_dealer:
            self.infer_hidden_hole()
        face_down = felt.card is None and felt.spot.is_dealer and self.table.hole_card_due()
        if felt.card is None and felt.spot.is_dealer and not face_down and self._hole_face_down():
            return  # the hole card, recorded already, seen lying face down
        if felt.card is None and not face_down:
            self.table.alarm(
                AlarmKind.UNREADABLE,
                f"the camera cannot read the card at {place_words(felt.spot)}: enter it or call "
                "the floor",
            )
            return
        if felt.card is not None and \
                not self.table.shoe.accept_unshod(felt.card, "the camera sees"):
            return
        if self.table.has_shoe:
            if felt.card is not None:
                self.may_be_a_card_placed_unseen(
                    f"the camera reads {felt.card.code} at {place_words(felt.spot)}")
            self.table.shoe.record_while_down(felt.card)
        self.table.commit(felt.card, felt.spot, felt.sideways, face_down=face_down)

    def may_be_a_card_placed_unseen(self, recorded: str) -> None:
        """A card read from the camera alone or keyed by the dealer while the shoe's link is
        down (``recorded``: "the camera reads 7C at seat 1"), where shoe cards it reported were
        placed this round with no landing taken: it may be one of them misread or keyed for
        one, which only the shoe's resend can tell; the alarm holding the payouts names them
        (once for each). Only while the camera counts: with none, no landing of theirs comes."""
        if not self.table.camera_trusted():
            return
        doubts = Counter(card for card, _ in self.flight.placed_unseen) - self.doubted
        if not doubts:
            return
        self.doubted += doubts
        codes = sorted(card.code for card in doubts.elements())
        one = len(codes) == 1
        self.table.alarm(AlarmKind.SWITCHED_CARD, (
            f"{recorded} with the shoe's link down, and {' and '.join(codes)}, "
            f"which the shoe dealt, {'was' if one else 'were'} placed with no landing seen: it "
            f"may be {'that card' if one else 'one of them'}, recorded twice; recorded so "
            "until the shoe's resend checks it; check the felt; call the floor"))

    def _hole_face_down(self) -> bool:
        """The dealer holds two cards and draws none now (the players still act, or the round
        ended on them): a face-down card at the dealer's is the hole card."""
        fold = self.table.fold
        return fold is not None and fold.engine.deal_complete and \
            len(fold.engine.dealer_cards()) == 2 and \
            (fold.ended or fold.engine.acting() is not None)

    def _take_hole_card(self) -> None:
        """The next shoe card is the hole card: the camera cannot read a face-down card, so it is
        recorded from the shoe without waiting for a landing."""
        while self.flight.shoe and self.table.hole_card_due() and self.table.question is None and \
                self.table.placeable(self.flight.shoe[0]):
            pending = self.flight.take_unseen()
            if not pending.rejected and pending.shoe is not None:
                self.table.commit_shoe_card(pending.shoe)

    def pair(self, force: bool = False) -> None:
        """Place the shoe cards whose landings the camera reported (see
        :meth:`CardsInFlight.next_match`: a landing of another code only after
        ``mismatch_wait_s``, or at once with ``force``, when the game moves on, with the
        switched-card alarm). Nothing pairs while a question is open, nor a shoe card drawn
        after an input yet to act. The hole card, face down, is taken with no landing."""
        while self.table.question is None:
            self._take_hole_card()
            if self.table.question is not None:
                return
            match = self.flight.next_match(
                self.table.now, force=force, behind=self.behind,
                mismatch_wait_s=self.table.mismatch_wait_s,
                sole=self.flight.sole_unsighted(), placeable=self.table.placeable,
                shoe_down=self.table.has_shoe and not self.table.shoe_up)
            if match is None:
                break
            shoe, felt = match.shoe, match.felt
            if felt is not None and match.kind in _PLACED_WITH_A_SIGHTING:
                self.doubted[shoe.card] += 1  # no later card read alone is it misread
            if match.kind is MatchKind.STRAY:
                self.table.alarm(AlarmKind.ILLEGAL_ACTION, (
                    f"{shoe.card.code} was drawn to the dealer after the last round settled, "
                    "before this round's first bet: in no round; not recorded"))
            elif match.kind is MatchKind.SWITCHED:
                assert felt is not None and felt.card is not None
                self.table.alarm(
                    AlarmKind.SWITCHED_CARD,
                    f"the shoe dealt {shoe.card.code} but {felt.card.code} is on the felt at "
                    f"{place_words(felt.spot)}: recorded as {shoe.card.code}; call the floor",
                )
                self.table.commit_shoe_card(shoe)  # another card's sighting: no sure place
            elif match.kind is MatchKind.UNSEEN:
                self.table.commit_shoe_card(shoe)
            elif match.kind is MatchKind.UNREPORTED_AFTER:
                assert felt is not None and felt.card is not None
                dealt, read = shoe.card.code, felt.card.code
                self.table.alarm(AlarmKind.SWITCHED_CARD, (
                    f"the shoe dealt {dealt} as its link dropped, and the camera did not see it "
                    f"land; it reads {read} at {place_words(felt.spot)}, which the shoe has not "
                    f"reported: {dealt} recorded where the rules put it and {read} where it "
                    "landed, until the shoe's resend checks them; check the felt; call the floor"))
                self.table.commit_shoe_card(shoe)
            elif match.kind is MatchKind.LATE:
                assert felt is not None
                # placed by the rules, or asked about: the late landing shows nothing
                self.table.commit_shoe_card(shoe)
                if self.table.question is not None:
                    self.table.defer(felt)  # checked against the answer, once given
                else:
                    self.late_sighting(felt)
            elif match.kind is MatchKind.LANDED:
                assert felt is not None
                self.table.commit_shoe_card(shoe, felt.spot, felt.sideways)
        if self.table.mode is Mode.CAMERA_ONLY and not self.flight.shoe:
            self._read_alone()

    def _read_alone(self) -> None:
        """With the shoe's link down and no shoe card waiting: the landings waiting are cards
        it has not reported, read from the camera alone, in the order they landed; behind an
        open question or a touch that came before it (waiting for the card just placed), each
        waits its turn among the inputs, before those that came after it."""
        while self.flight.felt:
            pending = self.flight.felt.popleft()
            assert pending.felt is not None
            if pending.stray or not self.table.defer_in_place(pending.felt, pending.number):
                self.commit_landing(pending)

    def paired_or_asked(self, item: TableInput) -> bool:
        """Pair what can be paired before ``item`` acts (the game moves on); True when that
        opened a question: ``item`` then waits, first in line, for the answer."""
        self.pair(force=True)
        if self.table.question is None:
            return False
        self.table.defer_first(item)
        return True

    def on_felt_stacks(self, item: FeltStacks) -> None:
        if not self.table.camera_trusted() or not self.table.round_open:
            return
        if self.paired_or_asked(item):
            return
        self.infer_hidden_hole()
        assert self.table.fold is not None
        engine = self.table.fold.engine
        hands = engine.hands(item.seat)
        if not hands or item.stacks <= len(hands):
            return
        acting = engine.acting()
        splits_now = acting is not None and acting[0] == item.seat and \
            item.from_stack in (None, acting[1]) and Action.SPLIT in engine.legal_actions()
        if not splits_now and self._placed_unseen_first(item):
            return
        # Dividing a stack at a later seat or hand means every hand before it stood.
        if not self.table.stand_until(CardTarget(item.seat, item.from_stack or 0), "camera"):
            return
        acting = engine.acting()
        if acting is None or acting[0] != item.seat:
            self.table.alarm(
                AlarmKind.ILLEGAL_ACTION,
                f"{item.stacks} stacks seen at seat {item.seat}, but "
                + ("no hand is in play" if acting is None else f"seat {acting[0]} is to act"),
            )
            return
        self.table.apply(PlayerAction(item.seat, Action.SPLIT, hand=acting[1], by="camera"))

    def _placed_unseen_first(self, item: TableInput) -> bool:
        """``item`` says hands before a place stood, but shoe cards drawn before the camera saw
        it wait for their landing, and may be those hands' cards: each is placed first as
        unseen. True when that opened a question: ``item`` then waits, first in line."""
        while self.flight.shoe and self.table.question is None and \
                self.table.placeable(self.flight.shoe[0]):
            pending = self.flight.take_unseen()
            if not pending.rejected and pending.shoe is not None:
                self.table.commit_shoe_card(pending.shoe)
        if self.table.question is None:
            return False
        self.table.defer_first(item)
        return True

    def on_hole_card(self, item: HoleCardShown) -> None:
        if self.passes(item.card, None):
            return
        if not self.table.camera_trusted() or self.table.fold is None:
            return
        if self.paired_or_asked(item):
            return
        engine = self.table.fold.engine
        if self.table.fold.ended:
            self._check_hole(item.card, self.table.fold.settlement)
            return
        if not engine.deal_complete:
            hidden_hole = self.table.mode is Mode.CAMERA_ONLY and self.table.hole_card_due()
            if item.card is None or not hidden_hole:
                self.table.alarm(
                    AlarmKind.ILLEGAL_ACTION, "the hole card was turned before the deal ended"
                )
                return
            # Camera only: the face-down hole card was never seen until now, turned over.
            if not self.table.shoe.accept_unshod(item.card, "the camera sees"):
                return
            if self.table.has_shoe:
                self.table.shoe.record_while_down(item.card)
            self.table.commit(item.card, DEALER_SPOT, False)
            self.table.stand_until(None, "camera")
            return
        dealer_cards = engine.dealer_cards()
        if len(dealer_cards) >= 2 and dealer_cards[1] is None:
            # A face-down hole card (camera only): reveal first, so a dealer blackjack found
            # at the peek ends the round before anyone is taken to have stood.
            told = self.table.shoe.hole_card
            if told is not None:  # the shoe has resent it since: it turns over as the shoe's
                self.table.shoe.hole_card = None
                if item.card != told:
                    self.table.alarm(AlarmKind.SWITCHED_CARD, (
                        f"the dealer's hole card shows "
                        f"{item.card.code if item.card else 'unread'} but the shoe dealt "
                        f"{told.code}: recorded as the shoe dealt it; call the floor"))
                if not self.table.apply(Reveal(told)):
                    return
            elif item.card is None:
                self.table.alarm(AlarmKind.UNREADABLE,
                                 "the camera cannot read the dealer's hole card")
                return
            else:
                if not self.table.shoe.accept_unshod(item.card, "the camera sees"):
                    return
                self.table.shoe.await_reveal(item.card)
                if not self.table.apply(Reveal(item.card)):
                    return
        elif item.card is not None and len(dealer_cards) >= 2 and dealer_cards[1] != item.card:
            dealt = dealer_cards[1]
            self.table.alarm(
                AlarmKind.SWITCHED_CARD,
                f"the dealer's hole card shows {item.card.code} but the shoe dealt "
                f"{dealt.code if dealt else 'it face down'}: call the floor",
            )
        elif item.card is not None and self.entered_unseen[(item.card, None)] > 0:
            self.entered_unseen[(item.card, None)] -= 1  # the hole card keyed, read at last
        # Turning the hole card ends the players' turn: every hand still deciding stood.
        self.table.stand_until(None, "camera")

    def _check_hole(self, card: Card | None, settlement: Settlement | None) -> None:
        """The hole card turned after the round closed (a dealer blackjack found at the peek)."""
        if card is None or settlement is None:
            return
        cards = settlement.dealer.cards
        if len(cards) >= 2 and cards[1] != card.code:
            self.table.alarm(
                AlarmKind.SWITCHED_CARD,
                f"the dealer's hole card shows {card.code} but {cards[1]} was dealt",
            )

    def on_felt_swap(self, item: FeltSwap) -> None:
        if not self.table.camera_trusted():
            return
        if (item.previous, item.card, item.spot.seat) in self.corrected:
            entered = (item.card, item.spot.seat)
            if self.entered_unseen[entered] > 0:
                self.entered_unseen[entered] -= 1  # read at last as the dealer corrected it
            return
        self.table.alarm(
            AlarmKind.SWITCHED_CARD,
            f"the card at {place_words(item.spot)} changed from {item.previous.code} to "
            f"{item.card.code} where it lies: a switched card; call the floor",
        )

    def on_camera_link(self, item: CameraLink) -> None:
        self.table.camera_up = item.up
        if item.up:
            # (a shoe card still waiting may yet be seen: the camera's tracker reports a card
            # that landed while its feed was lost as it first sees it)
            self.table.camera_moved = False
            self.table.resolve(AlarmKind.CAMERA_LOST)
            self.table.resolve(AlarmKind.CAMERA_MOVED)
            return
        self.table.alarm(
            AlarmKind.CAMERA_LOST,
            f"camera feed lost ({item.detail or 'no detail'}): enter stand, double and split by "
            "touch until it returns",
        )
        # No sighting comes to say the camera caught up: the landings kept are paired by the
        # usual rules (one whose frame was older than the camera's wait was marked late).
        self.behind = False
        self.table.resolve(AlarmKind.CAMERA_BEHIND)
        if not self.table.shoe_up:
            self.flight.felt.clear()  # the shoe's resend is lined up without them
        self.pair_unwatched()

    def on_camera_moved(self, item: CameraMoved) -> None:
        self.table.camera_moved = True
        self.table.alarm(
            AlarmKind.CAMERA_MOVED,
            f"the camera moved ({item.detail}): landing spots ignored until it is recalibrated; "
            "enter stand, double and split by touch",
        )
        self.flight.felt.clear()  # where they were seen may be where the camera moved from
        self._place_unseen_now()

    def on_camera_focus(self, item: CameraFocus) -> None:
        if item.sharp:
            self.table.resolve(AlarmKind.CAMERA_SOFT)
            return
        self.table.alarm(
            AlarmKind.CAMERA_SOFT,
            f"the camera's view is soft ({item.detail}): it will miss more cards, each one an "
            "alarm; call the technician to focus it or clean its lens",
        )

    def commit_landing(self, pending: Pending) -> None:
        """A landing read from the camera alone, the shoe's card for it never come; one marked
        stray (seen before this round's first bet) is in no round."""
        assert pending.felt is not None
        if pending.stray:
            shown = pending.felt.card.code if pending.felt.card else "a card"
            self.table.alarm(AlarmKind.ILLEGAL_ACTION, (
                f"{shown} was seen at the dealer's after the last round settled, before this "
                "round's first bet: in no round; not recorded"))
            return
        self._commit_from_camera(pending.felt)

    def drop_strays(self) -> None:
        """At a new round's first bet: a card out of the shoe since the last round ended (a
        dealer's draw out of habit) belongs to no round: its alarm now, before it could pair into
        this one, and the camera's sighting of it at the dealer's is let pass until this round's
        first card; a sighting there that came first waits, marked, for its shoe card. A landing
        at a seat still waiting for its shoe card never left the shoe: its alarm, in the round
        the bet closed."""
        self.stray_cards.clear()
        while self.flight.shoe and self.table.placeable(self.flight.shoe[0]):
            pending = self.flight.shoe.popleft()
            if not pending.rejected and pending.shoe is not None:
                # refused, with its alarm: no round is open
                self.table.commit_shoe_card(pending.shoe)
                self.stray_cards[pending.shoe.card] += 1
        for pending in self.flight.felt:
            if pending.felt is not None and not pending.felt.spot.is_dealer:
                self._never_left_the_shoe(pending.felt)  # in the round the bet closed
        self.flight.felt = deque(
            replace(p, stray=True) for p in self.flight.felt
            if p.felt is not None and p.felt.spot.is_dealer)

    @property
    def lost(self) -> bool:
        """The table's camera feed is lost."""
        return self.table.has_camera and not self.table.camera_up

    def pair_unwatched(self) -> None:
        """With the camera lost: the shoe cards waiting are paired with the landings it
        reported before, by the usual rules (as if it saw nothing more); once no landing is
        left, none waits for one: each is placed now, in order."""
        self.pair()
        if not self.flight.felt:
            self._place_unseen_now()

    def _place_unseen_now(self) -> None:
        """Shoe cards waiting for a landing the camera can no longer report: placed now (the
        first the dealer is asked about stops the rest, which wait for the answer)."""
        while self.flight.shoe and self.table.question is None and \
                self.table.placeable(self.flight.shoe[0]):
            pending = self.flight.take_unseen()
            if not pending.rejected and pending.shoe is not None:
                self.table.commit_shoe_card(pending.shoe)

