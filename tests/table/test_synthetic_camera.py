"""The demo's synthetic camera: the simulated dealer's cards rendered on felt by the scene
generator, read through the camera pipeline (frame tracker, felt tracker) into the live table.

The detector's place is taken by the renderer's own ground truth (every card whose corner index
is visible, at its centre, sideways as laid): a test double for the detector only, so that these
tests check the rest of the pipeline exactly and fast (the shipped first model misreads too many
cards for an exact comparison and takes ~170 ms a frame here; bench/table.py measures the demo
with it). Everything else is the real pipeline: renderer, ``CardTracker``, ``FeltTracker``, the
shoe simulator on a pty and its reader, the loop and the screen."""

from __future__ import annotations

import pytest

from dealer_assist.rules import Card, CardTarget
from dealer_assist.table.simulation.demo import DEMO_DEALER, DemoOptions, DemoTable
from dealer_assist.table.simulation.synthetic_camera import (
    ALL_SEATS,
    CARD_WIDTH,
    FAN_STEP,
    FRAME_SIZE,
    PLAYED_SEATS,
    SyntheticFelt,
    VirtualTable,
    scene_truth,
    truth_camera,
)
from dealer_assist.table.sources import DEALER_SPOT, FeltCard, FeltStacks

artwork = pytest.importorskip("dealer_assist.vision.artwork")
if not artwork.installed_designs():
    pytest.skip("card artwork not installed (scripts/install-card-art.sh)", allow_module_level=True)


@pytest.fixture(scope="module")
def design():
    return artwork.load_designs([artwork.installed_designs()[0]])[0]


def test_felt_lays_out_hands_where_their_zones_are(design):
    table = VirtualTable((2, 7))
    felt = SyntheticFelt(design, table)
    for code, seat, stack, sideways in [
        ("8S", 2, 0, False),
        ("8H", 2, 0, False),
        ("3C", 2, 0, True),
        ("9D", 7, 0, False),
    ]:
        felt.show(FeltCard(Card.parse(code), CardTarget(seat, stack), sideways))
    felt.show(FeltStacks(2, 2, from_stack=0))
    felt.show(FeltCard(Card.parse("AS"), CardTarget()))
    scene = felt.render()
    cards = {c.code: c for c in scene.cards}
    assert set(cards) == {"8S", "8H", "3C", "9D", "AS"}
    assert cards["3C"].sideways and not cards["8S"].sideways
    assert table.zone_of(*cards["AS"].center) == ("dealer", None)
    for code, seat in (("8S", 2), ("8H", 2), ("3C", 2), ("9D", 7)):
        assert table.zone_of(*cards[code].center) == ("seat", seat)
    observed = {o.card for o in scene_truth(scene)}
    assert observed == set(cards)  # nothing hides a whole card's indices in this layout


def test_each_frame_is_the_whole_render_of_the_cards_lying_there(design):
    """The felt renders its layout once per change and only the noise per frame: every frame has
    the pixels of a whole render of the cards then on the felt, and a card laid shows in the
    very next frame."""
    import numpy as np

    from dealer_assist.vision.scenes import render_layout

    felt = SyntheticFelt(design, VirtualTable(PLAYED_SEATS), seed=3)

    def whole(frame: int):
        return render_layout(np.random.default_rng(3), design, felt.layout(), FRAME_SIZE,
                             sensor=np.random.default_rng([3, frame])).image

    felt.show(FeltCard(Card.parse("8S"), CardTarget(PLAYED_SEATS[0], 0)))
    first, second = felt.render(), felt.render()
    assert np.array_equal(first.image, whole(1)) and np.array_equal(second.image, whole(2))
    assert not np.array_equal(first.image, second.image)  # fresh sensor noise
    felt.show(FeltCard(Card.parse("KD"), CardTarget()))
    third = felt.render()
    assert {c.code for c in third.cards} == {"8S", "KD"}
    assert np.array_equal(third.image, whole(3))


