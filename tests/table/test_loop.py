"""The table loop, fed input values directly.

Camera inputs here are the values the camera source hands the loop (``FeltCard``,
``FeltStacks``, ``FeltSwap``, ``HoleCardShown``: what the felt tracker makes of the detector's
sightings), given directly so that each rule is checked exactly; the camera pipeline itself is
tested in test_camera_source.py and test_synthetic_camera.py, and with the shipped model by
bench/table.py. Shoe inputs are the values the real shoe source produces.
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import time
from decimal import Decimal
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dealer_assist.roundlog import settle_log
from dealer_assist.rules import DEALER, Action, Card, CardTarget, RuleSet
from dealer_assist.surveillance import RecordingStore
from dealer_assist.table.alarms import ALARMS_KEPT, Alarm, AlarmKind
from dealer_assist.table.loop import ERRORS_KEPT, Mode, TableLoop
from dealer_assist.table.pairing import SHOE_SILENT_WAIT_S
from dealer_assist.table.recording import (
    MemoryRecorder,
    StoreRecorder,
    open_recording,
)
from dealer_assist.table.runner import TableRunner
from dealer_assist.table.screen_view import payout_words
from dealer_assist.table.simulation.world import Player, SimulatedTable
from dealer_assist.table.sources import (
    DEALER_SPOT,
    AcknowledgeAlarm,
    AnswerQuestion,
    CameraFocus,
    CameraLink,
    CameraMoved,
    CloseInsurance,
    CorrectCard,
    Decide,
    FeltCard,
    FeltStacks,
    FeltSwap,
    FinishRound,
    HoleCardShown,
    Insure,
    KeyCard,
    NewShoe,
    PlaceBet,
    RecordingFailed,
    ShoeCard,
    ShoeCaughtUp,
    ShoeHeard,
    ShoeLink,
    VoidRound,
)

C = Card.parse
ROOT = Path(__file__).resolve().parents[2]


class Table:
    """A loop with a clock that advances a little per input."""

    def __init__(self, shoe: bool = True, camera: bool = True, rules: str = "h17-ddd-6",
                 heartbeats: bool = False):
        self.recorder = MemoryRecorder()
        self.loop = TableLoop(rules, self.recorder, has_shoe=shoe, has_camera=camera,
                              shoe_heartbeats=heartbeats)
        self.now = 0.0
        self.loop.dealer = "D1"  # signed in (signing in itself: tests/table/test_sign_in.py)
        if shoe:
            self.send(ShoeLink(True, "test"))
        if camera:
            self.send(CameraLink(True, "test"))

    def send(self, *items: object) -> None:
        for item in items:
            self.now += 0.01
            self.loop.handle(item, self.now)  # type: ignore[arg-type]

    def wait(self, seconds: float) -> None:
        self.now += seconds
        self.loop.tick(self.now)

    def card(
        self,
        code: str,
        seat: int | None = None,
        stack: int = 0,
        sideways: bool = False,
        camera_code: str | None = "same",
    ) -> None:
        """A card out of the shoe and (with a camera) landing at ``seat``."""
        self.send(ShoeCard(C(code)))
        if self.loop.has_camera:
            seen = C(code) if camera_code == "same" else (C(camera_code) if camera_code else None)
            self.send(FeltCard(seen, CardTarget(seat, stack), sideways))

    def kinds(self) -> list[AlarmKind]:
        return [a.kind for a in self.loop.alarms]

    def choices(self) -> list[str]:
        """The labels of the question on the dealer's screen ([] when none is open)."""
        question = self.loop.view()["question"]
        return [] if question is None else [c["label"] for c in question["choices"]]

    def answer(self, label: str) -> None:
        """Touch the answer labelled ``label`` on the dealer's screen."""
        question = self.loop.view()["question"]
        assert question is not None, "no question is open"
        choice = next(c["choice"] for c in question["choices"] if c["label"] == label)
        self.send(AnswerQuestion(question["id"], choice))

    def seat_cards(self) -> list[list[list[str]]]:
        """Each seat's hands' card codes, seats in play order (the engine's typed queries)."""
        engine = self.loop.engine
        assert engine is not None
        return [[[c.code for c in h.cards] for h in engine.hands(seat)] for seat in engine.seats()]

    def dealer_codes(self) -> list[str | None]:
        """The dealer's card codes (None: face down)."""
        engine = self.loop.engine
        assert engine is not None
        return [None if c is None else c.code for c in engine.dealer_cards()]

    def settled_json(self) -> dict:
        assert self.recorder.rounds, "no round was recorded"
        return self.recorder.rounds[-1][2].to_json()

    def recorded_lines(self) -> list[str]:
        return self.recorder.rounds[-1][1]


def deal(table: Table, seats: dict[int, tuple[str, str]], up: str, hole: str) -> None:
    """Bets of $10 on ``seats`` then the deal in order (hole card face down on camera)."""
    for seat in seats:
        table.send(PlaceBet(seat, Decimal("10")))
    for seat, (first, _) in seats.items():
        table.card(first, seat)
    table.card(up, None)
    for seat, (_, second) in seats.items():
        table.card(second, seat)
    table.send(ShoeCard(C(hole)))
    if table.loop.has_camera:
        table.send(FeltCard(None, DEALER_SPOT))


def test_shoe_only_round_with_touches_settles_like_settle():
    table = Table(camera=False)
    assert table.loop.mode is Mode.SHOE_ONLY
    deal(table, {1: ("9S", "7H"), 2: ("5D", "6C")}, up="6S", hole="KD")
    table.send(Decide(1, Action.STAND))
    table.send(Decide(2, Action.DOUBLE))
    table.card("9C")  # seat 2's double card
    table.send(Decide(2, Action.STAND))  # double-double down: the dealer says seat 2 is done
    table.card("8H")  # the dealer: 6 + K + 8 = 24
    assert table.loop.rounds_played == 1
    got = table.settled_json()
    assert got["dealer"]["cards"] == ["6S", "KD", "8H"]
    assert [s["net"] for s in got["seats"]] == ["10.00", "20.00"]
    assert table.loop.questions_asked == 0


def test_shoe_only_after_a_double_an_untouched_card_asks_redouble_or_dealer():
    table = Table(camera=False)
    deal(table, {1: ("9S", "7H"), 2: ("5D", "6C")}, up="6S", hole="KD")
    table.send(Decide(1, Action.STAND))
    table.send(Decide(2, Action.DOUBLE))
    table.card("9C")
    table.card("8H")  # a redouble's card, or the dealer's? No touch says.
    assert table.choices() == ["DOUBLE seat 2", "STAND seat 2, to the DEALER"]
    assert table.loop.view()["phase"] == "question"
    assert table.loop.rounds_played == 0  # nothing is paid on a guess
    table.answer("STAND seat 2, to the DEALER")
    assert table.loop.rounds_played == 1
    assert [s["net"] for s in table.settled_json()["seats"]] == ["10.00", "20.00"]
    lines = table.recorded_lines()
    asked = [json.loads(line) for line in lines if '"question"' in line]
    assert len(asked) == 1 and asked[0]["answer"] == "STAND seat 2, to the DEALER"
    assert asked[0]["card"] == "8H" and asked[0]["by"] == "dealer"
    assert settle_log(lines).to_json()["net"] == table.settled_json()["net"]


def test_shoe_only_a_card_no_touch_asked_for_is_a_question_not_a_hit():
    table = Table(camera=False)
    deal(table, {1: ("2S", "3H")}, up="9S", hole="7D")
    table.card("4C")
    assert table.choices() == ["HIT seat 1", "DOUBLE seat 1", "STAND seat 1, to the DEALER"]
    assert table.loop.view()["question"]["text"].startswith("Where did 4C go?")
    table.card("5C")  # the next card waits behind the question
    assert table.seat_cards()[0][0] == ["2S", "3H"]
    table.answer("HIT seat 1")
    table.answer("HIT seat 1")  # 5C, asked in its turn
    table.send(Decide(1, Action.STAND))
    table.card("2D")  # the dealer: 9 + 7 + 2 = 18
    assert table.settled_json()["seats"][0]["hands"][0]["cards"] == ["2S", "3H", "4C", "5C"]
    assert table.loop.questions_asked == 2


def test_shoe_only_a_touched_hit_needs_no_question():
    table = Table(camera=False)
    deal(table, {1: ("2S", "3H")}, up="9S", hole="7D")
    table.send(Decide(1, Action.HIT))
    table.card("4C")
    table.send(Decide(1, Action.STAND))
    table.card("2D")
    assert table.settled_json()["seats"][0]["hands"][0]["cards"] == ["2S", "3H", "4C"]
    assert table.loop.questions_asked == 0


def test_card_landing_at_the_next_seat_means_the_seat_before_stood():
    table = Table()
    deal(table, {2: ("9S", "8H"), 3: ("5D", "4C")}, up="6S", hole="QD")
    table.card("2C", seat=3)  # seat 2 stood on 17; seat 3 hits
    table.card("JH", seat=3)  # 21: seat 3 stands by itself
    table.send(HoleCardShown(C("QD")))
    table.card("5S", seat=None)  # dealer 6 + Q + 5 = 21
    got = table.settled_json()
    assert [h["cards"] for s in got["seats"] for h in s["hands"]] == [
        ["9S", "8H"],
        ["5D", "4C", "2C", "JH"],
    ]
    lines = table.recorded_lines()
    assert '{"type": "action", "seat": 2, "action": "stand", "hand": 0, "by": "camera"}' in lines
    assert '{"type": "card", "card": "2C", "to": {"seat": 3, "hand": 0}}' in lines
    assert table.loop.alarms == []


def test_sideways_card_is_a_double_and_the_hole_card_turn_ends_the_players():
    table = Table()
    deal(table, {1: ("6S", "5H")}, up="9S", hole="7D")
    table.card("KC", seat=1, sideways=True)
    table.send(HoleCardShown(C("7D")))  # 16: dealer must draw
    table.card("8D", seat=None)
    got = table.settled_json()
    hand = got["seats"][0]["hands"][0]
    assert hand["wagered"] == "20.00" and hand["outcome"] == "win" and hand["net"] == "20.00"


def test_two_stacks_at_a_seat_are_a_split():
    table = Table()
    deal(table, {1: ("8S", "8H")}, up="6S", hole="KD")
    table.send(FeltStacks(1, 2, from_stack=0))
    table.card("3C", seat=1, stack=0)
    table.card("QH", seat=1, stack=0, sideways=True)  # 8+3 doubled: 21
    table.card("9D", seat=1, stack=1)
    table.card("9C", seat=None)  # hand 1 stood at 17 when the dealer drew: 6 + K + 9 = 25
    got = table.settled_json()
    hands = got["seats"][0]["hands"]
    assert [h["cards"] for h in hands] == [["8S", "3C", "QH"], ["8H", "9D"]]
    assert [h["net"] for h in hands] == ["20.00", "10.00"]


def test_felt_before_shoe_pairs_the_same():
    table = Table()
    table.send(PlaceBet(1, Decimal("10")))
    table.send(FeltCard(C("9S"), CardTarget(1, 0)), ShoeCard(C("9S")))
    assert table.loop.cards_committed == 1 and table.loop.alarms == []


def test_switched_card_raises_and_records_the_shoe_card():
    table = Table()
    table.send(PlaceBet(1, Decimal("10")))
    table.card("9S", seat=1, camera_code="KH")
    assert table.loop.cards_committed == 0  # a matching reading may still come
    table.wait(0.6)
    assert table.kinds() == [AlarmKind.SWITCHED_CARD]
    assert "9S" in table.loop.alarms[0].text and "KH" in table.loop.alarms[0].text
    assert table.seat_cards()[0][0] == ["9S"]


def test_card_on_the_felt_that_never_left_the_shoe():
    table = Table()
    table.send(PlaceBet(1, Decimal("10")))
    table.send(FeltCard(C("AS"), CardTarget(1, 0)))
    table.wait(2.0)
    assert table.kinds() == [AlarmKind.NOT_FROM_SHOE]
    assert table.loop.cards_committed == 0


def test_a_landing_at_a_seat_waiting_when_the_next_bet_closes_the_round_is_alarmed():
    """The dealer's last card and a stray reading at seat 2 come together; the next round's
    first bet closes the round before the stray's wait is over. The stray is not dropped in
    silence: it never left the shoe, an alarm in the round it came in, which holds none of
    the next round's payouts."""
    table = Table()
    deal(table, {1: ("9S", "7H")}, up="6S", hole="KD")
    table.send(Decide(1, Action.STAND), HoleCardShown(C("KD")))
    table.send(FeltCard(C("KC"), CardTarget(2, 0)))  # no card dealt there: a stray
    table.card("5D", None)  # the dealer's last card: 21
    closed = table.loop.round_id
    table.wait(0.5)
    table.send(PlaceBet(1, Decimal("10")))
    assert table.loop.rounds_played == 1 and table.loop.round_id != closed
    [stray] = [a for a in table.loop.alarms if a.kind is AlarmKind.NOT_FROM_SHOE]
    assert "KC appeared at seat 2" in stray.text and stray.round_id == closed
    assert table.loop.disagreements() == []
    table.wait(3.0)
    assert table.kinds().count(AlarmKind.NOT_FROM_SHOE) == 1


def test_pip_ten_and_beyond_composition_are_refused_with_alarms():
    table = Table(camera=False, rules="h17-ddd-2")
    table.send(NewShoe(2), PlaceBet(1, Decimal("10")))
    table.send(ShoeCard(C("TS")))
    assert table.kinds() == [AlarmKind.PIP_TEN] and table.loop.cards_committed == 0
    table.send(ShoeCard(C("5S")), ShoeCard(C("5S")))  # seat 1, dealer up card
    table.send(ShoeCard(C("5S")))  # a third 5S from two decks
    assert table.kinds()[-1] is AlarmKind.BEYOND_COMPOSITION
    assert table.loop.cards_committed == 2


def test_illegal_touch_raises_and_changes_nothing():
    table = Table(camera=False)
    deal(table, {1: ("9S", "7H"), 2: ("5D", "6C")}, up="6S", hole="KD")
    before = table.loop.round_lines()
    table.send(Decide(2, Action.STAND))  # seat 1 is to act
    assert table.kinds() == [AlarmKind.ILLEGAL_ACTION]
    assert "out of turn" in table.loop.alarms[0].text
    assert table.loop.round_lines() == before
    table.send(AcknowledgeAlarm(1))
    assert table.loop.active_alarms() == [] and len(table.loop.alarms) == 1


def test_a_table_running_for_weeks_keeps_every_active_alarm_and_only_the_latest_done_ones():
    """Alarms once acknowledged or resolved are kept in memory up to ALARMS_KEPT (the screen
    shows 20 of them), the oldest let go first; every one is recorded, ids never repeat, and an
    alarm still active is kept however old it is."""
    table = Table()
    table.send(PlaceBet(1, Decimal("10")), Decide(1, Action.STAND))  # no round to act in
    [unheeded] = table.loop.active_alarms()
    for _ in range(ALARMS_KEPT + 50):
        table.send(CameraMoved("table markers moved 14 px"), CameraLink(True, "back in place"))
    assert len(table.loop.alarms) == ALARMS_KEPT
    assert table.loop.alarms[0] == unheeded and table.loop.active_alarms() == [unheeded]
    ids = [a.id for a in table.loop.alarms]
    assert ids[1:] == list(range(53, ALARMS_KEPT + 52))  # the latest 199, in order
    assert [a.id for a in table.recorder.alarms] == list(range(1, ALARMS_KEPT + 52))
    table.send(AcknowledgeAlarm(unheeded.id))
    assert table.loop.active_alarms() == []
    alarm_history = table.loop.view()["alarm_history"]
    assert [a["id"] for a in alarm_history] == list(range(ALARMS_KEPT + 32, ALARMS_KEPT + 52))


