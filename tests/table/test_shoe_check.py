"""The table checks the shoe's cards by camera: a new card's index checked against the shoe's codes
in flight (match: that card's landing; mismatch: a switched card; unsure: decides nothing, no
alarm), on the verdicts as the loop gets them, through the journal, and on rendered frames read by
the shipped models."""

from __future__ import annotations

import threading
import time
from dataclasses import replace
from decimal import Decimal

import pytest

from dealer_assist.rules import Card, CardTarget
from dealer_assist.table.alarms import AlarmKind
from dealer_assist.table.journal_codec import decode_input, encode_input
from dealer_assist.table.pairing import CardsInFlight
from dealer_assist.table.sources import (
    DEALER_SPOT,
    CameraLink,
    ConfirmFelt,
    FeltCard,
    PlaceBet,
    ShoeCard,
    ShoeLink,
    SignIn,
)
from tests.table.test_journal import Setup, run_inputs
from tests.table.test_loop import Table

C = Card.parse


def test_the_loop_hands_the_camera_the_shoe_codes_in_flight_oldest_first():
    cards = CardsInFlight()
    cards.add_shoe(ShoeCard(C("7H")), 0.0, rejected=False)
    cards.add_shoe(ShoeCard(C("TD")), 0.0, rejected=True)  # refused on sight: no landing due
    cards.add_shoe(ShoeCard(C("2C")), 0.0, rejected=False)
    assert cards.codes() == ("7H", "2C")


def test_a_verified_mismatch_is_a_switched_card_at_once():
    table = Table()
    table.send(PlaceBet(1, Decimal("10")), ShoeCard(C("9S")))
    table.send(FeltCard(C("KH"), CardTarget(1, 0), verdict="mismatch", checked=C("9S")))
    # no wait for a matching reading: the camera checked it against 9S and it is surely another
    assert table.kinds() == [AlarmKind.SWITCHED_CARD]
    assert "9S" in table.loop.alarms[0].text and "KH" in table.loop.alarms[0].text
    assert table.seat_cards()[0][0] == ["9S"]


def test_an_unsure_landing_of_another_code_decides_nothing_and_raises_no_alarm():
    table = Table()
    table.send(PlaceBet(1, Decimal("10")), ShoeCard(C("9S")))
    table.send(FeltCard(C("9C"), CardTarget(1, 0), verdict="unsure", checked=C("9S")))
    assert table.loop.cards_committed == 0
    table.wait(0.6)
    # placed by the rules (the deal's first card goes to seat 1), with no switched-card alarm
    assert table.seat_cards()[0][0] == ["9S"]
    assert AlarmKind.SWITCHED_CARD not in table.kinds()


def test_an_unsure_landing_asks_the_dealer_where_the_rules_leave_a_choice():
    table = Table()
    for seat in (1, 2):
        table.send(PlaceBet(seat, Decimal("10")))
    table.card("9S", seat=1)
    table.card("5D", seat=2)
    table.card("6S", seat=None)
    table.card("8H", seat=1)
    table.card("4C", seat=2)
    table.send(ShoeCard(C("QD")))  # the hole card, face down
    table.send(ShoeCard(C("3H")))  # a hit for seat 1, or seat 1 stood and it is seat 2's
    table.send(FeltCard(C("8H"), CardTarget(2, 0), verdict="unsure", checked=C("3H")))
    table.wait(0.6)
    assert table.loop.question is not None  # its place taken from no unsure reading
    assert AlarmKind.SWITCHED_CARD not in table.kinds()


def test_a_felt_card_with_its_verdict_reads_back_and_an_older_record_without_one_too():
    item = FeltCard(C("7H"), CardTarget(2, 1), True, 3.5, verdict="match", checked=C("7H"))
    assert decode_input(encode_input(item)) == item
    older = {"type": "FeltCard", "card": "7H", "spot": {"seat": 2, "hand": 0},
             "sideways": False, "seen_at": None}
    assert decode_input(older) == FeltCard(C("7H"), CardTarget(2, 0))


