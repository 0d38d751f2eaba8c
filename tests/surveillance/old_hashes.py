"""Passwords as the page stored them before argon2id, to test they still log in."""

from __future__ import annotations

import hashlib


def old_scrypt_hash(password: str) -> str:
    """``scrypt$N$r$p$SALT$HASH`` (hex) at the old cost, with a fixed salt."""
    salt = bytes(range(16))
    digest = hashlib.scrypt(password.encode(), salt=salt, n=2**14, r=8, p=1, dklen=32)
    return f"scrypt$16384$8$1${salt.hex()}${digest.hex()}"
