"""Recording a table's rounds and alarms: a table's recording directory.

``<dir>/rounds/<round-id>.jsonl`` holds exactly what ``dealer-assist settle`` reads;
``<dir>/void/<round-id>.jsonl`` holds voided rounds (with a ``.reason.txt`` beside each);
``<dir>/alarms.jsonl`` holds every alarm, one JSON object a line. Files are flushed and fsync'd
as each round ends; the round in play is in the table's journal (:mod:`.journal`). A round file
is never overwritten, and one table at a time records into a directory (``<dir>/.table.lock``).
With the surveillance store on, its database (``index.sqlite``) lies at the top of ``<dir>``
too, so ``dealer-assist replay <dir>`` and ``dealer-assist surveillance serve <dir>`` open it
directly. :func:`open_recording` lays it out for the table and the demo alike. The store's
records are signed with the table's key and its chain heads anchored (:class:`EvidenceFiles`:
the key, its public key file and the anchor log, all outside ``<dir>``).
"""

from __future__ import annotations

import fcntl
import json
import logging
import os
import queue
import sqlite3
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from dealer_assist.durable import fsync_dir
from dealer_assist.logs import describe, guarded
from dealer_assist.rules import Settlement
from dealer_assist.table.alarms import Alarm
from dealer_assist.table.camera_source import Snapshot
from dealer_assist.table.loop import ERRORS_KEPT

if TYPE_CHECKING:
    from dealer_assist.surveillance.signed_chain import Evidence

logger = logging.getLogger(__name__)


class RecordingError(ValueError):
    """The recording directory cannot be used (names the path and why)."""


class StoreOpenError(RecordingError):
    """The surveillance store in the recording directory cannot be opened (names it and why)."""


def _write_synced(path: Path, text: str, mode: str) -> None:
    """Write ``text`` and fsync it; the folder is made again if it was removed. Mode ``"x"``
    never overwrites: a file already there is kept and ``name~2`` (``~3``...) written instead."""
    path.parent.mkdir(parents=True, exist_ok=True)
    target, copy = path, 1
    while True:
        try:
            handle = open(target, mode, encoding="utf-8", errors="backslashreplace")
        except FileExistsError:
            copy += 1
            target = path.with_name(f"{path.stem}~{copy}{path.suffix}")
            continue
        with handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        if mode == "x":  # the new file's name is durable too: the journal lets the round go
            fsync_dir(target.parent)
        return


@dataclass(frozen=True, slots=True)
class EvidenceFiles:
    """Where a table keeps what makes its store's records evidence, outside the recording
    directory: its private key (created at first start, mode 0600), the public key file for
    surveillance (``.pub`` beside the key) and the anchor log; ``new_chain`` is the
    technician's reason to begin a chain where one was (None: refused)."""

    key: Path
    anchor_log: Path
    new_chain: str | None = None

    @property
    def public_key(self) -> Path:
        return self.key.with_suffix(".pub")

    @classmethod
    def beside(cls, directory: Path) -> EvidenceFiles:
        """A folder ``<directory>.evidence`` beside the recording (the demo's)."""
        folder = directory.with_name(directory.name + ".evidence")
        return cls(folder / "table.key", folder / "anchors.jsonl")

    def open(self, directory: Path) -> Evidence:
        """The store's :class:`~dealer_assist.surveillance.signed_chain.Evidence` (the key made
        at first start); RecordingError when a file lies in ``directory``."""
        from dealer_assist.surveillance.anchors import AnchorLog
        from dealer_assist.surveillance.signed_chain import Evidence
        from dealer_assist.surveillance.signing import open_table_key

        for path in (self.key, self.public_key, self.anchor_log):
            if path.resolve().is_relative_to(directory.resolve()):
                raise RecordingError(f"{path} lies in the recording directory {directory}: "
                                     "keys and anchors must be kept outside it")
        return Evidence(open_table_key(self.key, self.public_key), AnchorLog(self.anchor_log),
                        self.new_chain)


