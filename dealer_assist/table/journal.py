"""The table journal: every input the table is handed, on disk before it is acted on or acked.

The :class:`~dealer_assist.table.loop.TableLoop` is deterministic given its inputs and the time
each was handed over, so the journal keeps exactly that: one record per input (or per shoe event,
whose inputs and shoe position travel together), with the runner's clock (monotonic, for the
waits) and the UTC time the input was handed to the table (for the events it causes), appended
and fsync'd
before the loop sees it and before the shoe is told the event is held. After a crash the journal
replayed through a fresh loop rebuilds the table as it was, the round in play included.

A journal file (``<recording dir>/table.journal``) is text, one record a line, each
``CRC32-HEX SPACE JSON``. Its first record is a *checkpoint*: what a fresh loop needs to carry on
from a safe point (no round open, nothing waiting, every round recorded): the round-id prefix and
the last round number, the cards out of the shoe since it was shuffled, the devices' state, the
shoe's last durable event, the dealer signed in (never a PIN), how many questions were asked
(a question's id numbers on from it), how far the recording had got (alarms after it that the
store lacks are written at a restart), and the configuration that made it. At every such safe
point the journal is replaced (written aside, fsync'd, renamed over) by a new checkpoint alone,
so it holds one round at most. A record cut short by a crash (the last line, unfinished or
failing its CRC) is dropped with a warning; everything before it is read.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import time
import zlib
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

from dealer_assist.durable import create_new, fsync_dir, open_plain
from dealer_assist.roundlog import EventError, check_at, format_at
from dealer_assist.rules import Card, Settlement
from dealer_assist.table.alarms import Alarm
from dealer_assist.table.journal_codec import CODEC_VERSION, CodecError, decode_input, encode_input
from dealer_assist.table.loop import TableLoop
from dealer_assist.table.recording import (
    MemoryRecorder,
    RecordedUpTo,
    RecordingError,
    ReplayedRound,
)
from dealer_assist.table.session import Recorder
from dealer_assist.table.shoe_cards import Recorded, ResendState, Resent
from dealer_assist.table.sources import (
    AcknowledgeAlarm,
    CameraLink,
    CameraMoved,
    NewShoe,
    RecordingFailed,
    RoundResumed,
    ShoeBurn,
    ShoeCard,
    ShoeCaughtUp,
    ShoeLink,
    ShoeUnread,
    ShownAfterRestart,
    SignIn,
    TableInput,
    VoidRound,
)

log = logging.getLogger(__name__)

JOURNAL_VERSION = 1
JOURNAL_NAME = "table.journal"


class JournalError(OSError):
    """The journal could not be written (names the file and why)."""


@dataclass(frozen=True, slots=True)
class Checkpoint:
    """Where a journal starts: enough for a fresh loop to carry on from a safe point."""

    config: dict[str, Any]
    round_prefix: str
    round_number: int = 0
    cards_out: dict[str, int] = field(default_factory=dict)
    shoe_up: bool = False
    camera_up: bool = False
    camera_moved: bool = False
    shoe: tuple[int, int] | None = None  # the shoe's last durable event (session, seq)
    t: float = 0.0
    dealer: str | None = None  # signed in at the screen (no PIN: it never leaves the screen)
    alarms_raised: int | None = 0  # the last alarm's number (None: a journal that did not say)
    #: the round-log lines of the ended round the screen shows (PAY/TAKE owed on the felt until
    #: the next round begins); empty where none
    shown: tuple[str, ...] = ()
    #: the shown round's cards the camera's sightings may still pass as, (card, seat or None,
    #: how many), and (None, seat, how many) unreadable sightings were let pass there (a
    #: restart showed it, and no round has begun since:
    #: :class:`~dealer_assist.table.sources.ShownAfterRestart`)
    felt_left: tuple[tuple[Card | None, int | None, int], ...] = ()
    #: how far the recording had got, every round and alarm before the checkpoint written
    #: (None: not known; a restart then writes no alarm the store lacks)
    recorded: RecordedUpTo | None = None
    #: questions put to the dealer since the table started: the next one's id follows on, so a
    #: journaled answer replays against the question it answered
    questions_asked: int = 0
    #: a shoe link drop whose resend is not yet lined up (:class:`ResendState`)
    shoe_resend: ResendState = ResendState()

    def to_json(self) -> dict[str, Any]:
        return {
            "journal": JOURNAL_VERSION, "codec": CODEC_VERSION, "config": self.config,
            "round_prefix": self.round_prefix, "round_number": self.round_number,
            "cards_out": self.cards_out, "shoe_up": self.shoe_up, "camera_up": self.camera_up,
            "camera_moved": self.camera_moved,
            "shoe": None if self.shoe is None else list(self.shoe), "t": self.t,
            "dealer": self.dealer, "alarms_raised": self.alarms_raised,
            "shown": list(self.shown),
            "felt_left": [[None if card is None else card.code, seat, n]
                          for card, seat, n in self.felt_left],
            "recorded": None if self.recorded is None else self.recorded.to_json(),
            "questions_asked": self.questions_asked,
            "shoe_resend": _resend_json(self.shoe_resend),
        }

    @classmethod
    def from_json(cls, raw: Any) -> Checkpoint:
        if not isinstance(raw, dict) or raw.get("journal") != JOURNAL_VERSION:
            raise CodecError(f"not a version {JOURNAL_VERSION} journal checkpoint")
        if raw.get("codec") != CODEC_VERSION:
            raise CodecError(f"inputs written with codec {raw.get('codec')!r}, this reads "
                             f"{CODEC_VERSION}")
        shoe = raw.get("shoe")
        dealer = raw.get("dealer")  # absent from a journal written before sign-in
        raised = raw.get("alarms_raised")  # absent from one written before alarms numbered on
        shown = raw.get("shown", [])  # absent from one written before the ended round was kept
        recorded = raw.get("recorded")  # absent from one written before it was kept
        asked = raw.get("questions_asked", 0)  # absent from one written before it was kept
        if type(asked) is not int or asked < 0:
            raise CodecError(f"a checkpoint's 'questions_asked' must be a count, got "
                             f"{str(asked)[:80]!r}")
        if not isinstance(shown, list) or not all(isinstance(line, str) for line in shown):
            raise CodecError(f"a checkpoint's 'shown' must be a list of round-log lines, got "
                             f"{str(shown)[:80]!r}")
        return cls(
            config=dict(raw["config"]), round_prefix=str(raw["round_prefix"]),
            round_number=int(raw["round_number"]),
            cards_out={str(k): int(v) for k, v in raw["cards_out"].items()},
            shoe_up=bool(raw["shoe_up"]), camera_up=bool(raw["camera_up"]),
            camera_moved=bool(raw["camera_moved"]),
            shoe=None if shoe is None else (int(shoe[0]), int(shoe[1])), t=float(raw["t"]),
            dealer=None if dealer is None else str(dealer),
            alarms_raised=None if raised is None else int(raised), shown=tuple(shown),
            felt_left=_felt_left(raw.get("felt_left", [])),
            recorded=None if recorded is None else _recorded(recorded), questions_asked=asked,
            shoe_resend=_resend_state(raw.get("shoe_resend", {})),  # absent: written before
        )

    @classmethod
    def of(cls, loop: TableLoop, config: dict[str, Any], shoe: tuple[int, int] | None,
           t: float, recorded: RecordedUpTo | None = None) -> Checkpoint:
        """The checkpoint of ``loop`` at rest (``recorded``: :attr:`recorded`)."""
        fold = loop.fold
        shown = tuple(loop.round_lines()) if fold is not None and fold.ended else ()
        return cls(config, loop.round_prefix, loop.round_number,
                   {card.code: n for card, n in sorted(loop.cards_out.items(), key=str)},
                   loop.shoe_up, loop.camera_up, loop.camera_moved, shoe, t, loop.dealer,
                   loop.alarms_raised, shown, tuple(
                       (card, seat, n)
                       for (card, seat), n in sorted(loop.camera.felt_left.items(), key=str)
                   ) if shown else (), recorded, loop.questions_asked, loop.shoe.resend_state)

    def preamble(self) -> list[TableInput]:
        """Inputs that bring a fresh loop to this checkpoint's device state, pack count and
        signed-in dealer."""
        inputs: list[TableInput] = [] if self.dealer is None else [SignIn(self.dealer)]
        if self.shoe_up:
            inputs.append(ShoeLink(True, "as before the restart"))
        if self.camera_up:
            inputs.append(CameraLink(True, "as before the restart"))
        if self.camera_moved:
            inputs.append(CameraMoved("as before the restart"))
        for code, count in self.cards_out.items():
            inputs.extend([ShoeBurn(Card.parse(code))] * count)  # counts the card out, no more
        return inputs


@dataclass(frozen=True, slots=True)
class JournalEntry:
    """One record after the checkpoint: ``inputs`` handed to the loop at ``t`` (the runner's
    monotonic clock; with the shoe event they came from, if any), or a ``tick`` at ``t`` that let
    a wait expire. ``at``: the same moment in UTC (round-log ``"at"`` text), stamped on the
    events it causes; None in a journal written before it was kept (its events carry none).
    ``alarms``: the number of the last alarm the table had raised before it (None: not said),
    so a rebuilt table numbers on as the live one did, past alarms no input explains (a write
    that failed)."""

    t: float
    inputs: tuple[TableInput, ...] = ()
    shoe: tuple[int, int] | None = None
    tick: bool = False
    at: str | None = None
    alarms: int | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"t": self.t}
        if self.at is not None:
            out["at"] = self.at
        if self.alarms is not None:
            out["alarms"] = self.alarms
        if self.tick:
            out["tick"] = True
            return out
        out["in"] = [encode_input(i) for i in self.inputs]
        if self.shoe is not None:
            out["shoe"] = list(self.shoe)
        return out

    @classmethod
    def from_json(cls, raw: Any) -> JournalEntry:
        if not isinstance(raw, dict) or not isinstance(raw.get("t"), int | float):
            raise CodecError(f"not a journal entry: {raw!r}")
        at = raw.get("at")
        if at is not None:
            try:
                at = check_at(at)
            except EventError as error:
                raise CodecError(f"a journal entry's {error}") from None
        alarms = raw.get("alarms")
        if alarms is not None and (isinstance(alarms, bool) or not isinstance(alarms, int)
                                   or alarms < 0):
            raise CodecError(f"a journal entry's 'alarms' must be a count, got {alarms!r}")
        if raw.get("tick") is True:
            return cls(float(raw["t"]), tick=True, at=at, alarms=alarms)
        shoe = raw.get("shoe")
        inputs = raw.get("in")
        if not isinstance(inputs, list):
            raise CodecError(f"a journal entry's 'in' must be a list, got {inputs!r}")
        return cls(float(raw["t"]), tuple(decode_input(i) for i in inputs),
                   None if shoe is None else (int(shoe[0]), int(shoe[1])), at=at,
                   alarms=alarms)


@dataclass(slots=True)
class JournalContents:
    """What a journal file held: its checkpoint and the entries after it, up to the first
    record that could not be read (``warnings`` say which and why; ``damaged``: a bad record
    with more after it, which no crash explains)."""

    checkpoint: Checkpoint
    entries: list[JournalEntry]
    warnings: list[str]
    damaged: bool = False

    @property
    def last_t(self) -> float:
        return self.entries[-1].t if self.entries else self.checkpoint.t

    @property
    def shoe(self) -> tuple[int, int] | None:
        """The shoe's last event made durable."""
        for entry in reversed(self.entries):
            if entry.shoe is not None:
                return entry.shoe
        return self.checkpoint.shoe


