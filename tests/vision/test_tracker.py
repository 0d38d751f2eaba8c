"""The tracker's rules: stability before an event, no duplicate under a passing hand, removal
after the grace period, identity changes reported."""

from __future__ import annotations

from dataclasses import replace

import pytest

from dealer_assist.vision.detector import CardObservation
from dealer_assist.vision.tracker import CardTracker, EventKind


def obs(card: str, x: float, y: float) -> CardObservation:
    return CardObservation(card, x, y, 0.9, False, ((x - 5, y - 10, x + 5, y + 10),))


def run(tracker: CardTracker, frames: list[list[CardObservation]], start: int = 0):
    events = []
    for n, seen in enumerate(frames, start):
        events += tracker.update(n, seen)
    return events


def test_card_is_an_event_only_once_stable() -> None:
    tracker = CardTracker(stable_frames=3)
    assert tracker.update(0, [obs("7S", 100, 100)]) == []
    assert tracker.update(1, [obs("7S", 101, 100)]) == []
    events = tracker.update(2, [obs("7S", 100, 101)])
    assert [(e.kind, e.card, e.frame) for e in events] == [(EventKind.APPEARED, "7S", 2)]
    assert run(tracker, [[obs("7S", 100, 100)]] * 10, start=3) == []


def test_flicker_never_becomes_a_card() -> None:
    tracker = CardTracker(stable_frames=3)
    seen, gap = [[obs("7S", 100, 100)]], [[]] * 2
    frames = seen * 2 + gap + seen + gap + seen + gap
    assert run(tracker, frames) == []
    assert tracker.confirmed == []


def test_card_read_every_other_frame_becomes_a_card() -> None:
    """A card read just above the reader's confidence and just below it in turn (a spade read
    0.98, 0.94, 0.97...) is a card; one missed frame between sightings is allowed."""
    tracker = CardTracker(stable_frames=3)
    frames = [[obs("3S", 100, 100)], []] * 3
    assert [(e.kind, e.card, e.frame) for e in run(tracker, frames)] == [
        (EventKind.APPEARED, "3S", 4)]


def test_hand_passing_over_gives_no_duplicate() -> None:
    tracker = CardTracker(stable_frames=3, grace_frames=20)
    frames = [[obs("KD", 300, 200)]] * 5 + [[]] * 15 + [[obs("KD", 302, 199)]] * 5
    events = run(tracker, frames)
    assert [(e.kind, e.card) for e in events] == [(EventKind.APPEARED, "KD")]
    assert len(tracker.confirmed) == 1


def test_card_gone_longer_than_grace_is_removed() -> None:
    tracker = CardTracker(stable_frames=2, grace_frames=5)
    events = run(tracker, [[obs("AH", 50, 60)]] * 3 + [[]] * 7)
    assert [(e.kind, e.card, e.frame) for e in events] == [
        (EventKind.APPEARED, "AH", 1),
        (EventKind.REMOVED, "AH", 8),
    ]
    assert tracker.confirmed == []


def test_identity_change_reported_once_stable() -> None:
    tracker = CardTracker(stable_frames=3, change_frames=5)
    events = run(tracker, [[obs("5C", 400, 300)]] * 4 + [[obs("TC", 400, 300)]] * 6)
    kinds = [(e.kind, e.card, e.previous, e.frame) for e in events]
    assert kinds == [(EventKind.APPEARED, "5C", None, 2), (EventKind.CHANGED, "TC", "5C", 8)]
    assert [c[1] for c in tracker.confirmed] == ["TC"]


def test_a_change_needs_longer_than_appearing() -> None:
    """Clubs read as spades for a few frames, then clubs again: no change; the default asks for
    eight readings in a row."""
    tracker = CardTracker(stable_frames=3)
    assert tracker.change_frames == 8
    frames = ([[obs("8C", 400, 300)]] * 4 + [[obs("8S", 400, 300)]] * 7
              + [[obs("8C", 400, 300)]] + [[obs("8S", 400, 300)]] * 7)
    assert [e.kind for e in run(tracker, frames)] == [EventKind.APPEARED]
    events = run(tracker, [[obs("8S", 400, 300)]], start=len(frames))
    assert [(e.kind, e.card, e.previous) for e in events] == [(EventKind.CHANGED, "8S", "8C")]



