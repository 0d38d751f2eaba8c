"""Image files read whole: how calibration, card vision and deck enrolment read a picture.

OpenCV's ``imread`` decodes a JPEG cut short (a copy interrupted, a full disk) with a grey
bottom and only a warning on stderr, so a half photograph gave "0 cards" or a drift reading of
its top half; and it crashes on a file name that is not UTF-8. Here Python reads the file and
OpenCV decodes its bytes, which refuses a cut-short JPEG or PNG.
"""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np

_SIGNATURES = {b"\xff\xd8\xff": "JPEG", b"\x89PNG\r\n\x1a\n": "PNG"}


class ImageFileError(ValueError):
    """An image that is missing, unreadable or not whole; names its file (where it has one)
    and says why."""

    def __init__(self, path: Path | None, why: str) -> None:
        super().__init__(f"{path}: {why}" if path is not None else why)
        self.path = path
        self.why = why


def read_image(path: str | Path, *, keep_alpha: bool = False) -> np.ndarray:
    """The image at ``path``: BGR uint8, or as stored (alpha kept) with ``keep_alpha``.

    Raises :class:`ImageFileError` for a missing or unreadable file, and for one that does not
    decode whole (a JPEG or PNG cut short, a damaged file, not an image at all)."""
    path = Path(path)
    if not path.is_file():
        raise ImageFileError(path, "no such image file")
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ImageFileError(path, f"cannot read: {exc.strerror or exc}") from None
    return decode_image(data, path, keep_alpha=keep_alpha)


def decode_image(data: bytes, path: Path | None = None, *,
                 keep_alpha: bool = False) -> np.ndarray:
    """An image file's bytes decoded as :func:`read_image` does; ``path`` names it in the
    :class:`ImageFileError` raised when they are not a whole image."""
    flags = cv2.IMREAD_UNCHANGED if keep_alpha else cv2.IMREAD_COLOR
    image = cv2.imdecode(np.frombuffer(data, np.uint8), flags) if data else None
    if image is None:
        kind = next((name for signature, name in _SIGNATURES.items()
                     if data.startswith(signature)), None)
        raise ImageFileError(path, f"a {kind} file that does not decode whole (cut short or "
                             "damaged)" if kind else "not a readable image (PNG, JPEG, ...)")
    return image
