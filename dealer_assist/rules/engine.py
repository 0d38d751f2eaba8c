"""The round engine: folds a round's events, knows whose turn it is, and settles.

Pure and deterministic: no I/O, no clock. Every method either applies its event completely or raises
a :class:`RoundError` and leaves the engine exactly as it was.
"""

from __future__ import annotations

import copy
import enum
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction
from typing import Any, TypeGuard

from dealer_assist.rules.cards import Card, Rank, Suit, composition_breach, hand_total
from dealer_assist.rules.money import ZERO, cents, format_money
from dealer_assist.rules.ruleset import MATCH_BY_DECKS, RuleSet
from dealer_assist.rules.settlement import (
    Bonus21,
    DealerResult,
    HandResult,
    InsuranceResult,
    MatchResult,
    Outcome,
    PayoutLine,
    SeatResult,
    Settlement,
)


class RoundError(ValueError):
    """An event the engine refuses; the engine is unchanged."""


class IllegalActionError(RoundError):
    """A player action out of turn or not allowed in the hand's state."""


class CardError(RoundError):
    """A card that is not due, not in a Spanish shoe, or not where the camera says it landed."""


class WagerError(RoundError):
    """A bet or insurance outside the table's limits or at the wrong time."""


class RoundIncompleteError(RoundError):
    """The round cannot be settled yet: something is still owed."""


class Action(enum.Enum):
    HIT = "hit"
    STAND = "stand"
    DOUBLE = "double"
    SPLIT = "split"
    SURRENDER = "surrender"
    RESCUE = "rescue"

    @classmethod
    def parse(cls, text: object) -> Action:
        try:
            return cls(str(text).lower())
        except ValueError:
            names = ", ".join(a.value for a in cls)
            raise IllegalActionError(f"unknown action {text!r} (one of {names})") from None


@dataclass(frozen=True, slots=True)
class CardTarget:
    """Where a card goes: the dealer (``seat`` None) or a seat's hand (``hand`` None: any hand)."""

    seat: int | None = None
    hand: int | None = None

    def __post_init__(self) -> None:
        if self.seat is None and self.hand is not None:  # the dealer has one hand
            object.__setattr__(self, "hand", None)

    @property
    def is_dealer(self) -> bool:
        return self.seat is None

    @classmethod
    def parse(cls, raw: object) -> CardTarget:
        """From a round log's ``to``: ``"dealer"`` or ``{"seat": 1, "hand": 0}``."""
        if raw == "dealer":
            return DEALER
        if isinstance(raw, Mapping) and is_whole_number(raw.get("seat")):
            hand = raw.get("hand")
            if hand is not None and not is_whole_number(hand):
                raise CardError(f"'to' hand must be a number, got {hand!r}")
            return cls(seat=raw["seat"], hand=hand)
        raise CardError(f'\'to\' must be "dealer" or {{"seat": N, "hand": N}}, got {raw!r}')

    def matches(self, other: CardTarget) -> bool:
        if self.seat != other.seat:
            return False
        return self.hand is None or other.hand is None or self.hand == other.hand

    def __str__(self) -> str:
        if self.seat is None:
            return "dealer"
        # hands numbered from 1 as people count them (to_json keeps the round log's 0-based)
        return f"seat {self.seat}" + ("" if self.hand is None else f" hand {self.hand + 1}")

    def to_json(self) -> object:
        return "dealer" if self.seat is None else {"seat": self.seat, "hand": self.hand}


DEALER = CardTarget()


class HandStatus(enum.Enum):
    OPEN = "open"
    STOOD = "stood"
    BUST = "bust"
    SURRENDERED = "surrendered"
    RESCUED = "rescued"


@dataclass(frozen=True, slots=True)
class HandState:
    """A hand as it stands, for queries: its cards, total, status, wagers (``wagered``: the main
    wager plus every doubling) and whether it came from a split."""

    cards: tuple[Card, ...]
    total: int
    status: HandStatus
    wager: Decimal
    doublings: tuple[Decimal, ...]
    split: bool

    @property
    def wagered(self) -> Decimal:
        return self.wager + sum(self.doublings, ZERO)


