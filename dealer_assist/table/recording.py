"""Recording a table's rounds and alarms: a table's recording directory.

The recording store (the signed SQLite database ``<dir>/index.sqlite``, signed with the table's
key) is always on: each round is written there as it is played (:class:`StoreRecorder`). From it
the round-log files are exported as each round ends: ``<dir>/rounds/<round-id>.jsonl`` holds
exactly what ``dealer-assist settle`` reads, ``<dir>/void/<round-id>.jsonl`` a voided round (with
a ``.reason.txt`` beside it); ``dealer-assist replay <dir> --export-rounds OUT`` writes them
again. ``<dir>/alarms.jsonl`` holds every alarm, one JSON object a line. Every input is first in
the table's journal (:mod:`.journal`), which a restart replays into the store. One table at a
time records into a directory (``<dir>/.table.lock``). ``dealer-assist replay <dir>`` and
``dealer-assist surveillance serve <dir>`` open it directly. :func:`open_recording` lays it out
for the table and the demo alike. The store's chain heads are anchored (:class:`EvidenceFiles`:
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
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from dealer_assist.durable import open_plain
from dealer_assist.logs import describe, guarded
from dealer_assist.rules import Settlement
from dealer_assist.table.alarms import Alarm
from dealer_assist.table.camera_source import Snapshot
from dealer_assist.table.loop import ERRORS_KEPT
from dealer_assist.table.screen_view import settlement_view

if TYPE_CHECKING:
    from dealer_assist.surveillance.replay import RoundData
    from dealer_assist.surveillance.signed_chain import Evidence

logger = logging.getLogger(__name__)


class RecordingError(ValueError):
    """The recording directory cannot be used (names the path and why)."""


class StoreOpenError(RecordingError):
    """The recording store in the recording directory cannot be opened (names it and why)."""


def _append_synced(path: Path, text: str) -> None:
    """Append ``text`` and fsync it; the folder is made again if it was removed."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = open_plain(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT)  # never through a link
    with os.fdopen(fd, "a", encoding="utf-8", errors="backslashreplace") as handle:
        handle.write(text)
        handle.flush()
        os.fsync(handle.fileno())


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


@dataclass(frozen=True, slots=True)
class RecordedUpTo:
    """How far a table's recording had got, everything handed to it before written: the store's
    last record (its number and hash) and the length of ``alarms.jsonl`` in bytes."""

    store_seq: int
    store_hash: str
    alarm_file: int

    def to_json(self) -> list[Any]:
        return [self.store_seq, self.store_hash, self.alarm_file]

    @classmethod
    def from_json(cls, raw: Any) -> RecordedUpTo:
        """ValueError for anything but ``[number, hash, length]``."""
        if not (isinstance(raw, list) and len(raw) == 3 and isinstance(raw[1], str)
                and all(type(n) is int and 0 <= n < 2**63 for n in (raw[0], raw[2]))):
            raise ValueError(f"not [store record, its hash, alarm file length]: {str(raw)[:80]}")
        return cls(raw[0], raw[1], raw[2])


class AlarmKey(NamedTuple):
    """What an alarm the table raised, its line in ``alarms.jsonl`` and its record in the store
    hold alike: its kind (the lower-case name), words and round."""

    kind: str | None
    text: str | None
    round_id: str | None

    @classmethod
    def of_alarm(cls, alarm: Alarm) -> AlarmKey:
        return cls(alarm.kind.name.lower(), alarm.text, alarm.round_id)

    @classmethod
    def of_record(cls, body: dict[str, Any]) -> AlarmKey:
        """From an alarm record's body (a value that is not a string is taken as None)."""
        kind, text, round_id = (body.get(name) for name in ("kind", "text", "round"))
        return cls(*(value if isinstance(value, str) else None for value in (kind, text, round_id)))


@dataclass(frozen=True, slots=True)
class AlarmLine:
    """An alarm as ``alarms.jsonl`` holds it: what the store records of it, and when the live
    table wrote it there."""

    kind: str
    text: str
    round_id: str | None
    recorded_at: datetime

    @property
    def key(self) -> AlarmKey:
        return AlarmKey(self.kind, self.text, self.round_id)


