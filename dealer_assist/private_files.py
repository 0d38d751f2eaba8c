"""Files only the table's own user may read: its signing key, its screen's secret."""

from __future__ import annotations

import os
from pathlib import Path


def create_private(path: Path, data: bytes) -> None:
    """Create ``path`` anew holding ``data``, mode 0600 whatever the umask, fsync'd.
    FileExistsError when something (a file, a link) is there already; other OSErrors as raised."""
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    with os.fdopen(descriptor, "wb") as handle:
        os.fchmod(handle.fileno(), 0o600)
        handle.write(data)
        handle.flush()
        os.fsync(handle.fileno())
