"""The anchor log: chain heads written down outside the recording, append-only.

One JSON object a line::

    {"v": 1, "at": "...Z", "chain": CHAIN-ID, "recording": "/abs/dir", "table": "T1",
     "seq": 57, "hash": "...", "signature": "KEYID:BASE64", "why": "round end"}

The table appends a line (and fsyncs it) when it opens the recording, at every round end and
when it closes. ``replay --verify --anchor-log FILE`` then finds a chain cut short (an anchored
record gone), rewritten (an anchored hash changed) or replaced (the log names heads of another
chain for this recording). Each line carries the head record's signature, so a line written by
someone without the table's key does not verify. The log must live where whoever can write the
recording cannot rewrite it (another directory and owner; better, another machine).
"""

from __future__ import annotations

import fcntl
import json
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dealer_assist.durable import open_plain

MAX_LINE = 4096  # an anchor line is ~300 bytes; a longer one is not one


class AnchorLogError(ValueError):
    """An anchor log that cannot be written or read: names the file and why."""


@dataclass(frozen=True, slots=True)
class Anchor:
    """One line of the anchor log: the head of ``chain`` at ``recording`` when written."""

    line: int
    at: str
    chain: str
    recording: str
    table: str | None
    seq: int
    hash: str
    signature: str | None
    why: str

    def to_json(self) -> dict[str, Any]:
        return {"v": 1, "at": self.at, "chain": self.chain, "recording": self.recording,
                "table": self.table, "seq": self.seq, "hash": self.hash,
                "signature": self.signature, "why": self.why}


def recording_name(directory: Path) -> str:
    """How the anchor log names a recording directory: its absolute path."""
    return str(directory.resolve())


class AnchorLog:
    """An append-only anchor log file (created with its folder at the first line)."""

    def __init__(self, path: Path | str):
        self.path = Path(path)

    def append(self, anchor: Anchor) -> None:
        """Add one line, durably, under an exclusive lock (tables may share a log)."""
        text = json.dumps(anchor.to_json(), sort_keys=True, ensure_ascii=False) + "\n"
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            descriptor = open_plain(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
            try:
                fcntl.flock(descriptor, fcntl.LOCK_EX)
                os.write(descriptor, text.encode())
                os.fsync(descriptor)
            finally:
                os.close(descriptor)
        except OSError as error:
            raise AnchorLogError(f"anchor log {self.path}: cannot append: "
                                 f"{error.strerror or error}") from None

    def read(self) -> tuple[list[Anchor], list[str]]:
        """Every readable line, and what is wrong with each line that is not one."""
        anchors: list[Anchor] = []
        problems: list[str] = []
        for number, line in self._lines():
            try:
                anchors.append(_anchor(number, line))
            except (ValueError, TypeError, KeyError) as error:
                problems.append(f"anchor log {self.path} line {number} is not an anchor "
                                f"({error}): altered?")
        return anchors, problems

    def _lines(self) -> Iterator[tuple[int, str]]:
        try:
            with open(self.path, "rb") as handle:
                for number, raw in enumerate(handle, 1):
                    if raw.strip():
                        if len(raw) > MAX_LINE:
                            yield number, "{}"  # reported as not an anchor, not read whole
                            continue
                        yield number, raw.decode("utf-8", "replace")
        except FileNotFoundError:
            return
        except OSError as error:
            raise AnchorLogError(f"anchor log {self.path}: cannot read: "
                                 f"{error.strerror or error}") from None

    def chains_named(self, directory: Path) -> dict[str, Anchor]:
        """The chains the log names for a recording directory, each with its latest head."""
        name = recording_name(directory)
        latest: dict[str, Anchor] = {}
        for anchor in self.read()[0]:
            if anchor.recording == name:
                latest[anchor.chain] = anchor
        return latest


def _anchor(number: int, line: str) -> Anchor:
    data = json.loads(line)
    if not isinstance(data, dict) or data.get("v") != 1:
        raise ValueError("not a version 1 anchor object")
    seq, digest = data["seq"], data["hash"]
    if not isinstance(seq, int) or isinstance(seq, bool) or seq < 0:
        raise ValueError(f"seq {seq!r} is not a record number")
    if not isinstance(digest, str) or len(digest) != 64:
        raise ValueError(f"hash {digest!r:.80} is not 64 hex digits")
    signature = data.get("signature")
    return Anchor(number, str(data.get("at", "")), str(data["chain"]), str(data["recording"]),
                  None if data.get("table") is None else str(data["table"]), seq, digest,
                  None if signature is None else str(signature), str(data.get("why", "")))
