"""The independent evaluation: the design split, the renderer's ground truth, the scorer.

The renderer's checks use a deck drawn here (white cards, one black square as each corner
index), so they need no installed artwork and the ground truth can be checked against pixels.
The end-to-end run needs the held-out artwork (scripts/install-card-art.sh) and is skipped
without it, as the other vision tests are.
"""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import pytest

from dealer_assist.cli import main
from dealer_assist.evaluation.artwork import CODES, Deck, index_box, installed_decks
from dealer_assist.evaluation.render import (
    FRAME_H,
    FRAME_W,
    Sequence,
    TrueCard,
    render_sequence,
)
from dealer_assist.evaluation.score import (
    EDGE_REACH,
    Tally,
    card_reported,
    score_sequence,
    width_band,
)
from dealer_assist.evaluation.split import SPLIT_FILE, DesignSplitError, load_split
from dealer_assist.evaluation.verification import (
    UNLANDED,
    WAIT_FRAMES,
    CheckReport,
    Flight,
    Sightings,
    score_checks,
)
from dealer_assist.vision.artwork import GNOME_DESIGNS, HELD_OUT_DESIGNS, NPM_DESIGNS
from dealer_assist.vision.detector import CardObservation
from dealer_assist.vision.reader import RANK_CLASSES, SUIT_CLASSES
from dealer_assist.vision.shoe_check import FrameReading
from dealer_assist.vision.tracker import CardEvent, EventKind

# the drawn face: 240 x 360, index square at x 12-36, y 14-50 (and turned, bottom-right)
_INDEX = (12, 14, 36, 50)


def _face() -> np.ndarray:
    face = np.zeros((360, 240, 4), np.uint8)
    face[:, :, :3] = 250
    face[:, :, 3] = 255
    x0, y0, x1, y1 = _INDEX
    face[y0:y1, x0:x1, :3] = 0
    face[360 - y1 : 360 - y0, 240 - x1 : 240 - x0, :3] = 0
    face[160:200, 100:140, :3] = (0, 0, 200)  # a pip in the middle
    return face


@pytest.fixture(scope="module")
def deck() -> Deck:
    faces = {code: _face() for code in CODES}
    return Deck("drawn-test", faces, {code: index_box(face) for code, face in faces.items()})


# ---------------------------------------------------------------- the split


def test_the_committed_split_holds_out_no_design_the_generator_trains_on() -> None:
    split = load_split()
    generator_trains = set(GNOME_DESIGNS + NPM_DESIGNS) - set(HELD_OUT_DESIGNS)
    assert generator_trains <= set(split.training)
    assert not generator_trains & set(split.held_out)
    # a deck the generator holds out but whose publisher it trains on is not held out here
    assert "kennard" in split.training and "kennard_bf" in split.training


def test_a_trained_or_unknown_design_is_refused() -> None:
    split = load_split()
    split.check_held_out("dondorf")
    with pytest.raises(DesignSplitError, match="training list"):
        split.check_held_out("anglo")
    with pytest.raises(DesignSplitError, match="training list"):
        split.check_held_out("nicu-white")  # a trained publisher's other deck
    with pytest.raises(DesignSplitError, match="not in the design split"):
        split.check_held_out("no-such-deck")


def test_a_split_that_contradicts_itself_is_refused(tmp_path: Path) -> None:
    data = json.loads(SPLIT_FILE.read_text())
    data["held_out"].append({"publisher": data["training"][0]["publisher"], "designs": ["x"]})
    bad = tmp_path / "split.json"
    bad.write_text(json.dumps(data))
    with pytest.raises(DesignSplitError, match="both sides"):
        load_split(bad)
    data = json.loads(SPLIT_FILE.read_text())
    data["held_out"][0]["designs"].append("anglo")
    bad.write_text(json.dumps(data))
    with pytest.raises(DesignSplitError, match="listed twice"):
        load_split(bad)


def test_the_command_refuses_a_trained_design(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["evaluate", "--designs", "anglo", "--scenes", "1"]) == 2
    assert "'anglo' is in the training list" in capsys.readouterr().err


# ---------------------------------------------------------------- the renderer


