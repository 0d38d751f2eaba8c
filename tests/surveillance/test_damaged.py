"""A damaged recording (bytes changed on disk, values of the wrong type written into its
database, a damaged SQLite index) is reported by what and where: never a traceback, never a
silent CLEAN, and what is intact is still replayed. Each case is made on a real copy of the
golden recording, with SQLite or by changing the file's bytes."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from dealer_assist.cli import main
from dealer_assist.surveillance import DamagedRecordingError, Recorder, RecordingStore
from dealer_assist.surveillance.query import mark_key_frame
from dealer_assist.surveillance.replay import compare_settlements, verify_index
from tests.surveillance.damage import damage_page, unreadable_seqs
from tests.surveillance.factory import (
    GOLDEN_COUNT,
    StepClock,
    build_recording,
    golden_logs,
    record_round,
)


def _sql(recording: Path, *statements: str) -> None:
    conn = sqlite3.connect(recording / "index.sqlite")
    for statement in statements:
        conn.execute(statement)
    conn.commit()
    conn.close()


def _allow_null(recording: Path, column: str) -> None:
    """Drop a records column's NOT NULL (SQLite's writable schema), as a damaged file could."""
    _sql(recording, "PRAGMA writable_schema = ON",
         f"UPDATE sqlite_master SET sql = replace(sql, '{column} TEXT NOT NULL', '{column} TEXT')"
         " WHERE name = 'records'")


def _seq(recording: Path, kind: str) -> int:
    store = RecordingStore(recording)
    seq = next(r.seq for r in store.records(kinds=(kind,)))
    store.close()  # the last connection checkpoints the WAL into index.sqlite
    return seq


def _patch_bytes(recording: Path, find: bytes, replace: bytes, within: range | None = None) -> int:
    """Replace every ``find`` in the database file (in ``within`` if given) by ``replace``."""
    path = recording / "index.sqlite"
    raw = bytearray(path.read_bytes())
    span = within or range(len(raw))
    count, at = 0, raw.find(find, span.start, span.stop)
    while at >= 0:
        raw[at:at + len(find)] = replace
        count, at = count + 1, raw.find(find, at + 1, span.stop)
    path.write_bytes(bytes(raw))
    return count


def test_text_that_is_not_utf8_is_a_record_altered_and_the_rest_replays(
        recording: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """SQLite stores a text's bytes as given: one changed on disk can leave bytes that are not
    UTF-8, which Python's sqlite3 refuses to read (it used to stop the whole replay)."""
    seq = _seq(recording, "settlement")
    _sql(recording, f"UPDATE records SET prev_hash = CAST(x'cf' || substr(prev_hash, 2) AS TEXT)"
                    f" WHERE seq = {seq}")
    assert main(["replay", str(recording), "--verify"]) == 1
    out = capsys.readouterr().out
    assert f"record {seq} (settlement, round " in out
    assert "does not link to the record before it" in out and "was altered" in out
    assert out.splitlines()[-1].startswith(f"2 DISCREPANCIES: {GOLDEN_COUNT} settled rounds")


