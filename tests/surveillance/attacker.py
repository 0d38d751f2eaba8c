"""What someone who can write a recording, but not read the table's key, can do to it with the
program's own functions: rewrite records and chain them again (``canonical_bytes``,
``chain_hash``), rebuild the index (``rebuild_index``), append (``RecordingStore.append``)."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

from dealer_assist.roundlog import settle_log
from dealer_assist.surveillance.store import (
    GENESIS_HASH,
    Record,
    RecordingStore,
    canonical_bytes,
    canonical_json,
    chain_hash,
)


def rechain(directory: Path, records: list[Record], *, keep_signatures: bool = True) -> None:
    """Write ``records`` as the whole chain, numbered from 1 and hashed again; each keeps its
    old signature (the attacker cannot make a new one) or none."""
    store = RecordingStore(directory)
    conn = store.conn
    conn.execute("BEGIN IMMEDIATE")
    conn.execute("DELETE FROM records")
    prev = GENESIS_HASH
    for seq, record in enumerate(records, 1):
        moved = replace(record, seq=seq, prev_hash=prev, hash="")
        moved = replace(moved, hash=chain_hash(prev, canonical_bytes(moved)),
                        signature=record.signature if keep_signatures else None)
        conn.execute(
            "INSERT INTO records (seq, at, table_id, round_key, round_id, kind, body, file,"
            " sha256, hash_format, prev_hash, hash, signature) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
            (moved.seq, moved.at, moved.table, moved.round_key, moved.round_id, moved.kind,
             moved.body_text, moved.file, moved.sha256, moved.hash_format, moved.prev_hash,
             moved.hash, moved.signature))
        prev = moved.hash
    conn.execute("COMMIT")
    store.rebuild_index()
    store.close()


def all_records(directory: Path) -> list[Record]:
    store = RecordingStore(directory)
    try:
        return list(store.records())
    finally:
        store.close()


def raise_bet(records: list[Record], round_id: str, amount: str) -> list[Record]:
    """The round's first bet raised to ``amount`` and its settlement recomputed by the
    program's own settlement."""
    changed = list(records)
    ours = [i for i, r in enumerate(changed) if r.round_id == round_id]
    bet = next(i for i in ours if changed[i].kind == "event"
               and json.loads(changed[i].body_text).get("type") == "bet")
    body = json.loads(changed[bet].body_text)
    body["amount"] = amount
    changed[bet] = replace(changed[bet], body_text=canonical_json(body))
    lines = [changed[i].body_text for i in ours if changed[i].kind in ("round", "event")]
    settlement = next(i for i in ours if changed[i].kind == "settlement")
    changed[settlement] = replace(changed[settlement],
                                  body_text=canonical_json(settle_log(lines).to_json()))
    return changed
