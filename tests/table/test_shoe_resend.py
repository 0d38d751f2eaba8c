"""The cards a shoe resends after its link was down, lined up with what the camera recorded
meanwhile: a card the camera missed is neither a switched card nor a reason to record another
twice, and a card of a round that settled while the link was down never goes into the next.

The shoe's inputs are the values the real shoe source makes of the reader's events (marked
resent, then caught up: tests/shoe/test_links.py drives that over a real pty and socket)."""

from __future__ import annotations

from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dealer_assist.rules import Action, Card, CardTarget
from dealer_assist.table.alarms import AlarmKind
from dealer_assist.table.resend import line_up
from dealer_assist.table.sources import (
    DEALER_SPOT,
    CameraLink,
    Decide,
    FeltCard,
    FeltStacks,
    HoleCardShown,
    NewShoe,
    PlaceBet,
    ShoeBurn,
    ShoeCard,
    ShoeCaughtUp,
    ShoeLink,
    ShoeUnread,
    VoidRound,
)
from tests.table.test_loop import Table, deal

C = Card.parse
WAIT = 1.5  # the loop's default camera wait
CODES = [c + s for c in "A23456789JQK" for s in "SHDC"]


def deal_one(table: Table, code: str, resent: bool) -> None:
    """``code`` out of the shoe: live, or kept while its link was down and then resent."""
    if resent:
        table.send(ShoeLink(False, "cable"))
        resend(table, code)
    else:
        table.send(ShoeCard(C(code)))


def resend(table: Table, *codes: str | object) -> None:
    """The link comes back and the shoe resends ``codes`` (or inputs), then says it has caught
    up."""
    table.send(ShoeLink(True, "back"))
    table.send(*(ShoeCard(C(c), held=True) if isinstance(c, str) else c for c in codes),
               ShoeCaughtUp())


@given(st.lists(st.sampled_from(CODES), max_size=12), st.data())
def test_line_up_pairs_every_recorded_card_with_its_own_when_the_camera_only_missed_some(
        dealt, data):
    kept = data.draw(st.lists(st.booleans(), min_size=len(dealt), max_size=len(dealt)))
    recorded = [code for code, keep in zip(dealt, kept, strict=True) if keep]
    pairs = line_up([C(c) for c in dealt], [C(c) for c in recorded])
    assert [i for i, _ in pairs if i is not None] == list(range(len(dealt)))
    assert [j for _, j in pairs if j is not None] == list(range(len(recorded)))
    assert all(dealt[i] == recorded[j] for i, j in pairs if i is not None and j is not None)
    assert sum(j is None for _, j in pairs) == len(dealt) - len(recorded)


def test_line_up_takes_a_misread_for_one_disagreement_and_an_unknown_card_at_its_place():
    assert line_up([C("2C"), C("3C")], [C("2C"), C("9H")]) == [(0, 0), (1, 1)]
    assert line_up([C("2C"), C("3C")], [None, C("3C")]) == [(0, 0), (1, 1)]
    assert line_up([C("2C")], [C("2C"), C("4D")]) == [(0, 0), (None, 1)]
    # the hole card recorded face down goes with the card dealt in its place, not a later one
    assert line_up([C("9S"), C("KD"), C("3C")], [C("9S"), None]) == [(0, 0), (1, 1), (2, None)]
    # a card the shoe could not read is not taken for a card the camera read
    assert line_up([C("2C"), None], [C("2C")]) == [(0, 0), (1, None)]
    assert line_up([], []) == []


def test_a_card_the_camera_missed_while_the_link_was_down_holds_the_pay_not_switched():
    """2C then 3C are dealt to seat 1 while the shoe's link is down; the camera misses 2C and
    records 3C. The resend, 2C then 3C, used to be checked one for one: "the shoe dealt 2C but
    the camera recorded 3C" (a false switched card), and 3C taken for a new card (recorded
    twice). Lined up, 3C is the camera's 3C; 2C was dealt at a moment the table cannot know
    (before 3C, before or after any touch meanwhile), so it is not placed by the rules: the
    wrong-place alarm holds the round's payouts."""
    table = Table()
    deal(table, {1: ("5H", "6D")}, up="6S", hole="KD")
    table.send(ShoeLink(False, "cable"), FeltCard(C("3C"), CardTarget(1, 0)))
    resend(table, "2C", "3C")
    table.wait(WAIT + 0.1)
    assert AlarmKind.SWITCHED_CARD not in table.kinds()
    assert table.seat_cards() == [[["5H", "6D", "3C"]]]
    held = table.loop.disagreements()
    assert [a.kind for a in held] == [AlarmKind.MISPLACED] and held[0].text.startswith(
        "the shoe dealt 2C while its link was down, and neither the camera nor the dealer "
        "recorded it: it went to this round, where the table cannot tell")
    assert table.loop.cards_out[C("2C")] == 1


