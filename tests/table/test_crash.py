"""Crash tests: a real ``dealer-assist table`` process reading a simulated shoe over TCP is killed
with SIGKILL at random moments and started again; nothing the shoe or the dealer was told is held
is lost, and every round settles as dealt.

The truth each restarted table is held to is a :class:`TableLoop` in this process fed exactly
what was acknowledged: every touch the screen answered and every card the shoe was told is held.
The kill schedule is seeded (``DEALER_ASSIST_CRASH_SEED``, default 30) to explore others.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path

import pytest

from dealer_assist.roundlog import settle_log
from dealer_assist.rules import Action, Card
from dealer_assist.shoe.simulator import ShoeSimulator, TcpLink
from dealer_assist.surveillance import RecordingStore
from dealer_assist.surveillance.export import latest_round
from dealer_assist.table.chips import ChipSet
from dealer_assist.table.loop import TableLoop
from dealer_assist.table.recording import MemoryRecorder
from dealer_assist.table.screen_view import for_screen
from dealer_assist.table.sources import ConfirmFelt, Decide, PlaceBet, ShoeCard, ShoeLink
from tests.table.test_recording import files_equal_store, held_by_another_writer
from tests.table.test_table_cli import Screen, get_view, open_screen, post, sign_in, start_table

pytestmark = pytest.mark.skipif(os.name != "posix", reason="SIGKILL")

# Three rounds at seats 1 and 2 (deal order: seat 1, seat 2, dealer up, seat 1, seat 2, hole),
# with stands, a hit and a double; each played twice.
ROUNDS = [
    # 17 and 17 stand; the dealer's 6 + K draws 3: 19. Both lose 10.
    [("bet", 1, "10"), ("bet", 2, "10"), *[("card", c) for c in "9S KD 6D 8H 7C KC".split()],
     ("decide", 1, "stand"), ("decide", 2, "stand"), ("card", "3H")],
    # 19 stands; 16 hits (touched: a shoe-only table asks about a card no touch asked for) to 18
    # and stands; the dealer busts. Both win 10.
    [("bet", 1, "10"), ("bet", 2, "10"), *[("card", c) for c in "QS 8S 7H 9D 8D 9C".split()],
     ("decide", 1, "stand"), ("decide", 2, "hit"), ("card", "2S"), ("decide", 2, "stand"),
     ("card", "6S")],
    # 11 doubles to 20; 18 stands; the dealer stands on 17. Seat 1 wins 20, seat 2 wins 10.
    [("bet", 1, "10"), ("bet", 2, "10"), *[("card", c) for c in "5C JH 9S 6C 8C 8S".split()],
     ("decide", 1, "double", "10"), ("card", "9H"), ("decide", 2, "stand")],
]
EXPECTED_NETS = [{1: "-10.00", 2: "-10.00"}, {1: "10.00", 2: "10.00"}, {1: "20.00", 2: "10.00"}]
SCRIPT = ROUNDS * 2
KILLS = 24


def table_config(tmp_path: Path, url: str, rules: str = "s17-6", protocol: str = "") -> Path:
    config = tmp_path / "table.toml"
    shoe = f'protocol = "{protocol}"\ndecks = 6\n' if protocol else ""
    config.write_text(
        f'table_id = "T9"\n[rules]\npreset = "{rules}"\n[shoe]\nurl = "{url}"\n{shoe}'
        f'[recording]\ndir = "rec"\n'
        '[screen]\nport = 0\n'
    )
    return config


class Table:
    """A ``dealer-assist table`` process, killed and started again."""

    def __init__(self, config: Path):
        self.config = config
        self.process: subprocess.Popen | None = None
        self.screen: Screen | None = None
        self.start()

    def start(self) -> None:
        self.process = start_table(self.config)
        self.screen = open_screen(self.process)

    def kill(self) -> None:
        assert self.process is not None
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
        assert self.process.wait(10) == -signal.SIGKILL
        self.process.stdout.close()
        self.process.stderr.close()

    def stop(self) -> None:
        assert self.process is not None
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
            assert self.process.wait(10) == 0
        self.process.stdout.close()
        self.process.stderr.close()


def wait_view(table: Table, predicate, timeout: float = 15.0) -> dict:
    """The table's view once ``predicate`` holds (the last one read, after ``timeout``)."""
    deadline = time.monotonic() + timeout
    while True:
        view = get_view(table.screen)
        if predicate(view) or time.monotonic() > deadline:
            return view
        time.sleep(0.02)


