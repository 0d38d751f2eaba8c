"""Grouping corner-index detections into physical cards (pure geometry, no model)."""

from __future__ import annotations

import numpy as np
import pytest

from dealer_assist.vision.artwork import CARD_CODES
from dealer_assist.vision.detector import Detections, group_indices


def dets(*items: tuple[str, float, float, float, float]) -> Detections:
    """Index boxes ``(code, cx, cy, w, h)``."""
    boxes = np.array(
        [[cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2] for _, cx, cy, w, h in items], np.float32
    ).reshape(-1, 4)
    return Detections(
        boxes,
        np.full(len(items), 0.9, np.float32),
        np.array([CARD_CODES.index(c) for c, *_ in items], np.int64),
    )


def test_two_corners_of_one_card_are_one_observation_at_its_centre() -> None:
    # a 70x98 card at (100,100)-(170,198): index ~10x26 near each end of its diagonal
    cards = group_indices(dets(("7S", 108, 115, 10, 26), ("7S", 162, 183, 10, 26)))
    assert len(cards) == 1
    assert cards[0].card == "7S"
    assert (cards[0].x, cards[0].y) == pytest.approx((135, 149))
    assert cards[0].sideways is False


def test_jumbo_index_corners_pair_though_their_boxes_are_long() -> None:
    # a 70x98 card at (100,100)-(170,198): a jumbo index (rank and suit) is ~16x42 at each
    # corner, its centres 1.7 long sides apart (kennard_bf, ornamental: 1.8 on tight boxes)
    cards = group_indices(dets(("4H", 110, 123, 16, 42), ("4H", 160, 175, 16, 42)))
    assert [c.card for c in cards] == ["4H"]


def test_jumbo_corners_pair_when_one_is_boxed_by_its_rank_alone() -> None:
    # measured on the committed jumbo sample: one corner's box 37x54 (rank and suit), the
    # other's 26x32 (the rank only), centres 95 px apart
    cards = group_indices(dets(("TC", 315.5, 239, 37, 54), ("TC", 344, 330, 26, 32)))
    assert [c.card for c in cards] == ["TC"]


def test_sideways_card_from_landscape_indices() -> None:
    cards = group_indices(dets(("TD", 115, 108, 26, 10), ("TD", 183, 162, 26, 10)))
    assert [(c.card, c.sideways) for c in cards] == [("TD", True)]


def test_fan_of_different_cards_stays_separate() -> None:
    cards = group_indices(
        dets(
            ("2H", 100, 100, 10, 26),
            ("9C", 122, 88, 10, 26),
            ("KS", 144, 76, 10, 26),
            ("KS", 198, 144, 10, 26),
        )
    )
    assert [c.card for c in cards] == ["2H", "9C", "KS"]


def test_same_code_too_close_or_too_far_is_two_cards() -> None:
    near = group_indices(dets(("8D", 100, 100, 10, 26), ("8D", 120, 100, 10, 26)))
    far = group_indices(dets(("8D", 100, 100, 10, 26), ("8D", 400, 100, 10, 26)))
    assert len(near) == 2 and len(far) == 2


def test_two_same_cards_in_a_multi_deck_shoe_pair_their_own_corners() -> None:
    cards = group_indices(
        dets(
            ("QH", 108, 115, 10, 26),
            ("QH", 162, 183, 10, 26),
            ("QH", 408, 115, 10, 26),
            ("QH", 462, 183, 10, 26),
        )
    )
    assert [(round(c.x), round(c.y)) for c in cards] == [(135, 149), (435, 149)]


def test_detections_validate_their_shapes() -> None:
    with pytest.raises(ValueError, match=r"boxes must be \(N, 4\)"):
        Detections(np.zeros((2, 3)), np.zeros(2), np.zeros(2, np.int64))
    with pytest.raises(ValueError, match="expected 2 confidences"):
        Detections(np.zeros((2, 4)), np.zeros(3), np.zeros(2, np.int64))