def test_a_card_laid_over_one_on_the_felt_is_a_new_card_not_a_change() -> None:
    # the shoe check marks it laid over (it matched a shoe card in flight): the card under it
    # keeps its own track, unseen, until the grace period ends
    tracker = CardTracker(stable_frames=2, grace_frames=4, change_frames=3)
    run(tracker, [[obs("9C", 100, 100)]] * 3)
    laid = replace(obs("2S", 100, 100), laid_over=True, verdict="match", checked="2S")
    events = run(tracker, [[laid]] * 8, start=3)
    assert [(e.kind, e.card, e.verdict, e.frame) for e in events] == [
        (EventKind.APPEARED, "2S", "match", 4), (EventKind.REMOVED, "9C", None, 7)]
    # read the same way but not laid over, it is the 9C changed
    tracker = CardTracker(stable_frames=2, grace_frames=4, change_frames=3)
    run(tracker, [[obs("9C", 100, 100)]] * 3)
    events = run(tracker, [[obs("2S", 100, 100)]] * 8, start=3)
    assert [(e.kind, e.card, e.previous) for e in events] == [(EventKind.CHANGED, "2S", "9C")]


def checked(card: str, verdict: str, x: float = 100, y: float = 100,
            against: str | None = None) -> CardObservation:
    """An observation the shoe check marked: ``verdict`` against ``against`` (default: its own
    code)."""
    return replace(obs(card, x, y), verdict=verdict, checked=against or card)


def test_a_card_matched_to_the_shoe_appears_after_two_sightings() -> None:
    """A card of a cascade is often covered by the next one two frames after it lands: matched
    to a shoe card in flight twice in a row, it is a card; named or unsure, it still needs
    ``stable_frames``."""
    tracker = CardTracker(stable_frames=3)
    events = run(tracker, [[checked("JS", "match")]] * 2 + [[]] * 3)
    assert [(e.kind, e.card, e.verdict, e.frame) for e in events] == [
        (EventKind.APPEARED, "JS", "match", 1)]
    for verdict in ("unsure", None):
        tracker = CardTracker(stable_frames=3)
        assert run(tracker, [[checked("JS", verdict)]] * 2 + [[]] * 3) == []
    # the two matched sightings must follow each other: a sighting not matched in between
    # starts the count again
    tracker = CardTracker(stable_frames=4)
    frames = [[checked("JS", "match")], [checked("JS", "unsure")], [checked("JS", "match")],
              [checked("JS", "match")]]
    assert [(e.frame, e.verdict) for e in run(tracker, frames)] == [(3, "match")]
    tracker = CardTracker(stable_frames=3, matched_frames=3)
    assert [e.frame for e in run(tracker, [[checked("JS", "match")]] * 3)] == [2]


def test_a_switched_card_alarm_needs_every_sighting_to_say_so() -> None:
    """The other corner of a card read as another card while that card was in flight (unsure)
    and, once it landed and left the flight, surely none of the rest (mismatch) appears unsure:
    no alarm. A card surely none of the shoe's in every sighting appears a mismatch."""
    tracker = CardTracker(stable_frames=3)
    frames = [[checked("9C", "unsure", against="8D")]] + [[checked("9C", "mismatch",
                                                               against="8D")]] * 2
    assert [(e.kind, e.card, e.verdict) for e in run(tracker, frames)] == [
        (EventKind.APPEARED, "9C", "unsure")]
    tracker = CardTracker(stable_frames=3)
    frames = [[checked("9C", "mismatch", against="8D")]] * 3
    assert [(e.card, e.verdict, e.checked) for e in run(tracker, frames)] == [
        ("9C", "mismatch", "8D")]


def test_one_frame_misread_is_not_a_change() -> None:
    tracker = CardTracker(stable_frames=3)
    frames = [[obs("6H", 10, 10)]] * 4 + [[obs("8H", 10, 10)]] + [[obs("6H", 10, 10)]] * 4
    assert [e.kind for e in run(tracker, frames)] == [EventKind.APPEARED]


def test_two_cards_of_same_code_are_two_tracks() -> None:
    tracker = CardTracker(stable_frames=2, match_radius=25)
    events = run(tracker, [[obs("9S", 100, 100), obs("9S", 200, 100)]] * 3)
    assert sorted((e.card, e.x) for e in events) == [("9S", 100), ("9S", 200)]


