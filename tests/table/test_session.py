"""The round session alone: numbered rounds whose lines always settle as folded."""

from __future__ import annotations

from decimal import Decimal

import pytest

from dealer_assist.roundlog import Bet, CardDealt, EventError, PlayerAction, settle_log
from dealer_assist.rules import Action, Card, RoundError
from dealer_assist.table.recording import MemoryRecorder
from dealer_assist.table.session import RoundSession


def test_rounds_are_numbered_on_from_the_last_and_their_lines_settle_as_folded():
    session = RoundSession("h17-ddd-6", "T3", "T3-x", number=41)
    assert session.start() == "T3-x-00042" and session.open
    session.apply(Bet(1, Decimal("10")))
    for code in ("9S", "6D", "8H", "KC"):
        session.apply(CardDealt(Card.parse(code)))
    session.apply(PlayerAction(1, Action.STAND))
    session.apply(CardDealt(Card.parse("QS")))  # the dealer: 6 + K + Q = 26
    settlement = session.close()
    assert not session.open and settlement.to_json()["net"] == "10.00"
    assert settle_log(session.lines).to_json() == settlement.to_json()
    assert '"table": "T3"' in session.lines[0]


def test_a_refused_event_changes_nothing_and_a_void_hands_back_the_lines():
    session = RoundSession("h17-ddd-6", "T3", "r")
    session.start()
    session.apply(Bet(2, Decimal("10")))
    before = list(session.lines)
    with pytest.raises((RoundError, EventError)):
        session.apply(PlayerAction(2, Action.HIT))  # no card dealt yet
    assert session.lines == before
    with pytest.raises(RoundError, match="the deal is not finished"):
        session.close()
    round_id, lines = session.void("a misdeal")
    assert round_id == "r-00001" and lines == before and session.fold is None
    assert session.start() == "r-00002"


def test_the_session_tells_its_recorder_each_line_as_it_is_added_and_nothing_refused():
    recorder = MemoryRecorder()
    session = RoundSession("h17-ddd-6", "T3", "r", tell=lambda call: call(recorder))
    session.start()
    session.apply(Bet(1, Decimal("10")))
    assert recorder.replayed()[0].lines == tuple(session.lines)  # the round in play, so far
    with pytest.raises((RoundError, EventError)):
        session.apply(PlayerAction(1, Action.HIT))
    assert recorder.replayed()[0].lines == tuple(session.lines)  # a refused event is not told
    for code in ("9S", "6D", "8H", "KC"):
        session.apply(CardDealt(Card.parse(code)))
    session.apply(PlayerAction(1, Action.STAND))
    session.apply(CardDealt(Card.parse("QS")))
    settlement = session.close()
    assert recorder.rounds == [("r-00001", session.lines, settlement)]
    session.start()
    session.apply(Bet(2, Decimal("25")))
    _, lines = session.void("a misdeal")
    assert recorder.voids == [("r-00002", lines, "a misdeal")]
    assert [(r.round_id, r.settlement is not None, r.void) for r in recorder.replayed()] == [
        ("r-00001", True, None), ("r-00002", False, "a misdeal")]


def test_every_round_line_records_what_read_the_cards():
    """The camera's models (docs/round-log.md): on each round's line, carried into its
    settlement, read back by the log reader."""
    import json

    models = {"runtime": "openvino",
              "detector": {"file": "cards.onnx", "version": "0.10", "sha256": "5d" * 32},
              "reader": {"file": "index-reader.onnx", "version": "0.10", "sha256": "f4" * 32}}
    session = RoundSession("h17-ddd-6", "T3", "r", fields={"models": models})
    for _ in range(2):
        session.start()
        assert json.loads(session.lines[0])["models"] == models
        session.apply(Bet(1, Decimal("10")))
        for code in ("9S", "6D", "8H", "KC"):
            session.apply(CardDealt(Card.parse(code)))
        session.apply(PlayerAction(1, Action.STAND))
        session.apply(CardDealt(Card.parse("QS")))
        session.close()
        assert settle_log(session.lines).to_json()["models"] == models
