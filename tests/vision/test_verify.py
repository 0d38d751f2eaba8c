"""Verifying the shoe's card on the committed sample frames, the verdict rules on readings
given by hand, landings at a place, and the measurement's tallies on a few rendered scenes."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import pytest

from dealer_assist.vision.detector import CardDetector
from dealer_assist.vision.reader import RANK_CLASSES, SUIT_CLASSES
from dealer_assist.vision.verdict import Verdict
from dealer_assist.vision.verify import (
    judge,
    judge_codes,
    landings,
    measure,
    mismatched_rows,
    verify,
    verify_observation,
)

DATA = Path(__file__).resolve().parents[1] / "data" / "vision"
ANSWERS = json.loads((DATA / "answers.json").read_text())


@pytest.fixture(scope="module")
def detector() -> CardDetector:
    return CardDetector()


def reading(rank: str, suit: str, sure: float = 0.98) -> tuple[np.ndarray, np.ndarray]:
    """One index's probabilities: ``rank`` and ``suit`` at ``sure``, the rest spread evenly."""
    ranks = np.full(len(RANK_CLASSES), (1 - sure) / (len(RANK_CLASSES) - 1))
    suits = np.full(len(SUIT_CLASSES), (1 - sure) / (len(SUIT_CLASSES) - 1))
    ranks[RANK_CLASSES.index(rank)] = sure
    suits[SUIT_CLASSES.index(suit)] = sure
    return ranks, suits


def rows(*readings: tuple[np.ndarray, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    return np.stack([r for r, _ in readings]), np.stack([s for _, s in readings])


@pytest.mark.parametrize(("readings", "code", "verdict"), [
    ([("7", "S")], "7S", Verdict.MATCH),
    ([("7", "S")], "7C", Verdict.MISMATCH),  # sure of the spade: a switched card
    ([("7", "S")], "KH", Verdict.MISMATCH),
    ([("7", "S", 0.6)], "7C", Verdict.UNSURE),  # not sure of what else it is: ask, no alarm
    ([("-", "S")], "7S", Verdict.UNSURE),  # "not an index": nothing landed to judge
    ([], "7S", Verdict.UNSURE),
    ([("7", "S"), ("7", "C")], "7C", Verdict.MATCH),  # one corner reads it: the card may be it
    ([("7", "S"), ("7", "S", 0.6)], "7C", Verdict.UNSURE),  # one corner unsure: no alarm
    ([("7", "S"), ("-", "S")], "7C", Verdict.MISMATCH),  # a pip beside it does not count
    # a 6 and a 9 of one suit are each other's index turned half round: ask, no alarm
    ([("9", "C")], "6C", Verdict.UNSURE),
    ([("6", "H")], "9H", Verdict.UNSURE),
    ([("8", "S"), ("6", "S")], "9S", Verdict.UNSURE),
    ([("9", "C")], "6S", Verdict.MISMATCH),  # another suit: surely another card
    ([("9", "C")], "8C", Verdict.MISMATCH),
    ([("8", "C")], "6C", Verdict.MISMATCH),
])
def test_verdict_rules(readings, code, verdict) -> None:
    if readings:
        ranks, suits = rows(*(reading(*r) for r in readings))
    else:
        ranks, suits = np.zeros((0, len(RANK_CLASSES))), np.zeros((0, len(SUIT_CLASSES)))
    assert judge(ranks, suits, code).verdict is verdict


def test_a_bad_code_is_refused() -> None:
    ranks, suits = rows(reading("7", "S"))
    with pytest.raises(ValueError, match="not a card code: '10S'"):
        judge(ranks, suits, "10S")


def random_readings(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    """``n`` rows of rank and suit probabilities, from sure to spread out, some "not an index"."""
    ranks = rng.dirichlet(np.full(len(RANK_CLASSES), 0.05), n).astype(np.float32)
    suits = rng.dirichlet(np.full(len(SUIT_CLASSES), 0.1), n).astype(np.float32)
    return ranks, suits


def test_judging_several_codes_at_once_gives_each_code_its_own_verdict() -> None:
    rng = np.random.default_rng(9)
    codes = ["7S", "7C", "KH", "AD", "TS", "2C", "6C", "9C"]
    kinds = set()
    for n in (0, 1, 1, 1, 2, 3, 8) * 40:
        ranks, suits = random_readings(rng, n)
        got = judge_codes(ranks, suits, codes)
        assert got == [judge(ranks, suits, code) for code in codes]
        kinds |= {v.verdict for v in got}
    assert kinds == set(Verdict)


def test_rows_judged_each_alone_at_once() -> None:
    rng = np.random.default_rng(10)
    ranks, suits = random_readings(rng, 600)
    codes = [str(c) for c in rng.choice(["7S", "7C", "KH", "AD", "QC", "6S", "9S"], 600)]
    got = mismatched_rows(ranks, suits, codes)
    want = [judge(ranks[i:i + 1], suits[i:i + 1], code).verdict is Verdict.MISMATCH
            for i, code in enumerate(codes)]
    assert got.tolist() == want and any(want) and not all(want)
    with pytest.raises(ValueError, match="2 rows and 1 codes"):
        mismatched_rows(ranks[:2], suits[:2], ["7S"])


@pytest.mark.parametrize("name", sorted(ANSWERS))
def test_every_sample_card_verifies_as_itself_and_not_as_another(detector, name) -> None:
    """Each card the detector reports in the samples matches its true code; offered another
    rank of its suit, the reader is sure it is not that card."""
    frame = cv2.imread(str(DATA / name))
    truth = {a["card"] for a in ANSWERS[name]["cards"]}
    for seen in detector.detect(frame):
        assert seen.card in truth
        mine = verify_observation(detector, frame, seen, seen.card)
        assert mine.verdict is Verdict.MATCH and mine.probability >= 0.5, (name, mine)
        other = seen.card.replace(seen.card[0], "2" if seen.card[0] != "2" else "9")
        theirs = verify_observation(detector, frame, seen, other)
        assert theirs.verdict is Verdict.MISMATCH, (name, theirs)
        assert theirs.read == seen.card


def test_no_box_gives_unsure(detector) -> None:
    frame = cv2.imread(str(DATA / sorted(ANSWERS)[0]))
    assert verify(detector, frame, [], "7S").verdict is Verdict.UNSURE


def test_landings_are_found_where_a_card_lies_and_not_on_bare_felt(detector) -> None:
    name = "fan_anglo.jpg"
    frame = cv2.imread(str(DATA / name))
    card = ANSWERS[name]["cards"][3]  # QD, alone at the dealer's place
    place = (card["x"] - 60, card["y"] - 80, card["x"] + 60, card["y"] + 80)
    assert len(landings(detector, frame, place)) >= 1
    assert len(landings(detector, frame, (20, 20, 200, 100))) == 0


def test_the_measurement_tallies_every_card_once_per_code_offered(detector) -> None:
    per_frame, over = measure(detector, ["anglo"], 2, seed=5, frames=3)
    assert over is not None
    for tally in (per_frame, over):
        assert tally.cards > 0
        assert tally.landed <= tally.cards
        for counter in (tally.true, tally.wrong, tally.mate):
            assert sum(counter.values()) == tally.cards
    assert per_frame.cards == 3 * over.cards
    assert per_frame.true[Verdict.MATCH.value] > 0