def test_a_hit_the_camera_missed_before_a_stand_touched_meanwhile_is_not_the_dealers():
    """Seat 1 (16) hits 4D while the link is down and the camera misses it; the dealer touches
    STAND and turns the hole card. 4D, resent, used to be placed by the rules as the dealer's
    draw ("no other play could have taken it there"), and the round settled seat 1 at 16."""
    table = Table()
    deal(table, {1: ("9S", "7H")}, up="6S", hole="KD")
    table.send(ShoeLink(False, "cable"), Decide(1, Action.STAND), HoleCardShown(C("KD")))
    resend(table, "4D")
    table.wait(WAIT + 0.1)
    assert table.dealer_codes() == ["6S", "KD"]
    assert [a.kind for a in table.loop.disagreements()] == [AlarmKind.MISPLACED]


def settle_with_a_card_missed(table: Table) -> None:
    """Seat 1 (16) hits 4D while the shoe's link is down and the camera misses it; the hole
    card is turned and the dealer busts on 8H: the round settles from the camera's cards."""
    deal(table, {1: ("9S", "7H")}, up="6S", hole="KD")
    table.send(ShoeLink(False, "cable"))
    table.send(HoleCardShown(C("KD")), FeltCard(C("8H"), DEALER_SPOT))
    assert table.loop.rounds_played == 1


def test_a_card_missed_in_a_round_that_settled_while_the_link_was_down_is_an_alarm():
    """The resend, 4D then 8H: 4D is the card nothing recorded, in a round that settled. It
    used to be "the shoe dealt 4D but the camera recorded 8H", then 8H "a card with no round"
    (an illegal action), and the wrong settlement stood with no word of it."""
    table = Table()
    settle_with_a_card_missed(table)
    resend(table, "4D", "8H")
    assert AlarmKind.SWITCHED_CARD not in table.kinds()
    assert AlarmKind.ILLEGAL_ACTION not in table.kinds()
    missed = [a for a in table.loop.active_alarms() if a.kind is AlarmKind.CAMERA_MISSED]
    assert len(missed) == 1 and missed[0].text.startswith(
        "the shoe dealt 4D while its link was down, and neither the camera nor the dealer "
        f"recorded it: round {missed[0].round_id} settled without it; check the payouts")
    assert missed[0].round_id == table.recorder.rounds[-1][0]
    assert table.loop.cards_out[C("4D")] == 1  # out of the shoe all the same


def test_a_card_of_a_round_settled_while_the_link_was_down_is_not_dealt_into_the_next():
    """A bet of the next round is on the felt when the shoe comes back: 4D, resent, used to be
    taken as the new round's first card."""
    table = Table()
    settle_with_a_card_missed(table)
    table.send(PlaceBet(1, Decimal("10")))
    resend(table, "4D", "8H")
    assert table.loop.round_open and table.seat_cards() == [[[]]]
    assert AlarmKind.CAMERA_MISSED in table.kinds()
    table.card("2S", 1)  # the new round's first card goes where it lands
    assert table.seat_cards() == [[["2S"]]]


def test_a_card_recorded_while_the_link_was_down_that_the_shoe_never_dealt_holds_the_pay():
    table = Table()
    deal(table, {1: ("5H", "6D")}, up="6S", hole="KD")
    table.send(ShoeLink(False, "cable"), FeltCard(C("3C"), CardTarget(1, 0)))
    resend(table)
    held = table.loop.disagreements()
    assert [a.kind for a in held] == [AlarmKind.NOT_FROM_SHOE] and "3C" in held[0].text


def test_a_resend_where_the_link_never_dropped_here_goes_straight_into_play():
    """A table that saw no link drop (just restarted: the shoe resends what the last run had
    not made durable) places resent cards as they come, as live ones."""
    table = Table()
    table.send(PlaceBet(1, Decimal("10")))
    table.send(ShoeCard(C("9S"), held=True), FeltCard(C("9S"), CardTarget(1, 0)))
    assert table.seat_cards() == [[["9S"]]]
    table.send(ShoeCaughtUp())
    assert table.seat_cards() == [[["9S"]]] and not table.loop.active_alarms()


