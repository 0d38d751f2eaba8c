"""Card artwork: the installed designs, each 52 faces with the box of its corner index.

``scripts/install-card-art.sh`` renders the faces from the package registries into
``art_dir()/<design>/<CODE>.png`` (RGBA, card codes as in :mod:`dealer_assist.rules.cards`).
This module splits Debian's 13x5 sheets, loads a design and finds where its corner index is.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

import cv2
import numpy as np

from dealer_assist.image_files import ImageFileError, read_image

RANKS = "A23456789TJQK"
SUITS = "SHDC"
#: All 52 codes in class order: the detector's class id is the index in this tuple.
CARD_CODES: tuple[str, ...] = tuple(r + s for s in SUITS for r in RANKS)

#: Debian gnome-cards-data sheets with standard French indices (A 2-10 J Q K) in both corners.
#: Left out: Russian, German (B/D) and French (R/D/V) court letters, Swiss suits, court cards
#: without an index (guyenne-classic), a rank without a suit in the corner (tango_nuevo).
GNOME_DESIGNS: tuple[str, ...] = (
    "anglo", "anglo_bitmap", "anglo_modern", "anglo_poker", "bellot", "gnomangelo",
    "gnomangelo_bitmap", "neoclassical", "ornamental", "orell", "paris", "plastic", "simplistic",
    "tango", "tigullio",
)
#: From npm: Adrian Kennard's CC0 designs (@heruka_urgyen/react-playing-cards) and Chris
#: Aguilar's Vectorized Playing Cards 1.3 (cardsJS, LGPL-3).
NPM_DESIGNS: tuple[str, ...] = ("kennard", "kennard_bf", "vectorized")
#: Never used in training: measured accuracy on these says how the model does on unseen decks.
HELD_OUT_DESIGNS: tuple[str, ...] = ("kennard", "tigullio", "plastic")
CARD_WIDTH_PX = 200
_SHEET_ROWS = "CDHS"  # gnome sheets: rows clubs, diamonds, hearts, spades, then jokers/back


class ArtworkError(ValueError):
    """Card artwork missing or unreadable; carries the path."""

    def __init__(self, message: str, path: Path) -> None:
        super().__init__(f"{message}: {path}")
        self.path = path


def art_dir() -> Path:
    """Where the installed artwork lives (``$DEALER_ASSIST_CARD_ART`` overrides)."""
    default = Path.home() / ".cache" / "dealer-assist" / "card-art"
    return Path(os.environ.get("DEALER_ASSIST_CARD_ART", default))


def split_gnome_sheet(sheet_png: Path, out_dir: Path) -> None:
    """Cut a rendered 13x5 gnome-cards sheet into 52 face PNGs named by card code."""
    sheet = _read_art(sheet_png)
    if sheet.ndim != 3 or sheet.shape[2] != 4:
        raise ArtworkError("not an RGBA sheet", sheet_png)
    cell_w, cell_h = sheet.shape[1] / 13, sheet.shape[0] / 5
    out_dir.mkdir(parents=True, exist_ok=True)
    for row, suit in enumerate(_SHEET_ROWS):
        for col, rank in enumerate(RANKS):
            x0, y0 = round(col * cell_w), round(row * cell_h)
            x1, y1 = round((col + 1) * cell_w), round((row + 1) * cell_h)
            face = _trim_to_alpha(sheet[y0:y1, x0:x1])
            cv2.imwrite(str(out_dir / f"{rank}{suit}.png"), _to_width(face))


def normalise_face(face_png: Path, out_png: Path) -> None:
    """Trim a single rendered face to its card outline and scale it to the common width."""
    face = _read_art(face_png)
    if face.ndim != 3 or face.shape[2] != 4:
        raise ArtworkError("not an RGBA face", face_png)
    out_png.parent.mkdir(parents=True, exist_ok=True)
    cv2.imwrite(str(out_png), _to_width(_trim_to_alpha(face)))


def _read_art(path: Path, what: str = "") -> np.ndarray:
    try:
        return read_image(path, keep_alpha=True)
    except ImageFileError as error:
        raise ArtworkError(what + error.why, path) from None


def _trim_to_alpha(rgba: np.ndarray) -> np.ndarray:
    ys, xs = np.nonzero(rgba[:, :, 3] > 128)
    if len(xs) == 0:
        return rgba
    return rgba[ys.min() : ys.max() + 1, xs.min() : xs.max() + 1]


def _to_width(rgba: np.ndarray) -> np.ndarray:
    height = round(rgba.shape[0] * CARD_WIDTH_PX / rgba.shape[1])
    return cv2.resize(rgba, (CARD_WIDTH_PX, height), interpolation=cv2.INTER_AREA)


@dataclass(frozen=True)
class Design:
    """One deck's artwork: 52 RGBA faces and, per card, its top-left index box.

    ``index_boxes[code]`` is ``(x0, y0, x1, y1)`` as fractions of the card's width and height;
    the bottom-right index is the same box turned through 180 degrees.
    """

    name: str
    faces: dict[str, np.ndarray] = field(repr=False)
    index_boxes: dict[str, tuple[float, float, float, float]] = field(repr=False)


def load_design(folder: Path) -> Design:
    """Load ``folder/<CODE>.png`` (or .jpg) for all 52 codes and locate each corner index."""
    if not folder.is_dir():
        raise ArtworkError("no such design folder", folder)
    faces: dict[str, np.ndarray] = {}
    for code in CARD_CODES:
        path = next((p for p in (folder / f"{code}.png", folder / f"{code}.jpg") if p.is_file()),
                    folder / f"{code}.png")
        face = _read_art(path, f"face {code}: ")
        if face.ndim == 2:
            face = cv2.cvtColor(face, cv2.COLOR_GRAY2BGRA)
        elif face.shape[2] == 3:
            face = cv2.cvtColor(face, cv2.COLOR_BGR2BGRA)
        faces[code] = face
    return Design(folder.name, faces, find_index_boxes(faces))


def load_designs(names: tuple[str, ...] | list[str], root: Path | None = None) -> list[Design]:
    """Load several installed designs by name."""
    base = root or art_dir()
    if not base.is_dir():
        raise ArtworkError("no card artwork installed (run scripts/install-card-art.sh)", base)
    return [load_design(base / name) for name in names]


def installed_designs(root: Path | None = None) -> list[str]:
    """Names of the designs installed under ``root`` (default :func:`art_dir`)."""
    base = root or art_dir()
    if not base.is_dir():
        return []
    return sorted(p.name for p in base.iterdir() if (p / "AS.png").is_file())


def find_index_boxes(faces: dict[str, np.ndarray]) -> dict[str, tuple[float, float, float, float]]:
    """Find each face's top-left corner index (rank and suit): the ink nearest the corner.

    The search window is the top-left 26% x 40% of the card minus a border strip (the outline).
    Ink components touching the window's far edges belong to pips or court pictures and are
    dropped; what is left is the index. A jumbo index's suit reaches past 40% of the card, so
    ink directly under what was found, close below it and ending within 60% of the card, joins
    it. The box is grown a little. A design's median box stands in for a face where nothing
    sensible is found.
    """
    raw: dict[str, tuple[float, float, float, float] | None] = {
        code: _index_box(face) for code, face in faces.items()
    }
    found = np.array([b for b in raw.values() if b is not None])
    median = tuple(float(v) for v in np.median(found, axis=0)) if len(found) else (
        0.02, 0.02, 0.18, 0.28)
    boxes: dict[str, tuple[float, float, float, float]] = {}
    for code, box in raw.items():
        if box is None or (box[3] - box[1]) < 0.5 * (median[3] - median[1]):
            box = median  # type: ignore[assignment]
        boxes[code] = box  # type: ignore[assignment]
    return boxes


def _index_box(face: np.ndarray) -> tuple[float, float, float, float] | None:
    h, w = face.shape[:2]
    win_w, win_h = int(0.26 * w), int(0.40 * h)
    deep_w, deep_h = int(0.35 * w), int(0.60 * h)  # where a jumbo index's suit may reach
    border = max(2, int(0.035 * w))
    bgr = face[:deep_h, :deep_w, :3].astype(np.int16)
    alpha = face[:deep_h, :deep_w, 3]
    paper = np.median(face[h // 2 - 5 : h // 2 + 5, border : border + 6, :3].reshape(-1, 3), axis=0)
    ink = (np.abs(bgr - paper).sum(axis=2) > 90) & (alpha > 200)
    ink[:border, :] = False
    ink[:, :border] = False
    count, _, stats, _ = cv2.connectedComponentsWithStats(ink.astype(np.uint8), connectivity=8)
    index: list[tuple[int, int, int, int]] = []  # x0, y0, x1, y1 in pixels
    beyond: list[tuple[int, int, int, int]] = []
    for i in range(1, count):
        x, y, bw, bh, area = stats[i]
        if area < 4:
            continue
        if x + bw < win_w - 1 and y + bh < win_h - 1:
            if bw <= 0.9 * win_w and bh <= 0.9 * win_h:
                index.append((x, y, x + bw, y + bh))
        elif x + bw < deep_w - 1 and y + bh < deep_h - 1:
            beyond.append((x, y, x + bw, y + bh))
    if not index:
        return None
    x0, y0 = min(b[0] for b in index), min(b[1] for b in index)
    x1, y1 = max(b[2] for b in index), max(b[3] for b in index)
    for bx0, by0, bx1, by1 in sorted(beyond, key=lambda b: b[1]):
        # a jumbo suit: centred under the rank, close below it, about its size
        if (x0 <= (bx0 + bx1) / 2 <= x1 and y1 - 2 <= by0 <= y1 + 0.5 * (y1 - y0)
                and by1 - by0 <= 1.5 * (y1 - y0) and bx1 - bx0 <= 2 * (x1 - x0)):
            y1 = max(y1, by1)
            x0, x1 = min(x0, bx0), max(x1, bx1)
    pad = 0.01
    return (
        max(0.0, x0 / w - pad),
        max(0.0, y0 / h - pad),
        min(1.0, x1 / w + pad),
        min(1.0, y1 / h + pad),
    )
