"""Upgrades of older recording schemas, applied when a recording is opened.

Schema 1 (the first recorder) kept one table per recording: ``records`` without table or round
key columns, and ``rounds`` keyed by round id. Its records were hashed in hash format 1, which the
upgrade keeps: record bodies and hashes are never rewritten, only moved into the current tables, so
the chain of an upgraded recording still verifies. Everything else is re-indexed from the records.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from dealer_assist.surveillance.store import RecordingStore


def upgrade(store: RecordingStore, version: int, *, note: bool = True) -> None:
    """Bring ``store`` from schema ``version`` to the current one (inside the caller's tx);
    ``note``: record each step in ``schema_version`` (not when the store is being created)."""
    from dealer_assist.surveillance.store import SCHEMA_VERSION, RecordingError, format_time

    steps = {1: _upgrade_1_to_2, 2: _upgrade_2_to_3, 3: _upgrade_3_to_4}
    # schema 1's records moved into new tables, schema 4's index tables new: index them again
    reindex = version < 4
    while version < SCHEMA_VERSION:
        step = steps.get(version)
        if step is None:
            raise RecordingError(f"no upgrade from recording schema {version}", store.db_path)
        step(store)
        version += 1
        if note:
            store.conn.execute("INSERT INTO schema_version VALUES (?, ?, ?)", (
                version, format_time(store.clock()), f"upgraded from schema {version - 1}"))
    if reindex:
        store.rebuild_index()


def _upgrade_2_to_3(store: RecordingStore) -> None:
    """Schema 3: a signature column; the records before it stay unsigned (they predate it)."""
    store.conn.execute("ALTER TABLE records ADD COLUMN signature TEXT")


def _upgrade_3_to_4(store: RecordingStore) -> None:
    """Schema 4: cards and alarms' round ids in the search index (filled by the reindex)."""
    from dealer_assist.surveillance.store import INDEX_V4, _statements

    for statement in _statements(INDEX_V4):
        store.conn.execute(statement)


def _upgrade_1_to_2(store: RecordingStore) -> None:
    from dealer_assist.surveillance.store import SCHEMA_V2, _statements

    conn = store.conn
    conn.execute("ALTER TABLE records RENAME TO records_v1")
    conn.execute("ALTER TABLE rounds RENAME TO rounds_v1")
    conn.execute("ALTER TABLE schema_version ADD COLUMN note TEXT")
    for statement in _statements(SCHEMA_V2):
        conn.execute(statement)
    tables = {
        row["round_id"]: row["table_id"]
        for row in conn.execute("SELECT round_id, table_id FROM rounds_v1")
    }
    round_keys: dict[str, int] = {}
    next_key = 0
    for row in conn.execute("SELECT * FROM records_v1 ORDER BY seq").fetchall():
        round_id = row["round_id"]
        if row["kind"] == "round":
            next_key += 1
            round_keys[round_id] = next_key
        key = round_keys.get(round_id) if round_id is not None else None
        conn.execute(
            "INSERT INTO records (seq, at, table_id, round_key, round_id, kind, body, file, sha256,"
            " hash_format, prev_hash, hash) VALUES (?,?,?,?,?,?,?,?,?,1,?,?)",
            (row["seq"], row["at"], tables.get(round_id) if round_id is not None else None, key,
             round_id, row["kind"], row["body"], row["file"], row["sha256"], row["prev_hash"],
             row["hash"]),
        )
    conn.execute("DROP TABLE records_v1")
    conn.execute("DROP TABLE rounds_v1")
