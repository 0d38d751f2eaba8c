"""``dealer-assist replay`` and ``dealer-assist surveillance``, run as a user would."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from dealer_assist.cli import main
from dealer_assist.roundlog import settle_log
from dealer_assist.surveillance import Recorder, RecordingStore
from dealer_assist.surveillance.access import access_log
from dealer_assist.surveillance.export import latest_round
from dealer_assist.surveillance.replay import load_round, replay_round, round_keys
from tests.surveillance.factory import (
    GOLDEN_COUNT,
    HAND_HELD_ROUND,
    build_recording,
    golden_logs,
)

ROOT = Path(__file__).parents[2]


def test_replay_verify_clean_exits_0(recording: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["replay", str(recording), "--verify"]) == 0
    *notes, last = capsys.readouterr().out.splitlines()
    assert last.startswith(
        f"CLEAN: {GOLDEN_COUNT} settled rounds re-settled, 0 partial; chain verified over"
    )
    assert notes[0].startswith("note: no record is signed: the recording predates signing")
    assert notes[-1].startswith("note: no anchor log given (--anchor-log FILE)")
    assert access_log(RecordingStore(recording))[0]["action"] == "replay"


def test_replay_json_for_one_round(recording: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["replay", str(recording), "--round", "sb-1", "--verify", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert [r["round"] for r in report["rounds"]] == ["sb-1"]
    assert report["clean"] and report["verified"] and report["discrepancies"] == 0
    assert len(report["head"]["hash"]) == 64


def test_replay_names_each_discrepancy_and_exits_1(
    recording: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    conn = sqlite3.connect(recording / "index.sqlite")
    seq = conn.execute(
        "SELECT seq FROM records WHERE kind='settlement' AND round_id='sb-1'"
    ).fetchone()[0]
    conn.execute(
        'UPDATE records SET body = replace(body, \'"envy":"50.00"\', '
        '\'"envy":"500.00"\') WHERE seq = ?',
        (seq,),
    )
    conn.commit()
    conn.close()
    assert main(["replay", str(recording), "--verify"]) == 1
    out = capsys.readouterr().out
    assert "chain: table T1, round sb-1 (#" in out
    assert f"record {seq} (settlement, round sb-1 on T1) was altered" in out
    assert "settlement: table T1, round sb-1 (#" in out
    assert "seat 2: envy: recorded 500.00, replayed 50.00" in out
    assert "seat 5: envy: recorded 500.00, replayed 50.00" in out
    assert out.splitlines()[-1].startswith("3 DISCREPANCIES")


def test_replay_refuses_what_it_cannot_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["replay", str(tmp_path / "none")]) == 2
    assert "not a recording directory" in capsys.readouterr().err


def test_an_index_truncated_to_nothing_is_refused_not_rebuilt_as_a_clean_recording(
    recording: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    database = recording / "index.sqlite"
    database.write_bytes(b"")
    for argv in (["replay", str(recording), "--verify"], ["surveillance", "stats", str(recording)]):
        assert main(argv) == 2, argv
        assert (f"{database}: empty: the recording's records are missing"
                in capsys.readouterr().err)
    assert database.read_bytes() == b""  # left as found, for whoever investigates
    other = sqlite3.connect(database)  # some other program's database in its place
    other.execute("CREATE TABLE notes (text TEXT)")
    other.commit()
    other.close()
    assert main(["replay", str(recording), "--verify"]) == 2
    assert (f"{database}: holds no recording (an SQLite file never set up as one)"
            in capsys.readouterr().err)


@pytest.mark.parametrize("round_id", [
    "nope",
    "#999999999999999999999999",  # past SQLite's integers: it raised OverflowError
    "#\u0661\u0662",  # Arabic-Indic digits, which int() reads as 12
])
def test_unknown_round_is_an_error(
        recording: Path, capsys: pytest.CaptureFixture[str], round_id: str) -> None:
    assert main(["replay", str(recording), "--round", round_id]) == 2
    assert capsys.readouterr().err == (
        f"dealer-assist replay: no round {round_id!r} in {recording}\n")


def test_an_operator_is_not_added_to_a_mistyped_path(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """It made a new, empty recording there and said nothing; the recorder creates recordings."""
    import io

    monkeypatch.setattr(sys, "stdin", io.StringIO("long enough secret\n"))
    typo = tmp_path / "recordnig"
    assert main(["surveillance", "operator", str(typo), "add", "olga", "--password-stdin"]) == 2
    assert capsys.readouterr().err == (
        f"dealer-assist surveillance: {typo}: not a recording directory (no index.sqlite)\n")
    assert not typo.exists()


def test_redetect_says_clearly_when_vision_is_unavailable(recording: Path) -> None:
    try:
        import dealer_assist.vision.detector  # noqa: F401
    except ImportError:
        result = subprocess.run(
            [sys.executable, "-m", "dealer_assist", "replay", str(recording), "--redetect"],
            cwd=ROOT,
            capture_output=True,
            text=True,
        )
        assert result.returncode == 2
        assert "--redetect unavailable: re-detection needs the vision module" in result.stderr
    else:
        result = subprocess.run(
            [
                sys.executable,
                "-m",
                "dealer_assist",
                "replay",
                str(recording),
                "--redetect",
                "--model",
                str(recording / "no-such-model.onnx"),
            ],
            cwd=ROOT,
            capture_output=True,
            text=True,
        )
        assert result.returncode == 2
        assert "the card detector cannot be loaded" in result.stderr


def test_redetection_compares_each_card_frame_with_its_card_event(recording: Path) -> None:
    """A stand-in detector, since the golden recording's frames are drawn placeholders (a card
    code printed on a white box) that no card model reads: it reads the card back from the
    recording's own detections, except one frame it misreads. The shipped model on real
    frames: test_redetect_shipped_model.py."""
    store = RecordingStore(recording)
    key = round_keys(store, "sb-1")[0]
    data = load_round(store, key)
    assert data is not None
    truth = {}
    key_frames = [f for f in data.frames if json.loads(f.body_text)["key"]]
    for frame in key_frames:
        assert frame.file is not None
        truth[(recording / frame.file).read_bytes()] = frame
    misread = key_frames[2]

    def stand_in(image: bytes) -> list[str]:
        frame = truth[image]
        if frame.seq == misread.seq:
            return ["7S"]
        return [d["card"] for d in json.loads(frame.body_text)["detections"]["detections"]]

    result = replay_round(data, stand_in, store)
    assert result.frames_checked == 10  # the key frames at the 10 card events
    [problem] = result.discrepancies
    assert problem.kind == "detection" and problem.seq == misread.seq
    index = json.loads(misread.body_text)["event_index"]
    card = json.loads(data.events[index].body_text)["card"]
    assert f"event {index} recorded card {card}; the detector now sees 7S" in problem.what


def test_redetection_says_which_cards_the_dealer_corrected_or_keyed(tmp_path: Path) -> None:
    """A hand-held round: the camera read the dealer's 6D as 2D and the dealer corrected it, and
    seat 1's second card no reader saw was keyed. The key frames show what the camera saw (a
    stand-in detector reads them back as it did), so redetection finds both cards; each
    discrepancy says what the dealer entered."""
    build_recording(tmp_path, [HAND_HELD_ROUND])
    store = RecordingStore(tmp_path)
    data = load_round(store, round_keys(store, "hh-1")[0])
    assert data is not None
    camera_saw = {"8H": [], "6D": ["2D"]}  # what the camera read in each key frame

    def stand_in(image: bytes) -> list[str]:
        frame = next(f for f in data.frames if f.file and (tmp_path / f.file).read_bytes() == image)
        [detection] = json.loads(frame.body_text)["detections"]["detections"]
        return camera_saw.get(detection["card"], [detection["card"]])

    texts = [problem.what for problem in replay_round(data, stand_in, store).discrepancies]
    assert len(texts) == 2
    assert "recorded card 8H (keyed by the dealer: no reader saw it); the detector now sees no " \
        "card" in texts[0]
    assert "recorded card 6D (corrected by the dealer from 2D); the detector now sees 2D" in \
        texts[1]


def test_operators_stats_storage_and_prune_commands(
    recording: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import io

    monkeypatch.setattr(sys, "stdin", io.StringIO("long enough secret\n"))
    assert (
        main(
            [
                "surveillance",
                "operator",
                str(recording),
                "add",
                "olga",
                "--role",
                "operator",
                "--password-stdin",
            ]
        )
        == 0
    )
    assert main(["surveillance", "operator", str(recording), "list"]) == 0
    assert "olga\toperator" in capsys.readouterr().out
    monkeypatch.setattr(sys, "stdin", io.StringIO("short\n"))
    assert main(["surveillance", "operator", str(recording), "add", "bob", "--password-stdin"]) == 2
    assert "at least 8 characters" in capsys.readouterr().err

    assert main(["surveillance", "stats", str(recording), "--by", "table", "--json"]) == 0
    [row] = json.loads(capsys.readouterr().out)
    assert row["table"] == "T1" and row["rounds"] == GOLDEN_COUNT and row["alarms"] == {"shoe": 10}
    assert main(["surveillance", "stats", str(recording)]) == 0
    assert "rounds in" in capsys.readouterr().out
    assert main(["surveillance", "stats", str(recording), "--by", "pit"]) == 2
    assert "cannot group statistics by 'pit'" in capsys.readouterr().err

    assert main(["surveillance", "storage", str(recording)]) == 0
    assert "bytes per hour of play" in capsys.readouterr().out
    assert main(["surveillance", "prune", str(recording), "--older-than-hours", "0.01"]) == 0
    assert "non-key frames" in capsys.readouterr().out
    assert main(["replay", str(recording), "--verify"]) == 0


def test_garbage_in_records_is_reported_not_crashed_on(
    recording: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    conn = sqlite3.connect(recording / "index.sqlite")
    rows = conn.execute(
        "SELECT seq, kind FROM records WHERE round_id = 'sb-1' AND kind IN "
        "('settlement', 'frame', 'event') ORDER BY seq"
    ).fetchall()
    targets = [
        rows[3][0],
        next(s for s, k in rows if k == "frame"),
        next(s for s, k in rows if k == "settlement"),
    ]
    for seq in targets:
        conn.execute("UPDATE records SET body = '{not json' WHERE seq = ?", (seq,))
    conn.commit()
    conn.close()
    assert main(["replay", str(recording), "--verify"]) == 1
    out = capsys.readouterr().out
    for seq in targets:
        assert f"record {seq} (" in out and "was altered" in out
    assert "cannot be read: not valid JSON" in out


def test_a_file_that_is_not_a_database_is_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "rec").mkdir()
    (tmp_path / "rec" / "index.sqlite").write_bytes(b"this is not SQLite" * 100)
    assert main(["replay", str(tmp_path / "rec")]) == 2
    err = capsys.readouterr().err
    assert f"{tmp_path / 'rec' / 'index.sqlite'}: cannot open the index database" in err


def test_anchor_from_a_previous_replay(recording: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["replay", str(recording), "--verify"]) == 0
    anchor = capsys.readouterr().out.split()[-1]
    assert main(["replay", str(recording), "--verify", "--anchor", anchor]) == 0
    assert main(["replay", str(recording), "--verify", "--anchor", "12:beef"]) == 2
    assert "must be SEQ:HASH" in capsys.readouterr().err
    conn = sqlite3.connect(recording / "index.sqlite")
    conn.execute("DELETE FROM records WHERE seq >= ?", (int(anchor.split(":")[0]),))
    conn.commit()
    conn.close()
    assert main(["replay", str(recording), "--verify", "--anchor", anchor]) == 1
    assert "the chain was cut short" in capsys.readouterr().out
    # without the anchor the chain cannot show the cut, but the search index still holds the
    # settlement cut off; the replay's own access record then reuses the anchored record number,
    # so the anchor now finds a different record there
    assert main(["replay", str(recording), "--verify"]) == 1
    assert "index: the search index table rounds does not match the records: its rows for" \
        " round #" in capsys.readouterr().out
    assert main(["replay", str(recording), "--verify", "--anchor", anchor]) == 1
    assert "no longer has the anchored hash" in capsys.readouterr().out


def test_a_recording_another_program_has_locked_is_refused_by_name_and_loses_nothing(
    recording: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A real SQLite lock (another connection's write transaction); the 30 s each write waits for
    it is cut to 0.05 s here. Every command that writes (the access log, a prune, an operator)
    is refused with the database's name instead of a traceback."""
    import io

    monkeypatch.setattr(RecordingStore, "busy_timeout_s", 0.05)
    database = recording / "index.sqlite"
    refused = f"{database}: cannot write to the index database (database is locked)"
    lock = sqlite3.connect(database, isolation_level=None)
    lock.execute("BEGIN EXCLUSIVE")
    try:
        for argv in (["replay", str(recording), "--verify"],
                     ["surveillance", "stats", str(recording)],
                     ["surveillance", "prune", str(recording), "--older-than-hours", "0.01"]):
            assert main(argv) == 2, argv
            assert refused in capsys.readouterr().err, argv
        monkeypatch.setattr(sys, "stdin", io.StringIO("long enough secret\n"))
        assert main(["surveillance", "operator", str(recording), "add", "olga",
                     "--password-stdin"]) == 2
        assert refused in capsys.readouterr().err
    finally:
        lock.execute("ROLLBACK")
        lock.close()
    frames = list((recording / "frames").rglob("*.*"))
    assert main(["replay", str(recording), "--verify"]) == 0  # the chain whole
    assert f"CLEAN: {GOLDEN_COUNT} settled rounds" in capsys.readouterr().out
    assert main(["surveillance", "operator", str(recording), "list"]) == 0
    assert "olga" not in capsys.readouterr().out
    assert list((recording / "frames").rglob("*.*")) == frames  # the refused prune took none