def comparable(round_view: dict | None) -> dict | None:
    """A round as the screen shows it (hands from 1), less what names the process (the id's
    prefix)."""
    if round_view is None:
        return None
    shown = dict(round_view)
    shown["round"] = shown["round"].rsplit("-", 1)[1]  # the round's number
    return shown


def touch(step: tuple) -> dict:
    if step[0] == "bet":
        return {"type": "bet", "seat": step[1], "amount": step[2]}
    message = {"type": "decide", "seat": step[1], "action": step[2]}
    if len(step) > 3:
        message["amount"] = step[3]
    return message


def truth_input(step: tuple):
    if step[0] == "bet":
        return PlaceBet(step[1], Decimal(step[2]))
    if step[0] == "decide":
        return Decide(step[1], Action.parse(step[2]), Decimal(step[3]) if len(step) > 3 else None)
    return ShoeCard(Card.parse(step[1]))


def test_sigkill_at_random_moments_loses_nothing_acknowledged(tmp_path):
    rng = random.Random(int(os.environ.get("DEALER_ASSIST_CRASH_SEED", "30")))
    steps = [step for round_steps in SCRIPT for step in round_steps]
    kill_after = set(rng.sample(range(len(steps)), KILLS))
    truth = TableLoop("s17-6", MemoryRecorder(), has_camera=False)
    truth.dealer = "D1"  # signed in (signing in: test_sign_in.py)
    truth.handle(ShoeLink(True), 0.0)
    link = TcpLink()
    at_the_ack = threading.Event()

    def kill_at_the_ack(session: int, seq: int) -> None:
        """The moment the shoe is told a card is held, the table dies."""
        if at_the_ack.is_set():
            at_the_ack.clear()
            os.kill(table.process.pid, signal.SIGKILL)

    simulator = ShoeSimulator(link, on_acknowledged=kill_at_the_ack).start()
    table = Table(table_config(tmp_path, link.url))
    sign_in(table.screen)  # once: each restart keeps the dealer signed in (the journal has it)
    resumed = kills = 0
    try:
        simulator.load_shoe(6)
        assert simulator.wait_all_acked(10)
        for number, step in enumerate(steps):
            armed = step[0] == "card" and number in kill_after and rng.random() < 0.5
            if armed:
                at_the_ack.set()
            if step[0] == "card":
                simulator.draw(step[1])
            else:
                post(table.screen, touch(step))  # answered: the touch is on disk
            truth.handle(truth_input(step), 0.0)
            if step[0] == "card" and number not in kill_after:
                # the shoe is told once the card is on disk; a touch after it comes after it
                assert simulator.wait_all_acked(10)
            if number not in kill_after:
                continue
            if armed:
                table.process.wait(10)  # killed the moment the shoe heard the card is held
            else:
                time.sleep(rng.uniform(0, 0.02))  # anywhere: mid-append, before the ACK, after
            table.kill()
            kills += 1
            table.start()
            assert simulator.wait_all_acked(15)  # the shoe resends what it was not told is held
            expected = (comparable(for_screen(truth.view(), ChipSet.default(), None)["round"])
                        if truth.round_open else None)
            if expected is not None:
                view = wait_view(table, lambda v, shown=expected: comparable(v["round"]) == shown)
                assert comparable(view["round"]) == expected, f"after kill {kills} (step {number})"
                if view["resumed"]:
                    resumed += 1
                    assert view["phase"] == "resumed" and view["settlement"] is None
                    assert any(a["kind"] == "round_resumed" for a in view["alarms"])
                    post(table.screen, {"type": "confirm_felt"})
                    view = wait_view(table, lambda v: v["resumed"] is None)
                    assert view["resumed"] is None
                    assert not any(a["kind"] == "round_resumed" for a in view["alarms"])
        rounds = tmp_path / "rec" / "rounds"
        deadline = time.monotonic() + 15
        while len(list(rounds.glob("*.jsonl"))) < len(SCRIPT) and time.monotonic() < deadline:
            time.sleep(0.02)  # the last round is recorded as its last card is taken in
    finally:
        table.stop()
        simulator.stop()
        link.close()
    assert kills == KILLS and resumed >= KILLS // 2  # most kills land inside a round
    recording = tmp_path / "rec"
    assert not list((recording / "void").glob("*.jsonl"))
    files = sorted((recording / "rounds").glob("*.jsonl"))
    assert len(files) == len(SCRIPT)  # each round recorded once, under its own id
    assert [f.stem.rsplit("-", 1)[1] for f in files] == [f"{n:05d}" for n in
                                                         range(1, len(SCRIPT) + 1)]
    assert len(truth_rounds := truth.recorder.rounds) == len(SCRIPT)  # type: ignore[attr-defined]
    for number, (path, (_, _, dealt)) in enumerate(zip(files, truth_rounds, strict=True)):
        settled = settle_log(path.read_text().splitlines())
        assert settled.extra["dealer_id"] == "D1"  # signed in once, kept through every kill
        nets = {seat.seat: str(seat.net) for seat in settled.seats}
        assert nets == {seat.seat: str(seat.net) for seat in dealt.seats}
        assert nets == {seat: net for seat, net in EXPECTED_NETS[number % 3].items()}
    # the store holds every round settled, each exactly as the file exported from it
    verified = subprocess.run(
        [sys.executable, "-m", "dealer_assist", "replay", str(recording),
         "--verify"], cwd=Path(__file__).resolve().parents[2], capture_output=True, text=True,
        timeout=120)
    assert verified.returncode == 0, verified.stdout + verified.stderr
    assert f"CLEAN: {len(SCRIPT)} settled rounds re-settled" in verified.stdout
    # the store holds each round once (a restart continues the round it holds part of), and
    # every exported file is the store's records of its round
    assert store_rounds(recording) == {f.stem: 1 for f in files}
    assert files_equal_store(recording) == [f.stem for f in files]