def test_the_hole_card_recorded_face_down_is_checked_against_the_card_dealt_in_its_place():
    """The link drops before the deal; the camera records it (the hole card face down) and
    misses seat 1's hit, 3C. KD, the hole card, used to be paired with nothing and 3C taken for
    the hole card: a false switched-card alarm when KD was turned."""
    table = Table()
    table.send(PlaceBet(1, Decimal("10")), ShoeLink(False, "cable"))
    table.send(FeltCard(C("9S"), CardTarget(1, 0)), FeltCard(C("6S"), DEALER_SPOT),
               FeltCard(C("7H"), CardTarget(1, 0)), FeltCard(None, DEALER_SPOT))
    resend(table, "9S", "6S", "7H", "KD", "3C")
    assert table.loop.shoe.hole_card == C("KD")
    held = table.loop.disagreements()
    assert [a.kind for a in held] == [AlarmKind.MISPLACED] and "3C" in held[0].text
    table.send(Decide(1, Action.STAND), HoleCardShown(C("KD")))
    assert table.dealer_codes()[:2] == ["6S", "KD"]
    assert AlarmKind.SWITCHED_CARD not in table.kinds()


@pytest.mark.parametrize("reading", ["KH", None])
def test_a_hole_card_turned_before_the_resend_ends_turns_over_as_the_shoe_dealt_it(reading):
    """The camera recorded the hole card face down while the link was down; it is turned after
    the link came back, before the shoe's resend of it is lined up (about half a second). The
    camera's misreading used to stand (KH), and an unreadable turn left it face down."""
    table = Table()
    table.send(PlaceBet(1, Decimal("10")), ShoeLink(False, "cable"))
    table.send(FeltCard(C("9S"), CardTarget(1, 0)), FeltCard(C("6S"), DEALER_SPOT),
               FeltCard(C("7H"), CardTarget(1, 0)), FeltCard(None, DEALER_SPOT))
    table.send(Decide(1, Action.STAND))
    table.send(ShoeLink(True, "back"), *(ShoeCard(C(c), held=True) for c in
                                         ("9S", "6S", "7H", "KD")))
    table.send(HoleCardShown(None if reading is None else C(reading)), ShoeCaughtUp())
    assert table.dealer_codes() == ["6S", "KD"]
    assert AlarmKind.UNREADABLE not in table.kinds()


def test_a_card_the_shoe_could_not_read_and_the_camera_missed_is_not_paired_with_a_read_one():
    """The camera records 2C; the next card, unread by the shoe, it misses. The unread card
    used to be paired with the camera's 2C, and the shoe's 2C taken for a new card: 2C twice."""
    table = Table()
    deal(table, {1: ("5H", "6D")}, up="6S", hole="KD")
    table.send(ShoeLink(False, "cable"), FeltCard(C("2C"), CardTarget(1, 0)))
    resend(table, "2C", ShoeUnread(7, 9, 8, "the shoe reported the card unreadable", held=True))
    assert table.seat_cards() == [[["5H", "6D", "2C"]]]
    held = table.loop.disagreements()
    assert [a.kind for a in held] == [AlarmKind.MISPLACED] and "card 8" in held[0].text


def test_a_new_shoe_loaded_while_the_link_was_down_takes_effect_in_its_place():
    """Round 1 ends and round 2 is dealt from a new shoe while the link is down. The resend
    brings the old shoe's cards, the load, then the new shoe's. The load used to clear the
    camera's records halfway: six false "camera missed" alarms, the hole card unchecked, and
    the old shoe's cards counted in the new one."""
    table = Table()
    deal(table, {1: ("9S", "7H")}, up="6S", hole="KD")
    table.send(ShoeLink(False, "cable"), FeltCard(C("2C"), CardTarget(1, 0)))
    table.send(Decide(1, Action.STAND), HoleCardShown(C("KD")), FeltCard(C("8H"), DEALER_SPOT))
    assert table.loop.rounds_played == 1
    table.send(PlaceBet(1, Decimal("10")))
    table.send(FeltCard(C("5S"), CardTarget(1, 0)), FeltCard(C("6H"), DEALER_SPOT),
               FeltCard(C("7C"), CardTarget(1, 0)), FeltCard(None, DEALER_SPOT))
    resend(table, "2C", "8H", NewShoe(6, held=True), ShoeBurn(C("QS"), held=True),
           "5S", "6H", "7C", "QD")
    assert not table.loop.active_alarms()
    assert table.loop.shoe.hole_card == C("QD")
    assert sorted(c.code for c in table.loop.cards_out.elements()) == [
        "5S", "6H", "7C", "QD", "QS"]  # the burn from the new shoe counted in it


