"""Files only the table's own user may read: its signing key, its screen's secret, its staff's
PIN hashes. One way to make them (:func:`create_private`) and one way to read them
(:func:`read_private`)."""

from __future__ import annotations

import os
import stat
from pathlib import Path


class NotPrivateError(ValueError):
    """A file that should be private is not: names the file and what is wrong."""


def create_private(path: Path, data: bytes) -> None:
    """Create ``path`` anew holding ``data``, mode 0600 whatever the umask, fsync'd.
    FileExistsError when something (a file, a link) is there already; other OSErrors as raised."""
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    with os.fdopen(descriptor, "wb") as handle:
        os.fchmod(handle.fileno(), 0o600)
        handle.write(data)
        handle.flush()
        os.fsync(handle.fileno())


def read_private(path: Path) -> bytes:
    """The bytes of ``path`` when it is a plain file (not a link) of this user's that no one else
    may read or write; NotPrivateError otherwise. The checks are made on the open file, so the
    file read is the file checked. OSErrors (missing, unreadable) as raised."""
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError as error:
        if os.path.islink(path):
            raise NotPrivateError(f"{path} is a link: it must be the file itself") from None
        raise error
    try:
        info = os.fstat(descriptor)
        if not stat.S_ISREG(info.st_mode):
            raise NotPrivateError(f"{path} is not a plain file")
        if info.st_uid != os.geteuid():
            raise NotPrivateError(f"{path} belongs to another user (uid {info.st_uid}): the "
                                  "table's own user must own it")
        if info.st_mode & 0o077:
            raise NotPrivateError(f"{path} may be read or written by others (mode "
                                  f"{stat.S_IMODE(info.st_mode):04o}): chmod 600 it")
        with os.fdopen(os.dup(descriptor), "rb") as handle:
            return handle.read()
    finally:
        os.close(descriptor)