class _Hand:
    __slots__ = (
        "cards",
        "wager",
        "doublings",
        "from_split",
        "status",
        "awaiting_card",
        "_hard",
        "_aces",
    )

    def __init__(self, wager: Decimal, first: Card | None = None, from_split: bool = False):
        self.cards: list[Card] = []
        self.wager = wager
        self.doublings: list[Decimal] = []
        self.from_split = from_split
        self.status = HandStatus.OPEN
        self.awaiting_card = False
        self._hard = 0  # total with every ace counted 1, kept as cards come and go
        self._aces = 0
        if first is not None:
            self.add(first)

    def add(self, card: Card) -> None:
        self.cards.append(card)
        self._hard += card.points
        self._aces += card.rank is Rank.ACE

    def take_last(self) -> Card:
        card = self.cards.pop()
        self._hard -= card.points
        self._aces -= card.rank is Rank.ACE
        return card

    @property
    def total(self) -> int:
        hard = self._hard
        return hard + 10 if self._aces and hard <= 11 else hard

    @property
    def wagered(self) -> Decimal:
        return self.wager + sum(self.doublings, ZERO)

    @property
    def is_blackjack(self) -> bool:
        return not self.from_split and len(self.cards) == 2 and self.total == 21

    @property
    def needs_card(self) -> bool:
        return self.status is HandStatus.OPEN and (self.awaiting_card or len(self.cards) < 2)

    def describe(self) -> str:
        shown = " ".join(c.code for c in self.cards) or "no cards"
        return f"{shown} = {self.total}" if self.cards else shown

    def state(self) -> HandState:
        return HandState(tuple(self.cards), self.total, self.status, self.wager,
                         tuple(self.doublings), self.from_split)

    def clone(self) -> _Hand:
        twin = _Hand.__new__(_Hand)
        for name in _Hand.__slots__:
            setattr(twin, name, getattr(self, name))
        twin.cards, twin.doublings = list(self.cards), list(self.doublings)
        return twin


class _Seat:
    __slots__ = ("number", "wager", "match", "insurance", "player", "hands", "first_two")

    def __init__(self, number: int, wager: Decimal, player: str | None):
        self.number = number
        self.wager = wager
        self.match: Decimal | None = None
        self.insurance: Decimal | None = None
        self.player = player
        self.hands: list[_Hand] = [_Hand(wager)]
        self.first_two: list[Card] = []

    def clone(self) -> _Seat:
        twin = _Seat.__new__(_Seat)
        for name in _Seat.__slots__:
            setattr(twin, name, getattr(self, name))
        twin.hands = [hand.clone() for hand in self.hands]
        twin.first_two = list(self.first_two)
        return twin


