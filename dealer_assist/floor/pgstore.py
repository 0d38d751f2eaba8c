"""The surveillance room's store: every table's chain in PostgreSQL, a
:class:`~dealer_assist.surveillance.interface.RecordStore`.

One PostgreSQL schema holds one store (``room`` by default)::

    records      every chain's records, verbatim, keyed by (chain_no, seq); chain 0 is the
                 store's own (what append writes: the room's access records)
    chain_state  each ingested chain: its number, table, chain id, records held, next needed,
                 its retention cut (records below it not held were pruned) and records pruned
    chain_forks  records offered at a key held by another record
    rounds, round_seats, payout_lines, round_amounts, round_cards, frames, alarms
                 the search index, a projection of the records (rebuild_index makes it again):
                 round_amounts holds each amount a seat wagered, won or lost on some line;
                 cards by canonical code; an alarm naming the round in play (its body's
                 ``round``) is linked to the latest round of that id of its chain and table,
                 also when that round is recorded after it
    operators, schema_version

An ingested chain is projected into the search index in chain order up to its first gap (holes
a retention cut left below it are passed over: :mod:`.pgprune` keeps the index as a projection
of what is left); records past a gap are projected when it fills. The record format (hashing,
times, money) is :mod:`dealer_assist.surveillance.store`'s; this module (with :mod:`.pgprune`)
is the only code that speaks SQL to PostgreSQL. Each write is one transaction, committed
(durable, with PostgreSQL's default ``synchronous_commit``) before the method returns. One
store (one connection) per thread.
"""

from __future__ import annotations

import functools
import json
import logging
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any, Concatenate, ParamSpec, TypeVar
from urllib.parse import urlsplit

import psycopg
from psycopg import errors, sql

from dealer_assist.floor.pgprune import ChainCut, cut_chains
from dealer_assist.rules.money import format_money
from dealer_assist.surveillance.interface import (
    ChainState,
    FloorRound,
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
    RoundTally,
    StoredOperator,
)
from dealer_assist.surveillance.signed_chain import KEY_KIND
from dealer_assist.surveillance.store import (
    GENESIS_HASH,
    HASH_FORMAT,
    MAX_INTEGER,
    Clock,
    DamagedRecordingError,
    Record,
    RecordingError,
    RecordSigner,
    Unreadable,
    canonical_bytes,
    canonical_json,
    card_code,
    cents,
    chain_hash,
    check_chain_key,
    format_time,
    utc_now,
    write_frame_file,
)

logger = logging.getLogger(__name__)

SCHEMA_VERSION = 3
DEFAULT_SCHEMA = "room"
OWN_CHAIN = 0  # the chain number of the store's own records
PAGE = 5000  # records read per query while walking a chain

P = ParamSpec("P")
T = TypeVar("T")

_COLUMNS = ("seq", "at", "table_id", "round_key", "round_id", "kind", "body", "file", "sha256",
            "hash_format", "prev_hash", "hash", "signature")
_RECORD = ", ".join(_COLUMNS)

_SCHEMA = """
CREATE TABLE schema_version (version integer NOT NULL, applied_at text NOT NULL, note text);
CREATE TABLE records (
    chain_no integer NOT NULL, seq bigint NOT NULL, at text NOT NULL, table_id text,
    round_key bigint, round_id text, kind text NOT NULL, body text NOT NULL, file text,
    sha256 text, hash_format integer NOT NULL, prev_hash text NOT NULL, hash text NOT NULL,
    signature text, PRIMARY KEY (chain_no, seq));
CREATE INDEX records_round ON records (chain_no, round_key, seq);
CREATE INDEX records_kind ON records (chain_no, kind, seq);
CREATE TABLE chain_state (
    chain_no serial PRIMARY KEY, table_key text NOT NULL, chain text NOT NULL,
    held bigint NOT NULL DEFAULT 0, last_seq bigint NOT NULL DEFAULT 0,
    next_seq bigint NOT NULL DEFAULT 1, pruned_below bigint NOT NULL DEFAULT 1,
    pruned bigint NOT NULL DEFAULT 0, UNIQUE (table_key, chain));
CREATE TABLE chain_forks (
    chain_no integer NOT NULL, seen_at text NOT NULL, seq bigint NOT NULL, at text NOT NULL,
    table_id text, round_key bigint, round_id text, kind text NOT NULL, body text NOT NULL,
    file text, sha256 text, hash_format integer NOT NULL, prev_hash text NOT NULL,
    hash text NOT NULL, signature text);
CREATE INDEX chain_forks_key ON chain_forks (chain_no, seq);
CREATE TABLE rounds (
    chain_no integer NOT NULL, round_key bigint NOT NULL, table_id text NOT NULL,
    round_id text, dealer text, started_at text NOT NULL, ended_at text, status text NOT NULL,
    note text, net_cents bigint, max_payout_cents bigint, events bigint NOT NULL,
    frames bigint NOT NULL, alarms bigint NOT NULL, first_seq bigint NOT NULL,
    last_seq bigint NOT NULL, PRIMARY KEY (chain_no, round_key));
CREATE INDEX rounds_time ON rounds (started_at, chain_no, round_key);
CREATE INDEX rounds_table_time ON rounds (table_id, started_at);
CREATE INDEX rounds_dealer_time ON rounds (dealer, started_at);
CREATE INDEX rounds_id ON rounds (round_id);
CREATE INDEX rounds_alarmed_time ON rounds (started_at, chain_no, round_key) WHERE alarms > 0;
CREATE INDEX rounds_payout ON rounds (max_payout_cents);
CREATE INDEX rounds_open ON rounds (table_id, chain_no) WHERE status = 'open';
CREATE TABLE round_seats (
    chain_no integer NOT NULL, round_key bigint NOT NULL, seat bigint NOT NULL, player text,
    wager_cents bigint NOT NULL, net_cents bigint NOT NULL, hands bigint NOT NULL,
    PRIMARY KEY (chain_no, round_key, seat));
CREATE INDEX round_seats_seat ON round_seats (seat, chain_no, round_key);
CREATE INDEX round_seats_net ON round_seats (net_cents);
CREATE TABLE payout_lines (
    chain_no integer NOT NULL, round_key bigint NOT NULL, seat bigint NOT NULL,
    kind text NOT NULL, amount_cents bigint NOT NULL);
CREATE INDEX payout_lines_round ON payout_lines (chain_no, round_key);
CREATE TABLE round_amounts (
    chain_no integer NOT NULL, round_key bigint NOT NULL, amount_cents bigint NOT NULL,
    PRIMARY KEY (chain_no, round_key, amount_cents));
CREATE INDEX round_amounts_amount ON round_amounts (amount_cents, chain_no, round_key);
CREATE TABLE round_cards (
    chain_no integer NOT NULL, seq bigint NOT NULL, round_key bigint NOT NULL,
    card text NOT NULL, PRIMARY KEY (chain_no, seq));
CREATE INDEX round_cards_card ON round_cards (card, chain_no, round_key);
CREATE TABLE frames (
    chain_no integer NOT NULL, seq bigint NOT NULL, round_key bigint, table_id text,
    at text NOT NULL, event_index bigint, file text NOT NULL, sha256 text NOT NULL,
    size bigint NOT NULL, media_type text NOT NULL, width bigint, height bigint,
    key boolean NOT NULL, pruned_at text, PRIMARY KEY (chain_no, seq));
CREATE INDEX frames_round ON frames (chain_no, round_key, event_index);
CREATE TABLE alarms (
    chain_no integer NOT NULL, seq bigint NOT NULL, round_key bigint, table_id text,
    at text NOT NULL, kind text NOT NULL, text text NOT NULL, round_id text,
    PRIMARY KEY (chain_no, seq));
CREATE INDEX alarms_kind ON alarms (kind, chain_no, round_key);
CREATE INDEX alarms_round ON alarms (chain_no, round_key);
CREATE INDEX alarms_waiting ON alarms (chain_no, round_id) WHERE round_key IS NULL;
CREATE TABLE operators (
    name text PRIMARY KEY, role text NOT NULL, password text NOT NULL, created_at text NOT NULL);
"""

