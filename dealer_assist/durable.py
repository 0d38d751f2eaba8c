"""Durable files: what makes a new file's name survive a power cut."""

from __future__ import annotations

import os
from pathlib import Path


def fsync_dir(directory: str | os.PathLike[str]) -> None:
    """Flush ``directory`` to disk, so a file created or renamed in it is there after a crash."""
    fd = os.open(Path(directory), os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
