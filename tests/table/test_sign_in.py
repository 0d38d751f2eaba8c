"""People at the table: a dealer signs in before any bet, every round carries its dealer, a void or
a correction needs a supervisor's PIN at the screen, and who did what is recorded (never a PIN).

Loop-level tests feed inputs; the screen's are a real uvicorn server with a real runner, journal
and recording directory, over HTTP."""

from __future__ import annotations

import json
import subprocess
import sys
import time
import urllib.error
import urllib.request
from decimal import Decimal
from pathlib import Path

import pytest
from argon2 import PasswordHasher

from dealer_assist.roundlog import parse_event, settle_log
from dealer_assist.rules import Action, Card, CardTarget
from dealer_assist.surveillance.store import Record, RecordingStore
from dealer_assist.table.alarms import AlarmKind
from dealer_assist.table.assembly import TableSetup, assemble
from dealer_assist.table.journal import JOURNAL_NAME, read_journal
from dealer_assist.table.loop import TableLoop
from dealer_assist.table.recording import MemoryRecorder
from dealer_assist.table.screen import ScreenServer
from dealer_assist.table.sources import (
    DEALER_SPOT,
    AnswerQuestion,
    CorrectCard,
    Decide,
    FeltCard,
    FinishRound,
    HoleCardShown,
    NewShoe,
    PlaceBet,
    ShoeCard,
    ShoeLink,
    SignIn,
    SignOut,
    StaffRefused,
    VoidRound,
)
from dealer_assist.table.staff import HashCost, StaffDesk, StaffRegistry
from tests.table.test_loop import Table, deal

C = Card.parse
ROOT = Path(__file__).resolve().parents[2]
CHEAP = HashCost(time_cost=1, memory_kib=8, parallelism=1)
DEALER_PIN, SUPERVISOR_PIN = "482913", "730146"


def staff_kinds(loop: TableLoop) -> list[str]:
    return [a.text for a in loop.alarms if a.kind is AlarmKind.STAFF]


# --------------------------------------------------------------------------- the loop


def test_no_bet_is_taken_and_no_round_starts_until_a_dealer_signs_in():
    loop = TableLoop("s17-6", MemoryRecorder(), has_camera=False)
    loop.handle(ShoeLink(True), 0.0)
    loop.handle(PlaceBet(1, Decimal("10")), 1.0)
    assert loop.round_id is None and not loop.round_open
    assert staff_kinds(loop) == ["a bet touched but no dealer is signed in: not taken; sign in "
                                 "first"]
    assert loop.view()["dealer_id"] is None
    loop.handle(SignIn("D-7"), 2.0)
    assert loop.view()["dealer_id"] == "D-7"
    loop.handle(PlaceBet(1, Decimal("10")), 3.0)
    assert loop.round_open
    start = json.loads(loop.round_lines()[0])
    assert start["dealer_id"] == "D-7" and start["table"] == "T1"


def test_every_round_log_names_its_dealer_and_its_settlement_shows_it():
    table = Table(camera=False)
    table.loop.dealer = None
    table.send(SignIn("D-7"))
    deal(table, {1: ("9S", "8H")}, up="6S", hole="KD")
    table.send(Decide(1, Action.STAND))
    table.card("5C")  # the dealer's 21
    table.send(SignOut(), SignIn("D-8"))  # a new dealer between rounds
    deal(table, {2: ("9D", "8D")}, up="7S", hole="KC")
    table.send(Decide(2, Action.STAND))  # the dealer's 17 stands
    dealers = [json.loads(lines[0])["dealer_id"] for _, lines, _ in table.recorder.rounds]
    assert dealers == ["D-7", "D-8"]
    settled = settle_log(table.recorder.rounds[0][1])  # what `dealer-assist settle` prints
    assert settled.to_json()["dealer_id"] == "D-7"
    assert settled.to_json()["dealer"]["cards"] == ["6S", "KD", "5C"]  # not bent by the id


