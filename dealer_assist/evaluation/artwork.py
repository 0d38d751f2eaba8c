"""The independent evaluation's artwork: held-out card designs and photographic felt textures.

Installed by ``scripts/install-card-art.sh`` apart from the training artwork, under
:func:`evaluation_art_dir` (``$DEALER_ASSIST_EVALUATION_ART``, default
``~/.cache/dealer-assist/evaluation-art``): ``designs/<design>/<CODE>.png`` (RGBA faces trimmed
to the card) and ``felt/<name>.png`` (grey photographic textures). The training code lists
designs from its own folder only, so it never sees these.

Sources: Debian's ``kdegames-card-data-kf5`` (KDE's SVG card decks, one element per card,
rendered with ``rsvg-convert --export-id``) and Debian's ``gimp-data`` (GIMP's patterns:
photographs of burlap, leather, paper, fibres, granite). The corner index of each face is found
here by this module's own rule (:func:`index_box`), not the generator's.
"""

from __future__ import annotations

import gzip
import os
import struct
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import cv2
import numpy as np

from dealer_assist.image_files import ImageFileError, read_image

RANKS = "A23456789TJQK"
SUITS = "SHDC"
CODES: tuple[str, ...] = tuple(r + s for s in SUITS for r in RANKS)
#: Width the installed faces are scaled to (pixels).
FACE_WIDTH = 240
_KDE_RANK = {"A": "1", "T": "10", "J": "jack", "Q": "queen", "K": "king"}
_KDE_SUIT = {"S": "spade", "H": "heart", "D": "diamond", "C": "club"}


class EvaluationArtError(ValueError):
    """Evaluation artwork missing or unreadable; says which and where."""


def evaluation_art_dir() -> Path:
    """Where the evaluation's artwork lives (``$DEALER_ASSIST_EVALUATION_ART`` overrides)."""
    default = Path.home() / ".cache" / "dealer-assist" / "evaluation-art"
    return Path(os.environ.get("DEALER_ASSIST_EVALUATION_ART", default))


def kde_element(code: str) -> str:
    """The SVG element id of ``code`` in a KDE card deck (``KS`` -> ``king_spade``)."""
    return f"{_KDE_RANK.get(code[0], code[0])}_{_KDE_SUIT[code[1]]}"


def _largest_blob(rgba: np.ndarray) -> np.ndarray:
    """The card: the bounding box of the largest opaque component (KDE elements carry stray
    invisible or tiny parts far from the card)."""
    opaque = (rgba[:, :, 3] > 128).astype(np.uint8)
    count, _, stats, _ = cv2.connectedComponentsWithStats(opaque, connectivity=8)
    if count < 2:
        raise EvaluationArtError("nothing opaque in the rendered element")
    best = 1 + int(np.argmax(stats[1:, cv2.CC_STAT_AREA]))
    x, y, w, h = (int(v) for v in stats[best, :4])
    return rgba[y : y + h, x : x + w]


def render_kde_deck(svgz: Path, out_dir: Path) -> None:
    """Render the 52 faces of one KDE deck (``.svgz``) to ``out_dir/<CODE>.png``."""
    with tempfile.TemporaryDirectory() as work:
        svg = Path(work) / "deck.svg"
        svg.write_bytes(gzip.decompress(svgz.read_bytes()))
        probe = _render_element(svg, kde_element("KS"), 1.0, Path(work) / "probe.png")
        zoom = 2.0 * FACE_WIDTH / probe.shape[1]  # render at twice the size, then shrink
        out_dir.mkdir(parents=True, exist_ok=True)
        for code in CODES:
            face = _render_element(svg, kde_element(code), zoom, Path(work) / "face.png")
            height = round(face.shape[0] * FACE_WIDTH / face.shape[1])
            face = cv2.resize(face, (FACE_WIDTH, height), interpolation=cv2.INTER_AREA)
            cv2.imwrite(str(out_dir / f"{code}.png"), face)


def _render_element(svg: Path, element: str, zoom: float, png: Path) -> np.ndarray:
    subprocess.run(["rsvg-convert", "--export-id", element, "--zoom", f"{zoom:.4f}",
                    "-o", str(png), str(svg)], check=True, capture_output=True)
    # rsvg-convert's own output, at install time: read directly, since an element of a large
    # deck renders on a canvas of the deck's whole drawing (up to 15000 x 8000 pixels here),
    # beyond the cap image_files puts on the pictures the program reads
    rgba = cv2.imread(str(png), cv2.IMREAD_UNCHANGED)
    if rgba is None or rgba.ndim != 3 or rgba.shape[2] != 4:
        raise EvaluationArtError(f"{svg}: element {element} did not render as RGBA")
    return _largest_blob(rgba)