def test_a_burst_of_alarms_acknowledged_at_last_is_let_go_down_to_the_bound():
    """More alarms at once than ALARMS_KEPT, all left active (kept, however many), then all
    acknowledged: the next alarm brings the table back to ALARMS_KEPT, the latest ones."""
    table = Table()
    table.send(*[Decide(1, Action.STAND)] * (ALARMS_KEPT + 300))  # no round to act in
    assert len(table.loop.active_alarms()) == ALARMS_KEPT + 300
    table.send(*[AcknowledgeAlarm(n) for n in range(1, ALARMS_KEPT + 301)])
    table.send(Decide(1, Action.STAND))
    assert [a.id for a in table.loop.alarms] == list(range(302, ALARMS_KEPT + 302))


def test_camera_lost_mid_round_falls_back_to_touches_and_completes():
    table = Table()
    deal(table, {1: ("9S", "4H"), 2: ("5D", "6C")}, up="6S", hole="KD")
    table.card("2C", seat=1)  # seat 1 hits to 15, read from the felt
    table.send(ShoeCard(C("3D")))  # then the camera dies before seeing the next card land
    table.send(CameraLink(False, "no frames for 2 s"))
    assert table.loop.mode is Mode.SHOE_ONLY
    assert AlarmKind.CAMERA_LOST in table.kinds()
    # Nobody saw where 3D went: a hit at seat 1, a double, or seat 1 stood and it is seat 2's.
    assert table.choices()[:2] == ["HIT seat 1", "DOUBLE seat 1"]
    assert "STAND seat 1, HIT seat 2" in table.choices()
    table.answer("HIT seat 1")
    table.send(Decide(1, Action.STAND))  # 18
    table.send(Decide(2, Action.STAND))
    table.card("7H")  # dealer 6 + K + 7 = 23
    assert table.loop.rounds_played == 1
    assert [s["net"] for s in table.settled_json()["seats"]] == ["10.00", "10.00"]


def test_a_landing_seen_before_the_camera_was_lost_still_places_its_shoe_card():
    """The camera saw a card land, then its feed was lost (its thread stopped on an error: the
    loss is said at once) before the shoe's report of the card came: the landing was seen
    while the camera could be trusted, so the card is placed where it landed, not asked about
    as a card nobody saw."""
    table = Table()
    deal(table, {1: ("9S", "4H"), 2: ("5D", "6C")}, up="6S", hole="KD")
    table.send(FeltCard(C("3D"), CardTarget(2, 0)))  # seat 1 stood untouched; seat 2 hits
    table.send(CameraLink(False, "the camera stopped on an error"))
    assert table.loop.mode is Mode.SHOE_ONLY and table.kinds() == [AlarmKind.CAMERA_LOST]
    table.send(ShoeCard(C("3D")))
    assert table.choices() == [] and table.loop.questions_asked == 0
    assert table.seat_cards() == [[["9S", "4H"]], [["5D", "6C", "3D"]]]
    table.wait(3)
    assert table.kinds() == [AlarmKind.CAMERA_LOST]


def test_a_card_seen_landing_before_the_camera_was_lost_that_never_left_the_shoe_alarms():
    """A card put on the felt that the shoe never dealt, then the camera's feed lost: the
    landing still waits its time for a shoe card and is then a card that never left the shoe,
    as with the camera up. The dealer's next card, which the camera can no longer see land, is
    no evidence about it: placed by the rules, not paired with it as a switched card."""
    table = Table(heartbeats=True)
    deal(table, {1: ("9S", "8H")}, up="6S", hole="4D")
    table.send(Decide(1, Action.STAND))
    table.send(FeltCard(C("AS"), CardTarget(1, 0)))
    table.send(CameraLink(False, "the camera stopped on an error"))
    table.send(ShoeCard(C("9C")))  # the dealer's draw: 6 + 4 + 9
    assert table.dealer_codes() == ["6S", "4D", "9C"]
    table.wait(0.5)
    table.send(ShoeHeard())  # the shoe's link is alive and it dealt nothing more
    table.wait(0.6)
    assert table.kinds() == [AlarmKind.CAMERA_LOST, AlarmKind.NOT_FROM_SHOE]
    assert "AS appeared at seat 1 but never left the shoe" in table.loop.alarms[-1].text
    assert table.seat_cards() == [[["9S", "8H"]]] and table.loop.rounds_played == 1


def test_a_later_shoe_card_claims_its_landing_seen_before_the_camera_was_lost():
    """The camera missed 3D and saw 8C land, then the feed was lost before the shoe's reports
    came: 3D is asked about (nobody saw it land) and 8C is placed where it landed, as with the
    camera up; 3D is not paired with 8C's landing as a switched card."""
    table = Table()
    deal(table, {1: ("9S", "4H"), 2: ("5D", "6C")}, up="6S", hole="KD")
    table.send(FeltCard(C("8C"), CardTarget(2, 0)))
    table.send(CameraLink(False, "the camera stopped on an error"))
    table.send(ShoeCard(C("3D")), ShoeCard(C("8C")))
    assert table.choices()[:2] == ["HIT seat 1", "DOUBLE seat 1"]
    table.answer("HIT seat 1")
    assert table.seat_cards() == [[["9S", "4H", "3D"]], [["5D", "6C", "8C"]]]
    table.wait(3)
    assert table.kinds() == [AlarmKind.CAMERA_LOST, AlarmKind.DEALER_ASKED]


def test_shoe_cards_behind_one_waiting_as_the_camera_is_lost_keep_their_order():
    """The dealer draws 3D, 2C, 7H (6 + 4: 13, 15, 22). The camera saw 3D land but was unsure
    of it, then its feed was lost; 2C's report comes while 3D still waits and waits behind it.
    Once 3D is placed (its unsure landing decides nothing), no landing is left for 2C to wait
    for: it is placed at once, before 7H, and no "camera missed a card" is raised for a card
    that came with no camera to see it."""
    table = Table()
    deal(table, {1: ("9S", "8H")}, up="6S", hole="4D")
    table.send(Decide(1, Action.STAND))
    table.send(ShoeCard(C("3D")))
    table.wait(0.2)
    table.send(FeltCard(C("AH"), DEALER_SPOT, verdict="unsure", checked=C("3D")))
    table.wait(0.1)
    table.send(CameraLink(False, "the camera stopped on an error"))
    table.wait(0.15)
    table.send(ShoeCard(C("2C")))
    assert table.dealer_codes() == ["6S", "4D"]  # 2C waits behind 3D
    table.wait(0.1)
    assert table.dealer_codes() == ["6S", "4D", "3D", "2C"]
    table.wait(0.6)
    table.send(ShoeCard(C("7H")))
    table.wait(2)
    assert table.settled_json()["dealer"]["cards"] == ["6S", "4D", "3D", "2C", "7H"]
    assert table.settled_json()["seats"][0]["net"] == "10.00"
    assert table.kinds() == [AlarmKind.CAMERA_LOST]


def test_a_shoe_card_that_came_while_the_camera_was_lost_takes_its_sighting_after_it_returns():
    """Seat 1 doubled, so 3D is its card; 2C came while the camera was lost and waits behind 3D
    (whose landing was seen, unsure) as the camera comes back. The camera's tracker reports a
    card that landed meanwhile as it first sees it: 2C's landing at seat 2 places it there,
    where the rules alone cannot tell (seat 2 hits, or stood and it is the dealer's)."""
    table = Table()
    deal(table, {1: ("9S", "2H"), 2: ("5D", "6C")}, up="6S", hole="KD")
    table.send(Decide(1, Action.DOUBLE))
    table.send(ShoeCard(C("3D")))
    table.wait(0.2)
    table.send(FeltCard(C("AH"), CardTarget(1, 0), verdict="unsure", checked=C("3D")))
    table.wait(0.1)
    table.send(CameraLink(False, "no frame for 2 s"))
    table.wait(0.15)
    table.send(ShoeCard(C("2C")), CameraLink(True, "back"))
    table.wait(0.1)
    table.send(FeltCard(C("2C"), CardTarget(2, 0), seen_at=table.now - 0.05))
    table.wait(2)
    assert table.seat_cards() == [[["9S", "2H", "3D"]], [["5D", "6C", "2C"]]]
    assert table.loop.questions_asked == 0 and table.kinds() == [AlarmKind.CAMERA_LOST]


def test_a_camera_behind_as_it_is_lost_pairs_its_kept_landings_by_the_usual_rules():
    """The camera's sightings came late (it is behind: only a landing of the very code is
    taken) when its feed was lost; no sighting comes to say it caught up, so the unreadable
    landing it saw at seat 2 is paired by the usual rules with the one card out, 3D, not left
    to expire as a card that never left the shoe while 3D is asked about."""
    table = Table(heartbeats=True)
    deal(table, {1: ("9S", "4H"), 2: ("5D", "6C")}, up="6S", hole="KD")
    table.send(Decide(1, Action.STAND))
    table.send(FeltCard(None, CardTarget(2, 0), seen_at=table.now - 0.6))
    assert table.loop.camera.behind
    table.send(CameraLink(False, "the camera stopped on an error"))
    table.wait(0.3)
    table.send(ShoeCard(C("3D")))
    for _ in range(3):
        table.wait(0.5)
        table.send(ShoeHeard())
    table.wait(1.0)
    assert table.seat_cards() == [[["9S", "4H"]], [["5D", "6C", "3D"]]]
    assert table.choices() == []
    assert AlarmKind.NOT_FROM_SHOE not in table.kinds()


def test_with_the_shoe_down_a_landing_waiting_as_the_camera_is_lost_is_left_to_the_resend():
    """The shoe's link is down (the camera reads the cards) and two landings wait behind a shoe
    card still in flight (the first may be it misread) when the camera's feed is lost too: the
    shoe dealt them, and its resend is lined up with what was recorded; they are not cards that
    never left the shoe."""
    table = Table()
    deal(table, {1: ("9S", "8H")}, up="6S", hole="4D")
    table.send(Decide(1, Action.STAND))
    table.send(ShoeCard(C("2C")))  # the dealer's draw, its landing not seen yet
    table.send(ShoeLink(False, "cable"))
    table.send(FeltCard(C("3H"), DEALER_SPOT, verdict="unsure", checked=C("2C")),
               FeltCard(C("5C"), DEALER_SPOT, verdict="unsure", checked=C("2C")))
    table.send(CameraLink(False, "the camera stopped on an error"))
    assert table.loop.mode is Mode.NO_READER
    table.wait(3)
    assert AlarmKind.NOT_FROM_SHOE not in table.kinds()
    table.send(ShoeLink(True, "back"), ShoeCard(C("3H"), held=True),
               ShoeCard(C("5C"), held=True), ShoeCaughtUp())
    assert AlarmKind.NOT_FROM_SHOE not in table.kinds()
    assert table.dealer_codes() == ["6S", "4D", "2C"] and table.loop.rounds_played == 0


def test_camera_moved_ignores_landings_until_recalibrated():
    table = Table()
    table.send(CameraMoved("table markers moved 14 px"))
    assert table.loop.mode is Mode.SHOE_ONLY and table.kinds() == [AlarmKind.CAMERA_MOVED]
    table.send(CameraLink(True, "recalibrated"))
    assert table.loop.mode is Mode.SHOE_AND_CAMERA and table.loop.active_alarms() == []


def test_a_soft_camera_view_alarms_keeps_the_camera_trusted_and_clears_when_sharp():
    """Out of focus the camera still places cards right (it is where it was calibrated), it
    only misses more of them: an alarm for the technician, no change of mode; a round played
    meanwhile reads its cards from the felt as before."""
    table = Table()
    table.send(CameraFocus(False, "frame soft: the markers' edges measure 3.3 px"))
    assert table.kinds() == [AlarmKind.CAMERA_SOFT]
    assert "3.3 px" in table.loop.alarms[0].text and "focus it" in table.loop.alarms[0].text
    assert table.loop.mode is Mode.SHOE_AND_CAMERA
    deal(table, {1: ("9S", "7H")}, up="6S", hole="KD")
    table.send(Decide(1, Action.STAND))
    table.card("8H")  # dealer 24
    assert table.loop.rounds_played == 1 and table.kinds() == [AlarmKind.CAMERA_SOFT]
    table.send(CameraFocus(True, "camera: sharp again"))
    assert table.loop.active_alarms() == [] and len(table.loop.alarms) == 1


def test_shoe_link_down_mid_round_camera_carries_and_resent_cards_are_checked():
    table = Table()
    deal(table, {1: ("9S", "7H")}, up="6S", hole="KD")
    table.send(ShoeLink(False, "EIO"))
    assert table.loop.mode is Mode.CAMERA_ONLY and AlarmKind.SHOE_LINK_DOWN in table.kinds()
    table.send(FeltCard(C("2C"), CardTarget(1, 0)))  # a hit, read by the camera alone
    table.send(HoleCardShown(C("KD")))
    table.send(FeltCard(C("8H"), DEALER_SPOT))  # dealer 24
    assert table.loop.rounds_played == 1
    assert table.settled_json()["seats"][0]["net"] == "10.00"
    table.send(ShoeLink(True, "back"))
    table.send(ShoeCard(C("2C")), ShoeCard(C("9H")))  # the shoe resends: 9H is not 8H
    assert table.kinds()[-1] is AlarmKind.SWITCHED_CARD and "9H" in table.loop.alarms[-1].text
    assert not any(a.kind is AlarmKind.SHOE_LINK_DOWN for a in table.loop.active_alarms())


def test_a_card_landing_as_the_shoe_link_falls_silent_is_read_from_the_camera():
    """A cable pulled gives no error: the shoe reader calls the link down only once no frame
    has come for its timeout (1.5 s; a heartbeat every 0.5 s). The card the dealer draws just
    after the link fell silent lands on the camera with no shoe card and no heartbeat after it:
    it waits for the drop, and is then read from the camera, not alarmed as a card that never
    left the shoe."""
    table = Table(heartbeats=True)
    deal(table, {1: ("9S", "7H")}, up="6S", hole="KD")
    table.send(ShoeHeard())  # the last heartbeat before the cable is pulled
    table.send(FeltCard(C("2C"), CardTarget(1, 0)))  # drawn 0.2 s after it
    table.wait(1.2)
    assert AlarmKind.NOT_FROM_SHOE not in table.kinds()
    table.wait(0.1)  # 1.5 s after the last heartbeat: no frame for the reader's timeout
    table.send(ShoeLink(False, "no valid frame for 1.5 s"))
    assert table.loop.mode is Mode.CAMERA_ONLY
    assert table.seat_cards()[0][0] == ["9S", "7H", "2C"]
    assert AlarmKind.NOT_FROM_SHOE not in table.kinds()