def test_a_dealer_changes_only_between_rounds():
    table = Table(camera=False)
    deal(table, {1: ("9S", "8H")}, up="6S", hole="KD")
    table.send(SignIn("D-9"), SignOut())
    assert table.loop.dealer == "D1"
    assert staff_kinds(table.loop) == [
        "D-9 signed in while D1 deals round r-00001: refused; a dealer changes between rounds",
        "D1 cannot sign out during round r-00001: finish or void it first"]
    table.send(Decide(1, Action.STAND))
    table.card("5C")  # the round settles
    table.send(SignOut())
    assert table.loop.dealer is None
    table.send(PlaceBet(2, Decimal("10")))
    assert table.loop.round_id == "r-00001"  # no second round without a dealer


def test_a_void_is_recorded_with_the_supervisor_who_approved_it_and_the_dealer():
    table = Table(camera=False)
    deal(table, {1: ("9S", "8H")}, up="6S", hole="KD")
    table.send(VoidRound("misdeal", "S-3"))
    (round_id, lines, reason), = table.recorder.voids
    assert reason == "misdeal (voided by supervisor S-3; dealer D1)"
    assert json.loads(lines[0])["dealer_id"] == "D1"
    voided = [a for a in table.loop.alarms if a.kind is AlarmKind.ROUND_VOIDED]
    assert [a.text for a in voided] == [f"round {round_id} voided: {reason}"]
    recorded = [a for a in table.recorder.alarms if a.kind is AlarmKind.ROUND_VOIDED]
    assert recorded == voided  # each written as raised (the file adds the wall clock)


def test_a_correction_is_recorded_with_the_supervisor_in_the_round_log():
    table = Table(shoe=False)
    table.send(PlaceBet(1, Decimal("10")))
    for code, seat in (("9S", 1), ("6S", None), ("8H", 1)):
        table.send(FeltCard(C(code), CardTarget(seat, 0)))
    table.send(FeltCard(None, DEALER_SPOT))
    table.send(CorrectCard(C("7H"), CardTarget(1), supervisor="S-3"))
    table.send(HoleCardShown(C("KD")), FeltCard(C("5C"), CardTarget(None, 0)), FinishRound())
    lines = table.recorded_lines()
    assert '{"type": "card", "card": "7H", "to": {"seat": 1, "hand": 0}, "corrected": "8H", ' \
        '"corrected_by": "S-3"}' in lines
    assert settle_log(lines).seat(1).net == Decimal("-10")  # 16 against 21
    corrected = [a.text for a in table.loop.alarms if a.kind is AlarmKind.CORRECTED_CARD]
    assert corrected == ["the dealer D1 corrected 8H at seat 1 to 7H, approved by supervisor S-3"
                         ": recorded as corrected"]


def test_an_answer_is_recorded_with_the_dealer_who_gave_it():
    table = Table(camera=False)
    deal(table, {1: ("2S", "3H")}, up="9S", hole="7D")
    table.card("4C")  # no touch said which play: the dealer is asked
    question = table.loop.question
    assert question is not None
    table.send(AnswerQuestion(question.id, 0))
    asked = [json.loads(line) for line in table.loop.round_lines() if '"question"' in line]
    assert asked[0]["by"] == "dealer" and asked[0]["dealer_id"] == "D1"


def test_a_new_shoe_touched_needs_a_dealer_and_is_recorded_with_who():
    table = Table(shoe=False)
    table.loop.dealer = None
    table.send(NewShoe(0, touched=True))
    assert staff_kinds(table.loop)[-1] == ("New shoe touched but no dealer is signed in: not "
                                          "taken; sign in first")
    table.send(SignIn("D-4"), NewShoe(0, touched=True))
    assert staff_kinds(table.loop)[-1] == ("dealer D-4 touched New shoe: a freshly shuffled pack;"
                                          " the composition count starts again")
    before = len(table.loop.alarms)
    table.send(NewShoe(6))  # the electronic shoe's own report: no touch, no record of a person
    assert len(table.loop.alarms) == before


