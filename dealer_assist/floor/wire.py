"""What travels between a table box and the room: subjects, message ids and a record's bytes.

A record travels as one JetStream message on ``floor.records.<TABLE>``: its payload is the
record's JSON (every field the chain hashes, its signature and the chain id) and, for a key frame
small enough to travel, a newline and the frame's bytes. The message id (``Nats-Msg-Id``) is
``TABLE.CHAIN.SEQ.HASH16``, so a resend is never stored twice within JetStream's de-duplication
window, and the room's store refuses a second copy beyond it (its key is table, chain and seq).
:func:`decode_record` refuses (with :class:`WireError`, saying what) anything
:func:`encode_record` would not have written.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from typing import Any

from dealer_assist.roundlog.fold import StrictJSONError, load_strict
from dealer_assist.surveillance.store import MAX_INTEGER, Record

#: the stream that holds every table's records (the room creates it, R3 on a cluster)
STREAM = "FLOOR"
RECORDS = "floor.records"  #: ``floor.records.<TABLE>``: one subject per table
FRAMES = "floor.frames"  #: ``floor.frames.<TABLE>``: the room asks a box for a frame
HOLDS = "floor.holds"  #: ``floor.holds.<TABLE>``: the room asks a box to keep a held round
#: a record's JSON is at most this long; a message at most MAX_MESSAGE (a key frame with it)
MAX_RECORD = 256 * 1024
MAX_MESSAGE = 8 * 1024 * 1024
#: the tables' names as a subject token allows them (table.toml's table_id is narrower still)
TABLE_TOKEN = re.compile(r"[A-Za-z0-9_-]{1,32}")
CHAIN_TOKEN = re.compile(r"[A-Za-z0-9_-]{1,64}")
#: the highest hash format a record may name (the room's PostgreSQL column is a 32-bit integer)
MAX_HASH_FORMAT = 2**31 - 1
_FIELDS = ("seq", "at", "table", "round_key", "round_id", "kind", "body_text", "file",
           "sha256", "hash_format", "prev_hash", "hash", "signature")


class WireError(ValueError):
    """A message that is no record a table box sends (says what is wrong)."""


def record_subject(table: str) -> str:
    return f"{RECORDS}.{table}"


def frame_subject(table: str) -> str:
    return f"{FRAMES}.{table}"


def hold_subject(table: str) -> str:
    return f"{HOLDS}.{table}"


def message_id(table: str, chain: str, record: Record) -> str:
    """``Nats-Msg-Id`` of a record: its table, chain and number, and the start of its hash. A
    resend of the record is the same message (JetStream stores it once); a record rewritten on
    the box after it was sent is another, which reaches the room as a fork instead of being
    dropped by the broker as a duplicate."""
    return f"{table}.{chain}.{record.seq}.{record.hash[:16]}"


@dataclass(frozen=True, slots=True)
class Forwarded:
    """A record as it arrived from a table: the table, its chain, the record and the key frame's
    bytes where they travelled with it (None: the frame, if any, stays on the box)."""

    table: str
    chain: str
    record: Record
    frame: bytes | None = None


def encode_record(table: str, chain: str, record: Record, frame: bytes | None = None) -> bytes:
    fields: dict[str, Any] = {name: getattr(record, name) for name in _FIELDS}
    fields.update(v=1, source=table, chain=chain)
    text = json.dumps(fields, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()
    return text if frame is None else text + b"\n" + frame


def _storable(text: str) -> bool:
    """Whether the room's stores can hold ``text``: UTF-8 text without a NUL character."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return "\x00" not in text


