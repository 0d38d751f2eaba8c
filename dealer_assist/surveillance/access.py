"""Who may look at a recording, and the record of who looked at what, when.

Operators live in the recording store with a salted scrypt hash of their password.
Roles: ``operator`` (everything, including retention) and ``auditor`` (read-only: search, view,
replay, export). Every search, view, replay and export is appended to the hash chain as an
``access`` record, so the access log is as tamper-evident as the recording.
"""

from __future__ import annotations

import getpass
import hashlib
import hmac
import os
import re
import secrets
from dataclasses import dataclass
from typing import Any

from dealer_assist.surveillance.evidence_check import password_digest
from dealer_assist.surveillance.interface import RecordStore, StoredOperator
from dealer_assist.surveillance.store import RecordingError, format_time

ROLES = ("operator", "auditor")
_SCRYPT = {"n": 2**14, "r": 8, "p": 1}
_NAME = re.compile(r"^[A-Za-z0-9._@-]{1,64}$")
MIN_PASSWORD = 8


class AccessError(RecordingError):
    """A refused login or an invalid operator definition."""


@dataclass(frozen=True, slots=True)
class Operator:
    name: str
    role: str

    @property
    def read_only(self) -> bool:
        return self.role == "auditor"


def hash_password(password: str, salt: bytes | None = None) -> str:
    """``scrypt$N$r$p$SALT$HASH`` (hex) for a password, with a fresh 16-byte salt."""
    salt = secrets.token_bytes(16) if salt is None else salt
    digest = hashlib.scrypt(password.encode(), salt=salt, dklen=32, **_SCRYPT)
    return f"scrypt${_SCRYPT['n']}${_SCRYPT['r']}${_SCRYPT['p']}${salt.hex()}${digest.hex()}"


def check_password(password: str, stored: str) -> bool:
    """Whether ``password`` matches a :func:`hash_password` string (constant-time compare)."""
    try:
        scheme, n, r, p, salt, digest = stored.split("$")
        if scheme != "scrypt":
            return False
        actual = hashlib.scrypt(password.encode(), salt=bytes.fromhex(salt), n=int(n), r=int(r),
                                p=int(p), dklen=len(digest) // 2)
    except (ValueError, MemoryError):
        return False
    return hmac.compare_digest(actual.hex(), digest)


def add_operator(store: RecordStore, name: str, password: str, role: str) -> Operator:
    """Create or replace an operator (its password is stored only as a salted hash)."""
    store.check()
    if not _NAME.match(name):
        raise AccessError(f"operator name {name!r} must be 1-64 letters, digits or . _ @ -")
    if role not in ROLES:
        raise AccessError(f"role {role!r} must be one of {', '.join(ROLES)}")
    if len(password) < MIN_PASSWORD:
        raise AccessError(f"a password needs at least {MIN_PASSWORD} characters")
    stored = hash_password(password)
    store.put_operator(StoredOperator(name, role, stored), format_time(store.clock()))
    # the record names a digest of the stored hash, so verify finds a password changed by SQL
    store.append("access", {"user": "(admin)", "action": "operator-set",
                            "target": {"name": name, "role": role,
                                       "password": password_digest(stored)}})
    return Operator(name, role)


def remove_operator(store: RecordStore, name: str) -> bool:
    store.check()
    gone = store.delete_operator(name)
    if gone:
        store.append("access", {"user": "(admin)", "action": "operator-removed",
                                "target": {"name": name}})
    return gone


def list_operators(store: RecordStore) -> list[Operator]:
    return [Operator(stored.name, stored.role) for stored in store.operators()]


def authenticate(store: RecordStore, name: str, password: str) -> Operator:
    """The operator for this name and password; :class:`AccessError` (logged) otherwise."""
    # A name UTF-8 cannot hold (a lone surrogate) is logged escaped; no operator has a backslash.
    name = name.encode("utf-8", "backslashreplace").decode("utf-8")
    found = store.operator(name)
    # Hash even for an unknown name so the answer takes the same time either way.
    stored = found.password_hash if found is not None else hash_password("", b"\0" * 16)
    if not check_password(password, stored) or found is None:
        log_access(store, name, "login-refused", {})
        raise AccessError("wrong operator name or password")
    log_access(store, name, "login", {})
    return Operator(found.name, found.role)


def login_name() -> str:
    """Who is at the terminal, for the access log: the login name, as UTF-8 text even where the
    system's name is in another encoding (its odd bytes written as ``\\xNN``)."""
    return os.fsencode(getpass.getuser()).decode("utf-8", "backslashreplace")


def log_access(store: RecordStore, user: str, action: str, target: dict[str, Any]) -> None:
    """Append who did what to the chain (search, view, replay, export, login...)."""
    store.append("access", {"user": user, "action": action, "target": target})


def access_log(store: RecordStore, limit: int = 200) -> list[dict[str, Any]]:
    """The most recent access records, newest first."""
    import json

    entries = []
    for record in store.latest_records("access", limit):
        try:
            body = json.loads(record.body_text)
        except json.JSONDecodeError:
            body = {"unreadable": record.body_text}  # altered: verification names it
        entries.append({"seq": record.seq, "at": record.at,
                        **(body if isinstance(body, dict) else {"unreadable": body})})
    return entries