class RoundEngine:
    """One round at one table, driven one event at a time (live) or from a log (settle, replay)."""

    def __init__(
        self,
        rules: RuleSet,
        round_id: str | None = None,
        *,
        rules_spec: Any = None,
        extra: Mapping[str, Any] | None = None,
        shoe_counts: Mapping[Card, int] | None = None,
    ):
        self.rules = rules
        self.round_id = round_id
        self.rules_spec = rules.name if rules_spec is None else rules_spec
        self.extra = dict(extra or {})
        self._seats: dict[int, _Seat] = {}
        self._order: list[_Seat] = []
        self._dealer: list[Card | None] = []
        self._deal_queue: list[_Seat | None] = []  # None = the dealer
        self._deal_pos = 0
        self._dealt = False  # every card of the initial deal is out
        self._dealer_bj = False
        self._doubled = False  # some hand has doubled (only then can a stand be implied)
        self._acted = False
        self._revealed = False
        self._scan = (0, 0)  # where _current() resumes its search for the open hand
        # Copies of each card (by code) out of the shoe: earlier rounds' and this one's.
        self._shoe: Counter[str] = Counter({c.code: n for c, n in (shoe_counts or {}).items()})

    # ------------------------------------------------------------------ queries

    @property
    def dealing_started(self) -> bool:
        return bool(self._deal_queue)

    @property
    def deal_complete(self) -> bool:
        return self._dealt

    @property
    def up_card(self) -> Card | None:
        return self._dealer[0] if self._dealer else None

    @property
    def hole_card_known(self) -> bool:
        return len(self._dealer) >= 2 and self._dealer[1] is not None

    @property
    def dealer_blackjack(self) -> bool:
        """True once the dealer's two known cards make 21 (the peek found blackjack)."""
        return self._dealer_bj

    def _update_dealer_blackjack(self) -> None:
        up, hole = self._dealer
        self._dealer_bj = (
            hole is not None
            and up is not None
            and up.points + hole.points == 11
            and (up.rank is Rank.ACE or hole.rank is Rank.ACE)
        )

    @property
    def insurance_open(self) -> bool:
        """Insurance is offered after the deal, with an ace up, before any player acts."""
        up = self.up_card
        return (
            self.rules.insurance
            and self.deal_complete
            and up is not None
            and up.rank is Rank.ACE
            and not self._acted
            and not self._revealed
        )

    def acting(self) -> tuple[int, int] | None:
        """(seat, hand index) of the hand in play, or None outside the players' turn."""
        found = self._current()
        return (found[0].number, found[1]) if found else None

    def next_card_target(self) -> CardTarget | None:
        """Who gets the next card out of the shoe, or None when no card is due.

        Before the deal it is the first seat with a main wager: the first card closes betting.
        """
        if not self._deal_queue:
            return CardTarget(self._order[0].number, 0) if self._order else None
        if self._deal_pos < len(self._deal_queue):
            seat = self._deal_queue[self._deal_pos]
            return DEALER if seat is None else CardTarget(seat.number, 0)
        if self.dealer_blackjack:
            return None
        current = self._current()
        if current is not None:
            seat, index, hand = current
            return CardTarget(seat.number, index) if hand.needs_card else None
        return DEALER if self._dealer_needs_card() else None

    def legal_actions(self) -> frozenset[Action]:
        """The actions the hand in play may take now (empty when no decision is pending)."""
        current = self._current()
        if current is None or self.dealer_blackjack:
            return frozenset()
        seat, index, hand = current
        if hand.needs_card:
            return frozenset()
        return frozenset(a for a in Action if self._why_illegal(seat, hand, a) is None)

    def describe(self) -> str:
        """The engine's state in words, for error messages and the dealer's screen (hands numbered
        from 1, as people count them)."""
        if not self._deal_queue:
            bets = ", ".join(f"seat {s.number}" for s in self._order) or "none"
            return f"betting (main wagers: {bets})"
        if self._deal_pos < len(self._deal_queue):
            target = self.next_card_target()
            return f"dealing (next card to {target})"
        if self.dealer_blackjack:
            return "dealer has blackjack: the round is over"
        current = self._current()
        if current is not None:
            seat, index, hand = current
            owed = ", owed a card" if hand.needs_card else " to act"
            return f"playing (seat {seat.number} hand {index + 1}: {hand.describe()}{owed})"
        if not self.hole_card_known:
            return "dealer's turn (hole card face down, to be revealed)"
        dealer = self._dealer_text()
        if self._dealer_needs_card():
            return f"dealer's turn (dealer {dealer} must draw)"
        if self._dealer_may_draw():
            return (f"complete (dealer {dealer}; no hand's result depends on the dealer, "
                    "who draws no more)")
        return f"complete (dealer {dealer})"

    def clone(self) -> RoundEngine:
        """An independent copy of the round as it stands (for what-if queries)."""
        twin = copy.copy(self)
        seats = {number: seat.clone() for number, seat in self._seats.items()}
        twin._seats = seats
        twin._order = [seats[seat.number] for seat in self._order]
        twin._deal_queue = [None if seat is None else seats[seat.number]
                            for seat in self._deal_queue]
        twin._dealer = list(self._dealer)
        twin._shoe = Counter(self._shoe)
        twin.extra = dict(self.extra)
        return twin

    def seats(self) -> tuple[int, ...]:
        """The seats with a main wager, in play order."""
        return tuple(seat.number for seat in self._order)

    def hands(self, seat: int) -> tuple[HandState, ...]:
        """``seat``'s hands in play order (none without a main wager there)."""
        found = self._seats.get(seat)
        return () if found is None else tuple(hand.state() for hand in found.hands)

    def dealer_cards(self) -> tuple[Card | None, ...]:
        """The dealer's cards as dealt (None: the hole card, face down and unknown)."""
        return tuple(self._dealer)

    def view(self) -> dict[str, Any]:
        """The whole visible state as plain JSON-able data (for screens, replay and tests)."""
        acting = self.acting()
        target = self.next_card_target()
        return {
            "round": self.round_id,
            "state": self.describe(),
            "acting": list(acting) if acting else None,
            "next_card": None if target is None else target.to_json(),
            "legal_actions": sorted(a.value for a in self.legal_actions()),
            "insurance_open": self.insurance_open,
            "dealer": {
                "cards": [None if c is None else c.code for c in self._dealer],
                "total": hand_total(self._dealer)[0] if self.hole_card_known else None,  # type: ignore[arg-type]
            },
            "seats": [
                {
                    "seat": seat.number,
                    "player": seat.player,
                    "wager": format_money(seat.wager),
                    "match": None if seat.match is None else format_money(seat.match),
                    "insurance": None if seat.insurance is None else format_money(seat.insurance),
                    "hands": [
                        {
                            "cards": [c.code for c in hand.cards],
                            "total": hand.total,
                            "soft": hand_total(hand.cards)[1],
                            "status": hand.status.value,
                            "wagered": format_money(hand.wagered),
                            "doublings": [format_money(d) for d in hand.doublings],
                            "split": hand.from_split,
                        }
                        for hand in seat.hands
                    ],
                }
                for seat in self._order
            ],
            "shoe_counts": dict(sorted(self._shoe.items())),
        }

    # ------------------------------------------------------------------ events

    def bet(
        self,
        seat: int,
        amount: Decimal,
        wager: str = "main",
        player: str | None = None,
    ) -> None:
        """Place a main wager or a Match the Dealer wager before the first card."""
        rules = self.rules
        if self._deal_queue:
            raise WagerError(
                f"seat {seat}: bets are closed once dealing starts ({self.describe()})"
            )
        if not is_whole_number(seat) or not 1 <= seat <= rules.seats:
            raise WagerError(f"seat must be 1 to {rules.seats}, got {seat!r}")
        if wager == "main":
            if seat in self._seats:
                have = format_money(self._seats[seat].wager)
                raise WagerError(f"seat {seat} already has a main wager of {have}")
            if not rules.min_bet <= amount <= rules.max_bet:
                raise WagerError(
                    f"seat {seat}: main wager {format_money(amount)} is outside the table's "
                    f"limits {format_money(rules.min_bet)} to {format_money(rules.max_bet)}"
                )
            self._seats[seat] = _Seat(seat, amount, player)
            self._order = [self._seats[n] for n in sorted(self._seats)]
        elif wager == "match":
            if rules.match_the_dealer is None:
                unpriced = "" if rules.decks in MATCH_BY_DECKS else (
                    f" (no standard paytable for {rules.decks} decks: the house names one with "
                    'the rules option "match_the_dealer")')
                raise WagerError(
                    f"seat {seat}: Match the Dealer is not offered under {rules.name}{unpriced}")
            existing = self._seats.get(seat)
            if existing is None:
                raise WagerError(f"seat {seat}: Match the Dealer needs a main wager first")
            if existing.match is not None:
                raise WagerError(f"seat {seat} already has a Match the Dealer wager")
            if amount <= 0 or amount > existing.wager:
                raise WagerError(
                    f"seat {seat}: Match the Dealer wager {format_money(amount)} must be positive "
                    f"and not exceed the main wager {format_money(existing.wager)}"
                )
            existing.match = amount
            if player is not None and existing.player is None:
                existing.player = player
        else:
            raise WagerError(f'seat {seat}: wager must be "main" or "match", got {wager!r}')

    def insurance(self, seat: int, amount: Decimal) -> None:
        """Insure a seat's hand for up to half its main wager while insurance is open."""
        target = self._seats.get(seat)
        if target is None:
            raise WagerError(f"seat {seat}: insurance needs a main wager at that seat")
        if not self.rules.insurance:
            raise WagerError(f"seat {seat}: this table does not offer insurance")
        if not self.insurance_open:
            up = self.up_card.code if self.up_card else "none yet"
            raise WagerError(
                f"seat {seat}: insurance is only offered after the deal with an ace up and before "
                f"any player acts (up card: {up}; {self.describe()})"
            )
        if target.insurance is not None:
            raise WagerError(f"seat {seat} is already insured")
        if amount <= 0 or amount * 2 > target.wager:
            raise WagerError(
                f"seat {seat}: insurance {format_money(amount)} must be positive and at most half "
                f"the main wager {format_money(target.wager)}"
            )
        target.insurance = amount

    def card(
        self, card: Card | None, to: CardTarget | None = None, face_down: bool = False
    ) -> CardTarget:
        """The next card out of the shoe; returns where the engine assigned it."""
        if card is None and not face_down:
            raise CardError("a card without a code must be face_down (the dealer's hole card)")
        if card is not None:
            self._check_card(card)
        if not self._dealt:
            target = self._card_target_or_raise(card, to, face_down)
            if card is not None:
                self._shoe[card.code] += 1
            self._deal_card(card)
            return target
        stood = self._imply_stand()
        try:
            target = self._card_target_or_raise(card, to, face_down)
        except RoundError:
            self._undo_stand(stood)
            raise
        if card is not None:
            self._shoe[card.code] += 1
        if target.is_dealer:
            self._dealer.append(card)
        else:
            self._give_to_hand(card)  # type: ignore[arg-type]
        return target

    def reveal(self, card: Card) -> None:
        """Turn the face-down hole card (camera-only tables)."""
        if not self.deal_complete or self.hole_card_known:
            raise CardError(f"no face-down hole card to reveal ({self.describe()})")
        self._check_card(card)
        up = self._dealer[0]
        assert up is not None
        if self._acted and hand_total([up, card])[0] == 21:
            raise CardError(
                f"dealer blackjack {up.code} {card.code} revealed after players acted: the peek "
                "was missed; call the floor"
            )
        self._shoe[card.code] += 1
        self._dealer[1] = card
        self._revealed = True
        self._update_dealer_blackjack()

    def action(
        self,
        seat: int,
        action: Action,
        amount: Decimal | None = None,
        hand: int | None = None,
    ) -> None:
        """A player's decision for the hand in play (``hand`` asserts which, 0-based)."""
        stood = self._imply_stand(seat, hand)
        try:
            seat_state, index, current = self._turn_or_raise(seat, action, hand)
            why = self._why_illegal(seat_state, current, action, amount)
            if why is not None:
                raise IllegalActionError(
                    f"seat {seat} hand {index + 1}: cannot {action.value}: {why} "
                    f"({current.describe()}, wager {format_money(current.wagered)})"
                )
        except RoundError:
            self._undo_stand(stood)
            raise
        self._acted = True
        if action is Action.HIT:
            current.awaiting_card = True
        elif action is Action.STAND:
            current.status = HandStatus.STOOD
        elif action is Action.DOUBLE:
            current.doublings.append(self._double_amount(current, amount))
            self._doubled = True
            current.awaiting_card = True
        elif action is Action.SPLIT:
            moved = current.take_last()
            current.from_split = True
            seat_state.hands.insert(index + 1, _Hand(current.wager, moved, from_split=True))
        elif action is Action.SURRENDER:
            current.status = HandStatus.SURRENDERED
        elif action is Action.RESCUE:
            current.status = HandStatus.RESCUED

    def settle(self) -> Settlement:
        """Settle a finished round; raises :class:`RoundIncompleteError` naming what is owed."""
        stood = self._imply_stand()
        try:
            self._check_complete()
        except RoundError:
            self._undo_stand(stood)
            raise
        return self._settlement()

    # ------------------------------------------------------------------ turn logic

    def _current(self) -> tuple[_Seat, int, _Hand] | None:
        if not self.deal_complete or self.dealer_blackjack:
            return None
        # Hands finish in play order, so the scan resumes where the last one found the open hand.
        order = self._order
        seat_index, hand_index = self._scan
        while seat_index < len(order):
            hands = order[seat_index].hands
            while hand_index < len(hands):
                if hands[hand_index].status is HandStatus.OPEN:
                    self._scan = (seat_index, hand_index)
                    return order[seat_index], hand_index, hands[hand_index]
                hand_index += 1
            seat_index += 1
            hand_index = 0
        self._scan = (seat_index, 0)
        return None

    def _imply_stand(self, seat: int | None = None, hand: int | None = None) -> _Hand | None:
        """A doubled hand is never hit: any event that moves past it means it stood.

        Rescue and double-double down are declared; standing is what the table sees when the
        game moves on. Returns the hand that was stood, for :meth:`_undo_stand`.
        """
        if not self._doubled:
            return None
        current = self._current()
        if current is None:
            return None
        seat_state, index, open_hand = current
        if not open_hand.doublings or open_hand.awaiting_card:
            return None
        if seat == seat_state.number and hand in (None, index):
            return None
        open_hand.status = HandStatus.STOOD
        return open_hand

    def _undo_stand(self, hand: _Hand | None) -> None:
        if hand is not None:
            hand.status = HandStatus.OPEN
            self._scan = (0, 0)

    def _turn_or_raise(
        self, seat: int, action: Action, hand: int | None
    ) -> tuple[_Seat, int, _Hand]:
        current = self._current()
        if current is None:
            own = self._seats.get(seat)
            finished = "" if own is None else "; " + ", ".join(
                f"hand {i}: {h.describe()}, {h.status.value}"
                for i, h in enumerate(own.hands, start=1)
            )
            raise IllegalActionError(
                f"seat {seat}: cannot {action.value}: no hand is in play{finished}"
                f" ({self.describe()})"
            )
        seat_state, index, open_hand = current
        if seat != seat_state.number or (hand is not None and hand != index):
            asked = f"seat {seat}" + ("" if hand is None else f" hand {hand + 1}")
            raise IllegalActionError(
                f"{asked}: cannot {action.value}: out of turn, seat {seat_state.number} "
                f"hand {index + 1} is to act ({open_hand.describe()})"
            )
        if open_hand.needs_card:
            raise IllegalActionError(
                f"seat {seat} hand {index + 1}: cannot {action.value}: the hand is owed a card "
                "first "
                f"({open_hand.describe()})"
            )
        return seat_state, index, open_hand

    def _why_illegal(
        self, seat: _Seat, hand: _Hand, action: Action, amount: Decimal | None = None
    ) -> str | None:
        rules = self.rules
        total = hand.total
        doubled = bool(hand.doublings)
        if action is Action.STAND:
            return None
        if action is Action.HIT:
            if doubled:
                return "a doubled hand is never hit"
            return "the hand is at 21" if total >= 21 else None
        if action is Action.DOUBLE:
            if total >= 21:
                return "the hand is at 21"
            if len(hand.doublings) >= rules.max_doublings:
                if rules.double_double_down:
                    return "a hand may double at most three times (8x the original wager)"
                return "this table allows one doubling per hand (no double-double down)"
            if amount is not None:
                full = self._full_double(hand)
                if amount <= 0:
                    return f"a double must be a positive amount, not {format_money(amount)}"
                if rules.double_for_less and amount > hand.wager:
                    return f"a double may be at most the original wager {format_money(hand.wager)}"
                if not rules.double_for_less and amount != full:
                    return self._not_the_double(hand, amount, full)
            return None
        if action is Action.SPLIT:
            if doubled or len(hand.cards) != 2:
                return "only a two-card hand may split"
            first, second = hand.cards
            pair = (
                first.points == second.points if rules.split_by_value else first.rank is second.rank
            )
            if not pair:
                kind = "equal value" if rules.split_by_value else "the same rank"
                return f"{first.code} and {second.code} are not a pair of {kind}"
            if len(seat.hands) >= rules.max_hands:
                return f"a seat may play at most {rules.max_hands} hands"
            return None
        if action is Action.SURRENDER:
            if not rules.late_surrender:
                return "this table does not offer surrender"
            if hand.from_split or len(seat.hands) > 1:
                return "surrender is not allowed after a split"
            if doubled or len(hand.cards) != 2:
                return "surrender is only allowed on the first two cards"
            return None
        if action is Action.RESCUE:
            if not doubled:
                return "rescue needs a doubled hand"
            return None
        raise AssertionError(action)

    def _not_the_double(self, hand: _Hand, amount: Decimal, full: Decimal) -> str:
        """Why ``amount`` is refused as a double on a table without doubling for less."""
        if amount < full:
            return f"no doubling for less on this table: the double is {format_money(full)}"
        if not self.rules.double_double_down:
            return f"the double is {format_money(full)}, the original wager"
        if full < hand.wagered:
            return (
                f"the double is {format_money(full)}: the hand's wager"
                f" {format_money(hand.wagered)}, capped at the table maximum"
                f" {format_money(self.rules.max_bet)}"
            )
        return f"the double is {format_money(full)}, the hand's wager so far"

    def _full_double(self, hand: _Hand) -> Decimal:
        if self.rules.double_double_down:
            return min(hand.wagered, self.rules.max_bet)
        return hand.wager

    def _double_amount(self, hand: _Hand, amount: Decimal | None) -> Decimal:
        return self._full_double(hand) if amount is None else amount

    # ------------------------------------------------------------------ cards

    def _check_card(self, card: Card) -> None:
        breach = composition_breach(card, self._shoe[card.code], self.rules.decks)
        if breach is None:
            return
        if breach.pip_ten:
            raise CardError(f"{card.code} is a pip ten: there are no tens in a Spanish shoe")
        raise CardError(
            f"{card.code} would be copy {breach.copy}, but {self.rules.decks} decks hold only "
            f"{breach.held}: a foreign card or a misread"
        )

    def _card_target_or_raise(
        self, card: Card | None, to: CardTarget | None, face_down: bool
    ) -> CardTarget:
        shown = card.code if card is not None else "face-down card"
        if not self._deal_queue:
            if not self._seats:
                raise CardError(f"{shown}: no card is due: no seat has a main wager")
            self._start_deal()
        target = self.next_card_target()
        if target is None:
            raise CardError(f"{shown}: no card is due ({self.describe()})")
        is_hole = target.is_dealer and len(self._dealer) == 1 and not self.deal_complete
        if face_down and not is_hole:
            self._cancel_deal_if_unstarted()
            raise CardError(f"only the dealer's hole card may be dealt face down, not to {target}")
        if to is not None and not to.matches(target):
            self._cancel_deal_if_unstarted()
            raise CardError(f"{shown} seen landing at {to}, but it is due to {target}")
        return target

    def _start_deal(self) -> None:
        queue: list[_Seat | None] = [*self._order, None, *self._order, None]
        self._deal_queue = queue

    def _cancel_deal_if_unstarted(self) -> None:
        if self._deal_pos == 0:
            self._deal_queue = []

    def _deal_card(self, card: Card | None) -> None:
        seat = self._deal_queue[self._deal_pos]
        self._deal_pos += 1
        if seat is None:
            self._dealer.append(card)
        else:
            assert card is not None
            seat.hands[0].add(card)
            seat.first_two.append(card)
        if self._deal_pos == len(self._deal_queue):
            self._dealt = True
            self._update_dealer_blackjack()
            for dealt in self._order:
                if dealt.hands[0].total == 21:
                    dealt.hands[0].status = HandStatus.STOOD

    def _give_to_hand(self, card: Card) -> None:
        current = self._current()
        assert current is not None
        hand = current[2]
        hand.add(card)
        hand.awaiting_card = False
        total = hand.total
        if total > 21:
            hand.status = HandStatus.BUST
        elif total == 21:
            hand.status = HandStatus.STOOD

    # ------------------------------------------------------------------ dealer

    def _dealer_text(self) -> str:
        shown = " ".join("??" if c is None else c.code for c in self._dealer)
        if self.hole_card_known:
            return f"{shown} = {hand_total(self._dealer)[0]}"  # type: ignore[arg-type]
        return shown

    def _hand_depends_on_dealer(self, hand: _Hand) -> bool:
        return hand.status is HandStatus.STOOD and hand.total < 21

    def _dealer_may_draw(self) -> bool:
        """The dealer's hand is below where the house rules make it stand."""
        if not self.hole_card_known or self.dealer_blackjack:
            return False
        total, soft = hand_total(self._dealer)  # type: ignore[arg-type]
        return total < 17 or (total == 17 and soft and self.rules.dealer_hits_soft_17)

    def _dealer_needs_card(self) -> bool:
        """The dealer must draw: it may, and some hand's result depends on the dealer's total.
        Only then is a card due to the dealer (rules §3.7): a draw that can change no result is
        a card nobody is due, refused (§6)."""
        if not self._dealer_may_draw():
            return False
        return any(self._hand_depends_on_dealer(h) for s in self._order for h in s.hands)

    def _check_complete(self) -> None:
        if not self._seats:
            raise RoundIncompleteError("the round has no main wagers")
        if not self.deal_complete:
            raise RoundIncompleteError(f"the deal is not finished ({self.describe()})")
        current = self._current()
        if current is not None:
            seat, index, hand = current
            owed = "is owed a card" if hand.needs_card else "has not finished"
            raise RoundIncompleteError(
                f"seat {seat.number} hand {index + 1} {owed} ({hand.describe()})"
            )
        if not self.hole_card_known:
            raise RoundIncompleteError("the dealer's hole card was never revealed")
        if self._dealer_needs_card():
            raise RoundIncompleteError(f"the dealer must still draw ({self._dealer_text()})")

    # ------------------------------------------------------------------ settlement

    def _settlement(self) -> Settlement:
        dealer_cards: list[Card] = [c for c in self._dealer if c is not None]
        dealer_total = hand_total(dealer_cards)[0]
        dealer_bj = self.dealer_blackjack
        dealer = DealerResult(
            cards=tuple(c.code for c in dealer_cards),
            total=dealer_total,
            blackjack=dealer_bj,
            bust=dealer_total > 21,
        )
        super_seats = self._super_bonus_seats()
        seats = tuple(
            self._settle_seat(seat, dealer_total, dealer_bj, super_seats) for seat in self._order
        )
        net = sum((s.net for s in seats), ZERO)
        return Settlement(self.round_id, self.rules_spec, dealer, seats, net, dict(self.extra))

    def _super_bonus_seats(self) -> list[_Seat]:
        up = self.up_card
        if up is None or up.rank is not Rank.SEVEN:
            return []
        two_decks = self.rules.decks == 2
        if two_decks and up.suit is not Suit.SPADES:
            return []
        winners = []
        for seat in self._order:
            hand = seat.hands[0]
            if len(seat.hands) != 1 or hand.doublings or len(hand.cards) != 3:
                continue
            if any(c.rank is not Rank.SEVEN for c in hand.cards):
                continue
            suits = {c.suit for c in hand.cards}
            qualifies = (
                suits == {Suit.HEARTS, Suit.CLUBS, Suit.DIAMONDS} if two_decks else len(suits) == 1
            )
            if qualifies and self.rules.super_bonus_for(seat.wager) is not None:
                winners.append(seat)
        return winners

    def _settle_seat(
        self, seat: _Seat, dealer_total: int, dealer_bj: bool, super_seats: list[_Seat]
    ) -> SeatResult:
        lines: list[PayoutLine] = []
        hands = tuple(
            self._settle_hand(seat.number, i, h, dealer_total, dealer_bj, lines)
            for i, h in enumerate(seat.hands)
        )
        match = self._settle_match(seat, lines)
        insurance = None
        if seat.insurance is not None:
            won = dealer_bj
            ins_net = seat.insurance * 2 if won else -seat.insurance
            insurance = InsuranceResult(seat.insurance, ins_net)
            reason = "INSURANCE 2:1" if won else "INSURANCE loses"
            lines.append(PayoutLine(seat.number, None, "insurance", reason, "2:1", ins_net))
        super_bonus = ZERO
        if seat in super_seats:
            super_bonus = self.rules.super_bonus_for(seat.wager) or ZERO
            lines.append(
                PayoutLine(seat.number, 0, "super-bonus", "SUPER BONUS", None, super_bonus)
            )
        envy = ZERO
        for winner in super_seats:
            same_player = winner.player is not None and winner.player == seat.player
            if winner is seat or same_player:
                continue
            envy += self.rules.envy_bonus
            lines.append(
                PayoutLine(
                    seat.number,
                    None,
                    "envy",
                    f"ENVY for seat {winner.number}'s Super Bonus",
                    None,
                    self.rules.envy_bonus,
                )
            )
        net = sum((h.net for h in hands), ZERO) + super_bonus + envy
        net += (match.net if match else ZERO) + (insurance.net if insurance else ZERO)
        return SeatResult(
            seat.number,
            seat.player,
            seat.wager,
            hands,
            match,
            insurance,
            super_bonus,
            envy,
            net,
            tuple(lines),
        )

    def _settle_match(self, seat: _Seat, lines: list[PayoutLine]) -> MatchResult | None:
        paytable = self.rules.match_the_dealer
        if seat.match is None or paytable is None:
            return None
        up = self.up_card
        assert up is not None
        suited = sum(1 for c in seat.first_two if c == up)
        unsuited = sum(1 for c in seat.first_two if c.rank is up.rank and c != up)
        odds = paytable.odds(unsuited, suited)
        if odds:
            net = seat.match * odds
            parts = []
            if suited:
                parts.append(f"{suited} suited")
            if unsuited:
                parts.append(f"{unsuited} unsuited")
            reason = f"MATCH {' + '.join(parts)} {odds}:1"
            lines.append(PayoutLine(seat.number, None, "match", reason, f"{odds}:1", net))
        else:
            net = -seat.match
            lines.append(PayoutLine(seat.number, None, "match", "MATCH loses", None, net))
        return MatchResult(seat.match, suited, unsuited, net)

    def _settle_hand(
        self,
        seat: int,
        index: int,
        hand: _Hand,
        dealer_total: int,
        dealer_bj: bool,
        lines: list[PayoutLine],
    ) -> HandResult:
        total = hand.total
        wagered = hand.wagered
        bonus: Bonus21 | None = None
        odds: Fraction | None = None
        if hand.status is HandStatus.SURRENDERED:
            returned = cents(hand.wager / 2)
            outcome, net = Outcome.SURRENDER, returned - wagered
            reason = f"SURRENDER: return {format_money(returned)}"
        elif hand.status is HandStatus.RESCUED:
            returned = hand.doublings[-1]
            outcome, net = Outcome.RESCUE, returned - wagered
            reason = f"RESCUE: return {format_money(returned)}, take {format_money(-net)}"
        elif hand.status is HandStatus.BUST:
            outcome, net, reason = Outcome.BUST, -wagered, "BUST"
        elif hand.is_blackjack:
            odds = self.rules.blackjack_pays
            outcome, net = Outcome.BLACKJACK, cents(wagered * odds.numerator / odds.denominator)
            reason = f"BLACKJACK {odds.numerator}:{odds.denominator}"
        elif dealer_bj:
            outcome, net, reason = Outcome.LOSE, -wagered, "LOSE to dealer blackjack"
        elif total == 21:
            outcome = Outcome.WIN
            bonus = None if hand.doublings else self._bonus_21(hand)
            if bonus is not None:
                odds = BONUS_ODDS[bonus]
                if bonus is Bonus21.S777_MIXED and self.rules.decks == 2:
                    odds = Fraction(2)
                net = cents(wagered * odds.numerator / odds.denominator)
                reason = f"{BONUS_NAMES[bonus]} {odds.numerator}:{odds.denominator}"
            else:
                net, reason = wagered, "21 WINS 1:1"
        elif dealer_total > 21 or total > dealer_total:
            outcome, net = Outcome.WIN, wagered
            reason = "WIN 1:1" + (" (dealer busts)" if dealer_total > 21 else "")
        elif total == dealer_total:
            outcome, net, reason = Outcome.PUSH, ZERO, "PUSH"
        else:
            outcome, net, reason = Outcome.LOSE, -wagered, "LOSE"
        odds_text = f"{odds.numerator}:{odds.denominator}" if odds is not None else None
        if odds_text is None and outcome is Outcome.WIN:
            odds_text = "1:1"
        kind = "bonus-21" if bonus is not None else outcome.value
        lines.append(PayoutLine(seat, index, kind, reason, odds_text, net))
        return HandResult(
            cards=tuple(c.code for c in hand.cards),
            total=total,
            wagered=wagered,
            outcome=outcome,
            bonus=bonus,
            net=net,
            doublings=tuple(hand.doublings),
            from_split=hand.from_split,
        )

    @staticmethod
    def _bonus_21(hand: _Hand) -> Bonus21 | None:
        cards = hand.cards
        count = len(cards)
        if count >= 7:
            return Bonus21.SEVEN_CARD
        if count == 6:
            return Bonus21.SIX_CARD
        if count == 5:
            return Bonus21.FIVE_CARD
        if count != 3:
            return None
        ranks = sorted(c.rank.value for c in cards)
        suits = {c.suit for c in cards}
        if ranks == ["6", "7", "8"]:
            kinds = (Bonus21.S678_MIXED, Bonus21.S678_SUITED, Bonus21.S678_SPADES)
        elif ranks == ["7", "7", "7"]:
            kinds = (Bonus21.S777_MIXED, Bonus21.S777_SUITED, Bonus21.S777_SPADES)
        else:
            return None
        if len(suits) > 1:
            return kinds[0]
        return kinds[2] if suits == {Suit.SPADES} else kinds[1]