def test_adding_an_operator_with_no_password_to_read_is_refused(recording: Path) -> None:
    """No terminal (a new session has none, so the password prompt reads stdin) and stdin
    empty: as when the command runs from a script without --password-stdin."""
    done = subprocess.run(
        [sys.executable, "-m", "dealer_assist", "surveillance", "operator", str(recording),
         "add", "olga"], stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=120,
        cwd=ROOT, start_new_session=True)
    assert done.returncode == 2
    assert "no password given for olga (end of input)" in done.stderr
    assert "Traceback" not in done.stderr


def test_a_name_that_is_not_utf8_is_refused(recording: Path) -> None:
    """A shell in another encoding passes bytes Python cannot write into a UTF-8 record: the
    chain's hash crashed on them. A name given is refused (nothing shown, nothing logged)."""
    import os

    odd = os.fsdecode(b"agent-\xe9")  # Latin-1, as an old terminal sends it
    before = len(access_log(RecordingStore(recording)))
    for option in ("--user", "--round"):
        result = subprocess.run([sys.executable, "-m", "dealer_assist", "replay", str(recording),
                                 option, odd], capture_output=True, text=True, cwd=ROOT,
                                timeout=60)
        assert result.returncode == 2, result.stderr
        assert f"argument {option}: 'agent-\\udce9' is not UTF-8 text" in result.stderr
        assert result.stdout == ""
    assert len(access_log(RecordingStore(recording))) == before


