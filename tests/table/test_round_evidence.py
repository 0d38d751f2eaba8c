"""A live table's round is recorded with the camera's frame of every card and what the dealer's
screen showed at each decision and at settlement: a real camera thread (its frames a drawn image:
no camera exists here), the real loop, and the real surveillance store in a temporary recording
directory, read back as the surveillance page shows a round."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from dealer_assist.surveillance.interface import RoundQuery
from dealer_assist.surveillance.query import round_view, search_rounds
from dealer_assist.surveillance.replay import verify_chain
from dealer_assist.surveillance.store import RecordingStore
from dealer_assist.table.question_frames import QuestionFrames
from dealer_assist.table.recording import StoreRecorder
from dealer_assist.table.round_evidence import RoundEvidence, cards_shown
from dealer_assist.table.sources import HoleCardShown
from tests.table.test_no_guess import C
from tests.table.test_question_frames import Both, WatchedTable, _camera, _started

DECISIONS = ("action", "insurance")


class Listeners:
    """The table's view listeners, each shown every view."""

    def __init__(self, *listeners: Any):
        self.listeners = listeners

    def __call__(self, view: Any) -> None:
        for listener in self.listeners:
            listener(view)


@contextmanager
def recorded_table(directory: Path, with_camera: bool = True) -> Iterator[WatchedTable]:
    """A table recording into the store in ``directory``, its rounds' evidence (and questions'
    frames) from a running camera, or with none; seats 2 and 3 hold 9H 8D and 5C 4C against
    the dealer's 9S. The store is closed on leaving."""
    camera = _started(_camera()) if with_camera else None
    store = StoreRecorder(directory, "T1")
    try:
        listeners: list[Any] = [RoundEvidence(camera, store.keep_card_frame, store.keep_screen)]
        if camera is not None:
            listeners.append(QuestionFrames(camera, store.keep_question_frame))
        table = WatchedTable(Listeners(*listeners))  # type: ignore[arg-type]
        table.loop.recorder = Both(table.recorder, store)
        table.deal({2: ("9H", "8D"), 3: ("5C", "4C")}, up="9S", hole="7C")
        yield table
    finally:
        if camera is not None:
            camera.stop()
        store.close()
    assert store.errors == []


def _play(table: WatchedTable) -> None:
    """Seat 2 stands on 17 (the card at seat 3 says so), seat 3 is asked where the unseen JH
    went and doubles, the dealer draws to 18."""
    table.card("2C", 3)  # seat 2 stood; seat 3 hits to 11
    table.unseen("JH")  # the camera missed it: asked
    table.answer("DOUBLE seat 3")
    table.send(HoleCardShown(C("7C")))
    table.card("2S", None)  # the dealer: 9 + 7 + 2 = 18
    assert table.settled_json()["seats"][1]["net"] == "20.00"


def _shown_round(store: RecordingStore) -> dict[str, Any]:
    rounds, unreadable = search_rounds(store, RoundQuery())
    assert unreadable == [] and len(rounds) == 1
    return round_view(store, rounds[0]["key"])


def test_every_card_has_a_key_frame_tied_to_its_event_in_order(tmp_path):
    with recorded_table(tmp_path) as table:
        _play(table)
    recording = RecordingStore(tmp_path)
    try:
        shown = _shown_round(recording)
        events = [event["event"] for event in shown["events"]]
        card_at = [i for i, event in enumerate(events) if event["type"] == "card"]
        assert len(card_at) == 9  # 2 + 2 dealt to the seats, 2 to the dealer, 2C, JH, 2S
        card_frames = [f for f in shown["frames"] if "card" in (f["detections"] or {})]
        assert [f["event_index"] for f in card_frames] == card_at
        assert [f["detections"]["card"] for f in card_frames] == [events[i]["card"]
                                                                 for i in card_at]
        assert all(f["key"] and f["media_type"] == "image/jpeg" and f["width"] == 640
                   and f["file_state"] == "intact" for f in card_frames)
        grabbed = [f["captured_at"] for f in card_frames]
        assert all(grabbed) and grabbed == sorted(grabbed)
        question = [f for f in shown["frames"] if "question" in (f["detections"] or {})]
        assert len(question) == 1  # the question's own frame is still kept beside them
        discrepancies, _ = verify_chain(recording)
        assert discrepancies == []
    finally:
        recording.close()


def test_a_screen_is_recorded_at_each_decision_and_at_settlement(tmp_path):
    with recorded_table(tmp_path) as table:
        _play(table)
    recording = RecordingStore(tmp_path)
    try:
        shown = _shown_round(recording)
        events = [event["event"] for event in shown["events"]]
        decided = [i for i, event in enumerate(events) if event["type"] in DECISIONS
                   or (event["type"] == "question" and event.get("answer") is not None)]
        assert any(events[i]["type"] == "question" for i in decided)
        assert any(events[i].get("action") == "stand" for i in decided)
        screens = [screen["snapshot"] for screen in shown["screens"]]
        at_decisions = [s for s in screens if s["at"] != "settlement"]
        assert [s["event_index"] for s in at_decisions] == decided
        def cards_by(index: int) -> int:
            return sum(1 for event in events[:index] if event["type"] == "card")

        def codes(state: dict[str, Any]) -> list[str]:
            return [card for seat in state["seats"] for hand in seat["hands"]
                    for card in hand["cards"]]

        asked = next(i for i in decided if events[i]["type"] == "question")
        for screen in at_decisions:
            assert screen["at"] == events[screen["event_index"]]["type"]
            # what the screen showed then: the round with the decision (and what the same input
            # brought: the card at seat 3 told seat 2 stood and seat 3 hit), nothing later
            assert cards_by(screen["event_index"]) <= cards_shown(screen["round"])
            assert ("JH" in codes(screen["round"])) == (screen["event_index"] >= asked)
        assert [cards_shown(s["round"]) for s in at_decisions] == [7, 7, 8, 8]
        doubled = next(s for s in at_decisions if s["at"] == "action"
                       and events[s["event_index"]]["action"] == "double")
        seat3 = next(seat for seat in doubled["round"]["seats"] if seat["seat"] == 3)
        assert seat3["hands"][0]["doublings"]
        settled = screens[-1]
        assert settled["at"] == "settlement" and settled["phase"] == "settled"
        assert cards_shown(settled["round"]) == 9  # the round as it ended, its last card too
        lines = {seat["seat"]: [(line["verb"], line["shown"]) for line in seat["lines"]]
                 for seat in settled["settlement"]["seats"]}
        assert lines == {2: [("TAKE", "$10.00")], 3: [("PAY", "$20.00")]}
    finally:
        recording.close()


def test_a_table_without_a_camera_records_screens_and_no_frames(tmp_path):
    with recorded_table(tmp_path, with_camera=False) as table:
        _play(table)
    recording = RecordingStore(tmp_path)
    try:
        shown = _shown_round(recording)
        assert shown["frames"] == []
        assert shown["screens"] and shown["screens"][-1]["snapshot"]["at"] == "settlement"
    finally:
        recording.close()
