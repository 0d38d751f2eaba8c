"""The integrity of one round as the page shows it, checked as it is shown.

:func:`check_round` recomputes, from the bytes stored now: each of the round's records' hashes and
its links to the records before and after it in the chain, each record's signature with the key
the chain names at that point, each frame file's SHA-256, and the settlement, re-settled from the
recorded events with today's engine and compared line by line with what was recorded. A round
passes only when every one holds; each failure is one sentence naming the record.

The signatures are checked with the key the recording names (its first ``key`` record, and keys
each rotated to under the one before): that catches a record rewritten or appended without the
table's key. Given the table's public keys (``trusted``, ``surveillance serve --key TABLE.pub``)
the chain's first key must be one of them, which also catches a whole recording replaced by
someone else's; ``dealer-assist replay --verify --anchor-log FILE`` also catches a cut tail.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from dealer_assist.surveillance.evidence_check import KEYLESS_KINDS, TrustedKeys
from dealer_assist.surveillance.frame_files import frame_state
from dealer_assist.surveillance.interface import RecordStore
from dealer_assist.surveillance.replay import RoundData, RoundReplay, replay_round
from dealer_assist.surveillance.signed_chain import KEY_KIND, public_key_of
from dealer_assist.surveillance.signing import PublicKey
from dealer_assist.surveillance.store import Record, hash_holds


@dataclass
class RoundCheck:
    """What checking a round found. ``frames``: per frame record, ``state`` (``intact``,
    ``altered``, ``missing``, ``pruned``) and the SHA-256 of the file now; ``frame_bytes``: per
    frame record read, the bytes that SHA-256 is of; ``settlement``: the settlement's lines as
    recorded and as re-settled (:func:`settlement_lines`)."""

    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    frames: dict[int, dict[str, Any]] = field(default_factory=dict)
    frame_bytes: dict[int, bytes] = field(default_factory=dict)
    settlement: dict[str, Any] | None = None
    records: int = 0

    @property
    def intact(self) -> bool:
        return not self.problems

    def to_json(self) -> dict[str, Any]:
        return {"intact": self.intact, "verdict": "INTACT" if self.intact else "FAILED",
                "problems": self.problems, "notes": self.notes, "records_checked": self.records}


def _chain_keys(store: RecordStore) -> list[tuple[int, PublicKey]]:
    """The keys the chain introduces validly, with the record that introduces each: the first
    signed by itself, each later one by the key before it, each record's content matching the
    hash that is signed (else the key it names is anyone's)."""
    keys: list[tuple[int, PublicKey]] = []
    for record in store.records(kinds=(KEY_KIND,)):
        new = public_key_of(record)
        signer = keys[-1][1] if keys else new
        if new is not None and signer is not None and record.signature is not None \
                and hash_holds(record) and signer.verifies(record.hash, record.signature):
            keys.append((record.seq, new))
    return keys


def _check_record(store: RecordStore, record: Record, keys: list[tuple[int, PublicKey]],
                  check: RoundCheck) -> None:
    name = record.describe()
    if not hash_holds(record):
        check.problems.append(f"{name} was altered: its content does not match its hash")
    if record.seq > 1:
        before = store.record(record.seq - 1)
        if before is None:
            check.problems.append(f"the record before {name} is missing (deleted)")
        elif before.hash != record.prev_hash:
            check.problems.append(f"{name} does not link to the record before it (a record"
                                  " was altered, removed or inserted)")
    last = store.last_seq()  # before the next record: one appended meanwhile is no deletion
    after = store.record(record.seq + 1)
    if after is None and record.seq < last:
        check.problems.append(f"the record after {name} is missing (deleted)")
    elif after is not None and after.prev_hash != record.hash:
        check.problems.append(f"the record after {name} does not link to it ({name} was"
                              " rewritten)")
    current = next((key for seq, key in reversed(keys) if seq < record.seq), None)
    if record.signature is None:
        if current is not None and record.kind not in KEYLESS_KINDS:
            check.problems.append(f"{name} carries no signature: written without the table's"
                                  " key (forged, or its signature removed)")
    elif current is None:
        check.problems.append(f"{name} is signed, but no valid key record before it"
                              " introduces a key")
    elif not current.verifies(record.hash, record.signature):
        check.problems.append(f"{name} has a signature that does not verify with key"
                              f" {current.key_id}: altered, re-hashed or forged")


def check_round(store: RecordStore, data: RoundData, related: Iterable[Record] = (),
                pruned: set[int] | None = None,
                trusted: TrustedKeys | None = None,
                kept: set[int] | None = None) -> RoundCheck:
    """Check the round's records (and the ``related`` records the view relies on: alarms
    naming it, prune records naming its frames), its frame files (``pruned``: those chained
    prune records name, which accounts for a missing video frame unless ``kept``: marked to
    keep) and its settlement, from the bytes stored now; with ``trusted``, that the chain's key
    is one of those."""
    check = RoundCheck()
    pruned, kept = pruned or set(), kept or set()
    records = {r.seq: r for r in (*data.events, *data.frames, *data.alarms, *data.screens,
                                  *data.notes, *related)}
    if data.settlement is not None:
        records[data.settlement.seq] = data.settlement
    keys = _chain_keys(store)
    for seq in sorted(records):
        _check_record(store, records[seq], keys, check)
    check.records = len(records)
    if not keys:
        text = "no record is signed: the recording predates signing"
        if trusted is not None:
            check.problems.append(f"{text}; the key from {trusted.source} cannot vouch for it")
        else:
            check.notes.append(f"{text}, so only its hashes are checked")
    elif trusted is not None and keys[0][1] not in trusted.keys:
        check.problems.append(f"the chain's first key {keys[0][1].key_id} (record {keys[0][0]})"
                              f" is not a key from {trusted.source}: the recording was signed"
                              " by someone else")
    elif min(records, default=0) < keys[0][0]:
        check.notes.append("this round predates signing: only its hashes are checked")
    elif trusted is not None:
        check.notes.append(f"signatures checked with key {keys[-1][1].key_id}, from"
                           f" {trusted.source}")
    else:
        check.notes.append(f"signatures checked with key {keys[-1][1].key_id}, which the"
                           " recording itself names: give the page the table's public key"
                           " ('surveillance serve --key TABLE.pub') to prove it is the table's")
    for record in data.frames:
        state = frame_state(store.directory, record, record.seq in pruned - kept)
        content = state.pop("data", None)
        if content is not None:
            check.frame_bytes[record.seq] = content
        check.frames[record.seq] = state
        if "refused" in state:
            check.problems.append(f"{record.file} of {record.describe()} is not shown:"
                                  f" {state['refused']}")
        elif state["state"] == "altered":
            check.problems.append(f"{record.file} of {record.describe()} was altered (its"
                                  " SHA-256 differs from the recorded one)")
        elif state["state"] == "missing" and record.seq in pruned:
            check.problems.append(f"{record.file} of {record.describe()} is missing: a key"
                                  " frame or one marked to keep, which retention never"
                                  " deletes, yet a prune record names it")
        elif state["state"] == "missing":
            check.problems.append(f"{record.file} of {record.describe()} is missing and no"
                                  " prune record accounts for it")
    replayed = replay_round(data)
    check.problems.extend(d.text() for d in replayed.discrepancies)
    check.settlement = settlement_lines(_recorded_settlement(data), replayed)
    check.problems.extend(check.settlement["differences"])
    return check


def check_settlement(data: RoundData, note: str) -> RoundCheck:
    """Only the round's settlement, re-settled from its events (``note`` says who checks the
    rest)."""
    check = RoundCheck(notes=[note])
    replayed = replay_round(data)
    check.problems.extend(d.text() for d in replayed.discrepancies)
    check.settlement = settlement_lines(_recorded_settlement(data), replayed)
    check.problems.extend(check.settlement["differences"])
    return check


def _recorded_settlement(data: RoundData) -> dict[str, Any] | None:
    if data.settlement is None:
        return None
    try:
        body = data.settlement.body
    except ValueError:
        return None
    return body if isinstance(body, dict) else None


def _lines(settlement: dict[str, Any] | None) -> dict[int, list[dict[str, Any]]]:
    seats: dict[int, list[dict[str, Any]]] = {}
    for seat in (settlement or {}).get("seats") or []:
        if isinstance(seat, dict) and isinstance(seat.get("seat"), int):
            seats[seat["seat"]] = [line for line in seat.get("lines") or []
                                   if isinstance(line, dict)]
    return seats


def _nets(settlement: dict[str, Any] | None) -> dict[int, Any]:
    return {seat["seat"]: seat.get("net") for seat in (settlement or {}).get("seats") or []
            if isinstance(seat, dict) and isinstance(seat.get("seat"), int)}


def settlement_lines(recorded: dict[str, Any] | None,
                     replayed: RoundReplay) -> dict[str, Any]:
    """Every line of the settlement (each hand's main wager, Match, insurance, Super Bonus,
    Envy) with its amount as re-settled and as recorded, per seat with its net; where they
    differ the line says both, and ``differences`` says where in words. Without a re-settled
    settlement (none recorded, or the engine refuses the events) the recorded lines alone."""
    shown = replayed.replayed or recorded
    if shown is None:
        return {"seats": [], "net": None, "recorded_net": None, "differences": [],
                "recomputed": False}
    old_lines, new_lines = _lines(recorded), _lines(replayed.replayed)
    old_nets = _nets(recorded)
    differences: list[str] = []
    seats = []
    for seat in sorted(set(old_lines) | set(new_lines)):
        source = new_lines.get(seat) if replayed.replayed else old_lines.get(seat)
        was = old_lines.get(seat, [])
        rows = []
        for index, line in enumerate(source or []):
            before = was[index] if index < len(was) else None
            recorded_amount = None if before is None else before.get("amount")
            row = {"hand": line.get("hand"), "kind": line.get("kind"),
                   "reason": line.get("reason"), "odds": line.get("odds"),
                   "amount": line.get("amount"), "recorded": recorded_amount,
                   "differs": replayed.replayed is not None and (
                       before is None or recorded_amount != line.get("amount")
                       or before.get("kind") != line.get("kind"))}
            if row["differs"]:
                differences.append(
                    f"settlement: seat {seat}, line {index + 1} ({line.get('reason')}):"
                    f" recorded {recorded_amount if before else 'nothing'}, re-settled"
                    f" {line.get('amount')}")
            rows.append(row)
        if replayed.replayed is not None:
            for index in range(len(source or []), len(was)):
                differences.append(f"settlement: seat {seat}, line {index + 1}"
                                   f" ({was[index].get('reason')}): recorded"
                                   f" {was[index].get('amount')}, which the re-settled round"
                                   " does not have")
        net = _nets(shown).get(seat)
        seats.append({"seat": seat, "lines": rows, "net": net, "recorded_net": old_nets.get(seat),
                      "net_differs": replayed.replayed is not None
                      and old_nets.get(seat) != net})
    return {"seats": seats, "net": shown.get("net"),
            "recorded_net": None if recorded is None else recorded.get("net"),
            "differences": differences, "recomputed": replayed.replayed is not None,
            "dealer": shown.get("dealer")}