def play(tmp_path: Path, simulator: ShoeSimulator, link: TcpLink,
         cards: tuple[str, ...] = ("9S", "KD", "6D", "8H"), rules: str = "s17-6",
         protocol: str = "") -> Table:
    """A table in round 1: seats 1 and 2 bet 10 and 25, ``cards`` dealt and acknowledged."""
    table = Table(table_config(tmp_path, link.url, rules, protocol))
    sign_in(table.screen)
    assert simulator.wait_all_acked(10)  # the shoe's load is on the table's disk
    post(table.screen, {"type": "bet", "seat": 1, "amount": "10"})
    post(table.screen, {"type": "bet", "seat": 2, "amount": "25"})
    for code in cards:
        simulator.draw(code)
    assert simulator.wait_all_acked(10)
    return table


def play_until_killed(tmp_path: Path, simulator: ShoeSimulator, link: TcpLink,
                      rules: str = "s17-6", protocol: str = "") -> Table:
    """:func:`play`'s four cards; then killed."""
    table = play(tmp_path, simulator, link, rules=rules, protocol=protocol)
    table.kill()
    return table


def wait_file(path: Path, timeout: float = 15.0) -> None:
    """Wait until ``path`` is there (a round's file is exported a few ms after its end)."""
    deadline = time.monotonic() + timeout
    while not path.exists() and time.monotonic() < deadline:
        time.sleep(0.02)


def void_record(tmp_path: Path) -> tuple[list[dict], str]:
    voids = list((tmp_path / "rec" / "void").glob("*.jsonl"))
    assert len(voids) == 1
    lines = [json.loads(line) for line in voids[0].read_text().splitlines()]
    reason = voids[0].with_name(voids[0].stem + ".reason.txt").read_text()
    return lines, reason