def test_two_boxes_on_one_index_are_one_card() -> None:
    # a jumbo index drawn once round the rank and once round rank and suit: one card, not two
    cards = group_indices(dets(("AS", 860, 400, 28, 40), ("AS", 856, 396, 28, 33)))
    assert [c.card for c in cards] == ["AS"] and len(cards[0].index_boxes) == 1
    # different codes on one place stay separate (the reader disagrees; not this rule's call)
    assert len(group_indices(dets(("AS", 860, 400, 28, 40), ("AC", 856, 396, 28, 33)))) == 2


# a 70x98 card at (100,100)-(170,198) with an index at each of its four corners (dondorf's
# designs): top-left, bottom-right, top-right, bottom-left
FOUR_CORNERS = (("5C", 108, 115, 10, 26), ("5C", 162, 183, 10, 26),
                ("5C", 162, 115, 10, 26), ("5C", 108, 183, 10, 26))


def test_an_index_at_every_corner_is_one_card_at_its_centre() -> None:
    cards = group_indices(dets(*FOUR_CORNERS))
    assert [(c.card, round(c.x), round(c.y)) for c in cards] == [("5C", 135, 149)]
    assert len(cards[0].index_boxes) == 4


def test_a_third_corner_joins_the_card_without_moving_its_point() -> None:
    two = group_indices(dets(*FOUR_CORNERS[:2]))
    for third in FOUR_CORNERS[2:]:
        three = group_indices(dets(*FOUR_CORNERS[:2], third))
        assert [(c.x, c.y) for c in three] == [(two[0].x, two[0].y)]
        assert len(three[0].index_boxes) == 3


def test_corners_of_two_same_cards_fanned_do_not_join() -> None:
    # a second 5C of a multi-deck shoe fanned 22 px right and 12 px up: its top-left index lies
    # near the first card's circle, but too close to the first card's own corner to be one
    second = ("5C", 130, 103, 10, 26)
    assert len(group_indices(dets(*FOUR_CORNERS[:2], second))) == 2
    # and two whole four-corner cards well apart stay two cards
    apart = [(code, x + 200, y, w, h) for code, x, y, w, h in FOUR_CORNERS]
    cards = group_indices(dets(*FOUR_CORNERS, *apart))
    assert [(round(c.x), round(c.y)) for c in cards] == [(135, 149), (335, 149)]


def test_a_same_code_double_laid_across_keeps_the_card_under_it() -> None:
    # a 5C, a 9H over its lower corner, and a second 5C laid crosswise over both (a double):
    # the first 5C's one index seen lies on the double's circle, but upright against crosswise
    cards = group_indices(dets(("5C", 108, 115, 10, 26), ("9H", 182, 213, 10, 26),
                               ("5C", 152, 133, 26, 10), ("5C", 84, 187, 26, 10)))
    fives = [(round(c.x), round(c.y), c.sideways) for c in cards if c.card == "5C"]
    assert sorted(fives) == [(108, 115, False), (118, 160, True)]


def test_two_same_cards_offset_across_the_diagonal_stay_two() -> None:
    # two upright 5Cs, the second a card's width left and half a card down: the pairing's
    # nearest-typical pairs cross between them and share a midpoint, but their sides run
    # across the cards, not along them
    for dx, dy in ((-78, 48), (-72, 72)):
        cards = group_indices(dets(*FOUR_CORNERS[:2], ("5C", 108 + dx, 115 + dy, 10, 26),
                                   ("5C", 162 + dx, 183 + dy, 10, 26)))
        assert len(cards) == 2


def test_an_index_over_the_face_and_not_at_a_corner_stays_a_card_of_its_own() -> None:
    # a same-code index 20 px from the card's centre, across its diagonal: within a pair's reach
    # of both paired corners, but off the circle the card's corners lie on
    cards = group_indices(dets(*FOUR_CORNERS[:2], ("5C", 150.7, 136.6, 10, 26)))
    assert len(cards) == 2
