"""What the program needs from a recording store: :class:`RecordStore`, whatever keeps it.

A store keeps the hash chain (the evidence) and a search index projected from it. Everything
outside a store implementation (recorder, replay, queries, access, the page) goes through this
protocol. The implementations, the only code that writes SQL: SQLite,
:class:`dealer_assist.surveillance.store.RecordingStore` (a table's recording), and PostgreSQL,
:class:`dealer_assist.floor.pgstore.PostgresStore` (the surveillance room's).
``tests/surveillance/test_store_contract.py`` is the contract every implementation passes.

Errors: opening or writing raises :class:`~dealer_assist.surveillance.store.RecordingError` when
the store cannot do it now (missing, read-only, locked by another program, disk full) and its
subclass :class:`~dealer_assist.surveillance.store.DamagedRecordingError` when the store is
damaged. Reads past damage do not raise: :meth:`RecordStore.scan` gives
:class:`~dealer_assist.surveillance.store.Unreadable` for a record it cannot read, and the index
queries that say so return what they could read and what they could not.

The search index is a projection: :meth:`RecordStore.rebuild_index` makes it again from the
records alone, and :meth:`RecordStore.index_mismatches` says where it differs from that.

Besides its own chain (what :meth:`RecordStore.append` writes), a store holds the chains of other
tables, copied verbatim (:meth:`RecordStore.ingest`): the surveillance room keeps every table's
chain this way. An ingested record is keyed by (table, chain, seq): ``table`` is the table box
that made it, ``chain`` its chain id (the ``chain`` of the chain's first ``key`` record,
:func:`~dealer_assist.surveillance.signed_chain.chain_id`), ``seq`` its number in that chain.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    from dealer_assist.surveillance.store import Clock, Record, RecordSigner, Unreadable


@dataclass(frozen=True, slots=True)
class RoundQuery:
    """Search criteria; every one is optional and they combine with AND."""

    table: str | None = None
    since: datetime | None = None
    until: datetime | None = None
    seat: int | None = None
    alarm: str | None = None  # an alarm kind, or "*" for any alarm
    payout_above: Decimal | None = None  # a seat's net win above this amount
    round_id: str | None = None
    card: str | None = None  # a canonical card code (``JH``): a round in which it was dealt
    amount: Decimal | None = None  # a seat wagered, won or lost exactly this on some line
    dealer: str | None = None  # the dealer id the round line names
    limit: int = 200

    def to_json(self) -> dict[str, Any]:
        from dealer_assist.rules.money import format_money
        from dealer_assist.surveillance.store import format_time

        out: dict[str, Any] = {}
        for name in ("table", "seat", "alarm", "round_id", "card", "dealer"):
            if getattr(self, name) is not None:
                out[name] = getattr(self, name)
        if self.since:
            out["since"] = format_time(self.since)
        if self.until:
            out["until"] = format_time(self.until)
        if self.payout_above is not None:
            out["payout_above"] = format_money(self.payout_above)
        if self.amount is not None:
            out["amount"] = format_money(self.amount)
        return out


# Rows of the search index, as the index holds them: money in integer cents, times as stored text.
# A damaged index may hold a value of another type in any field; readers report that.


@dataclass(frozen=True, slots=True)
class IndexedRound:
    """One round in the search index."""

    round_key: int
    table: str
    round_id: str | None
    dealer: str | None
    started_at: str
    ended_at: str | None
    status: str  # open, settled or partial
    note: str | None
    net_cents: int | None
    max_payout_cents: int | None
    events: int
    frames: int
    alarms: int


@dataclass(frozen=True, slots=True)
class FloorRound:
    """One round of an ingested chain in the room's search index: ``round`` as the table
    indexes it (its ``round_key`` the chain's own), found in ``chain`` of table box ``box``."""

    box: str
    chain: str
    round: IndexedRound


@dataclass(frozen=True, slots=True)
class RoundTally:
    """What the floor's indexed rounds of one ``table`` (as the records name it), clock hour
    (``hour``: ``2026-11-29T13``) and dealer add up to, for the room's statistics: rounds and
    partial rounds, hands dealt per seat, cents paid to seats (net above 0) and taken from them,
    settlement line amounts by kind (cents), and the alarms linked to those rounds by kind."""

    table: str
    hour: str
    dealer: str | None
    rounds: int
    partial_rounds: int
    hands_per_seat: dict[int, int]
    paid_cents: int
    taken_cents: int
    payouts: dict[str, int]
    alarms: dict[str, int]


@dataclass(frozen=True, slots=True)
class IndexedSeat:
    """One seat of a settled round in the search index."""

    round_key: int
    seat: int
    net_cents: int
    hands: int


@dataclass(frozen=True, slots=True)
class IndexedPayout:
    """One payout line (by kind) of a seat of a settled round."""

    round_key: int
    kind: str
    amount_cents: int


@dataclass(frozen=True, slots=True)
class IndexedAlarm:
    """One alarm recorded during a round."""

    round_key: int
    kind: str


@dataclass(frozen=True, slots=True)
class IndexedFrame:
    """One frame file in the search index."""

    seq: int
    round_key: int | None
    table: str | None
    at: str
    file: str
    media_type: str
    size: int
    key: bool
    pruned_at: str | None


@dataclass(frozen=True, slots=True)
class HourVolume:
    """What one table stored in one clock hour (``hour``: ``2026-11-29T13``, '' when the
    records carry no time): ``count`` records or frames, ``size`` bytes."""

    table: str | None
    hour: str
    count: int
    size: int
    rounds: int = 0  # records: how many began a round


@dataclass(frozen=True, slots=True)
class StoredOperator:
    """An operator as stored: the password only as its salted hash."""

    name: str
    role: str
    password_hash: str


class Ingest(Enum):
    """What :meth:`RecordStore.ingest` made of one record."""

    NEW = "new"  #: held now (durably, when ingest returns)
    DUPLICATE = "duplicate"  #: the very same record was held already: ignored
    FORK = "fork"  #: another record is held at its key: kept, never overwritten; both noted
    #: below the room's recorded retention cut and not held: pruned on purpose, ignored (the
    #: PostgreSQL room store's; a store without retention never says it)
    PRUNED = "pruned"


@dataclass(frozen=True, slots=True)
class Ingested:
    """One record's outcome: ``held`` is the record the store holds at its key (the one offered,
    or, for a fork, the one held before); ``next_seq`` is the record the chain needs next, one
    past the unbroken run from record 1 (below ``held.seq`` + 1: a gap before it)."""

    outcome: Ingest
    held: Record
    next_seq: int


@dataclass(frozen=True, slots=True)
class ChainState:
    """An ingested chain: records held, the highest held, and the one it needs next (one past
    the unbroken run from record 1; ``next_seq <= last_seq``: records missing)."""

    table: str
    chain: str
    held: int
    last_seq: int
    next_seq: int

    @property
    def missing(self) -> int:
        """How many records below the highest held are not held."""
        return self.last_seq - self.held


@dataclass(frozen=True, slots=True)
class Fork:
    """A record offered where the store held another one at the same key (table, chain, seq):
    a rewrite on the table box, caught against the copy held here."""

    table: str
    chain: str
    held: Record
    offered: Record
    seen_at: str  # when it was offered (store time)


@runtime_checkable
class CheckedAppend(Protocol):
    """A store that appends a record under a check it reads in the same write transaction."""

    def append_checked(self, kind: str, decide: Callable[[], dict[str, Any] | None], *,
                       table: str | None = None, round_key: int | None = None,
                       round_id: str | None = None) -> Record | None:
        """Chain a ``kind`` record with the body ``decide`` gives, ``decide`` reading this
        store inside the same write transaction (no other writer between its reads and the
        record); nothing is written when it gives None (returned), or raises."""
        ...


class RecordStore(Protocol):
    """A recording store: the hash chain of records, frame files under :attr:`directory`, the
    search index projected from the records, and the operators who may read it."""

    #: the recording directory: frame files live under it at the paths records name
    directory: Path
    #: the clock that times records
    clock: Clock
    #: signs each record :meth:`append` writes (its ``signature``); None: records go unsigned
    signer: RecordSigner | None

    @property
    def location(self) -> Path | str:
        """What names this store in messages (a database file, a server)."""
        ...

    def close(self) -> None: ...

    # -- the chain: writing -------------------------------------------------------------------

    def append(self, kind: str, body: Any, *, table: str | None = None,
               round_key: int | None = None, round_id: str | None = None,
               file: str | None = None, sha256: str | None = None) -> Record:
        """Chain one record after the last one and index it, durably, before returning it;
        signed by :attr:`signer` where there is one, in the same write.

        A ``round`` record is given the next round key (``round_key`` is ignored for it)."""
        ...

    def write_file(self, relative: str, data: bytes) -> None:
        """Write a frame file under :attr:`directory` durably before returning."""
        ...

    def check(self) -> None:
        """Raise :class:`DamagedRecordingError` when the store is damaged (called before
        writing where writing over damage would hide it)."""
        ...

    def checkpoint(self) -> None:
        """A quiet moment (a round ended) to tidy the storage; changes nothing recorded."""
        ...

    # -- the chain: reading -------------------------------------------------------------------

    def head(self) -> tuple[int, str]:
        """The last record's number and hash (0 and the genesis hash when empty)."""
        ...

    def last_seq(self) -> int:
        """The highest record number the store still gives, past damage (0 when empty)."""
        ...

    def last_round_key(self) -> int:
        """The highest round key recorded (0 when none)."""
        ...

    def record(self, seq: int) -> Record | None: ...

    def records(self, *, round_key: int | None = None, kinds: tuple[str, ...] = (),
                after: int = 0) -> Iterator[Record]:
        """Records in chain order, optionally of one round and/or of some kinds, numbered above
        ``after``."""
        ...

    def latest_records(self, kind: str, limit: int) -> list[Record]:
        """The last ``limit`` records of one kind, newest first."""
        ...

    def scan(self) -> Iterator[Record | Unreadable]:
        """Every record in chain order, reading past damage (:class:`Unreadable` for each record
        that cannot be read)."""
        ...

    def round_records(self, key: int) -> list[Record | Unreadable]:
        """One round's records in chain order, reading past damage; raises
        :class:`UnfindableRoundError` when the store cannot tell which records are the round's."""
        ...

    def round_keys(self, round_id: str | None = None) -> list[int]:
        """Keys of every round, or of the rounds called ``round_id``, ascending, past damage."""
        ...

    def named_files(self) -> set[str]:
        """The frame files records name (and, past damage, the index names)."""
        ...

    def storage_problems(self, thorough: bool = False) -> list[str]:
        """What the storage's own check finds wrong (empty: nothing); ``thorough`` also checks
        its internal indexes."""
        ...

    # -- the search index (a projection of the records) ---------------------------------------

    def rebuild_index(self) -> None:
        """Make the search index again from the records alone."""
        ...

    def index_mismatches(self, whole: bool = True) -> list[str]:
        """How the search index differs from one projected afresh from the records (empty: it
        matches; also empty while records cannot be read). ``whole=False`` compares only the rows
        of the records read, for a chain that grows meanwhile."""
        ...

    def find_rounds(self, query: RoundQuery) -> tuple[list[IndexedRound], list[int]]:
        """Rounds matching ``query``, newest first, and the keys of rounds the index cannot read
        (left out; the rest still found). An alarm counts for the round it was recorded in, or
        else for the latest round of its table with the round id its body names (``round``):
        the round in play when it was raised, linked once that round is recorded."""
        ...

    def indexed_rounds(self) -> list[IndexedRound]:
        """Every round in the index, by key."""
        ...

    def open_rounds(self, table: str) -> list[IndexedRound]:
        """The table's rounds neither settled nor marked partial, by key."""
        ...

    def indexed_seats(self) -> list[IndexedSeat]: ...

    def indexed_payouts(self) -> list[IndexedPayout]: ...

    def indexed_alarms(self) -> list[IndexedAlarm]:
        """Alarms recorded during a round."""
        ...

    def search_choices(self) -> tuple[list[str], list[str]]:
        """The tables and alarm kinds the index knows (empty where it cannot give them)."""
        ...

    def frame(self, seq: int) -> IndexedFrame | None: ...

    def video_frames_before(self, cutoff: str) -> list[IndexedFrame]:
        """Frames not key and not pruned recorded before ``cutoff`` (a record time), by number."""
        ...

    def key_frame_files(self) -> set[str]: ...

    def record_volume(self) -> list[HourVolume]:
        """Records per table and hour (records without a table left out)."""
        ...

    def frame_volume(self) -> list[HourVolume]:
        """Unpruned frames per table and hour."""
        ...

    # -- other tables' chains (ingested verbatim) ---------------------------------------------

    def ingest(self, table: str, chain: str, records: Sequence[Record]) -> list[Ingested]:
        """Hold ``records`` of ``table``'s ``chain`` exactly as they were made there (their seq,
        times, hashes and signatures), in one durable write before returning; an outcome per
        record, in order. Idempotent: a record held already is a DUPLICATE and changes nothing;
        a different record at a key held is a FORK: the held one stays, the offered one is kept
        aside (:meth:`forks`); a record the room's retention pruned (below the chain's recorded
        cut, not held) is PRUNED and changes nothing. Records may arrive out of order or with
        gaps (``next_seq`` says which is needed next). Nothing here verifies hashes or
        signatures: that is the verifier's (the room). RecordingError for a key that cannot
        be one (empty table or chain, seq below 1)."""
        ...

    def chains(self) -> list[ChainState]:
        """Every ingested chain, by table and chain id."""
        ...

    def chain_records(self, table: str, chain: str, *, after: int = 0,
                      round_key: int | None = None) -> Iterator[Record]:
        """The held records of one ingested chain numbered above ``after`` (optionally of one
        of its rounds, by the chain's own round key), in chain order."""
        ...

    def forks(self, table: str | None = None) -> list[Fork]:
        """Records offered at a key held by another (of one table, or all), as offered."""
        ...

    # -- operators ----------------------------------------------------------------------------

    def put_operator(self, operator: StoredOperator, created_at: str) -> None:
        """Create or replace an operator."""
        ...

    def delete_operator(self, name: str) -> bool:
        """Remove an operator; whether there was one."""
        ...

    def operators(self) -> list[StoredOperator]:
        """Every operator, by name."""
        ...

    def operator(self, name: str) -> StoredOperator | None: ...