def test_a_damaged_sqlite_index_is_not_verified_clean(
        recording: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Replay finds rounds through SQLite's index on the records' kind; one entry changed in it
    ("round" -> "rounz") hides rounds from that query while the table itself is intact."""
    _seq(recording, "round")
    conn = sqlite3.connect(recording / "index.sqlite")
    try:
        pages = [row[0] for row in conn.execute(
            "SELECT pageno FROM dbstat WHERE name = 'records_kind' AND pagetype = 'leaf'")]
        size = conn.execute("PRAGMA page_size").fetchone()[0]
    except sqlite3.OperationalError:
        pytest.skip("this SQLite has no dbstat table to find the index's pages with")
    finally:
        conn.close()
    for page in pages:
        _patch_bytes(recording, b"round", b"rounz", range((page - 1) * size, page * size))
    assert main(["replay", str(recording), "--verify"]) == 1
    out = capsys.readouterr().out
    assert "database: the index database fails SQLite's integrity check (row " in out
    assert "missing from index records_kind" in out
    assert "rounds found through a damaged index may be missing from this replay" in out


def test_a_damaged_schema_is_named(recording: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _seq(recording, "round")
    assert _patch_bytes(recording, b"hash TEXT NOT NULL, signature TEXT)",
                        b"hash TEXT NOT NUL\xcc, signature TEXT)") == 1
    assert main(["replay", str(recording)]) == 2
    assert ("index.sqlite: cannot open the index database: its schema is damaged (not UTF-8 text:"
            " invalid continuation byte at byte ") in capsys.readouterr().err


@pytest.mark.parametrize(("column", "value"), [
    ("body", "NULL"), ("prev_hash", "x'00ff'"), ("hash", "x'00ff'"), ("round_id", "x'61'"),
])
def test_a_column_of_the_wrong_type_is_a_record_altered(
        recording: Path, capsys: pytest.CaptureFixture[str], column: str, value: str) -> None:
    seq = _seq(recording, "event")
    _allow_null(recording, column)
    _sql(recording, f"UPDATE records SET {column} = {value} WHERE seq = {seq}")
    assert main(["replay", str(recording), "--verify", "--json"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert any(d["seq"] == seq and "was altered" in d["what"] for d in report["chain"])
    assert len(report["rounds"]) == GOLDEN_COUNT


def test_a_record_number_past_sqlites_integers_is_refused_without_losing_anything(
        recording: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _sql(recording, "UPDATE records SET seq = 9223372036854775807 WHERE seq ="
                    " (SELECT MAX(seq) FROM records)")
    frames = sorted((recording / "frames").rglob("*"))
    assert main(["surveillance", "prune", str(recording), "--older-than-hours", "0.01"]) == 2
    assert "cannot add a record: the index database is damaged (Python int too large to" \
        " convert to SQLite INTEGER); nothing was changed" in capsys.readouterr().err
    assert sorted((recording / "frames").rglob("*")) == frames


@pytest.mark.parametrize(("statement", "message"), [
    ("ALTER TABLE records DROP COLUMN sha256", "the records table has no column sha256"),
    ("UPDATE schema_version SET version = 'abc'", "schema version 'abc' is not a number"),
])
def test_a_damaged_schema_table_is_refused_by_name(
        recording: Path, capsys: pytest.CaptureFixture[str], statement: str,
        message: str) -> None:
    _sql(recording, statement)
    assert main(["replay", str(recording), "--verify"]) == 2
    assert f"index.sqlite: {message} (damaged?)" in capsys.readouterr().err


@pytest.mark.parametrize("recorded", [
    {"dealer": 5, "seats": [{"seat": [1], "hands": 5}], "net": "0.00"},
    {"dealer": {"cards": 7}, "seats": 5},
    {"seats": [{"seat": 1, "hands": ["x", {"cards": "?"}]}]},
])
def test_a_recorded_settlement_of_another_shape_reads_as_differences(recorded: dict) -> None:
    replayed = {"net": "10.00", "dealer": {"cards": ["9H", "8S"]},
                "seats": [{"seat": 1, "net": "10.00", "hands": [{"cards": ["KC", "9D"]}]}]}
    found = compare_settlements(recorded, replayed)
    assert found and all(d.kind == "settlement" for d in found)
    assert any("recorded" in d.what and "replayed" in d.what for d in found)


def test_a_settlement_nested_too_deep_is_a_settlement_not_an_object(
        recording: Path, capsys: pytest.CaptureFixture[str]) -> None:
    seq = _seq(recording, "settlement")
    _sql(recording, f"UPDATE records SET body = '{'[' * 100000}{']' * 100000}' WHERE seq = {seq}")
    assert main(["replay", str(recording)]) == 1
    assert "the recorded settlement is not a JSON object (altered?)" in capsys.readouterr().out


def test_statistics_from_a_search_index_that_disagrees_with_itself_are_refused(
        recording: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _sql(recording, "INSERT INTO round_seats (round_key, seat, wager_cents, net_cents, hands)"
                    " VALUES (999, 1, 500, 500, 1)")
    assert main(["surveillance", "stats", str(recording)]) == 2
    assert ("the search index is damaged: round_seats has rows for round #999, which it does not"
            " list. It is derived from the chained records, which 'dealer-assist replay"
            " --verify' checks") in capsys.readouterr().err


def test_storage_counts_records_with_no_time(
        recording: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _allow_null(recording, "at")
    _sql(recording, "UPDATE records SET at = NULL WHERE seq = 3")
    assert main(["surveillance", "storage", str(recording), "--json"]) == 0
    hours = json.loads(capsys.readouterr().out)["hours"]
    assert [h["records"] for h in hours if h["hour"] == "(no time recorded)"] == [1]


def test_prune_deletes_nothing_when_a_key_frame_mark_cannot_be_read(
        recording: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store = RecordingStore(recording)
    mark_key_frame(store, next(r.seq for r in store.records(kinds=("frame",))), "olga")
    store.close()
    seq = _seq(recording, "keyframe")
    _sql(recording, f"""UPDATE records SET body = '{{"frame": [1]}}' WHERE seq = {seq}""")
    frames = sorted((recording / "frames").rglob("*"))
    assert main(["surveillance", "prune", str(recording), "--older-than-hours", "0.01"]) == 2
    err = capsys.readouterr().err
    assert f"record {seq} (keyframe" in err
    assert "does not say which frame it keeps (altered?): nothing was pruned" in err
    assert sorted((recording / "frames").rglob("*")) == frames


def test_frame_files_no_record_names_are_noted(
        recording: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Deleting records leaves their frames on disk: verify lists them (a frame written as the
    recorder was killed shows the same way, so it is a note, not a discrepancy). The search
    index still lists what was deleted: that is a discrepancy."""
    _sql(recording, "DELETE FROM records")
    assert main(["replay", str(recording), "--verify"]) == 1
    out = capsys.readouterr().out
    assert "index: the search index table rounds does not match the records: it has rows for" \
        " round #1, round #2" in out
    count = len([p for p in (recording / "frames").rglob("*") if p.is_file()])
    assert count > 3
    assert f"note: {count} frame file(s) on disk are named by no record" in out


# -- a page of the database overwritten (a disk fault): what can be read still is -----------------


def _runs(seqs: list[int]) -> list[tuple[int, int]]:
    runs: list[tuple[int, int]] = []
    for seq in seqs:
        if runs and runs[-1][1] == seq - 1:
            runs[-1] = (runs[-1][0], seq)
        else:
            runs.append((seq, seq))
    return runs


def test_replay_reads_past_a_damaged_page_and_names_each_record_it_cannot_read(
        recording: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Every query over the records stopped at the damaged page ("database disk image is
    malformed"): no round replayed. Now each record SQLite cannot read is named, with its round,
    and every other round replays."""
    damage_page(recording, "records", leaf=70)
    lost = unreadable_seqs(recording)
    assert lost
    assert main(["replay", str(recording), "--verify", "--json"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert [d["what"] for d in report["chain"] if "cannot be read" in d["what"]] == [
        f"records {first} to {last} cannot be read from index.sqlite (database disk image is"
        " malformed)" for first, last in _runs(lost)]
    damaged = [r for r in report["rounds"] if r["status"] == "unreadable"]
    assert damaged and len(report["rounds"]) == GOLDEN_COUNT
    for round_replay in damaged:
        [problem] = round_replay["discrepancies"]
        assert problem["kind"] == "database" and problem["seq"] in lost
        assert problem["round_id"] == round_replay["round"] is not None
        assert "cannot be read from index.sqlite" in problem["what"]
        assert problem["what"].endswith(": not re-settled")
    assert all(r["discrepancies"] == [] for r in report["rounds"] if r["status"] == "settled")

    assert main(["replay", str(recording)]) == 1  # without --verify: the rounds still named
    out = capsys.readouterr().out
    assert f"database: table T1, round {damaged[0]['round']} (#{damaged[0]['round_key']}):" in out
    assert f"{GOLDEN_COUNT - len(damaged)} settled rounds re-settled, 0 partial," \
        f" {len(damaged)} unreadable;" in out


def test_a_damaged_end_of_the_chain_is_replayed_though_the_look_cannot_be_logged(
        recording: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The last page holds the chain's head: no record can be appended, so the replay cannot be
    logged. It is still shown (a damaged recording must still be read), saying so."""
    damage_page(recording, "records", leaf=-1)
    lost = unreadable_seqs(recording)
    assert main(["replay", str(recording), "--verify"]) == 1
    out = capsys.readouterr().out
    assert f"database: this replay could not be logged in the recording: {recording}" \
        "/index.sqlite: cannot add a record: the index database is damaged" in out
    assert f"database: records {lost[0]} to {lost[-1]} cannot be read from index.sqlite" in out
    assert out.splitlines()[-1].endswith(f"head record {lost[-1]} (unreadable)")
    assert "settled rounds re-settled" in out


@pytest.mark.parametrize(("name", "leaf"), [
    ("records", 70), ("records", None), ("records", -1), ("rounds", 0), ("records_round", None),
])
def test_the_recorder_refuses_a_damaged_database_naming_it_and_changes_nothing(
        recording: Path, name: str, leaf: int | None) -> None:
    """The live table appended to a database with a damaged page without a word, or failed with
    SQLite's own "database disk image is malformed" naming nothing."""
    damage_page(recording, name, leaf)
    before = (recording / "index.sqlite").read_bytes()
    with pytest.raises(DamagedRecordingError, match=(
            rf"^{recording}/index.sqlite: the index database is damaged \(.+\), so nothing is"
            r" written to it: run 'dealer-assist replay --verify' on it$")):
        Recorder.open(recording, "T1")
    assert (recording / "index.sqlite").read_bytes() == before


@pytest.mark.parametrize("loss", ["truncated", "deleted"])
def test_the_recorder_begins_no_new_chain_over_a_recordings_frames(recording: Path,
                                                                   loss: str) -> None:
    """An index truncated to nothing or deleted, its frames still there: a new recording begun
    over them would verify clean, hiding that every record was lost."""
    index = recording / "index.sqlite"
    for path in recording.glob("index.sqlite-*"):  # the WAL and its index, were any left
        path.unlink()
    index.write_bytes(b"") if loss == "truncated" else index.unlink()
    frames = sorted(p for p in (recording / "frames").rglob("*") if p.is_file())
    assert frames
    with pytest.raises(DamagedRecordingError, match=(
            rf"^{index}: {'empty' if loss == 'truncated' else 'missing'} while frames/ holds the "
            r"frames of a recording: its records are lost")):
        Recorder.open(recording, "T1")
    assert index.read_bytes() == b"" if loss == "truncated" else not index.exists()
    assert sorted(p for p in (recording / "frames").rglob("*") if p.is_file()) == frames


@pytest.mark.parametrize(("argv", "name", "leaf"), [
    (["storage"], "records", 70),
    (["stats"], "rounds", 0),
    (["prune", "--older-than-hours", "0.01"], "records", 70),
    (["prune", "--older-than-hours", "0.01"], "rounds", None),  # prune never reads rounds
])
def test_admin_commands_refuse_a_damaged_database_in_one_line_and_prune_deletes_nothing(
        recording: Path, capsys: pytest.CaptureFixture[str], argv: list[str], name: str,
        leaf: int | None) -> None:
    damage_page(recording, name, leaf)
    frames = sorted((recording / "frames").rglob("*"))
    assert main(["surveillance", argv[0], str(recording), *argv[1:]]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert err.startswith(f"dealer-assist surveillance: {recording}/index.sqlite: the index"
                          " database is damaged (")
    assert "run 'dealer-assist replay --verify' on it" in err
    assert sorted((recording / "frames").rglob("*")) == frames


def test_a_search_index_emptied_or_missing_a_table_fails_verification_by_name(
        recording: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The derived tables were never checked: DELETE FROM rounds verified CLEAN, and storage
    without its frames table blamed a lock or a full disk."""
    _sql(recording, "DELETE FROM rounds")
    assert main(["replay", str(recording), "--verify"]) == 1
    assert "index: the search index table rounds does not match the records: it lacks rows" \
        f" for round #1, round #2, round #3, round #4, round #5 and {GOLDEN_COUNT - 5} more" \
        in capsys.readouterr().out
    _sql(recording, "DROP TABLE frames")
    assert main(["replay", str(recording), "--verify"]) == 1
    assert "index: the search index table frames cannot be compared with the records (no such" \
        " table: recording.frames)" in capsys.readouterr().out
    assert main(["surveillance", "storage", str(recording)]) == 2
    assert capsys.readouterr().err == (
        f"dealer-assist surveillance: {recording}/index.sqlite: the index database is damaged"
        " (no such table: frames): run 'dealer-assist replay --verify' on it\n")
    with pytest.raises(DamagedRecordingError, match="no table frames"):
        Recorder.open(recording, "T1")


def test_an_altered_search_index_row_is_named(
        recording: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _sql(recording, "UPDATE round_seats SET net_cents = net_cents + 10000 WHERE round_key = 3")
    assert main(["replay", str(recording), "--verify"]) == 1
    out = capsys.readouterr().out
    assert "index: the search index table round_seats does not match the records: its rows for" \
        " round #3 seat 1 differ from what the records give" in out
    assert out.splitlines()[-1].startswith("1 DISCREPANCIES")


def test_a_round_wholly_on_a_damaged_page_is_named_never_passed_over(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Every record of round #7 lies on the damaged page: the rounds were listed from readable
    records only, so #7 vanished from the replay, and asked for by its id the replay said CLEAN
    over the other rounds of that id. The round index still names it: it is reported."""
    recording = tmp_path / "big"
    logs = (golden_logs() * 2)[:30]
    build_recording(recording, logs, clock=StepClock(), frames=False)
    damage_page(recording, "records", leaf=5)
    conn = sqlite3.connect(recording / "index.sqlite")
    seqs = [row[0] for row in conn.execute(
        "SELECT seq FROM records INDEXED BY records_round WHERE round_key = 7")]
    round_id = conn.execute("SELECT round_id FROM rounds WHERE round_key = 7").fetchone()[0]
    conn.close()
    assert seqs and set(seqs) <= set(unreadable_seqs(recording))
    assert main(["replay", str(recording), "--round", round_id]) == 1
    out = capsys.readouterr().out
    assert "database: round #7: records" in out and "not re-settled" in out
    assert main(["replay", str(recording), "--json"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert len(report["rounds"]) == 30
    assert [r["status"] for r in report["rounds"] if r["round_key"] == 7] == ["unreadable"]


def test_a_damaged_round_index_still_replays_every_round_from_the_records(
        recording: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The round index damaged, the records whole: each round's records are read from the
    table (they were reported unreadable, "round None"); only the replay's own log entry, which
    would touch the damaged index, cannot be written."""
    damage_page(recording, "records_round", None)
    assert main(["replay", str(recording), "--json"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert len(report["rounds"]) == GOLDEN_COUNT
    assert {r["status"] for r in report["rounds"]} <= {"settled", "partial"}
    assert all(r["discrepancies"] == [] for r in report["rounds"])
    assert [d["what"].split(":")[0] for d in report["database"]] == [
        "this replay could not be logged in the recording"]


def test_verify_while_the_table_records_compares_only_the_records_it_walked(
        recording: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The live table appends a round between the walk over the records and the comparison
    with the search index: its rows are no discrepancy (verify had reported the index damaged
    whenever a table was recording)."""
    walk = RecordingStore.scan

    def walk_then_record(store: RecordingStore):  # type: ignore[no-untyped-def]
        yield from walk(store)
        with Recorder.open(recording, "T1") as live:
            record_round(live, golden_logs()[0], frames=False)

    store = RecordingStore(recording)
    monkeypatch.setattr(RecordingStore, "scan", walk_then_record)
    assert verify_index(store) == []
    store.close()


def test_a_round_key_thousands_of_digits_long_is_no_round(
        recording: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["replay", str(recording), "--round", "#" + "9" * 5000]) == 2
    assert "no round" in capsys.readouterr().err
