"""The shoe's cards at a table: each card out checked against the shoe's composition (through the
pack count, the one owner of that rule), burns, the link, a new shoe, the cards the shoe
resends after its link was down checked against what the camera or the dealer recorded, and a
card the shoe dealt but could not read, whose place is held until the dealer keys it."""

from __future__ import annotations

from collections import Counter, deque
from dataclasses import dataclass
from typing import TYPE_CHECKING, NamedTuple, Protocol

from dealer_assist.roundlog import RoundFold, UnreadOrigin
from dealer_assist.rules import Card, CardTarget, RuleSet
from dealer_assist.table.alarms import Alarm, AlarmKind
from dealer_assist.table.mode import Mode
from dealer_assist.table.pack import PackCount
from dealer_assist.table.questions import OpenQuestion, QuestionDesk, unread_words
from dealer_assist.table.resend import line_up
from dealer_assist.table.sources import (
    NewShoe,
    ShoeBurn,
    ShoeCard,
    ShoeCaughtUp,
    ShoeLink,
    ShoeProblem,
    ShoeUnread,
    place_words,
)

if TYPE_CHECKING:
    from dealer_assist.table.evidence import CameraEvidence


class ShoeTable(Protocol):
    """What the shoe's cards ask of the table."""

    now: float
    rules: RuleSet
    has_shoe: bool
    shoe_up: bool
    dealer: str | None
    camera: CameraEvidence
    questions: QuestionDesk

    @property
    def mode(self) -> Mode: ...
    @property
    def fold(self) -> RoundFold | None: ...
    @property
    def round_id(self) -> str | None: ...
    @property
    def round_open(self) -> bool: ...
    def hole_card_due(self) -> bool: ...
    def camera_trusted(self) -> bool: ...
    def alarm(self, kind: AlarmKind, text: str, resolved: bool = False) -> Alarm: ...
    def alarm_in(self, round_id: str | None, kind: AlarmKind, text: str) -> Alarm: ...
    def release(self, resent: int | None = None) -> None: ...
    def resolve(self, kind: AlarmKind) -> None: ...
    def commit_shoe_card(self, shoe: ShoeCard,
                         landing: CardTarget | None = None) -> CardTarget | None: ...


class Recorded(NamedTuple):
    """A card the camera or the dealer recorded while the shoe's link was down (None: the
    face-down hole card, unread), and the id of the round it went to."""

    card: Card | None
    round_id: str | None


#: What the shoe resends after its link was down, held until it says it has caught up.
Resent = ShoeCard | ShoeUnread | NewShoe | ShoeBurn

#: Seconds a resend may go on with the link up before what came of it is lined up without the
#: shoe's word that it has ended (a shoe that never shows its store empty; a restart that lost
#: its place in the shoe's numbering)
RESEND_WAIT_S = 5.0


@dataclass(frozen=True, slots=True)
class ResendState:
    """What a table keeps of a shoe link drop until the shoe's resend is lined up (a journal
    checkpoint carries it): see :class:`ShoeCards`."""

    watched: bool = False
    down_round: str | None = None
    awaiting: tuple[Recorded, ...] = ()
    resent: tuple[Resent, ...] = ()
    voided: tuple[str, ...] = ()


