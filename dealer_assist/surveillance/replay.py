"""Replay: rebuild rounds from a recording, re-settle them, compare, and verify the hash chain.

A :class:`Discrepancy` names the record, round, seat, hand, amount or card that differs; replay is
clean when there are none. Re-detection is a pluggable callable (``bytes -> card codes``) so the
vision module's detector can be plugged in without surveillance importing OpenCV.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from dealer_assist.roundlog import (
    EventError,
    LogError,
    RoundFold,
    RoundStart,
    read_events,
)
from dealer_assist.rules import RoundError
from dealer_assist.surveillance.anchors import AnchorLog
from dealer_assist.surveillance.discrepancy import Discrepancy
from dealer_assist.surveillance.evidence_check import (
    Findings,
    OperatorWalk,
    SignatureWalk,
    TrustedKeys,
    check_anchor_log,
)
from dealer_assist.surveillance.frame_files import frame_state
from dealer_assist.surveillance.interface import RecordStore
from dealer_assist.surveillance.store import (
    FRAMES_DIR,
    GENESIS_HASH,
    INDEX_NAME,
    MAX_INTEGER,
    DamagedRecordingError,
    Record,
    UnfindableRoundError,
    Unreadable,
    UnreadableRecordError,
    canonical_bytes,
    chain_hash,
)

Redetector = Callable[[bytes], Sequence[str]]
"""A key frame's bytes -> the card codes seen in it; raises ValueError when they are not a whole
image."""


@dataclass(frozen=True, slots=True)
class RoundData:
    """Everything recorded for one round, in chain order."""

    key: int
    round_id: str | None
    table: str | None
    status: str
    start: Record
    events: tuple[Record, ...]  # the round line is events[0]
    frames: tuple[Record, ...]
    alarms: tuple[Record, ...]
    screens: tuple[Record, ...]
    settlement: Record | None
    notes: tuple[Record, ...]

    def log_lines(self) -> list[str]:
        """The round log as JSON Lines (the round line first)."""
        return [record.body_text for record in self.events]


@dataclass
class RoundReplay:
    """The outcome of replaying one round."""

    key: int
    round_id: str | None
    table: str | None
    status: str
    replayed: dict[str, Any] | None = None
    discrepancies: list[Discrepancy] = field(default_factory=list)
    frames_checked: int = 0

    def to_json(self) -> dict[str, Any]:
        return {
            "round_key": self.key, "round": self.round_id, "table": self.table,
            "status": self.status, "frames_checked": self.frames_checked,
            "discrepancies": [d.to_json() for d in self.discrepancies],
        }


class DamagedRoundError(DamagedRecordingError):
    """A round some of whose records SQLite cannot read (damaged pages of the database)."""

    def __init__(self, store: RecordStore, key: int, readable: list[Record], why: str,
                 seq: int | None = None):
        self.key, self.seq = key, seq
        self.round_id = next((r.round_id for r in readable if r.round_id is not None), None)
        self.table = next((r.table for r in readable if r.table is not None), None)
        self.why = why
        named = f"round #{key}" if self.round_id is None else f"round {self.round_id} (#{key})"
        super().__init__(f"{named}: {why}; run 'dealer-assist replay --verify' on it",
                         store.location)


def load_round(store: RecordStore, key: int) -> RoundData | None:
    """Assemble one round's records; None when the recording has no such round.

    Raises :class:`DamagedRoundError` when some of them cannot be read.
    """
    try:
        found = store.round_records(key)
    except UnfindableRoundError as error:
        raise DamagedRoundError(store, key, [], error.why) from None
    records = [record for record in found if isinstance(record, Record)]
    unreadable = [record for record in found if isinstance(record, Unreadable)]
    if unreadable:
        raise DamagedRoundError(store, key, records, _unreadable_text(unreadable),
                                unreadable[0].seq)
    return assemble_round(key, records)


def assemble_round(key: int, records: Sequence[Record]) -> RoundData | None:
    """One round from its records in chain order (None: no ``round`` record among them)."""
    starts = [r for r in records if r.kind == "round"]
    if not starts:
        return None
    start = starts[0]
    by_kind: dict[str, list[Record]] = {}
    for record in records:
        by_kind.setdefault(record.kind, []).append(record)
    settlements = by_kind.get("settlement", [])
    partial = by_kind.get("partial", [])
    status = "settled" if settlements else "partial" if partial else "open"
    return RoundData(
        key=key, round_id=start.round_id, table=start.table, status=status, start=start,
        events=(start, *by_kind.get("event", [])), frames=tuple(by_kind.get("frame", [])),
        alarms=tuple(by_kind.get("alarm", [])), screens=tuple(by_kind.get("screen", [])),
        settlement=settlements[-1] if settlements else None, notes=tuple(partial),
    )


def _unreadable_text(unreadable: Sequence[Unreadable]) -> str:
    """``records 84 to 93 cannot be read from index.sqlite (...)`` for a run of them."""
    first, last = unreadable[0].seq, unreadable[-1].seq
    which = f"record {first}" if first == last else f"records {first} to {last}"
    if len(unreadable) != last - first + 1:
        which = "records " + ", ".join(str(u.seq) for u in unreadable)
    return f"{which} cannot be read from {INDEX_NAME} ({unreadable[0].error})"


def round_keys(store: RecordStore, round_id: str | None = None) -> list[int]:
    """Keys of every round, or of the rounds whose id is ``round_id`` (or ``#KEY``)."""
    if round_id is not None and round_id.startswith("#") and round_id[1:].isascii() \
            and round_id[1:].isdigit():
        key = int(round_id[1:]) if len(round_id) <= 20 else MAX_INTEGER + 1
        return [key] if key <= MAX_INTEGER else []
    return store.round_keys(round_id)


# -- the hash chain -----------------------------------------------------------------------------


class RecordWalk(Protocol):
    """Something that sees every readable record as the chain walk reads it."""

    def see(self, record: Record) -> None: ...


class ChainLinks:
    """Checks that records seen in chain order are numbered from 1 without a hole, each linked
    to the one before and matching its own hash (a :class:`RecordWalk`)."""

    def __init__(self, missing: str = "deleted") -> None:
        self.missing = missing  # why records may be missing, as the report says it
        self.problems: list[Discrepancy] = []
        self.expected_seq = 1
        self.prev_hash: str | None = GENESIS_HASH  # None: the record before could not be read

    def lost(self, seq: int) -> None:
        """Record ``seq`` is held but cannot be read: no link to check across it."""
        self.expected_seq, self.prev_hash = seq + 1, None

    def see(self, record: Record) -> None:
        where = _where(record)
        if record.seq != self.expected_seq:
            self.problems.append(Discrepancy(
                "chain", f"records {self.expected_seq} to {record.seq - 1} are missing "
                f"({self.missing})", **where))
        if self.prev_hash is not None and record.prev_hash != self.prev_hash:
            self.problems.append(Discrepancy(
                "chain", f"{record.describe()} does not link to the record before it "
                f"(a record before it was altered, removed or inserted)", **where))
        try:
            actual = chain_hash(record.prev_hash, canonical_bytes(record))
        except ValueError as error:
            actual = f"unreadable: {error}"
        if actual != record.hash:
            self.problems.append(Discrepancy(
                "chain", f"{record.describe()} was altered: its content does not match its hash",
                recorded=record.hash, replayed=actual, **where))
        self.expected_seq = record.seq + 1
        self.prev_hash = record.hash


def verify_chain(store: RecordStore, walks: Sequence[RecordWalk] = ()
                 ) -> tuple[list[Discrepancy], int]:
    """Check the database's own integrity, every record's link and hash, and every frame file's
    SHA-256; each of ``walks`` sees every record read (signatures, operators).

    Returns the discrepancies and the number of records checked. A frame file that is missing is
    fine only if a chained ``prune`` record says it was pruned. Records SQLite cannot read are
    named, and the walk goes on past them.
    """
    problems = _database_check(store)
    links = ChainLinks()
    pruned: set[int] = set()
    frames: list[Record] = []
    unreadable: list[Unreadable] = []
    count = 0
    for record in store.scan():
        if isinstance(record, Unreadable):
            unreadable.append(record)
            links.lost(record.seq)
            continue
        count += 1
        links.see(record)
        if record.kind == "prune":
            pruned |= pruned_by(record)
        if record.kind == "frame":
            frames.append(record)
        for walk in walks:
            walk.see(record)
    problems.extend(links.problems)
    for run in _runs(unreadable):
        problems.append(Discrepancy("database", _unreadable_text(run), seq=run[0].seq))
    for record in frames:
        problems.extend(_check_frame_file(store, record, record.seq in pruned))
    return problems, count


def pruned_by(record: Record) -> set[int]:
    """The frame records a chained ``prune`` record says retention deleted (none where its body
    does not say so readably)."""
    try:
        return {int(seq) for seq in json.loads(record.body_text).get("frames", [])}
    except (ValueError, AttributeError, TypeError):
        return set()


def _runs(unreadable: list[Unreadable]) -> list[list[Unreadable]]:
    """Unreadable records in runs of consecutive numbers."""
    runs: list[list[Unreadable]] = []
    for item in unreadable:
        if runs and runs[-1][-1].seq == item.seq - 1:
            runs[-1].append(item)
        else:
            runs.append([item])
    return runs


def verify_index(store: RecordStore) -> list[Discrepancy]:
    """Compare the search index (derived, never evidence) with one rebuilt from the records:
    searches, statistics and retention read it, so rows missing, added or altered there are
    reported. Nothing is compared while records cannot be read (:func:`verify_chain` names them).
    A table recording meanwhile appends records after the walk over them: the comparison is made
    again while the chain grows, and if it keeps growing only the rows of the records walked are
    compared (frames and alarms up to the last record read, rounds up to the last one closed; a
    row past them whose records are gone is still reported)."""
    for _ in range(3):
        before = store.last_seq()
        found = _verify_index_once(store, whole=True)
        if store.last_seq() == before:
            return found
    return _verify_index_once(store, whole=False)


def _verify_index_once(store: RecordStore, whole: bool) -> list[Discrepancy]:
    return [Discrepancy("index", what) for what in store.index_mismatches(whole)]


def unrecorded_files(store: RecordStore) -> list[str]:
    """Frame files on disk that no record names: the frame written as the recorder was killed
    (it writes the file, then its record), or files whose records were deleted."""
    named = store.named_files()
    on_disk = (path.relative_to(store.directory).as_posix()
               for path in (store.directory / FRAMES_DIR).rglob("*")
               if path.is_file() and path.suffix != ".part")
    return sorted(name for name in on_disk if name not in named)


def _database_check(store: RecordStore) -> list[Discrepancy]:
    """SQLite's own check that its indexes agree with its tables. The chain walk reads the table
    itself, but replay finds rounds through indexes, and a damaged index hides them silently."""
    found = store.storage_problems(thorough=True)
    if not found:
        return []
    return [Discrepancy(
        "database", f"the index database fails SQLite's integrity check ({'; '.join(found)}):"
        " rounds found through a damaged index may be missing from this replay")]


def _where(record: Record) -> dict[str, Any]:
    return {"seq": record.seq, "round_key": record.round_key, "round_id": record.round_id,
            "table": record.table}


def _check_frame_file(store: RecordStore, record: Record, pruned: bool) -> list[Discrepancy]:
    where = _where(record)
    if record.file is None:
        return [Discrepancy("file", f"{record.describe()} names no file", **where)]
    state = frame_state(store.directory, record, pruned)
    if "refused" in state:
        return [Discrepancy("file", f"{record.file} of {record.describe()}: {state['refused']}",
                            **where)]
    if state["state"] == "missing" and pruned:  # retention deletes video frames only
        return [Discrepancy("file", f"{record.file} of {record.describe()} is a key frame, "
                            "which retention never deletes, yet a prune record names it: "
                            "deleted, with the record written to hide it", **where)]
    if state["state"] == "missing":
        return [Discrepancy("file", f"{record.file} of {record.describe()} is missing "
                            "and no prune record accounts for it", **where)]
    if state["state"] == "altered":
        return [Discrepancy("file", f"{record.file} of {record.describe()} was altered "
                            "(SHA-256 differs from the recorded one)",
                            recorded=record.sha256, replayed=state["sha256"], **where)]
    return []  # intact, or a video frame pruned


# -- re-settling --------------------------------------------------------------------------------


def replay_round(round_data: RoundData, redetect: Redetector | None = None,
                 store: RecordStore | None = None) -> RoundReplay:
    """Re-settle a round with today's engine and compare with what was recorded."""
    result = RoundReplay(round_data.key, round_data.round_id, round_data.table, round_data.status)
    where: dict[str, Any] = {"round_key": round_data.key, "round_id": round_data.round_id,
                             "table": round_data.table}
    fold: RoundFold | None = None
    refused = False
    for logged in _read_round(round_data, result, where):
        record = round_data.events[logged.line - 1]
        try:
            if fold is None:
                if not isinstance(logged.event, RoundStart):
                    raise EventError("the round's first record is not a 'round' event")
                fold = RoundFold(logged.event)
            else:
                fold.apply(logged.event)
        except (RoundError, EventError) as error:
            refused = True
            if round_data.status == "settled":
                result.discrepancies.append(Discrepancy(
                    "refused", f"event {logged.line - 1} {logged.text} is refused by today's "
                    f"engine: {error}", seq=record.seq, **where))
            break
    if round_data.settlement is not None and fold is not None and not refused:
        try:
            settlement = fold.settlement or fold.engine.settle()
        except RoundError as error:
            result.discrepancies.append(Discrepancy(
                "refused", f"today's engine cannot settle the recorded events: {error}",
                seq=round_data.settlement.seq, **where))
        else:
            result.replayed = settlement.to_json()
            recorded = _object(round_data.settlement.body_text)
            if recorded is None:
                result.discrepancies.append(Discrepancy(
                    "settlement", "the recorded settlement is not a JSON object (altered?)",
                    seq=round_data.settlement.seq, **where))
            else:
                result.discrepancies.extend(compare_settlements(
                    recorded, result.replayed, seq=round_data.settlement.seq, **where))
    if redetect is not None and store is not None:
        _redetect(round_data, redetect, store, result, where)
    return result


def _read_round(round_data: RoundData, result: RoundReplay, where: dict[str, Any]) -> Iterable[Any]:
    try:
        yield from read_events(round_data.log_lines())
    except LogError as error:
        if round_data.status == "settled":
            index = (error.line or 1) - 1
            result.discrepancies.append(Discrepancy(
                "refused", f"event {index} cannot be read: {error.why}",
                seq=round_data.events[index].seq, **where))


def compare_settlements(recorded: dict[str, Any], replayed: dict[str, Any],
                        **where: Any) -> list[Discrepancy]:
    """Money and cards that differ between a recorded and a replayed settlement."""
    found: list[Discrepancy] = []

    def differ(what: str, old: Any, new: Any, **at: Any) -> None:
        if old != new:
            found.append(Discrepancy("settlement", f"{what}: recorded {old}, replayed {new}",
                                     recorded=old, replayed=new, **where, **at))

    differ("round net", recorded.get("net"), replayed.get("net"))
    old_dealer, new_dealer = _mapping(recorded.get("dealer")), _mapping(replayed.get("dealer"))
    differ("dealer cards", old_dealer.get("cards"), new_dealer.get("cards"))
    old_seats = {_seat_key(s.get("seat")): s for s in _mappings(recorded.get("seats"))}
    new_seats = {_seat_key(s.get("seat")): s for s in _mappings(replayed.get("seats"))}
    for seat in sorted(set(old_seats) | set(new_seats), key=lambda s: (str(type(s)), s)):
        old, new = old_seats.get(seat), new_seats.get(seat)
        if old is None or new is None:
            differ("seat", "present" if old else "absent", "present" if new else "absent",
                   seat=seat)
            continue
        differ("seat net", old.get("net"), new.get("net"), seat=seat)
        for name in ("super_bonus", "envy", "match", "insurance"):
            differ(name.replace("_", " "), old.get(name), new.get(name), seat=seat)
        old_hands, new_hands = _mappings(old.get("hands")), _mappings(new.get("hands"))
        if len(old_hands) != len(new_hands):
            differ("number of hands", len(old_hands), len(new_hands), seat=seat)
        for hand, (old_hand, new_hand) in enumerate(zip(old_hands, new_hands, strict=False)):
            for name in ("cards", "outcome", "bonus", "wagered", "net"):
                differ(f"hand {name}", old_hand.get(name), new_hand.get(name), seat=seat,
                       hand=hand)
    return found


def _mapping(value: Any) -> dict[str, Any]:
    """A recorded JSON value where an object belongs: itself, or empty when it is not one (an
    altered record: the chain reports it; here its figures read as absent)."""
    return value if isinstance(value, dict) else {}


def _mappings(value: Any) -> list[dict[str, Any]]:
    """The objects in a recorded JSON value where a list of objects belongs."""
    return [item for item in value if isinstance(item, dict)] if isinstance(value, list) else []


def _seat_key(value: Any) -> int | str:
    return value if isinstance(value, int | str) else repr(value)


def _redetect(round_data: RoundData, redetect: Redetector, store: RecordStore,
              result: RoundReplay, where: dict[str, Any]) -> None:
    for frame in round_data.frames:
        body = _object(frame.body_text) or {}  # an unreadable body is the chain's to report
        index = body.get("event_index")
        if (not body.get("key", True) or frame.file is None
                or not isinstance(index, int) or not 0 <= index < len(round_data.events)):
            continue
        event = _object(round_data.events[index].body_text) or {}
        if event.get("type") not in ("card", "reveal") or not event.get("card"):
            continue
        path = store.directory / frame.file
        if not path.is_file():
            continue
        recorded = str(event["card"]).upper()
        try:
            seen = [code.upper() for code in redetect(path.read_bytes())]
        except ValueError as error:
            result.discrepancies.append(Discrepancy(
                "detection", f"event {index} recorded card {recorded}; its key frame "
                f"{frame.file} cannot be decoded: {error}", seq=frame.seq, recorded=recorded,
                **where))
            continue
        result.frames_checked += 1
        if recorded not in seen:
            result.discrepancies.append(Discrepancy(
                "detection", f"event {index} recorded card {recorded}"
                f"{entered_by_dealer(event)}; the detector now sees "
                f"{', '.join(seen) or 'no card'} in {frame.file}",
                seq=frame.seq, recorded=recorded, replayed=seen, **where))


def entered_by_dealer(event: dict[str, Any]) -> str:
    """What the dealer entered for a card event, in words, as " (...)" ('' when a reader
    recorded the card)."""
    if isinstance(event.get("corrected"), str):
        return f" (corrected by the dealer from {str(event['corrected']).upper()})"
    if event.get("keyed") is True:
        return " (keyed by the dealer: no reader saw it)"
    return ""


def _object(text: str) -> dict[str, Any] | None:
    """A record body as a JSON object, or None when it is not one."""
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):  # not JSON, nested too deep, or too many digits
        return None
    return value if isinstance(value, dict) else None


