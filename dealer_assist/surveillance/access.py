"""Who may look at a recording, and the record of who looked at what, when.

Operators live in the recording store with an argon2id hash of their password
(:mod:`~dealer_assist.surveillance.passwords`). Roles: ``operator`` (everything, including
retention) and ``auditor`` (read-only: search, view, replay, export). Every login, search, view,
frame, replay, export, statistics and storage look is appended to the hash chain as an ``access``
record, so the access log is as tamper-evident as the recording.
"""

from __future__ import annotations

import hashlib
import json
import os
import pwd
import re
from dataclasses import dataclass, field
from typing import Any

from dealer_assist.surveillance.evidence_check import password_digest
from dealer_assist.surveillance.interface import RecordStore, StoredOperator
from dealer_assist.surveillance.passwords import Passwords, default_passwords, is_old
from dealer_assist.surveillance.store import RecordingError, format_time

ROLES = ("operator", "auditor")
_NAME = re.compile(r"^[A-Za-z0-9._@-]{1,64}$")
MIN_PASSWORD = 8
#: The most of a refused login's name that goes into the record (the rest is counted, not kept).
RECORDED_NAME = 64


class AccessError(RecordingError):
    """A refused login or an invalid operator definition."""


@dataclass(frozen=True, slots=True)
class Operator:
    name: str
    role: str
    #: what the store held for this operator when it was read (role and password hash): a
    #: session holds only while the store still holds the same
    stamp: str = field(default="", compare=False)

    @property
    def read_only(self) -> bool:
        return self.role == "auditor"


def _stamp(stored: StoredOperator) -> str:
    return hashlib.sha256(f"{stored.role}\0{stored.password_hash}".encode()).hexdigest()


def current(store: RecordStore, operator: Operator) -> bool:
    """Whether the store still holds this operator as it was at login (not removed, same role,
    same password)."""
    stored = store.operator(operator.name)
    return stored is not None and _stamp(stored) == operator.stamp


def add_operator(store: RecordStore, name: str, password: str, role: str,
                 passwords: Passwords | None = None) -> Operator:
    """Create or replace an operator (its password is stored only as a salted hash); any session
    it had ends."""
    store.check()
    if not _NAME.fullmatch(name):
        raise AccessError(f"operator name {name!r} must be 1-64 letters, digits or . _ @ -")
    if role not in ROLES:
        raise AccessError(f"role {role!r} must be one of {', '.join(ROLES)}")
    if len(password) < MIN_PASSWORD:
        raise AccessError(f"a password needs at least {MIN_PASSWORD} characters")
    stored = StoredOperator(name, role, (passwords or default_passwords()).hash(password))
    store.put_operator(stored, format_time(store.clock()))
    # a digest of the stored hash on the record: verify finds a password changed by SQL
    log_command(store, "operator-set", {"name": name, "role": role,
                                        "password": password_digest(stored.password_hash)})
    return Operator(name, role, _stamp(stored))


def remove_operator(store: RecordStore, name: str) -> bool:
    store.check()
    gone = store.delete_operator(name)
    if gone:
        log_command(store, "operator-removed", {"name": name})
    return gone


def unlock_login(store: RecordStore, name: str) -> None:
    """Lift the page's lockout of a login name (the page sees this record at its next attempt)."""
    store.check()
    log_command(store, "login-unlocked", {"name": recorded_name(name)})


def unlocked_since(store: RecordStore, name: str, seq: int) -> bool:
    """Whether a ``login-unlocked`` record for ``name`` follows record ``seq``."""
    limit = 256
    while True:
        records = store.latest_records("access", limit)
        for record in records:
            if record.seq <= seq:
                return False
            body = _object(record.body_text)
            target = body.get("target")
            if body.get("action") == "login-unlocked" and isinstance(target, dict) \
                    and target.get("name") == recorded_name(name):
                return True
        if len(records) < limit:
            return False
        limit *= 4


def list_operators(store: RecordStore) -> list[Operator]:
    return [Operator(stored.name, stored.role) for stored in store.operators()]


def authenticate(store: RecordStore, name: str, password: str, *,
                 passwords: Passwords | None = None, address: str | None = None) -> Operator:
    """The operator for this name and password; :class:`AccessError` (logged) otherwise.

    An unknown name costs the same work as a wrong password (a dummy hash is checked). A right
    password whose hash is older or cheaper than ``passwords`` is rehashed, and recorded."""
    passwords = passwords or default_passwords()
    name = login_key(name)
    found = store.operator(name)
    where: dict[str, Any] = {} if address is None else {"address": address}
    old_left = any(is_old(stored.password_hash) for stored in store.operators())
    if not passwords.verify(password, None if found is None else found.password_hash,
                            old_hashes_left=old_left) or found is None:
        if len(name) > RECORDED_NAME:
            where["name_length"] = len(name)
        log_access(store, recorded_name(name), "login-refused", where)
        raise AccessError("wrong operator name or password")
    if passwords.needs_upgrade(found.password_hash):
        found = StoredOperator(found.name, found.role, passwords.hash(password))
        store.put_operator(found, format_time(store.clock()))
        log_access(store, found.name, "password-rehashed",
                   {"to": "argon2id", "password": password_digest(found.password_hash)})
    log_access(store, found.name, "login", where)
    return Operator(found.name, found.role, _stamp(found))


def login_key(name: str) -> str:
    """A login name as looked up, counted and logged: one UTF-8 cannot hold (a lone surrogate)
    escaped (no operator has a backslash)."""
    return name.encode("utf-8", "backslashreplace").decode("utf-8")


def recorded_name(name: str) -> str:
    """A login name as records keep it: at most :data:`RECORDED_NAME` characters."""
    return name if len(name) <= RECORDED_NAME else name[:RECORDED_NAME] + "\u2026"


def os_account() -> str:
    """The account this process runs as, from its user id (not from ``$USER`` or ``$LOGNAME``,
    which the caller sets), as UTF-8 text (odd bytes written as ``\\xNN``)."""
    uid = os.getuid()
    try:
        name = pwd.getpwuid(uid).pw_name
    except KeyError:
        return f"uid {uid}"
    return os.fsencode(name).decode("utf-8", "backslashreplace")


def log_command(store: RecordStore, action: str, target: dict[str, Any],
                claimed: str | None = None) -> None:
    """Append what a command did, by whom: the OS account running it and, when the caller named
    someone (``replay --user``), that name beside it, so a typed name cannot hide who ran it."""
    account = os_account()
    store.append("access", {"user": claimed or account, "account": account, "action": action,
                            "target": target})


def log_access(store: RecordStore, user: str, action: str, target: dict[str, Any]) -> int:
    """Append who did what to the chain (search, view, replay, export, login...); its seq."""
    return store.append("access", {"user": user, "action": action, "target": target}).seq


def access_log(store: RecordStore, limit: int = 200) -> list[dict[str, Any]]:
    """The most recent access records, newest first."""
    entries = []
    for record in store.latest_records("access", limit):
        entries.append({"seq": record.seq, "at": record.at, **_object(record.body_text)})
    return entries


def _object(text: str) -> dict[str, Any]:
    """A record body as a JSON object; an altered one as ``{"unreadable": ...}`` (verification
    names it)."""
    try:
        body = json.loads(text)
    except json.JSONDecodeError:
        return {"unreadable": text}
    return body if isinstance(body, dict) else {"unreadable": body}
