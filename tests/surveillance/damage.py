"""Damage a real recording's database the way a failing disk does: one page overwritten."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from dealer_assist.surveillance import RecordingStore


def damage_page(recording: Path, name: str, leaf: int | None = None) -> int:
    """Overwrite one page of the table or index ``name`` in ``recording``'s index.sqlite with
    0xAA bytes: its root page, or its leaf number ``leaf`` in key order (negative from the end).
    Returns the page number."""
    RecordingStore(recording).close()  # the last connection checkpoints the WAL into the file
    database = recording / "index.sqlite"
    conn = sqlite3.connect(database)
    try:
        rows = conn.execute("SELECT pageno, pagetype FROM dbstat WHERE name = ? ORDER BY path",
                            (name,)).fetchall()
        size = conn.execute("PRAGMA page_size").fetchone()[0]
    except sqlite3.OperationalError:
        pytest.skip("this SQLite has no dbstat table to find a table's pages with")
    finally:
        conn.close()
    page = rows[0][0] if leaf is None else [p for p, kind in rows if kind == "leaf"][leaf]
    with open(database, "r+b") as handle:
        handle.seek((page - 1) * size)
        handle.write(b"\xaa" * size)
    return page


def unreadable_seqs(recording: Path) -> list[int]:
    """The record numbers SQLite can no longer read, one at a time (what replay must name)."""
    conn = sqlite3.connect(recording / "index.sqlite")
    last = conn.execute("SELECT MAX(seq) FROM records INDEXED BY records_round").fetchone()[0]
    found = []
    for seq in range(1, last + 1):
        try:
            conn.execute("SELECT * FROM records WHERE seq = ?", (seq,)).fetchone()
        except sqlite3.DatabaseError:
            found.append(seq)
    conn.close()
    return found