def test_a_refused_pin_is_recorded_with_the_id_and_why():
    loop = TableLoop("s17-6", MemoryRecorder(), has_camera=False)
    loop.handle(StaffRefused("D-7", "sign in", "D-7: wrong id or PIN (1 in a row)"), 0.0)
    assert staff_kinds(loop) == ["sign in refused: D-7: wrong id or PIN (1 in a row)"]
    assert loop.recorder.alarms[-1].text == staff_kinds(loop)[0]  # type: ignore[attr-defined]


def test_round_log_fields_for_people_read_back_and_old_logs_still_settle():
    card = {"type": "card", "card": "7H", "corrected": "8H", "corrected_by": "S-3"}
    assert parse_event(card).corrected_by == "S-3"  # type: ignore[union-attr]
    reveal = {"type": "reveal", "card": "7H", "corrected": "8H", "corrected_by": "S-3"}
    assert parse_event(reveal).corrected_by == "S-3"  # type: ignore[union-attr]
    with pytest.raises(ValueError, match="'corrected_by' names who approved a correction"):
        parse_event({"type": "card", "card": "7H", "corrected_by": "S-3"})
    with pytest.raises(ValueError, match="'corrected_by' must be a staff id"):
        parse_event({**card, "corrected_by": "x" * 33})
    old = ['{"type": "round", "id": "r-1", "rules": "s17-6", "table": "T1"}',
           '{"type": "bet", "seat": 1, "amount": "10"}',
           *[f'{{"type": "card", "card": "{c}"}}' for c in ("9S", "6S", "8H", "KD")],
           '{"type": "action", "seat": 1, "action": "stand"}', '{"type": "card", "card": "5C"}',
           '{"type": "end"}']
    assert "dealer_id" not in settle_log(old).to_json()  # a log from before sign-in settles


# --------------------------------------------------------------------------- the registry


def test_the_registry_keeps_argon2id_hashes_at_the_default_cost_readable_by_its_owner_only(
        tmp_path):
    path = tmp_path / "table.staff.json"
    registry = StaffRegistry(path)  # the default cost: what a table uses
    registry.add("D-7", "dealer", DEALER_PIN)
    text = path.read_text()
    assert DEALER_PIN not in text
    entry = json.loads(text)["staff"]["D-7"]
    assert entry["role"] == "dealer"
    assert entry["hash"].startswith("$argon2id$v=19$m=65536,t=3,p=4$")
    assert path.stat().st_mode & 0o777 == 0o600
    again = StaffRegistry(path)
    assert again.verify("D-7", DEALER_PIN) == "dealer"
    assert again.verify("D-7", "000000") is None and again.verify("D-8", DEALER_PIN) is None


@pytest.mark.parametrize(("staff_id", "role", "pin", "message"), [
    ("D 7", "dealer", "1234", "staff id must be 1 to 32"),
    ("D" * 33, "dealer", "1234", "staff id must be 1 to 32"),
    ("D-7", "boss", "1234", "role must be one of dealer, supervisor"),
    ("D-7", "dealer", "123", "a PIN must be 4 to 12 digits"),
    ("D-7", "dealer", "12ab", "a PIN must be 4 to 12 digits"),
])
def test_the_registry_refuses_what_it_cannot_keep(tmp_path, staff_id, role, pin, message):
    registry = StaffRegistry(tmp_path / "s.json", CHEAP)
    with pytest.raises(ValueError, match=message):
        registry.add(staff_id, role, pin)
    assert not (tmp_path / "s.json").exists()


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


def desk(tmp_path: Path, clock: Clock) -> StaffDesk:
    registry = StaffRegistry(tmp_path / "t.staff.json", CHEAP)
    if not registry.members:
        registry.add("D-7", "dealer", DEALER_PIN)
        registry.add("S-3", "supervisor", SUPERVISOR_PIN)
    return StaffDesk(registry, clock=clock)