def _line(record: dict[str, Any]) -> bytes:
    text = json.dumps(record, separators=(",", ":"), sort_keys=True)
    body = text.encode("utf-8")
    return b"%08x %s\n" % (zlib.crc32(body), body)


def _parse_line(line: bytes) -> Any:
    crc, _, body = line.partition(b" ")
    if len(crc) != 8 or int(crc, 16) != zlib.crc32(body):
        raise CodecError("CRC mismatch")
    return json.loads(body)


def read_journal(path: str | os.PathLike[str]) -> JournalContents:
    """Read a journal file; raises :class:`CodecError` only when its checkpoint is unreadable
    (then nothing in it can be trusted)."""
    data = Path(path).read_bytes()
    lines = data.split(b"\n")
    torn_tail = lines.pop()  # after the last newline: empty unless a write was cut short
    warnings: list[str] = []
    if not lines:
        raise CodecError(f"{path}: no checkpoint (the file holds {len(data)} bytes)")
    try:
        checkpoint = Checkpoint.from_json(_parse_line(lines[0]))
    except (CodecError, ValueError, KeyError, TypeError) as error:
        raise CodecError(f"{path}: line 1, the checkpoint: {error}") from None
    entries: list[JournalEntry] = []
    damaged = False
    for number, line in enumerate(lines[1:], start=2):
        try:
            entries.append(JournalEntry.from_json(_parse_line(line)))
        except (CodecError, ValueError, KeyError, TypeError, IndexError) as error:
            damaged = number < len(lines) or bool(torn_tail)
            warnings.append(f"{path}: line {number}: {error}: it and "
                            f"{len(lines) - number} record(s) after it not read")
            break
    if torn_tail and not damaged:
        warnings.append(f"{path}: line {len(lines) + 1}: a record cut short ({len(torn_tail)} "
                        "bytes, a crash while it was written): dropped")
    for warning in warnings:
        log.warning("%s", warning)
    return JournalContents(checkpoint, entries, warnings, damaged)