def decode_record(subject: str, data: bytes) -> Forwarded:
    """The record a message on ``subject`` carries; the table is the subject's (a table can
    publish only to its own subject, so a record naming another table is refused). Whatever
    the room's stores could not hold (a number past 64 bits, a NUL character, JSON nested too
    deep) is refused here too, so one bad message is alarmed and acknowledged, never retried
    for ever nor crashing the room for every table."""
    prefix = RECORDS + "."
    table = subject[len(prefix):] if subject.startswith(prefix) else ""
    if not TABLE_TOKEN.fullmatch(table):
        raise WireError(f"subject {subject[:80]!r} is not {RECORDS}.<TABLE>")
    if len(data) > MAX_MESSAGE:
        raise WireError(f"message of {len(data)} bytes from {table} is over {MAX_MESSAGE}")
    head, newline, frame = data.partition(b"\n")
    if len(head) > MAX_RECORD:
        raise WireError(f"record of {len(head)} bytes from {table} is over {MAX_RECORD}")
    try:
        raw = load_strict(head)
    except StrictJSONError as error:
        raise WireError(f"message from {table} is not JSON: {error}") from None
    if not isinstance(raw, dict) or raw.get("v") != 1:
        raise WireError(f"message from {table} is not a version-1 record")
    if raw.get("source") != table:
        raise WireError(f"message on {table}'s subject names table {raw.get('source')!r}")
    chain = raw.get("chain")
    if not isinstance(chain, str) or not CHAIN_TOKEN.fullmatch(chain):
        raise WireError(f"message from {table} names no valid chain: {chain!r}")
    values: dict[str, Any] = {}
    for name in _FIELDS:
        value = raw.get(name)
        values[name] = value
        if name in ("seq", "hash_format") or (name == "round_key" and value is not None):
            most = MAX_HASH_FORMAT if name == "hash_format" else MAX_INTEGER
            if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= most:
                raise WireError(f"record from {table}: {name} must be a whole number of 0 to "
                                f"{most}, got {value!r:.40}")
        elif name in ("at", "kind", "body_text", "prev_hash", "hash"):
            if not isinstance(value, str):
                raise WireError(f"record from {table}: {name} must be text, got {value!r:.80}")
        elif value is not None and not isinstance(value, str):
            raise WireError(f"record from {table}: {name} must be text or null, got "
                            f"{value!r:.80}")
        if isinstance(value, str) and not _storable(value):
            raise WireError(f"record from {table}: {name} holds a NUL character or a lone "
                            "surrogate, which no store holds")
    if values["seq"] < 1:
        raise WireError(f"record from {table}: seq must be 1 or more")
    record = Record(**values)
    if not newline:
        return Forwarded(table, chain, record)
    if record.kind != "frame" or record.sha256 is None:
        raise WireError(f"{record.describe()} from {table} carries bytes but is no frame")
    if hashlib.sha256(frame).hexdigest() != record.sha256:
        raise WireError(f"{record.describe()} from {table}: the frame's bytes do not match its "
                        "sha256")
    return Forwarded(table, chain, record, frame)


#: a hold request is at most this long (its reason, at most MAX_WHY characters, as JSON)
MAX_HOLD_REQUEST = 32 * 1024
#: the longest reason a hold or its release takes (it goes into the room's and the box's chains)
MAX_WHY = 2000
MAX_USER = 200
_HOLD_FIELDS = {"v", "hold", "chain", "round_key", "user", "why"}


@dataclass(frozen=True, slots=True)
class HoldRequest:
    """The room's request to a box: keep every frame of round ``round_key`` of ``chain``, for
    the room's hold record ``hold`` (its seq in the room's chain), put on by ``user`` for
    ``why``."""

    hold: int
    chain: str
    round_key: int
    user: str
    why: str

    def encode(self) -> bytes:
        return json.dumps({"v": 1, "hold": self.hold, "chain": self.chain,
                           "round_key": self.round_key, "user": self.user, "why": self.why},
                          sort_keys=True).encode()


def decode_hold_request(data: bytes) -> HoldRequest:
    """The hold request ``data`` carries; WireError says what is wrong with anything
    :meth:`HoldRequest.encode` would not have written (or one over :data:`MAX_HOLD_REQUEST`)."""
    if len(data) > MAX_HOLD_REQUEST:
        raise WireError(f"hold request of {len(data)} bytes is over {MAX_HOLD_REQUEST}")
    try:
        raw = load_strict(data)
    except StrictJSONError as error:
        raise WireError(f"hold request: {error}") from None
    if not isinstance(raw, dict) or raw.get("v") != 1 or set(raw) != _HOLD_FIELDS:
        raise WireError("hold request: not a version-1 request with exactly the fields "
                        f"{sorted(_HOLD_FIELDS)}")
    for name in ("hold", "round_key"):
        value = raw[name]
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < 2**63:
            raise WireError(f"hold request: {name} must be a whole number, got {value!r:.40}")
    if raw["hold"] < 1:
        raise WireError("hold request: hold must be 1 or more")
    chain = raw["chain"]
    if not isinstance(chain, str) or not CHAIN_TOKEN.fullmatch(chain):
        raise WireError(f"hold request names no valid chain: {chain!r:.80}")
    for name, most in (("user", MAX_USER), ("why", MAX_WHY)):
        value = raw[name]
        if not isinstance(value, str) or not value.strip() or len(value) > most:
            raise WireError(f"hold request: {name} must be text of 1 to {most} characters")
    return HoldRequest(raw["hold"], chain, raw["round_key"], raw["user"], raw["why"])