def test_a_table_restarted_from_its_journal_replays_the_verdicts(tmp_path):
    steps = [SignIn("D1"), ShoeLink(True), CameraLink(True), PlaceBet(1, Decimal("10")),
             PlaceBet(2, Decimal("10")),
             ShoeCard(C("9S")), FeltCard(C("9S"), CardTarget(1, 0), verdict="match",
                                         checked=C("9S")),
             ShoeCard(C("5D")), FeltCard(C("KH"), CardTarget(2, 0), verdict="mismatch",
                                         checked=C("5D")),
             ShoeCard(C("6S")), FeltCard(C("6C"), DEALER_SPOT, verdict="unsure",
                                         checked=C("6S"))]
    before = Setup(tmp_path, has_camera=True)
    first = before.open(now=10.0)
    live = first.loop
    run_inputs(live, first.journal, steps)
    switched = [(a.kind, a.text) for a in live.alarms if a.kind is AlarmKind.SWITCHED_CARD]
    assert len(switched) == 1 and "5D" in switched[0][1] and "KH" in switched[0][1]
    first.journal.close()
    before.close()

    after = Setup(tmp_path, has_camera=True)
    table = after.open(now=3.0)
    assert table.resumed == live.round_id
    assert table.loop.view()["round"] == live.view()["round"]
    assert [(a.kind, a.text) for a in table.loop.alarms
            if a.kind is AlarmKind.SWITCHED_CARD] == switched
    assert table.loop.cards_out == live.cards_out
    table.loop.handle(ConfirmFelt(), 50.0)
    after.close()


# ------------------------------------------------------------- the check's rules on given readings


def shipped_check(**tracker_settings):  # -> ShoeCheck
    """The shoe check with the shipped models and a tracker of ``tracker_settings``."""
    from dealer_assist.vision.detector import DEFAULT_MODEL, CardDetector
    from dealer_assist.vision.shoe_check import ShoeCheck
    from dealer_assist.vision.tracker import CardTracker

    return ShoeCheck(CardDetector(DEFAULT_MODEL, threads=1), CardTracker(**tracker_settings))


def index_reading(*indices: tuple[tuple[float, float, float, float], str],
                  faint: bool = False, sure: float = 0.98) -> object:
    """A frame's reading of indices at boxes, each read as its code, rank and suit each at
    ``sure`` (``faint``: each found below the detector's presence)."""
    import numpy as np

    from dealer_assist.vision.reader import RANK_CLASSES, SUIT_CLASSES
    from dealer_assist.vision.shoe_check import FrameReading

    ranks = np.full((len(indices), len(RANK_CLASSES)), 0.001)
    suits = np.full((len(indices), len(SUIT_CLASSES)), 0.001)
    for row, (_, code) in enumerate(indices):
        ranks[row, RANK_CLASSES.index(code[0])] = sure
        suits[row, SUIT_CLASSES.index(code[1])] = sure
    return FrameReading(np.array([box for box, _ in indices], np.float32).reshape(-1, 4),
                        ranks, suits, tuple("" if faint else code for _, code in indices),
                        np.full(len(indices), 0.96), np.full(len(indices), faint))


@pytest.mark.parametrize(("corner", "code", "events"), [
    # the other corner of the 7H on the felt, its first corner covered: no card, no alarm
    ((160.0, 190.0, 172.0, 206.0), "7H", []),
    # another card there, surely none in flight: the switched-card alarm as before
    ((160.0, 190.0, 172.0, 206.0), "KS", [("KS", "mismatch", "4C")]),
    # a 7H a hand away (a second deck's) is not this card's corner: the alarm as before
    ((600.0, 190.0, 612.0, 206.0), "7H", [("7H", "mismatch", "4C")]),
])
def test_a_card_on_the_felt_seen_by_its_other_corner_is_not_a_new_card(corner, code, events):

    check = shipped_check(stable_frames=2)
    check.expect(("7H",))
    first = (100.0, 100.0, 112.0, 116.0)
    seen = [e for n in (1, 2) for e in check.track(n, index_reading((first, "7H")))]
    assert [(e.card, e.verdict) for e in seen] == [("7H", "match")]
    check.expect(("4C",))  # the 7H landed; the next card drawn
    later = [e for n in (3, 4, 5) for e in check.track(n, index_reading((corner, code)))]
    assert [(e.card, e.verdict, e.checked) for e in later if e.kind.value == "appeared"] == \
        events


