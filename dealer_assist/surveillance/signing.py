"""The table's signing key: Ed25519 signatures over chained records (``cryptography``).

A record's signature covers its chain hash, which covers its content and the hash of the record
before it, so one signed record vouches for the whole chain up to it. Signatures are stored as
``KEYID:BASE64`` (``KEYID``: the first 16 hex digits of SHA-256 of the raw public key).

The private key is a PEM file (PKCS#8) readable only by the table's user (mode 0600), kept with
the table's configuration and never in the recording. Its public half is written into the
recording (a chained ``key`` record) and exported to a *public key file*: one ``ed25519:HEX``
line per key the table has used, oldest first, which the technician hands to surveillance.
Verifiers need only that file.
"""

from __future__ import annotations

import base64
import binascii
import functools
import hashlib
import logging
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from dealer_assist.durable import fsync_dir, open_plain
from dealer_assist.private_files import NotPrivateError, create_private, read_private

logger = logging.getLogger(__name__)

#: What a record signature signs besides the hash: no signature made for anything else verifies
SIGNED_PREFIX = b"dealer-assist record v1\n"
PUBLIC_PREFIX = "ed25519:"
MAX_KEY_FILE = 64 * 1024  # a public key file holds a few lines; more is not one


class KeyFileError(ValueError):
    """A key file that cannot be read, written or trusted: names the file and why."""


@dataclass(frozen=True, slots=True)
class PublicKey:
    """An Ed25519 public key, as the recording and the public key file name it."""

    raw: bytes

    @property
    def key_id(self) -> str:
        return hashlib.sha256(self.raw).hexdigest()[:16]

    @property
    def text(self) -> str:
        """``ed25519:HEX``: how the key is written into records and public key files."""
        return PUBLIC_PREFIX + self.raw.hex()

    @classmethod
    def from_text(cls, text: str) -> PublicKey:
        """Inverse of :attr:`text`; ValueError saying what is wrong otherwise."""
        if not isinstance(text, str) or not text.startswith(PUBLIC_PREFIX):
            raise ValueError(f"not an Ed25519 public key ({PUBLIC_PREFIX}HEX): {text!r:.80}")
        try:
            raw = bytes.fromhex(text[len(PUBLIC_PREFIX):])
        except ValueError:
            raise ValueError(f"not hexadecimal: {text!r:.80}") from None
        if len(raw) != 32:
            raise ValueError(f"an Ed25519 public key is 32 bytes, this is {len(raw)}")
        return cls(raw)

    def verifies(self, record_hash: str, signature: str) -> bool:
        """Whether ``signature`` (``KEYID:BASE64``) is this key's over ``record_hash``."""
        key_id, _, encoded = signature.partition(":")
        if key_id != self.key_id:
            return False
        try:
            _loaded(self.raw).verify(
                base64.b64decode(encoded, validate=True), _message(record_hash))
        except (InvalidSignature, binascii.Error, ValueError):
            return False
        return True


@functools.lru_cache(maxsize=64)
def _loaded(raw: bytes) -> Ed25519PublicKey:
    return Ed25519PublicKey.from_public_bytes(raw)


def signature_key_id(signature: str) -> str:
    """The key id a stored signature names ('' when it names none)."""
    return signature.partition(":")[0] if ":" in signature else ""


def _message(record_hash: str) -> bytes:
    return SIGNED_PREFIX + record_hash.encode("ascii", "replace")


class Signer:
    """Signs record hashes with one private key (the table's)."""

    def __init__(self, private: Ed25519PrivateKey):
        self._private = private
        self.public = PublicKey(private.public_key().public_bytes(
            serialization.Encoding.Raw, serialization.PublicFormat.Raw))

    @classmethod
    def generate(cls) -> Signer:
        return cls(Ed25519PrivateKey.generate())

    def sign(self, record_hash: str) -> str:
        """The signature of a record with this hash, as stored: ``KEYID:BASE64``."""
        signature = self._private.sign(_message(record_hash))
        return f"{self.public.key_id}:{base64.b64encode(signature).decode('ascii')}"

    def save(self, path: Path) -> None:
        """Write the private key to ``path`` (mode 0600, created new: never over another)."""
        pem = self._private.private_bytes(serialization.Encoding.PEM,
                                          serialization.PrivateFormat.PKCS8,
                                          serialization.NoEncryption())
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            create_private(path, pem)
        except OSError as error:
            raise KeyFileError(f"{path}: cannot create the table's key: {error.strerror or error}"
                            ) from None


