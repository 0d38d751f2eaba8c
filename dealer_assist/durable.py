"""Durable files: what makes a new file's name survive a power cut, and the one way a file the
table writes in its own folders is opened (:func:`open_plain`, :func:`create_new`).

Whoever may write in a recording or configuration folder can leave a symbolic link, a FIFO or
a second name (a hard link) of another file where the table writes: opened as a plain name, the
table's signing key would be truncated or written into. Opened here, a file is never reached
through a link (``O_NOFOLLOW``), is checked on the open descriptor to be one plain file with no
other name before a byte is written, and a temporary file is always made anew (``O_EXCL``, a
stale one removed first: removing a link removes the link, not what it points to). Anything
else is refused with :class:`NotPlainFileError`, naming the path.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path


class NotPlainFileError(OSError):
    """A file to be written is a symbolic link, not a plain file, or a file with another name:
    refused (the message names the path and what is there)."""

    def __init__(self, path: str | os.PathLike[str], what: str):
        super().__init__(errno.EPERM, f"{os.fspath(path)} {what}: refused (the table writes only "
                                      "plain files of its own; remove it)")

    def __str__(self) -> str:
        return str(self.strerror)


def fsync_dir(directory: str | os.PathLike[str]) -> None:
    """Flush ``directory`` to disk, so a file created or renamed in it is there after a crash."""
    fd = os.open(Path(directory), os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def open_plain(path: str | os.PathLike[str], flags: int, mode: int = 0o644) -> int:
    """``os.open(path, flags, mode)`` for writing a file of the table's own: never through a
    symbolic link, never a FIFO, device or folder, never a file with another name (a hard
    link); :class:`NotPlainFileError` names the path otherwise, other OSErrors as raised. The
    checks are made on the open descriptor before anything is written; ``O_TRUNC`` is not
    taken (it would act before them: write a temporary file with :func:`create_new`)."""
    if flags & os.O_TRUNC:
        raise ValueError("open_plain does not truncate: create the file anew (create_new)")
    try:  # O_NONBLOCK: a FIFO planted there does not hang the open
        fd = os.open(path, flags | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK, mode)
    except OSError as error:
        _refuse_what_is_there(path, error)
        raise
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise NotPlainFileError(path, "is not a plain file")
        if info.st_nlink != 1:
            raise NotPlainFileError(path, f"has {info.st_nlink} names (hard links): it may be "
                                          "another file")
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd


def create_new(path: str | os.PathLike[str], mode: int = 0o644) -> int:
    """A descriptor open for writing on a file made anew at ``path`` (``O_EXCL``), for a
    temporary file renamed into place once written: whatever a crash (or anyone) left at that
    name is removed first, a link as a link. :class:`NotPlainFileError` where a folder is
    there."""
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass
    except OSError:  # a folder: the open below refuses it, naming it
        pass
    return open_plain(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)


def _refuse_what_is_there(path: str | os.PathLike[str], error: OSError) -> None:
    """After an open failed with ``error``: NotPlainFileError where a link or something other
    than a plain file is at ``path`` (what made it fail); nothing where the error says so
    already ("Is a directory") or where a plain file or nothing is there."""
    try:
        info = os.lstat(path)
    except OSError:
        return
    if stat.S_ISLNK(info.st_mode):
        raise NotPlainFileError(path, "is a symbolic link") from None
    if error.errno == errno.EISDIR:
        return
    if not stat.S_ISREG(info.st_mode):
        raise NotPlainFileError(path, "is not a plain file") from None