@pytest.mark.parametrize(("in_flight", "code", "events"), [
    # a faint index of the shoe's card in flight: the card landed, verified
    (("7H",), "7H", [("7H", "match")]),
    # a faint index surely another card than the one in flight: no card, and no alarm
    (("7H",), "KS", []),
    # a faint index with no shoe card in flight (a hand-held game): never named
    ((), "7H", []),
])
def test_a_faint_index_counts_only_as_the_shoe_card_it_matches(in_flight, code, events):

    check = shipped_check(stable_frames=2)
    check.expect(in_flight)
    box = (100.0, 100.0, 112.0, 116.0)
    seen = [e for n in (1, 2, 3) for e in check.track(n, index_reading((box, code), faint=True))]
    assert [(e.card, e.verdict) for e in seen] == events


def test_a_faint_index_must_read_the_shoe_card_more_surely_than_a_found_one():
    from dealer_assist.vision.shoe_check import FAINT_ACCEPT
    from dealer_assist.vision.verify import ACCEPT

    sure = 0.8  # the code at 0.64: a match for a found index, not for a faint one
    assert ACCEPT <= sure * sure < FAINT_ACCEPT
    box = (100.0, 100.0, 112.0, 116.0)
    for faint, events in ((False, [("7H", "match")]), (True, [])):
        check = shipped_check(stable_frames=2)
        check.expect(("7H",))
        seen = [e for n in (1, 2, 3)
                for e in check.track(n, index_reading((box, "7H"), faint=faint, sure=sure))]
        assert [(e.card, e.verdict) for e in seen] == events


def test_a_place_read_surely_as_one_code_in_flight_is_not_taken_for_an_older_one_read_once():
    # traced on an independent deal (dondorf, scenes of 4 frames): a 6D's index read 6D at
    # 0.997, then once KD at 0.686, then 6D again, with KD older in flight than 6D; its pooled
    # readings match both, and it was taken for the KD (then paired with the real KD's index)
    check = shipped_check(stable_frames=2)
    check.expect(("KD", "6D"))
    box = (100.0, 100.0, 112.0, 116.0)
    readings = [index_reading((box, "6D"), sure=0.9985), index_reading((box, "KD"), sure=0.83),
                index_reading((box, "6D"), sure=0.9985)]
    seen = [e for n, reading in enumerate(readings, 1) for e in check.track(n, reading)]
    assert [(e.card, e.verdict) for e in seen] == [("6D", "match")]


@pytest.mark.parametrize(("in_flight", "second", "events"), [
    # one 7H out of the shoe, two places a hand apart read surely as it: the surer is its
    # landing, the other is unsure (asked about, never an alarm), not a second 7H matched
    (("7H",), (600.0, 100.0, 612.0, 116.0), [("7H", "match"), ("7H", "unsure")]),
    # two 7Hs out (a two-deck shoe): both places are matched
    (("7H", "7H"), (600.0, 100.0, 612.0, 116.0), [("7H", "match"), ("7H", "match")]),
    # the second place within a card's reach of the first: its other corner, unpaired
    (("7H",), (119.0, 100.0, 131.0, 116.0), [("7H", "match"), ("7H", "match")]),
])
def test_a_shoe_card_is_matched_by_one_card_a_frame(in_flight, second, events):
    from dealer_assist.vision.reader import RANK_CLASSES

    check = shipped_check(stable_frames=2, match_radius=5.0)
    check.expect(in_flight)
    first = (100.0, 100.0, 112.0, 116.0)
    seen = []
    for n in (1, 2):
        reading = index_reading((first, "7H"), (second, "7H"))
        reading.ranks[1, RANK_CLASSES.index("7")] = 0.95  # the second place a little less sure
        seen += check.track(n, reading)
    assert sorted((e.card, e.verdict) for e in seen) == sorted(events)