def card(code: str, corners: list[tuple[float, float]]) -> CardObservation:
    """A card seen by the corners listed (index centres): placed at their mean, as grouped."""
    boxes = tuple((x - 6, y - 12, x + 6, y + 12) for x, y in corners)
    x = sum(c[0] for c in corners) / len(corners)
    y = sum(c[1] for c in corners) / len(corners)
    return CardObservation(code, x, y, 0.9, False, boxes)


def test_card_seen_by_one_corner_then_both_stays_one_card() -> None:
    """The point of a card is its centre with both corners read and a corner with one: it jumps
    by half a card (here 64 px, past match_radius) and is still the same card."""
    tracker = CardTracker(stable_frames=2, match_radius=25)
    top, bottom = (100, 100), (160, 180)
    frames = ([[card("5S", [top])]] * 3 + [[card("5S", [top, bottom])]] * 3
              + [[card("5S", [bottom])]] * 3 + [[card("5S", [top])]] * 3)
    events = run(tracker, frames)
    assert [(e.kind, e.card) for e in events] == [(EventKind.APPEARED, "5S")]
    assert len(tracker.confirmed) == 1


def test_a_card_matched_by_one_corner_then_by_the_other_is_one_card() -> None:
    """A card of a cascade matched to the shoe's card at one index in a frame and at its other
    index in the next (the first covered or unread there): the indices lie a card's diagonal
    apart, past match_radius, and it is one card seen landing, where it was seen last. Named,
    not matched, or too far apart to be one card's corners, the sightings are not joined; nor
    is a card seen at its own index taken for the other corner of a card beside it."""
    top, bottom, far = (100, 100), (160, 180), (100, 300)  # far: 200 px, 8.3 index sizes

    def matched(corner: tuple[float, float]) -> CardObservation:
        return replace(card("5S", [corner]), verdict="match", checked="5S")

    tracker = CardTracker(stable_frames=3, match_radius=25)
    events = run(tracker, [[matched(top)], [matched(bottom)]] + [[]] * 3)
    assert [(e.kind, e.card, e.frame, e.x, e.y) for e in events] == [
        (EventKind.APPEARED, "5S", 1, *bottom)]
    tracker = CardTracker(stable_frames=3, match_radius=25)
    assert run(tracker, [[card("5S", [top])], [card("5S", [bottom])], [card("5S", [top])]]
               + [[]] * 3) == []
    tracker = CardTracker(stable_frames=3, match_radius=25)
    assert run(tracker, [[matched(top)], [matched(far)]] + [[]] * 3) == []
    # a second 5S (a six-deck shoe) lands where it could be the first one's other corner,
    # nearer the first one's point than the index the first is seen by: each keeps its own
    both, second = replace(card("5S", [top, bottom]), verdict="match", checked="5S"), (100, 170)
    tracker = CardTracker(stable_frames=3, match_radius=25)
    events = run(tracker, [[both]] + [[matched(bottom), matched(second)]] * 2 + [[]] * 3)
    assert [(e.card, e.frame, e.x, e.y) for e in events] == [("5S", 1, *bottom),
                                                             ("5S", 2, *second)]


def test_the_next_card_of_a_tight_cascade_is_not_the_card_under_it_changed() -> None:
    """A card laid a fifth of a card along from the one under it, matched to a shoe card in
    flight, has its point within match_radius of that card's and its indices apart from that
    card's: it is a card of its own. Matched where the card's index lay, or not matched (a
    misread of a card nudged), it is that card changed."""
    under = card("9C", [(100, 100), (160, 180)])
    beside = [(115, 112), (175, 192)]  # points 19 px apart; no index over another's

    def events_after(over: CardObservation) -> list[tuple[EventKind, str, str | None]]:
        tracker = CardTracker(stable_frames=2, change_frames=3, match_radius=25)
        return [(e.kind, e.card, e.previous) for e in run(tracker, [[under]] * 3 + [[over]] * 6)]

    matched = replace(card("2S", beside), verdict="match", checked="2S")
    assert events_after(matched) == [(EventKind.APPEARED, "9C", None),
                                     (EventKind.APPEARED, "2S", None)]
    changed = [(EventKind.APPEARED, "9C", None), (EventKind.CHANGED, "2S", "9C")]
    assert events_after(card("2S", beside)) == changed
    where_it_lay = card("2S", [(102, 103), (162, 183)])
    assert events_after(replace(where_it_lay, verdict="match", checked="2S")) == changed


