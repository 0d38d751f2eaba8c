"""The room's copies of the key frames that travel with their records: each written once, never
over a file that is there, and only inside its table chain's folder.

A frame record names its file (``frames/DAY/TABLE/NAME``); the room keeps the bytes under
``floor/TABLE/CHAIN/<that name>`` in its store's folder. :func:`frame_parts` takes only a
relative name of at most :data:`MAX_DEPTH` plain parts (no ``..``, ``.``, empty or absolute
part) of the characters a table writes. :func:`keep_frame_file` walks to the file's folder one
folder at a time, refusing a symbolic link on the way, writes the bytes aside, flushes them and
only then gives them the frame's name with ``link``, which fails where anything (a file, a link)
has the name already: the file there is kept whatever it holds, and said to match the frame or
not. A crash leaves either no file of that name or the whole frame under it.
"""

from __future__ import annotations

import errno
import hashlib
import os
import re
import stat
from collections.abc import Sequence
from enum import Enum
from pathlib import Path

#: the characters, length and depth of a frame file name the room writes
_SAFE_NAME = re.compile(r"[A-Za-z0-9_./-]{1,300}")
MAX_DEPTH = 8
#: the name a frame is written under before it takes its own (never a name ``_SAFE_NAME`` takes)
_ASIDE = "~incoming"
#: the longest part: the file's name with ``_ASIDE`` after it is within the file system's 255
MAX_PART = 255 - len(_ASIDE)
#: errors that writing the same frame again would meet again (a name the file system refuses,
#: no hard links there, no permission, a folder where the file goes): the frame is refused with
#: an alarm, never retried forever behind every other table's records
LASTING = frozenset({errno.ENAMETOOLONG, errno.EPERM, errno.EACCES, errno.EISDIR,
                     errno.EMLINK, errno.EROFS})


class Kept(Enum):
    """What :func:`keep_frame_file` found: the frame written now, there already with the
    frame's SHA-256, or another file there (kept, never overwritten)."""

    WRITTEN = "written"
    THERE = "there"
    DIFFERS = "differs"


class FrameRefused(Exception):
    """The frame cannot be given its name: a symbolic link, or something that is no folder,
    where a folder on its way should be, or an error that writing it again would meet again
    (the message says which)."""


def frame_parts(name: str | None) -> tuple[str, ...] | None:
    """The parts of a record's frame file name the room will write; None for any other."""
    if not name or not _SAFE_NAME.fullmatch(name):
        return None
    parts = tuple(name.split("/"))
    if len(parts) > MAX_DEPTH or any(part in ("", ".", "..") or len(part) > MAX_PART
                                     for part in parts):
        return None
    return parts


def keep_frame_file(base: Path, folders: Sequence[str], parts: Sequence[str], data: bytes
                    ) -> Kept:
    """Write ``data`` as ``base/folders.../parts...`` where nothing has that name yet (durably:
    the bytes and each folder made are flushed before it returns). :class:`FrameRefused` where a
    link or a file is in the way, or the file system lastingly refuses it (:data:`LASTING`);
    other OSErrors (a full disk) as raised, nothing named."""
    digest = hashlib.sha256(data).hexdigest()
    base.mkdir(parents=True, exist_ok=True)  # the store's folder, as room.toml names it
    fd = os.open(base, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        for folder in (*folders, *parts[:-1]):
            inner = _enter(fd, folder)
            os.close(fd)
            fd = inner
        return _link_new(fd, parts[-1], data, digest)
    except OSError as error:
        if error.errno in LASTING:
            raise FrameRefused(f"the file system refuses it: {error.strerror}") from None
        raise
    finally:
        os.close(fd)


def _enter(parent: int, name: str) -> int:
    """The folder ``name`` in ``parent`` (made where missing), open."""
    try:
        os.mkdir(name, 0o755, dir_fd=parent)
        os.fsync(parent)
    except FileExistsError:
        pass
    try:
        return os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC,
                       dir_fd=parent)
    except OSError as error:
        if error.errno in (errno.ELOOP, errno.ENOTDIR):
            raise FrameRefused(f"{name} is a symbolic link or not a folder") from None
        raise


def _link_new(folder: int, name: str, data: bytes, digest: str) -> Kept:
    aside = name + _ASIDE
    try:
        os.unlink(aside, dir_fd=folder)  # left by a crash (a link is removed as a link)
    except FileNotFoundError:
        pass
    handle = os.open(aside, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
                     0o644, dir_fd=folder)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(handle, view):]
        os.fsync(handle)
    finally:
        os.close(handle)
    try:
        os.link(aside, name, src_dir_fd=folder, dst_dir_fd=folder, follow_symlinks=False)
    except FileExistsError:
        return Kept.THERE if _digest_there(folder, name) == digest else Kept.DIFFERS
    finally:
        os.unlink(aside, dir_fd=folder)
        os.fsync(folder)
    return Kept.WRITTEN


def _digest_there(folder: int, name: str) -> str | None:
    """The SHA-256 of the plain file ``name`` in ``folder``; None for a link or anything else."""
    try:
        handle = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC,
                         dir_fd=folder)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(handle).st_mode):
            return None
        digest = hashlib.sha256()
        while chunk := os.read(handle, 1 << 20):
            digest.update(chunk)
        return digest.hexdigest()
    finally:
        os.close(handle)