@pytest.mark.parametrize(("other", "changed"), [
    # the other corner read unsurely (named nothing): only the QC is read, the card changed
    ("unsure", [("QC", "7H")]),
    # the other corner still read as the 7H: the card's corners disagree, no change
    ("7H", []),
])
def test_a_card_swapped_where_it_lies_changes_though_its_other_corner_reads_unsurely(
        other, changed):
    from dealer_assist.vision.reader import RANK_CLASSES, SUIT_CLASSES

    check = shipped_check(stable_frames=2, change_frames=3)
    check.expect(("7H",))
    corner, other_corner = (100.0, 100.0, 112.0, 116.0), (160.0, 190.0, 172.0, 206.0)
    seen = [e for n in (1, 2)
            for e in check.track(n, index_reading((corner, "7H"), (other_corner, "7H")))]
    assert [(e.card, e.verdict) for e in seen] == [("7H", "match")]
    check.expect(())  # the 7H taken away and a QC put in its place
    later = []
    for n in range(3, 9):
        reading = index_reading((corner, "QC"), (other_corner, "7H"))
        if other == "unsure":  # 7H at 0.25: not surely another card, and below naming
            reading.ranks[1, RANK_CLASSES.index("7")] = 0.5
            reading.ranks[1, RANK_CLASSES.index("Q")] = 0.45
            reading.suits[1, SUIT_CLASSES.index("H")] = 0.5
            reading.suits[1, SUIT_CLASSES.index("C")] = 0.45
            reading = replace(reading, names=("QC", ""))
        later += check.track(n, reading)
    assert [(e.card, e.previous) for e in later if e.kind.value == "changed"] == changed


def joined(*readings):  # -> FrameReading
    """One frame's reading made of ``readings``' indices."""
    import numpy as np

    from dealer_assist.vision.shoe_check import FrameReading

    return FrameReading(*(np.concatenate([getattr(r, name) for r in readings])
                          for name in ("boxes", "ranks", "suits")),
                        tuple(n for r in readings for n in r.names),
                        np.concatenate([r.confidences for r in readings]),
                        np.concatenate([r.faint for r in readings]))


#: A 9S's index and a 5D's laid tight over that card, half over it (seed 2's deal 4)
UNDER, BESIDE = (171.0, 343.0, 204.0, 381.0), (183.0, 347.0, 216.0, 386.0)


def test_a_card_landing_half_over_a_corner_of_another_keeps_its_own_index():
    """A cascade laid tight: the new card's index lies half over the index of the card under it
    (overlapping it by more than half of either box), both seen. Read less than surely, the new
    index is neither taken for the card under it nor pooled with that card's readings: it lands
    (seed 2's deal 4 of the independent scenes, a 5D over a 9S, never landed before)."""
    from dealer_assist.vision.detector import same_place

    check = shipped_check()
    under, beside = UNDER, BESIDE
    assert same_place(under, beside)
    check.expect(("9S",))
    events = [e for n in (1, 2) for e in check.track(n, index_reading((under, "9S")))]
    check.expect(("5D",))
    # the new index read at 0.64 (a match, not surely another card than the 9S), listed
    # before the 9S's
    both = joined(index_reading((beside, "5D"), sure=0.8), index_reading((under, "9S")))
    events += [e for n in range(3, 7) for e in check.track(n, both)]
    assert [(e.kind.value, e.card, e.verdict) for e in events] == [
        ("appeared", "9S", "match"), ("appeared", "5D", "match")]


