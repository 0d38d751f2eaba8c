"""Image files read whole: how calibration, card vision, deck enrolment and replay's
re-detection read a picture.

Only PNG and JPEG are decoded: the camera's frames, the recording's key frames (its recorder
takes nothing else), the card artwork and calibration photographs are all one or the other.
Every other format OpenCV could decode (TIFF, WebP, BMP, GIF, PNM, PFM, Sun raster, JPEG 2000,
OpenEXR, Radiance HDR, AVIF) is refused from its first bytes, naming the format and the size
its header claims (:mod:`dealer_assist.image_headers`): none is ever produced here, and each
would be one more decoder open to a crafted file (a 160 KB TIFF of 20000x20000 decoded into
2.4 GB, a 34-byte WebP of 16383x16383 into 1.6 GB). A PNG or JPEG is decoded only once its
header's size is read and within :data:`MAX_PIXELS`.

OpenCV's ``imread`` decodes a JPEG cut short (a copy interrupted, a full disk) with a grey
bottom and only a warning on stderr, so a half photograph gave "0 cards" or a drift reading of
its top half; and it crashes on a file name that is not UTF-8. Here Python reads the file and
OpenCV decodes its bytes, which refuses a cut-short JPEG or PNG. A JPEG whose coded data is
damaged decodes into a whole picture with garbled blocks (phantom cards) and only libjpeg's
warning on stderr; that warning is taken from stderr while the file decodes and refuses it (7 us
a decode, against 2-4 ms for the decode of a 1280x720 frame).
"""

from __future__ import annotations

import os
import re
import sys
import threading
from pathlib import Path

import cv2
import numpy as np

from dealer_assist.image_headers import ImageHeader, read_header

DECODED = ("PNG", "JPEG")
"""The formats decoded; every other is refused undecoded."""
MAX_PIXELS = 100_000_000
"""Largest image read, in pixels: three times an 8K camera frame (7680x4320, 33 million) and
twelve times a 4K one, yet decoded in 300 MB (BGR). A 74-byte PNG can claim 60000x60000: OpenCV
would refuse it with an exception past 2^30 pixels, and below that decode it into gigabytes."""


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
    if path.is_dir():
        raise ImageFileError(path, "a directory, not an image file")
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
    header = read_header(data)
    if header.kind not in DECODED:
        raise ImageFileError(path, _not_decoded(header, data))
    if header.size is None:
        raise ImageFileError(path, f"a {header.kind} file whose header gives no image size (cut "
                             "short or damaged); not decoded")
    check_pixels(*header.size, path)
    flags = cv2.IMREAD_UNCHANGED if keep_alpha else cv2.IMREAD_COLOR
    damage = ""
    try:
        if header.kind == "JPEG":
            image, damage = _decode_jpeg(np.frombuffer(data, np.uint8), flags)
        else:
            image = cv2.imdecode(np.frombuffer(data, np.uint8), flags)
    except cv2.error as error:  # one of OpenCV's own checks inside a decoder
        raise ImageFileError(path, "OpenCV refuses to decode it, too large or damaged (failed "
                             f"check: {error.err})") from None
    if image is None:
        raise ImageFileError(path, f"a {header.kind} file that does not decode whole (cut short "
                             "or damaged)")
    if damage:
        raise ImageFileError(path, f"damaged JPEG data (libjpeg: {damage}); not read")
    return image


_LIBJPEG_WARNINGS = ("Corrupt JPEG data: ", "Premature end of JPEG file",
                     "Invalid SOS parameters", "Warning: unknown JFIF revision")
"""How libjpeg's warnings begin (jerror.h). It prints the first one only, so any of them may
hide damage further on: each refuses the file, but for padding before the end marker."""
_PADDING_BEFORE_END = re.compile(r"Corrupt JPEG data: (\d+) extraneous bytes before marker 0xd9")
"""Bytes an encoder left before the end-of-image marker (some cameras pad frames with zeros):
the picture decodes whole, where they are zeros (:func:`_zero_padded`)."""
_STDERR_TAKEN = threading.Lock()


def _decode_jpeg(buffer: np.ndarray, flags: int) -> tuple[np.ndarray | None, str]:
    """``cv2.imdecode`` of JPEG bytes, and libjpeg's warning ("" if none).

    OpenCV returns the picture and leaves the warning on file descriptor 2, so that points at a
    pipe while the bytes decode, read as it fills by a thread of its own (another thread's
    writes can neither fill it nor find it closed) and passed on to standard error, all but
    libjpeg's lines. Without a standard error to give back, the bytes decode unchecked."""
    if sys.stderr is None:
        return cv2.imdecode(buffer, flags), ""
    with _STDERR_TAKEN:
        sys.stderr.flush()
        read_end, write_end = os.pipe()
        saved = os.dup(2)
        said: list[bytes] = []
        reader = threading.Thread(target=_read_until_closed, args=(read_end, said),
                                  name="libjpeg-warnings", daemon=True)
        reader.start()
        os.dup2(write_end, 2, inheritable=False)
        os.close(write_end)
        try:
            image = cv2.imdecode(buffer, flags)
        finally:
            os.dup2(saved, 2)  # the pipe's last write end closes: the reader sees its end
            os.close(saved)
            reader.join()
    lines = b"".join(said).decode(errors="replace").splitlines(keepends=True)
    warnings = [line.strip() for line in lines if line.startswith(_LIBJPEG_WARNINGS)]
    sys.stderr.write("".join(line for line in lines if not line.startswith(_LIBJPEG_WARNINGS)))
    damage = [w.removeprefix(_LIBJPEG_WARNINGS[0]) for w in warnings
              if not _zero_padded(w, buffer.tobytes())]
    return image, damage[0] if damage else ""


def _zero_padded(warning: str, data: bytes) -> bool:
    """Whether libjpeg's ``warning`` is of bytes left before the end marker that are all zeros:
    padding. Damaged coded data can end its scan early too, leaving coded bytes there."""
    padding = _PADDING_BEFORE_END.fullmatch(warning)
    if padding is None:
        return False
    count = int(padding[1])
    before_end = data[:data.rfind(b"\xff\xd9")].rstrip(b"\xff")  # fill bytes are not counted
    return len(before_end) >= count and not before_end[len(before_end) - count:].strip(b"\0")


def _read_until_closed(read_end: int, into: list[bytes]) -> None:
    """Read a pipe until every write end is closed; closes it."""
    try:
        while chunk := os.read(read_end, 65536):
            into.append(chunk)
    finally:
        os.close(read_end)


def check_pixels(width: int, height: int, path: Path | None, what: str = "image") -> None:
    """Raise :class:`ImageFileError` if an image (or ``what``: a video's frames) of
    ``width`` x ``height`` is larger than :data:`MAX_PIXELS`, before it is decoded."""
    if width * height > MAX_PIXELS:
        raise ImageFileError(path, f"{what} is {width}x{height}, larger than {MAX_PIXELS:,} "
                             "pixels (an 8K camera frame is 33,177,600); not decoded")


def _not_decoded(header: ImageHeader, data: bytes) -> str:
    """Why ``data``, of a format not in :data:`DECODED`, is refused: its format and size."""
    formats = " or ".join(DECODED)
    if not header.kind:
        return (f"not a {formats} image (it starts with {data[:8].hex(' ')})" if data else
                "an empty file, not an image") + "; not decoded"
    size = f" of {header.size[0]}x{header.size[1]} pixels" if header.size else ""
    return (f"a {header.kind} image{size}: only {formats} images are read (the camera's, the "
            "recording's and the card artwork's formats); not decoded")