def test_a_landing_the_shoes_heartbeat_disowns_never_left_the_shoe_after_the_usual_wait():
    """A heartbeat after the landing says the link is alive and every card the shoe drew
    before it has come: the landing is a card that never left the shoe once it has waited
    ``shoe_wait_s`` (1 s), as at a table whose shoe sends none."""
    for heartbeats in (True, False):
        table = Table(heartbeats=heartbeats)
        table.send(PlaceBet(1, Decimal("10")))
        table.send(FeltCard(C("AS"), CardTarget(1, 0)))
        table.wait(0.5)
        table.send(ShoeHeard())
        table.wait(0.4)
        assert table.kinds() == []  # 0.91 s
        table.wait(0.1)
        assert table.kinds() == [AlarmKind.NOT_FROM_SHOE] and "AS" in table.loop.alarms[0].text
        assert table.loop.cards_committed == 0


def test_a_landing_that_cannot_expire_while_the_dealer_is_asked_wants_no_heartbeat():
    """The runner journals a heartbeat only while a landing waits for one and may expire: not
    while a question is open (twice a second, fsync'd, for as long as it stays unanswered)."""
    table = Table(heartbeats=True)
    deal(table, {1: ("2S", "3H")}, up="9S", hole="7D")
    table.send(ShoeCard(C("4C")))  # the camera misses it
    table.wait(1.0)
    table.send(FeltCard(C("5C"), CardTarget(1, 0), seen_at=table.now - 0.6))  # a late sighting
    table.wait(0.6)
    assert table.choices() and len(table.loop.camera.flight.felt) == 1
    assert not table.loop.camera.awaits_heartbeat
    table.answer("HIT seat 1")
    assert len(table.loop.camera.flight.felt) == 1 and table.loop.camera.awaits_heartbeat


def test_with_no_heartbeat_and_no_drop_a_landing_waits_no_longer_than_a_silent_link_takes():
    """No heartbeat after the landing and no word of the link (a reader that failed to call
    it down): the landing does not hold the round for ever; past ``SHOE_SILENT_WAIT_S`` it is
    a card that never left the shoe."""
    table = Table(heartbeats=True)
    table.send(PlaceBet(1, Decimal("10")))
    table.send(FeltCard(C("AS"), CardTarget(1, 0)))
    table.wait(SHOE_SILENT_WAIT_S - 0.05)
    assert table.kinds() == []
    table.wait(0.05)
    assert table.kinds() == [AlarmKind.NOT_FROM_SHOE]


def test_with_the_shoe_down_a_camera_that_may_not_name_cards_stops_the_dealing():
    """A deck accepted only for checking cards against the shoe's (its acceptance report scores
    the shoe check) never names a card: with the shoe's link down the camera counts for nothing,
    as if it were lost, so the table has no card reader and says to stop dealing; a card the
    camera reads meanwhile, or the hole card it sees turned, is not recorded. With the shoe
    back, its resent cards decide."""
    table = Table()
    table.loop.camera_names = False
    deal(table, {1: ("9S", "7H")}, up="6S", hole="KD")
    assert table.loop.mode is Mode.SHOE_AND_CAMERA
    table.send(ShoeLink(False, "EIO"))
    assert table.loop.mode is Mode.NO_READER and not table.loop.camera_trusted()
    down = [a for a in table.loop.alarms if a.kind is AlarmKind.SHOE_LINK_DOWN]
    assert down and "stop dealing until it reconnects" in down[-1].text
    committed = table.loop.cards_committed
    table.send(FeltCard(C("2C"), CardTarget(1, 0)))  # read by the camera alone
    table.send(HoleCardShown(C("QC")))  # not the shoe's hole card: the camera misread it
    table.wait(5.0)
    assert table.loop.cards_committed == committed and table.loop.rounds_played == 0
    table.send(ShoeLink(True, "back"))
    assert table.loop.mode is Mode.SHOE_AND_CAMERA
    table.send(ShoeCard(C("2C")))  # the shoe resends the hit, whose landing did not count
    table.wait(3.0)
    assert table.choices() == ["HIT seat 1", "DOUBLE seat 1", "STAND seat 1, to the DEALER"]
    # the camera saw it land: its words say the sighting did not count, not that it was unseen
    assert table.loop.view()["question"]["why"] == (
        "the camera did not see it land since the shoe came back (its sightings while the shoe "
        "was down do not count: its deck only checks the shoe's cards)")
    table.answer("HIT seat 1")
    assert table.seat_cards() == [[["9S", "7H", "2C"]]] and table.dealer_codes() == ["6S", "KD"]
    table.send(Decide(1, Action.STAND))
    table.card("8H")  # the dealer: 6 + K + 8 = 24
    assert table.loop.rounds_played == 1
    table.send(PlaceBet(1, Decimal("10")))  # the next round: a missed card is simply unseen
    assert table.loop.camera.unseen_words() == "the camera did not see it land"


def test_a_shoe_card_placed_while_a_camera_that_may_not_name_cards_does_not_count():
    """The shoe's link drops with a card out and its landing not yet seen, at a table whose
    camera may not name cards: the card is placed by the rules, and its alarm says the camera's
    sightings do not count while the shoe is down (not that the camera missed it)."""
    table = Table()
    table.loop.camera_names = False
    deal(table, {1: ("9S", "7H")}, up="6S", hole="KD")
    table.send(Decide(1, Action.STAND), HoleCardShown(None))
    table.send(ShoeCard(C("3C")))  # the dealer draws to 16
    table.send(ShoeLink(False, "EIO"))
    table.wait(2.0)
    assert table.dealer_codes() == ["6S", "KD", "3C"]
    missed = [a.text for a in table.loop.alarms if a.kind is AlarmKind.CAMERA_MISSED]
    assert missed == ["the camera's sightings do not count while the shoe is down (its deck "
                      "only checks the shoe's cards); recorded from the shoe where the rules put "
                      "it (no other play could have taken it there)"]


@pytest.mark.parametrize("names", [True, False])
def test_a_hole_card_resent_by_the_shoe_turns_over_as_the_shoe_dealt_it(names):
    """The shoe's link drops before the hole card; the dealer keys a hit, so the hole card is
    recorded face down; the shoe comes back and resends the hole card and the hit. Turned over,
    the hole card is the shoe's, whatever the camera reads: a different reading is the
    switched-card alarm, never the card recorded."""
    table = Table()
    table.loop.camera_names = names
    table.send(PlaceBet(1, Decimal("10")))
    for code, seat in (("9S", 1), ("6S", None), ("7H", 1)):
        table.card(code, seat)
    table.send(ShoeLink(False, "EIO"))
    table.send(KeyCard(C("2C"), CardTarget(1, 0)))
    assert table.dealer_codes() == ["6S", None]
    table.send(ShoeLink(True, "back"), ShoeCard(C("KD")), ShoeCard(C("2C")))
    table.send(HoleCardShown(C("QC")))
    assert table.dealer_codes() == ["6S", "KD"]
    switched = [a.text for a in table.loop.alarms if a.kind is AlarmKind.SWITCHED_CARD]
    assert switched == ["the dealer's hole card shows QC but the shoe dealt KD: recorded as the "
                        "shoe dealt it; call the floor"]


def test_a_camera_that_may_name_cards_carries_the_deal_with_the_shoe_down():
    """The same outage with a deck accepted by naming: the camera reads the cards alone."""
    table = Table()
    deal(table, {1: ("9S", "7H")}, up="6S", hole="KD")
    table.send(ShoeLink(False, "EIO"))
    assert table.loop.mode is Mode.CAMERA_ONLY
    committed = table.loop.cards_committed
    table.send(FeltCard(C("2C"), CardTarget(1, 0)))
    assert table.loop.cards_committed == committed + 1


def test_a_hole_card_turned_while_the_shoe_is_away_is_checked_once_on_its_resend():
    """The shoe's link drops before the hole card: the camera records it face down, then reads
    it turned over. On reconnection the shoe resends its cards; its resend of the hole card is
    that same card, so the shoe's next card is the dealer's draw (once it was taken for a resend:
    swallowed, a false switched-card alarm, the round stalled)."""
    table = Table()
    table.send(PlaceBet(1, Decimal("10")))
    for code, seat in (("9S", 1), ("6S", None), ("7H", 1)):
        table.card(code, seat)
    table.send(ShoeLink(False, "EIO"))
    table.send(FeltCard(None, DEALER_SPOT))  # face down: the camera cannot read it
    table.send(HoleCardShown(C("KD")))  # turned: 6 + K = 16; seat 1 stood on 16
    table.send(ShoeLink(True, "back"), ShoeCard(C("KD")))  # the shoe resends the hole card
    table.card("5C", None)  # the dealer's draw: 21
    assert table.loop.rounds_played == 1, table.loop.alarms
    assert table.settled_json()["dealer"]["cards"] == ["6S", "KD", "5C"]
    assert AlarmKind.SWITCHED_CARD not in table.kinds()


def test_camera_only_face_down_hole_card_is_revealed():
    table = Table(shoe=False)
    assert table.loop.mode is Mode.CAMERA_ONLY
    table.send(PlaceBet(1, Decimal("10")))
    for code, seat in (("9S", 1), ("AS", None), ("7H", 1)):
        table.send(FeltCard(C(code), CardTarget(seat, 0)))
    table.send(FeltCard(None, DEALER_SPOT))
    table.send(HoleCardShown(C("7D")))  # 9 + 7 = 16 stood; dealer soft 18
    table.send(FinishRound())
    assert table.settled_json()["seats"][0]["net"] == "-10.00"
    assert '{"type": "card", "card": null, "to": "dealer", "face_down": true}' in (
        table.recorded_lines()
    )


def test_a_hand_held_game_goes_on_with_the_cards_the_dealer_keys():
    """Camera only: a card the camera never reads is keyed by the dealer: it goes where the next
    card is due (a hit for the hand in play), the hole card keyed for the dealer is the face-down
    one turned over, and a draw keyed for the dealer is the dealer's; each is recorded as keyed
    with an alarm, and the round log settles as the screen did."""
    table = Table(shoe=False)
    table.send(PlaceBet(1, Decimal("10")))
    table.send(FeltCard(C("9S"), CardTarget(1, 0)), FeltCard(C("5H"), DEALER_SPOT))
    table.send(KeyCard(C("2C")))  # seat 1's second card, never read by the camera
    table.send(FeltCard(None, DEALER_SPOT))  # the hole card, face down
    table.send(KeyCard(C("4D")))  # unread, keyed with no place: which play took it?
    assert table.loop.view()["question"]["text"] == "4D at seat 1: HIT or DOUBLE?"
    table.answer("HIT seat 1")  # 9 + 2 + 4 = 15
    table.send(Decide(1, Action.STAND))
    table.send(KeyCard(C("KD"), DEALER_SPOT))  # the hole card turned, unread: 5 + K = 15
    table.send(KeyCard(C("9H"), DEALER_SPOT))  # the dealer's draw, unread: 24
    table.send(FinishRound())
    assert table.loop.rounds_played == 1
    assert table.settled_json()["seats"][0]["net"] == "10.00"
    assert [a.kind for a in table.loop.alarms] == [AlarmKind.KEYED_CARD] * 2 + [
        AlarmKind.DEALER_ASKED] + [AlarmKind.KEYED_CARD] * 2
    assert "the dealer keyed KD at the dealer" in table.loop.alarms[3].text
    lines = table.recorded_lines()
    keyed = [json.loads(line) for line in lines if '"keyed": true' in line]
    assert [(e["type"], e["card"]) for e in keyed] == [
        ("card", "2C"), ("card", "4D"), ("reveal", "KD"), ("card", "9H")]
    assert settle_log(lines).to_json() == table.settled_json()


def test_a_card_keyed_where_it_lies_stands_the_hands_before_it_and_is_read_once():
    """Camera only, where a stand leaves no trace: a card keyed at seat 2 means seat 1 stood (as
    the camera seeing it land there would); the camera reading that card late does not record it
    twice."""
    table = Table(shoe=False)
    table.send(PlaceBet(1, Decimal("10")), PlaceBet(2, Decimal("10")))
    for code, seat in (("9S", 1), ("8D", 2), ("6S", None), ("8H", 1), ("5C", 2)):
        table.send(FeltCard(C(code), CardTarget(seat, 0)))
    table.send(FeltCard(None, DEALER_SPOT))
    table.send(KeyCard(C("7H"), CardTarget(2, 0)))  # seat 1 (17) stood; seat 2 hits: 8 + 5 + 7 = 20
    table.send(FeltCard(C("7H"), CardTarget(2, 0)))  # the camera reads it at last
    table.send(HoleCardShown(C("KD")))  # 6 + K = 16
    table.send(FeltCard(C("9C"), DEALER_SPOT))  # 25
    table.send(FinishRound())
    assert table.loop.rounds_played == 1
    seats = table.settled_json()["seats"]
    assert [hand["cards"] for seat in seats for hand in seat["hands"]] == [
        ["9S", "8H"], ["8D", "5C", "7H"]]
    assert table.kinds() == [AlarmKind.KEYED_CARD]
    assert "the dealer keyed 7H at seat 2:" in table.loop.alarms[0].text


def test_a_card_keyed_with_no_place_is_read_once_where_the_answer_put_it():
    """Camera only: a card keyed with no place asks which play took it; the camera reading it at
    last where the dealer's answer put it is that card, not another. Its reading was expected at
    the question's first choice's seat, so it was recorded again: seat 2 held 4H twice."""
    table = Table(shoe=False)
    table.send(PlaceBet(1, Decimal("10")), PlaceBet(2, Decimal("10")))
    for code, seat in (("KS", 1), ("5C", 2), ("7H", None), ("5S", 1), ("5D", 2)):
        table.send(FeltCard(C(code), CardTarget(seat, 0)))
    table.send(FeltCard(None, DEALER_SPOT))
    table.send(KeyCard(C("4H")))
    table.answer("STAND seat 1, HIT seat 2")
    table.send(FeltCard(C("4H"), CardTarget(2, 0)))  # the camera reads it at last
    assert table.seat_cards() == [[["KS", "5S"]], [["5C", "5D", "4H"]]]
    assert table.loop.question is None
    assert table.loop.cards_out[C("4H")] == 1


def test_a_keyed_card_asked_about_and_seen_where_no_answer_puts_it_is_recorded_once():
    """Camera only: 4H keyed with no place is asked about; the camera then reads it at seat 1,
    which stood, where no answer puts it: the "card in the wrong place" alarm, never a card
    recorded again."""
    table = Table(shoe=False)
    table.send(PlaceBet(1, Decimal("10")), PlaceBet(2, Decimal("10")))
    for code, seat in (("KS", 1), ("5C", 2), ("7H", None), ("5S", 1), ("5D", 2)):
        table.send(FeltCard(C(code), CardTarget(seat, 0)))
    table.send(FeltCard(None, DEALER_SPOT), FeltCard(C("2C"), CardTarget(2, 0)))
    table.send(KeyCard(C("4H")))
    table.send(FeltCard(C("4H"), CardTarget(1, 0), seen_at=table.now))
    table.answer("HIT seat 2")
    assert table.loop.question is None
    assert table.seat_cards() == [[["KS", "5S"]], [["5C", "5D", "2C", "4H"]]]
    assert table.loop.cards_out[C("4H")] == 1
    assert [a.kind for a in table.loop.disagreements()] == [AlarmKind.MISPLACED]