def test_demo_rounds_read_by_shoe_and_rendered_camera_settle_as_played(tmp_path, design):
    camera = truth_camera(design, seed=3)
    options = DemoOptions(
        port=0,
        recording_dir=str(tmp_path),
        pace_s=0.0,
        pause_after_round_s=0.0,
        seed=21,
        card_timeout_s=8.0,
        # what the camera sees is asked, not how soon: on one busy core a landing took 1.4 s
        # of the 1.5 s the table waits, and a sighting's lag half the 0.5 s it allows
        camera_wait_s=60.0,
        max_camera_lag_s=60.0,
    )
    with DemoTable(options, camera=camera) as demo:
        assert demo.runner.wait_until(lambda loop: loop.mode.value == "shoe + camera", 8)
        for number in (1, 2):
            settlement = demo.play_round(number, 0.0)
            assert settlement is not None, [a.text for a in demo.loop.alarms]
            got, want = settlement.to_json(), demo.world.settlements[-1].to_json()
            assert (got["dealer"], got["seats"]) == (want["dealer"], want["seats"])
        assert [a.text for a in demo.loop.alarms] == [f"dealer {DEMO_DEALER} signed in"]
        assert camera.source.frames_processed > 10


@pytest.mark.parametrize("seats, scale", [(PLAYED_SEATS, 1.0), (ALL_SEATS, 2.4)])
def test_the_demos_split_hands_lie_in_their_own_seats_zone_and_in_the_frame(seats, scale):
    """Seat 3's second split hand once fanned into seat 2's zone: the camera then saw its cards
    land at seat 2 and the dealer was asked where they went. Spread over a 3K frame, all seven
    seats' split hands keep clear of each other."""
    table = VirtualTable(seats, scale=scale)
    width, height = table.frame_size
    for seat in seats:
        for stack in (0, 1):
            x0, y0 = table.stack_origin(seat, stack)
            for position in range(6):
                x, y = x0 + FAN_STEP[0] * position, y0 + FAN_STEP[1] * position
                assert table.zone_of(x, y) == ("seat", seat), (seat, stack, position)
                assert CARD_WIDTH / 2 <= x <= width - CARD_WIDTH / 2
                assert y <= height - 0.7 * CARD_WIDTH


def test_a_table_spread_over_a_3k_frame_keeps_its_cards_and_zones(design):
    """``scale`` 2.4: the frame a camera over a whole felt gives (3072x1728), the cards the
    install's width, each card in its seat's or the dealer's zone and every index visible."""
    table = VirtualTable(ALL_SEATS, scale=2.4)
    assert table.frame_size == (3072, 1728)
    felt = SyntheticFelt(design, table, seed=2)
    for seat in ALL_SEATS:
        for code in ("8S", "KD", "3C"):
            felt.show(FeltCard(Card.parse(code), CardTarget(seat, 0)))
        felt.show(FeltCard(Card.parse("AS"), CardTarget(seat, 1), True))
    for code in ("7S", "QH", "4D", "6C", "JD"):
        felt.show(FeltCard(Card.parse(code), DEALER_SPOT))
    scene = felt.render()
    assert scene.image.shape == (1728, 3072, 3)
    assert len(scene.cards) == 4 * len(ALL_SEATS) + 5
    dealt = [("seat", seat) for seat in ALL_SEATS for _ in range(4)]
    zones = [table.zone_of(*card.center) for card in scene.cards]
    assert zones == [("dealer", None)] * 5 + dealt
    for card in scene.cards:
        top_left, top_right = card.corners[0], card.corners[1]
        assert abs(float(((top_right - top_left) ** 2).sum()) ** 0.5 - CARD_WIDTH) < 0.01
        assert 0 <= card.corners[:, 0].min() and card.corners[:, 0].max() <= 3072
        assert 0 <= card.corners[:, 1].min() and card.corners[:, 1].max() <= 1728
    assert len(scene_truth(scene)) == len(scene.cards)


def test_the_demos_own_table_lies_where_it_always_has():
    """Scale 1 is the demo's 1280x720 view: its seats and zones as laid out before tables could
    scale, its dealer's row from 200 px left of the middle."""
    table = VirtualTable(PLAYED_SEATS)
    assert table.frame_size == FRAME_SIZE
    assert [table.dealer_origin(i) for i in (0, 1, 6)] == [(440.0, 80.0), (520.0, 80.0),
                                                            (920.0, 80.0)]
    assert table.seat_anchor(PLAYED_SEATS[0]) == pytest.approx((1091.05, 262.87), abs=0.01)
    assert table.zone_of(939.0, 149.0) == ("dealer", None)
    assert table.zone_of(941.0, 149.0) != ("dealer", None)


