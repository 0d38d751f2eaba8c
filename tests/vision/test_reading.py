"""Each found index is read first as seen and half a turn, and at the quarter turns too only
where those readings are unsure: the cards named must be those of four readings, for less of
the reader's work."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from dealer_assist.vision.artwork import (
    CARD_CODES,
    HELD_OUT_DESIGNS,
    installed_designs,
    load_designs,
)
from dealer_assist.vision.detector import CardDetector
from dealer_assist.vision.reader import (
    RANK_CLASSES,
    READINGS,
    SETTLED,
    agree,
    crop_index,
    crops_to_blob,
    settled,
    views,
)
from dealer_assist.vision.scenes import SceneConfig, render_scene
from tests.vision.test_runtime import DATA, SAMPLES, same_cards

NOT_AN_INDEX = RANK_CLASSES.index("-")


class CountingSession:
    """A runtime session that counts the rows (crops) it is given, then runs them."""

    def __init__(self, session: object) -> None:
        self.session = session
        self.rows = 0

    def run(self, blob: np.ndarray) -> list[np.ndarray]:
        self.rows += len(blob)
        return self.session.run(blob)  # type: ignore[attr-defined,no-any-return]

    def __getattr__(self, name: str) -> object:
        return getattr(self.session, name)


@pytest.fixture(scope="module")
def readers() -> dict[str, CardDetector]:
    return {way: CardDetector(reading=way) for way in READINGS}


@pytest.fixture(scope="module")
def rendered() -> list[np.ndarray]:
    """Held-out designs at 1280x720, cards 70-95 px (the install's sizes), 8 frames."""
    if not set(HELD_OUT_DESIGNS) <= set(installed_designs()):
        pytest.skip("held-out card artwork not installed; scripts/install-card-art.sh")
    rng = np.random.default_rng(7)
    designs = load_designs(list(HELD_OUT_DESIGNS))
    config = SceneConfig(size=(1280, 720), card_width=(70.0, 95.0))
    return [render_scene(rng, designs, config).image for _ in range(8)]


def test_the_table_reads_twice_first_and_a_bad_way_is_refused() -> None:
    assert CardDetector().reading == "twice"
    with pytest.raises(ValueError, match="reading must be one of four, twice, once"):
        CardDetector(reading="thrice")


def test_settled_needs_sure_readings_of_an_index_or_of_no_index() -> None:
    ranks = np.zeros((4, len(RANK_CLASSES)), np.float32)
    suits = np.zeros((4, 4), np.float32)
    ranks[0, 0], suits[0, 0] = 0.999, 0.999  # a sure AS
    ranks[1, 0], suits[1, 0] = 0.999, 0.95  # a sure ace, an unsure suit
    ranks[2, NOT_AN_INDEX], suits[2, 1] = SETTLED, 0.3  # surely no index, whatever the suit
    ranks[3, NOT_AN_INDEX], ranks[3, 5], suits[3, 0] = 0.6, 0.4, 1.0  # likely no index
    assert settled(ranks, suits).tolist() == [True, False, True, False]


def test_the_default_reads_the_cards_of_four_readings_on_the_committed_samples() -> None:
    """Same codes at the same places (a card read twice is as sure as those two readings, four
    readings of it may average a little lower)."""
    default, four = CardDetector(), CardDetector(reading="four")
    for name in SAMPLES:
        frame = cv2.imread(str(DATA / name))
        assert same_cards(default.detect(frame), four.detect(frame),
                          pixels=1.0, confidence=1.0), name


def test_the_default_reads_the_cards_of_four_readings_on_rendered_tables(rendered) -> None:
    """Every frame's cards have the same codes and places as with four readings, for at most
    three quarters of the reader's crops."""
    default, four = CardDetector(), CardDetector(reading="four")
    counted = {}
    for way, detector in (("default", default), ("four", four)):
        counted[way] = CountingSession(detector._reader)
        detector._reader = counted[way]  # type: ignore[assignment]
    cards = 0
    for number, frame in enumerate(rendered):
        seen = default.detect(frame)
        assert same_cards(seen, four.detect(frame), pixels=1.0, confidence=1.0), number
        cards += len(seen)
    assert cards > 80
    assert counted["default"].rows <= 0.75 * counted["four"].rows


@pytest.mark.parametrize("way", ["twice", "once"])
def test_unsure_indices_are_read_at_four_turns_and_sure_ones_at_the_first(
        readers, rendered, way) -> None:
    """Where the first readings are unsure the probabilities are the four readings' average
    (as the verification of the shoe's card reads them); where they are sure, theirs."""
    frame = rendered[0]
    boxes = readers["four"].find_indices(frame)
    mine, four = (readers[w].read_probabilities(frame, boxes) for w in (way, "four"))
    crops = [crop_index(frame, tuple(map(float, box))) for box in boxes]
    first_turns = READINGS[way][0]
    first = [agree(p, len(crops)) for p in
             readers[way]._read_blob(crops_to_blob(views(crops, first_turns)))]
    sure = settled(*first)
    assert 0 < (~sure).sum() < sure.sum()
    for probs, theirs, firsts in zip(mine, four, first, strict=True):
        np.testing.assert_allclose(probs[~sure], theirs[~sure], atol=1e-5)
        np.testing.assert_allclose(probs[sure], firsts[sure], atol=1e-6)


def test_faint_places_add_to_the_found_ones_and_are_never_named(readers, rendered) -> None:
    """Found down to a lower score, the places at or above the detector's presence are exactly
    those it finds, and the shoe check names none of the faint ones (it only checks them
    against the shoe's cards in flight)."""
    from dealer_assist.vision.shoe_check import ShoeCheck
    from dealer_assist.vision.tracker import CardTracker

    detector = readers["twice"]
    check = ShoeCheck(detector, CardTracker(), faint_presence=0.04)
    faint_found = 0
    for frame in rendered:
        boxes, scores = detector.find_scored(frame, 0.04)
        np.testing.assert_array_equal(boxes[scores >= detector.presence],
                                      detector.find_indices(frame))
        assert scores.min() >= 0.04
        reading = check.read(frame)
        faint_found += int(reading.faint.sum())
        assert all(name == "" for name, faint in zip(reading.names, reading.faint, strict=True)
                   if faint)
        named = {(tuple(map(float, box)), name) for box, name, faint in
                 zip(reading.boxes, reading.names, reading.faint, strict=True)
                 if name and not faint}
        read = detector.read(frame, detector.find_indices(frame))
        assert named == {(tuple(map(float, box)), CARD_CODES[c])
                         for box, c in zip(read.boxes, read.class_ids, strict=True)}
    assert faint_found > 0  # the frames do hold places found only below the presence