def test_with_no_shoe_reading_a_finished_round_waits_for_the_dealers_check():
    """Hand-held, nothing questions the camera's reading: when play is over the screen shows
    the payouts the recorded cards give ("check"), and the round is recorded only once the
    dealer, having checked the felt, touches Finish round (or takes the next round's bets)."""
    table = Table(shoe=False)
    table.send(PlaceBet(1, Decimal("10")))
    for code, seat in (("9S", 1), ("6S", None), ("9H", 1)):
        table.send(FeltCard(C(code), CardTarget(seat, 0)))
    table.send(FeltCard(None, DEALER_SPOT), HoleCardShown(C("KD")))
    table.send(FeltCard(C("4C"), DEALER_SPOT))  # dealer 20 against 18
    view = table.loop.view()
    assert view["phase"] == "check" and table.loop.rounds_played == 0
    assert view["settlement"]["seats"][0]["net"] == "-10.00"
    table.send(FinishRound())
    assert table.loop.rounds_played == 1 and table.loop.view()["phase"] == "settled"
    assert table.settled_json()["seats"][0]["net"] == "-10.00"
    table.send(PlaceBet(1, Decimal("10")))
    for code, seat in (("9S", 1), ("6S", None), ("9H", 1)):
        table.send(FeltCard(C(code), CardTarget(seat, 0)))
    table.send(FeltCard(None, DEALER_SPOT), HoleCardShown(C("KD")), FeltCard(C("4C"), DEALER_SPOT))
    assert table.loop.rounds_played == 1
    table.send(PlaceBet(1, Decimal("10")))  # the next round's bet: the dealer moved on
    assert table.loop.rounds_played == 2 and table.loop.view()["phase"] == "betting"
    assert table.kinds() == []


def hand_held_round(table: Table) -> None:
    """Hand-held: seats 1 (9S 8H) and 2 (8D 5C) against the dealer's 6S, the hole card face
    down."""
    table.send(PlaceBet(1, Decimal("10")), PlaceBet(2, Decimal("10")))
    for code, seat in (("9S", 1), ("8D", 2), ("6S", None), ("8H", 1), ("5C", 2)):
        table.send(FeltCard(C(code), CardTarget(seat, 0)))
    table.send(FeltCard(None, DEALER_SPOT))


def test_the_dealer_corrects_a_misread_card_and_the_round_settles_as_dealt():
    """The camera read 7H as 8H and the dealer's 5D as 2D: the dealer corrects the latest card
    at seat 1, and at the dealer's (twice: a slip put right). The round is replayed with each
    correction, the card's line keeps the card first recorded, the camera reading the card anew
    as corrected is no switched card and no second card, and the round log settles as the screen
    showed."""
    table = Table(shoe=False)
    hand_held_round(table)
    table.send(CorrectCard(C("7H"), CardTarget(1)))  # seat 1: 9 + 7 = 16
    assert table.kinds() == [AlarmKind.CORRECTED_CARD]
    assert table.seat_cards()[0][0] == ["9S", "7H"]
    table.send(FeltCard(C("7H"), CardTarget(1, 0)))  # the camera lost it and reads it anew, right
    table.send(FeltCard(C("7C"), CardTarget(2, 0)))  # seat 1 stood on 16; seat 2 hits to 20
    table.send(HoleCardShown(C("KD")))  # dealer 16
    table.send(FeltCard(C("2D"), DEALER_SPOT))  # dealer 18, as read
    assert [s["net"] for s in table.loop.view()["settlement"]["seats"]] == ["-10.00", "10.00"]
    table.send(CorrectCard(C("4D"), DEALER), CorrectCard(C("5D"), DEALER))  # dealer 21
    assert [s["net"] for s in table.loop.view()["settlement"]["seats"]] == ["-10.00", "-10.00"]
    table.send(FeltSwap(C("2D"), C("5D"), DEALER_SPOT))  # the camera reads it right at last
    table.send(FinishRound())
    assert table.kinds() == [AlarmKind.CORRECTED_CARD] * 3
    assert "corrected 4D at the dealer to 5D" in table.loop.alarms[-1].text
    settled = table.settled_json()
    assert settled["dealer"]["cards"] == ["6S", "KD", "5D"]
    assert [seat["net"] for seat in settled["seats"]] == ["-10.00", "-10.00"]
    lines = [json.loads(line) for line in table.recorded_lines()]
    assert [(e["card"], e["corrected"]) for e in lines if "corrected" in e] == [
        ("7H", "8H"), ("5D", "2D")]  # each with the card first recorded
    assert settle_log(table.recorded_lines()).to_json() == settled


def test_an_earlier_card_at_a_place_is_corrected_by_its_index():
    """At the check the dealer finds a seat's first card and the dealer's up card misread, each
    with later cards on top: ``index`` names the card as the screen shows them (0 the first), the
    round is replayed with it, and an index past the cards there is refused, nothing changed."""
    table = Table(shoe=False)
    hand_held_round(table)  # seat 1: 9S 8H; seat 2: 8D 5C; dealer 6S and the hole card
    table.send(FeltCard(C("7C"), CardTarget(2, 0)))  # seat 1 stood on 17; seat 2 hits to 20
    table.send(HoleCardShown(C("KD")))  # dealer 16
    table.send(FeltCard(C("5D"), DEALER_SPOT))  # dealer 21: both seats lose
    assert [s["net"] for s in table.loop.view()["settlement"]["seats"]] == ["-10.00", "-10.00"]
    table.send(CorrectCard(C("9C"), CardTarget(2), index=0))  # seat 2: 9 + 5 + 7 = 21, wins
    assert table.seat_cards()[1][0] == ["9C", "5C", "7C"]
    table.send(CorrectCard(C("5S"), DEALER, index=0))  # the up card: 5 + K + 5 = 20
    assert table.dealer_codes() == ["5S", "KD", "5D"]
    lines = table.loop.round_lines()
    table.send(CorrectCard(C("2C"), DEALER, index=3))
    assert "card 4 at the dealer, but the dealer holds 3 cards face up" in (
        table.loop.alarms[-1].text)
    assert table.loop.round_lines() == lines
    table.send(FinishRound())
    assert table.kinds() == [AlarmKind.CORRECTED_CARD] * 2 + [AlarmKind.ILLEGAL_ACTION]
    settled = table.settled_json()
    assert [seat["net"] for seat in settled["seats"]] == ["-10.00", "10.00"]  # 17 and 21 v 20
    recorded = [json.loads(line) for line in table.recorded_lines()]
    assert [(e["card"], e["corrected"]) for e in recorded if "corrected" in e] == [
        ("9C", "8D"), ("5S", "6S")]
    assert settle_log(table.recorded_lines()).to_json() == settled


def test_a_correction_replays_the_round_as_the_table_would_have_played_it():
    """A bust corrected to 20: that hand stood when play moved on past it. A blackjack corrected
    in: the dealer's draw no result depends on any more is dropped, and the alarm names it. A
    hole card misread at the turn, corrected to a dealer blackjack: the stands written at the
    turn are moot (the peek ended the round)."""
    table = Table(shoe=False)
    hand_held_round(table)  # seat 1: 9S 8H (misread 7H as 8H: 17); seat 2: 8D 5C
    # really 3S: 20, read bust
    table.send(Decide(1, Action.HIT), FeltCard(C("KS"), CardTarget(1, 0)))
    table.send(FeltCard(C("6C"), CardTarget(2, 0)))  # seat 2 hits to 19
    table.send(HoleCardShown(C("KD")))  # seat 2 stood; dealer 16
    table.send(FeltCard(C("2D"), DEALER_SPOT))  # dealer 18
    table.send(CorrectCard(C("3S"), CardTarget(1)))
    assert table.kinds() == [AlarmKind.CORRECTED_CARD]
    assert table.seat_cards()[0][0] == ["9S", "8H", "3S"]
    table.send(FinishRound())
    settled = table.settled_json()
    assert [seat["net"] for seat in settled["seats"]] == ["10.00", "10.00"]  # 20 and 19 v 18
    assert settle_log(table.recorded_lines()).to_json() == settled

    table = Table(shoe=False)
    table.send(PlaceBet(1, Decimal("10")))
    for code, seat in (("KS", 1), ("6S", None), ("5H", 1)):  # 5H: an AH misread
        table.send(FeltCard(C(code), CardTarget(seat, 0)))
    table.send(FeltCard(None, DEALER_SPOT), HoleCardShown(C("KD")))  # 15 stood; dealer 16
    table.send(FeltCard(C("5D"), DEALER_SPOT))  # drawn, as the screen asked: 21
    table.send(CorrectCard(C("AH"), CardTarget(1)))
    assert "5D, drawn by the dealer, is no longer due" in table.loop.alarms[-1].text
    table.send(FinishRound())
    assert table.settled_json()["dealer"]["cards"] == ["6S", "KD"]
    assert table.settled_json()["seats"][0]["hands"][0]["outcome"] == "blackjack"

    table = Table(shoe=False)
    table.send(PlaceBet(1, Decimal("10")), PlaceBet(2, Decimal("10")))
    for code, seat in (("9S", 1), ("9D", 2), ("KS", None), ("7H", 1), ("9C", 2)):
        table.send(FeltCard(C(code), CardTarget(seat, 0)))
    table.send(FeltCard(None, DEALER_SPOT), HoleCardShown(C("3C")))  # really AD
    table.send(CorrectCard(C("AD"), DEALER))
    assert table.kinds() == [AlarmKind.CORRECTED_CARD]
    table.send(FinishRound())
    assert table.settled_json()["dealer"]["blackjack"] is True
    assert [seat["net"] for seat in table.settled_json()["seats"]] == ["-10.00", "-10.00"]


def test_a_correction_names_the_card_the_screen_showed_and_is_refused_if_it_changed():
    """The page sends the card it showed (``was``): a split between the screen's render and the
    touch puts another card at that place and index, so the correction is refused, unchanged;
    a whole seat's cards are counted hand by hand, as the screen shows them."""
    table = Table(shoe=False)
    table.send(PlaceBet(1, Decimal("10")))
    for code, seat in (("8D", 1), ("6S", None), ("8H", 1)):
        table.send(FeltCard(C(code), CardTarget(seat, 0)))
    table.send(FeltCard(None, DEALER_SPOT), Decide(1, Action.SPLIT))
    # 8D 3C | 8H 5H
    table.send(FeltCard(C("3C"), CardTarget(1, 0)), FeltCard(C("5H"), CardTarget(1, 1)))
    lines = table.loop.round_lines()
    table.send(CorrectCard(C("4C"), CardTarget(1, 0), index=1, was=C("5H")))
    assert "correction of 5H at seat 1 hand 1, but that card there is now 3C" in (
        table.loop.alarms[-1].text)
    assert table.loop.round_lines() == lines
    table.send(CorrectCard(C("6H"), CardTarget(1), index=3, was=C("5H")))  # hand 1's 2nd card
    assert table.seat_cards()[0] == [
        ["8D", "3C"], ["8H", "6H"]]


def test_a_correction_stands_the_hands_the_hole_cards_turn_ended_and_not_a_misplaced_hit():
    """A bust corrected to 20 with nothing after the hole card's turn: the turn ended the
    players' turn, so that hand stood (the round goes to the check, not back to play). A card
    seen at seat 1 while seat 2 is to act (seat 1's 21 a misread) fits no play: the table asks,
    and the dealer's correction of the misread answers it, the card placed as seat 1's hit."""
    table = Table(shoe=False)
    table.send(PlaceBet(1, Decimal("10")))
    for code, seat in (("9S", 1), ("7S", None), ("7H", 1)):
        table.send(FeltCard(C(code), CardTarget(seat, 0)))
    table.send(FeltCard(None, DEALER_SPOT), FeltCard(C("KS"), CardTarget(1, 0)))  # really 4S: 20
    table.send(HoleCardShown(C("KD")))  # 17
    table.send(CorrectCard(C("4S"), CardTarget(1, 0), was=C("KS")))
    assert table.loop.view()["phase"] == "check"
    table.send(FinishRound())
    assert table.settled_json()["seats"][0]["net"] == "10.00"

    table = Table(shoe=False)
    table.send(PlaceBet(1, Decimal("10")), PlaceBet(2, Decimal("10")))
    for code, seat in (("9S", 1), ("8D", 2), ("6S", None), ("2H", 1), ("9C", 2)):
        table.send(FeltCard(C(code), CardTarget(seat, 0)))
    table.send(FeltCard(None, DEALER_SPOT), Decide(1, Action.HIT))
    table.send(FeltCard(C("KC"), CardTarget(1, 0)))  # really 5C: 16; read 21, seat 1 done
    table.send(FeltCard(C("3D"), CardTarget(1, 0)))  # seat 1's next hit: no play puts it there now
    assert table.loop.question is not None and table.loop.rounds_played == 0
    table.send(CorrectCard(C("5C"), CardTarget(1, 0), was=C("KC")))  # the misread put right
    assert table.loop.question is None  # and 3D is seat 1's hit after all: 9 + 2 + 5 + 3 = 19
    assert [hands[0] for hands in table.seat_cards()] == [
        ["9S", "2H", "5C", "3D"], ["8D", "9C"]]


def test_a_correction_stands_a_hand_before_a_touched_hit_and_its_keyed_card():
    """Seat 1's hit misread as a bust; the dealer touched HIT for seat 2 and keyed its card as
    next due (no place): seat 1 stood on 19 before seat 2's hit, so the correction holds."""
    table = Table(shoe=False)
    table.send(PlaceBet(1, Decimal("10")), PlaceBet(2, Decimal("10")))
    for code, seat in (("9S", 1), ("8H", 2), ("6D", None), ("7H", 1), ("5C", 2)):
        table.send(FeltCard(C(code), CardTarget(seat, 0)))
    table.send(FeltCard(None, DEALER_SPOT), FeltCard(C("KD"), CardTarget(1, 0)))  # really 3D: 19
    table.send(Decide(2, Action.HIT), KeyCard(C("3C")))
    table.send(CorrectCard(C("3D"), CardTarget(1, 0), was=C("KD")))
    assert table.kinds()[-1] is AlarmKind.CORRECTED_CARD
    assert [hands[0] for hands in table.seat_cards()] == [
        ["9S", "7H", "3D"], ["8H", "5C", "3C"]]


def test_correcting_a_misread_card_again_leaves_a_keyed_card_awaited():
    """A camera-read card corrected twice (a slip put right) is no keyed card: the second
    correction leaves the entry of a real keyed card of that code alone, so the camera reading
    the keyed card at last records it once."""
    table = Table(shoe=False)
    table.send(PlaceBet(1, Decimal("10")))
    for code, seat in (("5C", 1), ("6S", None), ("2D", 1)):
        table.send(FeltCard(C(code), CardTarget(seat, 0)))
    table.send(FeltCard(None, DEALER_SPOT))
    table.send(CorrectCard(C("6C"), CardTarget(1), index=0))  # a slip: it is a 7C
    # a hit the camera cannot read
    table.send(Decide(1, Action.HIT), KeyCard(C("6C"), CardTarget(1, 0)))
    table.send(CorrectCard(C("7C"), CardTarget(1), index=0))
    table.send(FeltCard(C("6C"), CardTarget(1, 0)))  # the keyed 6C read at last
    assert table.seat_cards()[0][0] == ["7C", "2D", "6C"]