def vision_redetector(model: str | None = None) -> Redetector:
    """The vision module's detector as a re-detection callable.

    Raises :class:`RedetectUnavailable` saying why when the vision module or its model is absent.
    """
    try:
        from dealer_assist.image_files import decode_image
        from dealer_assist.vision.detector import CardDetector  # type: ignore
    except ImportError as error:
        raise RedetectUnavailable(
            f"re-detection needs the vision module (dealer_assist.vision) and OpenCV: {error}"
        ) from None
    try:
        detector = CardDetector(model) if model else CardDetector()
    except ValueError as error:
        raise RedetectUnavailable(f"the card detector cannot be loaded: {error}") from None

    def redetect(image: bytes) -> list[str]:
        return [observation.card for observation in detector.detect(decode_image(image))]

    return redetect


class RedetectUnavailable(RuntimeError):
    """Re-detection was asked for but no detector can be loaded here."""


@dataclass
class ReplayReport:
    """The whole replay: per-round results, chain verification and totals."""

    rounds: list[RoundReplay]
    chain: list[Discrepancy] | None
    index: list[Discrepancy] | None
    records_checked: int
    head_seq: int
    head_hash: str | None  # None: the last record cannot be read
    unrecorded_files: list[str] = field(default_factory=list)
    database: list[Discrepancy] = field(default_factory=list)  # e.g. the replay not logged
    #: signatures, anchors and operators (evidence_check.py); None: not verified
    evidence: list[Discrepancy] | None = None
    #: what a verifier must know though nothing failed (what vouches for the chain, what not)
    notices: list[str] = field(default_factory=list)

    @property
    def discrepancies(self) -> list[Discrepancy]:
        found = [*self.database, *(self.chain or []), *(self.evidence or []),
                 *(self.index or [])]
        for round_replay in self.rounds:
            found.extend(round_replay.discrepancies)
        return found

    def to_json(self) -> dict[str, Any]:
        return {
            "rounds": [r.to_json() for r in self.rounds],
            "verified": self.chain is not None,
            "records_checked": self.records_checked,
            "chain": [d.to_json() for d in self.chain or []],
            "index": [d.to_json() for d in self.index or []],
            "evidence": [d.to_json() for d in self.evidence or []],
            "notices": self.notices,
            "database": [d.to_json() for d in self.database],
            "head": {"seq": self.head_seq, "hash": self.head_hash},
            "unrecorded_files": self.unrecorded_files,
            "discrepancies": len(self.discrepancies),
            "clean": not self.discrepancies,
        }


