"""The cuts the room's retention recorded: which records of each ingested chain its
``floor-prune`` records say were deleted on purpose, and what the record after each hole must
link to. Verification (the live room, ``room verify``) walks a chain across a hole only where
these explain it; a prune record not signed by the room's key (:mod:`.room_signing`), or
altered (its hash, or its links in the room's chain, do not hold), explains nothing, so its
holes are gaps again.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from dealer_assist.floor.room_signing import RoomSeal
from dealer_assist.surveillance.interface import RecordStore
from dealer_assist.surveillance.signing import PublicKey
from dealer_assist.surveillance.store import GENESIS_HASH, Record, hash_holds

PRUNE = "floor-prune"


@dataclass
class ChainCuts:
    """One chain's recorded cuts: the records deleted (merged runs, first to last) and, for
    the first record after each hole, the hash of the record before it."""

    deleted: list[tuple[int, int]] = field(default_factory=list)
    links: dict[int, str] = field(default_factory=dict)

    def add(self, below: int, kept: list[tuple[int, int]]) -> None:
        """Records 1 to ``below`` - 1 deleted but the ``kept`` runs."""
        start = 1
        for first, last in sorted(kept):
            if first > start:
                self.deleted.append((start, min(first, below) - 1))
            start = max(start, last + 1)
        if start < below:
            self.deleted.append((start, below - 1))

    def merge(self) -> None:
        runs: list[tuple[int, int]] = []
        for first, last in sorted(self.deleted):
            if runs and first <= runs[-1][1] + 1:
                runs[-1] = (runs[-1][0], max(runs[-1][1], last))
            else:
                runs.append((first, last))
        self.deleted = runs

    def explains(self, first: int, last: int) -> bool:
        """Whether records ``first`` to ``last`` were all deleted by recorded cuts."""
        at = bisect.bisect_right(self.deleted, (first, float("inf"))) - 1
        return at >= 0 and self.deleted[at][0] <= first and last <= self.deleted[at][1]


@dataclass
class RecordedCuts:
    """Every chain's recorded cuts, by (box, chain); ``problems``: the prune records that
    explain nothing (altered); ``newest``: the newest prune record read (its seq)."""

    chains: dict[tuple[str, str], ChainCuts] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    newest: int = 0

    def across(self, box: str, chain: str, first: int, after: int) -> str | None:
        """The hash record ``after`` must link to when records ``first`` to ``after`` - 1 of
        the chain are a recorded cut; None when they are not (a gap)."""
        cuts = self.chains.get((box, chain))
        if cuts is None or first >= after or not cuts.explains(first, after - 1):
            return None
        return cuts.links.get(after)


def recorded_cuts(store: RecordStore, keys: Sequence[PublicKey] | None = None) -> RecordedCuts:
    """The cuts the room's own chain records (its ``floor-prune`` records that cut records;
    those that pruned frames only cut none), each trusted only signed by the room's key:
    one of ``keys`` (None: the key ``store`` signs with)."""
    found = RecordedCuts()
    seal: RoomSeal | None = None
    for record in store.records(kinds=(PRUNE,)):
        found.newest = record.seq
        body = record.object_body()
        if "chains" not in body:
            continue
        seal = seal or RoomSeal.of(store, keys)
        why = _untrusted(store, record) or seal.why_untrusted(record)
        if why is None:
            try:
                for item in body["chains"]:
                    cuts = found.chains.setdefault((str(item["box"]), str(item["chain"])),
                                                   ChainCuts())
                    cuts.add(_number(item["below"]),
                             [(_number(a), _number(b)) for a, b in item["kept"]])
                    cuts.links.update({_number(int(seq)): str(value)
                                       for seq, value in item["links"].items()})
            except (KeyError, TypeError, ValueError, AttributeError):
                why = "does not say what it cut"
        if why is not None:
            found.problems.append(f"the room's {record.describe()} {why}: the holes it "
                                  "would explain are gaps")
    for cuts in found.chains.values():
        cuts.merge()
    return found


def _number(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"not a record number: {value!r}")
    return value


def _untrusted(store: RecordStore, record: Record) -> str | None:
    """Why a prune record cannot be trusted (its hash, or the room's chain around it, does not
    hold), or None."""
    if not hash_holds(record):
        return "was altered (its content does not match its hash)"
    before = store.record(record.seq - 1) if record.seq > 1 else None
    if (before.hash if before is not None else GENESIS_HASH if record.seq == 1 else None) \
            != record.prev_hash:
        return "does not link to the record before it in the room's chain"
    after = store.record(record.seq + 1)
    if after is not None and after.prev_hash != record.hash:
        return "is not the record the next one in the room's chain links to"
    return None