def store_rounds(recording: Path) -> dict[str, int]:
    """How many copies of each round id the recording store holds."""
    store = RecordingStore(recording)
    try:
        counts: dict[str, int] = {}
        for row in store.indexed_rounds():
            counts[row.round_id or "?"] = counts.get(row.round_id or "?", 0) + 1
        return counts
    finally:
        store.close()


def store_lines(recording: Path, round_id: str) -> list[str]:
    """The store's records of ``round_id`` (its latest copy), as a round log's lines."""
    store = RecordingStore(recording)
    try:
        data = latest_round(store, round_id)
        return [] if data is None else data.log_lines()
    finally:
        store.close()


def wait_store_lines(recording: Path, round_id: str, count: int) -> None:
    """Wait until the store holds ``count`` lines of the round (its thread writes a few ms
    behind the ACK)."""
    deadline = time.monotonic() + 10
    while len(store_lines(recording, round_id)) < count and time.monotonic() < deadline:
        time.sleep(0.01)


def unshod(line: str) -> dict:
    """A round-log line less the shoe's position of a card and the time it happened (the truth
    has no shoe session and no clock)."""
    event = json.loads(line)
    event.pop("shoe", None)
    event.pop("at", None)
    return event


def happened(lines: list[str]) -> list[datetime]:
    """Each line's ``at``: every one carries it."""
    return [datetime.fromisoformat(json.loads(line)["at"].replace("Z", "+00:00"))
            for line in lines]


def named(lines: list[dict]) -> tuple[list, list]:
    bets = [(e["seat"], e["amount"]) for e in lines if e["type"] == "bet"]
    cards = [e["card"] for e in lines if e["type"] == "card"]
    return bets, cards


def test_a_shoe_reshuffled_while_the_table_was_down_voids_the_round(tmp_path):
    link = TcpLink()
    simulator = ShoeSimulator(link).start()
    try:
        simulator.load_shoe(6)
        table = play_until_killed(tmp_path, simulator, link)
        simulator.load_shoe(6)  # a new shoe while the table is down
        table.start()
        view = wait_view(table, lambda v: v["round"] is None and v["rounds_played"] == 0
                         and any(a["kind"] == "round_voided" for a in v["alarms"]))
        assert view["resumed"] is None
        assert any(a["kind"] == "round_voided" and "new shoe" in a["text"]
                   for a in view["alarms"])
        table.stop()
    finally:
        simulator.stop()
        link.close()
    lines, reason = void_record(tmp_path)
    assert named(lines) == ([(1, "10.00"), (2, "25.00")], ["9S", "KD", "6D", "8H"])
    # voided in the store too, once, its file exported from it
    [voided] = files_equal_store(tmp_path / "rec")
    assert store_rounds(tmp_path / "rec")[voided] == 1
    assert "new shoe" in reason


def play_until_asked(tmp_path: Path, simulator: ShoeSimulator, link: TcpLink) -> Table:
    """A table in round 1: seats 1 (5C 6C, 11) and 2 (9S 8S, 17) bet 10 and 25, the dealer
    shows 6D over KC; then 9H is drawn with no touch (a shoe-only table asks where it went:
    hit or double?), and the table is killed with that question open."""
    table = play(tmp_path, simulator, link, ("5C", "9S", "6D", "6C", "8S", "KC"))
    simulator.draw("9H")
    assert simulator.wait_all_acked(10)
    view = wait_view(table, lambda v: v["question"] is not None)
    assert "9H" in view["question"]["text"]
    table.kill()
    return table