class RecordingDirectory:
    """Holds ``directory`` for one table until :meth:`close` (another table given the same
    directory is refused) and appends its alarms to ``alarms.jsonl``. The round-log files are
    not written here: the store exports them (:mod:`dealer_assist.surveillance.export`).

    An alarm write that fails (a full disk, the folder unmounted) raises, naming the file, and
    is kept: every later write tries it again first, so it reaches the disk once it can."""

    def __init__(self, directory: str | os.PathLike[str],
                 clock: Callable[[], datetime] = lambda: datetime.now(UTC)):
        self.directory = Path(directory)
        self._clock = clock
        try:
            for sub in ("rounds", "void"):
                (self.directory / sub).mkdir(parents=True, exist_ok=True)
            lock = open_plain(self.directory / ".table.lock", os.O_RDWR | os.O_CREAT)
            self._lock = os.fdopen(lock, "r+", encoding="utf-8")  # truncated below: its own file
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
        self._unwritten: list[str] = []

    def close(self) -> None:
        """Let another table record here."""
        self._lock.close()

    def write_alarm(self, alarm: Alarm) -> None:
        """One line of ``alarms.jsonl``: the alarm, and the wall-clock time it was written (UTC;
        the alarm's own ``at`` is the table's monotonic clock, which no video or shift log
        shares)."""
        logger.info("alarm %d (%s)%s: %s", alarm.id, alarm.kind.value,
                    f" in round {alarm.round_id}" if alarm.round_id else "", alarm.text)
        line = {**alarm.to_json(), "recorded_at": self._clock().isoformat(timespec="milliseconds")}
        self._unwritten.append(json.dumps(line) + "\n")
        try:
            self._write_unwritten()
        except OSError as error:
            path = self.directory / "alarms.jsonl"
            logger.error("cannot write %s: %s (%d alarm(s) kept to try again)", path,
                         error.strerror or error, len(self._unwritten))
            raise RecordingError(
                f"alarm file {path}: {error.strerror or error} ({len(self._unwritten)}"
                " alarm(s) kept to try again)") from None

    @property
    def kept(self) -> int:
        """Alarms kept to try again (their write failed)."""
        return len(self._unwritten)

    def write_kept(self) -> None:
        """Try again to write the alarms kept (a failure stays logged by the next alarm)."""
        if not self._unwritten:
            return
        kept = len(self._unwritten)
        try:
            self._write_unwritten()
        except OSError:
            return
        logger.info("%d alarm(s) kept are written to %s", kept, self.directory / "alarms.jsonl")

    def _write_unwritten(self) -> None:
        """Append the lines not yet written, then forget them; OSError keeps them."""
        _append_synced(self.directory / "alarms.jsonl", "".join(self._unwritten))
        self._unwritten.clear()

    def alarm_file_length(self) -> int | None:
        """The length of ``alarms.jsonl`` in bytes, every alarm handed over in it (None: some
        are kept to try again, or it cannot be read)."""
        if self._unwritten:
            return None
        try:
            return (self.directory / "alarms.jsonl").stat().st_size
        except FileNotFoundError:
            return 0
        except OSError:
            return None

    def alarms_after(self, length: int) -> list[AlarmLine]:
        """The alarms written to ``alarms.jsonl`` past its first ``length`` bytes; a line that
        is no alarm is left out (logged), and a file shorter than that (replaced) gives none."""
        path = self.directory / "alarms.jsonl"
        try:
            fd = open_plain(path, os.O_RDONLY)
        except FileNotFoundError:
            return []
        except OSError as error:
            logger.warning("cannot read %s: %s", path, error.strerror or error)
            return []
        with os.fdopen(fd, "rb") as handle:
            if os.fstat(handle.fileno()).st_size < length:
                logger.warning("%s is shorter than at the journal's checkpoint: not read", path)
                return []
            handle.seek(length)
            text = handle.read().decode("utf-8", "replace")
        lines = []
        for number, line in enumerate(text.splitlines(), 1):
            try:
                raw = json.loads(line)
                round_id = raw["round"]
                written = datetime.fromisoformat(raw["recorded_at"])
                if written.tzinfo is None:
                    raise ValueError(f"recorded_at {raw['recorded_at']!r} has no time zone")
                lines.append(AlarmLine(str(raw["kind"]), str(raw["text"]),
                                       None if round_id is None else str(round_id), written))
            except (ValueError, KeyError, TypeError) as error:
                logger.warning("%s: line %d past the checkpoint is not an alarm (%s): left out",
                               path, number, describe(error))
        return lines


@dataclass(frozen=True, slots=True)
class ReplayedRound:
    """A round as the table's journal replays it: its lines and how it ended (``settlement``,
    or voided for ``void``; neither: still in play), and its lines as they were before each
    correction rewrote them (``earlier``). ``voiding``: still in play, and the table voids it
    next (it cannot be resumed): a longer copy the store holds open is kept for the void."""

    round_id: str
    lines: tuple[str, ...]
    settlement: Settlement | None = None
    void: str | None = None
    earlier: tuple[tuple[str, ...], ...] = ()
    voiding: bool = False


class MemoryRecorder:
    """Keeps what would be recorded in lists: ``rounds`` (id, lines, settlement) and ``voids``
    (id, lines, reason) as each ends, ``alarms``, and the rounds in the order they began
    (:meth:`replayed`). A journal's replay records into one; so do benchmarks and tests."""

    def __init__(self) -> None:
        self.rounds: list[tuple[str, list[str], Settlement]] = []
        self.voids: list[tuple[str, list[str], str]] = []
        self.alarms: list[Alarm] = []
        self._begun: list[str] = []
        self._lines: dict[str, list[str]] = {}
        self._ends: dict[str, Settlement | str] = {}
        self._earlier: dict[str, list[tuple[str, ...]]] = {}

    def begin_round(self, round_id: str, line: str) -> None:
        self._begun.append(round_id)
        self._lines[round_id] = [line]

    def round_event(self, round_id: str, line: str) -> None:
        self._lines[round_id].append(line)

    def rewrite_round(self, round_id: str, lines: list[str]) -> None:
        self._earlier.setdefault(round_id, []).append(tuple(self._lines[round_id]))
        self._lines[round_id] = list(lines)

    def end_round(self, round_id: str, settlement: Settlement) -> None:
        self._ends[round_id] = settlement
        self.rounds.append((round_id, list(self._lines[round_id]), settlement))

    def void_round(self, round_id: str, reason: str) -> None:
        self._ends[round_id] = reason
        self.voids.append((round_id, list(self._lines[round_id]), reason))

    def write_alarm(self, alarm: Alarm) -> None:
        self.alarms.append(alarm)

    def replayed(self) -> list[ReplayedRound]:
        """Every round begun, in order, with its lines and end."""
        out = []
        for round_id in self._begun:
            end = self._ends.get(round_id)
            out.append(ReplayedRound(
                round_id, tuple(self._lines[round_id]),
                settlement=end if isinstance(end, Settlement) else None,
                void=end if isinstance(end, str) else None,
                earlier=tuple(self._earlier.get(round_id, ()))))
        return out


#: Rounds whose questions' and cards' frames the store holds until the round is recorded.
FRAME_ROUNDS_KEPT = 8
#: Card frames held per round (JPEG bytes, encoded as they arrive); later cards get none.
CARD_FRAMES_KEPT = 64
#: Seconds a round's end waits for the view that shows it ended (its last card's frame, the
#: screen at settlement), handed over by the table's runner right after the end.
SETTLED_VIEW_WAIT_S = 0.5
#: What the session hands over of its rounds, each naming the round first.
ROUND_ITEMS = ("begin", "event", "rewrite", "end", "void")
#: Round-log events after which the store records what the dealer's screen showed.
DECISION_EVENTS = ("action", "insurance")


