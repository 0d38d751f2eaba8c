"""``dealer-assist demo`` removes the temporary folders it made for itself (its recording, the
shoe's link) on every exit path: the rounds played, Ctrl-C, a service manager's SIGTERM, and a
start refused; a ``--record`` DIR is never removed. Each run is the real command in its own
process with a private TMPDIR."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def demo(tmp: Path, *args: str, sigint_ignored: bool = False) -> subprocess.Popen[str]:
    """The demo (shoe only: no camera to load) with ``tmp`` as its temporary folder;
    ``sigint_ignored``: started with SIGINT ignored, as a shell starts a background job."""
    return subprocess.Popen(
        [sys.executable, "-m", "dealer_assist", "demo", "--camera", "off", *args],
        cwd=ROOT, env={**os.environ, "TMPDIR": str(tmp)}, text=True,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        preexec_fn=lambda: signal.signal(
            signal.SIGINT, signal.SIG_IGN if sigint_ignored else signal.SIG_DFL))


def dealing(process: subprocess.Popen[str]) -> Path:
    """Read the demo's output until it has played a round; where it says it records."""
    recording = None
    for line in process.stdout:  # type: ignore[union-attr]
        if line.startswith("recording to: "):
            recording = Path(line.removeprefix("recording to: ").split(" (")[0])
        if line.startswith("questions: "):  # the report that ends a settled round
            assert recording is not None
            return recording
    raise AssertionError(process.stderr.read())  # type: ignore[union-attr]


@pytest.fixture
def tmp(tmp_path: Path) -> Path:
    folder = tmp_path / "tmp"
    folder.mkdir()
    return folder


def test_rounds_played_leave_no_temporary_folder(tmp: Path) -> None:
    process = demo(tmp, "--headless", "--rounds", "2")
    recording = dealing(process)
    assert tmp in recording.parents and (recording / "index.sqlite").is_file()
    assert process.wait(60) == 0, process.stderr.read()  # type: ignore[union-attr]
    assert list(tmp.iterdir()) == []


@pytest.mark.parametrize(("stopping", "status", "background"), [
    (signal.SIGINT, 130, False),
    # Python leaves an inherited "ignore SIGINT" as it is: the command must restore Ctrl-C
    (signal.SIGINT, 130, True),
    (signal.SIGTERM, 143, False),
], ids=["Ctrl-C", "Ctrl-C, started as a background job", "SIGTERM"])
def test_a_demo_stopped_mid_game_leaves_no_temporary_folder(
        tmp: Path, stopping: signal.Signals, status: int, background: bool) -> None:
    process = demo(tmp, "--port", "0", "--pace", "0.05",  # deals until stopped
                   sigint_ignored=background)
    try:
        dealing(process)
        assert any(tmp.iterdir())  # its own, while it plays
        process.send_signal(stopping)
        assert process.wait(30) == status, process.stderr.read()  # type: ignore[union-attr]
    finally:
        process.kill()
    assert list(tmp.iterdir()) == []


def test_a_start_refused_leaves_no_temporary_folder(tmp: Path, tmp_path: Path) -> None:
    """The screen's port in use (refused as the table starts), and a --record that is a file
    (refused as the recording opens, after the shoe's link is made)."""
    with socket.create_server(("127.0.0.1", 0)) as taken:
        process = demo(tmp, "--headless", "--port", str(taken.getsockname()[1]))
        _, err = process.communicate(timeout=60)
    assert process.returncode == 1 and "Address already in use" in err, err
    assert list(tmp.iterdir()) == []
    (tmp_path / "a-file").write_text("")
    process = demo(tmp, "--headless", "--record", str(tmp_path / "a-file"))
    _, err = process.communicate(timeout=60)
    assert process.returncode == 2 and err.startswith("dealer-assist demo: --record: "), err
    assert list(tmp.iterdir()) == []


def test_a_record_dir_is_kept_on_every_exit(tmp: Path, tmp_path: Path) -> None:
    kept = tmp_path / "kept"
    process = demo(tmp, "--headless", "--rounds", "1", "--record", str(kept))
    assert dealing(process) == kept
    assert process.wait(60) == 0
    process = demo(tmp, "--port", "0", "--pace", "0.05", "--record", str(kept))
    try:
        dealing(process)
        process.send_signal(signal.SIGTERM)
        assert process.wait(30) == 143
    finally:
        process.kill()
    assert len(list((kept / "rounds").iterdir())) >= 2 and (kept / "index.sqlite").is_file()
    assert list(tmp.iterdir()) == []
