"""The demo's physical table: a shuffled Spanish shoe, players, and a dealer dealing by procedure.

:class:`SimulatedTable` plays rounds and says, in physical order, what each device would report:
``("shoe", ShoeCard)`` as a card leaves the shoe, ``("camera", FeltCard | FeltStacks |
HoleCardShown)`` as the overhead camera sees it, ``("dealer", PlaceBet | Decide | ...)`` for the
dealer's touches. It keeps its own :class:`~dealer_assist.rules.RoundEngine` (the truth of what
happened at the table), so the live loop's settlement can be checked against it.

Which touches the dealer makes depends on what the readers can see: with a camera, hits, stands,
doubles and splits are read off the felt and only surrender, rescue and bets are touched; without
one the dealer touches every decision except a hit (a card for the hand in play is a hit).
"""

from __future__ import annotations

import random
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass
from decimal import Decimal

from dealer_assist.gamemath.strategy import BasicStrategy
from dealer_assist.rules import (
    DEALER,
    SPANISH_DECK,
    Action,
    Card,
    CardTarget,
    HandState,
    RoundEngine,
    RoundError,
    RuleSet,
    Settlement,
)
from dealer_assist.table.sources import (
    CloseInsurance,
    Decide,
    FeltCard,
    FeltStacks,
    FinishRound,
    HoleCardShown,
    NewShoe,
    PlaceBet,
    ShoeCard,
    TableInput,
)

Step = tuple[str, TableInput]

BET_CHOICES = (Decimal("5"), Decimal("10"), Decimal("10"), Decimal("25"), Decimal("50"))


@dataclass(frozen=True, slots=True)
class Player:
    """A simulated player on one seat; ``match_rate``: how often they add Match the Dealer."""

    seat: int
    name: str
    match_rate: float = 0.3


#: The demo table's players: four seats of seven, two of them side by side.
DEFAULT_PLAYERS = (Player(1, "P1"), Player(2, "P2"), Player(3, "P3"), Player(5, "P5"))

#: Rounds whose true settlements a simulated table keeps (the demo deals for days).
SETTLEMENTS_KEPT = 1000


#: Cards whose true places a simulated table keeps (the dealer's questions are about the last).
PLACEMENTS_KEPT = 64


@dataclass(frozen=True, slots=True)
class Placement:
    """Where a dealt card truly went (``spot``) and the decision that asked for it there: HIT
    or DOUBLE; None for a card owed without one (the deal, a split hand's, the dealer's)."""

    card: Card
    spot: CardTarget
    asked: Action | None
    shoe_index: int  #: its 1-based position in the shoe, as the shoe numbers it