def read_gimp_pattern(path: Path) -> np.ndarray:
    """Decode a GIMP pattern (``.pat``: a big-endian header, ``GPAT``, a name, raw pixels) to a
    grey uint8 image."""
    data = path.read_bytes()
    if len(data) < 24:
        raise EvaluationArtError(f"{path}: too short for a GIMP pattern")
    header_size, version, width, height, depth = struct.unpack(">5I", data[:20])
    if data[20:24] != b"GPAT" or version != 1 or depth not in (1, 2, 3, 4):
        raise EvaluationArtError(f"{path}: not a GIMP pattern (version 1, GPAT)")
    if not (0 < width <= 4096 and 0 < height <= 4096):
        raise EvaluationArtError(f"{path}: pattern size {width}x{height} out of bounds")
    pixels = data[header_size : header_size + width * height * depth]
    if len(pixels) != width * height * depth:
        raise EvaluationArtError(f"{path}: pattern cut short")
    image = np.frombuffer(pixels, np.uint8).reshape(height, width, depth)
    if depth >= 3:
        return cv2.cvtColor(np.ascontiguousarray(image[:, :, :3]), cv2.COLOR_RGB2GRAY)
    return np.ascontiguousarray(image[:, :, 0])


def install_felt(pattern: Path, out_png: Path) -> None:
    """Write one GIMP pattern as a grey PNG felt texture."""
    out_png.parent.mkdir(parents=True, exist_ok=True)
    cv2.imwrite(str(out_png), read_gimp_pattern(pattern))


@dataclass(frozen=True)
class Deck:
    """One held-out design: 52 RGBA faces and each face's top-left index box as fractions
    ``(x0, y0, x1, y1)`` of the card (the bottom-right index is that box turned 180 degrees)."""

    name: str
    faces: dict[str, np.ndarray] = field(repr=False)
    index_boxes: dict[str, tuple[float, float, float, float]] = field(repr=False)


def load_deck(folder: Path) -> Deck:
    """Load ``folder/<CODE>.png`` (or ``.jpg``, ``.jpeg``: a photographed face, opaque) for
    all 52 codes and find each corner index."""
    if not folder.is_dir():
        raise EvaluationArtError(f"no such design folder: {folder}")
    faces: dict[str, np.ndarray] = {}
    for code in CODES:
        path = next((p for p in (folder / f"{code}{ext}" for ext in (".png", ".jpg", ".jpeg"))
                     if p.is_file()), folder / f"{code}.png")
        try:
            face = read_image(path, keep_alpha=True)
        except ImageFileError as error:
            raise EvaluationArtError(f"{path}: face {code}: {error.why}") from None
        if face.ndim == 3 and face.shape[2] == 3:
            face = np.dstack([face, np.full(face.shape[:2], 255, np.uint8)])
        if face.ndim != 3 or face.shape[2] != 4:
            raise EvaluationArtError(f"{path}: face {code} is neither colour nor RGBA")
        faces[code] = face
    return Deck(folder.name, faces, {code: index_box(face) for code, face in faces.items()})


def index_box(face: np.ndarray) -> tuple[float, float, float, float]:
    """The top-left corner index of a face: the dark or coloured marks in the corner strip.

    The strip is the card's left 22% by top 38%, less an edge band of 4% (the card's outline and
    any frame line). Marks are pixels that differ from the paper (the face's median colour near
    its centre-left edge) by more than 80 levels summed over the channels; of them, the connected
    parts that start within the strip's top-left two thirds form the index (a pip or picture
    starts further in). If nothing is found the strip's top-left quarter stands in.
    """
    h, w = face.shape[:2]
    band = max(2, round(0.04 * w))
    x1, y1 = round(0.22 * w), round(0.38 * h)
    strip = face[band:y1, band:x1]
    paper = np.median(face[h // 2 - 4 : h // 2 + 4, band : 2 * band, :3].reshape(-1, 3), axis=0)
    marks = (np.abs(strip[:, :, :3].astype(np.int16) - paper).sum(axis=2) > 80) & (
        strip[:, :, 3] > 200)
    count, _, stats, _ = cv2.connectedComponentsWithStats(marks.astype(np.uint8), connectivity=8)
    xs: list[int] = []
    ys: list[int] = []
    sw, sh = strip.shape[1], strip.shape[0]
    for i in range(1, count):
        x, y, bw, bh, area = (int(v) for v in stats[i])
        if area < 3 or x > 0.67 * sw or y > 0.67 * sh or x + bw >= sw or y + bh >= sh:
            continue
        xs += [x, x + bw]
        ys += [y, y + bh]
    if not xs:
        return (0.04, 0.04, 0.13, 0.20)
    pad = 0.008
    return (max(0.0, (band + min(xs)) / w - pad), max(0.0, (band + min(ys)) / h - pad),
            min(1.0, (band + max(xs)) / w + pad), min(1.0, (band + max(ys)) / h + pad))


def installed_decks(root: Path | None = None) -> list[str]:
    """Names of the held-out designs installed (each with its 52 faces)."""
    base = (root or evaluation_art_dir()) / "designs"
    if not base.is_dir():
        return []
    return sorted(p.name for p in base.iterdir()
                  if all((p / f"{code}.png").is_file() for code in CODES))


def felt_textures(root: Path | None = None) -> dict[str, np.ndarray]:
    """The installed photographic felt textures, grey, by name (empty when none)."""
    base = (root or evaluation_art_dir()) / "felt"
    textures: dict[str, np.ndarray] = {}
    for png in sorted(base.glob("*.png")) if base.is_dir() else []:
        try:
            image = read_image(png, keep_alpha=True)
        except ImageFileError as error:
            raise EvaluationArtError(f"{png}: felt texture: {error.why}") from None
        textures[png.stem] = image if image.ndim == 2 else cv2.cvtColor(
            image[:, :, :3], cv2.COLOR_BGR2GRAY)
    return textures