class TableJournal:
    """An open journal file: :meth:`append` makes a record durable (written and fsync'd) before
    it returns; :meth:`checkpoint` starts the file again from a new checkpoint.

    A write that fails raises :class:`JournalError` and is kept: the next append writes it
    first, so the records reach the disk in order or not at all (a record is never acknowledged
    while one before it is not on disk). ``shoe_written``: the shoe's last event on disk (its
    ``(session, seq)``; None: none yet), which a kept record reaches once written."""

    def __init__(self, path: str | os.PathLike[str], checkpoint: Checkpoint,
                 entries: Iterable[JournalEntry] = ()):
        self.path = Path(path)
        self.entries_since_checkpoint = 0
        self._unwritten: list[bytes] = []
        self._unwritten_shoe: tuple[int, int] | None = None
        entries = list(entries)
        self.shoe_written = next((e.shoe for e in reversed(entries) if e.shoe is not None),
                                 checkpoint.shoe)
        self._fd: int | None = None  # unbuffered: nothing is held back to be written later
        self._rewrite(checkpoint, entries)

    def _rewrite(self, checkpoint: Checkpoint, entries: list[JournalEntry]) -> None:
        """Replace the file atomically by ``checkpoint`` and ``entries``."""
        aside = self.path.with_name(self.path.name + ".new")
        records = [_line(checkpoint.to_json())] + [_line(e.to_json()) for e in entries]
        try:
            with os.fdopen(create_new(aside), "wb") as handle:  # never through a link
                handle.write(b"".join(records))
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(aside, self.path)
            fsync_dir(self.path.parent)
            fd = open_plain(self.path, os.O_WRONLY | os.O_APPEND)
        except OSError as error:
            raise JournalError(f"journal {self.path}: {error.strerror or error}") from None
        self.close()
        self._fd = fd
        self.checkpoint_at = checkpoint
        self.entries_since_checkpoint = len(entries)
        self._unwritten.clear()
        self._unwritten_shoe = None

    def append(self, entry: JournalEntry) -> None:
        """Write ``entry`` (after any kept from a failed write) and fsync."""
        self._unwritten.append(_line(entry.to_json()))
        if entry.shoe is not None:
            self._unwritten_shoe = entry.shoe
        fd = self._fd
        if fd is None:
            raise JournalError(f"journal {self.path}: closed")
        data = memoryview(b"".join(self._unwritten))
        good = None
        try:
            good = os.fstat(fd).st_size
            while data:
                data = data[os.write(fd, data):]
            os.fsync(fd)
        except OSError as error:
            if good is not None:
                try:  # leave no half record for the next write to land after
                    os.ftruncate(fd, good)
                except OSError:
                    pass
            raise JournalError(f"journal {self.path}: {error.strerror or error} "
                               f"({len(self._unwritten)} record(s) kept to write again)") from None
        self.entries_since_checkpoint += len(self._unwritten)
        self._unwritten.clear()
        if self._unwritten_shoe is not None:
            self.shoe_written, self._unwritten_shoe = self._unwritten_shoe, None

    @property
    def behind(self) -> bool:
        """Records are kept that the disk refused."""
        return bool(self._unwritten)

    def checkpoint(self, checkpoint: Checkpoint) -> None:
        """Start again from ``checkpoint`` (the table at rest, every round recorded)."""
        if self._unwritten:
            raise JournalError(f"journal {self.path}: records not yet written")
        self._rewrite(checkpoint, [])

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