def test_replay_records_the_os_account_beside_any_name_the_caller_types(recording: Path) -> None:
    """``--user`` and ``$USER``/``$LOGNAME`` are whatever the caller says: the record keeps the
    account the process runs as (from its uid) beside the claimed name."""
    import os
    import pwd

    account = pwd.getpwuid(os.getuid()).pw_name
    fake = {**os.environ, "LOGNAME": "olga", "USER": "olga", "LNAME": "olga", "USERNAME": "olga"}
    for extra, claimed in (([], account), (["--user", "olga"], "olga")):
        result = subprocess.run([sys.executable, "-m", "dealer_assist", "replay", str(recording),
                                 *extra], capture_output=True, text=True, cwd=ROOT, timeout=60,
                                env=fake)
        assert result.returncode == 0, result.stderr
        entry = access_log(RecordingStore(recording))[0]
        assert (entry["action"], entry["user"], entry["account"]) == ("replay", claimed, account)


def test_reindex_rebuilds_an_altered_search_index_from_the_records_and_logs_it(
    recording: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    index = sqlite3.connect(recording / "index.sqlite", isolation_level=None)
    index.execute("UPDATE rounds SET net_cents = net_cents + 100000 WHERE round_key = 1")
    index.execute("DELETE FROM round_seats WHERE round_key = 2")
    index.close()
    assert main(["replay", str(recording), "--verify"]) == 1
    assert "index: the search index table rounds does not match the records: its rows for" \
        " round #1 differ" in capsys.readouterr().out

    assert main(["surveillance", "reindex", str(recording)]) == 0
    out = capsys.readouterr().out
    assert "was: the search index table round_seats does not match the records: it lacks rows" \
        " for round #2 seat" in out
    assert out.endswith(f"search index rebuilt from the records of {recording}\n")
    assert access_log(RecordingStore(recording))[0]["action"] == "reindex"
    assert main(["replay", str(recording), "--verify"]) == 0
    assert capsys.readouterr().out.splitlines()[-1].startswith(
        f"CLEAN: {GOLDEN_COUNT} settled rounds")

    assert main(["surveillance", "reindex", str(recording)]) == 0
    assert capsys.readouterr().out.endswith("(it matched them already)\n")


def test_reindex_refuses_a_damaged_recording_and_changes_nothing(
    recording: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from tests.surveillance.damage import damage_page

    damage_page(recording, "records", leaf=5)
    before = (recording / "index.sqlite").read_bytes()
    assert main(["surveillance", "reindex", str(recording)]) == 2
    assert "index.sqlite: the index database is damaged" in capsys.readouterr().err
    assert (recording / "index.sqlite").read_bytes() == before


def test_operator_help_says_the_role_add_gives_by_default() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "dealer_assist", "surveillance", "operator", "--help"],
        capture_output=True, text=True, timeout=60, check=True, cwd=ROOT)
    text = " ".join(done.stdout.split())
    assert "'add NAME' gives the auditor role (read-only" in text
    assert "the role 'add' gives (default: auditor, read-only)" in text