BONUS_ODDS: dict[Bonus21, Fraction] = {
    Bonus21.FIVE_CARD: Fraction(3, 2),
    Bonus21.SIX_CARD: Fraction(2),
    Bonus21.SEVEN_CARD: Fraction(3),
    Bonus21.S678_MIXED: Fraction(3, 2),
    Bonus21.S678_SUITED: Fraction(2),
    Bonus21.S678_SPADES: Fraction(3),
    Bonus21.S777_MIXED: Fraction(3, 2),
    Bonus21.S777_SUITED: Fraction(2),
    Bonus21.S777_SPADES: Fraction(3),
}
BONUS_NAMES: dict[Bonus21, str] = {
    Bonus21.FIVE_CARD: "5-CARD 21",
    Bonus21.SIX_CARD: "6-CARD 21",
    Bonus21.SEVEN_CARD: "7-CARD 21",
    Bonus21.S678_MIXED: "6-7-8 MIXED",
    Bonus21.S678_SUITED: "6-7-8 SUITED",
    Bonus21.S678_SPADES: "6-7-8 SPADES",
    Bonus21.S777_MIXED: "7-7-7 MIXED",
    Bonus21.S777_SUITED: "7-7-7 SUITED",
    Bonus21.S777_SPADES: "7-7-7 SPADES",
}


def is_whole_number(value: object) -> TypeGuard[int]:
    """A JSON whole number: an int that is not a bool (``true`` is not seat 1)."""
    return isinstance(value, int) and not isinstance(value, bool)