class RecordingWatch:
    """Hands everything to ``recorder`` and remembers whether its latest call failed (the
    journal may let a round go only once it is recorded)."""

    def __init__(self, recorder: Recorder):
        self.recorder = recorder
        self.failing = False

    def begin_round(self, round_id: str, line: str) -> None:
        self._watch(lambda: self.recorder.begin_round(round_id, line))

    def round_event(self, round_id: str, line: str) -> None:
        self._watch(lambda: self.recorder.round_event(round_id, line))

    def rewrite_round(self, round_id: str, lines: list[str]) -> None:
        self._watch(lambda: self.recorder.rewrite_round(round_id, lines))

    def end_round(self, round_id: str, settlement: Settlement) -> None:
        self._watch(lambda: self.recorder.end_round(round_id, settlement))

    def void_round(self, round_id: str, reason: str) -> None:
        self._watch(lambda: self.recorder.void_round(round_id, reason))

    def write_alarm(self, alarm: Alarm) -> None:
        self._watch(lambda: self.recorder.write_alarm(alarm))

    def _watch(self, write: Callable[[], None]) -> None:
        try:
            write()
        except Exception:
            self.failing = True
            raise
        self.failing = False


LoopFactory = Callable[[Any, str, int], TableLoop]
"""Makes the table's loop: ``(rules_spec, round_prefix, round_number)``, with its recorder."""