def test_a_switched_card_of_a_round_that_settled_is_raised_in_that_round():
    """A disagreement about a card of a round that settled while the link was down is raised in
    that round (surveillance finds it there); it holds none of the round in play's payouts."""
    table = Table()
    deal(table, {1: ("9S", "7H")}, up="6S", hole="KD")
    table.send(ShoeLink(False, "cable"))
    table.send(HoleCardShown(C("KD")), FeltCard(C("8H"), DEALER_SPOT))
    first = table.recorder.rounds[-1][0]
    table.send(PlaceBet(1, Decimal("10")))
    resend(table, "9H")  # the camera read the dealer's 9H as 8H
    switched = [a for a in table.loop.alarms if a.kind is AlarmKind.SWITCHED_CARD]
    assert [a.round_id for a in switched] == [first] and table.loop.round_id != first
    assert not table.loop.disagreements()


def test_a_missed_card_of_either_the_settled_round_or_the_one_in_play_holds_the_pay():
    """Round 1 settles while the link is down and round 2 is dealt; the camera misses a card
    dealt between round 1's last record and round 2's first: it may be either round's. It is
    the wrong-place alarm, which holds round 2's payouts, not a card placed by a guess."""
    table = Table()
    settle_with_a_card_missed(table)
    table.send(PlaceBet(1, Decimal("10")), FeltCard(C("5S"), CardTarget(1, 0)))
    resend(table, "8H", "4D", "5S")
    held = table.loop.disagreements()
    assert [a.kind for a in held] == [AlarmKind.MISPLACED] and "4D" in held[0].text
    assert table.seat_cards() == [[["5S"]]]


def test_a_card_seen_landing_since_the_link_came_back_is_placed_though_a_round_settled():
    """A card dealt just as the link came back is resent (the shoe cannot say it was not):
    where the camera has seen it land since, it is the round in play's card, not an alarm."""
    table = Table()
    settle_with_a_card_missed(table)
    table.send(PlaceBet(1, Decimal("10")), ShoeLink(True, "back"))
    table.send(FeltCard(C("5S"), CardTarget(1, 0)))
    table.send(*(ShoeCard(C(c), held=True) for c in ("4D", "8H", "5S")), ShoeCaughtUp())
    assert table.seat_cards() == [[["5S"]]]
    assert [a.kind for a in table.loop.active_alarms()] == [AlarmKind.CAMERA_MISSED]


def test_a_landing_seen_since_the_link_came_back_is_the_latest_card_of_its_code():
    """Round 1's bust card KC is missed while the link is down and round 1 settles as a win;
    round 2's first card is another KC, seen landing after the link came back. The first KC used
    to be taken for that landing: placed in round 2, with round 2's own KC the alarm."""
    table = Table()
    deal(table, {1: ("9S", "7H")}, up="6S", hole="KD")
    table.send(ShoeLink(False, "cable"))
    table.send(HoleCardShown(C("KD")), FeltCard(C("8H"), DEALER_SPOT))
    first = table.recorder.rounds[-1][0]
    table.send(PlaceBet(1, Decimal("10")), ShoeLink(True, "back"))
    table.send(FeltCard(C("KC"), CardTarget(1, 0)))
    table.send(*(ShoeCard(C(c), held=True) for c in ("KC", "8H", "KC")), ShoeCaughtUp())
    assert table.seat_cards() == [[["KC"]]]
    missed = [a for a in table.loop.alarms if a.kind is AlarmKind.CAMERA_MISSED]
    assert [a.round_id for a in missed] == [first] and "KC" in missed[0].text
    assert not table.loop.disagreements()


