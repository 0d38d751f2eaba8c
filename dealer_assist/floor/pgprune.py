"""The records policy of the room's retention in PostgreSQL: where each ingested chain is cut,
what under the cut is kept, and the deletions (records and their search index rows), all in
the caller's transaction (:meth:`.pgstore.PostgresStore.prune_records`).

The cut of a chain, ``below``: its first record at or after the cutoff, never past its
unbroken run (``next_seq``), moved back while it falls inside a round not on hold (from its
first record to its last, and to any alarm the index links to it), never back past an earlier
cut. Under it, the chain's key records (later signatures are checked with them) and every record
of a round on hold (with the alarms linked to it and the records that mark its frames pruned or
key) are kept; the rest is deleted. A chain missing records under its cut that no earlier cut
explains is not cut (``room verify`` names them).
"""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from typing import Any

import psycopg

#: the record kinds that change a frame's index row (its ``pruned_at``, its ``key``)
FRAME_MARKS = ("prune", "keyframe")

_SPANNING = """
SELECT MIN(lo) FROM (
    SELECT first_seq AS lo, last_seq AS hi FROM rounds
    WHERE chain_no = %(chain)s AND NOT round_key = ANY(%(held)s::bigint[])
    UNION ALL
    SELECT LEAST(a.seq, r.first_seq), GREATEST(a.seq, r.last_seq) FROM alarms a
    JOIN rounds r ON r.chain_no = a.chain_no AND r.round_key = a.round_key
    WHERE a.chain_no = %(chain)s AND NOT r.round_key = ANY(%(held)s::bigint[])) AS spans
WHERE lo < %(below)s AND hi >= %(below)s"""

_KEPT = """
SELECT seq FROM records WHERE chain_no = %(chain)s AND kind = %(key)s AND seq < %(below)s
UNION SELECT seq FROM records WHERE chain_no = %(chain)s AND round_key = ANY(%(held)s::bigint[])
    AND seq < %(below)s
UNION SELECT seq FROM alarms WHERE chain_no = %(chain)s AND round_key = ANY(%(held)s::bigint[])
    AND seq < %(below)s"""


@dataclass
class ChainCut:
    """One chain's cut as recorded: records under ``below`` deleted (``deleted`` now) but the
    ``kept`` ranges; ``links``: for the first record after each hole this cut made, the hash of
    the record before it (what its ``prev_hash`` must be); ``files``: the deleted records' frame
    files (not recorded: the records' deletion explains them)."""

    box: str
    chain: str
    below: int
    deleted: int
    kept: list[list[int]]
    links: dict[int, str]
    files: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"box": self.box, "chain": self.chain, "below": self.below,
                "deleted": self.deleted, "kept": self.kept,
                "links": {str(seq): value for seq, value in sorted(self.links.items())}}


def cut_chains(cur: psycopg.Cursor[Any], cutoff: str,
               held: Mapping[tuple[str, str], Collection[int]], key_kind: str
               ) -> tuple[list[ChainCut], list[str]]:
    """Cut every ingested chain at ``cutoff`` (``held``: the round keys on hold, by box and
    chain); the cuts that deleted something, and why a chain was not cut. The caller holds the
    records table locked (after this has locked the chains: ingest's order)."""
    rows = cur.execute("SELECT chain_no, table_key, chain, next_seq, pruned_below, pruned"
                       " FROM chain_state ORDER BY chain_no FOR UPDATE").fetchall()
    cur.execute("LOCK TABLE records IN SHARE ROW EXCLUSIVE MODE")
    cuts: list[ChainCut] = []
    refused: list[str] = []
    for chain_no, box, chain, next_seq, pruned_below, pruned in rows:
        keys = sorted(held.get((box, chain), ()))
        below = _below(cur, int(chain_no), cutoff, int(next_seq), int(pruned_below), keys)
        if below <= 1:
            continue
        row = cur.execute("SELECT COUNT(*) FROM records WHERE chain_no = %s AND seq < %s",
                          (chain_no, below)).fetchone()
        if int(row[0] if row else 0) + int(pruned) != below - 1:
            refused.append(f"table {box} chain {chain}: records under {below} are missing that"
                           " no prune took: not cut (run 'dealer-assist room verify')")
            continue
        cut = _cut(cur, int(chain_no), box, chain, below, keys, key_kind)
        if cut.deleted:
            cur.execute("UPDATE chain_state SET held = held - %s, pruned = pruned + %s,"
                        " pruned_below = %s WHERE chain_no = %s",
                        (cut.deleted, cut.deleted, below, chain_no))
            cuts.append(cut)
    return cuts, refused