class RestartRecording(Protocol):
    """The table's recording as a restart uses it
    (:class:`~dealer_assist.table.recording.TableRecording`)."""

    def reconcile(self, rounds: list[ReplayedRound], alarms: Sequence[Alarm],
                  recorded: RecordedUpTo | None) -> list[str]:
        """Bring the store to the replay's rounds and to the alarms raised after the checkpoint
        ``recorded`` was taken at; each disagreement, in words."""
        ...

    def recorded_up_to(self, timeout_s: float = ...) -> RecordedUpTo | None:
        """How far the recording has got once all handed to it is written (None: unknown)."""
        ...

    def unwritten(self) -> str:
        """What the recording has not written, in words."""
        ...


@dataclass(slots=True)
class Resumed:
    """The table as the journal left it: the loop to run (with the real recorder), the journal
    to append to, the clock offset that continues the journal's time, the shoe's last durable
    event (None: none, or a damaged journal: the shoe's reader starts without one), and what
    happened (``resumed``: a round in play, awaiting the dealer's check;
    ``voided``: the round id voided and why)."""

    loop: TableLoop
    journal: TableJournal
    clock_offset: float
    shoe: tuple[int, int] | None
    resumed: str | None = None
    voided: tuple[str, str] | None = None
    replayed: int = 0
    warnings: list[str] = field(default_factory=list)