def test_a_round_resumed_with_its_question_open_asks_for_the_felt_check_at_once(tmp_path):
    """Killed while the dealer's question is open: the restarted table shows the round resumed
    (Confirm felt, its alarm) with the question still open, either taken first."""
    link = TcpLink()
    simulator = ShoeSimulator(link).start()
    try:
        simulator.load_shoe(6)
        table = play_until_asked(tmp_path, simulator, link)
        table.start()
        view = wait_view(table, lambda v: v["resumed"] is not None)
        assert view["resumed"] is not None and view["question"] is not None
        assert view["phase"] == "question" and view["settlement"] is None
        assert any(a["kind"] == "round_resumed" for a in view["alarms"])
        post(table.screen, {"type": "confirm_felt"})  # taken with the question open
        view = wait_view(table, lambda v: v["resumed"] is None)
        assert view["resumed"] is None and view["question"] is not None
        assert not any(a["kind"] == "round_resumed" for a in view["alarms"])
        hit = next(c["choice"] for c in view["question"]["choices"]
                   if c["label"] == "HIT seat 1")
        post(table.screen, {"type": "answer", "question": view["question"]["id"],
                            "choice": hit})
        post(table.screen, {"type": "decide", "seat": 1, "action": "stand"})  # 20
        post(table.screen, {"type": "decide", "seat": 2, "action": "stand"})  # 17
        simulator.draw("QH")  # the dealer's 16 busts
        assert simulator.wait_all_acked(10)
        path = tmp_path / "rec" / "rounds" / f"{view['round']['round']}.jsonl"
        wait_file(path)
        table.stop()
    finally:
        simulator.stop()
        link.close()
    settled = settle_log(path.read_text().splitlines())
    assert {s.seat: str(s.net) for s in settled.seats} == {1: "10.00", 2: "25.00"}
    assert not list((tmp_path / "rec" / "void").glob("*.jsonl"))


def test_a_shoe_reshuffled_while_a_question_was_open_voids_the_round(tmp_path):
    """As :func:`test_a_shoe_reshuffled_while_the_table_was_down_voids_the_round`, killed with
    the dealer's question open: the new shoe voids the round all the same, and no card of the
    new shoe is placed in it."""
    link = TcpLink()
    simulator = ShoeSimulator(link).start()
    try:
        simulator.load_shoe(6)
        table = play_until_asked(tmp_path, simulator, link)
        simulator.load_shoe(6)  # a new shoe while the table is down
        table.start()
        assert simulator.wait_all_acked(10)
        view = wait_view(table, lambda v: v["round"] is None
                         and any(a["kind"] == "round_voided" for a in v["alarms"]))
        assert view["round"] is None and view["question"] is None
        assert view["resumed"] is None and view["rounds_played"] == 0
        assert any(a["kind"] == "round_voided" and "new shoe" in a["text"]
                   for a in view["alarms"])
        post(table.screen, {"type": "decide", "seat": 1, "action": "stand"})
        post(table.screen, {"type": "decide", "seat": 2, "action": "stand"})
        simulator.draw("QH")  # from the new shoe: in no round
        assert simulator.wait_all_acked(10)
        time.sleep(0.5)
        view = get_view(table.screen)
        table.stop()
    finally:
        simulator.stop()
        link.close()
    assert view["rounds_played"] == 0
    assert not list((tmp_path / "rec" / "rounds").glob("*.jsonl"))
    lines, reason = void_record(tmp_path)
    assert named(lines) == ([(1, "10.00"), (2, "25.00")], ["5C", "9S", "6D", "6C", "8S", "KC"])
    assert "new shoe" in reason
    [voided] = files_equal_store(tmp_path / "rec")
    assert store_rounds(tmp_path / "rec")[voided] == 1


