"""``dealer-assist table --config FILE --check`` tries what the start does: a configuration whose
start would fail fails the check (exit 2), with a line naming the key and why, though its paths
and names look fit; a fit one passes and the check leaves nothing behind."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.table.test_table_cli import printed_screen, register_dealer, run_table, start_table

SHOE = '[shoe]\nurl = "socket://127.0.0.1:9"\n'


def write_config(folder: Path, recording: str = "rec", host: str = "127.0.0.1",
                 port: int = 0, signed: bool = False) -> Path:
    """A table's config; ``signed``: its store's key in ``keys/`` (else beside the config)."""
    evidence = 'key = "keys/T1.key"\n' if signed else ""
    # a host beyond loopback needs TLS or this acknowledgement (the config refuses it else)
    plain = "" if host == "127.0.0.1" else "plain_http_on_network = true\n"
    config = folder / "table.toml"
    config.write_text(f'{SHOE}[recording]\ndir = "{recording}"\n{evidence}'
                      f'[screen]\nhost = "{host}"\nport = {port}\n{plain}')
    return config


def assert_refused(config: Path, key: str, why: str) -> None:
    """The check fails naming ``key`` and ``why``; the start, with a dealer to sign in, fails
    too."""
    checked = run_table(config, "--check")
    assert checked.returncode == 2, checked.stdout + checked.stderr
    assert f"dealer-assist table: {config}: {key}: " in checked.stderr
    assert why in checked.stderr, checked.stderr
    assert "Traceback" not in checked.stderr
    register_dealer(config)  # so that the start goes as far as the step refused
    started = run_table(config)
    assert started.returncode != 0 and "Traceback" not in started.stderr
    assert "no dealer can sign in" not in started.stderr


def test_a_recording_dir_under_proc_fails_the_check(tmp_path: Path) -> None:
    """/proc looks writable to root; nothing can be made there."""
    config = write_config(tmp_path, recording="/proc/dealer-assist-recordings")
    assert_refused(config, "recording.dir", "/proc/dealer-assist-recordings")


def test_an_unresolvable_screen_host_fails_the_check(tmp_path: Path) -> None:
    config = write_config(tmp_path, host="no-such-host.invalid")
    assert_refused(config, "screen.host", "'no-such-host.invalid' does not resolve")


def test_a_screen_port_in_use_fails_the_check(tmp_path: Path) -> None:
    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
        config = write_config(tmp_path, port=port)
        assert_refused(config, "screen.port",
                       f"the screen cannot listen on 127.0.0.1 port {port}: Address already in use")


def test_a_recording_dir_another_table_records_into_fails_the_check(tmp_path: Path) -> None:
    running = start_table(write_config(tmp_path))
    try:
        printed_screen(running)
        checked = run_table(write_config(tmp_path), "--check")
    finally:
        running.terminate()
        running.wait(10)
    assert checked.returncode == 2
    assert (f"recording.dir: recording directory {tmp_path / 'rec'} is in use by another table "
            f"(pid {running.pid}): give each table its own") in checked.stderr


def test_a_journal_that_cannot_be_read_fails_the_check(tmp_path: Path) -> None:
    (tmp_path / "rec").mkdir()
    (tmp_path / "rec" / "table.journal").write_text("not a journal\n")
    config = write_config(tmp_path)
    assert_refused(config, "recording.dir", "the table's journal: ")


@pytest.fixture
def read_only_recording(tmp_path: Path) -> Iterator[Path]:
    """A recording folder its user cannot write in, though its rounds/ and void/ are writable:
    made read-only (mode 555), or immutable for root, who writes past any mode."""
    recording = tmp_path / "rec"
    for folder in (recording / "rounds", recording / "void"):
        folder.mkdir(parents=True)
    if os.geteuid():
        recording.chmod(0o555)
        yield recording
        recording.chmod(0o755)
        return
    immutable = subprocess.run(["chattr", "+i", str(recording)]) if shutil.which("chattr") else None
    if immutable is None or immutable.returncode:
        pytest.skip("root, and this filesystem cannot make a folder immutable")
    yield recording
    subprocess.run(["chattr", "-i", str(recording)], check=True)


def test_a_recording_dir_the_table_cannot_write_in_fails_the_check(
        tmp_path: Path, read_only_recording: Path) -> None:
    """The table's lock file cannot be made there."""
    config = write_config(tmp_path)
    assert_refused(config, "recording.dir",
                   f"recording directory {read_only_recording}: [Errno ")
    assert sorted(path.name for path in read_only_recording.iterdir()) == ["rounds", "void"]


def test_a_fit_configuration_passes_each_step_and_leaves_nothing(tmp_path: Path) -> None:
    config = write_config(tmp_path, recording="new/rec")
    checked = run_table(config, "--check")
    assert checked.returncode == 0, checked.stderr
    recording = tmp_path / "new" / "rec"
    assert f"checked recording.dir: {recording}: opened as the table opens it" in checked.stdout
    assert f"checked recording.dir: {recording / '.table.lock'}: taken and released" in \
        checked.stdout
    assert f"checked recording.dir: {recording / 'table.journal'}: none yet" in checked.stdout
    assert "checked screen.host: 127.0.0.1 resolves to 127.0.0.1" in checked.stdout
    assert "checked screen.port: port 0: any free port" in checked.stdout
    assert [path.name for path in tmp_path.iterdir()] == ["table.toml"]


def test_a_signing_key_others_may_read_fails_the_check(tmp_path: Path) -> None:
    """The start refuses a key readable by others; the check read no key before."""
    (tmp_path / "keys").mkdir()
    key = tmp_path / "keys" / "T1.key"
    key.write_text("-----BEGIN PRIVATE KEY-----\n")
    key.chmod(0o644)
    config = write_config(tmp_path, signed=True)
    assert_refused(config, "recording.key", f"{key} may be read or written by others (mode 0644)")


def test_an_anchor_log_that_cannot_be_appended_to_fails_the_check(tmp_path: Path) -> None:
    (tmp_path / "anchors.jsonl").mkdir()
    config = write_config(tmp_path, signed=True)
    assert_refused(config, "recording.anchor_log", f"{tmp_path / 'anchors.jsonl'}: Is a directory")


def test_a_fit_signed_table_checks_its_key_and_anchors_and_leaves_nothing(tmp_path: Path) -> None:
    config = write_config(tmp_path, signed=True)
    checked = run_table(config, "--check")
    assert checked.returncode == 0, checked.stderr
    for line in (f"checked recording.key: {tmp_path / 'keys' / 'T1.key'}: none yet",
                 f"checked recording.key: {tmp_path / 'keys' / 'T1.pub'}: none yet",
                 f"checked recording.anchor_log: {tmp_path / 'anchors.jsonl'}: none yet"):
        assert line in checked.stdout
    assert [path.name for path in tmp_path.iterdir()] == ["table.toml"]
