"""The shoe's cards at a table: each card out checked against the shoe's composition (through the
pack count, the one owner of that rule), burns, the link, a new shoe, the cards the shoe
resends after its link was down checked against what the camera or the dealer recorded, and a
card the shoe dealt but could not read, whose place is held until the dealer keys it."""

from __future__ import annotations

from collections import deque
from typing import TYPE_CHECKING, Protocol

from dealer_assist.roundlog import RoundFold, UnreadOrigin
from dealer_assist.rules import Card, CardTarget, RuleSet
from dealer_assist.table.alarms import Alarm, AlarmKind
from dealer_assist.table.mode import Mode
from dealer_assist.table.pack import PackCount
from dealer_assist.table.questions import OpenQuestion, QuestionDesk, unread_words
from dealer_assist.table.sources import (
    NewShoe,
    ShoeBurn,
    ShoeCard,
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
    def camera_trusted(self) -> bool: ...
    def alarm(self, kind: AlarmKind, text: str, resolved: bool = False) -> Alarm: ...
    def resolve(self, kind: AlarmKind) -> None: ...
    def commit_shoe_card(self, shoe: ShoeCard, landing: CardTarget | None = None) -> None: ...


class ShoeCards:
    """A table's shoe: ``pack`` counts the cards out since the shuffle; ``awaiting`` holds the
    cards recorded while the shoe's link was down (None: the face-down hole card, unread), in
    order, for the shoe's resend of each to be checked against."""

    def __init__(self, table: ShoeTable):
        self.table = table
        self.pack = PackCount(table.rules.decks)
        self.awaiting: deque[Card | None] = deque()
        #: the shoe's resend of the hole card recorded face down while its link was down: the
        #: card it turns over as (the camera's reading of it is checked against this)
        self.hole_card: Card | None = None

    def on_card(self, item: ShoeCard, landing: CardTarget | None = None) -> None:
        """A card out of the shoe; ``landing``: where the dealer keyed it (a card the shoe could
        not read, at a table whose camera does not watch: where it lies is its evidence)."""
        card = item.card
        if self.awaiting:
            # The shoe is resending cards the camera already recorded while the link was down.
            seen = self.awaiting.popleft()
            self.pack.take(card)
            if seen is None:  # the face-down hole card: the shoe names it, not the camera
                self.hole_card = card
            elif seen != card:
                self.table.alarm(
                    AlarmKind.SWITCHED_CARD,
                    f"the shoe dealt {card.code} but the camera recorded {seen.code} while the "
                    "shoe link was down: a switched card; call the floor",
                )
            return
        rejected = not self._accept_from_shoe(card)
        if self.table.mode is Mode.SHOE_AND_CAMERA:
            self.table.camera.flight.add_shoe(item, self.table.now, rejected)
            self.table.camera.pair()
        elif not rejected:
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
        words = unread_words(item)
        if self.awaiting:
            # The shoe resends a card the camera or the dealer recorded while its link was down.
            if item.index is None:
                self.table.alarm(AlarmKind.SHOE_PROBLEM, (
                    f"the shoe could not read {words} ({item.detail}) while resending the cards "
                    "drawn while its link was down: they may no longer be checked in order; "
                    "check the felt against the screen; call the floor"))
                return
            seen = self.awaiting.popleft()
            if seen is not None:
                self.pack.take(seen)
            self.table.alarm(AlarmKind.SHOE_PROBLEM, (
                f"the shoe could not read {words}, its resend of "
                f"{seen.code if seen else 'the face-down hole card'} recorded while its link "
                "was down: recorded as before, not checked against the shoe; call the floor"))
            return
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
        if item.card is not None:
            self.pack.take(item.card)  # a pip ten is not counted

    def on_link(self, item: ShoeLink) -> None:
        was = self.table.shoe_up
        self.table.shoe_up = item.up
        if item.up:
            self.table.resolve(AlarmKind.SHOE_LINK_DOWN)
        elif was or self.table.has_shoe:
            carry_on = (
                "reading cards from the camera until it reconnects"
                if self.table.camera_trusted()
                else "stop dealing until it reconnects (cards drawn meanwhile arrive then)"
            )
            detail = item.detail or "no detail"
            self.table.alarm(AlarmKind.SHOE_LINK_DOWN, f"shoe link down ({detail}): {carry_on}")
            # Landings waiting for a shoe card are now read from the camera alone.
            while self.table.camera.flight.felt:
                pending = self.table.camera.flight.felt.popleft()
                assert pending.felt is not None
                if self.table.mode is Mode.CAMERA_ONLY:
                    self.table.camera.commit_landing(pending)

    def on_problem(self, item: ShoeProblem) -> None:
        self.table.alarm(AlarmKind.SHOE_PROBLEM, item.text)

    def on_new_shoe(self, item: NewShoe) -> None:
        if item.touched:
            self.table.alarm(AlarmKind.STAFF, f"dealer {self.table.dealer} touched New shoe: a "
                             "freshly shuffled pack; the composition count starts again",
                             resolved=True)
        self.pack.clear()
        self.awaiting.clear()
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
        if None in self.awaiting:
            self.awaiting[self.awaiting.index(None)] = card

