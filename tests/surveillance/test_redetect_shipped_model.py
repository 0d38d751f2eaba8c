"""Replay re-runs the shipped card detector on recorded key frames (real model, real images)."""

from __future__ import annotations

from pathlib import Path

import pytest

from dealer_assist.roundlog import CardDealt, RoundFold, read_events
from dealer_assist.surveillance import Recorder, RecordingStore
from dealer_assist.surveillance.replay import Redetector, replay, vision_redetector

SAMPLE = Path(__file__).parents[1] / "data" / "vision" / "split_tigullio.jpg"  # 7H AC 7D JH


def record(directory: Path, hole_card: str, cut_short: str = "") -> None:
    """One round with a key frame (the sample) at each card; the frame at the card
    ``cut_short`` is recorded cut in half, as a camera's broken JPEG would be."""
    lines = [
        '{"type": "round", "id": "rd-1", "rules": "s17-6"}',
        '{"type": "bet", "seat": 1, "amount": "10"}',
        '{"type": "card", "card": "7H"}',
        '{"type": "card", "card": "7D"}',
        '{"type": "card", "card": "AC"}',
        f'{{"type": "card", "card": "{hole_card}"}}',
        '{"type": "action", "seat": 1, "action": "stand"}',
        '{"type": "end"}',
    ]
    logged = list(read_events(lines))
    fold = RoundFold(logged[0].event)  # type: ignore[arg-type]
    with Recorder.open(directory, "T1") as recorder:
        recorder.begin_round(logged[0].event)  # type: ignore[arg-type]
        for item in logged[1:]:
            index = recorder.event(item.event)
            fold.apply(item.event)
            if isinstance(item.event, CardDealt):
                image = SAMPLE.read_bytes()
                if str(item.event.card) == cut_short:
                    image = image[: len(image) // 2]
                recorder.frame(image, {"detections": []}, index)
        assert fold.settlement is not None
        recorder.end_round(fold.settlement)


@pytest.fixture(scope="module")
def redetect() -> Redetector:
    return vision_redetector()


def test_frames_that_show_the_recorded_cards_replay_clean(
    tmp_path: Path, redetect: Redetector
) -> None:
    record(tmp_path / "rec", hole_card="JH")
    report = replay(RecordingStore(tmp_path / "rec"), verify=True, redetect=redetect)
    (result,) = report.rounds
    assert result.frames_checked == 4
    assert result.discrepancies == []


def test_a_card_the_frame_does_not_show_is_named(tmp_path: Path, redetect: Redetector) -> None:
    record(tmp_path / "rec", hole_card="KD")  # the frame at the hole card shows no KD
    report = replay(RecordingStore(tmp_path / "rec"), verify=True, redetect=redetect)
    (result,) = report.rounds
    assert result.frames_checked == 4
    (found,) = result.discrepancies
    assert found.kind == "detection" and found.recorded == "KD" and found.round_id == "rd-1"
    assert "KD" in found.text() and sorted(found.replayed) == ["7D", "7H", "AC", "JH"]


def test_a_key_frame_cut_short_is_named_not_read_as_empty(
    tmp_path: Path, redetect: Redetector
) -> None:
    record(tmp_path / "rec", hole_card="JH", cut_short="7D")
    report = replay(RecordingStore(tmp_path / "rec"), verify=True, redetect=redetect)
    (result,) = report.rounds
    assert report.chain == []  # recorded as it came: the chain holds; the picture is broken
    assert result.frames_checked == 3
    (found,) = result.discrepancies
    assert found.kind == "detection" and found.recorded == "7D"
    assert "its key frame frames/" in found.what
    assert "cannot be decoded: a JPEG file that does not decode whole" in found.what