def parse_anchor(text: str) -> tuple[int, str]:
    """``SEQ:HASH`` (a chain head written down earlier) -> (seq, hash)."""
    seq, _, digest = text.partition(":")
    digest = digest.strip().lower()
    if not seq.strip().isdigit() or len(digest) != 64 or not all(
        c in "0123456789abcdef" for c in digest
    ):
        raise ValueError(f"anchor {text!r} must be SEQ:HASH (a record number and 64 hex digits)")
    return int(seq), digest


def check_anchors(store: RecordStore, anchors: Sequence[tuple[int, str]]) -> list[Discrepancy]:
    """Heads noted outside the recording must still be in its chain, unchanged.

    This is what catches records cut off the end, or a chain rewritten after the anchor.
    """
    found = []
    for seq, digest in anchors:
        try:
            record = store.record(seq)
        except UnreadableRecordError as error:
            found.append(Discrepancy(
                "database", f"anchored record {seq} cannot be read from {INDEX_NAME} "
                f"({error.reason})",
                seq=seq, recorded=digest))
            continue
        if record is None:
            found.append(Discrepancy(
                "chain", f"anchored record {seq} is gone: the chain was cut short", seq=seq,
                recorded=digest))
        elif record.hash != digest:
            found.append(Discrepancy(
                "chain", f"{record.describe()} no longer has the anchored hash: the chain was "
                "rewritten", seq=seq, recorded=digest, replayed=record.hash))
    return found