def test_two_indices_half_over_each_other_keep_their_own_readings():
    """Two cards landing at once, one index half over the other, listed in the next frames in
    the other order: each index's readings are pooled at its own place (the one its box
    overlaps best), so each card lands where it lies; pooled by the first place each box lay
    at, the 5D's index took the 9S's readings and the 9S landed there, the 5D never."""
    check = shipped_check()
    under, beside = UNDER, BESIDE
    check.expect(("9S", "5D"))
    events = check.track(1, joined(index_reading((under, "9S")),
                                   index_reading((beside, "5D"), sure=0.8)))
    swapped = joined(index_reading((beside, "5D"), sure=0.8),
                     index_reading((under, "9S"), sure=0.8))
    events += [e for n in range(2, 6) for e in check.track(n, swapped)]
    assert [(e.card, e.verdict, e.x) for e in events] == [
        ("9S", "match", (under[0] + under[2]) / 2), ("5D", "match", (beside[0] + beside[2]) / 2)]


def test_a_card_on_the_felt_whose_index_is_boxed_twice_stays_one_card():
    """A second, larger box round a card's index (its index and surround) read unsurely as a
    shoe card in flight is that card's index boxed twice, not a new card of that code (seed 1's
    deal 92: a plastic 2C's second box pooled as the 2S in flight)."""
    from dealer_assist.vision.detector import same_index

    check = shipped_check()
    index, round_it = (913.0, 340.0, 941.0, 379.0), (901.0, 341.0, 945.0, 392.0)
    assert same_index(index, round_it)
    check.expect(("2C",))
    events = [e for n in (1, 2) for e in check.track(n, index_reading((index, "2C")))]
    check.expect(("2S",))
    twice = joined(index_reading((index, "2C")), index_reading((round_it, "2S"), sure=0.8))
    events += [e for n in range(3, 8) for e in check.track(n, twice)]
    assert [(e.kind.value, e.card, e.verdict) for e in events] == [("appeared", "2C", "match")]


def test_a_faint_index_at_a_card_on_the_felt_changes_nothing():

    check = shipped_check(stable_frames=2, change_frames=2)
    check.expect(("7H",))
    box = (100.0, 100.0, 112.0, 116.0)
    seen = [e for n in (1, 2) for e in check.track(n, index_reading((box, "7H")))]
    assert [(e.card, e.verdict) for e in seen] == [("7H", "match")]
    check.expect(("4C",))
    # the same place read faintly as a king of spades, over and over: not a switched card
    later = [e for n in range(3, 9) for e in check.track(n, index_reading((box, "KS"),
                                                                          faint=True))]
    assert later == []
    # read as surely (not faintly) as the king, it is the change it always was
    surely = [e for n in range(9, 12) for e in check.track(n, index_reading((box, "KS")))]
    assert [(e.kind.value, e.card, e.previous) for e in surely] == [("changed", "KS", "7H")]


#: A 6S's upright index, its other corner (read as the 9H, half turned and in another suit) and,
#: a hand away, the 9H the shoe deals next (seed 1's deal 128 of the independent scenes)
UPRIGHT, MISREAD, DEALT = (100.0, 100.0, 112.0, 116.0), (150.0, 170.0, 162.0, 186.0), \
    (600.0, 100.0, 612.0, 116.0)


def test_a_corner_read_as_a_card_before_the_shoe_dealt_it_is_not_that_card():
    """A card's other corner misread as another code lay there before the shoe dealt that code:
    when the code comes in flight it is not taken for the card just dealt (a wrong card taken
    for the shoe's, the failure that moves money), and the card dealt lands where it lies."""
    check = shipped_check(stable_frames=10)  # no card appears unchecked in these frames
    both = joined(index_reading((UPRIGHT, "6S")), index_reading((MISREAD, "9H"), sure=0.75))
    check.expect(("6S",))
    events = [e for n in (1, 2) for e in check.track(n, both)]
    check.expect(())  # the 6S landed
    events += [e for n in (3, 4) for e in check.track(n, both)]
    check.expect(("9H",))  # the next card drawn, on its way across the felt
    events += [e for n in (5, 6) for e in check.track(n, both)]
    with_dealt = joined(both, index_reading((DEALT, "9H")))
    events += [e for n in (7, 8, 9) for e in check.track(n, with_dealt)]
    assert [(e.kind.value, e.card, e.verdict, e.x) for e in events] == [
        ("appeared", "6S", "match", (UPRIGHT[0] + UPRIGHT[2]) / 2),
        ("appeared", "9H", "match", (DEALT[0] + DEALT[2]) / 2)]


