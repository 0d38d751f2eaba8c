"""Verifying what the room holds: every table's chains, against the keys ``room.toml`` trusts.

Per chain: each record's number, link and hash (:class:`~.replay.ChainLinks`), each record's
signature by the chain's keys, the first of which must be one of the table's configured keys
(:class:`~.evidence_check.SignatureWalk`), the table each record names, every settled round
re-settled by today's engine (:func:`~.replay.replay_round`), records missing (a gap, unless
the room's own chain records it as a retention cut and the record after it links to what that
record says: :mod:`.cuts`), and the forks the store caught (a record offered unlike the one
held). Nothing here writes.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from dealer_assist.floor.config import RoomConfig
from dealer_assist.floor.cuts import RecordedCuts, recorded_cuts
from dealer_assist.floor.room_signing import room_public_keys, verify_room_chain
from dealer_assist.surveillance.discrepancy import Discrepancy
from dealer_assist.surveillance.evidence_check import SignatureWalk, TrustedKeys
from dealer_assist.surveillance.interface import ChainState, RecordStore
from dealer_assist.surveillance.replay import ChainLinks, assemble_round, replay_round
from dealer_assist.surveillance.store import Record


@dataclass
class ChainReport:
    """What verifying one table's chain found."""

    table: str
    chain: str
    held: int
    last_seq: int
    next_seq: int
    rounds_settled: int = 0
    rounds_open: int = 0
    discrepancies: list[Discrepancy] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"table": self.table, "chain": self.chain, "records_held": self.held,
                "last_seq": self.last_seq, "next_seq": self.next_seq,
                "rounds_resettled": self.rounds_settled, "rounds_unsettled": self.rounds_open,
                "discrepancies": [d.to_json() for d in self.discrepancies],
                "notices": self.notices}


@dataclass
class RoomReport:
    """What verifying the room found, chain by chain."""

    chains: list[ChainReport]
    silent: list[str]  # tables configured of which the room holds nothing
    room: list[Discrepancy] = field(default_factory=list)  # the room's own chain
    room_notices: list[str] = field(default_factory=list)

    @property
    def discrepancies(self) -> list[Discrepancy]:
        return [*self.room, *(d for chain in self.chains for d in chain.discrepancies)]

    def to_json(self) -> dict[str, Any]:
        return {"clean": not self.discrepancies, "chains": [c.to_json() for c in self.chains],
                "tables_without_records": self.silent,
                "room": [d.to_json() for d in self.room], "room_notices": self.room_notices}


def verify_room(store: RecordStore, config: RoomConfig) -> RoomReport:
    """Verify every chain ``store`` holds against ``config``'s table keys, and the room's own
    against its public key file (KeyFileError when that cannot be read)."""
    keys = room_public_keys(config)
    own = verify_room_chain(store, TrustedKeys(keys, str(config.signing_public)),
                            config.anchor_log)
    cuts = recorded_cuts(store, keys)
    reports = [verify_chain_held(store, state, config, cuts) for state in store.chains()]
    held = {state.table for state in store.chains()}
    return RoomReport(reports, sorted(set(config.tables) - held),
                      [*own.problems, *(Discrepancy("chain", why) for why in cuts.problems)],
                      own.notices)


def verify_chain_held(store: RecordStore, state: ChainState, config: RoomConfig,
                      cuts: RecordedCuts | None = None) -> ChainReport:
    """Verify one ingested chain (see the module; ``cuts``: the room's recorded cuts)."""
    report = ChainReport(state.table, state.chain, state.held, state.last_seq, state.next_seq)
    table = state.table
    keys = config.tables.get(state.table)
    if keys is None:
        report.discrepancies.append(Discrepancy(
            "signature", f"chain {state.chain}: table {state.table} is not one the room trusts "
            "(room.toml [tables] names no key for it): its records vouch for nothing",
            table=table))
    trusted = TrustedKeys(keys.keys if keys else (), str(keys.file) if keys else "room.toml")
    links = ChainLinks("never received from the table")
    signatures = SignatureWalk(trusted)
    rounds: dict[int, list[Record]] = {}
    closed: set[int] = set()  # rounds re-settled already (their later records: frames, notes)
    cuts = cuts or RecordedCuts()
    for record in store.chain_records(state.table, state.chain):
        link = cuts.across(state.table, state.chain, links.expected_seq, record.seq)
        if link is not None:  # a recorded cut: the record after it links to what it says
            links.expected_seq, links.prev_hash = record.seq, link
            signatures.cut()
        links.see(record)
        signatures.see(record)
        if record.table not in (None, state.table):
            report.discrepancies.append(Discrepancy(
                "chain", f"{record.describe()} names table {record.table} but is in the chain of"
                f" table {state.table}", seq=record.seq, table=table))
        if record.round_key is not None and record.round_key not in closed:
            rounds.setdefault(record.round_key, []).append(record)
            if record.kind in ("settlement", "partial"):
                closed.add(record.round_key)
                _resettle(report, record.round_key, rounds.pop(record.round_key))
    for key, records in rounds.items():
        _resettle(report, key, records)
    if links.expected_seq <= state.last_seq and cuts.across(
            state.table, state.chain, links.expected_seq, state.last_seq + 1) is None:
        report.discrepancies.append(Discrepancy(
            "chain", f"chain {state.chain}: records {links.expected_seq} to {state.last_seq} "
            "are missing (held once, gone now)", seq=links.expected_seq, table=table))
    report.discrepancies.extend(_in_chain(links.problems, state))
    found = signatures.finish()
    if signatures.incomplete:  # a signature failed: every record's, to name each that fails
        signatures = SignatureWalk(trusted, every=True)
        for record in store.chain_records(state.table, state.chain):
            signatures.see(record)
        found = signatures.finish()
    report.discrepancies.extend(_in_chain(found.problems, state))
    report.notices.extend(found.notices)
    for fork in store.forks(state.table):
        if fork.chain == state.chain:
            report.discrepancies.append(Discrepancy(
                "fork", f"chain {state.chain}: {fork.offered.describe()} was offered at "
                f"{fork.seen_at} unlike the one the room holds: rewritten on the table after it"
                " was forwarded", seq=fork.held.seq, recorded=fork.held.hash,
                replayed=fork.offered.hash, table=table))
    return report


def _in_chain(problems: list[Discrepancy], state: ChainState) -> Iterator[Discrepancy]:
    """Problems found in a chain, each naming the table (and the chain)."""
    for problem in problems:
        yield Discrepancy(problem.kind, f"chain {state.chain}: {problem.what}", problem.round_key,
                          problem.round_id, problem.table or state.table, problem.seq,
                          problem.seat, problem.hand, problem.recorded, problem.replayed)


def _resettle(report: ChainReport, key: int, records: list[Record]) -> None:
    data = assemble_round(key, records)
    if data is None:
        report.rounds_open += 1
        return
    if data.status != "settled":
        report.rounds_open += 1
        return
    result = replay_round(data)
    report.rounds_settled += 1
    report.discrepancies.extend(_in_chain(result.discrepancies,
                                          ChainState(report.table, report.chain, 0, 0, 0)))