@pytest.mark.parametrize("camera", [False, True])
def test_with_no_camera_reading_meanwhile_a_resend_is_taken_as_the_cards_would_have_come(camera):
    """A table with no camera, or one whose camera is lost as the link drops, has no reader
    while the link is down: the dealer is told to stop dealing, and what the shoe resends is
    taken as it would have come live."""
    def play(resent: bool) -> tuple[list, list, list]:
        table = Table(camera=camera)
        deal(table, {1: ("5H", "6D")}, up="6S", hole="KD")
        if camera:
            table.send(CameraLink(False, "no frame"))
        table.send(Decide(1, Action.DOUBLE))
        deal_one(table, "9C", resent)
        table.wait(WAIT + 0.1)
        return table.seat_cards(), table.dealer_codes(), table.choices()

    assert play(resent=True) == play(resent=False)
    assert play(resent=True)[0] == [[["5H", "6D", "9C"]]]


def test_a_card_missed_while_no_round_was_in_play_is_taken_as_it_would_have_come():
    """The link drops between rounds and a card leaves the shoe with no bet down, unseen: it
    is in no round, as it would have been live (no "settled without it" alarm)."""
    def play(resent: bool) -> list[tuple[AlarmKind, str]]:
        table = Table()
        deal(table, {1: ("9S", "7H")}, up="7S", hole="KD")
        table.send(Decide(1, Action.STAND), HoleCardShown(C("KD")))  # the dealer stands on 17
        assert table.loop.rounds_played == 1
        deal_one(table, "4D", resent)
        table.wait(WAIT + 0.1)
        table.send(PlaceBet(1, Decimal("10")))
        table.card("2S", 1)
        assert table.seat_cards() == [[["2S"]]]
        return [(a.kind, a.text) for a in table.loop.alarms
                if a.kind is not AlarmKind.SHOE_LINK_DOWN]

    assert play(resent=True) == play(resent=False)


@pytest.mark.parametrize("touch_first", [False, True])
@pytest.mark.parametrize("then", [None, PlaceBet(2, Decimal("10")), FeltStacks(1, 2, 0)])
def test_a_touch_made_while_the_resend_waits_acts_after_the_cards_before_it(touch_first, then):
    """The link drops and comes back; seat 1 (11) hits 9C just after (the shoe marks it resent:
    it cannot tell), seen landing at seat 1, and the dealer touches STAND before the resend is
    lined up (then, maybe, another input in turn). The touch used to act first: 9C went to the
    dealer; and with an input in turn behind it, neither could move."""
    table = Table()
    deal(table, {1: ("5H", "6D")}, up="6S", hole="KD")
    table.send(ShoeLink(False, "cable"), ShoeLink(True, "back"))
    table.send(ShoeCard(C("9C"), held=True), FeltCard(C("9C"), CardTarget(1, 0)))
    if touch_first:
        table.send(Decide(1, Action.STAND), *([then] if then else []), ShoeCaughtUp())
    else:
        table.send(ShoeCaughtUp(), Decide(1, Action.STAND))
    table.wait(WAIT + 0.1)
    assert table.seat_cards() == [[["5H", "6D", "9C"]]] and table.dealer_codes() == ["6S", "KD"]
    assert not table.loop.disagreements() and not table.loop.inputs.deferred


def test_a_turn_that_waited_for_the_resend_is_taken_when_the_link_drops_again():
    """The resend begins, and the link drops again before it ends: the hole card's turn, which
    waited for the resend, is taken from the camera (the only reader again), so the dealer's
    draw after it is recorded; it used to wait for a resend that had stopped."""
    table = Table()
    table.send(PlaceBet(1, Decimal("10")), ShoeLink(False, "cable"))
    table.send(FeltCard(C("9S"), CardTarget(1, 0)), FeltCard(C("6S"), DEALER_SPOT),
               FeltCard(C("7H"), CardTarget(1, 0)), FeltCard(None, DEALER_SPOT))
    table.send(Decide(1, Action.STAND))
    table.send(ShoeLink(True, "back"), ShoeCard(C("9S"), held=True), HoleCardShown(C("KD")))
    assert table.dealer_codes() == ["6S", None]  # the turn waits for the resend
    table.send(ShoeLink(False, "cable again"), FeltCard(C("5C"), DEALER_SPOT))
    assert table.dealer_codes() == ["6S", "KD", "5C"] and table.loop.rounds_played == 1
    table.send(ShoeLink(True, "back again"),
               *(ShoeCard(C(c), held=True) for c in ("6S", "7H", "KD", "5C")), ShoeCaughtUp())
    assert not table.loop.active_alarms()


