"""The recording directory: an append-only, hash-chained record store indexed by SQLite.

Layout of a recording directory::

    index.sqlite          records (the hash chain) + search indexes + operators
    frames/DAY/TABLE/...  key frames and video frames (JPEG/PNG), named by round, event and hash

Every record is one row of ``records``; its ``hash`` is SHA-256 of the previous record's hash
(ASCII hex) followed by the record's canonical bytes (:func:`canonical_bytes`). Everything else in
the database (rounds, seats, frames, alarms) is an index rebuilt from the records on upgrade, so the
chain alone is the evidence. Each append is its own transaction and, with ``synchronous=FULL``,
is on disk when :meth:`RecordingStore.append` returns.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

SCHEMA_VERSION = 2
HASH_FORMAT = 2  # how new records are hashed (see canonical_bytes)
GENESIS_HASH = "0" * 64
INDEX_NAME = "index.sqlite"
FRAMES_DIR = "frames"
MAX_INTEGER = 2**63 - 1  # the largest integer SQLite stores

Clock = Callable[[], datetime]


class RecordingError(ValueError):
    """A recording directory that cannot be opened or a record that cannot be written."""

    def __init__(self, message: str, path: Path | str | None = None):
        self.path = path
        super().__init__(f"{path}: {message}" if path is not None else message)


class DamagedRecordingError(RecordingError):
    """The index database is damaged: SQLite finds it malformed, or a table of its schema is
    missing."""


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

    @property
    def body(self) -> Any:
        return json.loads(self.body_text)

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


def chain_hash(prev_hash: str, payload: bytes) -> str:
    return hashlib.sha256(prev_hash.encode("ascii") + payload).hexdigest()


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

INDEX_TABLES = ("rounds", "round_seats", "payout_lines", "frames", "alarms")
TABLES = ("schema_version", "records", *INDEX_TABLES, "operators")


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


class RecordingStore:
    """An open recording directory: appends chained records and answers queries.

    Opening upgrades an older schema in place (see :data:`SCHEMA_VERSION`).
    """

    #: How long a write waits for another program's lock on the index before it is refused.
    busy_timeout_s = 30.0

    def __init__(self, directory: Path | str, *, create: bool = False, clock: Clock = utc_now):
        self.directory = Path(directory)
        self.clock = clock
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
        body_text = canonical_json(body)
        conn = self.conn
        try:
            conn.execute("BEGIN IMMEDIATE")
            seq, prev_hash = self.head()
            seq += 1
            if kind == "round":
                round_key = self._next_round_key()
            partial = Record(
                seq, format_time(self.clock()), table, round_key, round_id, kind, body_text,
                file, sha256, HASH_FORMAT, prev_hash, "",
            )
            record = replace(partial, hash=chain_hash(prev_hash, canonical_bytes(partial)))
            conn.execute(
                "INSERT INTO records (seq, at, table_id, round_key, round_id, kind, body, file,"
                " sha256, hash_format, prev_hash, hash) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
                (record.seq, record.at, record.table, record.round_key, record.round_id,
                 record.kind, record.body_text, record.file, record.sha256, record.hash_format,
                 record.prev_hash, record.hash),
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

    def last_round_key(self) -> int:
        """The highest round key recorded (0 when none); read from the records' round index."""
        row = self.conn.execute("SELECT MAX(round_key) FROM records").fetchone()
        return int(row[0] or 0)

    def _next_round_key(self) -> int:
        return self.last_round_key() + 1

    def write_file(self, relative: str, data: bytes) -> None:
        """Write a frame file durably (temporary name, fsync, rename, fsync the folder)."""
        target = self.directory / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        temporary = target.with_name(target.name + ".part")
        with open(temporary, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, target)
        _fsync_dir(target.parent)

    # -- reading ------------------------------------------------------------------------------

    def records(
        self, *, round_key: int | None = None, kinds: tuple[str, ...] = ()
    ) -> Iterator[Record]:
        """Records in chain order, optionally of one round and/or of some kinds."""
        sql = "SELECT * FROM records"
        clauses: list[str] = []
        params: list[Any] = []
        if round_key is not None:
            clauses.append("round_key = ?")
            params.append(round_key)
        if kinds:
            clauses.append(f"kind IN ({','.join('?' * len(kinds))})")
            params.extend(kinds)
        if clauses:
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
                    found = self.record(last)
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
        row = self.conn.execute("SELECT * FROM records WHERE seq = ?", (seq,)).fetchone()
        return None if row is None else record_from_row(row)

    def head(self) -> tuple[int, str]:
        """The last record's sequence number and hash (0 and the genesis hash when empty)."""
        row = self.conn.execute(
            "SELECT seq, hash FROM records ORDER BY seq DESC LIMIT 1"
        ).fetchone()
        return (0, GENESIS_HASH) if row is None else (row["seq"], row["hash"])

    def rebuild_index(self) -> None:
        """Empty the search indexes and rebuild them from the chained records (inside a tx)."""
        for table in INDEX_TABLES:
            self.conn.execute(f"DELETE FROM {table}")
        for record in self.records():
            index_record(self.conn, record)


def _statements(script: str) -> list[str]:
    return [part.strip() for part in script.split(";") if part.strip()]


RECORD_COLUMNS = ("seq", "at", "table_id", "round_key", "round_id", "kind", "body", "file",
                  "sha256", "hash_format", "prev_hash", "hash")


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
        return
    if key is not None:
        conn.execute("UPDATE rounds SET last_seq = ? WHERE round_key = ?", (record.seq, key))
    if kind == "event" and key is not None:
        conn.execute("UPDATE rounds SET events = events + 1 WHERE round_key = ?", (key,))
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
        conn.execute(
            "INSERT OR REPLACE INTO alarms VALUES (?,?,?,?,?,?)",
            (record.seq, key, record.table, record.at, str(body.get("kind")),
             str(body.get("text"))),
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
