"""The room's own chain (chain 0 of its store), signed with the room's key as a table box signs
its own (:mod:`dealer_assist.surveillance.signed_chain`).

The room's private key (room.toml ``[signing] key``, mode 0600, made by ``room keygen``) signs
every record the room appends: floor alarms, holds and releases, prunes, page access. The
chain's first ``key`` record introduces it, signed by itself. A room whose chain was written
before signing began goes on from a ``key`` record that says so and *vouches* (by seq and hash)
for the hold, release and prune records before it: those are trusted as that signed record
lists them. The public key file (``[signing] public``, ``.pub`` beside the key) is what vouches
for the chain: ``room verify`` walks the chain against it (:func:`verify_room_chain`), and the
room trusts a ``floor-prune``, ``floor-hold`` or ``floor-release`` record only when
:class:`RoomSeal` finds it signed by the room's key.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dealer_assist.surveillance.anchors import AnchorLog, AnchorLogError
from dealer_assist.surveillance.discrepancy import Discrepancy
from dealer_assist.surveillance.evidence_check import (
    Findings,
    SignatureWalk,
    TrustedKeys,
    check_anchor_log,
)
from dealer_assist.surveillance.interface import RecordStore
from dealer_assist.surveillance.replay import ChainLinks
from dealer_assist.surveillance.signed_chain import (
    KEY_KIND,
    anchor_head,
    chain_id,
    key_body,
    public_key_of,
    rotate_key,
)
from dealer_assist.surveillance.signing import (
    KeyFileError,
    PublicKey,
    Signer,
    add_public_key,
    load_signer,
    read_public_keys,
    replace_key,
)
from dealer_assist.surveillance.store import Record, RecordingError, hash_holds

if TYPE_CHECKING:
    from dealer_assist.floor.config import RoomConfig

logger = logging.getLogger(__name__)

#: the room's records others act on (retention.HOLD, RELEASE, cuts.PRUNE): trusted only signed
TRUSTED_KINDS = ("floor-hold", "floor-release", "floor-prune")
ROOM_KEYS_HEADER = ("# dealer-assist room signing keys, oldest first: room.toml [signing] "
                    "public; 'room verify' checks the room's chain with them")
WHOSE = "the room's"


def make_room_key(config: RoomConfig) -> tuple[Signer, bool]:
    """The room's key, made where ``config`` names it unless it is there already (then only
    checked: a private file, an Ed25519 key), its public half added to the public key file;
    also whether it was made now. KeyFileError naming the file otherwise."""
    path = config.signing_key
    if path.exists() or path.is_symlink():
        signer, made = load_signer(path, WHOSE), False
    else:
        signer, made = Signer.generate(), True
        signer.save(path)
    add_public_key(config.signing_public, signer.public, ROOM_KEYS_HEADER)
    return signer, made


def load_room_key(config: RoomConfig) -> Signer:
    """The room's private key; KeyFileError saying how to make it when it is not there, or why
    it is refused (not a private file of this user's, not an Ed25519 key)."""
    path = config.signing_key
    if not path.exists() and not path.is_symlink():
        raise KeyFileError(f"{path}: no room signing key there: the room signs its own chain;"
                           f" make the key with 'dealer-assist room keygen --config "
                           f"{config.path}' (room.toml [signing] key names it)")
    return load_signer(path, WHOSE)


def rotate_room_key(config: RoomConfig, why: str) -> PublicKey:
    """Replace the room's key: a new key is made (first beside the old one, ``KEY.new``),
    introduced in the room's chain by a ``key`` record the old key signs (anchored like any
    record), added to the public key file, then put in the old key's place; the new public key.
    A ``room serve`` still running with the old key appends nothing more (the store refuses a
    key the chain has rotated away from) until restarted. KeyFileError or RecordingError."""
    from dealer_assist.floor.config import open_room_store

    old = load_room_key(config)
    store = open_room_store(config, signer=old)
    try:
        begin_room_signing(store, old)
        new = replace_key(config.signing_key, config.signing_public,
                          lambda key: rotate_key(store, key, why), ROOM_KEYS_HEADER)
    finally:
        store.close()
    logger.warning("the room's key rotated from %s to %s (%s)", old.public.key_id,
                   new.public.key_id, why)
    return new.public


def room_public_keys(config: RoomConfig) -> tuple[PublicKey, ...]:
    """The keys that vouch for the room's chain (its public key file); KeyFileError."""
    return tuple(read_public_keys(config.signing_public))


def begin_room_signing(store: RecordStore, signer: Signer) -> Record | None:
    """Sign what ``store`` appends to the room's chain with ``signer`` from now on: a chain
    without a key gets a ``key`` record introducing it (returned; vouching for the hold, release
    and prune records before it); a chain signed already must be signed by this key
    (RecordingError otherwise)."""
    keys = list(store.records(kinds=(KEY_KIND,)))
    if keys:
        current = public_key_of(keys[-1])
        if current != signer.public:
            raise RecordingError(
                f"the room's chain is signed by key {current.key_id if current else '?'}, the "
                f"room's key file holds key {signer.public.key_id}: restore the room's key",
                store.location)
        store.signer = signer
        return None
    head_seq, _ = store.head()
    body: dict[str, Any] = {"chain": uuid.uuid4().hex, "public_key": signer.public.text,
                            "key_id": signer.public.key_id, "previous": None}
    if head_seq == 0:
        body["why"] = "the room's chain begins signed"
    else:
        body["why"] = f"signing begins after record {head_seq}, which predate it"
        vouched = []
        for record in store.records(kinds=TRUSTED_KINDS):
            if hash_holds(record):
                vouched.append([record.seq, record.hash])
            else:
                logger.warning("the room's %s does not match its hash: not vouched for",
                               record.describe())
        body["vouches"] = vouched
    store.signer = signer
    record = store.append(KEY_KIND, body)
    logger.info("the room's chain is signed from record %s on, by key %s", record.seq,
                signer.public.key_id)
    return record


class RoomAnchors:
    """Writes the room's chain head into its anchor log (outside PostgreSQL) after each record
    the room appends, so that whoever can write the database cannot cut the chain's tail
    unseen (``room verify`` checks every head the log holds). A head the log cannot take is
    logged as an error: the record stands, and the next head vouches for it."""

    def __init__(self, store: RecordStore, path: Path):
        self.store = store
        self.log = AnchorLog(path)
        self._chain: str | None = None

    def __call__(self, record: Record) -> None:
        if self._chain is None:
            self._chain = chain_id(self.store)
        if self._chain is None or record.signature is None:
            return  # not signed yet: nothing a head in the log could vouch for
        try:
            anchor_head(self.store, self.log, self._chain, None, record.kind)
        except AnchorLogError as error:
            logger.error("the room's chain head (record %s) is not anchored: %s", record.seq,
                         error)


class RoomSeal:
    """Whether a record of the room's chain is the room's: read from the chain's ``key``
    records, trusting ``keys`` (the room's public keys) for the first of them."""

    def __init__(self, store: RecordStore, keys: Sequence[PublicKey]):
        self.keys = tuple(keys)
        self.spans: list[tuple[int, PublicKey]] = []  # (seq of its key record, key), in order
        self.vouched: dict[int, str] = {}
        self.problem: str | None = None
        for record in store.records(kinds=(KEY_KIND,)):
            new = public_key_of(record)
            signer = self.spans[-1][1] if self.spans else new
            if new is None or signer is None or record.signature is None \
                    or not hash_holds(record) \
                    or not signer.verifies(record.hash, record.signature):
                self.problem = (f"{record.describe()} of the room's chain introduces a key "
                                "without a valid signature")
                break
            if not self.spans:
                if new not in self.keys:
                    self.problem = (f"the room's chain is signed by key {new.key_id} (record "
                                    f"{record.seq}), which is not the room's")
                    break
                self.vouched = _vouched(record)
            self.spans.append((record.seq, new))

    @classmethod
    def of(cls, store: RecordStore, keys: Sequence[PublicKey] | None = None) -> RoomSeal:
        """A seal trusting ``keys``, or where None the key ``store`` signs with (none: none)."""
        if keys is None:
            keys = () if store.signer is None else (store.signer.public,)
        return cls(store, keys)

    def why_untrusted(self, record: Record) -> str | None:
        """Why ``record`` (of the room's chain) is not the room's, or None when it is."""
        if not hash_holds(record):
            return "was altered (its content does not match its hash)"
        if not self.spans and self.problem:
            return f"cannot be trusted: {self.problem}"
        if not self.spans:
            return (
                "is not signed: the room's chain holds no key record (the room signs it "
                "from the first 'room serve' with its key)" if self.keys else
                "cannot be checked: no room key is known here")
        if record.seq <= self.spans[0][0]:
            return None if self.vouched.get(record.seq) == record.hash else (
                "predates signing, and the key record that began it does not vouch for it")
        key = next(key for seq, key in reversed(self.spans) if seq < record.seq)
        if record.signature is None:
            return "carries no signature: written without the room's key"
        if not key.verifies(record.hash, record.signature):
            return (f"has no valid signature by the room's key {key.key_id}: rewritten or "
                    "forged without the room's key")
        return None


def _vouched(record: Record) -> dict[int, str]:
    found: dict[int, str] = {}
    for item in key_body(record).get("vouches") or []:
        if isinstance(item, list) and len(item) == 2 and isinstance(item[0], int) \
                and isinstance(item[1], str):
            found[item[0]] = item[1]
    return found


def verify_room_chain(store: RecordStore, trusted: TrustedKeys,
                      anchor_log: Path | None = None) -> Findings:
    """The room's own chain walked: numbered from 1 without a hole, linked, every record's
    content matching its hash, and every record after signing began signed by the room's
    key (the first key one of ``trusted``); every head ``anchor_log`` holds still in it,
    unchanged and signed (a cut tail, a rewrite). An empty chain is reported as a notice, as
    is a room without an anchor log."""
    found = Findings()
    if store.head()[0] == 0:
        found.notices.append("the room's own chain is empty")
        return found
    links = ChainLinks("deleted from the room's chain")
    walk = SignatureWalk(trusted, keyless=(), owner="the room")
    for record in store.records():
        links.see(record)
        walk.see(record)
    signatures = walk.finish()
    if walk.incomplete:  # a signature failed: every record's, to name each that fails
        walk = SignatureWalk(trusted, every=True, keyless=(), owner="the room")
        for record in store.records():
            walk.see(record)
        signatures = walk.finish()
    found.problems.extend(_room(problem) for problem in [*links.problems,
                                                           *signatures.problems])
    found.notices.extend(signatures.notices)
    if anchor_log is None:
        found.notices.append("the room keeps no anchor log (room.toml [signing] anchor_log):"
                             " records cut off the end of its chain cannot be told")
        return found
    anchored = check_anchor_log(store, AnchorLog(anchor_log), walk)
    found.problems.extend(_room(problem) for problem in anchored.problems)
    found.notices.extend(anchored.notices)
    return found


def _room(problem: Discrepancy) -> Discrepancy:
    return Discrepancy(problem.kind, f"the room's chain: {problem.what}", seq=problem.seq,
                       recorded=problem.recorded, replayed=problem.replayed)