class StoreRecorder:
    """The table's recording store: its rounds as they are played, and its alarms, into the
    signed SQLite store at the top of the recording directory (hash-chained, replayable with
    ``dealer-assist replay``), written from its own thread because each record is fsync'd (a few
    ms) and the shoe's ACK must not wait for it (the table's journal already holds every input).

    A round's ``round`` record is written as it opens, each ``event`` as the session adds it,
    its settlement (or void) as it ends; once the store has committed the end, the round's
    files are exported from the records read back out of the store
    (:func:`dealer_assist.surveillance.export.write_round_file`). At start, every ended round
    with no file is exported (a crash between the commit and the export).

    A write that fails is kept in ``errors`` (the latest ``ERRORS_KEPT``) and the thread goes on
    with the next; the first failure of a run is handed to ``on_failure`` (the table raises an
    alarm with it). A round one of whose records failed is written no further. Once it has
    ended it is kept (:attr:`kept_rounds`), and the store records what it lacks of it as a
    restart does (:meth:`_reconcile`: its copy continued where it holds a prefix, else the round
    recorded again whole): at once, before the next round begins, or after any record the store
    writes, whenever no other round is open. A round begun while a kept round's copy is still
    open waits behind it (written no further until it ends), and an alarm then is kept for after
    it. A failed retry is reported only where it wrote first and failed otherwise than the last
    one reported. ``complete`` is False while such a round is in play or kept, and for good
    after a failure only a restart makes good (the store's thread stopped, a restart's
    reconcile, a round that never ended): the journal keeps every round meanwhile, and a
    restart records what the store lacks (:meth:`reconcile`). An alarm whose write failed is
    kept and tried again once the store writes a record again (:attr:`kept_alarms`); the
    journal keeps it meanwhile."""

    def __init__(self, directory: str | os.PathLike[str], table_id: str,
                 evidence: EvidenceFiles | None = None):
        self.directory = Path(directory)
        self.table_id = table_id
        self.evidence = evidence
        self.errors: list[str] = []
        self._stuck = False  # a failure only a restart makes good
        self._on_failure: Callable[[str], None] | None = None
        self._unreported: str | None = None
        self._report_lock = threading.Lock()
        self._failing = False
        #: the store's last record (number, hash) once it has handled what it was handed so
        #: far (None: it could not be read)
        self.position: tuple[int, str] | None = None
        #: alarms whose write failed, tried again once the store writes again (on the thread)
        self._kept: list[tuple[str, str, str | None, datetime]] = []
        self._queue: queue.Queue[tuple[str, Any] | None] = queue.Queue()
        # on the thread: frames held by round, the round open in the store and its events
        self._frames: dict[str, list[tuple[str, Snapshot, datetime]]] = {}
        self._card_frames: dict[str, dict[int, tuple[bytes, datetime]]] = {}
        # the screen's latest round state by round, and the decision events awaiting it
        self._screens: dict[str, dict[str, Any]] = {}
        self._screen_due: list[tuple[int, dict[str, Any]]] = []
        self._screens_handed = False  # a view listener hands screens over (keep_screen)
        self._open_id: str | None = None
        self._events: list[Any] = []
        # the lines the session handed of its round in play, written or not; the round in play
        # whose records failed (written no further), and the ended ones the store is to record
        self._handed_id: str | None = None
        self._handed: list[str] = []
        self._broken: str | None = None
        self._handed_earlier: list[tuple[str, ...]] = []
        self._kept_rounds: list[ReplayedRound] = []
        self._retry_reported: str | None = None  # the last failed retry reported
        self._opened = threading.Event()
        self._open_error: str | None = None
        self._thread = threading.Thread(
            target=guarded(self._run, "the recording store", self._died, logger),
            name="recording-store", daemon=True,
        )
        self._thread.start()
        self._opened.wait(60)
        if self._open_error is not None:
            raise StoreOpenError(f"recording store {self.directory}: {self._open_error}")

    @property
    def on_failure(self) -> Callable[[str], None] | None:
        """Called with the first failure of a run; one found before it is set is handed to it
        when it is set."""
        return self._on_failure

    @on_failure.setter
    def on_failure(self, report: Callable[[str], None] | None) -> None:
        with self._report_lock:
            self._on_failure, unreported, self._unreported = report, self._unreported, None
        if report is not None and unreported is not None:
            report(unreported)

    # -- the session's calls (queued; written in order on the thread) ----------------------

    def begin_round(self, round_id: str, line: str) -> None:
        self._queue.put(("begin", (round_id, line)))

    def round_event(self, round_id: str, line: str) -> None:
        self._queue.put(("event", (round_id, line)))

    def rewrite_round(self, round_id: str, lines: list[str]) -> None:
        self._queue.put(("rewrite", (round_id, lines)))

    def end_round(self, round_id: str, settlement: Settlement) -> None:
        self._queue.put(("end", (round_id, settlement)))

    def void_round(self, round_id: str, reason: str) -> None:
        self._queue.put(("void", (round_id, reason)))

    def write_alarm(self, alarm: Alarm) -> None:
        """The alarm with the round in play when it was raised and the UTC time it was handed
        over (the store writes it later, from its thread)."""
        self._queue.put(("alarm", (alarm.kind.name.lower(), alarm.text, alarm.round_id,
                                   datetime.now(UTC))))

    def keep_question_frame(self, round_id: str, question: str, snapshot: Snapshot) -> None:
        """The camera's frame when ``question`` was asked in ``round_id``: written as a key
        frame of the round, tied to the question's event, when the round ends (encoded on the
        store's thread). Frames of the latest ``FRAME_ROUNDS_KEPT`` rounds are held."""
        self._queue.put(("frame", (round_id, question, snapshot, _grabbed(snapshot))))

    def keep_card_frame(self, round_id: str, ordinal: int, snapshot: Snapshot) -> None:
        """The camera's frame when the round's card number ``ordinal`` (0: its first) was on
        the screen: written as a key frame of the round, tied to its ``ordinal``-th ``card``
        event, when the round ends (encoded on the store's thread as it arrives). Up to
        ``CARD_FRAMES_KEPT`` per round, of the latest ``FRAME_ROUNDS_KEPT`` rounds, are held."""
        self._queue.put(("card frame", (round_id, ordinal, snapshot, _grabbed(snapshot))))

    def keep_screen(self, round_id: str, shown: dict[str, Any]) -> None:
        """What the dealer's screen shows of ``round_id`` now: recorded (``Recorder.screen``)
        after each decision (an action, insurance, a question answered) and, with the
        settlement's PAY/TAKE lines, at settlement."""
        self._queue.put(("screen", (round_id, shown)))

    def reconcile(self, rounds: list[ReplayedRound], alarms: Sequence[AlarmLine] = (),
                  recorded: RecordedUpTo | None = None) -> list[str]:
        """Bring the store to the rounds a restarted table's journal replays (before anything
        else is written): a round whose records the store holds as a prefix of the replay's is
        continued after them (no record twice); one it holds ended, alike, is left; one it
        lacks is recorded whole; one it holds otherwise is recorded again whole, its copy left
        marked partial, and named in what is returned (each an alarm for the table). Each
        ended round is exported; the last, if still in play, stays open for its next event.

        ``alarms``: those the live table raised after the checkpoint that the replay raises too
        (:meth:`TableRecording.reconcile`); ``recorded``: how far the recording had got at the
        checkpoint (None: not known, and no alarm is written). First, with no round open, each
        of those alarms the store's alarm records after its record then do not hold (alike
        kind, words and round, each record standing for one) is written, at the time it was
        raised: it was handed to the store and never written (the table was killed first, or
        the write failed). Where the store's record of that number is not the one it held then
        (the store was replaced since), all its alarm records are taken to be later."""
        done = threading.Event()
        problems: list[str] = []
        self._queue.put(("reconcile", (rounds, list(alarms) if recorded is not None else [],
                                       recorded, problems, done)))
        if not done.wait(120):
            problems.append(f"recording store {self.directory}: the restart's rounds were not "
                            "recorded in 120 s")
        return problems

    @property
    def idle(self) -> bool:
        """Everything handed over has been written (or has failed)."""
        return self._queue.unfinished_tasks == 0

    @property
    def complete(self) -> bool:
        """Every round handed over is in the store, or is being written: none is in play or kept
        after a failed write, and no failure only a restart makes good has happened."""
        return not self._stuck and self._broken is None and not self._kept_rounds

    @property
    def kept_rounds(self) -> int:
        """Ended rounds whose records failed, kept to record what the store lacks of them."""
        return len(self._kept_rounds)

    @property
    def kept_alarms(self) -> int:
        """Alarms whose write failed, kept to try again once the store writes again."""
        return len(self._kept)

    def settled_position(self, timeout_s: float = 120.0) -> tuple[int, str] | None:
        """:attr:`position` once everything handed over has been written; None where that
        takes longer than ``timeout_s``, the store is not :attr:`complete` (a round it
        refused still to record), an alarm is kept to try again, or the store cannot say."""
        deadline = time.monotonic() + timeout_s
        while not self.idle:
            if time.monotonic() > deadline:
                return None
            time.sleep(0.005)
        return self.position if self.complete and not self._kept else None

    def close(self) -> None:
        """Write what is queued, then close the store (what it keeps, the journal keeps for
        the restart)."""
        self._queue.put(None)
        self._thread.join(30)

    # -- the thread --------------------------------------------------------------------------

    def _run(self) -> None:
        from dealer_assist.surveillance import DamagedRecordingError, Recorder
        from dealer_assist.surveillance.export import export_rounds

        try:
            recorder = Recorder.open(
                self.directory, table=self.table_id,
                evidence=None if self.evidence is None else self.evidence.open(self.directory))
        except DamagedRecordingError as error:
            self._open_error = (f"damaged: {error} (a table cannot run without its store: check "
                                "it with 'dealer-assist replay --verify', move it aside to begin"
                                " a new one)")
            self._opened.set()
            return
        except (OSError, ValueError, sqlite3.Error) as error:
            self._open_error = str(error) or type(error).__name__
            self._opened.set()
            return
        except Exception as error:  # not the store's own failure: a bug, logged with its trace
            logger.exception("the recording store %s did not open", self.directory)
            self._open_error = describe(error)
            self._opened.set()
            return
        try:
            exported = export_rounds(recorder.store, self.directory, self.table_id,
                                     missing_only=True)
            if exported.written:
                logger.warning("exported %d round(s) the store had ended but a crash left "
                               "without a file: %s", len(exported.written),
                               ", ".join(exported.written))
        except Exception as error:  # noqa: BLE001  the next round's export tries its own
            logger.exception("exporting the rounds left without a file")
            self._failed(f"export at start: {describe(error)}")  # redone at the next start
        finally:
            self._note_position(recorder)
            self._opened.set()
        try:
            ahead: list[tuple[str, Any] | None] = []
            while (item := ahead.pop() if ahead else self._queue.get()) is not None:
                if item[0] in ("end", "void") and self._screens_handed:
                    ahead = self._settled_view(recorder, item[1][0])
                self._handle(recorder, item)
        finally:
            try:
                recorder.close()
            except (sqlite3.Error, ValueError) as error:  # ValueError: the anchor log's
                self._keep(f"close: {error}")

    def _settled_view(self, recorder: Any, round_id: str) -> list[tuple[str, Any] | None]:
        """Before a round ends in the store, where screens are handed over: the card frames and
        screen of the view that shows it ended (the runner hands them over right after the end;
        up to ``SETTLED_VIEW_WAIT_S`` is waited for them), written while the round is open.
        Returns the next item if one other than those was taken."""
        while True:
            try:
                item = self._queue.get(timeout=SETTLED_VIEW_WAIT_S)
            except queue.Empty:
                return []
            if item is None or item[0] not in ("card frame", "screen") or item[1][0] != round_id:
                return [item]
            self._handle(recorder, item)
            if item[0] == "screen":
                return []

    def _handle(self, recorder: Any, item: tuple[str, Any]) -> None:
        """Write one queued item; a failure is kept and reported, and the next is tried. Where
        it wrote a record, the rounds and alarms kept are tried again before it counts as
        done."""
        kind, payload = item
        before, wrote = self.position, False
        if kind in ROUND_ITEMS:
            self._hand(kind, payload)
        try:
            if kind in ROUND_ITEMS and payload[0] == self._broken:
                if kind in ("end", "void"):  # recorded now, or once it can be
                    self._keep_round(kind, payload)
                    self._record_kept_rounds(recorder)
            else:
                if kind == "begin" and self._broken is not None:  # a guard: the session ends
                    self._stuck, self._broken = True, None  # or voids each round first
                behind = False  # a kept round's copy still open: this waits behind it
                if kind == "begin" or (kind == "alarm" and self._kept_open(recorder)):
                    self._record_kept_rounds(recorder)  # rounds in order; alarms in no copy
                    behind = self._kept_open(recorder)
                if behind and kind == "begin":  # written no further until it ends
                    self._broken, self._open_id = payload[0], None
                elif behind:  # the alarm, written after that round
                    self._kept.append(payload)
                else:
                    self._write(recorder, kind, payload)
        except Exception as error:  # whatever the store raises, the next record is tried
            kept_round = kind in ROUND_ITEMS and payload[0] == self._handed_id
            if kind in ("end", "void") and kept_round:
                self._keep_round(kind, payload)
            elif kept_round:  # written no further until it ends
                self._broken, self._open_id = payload[0], None
            elif kind == "alarm":  # tried again once the store writes again
                self._kept.append(payload)
            elif kind not in ("frame", "card frame", "screen"):
                self._stuck = True  # a round the store lacks: the journal keeps it
                if kind == "reconcile" and self._handed_id is not None:  # the round in play
                    self._broken, self._open_id = self._handed_id, None  # written no further
            if not self._failing:  # the first of a run with its trace; the rest counted
                logger.exception("recording store %s: a %s record was not written",
                                 self.directory, kind)
            self._failed(f"{kind}: {type(error).__name__}: {error}",
                         "kept round" if kept_round else
                         "" if kind in ("alarm", "frame", "card frame", "screen") else "restart")
        else:
            wrote = True
        finally:
            self._note_position(recorder)
            if wrote and self.position != before:  # it takes records again
                self._failing = False
                if self._kept_rounds:
                    self._record_kept_rounds(recorder)
                if self._kept:
                    self._write_kept(recorder)
            self._queue.task_done()

    def _hand(self, kind: str, payload: Any) -> None:
        """Keep the lines of the session's round in play as handed over, written or not."""
        round_id = payload[0]
        if kind == "begin":
            self._handed_id, self._handed, self._handed_earlier = round_id, [payload[1]], []
        elif kind == "rewrite" and round_id == self._handed_id:
            self._handed_earlier.append(tuple(self._handed))
            self._handed = list(payload[1])
        elif kind == "event" and round_id == self._handed_id:
            self._handed.append(payload[1])

    def _keep_round(self, kind: str, payload: tuple[str, Any]) -> None:
        """The session's round, ended (``kind``: ``"end"`` or ``"void"``), to record again (its
        records failed)."""
        round_id, ending = payload
        self._kept_rounds.append(ReplayedRound(
            round_id, tuple(self._handed), ending if kind == "end" else None,
            ending if kind == "void" else None, tuple(self._handed_earlier)))
        self._broken = None

    def _kept_open(self, recorder: Any) -> bool:
        """The store holds open the copy of a kept round (what it writes now would be filed
        under that round)."""
        return recorder.round_key is not None and any(
            played.round_id == recorder.round_id for played in self._kept_rounds)

    def _record_kept_rounds(self, recorder: Any) -> None:
        """Record the kept rounds as a restart does (:meth:`_reconcile`: the store's copy
        continued where it holds a prefix, or recorded again whole): the one whose copy the
        store holds open first, then the rest oldest first, none while another round is open;
        stop at the first that fails again."""
        while self._kept_rounds:
            open_id = None if recorder.round_key is None else recorder.round_id
            played = next((p for p in self._kept_rounds
                           if open_id is None or p.round_id == open_id), None)
            if played is None:
                return
            before = self.position
            try:
                problems = self._reconcile(recorder, [played], told="the table handed")
            except Exception as error:  # noqa: BLE001  the store still refuses: kept
                logger.warning("recording store %s: round %s is kept to record again (%s)",
                               self.directory, played.round_id, describe(error))
                self._note_position(recorder)
                failure = f"round {played.round_id}, kept: {describe(error)}"
                if self.position != before and failure != self._retry_reported:
                    self._failing, self._retry_reported = False, failure  # wrote, then failed
                    self._failed(failure, "kept round")  # otherwise: reported once
                else:  # as before (each report is an alarm, whose record sets off a retry)
                    self._keep(failure)
                return
            self._note_position(recorder)  # before it is no longer kept: a checkpoint reads both
            self._kept_rounds.remove(played)
            logger.warning("recording store %s: round %s, whose records had failed, is "
                           "recorded", self.directory, played.round_id)
            for problem in problems:
                self._report(f"recording store {self.directory}: {problem}")

    def _write(self, recorder: Any, kind: str, payload: Any) -> None:
        if kind == "alarm":
            alarm_kind, text, round_id, raised = payload
            recorder.alarm(alarm_kind, text, round_id, happened=raised)
        elif kind == "frame":
            round_id, question, snapshot, grabbed = payload
            self._frames.setdefault(round_id, []).append((question, snapshot, grabbed))
            while len(self._frames) > FRAME_ROUNDS_KEPT:
                del self._frames[next(iter(self._frames))]
        elif kind == "card frame":
            round_id, ordinal, snapshot, grabbed = payload
            held = self._card_frames.setdefault(round_id, {})
            if ordinal not in held and len(held) < CARD_FRAMES_KEPT:
                held[ordinal] = (snapshot.picture(), grabbed)
            while len(self._card_frames) > FRAME_ROUNDS_KEPT:
                del self._card_frames[next(iter(self._card_frames))]
        elif kind == "screen":
            round_id, shown = payload
            self._screens_handed = True
            self._screens.pop(round_id, None)  # the latest last, so the oldest goes first
            self._screens[round_id] = shown
            while len(self._screens) > FRAME_ROUNDS_KEPT:
                del self._screens[next(iter(self._screens))]
            if round_id == self._open_id and recorder.round_key is not None:
                self._write_due_screens(recorder, shown)
        elif kind == "begin":
            round_id, line = payload
            if recorder.round_key is not None:
                recorder.abandon_round(f"round {round_id} began before this one ended")
            self._begin(recorder, round_id, [line])
        elif kind == "reconcile":
            rounds, alarms, recorded, problems, done = payload
            try:
                if alarms:
                    self._write_missing_alarms_guarded(recorder, alarms, recorded)
                problems.extend(self._reconcile(recorder, rounds))
            finally:
                done.set()
        else:
            round_id = payload[0]
            if self._open_id != round_id or recorder.round_key is None:
                self._open_id = None
                raise RecordingError(f"{kind} of round {round_id}, which the store has not"
                                     " open (its earlier records failed)")
            if kind == "event":
                body = json.loads(payload[1])
                recorder.event(body)
                self._events.append(body)
                if body.get("type") in DECISION_EVENTS or (
                        body.get("type") == "question" and body.get("answer") is not None):
                    self._screen_due.append((len(self._events) - 1, body))
            elif kind == "rewrite":
                recorder.abandon_round("a correction replayed the round: recorded again whole "
                                       "in the next round record")
                self._begin(recorder, round_id, payload[1])
            else:
                self._end(recorder, round_id, payload[1] if kind == "end" else None,
                          payload[1] if kind == "void" else None)

    def _begin(self, recorder: Any, round_id: str, lines: Sequence[str]) -> None:
        self._open_id, self._screen_due = None, []
        bodies = [json.loads(line) for line in lines]
        recorder.begin_round(bodies[0])
        self._open_id, self._events = round_id, bodies[:1]
        for body in bodies[1:]:
            recorder.event(body)
            self._events.append(body)

    def _end(self, recorder: Any, round_id: str, settlement: Settlement | None,
             void: str | None, held: RoundData | None = None) -> None:
        """Close the open round (settled, or voided for ``void``), then export its files.
        ``held``: the store's copy being continued; a settlement screen or void alarm it
        holds already (a closing that failed halfway) is not written again."""
        from dealer_assist.surveillance.export import latest_round, round_file, write_round_file

        self._write_frames(recorder, self._events, self._frames.pop(round_id, []))
        self._write_card_frames(recorder, self._events, self._card_frames.pop(round_id, {}))
        shown = self._screens.pop(round_id, None)
        if shown is not None:
            self._write_due_screens(recorder, shown)
        self._screen_due = []
        self._open_id = None
        screens = [] if held is None else [record.object_body() for record in held.screens]
        alarms = [] if held is None else [record.object_body() for record in held.alarms]
        if settlement is not None:
            if not any(_at_settlement(screen) for screen in screens):
                recorder.screen({"at": "settlement", "phase": "settled",
                                 "round": None if shown is None else shown["round"],
                                 "settlement": settlement_view(settlement)})
            recorder.end_round(settlement)
        else:
            reason = void or "voided"
            recorder.void_round(reason, alarmed=any(
                alarm.get("kind") == "void" and alarm.get("text") == reason for alarm in alarms))
        data = latest_round(recorder.store, round_id)
        export = None if data is None else round_file(data)
        if export is None:
            raise RecordingError(f"round {round_id}: the store does not read back as ended")
        write_round_file(self.directory, export)
        if settlement is not None:
            logger.info("round %s settled: players' net %s, %d seat(s)", round_id,
                        settlement.net, len(settlement.seats))
        else:
            logger.warning("round %s voided: %s", round_id, void)

    def _reconcile(self, recorder: Any, rounds: list[ReplayedRound],
                   told: str = "the table's journal replays") -> list[str]:
        """Bring the store to ``rounds`` (what ``told`` them: a restart's journal, or the lines
        the table handed a kept round); the problems found, each said of ``told``."""
        from dealer_assist.surveillance.export import (
            latest_round,
            round_file,
            void_reason,
            write_round_file,
        )
        from dealer_assist.surveillance.store import canonical_json

        problems = []
        for played in rounds:
            if played.settlement is None and played.void is None:  # the session goes on with it
                self._handed_id, self._handed = played.round_id, list(played.lines)
                self._handed_earlier = list(played.earlier)
            data = latest_round(recorder.store, played.round_id)
            held = [] if data is None else [json.loads(r.body_text) for r in data.events]
            want = [json.loads(line) for line in played.lines]
            if data is not None and (data.settlement is not None or void_reason(data)):
                alike = held == want and (
                    (played.settlement is not None and data.settlement is not None
                     and data.settlement.body_text == canonical_json(played.settlement.to_json()))
                    or (played.void is not None and void_reason(data) == played.void))
                if alike:
                    export = round_file(data)
                    assert export is not None
                    write_round_file(self.directory, export)
                    continue
                problems.append(
                    f"round {played.round_id}: the recording store holds it ended otherwise than"
                    f" {told} it: recorded again as {told} it")
            elif data is not None and held == want[:len(held)]:
                if recorder.round_key != data.key:  # else: open still, its last write failed
                    recorder.continue_round(data.key)
                self._open_id, self._events = played.round_id, held
                for body in want[len(held):]:
                    recorder.event(body)
                    self._events.append(body)
                if played.settlement is not None or played.void is not None:
                    self._end(recorder, played.round_id, played.settlement, played.void, data)
                continue
            elif (data is not None and played.voiding and len(held) > len(want)
                  and held[:len(want)] == want):
                # the store holds more of it than the journal (a damaged journal lost records,
                # acknowledged all): its copy is continued, for the void that comes next
                recorder.continue_round(data.key)
                self._open_id, self._events = played.round_id, held
                self._handed = [record.body_text for record in data.events]
                logger.warning("round %s: the recording store holds %d record(s) of it that "
                               "the table's journal lacks: kept in its void record",
                               played.round_id, len(held) - len(want))
                continue
            elif data is not None and any(
                    held == [json.loads(line) for line in version][:len(held)]
                    for version in played.earlier):
                pass  # the copy before a correction the store had not yet been told of
            elif data is not None:
                at = next((i for i, (a, b) in enumerate(zip(held, want, strict=False))
                           if a != b), min(len(held), len(want)))  # else: it holds more
                problems.append(
                    f"round {played.round_id}: the recording store's record {at} of it differs "
                    f"from what {told}: recorded again as {told} it (the store's copy is kept, "
                    "marked partial)")
            self._begin(recorder, played.round_id, played.lines)
            if played.settlement is not None or played.void is not None:
                self._end(recorder, played.round_id, played.settlement, played.void)
        for problem in problems:
            logger.error("%s", problem)
        return problems

    def _write_kept(self, recorder: Any) -> None:
        """Try again the alarms whose write failed, oldest first, each while no other round
        than its own is open in the store (so that it is filed under its own); stop at the
        first that fails again."""
        while self._kept:
            kind, text, round_id, raised = self._kept[0]
            if recorder.round_key is not None and recorder.round_id != round_id:
                return
            try:
                recorder.alarm(kind, text, round_id, happened=raised)
            except Exception:  # noqa: BLE001  the store still refuses: kept for the next item
                return
            self._note_position(recorder)  # before it is no longer kept: a checkpoint reads both
            self._kept.pop(0)
            logger.info("recording store %s: an alarm kept to try again is written (%s)",
                        self.directory, kind)

    def _note_position(self, recorder: Any) -> None:
        """Keep the store's last record as :attr:`position` (None where it cannot be read)."""
        try:
            self.position = recorder.store.head()
        except (ValueError, sqlite3.Error):  # the store's RecordingError is a ValueError
            self.position = None

    def _write_missing_alarms_guarded(self, recorder: Any, alarms: list[AlarmLine],
                                    recorded: RecordedUpTo) -> None:
        """:meth:`_write_missing_alarms`; a failure is kept and reported (the journal keeps
        the alarms), and the rounds are reconciled all the same."""
        try:
            self._write_missing_alarms(recorder, alarms, recorded)
        except Exception as error:  # whatever the store raises, the rounds are still tried
            self._stuck = True
            logger.exception("recording store %s: the alarms it lacked were not written",
                             self.directory)
            self._failed(f"alarms it lacked: {describe(error)}", "restart")

    def _write_missing_alarms(self, recorder: Any, alarms: list[AlarmLine],
                              recorded: RecordedUpTo) -> None:
        """Each of ``alarms`` that no alarm record of the table after ``recorded``'s holds."""
        from dealer_assist.surveillance.store import GENESIS_HASH

        seq = recorded.store_seq
        there = recorder.store.record(seq) if seq else None
        held_then = GENESIS_HASH if seq == 0 else None if there is None else there.hash
        if held_then != recorded.store_hash:
            logger.warning("recording store %s: its record %d is not the one the journal's "
                           "checkpoint names (the store was replaced since): all its alarm "
                           "records are taken to be later", self.directory, seq)
            seq = 0
        held: Counter[AlarmKey] = Counter()
        for record in recorder.store.records(kinds=("alarm",), after=seq):
            body = record.object_body()
            if record.table == self.table_id and isinstance(body, dict):
                held[AlarmKey.of_record(body)] += 1
        for alarm in alarms:
            if held[alarm.key] > 0:
                held[alarm.key] -= 1
                continue
            logger.warning("an alarm (%s) was handed to the recording store but not written "
                           "before the table stopped: written now: %s", alarm.kind, alarm.text)
            recorder.alarm(alarm.kind, alarm.text, alarm.round_id, happened=alarm.recorded_at)

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

    @staticmethod
    def _write_card_frames(recorder: Any, events: list[Any],
                           frames: dict[int, tuple[bytes, datetime]]) -> None:
        """Each card's frame, tied to the round's ``card`` event of its place (none: a card a
        correction took back, tied to no event)."""
        cards = [index for index, event in enumerate(events) if event.get("type") == "card"]
        for ordinal, (picture, grabbed) in sorted(frames.items()):
            index = cards[ordinal] if ordinal < len(cards) else None
            recorder.frame(picture, {"card": None if index is None else events[index].get("card")},
                           index, key=True, captured=grabbed)

    def _write_due_screens(self, recorder: Any, shown: dict[str, Any]) -> None:
        """What the screen shows now, recorded for each decision written since the last."""
        for index, body in self._screen_due:
            recorder.screen({"at": body["type"], "event_index": index, **shown})
        self._screen_due = []

    def _died(self, error: str) -> None:
        """The writing thread ended on an exception (logged): what is queued now is not written."""
        self._failing, self._stuck = True, True
        self._keep(f"the recorder thread stopped: {error}")
        self._report(f"recording store {self.directory}: the recorder stopped ({error}): "
                     "nothing more is written there (the table's journal keeps every round "
                     "until a restart records them)")

    def _failed(self, error: str, made_good_by: str = "") -> None:
        """Keep ``error``; the first of a run is reported, saying what makes it good: a
        ``"restart"``, the store recording a ``"kept round"`` again, or (``""``) its next
        write."""
        self._keep(error)
        if not self._failing:
            self._report(f"recording store {self.directory}: {error} " + {
                "restart": "(the table's journal keeps every round from now on, and the store "
                           "has them once the table is restarted: restart it between rounds, "
                           "or the journal grows until it is)",
                "kept round": "(once the round has ended, the store records what it lacks of "
                              "it and writes its file as soon as it writes again; the table's "
                              "journal keeps every round until then, and a restart records what "
                              "the store still lacks)",
                "": "(the table's journal keeps every round and alarm until the store has it; "
                    "an alarm it refused is tried again once it writes again)"}[made_good_by])
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