def test_corner_read_as_another_card_is_not_a_new_card() -> None:
    """A card whose corners disagree (5S at the top, 5C at the bottom, frame after frame) is one
    card, the one it was confirmed as; the other reading does not start a card of its own."""
    tracker = CardTracker(stable_frames=3, match_radius=25)
    top, bottom = (100, 100), (160, 180)
    frames = ([[card("5S", [top, bottom])]] * 3 + [[card("5S", [top]), card("5C", [bottom])]] * 5
              + [[card("5S", [top, bottom])]] * 3)
    assert [(e.kind, e.card) for e in run(tracker, frames)] == [(EventKind.APPEARED, "5S")]


def test_a_four_corner_card_laid_over_a_covered_corner_is_a_new_card() -> None:
    """A design with an index at every corner: the next card of the row covers the card under
    it by one corner and lays its own index there. It still has a pair of corners of its own,
    so it is a card, not the covered corner read otherwise (which is all one or two indices
    lying there can be)."""
    tracker = CardTracker(stable_frames=3, match_radius=25)
    under = [(100, 100), (160, 100), (100, 180), (160, 180)]
    over = [(160, 180), (220, 180), (160, 260), (220, 260)]  # its top-left on the 9S's corner
    frames = ([[card("9S", under)]] * 3
              + [[card("9S", under[:3]), card("5D", over)]] * 3)
    assert [(e.kind, e.card) for e in run(tracker, frames)] == [
        (EventKind.APPEARED, "9S"), (EventKind.APPEARED, "5D")]
    # three indices, two of them at the 9S's covered corners: no pair of its own is left
    tracker = CardTracker(stable_frames=3, match_radius=25)
    frames = ([[card("9S", under)]] * 3
              + [[card("9S", under[:2]), card("5D", [under[2], under[3], (40, 40)])]] * 3)
    assert [(e.kind, e.card) for e in run(tracker, frames)] == [(EventKind.APPEARED, "9S")]


def test_an_index_half_over_a_corner_seen_that_frame_is_another_card() -> None:
    """A cascade laid tight: the next card's index lies half over the index the card under it
    is seen by in the same frame. It is another card; a second box round that same index read
    otherwise is not."""
    tracker = CardTracker(stable_frames=3, match_radius=25)
    under = card("9S", [(100, 100)])
    beside = card("5D", [(104, 103)])  # overlaps the 9S's box by 0.58 of it
    frames = [[under]] * 3 + [[under, beside]] * 3
    assert [(e.kind, e.card) for e in run(tracker, frames)] == [
        (EventKind.APPEARED, "9S"), (EventKind.APPEARED, "5D")]
    tracker = CardTracker(stable_frames=3, match_radius=25)
    round_it = CardObservation("5D", 100, 100, 0.9, False, ((92, 86, 108, 118),))
    frames = [[under]] * 3 + [[under, round_it]] * 3
    assert [(e.kind, e.card) for e in run(tracker, frames)] == [(EventKind.APPEARED, "9S")]


def test_same_code_cards_side_by_side_keep_their_corners() -> None:
    """Two copies of one card (a six-deck shoe) in one fan: corners apart, two cards."""
    tracker = CardTracker(stable_frames=2, match_radius=25)
    first, second = card("9S", [(100, 100), (160, 180)]), card("9S", [(130, 100), (190, 180)])
    events = run(tracker, [[first]] * 3 + [[first, second]] * 3)
    assert [(e.kind, e.card) for e in events] == [(EventKind.APPEARED, "9S")] * 2


def test_card_added_to_a_hand_is_a_new_event() -> None:
    tracker = CardTracker(stable_frames=2)
    first = [obs("4D", 100, 100)]
    events = run(tracker, [first] * 3 + [first + [obs("JC", 125, 85)]] * 3)
    assert [(e.kind, e.card) for e in events] == [
        (EventKind.APPEARED, "4D"),
        (EventKind.APPEARED, "JC"),
    ]


def test_frames_must_advance() -> None:
    tracker = CardTracker()
    tracker.update(5, [])
    with pytest.raises(ValueError, match="frame 5 does not follow frame 5"):
        tracker.update(5, [])


