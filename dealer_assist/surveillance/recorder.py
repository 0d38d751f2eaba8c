"""The recorder the live table calls: rounds, events, frames, alarms, screens, settlements.

Every call appends one chained record and returns when it is on disk. A crash loses nothing already
returned; on the next :meth:`Recorder.open` a round left open is kept and marked partial, and the
chain carries on from its last record. Opened with :class:`~.signed_chain.Evidence`, every record
is signed with the table's key and the chain's head is anchored when the recording opens, at every
round end and when it closes.
"""

from __future__ import annotations

import hashlib
import logging
import re
from collections.abc import Callable, Mapping
from datetime import datetime, timedelta
from pathlib import Path
from types import TracebackType
from typing import Any

from dealer_assist import __version__
from dealer_assist.image_headers import read_header
from dealer_assist.roundlog import (
    Bet,
    CardDealt,
    End,
    Event,
    Insurance,
    PlayerAction,
    Reveal,
    RoundStart,
    event_to_json,
)
from dealer_assist.rules import Settlement
from dealer_assist.surveillance.clock_state import clock_state
from dealer_assist.surveillance.interface import RecordStore
from dealer_assist.surveillance.signed_chain import (
    Evidence,
    anchor_head,
    begin_signing,
    rotate_key,
)
from dealer_assist.surveillance.signing import Signer
from dealer_assist.surveillance.store import (
    FRAMES_DIR,
    Clock,
    Record,
    RecordingError,
    RecordingStore,
    format_time,
    parse_time,
    utc_now,
)

#: A table's name (``fullmatch``): it is written into file names and the store's records.
TABLE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,31}")

logger = logging.getLogger(__name__)


class RecorderStateError(RecordingError):
    """A call out of order, e.g. an event with no round begun."""


_MEDIA = {"PNG": ("image/png", "png"), "JPEG": ("image/jpeg", "jpg")}


def image_info(data: bytes) -> tuple[str, str, int | None, int | None]:
    """Media type, file extension, width and height of JPEG or PNG bytes; refuses anything else."""
    header = read_header(data)
    if header.kind not in _MEDIA:
        raise RecordingError(f"a frame must be JPEG or PNG bytes; these {len(data)} bytes start "
                             f"with {data[:8].hex()}")
    width, height = header.size or (None, None)
    return *_MEDIA[header.kind], width, height


