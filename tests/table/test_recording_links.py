"""Whoever may write in a table's recording or configuration folder leaves a symbolic link (or a
FIFO, or a second name of another file) where the table writes one of its files, pointing at
the table's signing key: the table never writes through it. A file the table writes in place
(the lock, the alarm log, the anchor log, the public key file) is refused, naming the path; a
temporary file renamed into place (the journal's, a round file's, the staff registry's, the
forwarding cursor's, a frame's) is made anew, the link removed as a link. Each time the key is
left as it was. Real files, the real table code, and for the lock the real ``--check``."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from dealer_assist.floor.forwarder import CURSOR_NAME, Cursor
from dealer_assist.surveillance.anchors import Anchor, AnchorLog, AnchorLogError
from dealer_assist.surveillance.export import RoundFile, write_round_file
from dealer_assist.surveillance.signing import KeyFileError, Signer, add_public_key, load_signer
from dealer_assist.surveillance.store import write_frame_file
from dealer_assist.table.alarms import Alarm, AlarmKind
from dealer_assist.table.journal import Checkpoint, TableJournal
from dealer_assist.table.recording import RecordingDirectory, RecordingError
from dealer_assist.table.staff import HashCost, StaffRegistry
from tests.table.test_check import write_config
from tests.table.test_table_cli import run_table

CHEAP = HashCost(time_cost=1, memory_kib=8, parallelism=1)


@pytest.fixture
def key(tmp_path: Path) -> Path:
    """The table's signing key, beside its configuration (outside the recording)."""
    path = tmp_path / "T1.key"
    Signer.generate().save(path)
    return path


def link(at: Path, to: Path) -> Path:
    at.parent.mkdir(parents=True, exist_ok=True)
    at.symlink_to(os.path.relpath(to, at.parent))
    return at


def assert_key_intact(key: Path, before: bytes) -> None:
    assert key.read_bytes() == before, "the table's key was written through the link"
    load_signer(key)


def test_the_reviewers_lock_link_fails_the_check_and_leaves_the_key(tmp_path: Path,
                                                                    key: Path) -> None:
    """``ln -s ../T1.key recordings/.table.lock``, then ``--check``: refused, naming the lock;
    the key still loads (before, it held ``pid NNN`` and every start failed)."""
    config = write_config(tmp_path, recording="recordings")
    before = key.read_bytes()
    lock = link(tmp_path / "recordings" / ".table.lock", key)
    checked = run_table(config, "--check")
    assert checked.returncode == 2, checked.stdout + checked.stderr
    assert f"{lock} is a symbolic link" in checked.stderr, checked.stderr
    assert "Traceback" not in checked.stderr
    assert_key_intact(key, before)


def test_a_lock_that_is_a_second_name_of_the_key_is_refused(tmp_path: Path, key: Path) -> None:
    before = key.read_bytes()
    (tmp_path / "rec").mkdir()
    os.link(key, tmp_path / "rec" / ".table.lock")
    with pytest.raises(RecordingError, match=r"\.table\.lock has 2 names"):
        RecordingDirectory(tmp_path / "rec")
    assert_key_intact(key, before)


def test_an_alarm_log_linked_to_the_key_is_refused_and_the_alarm_kept(tmp_path: Path,
                                                                     key: Path) -> None:
    before = key.read_bytes()
    files = RecordingDirectory(tmp_path / "rec")
    try:
        alarms = link(tmp_path / "rec" / "alarms.jsonl", key)
        alarm = Alarm(1, AlarmKind.SHOE_LINK_DOWN, "shoe link down", None, 1.0)
        with pytest.raises(RecordingError, match=f"{alarms} is a symbolic link"):
            files.write_alarm(alarm)
        assert_key_intact(key, before)
        alarms.unlink()  # the technician removes the link: the alarm kept reaches the disk
        files.write_alarm(Alarm(2, AlarmKind.SHOE_LINK_DOWN, "again", None, 2.0))
        assert len(alarms.read_text().splitlines()) == 2
    finally:
        files.close()


def test_a_fifo_where_the_alarm_log_goes_is_refused_without_hanging(tmp_path: Path) -> None:
    files = RecordingDirectory(tmp_path / "rec")
    os.mkfifo(tmp_path / "rec" / "alarms.jsonl")
    failed: list[BaseException] = []

    def write() -> None:
        try:
            files.write_alarm(Alarm(1, AlarmKind.SHOE_LINK_DOWN, "shoe link down", None, 1.0))
        except RecordingError as error:
            failed.append(error)

    writer = threading.Thread(target=write, daemon=True)
    writer.start()
    writer.join(10)
    files.close()
    assert not writer.is_alive(), "the table hung opening a FIFO"
    assert failed and "is not a plain file" in str(failed[0])