def test_the_hole_card_turned_and_misread_is_corrected_in_its_reveal():
    table = Table(shoe=False)
    hand_held_round(table)
    table.send(FeltCard(C("7C"), CardTarget(2, 0)), HoleCardShown(C("KD")))
    table.send(CorrectCard(C("QD"), DEALER))
    table.send(FeltCard(C("5H"), DEALER_SPOT), FinishRound())
    lines = [json.loads(line) for line in table.recorded_lines()]
    assert {"type": "reveal", "card": "QD", "corrected": "KD"} in lines
    assert table.settled_json()["dealer"]["cards"] == ["6S", "QD", "5H"]


def test_corrections_the_table_cannot_take_are_refused_and_change_nothing():
    table = Table()
    deal(table, {1: ("9S", "8H")}, up="6S", hole="KD")
    table.send(ShoeLink(False, "EIO"))  # a fitted shoe's card stands, its link down or not:
    table.send(CorrectCard(C("7H"), CardTarget(1)))  # its resend is checked against the felt
    assert "the shoe's card stands" in table.loop.alarms[-1].text
    hand_held = Table(shoe=False)
    hand_held.send(CorrectCard(C("7H"), CardTarget(1)))
    assert "no round is in play" in hand_held.loop.alarms[-1].text
    hand_held_round(hand_held)
    lines = hand_held.loop.round_lines()
    for correction, why in (
        (CorrectCard(C("7H"), CardTarget(3)), "seat 3 holds no card"),
        (CorrectCard(C("8H"), CardTarget(1)), "already 8H"),
        (CorrectCard(C("TH"), CardTarget(1)), "no tens"),
    ):
        hand_held.send(correction)
        assert why in hand_held.loop.alarms[-1].text
    hand_held.send(FeltCard(C("9C"), CardTarget(1, 0)))  # seat 1 hits: 9 + 8 + 9 = 26, bust
    hand_held.send(FeltCard(C("7C"), CardTarget(2, 0)))  # seat 2: 5 + 8 + 7 = 20
    hand_held.send(CorrectCard(C("AS"), CardTarget(1), index=0))  # A 8 9: 18, stood
    assert hand_held.kinds()[-1] is AlarmKind.CORRECTED_CARD
    lines = hand_held.loop.round_lines()
    # 8H read as KH too would make seat 1 a blackjack, which is never hit: the round as played
    # after it does not hold, so the dealer must call the floor.
    hand_held.send(CorrectCard(C("KH"), CardTarget(1), index=1))
    assert hand_held.loop.round_lines() == lines
    assert hand_held.kinds()[-1] is AlarmKind.ILLEGAL_ACTION
    assert "void the round" in hand_held.loop.alarms[-1].text
    assert hand_held.kinds().count(AlarmKind.CORRECTED_CARD) == 1


def test_a_corrected_card_read_right_at_last_leaves_the_next_card_of_its_code_recorded():
    """The camera reads the corrected card as corrected where it lies: that reading is taken,
    so a real card of the same code dealt later is recorded, not swallowed as that reading."""
    table = Table(shoe=False)
    hand_held_round(table)
    table.send(CorrectCard(C("7H"), CardTarget(1)))  # 9S 7H
    table.send(FeltSwap(C("8H"), C("7H"), CardTarget(1, 0)))  # the tracker reads it right at last
    table.send(FeltCard(C("7H"), CardTarget(2, 0)))  # seat 2 hits a real 7H: 8 + 5 + 7 = 20
    assert table.seat_cards()[1][0] == ["8D", "5C", "7H"]
    assert table.kinds() == [AlarmKind.CORRECTED_CARD]


def test_correcting_a_misread_card_leaves_a_keyed_card_of_that_code_read_once():
    """Seat 1's card read as 5C is corrected; seat 2's real 5C was keyed, so the camera reading
    it late is still that keyed card, not a second one."""
    table = Table(shoe=False)
    table.send(PlaceBet(1, Decimal("10")), PlaceBet(2, Decimal("10")))
    for code, seat in (("9S", 1), ("8D", 2), ("6S", None), ("5C", 1)):
        table.send(FeltCard(C(code), CardTarget(seat, 0)))
    table.send(KeyCard(C("5C"), CardTarget(2, 0)), FeltCard(None, DEALER_SPOT))
    table.send(CorrectCard(C("8C"), CardTarget(1)))  # seat 1: 9 + 8 = 17
    table.send(FeltCard(C("5C"), CardTarget(2, 0)))  # the keyed 5C read at last
    assert [hand for hands in table.seat_cards() for hand in hands] == [["9S", "8C"], ["8D", "5C"]]
    assert table.loop.engine.acting() == (1, 0)  # seat 1 still deciding: nothing moved on


def test_after_a_split_a_correction_finds_the_card_in_the_hand_it_lies_in():
    """8D 8H split: the 8H lies in hand 1 now, though it was dealt to hand 0."""
    table = Table(shoe=False)
    table.send(PlaceBet(1, Decimal("10")))
    for code, seat in (("8D", 1), ("6S", None), ("8H", 1)):
        table.send(FeltCard(C(code), CardTarget(seat, 0)))
    table.send(FeltCard(None, DEALER_SPOT), Decide(1, Action.SPLIT))
    table.send(FeltCard(C("3C"), CardTarget(1, 0)))  # hand 0: 8D 3C
    table.send(CorrectCard(C("2C"), CardTarget(1, 0)), CorrectCard(C("8S"), CardTarget(1, 1)))
    assert table.seat_cards()[0] == [["8D", "2C"], ["8S"]]
    assert table.kinds() == [AlarmKind.CORRECTED_CARD] * 2
    assert "corrected 8H at seat 1 hand 2 to 8S" in table.loop.alarms[-1].text


def test_a_misread_blackjack_is_corrected_after_the_next_seat_acted():
    """Seat 1's AH read as KS (KS 8H: 18) is corrected after seat 2's hit: the stand the table
    wrote for seat 1 is moot with a blackjack and is dropped; seat 2's card stays seat 2's."""
    table = Table(shoe=False)
    table.send(PlaceBet(1, Decimal("10")), PlaceBet(2, Decimal("10")))
    for code, seat in (("KS", 1), ("8D", 2), ("6S", None), ("8H", 1), ("5C", 2)):
        table.send(FeltCard(C(code), CardTarget(seat, 0)))
    table.send(FeltCard(None, DEALER_SPOT), FeltCard(C("7C"), CardTarget(2, 0)))  # seat 1 stood
    table.send(CorrectCard(C("AH"), CardTarget(1, 0)))
    assert table.kinds()[-1] is AlarmKind.CORRECTED_CARD, table.loop.alarms[-1].text
    assert not any('"action": "stand", "seat": 1' in line or '"seat": 1, "action": "stand"'
                   in line for line in table.loop.round_lines())
    table.send(HoleCardShown(C("KD")), FeltCard(C("3D"), DEALER_SPOT), FinishRound())
    settled = table.settled_json()
    assert [s["net"] for s in settled["seats"]] == ["15.00", "10.00"]  # 3:2; 20 against 19
    assert settle_log(table.recorded_lines()).to_json() == settled


def test_a_card_corrected_back_to_what_was_first_recorded_carries_no_correction():
    table = Table(shoe=False)
    hand_held_round(table)
    table.send(CorrectCard(C("7H"), CardTarget(1)), CorrectCard(C("8H"), CardTarget(1)))
    assert not any("corrected" in line for line in table.loop.round_lines())
    assert table.kinds() == [AlarmKind.CORRECTED_CARD] * 2


def test_a_round_still_owed_the_hole_card_is_not_shown_as_waiting_for_the_check():
    table = Table(shoe=False)
    table.send(PlaceBet(1, Decimal("10")))
    for code, seat in (("9S", 1), ("6S", None), ("8H", 1)):
        table.send(FeltCard(C(code), CardTarget(seat, 0)))
    table.send(FeltCard(None, DEALER_SPOT), FeltCard(C("KC"), CardTarget(1, 0)))  # 27: bust
    assert table.loop.view()["phase"] == "dealer"  # the hole card is still to be turned
    table.send(HoleCardShown(C("KD")))
    assert table.loop.view()["phase"] == "check"


def test_a_correction_counts_the_corrected_card_out_of_the_pack_not_the_misread_one():
    """Six decks hold six 7H. With five out, a card corrected to 7H is the sixth; a second
    correction to 7H is refused as beyond the composition, and the misread card it would have
    replaced still counts."""
    table = Table(shoe=False)
    table.send(PlaceBet(1, Decimal("10")), PlaceBet(2, Decimal("10")))
    for code, seat in (("9S", 1), ("7H", 2), ("6S", None), ("8H", 1), ("7H", 2)):
        table.send(FeltCard(C(code), CardTarget(seat, 0)))
    table.send(FeltCard(None, DEALER_SPOT))
    table.send(Decide(2, Action.SPLIT))  # 7H 7H split: 7H 7H QC (bust), 7H 7H 7H
    table.send(FeltCard(C("7H"), CardTarget(2, 0)), FeltCard(C("QC"), CardTarget(2, 0)))
    table.send(FeltCard(C("7H"), CardTarget(2, 1)), FeltCard(C("7H"), CardTarget(2, 1)))
    assert table.loop.cards_out[C("7H")] == 5 and table.kinds() == []
    table.send(CorrectCard(C("7H"), CardTarget(1)))  # the 8H was a 7H: the sixth
    assert table.kinds() == [AlarmKind.CORRECTED_CARD] and table.loop.cards_out[C("8H")] == 0
    table.send(CorrectCard(C("7H"), DEALER))  # the dealer's 6S a 7H: a seventh
    assert table.kinds()[-1] is AlarmKind.BEYOND_COMPOSITION
    assert table.loop.cards_out[C("7H")] == 6 and table.loop.cards_out[C("6S")] == 1


def test_a_keyed_card_never_read_does_not_swallow_a_card_of_its_code_at_another_seat():
    """Seat 1's 3S is keyed (the camera never reads it); seat 2's own 3S, read by the camera, is
    seat 2's card, not the keyed one read late (it was swallowed, and keyed again)."""
    table = Table(shoe=False)
    table.send(PlaceBet(1, Decimal("10")), PlaceBet(2, Decimal("10")))
    for code, seat in (("9S", 1), ("8D", 2), ("6S", None), ("8H", 1), ("5C", 2)):
        table.send(FeltCard(C(code), CardTarget(seat, 0)))
    table.send(FeltCard(None, DEALER_SPOT))
    table.send(Decide(1, Action.HIT), KeyCard(C("3S"), CardTarget(1, 0)))  # 9 + 8 + 3 = 20
    table.send(FeltCard(C("3S"), CardTarget(2, 0)))  # seat 1 stood; seat 2 hits: 8 + 5 + 3 = 16
    assert [hand for hands in table.seat_cards() for hand in hands] == [
        ["9S", "8H", "3S"], ["8D", "5C", "3S"]]
    table.send(FeltCard(C("3S"), CardTarget(1, 0)))  # the keyed card read at last: nothing new
    assert table.loop.engine.acting() == (2, 0)
    assert table.kinds() == [AlarmKind.KEYED_CARD]


def test_a_card_the_dealer_entered_is_awaited_only_where_it_lies_and_only_until_read():
    """The camera's next reading of a code the dealer entered is that card only where the card
    lies, and only while the camera has not read it: a corrected card the camera had read
    (it comes back as a changed reading), a keyed hole card read when turned, and a card keyed
    at seat 1 but recorded as seat 2's hit leave the next real card of their code recorded,
    and no card is recorded twice."""
    table = Table(shoe=False)
    table.send(PlaceBet(1, Decimal("10")), PlaceBet(2, Decimal("10")))
    for code, seat in (("5H", 1), ("9C", 2), ("6S", None), ("6H", 1), ("9D", 2)):
        table.send(FeltCard(C(code), CardTarget(seat, 0)))
    table.send(FeltCard(None, DEALER_SPOT))
    table.send(CorrectCard(C("5D"), CardTarget(1)))  # seat 1's 6H was a 5D: 10
    # a real 5D, then 3C
    table.send(FeltCard(C("5D"), CardTarget(1, 0)), FeltCard(C("3C"), CardTarget(1, 0)))
    assert table.seat_cards()[0][0] == ["5H", "5D", "5D", "3C"]
    table.send(KeyCard(C("4D"), DEALER_SPOT))  # the hole card turned, unread: 6 + 4 = 10
    table.send(HoleCardShown(C("4D")))  # read at last
    table.send(FeltCard(C("4D"), DEALER_SPOT), FeltCard(C("5C"), DEALER_SPOT))  # 14, 19
    assert table.dealer_codes() == ["6S", "4D", "4D", "5C"]
    table.send(FinishRound())
    assert [s["net"] for s in table.settled_json()["seats"]] == ["-10.00", "-10.00"]

    table = Table(shoe=False)
    table.send(PlaceBet(1, Decimal("10")), PlaceBet(2, Decimal("10")))
    for code, seat in (("9S", 1), ("8D", 2), ("6S", None), ("9H", 1), ("5C", 2)):
        table.send(FeltCard(C(code), CardTarget(seat, 0)))
    table.send(FeltCard(None, DEALER_SPOT), Decide(1, Action.STAND))
    table.send(KeyCard(C("7H"), CardTarget(1, 0)))  # seat 1 stood: keyed where no play puts it
    table.answer("HIT seat 2")  # the dealer says it was seat 2's hit
    table.send(FeltCard(C("7H"), CardTarget(1, 0)))  # the camera reads it where it lies
    assert table.seat_cards()[1][0] == ["8D", "5C", "7H"]
    assert table.loop.cards_committed == 7


def test_after_a_split_touched_with_the_camera_lost_a_correction_finds_the_split_hand():
    table = Table(shoe=False)
    table.send(PlaceBet(1, Decimal("10")), PlaceBet(2, Decimal("10")))
    for code, seat in (("9S", 1), ("8D", 2), ("6S", None), ("2H", 1), ("8H", 2)):
        table.send(FeltCard(C(code), CardTarget(seat, 0)))
    table.send(FeltCard(None, DEALER_SPOT), CameraLink(False, "cable"))
    table.send(Decide(1, Action.DOUBLE), KeyCard(C("5C")))  # seat 1: 9 2 5 doubled
    table.send(Decide(2, Action.SPLIT))  # 8D | 8H
    table.send(CorrectCard(C("8S"), CardTarget(2, 1)))  # the 8H in hand 1 was an 8S
    assert table.seat_cards()[1] == [["8D"], ["8S"]]
    table.send(CorrectCard(C("3H"), CardTarget(1, 1)))  # seat 1 has no hand 1
    assert "seat 1 hand 2 holds no card" in table.loop.alarms[-1].text


