"""The recording directory: an append-only, hash-chained record store indexed by SQLite.

Layout of a recording directory::

    index.sqlite          records (the hash chain) + search indexes + operators
    frames/DAY/TABLE/...  key frames and video frames (JPEG/PNG), named by round, event and hash

Every record is one row of ``records``; its ``hash`` is SHA-256 of the previous record's hash
(ASCII hex) followed by the record's canonical bytes (:func:`canonical_bytes`). A store opened
with a signer stores each record's Ed25519 signature of that hash (``signature``, schema 3; see
:mod:`.signing`); the signature is not hashed, so records written without a key chain the same.
Everything else in the database (rounds, seats, frames, alarms) is an index rebuilt from the
records on upgrade, so the chain alone is the evidence. Each append is its own transaction and,
with ``synchronous=FULL``, is on disk when :meth:`RecordingStore.append` returns.

:class:`RecordingStore` is the SQLite implementation of
:class:`~dealer_assist.surveillance.interface.RecordStore` and, with :mod:`.schema`, the only code
that speaks SQL; the record format (hashing, times, money) here is every implementation's.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
import sqlite3
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING, Any, Concatenate, ParamSpec, Protocol, TypeVar

from dealer_assist.durable import create_new, fsync_dir
from dealer_assist.surveillance.interface import (
    ChainState,
    Fork,
    HourVolume,
    IndexedAlarm,
    IndexedFrame,
    IndexedPayout,
    IndexedRound,
    IndexedSeat,
    Ingest,
    Ingested,
    RoundQuery,
    StoredOperator,
)

if TYPE_CHECKING:
    from dealer_assist.surveillance.signing import PublicKey

SCHEMA_VERSION = 5
HASH_FORMAT = 2  # how new records are hashed (see canonical_bytes)
GENESIS_HASH = "0" * 64
INDEX_NAME = "index.sqlite"
FRAMES_DIR = "frames"
MAX_INTEGER = 2**63 - 1  # the largest integer SQLite stores

Clock = Callable[[], datetime]


class RecordSigner(Protocol):
    """What signs records as they are appended (:class:`~.signing.Signer`)."""

    @property
    def public(self) -> PublicKey: ...

    def sign(self, record_hash: str) -> str: ...

P = ParamSpec("P")
T = TypeVar("T")


class RecordingError(ValueError):
    """A recording directory that cannot be opened or a record that cannot be written."""

    def __init__(self, message: str, path: Path | str | None = None):
        self.path = path
        super().__init__(f"{path}: {message}" if path is not None else message)


class DamagedRecordingError(RecordingError):
    """The index database is damaged: SQLite finds it malformed, or a table of its schema is
    missing."""


class UnfindableRoundError(DamagedRecordingError):
    """The store cannot tell which records are a round's (the damage reaches its round index)."""

    def __init__(self, why: str, path: Path | str | None = None):
        self.why = why
        super().__init__(why, path)


class UnreadableRecordError(DamagedRecordingError):
    """A record the store holds but cannot read back (it lies on damaged storage); ``reason``
    is what the storage said, ``seq`` the record's number where it is known."""

    def __init__(self, message: str, path: Path | str | None, *, reason: str,
                 seq: int | None = None):
        self.reason, self.seq = reason, seq
        super().__init__(message, path)


#: SQLite's result codes for a database it cannot write now (the rest of its errors are damage)
_UNWRITABLE = frozenset({sqlite3.SQLITE_PERM, sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED,
                         sqlite3.SQLITE_READONLY, sqlite3.SQLITE_IOERR, sqlite3.SQLITE_FULL,
                         sqlite3.SQLITE_CANTOPEN})


def is_damage(error: sqlite3.Error) -> bool:
    """Whether an error SQLite raised means the database is damaged, rather than that it cannot
    be written now (read-only, locked by another program, disk full)."""
    return (getattr(error, "sqlite_errorcode", None) or 0) & 0xFF not in _UNWRITABLE


def sqlite_failure(error: sqlite3.Error, db_path: Path) -> RecordingError:
    """The error to report for one SQLite raised: names the database and what is wrong."""
    if not is_damage(error):
        return RecordingError(
            f"cannot write to the index database ({error}): is it read-only, locked by another "
            "program, or its disk full?", db_path)
    return DamagedRecordingError(
        f"the index database is damaged ({error}): run 'dealer-assist replay --verify' on it",
        db_path)


def _reported(method: Callable[Concatenate[RecordingStore, P], T]
              ) -> Callable[Concatenate[RecordingStore, P], T]:
    """A store method whose SQLite errors are raised as :func:`sqlite_failure` names them."""
    @functools.wraps(method)
    def reporting(store: RecordingStore, *args: P.args, **kwargs: P.kwargs) -> T:
        try:
            return method(store, *args, **kwargs)
        except sqlite3.DatabaseError as error:
            raise sqlite_failure(error, store.db_path) from None

    return reporting


@dataclass(frozen=True, slots=True)
class Unreadable:
    """A record SQLite cannot read back: it lies on a damaged page of the database."""

    seq: int
    error: str


def utc_now() -> datetime:
    return datetime.now(UTC)


def format_time(moment: datetime) -> str:
    """UTC timestamp text that sorts as it reads: ``2026-11-29T13:05:07.123Z``."""
    if moment.tzinfo is None:
        raise RecordingError(f"timestamps must carry a time zone, got naive {moment!r}")
    # isoformat, not strftime: "%Y" leaves a year before 1000 unpadded, which sorts wrongly
    return moment.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def parse_time(text: str) -> datetime:
    """Inverse of :func:`format_time`; also accepts any ISO 8601 text with a zone or ``Z``."""
    moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC)


def canonical_json(value: Any) -> str:
    """The one JSON text a value is stored as (sorted keys, compact, Decimal as string)."""
    return json.dumps(
        value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=_json_default
    )


def _json_default(value: Any) -> Any:
    if isinstance(value, Decimal):
        return str(value)
    raise TypeError(f"not JSON-serialisable: {type(value).__name__} {value!r}")


def cents(amount: str | Decimal) -> int:
    """Exact integer cents of a money amount (for indexed comparisons)."""
    return int((Decimal(str(amount)) * 100).to_integral_exact())


@dataclass(frozen=True, slots=True)
class Record:
    """One stored record, exactly as it is chained."""

    seq: int
    at: str
    table: str | None
    round_key: int | None
    round_id: str | None
    kind: str
    body_text: str
    file: str | None
    sha256: str | None
    hash_format: int
    prev_hash: str
    hash: str
    signature: str | None = None  # ``KEYID:BASE64`` over ``hash`` (signing.py); None: unsigned

    @property
    def body(self) -> Any:
        return json.loads(self.body_text)

    def object_body(self) -> dict[str, Any]:
        """The body if it is a JSON object, else empty (verification reports altered ones); a
        body nested too deep to read is not one."""
        try:
            body = self.body
        except (ValueError, RecursionError):
            return {}
        return body if isinstance(body, dict) else {}

    def describe(self) -> str:
        """How a person names this record: ``record 57 (frame, round sb-1 on T1)``."""
        where = []
        if self.round_id is not None or self.round_key is not None:
            where.append(f"round {self.round_id or '#' + str(self.round_key)}")
        if self.table:
            where.append(f"on {self.table}")
        return f"record {self.seq} ({self.kind}{', ' + ' '.join(where) if where else ''})"