def test_index_box_is_found_round_the_drawn_index(deck: Deck) -> None:
    x0, y0, x1, y1 = deck.index_boxes["7S"]
    assert x0 == pytest.approx(12 / 240, abs=0.015) and x1 == pytest.approx(36 / 240, abs=0.015)
    assert y0 == pytest.approx(14 / 360, abs=0.015) and y1 == pytest.approx(50 / 360, abs=0.015)


@pytest.mark.parametrize(("seed", "pace"), [(1, {"frames": 5}), (2, {"frames": 5}),
                                            (3, {"frames": 5}), (4, {"per_card": 2})])
def test_ground_truth_matches_the_frames(deck: Deck, seed: int, pace: dict[str, int]) -> None:
    seq = render_sequence(deck, seed, width=(70, 95), **pace)
    assert len(seq.blur) == len(seq.frames) == pace.get("frames", len(seq.frames))
    assert all(f.shape == (FRAME_H, FRAME_W, 3) and f.dtype == np.uint8 for f in seq.frames)
    assert len(seq.cards) >= 3
    assert len({c.code for c in seq.cards}) == len(seq.cards)  # one deck: each code once
    checked = 0
    for card in seq.cards:
        x0, y0, x1, y1 = card.box
        assert 0 <= x0 < x1 <= FRAME_W and 0 <= y0 < y1 <= FRAME_H
        assert 70 * 0.9 <= card.width_px <= 95 * 1.1
        assert len(card.shown) == len(seq.frames) - card.arrives
        assert all(0.0 <= s <= 1.0 for s in card.shown)
        for frame in range(card.arrives, len(seq.frames)):
            above = [c for c in seq.cards_on(frame) if c.number > card.number]
            centres = [q.mean(axis=0) for q in card.index_quads]
            covered = [any(cv2.pointPolygonTest(c.corners, (float(x), float(y)), False) >= 0
                           for c in above) for x, y in centres]
            for (x, y), hidden in zip(centres, covered, strict=True):
                if not hidden and 4 <= x < FRAME_W - 4 and 4 <= y < FRAME_H - 4:
                    # an index no later card covers shows its black square in the frame
                    assert int(seq.frames[frame][int(y), int(x)].max()) < 120, card.code
                    checked += 1
            if all(covered):  # both indices under later cards: the card does not count
                assert not card.visible(frame)
    assert checked > 0


def test_a_deal_at_a_tables_pace_lands_one_card_at_a_time(deck: Deck) -> None:
    seq = render_sequence(deck, 5, per_card=3)
    count = len(seq.cards)
    assert count >= 3
    assert [c.arrives for c in seq.cards] == [3 * k for k in range(count)]
    assert len(seq.frames) == 3 * (count - 1) + 3  # the last card lies 3 frames too
    for card in seq.cards:  # each lies alone, nothing laid over it, until the next lands
        assert len(card.shown) == len(seq.frames) - card.arrives
        assert len({round(s, 6) for s in card.shown[:3]}) == 1
    laid = [len(seq.cards_on(f)) for f in range(len(seq.frames))]
    assert laid == sorted(laid) and laid[0] == 1 and laid[-1] == count
    assert max(b - a for a, b in zip(laid, laid[1:], strict=False)) == 1


def test_same_seed_same_sequence(deck: Deck) -> None:
    a = render_sequence(deck, 7, frames=4)
    b = render_sequence(deck, 7, frames=4)
    assert [c.code for c in a.cards] == [c.code for c in b.cards]
    assert all(np.array_equal(x, y) for x, y in zip(a.frames, b.frames, strict=True))


def test_bad_sequence_options_are_refused(deck: Deck) -> None:
    with pytest.raises(ValueError, match="at least 4 frames"):
        render_sequence(deck, 1, frames=3)
    with pytest.raises(ValueError, match="card width"):
        render_sequence(deck, 1, width=(90, 60))
    with pytest.raises(ValueError, match="at least 1 frame"):
        render_sequence(deck, 1, per_card=0)


# ---------------------------------------------------------------- the scorer