#: each schema's changes from the one before
_UPGRADES = {2: """
ALTER TABLE alarms ADD COLUMN round_id text;
CREATE INDEX alarms_waiting ON alarms (chain_no, round_id) WHERE round_key IS NULL;
CREATE TABLE round_amounts (
    chain_no integer NOT NULL, round_key bigint NOT NULL, amount_cents bigint NOT NULL,
    PRIMARY KEY (chain_no, round_key, amount_cents));
CREATE INDEX round_amounts_amount ON round_amounts (amount_cents, chain_no, round_key);
""", 3: """
ALTER TABLE chain_state ADD COLUMN pruned_below bigint NOT NULL DEFAULT 1,
    ADD COLUMN pruned bigint NOT NULL DEFAULT 0;
"""}
#: the upgrades after which the index is projected again (the others leave it as it is)
_REPROJECTED = {2}

#: the search index's tables, with the columns that name a row of each
INDEX_TABLES = {"rounds": ("chain_no", "round_key"),
                "round_seats": ("chain_no", "round_key", "seat"),
                "payout_lines": ("chain_no", "round_key", "seat"),
                "round_amounts": ("chain_no", "round_key", "amount_cents"),
                "round_cards": ("chain_no", "seq"), "frames": ("chain_no", "seq"),
                "alarms": ("chain_no", "seq")}
TABLES = ("schema_version", "records", "chain_state", "chain_forks", *INDEX_TABLES, "operators")

#: errors that mean the store's schema is damaged (a table or column gone), not that it cannot
#: be written now
_DAMAGE = (errors.UndefinedTable, errors.UndefinedColumn, errors.DataCorrupted,
           errors.IndexCorrupted)


def describe_url(url: str) -> str:
    """A PostgreSQL URL without its password, to name a store in messages and logs."""
    try:
        parts = urlsplit(url)
        host = parts.hostname or "localhost"
        user = f"{parts.username}@" if parts.username else ""
        port = f":{parts.port}" if parts.port else ""
    except ValueError:
        return "postgresql://(unreadable URL)"
    return f"{parts.scheme}://{user}{host}{port}{parts.path}"


def _reported(method: Callable[Concatenate[PostgresStore, P], T]
              ) -> Callable[Concatenate[PostgresStore, P], T]:
    """A store method whose PostgreSQL errors are raised as :meth:`PostgresStore.failure`."""
    @functools.wraps(method)
    def reporting(store: PostgresStore, *args: P.args, **kwargs: P.kwargs) -> T:
        try:
            return method(store, *args, **kwargs)
        except psycopg.Error as error:
            raise store.failure(error) from None

    return reporting