@pytest.mark.parametrize("seats, scale", [(PLAYED_SEATS, 1.0), (ALL_SEATS, 1.0), (ALL_SEATS, 2.4)])
def test_a_seven_card_dealer_hand_lies_in_the_dealers_zone(design, seats, scale):
    """A dealer who draws to seven cards: each lies in the dealer's zone with both indices
    visible (at 90 px from 100 px left of the middle the sixth and seventh lay in seat 1's zone
    at 1280x720, where the camera saw them land, and in none at 3K)."""
    table = VirtualTable(seats, scale=scale)
    felt = SyntheticFelt(design, table, seed=4)
    codes = ("2S", "AH", "2D", "AC", "3S", "2H", "4C")
    for code in codes:
        felt.show(FeltCard(Card.parse(code), DEALER_SPOT))
    scene = felt.render()
    assert [table.zone_of(*card.center) for card in scene.cards] == [("dealer", None)] * 7
    assert [o.card for o in sorted(scene_truth(scene), key=lambda o: o.x)] == list(codes)
    assert len(scene.labels) == 2 * len(codes) and not scene.covered


def grouped_labels(scene):  # type: ignore[no-untyped-def]
    """The cards the detector's grouping makes of ``scene``'s index labels (the renderer's own
    boxes and codes standing for the detector's)."""
    import numpy as np

    from dealer_assist.vision.detector import Detections, group_indices

    labels = scene.labels
    boxes = np.array([label.box for label in labels], np.float32).reshape(-1, 4)
    return group_indices(Detections(boxes, np.ones(len(labels), np.float32),
                                    np.array([label.class_id for label in labels], np.int64)))


def test_two_dealer_cards_of_one_code_side_by_side_stay_two_cards(design):
    """The detector's grouping pairs two indices of one code into one card: the dealer's row
    shows both indices of each card, so two 7S side by side pair each with its own corner."""
    felt = SyntheticFelt(design, VirtualTable(PLAYED_SEATS), seed=1)
    for code in ("7S", "7S", "4C"):
        felt.show(FeltCard(Card.parse(code), DEALER_SPOT))
    cards = grouped_labels(felt.render())
    assert sorted((card.card, round(card.x)) for card in cards) == \
        [("4C", 600), ("7S", 440), ("7S", 520)]


def ground_truth_events(felt, steps):  # type: ignore[no-untyped-def]
    """The frame tracker's events over ``steps`` (each shown, then 6 frames), the detector's
    place taken by :func:`grouped_labels`."""
    from dealer_assist.vision.tracker import CardTracker

    tracker, events, frame = CardTracker(stable_frames=2, grace_frames=6), [], 0
    for step in steps:
        felt.show(step)
        for _ in range(6):
            frame += 1
            events += tracker.update(frame, grouped_labels(felt.render()))
    return events


@pytest.mark.parametrize("deck", ["anglo", "kennard"])
def test_a_seat_card_of_the_dealers_code_beside_the_dealers_row_stays_its_own(deck):
    """Seat 5's split second hand fans up towards the dealer's first card: a 7S ending it is a
    card of seat 5, not paired with the dealer's 7S (from 220 px left of the middle it was)."""
    table = VirtualTable(PLAYED_SEATS)
    felt = SyntheticFelt(artwork.load_designs([deck])[0], table, seed=7)
    seat = PLAYED_SEATS[-1]
    steps = [FeltCard(Card.parse("7S"), DEALER_SPOT),
             FeltCard(Card.parse("8D"), CardTarget(seat, 0))]
    steps += [FeltCard(Card.parse(code), CardTarget(seat, 1))
              for code in ("2C", "3C", "4C", "5C", "6C", "7S")]
    events = ground_truth_events(felt, steps)
    assert [e.kind.value for e in events] == ["appeared"] * len(steps)
    assert [table.zone_of(e.x, e.y) for e in events if e.card == "7S"] == \
        [("dealer", None), ("seat", seat)]


@pytest.mark.parametrize("scale", [0.5, 4.5, float("nan")])
def test_a_table_refuses_a_scale_outside_1_to_4(scale):
    with pytest.raises(ValueError, match="scale must be 1 to 4"):
        VirtualTable(ALL_SEATS, scale=scale)