def _card(number: int, code: str, x: float, width: float = 75.0,
          sideways: bool = False) -> TrueCard:
    corners = np.array([[x, 100], [x + 100, 100], [x + 100, 240], [x, 240]], np.float32)
    quad = np.array([[x + 5, 105], [x + 20, 105], [x + 20, 130], [x + 5, 130]], np.float32)
    return TrueCard(number, code, "hand", corners, (x, 100, x + 100, 240), width, "player", 1,
                    sideways, 0, (quad, quad), shown=[1.0] * 4)


def _obs(code: str, x: float, y: float) -> CardObservation:
    return CardObservation(code, x, y, 0.9, False, ((x - 5, y - 5, x + 5, y + 5),))


def test_scorer_counts_a_hand_made_case() -> None:
    a, b = _card(0, "AS", 0), _card(1, "KH", 300, width=65, sideways=True)
    seq = Sequence("hand", [a, b], [np.zeros((4, 4, 3), np.uint8)] * 4, ["none"] * 4, True,
                   "none")
    observed = [
        # frame 0: right, a second report of the same card far from the first (duplicate),
        # a misread, a card on nothing (stray)
        [_obs("AS", 20, 120), _obs("AS", 80, 220), _obs("QD", 350, 170), _obs("2C", 900, 600)],
        [_obs("AS", 20, 120), _obs("KH", 350, 170)],
        [_obs("AS", 20, 120), _obs("KH", 350, 170)],
        [_obs("AS", 20, 120), _obs("KH", 350, 170)],
    ]
    report = score_sequence(seq, observed)
    frame = report.frame["all"]
    assert (frame.right, frame.duplicate, frame.misread, frame.stray) == (7, 1, 1, 1)
    assert frame.counted == 8 and frame.landed == 8
    assert frame.precision == pytest.approx(7 / 10) and frame.recall == pytest.approx(7 / 8)
    assert frame.confusions == {("KH", "QD"): 1}
    # by group: the misread belongs to KH's groups, the stray to none
    assert report.frame["width:60-69"].misread == 1 and report.frame["width:60-69"].stray == 0
    assert report.frame["sideways:yes"].right == 3
    assert report.frame["headline"].counted == 4  # only AS is 70-95 px wide
    # over the frames the tracker holds both cards, once each: the flickers never confirm
    card = report.card["all"]
    assert (card.right, card.false, card.counted, card.landed) == (2, 0, 2, 2)
    assert report.card["headline"].right == 1


def test_a_card_whose_index_never_shows_does_not_count() -> None:
    hidden = _card(0, "AS", 0)
    hidden.shown = [0.5, 0.5, 0.5, 0.5]
    seq = Sequence("hand", [hidden], [np.zeros((4, 4, 3), np.uint8)] * 4, ["none"] * 4, True,
                   "none")
    report = score_sequence(seq, [[_obs("AS", 20, 120)]] * 4)
    assert report.frame["all"].counted == 0 and report.frame["all"].ignored == 4
    assert report.card["all"].counted == 0 and report.card["all"].false == 0


def _event(kind: EventKind, code: str, x: float, frame: int, verdict: str | None,
           track: int) -> CardEvent:
    return CardEvent(kind, code, x, 170, frame, track, verdict=verdict,
                     checked=None if verdict is None else code)