@pytest.mark.parametrize("late", [3, 10])
def test_a_card_read_before_the_shoes_word_of_it_still_lands(late):
    """The shoe's word of a card reaches the check late (a question open holds it): read at its
    place ``late`` frames before, with no card near it, it is still the shoe's card."""
    check = shipped_check(stable_frames=20)  # no card appears unchecked in these frames
    seen = []
    for n in range(1, late + 4):
        check.expect(("9H",) if n > late else ())
        seen += check.track(n, index_reading((DEALT, "9H")))
    assert [(e.kind.value, e.card, e.verdict) for e in seen] == [("appeared", "9H", "match")]


def test_a_card_laid_beside_a_matched_one_before_the_shoes_word_of_it_still_lands():
    """The next card of a hand, laid a corner's reach from a card already matched and read
    before the shoe's word of it came (held by a question), is that card: its place was first
    seen after the card beside it appeared, so it cannot be that card's other corner."""
    check = shipped_check(stable_frames=20)
    check.expect(("6S",))
    events = [e for n in (1, 2) for e in check.track(n, index_reading((UPRIGHT, "6S")))]
    check.expect(())  # the 6S landed
    events += check.track(3, index_reading((UPRIGHT, "6S")))
    both = joined(index_reading((UPRIGHT, "6S")), index_reading((MISREAD, "9H")))
    events += [e for n in range(4, 9) for e in check.track(n, both)]
    check.expect(("9H",))  # the word of the 9H, laid at frame 4, comes at frame 9
    events += [e for n in (9, 10) for e in check.track(n, both)]
    assert [(e.kind.value, e.card, e.verdict, e.x) for e in events] == [
        ("appeared", "6S", "match", (UPRIGHT[0] + UPRIGHT[2]) / 2),
        ("appeared", "9H", "match", (MISREAD[0] + MISREAD[2]) / 2)]


#: A 5S in the dealer's row seen by both its corners, and a corner of the card beside it (a 6S)
#: misread as a 5S (seed 1's deal 101 at a table's pace, frames 87-90)
FIVE_TOP, FIVE_BOTTOM, SIX_AS_FIVE = (487.0, 52.0, 498.0, 77.0), (534.0, 118.0, 545.0, 139.0), \
    (616.0, 55.0, 626.0, 80.0)


def test_a_card_seen_by_both_corners_keeps_them_and_lends_neither_to_a_misread_corner():
    """A card on the felt seen by both its indices is that card: a corner of another card
    misread as its code is not paired with one of them into a new card matched to the shoe
    (a card taken for a shoe code it is not, with the code of the card beside it)."""
    check = shipped_check(stable_frames=2)
    both = index_reading((FIVE_TOP, "5S"), (FIVE_BOTTOM, "5S"))
    check.expect(("5S",))
    events = [e for n in (1, 2) for e in check.track(n, both)]
    check.expect(())  # the 5S landed
    # the misread corner first seen where the 5S's lower index is boxed too short to pair
    short = index_reading((FIVE_TOP, "5S"), ((535.0, 122.0, 546.0, 138.0), "5S"),
                          (SIX_AS_FIVE, "5S"))
    events += check.track(3, short)
    with_misread = joined(both, index_reading((SIX_AS_FIVE, "5S")))
    events += [e for n in range(4, 7) for e in check.track(n, with_misread)]
    assert [(e.kind.value, e.card, e.verdict, e.x) for e in events
            if e.verdict == "match"] == [("appeared", "5S", "match", 516.0)]