def replay(store: RecordStore, *, round_id: str | None = None, verify: bool = False,
           redetect: Redetector | None = None,
           anchors: Sequence[tuple[int, str]] = (), trusted: TrustedKeys | None = None,
           anchor_log: AnchorLog | None = None) -> ReplayReport:
    """Replay the recording (or the rounds called ``round_id``), verifying the chain if asked.

    Verifying also checks every record's signature (with the ``trusted`` keys; None: with the
    key the chain names, which the report warns proves little), the operators against their
    records, and, where given, the ``anchor_log`` and the ``anchors``: (seq, hash) chain heads
    noted earlier outside the recording.
    """
    results = []
    for key in round_keys(store, round_id):
        try:
            data = load_round(store, key)
        except DamagedRoundError as error:
            results.append(RoundReplay(key, error.round_id, error.table, "unreadable", None, [
                Discrepancy("database", f"{error.why}: not re-settled", round_key=key,
                            round_id=error.round_id, table=error.table, seq=error.seq)]))
            continue
        if data is not None:
            results.append(replay_round(data, redetect, store))
    evidence: Findings | None = None
    chain: list[Discrepancy] | None = None
    checked = 0
    if verify:
        signatures, operators = SignatureWalk(trusted), OperatorWalk()
        chain, checked = verify_chain(store, (signatures, operators))
        chain.extend(check_anchors(store, anchors))
        evidence = _evidence(store, signatures, operators, anchor_log)
    index = verify_index(store) if verify else None
    try:
        head: tuple[int, str | None] = store.head()
    except DamagedRecordingError:
        head = (store.last_seq(), None)
    unrecorded = unrecorded_files(store) if verify else []
    return ReplayReport(results, chain, index, checked, *head, unrecorded,
                        evidence=None if evidence is None else evidence.problems,
                        notices=[] if evidence is None else evidence.notices)


def _evidence(store: RecordStore, signatures: SignatureWalk, operators: OperatorWalk,
              anchor_log: AnchorLog | None) -> Findings:
    found = signatures.finish()
    if signatures.incomplete:  # a signature failed: every record's, to name each that fails
        signatures = SignatureWalk(signatures.trusted, every=True)
        for record in store.scan():
            if isinstance(record, Record):
                signatures.see(record)
        found = signatures.finish()
    found.problems.extend(operators.finish(store).problems)
    if anchor_log is None:
        found.notices.append("no anchor log given (--anchor-log FILE): a chain cut short or a"
                             " recording replaced whole is not detected")
    else:
        anchored = check_anchor_log(store, anchor_log, signatures)
        found.problems.extend(anchored.problems)
        found.notices.extend(anchored.notices)
    return found