class PostgresStore:
    """A store in one PostgreSQL schema (a ``RecordStore``); frame files under ``directory``.

    ``create``: set the schema up when it holds no store (refused otherwise: RecordingError).
    Writes wait ``lock_timeout_s`` for another program's lock, then are refused.
    """

    def __init__(self, url: str, directory: Path | str, *, schema: str = DEFAULT_SCHEMA,
                 create: bool = False, clock: Clock = utc_now,
                 signer: RecordSigner | None = None, lock_timeout_s: float = 30.0):
        self.directory = Path(directory)
        self.clock = clock
        self.signer = signer
        self.schema = schema
        self._where = f"{describe_url(url)} (schema {schema})"
        try:
            self.conn = psycopg.connect(url, autocommit=True, connect_timeout=10)
        except psycopg.Error as error:
            raise RecordingError(f"cannot connect to PostgreSQL: {error}".strip(),
                                 self._where) from None
        try:
            self.conn.execute(sql.SQL("SET lock_timeout = {}").format(
                sql.Literal(f"{max(1, int(lock_timeout_s * 1000))}ms")))
            self._open_schema(create)
        except BaseException:
            self.conn.close()
            raise

    # -- schema -------------------------------------------------------------------------------

    @_reported
    def _open_schema(self, create: bool) -> None:
        version = self.schema_version()
        if version > SCHEMA_VERSION:
            raise RecordingError(f"store schema {version} is newer than this program reads "
                                 f"({SCHEMA_VERSION}): upgrade dealer-assist", self._where)
        if 0 < version < SCHEMA_VERSION:
            self._upgrade(version)
            version = SCHEMA_VERSION
        if version == SCHEMA_VERSION:
            self.conn.execute(sql.SQL("SET search_path TO {}").format(
                sql.Identifier(self.schema)))
            return
        if not create:
            raise RecordingError("holds no store (no tables set up there)", self._where)
        with self.conn.transaction():
            self.conn.execute(sql.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(
                sql.Identifier(self.schema)))
            self.conn.execute(sql.SQL("SET LOCAL search_path TO {}").format(
                sql.Identifier(self.schema)))
            for statement in _statements(_SCHEMA):
                self.conn.execute(statement)  # type: ignore[call-overload]
            self.conn.execute("INSERT INTO schema_version VALUES (%s, %s, %s)",
                              (SCHEMA_VERSION, format_time(self.clock()), "created"))
        self.conn.execute(sql.SQL("SET search_path TO {}").format(sql.Identifier(self.schema)))

    def _upgrade(self, version: int) -> None:
        """Bring the store from schema ``version`` to this one, in one transaction, projecting
        its index again where an upgrade needs it (the records are never touched)."""
        with self.conn.transaction(), self.conn.cursor() as cur:
            cur.execute(sql.SQL("SET LOCAL search_path TO {}").format(
                sql.Identifier(self.schema)))
            for step in range(version + 1, SCHEMA_VERSION + 1):
                for statement in _statements(_UPGRADES[step]):
                    cur.execute(statement)  # type: ignore[call-overload]
                cur.execute("INSERT INTO schema_version VALUES (%s, %s, %s)",
                            (step, format_time(self.clock()), f"upgraded from schema {step - 1}"))
            if _REPROJECTED & set(range(version + 1, SCHEMA_VERSION + 1)):
                self._rebuild(cur)
        logger.info("%s: upgraded from store schema %s to %s", self._where, version,
                    SCHEMA_VERSION)

    def schema_version(self) -> int:
        found = self.conn.execute(
            "SELECT 1 FROM information_schema.tables WHERE table_schema = %s"
            " AND table_name = 'schema_version'", (self.schema,)).fetchone()
        if found is None:
            return 0
        row = self.conn.execute(sql.SQL("SELECT MAX(version) FROM {}.schema_version").format(
            sql.Identifier(self.schema))).fetchone()
        return int(row[0] or 0) if row else 0

    @property
    def location(self) -> str:
        return self._where

    def failure(self, error: psycopg.Error) -> RecordingError:
        """The error to report for one PostgreSQL raised: names the store and what is wrong."""
        text = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        if isinstance(error, _DAMAGE):
            return DamagedRecordingError(
                f"the store is damaged ({text}): run 'dealer-assist room verify' on it",
                self._where)
        return RecordingError(
            f"cannot use the store now ({text}): is the server down, the store locked by another"
            " program, or its disk full?", self._where)

    def close(self) -> None:
        self.conn.close()

    # -- the store's own chain: writing -------------------------------------------------------

    @_reported
    def append(self, kind: str, body: Any, *, table: str | None = None,
               round_key: int | None = None, round_id: str | None = None,
               file: str | None = None, sha256: str | None = None) -> Record:
        with self.conn.transaction(), self.conn.cursor() as cur:
            cur.execute("LOCK TABLE records IN SHARE ROW EXCLUSIVE MODE")
            return self._append(cur, kind, body, table=table, round_key=round_key,
                                round_id=round_id, file=file, sha256=sha256)

    def _append(self, cur: psycopg.Cursor[Any], kind: str, body: Any, *,
                table: str | None = None, round_key: int | None = None,
                round_id: str | None = None, file: str | None = None,
                sha256: str | None = None) -> Record:
        """Append to the store's own chain in the caller's transaction (records locked)."""
        body_text = canonical_json(body)
        seq, prev_hash = self._head(cur)
        if kind == "round":
            cur.execute("SELECT MAX(round_key) FROM records WHERE chain_no = 0")
            round_key = int((cur.fetchone() or (0,))[0] or 0) + 1
        partial = Record(seq + 1, format_time(self.clock()), table, round_key, round_id,
                         kind, body_text, file, sha256, HASH_FORMAT, prev_hash, "")
        record = _with_hash(partial)
        if self.signer is not None:
            record = _signed(record, self.signer.sign(record.hash))
        _copy(cur, "records", ("chain_no", *_COLUMNS), [(OWN_CHAIN, *_values(record))])
        Projection(cur, OWN_CHAIN).project([record])
        return record

    @_reported
    def prune_records(self, cutoff: str, held: Mapping[tuple[str, str], Collection[int]],
                      kind: str, body: dict[str, Any]
                      ) -> tuple[Record | None, list[ChainCut], list[str]]:
        """Delete the ingested chains' records recorded before ``cutoff`` but those kept
        (:mod:`.pgprune`; ``held``: the round keys on hold by box and chain) and record what
        was deleted, ``body`` with ``chains`` (each cut), as one ``kind`` record of the store's
        own chain, in one transaction: the record and the deletions commit together or not at
        all. Nothing deleted: nothing recorded. Also gives why a chain was not cut."""
        with self.conn.transaction(), self.conn.cursor() as cur:
            cuts, refused = cut_chains(cur, cutoff, held, KEY_KIND)
            if not cuts:
                return None, [], refused
            record = self._append(cur, kind, {**body,
                                              "chains": [cut.to_json() for cut in cuts]})
        for cut in cuts:
            logger.info("%s: pruned %s records of table %s chain %s below %s", self._where,
                        cut.deleted, cut.box, cut.chain, cut.below)
        return record, cuts, refused

    def write_file(self, relative: str, data: bytes) -> None:
        write_frame_file(self.directory, relative, data)

    @_reported
    def check(self) -> None:
        found = {row[0] for row in self.conn.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = %s",
            (self.schema,))}
        missing = [name for name in TABLES if name not in found]
        if missing:
            raise DamagedRecordingError(f"the store is damaged (no table {', '.join(missing)}),"
                                        " so nothing is written to it", self._where)

    def checkpoint(self) -> None:
        """Nothing to tidy: PostgreSQL checkpoints by itself."""

    @_reported
    def analyze(self) -> None:
        """Refresh the query planner's statistics (after a bulk load: the searches' plans
        depend on them; autovacuum does it in time by itself)."""
        self.conn.execute("ANALYZE")

    # -- the store's own chain: reading -------------------------------------------------------

    @_reported
    def head(self) -> tuple[int, str]:
        with self.conn.cursor() as cur:
            return self._head(cur)

    @staticmethod
    def _head(cur: psycopg.Cursor[Any]) -> tuple[int, str]:
        cur.execute("SELECT seq, hash FROM records WHERE chain_no = 0 ORDER BY seq DESC LIMIT 1")
        row = cur.fetchone()
        return (0, GENESIS_HASH) if row is None else (int(row[0]), str(row[1]))

    @_reported
    def last_seq(self) -> int:
        row = self.conn.execute("SELECT MAX(seq) FROM records WHERE chain_no = 0").fetchone()
        return int(row[0] or 0) if row else 0

    @_reported
    def last_round_key(self) -> int:
        row = self.conn.execute(
            "SELECT MAX(round_key) FROM records WHERE chain_no = 0").fetchone()
        return int(row[0] or 0) if row else 0

    @_reported
    def record(self, seq: int) -> Record | None:
        if not 0 <= seq <= MAX_INTEGER:
            return None
        row = self.conn.execute(f"SELECT {_RECORD} FROM records WHERE chain_no = 0 AND seq = %s",
                                (seq,)).fetchone()
        return None if row is None else Record(*row)

    def records(self, *, round_key: int | None = None,
                kinds: tuple[str, ...] = ()) -> Iterator[Record]:
        return self._walk(OWN_CHAIN, 0, round_key, kinds)

    def _walk(self, chain_no: int, after: int, round_key: int | None,
              kinds: tuple[str, ...], below: int | None = None) -> Iterator[Record]:
        """A chain's records numbered above ``after`` (and below ``below``), page by page."""
        clauses = [sql.SQL("chain_no = %s AND seq > %s")]
        params: list[Any] = [chain_no]
        if round_key is not None:
            clauses.append(sql.SQL("round_key = %s"))
        if kinds:
            clauses.append(sql.SQL("kind = ANY(%s)"))
        if below is not None:
            clauses.append(sql.SQL("seq < %s"))
        query = sql.SQL("SELECT {} FROM records WHERE {} ORDER BY seq LIMIT {}").format(
            sql.SQL(_RECORD), sql.SQL(" AND ").join(clauses), sql.Literal(PAGE))
        last = after
        while True:
            values = [*params, last]
            if round_key is not None:
                values.append(round_key)
            if kinds:
                values.append(list(kinds))
            if below is not None:
                values.append(below)
            try:
                rows = self.conn.execute(query, values).fetchall()
            except psycopg.Error as error:
                raise self.failure(error) from None
            for row in rows:
                yield Record(*row)
            if len(rows) < PAGE:
                return
            last = rows[-1][0]

    @_reported
    def latest_records(self, kind: str, limit: int) -> list[Record]:
        return [Record(*row) for row in self.conn.execute(
            f"SELECT {_RECORD} FROM records WHERE chain_no = 0 AND kind = %s ORDER BY seq DESC"
            " LIMIT %s", (kind, max(0, limit)))]

    def scan(self) -> Iterator[Record | Unreadable]:
        """Every record of the store's own chain (PostgreSQL reads whole or refuses: a damaged
        page is the server's to report, not a record's)."""
        yield from self.records()

    def round_records(self, key: int) -> list[Record | Unreadable]:
        if not 0 <= key <= MAX_INTEGER:
            return []
        return list(self.records(round_key=key))

    @_reported
    def round_keys(self, round_id: str | None = None) -> list[int]:
        query = "SELECT DISTINCT round_key FROM records WHERE chain_no = 0 AND kind = 'round'" \
                " AND round_key IS NOT NULL"
        params: tuple[Any, ...] = ()
        if round_id is not None:
            query, params = query + " AND round_id = %s", (round_id,)
        return [int(row[0]) for row in self.conn.execute(query + " ORDER BY round_key", params)]

    @_reported
    def named_files(self) -> set[str]:
        return {row[0] for row in self.conn.execute(
            "SELECT file FROM records WHERE chain_no = 0 AND file IS NOT NULL")}

    def storage_problems(self, thorough: bool = False) -> list[str]:
        """What is missing of the store's tables (PostgreSQL checks its own pages)."""
        try:
            self.check()
        except DamagedRecordingError as error:
            return [str(error)]
        return []

    # -- the search index ---------------------------------------------------------------------

    @_reported
    def rebuild_index(self) -> None:
        """Empty the search index and project it again from the records, in one transaction:
        the store's own chain whole, each ingested chain up to its first gap."""
        with self.conn.transaction(), self.conn.cursor() as cur:
            self._rebuild(cur)

    def _rebuild(self, cur: psycopg.Cursor[Any]) -> None:
        cur.execute("LOCK TABLE records IN SHARE ROW EXCLUSIVE MODE")
        cur.execute(sql.SQL("TRUNCATE {}").format(
            sql.SQL(", ").join(map(sql.Identifier, INDEX_TABLES))))
        self._project_all(cur, "")

    def _project_all(self, cur: psycopg.Cursor[Any], prefix: str) -> None:
        chains = [(OWN_CHAIN, None)] + [
            (int(row[0]), int(row[1])) for row in cur.execute(
                "SELECT chain_no, next_seq FROM chain_state ORDER BY chain_no").fetchall()]
        for chain_no, next_seq in chains:
            projection = Projection(cur, chain_no, prefix)
            batch: list[Record] = []
            last = 0
            while True:
                query = f"SELECT {_RECORD} FROM records WHERE chain_no = %s AND seq > %s" + (
                    "" if next_seq is None else " AND seq < %s") + f" ORDER BY seq LIMIT {PAGE}"
                params: list[Any] = [chain_no, last] + ([] if next_seq is None else [next_seq])
                batch = [Record(*row) for row in cur.execute(query, params).fetchall()]
                projection.project(batch)
                if len(batch) < PAGE:
                    break
                last = batch[-1].seq

    @_reported
    def index_mismatches(self, whole: bool = True) -> list[str]:
        """The search index compared with one projected afresh from the records, both read in
        one snapshot (so ``whole`` changes nothing here)."""
        found: list[str] = []
        with self.conn.transaction(), self.conn.cursor() as cur:
            cur.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
            for table in INDEX_TABLES:
                cur.execute(sql.SQL("CREATE TEMP TABLE {} (LIKE {}) ON COMMIT DROP").format(
                    sql.Identifier(f"rebuilt_{table}"), sql.Identifier(table)))
            self._project_all(cur, "rebuilt_")
            for table, names in INDEX_TABLES.items():
                lacks = _row_names(table, cur.execute(sql.SQL(
                    "SELECT {names} FROM (SELECT * FROM {rebuilt} EXCEPT ALL SELECT * FROM {kept})"
                    " AS x").format(names=sql.SQL(", ").join(map(sql.Identifier, names)),
                                    rebuilt=sql.Identifier(f"rebuilt_{table}"),
                                    kept=sql.Identifier(table))).fetchall())
                adds = _row_names(table, cur.execute(sql.SQL(
                    "SELECT {names} FROM (SELECT * FROM {kept} EXCEPT ALL SELECT * FROM {rebuilt})"
                    " AS x").format(names=sql.SQL(", ").join(map(sql.Identifier, names)),
                                    rebuilt=sql.Identifier(f"rebuilt_{table}"),
                                    kept=sql.Identifier(table))).fetchall())
                parts = []
                if differ := [name for name in lacks if name in adds]:
                    parts.append(f"its rows for {_listed(differ)} differ from what the records"
                                 " give")
                if lacks := [name for name in lacks if name not in differ]:
                    parts.append(f"it lacks rows for {_listed(lacks)}")
                if adds := [name for name in adds if name not in differ]:
                    parts.append(f"it has rows for {_listed(adds)}, which no record gives")
                if parts:
                    found.append(f"the search index table {table} does not match the records:"
                                 f" {'; '.join(parts)}")
        return found

    def find_rounds(self, query: RoundQuery) -> tuple[list[IndexedRound], list[int]]:
        """Rounds of the store's own chain matching ``query``, newest first."""
        return [found.round for found in self._find(query, own=True)], []

    def find_floor_rounds(self, query: RoundQuery) -> list[FloorRound]:
        """Rounds of every ingested chain matching ``query``, newest first (``query.table``:
        the table the records name)."""
        return self._find(query, own=False)

    @_reported
    def _find(self, query: RoundQuery, *, own: bool) -> list[FloorRound]:
        clauses = [sql.SQL("r.chain_no = 0" if own else "r.chain_no > 0")]
        params: list[Any] = []

        def where(text: str, *values: Any) -> None:
            clauses.append(sql.SQL(text))
            params.extend(values)

        if query.table:
            where("r.table_id = %s", query.table)
        if query.since:
            where("r.started_at >= %s", format_time(query.since))
        if query.until:
            where("r.started_at <= %s", format_time(query.until))
        if query.round_id:
            where("r.round_id = %s", query.round_id)
        if query.dealer is not None:
            where("r.dealer = %s", query.dealer)
        if query.seat is not None:
            if not -MAX_INTEGER <= query.seat <= MAX_INTEGER:
                return []
            where("EXISTS (SELECT 1 FROM round_seats s WHERE s.chain_no = r.chain_no AND"
                  " s.round_key = r.round_key AND s.seat = %s)", query.seat)
        if query.card is not None:
            code = card_code(query.card)
            if code is None:
                return []
            where("EXISTS (SELECT 1 FROM round_cards c WHERE c.chain_no = r.chain_no AND"
                  " c.round_key = r.round_key AND c.card = %s)", code)
        if query.amount is not None:
            try:
                amount = cents(query.amount)
            except ArithmeticError:
                return []
            if not -MAX_INTEGER <= amount <= MAX_INTEGER:
                return []
            # one row per round and amount, so the planner's estimate holds: it walks the
            # newest rounds for a common amount, or gathers the few rounds of a rare one
            where("(r.chain_no, r.round_key) IN (SELECT a.chain_no, a.round_key FROM"
                  " round_amounts a WHERE a.amount_cents = %s)", amount)
        if query.alarm:
            if query.alarm == "*":
                where("r.alarms > 0")
            else:  # the alarmed rounds newest first (their own index), then the kind
                where("r.alarms > 0 AND EXISTS (SELECT 1 FROM alarms a WHERE"
                      " a.chain_no = r.chain_no AND a.round_key = r.round_key AND a.kind = %s)",
                      query.alarm)
        if query.payout_above is not None:
            above = max(-MAX_INTEGER, min(MAX_INTEGER, cents(query.payout_above)))
            # the round's largest seat net bounds it (indexed); a seat must still be there
            where("r.max_payout_cents > %s AND EXISTS (SELECT 1 FROM round_seats s WHERE"
                  " s.chain_no = r.chain_no AND s.round_key = r.round_key AND s.net_cents > %s)",
                  above, above)
        limit = max(1, min(query.limit, 5000))
        rows = self.conn.execute(sql.SQL(
            "SELECT c.table_key, c.chain, {round} FROM rounds r LEFT JOIN chain_state c ON"
            " c.chain_no = r.chain_no WHERE {clauses} ORDER BY r.started_at DESC,"
            " r.chain_no DESC, r.round_key DESC LIMIT {limit}").format(
                round=sql.SQL(_ROUND), clauses=sql.SQL(" AND ").join(clauses),
                limit=sql.Literal(limit)), params).fetchall()
        return [FloorRound(row[0] or "", row[1] or "", _indexed_round(row[2:])) for row in rows]

    @_reported
    def round_alarm_records(self, round_key: int) -> list[int]:
        if not -MAX_INTEGER <= round_key <= MAX_INTEGER:
            return []
        return [int(row[0]) for row in self.conn.execute(
            "SELECT seq FROM alarms WHERE chain_no = 0 AND round_key = %s ORDER BY seq",
            (round_key,))]

    @_reported
    def floor_choices(self) -> tuple[list[str], list[str]]:
        """The tables and alarm kinds of the ingested chains' index."""
        return ([row[0] for row in self.conn.execute(
                    "SELECT DISTINCT table_id FROM rounds WHERE chain_no > 0 ORDER BY 1")],
                [row[0] for row in self.conn.execute(
                    "SELECT DISTINCT kind FROM alarms WHERE chain_no > 0 ORDER BY 1")])

    @_reported
    def indexed_rounds(self) -> list[IndexedRound]:
        return [_indexed_round(row) for row in self.conn.execute(
            f"SELECT {_ROUND} FROM rounds r WHERE chain_no = 0 ORDER BY round_key")]

    @_reported
    def open_rounds(self, table: str) -> list[IndexedRound]:
        return [_indexed_round(row) for row in self.conn.execute(
            f"SELECT {_ROUND} FROM rounds r WHERE chain_no = 0 AND table_id = %s AND"
            " status = 'open' ORDER BY round_key", (table,))]

    @_reported
    def indexed_seats(self) -> list[IndexedSeat]:
        return [IndexedSeat(*row) for row in self.conn.execute(
            "SELECT round_key, seat, net_cents, hands FROM round_seats WHERE chain_no = 0")]

    @_reported
    def indexed_payouts(self) -> list[IndexedPayout]:
        return [IndexedPayout(*row) for row in self.conn.execute(
            "SELECT round_key, kind, amount_cents FROM payout_lines WHERE chain_no = 0")]

    @_reported
    def indexed_alarms(self) -> list[IndexedAlarm]:
        return [IndexedAlarm(*row) for row in self.conn.execute(
            "SELECT round_key, kind FROM alarms WHERE chain_no = 0 AND round_key IS NOT NULL")]

    def search_choices(self) -> tuple[list[str], list[str]]:
        try:
            return ([row[0] for row in self.conn.execute(
                        "SELECT DISTINCT table_id FROM rounds WHERE chain_no = 0 ORDER BY 1")],
                    [row[0] for row in self.conn.execute(
                        "SELECT DISTINCT kind FROM alarms WHERE chain_no = 0 ORDER BY 1")])
        except psycopg.Error:
            return [], []

    @_reported
    def frame(self, seq: int) -> IndexedFrame | None:
        if not 0 <= seq <= MAX_INTEGER:
            return None
        row = self.conn.execute(f"SELECT {_FRAME} FROM frames WHERE chain_no = 0 AND seq = %s",
                                (seq,)).fetchone()
        return None if row is None else IndexedFrame(*row)

    @_reported
    def pruned_frames(self, round_key: int) -> set[int]:
        return {int(row[0]) for row in self.conn.execute(
            "SELECT seq FROM frames WHERE chain_no = 0 AND round_key = %s AND pruned_at IS NOT"
            " NULL", (round_key,))}

    @_reported
    def video_frames_before(self, cutoff: str) -> list[IndexedFrame]:
        return [IndexedFrame(*row) for row in self.conn.execute(
            f"SELECT {_FRAME} FROM frames WHERE chain_no = 0 AND NOT key AND pruned_at IS NULL"
            " AND at < %s ORDER BY seq", (cutoff,))]

    @_reported
    def floor_frames_before(self, cutoff: str) -> list[tuple[str, str, int, int | None, str]]:
        """The frames of ingested chains recorded before ``cutoff``: (box, chain, seq, round
        key, file), in order (those pruned already among them: the room's prune records say
        which)."""
        return [(row[0], row[1], int(row[2]), _optional_int(row[3]), row[4])
                for row in self.conn.execute(
                    "SELECT c.table_key, c.chain, f.seq, f.round_key, f.file FROM frames f JOIN"
                    " chain_state c ON c.chain_no = f.chain_no WHERE f.chain_no > 0 AND"
                    " f.at < %s ORDER BY c.table_key, c.chain, f.seq", (cutoff,))]

    @_reported
    def key_frame_files(self) -> set[str]:
        return {row[0] for row in self.conn.execute(
            "SELECT file FROM frames WHERE chain_no = 0 AND key")}

    @_reported
    def record_volume(self) -> list[HourVolume]:
        return [HourVolume(row[0], row[1] or "", int(row[2]), int(row[3]), int(row[4]))
                for row in self.conn.execute(
            "SELECT table_id, substr(at, 1, 13) AS hour, COUNT(*),"
            " SUM(length(body)) + COUNT(*) * 200, COUNT(*) FILTER (WHERE kind = 'round')"
            " FROM records WHERE chain_no = 0 AND table_id IS NOT NULL GROUP BY 1, 2")]

    @_reported
    def frame_volume(self) -> list[HourVolume]:
        return [HourVolume(row[0], row[1] or "", int(row[2]), int(row[3]))
                for row in self.conn.execute(
            "SELECT table_id, substr(at, 1, 13), COUNT(*), SUM(size) FROM frames"
            " WHERE chain_no = 0 AND pruned_at IS NULL GROUP BY 1, 2")]

    # -- other tables' chains -----------------------------------------------------------------

    @_reported
    def ingest(self, table: str, chain: str, records: Sequence[Record]) -> list[Ingested]:
        """Hold other tables' records verbatim, in one transaction (the protocol's contract);
        the bulk path: the new records go in by COPY."""
        for record in records:
            check_chain_key(table, chain, record, self._where)
            _check_text(record, self._where)
        if not records:
            return []
        outcomes: list[Ingested] = []
        with self.conn.transaction(), self.conn.cursor() as cur:
            state = ("SELECT chain_no, held, last_seq, next_seq, pruned_below FROM chain_state"
                     " WHERE table_key = %s AND chain = %s FOR UPDATE")
            row = cur.execute(state, (table, chain)).fetchone()
            if row is None:  # a chain first seen (inserted only then: each try takes a number)
                cur.execute("INSERT INTO chain_state (table_key, chain) VALUES (%s, %s)"
                            " ON CONFLICT DO NOTHING", (table, chain))
                row = cur.execute(state, (table, chain)).fetchone()
                assert row is not None
            chain_no, held, last_seq, next_seq, pruned_below = (int(value) for value in row)
            first_needed = next_seq
            offered = sorted({record.seq for record in records})
            before = {int(row[0]): Record(*row) for row in cur.execute(
                f"SELECT {_RECORD} FROM records WHERE chain_no = %s AND seq = ANY(%s::bigint[])",
                (chain_no, offered))}
            beyond = {int(row[0]) for row in cur.execute(
                "SELECT seq FROM records WHERE chain_no = %s AND seq > %s",
                (chain_no, next_seq))}  # held past the first gap: arrived early
            new: list[Record] = []
            forks: list[Record] = []
            for record in records:
                held_one = before.get(record.seq)
                if held_one is None and record.seq < pruned_below:  # sent again from an old
                    outcomes.append(Ingested(Ingest.PRUNED, record, next_seq))  # cursor
                elif held_one is None:
                    before[record.seq] = record
                    new.append(record)
                    held, last_seq = held + 1, max(last_seq, record.seq)
                    beyond.add(record.seq)
                    while next_seq in beyond:
                        beyond.discard(next_seq)
                        next_seq += 1
                    outcomes.append(Ingested(Ingest.NEW, record, next_seq))
                elif held_one == record:
                    outcomes.append(Ingested(Ingest.DUPLICATE, held_one, next_seq))
                else:
                    if record not in forks:
                        forks.append(record)
                    outcomes.append(Ingested(Ingest.FORK, held_one, next_seq))
            if new:
                _copy(cur, "records", ("chain_no", *_COLUMNS),
                      [(chain_no, *_values(record)) for record in new])
            self._note_forks(cur, chain_no, forks)
            cur.execute("UPDATE chain_state SET held = %s, last_seq = %s, next_seq = %s"
                        " WHERE chain_no = %s", (held, last_seq, next_seq, chain_no))
            if next_seq > first_needed:
                self._project_run(cur, chain_no, first_needed, next_seq,
                                  {record.seq: record for record in new})
        return outcomes

    def _note_forks(self, cur: psycopg.Cursor[Any], chain_no: int, forks: list[Record]) -> None:
        """Keep each offered fork once (a fork offered again is noted once)."""
        if not forks:
            return
        known = {Record(*row) for row in cur.execute(
            f"SELECT {_RECORD} FROM chain_forks WHERE chain_no = %s AND seq = ANY(%s::bigint[])",
            (chain_no, [record.seq for record in forks]))}
        seen_at = format_time(self.clock())
        rows = [(chain_no, seen_at, *_values(record)) for record in forks if record not in known]
        if rows:
            for record in forks:
                logger.warning("fork: chain %s record %s offered unlike the one held", chain_no,
                               record.seq)
            _copy(cur, "chain_forks", ("chain_no", "seen_at", *_COLUMNS), rows)

    def _project_run(self, cur: psycopg.Cursor[Any], chain_no: int, start: int, stop: int,
                     new: dict[int, Record]) -> None:
        """Project records ``start`` to ``stop`` - 1 of a chain, now unbroken: those just
        ingested and any that arrived early."""
        early = [seq for seq in range(start, stop) if seq not in new] if \
            stop - start - len(new) > 0 else []
        if early:
            for row in cur.execute(f"SELECT {_RECORD} FROM records WHERE chain_no = %s AND"
                                   " seq = ANY(%s::bigint[])", (chain_no, early)).fetchall():
                new[int(row[0])] = Record(*row)
        Projection(cur, chain_no).project([new[seq] for seq in range(start, stop)])

    @_reported
    def chains(self) -> list[ChainState]:
        return [ChainState(row[0], row[1], int(row[2]), int(row[3]), int(row[4]))
                for row in self.conn.execute(
            "SELECT table_key, chain, held, last_seq, next_seq FROM chain_state"
            " ORDER BY table_key, chain")]

    def chain_records(self, table: str, chain: str, *, after: int = 0,
                      round_key: int | None = None) -> Iterator[Record]:
        try:
            row = self.conn.execute("SELECT chain_no FROM chain_state WHERE table_key = %s AND"
                                    " chain = %s", (table, chain)).fetchone()
        except psycopg.Error as error:
            raise self.failure(error) from None
        if row is None:
            return iter(())
        return self._walk(int(row[0]), after, round_key, ())

    @_reported
    def forks(self, table: str | None = None) -> list[Fork]:
        query = (f"SELECT c.table_key, c.chain, f.seen_at, {_prefixed('f')}, {_prefixed('r')}"
                 " FROM chain_forks f JOIN chain_state c USING (chain_no) JOIN records r ON"
                 " r.chain_no = f.chain_no AND r.seq = f.seq")
        params: tuple[Any, ...] = ()
        if table is not None:
            query, params = query + " WHERE c.table_key = %s", (table,)
        width = len(_COLUMNS)
        return [Fork(row[0], row[1], Record(*row[3 + width:]), Record(*row[3:3 + width]),
                     row[2]) for row in self.conn.execute(
            query + " ORDER BY c.table_key, c.chain, f.seq, f.ctid", params)]

    # -- the floor's statistics and storage (the room page's tabs) ----------------------------

    @_reported
    def floor_round_tallies(self, table: str | None = None) -> list[RoundTally]:
        """The ingested chains' indexed rounds summed per table (as the records name it), clock
        hour of their start and dealer; only ``table``'s where given."""
        where = "r.chain_no > 0" + ("" if table is None else " AND r.table_id = %s")
        params: tuple[Any, ...] = () if table is None else (table,)
        group = "r.table_id, substr(r.started_at, 1, 13), r.dealer"
        joined = "JOIN rounds r ON r.chain_no = {0}.chain_no AND r.round_key = {0}.round_key"
        tallies: dict[tuple[str, str, str | None], dict[str, Any]] = {}

        def tally(row: Sequence[Any]) -> dict[str, Any]:
            return tallies.setdefault((row[0], row[1], row[2]), {
                "rounds": 0, "partial_rounds": 0, "hands_per_seat": {}, "paid_cents": 0,
                "taken_cents": 0, "payouts": {}, "alarms": {}})

        for row in self.conn.execute(
                f"SELECT {group}, COUNT(*), COUNT(*) FILTER (WHERE r.status = 'partial')"
                f" FROM rounds r WHERE {where} GROUP BY 1, 2, 3", params):
            tally(row).update(rounds=int(row[3]), partial_rounds=int(row[4]))
        for row in self.conn.execute(
                f"SELECT {group}, s.seat, SUM(s.hands), SUM(GREATEST(s.net_cents, 0)),"
                f" SUM(GREATEST(-s.net_cents, 0)) FROM round_seats s {joined.format('s')}"
                f" WHERE {where} GROUP BY 1, 2, 3, 4", params):
            found = tally(row)
            found["hands_per_seat"][int(row[3])] = int(row[4])
            found["paid_cents"] += int(row[5])
            found["taken_cents"] += int(row[6])
        for row in self.conn.execute(
                f"SELECT {group}, p.kind, SUM(p.amount_cents) FROM payout_lines p"
                f" {joined.format('p')} WHERE {where} GROUP BY 1, 2, 3, 4", params):
            tally(row)["payouts"][row[3]] = int(row[4])
        for row in self.conn.execute(
                f"SELECT {group}, a.kind, COUNT(*) FROM alarms a {joined.format('a')}"
                f" WHERE {where} GROUP BY 1, 2, 3, 4", params):
            tally(row)["alarms"][row[3]] = int(row[4])
        return [RoundTally(*key, **values) for key, values in sorted(
            tallies.items(), key=lambda item: (item[0][0], item[0][1], item[0][2] or ""))]

    @_reported
    def floor_record_volume(self) -> list[HourVolume]:
        """The ingested chains' records per table box and clock hour of their time (``size``:
        their bodies' bytes plus 200 a record for the rest; ``rounds``: those beginning one)."""
        return [HourVolume(row[0], row[1] or "", int(row[2]), int(row[3]), int(row[4]))
                for row in self.conn.execute(
            "SELECT c.table_key, substr(r.at, 1, 13), COUNT(*), SUM(octet_length(r.body))"
            " + COUNT(*) * 200, COUNT(*) FILTER (WHERE r.kind = 'round') FROM records r"
            " JOIN chain_state c ON c.chain_no = r.chain_no WHERE r.chain_no > 0"
            " GROUP BY 1, 2")]

    @_reported
    def floor_key_frame_volume(self, gone: Iterable[tuple[str, str, int]] = ()
                               ) -> list[HourVolume]:
        """The ingested chains' key frames (those whose bytes travel to the room with their
        record) per table box and clock hour, less ``gone`` (box, chain, seq: those the room's
        prunes deleted); ``size``: the bytes their records give."""
        boxes, chains, seqs = ([str(b) for b, _, _ in gone], [str(c) for _, c, _ in gone],
                               [int(s) for _, _, s in gone]) if gone else ([], [], [])
        return [HourVolume(row[0], row[1] or "", int(row[2]), int(row[3]))
                for row in self.conn.execute(
            "SELECT c.table_key, substr(f.at, 1, 13), COUNT(*), SUM(f.size) FROM frames f"
            " JOIN chain_state c ON c.chain_no = f.chain_no WHERE f.chain_no > 0 AND f.key AND"
            " (c.table_key, c.chain, f.seq) NOT IN (SELECT * FROM unnest(%s::text[],"
            " %s::text[], %s::bigint[])) GROUP BY 1, 2", (boxes, chains, seqs))]

    @_reported
    def database_bytes(self) -> int:
        """Bytes the store's schema takes in PostgreSQL: its tables, their indexes and TOAST."""
        row = self.conn.execute(
            "SELECT COALESCE(SUM(pg_total_relation_size(c.oid)), 0) FROM pg_class c JOIN"
            " pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = %s AND"
            " c.relkind IN ('r', 'p', 'm')", (self.schema,)).fetchone()
        return int(row[0]) if row else 0

    # -- operators ----------------------------------------------------------------------------

    @_reported
    def put_operator(self, operator: StoredOperator, created_at: str) -> None:
        self.conn.execute(
            "INSERT INTO operators VALUES (%s, %s, %s, %s) ON CONFLICT (name) DO UPDATE SET"
            " role = EXCLUDED.role, password = EXCLUDED.password,"
            " created_at = EXCLUDED.created_at",
            (operator.name, operator.role, operator.password_hash, created_at))

    @_reported
    def delete_operator(self, name: str) -> bool:
        return self.conn.execute("DELETE FROM operators WHERE name = %s", (name,)).rowcount > 0

    @_reported
    def operators(self) -> list[StoredOperator]:
        return [StoredOperator(*row) for row in self.conn.execute(
            "SELECT name, role, password FROM operators ORDER BY name")]

    @_reported
    def operator(self, name: str) -> StoredOperator | None:
        row = self.conn.execute("SELECT name, role, password FROM operators WHERE name = %s",
                                (name,)).fetchone()
        return None if row is None else StoredOperator(*row)


