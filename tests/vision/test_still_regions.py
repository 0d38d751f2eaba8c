"""A settled region that has not changed keeps its boxes for a few frames; anything else about it
(a changed block, a card landing in it, another search depth, its own frame of every few) searches
it again, and regions first seen together are searched again in different frames. Then on the
demo's felt read by the shipped models: a settled card's region is not searched, and a card
swapped where it lies is still read as the new card."""

from __future__ import annotations

import numpy as np
import pytest

from dealer_assist.vision.still_regions import (
    BLOCK,
    CALM,
    LEVEL,
    REUSES,
    SHIFT,
    StillRegions,
    block_means,
)

REGION = (0, 0, 64, 32)
#: Frames a still region's boxes may stand in the tests about the other conditions (a region's
#: own frame to be searched again never comes in them).
LONG = 1000
BOXES = np.array([[10, 5, 22, 25]], np.float32)
SCORES = np.array([0.9], np.float32)


def frame(value: int = 120) -> np.ndarray:
    return np.full((32, 64, 3), value, np.uint8)


def searched(still: StillRegions, image: np.ndarray, settled: bool = True,
             region: tuple[int, int, int, int] = REGION) -> None:
    """A frame's read: ``region`` of ``image`` searched (finding ``BOXES``), then settled."""
    read = still.begin()
    read.remember(image, region, 0.04, BOXES, SCORES)
    read.settle(BOXES, np.array([settled]))


def kept(still: StillRegions, image: np.ndarray, region: tuple[int, int, int, int] = REGION,
         least: float = 0.04) -> bool:
    """Whether a frame's read keeps ``region``'s boxes (then settled as cards on the felt)."""
    read = still.begin()
    boxes = read.boxes_at(image, region, least)
    read.settle(BOXES, np.array([True]))
    return boxes is not None


def settled_memory(image: np.ndarray, reuses: int = LONG) -> StillRegions:
    still = StillRegions(reuses=reuses)
    for _ in range(CALM + 1):
        searched(still, image)
    return still