def test_a_journal_damaged_mid_file_voids_with_every_card_and_the_shoe_is_heard(tmp_path):
    """A byte flipped in the journal's record of a round's second card (not a crash: bit rot):
    the replay stops there, the round is voided with every bet and card acknowledged (the
    store's copy holds those the journal lost), and the shoe's next cards are taken in (its
    reader does not wait at the damaged position for events the shoe discarded)."""
    recording = tmp_path / "rec"
    dealt = ["9S", "KD", "6D", "8H", "7C", "KC"]
    link = TcpLink()
    simulator = ShoeSimulator(link).start()
    try:
        simulator.load_shoe(6)
        table = play(tmp_path, simulator, link, tuple(dealt))
        round_id = wait_view(table, lambda v: v["round"] is not None)["round"]["round"]
        wait_store_lines(recording, round_id, 3 + len(dealt))
        table.kill()
        journal = recording / "table.journal"
        records = journal.read_bytes().split(b"\n")
        [second] = [n for n, record in enumerate(records) if b'"KD"' in record]
        assert second < len(records) - 2  # records after it: damage, not a crash's cut
        records[second] = records[second].replace(b'"KD"', b'"KX"')
        journal.write_bytes(b"\n".join(records))
        table.start()
        view = wait_view(table, lambda v: any(a["kind"] == "round_voided" for a in v["alarms"]))
        assert view["round"] is None
        assert any(a["kind"] == "round_voided" and "damaged" in a["text"]
                   for a in view["alarms"])
        post(table.screen, {"type": "bet", "seat": 1, "amount": "10"})
        for code in ("9S", "KD", "6D", "8H"):
            simulator.draw(code)
        assert simulator.wait_all_acked(10)  # the table hears the shoe
        view = wait_view(table, lambda v: v["round"] is not None
                         and v["round"]["seats"][0]["hands"][0]["cards"] == ["9S", "6D"])
        assert view["round"]["seats"][0]["hands"][0]["cards"] == ["9S", "6D"]
        assert view["round"]["dealer"]["cards"][0] == "KD"
        table.stop()
    finally:
        simulator.stop()
        link.close()
    assert list(recording.glob("table.journal.damaged-*"))  # kept for whoever looks into it
    lines, reason = void_record(tmp_path)
    assert named(lines) == ([(1, "10.00"), (2, "25.00")], dealt)
    assert "damaged" in reason
    assert store_rounds(recording)[round_id] == 1  # its one copy, voided


@pytest.mark.parametrize(("rules", "protocol", "why"), [
    ("h17-ddd-6", "", "configuration changed"),
])
def test_a_round_that_cannot_be_trusted_after_a_restart_is_voided(tmp_path, rules, protocol, why):
    link = TcpLink()
    simulator = ShoeSimulator(link).start()
    try:
        simulator.load_shoe(6)
        table = play_until_killed(tmp_path, simulator, link)
        table_config(tmp_path, link.url, rules, protocol)  # the config edited while it was down
        table.start()
        view = wait_view(table, lambda v: any(a["kind"] == "round_voided" for a in v["alarms"]))
        assert view["round"] is None and view["resumed"] is None
        assert view["rules"] != "s17-6"
        post(table.screen, {"type": "bet", "seat": 1, "amount": "10"})
        view = wait_view(table, lambda v: v["round"] is not None)
        assert view["round"]["round"].endswith("-00002")  # round ids go on, never repeat
        table.stop()
    finally:
        simulator.stop()
        link.close()
    lines, reason = void_record(tmp_path)
    assert named(lines) == ([(1, "10.00"), (2, "25.00")], ["9S", "KD", "6D", "8H"])
    # voided in the store too, once, its file exported from it
    [voided] = files_equal_store(tmp_path / "rec")
    assert store_rounds(tmp_path / "rec")[voided] == 1
    assert why in reason


def alarm_ids(recording: Path) -> list[int]:
    """The ids of the alarms in ``alarms.jsonl``, in the order recorded."""
    return [json.loads(line)["id"]
            for line in (recording / "alarms.jsonl").read_text().splitlines()]


def test_alarm_numbers_go_on_after_a_restart_with_a_new_configuration(tmp_path):
    """A restart under a changed configuration starts a fresh loop: its alarms (the dealer
    signed in again, and later ones, after another restart too) are numbered on from the old
    loop's, never again from 1."""
    recording = tmp_path / "rec"
    link = TcpLink()
    simulator = ShoeSimulator(link).start()
    try:
        simulator.load_shoe(6)
        table = play_until_killed(tmp_path, simulator, link)
        table_config(tmp_path, link.url, "h17-ddd-6")  # the config edited while it was down
        table.start()
        wait_view(table, lambda v: v["round"] is None and v["rules"] != "s17-6")
        table.kill()  # the journal starts from the new configuration's checkpoint
        table.start()
        post(table.screen, {"type": "sign_out"})  # alarms after the replay of that checkpoint
        sign_in(table.screen)
        table.stop()
    finally:
        simulator.stop()
        link.close()
    ids = alarm_ids(recording)
    # signed in, voided, signed in (the fresh loop), then signed out and in again
    assert len(ids) >= 5
    assert ids == list(range(1, len(ids) + 1))