# -- rows and records ---------------------------------------------------------------------------

_ROUND = ("r.round_key, r.table_id, r.round_id, r.dealer, r.started_at, r.ended_at, r.status,"
          " r.note, r.net_cents, r.max_payout_cents, r.events, r.frames, r.alarms")
_FRAME = "seq, round_key, table_id, at, file, media_type, size, key, pruned_at"


def _indexed_round(row: Sequence[Any]) -> IndexedRound:
    return IndexedRound(*row)


def _prefixed(alias: str) -> str:
    return ", ".join(f"{alias}.{column}" for column in _COLUMNS)


def _values(record: Record) -> tuple[Any, ...]:
    return (record.seq, record.at, record.table, record.round_key, record.round_id, record.kind,
            record.body_text, record.file, record.sha256, record.hash_format, record.prev_hash,
            record.hash, record.signature)


def _with_hash(record: Record) -> Record:
    from dataclasses import replace

    return replace(record, hash=chain_hash(record.prev_hash, canonical_bytes(record)))


def _signed(record: Record, signature: str) -> Record:
    from dataclasses import replace

    return replace(record, signature=signature)


def _check_text(record: Record, where: str) -> None:
    """PostgreSQL text holds no NUL character: a record holding one is refused by name."""
    for value in _values(record):
        if isinstance(value, str) and "\x00" in value:
            raise RecordingError(f"cannot hold {record.describe()}: it holds a NUL character",
                                 where)
    if not isinstance(record.round_key, int | None) or (
            record.round_key is not None and not -MAX_INTEGER <= record.round_key <= MAX_INTEGER):
        raise RecordingError(f"cannot hold {record.describe()}: its round key "
                             f"{record.round_key!r} is not a 64-bit number", where)