def open_table(
    directory: str | os.PathLike[str],
    config: dict[str, Any],
    rules_spec: Any,
    make_loop: LoopFactory,
    new_prefix: str,
    *,
    recording: RestartRecording | None = None,
    cannot_resend: bool = False,
    now: float,
) -> Resumed:
    """Open the table's journal in ``directory`` and rebuild the table from it.

    No journal: a fresh loop numbering rounds from ``new_prefix``. Otherwise its inputs are
    replayed through a loop recording into memory, and the rounds the replay begins are handed
    to ``recording`` (its store continues a round it holds part of, records what it lacks,
    exports what ended, and returns each disagreement, raised here as an alarm), with the
    alarms raised after the checkpoint (the store writes those the live table raised too and it
    lacks). A round left in play is resumed (:class:`~dealer_assist.table.sources.RoundResumed`: the
    dealer confirms the felt), or voided with a record of every bet and card, and an alarm,
    where it cannot be trusted: the configuration (``config``: rules, shoe, program version)
    changed, the journal is damaged mid-file, or the shoe cannot resend what was drawn while
    the table was down (``cannot_resend``). Under a changed configuration the fresh table is
    begun only once ``recording`` has written what the restart handed it (RecordingError,
    naming what is not written, otherwise). ``now``: the runner clock's reading now
    (monotonic)."""
    path = Path(directory) / JOURNAL_NAME
    if not path.exists():
        loop = make_loop(rules_spec, new_prefix, 0)
        checkpoint = Checkpoint(config, new_prefix, t=now,
                                recorded=None if recording is None else _settled(recording))
        return Resumed(loop, TableJournal(path, checkpoint), 0.0, None)
    contents = read_journal(path)
    if contents.damaged:  # kept for whoever looks into it; the table goes on without its tail
        aside = path.with_name(f"{path.name}.damaged-{time.strftime('%Y%m%d-%H%M%S')}")
        shutil.copyfile(path, aside)
        log.error("the journal is damaged: a copy is kept as %s", aside)
    start = contents.checkpoint
    capture = MemoryRecorder()
    try:
        loop = make_loop(start.config.get("rules"), start.round_prefix, start.round_number)
    except ValueError as error:
        raise CodecError(f"{path}: its rules cannot be read any more: {error}") from None
    real = loop.recorder
    loop.recorder = capture
    loop.questions.asked = start.questions_asked
    for item in start.preamble():
        loop.handle(item, start.t)
    loop.shoe.restore(start.shoe_resend)
    shown = _show(loop, start.shown, path)
    if shown is not None and start.felt_left:  # as the live table was at the checkpoint
        left: Counter[tuple[Card | None, int | None]] = Counter()
        for card, seat, n in start.felt_left:
            left[(card, seat)] += n
        loop.camera.let_felt_pass(left)
    # The alarms raised after the checkpoint are raised again, in order, under the numbers they
    # had, so their acknowledgements are replayed too; the preamble's alarms stand for ones
    # raised before it, numbered otherwise, whose acknowledgements are not replayed (the
    # dealer acknowledges them again).
    base = start.alarms_raised
    if base is not None and loop.alarms_raised <= base:
        loop.number_alarms_on_from(base)
    else:
        base = None
    replayed = 0
    raised: list[Alarm] = []  # after the checkpoint
    for entry in contents.entries:
        if entry.alarms is not None and entry.alarms > loop.alarms_raised:
            loop.number_alarms_on_from(entry.alarms)  # live, alarms no input explains
        before = len(capture.alarms)
        if not entry.tick:
            for item in entry.inputs:
                if not isinstance(item, AcknowledgeAlarm) or (
                        base is not None and item.alarm_id > base):
                    _replay(loop, item, entry.t, entry.at)
                    replayed += 1
        loop.tick(entry.t, entry.at)
        raised.extend(capture.alarms[before:])
    loop.recorder = real
    changed = start.config != config
    why = None
    if loop.round_open:
        if changed:
            why = "the table's configuration changed while it was down"
        elif contents.damaged:
            why = "the table's journal is damaged: " + "; ".join(contents.warnings)
        elif cannot_resend:
            why = ("the shoe cannot resend cards drawn while the table was down (a plain ASCII "
                   "shoe)")
    rounds = capture.replayed()
    if why is not None and rounds and rounds[-1].round_id == loop.round_id:
        # to be voided: a longer copy the store holds (records a damaged journal lost, every
        # one acknowledged) is kept, so that the void record holds every bet and card
        rounds[-1] = replace(rounds[-1], voiding=True)
    problems = [] if recording is None else recording.reconcile(rounds, raised, start.recorded)
    # time goes on from the journal's last record, never back
    offset = contents.last_t - now + 0.001
    t = now + offset
    journal = TableJournal(path, start, contents.entries)
    # A damaged journal lost the shoe's events after the damage, which the shoe was told were
    # held and no longer keeps: its reader starts without a position (from the oldest event the
    # shoe still holds), not from one it would wait at for a resend that never comes.
    shoe = None if contents.damaged else contents.shoe
    result = Resumed(loop, journal, offset, shoe, replayed=replayed,
                     warnings=list(contents.warnings))
    for problem in problems:  # journaled: a later replay raises it under the same number
        _feed(journal, loop, RecordingFailed(problem), t)
    if loop.shoe.watched and not (loop.shoe.awaiting or loop.shoe.resent
                                  or loop.landings_to_record()):
        # nothing recorded while the link was down is left to line up (nor a landing still to
        # be recorded), and nothing watched while the table was down: what the shoe resends
        # now comes as a restart's resend does
        _feed(journal, loop, ShoeCaughtUp(), t)
    if loop.round_open:
        round_id = loop.round_id or "?"
        if why is not None:
            _feed(journal, loop, VoidRound(f"the table restarted and cannot resume the round: "
                                           f"{why}"), t)
            result.voided = (round_id, why)
        else:
            _feed(journal, loop, RoundResumed(
                f"the table restarted in round {round_id}: rebuilt from its journal"), t)
            result.resumed = round_id
    if loop.round_id is not None and not loop.round_open and loop.fold is not None:
        # the settled round shown (kept by the checkpoint, or replayed): the camera starts again
        _feed(journal, loop, ShownAfterRestart(loop.round_id), t)
    if changed and loop.round_open:
        # inputs that waited behind the voided round's question (a bet) began another, which
        # the fresh table cannot carry over: void it too, with a record of what it held
        _feed(journal, loop, VoidRound(
            "the table restarted under a changed configuration: this round was begun by "
            "inputs that waited behind the round voided then"), t)
    if changed:
        if recording is not None:  # what the restart handed it (the void, alarms) is written
            _settled_or_refused(recording)
        fresh = make_loop(rules_spec, loop.round_prefix, loop.round_number)
        carried = Checkpoint.of(loop, config, shoe, t)
        if fresh.rules.decks != loop.rules.decks:  # another shoe: its count starts again
            carried = Checkpoint(config, loop.round_prefix, loop.round_number, {},
                                 carried.shoe_up, carried.camera_up, carried.camera_moved,
                                 shoe, t, carried.dealer, shown=carried.shown,
                                 questions_asked=carried.questions_asked,
                                 shoe_resend=carried.shoe_resend)
        if loop.disagreements():  # its payouts held: the fresh loop has not the alarms
            carried = replace(carried, shown=())
        # its alarms are numbered on from the old loop's (alarm ids never repeat), its
        # preamble's included, and the checkpoint says how far (a replay numbers on from there)
        fresh.number_alarms_on_from(loop.alarms_raised)
        fresh.questions.asked = loop.questions_asked
        for item in carried.preamble():
            fresh.handle(item, t)
        fresh.shoe.restore(loop.shoe.resend_state)
        shown_fresh = _show(fresh, carried.shown, path)
        carried = replace(carried, alarms_raised=fresh.alarms_raised)
        if recording is not None:  # and the fresh table's own alarms
            carried = replace(carried, recorded=_settled_or_refused(recording))
        journal.checkpoint(carried)
        result.loop = fresh
        if shown_fresh is not None:
            _feed(journal, fresh, ShownAfterRestart(shown_fresh), t)
    return result