class SimulatedTable:
    """Deals rounds from a seeded shoe and yields what the shoe, camera and dealer report;
    ``settlements`` holds the true settlements of its latest ``SETTLEMENTS_KEPT`` rounds."""

    def __init__(
        self,
        rules: RuleSet,
        players: list[Player],
        *,
        seed: int = 0,
        penetration: float = 0.75,
    ):
        self.rules = rules
        self.players = players
        self.random = random.Random(seed)
        self.penetration = penetration
        self.shoe: list[Card] = []
        self.drawn = 0
        self.truth: RoundEngine | None = None
        self.settlements: deque[Settlement] = deque(maxlen=SETTLEMENTS_KEPT)
        self.camera_sees = True  # the dealer touches what the camera cannot read
        #: where the latest cards truly went, for the simulated dealer's answers
        self.placed: deque[Placement] = deque(maxlen=PLACEMENTS_KEPT)
        self.strategy = BasicStrategy(
            rules.decks,
            rules.dealer_hits_soft_17,
            rules.max_doublings,
            rules.late_surrender,
            rules.max_hands,
            rules.split_by_value,
        )

    def _shuffle(self) -> Iterator[Step]:
        self.shoe = [card for card in SPANISH_DECK for _ in range(self.rules.decks)]
        self.random.shuffle(self.shoe)
        self.drawn = 0
        yield "shoe", NewShoe(self.rules.decks)

    def _draw(self) -> Card:
        card = self.shoe[self.drawn]
        self.drawn += 1
        return card

    def round(self, number: int) -> Iterator[Step]:
        """One round from bets to the dealer's 'finish' touch."""
        if not self.shoe or self.drawn > self.penetration * len(self.shoe):
            yield from self._shuffle()
        truth = RoundEngine(self.rules, f"truth-{number}")
        self.truth = truth
        for player in self.players:
            amount = self.random.choice(BET_CHOICES)
            truth.bet(player.seat, amount, player=player.name)
            yield "dealer", PlaceBet(player.seat, amount, player=player.name)
            if self.rules.match_the_dealer and self.random.random() < player.match_rate:
                side = min(amount, Decimal("5"))
                truth.bet(player.seat, side, wager="match")
                yield "dealer", PlaceBet(player.seat, side, wager="match")
        # The deal: every card goes where the engine says; the hole card lies face down.
        while not truth.deal_complete:
            target = truth.next_card_target()
            assert target is not None
            is_hole = target.is_dealer and truth.up_card is not None
            yield from self._card(target.seat, target.hand or 0, face_down=is_hole)
        if truth.insurance_open:  # nobody here insures: the dealer closes insurance, then peeks
            yield "dealer", CloseInsurance()
        yield from self._players_turn()
        hole = truth.dealer_cards()[1]
        assert hole is not None  # the simulated shoe names every card
        yield "camera", HoleCardShown(hole)
        while truth.next_card_target() == DEALER:
            try:
                truth.settle()
                break  # a draw now could change nothing: the dealer stops
            except RoundError:
                yield from self._card(None, 0)
        self.settlements.append(truth.settle())
        yield "dealer", FinishRound()

    def _card(
        self, seat: int | None, hand: int, asked: Action | None = None, face_down: bool = False
    ) -> Iterator[Step]:
        assert self.truth is not None
        card = self._draw()
        self.truth.card(card)
        self.placed.append(Placement(card, CardTarget(seat, hand), asked, self.drawn))
        sideways = asked is Action.DOUBLE
        yield "shoe", ShoeCard(card)
        yield "camera", FeltCard(None if face_down else card, CardTarget(seat, hand), sideways)

    def _decide(
        self, hands: tuple[HandState, ...], index: int, up: Card, legal: frozenset[Action]
    ) -> Action:
        """The published basic strategy's play, or what a player does when it is not allowed."""
        hand = hands[index]
        play = self.strategy.play(
            list(hand.cards),
            up,
            doublings=len(hand.doublings),
            split_hand=hand.split,
            hands=len(hands),
        )
        action = Action[play.name]
        if action in legal:
            return action
        if action in (Action.DOUBLE, Action.SURRENDER, Action.SPLIT) and Action.HIT in legal:
            return Action.HIT
        return Action.STAND

    def _players_turn(self) -> Iterator[Step]:
        truth = self.truth
        assert truth is not None
        up = truth.up_card
        assert up is not None
        while (acting := truth.acting()) is not None:
            seat, index = acting
            owed = truth.next_card_target()
            if owed is not None:
                # A split hand is owed its second card before anyone decides.
                yield from self._card(seat, index)
                continue
            action = self._decide(truth.hands(seat), index, up, truth.legal_actions())
            truth.action(seat, action)
            # Without a camera the dealer touches every decision (a card no touch asked for
            # is a question); with one, only what leaves nothing on the felt to see.
            touched = action in (Action.SURRENDER, Action.RESCUE) or not self.camera_sees
            if touched:
                yield "dealer", Decide(seat, action, hand=index)
            if action is Action.SPLIT:
                yield "camera", FeltStacks(seat, len(truth.hands(seat)), from_stack=index)
            elif action in (Action.HIT, Action.DOUBLE):
                yield from self._card(seat, index, asked=action)

