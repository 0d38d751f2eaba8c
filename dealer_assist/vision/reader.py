"""Reading a corner index once the detector has found it: crop, then a small two-headed CNN.

The crop is a square around the index box (``CROP_MARGIN`` times its long side), resized to
``CROP_SIZE``; the network gives rank logits (13 ranks + "not an index") and suit logits (4).
Indices appear at every angle on a table (fans, sideways doubles, the upside-down corner), so
the reader is trained on crops turned through any angle: turning an index does not change it.
"""

from __future__ import annotations

from collections.abc import Sequence

import cv2
import numpy as np

RANK_CLASSES = "A23456789TJQK-"  # "-" = not an index (a pip, a court picture, a chip, felt)
SUIT_CLASSES = "SHDC"
CROP_SIZE = 32
CROP_MARGIN = 1.3
#: Quarter turns clockwise -> how OpenCV turns a crop so (0: as seen).
_TURNS = {1: cv2.ROTATE_90_CLOCKWISE, 2: cv2.ROTATE_180, 3: cv2.ROTATE_90_COUNTERCLOCKWISE}
#: How the detector reads each found index (``CardDetector(reading=...)``): the quarter turns
#: read first, and the turns read as well where those readings, averaged, are not
#: :data:`SETTLED` sure (:func:`settled`); an index's readings are averaged. "four": every turn
#: always; "twice": as seen and half a turn, then the quarter turns; "once": as seen, then the
#: other three.
READINGS: dict[str, tuple[tuple[int, ...], tuple[int, ...]]] = {
    "four": ((0, 1, 2, 3), ()), "twice": ((0, 2), (1, 3)), "once": ((0,), (1, 2, 3))}
#: How the table reads.
DEFAULT_READING = "twice"
#: First readings this sure ("not an index", or rank x suit probability) need no others
#: (models/README.md, "Fewer readings of each index").
SETTLED = 0.99


def crop_index(frame: np.ndarray, box: Sequence[float],
               size: int = CROP_SIZE) -> np.ndarray:
    """The square around ``box`` (x0, y0, x1, y1), resized to ``size`` (BGR uint8)."""
    x0, y0, x1, y1 = box
    side = CROP_MARGIN * max(x1 - x0, y1 - y0, 4.0)
    cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
    scale = size / side
    m = np.array([[scale, 0, size / 2 - cx * scale], [0, scale, size / 2 - cy * scale]],
                 np.float32)
    return cv2.warpAffine(frame, m, (size, size), flags=cv2.INTER_AREA,
                          borderMode=cv2.BORDER_REPLICATE)


def crops_to_blob(crops: list[np.ndarray]) -> np.ndarray:
    """Stack BGR crops into the reader's NCHW float input (RGB, 0-1)."""
    batch = np.stack(crops).astype(np.float32)[:, :, :, ::-1] / 255.0
    return np.ascontiguousarray(batch.transpose(0, 3, 1, 2))


def reading_views(crops: list[np.ndarray]) -> list[np.ndarray]:
    """Each crop as seen, then all of them turned a quarter, a half and three quarters of a turn
    (one block of ``len(crops)`` per view): how every index is read, and calibrated."""
    return views(crops, (0, 1, 2, 3))


def views(crops: list[np.ndarray], turns: Sequence[int]) -> list[np.ndarray]:
    """The crops turned by each of ``turns`` quarter turns clockwise, one block of
    ``len(crops)`` per turn."""
    return [cv2.rotate(crop, _TURNS[turn]) if turn else crop for turn in turns for crop in crops]


def settled(ranks: np.ndarray, suits: np.ndarray, sure: float = SETTLED) -> np.ndarray:
    """Which rows of ``(N, 14)`` ranks and ``(N, 4)`` suits need no further reading: "not an
    index" at least ``sure``, or an index whose rank x suit probability is at least ``sure``."""
    not_an_index = RANK_CLASSES.index("-")
    named = (ranks.argmax(axis=1) != not_an_index) & \
        (ranks.max(axis=1) * suits.max(axis=1) >= sure)
    return (ranks[:, not_an_index] >= sure) | named


def agree(probs: np.ndarray, n: int) -> np.ndarray:
    """The readings of ``n`` crops' views (one block of ``n`` rows per view) averaged: sure
    only where every view agrees."""
    return probs.reshape(-1, n, probs.shape[1]).mean(axis=0)
