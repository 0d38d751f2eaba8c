"""Card faces drawn with OpenCV for tests that need a deck but no installed artwork."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import cv2
import numpy as np

from dealer_assist.vision.artwork import CARD_CODES


def drawn_face(code: str) -> np.ndarray:
    """A regular index: a rank with a small suit under it, and one centre pip."""
    face = np.zeros((280, 200, 4), np.uint8)
    cv2.rectangle(face, (0, 0), (199, 279), (255, 255, 255, 255), -1)
    colour = (0, 0, 200, 255) if code[1] in "HD" else (0, 0, 0, 255)
    rank = "10" if code[0] == "T" else code[0]
    cv2.putText(face, rank, (12, 42), cv2.FONT_HERSHEY_SIMPLEX, 1.0, colour, 3)
    cv2.circle(face, (24, 62), 9, colour, -1)  # the suit under the rank
    cv2.circle(face, (100, 140), 30, colour, -1)  # a centre pip, away from the corner
    face[140:, :] = np.rot90(face[:140, :], 2)  # the bottom half: the top half turned 180
    return face


def jumbo_face(code: str) -> np.ndarray:
    """A jumbo index: a tall rank with a suit wider than it reaching past 40% of the card."""
    face = np.zeros((280, 200, 4), np.uint8)
    cv2.rectangle(face, (0, 0), (199, 279), (255, 255, 255, 255), -1)
    colour = (0, 0, 200, 255) if code[1] in "HD" else (0, 0, 0, 255)
    cv2.putText(face, code[0], (14, 62), cv2.FONT_HERSHEY_SIMPLEX, 2.0, colour, 5)
    cv2.circle(face, (33, 97), 24, colour, -1)  # the suit under the rank: y 73-121, x 9-57
    cv2.circle(face, (140, 140), 30, colour, -1)  # a centre pip, away from the corner
    face[140:, :] = np.rot90(face[:140, :], 2)
    return face


def write_deck(folder: Path, draw: Callable[[str], np.ndarray] = drawn_face) -> Path:
    """A folder of 52 faces drawn by ``draw``, named by code (``7S.png``), as a casino's own
    deck is given; returns the folder."""
    folder.mkdir()
    for code in CARD_CODES:
        cv2.imwrite(str(folder / f"{code}.png"), draw(code))
    return folder