def test_keyed_cards_refused_leave_the_pack_count_as_it_was():
    """Six decks hold six 7H; seven keyed when no card is due (the only player bust, the hole
    card still face down) are each refused, and none is counted out: no false 'beyond the
    composition'."""
    table = Table(shoe=False)
    table.send(PlaceBet(1, Decimal("10")))
    for code, seat in (("9S", 1), ("5S", None), ("7H", 1)):
        table.send(FeltCard(C(code), CardTarget(seat, 0)))
    table.send(FeltCard(None, DEALER_SPOT))
    table.send(KeyCard(C("KC")))
    table.answer("HIT seat 1")  # to 26: the round waits for the hole card
    table.send(*[KeyCard(C("7H"))] * 7)
    assert AlarmKind.BEYOND_COMPOSITION not in table.kinds()
    assert table.kinds().count(AlarmKind.ILLEGAL_ACTION) == 7
    table.send(HoleCardShown(C("7H")))  # a sixth 7H is no more than six decks hold
    table.send(FinishRound())  # the dealer's draws could change nothing
    assert table.loop.rounds_played == 1 and AlarmKind.BEYOND_COMPOSITION not in table.kinds()


def test_a_keyed_card_is_refused_while_the_shoe_reads_without_a_round_or_as_a_ten():
    table = Table(camera=False)
    table.send(KeyCard(C("7H")))
    assert table.kinds() == [AlarmKind.ILLEGAL_ACTION] and "shoe is reading" in (
        table.loop.alarms[-1].text)
    hand_held = Table(shoe=False)
    hand_held.send(KeyCard(C("7H")))
    assert hand_held.kinds() == [AlarmKind.ILLEGAL_ACTION] and "no round is in play" in (
        hand_held.loop.alarms[-1].text)
    hand_held.send(PlaceBet(1, Decimal("10")), KeyCard(C("TH")))
    assert hand_held.kinds()[-1] is AlarmKind.PIP_TEN
    assert "the dealer keyed TH" in hand_held.loop.alarms[-1].text
    assert table.loop.cards_committed == hand_held.loop.cards_committed == 0


@pytest.mark.parametrize("camera", [True, False])
def test_a_round_no_draw_can_change_closes_at_once_and_a_later_dealer_draw_is_refused(camera):
    """Rules §3.7: the dealer draws only while some result depends on the dealer's total. Once
    every hand is busted the round is settled, and a card the dealer draws anyway is a card
    nobody is due (§6): an alarm, and nothing recorded."""
    table = Table(camera=camera)
    deal(table, {1: ("9S", "7H")}, up="5S", hole="6D")
    if not camera:
        table.send(Decide(1, Action.HIT))  # with no camera the dealer touches every decision
    table.card("KC", 1)  # seat 1 busts: no draw by the dealer could change anything
    assert not table.loop.round_open and table.loop.rounds_played == 1
    assert table.settled_json()["dealer"]["cards"] == ["5S", "6D"]
    assert table.settled_json()["net"] == "-10.00" and table.loop.alarms == []
    table.card("8H", None)
    assert table.kinds() == [AlarmKind.ILLEGAL_ACTION]
    assert "round r-" in table.loop.alarms[0].text and "is settled" in table.loop.alarms[0].text
    assert table.loop.rounds_played == 1
    assert table.settled_json()["dealer"]["cards"] == ["5S", "6D"]


def test_a_hand_held_round_with_no_draw_due_refuses_a_dealer_draw_before_the_check():
    table = Table(shoe=False)
    table.send(PlaceBet(1, Decimal("10")))
    for code, seat in (("9S", 1), ("5S", None), ("7H", 1)):
        table.send(FeltCard(C(code), CardTarget(seat, 0)))
    table.send(FeltCard(None, DEALER_SPOT))
    table.send(FeltCard(C("KC"), CardTarget(1, 0)))  # a hit: seat 1 busts
    table.send(HoleCardShown(C("6D")))
    assert table.loop.view()["phase"] == "check"
    table.send(FeltCard(C("8H"), DEALER_SPOT))  # drawn though no result depends on it
    assert table.kinds() == [AlarmKind.ILLEGAL_ACTION]
    assert "no hand's result depends on the dealer" in table.loop.alarms[0].text
    table.send(FinishRound())
    assert table.settled_json()["dealer"]["cards"] == ["5S", "6D"]
    assert table.settled_json()["net"] == "-10.00"


@pytest.mark.parametrize("camera", [True, False])
@pytest.mark.parametrize("hole", ["KD", "5D"])
def test_insurance_at_a_shoe_table_hides_the_peek_until_the_dealer_closes_it(camera, hole):
    """The shoe reads the hole card at once, so the loop knows at the deal whether the dealer
    has blackjack. With an ace up the screen shows neither that nor the absence of it (the hole
    card, a hand to act, the payouts) until the dealer has taken the insurance bets and touched
    Close insurance; a dealer blackjack then settles the round with insurance paid 2:1 (it had
    settled at the hole card, no insurance taken), and without one play goes on."""
    table = Table(camera=camera)
    deal(table, {1: ("9S", "7H"), 2: ("AH", "KC")}, up="AC", hole=hole)
    view = table.loop.view()
    assert table.loop.round_open and view["phase"] == "insurance"
    assert view["round"]["dealer"] == {"cards": ["AC", None], "total": None}
    assert (view["round"]["acting"], view["round"]["legal_actions"]) == (None, [])
    assert view["settlement"] is None and "then Close insurance" in view["round"]["state"]
    table.send(Insure(1, Decimal("5")), CloseInsurance())
    table.send(Insure(2, Decimal("5")))  # too late: refused
    assert table.kinds() == [AlarmKind.BET_REFUSED]
    if hole == "KD":
        settled = table.settled_json()
        assert settled["seats"][0]["insurance"]["net"] == "10.00"
        assert [seat["net"] for seat in settled["seats"]] == ["0.00", "15.00"]  # -10 + 10; 3:2
    else:
        view = table.loop.view()
        assert view["phase"] == "playing" and view["round"]["acting"] == [1, 0]
        assert view["round"]["dealer"]["cards"] == ["AC", None]  # still face down in play
        table.send(Decide(1, Action.STAND))
        table.card("2C", None)  # dealer 16 + 2 = 18 (soft 16 hits, H17)
        settled = table.settled_json()
        assert settled["seats"][0]["insurance"]["net"] == "-5.00"
        assert [seat["net"] for seat in settled["seats"]] == ["-15.00", "15.00"]


def test_nothing_touched_during_insurance_shows_what_the_peek_will_find():
    """Finish round and the next bet are refused while insurance is open at a shoe table (on a
    dealer blackjack the first settled at once, without one it said a hand had not finished),
    the pack count on the screen leaves the hole card out, and insurance the dealer closed
    shows closed (the page offers INSURE while it shows open)."""
    for hole in ("KD", "5D"):
        table = Table(camera=False)
        deal(table, {1: ("9S", "7H")}, up="AC", hole=hole)
        table.send(FinishRound(), PlaceBet(2, Decimal("10")))
        assert table.kinds() == [AlarmKind.ILLEGAL_ACTION, AlarmKind.BET_REFUSED]
        texts = [alarm.text for alarm in table.loop.alarms]
        assert "cannot close while insurance is open" in texts[0]
        assert "insurance is open in round r-00001: close insurance first" in texts[1]
        view = table.loop.view()
        assert view["phase"] == "insurance" and view["settlement"] is None
        assert hole not in view["round"]["shoe_counts"]
        table.send(CloseInsurance())
        assert table.loop.view()["round"]["insurance_open"] is False


@pytest.mark.parametrize("moved_on", ["hole card turned", "hit card", "decision"])
def test_play_moving_on_closes_insurance_the_dealer_did_not_close(moved_on):
    """The dealer turns the hole card, deals a hit or touches a decision without touching Close
    insurance: insurance closes all the same (an INSURE after it is refused), and only then
    does anything that follows name the dealer's blackjack."""
    table = Table(camera=moved_on == "hole card turned")
    deal(table, {1: ("9S", "7H")}, up="AC", hole="KD")
    assert table.loop.view()["phase"] == "insurance"
    if moved_on == "hole card turned":
        table.send(HoleCardShown(C("KD")))
    elif moved_on == "hit card":
        table.send(ShoeCard(C("2C")))
    else:
        table.send(Decide(1, Action.STAND))
    table.send(Insure(1, Decimal("5")))
    assert table.loop.rounds_played == 1 and table.settled_json()["seats"][0]["insurance"] is None
    assert table.kinds()[-1] is AlarmKind.BET_REFUSED


def test_a_hand_held_game_never_waits_for_close_insurance():
    """Camera only: the camera missed the face-down hole card and read it turned, a blackjack
    under the ace; nothing was known before the peek, so the round goes to the dealer's check."""
    table = Table(shoe=False)
    table.send(PlaceBet(1, Decimal("10")))
    for code, seat in (("9S", 1), ("AC", None), ("7H", 1)):
        table.send(FeltCard(C(code), CardTarget(seat, 0)))
    table.send(HoleCardShown(C("KD")))
    view = table.loop.view()
    assert view["phase"] == "check" and view["round"]["dealer"]["cards"] == ["AC", "KD"]
    assert view["settlement"]["seats"][0]["net"] == "-10.00"


def test_the_screen_shows_a_hole_card_the_shoe_read_only_once_the_players_are_done():
    table = Table(camera=False)
    deal(table, {1: ("9S", "7H")}, up="6S", hole="KD")
    assert table.loop.view()["round"]["dealer"] == {"cards": ["6S", None], "total": None}
    assert table.dealer_codes() == ["6S", "KD"]  # the loop knows it
    table.send(Decide(1, Action.STAND))
    assert table.loop.view()["round"]["dealer"] == {"cards": ["6S", "KD"], "total": 16}


def test_a_habit_draw_is_let_pass_only_at_the_dealers_and_before_the_next_deal():
    """The camera never saw the habit draw's 5D land; the next round's real 5D, a hit at seat 2,
    is recorded there, not swallowed as that draw's sighting. A sighting seen before the shoe
    reported it, the next bet in between, waits for its shoe card and takes it out of the round."""
    table = Table()
    deal(table, {1: ("9S", "7H")}, up="6S", hole="KD")
    table.card("QS", 1)  # bust: settled
    table.send(ShoeCard(C("5D")))  # the habit draw, never seen
    deal(table, {1: ("KS", "8H"), 2: ("9D", "3C")}, up="7C", hole="2C")
    table.card("5D", 2)  # seat 1 stood on 18; seat 2 hits
    table.wait(5.0)
    assert [hands[0] for hands in table.seat_cards()] == [
        ["KS", "8H"], ["9D", "3C", "5D"]]

    table = Table()
    deal(table, {1: ("9S", "7H")}, up="6S", hole="KD")
    table.card("QS", 1)
    table.send(FeltCard(C("5D"), DEALER_SPOT))  # the camera first
    table.send(PlaceBet(1, Decimal("10")))
    table.send(ShoeCard(C("5D")))  # the shoe's report, late
    table.card("KS", 1)
    table.card("7C", None)
    table.wait(3.0)
    assert "5D was drawn to the dealer after the last round settled" in (
        table.loop.alarms[0].text)
    assert table.seat_cards()[0][0] == ["KS"]
    assert table.dealer_codes() == ["7C"]


def test_a_habit_draws_sighting_is_never_a_card_of_the_next_round_when_the_shoe_link_drops():
    table = Table()
    deal(table, {1: ("9S", "7H")}, up="6S", hole="KD")
    table.card("QS", 1)
    table.send(FeltCard(C("5D"), DEALER_SPOT), PlaceBet(1, Decimal("10")))  # the camera first
    table.send(ShoeLink(False, "cable"))  # landings are now read from the camera alone
    assert table.seat_cards()[0][0] == []
    assert "5D was seen at the dealer's after the last round settled" in (
        table.loop.alarms[-1].text)


@pytest.mark.parametrize("camera_sees_it", [True, False])
def test_a_card_drawn_after_the_round_settled_goes_into_no_round(camera_sees_it):
    """Shoe and camera: every hand busts, the round settles; the dealer draws a card out of habit
    and the next bet comes before the camera reports it landing (or it never does). The card is
    in no round: its alarm, and the next round starts with its own first card."""
    table = Table()
    deal(table, {1: ("9S", "7H")}, up="6S", hole="KD")
    table.card("QS", 1)  # 26: bust, the round settles
    table.send(ShoeCard(C("5D")))  # drawn by habit
    table.send(PlaceBet(1, Decimal("10")))
    if camera_sees_it:
        table.send(FeltCard(C("5D"), DEALER_SPOT))
    table.wait(2.0)
    table.card("2C", 1)
    assert table.kinds() == [AlarmKind.ILLEGAL_ACTION]
    assert "5D dealt at the table but round r-00001 is settled" in table.loop.alarms[0].text
    assert table.seat_cards()[0][0] == ["2C"]
    assert table.dealer_codes() == []


@pytest.mark.parametrize("camera", [True, False])
def test_simulated_rounds_settle_exactly_as_played(camera):
    rules = RuleSet.preset("h17-ddd-6")
    world = SimulatedTable(rules, [Player(s, f"P{s}") for s in (1, 2, 4, 6, 7)], seed=7)
    world.camera_sees = camera
    table = Table(camera=camera)
    for number in range(1, 61):
        for _, item in world.round(number):
            table.send(item)
        assert table.loop.rounds_played == number, [a.text for a in table.loop.alarms]
        got = table.settled_json()
        want = world.settlements[-1].to_json()
        for key in ("dealer", "seats", "net"):
            assert got[key] == want[key]
    assert table.loop.alarms == []


def test_the_round_logs_exported_from_the_store_settle(tmp_path):
    recording = open_recording(tmp_path, "T1")
    loop = TableLoop("s17-6", recording.recorder, has_camera=False)
    loop.dealer = "D1"  # signed in (signing in: test_sign_in.py)
    loop.handle(ShoeLink(True), 0.0)
    world = SimulatedTable(RuleSet.preset("s17-6"), [Player(3, "A")], seed=3)
    world.camera_sees = False
    for number in (1, 2):
        for _, item in world.round(number):
            loop.handle(item, 0.0)
    recording.close()  # what the store was handed is written and exported
    files = sorted((tmp_path / "rounds").glob("*.jsonl"))
    assert len(files) == 2
    for path, want in zip(files, world.settlements, strict=True):
        assert settle_log(path.read_text().splitlines()).seats == want.seats


@pytest.mark.parametrize(
    ("amount", "words"),
    [
        ("15.00", ("PAY", "$15.00")),
        ("-1000.00", ("TAKE", "$1,000.00")),
        ("0.00", ("PUSH", "$0.00")),
    ],
)
def test_payout_words(amount, words):
    assert payout_words(amount) == words


def test_hole_card_is_taken_from_the_shoe_without_waiting_for_the_camera():
    table = Table()
    table.send(PlaceBet(1, Decimal("10")))
    table.card("9S", 1)
    table.card("6S", None)
    table.card("3H", 1)
    # The camera reports the next card (a hit) before the shoe has reported the hole card.
    table.send(FeltCard(C("2C"), CardTarget(1, 0)), FeltCard(None, DEALER_SPOT))
    table.send(ShoeCard(C("KD")), ShoeCard(C("2C")))
    table.wait(5.0)
    assert table.dealer_codes() == ["6S", "KD"]
    assert table.seat_cards()[0][0] == ["9S", "3H", "2C"]
    assert table.loop.alarms == []


