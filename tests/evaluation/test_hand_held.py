"""Naming through the table's own check with no shoe code in flight (``evaluate --hand-held``),
on independent deals of a held-out design: the real renderer, the shipped models, the table's
check. Skipped without the held-out artwork (scripts/install-card-art.sh), as the other vision
tests are."""

from __future__ import annotations

import json

import pytest

from dealer_assist.cli import main
from dealer_assist.evaluation.artwork import felt_textures, installed_decks, load_deck
from dealer_assist.evaluation.hand_held import hand_held_cards
from dealer_assist.evaluation.render import render_sequence
from dealer_assist.evaluation.split import load_split
from dealer_assist.vision.detector import CardDetector
from dealer_assist.vision.tracker import CardTracker

needs_art = pytest.mark.skipif("dondorf" not in installed_decks(),
                               reason="held-out artwork not installed; run "
                                      "scripts/install-card-art.sh")


def _deal(per_card: int = 3):  # type: ignore[no-untyped-def]
    deck = load_deck(load_split().folder("dondorf"))
    return render_sequence(deck, 5, per_card=per_card, textures=felt_textures())


@needs_art
def test_the_tables_check_names_a_first_frame_as_the_detector_does() -> None:
    seq = _deal()
    detector = CardDetector(threads=1)
    handed, _ = hand_held_cards(seq.frames, detector)
    assert len(handed) == len(seq.frames)
    # nothing stands yet in the first frame: every region is searched and read afresh
    first = [(c.card, round(c.x, 3), round(c.y, 3)) for c in handed[0]]
    assert first, "the deal's first frame shows cards"
    assert first == [(c.card, round(c.x, 3), round(c.y, 3)) for c in detector.detect(seq.frames[0])]
    # no shoe code in flight: no card is ever checked against one
    assert all(c.verdict is None and c.checked is None for cards in handed for c in cards)


@needs_art
def test_the_scorer_replays_the_tables_own_verdicts() -> None:
    seq = _deal()
    handed, events = hand_held_cards(seq.frames, CardDetector(threads=1))
    replay, tracker = [], CardTracker()
    for number, cards in enumerate(handed):
        replay += tracker.update(number, cards)
    assert events and replay == events


@needs_art
def test_hand_held_naming_of_one_deal_at_a_tables_pace(
        capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["evaluate", "--designs", "dondorf", "--scenes", "1", "--per-card", "2",
                 "--workers", "1", "--hand-held", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["hand_held"] is True and "shoe_check" not in result
    card = result["per_card"]["all"]
    assert card["cards"] > 0 and 0.0 <= card["recall"] <= card["landing"] <= 1.0


@pytest.mark.parametrize(("args", "why"), [
    (["--shoe", "--hand-held"], "--shoe and --hand-held: one or the other"),
    (["--deck", ".", "--acceptance", "r.json", "--hand-held"], "not --hand-held"),
])
def test_hand_held_with_options_it_does_not_fit_is_refused(
        args: list[str], why: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["evaluate", *args]) == 2
    assert why in capsys.readouterr().err