def test_a_round_killed_mid_play_is_in_the_store_and_goes_on_there_without_a_record_twice(
        tmp_path):
    """SIGKILL with two bets and four cards taken: the store already holds them (it is written
    as the round is played); the restarted table replays its journal, continues the store's
    round after what it holds, and the round settles there and in its exported file as dealt."""
    truth = TableLoop("s17-6", MemoryRecorder(), has_camera=False, round_prefix="T")
    truth.dealer = "D1"
    truth.handle(ShoeLink(True), 0.0)
    dealt = [PlaceBet(1, Decimal("10")), PlaceBet(2, Decimal("25")),
             *[ShoeCard(Card.parse(c)) for c in ("9S", "KD", "6D", "8H")]]
    for item in dealt:
        truth.handle(item, 0.0)
    recording = tmp_path / "rec"
    link = TcpLink()
    simulator = ShoeSimulator(link).start()
    try:
        simulator.load_shoe(6)
        table = Table(table_config(tmp_path, link.url))
        sign_in(table.screen)
        assert simulator.wait_all_acked(10)
        before = datetime.now(UTC).replace(microsecond=0)  # "at" is to the millisecond
        post(table.screen, {"type": "bet", "seat": 1, "amount": "10"})
        post(table.screen, {"type": "bet", "seat": 2, "amount": "25"})
        for code in ("9S", "KD", "6D", "8H"):
            simulator.draw(code)
        assert simulator.wait_all_acked(10)
        round_id = wait_view(table, lambda v: v["round"] is not None)["round"]["round"]
        wait_store_lines(recording, round_id, len(truth.round_lines()))
        table.kill()
        killed = datetime.now(UTC)
        held = store_lines(recording, round_id)  # what survived the kill, read from the store
        assert [unshod(line) for line in held[1:]] == [
            unshod(line) for line in truth.round_lines()[1:]]
        assert not list((recording / "rounds").glob("*.jsonl"))  # no file before the round ends

        table.start()
        view = wait_view(table, lambda v: v["resumed"] is not None)
        assert view["round"]["round"] == round_id
        post(table.screen, {"type": "confirm_felt"})
        rest = [ShoeCard(Card.parse("7C")), ShoeCard(Card.parse("KC")),
                Decide(1, Action.STAND), Decide(2, Action.STAND), ShoeCard(Card.parse("3H"))]
        for item in rest:
            truth.handle(item, 0.0)
            if isinstance(item, ShoeCard):
                simulator.draw(item.card.code)
                assert simulator.wait_all_acked(10)
            else:
                post(table.screen, touch(("decide", item.seat, item.action.value)))
        truth.handle(ConfirmFelt(), 0.0)
        path = recording / "rounds" / f"{round_id}.jsonl"
        wait_file(path)
        after = datetime.now(UTC)
        view = get_view(table.screen)
        table.stop()
    finally:
        simulator.stop()
        link.close()
    assert store_rounds(recording) == {round_id: 1}  # continued, never recorded twice
    lines = path.read_text().splitlines()
    assert lines == store_lines(recording, round_id)
    assert lines[:len(held)] == held  # what the store held before the kill, unchanged, first
    # the replay wrote each event with the time its input came before the kill (the store
    # found nothing to disagree with), and every event after it carries its own, in order
    assert not any(a["kind"] == "recording_failed" for a in view["alarms"])
    times = happened(lines)
    assert times == sorted(times) and before <= times[0]
    assert times[len(held) - 1] <= killed < times[len(held)] and times[-1] <= after
    assert [(e["type"], e.get("by")) for e in map(json.loads, lines)
            if e["type"] in ("bet", "action")] == [
        ("bet", "dealer"), ("bet", "dealer"), ("action", "dealer"), ("action", "dealer")]
    assert files_equal_store(recording) == [round_id]
    settled = settle_log(lines)
    assert truth.last_settlement is not None
    assert {s.seat: s.net for s in settled.seats} == {
        s.seat: s.net for s in truth.last_settlement.seats} == {
        1: Decimal("-10.00"), 2: Decimal("-25.00")}