# ------------------------------------------------------------- rendered frames, shipped models

artwork = pytest.importorskip("dealer_assist.vision.artwork")


def camera_landings(design_name: str, shown: str, shoe: str, seed: int,
                    frames: int = 3) -> list[FeltCard]:
    """The landings the table's camera reports for ``shown`` dealt to seat 1 of the demo's felt,
    rendered ``frames`` times, while the shoe says ``shoe`` is in flight."""
    from dealer_assist.table.camera_source import CameraSource, CameraStages
    from dealer_assist.table.felt import FeltTracker
    from dealer_assist.table.simulation.synthetic_camera import (
        PLAYED_SEATS,
        SyntheticFelt,
        VirtualTable,
    )

    if design_name not in artwork.installed_designs():
        pytest.skip("card artwork not installed (scripts/install-card-art.sh)")
    felt = SyntheticFelt(artwork.load_designs([design_name])[0],
                         VirtualTable(PLAYED_SEATS), seed=seed)
    felt.show(FeltCard(C(shown), CardTarget(PLAYED_SEATS[0], 0)))
    rendered = [felt.render().image for _ in range(frames)]
    check = shipped_check(stable_frames=2, grace_frames=6)
    stages = CameraStages(grab=lambda: rendered.pop(0) if rendered else None, detect=check.read,
                          track=check.track, to_table=lambda x, y: (x, y), expect=check.expect)
    got: list[FeltCard] = []
    done = threading.Event()

    def sink(item: object) -> None:
        if isinstance(item, FeltCard):
            got.append(item)
        if not rendered:
            done.set()

    source = CameraSource(stages, FeltTracker(felt.table.zone_of), lost_after_s=60)
    source.expect((shoe,))
    source.start(sink)
    done.wait(60)
    while source.frames_processed < frames and source._thread and source._thread.is_alive():
        time.sleep(0.05)
    source.stop()
    return got


def test_a_shoe_card_the_namer_misreads_is_placed_by_verification_without_a_question():
    # kennard (a deck the models never saw), seed 1: the namer reads QC in one frame of three
    # only, so the naming tracker never reports it; checked against the shoe's QC it matches
    landings = camera_landings("kennard", "QC", "QC", seed=1)
    assert [(f.card, f.verdict, f.checked) for f in landings] == [(C("QC"), "match", C("QC"))]
    table = Table()
    table.send(PlaceBet(1, Decimal("10")), ShoeCard(C("QC")))
    table.send(replace(landings[0], seen_at=None))
    assert table.seat_cards()[0][0] == ["QC"]
    assert table.loop.question is None and table.loop.alarms == []


def test_a_camera_that_sees_another_card_than_the_shoe_says_raises_the_alarm():
    landings = camera_landings("anglo", "KH", "4C", seed=0)
    assert [(f.card, f.verdict, f.checked) for f in landings] == [(C("KH"), "mismatch", C("4C"))]
    table = Table()
    table.send(PlaceBet(1, Decimal("10")), ShoeCard(C("4C")))
    table.send(replace(landings[0], seen_at=None))
    assert table.kinds() == [AlarmKind.SWITCHED_CARD]
    assert "4C" in table.loop.alarms[0].text and "KH" in table.loop.alarms[0].text