class Recorder:
    """Records one table into a recording directory. Use :meth:`open`."""

    #: How often the host clock's synchronisation state is recorded (a ``clock`` record)
    clock_every = timedelta(hours=1)

    def __init__(self, store: RecordStore, table: str, evidence: Evidence | None = None, *,
                 clock_reader: Callable[[], dict[str, Any]] = clock_state):
        self.store = store
        self.table = table
        self.evidence = evidence
        self.chain: str | None = None  # the signed chain's id (None: not signing)
        self._round_key: int | None = None
        self._round_id: str | None = None
        self._events = 0
        self._clock_reader = clock_reader
        self._clock_read: datetime | None = None  # when the clock's state was last recorded

    @classmethod
    def open(
        cls, directory: Path | str, table: str = "T1", *, clock: Clock = utc_now,
        evidence: Evidence | None = None,
        clock_reader: Callable[[], dict[str, Any]] = clock_state,
    ) -> Recorder:
        """Open (or create) a recording directory for ``table``; marks its unfinished rounds.

        A damaged database is refused (``DamagedRecordingError``, naming it) before anything
        is written to it. With ``evidence`` every record is signed and heads are anchored; a
        new chain where one was, or a chain signed by another key, is refused
        (:func:`~.signed_chain.begin_signing`). The host clock's synchronisation state
        (``clock_reader``, :func:`~.clock_state.clock_state`) is recorded in the ``open`` record
        and every :attr:`clock_every` after in a ``clock`` record (one the database refuses is
        logged and tried again after the next record).
        """
        if not TABLE_NAME.fullmatch(table):
            raise RecordingError(
                f"table name {table!r} must be 1-32 letters, digits, '-' or '_'", directory
            )
        store = RecordingStore(directory, create=True, clock=clock)
        try:
            store.check()
            recorder = cls(store, table, evidence, clock_reader=clock_reader)
            if evidence is not None:
                recorder.chain = begin_signing(store, evidence, table)
            recorder._resume()
            recorder._anchor("open")
        except BaseException:
            store.close()
            raise
        return recorder

    def _resume(self) -> None:
        store = self.store
        last_seq, _ = store.head()
        unfinished = store.open_rounds(self.table)
        for row in unfinished:
            store.append(
                "partial",
                {"reason": "the recorder stopped before the round ended; kept as recorded"},
                table=self.table, round_key=row.round_key, round_id=row.round_id,
            )
        incomplete = sorted(
            str(path.relative_to(store.directory))
            for path in (store.directory / FRAMES_DIR / "").glob(f"*/{self.table}/*.part")
        )
        opened = store.append(
            "open",
            {"table": self.table, "program": f"dealer-assist {__version__}",
             "after_seq": last_seq, "partial_rounds": [row.round_key for row in unfinished],
             "incomplete_files": incomplete, "clock": self._clock_reader()},
            table=self.table,
        )
        self._clock_read = parse_time(opened.at)

    # -- the live table's calls ---------------------------------------------------------------

    def begin_round(self, round_start: RoundStart | Mapping[str, Any]) -> int:
        """Start a round from its ``round`` event; returns the recording's key for the round.

        A round still open is first marked partial (a new round began before it ended).
        """
        body = _event_json(round_start)
        if body.get("type") != "round":
            raise RecorderStateError(f"begin_round needs a 'round' event, got {body!r}")
        if self._round_key is not None:
            self._append("partial", {"reason": "a new round began before this one ended"})
        round_id = body.get("id")
        record = self.store.append(
            "round", body, table=self.table,
            round_id=None if round_id is None else str(round_id),
        )
        self._round_key, self._round_id, self._events = record.round_key, record.round_id, 1
        assert record.round_key is not None
        return record.round_key

    def event(self, event: Event | Mapping[str, Any]) -> int:
        """Record one round-log event of the open round; returns its index (the round line is 0)."""
        body = _event_json(event)
        if body.get("type") == "round":
            raise RecorderStateError("a 'round' event starts a round: call begin_round")
        self._require_round("event")
        self._append("event", body)
        self._events += 1
        return self._events - 1

    def frame(
        self,
        image: bytes,
        detections: Any = None,
        card_event_index: int | None = None,
        *,
        key: bool = True,
        captured: datetime | None = None,
    ) -> Record:
        """Store a JPEG/PNG frame with its detections, tied to an event of the open round.

        ``key`` frames (those at card events) survive retention pruning; others are video.
        ``captured``: the UTC time the camera grabbed it (``captured_at``; the record's own time
        is when it was written).
        """
        self._require_round("frame")
        if card_event_index is not None and (
            not isinstance(card_event_index, int)
            or isinstance(card_event_index, bool)
            or not 0 <= card_event_index < self._events
        ):
            raise RecorderStateError(
                f"card_event_index {card_event_index!r} is not an event of round "
                f"{self._round_id} (0 to {self._events - 1})"
            )
        media_type, ext, width, height = image_info(image)
        digest = hashlib.sha256(image).hexdigest()
        day = self.store.clock().strftime("%Y-%m-%d")
        index = "x" if card_event_index is None else f"{card_event_index:03d}"
        name = f"{self._round_key:06d}-{index}-{'key' if key else 'video'}-{digest[:16]}.{ext}"
        relative = f"{FRAMES_DIR}/{day}/{self.table}/{name}"
        self.store.write_file(relative, image)
        body = {
            "event_index": card_event_index, "detections": detections, "key": key,
            "media_type": media_type, "width": width, "height": height, "size": len(image),
        }
        if captured is not None:
            body["captured_at"] = format_time(captured)
        return self._append("frame", body, file=relative, sha256=digest)

    def alarm(self, kind: str, text: str, round_id: str | None = None, *,
              happened: datetime | None = None) -> Record:
        """An alarm (shoe, vision, rules...), tied to the open round if there is one;
        ``round_id`` names the round in play when it was raised (the search index links the
        alarm to that round, also when the round is recorded after it); ``happened`` is the
        UTC time it was raised (``happened_at``; the record's own time is when it was
        written)."""
        if not isinstance(kind, str) or not kind:
            raise RecorderStateError(f"an alarm needs a kind, got {kind!r}")
        body: dict[str, Any] = {"kind": kind, "text": str(text), **self._at_event()}
        if round_id is not None:
            body["round"] = str(round_id)
        if happened is not None:
            body["happened_at"] = format_time(happened)
        return self._append("alarm", body)

    def screen(self, snapshot: Any) -> Record:
        """What the dealer's screen showed (its JSON state), at the latest event."""
        return self._append("screen", {"snapshot": snapshot, **self._at_event()})

    def end_round(self, settlement: Settlement | Mapping[str, Any]) -> Record:
        """Close the open round with the settlement the table paid."""
        self._require_round("end_round")
        body = settlement.to_json() if isinstance(settlement, Settlement) else dict(settlement)
        record = self._append("settlement", body)
        self._round_key, self._round_id, self._events = None, None, 0
        self._anchor("round end")
        self.store.checkpoint()
        return record

    def void_round(self, reason: str, *, alarmed: bool = False) -> Record:
        """Close the open round as voided: a ``void`` alarm with ``reason`` (not where
        ``alarmed``: the round holds it already), then a ``partial`` record naming it
        (``{"reason": "voided: ...", "void": reason}``); nothing is paid."""
        self._require_round("void_round")
        if not alarmed:
            self.alarm("void", reason)
        return self._close_partial({"reason": f"voided: {reason}", "void": reason})

    def abandon_round(self, reason: str) -> Record:
        """Leave the open round as it is, marked partial for ``reason`` (its whole record
        follows in a new round, e.g. after a correction replayed it)."""
        self._require_round("abandon_round")
        return self._close_partial({"reason": reason})

    def continue_round(self, round_key: int) -> None:
        """Go on recording round ``round_key`` (a table restarted in it): its next event follows
        those it holds. RecorderStateError while another round is open or for no such round."""
        if self._round_key is not None:
            raise RecorderStateError(f"continue_round({round_key}) while round {self._round_id}"
                                     " is open")
        records = [r for r in self.store.round_records(round_key) if isinstance(r, Record)]
        start = next((r for r in records if r.kind == "round"), None)
        if start is None:
            raise RecorderStateError(f"continue_round({round_key}): no such round")
        self._round_key, self._round_id = round_key, start.round_id
        self._events = 1 + sum(1 for r in records if r.kind == "event")

    def _close_partial(self, body: dict[str, Any]) -> Record:
        record = self._append("partial", body)
        self._round_key, self._round_id, self._events = None, None, 0
        self._anchor("round end")
        return record

    def rotate_key(self, new: Signer, why: str) -> Record:
        """Sign from now with ``new``, introduced by a record the current key signs (anchored)."""
        if self.evidence is None:
            raise RecorderStateError("rotate_key() on a recorder that signs nothing")
        record = rotate_key(self.store, new, why, self.table)
        self._anchor("key rotated")
        return record

    def close(self) -> None:
        """Close the recording (its head anchored); a round still open is marked partial at
        the next open."""
        try:
            self._anchor("close")
        finally:
            self.store.close()

    def _anchor(self, why: str) -> None:
        if self.evidence is not None and self.evidence.anchor_log is not None \
                and self.chain is not None:
            anchor_head(self.store, self.evidence.anchor_log, self.chain, self.table, why)

    def __enter__(self) -> Recorder:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.close()

    # -- helpers ------------------------------------------------------------------------------

    @property
    def round_key(self) -> int | None:
        """The recording's key of the round in progress, or None."""
        return self._round_key

    @property
    def round_id(self) -> str | None:
        """The id of the round in progress (its ``round`` event's), or None."""
        return self._round_id

    def _require_round(self, call: str) -> None:
        if self._round_key is None:
            raise RecorderStateError(f"{call}() with no round begun: call begin_round first")

    def _at_event(self) -> dict[str, Any]:
        return {"event_index": self._events - 1} if self._round_key is not None else {}

    def _append(
        self, kind: str, body: Any, *, file: str | None = None, sha256: str | None = None
    ) -> Record:
        record = self.store.append(
            kind, body, table=self.table, round_key=self._round_key, round_id=self._round_id,
            file=file, sha256=sha256,
        )
        written = parse_time(record.at)  # the store's clock, not read again here
        if self._clock_read is None or written - self._clock_read >= self.clock_every:
            try:
                self.store.append("clock", self._clock_reader(), table=self.table)
            except RecordingError as error:  # the record asked for is written: not undone
                logger.warning("the clock record after record %d was not written (%s): tried "
                               "again after the next record", record.seq, error)
            else:
                self._clock_read = written
        return record


_EVENT_TYPES = (RoundStart, Bet, CardDealt, Insurance, PlayerAction, Reveal, End)


def _event_json(event: Event | Mapping[str, Any]) -> dict[str, Any]:
    if isinstance(event, Mapping):
        return dict(event)
    if isinstance(event, _EVENT_TYPES):
        return event_to_json(event)
    raise RecorderStateError(f"not a round-log event: {event!r}")