def test_a_card_missed_between_two_rounds_that_settled_names_both():
    table = Table()
    deal(table, {1: ("9S", "7H")}, up="7S", hole="KD")
    table.send(ShoeLink(False, "cable"), Decide(1, Action.STAND), HoleCardShown(C("KD")))
    table.send(PlaceBet(1, Decimal("10")))
    for code, spot in (("TS", None), ("9D", CardTarget(1, 0)), ("8S", DEALER_SPOT),
                       ("9H", CardTarget(1, 0))):
        if code != "TS":
            table.send(FeltCard(C(code), spot))
    table.send(FeltCard(None, DEALER_SPOT), Decide(1, Action.STAND), HoleCardShown(C("QH")))
    assert table.loop.rounds_played == 2
    first, second = (line[0] for line in table.recorder.rounds)
    resend(table, "4D", "9D", "8S", "9H", "QH")  # 4D: round 1's last card, or round 2's first
    [missed] = [a for a in table.loop.alarms if a.kind is AlarmKind.CAMERA_MISSED]
    assert f"round {first} or {second} settled without it" in missed.text


def test_a_card_missed_in_a_round_voided_while_the_link_was_down_says_it_was_voided():
    """A round voided while the shoe's link was down paid nothing: a card nothing recorded in
    it went to a voided round, not to one that "settled without it", payouts to check."""
    table = Table()
    deal(table, {1: ("9S", "7H")}, up="6S", hole="KD")
    voided = table.loop.round_id
    table.send(ShoeLink(False, "cable"), VoidRound("misdeal", "S1"))
    assert table.recorder.voids[-1][0] == voided
    resend(table, "4D")  # seat 1's hit, dealt before the void, that nothing recorded
    [missed] = [a for a in table.loop.alarms if a.kind is AlarmKind.CAMERA_MISSED]
    assert missed.round_id == voided
    assert f"round {voided} was voided without it: nothing was paid in it" in missed.text
    assert "settled" not in missed.text and table.loop.cards_out[C("4D")] == 1


def test_a_card_missed_between_a_voided_round_and_one_that_settled_names_which_is_which():
    table = Table()
    deal(table, {1: ("9S", "7H")}, up="7S", hole="KD")
    voided = table.loop.round_id
    table.send(ShoeLink(False, "cable"), VoidRound("misdeal", "S1"))
    table.send(PlaceBet(1, Decimal("10")))
    for code, spot in (("9D", CardTarget(1, 0)), ("8S", DEALER_SPOT), ("9H", CardTarget(1, 0))):
        table.send(FeltCard(C(code), spot))
    table.send(FeltCard(None, DEALER_SPOT), Decide(1, Action.STAND), HoleCardShown(C("QH")))
    settled = table.recorder.rounds[-1][0]
    assert table.loop.rounds_played == 1 and settled != voided
    resend(table, "4D", "9D", "8S", "9H", "QH")  # 4D: the voided round's, or the next's first
    [missed] = [a for a in table.loop.alarms if a.kind is AlarmKind.CAMERA_MISSED]
    assert missed.round_id == settled  # the round whose payouts may be wrong
    assert f"round {voided} (voided) or {settled} ended without it; check the payouts of " \
        f"{settled} against the felt" in missed.text


def test_a_landing_seen_as_the_link_returns_waits_for_the_resend_however_long():
    """A card's landing seen just after the link came back waits for its shoe card, which the
    resend holds until it is lined up; it used to expire after the landing's wait (1 s) as
    "never left the shoe", and the card then held the payouts as one the camera missed."""
    table = Table()
    deal(table, {1: ("5H", "6D")}, up="6S", hole="KD")
    table.send(ShoeLink(False, "cable"), ShoeLink(True, "back"))
    table.send(ShoeCard(C("9C"), held=True), FeltCard(C("9C"), CardTarget(1, 0)))
    table.wait(2.5)
    table.send(ShoeCaughtUp())
    table.wait(WAIT + 0.1)
    assert table.seat_cards() == [[["5H", "6D", "9C"]]] and not table.loop.disagreements()


def test_a_resend_the_shoe_never_says_has_ended_is_lined_up_after_a_while_with_an_alarm():
    from dealer_assist.table.shoe_cards import RESEND_WAIT_S

    table = Table()
    deal(table, {1: ("5H", "6D")}, up="6S", hole="KD")
    table.send(ShoeLink(False, "cable"), FeltCard(C("3C"), CardTarget(1, 0)))
    table.send(ShoeLink(True, "back"), ShoeCard(C("3C"), held=True), Decide(1, Action.STAND))
    table.wait(RESEND_WAIT_S - 0.5)
    assert table.loop.inputs.deferred and table.loop.shoe.resent
    table.wait(1.0)
    assert not table.loop.shoe.resent and not table.loop.inputs.deferred
    assert table.seat_cards() == [[["5H", "6D", "3C"]]]
    problem = [a for a in table.loop.active_alarms() if a.kind is AlarmKind.SHOE_PROBLEM]
    assert problem and "did not say it had resent all it kept" in problem[0].text