def _at_settlement(screen: dict[str, Any]) -> bool:
    """Whether a screen record's body shows the screen at settlement."""
    snapshot = screen.get("snapshot")
    return isinstance(snapshot, dict) and snapshot.get("at") == "settlement"


def _grabbed(snapshot: Snapshot) -> datetime:
    """The UTC time, by the table's clock, the camera grabbed ``snapshot`` (it keeps the
    monotonic one)."""
    return datetime.now(UTC) - timedelta(seconds=time.monotonic() - snapshot.grabbed_at)


class TableRecorder:
    """What a table's loop records to: rounds into the store (which exports their files),
    alarms into ``alarms.jsonl`` and the store. An alarm write that fails to the file still
    reaches the store; the failure is raised after."""

    def __init__(self, files: RecordingDirectory, store: StoreRecorder):
        self.files = files
        self.store = store

    def begin_round(self, round_id: str, line: str) -> None:
        self.store.begin_round(round_id, line)

    def round_event(self, round_id: str, line: str) -> None:
        self.store.round_event(round_id, line)

    def rewrite_round(self, round_id: str, lines: list[str]) -> None:
        self.store.rewrite_round(round_id, lines)

    def end_round(self, round_id: str, settlement: Settlement) -> None:
        self.store.end_round(round_id, settlement)

    def void_round(self, round_id: str, reason: str) -> None:
        self.store.void_round(round_id, reason)

    def write_alarm(self, alarm: Alarm) -> None:
        self.store.write_alarm(alarm)
        self.files.write_alarm(alarm)