class ShoeCards:
    """A table's shoe: ``pack`` counts the cards out since the shuffle; ``awaiting`` holds the
    cards recorded while the shoe's link was down, in order, for the shoe's resend of each to be
    checked against; ``resent`` what the shoe resends, until it says it has caught up;
    ``down_round``: the round in play as the link last dropped (None: none; the next card went
    to a round opened later), ``watched``: the camera read the cards since (or it or the dealer
    recorded one), so a card nothing recorded was missed; ``voided``: the rounds voided since
    (a card missed in one was paid nothing)."""

    def __init__(self, table: ShoeTable):
        self.table = table
        self.pack = PackCount(table.rules.decks)
        self.awaiting: deque[Recorded] = deque()
        self.resent: list[Resent] = []
        self.down_round: str | None = None
        self.watched = False
        self.voided: set[str] = set()
        #: when the last of the resend came, or the link came back with a resend begun
        self.resent_since: float | None = None
        #: the shoe's resend of the hole card recorded face down while its link was down: the
        #: card it turns over as (the camera's reading of it is checked against this)
        self.hole_card: Card | None = None

    def record_while_down(self, card: Card | None) -> None:
        """The camera or the dealer recorded ``card`` (None: the face-down hole card) in the
        round in play while the shoe's link is down: the shoe's resend is checked against it."""
        self.awaiting.append(Recorded(card, self.table.round_id))
        self.watched = True

    @property
    def resend_state(self) -> ResendState:
        return ResendState(self.watched, self.down_round, tuple(self.awaiting), tuple(self.resent),
                           tuple(sorted(self.voided)))

    def restore(self, state: ResendState) -> None:
        """Carry on from ``state`` (a restarted table's, its resend's wait starting again)."""
        self.watched, self.down_round = state.watched, state.down_round
        self.awaiting = deque(state.awaiting)
        self.resent = list(state.resent)
        self.voided = set(state.voided)
        self.resent_since = self.table.now if self.resent else None

    def round_voided(self, round_id: str) -> None:
        """``round_id`` was voided: where the shoe's resend is still to be lined up, a card it
        missed there is said to have gone to a voided round."""
        if self.watched or self.awaiting:
            self.voided.add(round_id)

    @property
    def resend_pending(self) -> bool:
        """The shoe is back and resending what it kept while its link was down, to be lined up:
        the dealer's touches and the camera's turns wait for it (the cards came before them)."""
        return bool(self.resent) and self.table.shoe_up

    def on_card(self, item: ShoeCard, landing: CardTarget | None = None) -> None:
        """A card out of the shoe; ``landing``: where the dealer keyed it (a card the shoe could
        not read, at a table whose camera does not watch: where it lies is its evidence). A
        card resent after the link was down waits for the end of the resend."""
        if self._hold_resent(item):
            return
        if self.awaiting:
            # Resent by a shoe that does not say where its resend ends: checked in order.
            self._check_resent(item, self.awaiting.popleft())
            return
        self._take(item, landing)

    def _hold_resent(self, item: Resent) -> bool:
        """Keep what the shoe resends after its link dropped at this table while the camera
        read the cards (or with cards recorded meanwhile) for :meth:`on_caught_up`; where
        nothing read them, it is taken as it comes, in turn with the dealer's touches."""
        if item.held and (self.watched or self.awaiting):
            self.resent_since = self.table.now  # the resend is still coming
            self.resent.append(item)
            return True
        if not (item.held or self.awaiting or self.resent) and self.table.shoe_up:
            self._forget_drop()  # live again, with nothing to line up
        return False

    def expire_resend(self, now: float) -> bool:
        """Line up a resend that has gone on for :data:`RESEND_WAIT_S` with the link up and
        no word from the shoe that it has ended, with an alarm (True: done)."""
        if not (self.resend_pending and self.resent_since is not None
                and now - self.resent_since >= RESEND_WAIT_S):
            return False
        self.table.alarm(AlarmKind.SHOE_PROBLEM, (
            f"the shoe did not say it had resent all it kept while its link was down within "
            f"{RESEND_WAIT_S:g} s: what came is checked against the cards recorded meanwhile; "
            "check the felt against the screen"))
        self.on_caught_up(ShoeCaughtUp())
        return True

    def _check_resent(self, item: ShoeCard | ShoeUnread, seen: Recorded,
                      named: bool = False) -> None:
        """The shoe's resend of a card recorded as ``seen`` while its link was down (an alarm
        is raised in the round the card went to); ``named``: the face-down hole card it is was
        named already (and may have been turned since)."""
        if isinstance(item, ShoeUnread):
            if seen.card is not None:
                self.pack.take(seen.card)
            self.table.alarm_in(seen.round_id, AlarmKind.SHOE_PROBLEM, (
                f"the shoe could not read {unread_words(item)}, its resend of "
                f"{seen.card.code if seen.card else 'the face-down hole card'} recorded while "
                "its link was down: recorded as before, not checked against the shoe; call the "
                "floor"))
            return
        card = item.card
        self.pack.take(card)
        if seen.card is None:  # the face-down hole card: the shoe names it, not the camera
            if not named:
                self.hole_card = card
        elif seen.card != card:
            self.table.alarm_in(
                seen.round_id, AlarmKind.SWITCHED_CARD,
                f"the shoe dealt {card.code} but the camera recorded {seen.card.code} while the "
                "shoe link was down: a switched card; call the floor",
            )

    def on_caught_up(self, item: ShoeCaughtUp) -> None:
        """The shoe has resent everything it held: line its cards up with the cards recorded
        while its link was down (:func:`~dealer_assist.table.resend.line_up`), a new shoe or a
        burn it reports meanwhile taking effect in its place. A pair is checked as a resend; a
        card recorded that the shoe never dealt is "never left the shoe", in its round. A card
        dealt that nothing recorded is placed where the camera has seen it land since the link
        came back, or it is the hole card due (and nothing was recorded after it); otherwise
        the camera missed it, at a
        moment the table cannot know: "camera missed a card" in the round that settled without
        it, or "card in the wrong place" holding the round in play's payouts where it may be of
        this round. Such a card is counted out of the shoe, never placed by a guess."""
        dealt, self.resent, self.resent_since = self.resent, [], None
        recorded = list(self.awaiting)
        self.awaiting.clear()
        before = self.down_round
        voided = set(self.voided)
        self._forget_drop()
        cards = [(at, d) for at, d in enumerate(dealt) if isinstance(d, ShoeCard | ShoeUnread)]
        others = deque((at, d) for at, d in enumerate(dealt)
                       if isinstance(d, NewShoe | ShoeBurn))
        pairs = line_up([d.card if isinstance(d, ShoeCard) else None for _, d in cards],
                        [r.card for r in recorded])
        last_record = max((k for k, (_, j) in enumerate(pairs) if j is not None), default=-1)
        seen = self._seen_since({k: cards[i][1] for k, (i, _) in enumerate(pairs)
                                 if k > last_record and i is not None})
        # the hole card recorded face down is named first, for a turn of it that acts meanwhile
        holes = {k for k, (i, j) in enumerate(pairs)
                 if i is not None and j is not None and recorded[j].card is None}
        for k in sorted(holes):
            i = pairs[k][0]
            assert i is not None
            hole = cards[i][1]
            if isinstance(hole, ShoeCard):
                self.hole_card = hole.card
        for k, (i, j) in enumerate(pairs):
            if i is not None:
                while others and others[0][0] < cards[i][0]:
                    self._in_place(others.popleft()[1])
                self.table.release(cards[i][0])  # touches made before it act first
            if i is None:
                assert j is not None
                self._recorded_not_dealt(recorded[j])
            elif j is not None:
                self._check_resent(cards[i][1], recorded[j], named=k in holes)
            elif k in seen or k > last_record and self.table.round_open and \
                    self.table.hole_card_due():
                # seen landing since the link came back, or the hole card, dealt after every
                # card recorded, which lies face down (the camera cannot name it): in play
                self._take_as_it_comes(cards[i][1])
            else:
                after = next((recorded[j].round_id for _, j in pairs[k + 1:] if j is not None),
                             None)
                self._dealt_not_recorded(cards[i][1], before, after, voided)
            if j is not None:
                before = recorded[j].round_id
        for _, other in others:
            self._in_place(other)

    def _seen_since(self, unrecorded: dict[int, ShoeCard | ShoeUnread]) -> set[int]:
        """Of the cards dealt after the last one recorded while the link was down (by their
        place in the line-up), those whose landing the camera has seen since it came back: one
        landing each, the latest card first."""
        landings = Counter(p.felt.card for p in self.table.camera.flight.felt
                           if p.felt is not None and p.felt.card is not None)
        seen = set()
        for k in sorted(unrecorded, reverse=True):
            item = unrecorded[k]
            if isinstance(item, ShoeCard) and landings[item.card] > 0:
                landings[item.card] -= 1
                seen.add(k)
        return seen

    def _in_place(self, item: NewShoe | ShoeBurn) -> None:
        if isinstance(item, NewShoe):
            self._load(item)
        else:
            self.on_burn(item)

    def _take_as_it_comes(self, item: ShoeCard | ShoeUnread) -> None:
        if isinstance(item, ShoeCard):
            self._take(item, None)
        else:
            self._hold_unread(item)

    def _forget_drop(self) -> None:
        self.down_round, self.watched = None, False
        self.voided.clear()

    def _dealt_not_recorded(self, item: ShoeCard | ShoeUnread, before: str | None,
                            after: str | None, voided: set[str]) -> None:
        """A resent card nothing recorded while the camera read the cards, between cards
        recorded in rounds ``before`` and ``after`` (None: none recorded before it, and no round
        was in play as the link dropped; none after it); ``voided``: the rounds voided since
        the drop."""
        in_play = self.table.round_id if self.table.round_open else None
        ended = [r for r in dict.fromkeys((before, after)) if r is not None and r != in_play]
        settled = next((r for r in ended if r not in voided), ended[0] if ended else None)
        if settled is None and in_play is None:  # in no round: as any card out of the shoe
            self._take_as_it_comes(item)
            return
        if isinstance(item, ShoeCard):
            self.pack.take(item.card)
            what = item.card.code
        else:
            what = unread_words(item)
        missed = (f"the shoe dealt {what} while its link was down, and neither the camera nor "
                  "the dealer recorded it")
        if in_play is not None and (before == in_play or after in (None, in_play)):
            went = "this round" if settled is None else \
                f"round {settled}, which {'was voided' if settled in voided else 'settled'}, " \
                "or to this round"
            self.table.alarm(AlarmKind.MISPLACED, (
                f"{missed}: it went to {went}, where the table cannot tell; check the felt; not "
                "recorded; call the floor"))
            return
        rounds = [r for r in dict.fromkeys((before, after)) if r is not None]
        self.table.alarm_in(settled, AlarmKind.CAMERA_MISSED, (
            f"{missed}: {_ended_without_it(rounds, voided)}; not recorded; call the floor"))

    def _recorded_not_dealt(self, seen: Recorded) -> None:
        what = seen.card.code if seen.card is not None else "a face-down hole card"
        self.table.alarm_in(seen.round_id, AlarmKind.NOT_FROM_SHOE, (
            f"{what} was recorded while the shoe's link was down, but the shoe, resending what "
            "it dealt meanwhile, dealt no card for it: a card not from the shoe, or a record of "
            "a card that is not there; call the floor"))

    def _take(self, item: ShoeCard, landing: CardTarget | None) -> None:
        """A card out of the shoe into the round in play."""
        card = item.card
        rejected = not self._accept_from_shoe(card)
        if self.table.mode is Mode.SHOE_AND_CAMERA:
            self.table.camera.flight.add_shoe(item, self.table.now, rejected)
            self.table.camera.pair()
        elif self.table.shoe_up and self.table.camera.flight.may_have_landed(item.card, landing):
            # seen landing before the camera was lost, or behind shoe cards that may have been
            self.table.camera.flight.add_shoe(item, self.table.now, rejected)
            self.table.camera.pair_unwatched()
        elif not rejected:
            if landing is not None:  # keyed where it lies: no landing seen waits for it
                self.table.camera.flight.take_landing(item.card, landing)
            self.table.commit_shoe_card(item, landing)
        else:
            self.table.camera.flight.refused_with_no_sighting()  # the camera cannot pair it

    def _accept_from_shoe(self, card: Card) -> bool:
        """Count a card out of the shoe; False (with its alarm) if it cannot be in this game."""
        breach = self.pack.take(card)
        if breach is not None and breach.pip_ten:
            self.table.alarm(
                AlarmKind.PIP_TEN,
                f"{card.code} left the shoe: there are no tens in a Spanish shoe; "
                "not recorded; call the floor",
            )
            return False
        if breach is not None:
            self.table.alarm(
                AlarmKind.BEYOND_COMPOSITION,
                f"{card.code} is copy {breach.copy} out of this shoe, but "
                f"{self.table.rules.decks} decks hold {breach.held}: a foreign card or a "
                "misread; not recorded; call the floor",
            )
            return False
        return True

    def on_unread(self, item: ShoeUnread) -> None:
        """A card the shoe dealt but could not read (or a report it could not decode, which
        may have been one): its place in the round is held, by a question to the dealer, until
        the dealer keys it (:meth:`key_unread`) or voids the round; nothing is placed after it
        and the round does not settle meanwhile. The camera's sightings that may be that card
        are offered to the dealer, never taken without the dealer."""
        if self._hold_resent(item):
            return
        if self.awaiting:
            # Resent by a shoe that does not say where its resend ends: checked in order.
            if item.index is None:
                self.table.alarm(AlarmKind.SHOE_PROBLEM, (
                    f"the shoe could not read {unread_words(item)} ({item.detail}) while "
                    "resending the cards drawn while its link was down: they may no longer be "
                    "checked in order; check the felt against the screen; call the floor"))
                return
            self._check_resent(item, self.awaiting.popleft())
            return
        self._hold_unread(item)

    def _hold_unread(self, item: ShoeUnread) -> None:
        """Hold the unread card's place in the round in play by a question to the dealer."""
        words = unread_words(item)
        fold = self.table.fold
        if fold is None or fold.ended:
            self.table.alarm(AlarmKind.SHOE_PROBLEM, (
                f"the shoe could not read {words} ({item.detail}), out of the shoe with no "
                "round in play: in no round; not recorded"))
            return
        felt = self.table.camera.flight.felt
        offers = [p.felt for p in felt if p.felt is not None and not p.stray
                  and self.table.questions.may_be_unread(p.felt)]
        self.table.questions.ask_unread(item, offers)
        self.table.alarm(AlarmKind.SHOE_PROBLEM, (
            f"the shoe could not read {words} ({item.detail}): its place in the round is held "
            "until the dealer keys it"), resolved=True)  # the question shows it: history only

    def key_unread(self, question: OpenQuestion, card: Card, spot: CardTarget | None,
                   how: str | None) -> None:
        """The dealer keyed ``card`` (``how``: "the camera's reading", chosen among the
        question's offers; None, keyed) for the unread card whose place ``question`` holds: it
        takes that place as the shoe's card would have, counted out of the pack, marked keyed
        with the shoe's report of it, with an alarm. A card the shoe cannot hold (a pip ten, a
        copy beyond the composition) is refused, with its alarm, and the place stays held."""
        unread = question.unread
        assert unread is not None
        words = unread_words(unread)
        breach = self.pack.check(card)
        if breach is not None:
            why = ("there are no tens in a Spanish shoe" if breach.pip_ten else
                   f"it would be copy {breach.copy} out of this shoe, and "
                   f"{self.table.rules.decks} decks hold {breach.held}")
            self.table.alarm(
                AlarmKind.PIP_TEN if breach.pip_ten else AlarmKind.BEYOND_COMPOSITION,
                f"{card.code} keyed for {words}, but {why}: not taken; look at the card again "
                "and key it, or void the round")
            return
        self.table.questions.withdraw()
        taken = f"took {how}, {card.code}" if how else f"keyed {card.code}" + (
            f" at {place_words(spot)}" if spot is not None else "")
        self.table.alarm(AlarmKind.KEYED_CARD, (
            f"the shoe could not read {words}; the dealer {self.table.dealer} {taken} after "
            f"{self.table.questions.waited(question)} s, in its place: recorded as keyed"))
        origin = UnreadOrigin(unread.session, unread.seq, unread.index)
        self.on_card(ShoeCard(card, None, unread.at, origin), spot)

    def on_burn(self, item: ShoeBurn) -> None:
        if self._hold_resent(item):
            return
        if item.card is not None:
            self.pack.take(item.card)  # a pip ten is not counted

    def on_link(self, item: ShoeLink) -> None:
        was = self.table.shoe_up
        self.table.shoe_up = item.up
        if not item.up and not (self.awaiting or self.resent):
            # the next card goes to the round in play, or to one opened later
            self.down_round = self.table.round_id if self.table.round_open else None
            self.watched = self.table.camera_trusted()  # the camera reads the cards meanwhile
        if item.up:
            if self.resent:
                self.resent_since = self.table.now  # the resend goes on from here
            self.table.resolve(AlarmKind.SHOE_LINK_DOWN)
        elif was or self.table.has_shoe:
            carry_on = (
                "reading cards from the camera until it reconnects"
                if self.table.camera_trusted()
                else "stop dealing until it reconnects (cards drawn meanwhile arrive then)"
            )
            detail = item.detail or "no detail"
            self.table.alarm(AlarmKind.SHOE_LINK_DOWN, f"shoe link down ({detail}): {carry_on}")
            # Landings waiting for a shoe card are paired with the shoe cards waiting, the
            # rest read from the camera alone (see CameraEvidence.pair), or, with no camera
            # to read them, dropped (the resend is lined up with what was recorded).
            if self.table.mode is Mode.CAMERA_ONLY:
                self.table.camera.pair()
            else:
                self.table.camera.flight.felt.clear()

    def on_problem(self, item: ShoeProblem) -> None:
        self.table.alarm(AlarmKind.SHOE_PROBLEM, item.text)

    def on_new_shoe(self, item: NewShoe) -> None:
        """A new shoe; one the shoe resends after its link was down takes effect in its place
        among the cards it resends."""
        if self._hold_resent(item):
            return
        self.awaiting.clear()
        self._load(item)

    def _load(self, item: NewShoe) -> None:
        if item.touched:
            self.table.alarm(AlarmKind.STAFF, f"dealer {self.table.dealer} touched New shoe: a "
                             "freshly shuffled pack; the composition count starts again",
                             resolved=True)
        self.pack.clear()
        if item.decks and item.decks != self.table.rules.decks:
            self.table.alarm(
                AlarmKind.SHOE_PROBLEM,
                f"the shoe reports {item.decks} decks but the table's rules say "
                f"{self.table.rules.decks}",
            )

    def accept_unshod(self, card: Card, who: str) -> bool:
        """A card the shoe did not deal (``who``: "the camera sees", "the dealer keyed"): no
        pip ten, and (without a shoe to count them) no more copies than the decks hold."""
        # with a shoe, counted when the shoe resends it
        breach = self.pack.foreign(card) if self.table.has_shoe else self.pack.take(card)
        if breach is not None and breach.pip_ten:
            self.table.alarm(
                AlarmKind.PIP_TEN,
                f"{who} {card.code}: there are no tens in a Spanish game; "
                "not recorded; call the floor",
            )
            return False
        if breach is not None:
            self.table.alarm(
                AlarmKind.BEYOND_COMPOSITION,
                f"{card.code} is copy {breach.copy} since the shuffle, but "
                f"{self.table.rules.decks} decks hold {breach.held}; not recorded",
            )
            return False
        return True

    def await_reveal(self, card: Card) -> None:
        """The face-down hole card turned over while the shoe's link is down: the shoe's resend
        of it is checked against it, in the place its face-down record holds (not as one card
        more, which would take the shoe's next card for a resend)."""
        for at, recorded in enumerate(self.awaiting):
            if recorded.card is None:
                self.awaiting[at] = Recorded(card, recorded.round_id)
                return


def _ended_without_it(rounds: list[str], voided: set[str]) -> str:
    """Which rounds a missed card may have gone to, each settled or ``voided``, and what to
    check: a settled round's payouts (a voided one paid nothing)."""
    settled = [r for r in rounds if r not in voided]
    if not settled:
        return f"round {' or '.join(rounds)} was voided without it: nothing was paid in it"
    if len(settled) == len(rounds):
        return f"round {' or '.join(rounds)} settled without it; check the payouts against the felt"
    named = " or ".join(f"{r} (voided)" if r in voided else r for r in rounds)
    return f"round {named} ended without it; check the payouts of {' and '.join(settled)} " \
        "against the felt"
