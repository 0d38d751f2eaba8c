"""Reading a small file a person hands the program (a configuration, a calibration): a plain
file only, never waited on, never read past a bound."""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path


def read_small_file(path: str | Path, max_bytes: int) -> bytes:
    """The bytes of the plain file at ``path``, at most ``max_bytes``. OSError, its
    ``strerror`` saying why, for a folder, FIFO, device or socket (refused unread, without
    waiting for a writer) and for a larger file (refused unread past ``max_bytes``)."""
    handle = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        mode = os.fstat(handle).st_mode
        if not stat.S_ISREG(mode):
            what = "a folder" if stat.S_ISDIR(mode) else "a FIFO, device or socket"
            raise OSError(errno.EINVAL, f"{what}, not a file")
        os.set_blocking(handle, True)
        with os.fdopen(handle, "rb", closefd=False) as reader:
            data = reader.read(max_bytes + 1)
    finally:
        os.close(handle)
    if len(data) > max_bytes:
        raise OSError(errno.EFBIG, f"over {max_bytes:,} bytes")
    return data