def _felt_left(raw: Any) -> tuple[tuple[Card | None, int | None, int], ...]:
    """A checkpoint's ``felt_left``: a list of [card code or null, seat or null, count]."""
    if not isinstance(raw, list):
        raise CodecError(f"a checkpoint's 'felt_left' must be a list, got {str(raw)[:80]!r}")
    left = []
    for entry in raw:
        if not (isinstance(entry, list) and len(entry) == 3
                and (entry[0] is None or isinstance(entry[0], str))
                and (entry[1] is None or type(entry[1]) is int)
                and type(entry[2]) is int and entry[2] > 0):
            raise CodecError(f"a checkpoint's 'felt_left' holds {str(entry)[:80]!r}, not "
                             "[card, seat, count]")
        try:
            card = None if entry[0] is None else Card.parse(entry[0])
        except ValueError as error:
            raise CodecError(f"a checkpoint's 'felt_left': {error}") from None
        left.append((card, entry[1], entry[2]))
    return tuple(left)


def _show(loop: TableLoop, shown: tuple[str, ...], path: Path) -> str | None:
    """Show the ended round a checkpoint kept, if any (see :meth:`TableLoop.show_ended_round`):
    its id, or None."""
    if not shown:
        return None
    try:
        loop.show_ended_round(list(shown))
    except ValueError as error:  # the round is in the store: only the screen goes without
        log.warning("%s: the ended round the screen showed cannot be shown again: %s", path,
                    error)
        return None
    return loop.round_id