class FileRecorder:
    """Writes finished rounds, voided rounds and alarms under ``directory``, which it holds for
    itself until :meth:`close` (another table given the same directory is refused).

    A write that fails (a full disk, the folder unmounted) raises, naming the file, and is kept:
    every later write tries it again first, so the round reaches the disk once it can."""

    def __init__(self, directory: str | os.PathLike[str],
                 clock: Callable[[], datetime] = lambda: datetime.now(UTC)):
        self.directory = Path(directory)
        self._clock = clock
        try:
            for sub in ("rounds", "void"):
                (self.directory / sub).mkdir(parents=True, exist_ok=True)
            self._lock = open(self.directory / ".table.lock", "a+", encoding="utf-8")
        except (OSError, ValueError) as error:
            raise RecordingError(f"recording directory {self.directory}: {error}") from None
        try:
            fcntl.flock(self._lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            self._lock.seek(0)
            holder = self._lock.read().strip() or "another process"
            self._lock.close()
            raise RecordingError(
                f"recording directory {self.directory} is in use by another table ({holder}):"
                " give each table its own") from None
        self._lock.truncate(0)
        self._lock.write(f"pid {os.getpid()}\n")
        self._lock.flush()
        self._unwritten: list[tuple[Path, str, str]] = []

    def close(self) -> None:
        """Let another table record here."""
        self._lock.close()

    def write_round(self, round_id: str, lines: list[str], settlement: Settlement) -> None:
        logger.info("round %s settled: players' net %s, %d seat(s)", round_id, settlement.net,
                    len(settlement.seats))
        self._write(self.directory / "rounds" / f"{round_id}.jsonl", "\n".join(lines) + "\n", "x")

    def write_void(self, round_id: str, lines: list[str], reason: str) -> None:
        logger.warning("round %s voided: %s", round_id, reason)
        self._write(self.directory / "void" / f"{round_id}.jsonl", "\n".join(lines) + "\n", "x")
        self._write(self.directory / "void" / f"{round_id}.reason.txt", reason + "\n", "x")

    def write_alarm(self, alarm: Alarm) -> None:
        """One line of ``alarms.jsonl``: the alarm, and the wall-clock time it was written (UTC;
        the alarm's own ``at`` is the table's monotonic clock, which no video or shift log
        shares)."""
        logger.info("alarm %d (%s)%s: %s", alarm.id, alarm.kind.value,
                       f" in round {alarm.round_id}" if alarm.round_id else "", alarm.text)
        line = {**alarm.to_json(), "recorded_at": self._clock().isoformat(timespec="milliseconds")}
        self._write(self.directory / "alarms.jsonl", json.dumps(line) + "\n", "a")

    def _write(self, path: Path, text: str, mode: str) -> None:
        self._unwritten.append((path, text, mode))
        while self._unwritten:
            path, text, mode = self._unwritten[0]
            try:
                _write_synced(path, text, mode)
            except OSError as error:
                logger.error("cannot write %s: %s (%d write(s) kept to try again)", path,
                             error.strerror or error, len(self._unwritten))
                raise RecordingError(
                    f"round-log file {path}: {error.strerror or error} ({len(self._unwritten)}"
                    " write(s) kept to try again)") from None
            self._unwritten.pop(0)


class MemoryRecorder:
    """Keeps what would be recorded in lists (benchmarks, and a table run without a directory)."""

    def __init__(self) -> None:
        self.rounds: list[tuple[str, list[str], Settlement]] = []
        self.voids: list[tuple[str, list[str], str]] = []
        self.alarms: list[Alarm] = []

    def write_round(self, round_id: str, lines: list[str], settlement: Settlement) -> None:
        self.rounds.append((round_id, lines, settlement))

    def write_void(self, round_id: str, lines: list[str], reason: str) -> None:
        self.voids.append((round_id, lines, reason))

    def write_alarm(self, alarm: Alarm) -> None:
        self.alarms.append(alarm)


class _Writes(Protocol):
    def write_round(self, round_id: str, lines: list[str], settlement: Settlement) -> None: ...

    def write_void(self, round_id: str, lines: list[str], reason: str) -> None: ...

    def write_alarm(self, alarm: Alarm) -> None: ...


#: Rounds whose questions' frames the store holds until the round is recorded.
FRAME_ROUNDS_KEPT = 8


class SurveillanceRecorder:
    """Rounds and alarms into the surveillance store (``dealer_assist.surveillance.Recorder``:
    hash-chained SQLite, replayable with ``dealer-assist replay``), written from its own thread
    because each record is fsync'd (about 10 ms). A voided round is left open there, so the store
    marks it partial, with a ``void`` alarm saying why.

    A write that fails (the store read-only, locked by another program, its disk full) is kept in
    ``errors`` (the latest ``ERRORS_KEPT``) and the thread goes on with the next; the first
    failure after a write that worked is handed to ``on_failure`` (the table raises an alarm with
    it), so a store that keeps failing raises one alarm, not one per record. A store found
    damaged when it is opened is not written to at all: that is one such failure. The file
    recording still has every round."""

    def __init__(self, directory: str | os.PathLike[str], table_id: str,
                 evidence: EvidenceFiles | None = None):
        self.directory = Path(directory)
        self.evidence = evidence
        self.errors: list[str] = []
        self._on_failure: Callable[[str], None] | None = None
        self._unreported: str | None = None  # a failure found before on_failure was set
        self._report_lock = threading.Lock()
        self._failing = False
        self._queue: queue.Queue[tuple[str, Any] | None] = queue.Queue()
        self._frames: dict[str, list[tuple[str, Snapshot, datetime]]] = {}  # by round
        self._opened = threading.Event()
        self._open_error: str | None = None
        self._thread = threading.Thread(
            target=guarded(lambda: self._run(table_id), "the surveillance recorder",
                           self._died, logger),
            name="surveillance-recorder", daemon=True,
        )
        self._thread.start()
        self._opened.wait(30)
        if self._open_error is not None:
            raise StoreOpenError(f"surveillance store {self.directory}: {self._open_error}")

    @property
    def on_failure(self) -> Callable[[str], None] | None:
        """Called with the first failure of a run; one found before it is set (a store found
        damaged as it opened) is handed to it when it is set."""
        return self._on_failure

    @on_failure.setter
    def on_failure(self, report: Callable[[str], None] | None) -> None:
        with self._report_lock:
            self._on_failure, unreported, self._unreported = report, self._unreported, None
        if report is not None and unreported is not None:
            report(unreported)

    def write_round(self, round_id: str, lines: list[str], settlement: Settlement) -> None:
        self._queue.put(("round", (round_id, lines, settlement)))

    def write_void(self, round_id: str, lines: list[str], reason: str) -> None:
        self._queue.put(("void", (round_id, lines, reason)))

    def keep_question_frame(self, round_id: str, question: str, snapshot: Snapshot) -> None:
        """The camera's frame when ``question`` was asked in ``round_id``: written as a key
        frame of the round, tied to the question's event, when the round is recorded (encoded
        on the store's thread). Frames of the latest ``FRAME_ROUNDS_KEPT`` rounds are held."""
        # the grab's UTC time by the table's clock (the snapshot keeps the monotonic one)
        grabbed = datetime.now(UTC) - timedelta(seconds=time.monotonic() - snapshot.grabbed_at)
        self._queue.put(("frame", (round_id, question, snapshot, grabbed)))

    def write_alarm(self, alarm: Alarm) -> None:
        """The alarm with the round in play when it was raised and the UTC time it was handed
        over (the store writes it later, from its thread)."""
        self._queue.put(("alarm", (alarm.kind.name.lower(), alarm.text, alarm.round_id,
                                   datetime.now(UTC))))

    def write_round_if_missing(self, round_id: str, lines: list[str],
                               settlement: Settlement) -> None:
        """Write a settled round unless the store already holds it settled (a table restarted
        after a crash re-records what its journal still holds; a copy cut short by the crash
        stays there, marked partial)."""
        self._queue.put(("repair", (round_id, lines, settlement)))

    @property
    def idle(self) -> bool:
        """Everything handed over has been written (or has failed)."""
        return self._queue.unfinished_tasks == 0

    def close(self) -> None:
        """Write what is queued, then close the store."""
        self._queue.put(None)
        self._thread.join(30)

    def _run(self, table_id: str) -> None:
        from dealer_assist.surveillance import DamagedRecordingError, Recorder

        recorder: Recorder | None = None
        try:
            recorder = Recorder.open(
                self.directory, table=table_id,
                evidence=None if self.evidence is None else self.evidence.open(self.directory))
        except DamagedRecordingError as error:
            self._failing = True
            self._keep(f"open: {error}")
            self._report(f"surveillance store damaged: {error} (the round-log files still record"
                         " every round)")
        except (OSError, ValueError, sqlite3.Error) as error:
            self._open_error = str(error) or type(error).__name__
            return
        except Exception as error:  # not the store's own failure: a bug, logged with its trace
            logger.exception("the surveillance store %s did not open", self.directory)
            self._open_error = describe(error)
            return
        finally:
            self._opened.set()
        try:
            while (item := self._queue.get()) is not None:
                try:
                    if recorder is None:
                        self._keep(f"{item[0]}: not written: the store is damaged")
                        continue
                    self._write(recorder, *item)
                except Exception as error:  # whatever the store raises, the next record is tried
                    if not self._failing:  # the first of a run with its trace; the rest counted
                        logger.exception("surveillance store %s: a %s record was not written",
                                         self.directory, item[0])
                    self._failed(f"{item[0]}: {type(error).__name__}: {error}")
                else:
                    self._failing = False
                finally:
                    self._queue.task_done()
        finally:
            try:
                if recorder is not None:
                    recorder.close()
            except (sqlite3.Error, ValueError) as error:  # ValueError: the anchor log's
                self._keep(f"close: {error}")

    def _write(self, recorder: Any, kind: str, payload: Any) -> None:
        if kind == "alarm":
            alarm_kind, text, round_id, raised = payload
            recorder.alarm(alarm_kind, text, round_id, happened=raised)
            return
        if kind == "frame":
            round_id, question, snapshot, grabbed = payload
            self._frames.setdefault(round_id, []).append((question, snapshot, grabbed))
            while len(self._frames) > FRAME_ROUNDS_KEPT:
                del self._frames[next(iter(self._frames))]
            return
        round_id, lines, last = payload
        if kind == "repair":
            from dealer_assist.surveillance.query import RoundQuery, search_rounds

            found, _ = search_rounds(recorder.store, RoundQuery(table=recorder.table,
                                                                round_id=round_id))
            if any(row["status"] == "settled" for row in found):
                return
            kind = "round"
        events = [json.loads(line) for line in lines]
        recorder.begin_round(events[0])
        for event in events[1:]:
            recorder.event(event)
        self._write_frames(recorder, events, self._frames.pop(round_id, []))
        if kind == "round":
            recorder.end_round(last)
        else:
            recorder.alarm("void", last)

    @staticmethod
    def _write_frames(recorder: Any, events: list[Any],
                      frames: list[tuple[str, Snapshot, datetime]]) -> None:
        """Each question's frame, tied to the first of the round's question events with its
        text not yet given one (none: a question withdrawn by a correction, tied to no event)."""
        asked = [index for index, event in enumerate(events) if event.get("type") == "question"]
        for question, snapshot, grabbed in frames:
            index = next((i for i in asked if events[i].get("text") == question), None)
            if index is not None:
                asked.remove(index)
            recorder.frame(snapshot.picture(), {"question": question}, index, key=True,
                           captured=grabbed)

    def _died(self, error: str) -> None:
        """The writing thread ended on an exception (logged): what is queued now is not written."""
        self._failing = True
        self._keep(f"the recorder thread stopped: {error}")
        self._report(f"surveillance store {self.directory}: the recorder stopped ({error}): "
                     "nothing more is written there (the round-log files still record every "
                     "round)")

    def _failed(self, error: str) -> None:
        self._keep(error)
        if not self._failing:
            self._report(f"surveillance store {self.directory}: {error} (the round-log files"
                         " still record every round)")
        self._failing = True

    def _keep(self, error: str) -> None:
        self.errors.append(error)
        del self.errors[:-ERRORS_KEPT]

    def _report(self, alarm: str) -> None:
        with self._report_lock:
            report = self._on_failure
            if report is None:
                self._unreported = alarm
                return
        report(alarm)


class TeeRecorder:
    """Hands everything to several recorders (the round-log files and the surveillance store).
    Each is given every write though another fails; the first failure is raised after."""

    def __init__(self, *recorders: _Writes):
        self.recorders = recorders

    def write_round(self, round_id: str, lines: list[str], settlement: Settlement) -> None:
        self._each(lambda recorder: recorder.write_round(round_id, lines, settlement))

    def write_void(self, round_id: str, lines: list[str], reason: str) -> None:
        self._each(lambda recorder: recorder.write_void(round_id, lines, reason))

    def write_alarm(self, alarm: Alarm) -> None:
        self._each(lambda recorder: recorder.write_alarm(alarm))

    def _each(self, write: Callable[[_Writes], None]) -> None:
        failure: Exception | None = None
        for recorder in self.recorders:
            try:
                write(recorder)
            except Exception as error:  # the next recorder still gets it; raised below
                failure = failure or error
        if failure is not None:
            raise failure


class TableRecording:
    """A table's recording directory, opened: the round-log files and, where on, the
    surveillance store at the top of the same directory. ``recorder`` is what the table loop
    writes to. Use :func:`open_recording`."""

    def __init__(self, files: FileRecorder, store: SurveillanceRecorder | None):
        self.files = files
        self.store = store
        self.recorder: _Writes = files if store is None else TeeRecorder(files, store)

    @property
    def directory(self) -> Path:
        return self.files.directory

    def close(self) -> None:
        """Write what the store has queued, close it, and let another table record here."""
        if self.store is not None:
            self.store.close()
        self.files.close()


def open_recording(directory: str | os.PathLike[str], table_id: str, *,
                   surveillance: bool, evidence: EvidenceFiles | None = None) -> TableRecording:
    """Open ``directory`` for ``table_id``: the round-log files first (which holds it against
    another table), then, with ``surveillance``, the store beside them, signed and anchored
    with ``evidence`` (None: unsigned). RecordingError names the directory or the store and
    why; nothing is left held when it is raised."""
    files = FileRecorder(directory)
    if not surveillance:
        return TableRecording(files, None)
    try:
        store = SurveillanceRecorder(files.directory, table_id, evidence)
    except RecordingError:
        files.close()
        raise
    old = files.directory / "surveillance" / "index.sqlite"
    if old.is_file():
        logger.warning("%s holds an earlier surveillance recording; this table records into %s:"
                       " replay the earlier one with 'dealer-assist replay %s'", old.parent,
                       files.directory, old.parent)
    return TableRecording(files, store)


def rotate_table_key(directory: Path, table_id: str, evidence: EvidenceFiles, why: str) -> str:
    """Replace the table's key: a new key is made, introduced in the store by a record the old
    key signs (anchored), added to the public key file, then put in the old key's place.
    Holds the directory against a table meanwhile; returns the new key's id."""
    from dealer_assist.surveillance import Recorder
    from dealer_assist.surveillance.signing import Signer, add_public_key

    files = FileRecorder(directory)
    try:
        recorder = Recorder.open(directory, table=table_id, evidence=evidence.open(directory))
        new = Signer.generate()
        pending = evidence.key.with_name(evidence.key.name + ".new")
        pending.unlink(missing_ok=True)
        new.save(pending)  # a crash after the record leaves the new key here to put in place
        try:
            recorder.rotate_key(new, why)
        finally:
            recorder.close()
        add_public_key(evidence.public_key, new.public)
        os.replace(pending, evidence.key)
        fsync_dir(evidence.key.parent)
    finally:
        files.close()
    logger.warning("table %s: key rotated to %s (%s)", table_id, new.public.key_id, why)
    return new.public.key_id
