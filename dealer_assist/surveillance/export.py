"""The round-log files, exported from the recording store: what ``dealer-assist settle`` reads.

A table's rounds live in its store; ``rounds/<round-id>.jsonl`` (a settled round) and
``void/<round-id>.jsonl`` with ``void/<round-id>.reason.txt`` (a voided one) are written from the
store's records of the round, read back out of it, so files and store cannot disagree: each line
of a file is the body of one of the round's ``round``/``event`` records, in chain order. Where
the store holds a round id more than once (a copy a correction or a restart superseded, marked
partial), the latest copy is the round. A round still open, or cut short and never resumed, has
no file. A file is replaced (written aside, fsync'd, renamed over) only when it differs.
"""

from __future__ import annotations

import json
import logging
import os
from dataclasses import dataclass, field
from pathlib import Path

from dealer_assist.durable import create_new, fsync_dir
from dealer_assist.surveillance.interface import RecordStore
from dealer_assist.surveillance.replay import DamagedRoundError, RoundData, load_round

log = logging.getLogger(__name__)


def void_reason(data: RoundData) -> str | None:
    """Why the round was voided (its ``partial`` record's ``void``), or None: not voided."""
    for note in reversed(data.notes):
        try:
            body = json.loads(note.body_text)
        except ValueError:
            continue
        if isinstance(body, dict) and isinstance(body.get("void"), str):
            return str(body["void"])
    return None


#: The longest round id a file name holds (``ID.reason.txt`` within a file system's 255 bytes)
MAX_FILE_ID = 240


def file_name_problem(round_id: str) -> str | None:
    """Why ``round_id`` cannot name a file in ``rounds/`` or ``void/`` (None: it can): a round
    id is the recording's text, so one that would lead out of the folder (a ``/``), or that no
    file name holds (a NUL, not UTF-8, over :data:`MAX_FILE_ID` bytes), is never made a path."""
    try:
        size = len(round_id.encode("utf-8"))
    except UnicodeEncodeError:
        size = MAX_FILE_ID + 1
    if "/" in round_id or "\0" in round_id or size > MAX_FILE_ID:
        return "its id cannot be a file name (it holds a '/' or a NUL, is not UTF-8 or is too long)"
    return None


@dataclass(frozen=True, slots=True)
class RoundFile:
    """One round's export: its id, whether it is voided (``reason``) or settled, its lines."""

    round_id: str
    lines: tuple[str, ...]
    reason: str | None = None  # voided: why

    def paths(self, directory: Path) -> dict[Path, str]:
        """The files (under ``directory``) and their text; ValueError for an id that is not a
        file name (:func:`file_name_problem`)."""
        problem = file_name_problem(self.round_id)
        if problem is not None:
            raise ValueError(f"round {self.round_id!r:.80}: {problem}")
        text = "\n".join(self.lines) + "\n"
        if self.reason is None:
            return {directory / "rounds" / f"{self.round_id}.jsonl": text}
        return {directory / "void" / f"{self.round_id}.jsonl": text,
                directory / "void" / f"{self.round_id}.reason.txt": self.reason + "\n"}


def round_file(data: RoundData) -> RoundFile | None:
    """What round ``data`` exports as: settled or voided, else None (open, cut short)."""
    if data.round_id is None:
        return None
    lines = tuple(data.log_lines())
    if data.settlement is not None:
        return RoundFile(data.round_id, lines)
    reason = void_reason(data)
    return None if reason is None else RoundFile(data.round_id, lines, reason)


def latest_round(store: RecordStore, round_id: str) -> RoundData | None:
    """The latest copy the store holds of ``round_id`` (None: none)."""
    keys = store.round_keys(round_id)
    return load_round(store, keys[-1]) if keys else None


def write_round_file(directory: Path, export: RoundFile) -> list[Path]:
    """Write ``export``'s files under ``directory`` where missing or different; the paths
    written. Each is written aside, fsync'd and renamed over, its folder fsync'd."""
    written = []
    for path, text in export.paths(directory).items():
        try:
            if path.read_text(encoding="utf-8") == text:
                continue
            log.warning("%s differs from the store's round %s: written again from the store",
                        path, export.round_id)
        except FileNotFoundError:
            pass
        path.parent.mkdir(parents=True, exist_ok=True)
        aside = path.with_name(path.name + ".new")
        with os.fdopen(create_new(aside), "w", encoding="utf-8") as handle:  # never a link
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(aside, path)
        fsync_dir(path.parent)
        written.append(path)
    return written


@dataclass(slots=True)
class ExportReport:
    """What :func:`export_rounds` did: rounds written, found already equal, not exported
    (open, cut short, or unreadable: each named with why), and refused: an id that cannot be a
    file name (:func:`file_name_problem`) or that more than one table recorded, named with
    why."""

    written: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)


def export_rounds(store: RecordStore, directory: Path, table: str | None = None, *,
                  missing_only: bool = False) -> ExportReport:
    """Export every settled or voided round of the store (of ``table``; None: every table)
    into ``directory``'s ``rounds/`` and ``void/``; ``missing_only``: only rounds with no file
    there yet (a table's start, which redoes an export a crash cut short)."""
    report = ExportReport()
    latest: dict[str, int] = {}
    tables: dict[str, set[str]] = {}
    for row in store.indexed_rounds():
        if row.round_id is not None and (table is None or row.table == table):
            latest[row.round_id] = max(row.round_key, latest.get(row.round_id, 0))
            tables.setdefault(row.round_id, set()).add(str(row.table))
    there: set[str] = set()
    if missing_only:
        for sub in ("rounds", "void"):
            folder = directory / sub
            if folder.is_dir():
                there.update(name.removesuffix(".jsonl") for name in os.listdir(folder))
    for round_id, key in sorted(latest.items(), key=lambda item: item[1]):
        if round_id in there:
            continue
        problem = file_name_problem(round_id)
        if problem is None and len(tables[round_id]) > 1:  # one file would hide the other
            problem = (f"tables {', '.join(sorted(tables[round_id]))} each recorded a round of "
                       "this id: export one table at a time")
        if problem is not None:
            report.refused.append(f"round {round_id!r:.80} (#{key}): {problem}")
            continue
        try:
            data = load_round(store, key)
        except DamagedRoundError as error:
            report.skipped.append(f"{round_id}: {error.why}")
            continue
        export = None if data is None else round_file(data)
        if export is None:
            report.skipped.append(f"{round_id}: {data.status if data else 'missing'}, not ended")
        elif write_round_file(directory, export):
            report.written.append(round_id)
        else:
            report.unchanged.append(round_id)
    return report
