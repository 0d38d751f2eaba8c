"""Reading a TOML configuration file (``table.toml``, ``room.toml``) the one way: bounded in
size, UTF-8 (a byte-order mark read past), nesting bounded by what the parser can follow.

Each configuration keeps its own error class: it catches :class:`TomlFileError` and raises its
own with the same ``where`` (``(file)`` or ``(syntax)``) and ``why``.
"""

from __future__ import annotations

import errno
import tomllib
from pathlib import Path
from typing import Any

from dealer_assist.small_files import read_small_file

#: Far above any hand-written configuration; a bigger file is not one.
MAX_TOML_BYTES = 1_000_000


class TomlFileError(ValueError):
    """A file that is not readable TOML: names the file, where (``(file)`` when it cannot be
    read or is not UTF-8 text of a sane size, ``(syntax)`` when it is not TOML) and why."""

    def __init__(self, path: str, where: str, why: str):
        self.path, self.where, self.why = path, where, why
        super().__init__(f"{path}: {where}: {why}")


def read_toml(path: str | Path, max_bytes: int = MAX_TOML_BYTES) -> dict[str, Any]:
    """The decoded TOML document at ``path``, read only up to ``max_bytes`` (a larger file is
    refused unread past that); a FIFO, device or socket is refused unread."""
    shown = str(path)
    try:
        raw = read_small_file(path, max_bytes)
    except OSError as error:
        if error.errno == errno.EFBIG:
            raise TomlFileError(shown, "(file)", f"over {max_bytes:,} bytes: not a "
                                "configuration file") from None
        raise TomlFileError(shown, "(file)", f"cannot read: {error.strerror or error}") from None
    try:
        # a byte-order mark (as some Windows editors save UTF-8) is read past
        text = raw.removeprefix(b"\xef\xbb\xbf").decode("utf-8")
    except UnicodeDecodeError as error:
        raise TomlFileError(shown, "(file)", f"not UTF-8 text (byte 0x{raw[error.start]:02x} at "
                            f"offset {error.start}): save it as UTF-8") from None
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise TomlFileError(shown, "(syntax)", str(error)) from None
    except RecursionError:
        raise TomlFileError(shown, "(syntax)",
                            "arrays or tables nested too deeply to read") from None
