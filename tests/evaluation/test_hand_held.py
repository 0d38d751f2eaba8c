"""Naming through the table's own check with no shoe code in flight (``evaluate --hand-held``),
on independent deals of a held-out design: the real renderer, the shipped models, the table's
check. Skipped without the held-out artwork (scripts/install-card-art.sh), as the other vision
tests are."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dealer_assist.cli import main
from dealer_assist.evaluation import hand_held
from dealer_assist.evaluation.artwork import felt_textures, installed_decks, load_deck
from dealer_assist.evaluation.hand_held import hand_held_cards
from dealer_assist.evaluation.render import render_sequence
from dealer_assist.evaluation.split import load_split
from dealer_assist.vision.detector import CardDetector
from dealer_assist.vision.still_regions import StillRead
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


@needs_art
def test_still_regions_stand_in_hand_held_naming(monkeypatch: pytest.MonkeyPatch) -> None:
    """What sets the table's naming apart from the detector's: a settled region that has not
    moved keeps its boxes instead of being searched again."""
    stood = []
    boxes_at = StillRead.boxes_at

    def counted(self, frame, region, least):  # type: ignore[no-untyped-def]
        kept = boxes_at(self, frame, region, least)
        stood.append(kept is not None)
        return kept

    monkeypatch.setattr(StillRead, "boxes_at", counted)
    hand_held_cards(_deal(per_card=6).frames, CardDetector(threads=1))
    assert any(stood) and not all(stood)


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
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    calls = []

    def spied(frames, detector):  # type: ignore[no-untyped-def]
        calls.append(len(frames))
        return hand_held_cards(frames, detector)

    monkeypatch.setattr(hand_held, "hand_held_cards", spied)
    assert main(["evaluate", "--designs", "dondorf", "--scenes", "1", "--per-card", "2",
                 "--workers", "1", "--hand-held", "--json"]) == 0
    assert len(calls) == 1 and calls[0] > 0  # the deal went through the table's check
    result = json.loads(capsys.readouterr().out)
    assert result["hand_held"] is True and "shoe_check" not in result
    card = result["per_card"]["all"]
    assert card["cards"] > 0 and 0.0 <= card["recall"] <= card["landing"] <= 1.0


@needs_art
def test_a_naming_acceptance_report_through_the_tables_check_says_so(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from dealer_assist.vision.model_control import AcceptanceReport

    report = tmp_path / "enrol-dondorf.acceptance.json"
    assert main(["evaluate", "--deck", str(load_split().folder("dondorf")), "--scenes", "1",
                 "--per-card", "2", "--hand-held", "--workers", "1", "--card-width", "75", "90",
                 "--acceptance", str(report), "--json"]) == 0
    headline = json.loads(capsys.readouterr().out)["per_card"]["headline"]
    accepted = AcceptanceReport.load(report)
    assert accepted.check == "naming" and accepted.cards == headline["cards"] > 0
    assert " --hand-held " in accepted.command  # the command that gives these figures again


@pytest.mark.parametrize(("args", "why"), [
    (["--shoe", "--hand-held"], "--shoe and --hand-held: one or the other"),
    (["--deck", ".", "--acceptance", "r.json", "--shoe", "--hand-held"],
     "--shoe and --hand-held: one or the other"),
])
def test_hand_held_with_options_it_does_not_fit_is_refused(
        args: list[str], why: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["evaluate", *args]) == 2
    assert why in capsys.readouterr().err
