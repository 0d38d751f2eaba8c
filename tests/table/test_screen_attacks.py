"""Attacks on the dealer's screen made with a real client against a real uvicorn server, each
found to move money or a person's right before it was fixed: a touch approved for one round
must not land on the next."""

from __future__ import annotations

import dataclasses
import json
import urllib.error
import urllib.request

import pytest

from dealer_assist.rules import Card
from dealer_assist.table.loop import TableLoop
from dealer_assist.table.recording import MemoryRecorder
from dealer_assist.table.runner import TableRunner
from dealer_assist.table.screen import ScreenServer
from dealer_assist.table.sources import CardTarget, CorrectCard, ShoeCard, ShoeLink, VoidRound
from tests.table.test_sign_in import SUPERVISOR_PIN, Clock, desk


def post(screen: ScreenServer, message: dict) -> tuple[int, dict]:
    """``message`` touched on ``screen`` as its paired page does: the status and JSON."""
    request = urllib.request.Request(screen.url + "api/input", json.dumps(message).encode(),
                                     {"Content-Type": "application/json",
                                      "Cookie": screen.access.cookie_header()}, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


@pytest.fixture
def shoe_table(tmp_path):
    """A shoe table (no camera) with a dealer signed in, its staff desk and a real screen."""
    loop = TableLoop("h17-ddd-6", MemoryRecorder(), table_id="T6", has_camera=False)
    loop.dealer = "D-7"
    runner = TableRunner(loop).start()
    runner.submit(ShoeLink(True, "test shoe"))
    screen = ScreenServer(runner, "127.0.0.1", 0, desk(tmp_path, Clock())).start()
    yield runner, screen
    screen.stop()
    runner.stop()


def play_a_round_to_its_end(runner: TableRunner, screen: ScreenServer) -> str:
    """Seat 1 bets $10, 19 against the dealer's 17, stands, is paid and the round finished."""
    assert post(screen, {"type": "bet", "seat": 1, "amount": "10"})[0] == 200
    for code in ("KH", "9S", "9H", "8D"):
        runner.submit(ShoeCard(Card.parse(code)))
    assert runner.wait_until(lambda loop: loop.round_open and loop.fold is not None
                             and loop.fold.engine.acting() is not None, 5)
    round_id = runner.view()["round"]["round"]
    assert post(screen, {"type": "decide", "seat": 1, "hand": 0, "action": "stand"})[0] == 200
    assert post(screen, {"type": "finish"})[0] == 200
    assert runner.wait_until(lambda loop: not loop.round_open, 5)
    return round_id


@pytest.mark.parametrize("touch", [
    {"type": "void", "reason": "misdeal", "supervisor": "S-3", "pin": SUPERVISOR_PIN},
    {"type": "correct", "card": "7H", "at": "dealer", "supervisor": "S-3",
     "pin": SUPERVISOR_PIN},
])
def test_a_void_or_correction_approved_for_a_round_is_refused_once_the_next_is_in_play(
        shoe_table, touch):
    """The approval band stays open while the supervisor comes over; the round it was opened
    for may end and the next one start meanwhile. The touch names the round the screen showed:
    it is refused (409), and the round now in play keeps its bets."""
    runner, screen = shoe_table
    first = play_a_round_to_its_end(runner, screen)
    assert post(screen, {"type": "bet", "seat": 2, "amount": "25"})[0] == 200
    assert runner.wait_until(lambda loop: loop.round_open, 5)
    second = runner.view()["round"]["round"]
    assert second != first
    status, body = post(screen, {**touch, "round": first})
    assert status == 409 and f"round {first} is no longer in play" in body["detail"]
    assert runner.wait_idle(5)
    view = runner.view()
    assert view["round"]["round"] == second and view["round"]["seats"][0]["wager"] == "25.00"
    assert not [a for a in view["alarms"] if "refused" in a["text"]]  # no PIN was even tried


def test_a_void_naming_the_round_in_play_is_taken(shoe_table):
    runner, screen = shoe_table
    assert post(screen, {"type": "bet", "seat": 2, "amount": "25"})[0] == 200
    assert runner.wait_until(lambda loop: loop.round_open, 5)
    status, _ = post(screen, {"type": "void", "reason": "misdeal", "supervisor": "S-3",
                              "pin": SUPERVISOR_PIN, "round": runner.view()["round"]["round"]})
    assert status == 200
    assert runner.wait_until(lambda loop: not loop.round_open, 5)


@pytest.mark.parametrize("item", [
    VoidRound("misdeal", "S-3", "ROUND"),
    CorrectCard(Card.parse("7H"), CardTarget(None), None, None, "S-3", "ROUND"),
])
def test_a_void_or_correction_for_a_round_that_ended_while_its_pin_was_checked_is_refused(
        shoe_table, item):
    """The screen looks at the round in play before the PIN is checked; a bet may open the next
    round meanwhile. The loop, which handles inputs one at a time, refuses the touch then, with
    an alarm, and the round in play keeps its bets."""
    runner, screen = shoe_table
    first = play_a_round_to_its_end(runner, screen)
    assert post(screen, {"type": "bet", "seat": 2, "amount": "25"})[0] == 200
    assert runner.wait_until(lambda loop: loop.round_open, 5)
    runner.submit(dataclasses.replace(item, round_id=first))  # as admitted before the bet
    assert runner.wait_idle(5)
    view = runner.view()
    assert view["round"]["seats"][0]["wager"] == "25.00"
    assert [a for a in view["alarms"] if f"approved for round {first} was not taken" in a["text"]]
