"""The table journal: records read back as written, a record cut short by a crash dropped with a
warning, and a table rebuilt from it as it was (or its round voided where it cannot be trusted).
Real files in a temporary directory, the real loop and runner."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import time
from collections import Counter
from contextlib import contextmanager
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path

import pytest

from dealer_assist.roundlog import ShoeOrigin, UnreadOrigin, settle_log
from dealer_assist.rules import DEALER, Action, Card, CardTarget, RuleSet
from dealer_assist.surveillance import Recorder, RecordingStore
from dealer_assist.surveillance.export import latest_round
from dealer_assist.surveillance.query import alarms_naming
from dealer_assist.surveillance.replay import load_round
from dealer_assist.table.alarms import AlarmKind
from dealer_assist.table.journal import (
    JOURNAL_NAME,
    Checkpoint,
    JournalEntry,
    TableJournal,
    open_table,
    read_journal,
)
from dealer_assist.table.journal_codec import CodecError, decode_input, encode_input
from dealer_assist.table.loop import TableLoop
from dealer_assist.table.recording import (
    AlarmKey,
    MemoryRecorder,
    RecordedUpTo,
    RecordingError,
    open_recording,
)
from dealer_assist.table.runner import TableRunner
from dealer_assist.table.shoe_cards import Recorded, ResendState
from dealer_assist.table.simulation.world import Player, SimulatedTable
from dealer_assist.table.sources import (
    AcknowledgeAlarm,
    AnswerQuestion,
    CameraFocus,
    CameraLink,
    CameraMoved,
    CloseInsurance,
    ConfirmFelt,
    CorrectCard,
    Decide,
    FeltCard,
    FeltStacks,
    FeltSwap,
    FinishRound,
    FloorLag,
    HoleCardShown,
    Insure,
    KeyCard,
    NewShoe,
    PlaceBet,
    RecordingFailed,
    RoundResumed,
    ShoeBurn,
    ShoeCard,
    ShoeCaughtUp,
    ShoeDelivery,
    ShoeHeard,
    ShoeLink,
    ShoeProblem,
    ShoeUnread,
    ShownAfterRestart,
    SignIn,
    SignOut,
    StaffRefused,
    TableInput,
    VoidRound,
)
from tests.table.test_recording import files_equal_store, held_by_another_writer

CONFIG = {"table": "T1", "rules": "s17-6", "decks": 6, "shoe": "dealer-assist"}

EVERY_INPUT: list[TableInput] = [
    ShoeCard(Card.parse("7S")),
    ShoeCard(Card.parse("AS"), None),
    ShoeCard(Card.parse("AS"), None, unread=UnreadOrigin(3, 41, 12)),
    ShoeCard(Card.parse("AS"), None, unread=UnreadOrigin(3, 41)),
    ShoeUnread(3, 41, 12, "the shoe reported the card unreadable"),
    ShoeUnread(3, 41, None, "undecodable"),
    ShoeCard(Card.parse("9D"), ShoeOrigin(3, 42, 13), held=True),
    ShoeUnread(3, 43, 14, "the shoe reported the card unreadable", held=True),
    ShoeCaughtUp(3, 43),
    NewShoe(6, held=True),
    ShoeBurn(None),
    ShoeBurn(Card.parse("QD")),
    ShoeLink(True, "socket://x:1"),
    ShoeProblem("jam"),
    NewShoe(6),
    FeltCard(None, CardTarget(2, 1), sideways=True),
    FeltCard(Card.parse("5H"), CardTarget()),
    FeltCard(Card.parse("5H"), CardTarget(3, 0), seen_at=1234.567891),
    FeltStacks(3, 2, None),
    FeltStacks(3, 2, 0),
    FeltSwap(Card.parse("5H"), Card.parse("6H"), CardTarget(1, 0)),
    HoleCardShown(None),
    HoleCardShown(Card.parse("KD"), seen_at=12.0),
    CameraLink(False, "gone"),
    CameraMoved("drift"),
    CameraFocus(False, "soft"),
    PlaceBet(1, Decimal("12.50"), "match", "Ann"),
    Decide(2, Action.DOUBLE, Decimal("5.00"), 1),
    Decide(2, Action.STAND),
    Insure(1, Decimal("2.50")),
    CloseInsurance(),
    FinishRound(),
    VoidRound("misdeal"),
    AcknowledgeAlarm(7),
    KeyCard(Card.parse("9C"), None),
    KeyCard(Card.parse("9C"), CardTarget()),
    CorrectCard(Card.parse("8D"), CardTarget(2, None), 1, Card.parse("3D")),
    CorrectCard(Card.parse("8D"), DEALER),
    ConfirmFelt(),
    AnswerQuestion(3, 1),
    RecordingFailed("disk full"),
    FloorLag(12, 31.5, True, False, "cannot reach the floor broker"),
    RoundResumed("restarted"),
    ShownAfterRestart("T1-x-00003"),
    SignIn("D-12"),
    SignOut(),
    StaffRefused("D-12", "sign in", "D-12: wrong id or PIN (1 in a row)"),
    VoidRound("misdeal", "S9"),
    CorrectCard(Card.parse("8D"), DEALER, supervisor="S9"),
    NewShoe(0, touched=True),
    ShoeHeard(),
]


def test_every_table_input_reads_back_as_written():
    for item in EVERY_INPUT:
        assert decode_input(encode_input(item)) == item
    from dealer_assist.table.journal_codec import INPUT_TYPES
    assert {type(item).__name__ for item in EVERY_INPUT} == set(INPUT_TYPES)


@pytest.mark.parametrize(("raw", "message"), [
    ({"type": "Teleport"}, "unknown input type 'Teleport'"),
    ({"type": "PlaceBet", "seat": 1, "amount": 10}, "PlaceBet.amount: money must be text"),
    ({"type": "PlaceBet", "amount": "10"}, "PlaceBet.seat: missing"),
    ({"type": "ShoeCard", "card": "1X"}, "ShoeCard.card"),
    ({"type": "Decide", "seat": 1, "action": "fold"}, "Decide.action"),
    ([1, 2], "an input must be a JSON object"),
])
def test_a_record_that_is_no_input_is_refused_naming_the_field(raw, message):
    with pytest.raises(CodecError, match=message):
        decode_input(raw)


def write_journal(path: Path, entries: list[JournalEntry]) -> TableJournal:
    journal = TableJournal(path, Checkpoint(CONFIG, "T1-x", t=1.0))
    for entry in entries:
        journal.append(entry)
    return journal


ENTRIES = [JournalEntry(1.5, (ShoeLink(True),)),
           JournalEntry(2.0, (PlaceBet(1, Decimal("10")),)),
           JournalEntry(2.5, (ShoeCard(Card.parse("9S")),), shoe=(77, 2)),
           JournalEntry(2.6, tick=True)]


def test_entries_read_back_in_order_with_the_shoe_position(tmp_path):
    write_journal(tmp_path / JOURNAL_NAME, ENTRIES).close()
    contents = read_journal(tmp_path / JOURNAL_NAME)
    assert contents.entries == ENTRIES
    assert contents.checkpoint.round_prefix == "T1-x"
    assert contents.shoe == (77, 2) and contents.last_t == 2.6
    assert not contents.warnings and not contents.damaged


@pytest.mark.parametrize("cut", [1, 9, 20, -2])
def test_a_record_cut_short_by_a_crash_is_dropped_with_a_warning(tmp_path, caplog, cut):
    path = tmp_path / JOURNAL_NAME
    write_journal(path, ENTRIES).close()
    data = path.read_bytes()
    last_start = data.rstrip(b"\n").rfind(b"\n") + 1
    path.write_bytes(data[: last_start + cut] if cut > 0 else data[:cut])
    with caplog.at_level(logging.WARNING, logger="dealer_assist.table.journal"):
        contents = read_journal(path)
    assert contents.entries == ENTRIES[:-1]
    assert not contents.damaged
    assert len(contents.warnings) == 1 and "line 5" in contents.warnings[0]
    assert caplog.records and "line 5" in caplog.records[0].getMessage()


def test_a_last_record_that_fails_its_crc_is_dropped(tmp_path):
    path = tmp_path / JOURNAL_NAME
    write_journal(path, ENTRIES).close()
    data = bytearray(path.read_bytes())
    data[-5] ^= 0x01  # one bit of the last record
    path.write_bytes(bytes(data))
    contents = read_journal(path)
    assert contents.entries == ENTRIES[:-1] and not contents.damaged
    assert "CRC mismatch" in contents.warnings[0]


def test_a_bad_record_mid_file_is_damage_not_a_crash(tmp_path):
    path = tmp_path / JOURNAL_NAME
    write_journal(path, ENTRIES).close()
    lines = path.read_bytes().split(b"\n")
    lines[2] = lines[2].replace(b"10", b"99")  # the bet's amount, its CRC left as it was
    path.write_bytes(b"\n".join(lines))
    contents = read_journal(path)
    assert contents.entries == ENTRIES[:1]
    assert contents.damaged
    assert "line 3: CRC mismatch" in contents.warnings[0]


def test_a_journal_without_its_checkpoint_is_refused(tmp_path):
    path = tmp_path / JOURNAL_NAME
    path.write_bytes(b"0000 {}\n")
    with pytest.raises(CodecError, match="line 1, the checkpoint"):
        read_journal(path)


# --------------------------------------------------------------------------- rebuilding a table


class Setup:
    """A table as ``dealer-assist table`` builds it over one recording directory (its store
    unsigned: the signing is tested in test_table_evidence.py)."""

    def __init__(self, directory: Path, *, has_camera: bool = False, rules: str = "s17-6",
                 heartbeats: bool = False):
        self.directory = directory
        self.heartbeats = heartbeats
        self.recording = open_recording(directory, "T1")
        self.recorder = self.recording.recorder
        self.has_camera = has_camera
        self.config = {**CONFIG, "rules": rules, "camera": has_camera}
        self.rules = rules

    def make_loop(self, rules_spec, prefix: str, number: int) -> TableLoop:
        return TableLoop(rules_spec, self.recorder, round_prefix=prefix, round_number=number,
                         has_camera=self.has_camera, shoe_heartbeats=self.heartbeats)

    def open(self, now: float = 0.0, cannot_resend: bool = False):
        return open_table(self.directory, self.config, self.rules, self.make_loop, "T1-new",
                          recording=self.recording, cannot_resend=cannot_resend,
                          now=now)

    def recorded(self) -> None:
        """Wait until the store has written (and exported) all it was handed."""
        deadline = time.monotonic() + 10
        while self.recording.pending and time.monotonic() < deadline:
            time.sleep(0.005)
        assert not self.recording.pending

    def close(self) -> None:
        self.recording.close()


def run_inputs(runner_loop: TableLoop, journal: TableJournal, items, t0: float = 10.0) -> float:
    """What the runner does with each input: journal it, hand it over, let waits expire."""
    t = t0
    for item in items:
        t += 0.1
        journal.append(JournalEntry(t, (item,)))
        runner_loop.handle(item, t)
        runner_loop.tick(t)
    return t


def world_steps(seed: int, rounds: int, camera: bool) -> list[TableInput]:
    world = SimulatedTable(RuleSet.preset("s17-6"), [Player(1, "A"), Player(3, "B")], seed=seed)
    world.camera_sees = camera
    steps: list[TableInput] = [SignIn("D1"), ShoeLink(True)] + (
        [CameraLink(True)] if camera else [])
    for number in range(1, rounds + 1):
        steps.extend(item for source, item in world.round(number)
                     if camera or source != "camera")
    return steps


def same_round(a: TableLoop, b: TableLoop) -> None:
    assert a.round_id == b.round_id
    assert a.view()["round"] == b.view()["round"]
    assert a.cards_out == b.cards_out


@pytest.mark.parametrize("camera", [False, True])
def test_a_table_rebuilt_from_its_journal_mid_round_is_the_table_it_was(tmp_path, camera):
    steps = world_steps(seed=5, rounds=3, camera=camera)
    last_bet = max(i for i, s in enumerate(steps) if isinstance(s, PlaceBet))
    cut = last_bet + 5  # in the last round, cards dealt
    before = Setup(tmp_path, has_camera=camera)
    first = before.open(now=10.0)
    live = first.loop
    run_inputs(live, first.journal, steps[:cut])
    assert live.round_open
    first.journal.close()
    before.close()  # the process dies; what it wrote stays

    after = Setup(tmp_path, has_camera=camera)
    table = after.open(now=3.0)  # a new process: its monotonic clock reads anything
    assert table.resumed == live.round_id and table.voided is None
    same_round(table.loop, live)
    assert table.loop.dealer == live.dealer == "D1"  # the sign-in replayed, without a PIN
    assert table.loop.view()["phase"] == "resumed" and table.loop.view()["settlement"] is None
    assert table.loop.round_number == live.round_number
    assert 3.0 + table.clock_offset >= first.journal.checkpoint_at.t  # time never goes back
    # both go on with the same inputs and settle the same
    table.loop.handle(ConfirmFelt(), 50.0)
    assert table.loop.view()["resumed"] is None
    for item in steps[cut:]:
        live.handle(item, 50.0)
        table.loop.handle(item, 50.0)
    assert table.loop.last_settlement == live.last_settlement
    after.close()


def test_alarms_acknowledged_before_a_crash_stay_acknowledged_under_their_numbers(tmp_path):
    """A restarted table used to number its alarms from 1 again and drop every
    acknowledgement in its journal: the dealer acknowledged them all a second time."""
    steps = world_steps(seed=5, rounds=2, camera=True)
    first_round_over = next(i for i, s in enumerate(steps) if isinstance(s, FinishRound))
    bets = [i for i, s in enumerate(steps) if isinstance(s, PlaceBet)]
    second_round_dealt = max(bets) + 5
    before = Setup(tmp_path, has_camera=True)
    first = before.open(now=10.0)
    live = first.loop
    t = run_inputs(live, first.journal, steps[:first_round_over + 1])
    assert not live.round_open and live.alarms_raised >= 1  # the dealer's sign-in
    first.journal.checkpoint(Checkpoint.of(live, before.config, None, t))  # at rest
    base = live.alarms_raised
    t = run_inputs(live, first.journal, steps[first_round_over + 1:second_round_dealt], t)
    t = run_inputs(live, first.journal, [CameraMoved("bumped by a player")], t)
    moved = live.alarms[-1]
    assert moved.id == base + 1 and moved.active
    run_inputs(live, first.journal, [AcknowledgeAlarm(moved.id)], t)
    assert not live.alarms[-1].active
    first.journal.close()
    before.close()  # the process dies mid-round

    after = Setup(tmp_path, has_camera=True)
    table = after.open(now=3.0)
    assert table.resumed == live.round_id
    rebuilt = {a.id: a for a in table.loop.alarms if a.id > base}
    assert rebuilt[moved.id].kind is moved.kind
    assert rebuilt[moved.id].acknowledged and not rebuilt[moved.id].active
    assert table.loop.alarms_raised >= live.alarms_raised  # new alarms number on, never again
    after.close()


def test_rounds_and_ids_go_on_across_restarts_and_the_journal_stays_one_round_long(tmp_path):
    steps = world_steps(seed=8, rounds=4, camera=False)
    setup = Setup(tmp_path)
    table = setup.open()
    runner = TableRunner(table.loop, journal=table.journal, journal_config=setup.config)
    with runner:
        for item in steps:
            runner.submit(item)
        assert runner.wait_idle(10)
    table.journal.close()
    setup.close()
    contents = read_journal(tmp_path / JOURNAL_NAME)
    assert contents.entries == []  # checkpointed after the last round was recorded
    assert contents.checkpoint.round_number == 4
    assert contents.checkpoint.dealer == "D1"  # the checkpoint keeps who is signed in
    assert contents.checkpoint.cards_out == {c.code: n for c, n in table.loop.cards_out.items()}
    again = Setup(tmp_path)
    table = again.open()
    assert table.resumed is None and table.voided is None
    assert table.loop.dealer == "D1"  # still signed in: the bet is taken
    table.loop.handle(ShoeLink(True), 0.0)
    table.loop.handle(PlaceBet(1, Decimal("10")), 0.0)
    assert table.loop.round_id == "T1-new-00005"  # the prefix and numbering carry on
    assert {c.code: n for c, n in table.loop.cards_out.items()} == contents.checkpoint.cards_out
    again.close()
    assert len(list((tmp_path / "rounds").glob("*.jsonl"))) == 4


def test_a_round_settled_but_not_recorded_before_the_crash_is_recorded_at_restart(tmp_path):
    steps = world_steps(seed=5, rounds=1, camera=False)
    truth = TableLoop("s17-6", MemoryRecorder(), has_camera=False)
    truth.dealer = "D1"  # signed in (signing in: test_sign_in.py)
    setup = Setup(tmp_path)
    table = setup.open()
    for item in steps:  # journaled, but the process dies before the recorder writes
        table.journal.append(JournalEntry(1.0, (item,)))
        truth.handle(item, 1.0)
    table.journal.close()
    setup.close()
    assert not list((tmp_path / "rounds").glob("*.jsonl"))
    again = Setup(tmp_path)
    table = again.open()
    [path] = (tmp_path / "rounds").glob("*.jsonl")
    assert path.stem == "T1-new-00001"
    assert truth.last_settlement is not None
    assert settle_log(path.read_text().splitlines()).net == truth.last_settlement.net
    assert table.resumed is None and not table.loop.round_open
    again.close()


@pytest.mark.parametrize(("how", "why"), [
    ("ascii", "cannot resend"),
    ("rules", "configuration changed"),
    ("damaged", "journal is damaged"),
])
def test_a_round_in_play_that_cannot_be_trusted_is_voided_naming_every_bet_and_card(
        tmp_path, how, why):
    steps = world_steps(seed=5, rounds=1, camera=False)
    cut = max(i for i, s in enumerate(steps) if isinstance(s, PlaceBet)) + 4
    setup = Setup(tmp_path)
    table = setup.open()
    run_inputs(table.loop, table.journal, steps[:cut])
    round_id = table.loop.round_id
    table.journal.append(JournalEntry(99.0, (Decide(1, Action.STAND),)))
    table.journal.append(JournalEntry(99.5, (Decide(3, Action.STAND),)))
    table.journal.close()
    setup.close()
    path = tmp_path / JOURNAL_NAME
    if how == "damaged":
        lines = path.read_bytes().split(b"\n")
        lines[-3] = lines[-3].replace(b"stand", b"stank")
        path.write_bytes(b"\n".join(lines))
    again = Setup(tmp_path, rules="h17-ddd-6" if how == "rules" else "s17-6")
    table = again.open(cannot_resend=how == "ascii")
    assert table.resumed is None and table.voided is not None
    assert table.voided[0] == round_id and why in table.voided[1]
    assert not table.loop.round_open
    assert table.loop.rules.name == RuleSet.from_spec(again.rules).name
    again.recorded()
    void = tmp_path / "void" / f"{round_id}.jsonl"
    text = void.read_text()
    bets = [s for s in steps[:cut] if isinstance(s, PlaceBet)]
    cards = [s.card.code for s in steps[:cut] if isinstance(s, ShoeCard)]
    assert text.count('"type":"bet"') == len(bets) and all(c in text for c in cards)
    assert why in (tmp_path / "void" / f"{round_id}.reason.txt").read_text()
    alarms = (tmp_path / "alarms.jsonl").read_text()
    assert "round_voided" in alarms and why in alarms
    assert bool(list(tmp_path.glob(f"{JOURNAL_NAME}.damaged-*"))) == (how == "damaged")
    again.close()


def test_a_bet_that_waited_behind_a_voided_rounds_question_is_voided_not_lost(tmp_path):
    """A question open, a bet touched meanwhile (it waits behind the question), then a restart
    under a new configuration: the void took the question down and the bet began a round in
    the old table, which the fresh one did not carry over. That round is voided too, its bet
    on record."""
    setup = Setup(tmp_path)
    table = setup.open()
    steps = [SignIn("D1"), ShoeLink(True), PlaceBet(1, Decimal("10")), PlaceBet(2, Decimal("10")),
             *(ShoeCard(Card.parse(code)) for code in "KC 9D 6S 2C 9H 5D 4H".split())]
    run_inputs(table.loop, table.journal, steps)
    assert table.loop.question is not None  # no touch asked for the 4H
    run_inputs(table.loop, table.journal, [PlaceBet(3, Decimal("25"))], t0=20.0)
    first = table.loop.round_id
    table.journal.close()
    setup.close()
    again = Setup(tmp_path, rules="h17-ddd-6")
    table = again.open()
    assert table.voided is not None and table.voided[0] == first
    assert not table.loop.round_open
    again.recorded()
    voided = sorted(path.name for path in (tmp_path / "void").glob("*.jsonl"))
    assert voided == [f"{first}.jsonl", "T1-new-00002.jsonl"]
    bet = (tmp_path / "void" / "T1-new-00002.jsonl").read_text()
    assert '"type":"bet"' in bet and '"seat":3' in bet and '"amount":"25.00"' in bet
    assert "waited behind the round voided" in (
        tmp_path / "void" / "T1-new-00002.reason.txt").read_text()
    table.loop.handle(PlaceBet(1, Decimal("10")), 30.0)
    assert table.loop.round_id == "T1-new-00003"  # ids never repeat
    again.close()


@pytest.mark.parametrize(("rules", "kept"), [("h17-ddd-6", True), ("s17-8", False)])
def test_a_new_configuration_keeps_the_pack_count_only_for_the_same_number_of_decks(
        tmp_path, rules, kept):
    """Rules changed while the table was down: with as many decks the shoe is the one it was
    and its count goes on; with another number it is another shoe and the count starts again."""
    steps = world_steps(seed=5, rounds=1, camera=False)
    setup = Setup(tmp_path)
    table = setup.open()
    run_inputs(table.loop, table.journal, steps)
    out = dict(table.loop.cards_out)
    assert out and not table.loop.round_open
    table.journal.close()
    setup.close()
    again = Setup(tmp_path, rules=rules)
    table = again.open()
    assert table.loop.rules.decks == RuleSet.from_spec(rules).decks
    assert dict(table.loop.cards_out) == (out if kept else {})
    table.journal.close()
    again.close()


REFUSING_DISK = r"""
import resource, signal, sys
from decimal import Decimal
from pathlib import Path
from dealer_assist.table.journal import Checkpoint, JournalEntry, JournalError, TableJournal
from dealer_assist.table.sources import PlaceBet

signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG instead
path = Path(sys.argv[1])
journal = TableJournal(path, Checkpoint({"table": "T1"}, "T1-x"))
first, second = (JournalEntry(1.0, (PlaceBet(s, Decimal("10")),)) for s in (1, 2))
soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
resource.setrlimit(resource.RLIMIT_FSIZE, (path.stat().st_size + 20, hard))
try:
    journal.append(first)
except JournalError as error:
    print("refused:", error)
resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
journal.append(second)
"""


def test_a_record_the_disk_refused_is_written_before_the_next_in_order(tmp_path):
    """The disk refusing a write (here a file-size limit, as a full disk does) raises, leaves no
    half record, and the record is written first at the next append."""
    path = tmp_path / JOURNAL_NAME
    done = subprocess.run([sys.executable, "-c", REFUSING_DISK, str(path)], capture_output=True,
                          text=True, timeout=60, cwd=Path(__file__).resolve().parents[2])
    assert done.returncode == 0, done.stderr
    assert "refused: journal" in done.stdout and "1 record(s) kept" in done.stdout
    contents = read_journal(path)
    assert not contents.warnings
    assert [e.inputs[0].seat for e in contents.entries] == [1, 2]


def test_a_wait_that_expired_between_inputs_is_journaled_and_replayed(tmp_path):
    """Shoe + camera: the camera never sees the card land, so the card is taken from the shoe
    alone when its wait expires on a tick with no input; the journal keeps that tick."""
    setup = Setup(tmp_path, has_camera=True)
    table = setup.open(now=0.0)
    clock = [0.0]
    runner = TableRunner(table.loop, clock=lambda: clock[0], journal=table.journal,
                         journal_config=setup.config)

    def seat_one_cards(loop: TableLoop) -> list:
        shown = loop.view()["round"]
        return [] if shown is None else shown["seats"][0]["hands"][0]["cards"]

    with runner:
        for item in (SignIn("D1"), ShoeLink(True), CameraLink(True), PlaceBet(1, Decimal("10")),
                     ShoeCard(Card.parse("9S"))):
            assert runner.submit(item).wait(5)
        assert runner.wait_idle(5)
        assert seat_one_cards(table.loop) == []  # waiting for the camera
        clock[0] = 5.0  # past camera_wait_s with no input: a tick takes the card from the shoe
        assert runner.wait_until(lambda loop: seat_one_cards(loop) == ["9S"], 5)
    table.journal.close()
    setup.close()
    assert any(entry.tick for entry in read_journal(tmp_path / JOURNAL_NAME).entries)
    again = Setup(tmp_path, has_camera=True)
    rebuilt = again.open(now=0.0)
    assert rebuilt.resumed == table.loop.round_id
    same_round(rebuilt.loop, table.loop)
    again.close()


def test_a_heartbeat_is_journaled_only_while_a_landing_waits_and_replays_its_verdict(tmp_path):
    """The shoe's heartbeats come twice a second: one with no landing waiting for its shoe
    card is neither journaled nor handed to the loop; one that comes while a landing waits
    says the shoe has no card for it, and a restart replays the verdict it led to."""
    setup = Setup(tmp_path, has_camera=True, heartbeats=True)
    table = setup.open(now=0.0)
    clock = [0.0]
    runner = TableRunner(table.loop, clock=lambda: clock[0], journal=table.journal,
                         journal_config=setup.config)

    def not_from_shoe(loop: TableLoop) -> bool:
        return AlarmKind.NOT_FROM_SHOE in [a.kind for a in loop.alarms]

    with runner:
        for item in (SignIn("D1"), ShoeLink(True), CameraLink(True), PlaceBet(1, Decimal("10")),
                     ShoeCard(Card.parse("9S")), FeltCard(Card.parse("9S"), CardTarget(1, 0)),
                     ShoeHeard()):
            assert runner.submit(item).wait(5)
        clock[0] = 1.0
        assert runner.submit(FeltCard(Card.parse("KC"), CardTarget(2, 0))).wait(5)  # a stray
        clock[0] = 2.5  # past shoe_wait_s, no heartbeat since the stray: it waits
        assert runner.wait_idle(5) and not not_from_shoe(table.loop)
        assert runner.submit(ShoeHeard()).wait(5)
        assert runner.wait_until(not_from_shoe, 5)
        assert runner.submit(ShoeHeard()).wait(5)  # nothing waits for it now
        assert runner.wait_idle(5)
    table.journal.close()
    setup.close()
    entries = read_journal(tmp_path / JOURNAL_NAME).entries
    heard = [one for entry in entries for one in entry.inputs if isinstance(one, ShoeHeard)]
    assert len(heard) == 1
    again = Setup(tmp_path, has_camera=True, heartbeats=True)
    rebuilt = again.open(now=0.0)
    assert rebuilt.resumed == table.loop.round_id
    assert not_from_shoe(rebuilt.loop)
    same_round(rebuilt.loop, table.loop)
    again.close()


def test_a_restarted_tables_runner_measures_the_cameras_lag_on_its_own_clock():
    """After a restart the runner's clock goes on from the journal's time (here an hour behind
    the monotonic clock the camera stamps its frames with): a sighting from a frame 0.9 s old
    reads as 0.9 s behind, not as the hour (which, clamped, read as no lag at all)."""
    loop = TableLoop("h17-ddd-6", MemoryRecorder(), has_shoe=False)
    with TableRunner(loop, clock=lambda: time.monotonic() - 3600.0) as runner:
        sighting = FeltCard(Card.parse("9S"), CardTarget(1, 0), seen_at=time.monotonic() - 0.9)
        assert runner.submit(sighting).wait(5)
        assert runner.wait_idle(5)
        view = runner.view()
    assert 900 <= view["camera_lag_ms"] < 60_000
    assert [a["kind"] for a in view["alarms"]] == ["camera_behind"]


def test_a_store_holding_the_round_otherwise_than_the_journal_is_an_alarm_and_is_put_right(
        tmp_path):
    """The store's copy of the round in play holds a record the table never made (here: a
    bet appended to it while the table was down): the restart raises and records an alarm
    naming the round, records the round again whole from the journal (the store's copy kept,
    marked partial), and the round ends there and in its file as played."""
    steps = world_steps(seed=5, rounds=1, camera=False)
    cut = max(i for i, s in enumerate(steps) if isinstance(s, PlaceBet)) + 4
    setup = Setup(tmp_path)
    table = setup.open()
    run_inputs(table.loop, table.journal, steps[:cut])
    round_id = table.loop.round_id
    assert round_id is not None
    setup.recorded()
    table.journal.close()
    setup.close()
    with Recorder.open(tmp_path, table="T1") as recorder:
        recorder.continue_round(recorder.store.round_keys(round_id)[-1])
        recorder.event({"type": "bet", "seat": 6, "amount": "500.00"})

    again = Setup(tmp_path)
    table = again.open()
    assert table.resumed == round_id
    [alarm] = [a for a in table.loop.alarms if a.kind is AlarmKind.RECORDING_FAILED]
    assert alarm.text.startswith(f"round {round_id}: the recording store's record ")
    for item in steps[cut:]:
        table.loop.handle(item, 50.0)
        table.loop.tick(50.0)
    assert not table.loop.round_open and table.loop.last_settlement is not None
    lines = table.loop.round_lines()
    again.recorded()
    again.close()
    store = RecordingStore(tmp_path)
    try:
        first, second = (load_round(store, key) for key in store.round_keys(round_id))
        assert first is not None and second is not None
        assert first.status == "partial" and second.status == "settled"
        assert [r.body_text for r in second.events] == [
            json.dumps(json.loads(line), sort_keys=True, separators=(",", ":"))
            for line in lines]
        alarms = [r.body_text for r in store.records(kinds=("alarm",))]
        assert any("recording_failed" in body and round_id in body for body in alarms)
    finally:
        store.close()
    path = tmp_path / "rounds" / f"{round_id}.jsonl"
    assert path.read_text().splitlines() == [r.body_text for r in second.events]
    assert "recording_failed" in (tmp_path / "alarms.jsonl").read_text()


def test_an_entry_keeps_the_utc_time_of_its_input_and_an_old_one_without_it_reads():
    stamped = JournalEntry(2.0, (PlaceBet(1, Decimal("10")),), at="2026-12-02T04:32:14.001Z")
    assert JournalEntry.from_json(json.loads(json.dumps(stamped.to_json()))) == stamped
    tick = JournalEntry(2.5, tick=True, at="2026-12-02T04:32:14.501Z")
    assert JournalEntry.from_json(tick.to_json()) == tick
    old = JournalEntry.from_json({"t": 2.0, "in": [encode_input(ShoeLink(True))]})
    assert old.at is None and old.inputs == (ShoeLink(True),)
    with pytest.raises(CodecError, match="'at' must be a UTC time"):
        JournalEntry.from_json({"t": 2.0, "in": [], "at": "noon"})


def test_events_carry_when_their_input_was_handed_over_and_a_restart_writes_them_again(
        tmp_path):
    """Through the real runner, each event carries the UTC time its input was submitted, to the
    millisecond, in order, between the test's own readings of the clock; rebuilt from the
    journal, the table writes the same lines (the store finds nothing that differs)."""
    steps = world_steps(seed=5, rounds=2, camera=True)
    cut = max(i for i, s in enumerate(steps) if isinstance(s, PlaceBet)) + 5  # cards out
    setup = Setup(tmp_path, has_camera=True)
    table = setup.open(now=time.monotonic())
    runner = TableRunner(table.loop, journal=table.journal, journal_config=setup.config)
    before = datetime.now(UTC).replace(microsecond=0)  # "at" is cut to the millisecond
    with runner:
        for item in steps[:cut]:
            assert runner.submit(item).wait(5)
        assert runner.wait_idle(5)
    after = datetime.now(UTC)
    assert table.loop.round_open and table.loop.rounds_played == 1
    live = table.loop.round_lines()
    setup.recorded()
    table.journal.close()
    setup.close()
    events = [json.loads(line) for line in live]
    times = [datetime.fromisoformat(e["at"].replace("Z", "+00:00")) for e in events]
    assert all(len(e["at"]) == len("2026-12-02T04:32:14.001Z") for e in events)
    assert times == sorted(times) and before <= times[0] and times[-1] <= after

    again = Setup(tmp_path, has_camera=True)
    rebuilt = again.open(now=0.0)  # a new process's monotonic clock reads anything
    assert rebuilt.resumed == table.loop.round_id
    assert rebuilt.loop.round_lines() == live
    assert AlarmKind.RECORDING_FAILED not in [a.kind for a in rebuilt.loop.alarms]
    again.recorded()
    again.close()
    store = RecordingStore(tmp_path)
    try:
        for key in store.round_keys(table.loop.round_id):  # one copy, as the table wrote it
            record = load_round(store, key)
            assert record is not None
            assert [json.loads(r.body_text) for r in record.events] == events
        first_id = f"{table.loop.round_prefix}-{table.loop.round_number - 1:05d}"
        first = load_round(store, store.round_keys(first_id)[-1])
        assert first is not None and first.status == "settled"
        first_times = [json.loads(r.body_text)["at"] for r in first.events]
        assert first_times == sorted(first_times) and first_times[-1] <= events[0]["at"]
    finally:
        store.close()


def test_a_shoe_card_that_waits_for_its_landing_keeps_the_time_it_left_the_shoe(tmp_path):
    """Shoe + camera: the card is recorded when the camera sees it land, with the time the shoe
    handed it over (``utc_clock``, set here, is the table's clock); rebuilt, the same."""
    setup = Setup(tmp_path, has_camera=True)
    table = setup.open(now=time.monotonic())
    clock = [datetime(2026, 12, 2, 4, 0, 0, 1000, tzinfo=UTC)]
    runner = TableRunner(table.loop, journal=table.journal, journal_config=setup.config,
                         utc_clock=lambda: clock[0])
    with runner:
        for item in (SignIn("D1"), ShoeLink(True), CameraLink(True), PlaceBet(1, Decimal("10"))):
            assert runner.submit(item).wait(5)
        clock[0] = datetime(2026, 12, 2, 4, 0, 3, 250_000, tzinfo=UTC)
        assert runner.submit(ShoeCard(Card.parse("9S"))).wait(5)
        assert runner.wait_idle(5)
        clock[0] = datetime(2026, 12, 2, 4, 0, 4, 999_999, tzinfo=UTC)
        assert runner.submit(FeltCard(Card.parse("9S"), CardTarget(1, 0))).wait(5)
        assert runner.wait_idle(5)
    live = table.loop.round_lines()
    setup.recorded()
    table.journal.close()
    setup.close()
    assert [(e["type"], e["at"]) for e in map(json.loads, live)] == [
        ("round", "2026-12-02T04:00:00.001Z"), ("bet", "2026-12-02T04:00:00.001Z"),
        ("card", "2026-12-02T04:00:03.250Z")]
    again = Setup(tmp_path, has_camera=True)
    rebuilt = again.open(now=0.0)
    assert rebuilt.loop.round_lines() == live
    again.close()


@contextmanager
def _betting_with_a_runner(tmp_path: Path):
    """A table over ``tmp_path`` behind a running runner that journals, at a fixed clock: a
    dealer signed in, the shoe up and a bet placed at seat 1. Yields its setup, the opened
    table and the runner, which stops on leaving."""
    setup = Setup(tmp_path)
    table = setup.open(now=0.0)
    with TableRunner(table.loop, clock=lambda: 1.0, journal=table.journal,
                     journal_config=setup.config,
                     recorded_up_to=lambda: setup.recording.recorded_up_to(0.0)) as runner:
        for item in (SignIn("D1"), ShoeLink(True), PlaceBet(1, Decimal("10"))):
            assert runner.submit(item).wait(5)
        assert runner.wait_idle(5)
        yield setup, table, runner


def test_alarms_no_input_explains_keep_their_numbers_and_acknowledgements_after_a_restart(
        tmp_path):
    """The alarm file cannot be written for one touch (a folder stands in its place), so the
    live table raises a recording alarm that no journaled input explains. Rebuilt from the
    journal, every other alarm keeps its number, and the one the dealer acknowledged is the one
    acknowledged (once, the rebuilt table numbered the later alarms one lower, and replayed the
    acknowledgement onto another alarm, or none)."""
    alarm_file = tmp_path / "alarms.jsonl"
    with _betting_with_a_runner(tmp_path) as (setup, table, runner):
        loop = table.loop
        alarm_file.rename(tmp_path / "alarms.before")
        alarm_file.mkdir()  # the alarm file cannot be written
        assert runner.submit(Decide(3, Action.STAND)).wait(5)  # no hand at seat 3: an alarm
        assert runner.wait_idle(5)
        assert [a.kind for a in loop.alarms[-2:]] == [AlarmKind.ILLEGAL_ACTION,
                                                     AlarmKind.RECORDING_FAILED]
        alarm_file.rmdir()
        assert runner.submit(Decide(4, Action.STAND)).wait(5)
        assert runner.wait_idle(5)
        seat_4 = loop.alarms[-1]
        assert seat_4.text.startswith("seat 4: ")
        assert runner.submit(AcknowledgeAlarm(seat_4.id)).wait(5)
        assert runner.wait_idle(5)
        live = [(a.id, a.kind, a.text, a.acknowledged) for a in loop.alarms
                if a.kind is not AlarmKind.RECORDING_FAILED]
        raised = loop.alarms_raised
    table.journal.close()
    setup.close()
    again = Setup(tmp_path)
    rebuilt = again.open(now=0.0).loop
    again.close()
    assert [(a.id, a.kind, a.text, a.acknowledged) for a in rebuilt.alarms
            if a.kind is not AlarmKind.RECORDING_FAILED and a.id <= raised] == live
    # the restart's own alarm (the round resumed) takes the next number, none used before
    assert [a.kind for a in rebuilt.alarms if a.id > raised] == [AlarmKind.ROUND_RESUMED]
    assert min(a.id for a in rebuilt.alarms if a.id > raised) == raised + 1


def test_an_acknowledgement_names_its_alarm_where_its_number_is_another():
    """An acknowledgement carrying the alarm's kind, words, round and time acknowledges that
    alarm, whatever alarm has its number; one that names no alarm kept acknowledges none."""
    loop = TableLoop("h17-ddd-6", MemoryRecorder(), has_shoe=False)
    loop.dealer = "D1"
    loop.handle(PlaceBet(1, Decimal("10")), 0.5)
    loop.handle(Decide(3, Action.STAND), 1.0)  # no hand is in play: an alarm naming seat 3
    loop.handle(Decide(4, Action.STAND), 1.1)
    first, second = loop.alarms
    loop.handle(AcknowledgeAlarm(first.id, second.kind.name, second.text, second.round_id,
                                 second.at), 1.2)
    assert [a.acknowledged for a in loop.alarms] == [False, True]
    loop.handle(AcknowledgeAlarm(first.id, first.kind.name, first.text, first.round_id,
                                 first.at + 5.0), 1.3)  # raised at another time: not it
    assert [a.acknowledged for a in loop.alarms] == [False, True]
    loop.handle(AcknowledgeAlarm(first.id), 1.4)  # a touch as the screen sends it: by number
    assert [a.acknowledged for a in loop.alarms] == [True, True]


def test_a_double_tap_on_one_of_two_alike_alarms_replays_onto_that_one(tmp_path):
    """One shoe event reports two alike problems while the alarm file cannot be written (an
    alarm more between them, which the rebuilt table does not raise); the dealer acknowledges
    the second twice. Rebuilt, the second is acknowledged and the first is not (matched by its
    words alone, the second tap acknowledged the first)."""
    alarm_file = tmp_path / "alarms.jsonl"
    with _betting_with_a_runner(tmp_path) as (setup, table, runner):
        loop = table.loop
        alarm_file.rename(tmp_path / "alarms.before")
        alarm_file.mkdir()  # the alarm file cannot be written
        assert runner.submit(ShoeDelivery((ShoeProblem("jam"), ShoeProblem("jam")), 7, 1,
                                          lambda session, seq: None)).wait(5)
        assert runner.wait_idle(5)
        alarm_file.rmdir()
        second = [a for a in loop.alarms if a.kind is AlarmKind.SHOE_PROBLEM][-1]
        for _ in range(2):
            assert runner.submit(AcknowledgeAlarm(second.id)).wait(5)
        assert runner.wait_idle(5)
        live = [a.acknowledged for a in loop.alarms if a.kind is AlarmKind.SHOE_PROBLEM]
    table.journal.close()
    setup.close()
    assert live == [False, True]
    again = Setup(tmp_path)
    rebuilt = again.open(now=0.0).loop
    again.close()
    assert [a.acknowledged for a in rebuilt.alarms if a.kind is AlarmKind.SHOE_PROBLEM] == live


def test_an_entry_keeps_the_alarm_count_before_it_and_refuses_one_that_is_no_count():
    entry = JournalEntry(2.0, (AcknowledgeAlarm(3, "ILLEGAL_ACTION", "seat 3", "T1-x-00001",
                                                 1.5),), alarms=7)
    assert JournalEntry.from_json(json.loads(json.dumps(entry.to_json()))) == entry
    tick = JournalEntry(2.5, tick=True, alarms=8)
    assert JournalEntry.from_json(tick.to_json()) == tick
    for bad in (-1, True, "7", 1.5):
        with pytest.raises(CodecError, match="'alarms' must be a count"):
            JournalEntry.from_json({"t": 2.0, "in": [], "alarms": bad})


def test_a_restart_after_the_round_settled_shows_its_payouts_again(tmp_path):
    """The round settled and the journal started again from the table at rest (a touch after
    the settlement checkpoints it); the table dies while the dealer pays. Restarted, the screen
    shows the same PAY/TAKE lines (once, it showed nothing: the payouts owed were gone from the
    screen), and the next round begins as before."""
    steps = world_steps(seed=8, rounds=1, camera=False)
    setup = Setup(tmp_path)
    table = setup.open()
    runner = TableRunner(table.loop, journal=table.journal, journal_config=setup.config,
                         recording_pending=lambda: setup.recording.pending)
    with runner:
        for item in steps:
            assert runner.submit(item).wait(5)
        assert runner.wait_idle(5)
        setup.recorded()
        assert runner.submit(AcknowledgeAlarm(1)).wait(5)  # any touch at rest
        assert runner.wait_idle(5)
        live = table.loop.view()
    assert live["phase"] == "settled" and live["settlement"] is not None
    table.journal.close()
    setup.close()
    assert read_journal(tmp_path / JOURNAL_NAME).entries == []  # checkpointed after the round
    again = Setup(tmp_path)
    rebuilt = again.open()
    view = rebuilt.loop.view()
    assert (view["phase"], view["settlement"], view["round"]) == (
        "settled", live["settlement"], live["round"])
    rebuilt.journal.close()
    again.close()
    changed = Setup(tmp_path, rules="h17-ddd-6")  # the rules changed while it was down
    under_new_rules = changed.open().loop
    assert under_new_rules.view()["settlement"] == live["settlement"]
    under_new_rules.handle(PlaceBet(1, Decimal("10")), 100.0)
    assert under_new_rules.round_id == f"{table.loop.round_prefix}-00002"
    changed.recorded()
    changed.close()
    store = RecordingStore(tmp_path)
    try:  # the settled round was not recorded again
        assert len(store.round_keys(table.loop.last_settlement.round_id)) == 1
    finally:
        store.close()


def test_a_checkpoint_keeps_the_round_on_screen_and_refuses_lines_that_are_no_lines():
    checkpoint = Checkpoint({"rules": "s17-6"}, "T1-x", 3, shown=('{"type": "round"}',),
                            felt_left=((Card.parse("9S"), 1, 1), (None, None, 2)))
    assert Checkpoint.from_json(json.loads(json.dumps(checkpoint.to_json()))) == checkpoint
    old = checkpoint.to_json()
    del old["shown"], old["felt_left"]  # written before the ended round was kept
    assert Checkpoint.from_json(old).shown == () and Checkpoint.from_json(old).felt_left == ()
    for bad in ([["9S", 1]], [["ZZ", 1, 1]], [["9S", "1", 1]], [["9S", 1, 0]], "9S"):
        with pytest.raises(CodecError, match="'felt_left'"):
            Checkpoint.from_json({**checkpoint.to_json(), "felt_left": bad})
    with pytest.raises(CodecError, match="'shown' must be a list of round-log lines"):
        Checkpoint.from_json({**checkpoint.to_json(), "shown": [{"type": "round"}]})


def test_an_answer_after_a_checkpoint_replays_onto_the_question_it_answered(tmp_path):
    """Question ids count from the table's start. A question asked and answered in round 1,
    the table checkpointed at rest; in round 2 another, answered, then a crash: the replay
    numbered round 2's question 1 (the checkpoint did not keep the count), refused the
    journaled answer to question 2, and reopened the question with the hit lost."""
    setup = Setup(tmp_path)
    table = setup.open(now=10.0)
    runner = TableRunner(table.loop, journal=table.journal, journal_config=setup.config)

    def a_round_with_a_question(cards: str, hit: str) -> None:
        runner.submit(PlaceBet(1, Decimal("10")))
        runner.submit(PlaceBet(2, Decimal("10")))
        for code in [*cards.split(), hit]:  # no touch asks for the last: where did it go?
            runner.submit(ShoeCard(Card.parse(code)))
        assert runner.wait_idle(10) and table.loop.question is not None
        runner.submit(AnswerQuestion(table.loop.question.id,
                                     table.loop.question.labels.index("HIT seat 1")))
        assert runner.wait_idle(10) and table.loop.question is None

    with runner:
        runner.submit(SignIn("D1"))
        runner.submit(ShoeLink(True))
        a_round_with_a_question("KS KD 7H 2S 8D KH", "3H")
        runner.submit(Decide(1, Action.STAND))
        runner.submit(Decide(2, Action.STAND))
        a_round_with_a_question("KC 9D 6S 2C 9H 5D", "4H")
        assert table.loop.questions_asked == 2
    assert read_journal(tmp_path / JOURNAL_NAME).checkpoint.questions_asked == 1
    table.journal.close()
    setup.close()

    after = Setup(tmp_path)
    again = after.open(now=3.0)
    assert again.resumed == "T1-new-00002"
    assert again.loop.question is None and again.loop.questions_asked == 2
    assert [c.code for c in again.loop.engine.hands(1)[0].cards] == ["KC", "2C", "4H"]
    assert not [a for a in again.loop.alarms if "question 1 is open" in a.text]
    after.close()


def test_a_checkpoint_keeps_how_many_questions_were_asked_and_refuses_what_is_no_count():
    checkpoint = Checkpoint({"rules": "s17-6"}, "T1-x", questions_asked=4)
    assert Checkpoint.from_json(json.loads(json.dumps(checkpoint.to_json()))) == checkpoint
    old = checkpoint.to_json()
    del old["questions_asked"]  # written before it was kept
    assert Checkpoint.from_json(old).questions_asked == 0
    for bad in (-1, "4", 4.0, True, None):
        with pytest.raises(CodecError, match="'questions_asked'"):
            Checkpoint.from_json({**checkpoint.to_json(), "questions_asked": bad})


def test_a_shoe_link_down_at_a_checkpoint_replays_the_resend_as_it_was_lined_up_live(tmp_path):
    """The link drops between rounds with the camera reading, the table at rest (so
    checkpointed); the next round's first card is dealt and missed by the camera, then resent.
    Live, it holds the round (the table cannot tell where it went). The checkpoint did not keep
    the drop, so a restart replayed the resend as a live card: placed, the hold gone."""
    setup = Setup(tmp_path, has_camera=True, rules="h17-ddd-6")
    table = setup.open(now=10.0)
    runner = TableRunner(table.loop, journal=table.journal, journal_config=setup.config)
    with runner:
        for item in (SignIn("D1"), ShoeLink(True), CameraLink(True), PlaceBet(1, Decimal("10"))):
            runner.submit(item)
        for code, spot in (("9S", CardTarget(1, 0)), ("7S", DEALER), ("7H", CardTarget(1, 0))):
            runner.submit(ShoeCard(Card.parse(code)))
            runner.submit(FeltCard(Card.parse(code), spot))
        runner.submit(ShoeCard(Card.parse("KD")))
        runner.submit(FeltCard(None, DEALER))
        runner.submit(Decide(1, Action.STAND))
        runner.submit(HoleCardShown(Card.parse("KD")))  # the dealer stands on 17
        runner.submit(ShoeLink(False, "cable"))
        assert runner.wait_idle(10) and table.loop.rounds_played == 1 and table.loop.at_rest
        runner.submit(PlaceBet(1, Decimal("10")))
        assert runner.wait_idle(10)
        resend = read_journal(tmp_path / JOURNAL_NAME).checkpoint.shoe_resend
        assert resend.watched and resend.down_round is None
        for item in (ShoeLink(True, "back"), ShoeCard(Card.parse("4D"), held=True),
                     ShoeCaughtUp()):
            runner.submit(item)
        assert runner.wait_idle(10)
        live = [(a.kind, a.text) for a in table.loop.disagreements()]
        assert [kind for kind, _ in live] == [AlarmKind.MISPLACED]
    table.journal.close()
    setup.close()

    after = Setup(tmp_path, has_camera=True, rules="h17-ddd-6")
    again = after.open(now=3.0)
    assert [(a.kind, a.text) for a in again.loop.disagreements()] == live
    assert [[c.code for c in h.cards] for h in again.loop.engine.hands(1)] == [[]]
    after.close()


def _dealt_with_the_link_down(setup: Setup):
    """Round 1 dealt with shoe and camera, then the link drops and seat 1's hit, 5C, is read by
    the camera alone."""
    table = setup.open(now=10.0)
    steps = [SignIn("D1"), ShoeLink(True), CameraLink(True), PlaceBet(1, Decimal("10"))]
    for code, spot in (("9S", CardTarget(1, 0)), ("7S", DEALER), ("5H", CardTarget(1, 0))):
        steps += [ShoeCard(Card.parse(code)), FeltCard(Card.parse(code), spot)]
    steps += [ShoeCard(Card.parse("KD")), FeltCard(None, DEALER), ShoeLink(False, "cable"),
              Decide(1, Action.HIT), FeltCard(Card.parse("5C"), CardTarget(1, 0))]
    return table, run_inputs(table.loop, table.journal, steps)


def _restarted_under_new_rules_with_the_link_down(tmp_path):
    """Round 1 dealt with the link down (:func:`_dealt_with_the_link_down`), then the table
    restarted under other rules: the round in play voided. The setup, the resumed table and
    the journal's last time."""
    setup = Setup(tmp_path, has_camera=True, rules="h17-ddd-6")
    table, t = _dealt_with_the_link_down(setup)
    table.journal.close()
    setup.close()
    again = Setup(tmp_path, has_camera=True, rules="s17-6")
    resumed = again.open(now=3.0)
    assert resumed.voided is not None
    return again, resumed, t


def test_a_restart_under_a_new_configuration_keeps_what_the_camera_recorded_meanwhile(tmp_path):
    """The round in play is voided, but the camera's record of 5C stands for the shoe's resend
    of it: the fresh table used to lose it, and the resend raised "the camera missed 5C"."""
    again, resumed, t = _restarted_under_new_rules_with_the_link_down(tmp_path)
    assert [r.card for r in resumed.loop.shoe.awaiting] == [Card.parse("5C")]
    raised = resumed.loop.alarms_raised
    run_inputs(resumed.loop, resumed.journal, [
        CameraLink(True), ShoeLink(True, "back"), ShoeCard(Card.parse("5C"), held=True),
        ShoeCaughtUp()], t0=t + 1)
    assert [a.kind for a in resumed.loop.alarms if a.id > raised] == []
    assert resumed.loop.cards_out[Card.parse("5C")] == 1
    again.close()


def test_a_card_missed_in_the_round_a_new_configuration_voided_is_said_to_be_voided(tmp_path):
    """The fresh table carries the void of the round in play with the drop: 4D, dealt before
    5C and recorded by nothing, went to a round that paid nothing, not one that "settled
    without it"."""
    again, resumed, t = _restarted_under_new_rules_with_the_link_down(tmp_path)
    raised = resumed.loop.alarms_raised
    run_inputs(resumed.loop, resumed.journal, [
        CameraLink(True), ShoeLink(True, "back"), ShoeCard(Card.parse("4D"), held=True),
        ShoeCard(Card.parse("5C"), held=True), ShoeCaughtUp()], t0=t + 1)
    [missed] = [a for a in resumed.loop.alarms if a.id > raised]
    assert missed.kind is AlarmKind.CAMERA_MISSED and missed.round_id == resumed.voided[0]
    assert f"round {resumed.voided[0]} was voided without it" in missed.text
    again.close()


def _a_drop_between_rounds_then_a_crash(tmp_path: Path, *after: TableInput) -> float:
    """Round 1 dealt with shoe and camera; the link fails one way as the dealer stands on 17 and
    comes back (nothing recorded meanwhile, the drop still remembered), the next bet comes, then
    ``after``, and the table stops. The journal's last time."""
    setup = Setup(tmp_path, has_camera=True, rules="h17-ddd-6")
    table = setup.open(now=10.0)
    steps = [SignIn("D1"), ShoeLink(True), CameraLink(True), PlaceBet(1, Decimal("10"))]
    for code, spot in (("9S", CardTarget(1, 0)), ("7S", DEALER), ("7H", CardTarget(1, 0))):
        steps += [ShoeCard(Card.parse(code)), FeltCard(Card.parse(code), spot)]
    steps += [ShoeCard(Card.parse("KD")), FeltCard(None, DEALER),
              ShoeLink(False, "the shoe cannot hear us"), Decide(1, Action.STAND),
              HoleCardShown(Card.parse("KD")), ShoeLink(True, "heard again"),
              PlaceBet(1, Decimal("10")), *after]
    t = run_inputs(table.loop, table.journal, steps)
    assert table.loop.shoe.watched
    table.journal.close()
    setup.close()
    return t


def test_a_restart_with_nothing_left_to_line_up_takes_the_resend_as_a_restart_does(tmp_path):
    """The link failed one way and recovered before a checkpoint (no live card came since, so
    the table still remembered the drop); restarted, the cards the shoe resends were drawn while
    the table was down, watched by nothing: they come as a restart's resend does, not as cards
    the camera missed."""
    t = _a_drop_between_rounds_then_a_crash(tmp_path)
    again = Setup(tmp_path, has_camera=True, rules="h17-ddd-6")
    resumed = again.open(now=3.0)
    assert not resumed.loop.shoe.watched
    run_inputs(resumed.loop, resumed.journal, [
        CameraLink(True), ShoeLink(True, "reader started"),
        ShoeCard(Card.parse("4D"), held=True), FeltCard(Card.parse("4D"), CardTarget(1, 0)),
        ShoeCaughtUp()], t0=t + 1)
    assert [[c.code for c in h.cards] for h in resumed.loop.engine.hands(1)] == [["4D"]]
    assert not resumed.loop.disagreements()
    again.close()


def test_a_checkpoint_keeps_a_shoe_link_down_and_refuses_what_is_no_state():
    resend = ResendState(True, "T1-x-00004", (Recorded(Card.parse("9S"), "T1-x-00004"),
                                              Recorded(None, "T1-x-00004")),
                         (ShoeCard(Card.parse("9S"), ShoeOrigin(3, 4, 5), held=True),
                          ShoeBurn(None, held=True), NewShoe(6, held=True)), ("T1-x-00004",))
    checkpoint = Checkpoint({"rules": "s17-6"}, "T1-x", shoe_resend=resend)
    assert Checkpoint.from_json(json.loads(json.dumps(checkpoint.to_json()))) == checkpoint
    old = checkpoint.to_json()
    del old["shoe_resend"]  # written before it was kept
    assert Checkpoint.from_json(old).shoe_resend == ResendState()
    for bad in ({"watched": 1}, {"down_round": 4}, {"awaiting": [["9S"]]},
                {"awaiting": [["ZZ", None]]}, {"resent": [{"type": "PlaceBet", "seat": 1,
                                                           "amount": "10"}]},
                {"voided": "T1-x-00004"}, {"voided": [4]}, []):
        with pytest.raises(CodecError, match="'shoe_resend'"):
            Checkpoint.from_json({**checkpoint.to_json(), "shoe_resend": bad})


def test_a_checkpoint_keeps_how_far_the_recording_had_got_and_refuses_what_is_no_position():
    checkpoint = Checkpoint({"rules": "s17-6"}, "T1-x", recorded=RecordedUpTo(7, "ab" * 32, 90))
    assert Checkpoint.from_json(json.loads(json.dumps(checkpoint.to_json()))) == checkpoint
    old = checkpoint.to_json()
    del old["recorded"]  # written before it was kept: no alarm is written at a restart
    assert Checkpoint.from_json(old).recorded is None
    for bad in ([True, "h", False], [2**70, "h", 0], [7, "h"], [7, 5, 90], [-1, "h", 0], "7"):
        with pytest.raises(CodecError, match="'recorded'"):
            Checkpoint.from_json({**checkpoint.to_json(), "recorded": bad})


def test_alarms_the_alarm_file_kept_are_written_before_a_checkpoint_says_how_long_it_is(
        tmp_path):
    """``alarms.jsonl`` cannot be written at sign-in (a folder in its place), so its alarm is
    kept to try again. No checkpoint is taken while it is kept; once the file can be written,
    the next rest writes it and the checkpoint then says how long the file is (once, the
    checkpoint was taken without it, saying nothing, so a restart from it wrote no alarm the
    store lacked)."""
    setup = Setup(tmp_path)
    table = setup.open(now=0.0)
    alarm_file = tmp_path / "alarms.jsonl"
    alarm_file.mkdir()
    with TableRunner(table.loop, clock=lambda: 1.0, journal=table.journal,
                     journal_config=setup.config,
                     recording_pending=lambda: setup.recording.pending,
                     recorded_up_to=lambda: setup.recording.recorded_up_to(0.0)) as runner:
        assert runner.submit(SignIn("D1")).wait(5)
        assert runner.wait_idle(5)
        _idle(setup)  # so that only the file holds the checkpoint back
        assert setup.recording.files.kept > 0
        assert read_journal(tmp_path / JOURNAL_NAME).entries  # no checkpoint since
        alarm_file.rmdir()
        signed_in = next(a for a in table.loop.alarms if a.kind is AlarmKind.STAFF)
        assert runner.submit(AcknowledgeAlarm(signed_in.id)).wait(5)  # at rest, no alarm
        assert runner.wait_idle(5)
    table.journal.close()
    setup.close()
    contents = read_journal(tmp_path / JOURNAL_NAME)
    assert not contents.entries and contents.checkpoint.recorded is not None
    assert contents.checkpoint.recorded.alarm_file == alarm_file.stat().st_size
    assert signed_in.text in alarm_file.read_text()


def test_a_shoe_event_a_failed_write_kept_is_acknowledged_once_written(tmp_path):
    """The disk refuses the record of the shoe's event 2; the next touch writes it first. The
    shoe is told then that event 2 is held, and the checkpoint taken at rest starts the shoe
    after it (once, neither: the restarted table took the shoe's resend of event 2 as a card
    more, counted twice). The refusal is a read-only descriptor put in the journal's place,
    which fails ``os.write`` as a full disk does, in this process (a file-size limit would
    refuse the recording's writes too)."""
    setup = Setup(tmp_path)
    table = setup.open(now=0.0)
    acks: list[tuple[int, int]] = []
    runner = TableRunner(table.loop, journal=table.journal, journal_config=setup.config,
                         recording_pending=lambda: setup.recording.pending)

    def event(seq: int, code: str) -> ShoeDelivery:
        return ShoeDelivery((ShoeBurn(Card.parse(code)),), 7, seq,
                            lambda session, at: acks.append((session, at)))

    with runner:
        for item in (SignIn("D1"), ShoeLink(True), event(1, "9S")):
            assert runner.submit(item).wait(5)
        assert runner.wait_idle(5) and acks == [(7, 1)]
        writable = table.journal._fd
        table.journal._fd = os.open(table.journal.path, os.O_RDONLY)
        assert not runner.submit(event(2, "5H")).wait(1)  # not durable: not acknowledged
        assert runner.wait_idle(5) and acks == [(7, 1)]
        os.close(table.journal._fd)
        table.journal._fd = writable
        refused = table.loop.alarms[-1]
        assert refused.kind is AlarmKind.RECORDING_FAILED
        assert runner.submit(AcknowledgeAlarm(refused.id)).wait(5)
        assert runner.wait_idle(5)
    table.journal.close()
    setup.close()
    assert acks == [(7, 1), (7, 2)]
    contents = read_journal(tmp_path / JOURNAL_NAME)
    assert contents.checkpoint.shoe == (7, 2) and contents.checkpoint.cards_out == {
        "9S": 1, "5H": 1}


def test_a_camera_starting_again_over_the_settled_round_raises_nothing(tmp_path):
    """Restarted after a round settled (the journal checkpointed at rest), the table shows
    the round; the camera, starting again, reports the cards still on the felt as they appear.
    They are that round's cards where it recorded them: no "never left the shoe" alarm, which
    would put the round's payouts on hold."""
    steps = world_steps(seed=8, rounds=1, camera=True)
    setup = Setup(tmp_path, has_camera=True)
    table = setup.open(now=10.0)
    t = run_inputs(table.loop, table.journal, steps) + 3.0
    table.loop.tick(t)
    assert table.loop.rounds_played == 1 and table.loop.at_rest
    setup.recorded()
    table.journal.checkpoint(Checkpoint.of(table.loop, setup.config, None, t))
    table.journal.close()
    setup.close()
    again = Setup(tmp_path, has_camera=True)
    rebuilt = again.open(now=0.0).loop
    again.close()
    raised = rebuilt.alarms_raised
    # as a camera starting again reports them: in any order, the hole card turned among them
    sightings = [s for s in steps if isinstance(s, FeltCard) and s.card is not None]
    hole = rebuilt.engine.dealer_cards()[1] if rebuilt.engine else None
    assert hole is not None
    for sighting in [*reversed(sightings), HoleCardShown(hole)]:
        t += 0.01
        rebuilt.handle(sighting, t)
    rebuilt.tick(t + 5.0)
    assert [a.kind for a in rebuilt.alarms if a.id > raised] == []
    assert rebuilt.view()["phase"] == "settled"
    # from the next round's first bet the camera counts again
    rebuilt.handle(PlaceBet(1, Decimal("10")), t + 6.0)
    rebuilt.handle(FeltCard(Card.parse("4C"), CardTarget(1, 0)), t + 6.1)
    rebuilt.tick(t + 9.0)
    assert AlarmKind.NOT_FROM_SHOE in [a.kind for a in rebuilt.alarms if a.id > raised]


def test_a_card_seen_again_after_the_checkpoint_replays_as_it_was_live(tmp_path):
    """After the round settled and the journal started again from rest, the camera reported one
    of its cards again (its tracker lost the felt under the dealer's arm) and the live table held
    the payouts for it; rebuilt from the journal, the table holds them too."""
    steps = world_steps(seed=8, rounds=1, camera=True)
    setup = Setup(tmp_path, has_camera=True)
    table = setup.open(now=10.0)
    loop, journal = table.loop, table.journal
    t = run_inputs(loop, journal, steps) + 3.0
    loop.tick(t)
    setup.recorded()
    journal.checkpoint(Checkpoint.of(loop, setup.config, None, t))
    again_seen = next(s for s in steps if isinstance(s, FeltCard) and s.card is not None
                      and not s.spot.is_dealer)
    t = run_inputs(loop, journal, [again_seen], t) + 2.0
    journal.append(JournalEntry(t, tick=True))
    loop.tick(t)
    assert loop.view()["phase"] == "hold"
    journal.close()
    setup.close()
    again = Setup(tmp_path, has_camera=True)
    rebuilt = again.open(now=0.0).loop
    again.close()
    assert rebuilt.view()["phase"] == "hold"


def test_a_restart_under_a_new_version_shows_no_payouts_a_disagreement_held(tmp_path):
    """A round settled with its payouts held by a disagreement, then the table restarted under
    another configuration (every upgrade changes its version): the fresh table has not the old
    alarms, so it shows no payouts rather than the held ones."""
    setup = Setup(tmp_path, has_camera=True, rules="h17-ddd-6")
    table = setup.open(now=0.0)
    loop, journal = table.loop, table.journal
    steps = [SignIn("D1"), ShoeLink(True), CameraLink(True), PlaceBet(1, Decimal("10"))]
    for code, seat in (("9H", 1), ("9S", None), ("8D", 1)):
        steps += [ShoeCard(Card.parse(code)), FeltCard(Card.parse(code), CardTarget(seat, 0))]
    steps += [ShoeCard(Card.parse("7C")), FeltCard(None, DEALER),
              ShoeCard(Card.parse("2S")), FeltCard(Card.parse("3S"), DEALER)]
    t = run_inputs(loop, journal, steps) + 1.0
    loop.tick(t)
    journal.append(JournalEntry(t, tick=True))
    question = loop.view()["question"]
    run_inputs(loop, journal, [AnswerQuestion(question["id"], next(
        c["choice"] for c in question["choices"] if c["label"] == "STAND seat 1, to the DEALER"))],
        t)
    assert loop.view()["phase"] == "hold"
    setup.recorded()
    journal.close()
    setup.close()
    again = Setup(tmp_path, has_camera=True, rules="h17-ddd-6")
    again.config = {**again.config, "version": "next"}
    rebuilt = again.open(now=0.0)
    assert rebuilt.loop.view()["settlement"] is None
    rebuilt.journal.close()
    again.close()


def test_a_round_settled_on_hold_is_no_rest_and_a_restart_holds_it_still(tmp_path):
    """The camera read 3S where the shoe dealt 2S: the round settles with its payouts held until
    the dealer acknowledges. Until then the table is not at rest (no checkpoint), so a restart
    replays the round and holds its payouts still (with a checkpoint taken, it showed them)."""
    setup = Setup(tmp_path, has_camera=True, rules="h17-ddd-6")
    table = setup.open(now=0.0)
    loop, journal = table.loop, table.journal
    t = 1.0

    def send(*items: TableInput) -> None:
        nonlocal t
        for item in items:
            t += 0.01
            journal.append(JournalEntry(t, (item,)))
            loop.handle(item, t)

    send(SignIn("D1"), ShoeLink(True), CameraLink(True), PlaceBet(1, Decimal("10")))
    for code, seat in (("9H", 1), ("9S", None), ("8D", 1)):
        send(ShoeCard(Card.parse(code)), FeltCard(Card.parse(code), CardTarget(seat, 0)))
    send(ShoeCard(Card.parse("7C")), FeltCard(None, DEALER))
    send(ShoeCard(Card.parse("2S")), FeltCard(Card.parse("3S"), DEALER))  # misread or switched
    t += 1.0
    loop.tick(t)
    journal.append(JournalEntry(t, tick=True))
    question = loop.view()["question"]
    send(AnswerQuestion(question["id"], next(c["choice"] for c in question["choices"]
                                             if c["label"] == "STAND seat 1, to the DEALER")))
    assert loop.rounds_played == 1 and loop.view()["phase"] == "hold"
    assert not loop.at_rest
    setup.recorded()
    journal.close()
    setup.close()
    again = Setup(tmp_path, has_camera=True, rules="h17-ddd-6")
    rebuilt = again.open(now=0.0).loop
    again.close()
    assert rebuilt.view()["phase"] == "hold"
    for alarm in rebuilt.disagreements():
        rebuilt.handle(AcknowledgeAlarm(alarm.id), t + 1.0)
    assert rebuilt.view()["phase"] == "settled" and rebuilt.at_rest


def _settled_and_restarted(tmp_path: Path):
    """One shoe-and-camera round settled, the journal checkpointed at rest, the table
    restarted: its steps, the restarted table and its setup, and the time."""
    steps = world_steps(seed=8, rounds=1, camera=True)
    setup = Setup(tmp_path, has_camera=True)
    table = setup.open(now=10.0)
    t = run_inputs(table.loop, table.journal, steps) + 3.0
    table.loop.tick(t)
    setup.recorded()
    table.journal.checkpoint(Checkpoint.of(table.loop, setup.config, None, t))
    table.journal.close()
    setup.close()
    again = Setup(tmp_path, has_camera=True)
    return steps, again.open(now=0.0), again, t


def test_after_a_restart_a_card_switched_on_the_felt_is_still_caught(tmp_path):
    """The camera's sightings of the shown round's cards pass after a restart; a card that
    changes where it lies, and a card that is not the round's, are handled as ever."""
    steps, table, setup, t = _settled_and_restarted(tmp_path)
    loop = table.loop
    raised = loop.alarms_raised
    seen = next(s for s in steps if isinstance(s, FeltCard) and s.card is not None
                and not s.spot.is_dealer)
    assert seen.card is not None
    t = run_inputs(loop, table.journal, [seen], t)
    assert loop.alarms_raised == raised  # the round's card, seen again: passes
    t = run_inputs(loop, table.journal, [FeltSwap(seen.card, Card.parse("AS"), seen.spot)], t)
    assert [a.kind for a in loop.alarms if a.id > raised] == [AlarmKind.SWITCHED_CARD]
    assert loop.view()["phase"] == "hold"
    table.journal.close()
    setup.close()


@pytest.mark.parametrize("trick", ["a card of the round's code at another seat",
                                   "the hole card turned as another card of the round"])
def test_after_a_restart_a_card_of_the_rounds_code_elsewhere_is_still_caught(tmp_path, trick):
    """Only a sighting of one of the shown round's cards where it lies passes, once: a card of
    one of its codes seen at another seat (never out of the shoe), or the hole card turned as
    another of its cards, holds the payouts as on the live table."""
    steps, table, setup, t = _settled_and_restarted(tmp_path)
    loop = table.loop
    raised = loop.alarms_raised
    engine = loop.engine
    assert engine is not None
    seat, other = engine.seats()[0], Card.parse("AS")
    card = engine.hands(seat)[0].cards[0]
    if trick.startswith("a card"):
        item: TableInput = FeltCard(card, CardTarget(7, 0))
        expected = AlarmKind.NOT_FROM_SHOE
    else:
        item = HoleCardShown(card if card != engine.dealer_cards()[1] else other)
        expected = AlarmKind.SWITCHED_CARD
    t = run_inputs(loop, table.journal, [item], t)
    loop.tick(t + 5.0)
    assert [a.kind for a in loop.alarms if a.id > raised] == [expected]
    assert loop.view()["phase"] == "hold"
    table.journal.close()
    setup.close()


def test_a_second_restart_replays_the_camera_as_the_live_table_took_it(tmp_path):
    """Restarted once, the table lets the shown round's cards pass and the journal starts again
    from rest; a draw out of habit leaves it busy, the camera reports the rest of the felt, and
    the table dies. Rebuilt again from that checkpoint, it lets them pass as the live table did
    (once, they raised "never left the shoe" alarms against the round, and held its payouts)."""
    steps, table, setup, t = _settled_and_restarted(tmp_path)
    loop, journal = table.loop, table.journal
    sightings = [s for s in steps if isinstance(s, FeltCard) and s.card is not None]
    t = run_inputs(loop, journal, sightings[:1], t)
    assert loop.at_rest
    journal.checkpoint(Checkpoint.of(loop, setup.config, None, t))
    raised = loop.alarms_raised
    t = run_inputs(loop, journal, [ShoeCard(Card.parse("5D")), *reversed(sightings[1:])], t)
    loop.tick(t + 10.0)
    journal.append(JournalEntry(t + 10.0, tick=True))
    live = ([(a.kind, a.text) for a in loop.alarms if a.id > raised], loop.view()["phase"])
    journal.close()
    setup.close()
    again = Setup(tmp_path, has_camera=True)
    rebuilt = again.open(now=0.0)
    assert ([(a.kind, a.text) for a in rebuilt.loop.alarms
             if raised < a.id <= raised + len(live[0])], rebuilt.loop.view()["phase"]) == live
    assert AlarmKind.NOT_FROM_SHOE not in [k for k, _ in live[0]]
    rebuilt.journal.close()
    again.close()


@pytest.mark.parametrize(("seen", "alarmed"), [
    # the seed's round: seat 1 holds 6H QD, the dealer 5D JH (the hole card) AC 2C
    (["5D", "hole AC", "JH", "2C", "6H", "QD"], []),  # the up card taken for the hole card
    (["6H", "QD", "unread"], [AlarmKind.NOT_FROM_SHOE]),  # a third card at seat 1
    (["unread", "QD", "6H"], [AlarmKind.NOT_FROM_SHOE]),  # the unread one, then a copy read
    (["5D", "hole JH", "AC", "2C", "JH at the dealer"], [AlarmKind.NOT_FROM_SHOE]),  # a copy
])
def test_after_a_restart_each_card_of_the_round_passes_once_at_its_place(
        tmp_path, seen, alarmed):
    """A camera starting again reports the round's cards in any order (its second dealer card
    as the hole card turned, whichever it is) and may report one unread: each passes once, at
    its place; a card more there is handled as on the live table."""
    steps, table, setup, t = _settled_and_restarted(tmp_path)
    loop = table.loop
    engine = loop.engine
    assert engine is not None and [c.code for c in engine.hands(1)[0].cards] == ["6H", "QD"]
    assert [c and c.code for c in engine.dealer_cards()] == ["5D", "JH", "AC", "2C"]
    raised = loop.alarms_raised
    items: list[TableInput] = []
    for what in seen:
        if what.startswith("hole "):
            items.append(HoleCardShown(Card.parse(what.removeprefix("hole "))))
        elif what == "unread":
            items.append(FeltCard(None, CardTarget(1, 0)))
        elif what.endswith(" at the dealer"):
            items.append(FeltCard(Card.parse(what.split()[0]), DEALER))
        else:
            at = CardTarget(1, 0) if what in ("6H", "QD") else DEALER
            items.append(FeltCard(Card.parse(what), at))
    t = run_inputs(loop, table.journal, items, t)
    loop.tick(t + 5.0)
    assert [a.kind for a in loop.alarms if a.id > raised] == alarmed
    table.journal.close()
    setup.close()


def _store_alarms(directory: Path) -> Counter[tuple[str, str]]:
    """The recording store's alarm records, by kind and words."""
    store = RecordingStore(directory)
    try:
        return Counter((record.object_body()["kind"], record.object_body()["text"])
                       for record in store.records(kinds=("alarm",)))
    finally:
        store.close()


def test_alarms_the_store_could_not_write_are_written_by_a_restart_once(tmp_path, monkeypatch):
    """The store's database is held by another writer past the store's patience: the alarm for
    a touch at seat 3 is not written, nor, at a restart while it is still held, that restart's
    own alarm (the round resumed). Once it is free, the next restart writes both, once (once,
    neither ever reached the store, and a checkpoint could pass them), and a third restart
    writes only its own."""
    monkeypatch.setattr(RecordingStore, "busy_timeout_s", 0.05)
    with _betting_with_a_runner(tmp_path) as (setup, table, runner):
        setup.recorded()  # the sign-in's alarm in the store, not still on its way
        before = _store_alarms(tmp_path)
        holder = held_by_another_writer(tmp_path)
        assert runner.submit(Decide(3, Action.STAND)).wait(5)  # no hand at seat 3: an alarm
        assert runner.wait_idle(5)
        seat_3 = next(a for a in table.loop.alarms if a.text.startswith("seat 3"))
        deadline = time.monotonic() + 10
        while not setup.recording.store.idle and time.monotonic() < deadline:
            time.sleep(0.005)
        # kept to try again (closed before it could be): the journal keeps it, no checkpoint
        assert setup.recording.store.kept_alarms == 1 and setup.recording.pending
    table.journal.close()
    setup.close()
    holder.rollback()
    first = Setup(tmp_path)
    holder = held_by_another_writer(tmp_path)
    opened = first.open(now=0.0)
    assert opened.resumed is not None
    resumed = ("round_resumed", next(a.text for a in opened.loop.alarms
                                     if a.kind is AlarmKind.ROUND_RESUMED))
    opened.journal.close()
    first.close()
    holder.rollback()
    holder.close()
    assert _store_alarms(tmp_path) == before  # nothing written while it was held
    for restarts in (2, 3):
        again = Setup(tmp_path)
        again.open(now=0.0).journal.close()
        again.close()
        assert _store_alarms(tmp_path) - before == Counter(
            {("illegal_action", seat_3.text): 1, resumed: restarts})


def _left_mid_round(tmp_path: Path) -> str:
    """A table over ``tmp_path`` stopped in its first round, bets placed and four cards dealt;
    the round's id."""
    steps = world_steps(seed=5, rounds=1, camera=False)
    cut = max(i for i, s in enumerate(steps) if isinstance(s, PlaceBet)) + 4
    setup = Setup(tmp_path)
    table = setup.open()
    run_inputs(table.loop, table.journal, steps[:cut])
    round_id = table.loop.round_id
    assert round_id is not None
    table.journal.close()
    setup.close()
    return round_id


def test_a_restart_under_a_new_configuration_checkpoints_once_the_store_has_the_void(tmp_path):
    """A round in play voided by a changed configuration: the fresh table's checkpoint is taken
    once the store has written what the restart handed it (the void, its alarms), and says
    where the store stood then, so a kill right after it loses none of them (once, the
    checkpoint was taken with the void still queued, and a kill then lost it for good)."""
    _left_mid_round(tmp_path)
    again = Setup(tmp_path, rules="h17-ddd-6")
    table = again.open()
    assert table.voided is not None
    checkpoint = read_journal(tmp_path / JOURNAL_NAME).checkpoint
    table.journal.close()
    again.close()
    store = RecordingStore(tmp_path)
    try:
        [void] = [r for r in store.records(kinds=("partial",)) if "void" in r.object_body()]
        voided_alarm = max(r.seq for r in store.records(kinds=("alarm",))
                           if r.object_body()["kind"] == "round_voided")
    finally:
        store.close()
    assert checkpoint.recorded is not None
    assert checkpoint.recorded.store_seq >= max(void.seq, voided_alarm)


def _idle(setup: Setup) -> None:
    """Wait until the store has handled all it was handed (written, or failed)."""
    deadline = time.monotonic() + 10
    while not setup.recording.store.idle and time.monotonic() < deadline:
        time.sleep(0.005)


def test_an_alarm_the_store_could_not_write_is_written_once_it_writes_again(tmp_path,
                                                                           monkeypatch):
    """The store's database is held past the store's patience as a touch at seat 3 raises an
    alarm at rest: the write fails, the alarm is kept, and the table at rest takes no
    checkpoint. Once the database is free, the next alarm's record is written and the kept one
    after it, with no round open, and the table at rest checkpoints past both (once, a failed
    alarm write was forgotten, and a checkpoint passed it)."""
    monkeypatch.setattr(RecordingStore, "busy_timeout_s", 0.05)
    setup = Setup(tmp_path)
    table = setup.open(now=0.0)
    journal = tmp_path / JOURNAL_NAME

    def at_rest(item) -> None:
        assert runner.submit(item).wait(5)
        assert runner.wait_idle(5)
        _idle(setup)

    with TableRunner(table.loop, clock=lambda: 1.0, journal=table.journal,
                     journal_config=setup.config,
                     recording_pending=lambda: setup.recording.pending,
                     recorded_up_to=lambda: setup.recording.recorded_up_to(0.0)) as runner:
        for item in (SignIn("D1"), ShoeLink(True)):
            at_rest(item)
        holder = held_by_another_writer(tmp_path)
        at_rest(Decide(3, Action.STAND))  # no hand there: an alarm
        seat_3 = next(a for a in table.loop.alarms if a.text.startswith("seat 3"))
        at_rest(AcknowledgeAlarm(seat_3.id))  # at rest, the store idle: no checkpoint
        assert setup.recording.store.kept_alarms == 1
        assert read_journal(journal).entries
        holder.rollback()
        holder.close()
        at_rest(Decide(4, Action.STAND))  # written, then the kept one
        assert setup.recording.store.kept_alarms == 0
        at_rest(AcknowledgeAlarm(seat_3.id))  # at rest: a checkpoint
    table.journal.close()
    setup.close()
    contents = read_journal(journal)
    assert not contents.entries and contents.checkpoint.recorded is not None
    store = RecordingStore(tmp_path)
    try:
        records = {r.object_body()["text"][:6]: r for r in store.records(kinds=("alarm",))
                   if r.object_body()["text"].startswith(("seat 3", "seat 4"))}
    finally:
        store.close()
    assert records["seat 4"].seq < records["seat 3"].seq <= contents.checkpoint.recorded.store_seq
    assert records["seat 3"].round_key is None


def test_an_alarm_the_replay_raises_and_the_live_table_did_not_is_not_written(tmp_path):
    """The surveillance room fell behind before the checkpoint (the live table raised its alarm
    then, and not again at the second report of the same spell); the replay's loop, rebuilt
    without the spell, raises one at that second report. The restart writes only alarms the
    live table raised too, as ``alarms.jsonl`` holds them: none here (once, the replay's was
    written into the signed store as if the live table had raised it)."""
    setup = Setup(tmp_path)
    table = setup.open(now=0.0)
    with TableRunner(table.loop, clock=lambda: 1.0, journal=table.journal,
                     journal_config=setup.config,
                     recorded_up_to=lambda: setup.recording.recorded_up_to(0.0)) as runner:
        for item in (SignIn("D1"), ShoeLink(True), FloorLag(50, 120.0, True, False, "broker"),
                     ShoeLink(True)):  # at rest: a checkpoint is taken in the spell
            assert runner.submit(item).wait(5)
            assert runner.wait_idle(5)
            _idle(setup)
        assert read_journal(tmp_path / JOURNAL_NAME).checkpoint.recorded is not None
        for item in (PlaceBet(1, Decimal("10")), FloorLag(80, 300.0, True, False, "broker")):
            assert runner.submit(item).wait(5)  # still behind: no alarm
        assert runner.wait_idle(5)
        live = [a.text for a in table.loop.alarms if a.kind is AlarmKind.FLOOR_BEHIND]
    _idle(setup)
    table.journal.close()
    setup.close()
    again = Setup(tmp_path)
    rebuilt = again.open(now=0.0)
    assert [a.text for a in rebuilt.loop.alarms if a.kind is AlarmKind.FLOOR_BEHIND] != []
    rebuilt.journal.close()
    again.close()
    assert [text for (kind, text), n in _store_alarms(tmp_path).items()
            for _ in range(n) if kind == "floor_behind"] == live


def test_only_alarms_both_the_replay_and_the_alarm_file_hold_are_written(tmp_path,
                                                                        monkeypatch):
    """Two alarms the store could not write (its database held): the line of one is cut from
    ``alarms.jsonl`` and a line no alarm the table raised is added to it. The restart writes the
    other, at the time its line says, and neither the cut one nor the forged one: write access
    to the alarm file alone puts nothing in the signed store."""
    monkeypatch.setattr(RecordingStore, "busy_timeout_s", 0.05)
    with _betting_with_a_runner(tmp_path) as (setup, table, runner):
        setup.recorded()  # the sign-in's alarm in the store, not still on its way
        before = _store_alarms(tmp_path)
        holder = held_by_another_writer(tmp_path)
        for seat in (3, 4):
            assert runner.submit(Decide(seat, Action.STAND)).wait(5)
        assert runner.wait_idle(5)
        _idle(setup)
    table.journal.close()
    setup.close()  # held till then: the store never tries them again
    holder.rollback()
    holder.close()
    alarm_file = tmp_path / "alarms.jsonl"
    lines = [json.loads(line) for line in alarm_file.read_text().splitlines()]
    [seat_3] = [line for line in lines if line["text"].startswith("seat 3")]
    forged = {**seat_3, "text": "seat 6: paid 500.00 as the dealer asked"}
    alarm_file.write_text("".join(json.dumps(line) + "\n" for line in lines
                                  if not line["text"].startswith("seat 4")) +
                          json.dumps(forged) + "\n")
    again = Setup(tmp_path)
    again.open(now=0.0).journal.close()
    again.close()
    assert _store_alarms(tmp_path) - before == Counter({
        ("illegal_action", seat_3["text"]): 1,
        ("round_resumed", next(text for kind, text in _store_alarms(tmp_path)
                               if kind == "round_resumed")): 1})
    store = RecordingStore(tmp_path)
    try:
        [record] = [r for r in store.records(kinds=("alarm",))
                    if r.object_body()["text"] == seat_3["text"]]
    finally:
        store.close()
    assert datetime.fromisoformat(record.object_body()["happened_at"].replace("Z", "+00:00")) \
        == datetime.fromisoformat(seat_3["recorded_at"])


def test_an_alarm_record_s_values_that_are_no_strings_match_no_alarm_and_count_all_the_same():
    """The restart counts the store's alarm records by kind, words and round: a body whose
    words are a list (no table writes one) is counted as words of None, which no alarm has,
    where once it raised (unhashable) and the restart marked the store failed, for good."""
    odd = AlarmKey.of_record({"kind": "staff", "text": ["seat 3"], "round": 7})
    assert odd == AlarmKey("staff", None, None)
    assert Counter([odd, AlarmKey.of_record({"kind": "staff", "text": "seat 3"})]) == Counter({
        odd: 1, AlarmKey("staff", "seat 3", None): 1})


def test_a_round_the_store_refused_mid_round_lets_the_journal_go_once_it_is_recorded(
        tmp_path, monkeypatch):
    """The store's database held by another writer for part of a round, under a runner as the
    table runs it: the journal keeps the round while the store lacks it, and once the store,
    free again, has recorded it at its end, the next touch at rest checkpoints the journal,
    with no restart (once, it waited for one), the store holding the round once, whole."""
    monkeypatch.setattr(RecordingStore, "busy_timeout_s", 0.05)
    steps = world_steps(seed=8, rounds=1, camera=False)
    cards = [i for i, step in enumerate(steps) if isinstance(step, ShoeCard)]
    setup = Setup(tmp_path)
    table = setup.open(now=0.0)
    journal = tmp_path / JOURNAL_NAME
    with TableRunner(table.loop, clock=lambda: 1.0, journal=table.journal,
                     journal_config=setup.config,
                     recording_pending=lambda: setup.recording.pending,
                     recorded_up_to=lambda: setup.recording.recorded_up_to(0.0)) as runner:
        def submitted(items) -> None:
            for item in items:
                assert runner.submit(item).wait(5)
            assert runner.wait_idle(5)
            _idle(setup)

        submitted(steps[:cards[0]])
        holder = held_by_another_writer(tmp_path)
        submitted(steps[cards[0]:cards[2]])  # two cards the store cannot write
        holder.rollback()
        holder.close()
        assert setup.recording.pending
        submitted(steps[cards[2]:])
        assert table.loop.rounds_played == 1 and not setup.recording.pending
        submitted([AcknowledgeAlarm(1)])  # any touch at rest
    table.journal.close()
    setup.close()
    contents = read_journal(journal)
    assert contents.entries == [] and contents.checkpoint.recorded is not None
    round_id = table.loop.last_settlement.round_id
    assert round_id in files_equal_store(tmp_path)
    store = RecordingStore(tmp_path)
    try:
        assert len(store.round_keys(round_id)) == 1
    finally:
        store.close()


def test_no_checkpoint_is_taken_while_the_recording_cannot_say_how_far_it_got(tmp_path,
                                                                              monkeypatch):
    """At rest, an alarm's record still being written (the store waits on its database, held by
    another writer) as the checkpoint is asked for: ``recording_pending`` stands in for its
    answer a moment before, when the store had not yet taken the alarm. The runner takes no
    checkpoint then, and takes one that says how far the recording got at the next rest (once,
    it checkpointed past the alarm with no position, and a restart could not write it)."""
    monkeypatch.setattr(RecordingStore, "busy_timeout_s", 30.0)
    setup = Setup(tmp_path)
    table = setup.open(now=0.0)
    journal = tmp_path / JOURNAL_NAME
    with TableRunner(table.loop, clock=lambda: 1.0, journal=table.journal,
                     journal_config=setup.config,
                     recorded_up_to=lambda: setup.recording.recorded_up_to(0.0)) as runner:
        for item in (SignIn("D1"), ShoeLink(True)):
            assert runner.submit(item).wait(5)
            assert runner.wait_idle(5)
            _idle(setup)
        before = read_journal(journal).checkpoint
        holder = held_by_another_writer(tmp_path)
        try:
            assert runner.submit(Decide(3, Action.STAND)).wait(5)  # an alarm, at rest
            assert runner.wait_idle(5)
            assert not setup.recording.store.idle  # its record waits on the database
            assert read_journal(journal).checkpoint == before
        finally:
            holder.rollback()
            holder.close()
        _idle(setup)
        assert runner.submit(ShoeLink(True)).wait(5)
        assert runner.wait_idle(5)
    table.journal.close()
    setup.close()
    after = read_journal(journal).checkpoint
    assert after != before and after.recorded is not None
    assert after.recorded.alarm_file == (tmp_path / "alarms.jsonl").stat().st_size
    assert _store_alarms(tmp_path)[("illegal_action", next(
        a.text for a in table.loop.alarms if a.text.startswith("seat 3")))] == 1


@pytest.mark.parametrize("held_until", ["the alarm failed", "the table stopped"])
def test_an_alarm_the_store_could_not_write_is_filed_under_its_own_round(tmp_path, monkeypatch,
                                                                         held_until):
    """An alarm of round 1 the store could not write (its database held), then round 2 begun.
    Freed at once, the store writes it with round 1's next record, into round 1; held until the
    table stopped, the restart writes it with no round open, naming round 1. Either way the
    round's evidence shows it and round 2's does not (once, the restart wrote it into round 2,
    open again by then)."""
    monkeypatch.setattr(RecordingStore, "busy_timeout_s", 0.05)
    steps = world_steps(seed=5, rounds=2, camera=False)
    starts = [i for i, s in enumerate(steps) if isinstance(s, PlaceBet)]
    second = next(i for i in starts if i > starts[0] + 2)  # round 2's first bet
    setup = Setup(tmp_path)
    table = setup.open()
    t = run_inputs(table.loop, table.journal, steps[:starts[0] + 3])
    _idle(setup)
    holder = held_by_another_writer(tmp_path)
    t = run_inputs(table.loop, table.journal, [Decide(5, Action.STAND)], t)  # no hand there
    _idle(setup)
    if held_until == "the alarm failed":
        holder.rollback()
    [alarm] = [a for a in table.loop.alarms if a.text.startswith("seat 5")]
    run_inputs(table.loop, table.journal, steps[starts[0] + 3:second + 1], t)
    assert table.loop.round_open and table.loop.round_id != alarm.round_id
    _idle(setup)
    table.journal.close()
    setup.close()
    holder.rollback()
    holder.close()
    again = Setup(tmp_path)
    again.open().journal.close()
    again.close()
    store = RecordingStore(tmp_path)
    try:
        [record] = [r for r in store.records(kinds=("alarm",))
                    if r.object_body()["text"] == alarm.text]
        first, later = latest_round(store, alarm.round_id), latest_round(store, table.loop.round_id)
        assert first is not None and later is not None
        assert (record.round_key == first.key) == (held_until == "the alarm failed")
        assert record.round_key == first.key or record.seq in [
            r.seq for r in alarms_naming(store, first)]
        assert record.round_key != later.key and record.seq not in [
            r.seq for r in alarms_naming(store, later)]
    finally:
        store.close()


def test_a_new_configuration_starts_only_once_the_store_can_write_the_void(tmp_path,
                                                                         monkeypatch):
    """A round in play voided by a changed configuration while the store's database is held:
    the table refuses to start, naming why, rather than checkpoint past a void the store never
    wrote; started again once it is free, the void is in the store (once, it was lost)."""
    monkeypatch.setattr(RecordingStore, "busy_timeout_s", 0.05)
    round_id = _left_mid_round(tmp_path)
    signed_in = (tmp_path / "alarms.jsonl").read_text().count("signed in")
    refused = Setup(tmp_path, rules="h17-ddd-6")
    holder = held_by_another_writer(tmp_path)
    with pytest.raises(RecordingError, match="failed a write.*only once the recording has"):
        refused.open()
    refused.close()
    holder.rollback()
    holder.close()
    # refused before the new table began: none of its alarms (its dealer signed in) was raised
    assert (tmp_path / "alarms.jsonl").read_text().count("signed in") == signed_in
    again = Setup(tmp_path, rules="h17-ddd-6")
    opened = again.open()  # the void journaled at the refused start is replayed
    assert not opened.loop.round_open and opened.loop.rules.name == "h17-ddd-6"
    opened.journal.close()
    again.close()
    store = RecordingStore(tmp_path)
    try:
        voids = [r for r in store.records(kinds=("partial",)) if "void" in r.object_body()]
    finally:
        store.close()
    assert [r.round_id for r in voids] == [round_id]


def test_a_new_configuration_refused_for_the_alarm_file_names_it(tmp_path):
    """The alarm file cannot be written (a folder in its place) when a changed configuration
    voids the round in play: the refusal names the alarm file, not the store."""
    _left_mid_round(tmp_path)
    (tmp_path / "alarms.jsonl").rename(tmp_path / "alarms.before")
    (tmp_path / "alarms.jsonl").mkdir()
    refused = Setup(tmp_path, rules="h17-ddd-6")
    with pytest.raises(RecordingError, match=r"alarms\.jsonl keeps \d+ alarm\(s\)"):
        refused.open()
    refused.close()


def test_a_store_moved_aside_gets_each_alarm_once(tmp_path):
    """The store moved aside (damaged) with a round in the journal: the new store's record at
    the checkpoint's number is not the one the checkpoint names, so all the new store holds is
    later than the checkpoint, and the round's alarms are written into it once, not again at
    each restart (once, every restart wrote them once more)."""
    with _betting_with_a_runner(tmp_path) as (setup, table, runner):
        for _ in range(4):
            assert runner.submit(Decide(3, Action.STAND)).wait(5)
        assert runner.wait_idle(5)
        _idle(setup)
    table.journal.close()
    setup.close()
    aside = tmp_path / "damaged"
    aside.mkdir()
    for path in tmp_path.glob("index.sqlite*"):
        path.rename(aside / path.name)
    counts = []
    for _ in range(3):
        again = Setup(tmp_path)
        again.open(now=0.0).journal.close()
        again.close()
        counts.append(sum(n for (kind, _), n in _store_alarms(tmp_path).items()
                          if kind == "illegal_action"))
    assert counts == [4, 4, 4]


def test_a_restart_keeps_the_drop_while_a_card_read_alone_waits_behind_a_question(tmp_path):
    """Seat 1's 2C waits for its landing as the shoe's link drops; the camera reads seat 1's
    next card, 2H, and the 2C, placed first, opens a question: the 2H waits behind it, not yet
    recorded, as the table restarts. The restarted table keeps the drop, so once the question
    is answered the 2H is recorded for the shoe's resend to check, as live: it used to forget
    the drop (nothing recorded yet), then raise "never left the shoe" for the 2H and take the
    resent 2H for a card more."""
    setup = Setup(tmp_path, has_camera=True, rules="h17-ddd-6")
    table = setup.open(now=10.0)
    steps = [SignIn("D1"), ShoeLink(True), CameraLink(True), PlaceBet(1, Decimal("10"))]
    for code, spot in (("9S", CardTarget(1, 0)), ("6S", DEALER), ("7H", CardTarget(1, 0))):
        steps += [ShoeCard(Card.parse(code)), FeltCard(Card.parse(code), spot)]
    steps += [ShoeCard(Card.parse("KD")), FeltCard(None, DEALER), ShoeCard(Card.parse("2C")),
              ShoeLink(False, "cable"), FeltCard(Card.parse("2H"), CardTarget(1, 0))]
    run_inputs(table.loop, table.journal, steps)
    assert table.loop.question is not None
    table.journal.close()
    setup.close()

    after = Setup(tmp_path, has_camera=True, rules="h17-ddd-6")
    again = after.open(now=3.0)
    loop = again.loop
    assert loop.shoe.watched
    question = loop.view()["question"]
    hit = next(c["choice"] for c in question["choices"] if c["label"] == "HIT seat 1")
    raised = loop.alarms_raised
    run_inputs(loop, again.journal, [
        ConfirmFelt(), AnswerQuestion(question["id"], hit), Decide(1, Action.STAND),
        ShoeLink(True, "back"), ShoeCard(Card.parse("2H"), held=True), ShoeCaughtUp(),
        HoleCardShown(Card.parse("KD"))], t0=20.0)
    assert [[c.code for c in h.cards] for h in loop.engine.hands(1)] == [["9S", "7H", "2C", "2H"]]
    assert [a.kind for a in loop.alarms if a.id > raised] == [AlarmKind.DEALER_ASKED]
    assert loop.cards_out[Card.parse("2H")] == 1
    after.close()


def test_a_restart_with_the_link_up_forgets_the_drop_though_a_landing_waits_for_its_card(
        tmp_path):
    """The link dropped and came back with nothing recorded meanwhile; the camera saw the next
    round's first card land before the shoe's report of it, and the table restarted. The drop
    is forgotten as before (the landing waits for its shoe card, not to be read alone): the
    8S the shoe dealt while the table was down comes as a restart's resend, at the dealer's."""
    t = _a_drop_between_rounds_then_a_crash(tmp_path,
                                            FeltCard(Card.parse("4D"), CardTarget(1, 0)))

    after = Setup(tmp_path, has_camera=True, rules="h17-ddd-6")
    again = after.open(now=3.0)
    loop = again.loop
    assert not loop.shoe.watched
    run_inputs(loop, again.journal, [
        CameraLink(True), ShoeLink(True, "reader started"), ShoeCard(Card.parse("4D"), held=True),
        ShoeCard(Card.parse("8S"), held=True), ShoeCaughtUp(), FeltCard(Card.parse("8S"), DEALER)],
        t0=t)
    assert [[c.code for c in h.cards] for h in loop.engine.hands(1)] == [["4D"]]
    assert list(loop.engine.dealer_cards()) == [Card.parse("8S")]
    assert loop.disagreements() == []
    after.close()