def test_wrong_pins_make_an_id_wait_longer_and_longer_even_for_the_right_pin(tmp_path):
    clock = Clock()
    staff = desk(tmp_path, clock)
    for n in (1, 2):
        refusal = staff.check("D-7", "111111", ("dealer",))
        assert refusal is not None and not refusal.throttled and refusal.wait_s == 0
        assert refusal.why == f"D-7: wrong id or PIN ({n} in a row)"
    refusal = staff.check("D-7", "111111", ("dealer",))
    assert refusal is not None and refusal.wait_s == 30
    refusal = staff.check("D-7", DEALER_PIN, ("dealer",))  # the right PIN, but too soon
    assert refusal is not None and refusal.throttled and "try again in 30 s" in refusal.why
    clock.now += 31
    refusal = staff.check("D-7", "222222", ("dealer",))
    assert refusal is not None and refusal.wait_s == 60  # the wait doubles
    clock.now += 61
    assert staff.check("D-7", DEALER_PIN, ("dealer",)) is None  # right: the count clears
    assert staff.check("D-7", "333333", ("dealer",)).wait_s == 0  # type: ignore[union-attr]


def test_the_wait_outlives_a_restart_and_spraying_ids_makes_the_table_wait(tmp_path):
    clock = Clock()
    staff = desk(tmp_path, clock)
    for _ in range(3):
        staff.check("D-7", "111111", ("dealer",))
    restarted = desk(tmp_path, clock)  # a new process reads the count back
    assert restarted.check("D-7", DEALER_PIN, ("dealer",)).throttled  # type: ignore[union-attr]
    clock.now += 10_000  # D-7's wait is over, and the table has forgotten its three
    for n in range(10):
        refusal = restarted.check(f"X-{n}", "111111", ("dealer",))
        assert refusal is not None and not refusal.throttled
    refusal = restarted.check("S-3", SUPERVISOR_PIN, ("supervisor",))
    assert refusal is not None and refusal.throttled  # every id waits now, a real one too
    assert "111111" not in (tmp_path / "t.staff.attempts.json").read_text()
    assert (tmp_path / "t.staff.attempts.json").stat().st_mode & 0o777 == 0o600


def test_a_known_pin_does_not_clear_the_tables_count_of_guesses_at_other_ids(tmp_path):
    clock = Clock()
    staff = desk(tmp_path, clock)
    for n in range(9):  # a dealer guesses at other ids, 1 try each...
        assert not staff.check(f"X-{n}", "111111", ("supervisor",)).throttled  # type: ignore
        assert staff.check("D-7", DEALER_PIN, ("dealer",)) is None  # ...signing in between
    refusal = staff.check("S-3", "111111", ("supervisor",))
    assert refusal is not None and refusal.wait_s == 30  # the table's tenth wrong PIN
    refusal = staff.check("D-7", DEALER_PIN, ("dealer",))
    assert refusal is not None and refusal.throttled  # the guesser's own PIN waits too
    assert refusal.why == "D-7: too many wrong PINs at this table: try again in 30 s"
    assert staff.check("S-3", "111111", ("supervisor",)) is not None  # (too soon: not tried)
    clock.now += 30
    refusal = staff.check("S-3", "222222", ("supervisor",))
    assert refusal is not None and refusal.why == \
        "S-3: wrong id or PIN (2 in a row; the next try at this table in 60 s)"


def test_an_id_guessed_at_for_weeks_still_waits_the_longest_wait(tmp_path):
    clock = Clock()
    staff = desk(tmp_path, clock)
    for _ in range(1100):  # past 2 ** 1024, a float's end, had the exponent no bound
        refusal = staff.check("S-3", "111111", ("supervisor",))
        assert refusal is not None and not refusal.throttled
        clock.now += 900
    assert refusal.wait_s == 900


