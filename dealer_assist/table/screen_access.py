"""Who may drive the dealer's screen: the table's secret, the session cookie derived from it, and
the one-time pairing codes that give the kiosk's browser that cookie.

The secret is 32 random bytes in a file (hex) readable only by the table's user, created at the
table's first start. The screen's cookie is an HMAC of it, so whoever can read the secret (the
table's user: ``dealer-assist table --touch``) can act as the paired screen, and a new secret
(the file deleted, the table restarted) unpairs every screen. A pairing code is random, held in
memory only, and taken once.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import threading
from pathlib import Path

from dealer_assist.private_files import NotPrivateError, create_private, read_private

#: The screen's cookie; its value is :attr:`ScreenAccess.session`.
COOKIE = "dealer_screen"
#: How long the kiosk's browser keeps the cookie: 400 days, the most a browser keeps one.
COOKIE_MAX_AGE_S = 400 * 24 * 3600
_SECRET_BYTES = 32
_SESSION_LABEL = b"dealer-assist screen session v1"


class SecretError(ValueError):
    """A secret file that cannot be used: names the file and why."""


def read_secret(path: Path) -> bytes:
    """The secret held in ``path``; SecretError if it is missing, not private or not a secret."""
    try:
        text = read_private(path).decode("ascii").strip()
    except FileNotFoundError:
        raise SecretError(f"{path} does not exist: the table creates it at its first start"
                          ) from None
    except NotPrivateError as error:
        raise SecretError(f"{error} (or delete it and pair the screen again)") from None
    except OSError as error:
        raise SecretError(f"cannot read {path}: {error.strerror or error}") from None
    except UnicodeDecodeError:
        text = ""
    try:
        secret = bytes.fromhex(text)
    except ValueError:
        secret = b""
    if len(secret) != _SECRET_BYTES:
        raise SecretError(f"{path} does not hold a screen secret ({2 * _SECRET_BYTES} hex "
                          "digits): delete it and pair the screen again")
    return secret


def load_or_create_secret(path: Path) -> bytes:
    """The secret in ``path``, created there (mode 0600, this user's) if it does not exist."""
    secret = secrets.token_bytes(_SECRET_BYTES)
    try:
        create_private(path, (secret.hex() + "\n").encode("ascii"))
    except FileExistsError:
        return read_secret(path)
    except OSError as error:
        raise SecretError(f"cannot create {path}: {error.strerror or error}") from None
    return secret


def session_for(secret: bytes) -> str:
    """The cookie value of the screen paired with the table holding ``secret``."""
    return hmac.new(secret, _SESSION_LABEL, hashlib.sha256).hexdigest()


class ScreenAccess:
    """A table's screen credentials: :meth:`paired` checks a cookie, :meth:`new_pairing_code`
    issues a code that :meth:`redeem` takes once (thread-safe)."""

    def __init__(self, secret: bytes):
        self.session = session_for(secret)
        self._codes: set[bytes] = set()
        self._lock = threading.Lock()

    @classmethod
    def ephemeral(cls) -> ScreenAccess:
        """Credentials that last as long as this process (the demo's, a test's)."""
        return cls(secrets.token_bytes(_SECRET_BYTES))

    def paired(self, cookie: str | None) -> bool:
        """Whether ``cookie`` (the value of the screen's cookie, None: none) is the paired
        screen's."""
        return cookie is not None and hmac.compare_digest(cookie.encode(), self.session.encode())

    def new_pairing_code(self) -> str:
        """A fresh one-time pairing code (only its hash is kept)."""
        code = secrets.token_urlsafe(24)
        with self._lock:
            self._codes.add(hashlib.sha256(code.encode()).digest())
        return code

    def redeem(self, code: str) -> bool:
        """Take ``code``: True the first time for a code issued here, False ever after."""
        digest = hashlib.sha256(code.encode("utf-8", "replace")).digest()
        with self._lock:
            if digest not in self._codes:
                return False
            self._codes.discard(digest)
            return True

    def set_cookie(self, secure: bool) -> str:
        """The ``Set-Cookie`` value that pairs a browser (``secure``: served over TLS, the
        cookie never goes over plain HTTP)."""
        flags = f"Max-Age={COOKIE_MAX_AGE_S}; Path=/; HttpOnly; SameSite=Strict"
        return f"{COOKIE}={self.session}; {flags}{'; Secure' if secure else ''}"

    def cookie_header(self) -> str:
        """The ``Cookie`` header a client sends as the paired screen."""
        return f"{COOKIE}={self.session}"