def test_the_hole_card_is_never_paired_with_a_landing_at_a_seat_as_switched():
    """The hole card lies face down, so it is taken from the shoe with no landing, also when the
    pairing goes on past a card placed unseen: here 8H's landing was unsure, a QS the shoe
    never dealt lies at seat 1, and the dealer's touch moves the game on. KD is the hole card,
    and QS a card that never left the shoe, not "the shoe dealt KD but QS is on the felt"."""
    table = Table()
    table.send(PlaceBet(1, Decimal("10")))
    table.card("9S", 1)
    table.card("6S", None)
    table.send(ShoeCard(C("8H")))
    table.send(FeltCard(C("AH"), CardTarget(1, 0), verdict="unsure", checked=C("8H")))
    table.send(FeltCard(C("QS"), CardTarget(1, 0)))
    table.send(ShoeCard(C("KD")), FeltCard(None, DEALER_SPOT))
    table.send(Decide(1, Action.STAND))
    table.wait(3)
    assert table.seat_cards() == [[["9S", "8H"]]] and table.dealer_codes()[:2] == ["6S", "KD"]
    assert table.kinds() == [AlarmKind.NOT_FROM_SHOE]
    assert "QS appeared at seat 1 but never left the shoe" in table.loop.alarms[0].text


def test_the_camera_is_not_said_to_have_missed_the_hole_card_it_cannot_see():
    """A seat card whose landing never came, then the hole card: both wait out the camera's
    wait; the seat card's alarm says the camera missed it, the face-down hole card has none."""
    table = Table()
    table.send(PlaceBet(1, Decimal("10")))
    table.card("9S", 1)
    table.card("6S", None)
    table.send(ShoeCard(C("8H")), ShoeCard(C("KD")), FeltCard(None, DEALER_SPOT))
    table.wait(2.0)
    assert table.seat_cards() == [[["9S", "8H"]]] and table.dealer_codes()[:2] == ["6S", "KD"]
    missed = [a.text for a in table.loop.alarms if a.kind is AlarmKind.CAMERA_MISSED]
    assert len(missed) == 1 and "8H" in missed[0]


def test_camera_only_simulated_rounds_settle_exactly_as_played():
    """A hand-held game: no shoe, the camera reads every card; the hole card lies face down, so
    the camera never reports it until it is turned; the dealer touches "new shoe" at each
    shuffle."""
    world = SimulatedTable(
        RuleSet.preset("s17-6"), [Player(s, f"P{s}") for s in (2, 3, 5)], seed=12
    )
    table = Table(shoe=False, rules="s17-6")
    for number in range(1, 41):
        for channel, item in world.round(number):
            face_down = isinstance(item, FeltCard) and item.card is None
            if (channel != "shoe" or isinstance(item, NewShoe)) and not face_down:
                table.send(item)
        assert table.loop.rounds_played == number, [a.text for a in table.loop.alarms]
        got, want = table.settled_json(), world.settlements[-1].to_json()
        assert (got["dealer"], got["seats"]) == (want["dealer"], want["seats"])
    assert table.loop.alarms == []


def test_void_round_records_apart_and_the_table_goes_on(tmp_path):
    recording = open_recording(tmp_path, "T1")
    loop = TableLoop("h17-ddd-6", recording.recorder, has_camera=False)
    loop.dealer = "D1"  # signed in (signing in: test_sign_in.py)
    loop.handle(ShoeLink(True), 0.0)
    loop.handle(PlaceBet(1, Decimal("10")), 0.1)
    loop.handle(ShoeCard(C("9S")), 0.2)
    loop.handle(ShoeCard(C("TH")), 0.3)  # a pip ten: the round cannot go on
    loop.handle(VoidRound("foreign card TH"), 0.4)
    assert [a.kind for a in loop.alarms] == [AlarmKind.PIP_TEN, AlarmKind.ROUND_VOIDED]
    assert loop.round_id is None and not loop.round_open
    deadline = time.monotonic() + 10
    while recording.pending and time.monotonic() < deadline:
        time.sleep(0.005)  # the store's thread writes the void, then exports it
    assert (tmp_path / "void" / "r-00001.jsonl").read_text().count("\n") == 3  # round, bet, card
    assert (tmp_path / "void" / "r-00001.reason.txt").read_text() == \
        "foreign card TH (voided by the table; dealer D1)\n"
    assert not list((tmp_path / "rounds").iterdir())
    loop.handle(PlaceBet(2, Decimal("25")), 0.5)
    assert loop.round_id == "r-00002" and loop.round_open
    recording.close()


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 10_000), flips=st.randoms(use_true_random=False))
def test_either_reader_may_report_a_card_first(seed, flips):
    """Whether the shoe or the camera reports a card first never changes the round."""
    world = SimulatedTable(
        RuleSet.preset("h17-ddd-6"), [Player(s, f"P{s}") for s in (1, 4, 7)], seed=seed
    )
    table = Table()
    for number in range(1, 6):
        steps = list(world.round(number))
        index = 0
        while index < len(steps):
            _, item = steps[index]
            following = steps[index + 1][1] if index + 1 < len(steps) else None
            pair = isinstance(item, ShoeCard) and isinstance(following, FeltCard)
            if pair and flips.random() < 0.5:
                table.send(following, item)
                index += 2
                continue
            table.send(item)
            index += 1
        got, want = table.settled_json(), world.settlements[-1].to_json()
        assert (got["dealer"], got["seats"]) == (want["dealer"], want["seats"])
    assert table.loop.alarms == []


def test_rounds_recorded_in_the_store_replay_clean(tmp_path):
    recording = open_recording(tmp_path, "T5")
    store = recording.store
    loop = TableLoop("h17-ddd-6", recording.recorder, table_id="T5", has_camera=False)
    loop.dealer = "D1"  # signed in (signing in: test_sign_in.py)
    loop.handle(ShoeLink(True), 0.0)
    world = SimulatedTable(RuleSet.preset("h17-ddd-6"), [Player(2, "A"), Player(4, "B")], seed=4)
    world.camera_sees = False
    for number in (1, 2, 3):
        for _, item in world.round(number):
            loop.handle(item, 0.0)
    loop.handle(PlaceBet(1, Decimal("10")), 0.0)
    loop.handle(ShoeCard(C("TS")), 0.0)
    loop.handle(VoidRound("a pip ten"), 0.0)
    recording.close()
    assert store.errors == []
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "dealer_assist",
            "replay",
            str(tmp_path),
            "--verify",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr
    assert "CLEAN: 3 settled rounds re-settled, 1 partial; chain verified" in done.stdout


def test_a_store_failing_for_hours_keeps_only_its_latest_errors(tmp_path, monkeypatch):
    """Every write to a locked store fails (a real SQLite lock, each write's wait cut to 0.01 s):
    one failure reported, and only the latest ERRORS_KEPT failures kept in memory."""
    monkeypatch.setattr(RecordingStore, "busy_timeout_s", 0.01)
    store = StoreRecorder(tmp_path / "surveillance", "T6")
    reported: list[str] = []
    store.on_failure = reported.append
    lock = sqlite3.connect(tmp_path / "surveillance" / "index.sqlite", isolation_level=None)
    lock.execute("BEGIN EXCLUSIVE")
    for number in range(1, ERRORS_KEPT + 21):
        store.write_alarm(Alarm(number, AlarmKind.CAMERA_LOST, "no frame for 2 s", None, 0.0))
    store.close()  # every queued write tried
    lock.execute("ROLLBACK")
    lock.close()
    assert len(reported) == 1 and "database is locked" in reported[0]
    assert len(store.errors) == ERRORS_KEPT
    assert all(error.startswith("alarm: ") for error in store.errors)


def test_inputs_the_loop_raises_on_are_shown_and_only_the_latest_kept():
    """A bug (here: inputs that are not table inputs) does not stop the table; the screen shows
    the last five and the runner keeps the latest ERRORS_KEPT."""
    loop = TableLoop("h17-ddd-6", MemoryRecorder(), has_camera=False)
    loop.dealer = "D1"  # signed in (signing in: test_sign_in.py)
    with TableRunner(loop) as runner:
        for number in range(ERRORS_KEPT + 10):
            runner.submit(f"not an input {number}")  # type: ignore[arg-type]
        runner.submit(ShoeLink(True))
        assert runner.wait_idle(60)
        assert len(runner.errors) == ERRORS_KEPT
        assert runner.errors[-1] == (f"TypeError: not a table input: 'not an input "
                                     f"{ERRORS_KEPT + 9}' (input 'not an input "
                                     f"{ERRORS_KEPT + 9}')")
        assert runner.view()["errors"] == runner.errors[-5:]
        assert loop.shoe_up  # the table went on