class TableRecording:
    """A table's recording directory, opened: its lock and alarm file, and the recording store
    at the top of the same directory. ``recorder`` is what the table loop writes to. Use
    :func:`open_recording`."""

    def __init__(self, files: RecordingDirectory, store: StoreRecorder):
        self.files = files
        self.store = store
        self.recorder = TableRecorder(files, store)

    @property
    def directory(self) -> Path:
        return self.files.directory

    @property
    def pending(self) -> bool:
        """The store has not yet written (and exported) all it was handed, is not complete (a
        round it refused still to record), or the store or ``alarms.jsonl`` keeps alarms to try
        again (the file's tried again here): the journal must keep its rounds and alarms."""
        self.files.write_kept()
        return (not self.store.idle or not self.store.complete or self.store.kept_alarms > 0
                or self.files.kept > 0)

    def unwritten(self) -> str:
        """What the recording has not written, in words."""
        parts = []
        if not self.store.idle:
            parts.append(f"the recording store {self.directory} is still writing")
        if not self.store.complete or self.store.kept_alarms:
            parts.append(f"the recording store {self.directory} failed a write"
                         + (f" ({self.store.errors[-1]})" if self.store.errors else ""))
        if self.files.kept:
            parts.append(f"{self.directory / 'alarms.jsonl'} keeps {self.files.kept} alarm(s) "
                         "it could not write")
        return "; ".join(parts) or f"the recording store {self.directory} cannot say where it is"

    def recorded_up_to(self, timeout_s: float = 120.0) -> RecordedUpTo | None:
        """How far the recording has got once the store has written all it was handed (waiting
        up to ``timeout_s``); None where it has not, is not complete (a round it refused still
        to record), the store or the alarm file keeps an alarm to try again, or either cannot
        say."""
        position = self.store.settled_position(timeout_s)
        length = self.files.alarm_file_length()
        if position is None or length is None:
            return None
        return RecordedUpTo(position[0], position[1], length)

    def reconcile(self, rounds: list[ReplayedRound], alarms: Sequence[Alarm],
                  recorded: RecordedUpTo | None) -> list[str]:
        """:meth:`StoreRecorder.reconcile` with, of ``alarms`` (those a restart's replay raised
        after the checkpoint ``recorded`` was taken at), the ones ``alarms.jsonl`` holds past
        that checkpoint too: what the live table raised, as it wrote it then. An alarm only the
        replay raises (its loop rebuilt without a spell begun before the checkpoint, or under a
        changed configuration) or only the file holds (no journaled input explains it) is left."""
        replayed = Counter(AlarmKey.of_alarm(a) for a in alarms)
        raised = []
        for line in [] if recorded is None else self.files.alarms_after(recorded.alarm_file):
            if replayed[line.key] > 0:
                replayed[line.key] -= 1
                raised.append(line)
        return self.store.reconcile(rounds, raised, recorded)

    def close(self) -> None:
        """Write what the store has queued, close it, and let another table record here."""
        self.store.close()
        self.files.close()


def open_recording(directory: str | os.PathLike[str], table_id: str,
                   evidence: EvidenceFiles | None = None) -> TableRecording:
    """Open ``directory`` for ``table_id``: its lock and alarm file first (which holds it
    against another table), then the recording store beside them, signed and anchored with
    ``evidence`` (None: unsigned, for tests and benchmarks). RecordingError names the directory
    or the store (StoreOpenError) and why; nothing is left held when it is raised."""
    files = RecordingDirectory(directory)
    try:
        store = StoreRecorder(files.directory, table_id, evidence)
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
    from dealer_assist.surveillance.signing import replace_key

    files = RecordingDirectory(directory)
    try:
        recorder = Recorder.open(directory, table=table_id, evidence=evidence.open(directory))
        try:
            new = replace_key(evidence.key, evidence.public_key,
                              lambda key: recorder.rotate_key(key, why))
        finally:
            recorder.close()
    finally:
        files.close()
    logger.warning("table %s: key rotated to %s (%s)", table_id, new.public.key_id, why)
    return new.public.key_id
