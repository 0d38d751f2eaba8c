"""What an image file is and the size its header claims, from its first bytes, decoding nothing.

:func:`read_header` names every format OpenCV can decode (PNG, JPEG, TIFF, WebP, BMP, GIF, the
PNM family, PFM, Sun raster, JPEG 2000, OpenEXR, Radiance HDR, AVIF) by its signature and reads
the width and height of those whose header states them in a fixed place. Pure Python, so the
surveillance recorder uses it without OpenCV; :mod:`dealer_assist.image_files` decides from it
what is decoded.
"""

from __future__ import annotations

import re
import struct
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class ImageHeader:
    """``kind``: the format ("PNG", "JPEG", "TIFF", ...; "" for none known here); ``size``:
    (width, height) as its header claims, None where it was not read."""

    kind: str
    size: tuple[int, int] | None = None


def read_header(data: bytes) -> ImageHeader:
    """The format of ``data`` and the size its header claims; never raises."""
    for signature, kind, size_of in _FORMATS:
        if signature.match(data):
            return ImageHeader(kind, size_of(data) if size_of else None)
    return ImageHeader("")


def _png(data: bytes) -> tuple[int, int] | None:
    """IHDR, which libpng requires to be the first chunk."""
    if len(data) < 24 or data[12:16] != b"IHDR":
        return None
    width, height = struct.unpack(">II", data[16:24])
    return width, height


_STANDALONE = {0x01, *range(0xD0, 0xD8)}
"""JPEG markers without a length (TEM, RST0-7)."""


def _jpeg(data: bytes) -> tuple[int, int] | None:
    """The first frame header (SOF0-15), found by walking the segments as libjpeg does; None
    where the walk meets anything else than a marker (libjpeg would warn and search on)."""
    at = 2
    while at + 4 <= len(data) and data[at] == 0xFF:
        marker = data[at + 1]
        if marker == 0xFF:  # fill byte
            at += 1
        elif marker in _STANDALONE:
            at += 2
        elif 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):
            if at + 9 > len(data):
                return None
            height, width = struct.unpack(">HH", data[at + 5:at + 9])
            return width, height
        else:
            length = int.from_bytes(data[at + 2:at + 4], "big")
            if length < 2:
                return None
            at += 2 + length
    return None


def _tiff(data: bytes) -> tuple[int, int] | None:
    """ImageWidth (256) and ImageLength (257) of the first directory, the page OpenCV reads."""
    order = "<" if data[:2] == b"II" else ">"
    if len(data) < 8:
        return None
    (ifd,) = struct.unpack_from(order + "I", data, 4)
    if ifd + 2 > len(data):
        return None
    (count,) = struct.unpack_from(order + "H", data, ifd)
    found: dict[int, int] = {}
    for at in range(ifd + 2, min(ifd + 2 + 12 * count, len(data) - 11), 12):
        tag, kind = struct.unpack_from(order + "HH", data, at)
        if tag in (256, 257) and kind in (3, 4):  # SHORT or LONG
            found.setdefault(tag, struct.unpack_from(order + "HI"[kind - 3], data, at + 8)[0])
    return (found[256], found[257]) if len(found) == 2 else None