def _replay(loop: TableLoop, item: TableInput, t: float, at: str | None) -> None:
    """Hand ``item`` to the loop as the runner did (at its journaled times): an input it raised
    on (a bug) was logged and passed over then, and is now."""
    try:
        loop.handle(item, t, at)
    except Exception:
        log.exception("replaying %r: the loop raised on it (as it did when it was live)", item)
        loop.updates += 1


def _feed(journal: TableJournal, loop: TableLoop, item: TableInput, t: float) -> None:
    """Journal ``item`` as the runner does (the UTC time now, the alarms raised before it),
    then hand it to ``loop``."""
    at = format_at(datetime.now(UTC))
    journal.append(JournalEntry(t, (item,), at=at, alarms=loop.alarms_raised))
    loop.handle(item, t, at)


def _settled(recording: RestartRecording) -> RecordedUpTo | None:
    """How far ``recording`` has got once all handed to it is written (None, logged: unknown)."""
    recorded = recording.recorded_up_to()
    if recorded is None:
        log.warning("the recording has not written what it was handed: a restart from this "
                    "checkpoint will not write alarms the store lacks")
    return recorded


def _settled_or_refused(recording: RestartRecording) -> RecordedUpTo:
    """How far ``recording`` has got once all handed to it is written; RecordingError, naming
    what is not written, where it is not: a table starting under a changed configuration
    checkpoints its fresh loop only past what the restart recorded (the journal keeps it)."""
    recorded = recording.recorded_up_to()
    if recorded is None:
        raise RecordingError(
            f"{recording.unwritten()}: the table starts under its changed configuration only "
            "once the recording has written what the restart handed it (the round voided by "
            "the change, its alarms); the journal keeps them: start it again then")
    return recorded


def _resend_json(state: ResendState) -> dict[str, Any]:
    return {"watched": state.watched, "down_round": state.down_round,
            "awaiting": [[None if r.card is None else r.card.code, r.round_id]
                         for r in state.awaiting],
            "resent": [encode_input(item) for item in state.resent],
            "voided": list(state.voided)}


def _resend_state(raw: Any) -> ResendState:
    """A checkpoint's ``shoe_resend``: ``{"watched", "down_round", "awaiting": [[card code or
    null, round id or null], ...], "resent": [shoe inputs], "voided": [round ids]}``, each
    part optional."""
    where = "a checkpoint's 'shoe_resend'"
    if not isinstance(raw, dict):
        raise CodecError(f"{where} must be an object, got {str(raw)[:80]!r}")
    watched, down_round = raw.get("watched", False), raw.get("down_round")
    awaiting, resent = raw.get("awaiting", []), raw.get("resent", [])
    voided = raw.get("voided", [])
    if type(watched) is not bool or not (down_round is None or isinstance(down_round, str)) \
            or not isinstance(awaiting, list) or not isinstance(resent, list) \
            or not (isinstance(voided, list) and all(isinstance(r, str) for r in voided)):
        raise CodecError(f"{where} is not a resend's state: {str(raw)[:80]!r}")
    records = []
    for entry in awaiting:
        if not (isinstance(entry, list) and len(entry) == 2
                and (entry[0] is None or isinstance(entry[0], str))
                and (entry[1] is None or isinstance(entry[1], str))):
            raise CodecError(f"{where} records {str(entry)[:80]!r}, not [card, round]")
        try:
            records.append(Recorded(None if entry[0] is None else Card.parse(entry[0]), entry[1]))
        except ValueError as error:
            raise CodecError(f"{where}: {error}") from None
    items: list[Resent] = []
    for entry in resent:
        item = decode_input(entry)
        if not isinstance(item, ShoeCard | ShoeUnread | NewShoe | ShoeBurn):
            raise CodecError(f"{where} holds what a shoe does not resend: {str(entry)[:80]!r}")
        items.append(item)
    return ResendState(watched, down_round, tuple(records), tuple(items), tuple(voided))


def _recorded(raw: Any) -> RecordedUpTo:
    """A checkpoint's ``recorded``."""
    try:
        return RecordedUpTo.from_json(raw)
    except ValueError as error:
        raise CodecError(f"a checkpoint's 'recorded': {error}") from None