def test_serve_prints_the_url_it_answers_on_and_says_when_no_one_can_log_in(
        recording: Path) -> None:
    import urllib.request

    server = subprocess.Popen(
        [sys.executable, "-m", "dealer_assist", "surveillance", "serve", str(recording),
         "--port", "0"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT)
    try:
        assert server.stderr is not None
        url = server.stderr.readline().strip().removeprefix("surveillance page on ")
        assert url.startswith("http://127.0.0.1:") and url.endswith("/")
        assert "no operator can log in yet" in server.stderr.readline()
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(url, timeout=2) as answer:
                    assert b"<title>dealer-assist surveillance</title>" in answer.read()
                    break
            except OSError:
                assert time.monotonic() < deadline and server.poll() is None
                time.sleep(0.2)
    finally:
        server.terminate()
        server.wait(timeout=30)


def test_replay_export_rounds_writes_each_ended_round_as_the_store_holds_it(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``--export-rounds OUT``: each settled round's file in OUT/rounds, a voided one's in
    OUT/void with its reason, an open round none; each file's lines are the store's records;
    run again it writes only what differs."""
    logs = golden_logs()[:3]
    build_recording(tmp_path / "rec", logs, frames=False)
    with Recorder.open(tmp_path / "rec", "T1") as recorder:
        recorder.begin_round({"type": "round", "id": "v-1", "rules": "s17-6"})
        recorder.event({"type": "bet", "seat": 2, "amount": "25"})
        recorder.void_round("a foreign card (voided by supervisor S-3)")
        recorder.begin_round({"type": "round", "id": "open-1", "rules": "s17-6"})
    out = tmp_path / "out"
    assert main(["replay", str(tmp_path / "rec"), "--export-rounds", str(out)]) == 0
    printed = capsys.readouterr().out.splitlines()[-1]
    assert printed == f"exported to {out}: 4 round(s) written, 0 already equal, 1 not ended " \
                      "(open or cut short: no file)"
    store = RecordingStore(tmp_path / "rec")
    try:
        for lines in logs:
            round_id = json.loads(lines[0])["id"]
            data = latest_round(store, round_id)
            assert data is not None and data.settlement is not None
            exported = (out / "rounds" / f"{round_id}.jsonl").read_text().splitlines()
            assert exported == [r.body_text for r in data.events]
            assert settle_log(exported).to_json() == json.loads(data.settlement.body_text)
    finally:
        store.close()
    assert (out / "void" / "v-1.jsonl").read_text() == (
        '{"id":"v-1","rules":"s17-6","type":"round"}\n{"amount":"25","seat":2,"type":"bet"}\n')
    assert (out / "void" / "v-1.reason.txt").read_text() == \
        "a foreign card (voided by supervisor S-3)\n"
    assert not list(out.rglob("open-1*"))
    changed = next((out / "rounds").iterdir())
    changed.write_text("edited\n")
    assert main(["replay", str(tmp_path / "rec"), "--export-rounds", str(out)]) == 0
    assert capsys.readouterr().out.splitlines()[-1].startswith(
        f"exported to {out}: 1 round(s) written, 3 already equal")
    assert changed.read_text() != "edited\n"
