"""``table --check``'s trial of what the table's start does, each step done for real and undone.

The configuration's own checks look at paths; these act, where a path's permissions say too
little (a folder under /proc, a read-only filesystem, a lock another table holds, a name no
resolver knows, a port in use): the recording directory is made where it is missing and opened
as the table opens it (``rounds/`` and ``void/`` made, ``.table.lock`` taken), a file written,
synced and removed in each of its folders, and its journal read; the recording store's signing
key is read and its public key file and anchor log opened for appending; the
screen's host is resolved and its port bound and released as the screen binds them. What the
trial made is removed again. Each step is one :class:`Trial`, named by its configuration key.
"""

from __future__ import annotations

import os
import socket
import sys
from collections.abc import Callable
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path

from dealer_assist.durable import open_plain
from dealer_assist.table.config import TableConfig
from dealer_assist.table.journal import JOURNAL_NAME, read_journal
from dealer_assist.table.recording import RecordingDirectory, RecordingError

PROBE_NAME = ".dealer-assist-check"
"""The file written and removed in each recording folder (with the process id after it)."""


@dataclass(frozen=True, slots=True)
class Trial:
    """One step of the start tried: the configuration key it is about, whether it passed, and
    what was found."""

    key: str
    passed: bool
    text: str


def check_start(config: TableConfig) -> bool:
    """Try ``config``'s start; print a line per step (a pass to stdout; a failure to stderr,
    naming the file and the key as a configuration error does). True if every step passed."""
    trials = try_recording(config.recording_dir)
    # the store's records are signed and anchored
    trials += try_evidence(config.key, config.key.with_suffix(".pub"), config.anchor_log)
    trials += try_screen(config.host, config.port)
    for trial in trials:
        if trial.passed:
            print(f"checked {trial.key}: {trial.text}")
        else:
            print(f"dealer-assist table: {config.path}: {trial.key}: {trial.text}",
                  file=sys.stderr)
    return all(trial.passed for trial in trials)


def try_recording(directory: Path) -> list[Trial]:
    """The recording directory made where missing, opened and locked as the table opens it,
    written in, and its journal read. What the trial made is removed again (the lock file while
    it is still held); what it cannot remove (a folder something else wrote in meanwhile) is
    left."""
    key = "recording.dir"
    missing = [folder for folder in (directory, *directory.parents) if not folder.exists()]
    made = [path for path in (directory / "rounds", directory / "void", directory / ".table.lock")
            if not path.exists()]
    recorder: RecordingDirectory | None = None
    step = ""
    try:
        for folder in reversed(missing):
            step = f"cannot make the folder {folder}"
            folder.mkdir()
        recorder = RecordingDirectory(directory)
        for folder in (directory, directory / "rounds", directory / "void"):
            step = f"cannot write a file in {folder}"
            _write_and_remove(folder)
        journal = _try_journal(directory)
    except RecordingError as error:
        return [Trial(key, False, str(error))]
    except OSError as error:
        return [Trial(key, False, f"{step}: {error.strerror or error}")]
    finally:
        for path in [*made, *missing]:
            with suppress(OSError):
                if path.is_dir():
                    path.rmdir()
                else:
                    path.unlink()
        if recorder is not None:
            recorder.close()
    return [Trial(key, True, f"{directory}: opened as the table opens it, a file written in it, "
                  "rounds/ and void/, and what the check made removed again"),
            Trial(key, True, f"{directory / '.table.lock'}: taken and released (no other table "
                  "records here)"), journal]


def _write_and_remove(folder: Path) -> None:
    """Write a file in ``folder``, sync it and remove it; raises OSError naming it."""
    probe = folder / f"{PROBE_NAME}-{os.getpid()}"
    handle = os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        os.write(handle, b"dealer-assist table --check\n")
        os.fsync(handle)
    finally:
        os.close(handle)
        probe.unlink()


def _try_journal(directory: Path) -> Trial:
    """The journal, where there is one, read as the start reads it, and open for appending."""
    path = directory / JOURNAL_NAME
    if not path.exists():
        return Trial("recording.dir", True, f"{path}: none yet, the table starts a new one")
    try:
        contents = read_journal(path)
        os.close(open_plain(path, os.O_WRONLY | os.O_APPEND))
    except OSError as error:
        return Trial("recording.dir", False, f"the table's journal {path}: "
                     f"{error.strerror or error}")
    except ValueError as error:  # CodecError: its checkpoint unreadable
        return Trial("recording.dir", False, f"the table's journal: {error} (move it aside to "
                     "start without it; the round in it is then lost)")
    damage = "; ".join(contents.warnings)
    return Trial("recording.dir", True, f"{path}: {len(contents.entries)} record(s) after its "
                 f"checkpoint, replayed at start{': ' + damage if damage else ''}")


def try_evidence(key: Path, public_key: Path, anchor_log: Path) -> list[Trial]:
    """The store's signing key read where it exists; the public key file and the anchor log
    opened for appending where they exist; where one is missing, its folder made where missing
    and written in, as the start's creating it needs (then removed again)."""
    from dealer_assist.surveillance.signing import load_signer

    def append(path: Path) -> None:
        os.close(open_plain(path, os.O_WRONLY | os.O_APPEND))

    return [_try_file("recording.key", key, load_signer, "read"),
            _try_file("recording.key", public_key, append, "can be appended to"),
            _try_file("recording.anchor_log", anchor_log, append, "can be appended to")]


def _try_file(key: str, path: Path, use: Callable[[Path], object], done: str) -> Trial:
    """``use(path)`` where the file exists, else its folder tried as its creation needs."""
    if not path.exists():
        try:
            _try_folder(path.parent)
        except OSError as error:
            return Trial(key, False, f"{path} cannot be created, its folder {path.parent}: "
                         f"{error.strerror or error}")
        return Trial(key, True, f"{path}: none yet, its folder written in")
    try:
        use(path)
    except OSError as error:
        return Trial(key, False, f"{path}: {error.strerror or error}")
    except ValueError as error:  # KeyFileError: unreadable, not a key, readable by others
        return Trial(key, False, str(error))
    return Trial(key, True, f"{path}: {done}")


def _try_folder(folder: Path) -> None:
    """Make ``folder`` where missing, write a file in it and remove what was made; raises
    OSError naming the path."""
    missing = [path for path in (folder, *folder.parents) if not path.exists()]
    try:
        for path in reversed(missing):
            path.mkdir()
        _write_and_remove(folder)
    finally:
        for path in missing:
            with suppress(OSError):
                path.rmdir()


def try_screen(host: str, port: int) -> list[Trial]:
    """The screen's host resolved and its port bound, as the screen binds them, and released."""
    try:
        found = socket.getaddrinfo(host or None, port, type=socket.SOCK_STREAM,
                                   flags=socket.AI_PASSIVE)
    except (OSError, ValueError) as error:  # ValueError: a name IDNA cannot encode
        return [Trial("screen.host", False, f"{host!r} does not resolve: {error}")]
    family, address = found[0][0], found[0][4][0]
    resolved = Trial("screen.host", True, f"{host} resolves to {address}")
    try:
        with socket.create_server((host, port), family=family) as listening:
            bound = listening.getsockname()[1]
    except OSError as error:
        return [resolved, Trial("screen.port", False, f"the screen cannot listen on {address} "
                                f"port {port}: {error.strerror or error}")]
    free = f"port {port} free" if port else f"port 0: any free port ({bound} this time)"
    return [resolved, Trial("screen.port", True, f"{free}: bound on {address} and released")]