def _copy(cur: psycopg.Cursor[Any], table: str, columns: Sequence[str],
          rows: Iterable[Sequence[Any]]) -> None:
    with cur.copy(sql.SQL("COPY {} ({}) FROM STDIN").format(
            sql.Identifier(table), sql.SQL(", ").join(map(sql.Identifier, columns)))) as copy:
        for row in rows:
            copy.write_row(row)


def _statements(script: str) -> list[str]:
    return [part.strip() for part in script.split(";") if part.strip()]


def _row_names(table: str, rows: Iterable[Sequence[Any]]) -> list[str]:
    def name(row: Sequence[Any]) -> str:
        where = "" if row[0] == OWN_CHAIN else f" of chain {row[0]}"
        if table == "round_amounts":
            return f"round #{row[1]}{where} amount {format_money(Decimal(row[2]) / 100)}"
        if table in ("rounds", "round_seats", "payout_lines"):
            return f"round #{row[1]}{where}" + (f" seat {row[2]}" if len(row) > 2 else "")
        return f"{table.removesuffix('s').replace('round_', '')} record {row[1]}{where}"

    return list(dict.fromkeys(name(row) for row in rows))


def _listed(names: list[str], shown: int = 5) -> str:
    more = len(names) - shown
    return ", ".join(names[:shown]) + (f" and {more} more" if more > 0 else "")