def test_a_link_that_failed_one_way_forgets_the_drop_once_live_cards_come_again():
    """The shoe stops hearing the table (the link is down, the port stays open) and recovers:
    its cards come live, nothing is resent. The drop is forgotten with the first live card, so
    a later resend (after a restart) is not lined up against it."""
    table = Table()
    deal(table, {1: ("5H", "6D")}, up="6S", hole="KD")
    table.send(ShoeLink(False, "the shoe cannot hear us"), ShoeLink(True, "heard again"))
    assert table.loop.shoe.watched
    table.card("3C", 1)
    assert not table.loop.shoe.watched and table.loop.shoe.down_round is None


@pytest.mark.parametrize("touched", [False, True])
def test_a_hit_touched_in_the_resends_half_second_acts_in_its_place_among_the_cards(touched):
    """Seat 1 (11) hits 2C while the link is down (the camera records it); back, the dealer
    touches HIT and deals 5D just before the heartbeat that ends the resend (so 5D is marked
    resent), seen landing at seat 1. The touch used to act after the whole resend: a second hit,
    and the dealer's 3H then taken for seat 1's card (a 5-card 21 paid on an 18)."""
    table = Table()
    deal(table, {1: ("5H", "6D")}, up="6S", hole="KD")
    table.send(ShoeLink(False, "cable"), Decide(1, Action.HIT),
               FeltCard(C("2C"), CardTarget(1, 0)))
    table.send(ShoeLink(True, "back"), ShoeCard(C("2C"), held=True))
    if touched:
        table.send(Decide(1, Action.HIT))
    table.send(ShoeCard(C("5D"), held=True), FeltCard(C("5D"), CardTarget(1, 0)), ShoeCaughtUp())
    table.wait(WAIT + 0.1)
    table.send(Decide(1, Action.STAND), HoleCardShown(C("KD")))
    table.card("3H", None)
    assert table.loop.rounds_played == 1 and not table.loop.disagreements()
    settled = table.settled_json()
    assert settled["dealer"]["cards"] == ["6S", "KD", "3H"]
    assert settled["seats"][0]["hands"][0]["cards"] == ["5H", "6D", "2C", "5D"]


def test_a_resend_cut_short_by_the_link_waits_again_from_its_return():
    """The resend begins, the link drops again for longer than a resend's wait, and comes back:
    the wait starts again from its return, so the rest of the resend is lined up as ordinarily;
    it used to be cut off at once ("the shoe did not say..."), the camera's 4D a card "not from
    the shoe", and the shoe's 4D then taken for a new card."""
    from dealer_assist.table.shoe_cards import RESEND_WAIT_S

    table = Table()
    deal(table, {1: ("5H", "6D")}, up="6S", hole="KD")
    table.send(ShoeLink(False, "cable"), FeltCard(C("3C"), CardTarget(1, 0)))
    table.send(ShoeLink(True, "back"), ShoeCard(C("3C"), held=True))
    table.send(ShoeLink(False, "cable again"), FeltCard(C("4D"), CardTarget(1, 0)))
    table.wait(RESEND_WAIT_S + 1)
    table.send(ShoeLink(True, "back again"))
    table.wait(0.1)
    table.send(ShoeCard(C("4D"), held=True), ShoeCaughtUp())
    table.wait(WAIT + 0.1)
    assert table.seat_cards() == [[["5H", "6D", "3C", "4D"]]]
    assert [a.kind for a in table.loop.alarms if a.kind is not AlarmKind.SHOE_LINK_DOWN] == []