def test_the_tables_count_forgets_one_wrong_pin_every_15_minutes(tmp_path):
    clock = Clock()
    staff = desk(tmp_path, clock)
    for n in range(9):
        staff.check(f"X-{n}", "111111", ("dealer",))
    clock.now += 2 * 900  # two of the nine forgotten
    for n in range(2):
        assert staff.check(f"Y-{n}", "111111", ("dealer",)).wait_s == 0  # type: ignore
    assert staff.check("Y-2", "111111", ("dealer",)).wait_s == 30  # type: ignore[union-attr]


def test_a_tables_staff_mistyping_now_and_then_never_waits(tmp_path):
    clock = Clock()
    staff = desk(tmp_path, clock)
    for n in range(3 * 24 * 7):  # a week, three mistakes an hour: an id, a PIN, an id...
        refusal = staff.check("D-7" if n % 2 else f"D-{n}", "111111", ("dealer",))
        assert refusal is not None and refusal.wait_s == 0
        assert staff.check("D-7", DEALER_PIN, ("dealer",)) is None
        clock.now += 20 * 60


def test_an_attempts_file_with_what_is_not_a_count_is_read_without_it(tmp_path, caplog):
    clock = Clock()
    staff = desk(tmp_path, clock)
    attempts = tmp_path / "t.staff.attempts.json"
    attempts.write_text(json.dumps({
        "*": [-1_000_000, clock.now],  # would cancel the table's count
        "D-7": [3, clock.now + 365 * 24 * 3600],  # a clock that was a year ahead
        "S-3": ["x", 1], "X-1": [2.5, clock.now], "X-2": [1, float("inf")], "../x": [1, 1],
        "X-3": [1e300, clock.now],  # 2 ** 1e300 would take the table's memory
    }))
    attempts.chmod(0o600)
    staff = desk(tmp_path, clock)
    assert [r.getMessage().split(": ")[1] for r in caplog.records] == \
        ["'*'", "'S-3'", "'X-1'", "'X-2'", "'../x'", "'X-3'"]
    refusal = staff.check("D-7", DEALER_PIN, ("dealer",))
    assert refusal is not None and refusal.wait_s == 30  # its wait, not a year's
    clock.now += 31
    assert staff.check("D-7", DEALER_PIN, ("dealer",)) is None  # and that wait ends
    for n in range(10):
        staff.check(f"Y-{n}", "111111", ("dealer",))  # the table's count was not cancelled
    assert staff.check("Y-10", "111111", ("dealer",)).throttled  # type: ignore[union-attr]


def test_an_unknown_id_costs_the_same_hashing_as_a_known_one(tmp_path):
    verified: list[str] = []

    class Counting(PasswordHasher):
        def verify(self, hash: str | bytes, password: str | bytes) -> bool:
            verified.append(str(hash))
            return super().verify(hash, password)

    class CountingCost(HashCost):
        def hasher(self) -> PasswordHasher:
            return Counting(time_cost=1, memory_cost=8, parallelism=1)

    registered = desk(tmp_path, Clock()).registry.path
    staff = StaffDesk(StaffRegistry(registered, CountingCost()), clock=Clock())
    staff.check("D-7", "111111", ("dealer",))
    staff.check("NOBODY", "111111", ("dealer",))
    assert len(verified) == 2 and all(h.startswith("$argon2id$") for h in verified)


def test_an_id_removed_while_the_table_runs_can_no_longer_sign_in(tmp_path):
    """``table staff remove`` (another process, another registry object) takes effect at the
    running table's next PIN check: no restart needed for someone who has left."""
    staff = desk(tmp_path, Clock())
    assert staff.check("D-7", DEALER_PIN, ("dealer",)) is None
    elsewhere = StaffRegistry(staff.registry.path, CHEAP)
    elsewhere.remove("D-7")
    elsewhere.add("D-8", "dealer", "55555555")
    refusal = staff.check("D-7", DEALER_PIN, ("dealer",))
    assert refusal is not None and refusal.why == "D-7: wrong id or PIN (1 in a row)"
    assert staff.check("D-8", "55555555", ("dealer",)) is None
    staff.registry.path.write_text("{not json")  # a registry spoiled meanwhile: the staff stand
    assert staff.check("D-8", "55555555", ("dealer",)) is None