def _webp(data: bytes) -> tuple[int, int] | None:
    """The canvas of an extended file (VP8X), else the lossy (VP8) or lossless (VP8L) frame."""
    chunk = data[12:16]
    if chunk == b"VP8X" and len(data) >= 30:
        return (int.from_bytes(data[24:27], "little") + 1,
                int.from_bytes(data[27:30], "little") + 1)
    if chunk == b"VP8L" and len(data) >= 25 and data[20] == 0x2F:
        bits = int.from_bytes(data[21:25], "little")
        return (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1
    if chunk == b"VP8 " and len(data) >= 30 and data[23:26] == b"\x9d\x01\x2a":
        width, height = struct.unpack("<HH", data[26:30])
        return width & 0x3FFF, height & 0x3FFF
    return None


def _bmp(data: bytes) -> tuple[int, int] | None:
    """A Windows BMP's info header, or an OS/2 one (12 bytes) with 16-bit sizes."""
    if len(data) < 26:
        return None
    if int.from_bytes(data[14:18], "little") == 12:
        width, height = struct.unpack("<HH", data[18:22])
        return width, height
    width, height = struct.unpack("<ii", data[18:26])
    return abs(width), abs(height)  # a negative height: rows stored top down


def _gif(data: bytes) -> tuple[int, int] | None:
    """The logical screen."""
    if len(data) < 10:
        return None
    width, height = struct.unpack("<HH", data[6:10])
    return width, height


_PNM_NUMBERS = re.compile(rb"\A..(?:\s|#[^\n]*\n)+(\d+)(?:\s|#[^\n]*\n)+(\d+)", re.DOTALL)
_PAM_SIZE = re.compile(rb"^(WIDTH|HEIGHT)[ \t]+(\d+)", re.MULTILINE)


def _pnm(data: bytes) -> tuple[int, int] | None:
    """PBM, PGM, PPM and PFM: the first two numbers after the magic (comments skipped); PAM:
    its WIDTH and HEIGHT lines."""
    if data[1:2] == b"7":
        sizes = dict(_PAM_SIZE.findall(data[:data.find(b"ENDHDR")]))
        if b"WIDTH" in sizes and b"HEIGHT" in sizes:
            return int(sizes[b"WIDTH"]), int(sizes[b"HEIGHT"])
        return None
    numbers = _PNM_NUMBERS.match(data[:1024])
    return (int(numbers[1]), int(numbers[2])) if numbers else None


def _sun_raster(data: bytes) -> tuple[int, int] | None:
    if len(data) < 12:
        return None
    width, height = struct.unpack(">II", data[4:12])
    return width, height


def _j2k_codestream(data: bytes) -> tuple[int, int] | None:
    """The SIZ segment: the reference grid less its offset."""
    if len(data) < 24:
        return None
    width, height, x_offset, y_offset = struct.unpack(">IIII", data[8:24])
    return width - x_offset, height - y_offset


_FORMATS = (
    (re.compile(rb"\x89PNG\r\n\x1a\n"), "PNG", _png),
    (re.compile(rb"\xff\xd8\xff"), "JPEG", _jpeg),
    (re.compile(rb"II\*\x00|MM\x00\*"), "TIFF", _tiff),
    (re.compile(rb"II\+\x00|MM\x00\+"), "BigTIFF", None),
    (re.compile(rb"RIFF....WEBP", re.DOTALL), "WebP", _webp),
    (re.compile(rb"BM"), "BMP", _bmp),
    (re.compile(rb"GIF8[79]a"), "GIF", _gif),
    (re.compile(rb"P[14]\s"), "PBM", _pnm),
    (re.compile(rb"P[25]\s"), "PGM", _pnm),
    (re.compile(rb"P[36]\s"), "PPM", _pnm),
    (re.compile(rb"P7\s"), "PAM", _pnm),
    (re.compile(rb"P[Ff]\s"), "PFM", _pnm),
    (re.compile(rb"\x59\xa6\x6a\x95"), "Sun raster", _sun_raster),
    (re.compile(rb"\xff\x4f\xff\x51"), "JPEG 2000", _j2k_codestream),
    (re.compile(rb"\x00\x00\x00\x0cjP  \r\n\x87\n"), "JPEG 2000", None),
    (re.compile(rb"\x76\x2f\x31\x01"), "OpenEXR", None),
    (re.compile(rb"#\?(?:RADIANCE|RGBE)\n"), "Radiance HDR", None),
    (re.compile(rb"....ftyp(?:avif|avis)", re.DOTALL), "AVIF", None),
)
"""Each format OpenCV decodes: its signature (matched at the start), name and size reader."""
