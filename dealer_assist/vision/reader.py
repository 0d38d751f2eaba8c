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
_TURNS = (cv2.ROTATE_90_CLOCKWISE, cv2.ROTATE_180, cv2.ROTATE_90_COUNTERCLOCKWISE)


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
    return crops + [cv2.rotate(crop, turn) for turn in _TURNS for crop in crops]


def agree(probs: np.ndarray, n: int) -> np.ndarray:
    """The readings of ``n`` crops' views (one block of ``n`` rows per view) averaged: sure
    only where every view agrees."""
    return probs.reshape(-1, n, probs.shape[1]).mean(axis=0)