def test_the_shoe_check_scorer_counts_landing_verification_and_false_alarms() -> None:
    """Five cards: one verified, one seen but unsure (landed, not verified), one matched to
    another card's code (a wrong match), one called switched, one never seen; and a card
    reported where none lies."""
    cards = [_card(n, code, 200 * n) for n, code in enumerate(("AS", "KH", "7D", "2C", "9S"))]
    seq = Sequence("hand", cards, [np.zeros((4, 4, 3), np.uint8)] * 4, ["none"] * 4, True,
                   "none")
    events = [
        _event(EventKind.APPEARED, "AS", 50, 1, "match", 0),
        _event(EventKind.APPEARED, "KH", 250, 1, "unsure", 1),
        _event(EventKind.APPEARED, "9S", 450, 2, "match", 2),  # on 7D
        _event(EventKind.APPEARED, "4C", 650, 2, "mismatch", 3),  # on 2C
        _event(EventKind.APPEARED, "QD", 1100, 2, "match", 4),  # on nothing
        _event(EventKind.REMOVED, "AS", 850, 3, None, 0),  # a removal lands nothing
    ]
    flying = {1: ("AS", "KH"), 2: ("7D", "9S", "2C")}
    report = score_checks(seq, events + [_event(EventKind.CHANGED, "9S", 450, 3, "match", 2)],
                          flying, deal=17)
    every = report.card["all"]
    assert (every.counted, every.landed, every.verified) == (5, 4, 1)
    assert (every.wrong_match, every.false_switched, every.stray) == (1, 1, 1)
    assert every.to_json()["landing"] == 0.8 and every.to_json()["verification"] == 0.2
    # the wrong match listed once, with what was in flight when it was made
    assert [w.to_json() for w in report.wrong] == [
        {"design": "hand", "deal": 17, "frame": 2, "card": "7D", "taken_for": "9S",
         "headline": True, "in_flight": ["7D", "9S", "2C"], "verified_too": False}]
    # the same card verified as itself later by another report (its other corner, judged apart)
    both = score_checks(seq, events + [_event(EventKind.APPEARED, "7D", 460, 3, "match", 5)],
                        flying, deal=17)
    assert [(w.card, w.taken_for, w.verified_too) for w in both.wrong] == [("7D", "9S", True)]
    merged = CheckReport()
    merged.add(report)
    merged.add(report)
    assert len(merged.wrong) == 2 and merged.card["all"].wrong_match == 2


def _reading(boxes_codes: list[tuple[float, str]], sure: float = 0.95,
             faint: bool = False) -> FrameReading:
    """A frame's reading: an index box at each ``x`` (on ``_card``'s index there) read as its
    code, rank and suit each at ``sure`` (``faint``: found below the detector's presence)."""
    ranks = np.zeros((len(boxes_codes), len(RANK_CLASSES)), np.float32)
    suits = np.zeros((len(boxes_codes), len(SUIT_CLASSES)), np.float32)
    for row, (_, code) in enumerate(boxes_codes):
        ranks[row, RANK_CLASSES.index(code[0])] = suits[row, SUIT_CLASSES.index(code[1])] = sure
    boxes = np.array([[x + 8, 110, x + 17, 125] for x, _ in boxes_codes],
                     np.float32).reshape(-1, 4)
    return FrameReading(boxes, ranks, suits, tuple(c for _, c in boxes_codes),
                        np.full(len(boxes_codes), 0.9), np.full(len(boxes_codes), faint))


def test_a_card_that_never_landed_is_put_down_to_what_the_check_read_at_its_indices() -> None:
    codes = ("AS", "KH", "7D", "2C", "9S")
    cards = [_card(n, code, 200 * n) for n, code in enumerate(codes)]
    seq = Sequence("hand", cards, [np.zeros((4, 4, 3), np.uint8)] * 4, ["none"] * 4, True,
                   "none")
    sightings = Sightings()
    # AS never found; KH found, read as the QH; 7D read as itself once; 2C and 9S every frame
    for frame in range(4):
        sightings.add(seq, frame, _reading(
            [(200, "QH"), (600, "2C"), (800, "9S")] + ([(400, "7D")] if frame == 1 else [])))
    landed = [_event(EventKind.APPEARED, "9S", 850, 2, "match", 0)]
    report = score_checks(seq, landed, deal=3, sightings=sightings)
    tally = report.card["all"]
    assert tally.landed == 1 and sum(tally.unlanded.values()) == 4
    # each listed with what the check read there: its own code's best, and the surest reading
    assert [(u.deal, u.card, u.reason, u.found, u.as_itself, round(u.own, 4), u.read_as,
             round(u.read_at, 4)) for u in report.unlanded] == [
        (3, "AS", "not_found", 0, 0, 0.0, "", 0.0),
        (3, "KH", "not_as_itself", 4, 0, 0.0, "QH", 0.9025),
        (3, "7D", "as_itself_once", 1, 1, 0.9025, "7D", 0.9025),
        (3, "2C", "as_itself_twice_or_more", 4, 4, 0.9025, "2C", 0.9025)]
    assert report.unlanded[1].to_json()["read_as"] == "QH"
    assert tally.to_json()["unlanded"] == dict(zip(UNLANDED, [1, 1, 1, 1], strict=True))
    assert [sightings.unlanded(card) for card in cards[:4]] == list(UNLANDED)
    # an index box off every card's index is no sighting of any
    sightings = Sightings()
    sightings.add(seq, 0, _reading([(100, "AS")]))
    assert not sightings.found and not sightings.as_itself
    merged = CheckReport()
    for _ in range(2):
        merged.add(score_checks(seq, landed, sightings=sightings))
    assert merged.card["all"].unlanded["not_found"] == 8 and len(merged.unlanded) == 8


