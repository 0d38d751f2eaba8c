"""Image bombs: files of a few bytes to a few hundred kilobytes that decode, whole and valid,
into gigabytes; OpenCV decodes both formats (dealer-assist did, before it refused them)."""

from __future__ import annotations

import struct
import zlib

import cv2
import numpy as np


def tiff_bomb(width: int = 20000, height: int = 20000) -> bytes:
    """A greyscale Deflate TIFF of ``width`` x ``height`` black pixels, a strip a row, every
    strip pointing at the same compressed row (160 KB for 20000x20000; BGR 1.2 GB decoded)."""
    row = zlib.compress(bytes(width), 9)
    ifd_at, entries = 8, 10
    offsets_at = ifd_at + 2 + 12 * entries + 4
    counts_at = offsets_at + 4 * height
    row_at = counts_at + 4 * height

    def entry(tag: int, kind: int, count: int, value: int) -> bytes:  # kind 3 SHORT, 4 LONG
        packed = struct.pack("<I", value) if kind == 4 else struct.pack("<HH", value, 0)
        return struct.pack("<HHI", tag, kind, count) + packed

    directory = struct.pack("<H", entries) + b"".join([
        entry(256, 4, 1, width), entry(257, 4, 1, height), entry(258, 3, 1, 8),
        entry(259, 3, 1, 8),  # Deflate
        entry(262, 3, 1, 1),  # black is zero
        entry(273, 4, height, offsets_at), entry(277, 3, 1, 1), entry(278, 4, 1, 1),
        entry(279, 4, height, counts_at), entry(284, 3, 1, 1),
    ]) + struct.pack("<I", 0)
    return (b"II*\x00" + struct.pack("<I", ifd_at) + directory
            + struct.pack(f"<{height}I", *[row_at] * height)
            + struct.pack(f"<{height}I", *[len(row)] * height) + row)


def webp_bomb(width: int = 16383, height: int = 16383) -> bytes:
    """A lossless WebP of ``width`` x ``height`` black pixels, WebP's largest (34 bytes; BGR
    805 MB decoded): a one-colour image's pixels take no bits, so a small one's header is
    changed to claim the size."""
    small = cv2.imencode(".webp", np.zeros((16, 16, 3), np.uint8),
                         [cv2.IMWRITE_WEBP_QUALITY, 101])[1].tobytes()  # above 100: lossless
    assert small[12:16] == b"VP8L" and small[20] == 0x2F
    bits = int.from_bytes(small[21:25], "little") & ~0xFFFFFFF | (width - 1) | (height - 1) << 14
    return small[:21] + bits.to_bytes(4, "little") + small[25:]


BOMBS = {"TIFF": (tiff_bomb, 20000, 20000), "WebP": (webp_bomb, 16383, 16383)}
"""Each bomb's format: how it is made, and the width and height it decodes to."""