def test_a_role_that_cannot_approve_is_refused(tmp_path):
    staff = desk(tmp_path, Clock())
    refusal = staff.check("D-7", DEALER_PIN, ("supervisor",))
    assert refusal is not None and refusal.why == "D-7 is a dealer: this needs a supervisor"


# --------------------------------------------------------------------------- the screen


def post(screen: ScreenServer, message: dict) -> tuple[int, dict, dict]:
    """``message`` touched on ``screen`` as its paired page does: the status, JSON and headers."""
    request = urllib.request.Request(screen.url + "api/input", json.dumps(message).encode(),
                                     {"Content-Type": "application/json",
                                      "Cookie": screen.access.cookie_header()}, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.loads(response.read()), dict(response.headers)
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read()), dict(error.headers)


@pytest.fixture
def screen_table(tmp_path):
    """A table as ``dealer-assist table`` assembles it (recording directory, journal, runner,
    real uvicorn screen), its staff registered beside it, no shoe connected."""
    (tmp_path / "config").mkdir()
    staff = desk(tmp_path / "config", Clock())
    table = assemble(TableSetup(tmp_path / "rec", "T4", "s17-6", shoe_protocol="dealer-assist",
                                has_camera=False, port=0),
                     lambda position: [], staff=staff).start()
    table.runner.submit(ShoeLink(True, "test"))
    yield table
    table.stop()


def test_the_screen_takes_no_bet_before_sign_in_and_refuses_a_wrong_pin(screen_table, tmp_path):
    screen, runner = screen_table.screen, screen_table.runner
    assert post(screen, {"type": "bet", "seat": 1, "amount": "10"})[0] == 200
    assert runner.wait_idle(5) and not screen_table.loop.round_open  # refused: nobody signed in
    status, body, _ = post(screen, {"type": "sign_in", "dealer": "D-7", "pin": "999999"})
    assert status == 403 and body["detail"] == "D-7: wrong id or PIN (1 in a row)"
    assert post(screen, {"type": "sign_in", "dealer": "D-7"})[0] == 400  # no PIN: not even tried
    assert runner.wait_idle(5) and screen_table.loop.dealer is None
    assert post(screen, {"type": "sign_in", "dealer": "D-7", "pin": DEALER_PIN})[0] == 200
    assert runner.wait_until(lambda loop: loop.dealer == "D-7", 5)
    post(screen, {"type": "bet", "seat": 1, "amount": "10"})
    assert runner.wait_until(lambda loop: loop.round_open, 5)
    assert json.loads(screen_table.loop.round_lines()[0])["dealer_id"] == "D-7"


def test_wrong_pins_at_the_screen_are_answered_429_with_retry_after(screen_table):
    screen = screen_table.screen
    for _ in range(3):
        assert post(screen, {"type": "sign_in", "dealer": "D-7", "pin": "999999"})[0] == 403
    status, body, headers = post(screen, {"type": "sign_in", "dealer": "D-7", "pin": DEALER_PIN})
    assert status == 429 and "too many wrong PINs" in body["detail"]
    assert headers["retry-after"] == "30"
    assert screen_table.runner.wait_idle(5) and screen_table.loop.dealer is None