def _journal(directory: Path) -> None:
    TableJournal(directory / "table.journal", Checkpoint({"table": "T1"}, "T1-x")).close()


def _round_file(directory: Path) -> None:
    write_round_file(directory, RoundFile("T1-1", ('{"event": "x"}',)))


def _staff(directory: Path) -> None:
    StaffRegistry(directory.parent / "table.staff.json", CHEAP).add("D1", "dealer", "1234")


def _cursor(directory: Path) -> None:
    Cursor(directory / CURSOR_NAME).save("chain", 7)


def _frame(directory: Path) -> None:
    write_frame_file(directory, "frames/2026-12-04/T1/000001-000-key-ab.jpg", b"\xff\xd8frame")


#: (the temporary file each writes, relative to the recording folder; what writes it; the file
#: it then puts in place)
TEMPORARY: dict[str, tuple[str, Callable[[Path], None], str]] = {
    "journal": ("table.journal.new", _journal, "table.journal"),
    "round file": ("rounds/T1-1.jsonl.new", _round_file, "rounds/T1-1.jsonl"),
    "staff registry": ("../table.staff.json.new", _staff, "../table.staff.json"),
    "forwarding cursor": (CURSOR_NAME + ".new", _cursor, CURSOR_NAME),
    "frame": ("frames/2026-12-04/T1/000001-000-key-ab.jpg.part", _frame,
              "frames/2026-12-04/T1/000001-000-key-ab.jpg"),
}


@pytest.mark.parametrize("what", list(TEMPORARY))
def test_a_temporary_file_linked_to_the_key_is_made_anew(tmp_path: Path, key: Path,
                                                          what: str) -> None:
    """The link left at the temporary name is removed (not followed); the file is written and
    put in place; the key is as it was."""
    aside, write, final = TEMPORARY[what]
    directory = tmp_path / "rec"
    directory.mkdir()
    before = key.read_bytes()
    planted = link((directory / aside).resolve(), key)
    write(directory)
    assert_key_intact(key, before)
    assert not planted.is_symlink() and not planted.exists()
    written = (directory / final).resolve()
    assert written.is_file() and not written.is_symlink()
    assert written.read_bytes() != before


def test_an_anchor_log_linked_to_the_key_is_refused(tmp_path: Path, key: Path) -> None:
    before = key.read_bytes()
    log = AnchorLog(link(tmp_path / "anchors.jsonl", key))
    anchor = Anchor(line=1, at="2026-12-04T00:00:00Z", chain="c", recording="rec", table="T1",
                    seq=1, hash="0" * 64, signature=None, why="test")
    with pytest.raises(AnchorLogError, match="is a symbolic link"):
        log.append(anchor)
    assert_key_intact(key, before)


def test_a_public_key_file_linked_elsewhere_is_refused(tmp_path: Path, key: Path) -> None:
    """A link to the key is refused (as a key file that is no public key file); a link to
    where nothing is yet is refused too, and nothing is made there."""
    before = key.read_bytes()
    with pytest.raises(KeyFileError):
        add_public_key(link(tmp_path / "T1.pub", key), Signer.generate().public)
    assert_key_intact(key, before)
    elsewhere = tmp_path / "elsewhere" / "made-by-the-table"
    elsewhere.parent.mkdir()
    with pytest.raises(OSError, match="is a symbolic link"):
        add_public_key(link(tmp_path / "T2.pub", elsewhere), Signer.generate().public)
    assert not elsewhere.exists()


def test_open_plain_refuses_a_link_a_folder_and_a_second_name(tmp_path: Path) -> None:
    from dealer_assist.durable import NotPlainFileError, create_new, open_plain

    target = tmp_path / "target"
    target.write_bytes(b"kept")
    link(tmp_path / "link", target)
    (tmp_path / "folder").mkdir()
    os.link(target, tmp_path / "second")
    for name, why in (("link", "is a symbolic link"), ("second", "has 2 names")):
        with pytest.raises(NotPlainFileError, match=f"{tmp_path / name} {why}"):
            os.close(open_plain(tmp_path / name, os.O_WRONLY | os.O_APPEND | os.O_CREAT))
    with pytest.raises(IsADirectoryError):
        os.close(open_plain(tmp_path / "folder", os.O_WRONLY | os.O_APPEND | os.O_CREAT))
    with pytest.raises(NotPlainFileError, match="is not a plain file"):
        os.close(create_new(tmp_path / "folder"))
    assert target.read_bytes() == b"kept"
    started = time.monotonic()
    os.mkfifo(tmp_path / "fifo")
    with pytest.raises(NotPlainFileError, match="is not a plain file"):
        os.close(open_plain(tmp_path / "fifo", os.O_WRONLY))
    assert time.monotonic() - started < 5
