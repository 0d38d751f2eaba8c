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

An ingested chain is projected into the search index (:mod:`.pgprojection`) in chain order up to
its first gap (holes a retention cut left below it are passed over: :mod:`.pgprune` keeps the
index as a projection of what is left); records past a gap are projected when it fills. The
record format (hashing, times, money) is :mod:`dealer_assist.surveillance.store`'s. This module
opens and upgrades the schema (its statements: :mod:`.pgschema`) and reads and writes the
records, the chains and the operators; its helpers run in its connection or transaction:
:mod:`.pgprojection` (writing the search index), :mod:`.pgsearch` (reading it), :mod:`.pgstats`
(statistics and storage) and :mod:`.pgprune` (the records policy's cuts). They are the only code
that speaks SQL to PostgreSQL. Each write is one transaction, committed (durable, with
PostgreSQL's default ``synchronous_commit``) before the method returns. One store (one
connection) per thread.
"""

from __future__ import annotations

import functools
import json
import logging
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, Concatenate, ParamSpec, TypeVar
from urllib.parse import urlsplit

import psycopg
from psycopg import errors, sql

from dealer_assist.floor import pgstats
from dealer_assist.floor.pgprojection import Projection, copy_rows
from dealer_assist.floor.pgprune import ChainCut, cut_chains
from dealer_assist.floor.pgschema import (
    INDEX_TABLES,
    REPROJECTED,
    SCHEMA_VERSION,
    TABLES,
    schema_statements,
    upgrade_statements,
)
from dealer_assist.floor.pgsearch import ROUND_COLUMNS, compare_index, find_rounds, indexed_round
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
    chain_hash,
    check_chain_key,
    format_time,
    utc_now,
    write_frame_file,
)

logger = logging.getLogger(__name__)

DEFAULT_SCHEMA = "room"
OWN_CHAIN = 0  # the chain number of the store's own records
PAGE = 5000  # records read per query while walking a chain

P = ParamSpec("P")
T = TypeVar("T")

_COLUMNS = ("seq", "at", "table_id", "round_key", "round_id", "kind", "body", "file", "sha256",
            "hash_format", "prev_hash", "hash", "signature")
_RECORD = ", ".join(_COLUMNS)

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
        #: told each record of the store's own chain once it is committed (the anchor log)
        self.appended: Callable[[Record], None] | None = None
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
            for statement in schema_statements():
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
                for statement in upgrade_statements(step):
                    cur.execute(statement)  # type: ignore[call-overload]
                cur.execute("INSERT INTO schema_version VALUES (%s, %s, %s)",
                            (step, format_time(self.clock()), f"upgraded from schema {step - 1}"))
            if REPROJECTED & set(range(version + 1, SCHEMA_VERSION + 1)):
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
            record = self._append(cur, kind, body, table=table, round_key=round_key,
                                  round_id=round_id, file=file, sha256=sha256)
        if self.appended is not None:
            self.appended(record)
        return record

    def _append(self, cur: psycopg.Cursor[Any], kind: str, body: Any, *,
                table: str | None = None, round_key: int | None = None,
                round_id: str | None = None, file: str | None = None,
                sha256: str | None = None) -> Record:
        """Append to the store's own chain in the caller's transaction (records locked)."""
        body_text = canonical_json(body)
        if self.signer is not None:
            self._check_signer(cur)
        seq, prev_hash = self._head(cur)
        if kind == "round":
            cur.execute("SELECT MAX(round_key) FROM records WHERE chain_no = 0")
            round_key = int((cur.fetchone() or (0,))[0] or 0) + 1
        partial = Record(seq + 1, format_time(self.clock()), table, round_key, round_id,
                         kind, body_text, file, sha256, HASH_FORMAT, prev_hash, "")
        record = _with_hash(partial)
        if self.signer is not None:
            record = _signed(record, self.signer.sign(record.hash))
        copy_rows(cur, "records", ("chain_no", *_COLUMNS), [(OWN_CHAIN, *_values(record))])
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
        if self.appended is not None:
            self.appended(record)
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

    def _check_signer(self, cur: psycopg.Cursor[Any]) -> None:
        """Refuse to sign with a key the chain has rotated away from (another process rotated
        it since this store was opened): records signed so would not verify."""
        assert self.signer is not None
        cur.execute("SELECT body FROM records WHERE chain_no = 0 AND kind = 'key'"
                    " ORDER BY seq DESC LIMIT 1")
        row = cur.fetchone()
        if row is None:
            return
        try:
            current = json.loads(row[0]).get("public_key")
        except (ValueError, AttributeError):
            current = None
        if current != self.signer.public.text:
            raise RecordingError(
                f"the room's chain is now signed by another key than this program's "
                f"({self.signer.public.key_id}; rotated by 'room keygen --rotate'?): nothing "
                "more is appended with it; restart it to sign with the room's key", self._where)

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

    def records(self, *, round_key: int | None = None, kinds: tuple[str, ...] = (),
                after: int = 0) -> Iterator[Record]:
        return self._walk(OWN_CHAIN, after, round_key, kinds)

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
        with self.conn.transaction(), self.conn.cursor() as cur:
            cur.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
            for table in INDEX_TABLES:
                cur.execute(sql.SQL("CREATE TEMP TABLE {} (LIKE {}) ON COMMIT DROP").format(
                    sql.Identifier(f"rebuilt_{table}"), sql.Identifier(table)))
            self._project_all(cur, "rebuilt_")
            return compare_index(cur, INDEX_TABLES, "rebuilt_")

    def find_rounds(self, query: RoundQuery) -> tuple[list[IndexedRound], list[int]]:
        """Rounds of the store's own chain matching ``query``, newest first."""
        return [found.round for found in self._find(query, own=True)], []

    def find_floor_rounds(self, query: RoundQuery) -> list[FloorRound]:
        """Rounds of every ingested chain matching ``query``, newest first (``query.table``:
        the table the records name)."""
        return self._find(query, own=False)

    @_reported
    def _find(self, query: RoundQuery, *, own: bool) -> list[FloorRound]:
        return find_rounds(self.conn, query, own=own)

    @_reported
    def floor_choices(self) -> tuple[list[str], list[str]]:
        """The tables and alarm kinds of the ingested chains' index."""
        return ([row[0] for row in self.conn.execute(
                    "SELECT DISTINCT table_id FROM rounds WHERE chain_no > 0 ORDER BY 1")],
                [row[0] for row in self.conn.execute(
                    "SELECT DISTINCT kind FROM alarms WHERE chain_no > 0 ORDER BY 1")])

    @_reported
    def indexed_rounds(self) -> list[IndexedRound]:
        return [indexed_round(row) for row in self.conn.execute(
            f"SELECT {ROUND_COLUMNS} FROM rounds r WHERE chain_no = 0 ORDER BY round_key")]

    @_reported
    def open_rounds(self, table: str) -> list[IndexedRound]:
        return [indexed_round(row) for row in self.conn.execute(
            f"SELECT {ROUND_COLUMNS} FROM rounds r WHERE chain_no = 0 AND table_id = %s AND"
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
    def video_frames_before(self, cutoff: str) -> list[IndexedFrame]:
        return [IndexedFrame(*row) for row in self.conn.execute(
            f"SELECT {_FRAME} FROM frames WHERE chain_no = 0 AND NOT key AND pruned_at IS NULL"
            " AND at < %s ORDER BY seq", (cutoff,))]

    @_reported
    def floor_frames_before(self, cutoff: str) -> list[tuple[str, str, int, int | None, str]]:
        """The frames of ingested chains recorded before ``cutoff``: (box, chain, seq, round
        key, file), in order (those pruned already among them: the room's prune records say
        which)."""
        return [(row[0], row[1], int(row[2]), None if row[3] is None else int(row[3]), row[4])
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
        return pgstats.record_volume(self.conn)

    @_reported
    def frame_volume(self) -> list[HourVolume]:
        return pgstats.frame_volume(self.conn)

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
                copy_rows(cur, "records", ("chain_no", *_COLUMNS),
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
            copy_rows(cur, "chain_forks", ("chain_no", "seen_at", *_COLUMNS), rows)

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

    # -- the floor's statistics and storage (the room page's tabs: :mod:`.pgstats`) -----------

    @_reported
    def floor_round_tallies(self, table: str | None = None) -> list[RoundTally]:
        """The ingested chains' indexed rounds summed per table (as the records name it), clock
        hour of their start and dealer; only ``table``'s where given."""
        return pgstats.floor_round_tallies(self.conn, table)

    @_reported
    def floor_record_volume(self) -> list[HourVolume]:
        """The ingested chains' records per table box and clock hour of their time."""
        return pgstats.floor_record_volume(self.conn)

    @_reported
    def floor_key_frame_volume(self, gone: Iterable[tuple[str, str, int]] = ()
                               ) -> list[HourVolume]:
        """The ingested chains' key frames per table box and clock hour, less ``gone`` (box,
        chain, seq: those the room's prunes deleted)."""
        return pgstats.floor_key_frame_volume(self.conn, gone)

    @_reported
    def database_bytes(self) -> int:
        """Bytes the store's schema takes in PostgreSQL: its tables, their indexes and TOAST."""
        return pgstats.database_bytes(self.conn, self.schema)

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

_FRAME = "seq, round_key, table_id, at, file, media_type, size, key, pruned_at"


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
