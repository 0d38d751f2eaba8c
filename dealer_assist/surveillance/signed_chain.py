"""Writing a signed chain: the ``key`` records that name its keys, and its anchors.

A chain's first ``key`` record (signed by the key it introduces) gives the chain its id; every
record after it is signed by the chain's current key; a later ``key`` record, signed by the key
before it, rotates to a new one. A ``key`` record's body::

    {"chain": CHAIN-ID, "public_key": "ed25519:HEX", "key_id": ID, "previous": ID or null,
     "why": "...", "new_chain": {"reason": ..., "replaces": [...]} (only where the technician
     began a chain where one had been)}

Everything here goes through :class:`~.interface.RecordStore`, above any one storage.
"""

from __future__ import annotations

import json
import logging
import unicodedata
import uuid
from dataclasses import dataclass
from typing import Any

from dealer_assist.surveillance.anchors import Anchor, AnchorLog, recording_name
from dealer_assist.surveillance.interface import RecordStore
from dealer_assist.surveillance.signing import PublicKey, Signer
from dealer_assist.surveillance.store import Record, RecordingError, format_time

logger = logging.getLogger(__name__)

KEY_KIND = "key"
#: where a table keeps its round-log files beside the store (dealer_assist.table.recording)
ROUND_FILES = "rounds"


class FreshChainRefused(RecordingError):
    """A new chain would begin where a recording was: refused unless the technician says so."""


class KeyMismatchError(RecordingError):
    """The recording's chain is signed by another key than the table's."""


@dataclass(frozen=True, slots=True)
class Evidence:
    """How a table keeps its recording's evidence: its key, its anchor log (None: none), and
    the technician's reason to begin a new chain where one was (None: refused)."""

    signer: Signer
    anchor_log: AnchorLog | None = None
    new_chain: str | None = None


#: The longest reason a key rotation or a new chain records.
MAX_REASON = 200
#: Unicode categories a reason may not hold: control and format characters, line and paragraph
#: separators.
_HIDDEN = frozenset({"Cc", "Cf", "Zl", "Zp"})


def recorded_reason(text: str) -> str:
    """``text`` stripped, where it is 1 to :data:`MAX_REASON` characters on one line (it goes
    into the chain and the log): no control or format character (a bidirectional override
    would show it as other text) and no line or paragraph separator; else ValueError saying
    so."""
    why = text.strip()
    hidden = any(unicodedata.category(c) in _HIDDEN for c in why)
    if not why or len(why) > MAX_REASON or hidden:
        raise ValueError(f"a reason of 1 to {MAX_REASON} characters on one line is needed (it "
                         f"is recorded in the chain); got {len(why)} characters"
                         + (" with a line break, control or format character" if hidden else ""))
    return why


def key_body(record: Record) -> dict[str, Any]:
    """A ``key`` record's body ({} when it is not an object, or nested too deep to read)."""
    try:
        body = json.loads(record.body_text)
    except (ValueError, RecursionError):
        return {}
    return body if isinstance(body, dict) else {}


def chain_id(store: RecordStore) -> str | None:
    """The store's chain id: the ``chain`` its first ``key`` record names (None: unsigned). It
    names the chain wherever its records are copied (the room keys them by table, chain and
    seq), the records before that key record included."""
    first = next(iter(store.records(kinds=(KEY_KIND,))), None)
    chain = None if first is None else key_body(first).get("chain")
    return chain if isinstance(chain, str) and chain else None


