"""The felt tracker: card sightings on the table plane (as the camera pipeline reports them)
become landings, splits and the hole card's turn; fed with the shoe through the loop, simulated
rounds settle exactly as played.

The sightings are generated from the simulated table's physical steps with a simple geometry
(test input standing in for the detector, tracker and calibration, which have no model here)."""

from __future__ import annotations

from itertools import count

import pytest

from dealer_assist.rules import Card, CardTarget, RuleSet
from dealer_assist.table.alarms import AlarmKind
from dealer_assist.table.felt import FeltTracker, Sighting, SightingKind
from dealer_assist.table.loop import TableLoop
from dealer_assist.table.recording import MemoryRecorder
from dealer_assist.table.simulation.world import Player, SimulatedTable
from dealer_assist.table.sources import (
    DEALER_SPOT,
    CameraLink,
    FeltCard,
    FeltStacks,
    FeltSwap,
    FinishRound,
    HoleCardShown,
    ShoeLink,
)

C = Card.parse
SEAT_WIDTH = 900.0


def zone_of(x: float, y: float) -> tuple[str, int | None] | None:
    if y < 0:
        return None  # the chip tray
    if y < 100:
        return ("dealer", None)
    seat = int(x // SEAT_WIDTH) + 1
    return ("seat", seat) if 1 <= seat <= 7 else None


class Felt:
    """Lays the simulated dealer's cards out on the table plane and reports sightings."""

    def __init__(self) -> None:
        self.tracks = count(1)
        self.dealer: list[int] = []
        self.stacks: dict[int, list[tuple[float, list[tuple[int, Card]]]]] = {}

    def _slot(self, seat: int) -> float:
        used = {x for x, _ in self.stacks.get(seat, [])}
        return next(x for x in (40.0 + 210.0 * i for i in range(4)) if x not in used)

    def sightings(self, item: object) -> list[Sighting]:
        if isinstance(item, FeltCard) and item.card is not None:
            track = next(self.tracks)
            if item.spot.is_dealer:
                self.dealer.append(track)
                return [
                    Sighting(SightingKind.APPEARED, item.card, 60.0 * len(self.dealer), 50.0, track)
                ]
            seat = item.spot.seat
            assert seat is not None
            stacks = self.stacks.setdefault(seat, [])
            if not stacks:
                stacks.append((self._slot(seat), []))
            x, cards = stacks[item.spot.hand]
            cards.append((track, item.card))
            base = (seat - 1) * SEAT_WIDTH
            return [
                Sighting(
                    SightingKind.APPEARED,
                    item.card,
                    base + x + 12.0 * len(cards),
                    200.0 + 8.0 * len(cards),
                    track,
                    item.sideways,
                )
            ]
        if isinstance(item, HoleCardShown) and item.card is not None:
            track = next(self.tracks)
            self.dealer.append(track)
            x = 60.0 * len(self.dealer)
            return [Sighting(SightingKind.APPEARED, item.card, x, 50.0, track)]
        if isinstance(item, FeltStacks):
            stacks = self.stacks[item.seat]
            source = item.from_stack or 0
            x, cards = stacks[source]
            moved_track, moved_card = cards.pop()
            new_x = self._slot(item.seat)
            new_track = next(self.tracks)
            stacks.insert(source + 1, (new_x, [(new_track, moved_card)]))
            base = (item.seat - 1) * SEAT_WIDTH
            # The tracker loses the card where it was, then finds it at its new place.
            return [
                Sighting(SightingKind.REMOVED, moved_card, base + x, 216.0, moved_track),
                Sighting(SightingKind.APPEARED, moved_card, base + new_x + 12.0, 208.0, new_track),
            ]
        if isinstance(item, FinishRound):
            gone = [
                (t, c)
                for _, cards in (s for stacks in self.stacks.values() for s in stacks)
                for t, c in cards
            ]
            gone += [(t, C("2S")) for t in self.dealer]
            self.dealer, self.stacks = [], {}
            return [Sighting(SightingKind.REMOVED, c, 0.0, 0.0, t) for t, c in gone]
        return []


@pytest.mark.parametrize("seed", [2, 8])
def test_rounds_read_from_sightings_settle_exactly_as_played(seed):
    rules = RuleSet.preset("h17-ddd-6")
    world = SimulatedTable(rules, [Player(s, f"P{s}") for s in (1, 3, 4, 6)], seed=seed)
    world.camera_sees = True
    loop = TableLoop("h17-ddd-6", MemoryRecorder())
    loop.dealer = "D1"  # signed in (signing in: test_sign_in.py)
    tracker = FeltTracker(zone_of)
    felt = Felt()
    now = 0.0
    loop.handle(ShoeLink(True), now)
    loop.handle(CameraLink(True), now)
    splits = 0
    for number in range(1, 41):
        for channel, item in world.round(number):
            now += 0.01
            if channel == "camera":
                splits += isinstance(item, FeltStacks)
                for sighting in felt.sightings(item):
                    for camera_input in tracker.feed(sighting):
                        loop.handle(camera_input, now)
            else:
                loop.handle(item, now)
                if isinstance(item, FinishRound):
                    for sighting in felt.sightings(item):
                        tracker.feed(sighting)
        assert loop.rounds_played == number, [a.text for a in loop.alarms]
        got = loop.last_settlement.to_json()
        want = world.settlements[-1].to_json()
        assert (got["dealer"], got["seats"]) == (want["dealer"], want["seats"])
    assert loop.alarms == []
    assert splits > 0  # the seeds deal some pairs that split


def test_second_dealer_card_is_the_hole_card_turned():
    tracker = FeltTracker(zone_of)
    up = tracker.feed(Sighting(SightingKind.APPEARED, C("6S"), 60, 50, 1))
    hole = tracker.feed(Sighting(SightingKind.APPEARED, C("KD"), 120, 50, 2))
    draw = tracker.feed(Sighting(SightingKind.APPEARED, C("5C"), 180, 50, 3))
    assert up == [FeltCard(C("6S"), DEALER_SPOT)]
    assert hole == [HoleCardShown(C("KD"))]
    assert draw == [FeltCard(C("5C"), DEALER_SPOT)]


def test_split_seen_while_the_moved_card_is_still_tracked():
    tracker = FeltTracker(zone_of)
    tracker.feed(Sighting(SightingKind.APPEARED, C("8S"), 50, 200, 1))
    tracker.feed(Sighting(SightingKind.APPEARED, C("8H"), 62, 208, 2))
    out = tracker.feed(Sighting(SightingKind.APPEARED, C("8H"), 250, 205, 3))
    assert out == [FeltStacks(1, 2, from_stack=0)]
    assert tracker.feed(Sighting(SightingKind.REMOVED, C("8H"), 62, 208, 2)) == []
    assert tracker.feed(Sighting(SightingKind.APPEARED, C("3C"), 262, 213, 4, True)) == [
        FeltCard(C("3C"), CardTarget(1, 1), True)
    ]


def test_split_seen_when_the_moved_card_was_read_with_another_suit():
    """The pair was read 3D 3C; the card moved to a new stack reads 3S (the camera's commonest
    confusion is clubs for spades): still a split, not a card from nowhere."""
    tracker = FeltTracker(zone_of)
    tracker.feed(Sighting(SightingKind.APPEARED, C("3D"), 50, 200, 1))
    tracker.feed(Sighting(SightingKind.APPEARED, C("3C"), 62, 208, 2))
    assert tracker.feed(Sighting(SightingKind.APPEARED, C("3S"), 250, 205, 3)) == [
        FeltStacks(1, 2, from_stack=0)
    ]


def test_card_beyond_a_fans_reach_joins_the_nearest_stack_unless_it_splits():
    """A doubled card laid sideways (or a card seen by a corner) can lie further from its hand
    than the stack radius; only a split starts a second stack."""
    tracker = FeltTracker(zone_of)
    tracker.feed(Sighting(SightingKind.APPEARED, C("9S"), 50, 200, 1))
    tracker.feed(Sighting(SightingKind.APPEARED, C("2H"), 62, 208, 2))
    assert tracker.feed(Sighting(SightingKind.APPEARED, C("KH"), 140, 150, 3, True)) == [
        FeltCard(C("KH"), CardTarget(1, 0), True)
    ]


def test_card_changing_in_place_is_a_swap_and_reaches_the_loop_as_an_alarm():
    tracker = FeltTracker(zone_of)
    tracker.feed(Sighting(SightingKind.APPEARED, C("7S"), 50, 200, 1))
    out = tracker.feed(Sighting(SightingKind.CHANGED, C("KH"), 50, 200, 1))
    assert out == [FeltSwap(C("7S"), C("KH"), CardTarget(1, 0))]
    loop = TableLoop("h17-ddd-6", MemoryRecorder())
    loop.dealer = "D1"  # signed in (signing in: test_sign_in.py)
    loop.handle(CameraLink(True), 0.0)
    loop.handle(out[0], 0.0)
    assert [a.kind for a in loop.alarms] == [AlarmKind.SWITCHED_CARD]


def test_cards_outside_any_zone_are_ignored_and_a_cleared_table_resets():
    tracker = FeltTracker(zone_of)
    assert tracker.feed(Sighting(SightingKind.APPEARED, C("QS"), 50, -40, 1)) == []
    tracker.feed(Sighting(SightingKind.APPEARED, C("6S"), 60, 50, 2))
    tracker.feed(Sighting(SightingKind.REMOVED, C("6S"), 60, 50, 2))
    assert tracker.feed(Sighting(SightingKind.APPEARED, C("9D"), 60, 50, 3)) == [
        FeltCard(C("9D"), DEALER_SPOT)
    ]


def test_same_card_again_beside_a_long_hand_is_its_next_card_not_a_split():
    """Six decks: a hand 2C AD QD 2H gets a second 2H, seen by a corner further up than the
    stack radius. Only a pair splits, so it is that hand's next card."""
    tracker = FeltTracker(zone_of)
    for track, (code, x, y) in enumerate(
        [("2C", 50, 300), ("AD", 66, 278), ("QD", 82, 256), ("2H", 98, 234)], start=1
    ):
        tracker.feed(Sighting(SightingKind.APPEARED, C(code), x, y, track))
    assert tracker.feed(Sighting(SightingKind.APPEARED, C("2H"), 98, 150, 5)) == [
        FeltCard(C("2H"), CardTarget(1, 0))
    ]


def test_pair_losing_a_card_is_a_split_before_the_moved_card_is_read():
    """The dealer moves the 3S of a 3D 3S pair; alone at its new place the camera does not read
    it (or reads it 3C). The pair losing a card announces the split, so the next card dealt to
    the first hand is not taken for a hit on the pair, the new hand's card lands in the new
    stack, and the moved card, read at last, is not a card of its own."""
    tracker = FeltTracker(zone_of)
    tracker.feed(Sighting(SightingKind.APPEARED, C("3D"), 50, 200, 1))
    tracker.feed(Sighting(SightingKind.APPEARED, C("3S"), 62, 208, 2))
    assert tracker.feed(Sighting(SightingKind.REMOVED, C("3S"), 62, 208, 2)) == [
        FeltStacks(1, 2, from_stack=0)
    ]
    assert tracker.feed(Sighting(SightingKind.APPEARED, C("JD"), 62, 208, 3)) == [
        FeltCard(C("JD"), CardTarget(1, 0))
    ]
    assert tracker.feed(Sighting(SightingKind.APPEARED, C("4C"), 262, 195, 4)) == [
        FeltCard(C("4C"), CardTarget(1, 1))
    ]
    assert tracker.feed(Sighting(SightingKind.APPEARED, C("3C"), 250, 205, 5)) == []
    assert tracker.feed(Sighting(SightingKind.APPEARED, C("QH"), 275, 185, 6)) == [
        FeltCard(C("QH"), CardTarget(1, 1))
    ]


def test_a_hand_of_two_unlike_cards_losing_one_is_no_split():
    tracker = FeltTracker(zone_of)
    tracker.feed(Sighting(SightingKind.APPEARED, C("9D"), 50, 200, 1))
    tracker.feed(Sighting(SightingKind.APPEARED, C("3S"), 62, 208, 2))
    assert tracker.feed(Sighting(SightingKind.REMOVED, C("3S"), 62, 208, 2)) == []


def test_a_card_lost_from_view_and_read_again_is_the_same_card():
    """The sixth card of a fan covers the fifth's index (its track is removed) and is not read
    itself; the fifth, read again by its other corner, is not a new card (read as one it stood
    for the sixth: a silent wrong card in a hand-held game); the sixth, read at last, is. At the
    dealer, an up card covered by a draw and read again is no second draw."""
    tracker = FeltTracker(zone_of)
    for track, (code, x, y) in enumerate(
        [("2C", 50, 300), ("AD", 66, 278), ("QD", 82, 256), ("2H", 98, 234), ("AD", 114, 212)],
        start=1,
    ):
        assert tracker.feed(Sighting(SightingKind.APPEARED, C(code), x, y, track)) == [
            FeltCard(C(code), CardTarget(1, 0))]
    assert tracker.feed(Sighting(SightingKind.REMOVED, C("AD"), 114, 212, 5)) == []
    assert tracker.feed(Sighting(SightingKind.APPEARED, C("AD"), 140, 180, 6)) == []
    assert tracker.feed(Sighting(SightingKind.APPEARED, C("2H"), 130, 190, 7)) == [
        FeltCard(C("2H"), CardTarget(1, 0))]

    tracker.feed(Sighting(SightingKind.APPEARED, C("6S"), 60, 50, 10))
    assert tracker.feed(Sighting(SightingKind.APPEARED, C("KD"), 120, 50, 11)) == [
        HoleCardShown(C("KD"))]
    tracker.feed(Sighting(SightingKind.APPEARED, C("5C"), 90, 55, 12))
    assert tracker.feed(Sighting(SightingKind.REMOVED, C("6S"), 60, 50, 10)) == []
    assert tracker.feed(Sighting(SightingKind.APPEARED, C("6S"), 40, 45, 13)) == []
    assert tracker.feed(Sighting(SightingKind.APPEARED, C("9H"), 150, 50, 14)) == [
        FeltCard(C("9H"), DEALER_SPOT)]


def test_a_card_read_again_beside_one_unlike_card_is_the_same_card_not_a_split():
    """A hand 3D KS: the unread next card covers the KS, which is read again. One card is left,
    but 3 and K are no pair to split: the KS is the same card, not a card of its own."""
    tracker = FeltTracker(zone_of)
    tracker.feed(Sighting(SightingKind.APPEARED, C("3D"), 50, 200, 1))
    tracker.feed(Sighting(SightingKind.APPEARED, C("KS"), 62, 208, 2))
    assert tracker.feed(Sighting(SightingKind.REMOVED, C("KS"), 62, 208, 2)) == []
    assert tracker.feed(Sighting(SightingKind.APPEARED, C("KS"), 90, 180, 3)) == []
    assert tracker.feed(Sighting(SightingKind.APPEARED, C("3S"), 80, 190, 4)) == [
        FeltCard(C("3S"), CardTarget(1, 0))]