def test_block_means_are_per_colour_over_blocks():
    image = frame()
    image[:BLOCK, :BLOCK, 2] = 200
    blocks = block_means(image, REGION)
    assert blocks.shape == (32 // BLOCK, 64 // BLOCK, 3)
    assert blocks[0, 0].tolist() == [120, 120, 200] and blocks[1, 1].tolist() == [120, 120, 120]


def test_a_settled_still_region_keeps_its_boxes():
    image = frame()
    boxes = settled_memory(image).begin().boxes_at(image, REGION, 0.04)
    assert boxes is not None
    np.testing.assert_array_equal(boxes[0], BOXES)
    np.testing.assert_array_equal(boxes[1], SCORES)


def searched_or_kept(still: StillRegions, image: np.ndarray,
                     regions: list[tuple[int, int, int, int]]) -> list[bool]:
    """A frame's read of ``regions``: each one's boxes kept, else searched; then settled.
    Which were searched."""
    read, searched = still.begin(), []
    for region in regions:
        searched.append(read.boxes_at(image, region, 0.04) is None)
        if searched[-1]:
            read.remember(image, region, 0.04, BOXES, SCORES)
    read.settle(BOXES, np.array([True]))
    return searched


def test_a_searched_region_stands_only_once_its_own_frame_settled_it():
    image = frame()
    still = settled_memory(image)
    read = still.begin()
    read.remember(image, REGION, 0.04, BOXES, SCORES)  # searched again: settled by this
    assert not kept(still, image)  # frame's reading, not before
    read.settle(BOXES, np.array([True]))
    assert kept(still, image)


def test_a_region_looked_up_in_none_of_its_own_frames_still_stands_at_most_reuses_times():
    # the region is the memory's first: its own frames are the reads numbered 0 modulo
    # REUSES + 1 (reads are numbered from 1; settling it took CALM + 1 of them)
    image = frame()
    still = settled_memory(image, reuses=REUSES)
    reads, in_a_row, most = CALM + 1, 0, 0
    while reads < 6 * (REUSES + 1):
        reads += 1
        if reads % (REUSES + 1) == 0:  # its own frame: a read that does not look it up
            still.begin()
        elif kept(still, image):
            in_a_row += 1
            most = max(most, in_a_row)
        else:
            in_a_row = 0
            reads += 1
            searched(still, image)
    assert most == REUSES


def test_a_still_region_is_searched_again_in_one_frame_of_every_reuses_plus_one():
    image = frame()
    still = settled_memory(image, reuses=REUSES)
    searches = [searched_or_kept(still, image, [REGION])[0] for _ in range(4 * (REUSES + 1))]
    for start in range(len(searches) - REUSES):
        assert sum(searches[start:start + REUSES + 1]) == 1, searches


def test_regions_first_seen_together_are_searched_again_in_different_frames():
    # on a felt the regions all settle at once (the deal's first frames): searched again all
    # in one frame, that frame would cost as much as searching everything
    image = np.full((32, 64 * (REUSES + 1), 3), 120, np.uint8)
    regions = [(64 * k, 0, 64 * k + 64, 32) for k in range(REUSES + 1)]
    still = StillRegions()
    for _ in range(CALM + 1):
        assert all(searched_or_kept(still, image, regions))
    for _ in range(3 * (REUSES + 1)):
        assert sum(searched_or_kept(still, image, regions)) == 1


def test_a_changed_region_is_searched_until_calm_searches_found_it_settled_and_still():
    image = frame()
    still = StillRegions(reuses=LONG)
    searched(still, image)  # the search that found it changed
    for _ in range(CALM):
        assert not kept(still, image)
        searched(still, image)
    assert kept(still, image)
    changed = frame(200)
    searched(still, changed)  # changed between searches: calm again from the start
    assert not kept(still, changed)
    searched(still, changed, settled=False)  # a card landing there
    searched(still, changed)
    assert not kept(still, changed)


def test_a_region_where_a_card_is_landing_is_searched_every_frame():
    image = frame()
    still = StillRegions(reuses=LONG)
    for _ in range(CALM + 2):
        searched(still, image, settled=False)  # its index found, not yet a card on the felt
        assert not kept(still, image)


def test_a_frame_read_earlier_settles_no_region_a_later_frame_searched():
    # frames read at once: a card lands in the region; the next frame searches it, and so does
    # the one after, before the earlier frame's reading (no card there yet) is tracked
    image = frame()
    still = settled_memory(image)
    earlier, later, third = still.begin(), still.begin(), still.begin()
    assert earlier.boxes_at(image, REGION, 0.04) is not None
    landed = frame(200)
    later.remember(landed, REGION, 0.04, BOXES, SCORES)
    earlier.settle(BOXES, np.array([True]))  # must not settle the region later searched
    third.remember(landed, REGION, 0.04, BOXES, SCORES)
    later.settle(BOXES, np.array([True]))
    third.settle(BOXES, np.array([True]))
    # the change counts from the third frame's search: CALM more before the boxes stand
    for _ in range(CALM):
        assert not kept(still, landed)
        searched(still, landed)
    assert kept(still, landed)


@pytest.mark.parametrize(("change", "stands"), [(LEVEL, True), (LEVEL + 1, False)])
def test_one_block_moved_past_the_level_searches_the_region_again(change, stands):
    image = frame()
    still = settled_memory(image)
    moved = image.copy()
    moved[8:8 + BLOCK, 40:40 + BLOCK, 1] += change  # one block, one colour
    assert kept(still, moved) is stands


@pytest.mark.parametrize(("region", "stands"), [
    ((SHIFT, SHIFT, 64 + SHIFT, 32 + SHIFT), True),  # its edges moved by noise
    ((SHIFT + 1, 0, 65 + SHIFT, 32), False),  # moved too far
    ((0, 0, 32, 32), False),  # another size
])
def test_a_region_moved_a_little_counts_as_the_one_searched(region, stands):
    image = np.full((64, 128, 3), 120, np.uint8)
    assert kept(settled_memory(image), image, region) is stands


def test_a_region_moved_a_little_is_compared_where_it_was_searched():
    image = np.full((64, 128, 3), 120, np.uint8)
    still = settled_memory(image)
    moved = image.copy()
    moved[:BLOCK, :BLOCK] = 0  # a change inside the region searched, outside the new one
    assert not kept(still, moved, (SHIFT, SHIFT, 64 + SHIFT, 32 + SHIFT))


def test_another_search_depth_is_searched():
    image = frame()
    assert not kept(settled_memory(image), image, least=0.25)


def test_a_region_is_settled_only_where_every_index_centred_in_it_is():
    image = np.full((32, 128, 3), 120, np.uint8)
    left, right = (0, 0, 64, 32), (64, 0, 128, 32)
    still = StillRegions(reuses=LONG)
    boxes = np.array([[10, 5, 22, 25], [30, 5, 42, 25], [80, 5, 92, 25]], np.float32)
    for settled in [[True, True, True]] * (CALM + 1) + [[True, False, True]]:
        read = still.begin()
        for region in (left, right):
            read.remember(image, region, 0.04, BOXES, SCORES)
        read.settle(boxes, np.array(settled))
    read = still.begin()
    assert read.boxes_at(image, left, 0.04) is None
    assert read.boxes_at(image, right, 0.04) is not None


def test_a_region_with_no_index_is_settled():
    image = frame()
    still = StillRegions(reuses=LONG)
    for _ in range(CALM + 1):
        read = still.begin()
        read.remember(image, REGION, 0.04, BOXES[:0], SCORES[:0])
        read.settle(np.zeros((0, 4), np.float32), np.zeros(0, bool))
    assert still.begin().boxes_at(image, REGION, 0.04) is not None


def test_regions_a_frame_no_longer_has_are_forgotten():
    image = np.full((64, 128, 3), 120, np.uint8)
    still = settled_memory(image)
    still.keep_only([(SHIFT, 0, 64 + SHIFT, 32)])  # the same region, moved a little: kept
    assert kept(still, image)
    still.keep_only([(0, 0, 32, 32)])
    assert not kept(still, image)


# ------------------------------------------------------------- the demo's felt, shipped models

def demo_check(seed: int, still: StillRegions | bool):  # -> (felt, ShoeCheck)
    from dealer_assist.vision.detector import DEFAULT_MODEL, CardDetector
    from dealer_assist.vision.shoe_check import ShoeCheck
    from dealer_assist.vision.tracker import CardTracker
    from tests.table.test_shoe_check import demo_felt

    check = ShoeCheck(CardDetector(DEFAULT_MODEL, threads=1),
                      CardTracker(stable_frames=2, grace_frames=6), still=still)
    return demo_felt(seed), check


def show(felt, code: str) -> None:  # type: ignore[no-untyped-def]
    from dealer_assist.rules import Card, CardTarget
    from dealer_assist.table.simulation.synthetic_camera import PLAYED_SEATS
    from dealer_assist.table.sources import FeltCard

    felt.show(FeltCard(Card.parse(code), CardTarget(PLAYED_SEATS[0], 0)))


def landing(still: StillRegions | bool) -> tuple[list[tuple[str, str, str | None]],
                                               list[tuple[int, int]]]:
    """A 7H dealt to the demo's felt and seen for 16 frames with the shoe's 7H in flight: the
    check's events and, where ``still`` is a memory, the regions each frame searched and kept."""
    felt, check = demo_check(seed=0, still=still)
    show(felt, "7H")
    check.expect(("7H",))
    events, regions = [], []
    for number in range(1, 17):
        before = (still.searches, still.kept) if isinstance(still, StillRegions) else (0, 0)
        events += check.track(number, check.read(felt.render().image))
        after = (still.searches, still.kept) if isinstance(still, StillRegions) else (0, 0)
        regions.append((after[0] - before[0], after[1] - before[1]))
    return [(e.kind.value, e.card, e.verdict) for e in events], regions


def test_a_settled_card_is_not_searched_every_frame_and_reads_the_same():
    memory = StillRegions()
    events, regions = landing(still=memory)
    assert events == landing(still=False)[0] == [("appeared", "7H", "match")]
    # every region searched in the first CALM + 1 frames; the card's until it is on the felt
    # (two sightings; the next frame settles it) and CALM searches more; from then on every
    # frame keeps some region's boxes and most lookups keep them (each region searched in a
    # frame of its own among REUSES + 1, and again after a change of its size: the edge of a
    # pale print on this felt moves across the network's stride)
    assert all(stood == 0 for _, stood in regions[:CALM + 1]), regions
    settled = 4 + CALM
    assert all(stood for _, stood in regions[settled:]), regions
    searches, stood = (sum(counts) for counts in zip(*regions[settled:], strict=True))
    assert stood > searches, regions


def test_a_card_swapped_where_it_lies_is_read_as_the_new_card_though_its_boxes_stand():
    from dealer_assist.table.sources import FinishRound

    # every change counts as still here: the boxes of the 7H stand over the QC laid in its
    # place, and the reading, made afresh at them, sees the QC
    memory = StillRegions(level=255, reuses=100)
    felt, check = demo_check(seed=0, still=memory)
    show(felt, "7H")
    check.expect(("7H",))
    events = []
    for number in range(1, 6):
        events += check.track(number, check.read(felt.render().image))
    felt.show(FinishRound())
    show(felt, "QC")
    check.expect(())
    kept_for_the_swap = []
    for number in range(6, 14):
        events += check.track(number, check.read(felt.render().image))
        kept_for_the_swap.append(check.detector.last_times.inference == 0)
    assert kept_for_the_swap[0], "the swap's first frame was searched: the test proves nothing"
    assert [(e.kind.value, e.card, e.previous) for e in events] == \
        [("appeared", "7H", None), ("changed", "QC", "7H")]