def load_signer(path: Path, whose: str = "the table's") -> Signer:
    """The private key at ``path``; refused unless it is a private file (:func:`read_private`).
    ``whose``: whose key it is, as errors name it."""
    try:
        data = read_private(path)
        private = serialization.load_pem_private_key(data, password=None)
    except NotPrivateError as error:
        raise KeyFileError(f"{error}; consider {whose} key exposed") from None
    except OSError as error:
        raise KeyFileError(f"{path}: cannot read {whose} key: {error.strerror or error}"
                        ) from None
    except (ValueError, TypeError) as error:
        raise KeyFileError(f"{path}: not a PEM private key: {error}") from None
    if not isinstance(private, Ed25519PrivateKey):
        raise KeyFileError(f"{path}: not an Ed25519 key ({type(private).__name__})")
    return Signer(private)


def open_table_key(key_path: Path, public_path: Path) -> Signer:
    """The table's key, created at first start (private at ``key_path``, mode 0600; its public
    half added to ``public_path``); the public key file is rewritten if it lacks the key."""
    if key_path.exists():
        signer = load_signer(key_path)
    else:
        signer = Signer.generate()
        signer.save(key_path)
        logger.info("created the table's signing key %s (key id %s); its public key is in "
                       "%s: hand that file to surveillance", key_path, signer.public.key_id,
                       public_path)
    add_public_key(public_path, signer.public)
    return signer


TABLE_KEYS_HEADER = ("# dealer-assist table signing keys, oldest first: "
                     "replay --verify --key THIS-FILE")


def add_public_key(path: Path, key: PublicKey, header: str = TABLE_KEYS_HEADER) -> None:
    """Append ``key`` to the public key file at ``path`` unless it is there already (a new
    file begins with the comment line ``header``)."""
    known = read_public_keys(path) if path.exists() else []
    if key in known:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    with os.fdopen(open_plain(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT), "a",
                   encoding="ascii") as handle:  # never through a link
        if not known:
            handle.write(header + "\n")
        handle.write(key.text + "\n")
        handle.flush()
        os.fsync(handle.fileno())


def replace_key(key: Path, public: Path, introduce: Callable[[Signer], object],
                header: str = TABLE_KEYS_HEADER) -> Signer:
    """Rotate the key file ``key`` to a new key: made first beside it (``KEY.new``, so a crash
    after the next step leaves it to put in place), recorded by ``introduce`` (a ``key`` record
    the old key signs), added to the public key file ``public``, then put in the old key's
    place; the new key."""
    new = Signer.generate()
    pending = key.with_name(key.name + ".new")
    pending.unlink(missing_ok=True)
    new.save(pending)
    introduce(new)
    add_public_key(public, new.public, header)
    os.replace(pending, key)
    fsync_dir(key.parent)
    return new


def read_public_keys(path: Path) -> list[PublicKey]:
    """Every key in a public key file (``#`` lines are comments); KeyFileError naming the file and
    line when it holds anything else or no key at all."""
    try:
        with open(path, "rb") as handle:
            data = handle.read(MAX_KEY_FILE + 1)
    except OSError as error:
        raise KeyFileError(f"{path}: cannot read the public key file: {error.strerror or error}"
                        ) from None
    if len(data) > MAX_KEY_FILE:
        raise KeyFileError(f"{path}: over {MAX_KEY_FILE} bytes: not a public key file")
    keys = []
    for number, line in enumerate(data.decode("utf-8", "replace").splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        try:
            keys.append(PublicKey.from_text(line))
        except ValueError as error:
            raise KeyFileError(f"{path}: line {number}: {error}") from None
    if not keys:
        raise KeyFileError(f"{path}: holds no public key")
    return keys