def test_a_box_on_a_covered_index_or_read_below_what_the_check_accepts_is_no_sighting() -> None:
    under, over = _card(0, "AS", 0), _card(1, "KD", 10)  # the KD laid over the AS's index
    seq = Sequence("hand", [under, over], [np.zeros((4, 4, 3), np.uint8)] * 4, ["none"] * 4,
                   True, "none")
    sightings = Sightings()
    sightings.add(seq, 0, _reading([(0, "AS")]))
    assert sightings.unlanded(under) == "not_found"
    # a faint box counts as the card only where the check would take it: at 0.8, not 0.5
    alone = Sequence("hand", [under], [np.zeros((4, 4, 3), np.uint8)] * 4, ["none"] * 4, True,
                     "none")
    sightings = Sightings()
    sightings.add(alone, 0, _reading([(0, "AS")], sure=0.8, faint=True))  # 0.64
    assert sightings.unlanded(under) == "not_as_itself"
    sightings.add(alone, 1, _reading([(0, "AS")], sure=0.95, faint=True))
    assert sightings.unlanded(under) == "as_itself_once"


def test_the_text_listing_says_which_wrong_matches_were_verified_too_and_what_never_landed(
        capsys) -> None:
    from dealer_assist.evaluation.cli import _print_checks

    wrong = [{"design": "hand", "deal": 3, "frame": 2, "card": "7D", "taken_for": "9S",
              "headline": True, "in_flight": ["7D", "9S"], "verified_too": True},
             {"design": "hand", "deal": 5, "frame": 4, "card": "6S", "taken_for": "9H",
              "headline": False, "in_flight": ["9H"], "verified_too": False}]
    headline = {"cards": 40, "landing": 0.95, "verification": 0.9, "wrong_match": 1,
                "false_switched": 0, "stray": 0,
                "unlanded": dict(zip(UNLANDED, [0, 1, 0, 1], strict=True))}
    missed = [{"design": "hand", "deal": 3, "card": "QC", "width_px": 71.4, "place": "player",
               "arrives": 36, "headline": True, "reason": "not_as_itself", "found": 26,
               "as_itself": 0, "own": 0.478, "read_as": "TC", "read_at": 0.715},
              {"design": "hand", "deal": 4, "card": "JD", "width_px": 65.0, "place": "player",
               "arrives": 40, "headline": False, "reason": "not_found", "found": 0,
               "as_itself": 0, "own": 0.0, "read_as": "", "read_at": 0.0}]
    _print_checks({"scenes": 2, "frames": 8, "seed": 1, "card_width": [60, 95],
                   "designs": ["hand"], "flight": "kept", "shoe_check": {"headline": headline},
                   "wrong_matches": wrong, "unlanded_cards": missed})
    lines = capsys.readouterr().out.splitlines()
    # headline cards only, each with what was read there
    assert "  hand deal 3 frame 36: QC 71 px, player: not as itself (26 / 0; own 0.478; read " \
        "TC at 0.715)" in lines
    assert not any("JD" in line for line in lines)
    assert lines.count(f"  {'headline':<32} {2:>8} {0:>9} {1:>13} {0:>14} {1:>13}") == 1
    assert "  * hand deal 3 frame 2: 7D taken for 9S (2 in flight: 7D 9S); verified as itself " \
        "too" in lines
    assert "    hand deal 5 frame 4: 6S taken for 9H (1 in flight: 9H)" in lines