def canonical_bytes(record: Record) -> bytes:
    """The bytes of a record that its hash covers, in the hash format it was written with.

    Format 1 (schema 1) covered seq, time, round id, kind, body and file hash; format 2 adds the
    table, the round key and the file path. Old records keep their format after an upgrade.
    """
    if record.hash_format == 1:
        fields: dict[str, Any] = {
            "seq": record.seq,
            "at": record.at,
            "round": record.round_id,
            "kind": record.kind,
            "body": record.body_text,
            "sha256": record.sha256,
        }
    elif record.hash_format == 2:
        fields = {
            "v": 2,
            "seq": record.seq,
            "at": record.at,
            "table": record.table,
            "round_key": record.round_key,
            "round": record.round_id,
            "kind": record.kind,
            "body": record.body_text,
            "file": record.file,
            "sha256": record.sha256,
        }
    else:
        raise RecordingError(f"record {record.seq} has unknown hash format {record.hash_format}")
    return json.dumps(fields, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def write_frame_file(directory: Path, relative: str, data: bytes) -> None:
    """Write a frame file under ``directory`` durably (temporary name, fsync, rename, fsync the
    folder)."""
    target = directory / relative
    target.parent.mkdir(parents=True, exist_ok=True)
    temporary = target.with_name(target.name + ".part")
    with os.fdopen(create_new(temporary), "wb") as handle:  # never through a link
        handle.write(data)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(temporary, target)
    fsync_dir(target.parent)


def chain_hash(prev_hash: str, payload: bytes) -> str:
    return hashlib.sha256(prev_hash.encode("ascii") + payload).hexdigest()


def hash_holds(record: Record) -> bool:
    """Whether ``record``'s content, in the hash format it was written with, still gives its
    hash (False where it cannot be read as any format)."""
    try:
        return chain_hash(record.prev_hash, canonical_bytes(record)) == record.hash
    except ValueError:
        return False


#: Schema 2's tables; schema 3 adds the records' signature column (schema.py)
SCHEMA_V2 = """
CREATE TABLE IF NOT EXISTS schema_version (
    version INTEGER NOT NULL, applied_at TEXT NOT NULL, note TEXT);
CREATE TABLE IF NOT EXISTS records (
    seq INTEGER PRIMARY KEY,
    at TEXT NOT NULL,
    table_id TEXT,
    round_key INTEGER,
    round_id TEXT,
    kind TEXT NOT NULL,
    body TEXT NOT NULL,
    file TEXT,
    sha256 TEXT,
    hash_format INTEGER NOT NULL,
    prev_hash TEXT NOT NULL,
    hash TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS records_round ON records(round_key, seq);
CREATE INDEX IF NOT EXISTS records_kind ON records(kind, seq);
CREATE TABLE IF NOT EXISTS rounds (
    round_key INTEGER PRIMARY KEY,
    table_id TEXT NOT NULL,
    round_id TEXT,
    dealer TEXT,
    started_at TEXT NOT NULL,
    ended_at TEXT,
    status TEXT NOT NULL,
    note TEXT,
    net_cents INTEGER,
    max_payout_cents INTEGER,
    events INTEGER NOT NULL DEFAULT 0,
    frames INTEGER NOT NULL DEFAULT 0,
    alarms INTEGER NOT NULL DEFAULT 0,
    first_seq INTEGER NOT NULL,
    last_seq INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS rounds_table_time ON rounds(table_id, started_at);
CREATE INDEX IF NOT EXISTS rounds_id ON rounds(round_id);
CREATE TABLE IF NOT EXISTS round_seats (
    round_key INTEGER NOT NULL,
    seat INTEGER NOT NULL,
    player TEXT,
    wager_cents INTEGER NOT NULL,
    net_cents INTEGER NOT NULL,
    hands INTEGER NOT NULL,
    PRIMARY KEY (round_key, seat));
CREATE TABLE IF NOT EXISTS payout_lines (
    round_key INTEGER NOT NULL,
    seat INTEGER NOT NULL,
    kind TEXT NOT NULL,
    amount_cents INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS payout_lines_round ON payout_lines(round_key);
CREATE TABLE IF NOT EXISTS frames (
    seq INTEGER PRIMARY KEY,
    round_key INTEGER,
    table_id TEXT,
    at TEXT NOT NULL,
    event_index INTEGER,
    file TEXT NOT NULL,
    sha256 TEXT NOT NULL,
    size INTEGER NOT NULL,
    media_type TEXT NOT NULL,
    width INTEGER,
    height INTEGER,
    key INTEGER NOT NULL,
    pruned_at TEXT);
CREATE INDEX IF NOT EXISTS frames_round ON frames(round_key, event_index);
CREATE TABLE IF NOT EXISTS alarms (
    seq INTEGER PRIMARY KEY,
    round_key INTEGER,
    table_id TEXT,
    at TEXT NOT NULL,
    kind TEXT NOT NULL,
    text TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS alarms_kind ON alarms(kind);
CREATE TABLE IF NOT EXISTS operators (
    name TEXT PRIMARY KEY,
    role TEXT NOT NULL,
    password TEXT NOT NULL,
    created_at TEXT NOT NULL);
"""

#: Schema 4's additions to the search index (schema.py): every card dealt in a round, and the
#: round id an alarm was raised in (linked to that round's key once the round is recorded)
INDEX_V4 = """
CREATE TABLE IF NOT EXISTS round_cards (
    round_key INTEGER NOT NULL,
    event_index INTEGER NOT NULL,
    card TEXT NOT NULL,
    PRIMARY KEY (round_key, event_index));
CREATE INDEX IF NOT EXISTS round_cards_card ON round_cards(card);
ALTER TABLE alarms ADD COLUMN round_id TEXT
"""

#: Schema 5: other tables' chains, held verbatim (RecordStore.ingest)
SCHEMA_CHAINS = """
CREATE TABLE IF NOT EXISTS chain_records (
    table_key TEXT NOT NULL,
    chain TEXT NOT NULL,
    seq INTEGER NOT NULL,
    at TEXT NOT NULL,
    table_id TEXT,
    round_key INTEGER,
    round_id TEXT,
    kind TEXT NOT NULL,
    body TEXT NOT NULL,
    file TEXT,
    sha256 TEXT,
    hash_format INTEGER NOT NULL,
    prev_hash TEXT NOT NULL,
    hash TEXT NOT NULL,
    signature TEXT,
    PRIMARY KEY (table_key, chain, seq));
CREATE INDEX IF NOT EXISTS chain_records_round ON chain_records(table_key, chain, round_key, seq);
CREATE TABLE IF NOT EXISTS chain_state (
    table_key TEXT NOT NULL,
    chain TEXT NOT NULL,
    held INTEGER NOT NULL,
    last_seq INTEGER NOT NULL,
    next_seq INTEGER NOT NULL,
    PRIMARY KEY (table_key, chain));
CREATE TABLE IF NOT EXISTS chain_forks (
    table_key TEXT NOT NULL,
    chain TEXT NOT NULL,
    seen_at TEXT NOT NULL,
    seq INTEGER NOT NULL,
    at TEXT NOT NULL,
    table_id TEXT,
    round_key INTEGER,
    round_id TEXT,
    kind TEXT NOT NULL,
    body TEXT NOT NULL,
    file TEXT,
    sha256 TEXT,
    hash_format INTEGER NOT NULL,
    prev_hash TEXT NOT NULL,
    hash TEXT NOT NULL,
    signature TEXT);
CREATE INDEX IF NOT EXISTS chain_forks_key ON chain_forks(table_key, chain, seq);
"""

INDEX_TABLES = ("rounds", "round_seats", "payout_lines", "frames", "alarms", "round_cards")
CHAIN_TABLES = ("chain_records", "chain_state", "chain_forks")
TABLES = ("schema_version", "records", *INDEX_TABLES, "operators", *CHAIN_TABLES)
#: the longest table or chain id an ingested record may be keyed by
MAX_CHAIN_KEY = 128


def check_chain_key(table: str, chain: str, record: Record, where: Path | str) -> None:
    """Refuse a key an ingested record cannot be held under (RecordingError naming it)."""
    for name, value in (("table", table), ("chain", chain)):
        if not isinstance(value, str) or not value or len(value) > MAX_CHAIN_KEY \
                or not value.isprintable():
            raise RecordingError(f"cannot ingest a record keyed by {name} {value!r}: a {name}"
                                 f" id is 1-{MAX_CHAIN_KEY} printable characters", where)
    if not isinstance(record.seq, int) or not 1 <= record.seq <= MAX_INTEGER:
        raise RecordingError(f"cannot ingest record {record.seq!r} of table {table} chain "
                             f"{chain}: a record's number is 1 or more", where)


class RecordingStore:
    """An open recording directory kept in SQLite (a ``RecordStore``): appends chained records
    and answers queries. Its methods raise what SQLite refuses as :func:`sqlite_failure` names it
    (:class:`RecordingError` or :class:`DamagedRecordingError`).

    Opening upgrades an older schema in place (see :data:`SCHEMA_VERSION`).
    """

    #: How long a write waits for another program's lock on the index before it is refused.
    busy_timeout_s = 30.0

    def __init__(self, directory: Path | str, *, create: bool = False, clock: Clock = utc_now,
                 signer: RecordSigner | None = None):
        self.directory = Path(directory)
        self.clock = clock
        #: signs each record appended (None: records are appended unsigned)
        self.signer = signer
        db_path = self.directory / INDEX_NAME
        frames = self.directory / FRAMES_DIR
        if create and (not db_path.is_file() or db_path.stat().st_size == 0) and \
                frames.is_dir() and any(path.is_file() for path in frames.rglob("*")):
            # the records of a recording gone (deleted, truncated to nothing): a new chain begun
            # here would verify clean, hiding the loss
            raise DamagedRecordingError(
                f"{'empty' if db_path.is_file() else 'missing'} while {FRAMES_DIR}/ holds the "
                "frames of a recording: its records are lost; not begun anew over them: "
                "restore the file, or record into a new directory", db_path)
        if not db_path.is_file():
            if not create:
                raise RecordingError(
                    f"not a recording directory (no {INDEX_NAME})", self.directory
                )
            self.directory.mkdir(parents=True, exist_ok=True)
        elif not create and db_path.stat().st_size == 0:
            # e.g. truncated to nothing: refused (and left as found), not set up anew as an
            # empty recording that would verify clean
            raise RecordingError("empty: the recording's records are missing", db_path)
        self.db_path = db_path
        try:
            self.conn = sqlite3.connect(db_path, isolation_level=None,
                                        timeout=self.busy_timeout_s)
            self.conn.row_factory = sqlite3.Row
            # Text that is not UTF-8 (a byte changed on disk) is read with U+FFFD in its place:
            # the record then fails its hash and is reported, and the rest stays readable.
            self.conn.text_factory = _lenient_text
            self.conn.execute("PRAGMA journal_mode=WAL")
            self.conn.execute("PRAGMA synchronous=FULL")
            if not create and self.schema_version() == 0:
                self.conn.close()
                raise RecordingError("holds no recording (an SQLite file never set up as one)",
                                     db_path)
            self._open_schema()
        except RecordingError:
            raise
        except sqlite3.DatabaseError as error:
            failure = DamagedRecordingError if is_damage(error) else RecordingError
            raise failure(f"cannot open the index database: {error}", db_path) from None
        except UnicodeDecodeError as error:  # SQLite's message quoting a damaged schema
            raise RecordingError(f"cannot open the index database: its schema is damaged (not"
                                 f" UTF-8 text: {error.reason} at byte {error.start})",
                                 db_path) from None

    # -- schema -------------------------------------------------------------------------------

    def schema_version(self) -> int:
        tables = {
            row[0]
            for row in self.conn.execute("SELECT name FROM sqlite_master WHERE type='table'")
        }
        if "schema_version" not in tables:
            return 0
        row = self.conn.execute("SELECT MAX(version) FROM schema_version").fetchone()
        try:
            return int(row[0] or 0)
        except (TypeError, ValueError):
            raise RecordingError(f"schema version {row[0]!r} is not a number (damaged?)",
                                 self.db_path) from None

    def _open_schema(self) -> None:
        from dealer_assist.surveillance.schema import upgrade

        version = self.schema_version()
        if version > SCHEMA_VERSION:
            raise RecordingError(
                f"recording schema {version} is newer than this program reads "
                f"({SCHEMA_VERSION}): upgrade dealer-assist",
                self.db_path,
            )
        if version == SCHEMA_VERSION:
            columns = {row[1] for row in self.conn.execute("PRAGMA table_info(records)")}
            missing = [name for name in RECORD_COLUMNS if name not in columns]
            if missing:
                raise RecordingError(
                    f"the records table has no column {', '.join(missing)} (damaged?)",
                    self.db_path)
            return
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            if version == 0:
                for statement in _statements(SCHEMA_V2):
                    self.conn.execute(statement)
                upgrade(self, 2, note=False)
                self.conn.execute(
                    "INSERT INTO schema_version VALUES (?, ?, ?)",
                    (SCHEMA_VERSION, format_time(self.clock()), "created"),
                )
            else:
                upgrade(self, version)
            self.conn.execute("COMMIT")
        except BaseException:
            self.conn.execute("ROLLBACK")
            raise

    def close(self) -> None:
        self.conn.close()

    # -- writing ------------------------------------------------------------------------------

    def append(
        self,
        kind: str,
        body: Any,
        *,
        table: str | None = None,
        round_key: int | None = None,
        round_id: str | None = None,
        file: str | None = None,
        sha256: str | None = None,
    ) -> Record:
        """Chain one record after the last one and index it, in one durable transaction."""
        record = self._append_decided(kind, lambda: (body,), table, round_key, round_id, file,
                                      sha256)
        assert record is not None
        return record

    def append_checked(self, kind: str, decide: Callable[[], dict[str, Any] | None], *,
                       table: str | None = None, round_key: int | None = None,
                       round_id: str | None = None) -> Record | None:
        """Chain a ``kind`` record with the body ``decide`` gives, ``decide`` reading this store
        inside the same write transaction (no other connection writes between its reads and
        the record); nothing is written when it gives None (returned), or raises."""
        def decided() -> tuple[Any] | None:
            body = decide()
            return None if body is None else (body,)

        return self._append_decided(kind, decided, table, round_key, round_id, None, None)

    def _append_decided(self, kind: str, decide: Callable[[], tuple[Any] | None],
                        table: str | None, round_key: int | None, round_id: str | None,
                        file: str | None, sha256: str | None) -> Record | None:
        conn = self.conn
        try:
            conn.execute("BEGIN IMMEDIATE")
            decided = decide()
            if decided is None:
                conn.execute("ROLLBACK")
                return None
            body_text = canonical_json(decided[0])
            seq, prev_hash = self._head()
            seq += 1
            if kind == "round":
                round_key = self._last_round_key() + 1
            partial = Record(
                seq, format_time(self.clock()), table, round_key, round_id, kind, body_text,
                file, sha256, HASH_FORMAT, prev_hash, "",
            )
            record = replace(partial, hash=chain_hash(prev_hash, canonical_bytes(partial)))
            if self.signer is not None:
                record = replace(record, signature=self.signer.sign(record.hash))
            conn.execute(
                "INSERT INTO records (seq, at, table_id, round_key, round_id, kind, body, file,"
                " sha256, hash_format, prev_hash, hash, signature)"
                " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
                (record.seq, record.at, record.table, record.round_key, record.round_id,
                 record.kind, record.body_text, record.file, record.sha256, record.hash_format,
                 record.prev_hash, record.hash, record.signature),
            )
            index_record(conn, record)
            conn.execute("COMMIT")
        except BaseException as error:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            if isinstance(error, sqlite3.DatabaseError) and not is_damage(error):
                raise sqlite_failure(error, self.db_path) from None
            if isinstance(error, sqlite3.DatabaseError | OverflowError):
                raise DamagedRecordingError(
                    f"cannot add a record: the index database is damaged ({error}); nothing was"
                    " changed: run 'dealer-assist replay --verify' on it", self.db_path) from None
            raise
        return record

    def sqlite_check(self, pragma: str = "quick_check") -> list[str]:
        """What SQLite's own check finds wrong (nothing: an empty list): ``quick_check`` reads
        every page (about 0.7 s a GB); ``integrity_check`` also compares each index with its
        table, which takes about three times as long."""
        try:
            found = [str(row[0]) for row in self.conn.execute(f"PRAGMA {pragma}(10)")]
        except sqlite3.DatabaseError as error:
            found = [str(error)]
        return [] if found == ["ok"] else [line for text in found for line in text.splitlines()]

    @_reported
    def check(self) -> None:
        """Refuse a damaged database before writing to it: SQLite's quick check, and every table
        of the schema there."""
        found = self.sqlite_check()
        if not found:
            tables = {row[0] for row in self.conn.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table'")}
            found = [f"no table {name}" for name in TABLES if name not in tables]
        if found:
            raise DamagedRecordingError(
                f"the index database is damaged ({'; '.join(found)}), so nothing is written to it:"
                " run 'dealer-assist replay --verify' on it", self.db_path)

    @_reported
    def last_round_key(self) -> int:
        """The highest round key recorded (0 when none); read from the records' round index."""
        return self._last_round_key()

    def _last_round_key(self) -> int:
        row = self.conn.execute("SELECT MAX(round_key) FROM records").fetchone()
        return int(row[0] or 0)

    def write_file(self, relative: str, data: bytes) -> None:
        write_frame_file(self.directory, relative, data)

    # -- reading ------------------------------------------------------------------------------

    def records(
        self, *, round_key: int | None = None, kinds: tuple[str, ...] = (), after: int = 0
    ) -> Iterator[Record]:
        """Records in chain order, optionally of one round and/or of some kinds, numbered above
        ``after``."""
        try:
            yield from self._records(round_key, kinds, after)
        except sqlite3.DatabaseError as error:
            raise sqlite_failure(error, self.db_path) from None

    def _records(self, round_key: int | None, kinds: tuple[str, ...],
                 after: int = 0) -> Iterator[Record]:
        sql = "SELECT * FROM records"
        clauses: list[str] = ["seq > ?"]
        params: list[Any] = [after]
        if round_key is not None:
            clauses.append("round_key = ?")
            params.append(round_key)
        if kinds:
            clauses.append(f"kind IN ({','.join('?' * len(kinds))})")
            params.extend(kinds)
        sql += " WHERE " + " AND ".join(clauses)
        for row in self.conn.execute(sql + " ORDER BY seq", params):
            yield record_from_row(row)

    def scan(self) -> Iterator[Record | Unreadable]:
        """Every record in chain order, reading past damage: where SQLite finds a page malformed,
        records are read one at a time, and each it cannot read is given as :class:`Unreadable`."""
        last, end = 0, None
        while True:
            try:
                for row in self.conn.execute(
                        "SELECT * FROM records WHERE seq > ? ORDER BY seq", (last,)):
                    record = record_from_row(row)
                    last = record.seq
                    yield record
                return
            except sqlite3.DatabaseError:
                end = self.last_seq() if end is None else end
            while last < end:
                last += 1
                try:
                    found = self._read_record(last)
                except sqlite3.DatabaseError as error:
                    yield Unreadable(last, str(error))
                    continue
                if found is not None:
                    yield found
                    break
            else:
                return

    def last_seq(self) -> int:
        """The highest record number the records table or, where it is damaged, its indexes
        (each holds every record's number) still give."""
        for sql in ("SELECT MAX(seq) FROM records",
                    "SELECT MAX(seq) FROM records INDEXED BY records_round",
                    "SELECT MAX(seq) FROM records INDEXED BY records_kind"):
            try:
                return int(self.conn.execute(sql).fetchone()[0] or 0)
            except sqlite3.DatabaseError:
                continue
        return 0

    def record(self, seq: int) -> Record | None:
        """Record ``seq``, or None; :class:`UnreadableRecordError` where it cannot be read."""
        try:
            return self._read_record(seq)
        except sqlite3.DatabaseError as error:
            raise self._read_failure(error, seq) from None

    def _read_record(self, seq: int) -> Record | None:
        row = self.conn.execute("SELECT * FROM records WHERE seq = ?", (seq,)).fetchone()
        return None if row is None else record_from_row(row)

    def head(self) -> tuple[int, str]:
        """The last record's sequence number and hash (0 and the genesis hash when empty)."""
        try:
            return self._head()
        except sqlite3.DatabaseError as error:
            raise self._read_failure(error) from None

    def _head(self) -> tuple[int, str]:
        row = self.conn.execute(
            "SELECT seq, hash FROM records ORDER BY seq DESC LIMIT 1"
        ).fetchone()
        return (0, GENESIS_HASH) if row is None else (row["seq"], row["hash"])

    def _read_failure(self, error: sqlite3.DatabaseError, seq: int | None = None) -> RecordingError:
        failure = sqlite_failure(error, self.db_path)
        if not isinstance(failure, DamagedRecordingError):
            return failure
        return UnreadableRecordError(str(failure.args[0]).removeprefix(f"{self.db_path}: "),
                                     self.db_path, reason=str(error), seq=seq)

    def rebuild_index(self) -> None:
        """Empty the search indexes and project them again from the chained records alone, in one
        transaction (the caller's, where one is open)."""
        own = not self.conn.in_transaction
        try:
            if own:
                self.conn.execute("BEGIN IMMEDIATE")
            for table in INDEX_TABLES:
                self.conn.execute(f"DELETE FROM {table}")
            for record in self._records(None, ()):
                project(self.conn, record)
            if own:
                self.conn.execute("COMMIT")
        except BaseException as error:
            if own and self.conn.in_transaction:
                self.conn.execute("ROLLBACK")
            if own and isinstance(error, sqlite3.DatabaseError):
                raise sqlite_failure(error, self.db_path) from None
            raise

    @property
    def location(self) -> Path:
        """The index database: what names this store in messages."""
        return self.db_path

    @_reported
    def checkpoint(self) -> None:
        """Move what the write-ahead log holds into the database when no reader needs it."""
        self.conn.execute("PRAGMA wal_checkpoint(PASSIVE)")

    def storage_problems(self, thorough: bool = False) -> list[str]:
        """SQLite's ``quick_check``, or with ``thorough`` its ``integrity_check``."""
        return self.sqlite_check("integrity_check" if thorough else "quick_check")

    @_reported
    def latest_records(self, kind: str, limit: int) -> list[Record]:
        """The last ``limit`` records of one kind, newest first."""
        return [record_from_row(row) for row in self.conn.execute(
            "SELECT * FROM records WHERE kind = ? ORDER BY seq DESC LIMIT ?", (kind, limit))]

    @_reported
    def round_records(self, key: int) -> list[Record | Unreadable]:
        """One round's records; where a page is damaged, found through the round index (which
        holds their numbers) and read one at a time."""
        try:
            return list(self._records(key, ()))
        except sqlite3.DatabaseError:
            pass
        try:
            seqs = [row[0] for row in self.conn.execute(
                "SELECT seq FROM records INDEXED BY records_round WHERE round_key = ?"
                " ORDER BY seq", (key,))]
        except sqlite3.DatabaseError as error:  # the round index damaged: the table, read whole
            try:
                return [record_from_row(row) for row in self.conn.execute(
                    "SELECT * FROM records NOT INDEXED WHERE round_key = ? ORDER BY seq", (key,))]
            except sqlite3.DatabaseError:
                raise UnfindableRoundError(
                    f"its records cannot be found in {INDEX_NAME} ({error})", self.db_path
                ) from None
        found: list[Record | Unreadable] = []
        for seq in seqs:
            try:
                record = self._read_record(seq)
            except sqlite3.DatabaseError as error:
                found.append(Unreadable(seq, str(error)))
                continue
            if record is not None:
                found.append(record)
        return found

    @_reported
    def round_keys(self, round_id: str | None = None) -> list[int]:
        """Keys of every round, or of the rounds called ``round_id``; past a damaged page, those
        a readable record names, and those the round index or the search index still name."""
        sql = "SELECT DISTINCT round_key FROM records WHERE kind = 'round'"
        params: tuple[Any, ...] = ()
        if round_id is not None:
            sql += " AND round_id = ?"
            params = (round_id,)
        try:
            return [row[0] for row in self.conn.execute(sql + " ORDER BY round_key", params)]
        except sqlite3.DatabaseError:
            keys = {record.round_key for record in self.scan()
                    if isinstance(record, Record) and record.round_key is not None
                    and round_id in (None, record.round_id)}
            sql, params = ("SELECT DISTINCT round_key FROM records INDEXED BY records_round WHERE"
                           " round_key IS NOT NULL", ()) if round_id is None else (
                               "SELECT round_key FROM rounds WHERE round_id = ?", (round_id,))
            with contextlib.suppress(sqlite3.DatabaseError):
                keys |= {row[0] for row in self.conn.execute(sql, params)}
            return sorted(keys)

    @_reported
    def named_files(self) -> set[str]:
        """The files records name; past a damaged page, those readable records or the search
        index name."""
        try:
            return {row[0] for row in self.conn.execute(
                "SELECT file FROM records WHERE file IS NOT NULL")}
        except sqlite3.DatabaseError:
            named = {record.file for record in self.scan()
                     if isinstance(record, Record) and record.file is not None}
            with contextlib.suppress(sqlite3.DatabaseError):
                named.update(row[0] for row in self.conn.execute("SELECT file FROM frames"))
            return named

    # -- the search index ---------------------------------------------------------------------

    @_reported
    def index_mismatches(self, whole: bool = True) -> list[str]:
        """The search index compared with one projected afresh, into a private temporary
        database, from the records (nothing while records cannot be read)."""
        rebuilt = sqlite3.connect("file:", uri=True, isolation_level=None)
        last_seq = last_closed = 0
        try:
            for statement in _statements(SCHEMA_V2) + _statements(INDEX_V4):
                rebuilt.execute(statement)
            rebuilt.execute("BEGIN")
            for record in self.scan():
                if isinstance(record, Unreadable):
                    return []
                last_seq = record.seq
                if record.kind in ("settlement", "partial") and record.round_key is not None:
                    last_closed = max(last_closed, record.round_key)
                project(rebuilt, record)
            rebuilt.execute("COMMIT")
            return self._compare_index(rebuilt, None if whole else (last_seq, last_closed))
        finally:
            rebuilt.close()

    def _compare_index(self, rebuilt: sqlite3.Connection,
                       walked_to: tuple[int, int] | None) -> list[str]:
        """The tables compared whole, or (``walked_to``: the last record read, the last round
        closed) only the rows of the records walked, and rows past them whose records are
        gone."""
        rebuilt.execute("ATTACH DATABASE ? AS recording",
                        (self.db_path.resolve().as_uri() + "?mode=ro",))
        last_seq, last_closed = walked_to or (0, 0)
        found = []
        for table in INDEX_TABLES:
            by_seq = table in ("frames", "alarms")
            walked = f"WHERE seq <= {last_seq}" if by_seq else f"WHERE round_key <= {last_closed}"
            # past the walk, a row whose record is there now was recorded meanwhile; one whose
            # record is not there has lost it (records deleted from the end of the chain)
            orphans = (f"WHERE seq > {last_seq} AND seq NOT IN (SELECT seq FROM recording.records)"
                       if by_seq else f"WHERE round_key > {last_closed} AND round_key NOT IN "
                       "(SELECT round_key FROM recording.records WHERE round_key IS NOT NULL)")
            if walked_to is None:
                walked, orphans = "", "WHERE 0"  # the whole tables; no row lies past the walk
            try:
                lacks = _names(table, rebuilt.execute(
                    f"SELECT * FROM main.{table} {walked} EXCEPT SELECT * FROM recording.{table}"
                    f" {walked}"))
                adds = _names(table, rebuilt.execute(
                    f"SELECT * FROM recording.{table} {walked} EXCEPT SELECT * FROM main.{table}"
                    f" {walked}"))
                adds += _names(table, rebuilt.execute(
                    f"SELECT * FROM recording.{table} {orphans}"))
                sizes = [rebuilt.execute(f"SELECT COUNT(*) FROM {side}.{table} {walked}"
                                         ).fetchone()[0] for side in ("main", "recording")]
            except sqlite3.DatabaseError as error:
                found.append(f"the search index table {table} cannot be compared with the"
                             f" records ({error})")
                continue
            parts = []
            if differ := [name for name in lacks if name in adds]:
                parts.append(f"its rows for {_listed(differ)} differ from what the records give")
            if lacks := [name for name in lacks if name not in differ]:
                parts.append(f"it lacks rows for {_listed(lacks)}")
            if adds := [name for name in adds if name not in differ]:
                parts.append(f"it has rows for {_listed(adds)}, which no record gives")
            if not parts and sizes[0] != sizes[1]:
                parts.append(f"it holds {sizes[1]} rows where the records give {sizes[0]}")
            if parts:
                found.append(f"the search index table {table} does not match the records:"
                             f" {'; '.join(parts)}")
        return found

    @_reported
    def find_rounds(self, query: RoundQuery) -> tuple[list[IndexedRound], list[int]]:
        """Rounds matching ``query``, newest first; past a damaged page, round by round."""
        clauses: list[str] = []
        params: list[Any] = []
        if query.table:
            clauses.append("r.table_id = ?")
            params.append(query.table)
        if query.since:
            clauses.append("r.started_at >= ?")
            params.append(format_time(query.since))
        if query.until:
            clauses.append("r.started_at <= ?")
            params.append(format_time(query.until))
        if query.round_id:
            clauses.append("r.round_id = ?")
            params.append(query.round_id)
        if query.seat is not None:
            clauses.append("EXISTS (SELECT 1 FROM round_seats s WHERE s.round_key = r.round_key"
                           " AND s.seat = ?)")
            params.append(query.seat)
        if query.alarm:
            if query.alarm == "*":
                clauses.append("r.alarms > 0")
            else:
                clauses.append("EXISTS (SELECT 1 FROM alarms a WHERE a.round_key = r.round_key"
                               " AND a.kind = ?)")
                params.append(query.alarm)
        if query.payout_above is not None:
            clauses.append("EXISTS (SELECT 1 FROM round_seats s WHERE s.round_key = r.round_key"
                           " AND s.net_cents > ?)")
            params.append(cents(query.payout_above))
        if query.card:
            clauses.append("EXISTS (SELECT 1 FROM round_cards c WHERE c.round_key = r.round_key"
                           " AND c.card = ?)")
            params.append(card_code(query.card) or "")
        if query.amount is not None:
            amount = cents(query.amount)
            clauses.append("(EXISTS (SELECT 1 FROM round_seats s WHERE s.round_key = r.round_key"
                           " AND (s.wager_cents = ? OR abs(s.net_cents) = ?)) OR EXISTS (SELECT 1"
                           " FROM payout_lines p WHERE p.round_key = r.round_key"
                           " AND abs(p.amount_cents) = ?))")
            params.extend([amount, amount, amount])
        if query.dealer:
            clauses.append("r.dealer = ?")
            params.append(query.dealer)

        def select(*more: str) -> str:
            conditions = [*clauses, *more]
            return "SELECT r.* FROM rounds r" + (" WHERE " + " AND ".join(conditions)
                                                 if conditions else "")

        limit = max(1, min(query.limit, 5000))
        try:
            rows = self.conn.execute(
                select() + " ORDER BY r.started_at DESC, r.round_key DESC LIMIT ?",
                [*params, limit]).fetchall()
        except sqlite3.DatabaseError:  # a damaged page: round by round, past it
            rows, unreadable = [], []
            for key in range(1, self.last_round_key() + 1):
                try:
                    rows.extend(self.conn.execute(select("r.round_key = ?"), [*params, key]))
                except sqlite3.DatabaseError:
                    unreadable.append(key)
            rows.sort(key=lambda row: (str(row["started_at"]), row["round_key"]), reverse=True)
            return [_indexed_round(row) for row in rows[:limit]], unreadable
        return [_indexed_round(row) for row in rows], []

    @_reported
    def indexed_rounds(self) -> list[IndexedRound]:
        return [_indexed_round(row)
                for row in self.conn.execute("SELECT * FROM rounds ORDER BY round_key")]

    @_reported
    def open_rounds(self, table: str) -> list[IndexedRound]:
        return [_indexed_round(row) for row in self.conn.execute(
            "SELECT * FROM rounds WHERE table_id = ? AND status = 'open' ORDER BY round_key",
            (table,))]

    @_reported
    def indexed_seats(self) -> list[IndexedSeat]:
        return [IndexedSeat(*row) for row in self.conn.execute(
            "SELECT round_key, seat, net_cents, hands FROM round_seats")]

    @_reported
    def indexed_payouts(self) -> list[IndexedPayout]:
        return [IndexedPayout(*row) for row in self.conn.execute(
            "SELECT round_key, kind, amount_cents FROM payout_lines")]

    @_reported
    def indexed_alarms(self) -> list[IndexedAlarm]:
        return [IndexedAlarm(*row) for row in self.conn.execute(
            "SELECT round_key, kind FROM alarms WHERE round_key IS NOT NULL")]

    def search_choices(self) -> tuple[list[str], list[str]]:
        return self._distinct("table_id", "rounds"), self._distinct("kind", "alarms")

    def _distinct(self, column: str, table: str) -> list[str]:
        try:
            return [row[0] for row in self.conn.execute(
                f"SELECT DISTINCT {column} FROM {table} ORDER BY {column}")]
        except sqlite3.DatabaseError:
            return []

    @_reported
    def frame(self, seq: int) -> IndexedFrame | None:
        row = self.conn.execute("SELECT * FROM frames WHERE seq = ?", (seq,)).fetchone()
        return None if row is None else _indexed_frame(row)

    @_reported
    def video_frames_before(self, cutoff: str) -> list[IndexedFrame]:
        return [_indexed_frame(row) for row in self.conn.execute(
            "SELECT * FROM frames WHERE key = 0 AND pruned_at IS NULL AND at < ? ORDER BY seq",
            (cutoff,))]

    @_reported
    def key_frame_files(self) -> set[str]:
        return {row[0] for row in self.conn.execute("SELECT file FROM frames WHERE key = 1")}

    @_reported
    def record_volume(self) -> list[HourVolume]:
        return [HourVolume(row["table_id"], row["hour"] or "", row["n"], row["size"],
                           row["rounds"]) for row in self.conn.execute(
            "SELECT table_id, substr(at, 1, 13) AS hour, COUNT(*) AS n,"
            " SUM(length(body)) + COUNT(*) * 200 AS size,"
            " SUM(kind = 'round') AS rounds FROM records WHERE table_id IS NOT NULL"
            " GROUP BY table_id, hour")]

    @_reported
    def frame_volume(self) -> list[HourVolume]:
        return [HourVolume(row["table_id"], row["hour"] or "", row["n"], row["size"])
                for row in self.conn.execute(
            "SELECT table_id, substr(at, 1, 13) AS hour, COUNT(*) AS n, SUM(size) AS size"
            " FROM frames WHERE pruned_at IS NULL GROUP BY table_id, hour")]

    # -- other tables' chains -------------------------------------------------------------------

    def ingest(self, table: str, chain: str, records: Sequence[Record]) -> list[Ingested]:
        """Hold other tables' records verbatim, all in one durable transaction (see the
        protocol)."""
        for record in records:
            check_chain_key(table, chain, record, self.db_path)
        conn = self.conn
        outcomes: list[Ingested] = []
        try:
            conn.execute("BEGIN IMMEDIATE")
            state = conn.execute(
                "SELECT held, last_seq, next_seq FROM chain_state WHERE table_key = ? AND"
                " chain = ?", (table, chain)).fetchone()
            held, last_seq, next_seq = (0, 0, 1) if state is None else tuple(state)
            for record in records:
                row = conn.execute(
                    "SELECT * FROM chain_records WHERE table_key = ? AND chain = ? AND seq = ?",
                    (table, chain, record.seq)).fetchone()
                if row is not None:
                    before = record_from_row(row)
                    if before == record:
                        outcomes.append(Ingested(Ingest.DUPLICATE, before, next_seq))
                        continue
                    if conn.execute(
                            "SELECT 1 FROM chain_forks WHERE table_key = ? AND chain = ? AND"
                            " seq = ? AND hash = ? AND body = ? AND at = ? AND"
                            " signature IS ?", (table, chain, record.seq, record.hash,
                                                record.body_text, record.at,
                                                record.signature)).fetchone() is None:
                        conn.execute(
                            f"INSERT INTO chain_forks (table_key, chain, seen_at, "
                            f"{', '.join(RECORD_COLUMNS)}) VALUES (?,?,?,{_MARKS})",
                            (table, chain, format_time(self.clock()), *_record_values(record)))
                    outcomes.append(Ingested(Ingest.FORK, before, next_seq))
                    continue
                conn.execute(
                    f"INSERT INTO chain_records (table_key, chain, {', '.join(RECORD_COLUMNS)})"
                    f" VALUES (?,?,{_MARKS})", (table, chain, *_record_values(record)))
                held, last_seq = held + 1, max(last_seq, record.seq)
                while next_seq <= last_seq and conn.execute(
                        "SELECT 1 FROM chain_records WHERE table_key = ? AND chain = ? AND"
                        " seq = ?", (table, chain, next_seq)).fetchone() is not None:
                    next_seq += 1
                outcomes.append(Ingested(Ingest.NEW, record, next_seq))
            conn.execute(
                "INSERT OR REPLACE INTO chain_state VALUES (?,?,?,?,?)",
                (table, chain, held, last_seq, next_seq))
            conn.execute("COMMIT")
        except BaseException as error:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            if isinstance(error, sqlite3.DatabaseError):
                raise sqlite_failure(error, self.db_path) from None
            raise
        return outcomes

    @_reported
    def chains(self) -> list[ChainState]:
        return [ChainState(*row) for row in self.conn.execute(
            "SELECT table_key, chain, held, last_seq, next_seq FROM chain_state"
            " ORDER BY table_key, chain")]

    def chain_records(self, table: str, chain: str, *, after: int = 0,
                      round_key: int | None = None) -> Iterator[Record]:
        sql = "SELECT * FROM chain_records WHERE table_key = ? AND chain = ? AND seq > ?"
        params: list[Any] = [table, chain, after]
        if round_key is not None:
            sql += " AND round_key = ?"
            params.append(round_key)
        try:
            for row in self.conn.execute(sql + " ORDER BY seq", params):
                yield record_from_row(row)
        except sqlite3.DatabaseError as error:
            raise sqlite_failure(error, self.db_path) from None

    @_reported
    def forks(self, table: str | None = None) -> list[Fork]:
        sql = ("SELECT f.*, f.table_key AS fork_table, f.chain AS fork_chain, f.seen_at AS"
               " fork_seen FROM chain_forks f")
        params: tuple[Any, ...] = ()
        if table is not None:
            sql, params = sql + " WHERE f.table_key = ?", (table,)
        found = []
        for row in self.conn.execute(sql + " ORDER BY f.table_key, f.chain, f.seq, f.rowid",
                                     params):
            held = self.conn.execute(
                "SELECT * FROM chain_records WHERE table_key = ? AND chain = ? AND seq = ?",
                (row["fork_table"], row["fork_chain"], row["seq"])).fetchone()
            found.append(Fork(row["fork_table"], row["fork_chain"], record_from_row(held),
                              record_from_row(row), row["fork_seen"]))
        return found

    # -- operators ----------------------------------------------------------------------------

    @_reported
    def put_operator(self, operator: StoredOperator, created_at: str) -> None:
        self.conn.execute("INSERT OR REPLACE INTO operators VALUES (?, ?, ?, ?)",
                          (operator.name, operator.role, operator.password_hash, created_at))

    @_reported
    def delete_operator(self, name: str) -> bool:
        return self.conn.execute("DELETE FROM operators WHERE name = ?", (name,)).rowcount > 0

    @_reported
    def operators(self) -> list[StoredOperator]:
        return [StoredOperator(*row) for row in self.conn.execute(
            "SELECT name, role, password FROM operators ORDER BY name")]

    @_reported
    def operator(self, name: str) -> StoredOperator | None:
        row = self.conn.execute(
            "SELECT name, role, password FROM operators WHERE name = ?", (name,)).fetchone()
        return None if row is None else StoredOperator(*row)


def _statements(script: str) -> list[str]:
    return [part.strip() for part in script.split(";") if part.strip()]


def _indexed_round(row: sqlite3.Row) -> IndexedRound:
    return IndexedRound(
        round_key=row["round_key"], table=row["table_id"], round_id=row["round_id"],
        dealer=row["dealer"], started_at=row["started_at"], ended_at=row["ended_at"],
        status=row["status"], note=row["note"], net_cents=row["net_cents"],
        max_payout_cents=row["max_payout_cents"], events=row["events"], frames=row["frames"],
        alarms=row["alarms"])


def _indexed_frame(row: sqlite3.Row) -> IndexedFrame:
    return IndexedFrame(
        seq=row["seq"], round_key=row["round_key"], table=row["table_id"], at=row["at"],
        file=row["file"], media_type=row["media_type"], size=row["size"], key=bool(row["key"]),
        pruned_at=row["pruned_at"])


#: How a row of each search index table is named (from its first columns)
_INDEX_ROW = {"rounds": "round #{0}", "round_seats": "round #{0} seat {1}",
              "payout_lines": "round #{0} seat {1}", "frames": "frame record {0}",
              "alarms": "alarm record {0}", "round_cards": "round #{0} event {1}"}


def _names(table: str, rows: Iterable[Sequence[Any]]) -> list[str]:
    return list(dict.fromkeys(_INDEX_ROW[table].format(*row) for row in rows))


def _listed(names: list[str], shown: int = 5) -> str:
    more = len(names) - shown
    return ", ".join(names[:shown]) + (f" and {more} more" if more > 0 else "")


RECORD_COLUMNS = ("seq", "at", "table_id", "round_key", "round_id", "kind", "body", "file",
                  "sha256", "hash_format", "prev_hash", "hash", "signature")
_MARKS = ",".join("?" * len(RECORD_COLUMNS))


def _record_values(record: Record) -> tuple[Any, ...]:
    """A record's values in the order of :data:`RECORD_COLUMNS`."""
    return (record.seq, record.at, record.table, record.round_key, record.round_id, record.kind,
            record.body_text, record.file, record.sha256, record.hash_format, record.prev_hash,
            record.hash, record.signature)


def record_from_row(row: sqlite3.Row) -> Record:
    """A row as a Record. A text column holding another type (a byte string or a number written
    over it, or nothing where something is required) is read as text, so that the record fails
    its hash and is reported rather than stopping everything that reads the recording."""
    return Record(
        seq=row["seq"], at=_text(row["at"]), table=_optional_text(row["table_id"]),
        round_key=row["round_key"], round_id=_optional_text(row["round_id"]),
        kind=_text(row["kind"]), body_text=_text(row["body"]), file=_optional_text(row["file"]),
        sha256=_optional_text(row["sha256"]), hash_format=row["hash_format"],
        prev_hash=_text(row["prev_hash"]), hash=_text(row["hash"]),
        signature=_optional_text(row["signature"]),
    )


def _lenient_text(data: bytes) -> str:
    return data.decode("utf-8", "replace")


def _optional_text(value: Any) -> str | None:
    if value is None or isinstance(value, str):
        return value
    return _lenient_text(value) if isinstance(value, bytes) else str(value)


def _text(value: Any) -> str:
    return _optional_text(value) or ""


# -- indexing: one function, used by live appends and by rebuilds -------------------------------


#: What indexing a record whose body was altered into values the index cannot hold raises
_UNINDEXABLE = (sqlite3.IntegrityError, sqlite3.InterfaceError, sqlite3.ProgrammingError,
                sqlite3.DataError, OverflowError)


def project(conn: sqlite3.Connection, record: Record) -> None:
    """Index one record of a chain read back (a rebuild, or the projection verification compares
    with): one whose altered body the index cannot hold is left out; verification names it."""
    try:
        index_record(conn, record)
    except _UNINDEXABLE:
        pass


def index_record(conn: sqlite3.Connection, record: Record) -> None:
    """Update the search indexes for one record (the indexes are derived, never evidence)."""
    kind = record.kind
    try:
        body = json.loads(record.body_text)
    except json.JSONDecodeError:
        return  # an altered body is reported by verification, not by the index
    key = record.round_key
    if kind == "round":
        extra = body if isinstance(body, dict) else {}
        dealer = extra.get("dealer_id", extra.get("dealer"))
        conn.execute(
            "INSERT OR REPLACE INTO rounds (round_key, table_id, round_id, dealer, started_at,"
            " status, first_seq, last_seq) VALUES (?,?,?,?,?,?,?,?)",
            (key, record.table or "", record.round_id, None if dealer is None else str(dealer),
             record.at, "open", record.seq, record.seq),
        )
        if record.round_id is not None:  # alarms raised in it before it was recorded
            linked = conn.execute(
                "UPDATE alarms SET round_key = ? WHERE round_key IS NULL AND round_id = ?"
                " AND table_id IS ?", (key, record.round_id, record.table)).rowcount
            conn.execute("UPDATE rounds SET alarms = alarms + ? WHERE round_key = ?",
                         (linked, key))
        return
    if key is not None:
        conn.execute("UPDATE rounds SET last_seq = ? WHERE round_key = ?", (record.seq, key))
    if kind == "event" and key is not None:
        conn.execute("UPDATE rounds SET events = events + 1 WHERE round_key = ?", (key,))
        card = card_code(body.get("card")) if isinstance(body, dict) and body.get(
            "type") in ("card", "reveal") else None
        if card is not None:
            conn.execute(
                "INSERT OR REPLACE INTO round_cards SELECT round_key, events, ? FROM rounds"
                " WHERE round_key = ?", (card, key))
    elif kind == "frame" and isinstance(body, dict):
        conn.execute(
            "INSERT OR REPLACE INTO frames (seq, round_key, table_id, at, event_index, file,"
            " sha256, size, media_type, width, height, key) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
            (record.seq, key, record.table, record.at, body.get("event_index"), record.file,
             record.sha256, body.get("size", 0), body.get("media_type", ""), body.get("width"),
             body.get("height"), 1 if body.get("key", True) else 0),
        )
        if key is not None:
            conn.execute("UPDATE rounds SET frames = frames + 1 WHERE round_key = ?", (key,))
    elif kind == "alarm" and isinstance(body, dict):
        round_id = body.get("round")
        round_id = None if round_id is None else str(round_id)
        if key is None and round_id is not None:  # raised in a round: the latest of that id
            row = conn.execute(
                "SELECT MAX(round_key) FROM rounds WHERE round_id = ? AND table_id IS ?",
                (round_id, record.table)).fetchone()
            key = None if row is None else row[0]
        conn.execute(
            "INSERT OR REPLACE INTO alarms VALUES (?,?,?,?,?,?,?)",
            (record.seq, key, record.table, record.at, str(body.get("kind")),
             str(body.get("text")), round_id),
        )
        if key is not None:
            conn.execute("UPDATE rounds SET alarms = alarms + 1 WHERE round_key = ?", (key,))
    elif kind == "settlement" and isinstance(body, dict) and key is not None:
        _index_settlement(conn, key, record.at, body)
    elif kind == "partial" and key is not None:
        reason = body.get("reason") if isinstance(body, dict) else None
        conn.execute(
            "UPDATE rounds SET status = 'partial', note = ?, ended_at = ? WHERE round_key = ?",
            (reason, record.at, key),
        )
    elif kind == "prune" and isinstance(body, dict):
        for seq in body.get("frames", []):
            conn.execute("UPDATE frames SET pruned_at = ? WHERE seq = ?", (record.at, seq))
    elif kind == "keyframe" and isinstance(body, dict):
        conn.execute("UPDATE frames SET key = 1 WHERE seq = ?", (body.get("frame"),))


def card_code(value: Any) -> str | None:
    """A card as the search index keeps it (canonical code), or None for none or no card."""
    from dealer_assist.rules.cards import Card, CardCodeError

    try:
        return None if value is None else Card.parse(value).code
    except CardCodeError:
        return None


def _index_settlement(conn: sqlite3.Connection, key: int, at: str, body: dict[str, Any]) -> None:
    try:
        seats = body.get("seats") or []
        net = cents(body.get("net", "0"))
        payouts = [cents(seat["net"]) for seat in seats]
        conn.execute(
            "UPDATE rounds SET status = 'settled', ended_at = ?, net_cents = ?,"
            " max_payout_cents = ? WHERE round_key = ?",
            (at, net, max(payouts, default=0), key),
        )
        conn.execute("DELETE FROM round_seats WHERE round_key = ?", (key,))
        conn.execute("DELETE FROM payout_lines WHERE round_key = ?", (key,))
        for seat in seats:
            conn.execute(
                "INSERT INTO round_seats VALUES (?,?,?,?,?,?)",
                (key, int(seat["seat"]), seat.get("player"), cents(seat.get("wager", "0")),
                 cents(seat["net"]), len(seat.get("hands") or [])),
            )
            for line in seat.get("lines") or []:
                conn.execute(
                    "INSERT INTO payout_lines VALUES (?,?,?,?)",
                    (key, int(seat["seat"]), str(line.get("kind")), cents(line.get("amount", "0"))),
                )
    except (KeyError, TypeError, ValueError, ArithmeticError):
        conn.execute(
            "UPDATE rounds SET status = 'settled', ended_at = ?, note = ? WHERE round_key = ?",
            (at, "settlement could not be indexed", key),
        )