def test_a_void_needs_a_supervisors_pin_and_is_recorded_with_who(screen_table, tmp_path):
    screen, runner, loop = screen_table.screen, screen_table.runner, screen_table.loop
    post(screen, {"type": "sign_in", "dealer": "D-7", "pin": DEALER_PIN})
    post(screen, {"type": "bet", "seat": 1, "amount": "10"})
    assert runner.wait_until(lambda lp: lp.round_open, 5)
    status, body, _ = post(screen, {"type": "void", "reason": "misdeal"})  # what main took
    assert status == 400 and "'supervisor'" in body["detail"]
    status, body, _ = post(screen, {"type": "void", "reason": "misdeal", "supervisor": "S-3",
                                 "pin": "000000"})
    assert status == 403
    status, body, _ = post(screen, {"type": "void", "reason": "misdeal", "supervisor": "D-7",
                                 "pin": DEALER_PIN})  # the dealer cannot approve its own void
    assert status == 403 and body["detail"] == "D-7 is a dealer: this needs a supervisor"
    assert runner.wait_idle(5) and loop.round_open
    assert post(screen, {"type": "void", "reason": "misdeal", "supervisor": "S-3",
                      "pin": SUPERVISOR_PIN})[0] == 200
    assert runner.wait_until(lambda lp: not lp.round_open, 5)
    deadline = time.monotonic() + 10
    while screen_table.recording.pending and time.monotonic() < deadline:
        time.sleep(0.005)  # the store writes the void, then exports its files
    rec = tmp_path / "rec"
    reason = next((rec / "void").glob("*.reason.txt")).read_text()
    assert reason == "misdeal (voided by supervisor S-3; dealer D-7)\n"
    alarms = [json.loads(line) for line in (rec / "alarms.jsonl").read_text().splitlines()]
    refused = [a["text"] for a in alarms if a["kind"] == "staff" and "refused" in a["text"]]
    assert refused == ["void refused: S-3: wrong id or PIN (1 in a row)",
                       "void refused: D-7 is a dealer: this needs a supervisor"]
    assert all("recorded_at" in a for a in alarms)  # when, by the wall clock
    # no PIN anywhere: not in the journal, the round logs, the alarms, the store's records
    # (its database's bytes hold hashes and signatures, where six digits may turn up)
    assert (rec / JOURNAL_NAME).is_file()
    screen_table.stop()
    store = RecordingStore(rec)
    try:
        bodies = [r.body_text for r in store.scan() if isinstance(r, Record)]
    finally:
        store.close()
    for pin in (DEALER_PIN, SUPERVISOR_PIN, "000000"):
        assert not [body for body in bodies if pin in body]
        for path in rec.rglob("*"):
            if path.is_file() and not path.name.startswith("index.sqlite"):
                assert pin.encode() not in path.read_bytes(), path


def test_a_table_restarted_keeps_its_dealer_signed_in(tmp_path):
    (tmp_path / "config").mkdir()
    staff = desk(tmp_path / "config", Clock())
    setup = TableSetup(tmp_path / "rec", "T4", "s17-6", shoe_protocol="dealer-assist",
                       has_camera=False, port=0)
    table = assemble(setup, lambda position: [], staff=staff).start()
    post(table.screen, {"type": "sign_in", "dealer": "D-7", "pin": DEALER_PIN})
    table.runner.submit(ShoeLink(True, "test"))
    post(table.screen, {"type": "bet", "seat": 1, "amount": "10"})
    assert table.runner.wait_until(lambda loop: loop.round_open, 5)
    table.stop()  # as a crash leaves it: the round in the journal
    journal = tmp_path / "rec" / JOURNAL_NAME
    contents = read_journal(journal)
    # The sign-in, at rest: the id, in the checkpoint or, when the recorder had not yet written
    # the sign-in's alarm as the next input came (no checkpoint then), in the entry after it.
    signed = [one.dealer for entry in contents.entries for one in entry.inputs
              if isinstance(one, SignIn)]
    assert contents.checkpoint.dealer == "D-7" or signed == ["D-7"]
    assert DEALER_PIN.encode() not in journal.read_bytes()  # alone, never the PIN
    again = assemble(setup, lambda position: [], staff=staff)
    try:
        assert again.loop.dealer == "D-7" and again.opened.resumed is not None
        again.loop.handle(ShoeCard(C("9S")), 100.0)
        assert again.loop.round_lines()[0].count('"dealer_id": "D-7"') == 1
    finally:
        again.opened.journal.close()
        again.recording.close()