def test_a_card_verified_after_an_unsure_first_sight_counts_verified() -> None:
    card = _card(0, "AS", 0)
    seq = Sequence("hand", [card], [np.zeros((4, 4, 3), np.uint8)] * 4, ["none"] * 4, True,
                   "none")
    report = score_checks(seq, [_event(EventKind.APPEARED, "8S", 50, 1, "unsure", 0),
                                _event(EventKind.CHANGED, "AS", 50, 2, "match", 0)])
    assert report.card["headline"].verified == 1 and report.card["headline"].counted == 1


def test_a_report_just_outside_a_card_of_its_code_is_of_that_card() -> None:
    """A card seen by two corners on one long side is placed between them, on its edge: a
    report of its code a few pixels outside it, over the card beside it, is of it (not a wrong
    match on the other); farther out, or of another code, it is of the card under it."""
    under, over = _card(0, "TD", 0), _card(1, "9S", 100)
    seq = Sequence("hand", [under, over], [np.zeros((4, 4, 3), np.uint8)] * 4, ["none"] * 4,
                   True, "none")
    assert card_reported(seq, "9S", 100 - EDGE_REACH / 2, 170, 1) is over
    assert card_reported(seq, "9S", 100 - 2 * EDGE_REACH, 170, 1) is under
    assert card_reported(seq, "7C", 100 - EDGE_REACH / 2, 170, 1) is under
    assert card_reported(seq, "9S", 300, 170, 1) is None
    events = [_event(EventKind.APPEARED, "TD", 50, 1, "match", 0),
              _event(EventKind.APPEARED, "9S", 100 - EDGE_REACH / 2, 1, "match", 1)]
    every = score_checks(seq, events).card["all"]
    assert (every.verified, every.wrong_match) == (2, 0)


def test_width_bands() -> None:
    assert [width_band(w) for w in (59.9, 60, 69.9, 70, 79.9, 80, 95, 96)] == [
        "other", "60-69", "60-69", "70-79", "70-79", "80-95", "80-95", "other"]
    assert Tally().precision == 1.0 and Tally().recall == 0.0


@pytest.mark.skipif("dondorf" not in installed_decks(),
                    reason="held-out artwork not installed; run scripts/install-card-art.sh")