def begin_signing(store: RecordStore, evidence: Evidence, table: str) -> str:
    """Sign everything ``store`` appends from now with the table's key; returns the chain id.

    An empty store begins a chain (refused with :class:`FreshChainRefused` where the anchor log
    names one for this directory or round files lie beside it, unless ``evidence.new_chain``);
    a chain without keys (recorded before signing) is signed from here on; a signed chain must
    be signed by this key now (:class:`KeyMismatchError`)."""
    head_seq, _ = store.head()
    if head_seq and evidence.new_chain is not None:
        raise FreshChainRefused(f"holds a chain already ({head_seq} records): a new chain "
                                "begins only where the records are gone", store.location)
    keys = list(store.records(kinds=(KEY_KIND,)))
    signer = evidence.signer
    if keys:
        current = key_body(keys[-1]).get("public_key")
        if current != signer.public.text:
            raise KeyMismatchError(
                f"the recording is signed by key {key_body(keys[-1]).get('key_id')}, this "
                f"table's key is {signer.public.key_id}: restore the table's key file, or "
                "record into a new directory", store.location)
        store.signer = signer
        return str(key_body(keys[0]).get("chain"))
    body: dict[str, Any] = {"chain": uuid.uuid4().hex, "public_key": signer.public.text,
                            "key_id": signer.public.key_id, "previous": None}
    if head_seq == 0:
        body["why"] = "a new chain"
        body["new_chain"] = _fresh_chain(store, evidence)
    else:
        body["why"] = f"signing begins after record {head_seq}, which predate it"
    store.signer = signer
    store.append(KEY_KIND, body, table=table)
    return str(body["chain"])


def _fresh_chain(store: RecordStore, evidence: Evidence) -> dict[str, Any] | None:
    """What a new chain replaces, as recorded in its first key record (None: nothing);
    :class:`FreshChainRefused` where it replaces something and the technician did not say so."""
    named = evidence.anchor_log.chains_named(store.directory) if evidence.anchor_log else {}
    rounds = store.directory / ROUND_FILES
    files = sorted(path.name for path in rounds.glob("*.jsonl")) if rounds.is_dir() else []
    if not named and not files:
        return None
    found = []
    if named:
        found.append(f"the anchor log {evidence.anchor_log.path if evidence.anchor_log else ''}"
                     f" names chain(s) {', '.join(named)} for it")
    if files:
        found.append(f"{ROUND_FILES}/ holds {len(files)} round file(s)")
    if evidence.new_chain is None:
        raise FreshChainRefused(
            f"its chain of records is missing while {' and '.join(found)}: a new chain here "
            "would hide what was recorded; restore index.sqlite, or, if it is truly lost, "
            "start the table with --new-chain \"REASON\" (recorded and anchored)",
            store.location)
    logger.warning("a new chain begins in %s (%s): %s", store.directory, "; ".join(found),
                   evidence.new_chain)
    return {"reason": evidence.new_chain, "round_files": len(files),
            "replaces": [{"chain": chain, "seq": anchor.seq, "hash": anchor.hash}
                         for chain, anchor in named.items()]}


def rotate_key(store: RecordStore, new: Signer, why: str, table: str | None = None) -> Record:
    """Introduce ``new`` with a ``key`` record signed by the store's current signer, then sign
    with it."""
    old = store.signer
    if old is None:
        raise RecordingError("no key to rotate from: the store signs nothing", store.location)
    keys = list(store.records(kinds=(KEY_KIND,)))
    chain = key_body(keys[0]).get("chain") if keys else None
    record = store.append(KEY_KIND, {
        "chain": chain, "public_key": new.public.text, "key_id": new.public.key_id,
        "previous": old.public.key_id, "why": why}, table=table)
    store.signer = new
    return record


def anchor_head(store: RecordStore, log: AnchorLog, chain: str, table: str | None,
                why: str) -> Anchor:
    """Write the store's head into the anchor log."""
    seq, digest = store.head()
    record = store.record(seq)
    anchor = Anchor(0, format_time(store.clock()), chain, recording_name(store.directory), table,
                    seq, digest, None if record is None else record.signature, why)
    log.append(anchor)
    return anchor


def public_key_of(record: Record) -> PublicKey | None:
    """The key a ``key`` record introduces (None: it names none that can be read)."""
    try:
        return PublicKey.from_text(key_body(record).get("public_key", ""))
    except ValueError:
        return None
