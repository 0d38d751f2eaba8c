"""Verifying the evidence beyond the hash chain: signatures, anchors and operators.

:class:`SignatureWalk` and :class:`OperatorWalk` see every record as the chain walk
(:func:`~.replay.verify_chain`) reads it, then say what they found; :func:`check_anchor_log`
compares the chain with the heads an anchor log holds. Each gives :class:`Discrepancy` for what
fails and notices (text) for what a verifier must know though nothing failed: what the
signatures were checked against, records that predate signing, an unsigned tail.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dealer_assist.surveillance.anchors import Anchor, AnchorLog, recording_name
from dealer_assist.surveillance.discrepancy import Discrepancy
from dealer_assist.surveillance.interface import RecordStore
from dealer_assist.surveillance.signed_chain import KEY_KIND, key_body, public_key_of
from dealer_assist.surveillance.signing import PublicKey, read_public_keys, signature_key_id
from dealer_assist.surveillance.store import Record, UnreadableRecordError

#: records written by programs that hold no key (the page, replay, the operator tools)
KEYLESS_KINDS = ("access", "prune", "keyframe")
OPERATOR_ACTIONS = ("operator-set", "operator-removed", "password-rehashed")


@dataclass(frozen=True, slots=True)
class TrustedKeys:
    """The public keys a verifier trusts, and where they came from (``--key FILE``)."""

    keys: tuple[PublicKey, ...]
    source: str


@dataclass
class Findings:
    """What a check found: discrepancies, and notices that are not."""

    problems: list[Discrepancy] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)


def _where(record: Record) -> dict[str, Any]:
    return {"seq": record.seq, "round_key": record.round_key, "round_id": record.round_id,
            "table": record.table}


def password_digest(password_hash: str) -> str:
    """What an operator record holds of a stored password hash (to tell it was changed)."""
    return hashlib.sha256(password_hash.encode()).hexdigest()[:32]


class SignatureWalk:
    """Checks every record's signature with the key the chain names at that point: the first
    ``key`` record signs itself, each later one is signed by the key before it.

    Every record must carry a signature naming that key; the signatures themselves are verified
    all (``every``) or, by default, only the last one under each key: with the chain's hashes and
    links checked, it vouches for every record before it. When one of those fails,
    :attr:`incomplete` is set: walk again with ``every`` to name each record that fails.
    ``keyless``: the kinds that may be unsigned after signing began; ``owner``: whose key signs
    (as the report names it)."""

    def __init__(self, trusted: TrustedKeys | None, *, every: bool = False,
                 keyless: tuple[str, ...] = KEYLESS_KINDS, owner: str = "the table"):
        self.trusted = trusted
        self.every = every
        self.keyless_kinds = keyless
        self.owner = owner
        self.incomplete = False
        self._unverified: Record | None = None
        self.found = Findings()
        self.keys: list[PublicKey] = []  # every key the chain introduced, validly
        self.chain: str | None = None
        self.first_key_seq: int | None = None
        self.new_chain: dict[str, Any] | None = None
        self.before_signing = 0
        self.keyless = 0
        self.last_seq = 0
        self.last_signed = 0

    @property
    def current(self) -> PublicKey | None:
        return self.keys[-1] if self.keys else None

    def see(self, record: Record) -> None:
        self.last_seq = record.seq
        if record.kind == KEY_KIND:
            self._key(record)
        elif record.signature is None:
            if self.current is None:
                self.before_signing += 1
            elif record.kind in self.keyless_kinds:
                self.keyless += 1
            else:
                self._problem(record, f"carries no signature: written without {self.owner}'s key"
                              " (forged, or its signature removed)")
        elif self.current is None:
            self._problem(record, "is signed, but no key record before it introduces a key")
        elif signature_key_id(record.signature) != self.current.key_id:
            self._problem(record, f"is signed by key {signature_key_id(record.signature) or '?'}"
                          f", not by the chain's key {self.current.key_id}: forged without "
                          f"{self.owner}'s key")
        elif self.every and not self.current.verifies(record.hash, record.signature):
            self._problem(record, f"has a signature that does not verify with key "
                          f"{self.current.key_id}: altered, re-hashed or forged without "
                          f"{self.owner}'s key")
        else:
            self._unverified = None if self.every else record
            self.last_signed = record.seq

    def cut(self) -> None:
        """Records are missing before the next one seen, on purpose (a recorded cut): no later
        signature vouches across it, so the one left to vouch for the records before it is
        verified now."""
        self._settle()

    def _settle(self) -> None:
        """Verify the signature left to vouch for the records before it."""
        record, self._unverified = self._unverified, None
        if record is not None and self.current is not None and record.signature is not None \
                and not self.current.verifies(record.hash, record.signature):
            self.incomplete = True

    def _key(self, record: Record) -> None:
        self._settle()
        new = public_key_of(record)
        if new is None:
            self._problem(record, "names no readable public key")
            return
        signer = self.current or new
        if record.signature is None or not signer.verifies(record.hash, record.signature):
            by = "the key it introduces" if self.current is None else f"key {signer.key_id}"
            self._problem(record, f"introduces key {new.key_id} without a valid signature by"
                          f" {by}: a key added without {self.owner}'s key")
            return
        if self.current is None:
            body = key_body(record)
            self.chain = str(body.get("chain"))
            self.first_key_seq = record.seq
            new_chain = body.get("new_chain")
            self.new_chain = new_chain if isinstance(new_chain, dict) else None
        self.keys.append(new)
        self.last_signed = record.seq

    def _problem(self, record: Record, what: str) -> None:
        self.found.problems.append(Discrepancy(
            "signature", f"{record.describe()} {what}", **_where(record)))

    def finish(self) -> Findings:
        self._settle()
        found, first = self.found, self.keys[0] if self.keys else None
        if first is None:
            text = ("no record is signed: the recording predates signing (or its signatures"
                    " and key records were removed)")
            if self.trusted is not None:
                found.problems.append(Discrepancy(
                    "signature", f"{text}; the key from {self.trusted.source} cannot vouch for"
                    " it"))
            else:
                found.notices.append(f"{text}: its chain is checked, but anyone who could write"
                                     " it could have rewritten it")
            return found
        if self.trusted is not None:
            if first not in self.trusted.keys:
                found.problems.append(Discrepancy(
                    "signature", f"the chain's first key {first.key_id} (record "
                    f"{self.first_key_seq}) is not a key from {self.trusted.source}: the "
                    "recording was signed by someone else", seq=self.first_key_seq))
            else:
                found.notices.append(f"signatures checked with the key(s) from "
                                     f"{self.trusted.source}: chain {self.chain}")
        else:
            found.notices.append(
                f"warning: signatures checked with key {first.key_id}, which the recording"
                f" itself names (record {self.first_key_seq}): this proves nothing against "
                "someone who can replace the whole recording; give --key TABLE.pub")
        if len(self.keys) > 1:
            found.notices.append("keys rotated: " + " -> ".join(k.key_id for k in self.keys))
        if self.before_signing:
            found.notices.append(
                f"records 1 to {self.before_signing} predate signing; the signed record"
                f" {self.first_key_seq} covers them through the chain")
        if self.new_chain is not None:
            replaced = ", ".join(str(item.get("chain")) for item in
                                 self.new_chain.get("replaces", []) if isinstance(item, dict))
            found.notices.append(
                f"this chain was begun where a recording had been, by the technician: "
                f"{self.new_chain.get('reason')!r}" + (f" (replacing chain {replaced})"
                                                       if replaced else ""))
        if self.keyless:
            found.notices.append(
                f"{self.keyless} access, prune or keyframe record(s) are unsigned: the page, "
                "replay and the operator tools hold no key; a signed record after one fixes it"
                " in place")
        if self.last_signed < self.last_seq:
            found.notices.append(
                f"records {self.last_signed + 1} to {self.last_seq} are an unsigned tail: no "
                "signed record covers them yet")
        return found


class OperatorWalk:
    """Rebuilds the operators from their chained records, to compare with the stored ones."""

    def __init__(self) -> None:
        self.operators: dict[str, tuple[str | None, str | None, int]] = {}  # role, digest, seq

    def see(self, record: Record) -> None:
        if record.kind != "access":
            return
        try:
            body = json.loads(record.body_text)
        except ValueError:
            return
        if not isinstance(body, dict) or body.get("action") not in OPERATOR_ACTIONS:
            return
        target = body.get("target")
        if not isinstance(target, dict):
            return
        if body["action"] == "password-rehashed":  # at login: the user is the operator
            known = self.operators.get(str(body.get("user")))
            digest = target.get("password")
            if known is not None:
                self.operators[str(body.get("user"))] = (
                    known[0], digest if isinstance(digest, str) else None, record.seq)
            return
        name = target.get("name")
        if not isinstance(name, str):
            return
        if body["action"] == "operator-removed":
            self.operators.pop(name, None)
        else:
            digest = target.get("password")
            self.operators[name] = (str(target.get("role")),
                                    digest if isinstance(digest, str) else None, record.seq)

    def finish(self, store: RecordStore) -> Findings:
        found = Findings()
        stored = {operator.name: operator for operator in store.operators()}
        for name in sorted(set(stored) | set(self.operators)):
            operator, recorded = stored.get(name), self.operators.get(name)
            if operator is None:
                seq = recorded[2] if recorded else None
                found.problems.append(Discrepancy(
                    "operators", f"operator {name!r} was set by record {seq} but is missing "
                    "from the operators table: removed without a record", seq=seq))
            elif recorded is None:
                found.problems.append(Discrepancy(
                    "operators", f"operator {name!r} ({operator.role}) is in the operators "
                    "table but no record created it: inserted without the operator tool"))
            elif recorded[0] != operator.role:
                found.problems.append(Discrepancy(
                    "operators", f"operator {name!r} is {operator.role} in the operators table"
                    f" but {recorded[0]} by record {recorded[2]}: changed without a record",
                    seq=recorded[2], recorded=recorded[0], replayed=operator.role))
            elif recorded[1] is not None and \
                    recorded[1] != password_digest(operator.password_hash):
                found.problems.append(Discrepancy(
                    "operators", f"operator {name!r}'s password is not the one record "
                    f"{recorded[2]} set: changed without a record", seq=recorded[2]))
        return found


def check_anchor_log(store: RecordStore, log: AnchorLog, walk: SignatureWalk) -> Findings:
    """The anchor log's heads of this chain must be in it, unchanged and signed; a log that
    names another chain for this recording, which this one does not say it replaces, means
    the recording was replaced."""
    found = Findings()
    anchors, unreadable = log.read()
    found.problems.extend(Discrepancy("anchor", text) for text in unreadable)
    here = recording_name(store.directory)
    replaced = {str(item.get("chain")) for item in (walk.new_chain or {}).get("replaces", [])
                if isinstance(item, dict)}
    others = sorted({a.chain for a in anchors
                     if a.recording == here and a.chain != walk.chain and a.chain not in replaced})
    if others:
        found.problems.append(Discrepancy(
            "anchor", f"the anchor log {log.path} names chain(s) {', '.join(others)} for this "
            f"recording, which holds {'chain ' + walk.chain if walk.chain else 'no signed chain'}"
            ": the recording was replaced"))
    mine = [anchor for anchor in anchors if walk.chain is not None and anchor.chain == walk.chain]
    if not mine:
        if not others:
            found.problems.append(Discrepancy(
                "anchor", f"the anchor log {log.path} names no head of "
                f"{'chain ' + walk.chain if walk.chain else 'this recording'}: nothing vouches"
                " that the chain is whole"))
        return found
    failing = [problem for anchor in mine if (problem := _check_anchor(store, anchor, walk))]
    if failing:
        first = failing[0]
        more = f" (and {len(failing) - 1} later anchor(s))" if len(failing) > 1 else ""
        found.problems.append(Discrepancy(first.kind, first.what + more, seq=first.seq,
                                          recorded=first.recorded, replayed=first.replayed))
    latest = max(mine, key=lambda anchor: anchor.seq)
    found.notices.append(f"{len(mine)} anchor(s) of chain {walk.chain} in {log.path} checked;"
                         f" the latest names record {latest.seq} ({latest.why}, {latest.at})")
    return found


def _check_anchor(store: RecordStore, anchor: Anchor, walk: SignatureWalk) -> Discrepancy | None:
    where = f"anchor log line {anchor.line} ({anchor.why}, {anchor.at})"
    key = next((key for key in walk.keys if anchor.signature is not None
                and key.key_id == signature_key_id(anchor.signature)), None)
    if key is None or anchor.signature is None or not key.verifies(anchor.hash, anchor.signature):
        return Discrepancy("anchor", f"{where}: its signature does not verify with the chain's "
                           "keys: a line written without the chain's key", seq=anchor.seq)
    try:
        record = store.record(anchor.seq)
    except UnreadableRecordError as error:
        return Discrepancy("database", f"{where}: anchored record {anchor.seq} cannot be read"
                           f" ({error.reason})", seq=anchor.seq)
    if record is None:
        return Discrepancy("anchor", f"{where}: anchored record {anchor.seq} is gone: the chain"
                           " was cut short", seq=anchor.seq, recorded=anchor.hash)
    if record.hash != anchor.hash:
        return Discrepancy("anchor", f"{where}: {record.describe()} no longer has the anchored"
                           " hash: the chain was rewritten", seq=anchor.seq,
                           recorded=anchor.hash, replayed=record.hash)
    return None


def trusted_keys(paths: Sequence[str]) -> TrustedKeys | None:
    """The keys of the public key files at ``paths`` (None: none given); KeyFileError names
    a file that cannot be read."""
    if not paths:
        return None
    keys = tuple(key for path in paths for key in read_public_keys(Path(path)))
    return TrustedKeys(keys, ", ".join(paths))