def test_the_shipped_models_on_one_independent_deal(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["evaluate", "--designs", "dondorf", "--scenes", "1", "--frames", "4",
                 "--workers", "1", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["designs"] == ["dondorf"] and result["frames"] == 4
    assert result["reading"] == "twice"  # as the table reads
    card, frame = result["per_card"]["all"], result["per_frame"]["all"]
    assert card["cards"] > 0 and frame["cards"] >= card["cards"]
    assert 0.0 <= card["recall"] <= card["landing"] <= 1.0


@pytest.mark.skipif("dondorf" not in installed_decks(),
                    reason="held-out artwork not installed; run scripts/install-card-art.sh")
def test_the_shipped_models_check_one_independent_deal_against_the_shoe(
        capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["evaluate", "--designs", "dondorf", "--scenes", "1", "--frames", "4",
                 "--workers", "1", "--shoe", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    every = result["shoe_check"]["all"]
    assert every["cards"] > 0 and "per_card" not in result
    assert 0 < every["verified"] <= every["landed"] <= every["cards"]
    assert every["wrong_match"] == 0  # a wrong card taken for the shoe's would move money
    assert result["wrong_matches"] == []
    # every card that never landed is put down to one reason
    assert list(every["unlanded"]) == list(UNLANDED)
    assert sum(every["unlanded"].values()) == every["cards"] - every["landed"]


@pytest.mark.skipif("dondorf" not in installed_decks(),
                    reason="held-out artwork not installed; run scripts/install-card-art.sh")
def test_the_shoe_check_at_a_tables_pace(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["evaluate", "--designs", "dondorf", "--scenes", "1", "--per-card", "2",
                 "--workers", "1", "--shoe", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["frames_per_card"] == 2 and result["frames"] is None
    every = result["shoe_check"]["all"]
    assert 0 < every["verified"] <= every["landed"] <= every["cards"]


def test_kept_codes_leave_flight_only_when_their_own_card_is_matched() -> None:
    flight = Flight("kept")
    for frame, code in enumerate(("9H", "5C", "KD")):
        flight.arrive(code, frame)
    flight.matched("KD")
    assert flight.codes(100) == ("9H", "5C")  # the older stay open to the deal's end
    flight.matched("QS")  # no such code in flight: nothing leaves
    assert flight.codes(100) == ("9H", "5C")


def test_under_the_tables_pairing_a_later_match_places_the_older_codes_unseen() -> None:
    flight = Flight("table")
    for frame, code in enumerate(("9H", "5C", "KD", "5C")):
        flight.arrive(code, frame)
    flight.matched("5C")  # the oldest 5C: 9H before it is placed as unseen
    assert flight.codes(3) == ("KD", "5C")
    flight.matched("5C")
    assert flight.codes(3) == ()


def test_under_the_tables_pairing_a_code_leaves_flight_after_the_cameras_wait() -> None:
    assert WAIT_FRAMES == 12  # 1.5 s at 8 frames a second
    flight = Flight("table")
    flight.arrive("9H", 0)
    flight.arrive("5C", 4)
    assert flight.codes(11) == ("9H", "5C")
    assert flight.codes(12) == ("5C",)
    assert flight.codes(16) == ()
    with pytest.raises(ValueError, match="no such flight protocol"):
        Flight("loose")


@pytest.mark.skipif("dondorf" not in installed_decks(),
                    reason="held-out artwork not installed; run scripts/install-card-art.sh")
def test_the_shoe_check_with_codes_in_flight_as_the_table_pairs_them(
        capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["evaluate", "--designs", "dondorf", "--scenes", "1", "--per-card", "4",
                 "--workers", "1", "--shoe", "--flight", "table", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["flight"] == "table"
    every = result["shoe_check"]["all"]
    assert 0 < every["verified"] <= every["landed"] <= every["cards"]
    assert every["wrong_match"] == 0


def test_a_flight_protocol_without_the_shoe_check_is_refused(
        capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["evaluate", "--flight", "table"]) == 2
    assert "--flight needs --shoe" in capsys.readouterr().err


def test_a_pace_and_a_frame_count_together_are_refused(
        capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as refused:
        main(["evaluate", "--frames", "8", "--per-card", "2"])
    assert refused.value.code == 2
    assert "not allowed with argument" in capsys.readouterr().err


@pytest.mark.skipif("dondorf" not in installed_decks(),
                    reason="held-out artwork not installed; run scripts/install-card-art.sh")
def test_a_deck_of_photographed_faces_gets_an_independent_acceptance_report(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from dealer_assist.evaluation.split import load_split
    from dealer_assist.vision.detector import DEFAULT_MODEL, DEFAULT_READER
    from dealer_assist.vision.model_control import (
        AcceptanceError,
        AcceptanceReport,
        check_acceptance,
        sha256_of,
    )

    deck = tmp_path / "ourdeck"  # a casino's deck as enrol takes it: opaque JPEG faces
    deck.mkdir()
    for face in sorted(load_split().folder("dondorf").glob("*.png")):
        cv2.imwrite(str(deck / f"{face.stem}.jpg"), cv2.imread(str(face)))
    report = tmp_path / "enrol-ourdeck.acceptance.json"
    assert main(["evaluate", "--deck", str(deck), "--scenes", "1", "--frames", "4",
                 "--workers", "1", "--card-width", "75", "90", "--acceptance", str(report),
                 "--json"]) == 0
    headline = json.loads(capsys.readouterr().out)["per_card"]["headline"]
    accepted = AcceptanceReport.load(report)
    assert accepted.source == "independent" and accepted.deck == "ourdeck"
    assert (accepted.detector_sha256, accepted.reader_sha256) == (
        sha256_of(DEFAULT_MODEL), sha256_of(DEFAULT_READER))
    assert accepted.check == "naming"
    assert (round(accepted.figures["precision"], 4), round(accepted.figures["recall"], 4),
            accepted.cards) == (headline["precision"], headline["recall"], headline["cards"])
    if accepted.passed:
        check_acceptance(report, accepted.detector_sha256, accepted.reader_sha256)
    else:  # short of the goal: the table refuses the deck, saying so
        with pytest.raises(AcceptanceError, match="independent"):
            check_acceptance(report, accepted.detector_sha256, accepted.reader_sha256)


@pytest.mark.skipif("dondorf" not in installed_decks(),
                    reason="held-out artwork not installed; run scripts/install-card-art.sh")
def test_a_deck_checked_through_the_shoe_check_gets_a_shoe_acceptance_report(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The report a shoe table may go live on: the headline cards' figures through the table's
    own check and keeping of codes, which only a table with a shoe accepts."""
    from dealer_assist.evaluation.split import load_split
    from dealer_assist.vision.model_control import (
        AcceptanceError,
        AcceptanceReport,
        check_acceptance,
    )

    deck = load_split().folder("dondorf")
    report = tmp_path / "enrol-dondorf.acceptance.json"
    assert main(["evaluate", "--deck", str(deck), "--scenes", "1", "--per-card", "4",
                 "--shoe", "--flight", "table", "--workers", "1", "--card-width", "75", "90",
                 "--acceptance", str(report), "--json"]) == 0
    headline = json.loads(capsys.readouterr().out)["shoe_check"]["headline"]
    accepted = AcceptanceReport.load(report)
    assert (accepted.check, accepted.source, accepted.cards) == (
        "shoe", "independent", headline["cards"])
    cards = headline["cards"]  # unrounded: a figure rounded up to the goal would pass short
    assert accepted.figures == {"landing": headline["landed"] / cards,
                                "verification": headline["verified"] / cards,
                                "wrong_match": headline["wrong_match"] / cards,
                                "false_switched": headline["false_switched"] / cards}
    assert "--shoe --flight table" in accepted.command
    with pytest.raises(AcceptanceError, match="this table has no shoe"):
        check_acceptance(report, accepted.detector_sha256, accepted.reader_sha256)
    if accepted.passed:
        check_acceptance(report, accepted.detector_sha256, accepted.reader_sha256, shoe=True)
    else:
        with pytest.raises(AcceptanceError, match="short of the goal"):
            check_acceptance(report, accepted.detector_sha256, accepted.reader_sha256,
                             shoe=True)


@pytest.mark.parametrize(("args", "why"), [
    (["--acceptance", "r.json"], "--acceptance needs --deck"),
    (["--deck", ".", "--designs", "dondorf"], "one or the other"),
    (["--deck", ".", "--acceptance", "r.json", "--shoe"], "add --flight table"),
])
def test_acceptance_options_that_do_not_fit_are_refused(
        args: list[str], why: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["evaluate", *args]) == 2
    assert why in capsys.readouterr().err


def test_a_damaged_face_is_named_before_any_work(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "designs" / "dondorf"
    folder.mkdir(parents=True)
    for code in CODES:
        cv2.imwrite(str(folder / f"{code}.png"), _face())
    (folder / "QH.png").write_bytes(b"\x89PNG\r\n\x1a\n" + b"\0" * 40)  # a PNG cut short
    monkeypatch.setenv("DEALER_ASSIST_EVALUATION_ART", str(tmp_path))
    assert main(["evaluate", "--designs", "dondorf", "--scenes", "1"]) == 2
    err = capsys.readouterr().err
    assert "QH.png" in err and "face QH" in err


def test_the_reader_given_as_the_detector_is_refused(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "designs" / "dondorf"
    folder.mkdir(parents=True)
    for code in CODES:
        cv2.imwrite(str(folder / f"{code}.png"), _face())
    monkeypatch.setenv("DEALER_ASSIST_EVALUATION_ART", str(tmp_path))
    reader = Path(__file__).resolve().parents[2] / "models" / "index-reader.int8.onnx"
    assert main(["evaluate", "--designs", "dondorf", "--scenes", "1", "--model", str(reader),
                 "--reader", str(reader)]) == 2
    err = capsys.readouterr().err
    assert "index-reader.int8.onnx" in err and "index reader" in err