def test_bad_settings_rejected() -> None:
    with pytest.raises(ValueError, match="stable_frames"):
        CardTracker(stable_frames=0)
    with pytest.raises(ValueError, match="matched_frames"):
        CardTracker(matched_frames=0)


def test_a_card_lying_sideways_is_reported_sideways() -> None:
    from dataclasses import replace

    tracker = CardTracker(stable_frames=2)
    crosswise = replace(obs("9H", 100, 100), sideways=True)
    events = run(tracker, [[crosswise, obs("5S", 300, 100)], [crosswise, obs("5S", 300, 100)]])
    assert {(e.card, e.sideways) for e in events} == {("9H", True), ("5S", False)}
    assert [e.to_json().get("sideways") for e in events if e.card == "9H"] == [True]


def test_overlaps_by_half_decide_every_pair_as_same_place_does() -> None:
    """The array form the shoe check uses, on random boxes and on the edges of the rule: boxes
    that touch, that overlap by exactly half the smaller one, or just under."""
    import numpy as np

    from dealer_assist.vision.detector import SAME_PLACE, BoxOverlaps, same_place

    rng = np.random.default_rng(4)
    corners = rng.uniform(0, 60, (40, 2))
    a = np.concatenate([corners, corners + rng.uniform(1, 30, (40, 2))], axis=1)
    a = np.concatenate([a, [[0, 0, 10, 10], [0, 0, 10, 10], [0, 0, 10, 10]]]).astype(np.float32)
    b = np.concatenate([a[::-1] + rng.uniform(-5, 5, a.shape),
                        [[10, 0, 20, 10], [5, 0, 15, 10], [5.001, 0, 15, 10]]])
    got = BoxOverlaps.of(a, b).by(SAME_PLACE)
    want = [[same_place(x.tolist(), y.tolist()) for y in b] for x in a]
    assert got.tolist() == want
    assert got.any() and not got.all()
    assert (got[-3, -3], got[-2, -2], got[-1, -1]) == (False, True, False)


def test_overlaps_by_same_index_decide_every_pair_as_same_index_does() -> None:
    """The array form of one index boxed twice (0.8 of the smaller box), on random boxes and on
    the edge of the rule: exactly 0.8, just under."""
    import numpy as np

    from dealer_assist.vision.detector import SAME_INDEX, BoxOverlaps, same_index

    rng = np.random.default_rng(5)
    corners = rng.uniform(0, 60, (40, 2))
    a = np.concatenate([corners, corners + rng.uniform(1, 30, (40, 2))], axis=1)
    a = np.concatenate([a, [[0, 0, 10, 10], [0, 0, 10, 10]]]).astype(np.float32)
    b = np.concatenate([a[::-1] + rng.uniform(-3, 3, a.shape),
                        [[2, 0, 12, 10], [2.001, 0, 12, 10]]])
    got = BoxOverlaps.of(a, b).by(SAME_INDEX)
    want = [[same_index(x.tolist(), y.tolist()) for y in b] for x in a]
    assert got.tolist() == want
    assert got.any() and not got.all()
    assert (got[-2, -2], got[-1, -1]) == (True, False)


def test_confirmed_at_each_names_the_card_at_each_box() -> None:
    import numpy as np

    tracker = CardTracker(stable_frames=1)
    tracker.update(0, [obs("7S", 100, 100), obs("KH", 300, 100)])
    tracker.update(1, [obs("7S", 100, 100), obs("KH", 300, 100), obs("2C", 500, 100)])
    boxes = np.array([(296, 91, 304, 109), (0, 0, 10, 10), (95, 90, 105, 110)], np.float32)
    ids = {card: track for track, card, _, _ in tracker.confirmed}
    assert tracker.confirmed_at_each(boxes) == [("KH", None, ids["KH"]), None,
                                                ("7S", None, ids["7S"])]
    # beside the 7S's index, another one half over it is not the 7S; a box round it is
    beside, round_it = (98, 93, 108, 113), (93, 88, 107, 112)
    at = tracker.confirmed_at_each(np.array([(95, 90, 105, 110), beside, round_it], np.float32))
    assert at == [("7S", None, ids["7S"]), None, ("7S", None, ids["7S"])]
    assert tracker.confirmed_at_each(np.array([beside], np.float32)) == [("7S", None, ids["7S"])]
    assert tracker.confirmed_at_each(np.zeros((0, 4), np.float32)) == []