# -- the projection -----------------------------------------------------------------------------


class Unindexable(ValueError):
    """A record whose (altered) body the index cannot hold: left out of it."""


def _int(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or \
            not -MAX_INTEGER <= value <= MAX_INTEGER:
        raise Unindexable(f"not a 64-bit number: {value!r}")
    return value


def _optional_int(value: Any) -> int | None:
    return None if value is None else _int(value)


def _str(value: Any) -> str:
    text = str(value)
    if "\x00" in text:
        raise Unindexable("holds a NUL character")
    return text


def _optional_str(value: Any) -> str | None:
    return None if value is None else _str(value)


@dataclass
class _Round:
    """One round's row as the projection folds it."""

    values: dict[str, Any]
    stored: bool  # the row is in the table already (update it, not insert)
    seats: list[tuple[Any, ...]] | None = None  # replaced by a settlement (None: unchanged)
    lines: list[tuple[Any, ...]] = field(default_factory=list)


@dataclass
class _Links:
    """What links alarms to the rounds they name (``round`` in the body), while a batch folds:
    by (round id, table)."""

    latest: dict[tuple[str, str | None], int | None] = field(default_factory=dict)
    waiting: dict[tuple[str, str | None], list[int]] = field(default_factory=dict)  # stored
    linked: list[tuple[int, int]] = field(default_factory=list)  # (round key, seq) of stored


def _amounts(row: _Round) -> set[int]:
    """The amounts a settled round is found by: each seat's wager, and each seat's net and
    line amount won or lost (as a positive amount)."""
    return ({seat[4] for seat in row.seats or []} | {abs(seat[5]) for seat in row.seats or []}
            | {abs(line[4]) for line in row.lines})


_ROUND_COLUMNS = ("table_id", "round_id", "dealer", "started_at", "ended_at", "status", "note",
                  "net_cents", "max_payout_cents", "events", "frames", "alarms", "first_seq",
                  "last_seq")
_FRAME_COLUMNS = ("seq", "round_key", "table_id", "at", "event_index", "file", "sha256", "size",
                  "media_type", "width", "height", "key", "pruned_at")


class Projection:
    """Folds one chain's records, in chain order, into rows of the search index and writes
    them (into the tables named with ``prefix``: a projection afresh to compare with)."""

    def __init__(self, cur: psycopg.Cursor[Any], chain_no: int, prefix: str = ""):
        self.cur, self.chain_no, self.prefix = cur, chain_no, prefix

    def table(self, name: str) -> sql.Identifier:
        return sql.Identifier(self.prefix + name)

    def project(self, records: Sequence[Record]) -> None:
        if not records:
            return
        rounds = self._load_rounds({r.round_key for r in records if r.round_key is not None})
        links = self._waiting({r.round_id for r in records
                               if r.kind == "round" and r.round_id is not None})
        cards: list[tuple[Any, ...]] = []
        alarms: list[list[Any]] = []
        frames: dict[int, dict[str, Any]] = {}
        frame_updates: list[tuple[str, Any, int]] = []  # (column, value, seq) of stored frames
        for record in records:
            try:
                self._fold(record, rounds, cards, alarms, frames, frame_updates, links)
            except (Unindexable, KeyError, TypeError, ValueError, ArithmeticError):
                continue  # verification names the record; the index leaves it out
        self._write(rounds, cards, alarms, frames, frame_updates, links)

    def _waiting(self, round_ids: set[str]) -> _Links:
        """The stored alarms naming one of ``round_ids`` and linked to no round yet."""
        links = _Links()
        if round_ids:
            for seq, round_id, table in self.cur.execute(sql.SQL(
                    "SELECT seq, round_id, table_id FROM {} WHERE chain_no = %s AND round_key IS"
                    " NULL AND round_id = ANY(%s) ORDER BY seq").format(self.table("alarms")),
                    (self.chain_no, sorted(round_ids))).fetchall():
                links.waiting.setdefault((round_id, table), []).append(int(seq))
        return links

    def _latest(self, links: _Links, rounds: dict[int, _Round], round_id: str,
                table: str | None) -> int | None:
        """The key of the latest round of ``round_id`` on ``table`` in this chain so far (its
        row loaded into ``rounds``), or None."""
        name = (round_id, table)
        if name not in links.latest:
            row = self.cur.execute(sql.SQL(
                "SELECT MAX(round_key) FROM {} WHERE chain_no = %s AND round_id = %s AND"
                " table_id IS NOT DISTINCT FROM %s").format(self.table("rounds")),
                (self.chain_no, round_id, table)).fetchone()
            links.latest[name] = None if row is None or row[0] is None else int(row[0])
        key = links.latest[name]
        if key is not None and key not in rounds:
            rounds.update(self._load_rounds({key}))
        return key

    def _load_rounds(self, keys: set[int]) -> dict[int, _Round]:
        if not keys:
            return {}
        query = sql.SQL("SELECT round_key, {} FROM {} WHERE chain_no = %s AND"
                        " round_key = ANY(%s::bigint[])").format(
            sql.SQL(", ").join(map(sql.Identifier, _ROUND_COLUMNS)), self.table("rounds"))
        return {int(row[0]): _Round(dict(zip(_ROUND_COLUMNS, row[1:], strict=True)), True)
                for row in self.cur.execute(query, (self.chain_no, sorted(keys))).fetchall()}

    def _fold(self, record: Record, rounds: dict[int, _Round], cards: list[tuple[Any, ...]],
              alarms: list[list[Any]], frames: dict[int, dict[str, Any]],
              frame_updates: list[tuple[str, Any, int]], links: _Links) -> None:
        try:
            body = json.loads(record.body_text)
        except ValueError:
            return
        kind, key, seq = record.kind, record.round_key, record.seq
        if kind == "round":
            if key is None:
                return
            extra = body if isinstance(body, dict) else {}
            dealer = extra.get("dealer_id", extra.get("dealer"))
            known = rounds.get(key)
            rounds[key] = _Round({
                "table_id": _str(record.table or ""), "round_id": record.round_id,
                "dealer": _optional_str(dealer), "started_at": record.at, "ended_at": None,
                "status": "open", "note": None, "net_cents": None, "max_payout_cents": None,
                "events": 0, "frames": 0, "alarms": 0, "first_seq": seq, "last_seq": seq,
            }, known is not None and known.stored, known.seats if known else None,
                known.lines if known else [])
            if record.round_id is not None:
                rounds[key].values["alarms"] = self._link(record, key, alarms, links)
            return
        row = rounds.get(key) if key is not None else None
        if kind == "frame" and isinstance(body, dict):
            frames[seq] = {
                "seq": seq, "round_key": key, "table_id": record.table, "at": record.at,
                "event_index": _optional_int(body.get("event_index")), "file": record.file,
                "sha256": record.sha256, "size": _int(body.get("size", 0)),
                "media_type": _str(body.get("media_type", "")),
                "width": _optional_int(body.get("width")),
                "height": _optional_int(body.get("height")), "key": bool(body.get("key", True)),
                "pruned_at": None}
            if frames[seq]["file"] is None or frames[seq]["sha256"] is None:
                del frames[seq]
                raise Unindexable("a frame record names no file")
        elif kind == "alarm" and isinstance(body, dict):
            named = body.get("round")
            round_id = None if named is None else _str(named)
            alarm = [self.chain_no, seq, key, record.table, record.at, _str(body.get("kind")),
                     _str(body.get("text")), round_id]
            if key is None and round_id is not None:  # raised in a round: its latest of that id
                linked = self._latest(links, rounds, round_id, record.table)
                if linked is not None:
                    rounds[linked].values["alarms"] += 1
                alarm[2] = linked
            alarms.append(alarm)
        elif kind == "settlement" and isinstance(body, dict) and row is not None:
            self._settle(row, record, body)
        elif kind == "prune" and isinstance(body, dict):
            for pruned in body.get("frames", []):
                self._frame_update(frames, frame_updates, "pruned_at", record.at, _int(pruned))
        elif kind == "keyframe" and isinstance(body, dict):
            self._frame_update(frames, frame_updates, "key", True, _int(body.get("frame")))
        if row is None:
            return
        values = row.values
        values["last_seq"] = seq
        if kind == "event":
            values["events"] += 1
            card = card_code(body.get("card")) if isinstance(body, dict) and body.get(
                "type") in ("card", "reveal") else None
            if card is not None:
                cards.append((self.chain_no, seq, key, card))
        elif kind == "frame" and isinstance(body, dict):
            values["frames"] += 1
        elif kind == "alarm" and isinstance(body, dict):
            values["alarms"] += 1
        elif kind == "partial":
            reason = body.get("reason") if isinstance(body, dict) else None
            values.update(status="partial", note=_optional_str(reason), ended_at=record.at)

    @staticmethod
    def _link(record: Record, key: int, alarms: list[list[Any]], links: _Links) -> int:
        """Link the alarms naming the round ``record`` starts (raised before it was recorded)
        to it; how many."""
        assert record.round_id is not None
        name = (record.round_id, record.table)
        latest = links.latest.get(name)
        links.latest[name] = key if latest is None else max(latest, key)
        linked = 0
        for alarm in alarms:  # of this batch
            if alarm[2] is None and alarm[7] == record.round_id and alarm[3] == record.table:
                alarm[2] = key
                linked += 1
        for seq in links.waiting.pop(name, []):  # stored
            links.linked.append((key, seq))
            linked += 1
        return linked

    @staticmethod
    def _frame_update(frames: dict[int, dict[str, Any]],
                      frame_updates: list[tuple[str, Any, int]], column: str, value: Any,
                      seq: int) -> None:
        if seq in frames:
            frames[seq][column] = value
        else:
            frame_updates.append((column, value, seq))

    def _settle(self, row: _Round, record: Record, body: dict[str, Any]) -> None:
        values = row.values
        try:
            seats = body.get("seats") or []
            net = _int(cents(body.get("net", "0")))
            payouts = [_int(cents(seat["net"])) for seat in seats]
            seat_rows = [(self.chain_no, record.round_key, _int(int(seat["seat"])),
                          _optional_str(seat.get("player")), _int(cents(seat.get("wager", "0"))),
                          _int(cents(seat["net"])), len(seat.get("hands") or []))
                         for seat in seats]
            lines = [(self.chain_no, record.round_key, _int(int(seat["seat"])),
                      _str(line.get("kind")), _int(cents(line.get("amount", "0"))))
                     for seat in seats for line in seat.get("lines") or []]
        except (Unindexable, KeyError, TypeError, ValueError, ArithmeticError, AttributeError):
            values.update(status="settled", ended_at=record.at,
                          note="settlement could not be indexed")
            return
        values.update(status="settled", ended_at=record.at, net_cents=net,
                      max_payout_cents=max(payouts, default=0))
        row.seats, row.lines = seat_rows, lines

    def _write(self, rounds: dict[int, _Round], cards: list[tuple[Any, ...]],
               alarms: list[list[Any]], frames: dict[int, dict[str, Any]],
               frame_updates: list[tuple[str, Any, int]], links: _Links) -> None:
        cur, chain_no = self.cur, self.chain_no
        stored = [(key, row) for key, row in rounds.items() if row.stored]
        if stored:
            cur.executemany(sql.SQL("UPDATE {} SET {} WHERE chain_no = %s AND round_key = %s"
                                    ).format(self.table("rounds"), sql.SQL(", ").join(
                                        sql.SQL("{} = %s").format(sql.Identifier(column))
                                        for column in _ROUND_COLUMNS)),
                            [(*(row.values[c] for c in _ROUND_COLUMNS), chain_no, key)
                             for key, row in stored])
        fresh = [(chain_no, key, *(row.values[c] for c in _ROUND_COLUMNS))
                 for key, row in rounds.items() if not row.stored]
        if fresh:
            _copy(cur, self.prefix + "rounds", ("chain_no", "round_key", *_ROUND_COLUMNS), fresh)
        settled = [(key, row) for key, row in rounds.items() if row.seats is not None]
        replaced = [key for key, row in settled if row.stored]
        if replaced:
            for name in ("round_seats", "payout_lines", "round_amounts"):
                cur.execute(sql.SQL("DELETE FROM {} WHERE chain_no = %s AND"
                                    " round_key = ANY(%s::bigint[])").format(self.table(name)),
                            (chain_no, replaced))
        seat_rows = [seat for _, row in settled for seat in row.seats or []]
        if seat_rows:
            _copy(cur, self.prefix + "round_seats", ("chain_no", "round_key", "seat", "player",
                                                     "wager_cents", "net_cents", "hands"),
                  seat_rows)
        line_rows = [line for _, row in settled for line in row.lines]
        if line_rows:
            _copy(cur, self.prefix + "payout_lines",
                  ("chain_no", "round_key", "seat", "kind", "amount_cents"), line_rows)
        amounts = {(chain_no, key, amount) for key, row in settled for amount in _amounts(row)}
        if amounts:
            _copy(cur, self.prefix + "round_amounts", ("chain_no", "round_key", "amount_cents"),
                  sorted(amounts))
        if cards:
            _copy(cur, self.prefix + "round_cards", ("chain_no", "seq", "round_key", "card"),
                  cards)
        if alarms:
            _copy(cur, self.prefix + "alarms",
                  ("chain_no", "seq", "round_key", "table_id", "at", "kind", "text", "round_id"),
                  alarms)
        if links.linked:
            cur.executemany(sql.SQL("UPDATE {} SET round_key = %s WHERE chain_no = %s AND"
                                    " seq = %s").format(self.table("alarms")),
                            [(key, chain_no, seq) for key, seq in links.linked])
        if frames:
            _copy(cur, self.prefix + "frames", ("chain_no", *_FRAME_COLUMNS),
                  [(chain_no, *(frame[c] for c in _FRAME_COLUMNS)) for frame in frames.values()])
        for column, value, seq in frame_updates:
            cur.execute(sql.SQL("UPDATE {} SET {} = %s WHERE chain_no = %s AND seq = %s").format(
                self.table("frames"), sql.Identifier(column)), (value, chain_no, seq))