def test_what_waited_behind_a_question_and_came_after_the_resend_acts_after_its_line_up():
    """A question is open as the link comes back; the resend, its end, then seat 2's stand and
    the camera's turn of the hole card (read as 4H; the shoe dealt KD) wait behind it. Answered,
    the turn used to act in the middle of the line-up, before the hole card's resend: 4H
    recorded and the round settled on it, with no alarm."""
    table = Table()
    table.send(PlaceBet(1, Decimal("10")), PlaceBet(2, Decimal("10")))
    for code, seat in (("5H", 1), ("8S", 2), ("6S", None), ("6D", 1), ("8C", 2)):
        table.card(code, seat)
    table.send(ShoeLink(False, "cable"), FeltCard(None, DEALER_SPOT))
    table.send(Decide(1, Action.DOUBLE), FeltCard(C("2C"), CardTarget(1, 0)),
               FeltCard(C("3C"), CardTarget(1, 0)))  # a redouble's card: where did it go?
    assert table.loop.question is not None
    resend(table, "KD", "2C", "3C")
    table.send(Decide(2, Action.STAND), HoleCardShown(C("4H")))
    table.answer("DOUBLE seat 1")
    table.wait(WAIT + 0.1)
    table.card("9C", None)
    assert table.loop.rounds_played == 1
    assert table.settled_json()["dealer"]["cards"] == ["6S", "KD", "9C"]
    assert [a.kind for a in table.loop.disagreements()] == [AlarmKind.SWITCHED_CARD]


@pytest.mark.parametrize("face_down_seen", [False, True])
def test_the_hole_card_dealt_as_the_link_returns_is_the_hole_card(face_down_seen):
    """A blip of the link just before the hole card, nothing dealt while it was down; the hole
    card is dealt just after it came back (so marked resent), lying face down where the camera
    cannot name it. It used to be "neither the camera nor the dealer recorded it", holding the
    payouts, and the next card then taken for the hole card."""
    table = Table()
    table.send(PlaceBet(1, Decimal("10")))
    for code, seat in (("9S", 1), ("6S", None), ("7H", 1)):
        table.card(code, seat)
    table.send(ShoeLink(False, "blip"), ShoeLink(True, "back"), ShoeCard(C("KD"), held=True))
    if face_down_seen:
        table.send(FeltCard(None, DEALER_SPOT))
    table.send(ShoeCaughtUp())
    table.wait(WAIT + 0.1)
    table.send(Decide(1, Action.STAND), HoleCardShown(C("KD")))
    assert table.dealer_codes() == ["6S", "KD"]
    assert [a.kind for a in table.loop.alarms] == [AlarmKind.SHOE_LINK_DOWN]


def test_a_turn_among_the_resent_cards_turns_over_as_the_shoe_dealt_the_hole_card():
    """The camera turns the hole card (misread as KH) while the resend streams in, before the
    shoe's KD for the face-down record is lined up: the misreading used to stand, no alarm."""
    table = Table()
    table.send(PlaceBet(1, Decimal("10")), ShoeLink(False, "cable"))
    table.send(FeltCard(C("9S"), CardTarget(1, 0)), FeltCard(C("6S"), DEALER_SPOT),
               FeltCard(C("7H"), CardTarget(1, 0)), FeltCard(None, DEALER_SPOT),
               Decide(1, Action.STAND))
    table.send(ShoeLink(True, "back"), ShoeCard(C("9S"), held=True), HoleCardShown(C("KH")),
               *(ShoeCard(C(c), held=True) for c in ("6S", "7H", "KD")), ShoeCaughtUp())
    assert table.dealer_codes()[:2] == ["6S", "KD"]
    assert [a.kind for a in table.loop.disagreements()] == [AlarmKind.SWITCHED_CARD]


@pytest.mark.parametrize(("up", "hole"), [("6S", "KD"), ("KS", "AD")])
def test_the_hole_card_seen_face_down_just_after_the_link_drops_is_no_unreadable_card(up, hole):
    """The hole card leaves the shoe and is recorded (with KS up, AD is the dealer's blackjack:
    the round ends on it); the link drops before the camera reports it lying face down. That
    sighting used to be "the camera cannot read the card at the dealer: enter it" (in about one
    ordinary drop in fifteen of a review's random drops), inviting a second record of it."""
    table = Table()
    table.send(PlaceBet(1, Decimal("10")))
    for code, seat in (("9S", 1), (up, None), ("7H", 1)):
        table.card(code, seat)
    table.send(ShoeCard(C(hole)), ShoeLink(False, "cable"), FeltCard(None, DEALER_SPOT))
    assert table.dealer_codes() == [up, hole]  # named by the shoe, lying face down
    assert [a.kind for a in table.loop.alarms] == [AlarmKind.SHOE_LINK_DOWN]