def _below(cur: psycopg.Cursor[Any], chain_no: int, cutoff: str, next_seq: int,
           pruned_below: int, held: list[int]) -> int:
    row = cur.execute("SELECT seq FROM records WHERE chain_no = %s AND seq < %s AND at >= %s"
                      " ORDER BY seq LIMIT 1", (chain_no, next_seq, cutoff)).fetchone()
    below = next_seq if row is None else int(row[0])
    while below > pruned_below:
        row = cur.execute(_SPANNING, {"chain": chain_no, "held": held,
                                      "below": below}).fetchone()
        if row is None or row[0] is None:
            break
        below = int(row[0])
    return max(below, pruned_below)


def _cut(cur: psycopg.Cursor[Any], chain_no: int, box: str, chain: str, below: int,
         held: list[int], key_kind: str) -> ChainCut:
    """Delete what ``below`` cuts of one chain, and its index rows."""
    keep = {int(row[0]) for row in cur.execute(
        _KEPT, {"chain": chain_no, "key": key_kind, "held": held, "below": below})}
    keep |= _frame_marks(cur, chain_no, below, held)
    kept = _ranges(sorted(keep))
    sources = [start - 1 for start, _ in kept] + [below - 1]
    links = {int(seq) + 1: str(hash_) for seq, hash_ in cur.execute(
        "SELECT seq, hash FROM records WHERE chain_no = %s AND seq = ANY(%s::bigint[])",
        (chain_no, [seq for seq in sources if seq >= 1 and seq not in keep]))}
    kept_list = sorted(keep)
    row = cur.execute(
        "WITH gone AS (DELETE FROM records WHERE chain_no = %s AND seq < %s AND NOT"
        " seq = ANY(%s::bigint[]) RETURNING kind, file) SELECT COUNT(*), array_agg(file)"
        " FILTER (WHERE kind = 'frame' AND file IS NOT NULL) FROM gone",
        (chain_no, below, kept_list)).fetchone()
    deleted, files = (int(row[0]), list(row[1] or [])) if row else (0, [])
    for table in ("round_cards", "frames", "alarms"):
        cur.execute(f"DELETE FROM {table} WHERE chain_no = %s AND seq < %s AND NOT"
                    " seq = ANY(%s::bigint[])", (chain_no, below, kept_list))
    gone_rounds = [int(r[0]) for r in cur.execute(
        "DELETE FROM rounds WHERE chain_no = %s AND last_seq < %s AND NOT"
        " round_key = ANY(%s::bigint[]) RETURNING round_key", (chain_no, below, held))]
    if gone_rounds:
        for table in ("round_seats", "payout_lines", "round_amounts"):
            cur.execute(f"DELETE FROM {table} WHERE chain_no = %s AND"
                        " round_key = ANY(%s::bigint[])", (chain_no, gone_rounds))
    return ChainCut(box, chain, below, deleted, [[a, b] for a, b in kept], links, files)


def _frame_marks(cur: psycopg.Cursor[Any], chain_no: int, below: int,
                 held: list[int]) -> set[int]:
    """The records under ``below`` that mark a frame of a held round pruned or key."""
    frames = {int(row[0]) for row in cur.execute(
        "SELECT seq FROM frames WHERE chain_no = %s AND round_key = ANY(%s::bigint[])",
        (chain_no, held))}
    if not frames:
        return set()
    marks: set[int] = set()
    for seq, kind, body in cur.execute(
            "SELECT seq, kind, body FROM records WHERE chain_no = %s AND kind = ANY(%s) AND"
            " seq > %s AND seq < %s", (chain_no, list(FRAME_MARKS), min(frames), below)):
        try:
            data = json.loads(body)
        except ValueError:
            continue
        if not isinstance(data, dict):
            continue
        named = data.get("frames", []) if kind == "prune" else [data.get("frame")]
        if isinstance(named, list) and frames.intersection(
                n for n in named if isinstance(n, int)):
            marks.add(int(seq))
    return marks


def _ranges(seqs: list[int]) -> list[tuple[int, int]]:
    """Sorted numbers as runs [(first, last), ...]."""
    runs: list[tuple[int, int]] = []
    for seq in seqs:
        if runs and runs[-1][1] == seq - 1:
            runs[-1] = (runs[-1][0], seq)
        else:
            runs.append((seq, seq))
    return runs