# --------------------------------------------------------------------------- the command line


def staff_command(config: Path, *args: str, pin: str | None = None
                  ) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "dealer_assist", "table", "staff", "--config", str(config), *args],
        cwd=ROOT, input=pin, capture_output=True, text=True, timeout=60)


def test_the_staff_command_adds_lists_and_removes_ids_reading_the_pin_from_stdin(tmp_path):
    config = tmp_path / "table.toml"
    config.write_text('[shoe]\nurl = "socket://127.0.0.1:9"\n')
    added = staff_command(config, "add", "D-7", "--role", "dealer", "--pin-stdin",
                          pin=DEALER_PIN + "\n")
    assert added.returncode == 0, added.stderr
    registry = tmp_path / "table.staff.json"
    assert added.stdout == f"D-7 (dealer) saved in {registry}\n"
    assert registry.stat().st_mode & 0o777 == 0o600 and DEALER_PIN not in registry.read_text()
    assert staff_command(config, "add", "S-3", "--role", "supervisor", "--pin-stdin",
                         pin=SUPERVISOR_PIN).returncode == 0
    assert staff_command(config, "list").stdout == "D-7\tdealer\nS-3\tsupervisor\n"
    assert StaffRegistry(registry).verify("S-3", SUPERVISOR_PIN) == "supervisor"
    short = staff_command(config, "add", "D-8", "--role", "dealer", pin="12\n")
    assert short.returncode == 2
    assert short.stderr == "dealer-assist table staff: a PIN must be 4 to 12 digits\n"
    assert staff_command(config, "remove", "D-7").returncode == 0
    assert staff_command(config, "list").stdout == "S-3\tsupervisor\n"
    missing = staff_command(config, "remove", "D-7")
    assert missing.returncode == 2 and "no staff id 'D-7'" in missing.stderr


def test_a_table_with_no_dealer_registered_does_not_start_and_the_check_says_so(tmp_path):
    config = tmp_path / "table.toml"
    config.write_text('[shoe]\nurl = "socket://127.0.0.1:9"\n[screen]\nport = 0\n')
    started = subprocess.run(
        [sys.executable, "-m", "dealer_assist", "table", "--config", str(config)],
        cwd=ROOT, capture_output=True, text=True, timeout=60)
    checked = subprocess.run(
        [sys.executable, "-m", "dealer_assist", "table", "--config", str(config), "--check"],
        cwd=ROOT, capture_output=True, text=True, timeout=60)
    advice = (f"no dealer can sign in: add one with 'dealer-assist table staff --config {config}"
              " add ID --role dealer'")
    assert started.returncode == 2 and f"dealer-assist table: {advice}" in started.stderr
    assert checked.returncode == 0, checked.stderr
    assert f"staff: 0 dealer(s), 0 supervisor(s) in {tmp_path / 'table.staff.json'}; {advice}" \
        in checked.stdout


def test_a_table_whose_failed_pin_count_others_may_read_does_not_start(tmp_path):
    config = tmp_path / "table.toml"
    config.write_text('[shoe]\nurl = "socket://127.0.0.1:9"\n[screen]\nport = 0\n')
    assert staff_command(config, "add", "D-7", "--role", "dealer", "--pin-stdin",
                         pin=DEALER_PIN).returncode == 0
    attempts = tmp_path / "table.staff.attempts.json"
    attempts.write_text('{"D-7": [2, 1000000.0]}')
    attempts.chmod(0o644)
    started = subprocess.run(
        [sys.executable, "-m", "dealer_assist", "table", "--config", str(config)],
        cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert started.returncode == 2 and "Traceback" not in started.stderr
    assert f"dealer-assist table: staff: {attempts} may be read or written by others" \
        in started.stderr