def felt_inputs(felt: object, steps: list[tuple[tuple[object, ...], tuple[str, ...], int]]
                ) -> list[object]:
    """The table's camera inputs from the demo's felt read frame by frame by the shipped
    models, each step showing its ``items`` on ``felt`` (the dealer's steps) and then rendering
    ``frames`` frames while the shoe's ``codes`` are in flight."""
    from dealer_assist.table.felt import FeltTracker, Sighting, SightingKind

    check = shipped_check(stable_frames=2, grace_frames=6)
    tracker = FeltTracker(felt.table.zone_of)  # type: ignore[attr-defined]
    inputs: list[object] = []
    number = 0
    for items, codes, frames in steps:
        for item in items:
            felt.show(item)  # type: ignore[attr-defined]
        check.expect(codes)
        for _ in range(frames):
            number += 1
            image = felt.render().image  # type: ignore[attr-defined]
            for event in check.track(number, check.read(image)):
                inputs += tracker.feed(Sighting(
                    SightingKind(event.kind.value), C(event.card), event.x, event.y,
                    event.track, event.sideways, event.verdict,
                    None if event.checked is None else C(event.checked)))
    return inputs


def demo_felt(seed: int) -> object:
    """The demo's felt (its house deck, its seats), empty."""
    from dealer_assist.table.simulation.synthetic_camera import (
        HOUSE_DECK,
        PLAYED_SEATS,
        SyntheticFelt,
        VirtualTable,
    )

    if HOUSE_DECK not in artwork.installed_designs():
        pytest.skip("card artwork not installed (scripts/install-card-art.sh)")
    return SyntheticFelt(artwork.load_designs([HOUSE_DECK])[0], VirtualTable(PLAYED_SEATS),
                         seed=seed)


def test_a_split_hands_next_card_laid_where_the_moved_card_lay_is_seen_landing():
    from dealer_assist.table.simulation.synthetic_camera import PLAYED_SEATS
    from dealer_assist.table.sources import FeltStacks, FeltSwap

    seat = PLAYED_SEATS[0]
    inputs = felt_inputs(demo_felt(seed=1), [
        ((FeltCard(C("9D"), CardTarget(seat, 0)),), ("9D",), 3),
        ((FeltCard(C("9C"), CardTarget(seat, 0)),), ("9C",), 3),
        ((), (), 2),
        ((FeltStacks(seat, 2, from_stack=0),), (), 2),  # the second 9 moved to its own hand
        # the first hand's next card, laid where the moved 9 lay, before the tracker lets it go
        ((FeltCard(C("2S"), CardTarget(seat, 0)),), ("2S",), 4),
    ])
    landings = [(f.card, f.spot, f.verdict) for f in inputs if isinstance(f, FeltCard)]
    assert landings[-1] == (C("2S"), CardTarget(seat, 0), "match"), inputs
    assert not any(isinstance(f, FeltSwap) for f in inputs), inputs


@pytest.mark.parametrize("in_flight", [(), ("4D",)])
def test_a_card_swapped_where_it_lies_still_raises_the_switched_card_alarm(in_flight):
    # with no shoe card in flight, or one the new card is not: a change, not a landing
    from dealer_assist.table.simulation.synthetic_camera import PLAYED_SEATS
    from dealer_assist.table.sources import FeltSwap, FinishRound

    seat = PLAYED_SEATS[0]
    inputs = felt_inputs(demo_felt(seed=0), [
        ((FeltCard(C("7H"), CardTarget(seat, 0)),), ("7H",), 3),
        ((), (), 2),
        # the 7H taken away and a QC put in its place between two frames
        ((FinishRound(), FeltCard(C("QC"), CardTarget(seat, 0))), in_flight, 12),
    ])
    assert [(f.card, f.verdict) for f in inputs if isinstance(f, FeltCard)] == \
        [(C("7H"), "match")], inputs
    swaps = [f for f in inputs if isinstance(f, FeltSwap)]
    assert [(s.previous, s.card, s.spot) for s in swaps] == \
        [(C("7H"), C("QC"), CardTarget(seat, 0))], inputs
    table = Table()
    table.send(PlaceBet(seat, Decimal("10")), ShoeCard(C("7H")),
               FeltCard(C("7H"), CardTarget(seat, 0), verdict="match", checked=C("7H")),
               replace(swaps[0], seen_at=None))
    assert table.kinds() == [AlarmKind.SWITCHED_CARD]
    assert "7H" in table.loop.alarms[0].text and "QC" in table.loop.alarms[0].text