def test_a_round_the_store_ended_but_whose_file_a_kill_prevented_is_exported_at_start(
        tmp_path):
    """A kill between the store's commit of a round's end and its file's export leaves the
    round ended in the store with no file (made here by killing the table once the round is
    exported and removing the file: the same state); the next start exports it again."""
    recording = tmp_path / "rec"
    link = TcpLink()
    simulator = ShoeSimulator(link).start()
    try:
        simulator.load_shoe(6)
        table = Table(table_config(tmp_path, link.url))
        sign_in(table.screen)
        assert simulator.wait_all_acked(10)
        for step in ROUNDS[0]:
            if step[0] == "card":
                simulator.draw(step[1])
                assert simulator.wait_all_acked(10)
            else:
                post(table.screen, touch(step))
        deadline = time.monotonic() + 15
        while not (files := list((recording / "rounds").glob("*.jsonl"))) and \
                time.monotonic() < deadline:
            time.sleep(0.02)
        [path] = files
        exported = path.read_text()
        table.kill()
        path.unlink()
        table.start()
        wait_file(path)
        table.stop()
    finally:
        simulator.stop()
        link.close()
    assert path.read_text() == exported
    assert files_equal_store(recording) == [path.stem]
    assert {s.seat: str(s.net) for s in settle_log(exported.splitlines()).seats} == \
        EXPECTED_NETS[0]


def store_alarms(recording: Path) -> list[dict]:
    """The bodies of the recording store's alarm records, in chain order."""
    store = RecordingStore(recording)
    try:
        return [record.object_body() for record in store.records(kinds=("alarm",))]
    finally:
        store.close()


def test_an_alarm_the_store_had_not_written_when_the_table_was_killed_is_written_at_restart(
        tmp_path):
    """The store's database is held by another writer (as a long backup or a slow disk holds
    it), so an alarm raised mid-round is in the journal and ``alarms.jsonl`` but still queued
    for the store when SIGKILL comes. The restart's replay finds the store without it and
    writes it, once, with the time its touch reached the table; the store then holds every
    alarm ``alarms.jsonl`` does, each as often (once, the store never had it)."""
    recording = tmp_path / "rec"
    link = TcpLink()
    simulator = ShoeSimulator(link).start()
    try:
        simulator.load_shoe(6)
        table = play(tmp_path, simulator, link)
        assert wait_view(table, lambda v: v["round"] is not None)["round"] is not None
        holder = held_by_another_writer(recording)
        touched = datetime.now(UTC).replace(microsecond=0)
        post(table.screen, {"type": "decide", "seat": 3, "action": "stand"})  # no hand there
        deadline = time.monotonic() + 10
        while not any(line["text"].startswith("seat 3") for line in alarm_lines(recording)) \
                and time.monotonic() < deadline:
            time.sleep(0.02)
        table.kill()
        holder.rollback()
        holder.close()
        assert not any(body["text"].startswith("seat 3") for body in store_alarms(recording))
        table.start()
        wait_view(table, lambda v: v["phase"] == "resumed")
        table.stop()
    finally:
        simulator.stop()
        link.close()
    [seat_3] = [line for line in alarm_lines(recording) if line["text"].startswith("seat 3")]
    stored = store_alarms(recording)
    [written] = [body for body in stored if body["text"] == seat_3["text"]]
    assert written["kind"] == "illegal_action" and written["round"] == seat_3["round"]
    assert touched <= datetime.fromisoformat(written["happened_at"].replace("Z", "+00:00"))
    assert Counter((body["kind"], body["text"], body.get("round")) for body in stored) == \
        Counter((line["kind"], line["text"], line["round"]) for line in alarm_lines(recording))


def alarm_lines(recording: Path) -> list[dict]:
    """The lines of ``alarms.jsonl`` (none before the first alarm)."""
    path = recording / "alarms.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []
