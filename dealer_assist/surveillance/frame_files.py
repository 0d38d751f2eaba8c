"""Reading the frame file a chained record names, and nothing else.

A frame's file name, SHA-256 and media type are read from its chained record (signed by the
table), never from the search index, which anyone who can write the database can edit. The file
is read only where it is one plain file inside the folder frames live in: a path with ``..`` or
an absolute one, a symbolic link (at the file or at a folder on the way), something other than
a regular file (a FIFO is not waited on), or a file with other hard links is refused, since
each could lead to a file outside the recording (the table's key) or hang the reader. It is
served only as the image type its record names.
"""

from __future__ import annotations

import errno
import hashlib
import os
import stat
from pathlib import Path, PurePosixPath
from typing import Any

from dealer_assist.surveillance.store import FRAMES_DIR, Record

#: The media types a frame is served as; any other is served as opaque bytes.
IMAGE_TYPES = frozenset({"image/jpeg", "image/png"})
OPAQUE = "application/octet-stream"
_FOLDER = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_FILE = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC


class FrameFileRefused(Exception):
    """The file a frame record names is not one plain file of the recording's (the message
    says why)."""


def frame_path(base: Path, relative: str | None, folder: str) -> Path | None:
    """``base / relative``, where ``relative`` is a relative POSIX path under ``folder`` with
    no ``..``; None otherwise."""
    if not relative:
        return None
    parts = PurePosixPath(relative).parts
    if PurePosixPath(relative).is_absolute() or ".." in parts or "\\" in relative \
            or len(parts) < 2 or parts[0] != folder:
        return None
    return base.joinpath(*parts)


def read_frame(base: Path, path: Path) -> bytes | None:
    """The bytes of the frame file at ``path`` (under ``base``); None where there is none.

    Raises :class:`FrameFileRefused` where it is not one plain file of its own under ``base``:
    the path is walked a folder at a time from ``base`` without following a link (so a folder
    swapped for a link meanwhile is refused too), and the file is opened without waiting (a
    FIFO put there is refused, not waited on)."""
    try:
        parts = path.relative_to(base).parts
    except ValueError:
        raise FrameFileRefused(f"{path.name} lies outside the recording") from None
    try:
        folder = os.open(base, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except FileNotFoundError:
        return None
    try:
        for name in parts[:-1]:
            try:
                inner = os.open(name, _FOLDER, dir_fd=folder)
            except OSError as error:
                if error.errno in (errno.ELOOP, errno.ENOTDIR):
                    raise FrameFileRefused(f"{path.name}: the folder {name} on its way is a"
                                           " link or not a folder") from None
                raise
            os.close(folder)
            folder = inner
        try:
            handle = os.open(parts[-1], _FILE, dir_fd=folder)
        except OSError as error:
            if error.errno == errno.ELOOP:
                raise FrameFileRefused(f"{path.name} is a symbolic link") from None
            raise
    except FileNotFoundError:
        return None
    except OSError as error:
        raise FrameFileRefused(f"{path.name} cannot be opened: {error.strerror}") from None
    finally:
        os.close(folder)
    with os.fdopen(handle, "rb") as file:
        status = os.fstat(file.fileno())
        if not stat.S_ISREG(status.st_mode):
            raise FrameFileRefused(f"{path.name} is not a regular file")
        if status.st_nlink != 1:
            raise FrameFileRefused(f"{path.name} has {status.st_nlink} hard links: it may be"
                                   " another file's")
        return file.read()


def frame_state(directory: Path, record: Record, pruned: bool) -> dict[str, Any]:
    """A frame record's file in the recording at ``directory`` as it is now: ``state``
    (``intact``, ``altered``, ``missing``, ``pruned``) and ``sha256`` (None when not there);
    ``refused`` where the file it names is not one plain file of the recording's frames;
    ``data``: the bytes hashed, where it was read (what shows the frame must show these: a file
    read again may have been replaced since).
    ``pruned``: a chained prune record names it, which accounts for a missing video frame only
    (retention never deletes a key frame)."""
    path = frame_path(directory, record.file, FRAMES_DIR)
    if path is None:
        return {"state": "altered", "sha256": None,
                "refused": f"it names {record.file!r}, not a file of the recording's frames"}
    try:
        data = read_frame(directory, path)
    except FrameFileRefused as why:
        return {"state": "altered", "sha256": None, "refused": str(why)}
    if data is None:
        video = record.object_body().get("key") is False
        return {"state": "pruned" if pruned and video else "missing", "sha256": None}
    digest = hashlib.sha256(data).hexdigest()
    return {"state": "intact" if digest == record.sha256 else "altered", "sha256": digest,
            "data": data}


def served_type(media_type: object) -> str:
    """The type to serve a frame as: its record's, where that is an image type."""
    return media_type if isinstance(media_type, str) and media_type in IMAGE_TYPES else OPAQUE