def test_a_store_that_cannot_be_written_raises_one_alarm_and_keeps_the_journal(
    tmp_path, monkeypatch
):
    """The store locked by another program for two rounds (a real SQLite lock; the 30 s each
    write waits for it cut to 0.05 s): one "recording failed" alarm, not one per record; the
    recording says it is incomplete (so the journal keeps those rounds: test_journal.py); once
    the lock is gone the next round's beginning records the two first, then it goes into the
    store and its file, the recording is complete again, and the chain verifies."""
    monkeypatch.setattr(RecordingStore, "busy_timeout_s", 0.05)
    recording = open_recording(tmp_path, "T5")
    store = recording.store
    loop = TableLoop("h17-ddd-6", recording.recorder, table_id="T5", has_camera=False)
    loop.dealer = "D1"  # signed in (signing in: test_sign_in.py)
    world = SimulatedTable(RuleSet.preset("h17-ddd-6"), [Player(2, "A")], seed=4)
    world.camera_sees = False
    with TableRunner(loop) as runner:
        store.on_failure = lambda detail: runner.submit(RecordingFailed(detail))  # as cli.py
        runner.submit(ShoeLink(True))
        lock = sqlite3.connect(tmp_path / "index.sqlite", isolation_level=None)
        lock.execute("BEGIN EXCLUSIVE")
        for number in (1, 2):
            for _, item in world.round(number):
                runner.submit(item)
        assert runner.wait_idle(60)
        tried = time.monotonic() + 60
        while not store.idle and time.monotonic() < tried:  # both rounds tried
            time.sleep(0.01)
        lock.execute("ROLLBACK")
        lock.close()
        for _, item in world.round(3):
            runner.submit(item)
        assert runner.wait_idle(60)
        tried = time.monotonic() + 60
        while not store.idle and time.monotonic() < tried:
            time.sleep(0.01)
        assert not recording.pending  # rounds 1 and 2 recorded as round 3 began
        recording.close()
        assert runner.wait_idle(60)
    assert store.errors[0].startswith("begin: ")
    failed = [a for a in loop.alarms if a.kind is AlarmKind.RECORDING_FAILED]
    assert len(failed) == 1, loop.alarms
    database = tmp_path / "index.sqlite"
    assert f"{database}: cannot write to the index database (database is locked)" in (
        failed[0].text)
    assert sorted(p.stem for p in (tmp_path / "rounds").glob("*.jsonl")) == [
        "r-00001", "r-00002", "r-00003"]
    assert "recording_failed" in (tmp_path / "alarms.jsonl").read_text()
    done = subprocess.run(
        [sys.executable, "-m", "dealer_assist", "replay", str(tmp_path),
         "--verify"], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert "CLEAN: 3 settled rounds re-settled, 0 partial; chain verified" in done.stdout


def test_a_stray_reading_is_passed_over_for_the_card_that_left_the_shoe():
    table = Table()
    table.send(PlaceBet(1, Decimal("10")), PlaceBet(2, Decimal("10")))
    table.send(FeltCard(C("KC"), CardTarget(2, 0)))  # a phantom reading at seat 2
    table.card("9S", seat=1)  # the real card: it pairs with its own landing at once
    assert table.seat_cards()[0][0] == ["9S"]
    table.wait(1.5)
    assert table.kinds() == [AlarmKind.NOT_FROM_SHOE] and "KC" in table.loop.alarms[0].text
    assert table.loop.cards_committed == 1


def decisions_by(lines: list[str]) -> list[tuple]:
    return [(e["type"], e["seat"], e.get("action"), e.get("hand"), e.get("by"))
            for e in map(json.loads, lines) if e["type"] in ("bet", "insurance", "action")]


def test_each_bet_and_decision_says_who_the_table_took_it_from():
    """``by``: the dealer's touches (bets, decisions, answers), the camera's evidence (a split
    seen, a card landing at the acting hand or sideways, or at a later seat: those before it
    stood)."""
    table = Table()
    deal(table, {1: ("8S", "8H"), 2: ("6S", "5H")}, up="6C", hole="KD")
    table.send(FeltStacks(1, 2, from_stack=0))
    table.card("3C", seat=1, stack=0)
    table.card("QH", seat=1, stack=0, sideways=True)
    table.card("9D", seat=1, stack=1)
    table.card("2C", seat=2)  # seat 1's second hand stood at 17; seat 2 hits
    table.send(Decide(2, Action.STAND))
    table.send(HoleCardShown(C("KD")))
    table.card("9C", seat=None)
    assert table.loop.rounds_played == 1
    assert decisions_by(table.recorded_lines()) == [
        ("bet", 1, None, None, "dealer"), ("bet", 2, None, None, "dealer"),
        ("action", 1, "split", 0, "camera"), ("action", 1, "double", 0, "camera"),
        ("action", 1, "stand", 1, "camera"), ("action", 2, "hit", 0, "camera"),
        ("action", 2, "stand", None, "dealer")]

    asked = Table(camera=False)
    deal(asked, {1: ("9S", "7H"), 2: ("5D", "6C")}, up="6S", hole="KD")
    asked.send(Decide(1, Action.STAND))
    asked.send(Decide(2, Action.DOUBLE))
    asked.card("9C")
    asked.card("8H")  # a redouble's card, or the dealer's? The dealer answers.
    asked.answer("STAND seat 2, to the DEALER")
    assert decisions_by(asked.recorded_lines())[2:] == [
        ("action", 1, "stand", None, "dealer"), ("action", 2, "double", None, "dealer"),
        ("action", 2, "stand", 0, "dealer")]


def test_a_card_out_of_the_shoe_in_no_round_that_the_camera_never_saw_is_not_called_recorded():
    """A card leaves the shoe after the round settled, with no bet down, and the camera never
    sees it: "no bet is placed; not recorded", and no second alarm saying the rules placed it
    (it used to add "recorded from the shoe where the rules put it")."""
    table = Table()
    deal(table, {1: ("9S", "7H")}, up="7S", hole="KD")
    table.send(Decide(1, Action.STAND), HoleCardShown(C("KD")))  # the dealer stands on 17
    assert table.loop.rounds_played == 1
    table.send(ShoeCard(C("4D")))
    table.wait(3.0)
    assert table.kinds() == [AlarmKind.ILLEGAL_ACTION]
    assert table.loop.alarms[-1].text.endswith("no bet is placed for the next; not recorded")


def test_a_shoe_card_waiting_as_the_link_drops_is_recorded_before_the_cards_drawn_after():
    """The shoe reported the dealer's 2C, and its link dropped before the camera saw it land.
    The dealer draws on with the link down; the camera, missing the 2C, reads the next cards
    (3H, 4C) alone. The first is a card the shoe has not reported, or the 2C misread: the 2C is
    placed first, by the rules, then the camera's cards in the order they landed, and one alarm
    holds the payouts until the floor has checked the felt (the shoe's resend, once back, finds
    them recorded). Before, the 3H was taken for the 2C's switched landing and recorded
    nowhere."""
    table = Table()
    deal(table, {1: ("9S", "7H")}, up="6S", hole="4D")
    table.send(Decide(1, Action.STAND))
    table.send(HoleCardShown(C("4D")))  # the dealer: 10, draws
    table.send(ShoeCard(C("2C")))
    table.send(ShoeLink(False, "EIO"))
    table.send(FeltCard(C("3H"), DEALER_SPOT, verdict="mismatch", checked=C("2C")),
               FeltCard(C("4C"), DEALER_SPOT))  # (checked against nothing: none in flight)
    table.wait(2.0)
    assert table.kinds() == [AlarmKind.SHOE_LINK_DOWN, AlarmKind.SWITCHED_CARD]
    text = table.loop.alarms[-1].text
    assert "the shoe dealt 2C" in text and "it reads 3H at the dealer" in text
    assert table.loop.disagreements() == [table.loop.alarms[-1]]  # no PAY/TAKE meanwhile
    assert table.loop.rounds_played == 1
    got = table.settled_json()
    assert got["dealer"]["cards"] == ["6S", "4D", "2C", "3H", "4C"]  # 19
    assert got["seats"][0]["net"] == "-10.00"
    table.send(ShoeLink(True, "back"))
    table.send(ShoeCard(C("3H")), ShoeCard(C("4C")), ShoeCaughtUp())
    assert table.kinds() == [AlarmKind.SHOE_LINK_DOWN, AlarmKind.SWITCHED_CARD]


def test_a_landing_waiting_as_the_link_drops_is_recorded_after_the_shoe_card_before_it():
    """The dealer's 2C waits for its landing, and the camera reads the next card, 7C, just
    before the shoe's link is known to have dropped: at the drop the 2C is placed first (with
    the alarm above), then the 7C, not the 7C first (which stood the dealer on 17 and refused
    the 2C)."""
    table = Table()
    deal(table, {1: ("9S", "7H")}, up="6S", hole="4D")
    table.send(Decide(1, Action.STAND))
    table.send(HoleCardShown(C("4D")))  # the dealer: 10
    table.send(ShoeCard(C("2C")), FeltCard(C("7C"), DEALER_SPOT))
    table.send(ShoeLink(False, "EIO"))
    table.wait(2.0)
    assert table.kinds() == [AlarmKind.SHOE_LINK_DOWN, AlarmKind.SWITCHED_CARD]
    assert table.settled_json()["dealer"]["cards"] == ["6S", "4D", "2C", "7C"]  # 19


def test_a_card_read_alone_after_the_link_dropped_acts_after_the_touches_before_it():
    """As above, at the seats: seat 1's double card 7C waits for its landing as the link
    drops; seat 2's surrender, touched next, waits for it; then the camera reads seat 3's hit.
    The 7C is placed, then the surrender acts, then seat 3's card, in the order they came (a
    card read alone acting first stood seat 2 and refused its surrender)."""
    table = Table()
    deal(table, {1: ("9S", "2H"), 2: ("KD", "6C"), 3: ("8D", "5C")}, up="9D", hole="8S")
    table.send(Decide(1, Action.DOUBLE))
    table.send(ShoeCard(C("7C")))
    table.send(ShoeLink(False, "EIO"))
    table.send(Decide(2, Action.SURRENDER))
    table.send(FeltCard(C("4H"), CardTarget(3, 0), verdict="mismatch", checked=C("7C")))
    table.send(Decide(3, Action.STAND), HoleCardShown(C("8S")))
    table.wait(2.0)
    assert table.seat_cards() == [[["9S", "2H", "7C"]], [["KD", "6C"]], [["8D", "5C", "4H"]]]
    assert table.kinds() == [AlarmKind.SHOE_LINK_DOWN, AlarmKind.SWITCHED_CARD]
    nets = [seat["net"] for seat in table.settled_json()["seats"]]
    assert nets == ["20.00", "-5.00", "0.00"]  # 18 doubled, surrendered, 17 pushes 17


def test_a_card_read_alone_behind_the_dealers_question_acts_before_a_touch_after_it():
    """Seat 1's 2C waits for its landing as the link drops; the camera reads seat 1's next
    card, 2H, and the 2C, placed first, opens a question (a hit or a double). Seat 1's stand,
    touched before the dealer answers, came after the 2H: once the answer is given, the 2H goes
    to seat 1 and then the stand acts, not the stand first."""
    table = Table()
    deal(table, {1: ("9S", "7H"), 2: ("5D", "6C")}, up="6S", hole="KD")
    table.send(ShoeCard(C("2C")))
    table.send(ShoeLink(False, "EIO"))
    table.send(FeltCard(C("2H"), CardTarget(1, 0)))
    assert table.choices()  # where the 2C went, with no landing seen for it
    table.send(Decide(1, Action.STAND))
    table.answer("HIT seat 1")
    table.wait(2.0)
    assert table.seat_cards()[0] == [["9S", "7H", "2C", "2H"]]
    assert table.kinds() == [AlarmKind.SHOE_LINK_DOWN, AlarmKind.SWITCHED_CARD,
                             AlarmKind.DEALER_ASKED]
    assert "(the camera did not see it land)" in table.loop.alarms[-1].text


def test_a_landing_waiting_as_the_link_drops_acts_before_a_touch_made_after_it():
    """Seat 1's 2C waits for its landing; the camera reads seat 1's next card, 7C (not yet told
    of the 2C: no check), then seat 1 touches stand (waiting for the 2C), and only then is the
    link's drop known. The 2C is placed (asked), then the 7C, then the stand: 5S 4H 2C 7C, not
    a stand on 11 with the 7C asked about where no choice is right."""
    table = Table()
    deal(table, {1: ("5S", "4H"), 2: ("9D", "8C")}, up="6S", hole="KD")
    table.send(ShoeCard(C("2C")), FeltCard(C("7C"), CardTarget(1, 0)))
    table.send(Decide(1, Action.STAND))
    table.send(ShoeLink(False, "EIO"))
    table.answer("HIT seat 1")
    table.wait(2.0)
    assert table.seat_cards()[0] == [["5S", "4H", "2C", "7C"]]
    assert table.loop.engine is not None and table.loop.engine.acting() == (2, 0)
    assert table.kinds() == [AlarmKind.SHOE_LINK_DOWN, AlarmKind.SWITCHED_CARD,
                             AlarmKind.DEALER_ASKED]


def test_a_late_sighting_read_alone_never_goes_before_the_shoe_card_waiting():
    """As above, the camera's sighting of the next card 1.6 s old (late): the 3H waited for the
    shoe, then was read from the camera ahead of the 7C still waiting (the dealer on 20, seat 1
    paid wrong with nothing holding the payouts). The 7C goes first, with the alarm; the 3H,
    with no card due after the dealer's 17, is refused."""
    table = Table()
    deal(table, {1: ("9S", "9H")}, up="6S", hole="4D")
    table.send(Decide(1, Action.STAND))
    table.send(HoleCardShown(C("4D")))  # the dealer: 10
    table.send(ShoeCard(C("7C")))
    table.send(ShoeLink(False, "EIO"))
    table.send(FeltCard(C("3H"), DEALER_SPOT, seen_at=table.now - 1.6))
    table.wait(2.0)
    assert table.settled_json()["dealer"]["cards"] == ["6S", "4D", "7C"]
    assert [a.kind for a in table.loop.disagreements()] == [AlarmKind.SWITCHED_CARD]


def _dealer_draws_two_as_the_link_drops(first_seen: FeltCard) -> Table:
    """Seat 1 stands on 18, the dealer (6S 4D) draws 2C then 3D, both reported, and the link
    drops; the camera reports ``first_seen`` for the 2C, then the 3D landing (verified), then
    the 4C the dealer draws with the link down (truth: 19, seat 1 loses)."""
    table = Table()
    deal(table, {1: ("9S", "9H")}, up="6S", hole="4D")
    table.send(Decide(1, Action.STAND))
    table.send(HoleCardShown(C("4D")))
    table.send(ShoeCard(C("2C")), ShoeCard(C("3D")))
    table.send(ShoeLink(False, "EIO"))
    table.send(first_seen)
    table.wait(0.2)
    table.send(FeltCard(C("3D"), DEALER_SPOT, verdict="match", checked=C("3D")))
    table.send(FeltCard(C("4C"), DEALER_SPOT))
    table.wait(2.0)
    return table


def test_with_two_shoe_cards_waiting_at_the_drop_a_misread_first_is_not_a_card_drawn_after():
    """The 2C's landing read surely as another card (7C) with the 3D still waiting behind it:
    the card after the 2C is the 3D, which the shoe reported, so the 7C is no card drawn with
    the link down but the 2C's switched landing (one alarm, as with the link up), not a card
    more recorded for both shoe cards' alarms."""
    table = _dealer_draws_two_as_the_link_drops(
        FeltCard(C("7C"), DEALER_SPOT, verdict="mismatch", checked=C("2C")))
    assert table.settled_json()["dealer"]["cards"] == ["6S", "4D", "2C", "3D", "4C"]
    assert table.kinds() == [AlarmKind.SHOE_LINK_DOWN, AlarmKind.SWITCHED_CARD]
    assert "the shoe dealt 2C but 7C is on the felt" in table.loop.alarms[-1].text



@pytest.mark.parametrize("verdict", ["unsure", None])
def test_a_landing_left_over_among_the_shoe_cards_is_read_alone_only_with_an_alarm(verdict):
    """The 2C's landing read as 8C (the camera unsure against the 2C, or not told of it); the
    3D's landing then places the 2C as unseen, and the 8C is left over. It came among the
    shoe's cards and may be the 2C misread: read from the camera alone (the link down), it
    holds the payouts, where it used to settle a dealer's 27 against seat 1's 18 with no
    alarm."""
    table = _dealer_draws_two_as_the_link_drops(
        FeltCard(C("8C"), DEALER_SPOT, verdict=verdict, checked=C("2C")))
    assert table.kinds() == [AlarmKind.SHOE_LINK_DOWN, AlarmKind.SWITCHED_CARD,
                             AlarmKind.ILLEGAL_ACTION]  # (the 4C after the dealer's 23)
    assert "the camera reads 8C at the dealer" in table.loop.alarms[1].text
    assert [a.kind for a in table.loop.disagreements()] == [AlarmKind.SWITCHED_CARD]


def test_a_card_read_alone_that_may_be_a_shoe_card_placed_unseen_holds_the_payouts():
    """Seat 1's 2C, reported as the link drops, is not seen landing: the dealer is asked where
    it went, and its landing then comes misread as 7C (waiting behind the question). Read from
    the camera alone once answered, the 7C may be the 2C misread, which only the shoe's resend
    can tell: an alarm holds the payouts (seat 1 was recorded bust on 23, where 16 won), as
    with the link up ("never left the shoe"); it used to settle with nothing holding it."""
    table = Table()
    deal(table, {1: ("9S", "5H"), 2: ("9D", "8C")}, up="6S", hole="KD")
    table.send(ShoeCard(C("2C")))
    table.send(ShoeLink(False, "EIO"))
    table.wait(1.6)
    table.send(FeltCard(C("7C"), CardTarget(1, 0)))
    table.answer("HIT seat 1")
    table.send(Decide(2, Action.STAND), HoleCardShown(C("KD")), FeltCard(C("9C"), DEALER_SPOT))
    table.wait(2.0)
    assert table.seat_cards()[0] == [["9S", "5H", "2C", "7C"]]
    assert [a.kind for a in table.loop.disagreements()] == [AlarmKind.SWITCHED_CARD]
    text = table.loop.disagreements()[0].text
    assert "reads 7C at seat 1" in text and "2C, which the shoe dealt" in text


def test_a_shoe_card_taken_with_an_unsure_landing_is_no_card_a_later_one_may_be():
    """The dealer's 2C, reported as the link drops, lands read unsurely as 2D: after 0.5 s that
    landing is taken for it, with no alarm. The dealer's next card, 5D, read from the camera
    alone, is no misreading of the 2C (its sighting was taken): no alarm holds the round."""
    table = Table()
    deal(table, {1: ("9S", "9H")}, up="6S", hole="4D")
    table.send(Decide(1, Action.STAND), HoleCardShown(C("4D")))
    table.send(ShoeCard(C("2C")))
    table.send(ShoeLink(False, "EIO"))
    table.send(FeltCard(C("2D"), DEALER_SPOT, verdict="unsure", checked=C("2C")))
    table.wait(0.7)
    table.send(FeltCard(C("5D"), DEALER_SPOT))
    table.wait(2.0)
    assert table.settled_json()["dealer"]["cards"] == ["6S", "4D", "2C", "5D"]
    assert table.loop.disagreements() == []


def test_a_card_keyed_with_the_link_down_that_may_be_a_shoe_card_placed_unseen_holds_the_payouts():
    """As above, the 2C's late landing comes unreadable ("enter it"), and the dealer keys what
    lies there, 2C: it may be the shoe's 2C keyed again, which only the resend can tell, so an
    alarm holds the payouts (seat 1 recorded on 18 where 16 lost); it used to settle with
    nothing holding it."""
    table = Table()
    deal(table, {1: ("9S", "5H")}, up="7S", hole="KD")
    table.send(ShoeCard(C("2C")))
    table.send(ShoeLink(False, "EIO"))
    table.wait(2.0)
    table.answer("HIT seat 1")
    table.send(FeltCard(None, CardTarget(1, 0)), KeyCard(C("2C"), CardTarget(1, 0)))
    table.send(Decide(1, Action.STAND), HoleCardShown(C("KD")))
    table.wait(2.0)
    assert table.seat_cards()[0] == [["9S", "5H", "2C", "2C"]]
    assert [a.kind for a in table.loop.disagreements()] == [AlarmKind.SWITCHED_CARD]
    assert "the dealer keyed 2C at seat 1 with the shoe's link down, and 2C, which the shoe " \
        "dealt, was placed with no landing seen: it may be that card, recorded twice" in \
        table.loop.disagreements()[0].text


def test_a_card_keyed_with_no_reader_at_all_is_doubted_against_nothing():
    """The camera lost, the shoe deals the round (each card placed with no landing seen), then
    its link drops too: the dealer keys seat 1's hit where it lies. No landing of the shoe's
    cards can come with no camera, so the keyed card is no doubt about them: no alarm holds the
    payouts."""
    table = Table()
    table.send(CameraLink(False, "no frames for 2 s"))
    table.send(PlaceBet(1, Decimal("10")))
    table.send(ShoeCard(C("9S")), ShoeCard(C("6S")), ShoeCard(C("4H")), ShoeCard(C("KD")))
    table.send(ShoeLink(False, "EIO"))
    table.send(KeyCard(C("7H"), CardTarget(1, 0)))
    assert table.seat_cards()[0] == [["9S", "4H", "7H"]]
    assert table.loop.disagreements() == []
