"""Operator password hashes: argon2id (``argon2-cffi``) at its recommended cost.

Hashes written before argon2id (``scrypt$N$r$p$SALT$HASH``) still verify and report that they need
an upgrade, so the next successful login rewrites them. An unknown name is checked against a dummy
hash of the same cost, so a refused login costs the same work whether or not the name exists;
while any old hash is left, every check also does one scrypt check (real or dummy), so a name with
an old hash cannot be told by its time either.
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import threading

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError, VerifyMismatchError

#: Hash computations running at once (each argon2id check holds 64 MiB at the default cost).
CONCURRENT_HASHES = 2
OLD_SCHEME = "scrypt$"
#: An old-format hash at the old cost that no password matches (the same work as a real one).
_DUMMY_OLD = "scrypt$16384$8$1$" + "00" * 16 + "$" + "00" * 32


class Passwords:
    """Hashes and checks passwords with one argon2id cost (the default: RFC 9106's recommended
    low-memory profile, t=3, m=64 MiB, p=4). Tests pass a cheaper ``PasswordHasher``."""

    def __init__(self, hasher: PasswordHasher | None = None):
        self.hasher = hasher or PasswordHasher()
        self._dummy = self.hasher.hash(b"no operator has this password")
        self._running = threading.BoundedSemaphore(CONCURRENT_HASHES)

    def hash(self, password: str) -> str:
        with self._running:
            return self.hasher.hash(_secret(password))

    def verify(self, password: str, stored: str | None, *, old_hashes_left: bool = False) -> bool:
        """Whether ``password`` matches ``stored``. ``None`` (no such operator) does the same
        work against dummy hashes and is never a match: one argon2id check always, and one
        scrypt check too when ``stored`` is old or ``old_hashes_left`` says some operator's is."""
        old = stored is not None and is_old(stored)
        with self._running:
            new_match = _argon2_matches(self.hasher, password,
                                        self._dummy if stored is None or old else stored)
            old_match = (_scrypt_matches(password, stored if old and stored else _DUMMY_OLD)
                         if old or old_hashes_left else False)
        return stored is not None and (old_match if old else new_match)

    def needs_upgrade(self, stored: str) -> bool:
        """Whether a hash that just verified should be rewritten at this cost."""
        return is_old(stored) or self.hasher.check_needs_rehash(stored)


def is_old(stored: str) -> bool:
    """Whether a stored hash is in the format from before argon2id."""
    return stored.startswith(OLD_SCHEME)


def _secret(password: str) -> bytes:
    """The bytes hashed: UTF-8, a lone surrogate kept as its code (never an exception)."""
    return password.encode("utf-8", "surrogatepass")


def _argon2_matches(hasher: PasswordHasher, password: str, stored: str) -> bool:
    try:
        return hasher.verify(stored, _secret(password))
    except (VerifyMismatchError, VerificationError, InvalidHashError):
        return False


def _scrypt_matches(password: str, stored: str) -> bool:
    """The hashes written before argon2id: ``scrypt$N$r$p$SALT$HASH`` (hex), constant-time."""
    try:
        _scheme, n, r, p, salt, digest = stored.split("$")
        actual = hashlib.scrypt(password.encode(), salt=bytes.fromhex(salt), n=int(n), r=int(r),
                                p=int(p), dklen=len(digest) // 2)
    except (ValueError, MemoryError):
        return False
    return hmac.compare_digest(actual.hex(), digest)


@functools.cache
def default_passwords() -> Passwords:
    """The cost every operator's password is hashed at (built once: it hashes the dummy)."""
    return Passwords()
