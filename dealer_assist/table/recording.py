"""Recording a table's rounds and alarms as files: one JSON Lines round log per round.

``<dir>/rounds/<round-id>.jsonl`` holds exactly what ``dealer-assist settle`` reads;
``<dir>/void/<round-id>.jsonl`` holds voided rounds (with a ``.reason.txt`` beside each);
``<dir>/alarms.jsonl`` holds every alarm, one JSON object a line. Files are flushed and fsync'd
as each round ends, so a power cut loses at most the round in play.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from dealer_assist.rules import Settlement
from dealer_assist.table.loop import Alarm


class RecordingError(ValueError):
    """The recording directory cannot be used (names the path and why)."""


def _write_synced(path: Path, text: str, mode: str = "w") -> None:
    with open(path, mode, encoding="utf-8") as handle:
        handle.write(text)
        handle.flush()
        os.fsync(handle.fileno())


class FileRecorder:
    """Writes finished rounds, voided rounds and alarms under ``directory``."""

    def __init__(self, directory: str | os.PathLike[str]):
        self.directory = Path(directory)
        try:
            for sub in ("rounds", "void"):
                (self.directory / sub).mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise RecordingError(f"recording directory {self.directory}: {error}") from None
        self.rounds_written: list[Path] = []

    def write_round(self, round_id: str, lines: list[str], settlement: Settlement) -> None:
        path = self.directory / "rounds" / f"{round_id}.jsonl"
        _write_synced(path, "\n".join(lines) + "\n")
        self.rounds_written.append(path)

    def write_void(self, round_id: str, lines: list[str], reason: str) -> None:
        _write_synced(self.directory / "void" / f"{round_id}.jsonl", "\n".join(lines) + "\n")
        _write_synced(self.directory / "void" / f"{round_id}.reason.txt", reason + "\n")

    def write_alarm(self, alarm: Alarm) -> None:
        _write_synced(self.directory / "alarms.jsonl", json.dumps(alarm.to_json()) + "\n", "a")


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
