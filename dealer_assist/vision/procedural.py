"""Drawn decks: 52 faces made from installed fonts and parametric suit shapes, for training.

Seventeen real designs are too few for a reader to learn what every casino's indices look like:
it learns those fonts. A drawn deck picks a rank font (any of the Debian fonts that
``scripts/install-card-art.sh`` installs), a suit drawing (a font's suit glyphs or shapes built
from circles and curves with random proportions), index size and placement, ink colours, paper
tint, border and pip layout, so each deck differs from the last in exactly the ways real decks
differ. Training only: needs Pillow (the training extra) for the fonts.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import cv2
import numpy as np

from dealer_assist.vision.artwork import CARD_CODES, CARD_WIDTH_PX, RANKS, Design

FONT_DIRS = (Path("/usr/share/fonts/truetype"), Path("/usr/share/fonts/opentype"))
#: Fonts whose glyphs are not letters and digits (symbols, dingbats, scripts, maths).
_NOT_TEXT = ("StandardSymbols", "D050000L", "Z003", "MathTeX")
#: Fonts with their own suit glyphs (U+2660 spade, U+2663 club, U+2665 heart, U+2666 diamond),
#: one or two faces of each family that draws them, so that no family's suits dominate.
#: Checked by eye: FreeSerifBold swaps spade and club; StandardSymbolsPS maps none of them.
_SUIT_GLYPH_FONTS = (
    "DejaVuSans.ttf", "DejaVuSans-Bold.ttf", "DejaVuSerif.ttf", "DejaVuSansMono.ttf",
    "FreeSerif.ttf", "FreeSans.ttf", "FreeSansBold.ttf", "FreeMono.ttf",
    "LiberationSans-Regular.ttf", "LiberationSerif-Regular.ttf", "LiberationMono-Regular.ttf",
    "C059-Roman.otf", "C059-Bold.otf", "NimbusSans-Regular.otf", "NimbusRoman-Regular.otf",
    "NimbusMonoPS-Regular.otf", "P052-Roman.otf", "URWBookman-Light.otf", "URWBookman-Demi.otf",
    "URWGothic-Book.otf", "URWGothic-Demi.otf",
    "STIXGeneral-Regular.otf", "STIX-Regular.otf", "Symbola_hint.ttf", "opens___.ttf")
_SUIT_CHARS = {"S": "\u2660", "C": "\u2663", "H": "\u2665", "D": "\u2666"}
_SUIT_FACE_GRID = 96  # suit masks are drawn at this size, then resized
_UNMAPPED = "\U000F0001"  # a private-use code point no font here maps


def installed_fonts() -> list[Path]:
    """Every TrueType/OpenType font under the Debian font folders."""
    return fonts_under(FONT_DIRS)


def fonts_under(folders: tuple[Path, ...] | list[Path]) -> list[Path]:
    """Every TrueType/OpenType font under ``folders`` (a missing folder holds none), sorted."""
    return sorted(p for d in folders if d.is_dir() for p in d.rglob("*")
                  if p.suffix.lower() in (".ttf", ".otf"))


def text_fonts(fonts: list[Path]) -> list[Path]:
    """The fonts fit for a rank index: not a symbol or script face, and drawing every rank
    (symbol faces such as STIX's size variants or OpenSymbol map some letters or none)."""
    return [f for f in fonts
            if not any(tag in f.name for tag in _NOT_TEXT) and _draws_every_rank(f)]


def _draws_every_rank(font_path: Path) -> bool:
    from PIL import ImageFont

    font = ImageFont.truetype(str(font_path), size=40)
    missing = np.asarray(font.getmask(_UNMAPPED))  # the font's box for a glyph it lacks
    for rank in RANKS:
        mask = np.asarray(font.getmask(_index_text(rank)))
        if mask.max(initial=0) == 0 or np.array_equal(mask, missing):
            return False
    return True


def _index_text(rank: str) -> str:
    """What a corner index prints for a rank ("T" is printed "10")."""
    return "10" if rank == "T" else rank


def drawn_designs(count: int, seed: int, fonts: list[Path] | None = None, *,
                  weights: bool = False, upright_share: float = 0.0) -> list[Design]:
    """``count`` drawn decks, reproducible from ``seed``. ``weights``: each deck also prints
    its indices lighter or bolder than its fonts draw them; ``upright_share``: that share of
    the decks prints its bottom-right index upright, or its rank alone upright, as some decks
    do, rather than turned over (half of them each way).
    Each of the two draws from a random stream of its own, so the decks are otherwise the ones
    drawn without it."""
    if not 0.0 <= upright_share <= 1.0:
        raise ValueError(f"upright_share {upright_share} is not a share between 0 and 1")
    if count == 0:
        return []
    all_fonts = fonts if fonts is not None else installed_fonts()
    rank_fonts = text_fonts(all_fonts)
    suit_fonts = [f for f in all_fonts if f.name in _SUIT_GLYPH_FONTS]
    if not rank_fonts:
        raise FileNotFoundError(f"no fonts under {', '.join(map(str, FONT_DIRS))} "
                                "(run scripts/install-card-art.sh)")
    rng = np.random.default_rng(seed)
    weight_rng = np.random.default_rng((seed, 1)) if weights else None
    layout_rng = np.random.default_rng((seed, 2))
    return [_drawn_design(rng, f"drawn-{seed}-{i}", rank_fonts, suit_fonts,
                          _stroke_weight(weight_rng) if weight_rng is not None else 0.0,
                          bottom=_bottom_layout(layout_rng, upright_share))
            for i in range(count)]


#: How a deck prints its bottom-right index: the top-left one turned over (most decks), the
#: same index upright, or turned over with its rank alone printed upright (so the suit, turned,
#: lies above the rank).
TURNED, UPRIGHT, RANK_UPRIGHT = "turned", "upright", "rank upright"


def _bottom_layout(rng: np.random.Generator, upright_share: float) -> str:
    """A deck's bottom index: ``upright_share`` of decks one of the two upright layouts."""
    upright, which = rng.random(2)
    return TURNED if upright >= upright_share else UPRIGHT if which < 0.5 else RANK_UPRIGHT


def _stroke_weight(rng: np.random.Generator) -> float:
    """A deck's ink weight: the share of a glyph's height its strokes grow by (thinned when
    negative); a third of decks print as drawn, the rest from light to heavy plastic-deck bold."""
    return 0.0 if rng.random() < 1 / 3 else float(rng.uniform(-0.025, 0.06))


def _weighted(mask: np.ndarray, weight: float) -> np.ndarray:
    """``mask`` with its strokes grown (``weight`` > 0, then cropped tight again) or thinned in
    place by ``weight`` of its height; thinning never removes a stroke altogether."""
    k = round(abs(weight) * mask.shape[0])
    if k == 0:
        return mask
    kernel = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * k + 1, 2 * k + 1))
    if weight < 0:
        thinned = cv2.erode(mask, kernel)
        return thinned if (thinned > 40).any() else mask
    grown = cv2.dilate(cv2.copyMakeBorder(mask, k, k, k, k, cv2.BORDER_CONSTANT, value=0), kernel)
    ys, xs = np.nonzero(grown > 40)
    return grown[ys.min() : ys.max() + 1, xs.min() : xs.max() + 1]


def mixed_with_drawn(real: list[Design], drawn: list[Design]) -> list[Design]:
    """The designs to draw scenes from, one per scene: the real ones repeated so that about
    half the scenes show a real deck and half a drawn one."""
    return real * max(1, round(len(drawn) / max(1, len(real)))) + drawn


# --- suit shapes -----------------------------------------------------------------------------

def _heart(rng: np.random.Generator) -> np.ndarray:
    g = _SUIT_FACE_GRID
    mask = np.zeros((g, g), np.uint8)
    r = g * rng.uniform(0.22, 0.28)
    sep = r * rng.uniform(0.75, 1.0)
    cy = g * 0.35
    for sx in (-1, 1):
        cv2.circle(mask, (round(g / 2 + sx * sep), round(cy)), round(r), 255, -1, cv2.LINE_AA)
    tip = g * rng.uniform(0.9, 0.97)
    side = cy + r * rng.uniform(0.2, 0.6)
    pts = np.array([[g / 2 - sep - r * 0.97, side], [g / 2, tip], [g / 2 + sep + r * 0.97, side],
                    [g / 2, cy]], np.int32)
    cv2.fillPoly(mask, [pts], 255, cv2.LINE_AA)
    return mask


def _spade(rng: np.random.Generator) -> np.ndarray:
    g = _SUIT_FACE_GRID
    body = cv2.flip(_heart(rng), 0)
    body = cv2.resize(body, (g, round(g * rng.uniform(0.72, 0.85))))
    mask = np.zeros((g, g), np.uint8)
    mask[: body.shape[0]] = body
    _stem(rng, mask, top=body.shape[0] * 0.62)
    return mask


def _club(rng: np.random.Generator) -> np.ndarray:
    g = _SUIT_FACE_GRID
    mask = np.zeros((g, g), np.uint8)
    r = g * rng.uniform(0.17, 0.26)
    # lobes from well apart to merged into one blob (heavy plastic-deck clubs), inside the grid
    spread = min(r * rng.uniform(0.75, 1.35), g * 0.49 - r)
    cx, cy = g / 2, g * 0.26 + r * 0.3
    lobes = [(cx, cy), (cx - spread, cy + spread * rng.uniform(0.95, 1.3)),
             (cx + spread, cy + spread * rng.uniform(0.95, 1.3))]
    for x, y in lobes:
        cv2.circle(mask, (round(x), round(y)), round(r), 255, -1, cv2.LINE_AA)
    cv2.circle(mask, (round(cx), round(cy + spread * 0.8)), round(r * 0.7), 255, -1, cv2.LINE_AA)
    _stem(rng, mask, top=cy + spread)
    return mask


def _stem(rng: np.random.Generator, mask: np.ndarray, top: float) -> None:
    g = _SUIT_FACE_GRID
    neck = g * rng.uniform(0.03, 0.07)
    foot = g * rng.uniform(0.14, 0.3)
    bottom = g * rng.uniform(0.93, 0.99)
    pts = np.array([[g / 2 - neck, top], [g / 2 + neck, top], [g / 2 + foot, bottom],
                    [g / 2 - foot, bottom]], np.int32)
    cv2.fillPoly(mask, [pts], 255, cv2.LINE_AA)


def _diamond(rng: np.random.Generator) -> np.ndarray:
    g = _SUIT_FACE_GRID
    half_w = g * rng.uniform(0.3, 0.42)
    bulge = rng.uniform(-0.12, 0.08)  # < 0: sides curve in, > 0: out
    t = np.linspace(0, 1, 12)
    corners = [(g / 2, g * 0.03), (g / 2 + half_w, g / 2), (g / 2, g * 0.97),
               (g / 2 - half_w, g / 2)]
    pts = []
    for (x0, y0), (x1, y1) in zip(corners, corners[1:] + corners[:1], strict=True):
        nx, ny = (y1 - y0), -(x1 - x0)  # outward normal for this winding
        for s in t[:-1]:
            bend = bulge * 4 * s * (1 - s)
            pts.append((x0 + s * (x1 - x0) + bend * nx, y0 + s * (y1 - y0) + bend * ny))
    mask = np.zeros((g, g), np.uint8)
    cv2.fillPoly(mask, [np.array(pts, np.int32)], 255, cv2.LINE_AA)
    return mask


_SHAPES: dict[str, Callable[[np.random.Generator], np.ndarray]] = {
    "H": _heart, "S": _spade, "C": _club, "D": _diamond}


def _glyph(font_path: Path, text: str, height: int) -> np.ndarray:
    """A tight ink mask of ``text`` in ``font_path``, about ``height`` pixels tall."""
    from PIL import Image, ImageDraw, ImageFont

    font = ImageFont.truetype(str(font_path), size=max(8, height))
    x0, y0, x1, y1 = font.getbbox(text)
    image = Image.new("L", (int(x1 - x0) + 4, int(y1 - y0) + 4), 0)
    ImageDraw.Draw(image).text((2 - x0, 2 - y0), text, fill=255, font=font)
    mask = np.asarray(image)
    ys, xs = np.nonzero(mask > 40)
    if len(xs) == 0:
        return np.zeros((height, max(1, height // 2)), np.uint8)
    return mask[ys.min() : ys.max() + 1, xs.min() : xs.max() + 1]


def _fit(mask: np.ndarray, width: int, height: int) -> np.ndarray:
    return cv2.resize(mask, (max(1, width), max(1, height)), interpolation=cv2.INTER_AREA)


# --- one deck --------------------------------------------------------------------------------

def _drawn_design(rng: np.random.Generator, name: str, rank_fonts: list[Path],
                  suit_fonts: list[Path], weight: float = 0.0, *,
                  bottom: str = TURNED) -> Design:
    w = CARD_WIDTH_PX
    h = round(w * rng.uniform(1.38, 1.56))  # bridge to poker proportions
    rank_font = rank_fonts[rng.integers(len(rank_fonts))]
    suit_font = suit_fonts[rng.integers(len(suit_fonts))] if suit_fonts and rng.random() < 0.5 \
        else None
    shapes = {s: _SHAPES[s](rng) for s in "SHDC"} if suit_font is None else {
        s: _glyph(suit_font, c, _SUIT_FACE_GRID) for s, c in _SUIT_CHARS.items()}
    index_suits = {s: _weighted(mask, weight) for s, mask in shapes.items()}
    black = rng.integers(0, 50, 3)
    red = np.array([rng.integers(0, 70), rng.integers(0, 50), rng.integers(150, 235)])
    paper = np.clip(255 - rng.integers(0, 25) + rng.integers(-6, 7, 3), 200, 255)
    index_h = rng.uniform(0.09, 0.16) * h  # rank height; jumbo indices at the top end
    squeeze = rng.uniform(0.75, 1.25)  # width of the rank glyphs relative to the font's
    suit_h = index_h * rng.uniform(0.55, 0.95)
    margin_x, margin_y = w * rng.uniform(0.03, 0.07), h * rng.uniform(0.025, 0.05)
    gap = index_h * rng.uniform(0.05, 0.25)
    border = rng.random() < 0.4
    pip_scale = rng.uniform(0.13, 0.2)
    court_colours = rng.integers(0, 256, (3, 3))
    faces: dict[str, np.ndarray] = {}
    boxes: dict[str, tuple[float, float, float, float]] = {}
    for code in CARD_CODES:
        rank, suit = code[0], code[1]
        ink = (red if suit in "HD" else black).astype(np.float64)
        face = np.empty((h, w, 4), np.uint8)
        face[:, :, :3] = paper
        _round_corners(face, round(w * rng.uniform(0.03, 0.08)))  # sets the alpha channel
        if border:
            inset = round(w * 0.02)
            cv2.rectangle(face, (inset, inset), (w - 1 - inset, h - 1 - inset),
                          tuple(int(v) for v in ink), 1, cv2.LINE_AA)
        glyph = _weighted(_glyph(rank_font, _index_text(rank), round(index_h * 2)), weight)
        rank_w = round(glyph.shape[1] / glyph.shape[0] * index_h * squeeze)
        rank_mask = _fit(glyph, rank_w, round(index_h))
        suit_mask = index_suits[suit]
        suit_w = round(suit_mask.shape[1] / suit_mask.shape[0] * suit_h)
        suit_mask = _fit(suit_mask, suit_w, round(suit_h))
        column = max(rank_mask.shape[1], suit_mask.shape[1])
        x0, y0 = margin_x, margin_y
        rank_x = x0 + (column - rank_mask.shape[1]) / 2
        _ink(face, rank_mask, rank_x, y0, ink)
        _ink(face, suit_mask, x0 + (column - suit_mask.shape[1]) / 2, y0 + index_h + gap, ink)
        box = (x0 - 1, y0 - 1, x0 + column + 1, y0 + index_h + gap + suit_h + 1)
        boxes[code] = (box[0] / w, box[1] / h, box[2] / w, box[3] / h)
        _body(face, rank, shapes[suit], ink, pip_scale, court_colours, box, rng)
        # the bottom-right index, in the deck's layout (a 6 or 9 whose rank alone were upright
        # would show, the card turned, a 9 or 6 index: those two turn over whole)
        layout = TURNED if bottom == RANK_UPRIGHT and rank in "69" else bottom
        corner = np.zeros_like(face)
        corner[round(box[1]) : round(box[3]) + 1, round(box[0]) : round(box[2]) + 1] = \
            face[round(box[1]) : round(box[3]) + 1, round(box[0]) : round(box[2]) + 1]
        printed: np.ndarray
        if layout == UPRIGHT:  # the rectangle the turned index would cover, its content upright
            printed = np.roll(corner, (h - 1 - round(box[3]) - round(box[1]),
                                       w - 1 - round(box[2]) - round(box[0])), axis=(0, 1))
        else:
            printed = cv2.rotate(corner, cv2.ROTATE_180)
        if layout == RANK_UPRIGHT:  # the turned rank's rectangle, its content upright
            rx0, ry0 = round(rank_x), round(y0)
            rx1, ry1 = rx0 + rank_mask.shape[1] - 1, ry0 + rank_mask.shape[0] - 1
            printed[h - 1 - ry1 : h - ry0, w - 1 - rx1 : w - rx0] = \
                corner[ry0 : ry1 + 1, rx0 : rx1 + 1]
        if layout == TURNED:
            keep = printed[:, :, 3] > 0
        else:
            keep = (printed[:, :, 3] > 0) & (face[:, :, 3] > 0)  # the rounded corner stays
        face[keep] = printed[keep]
        faces[code] = face
    return Design(name, faces, boxes)


def _round_corners(face: np.ndarray, radius: int) -> None:
    h, w = face.shape[:2]
    alpha = np.zeros((h, w), np.uint8)
    cv2.rectangle(alpha, (radius, 0), (w - 1 - radius, h - 1), 255, -1)
    cv2.rectangle(alpha, (0, radius), (w - 1, h - 1 - radius), 255, -1)
    for cx, cy in ((radius, radius), (w - 1 - radius, radius), (radius, h - 1 - radius),
                   (w - 1 - radius, h - 1 - radius)):
        cv2.circle(alpha, (cx, cy), radius, 255, -1, cv2.LINE_AA)
    face[:, :, 3] = alpha


def _ink(face: np.ndarray, mask: np.ndarray, x: float, y: float, colour: np.ndarray) -> None:
    """Blend ``colour`` into ``face`` through ``mask`` with its top-left at (x, y)."""
    x0, y0 = round(x), round(y)
    h, w = mask.shape
    region = face[y0 : y0 + h, x0 : x0 + w, :3]
    a = mask[: region.shape[0], : region.shape[1], None] / 255.0
    region[:] = (region * (1 - a) + colour * a).astype(np.uint8)


#: Where the pips go: (column, row) in a 3 x 7 grid, the usual layouts.
_PIP_ROWS: dict[str, list[tuple[int, float]]] = {
    "A": [(1, 3)], "2": [(1, 0), (1, 6)], "3": [(1, 0), (1, 3), (1, 6)],
    "4": [(0, 0), (2, 0), (0, 6), (2, 6)], "5": [(0, 0), (2, 0), (1, 3), (0, 6), (2, 6)],
    "6": [(0, 0), (2, 0), (0, 3), (2, 3), (0, 6), (2, 6)],
    "7": [(0, 0), (2, 0), (1, 1.5), (0, 3), (2, 3), (0, 6), (2, 6)],
    "8": [(0, 0), (2, 0), (1, 1.5), (0, 3), (2, 3), (1, 4.5), (0, 6), (2, 6)],
    "9": [(0, 0), (2, 0), (0, 2), (2, 2), (1, 3), (0, 4), (2, 4), (0, 6), (2, 6)],
    "T": [(0, 0), (2, 0), (1, 1), (0, 2), (2, 2), (0, 4), (2, 4), (1, 5), (0, 6), (2, 6)],
}


def _body(face: np.ndarray, rank: str, suit_mask: np.ndarray, ink: np.ndarray,
          pip_scale: float, court_colours: np.ndarray, index_box: tuple[float, ...],
          rng: np.random.Generator) -> None:
    """Pips for number cards, a framed picture for courts, kept clear of the index corners."""
    h, w = face.shape[:2]
    left, right = index_box[2] + w * 0.04, w - index_box[2] - w * 0.04
    top, bottom = h * 0.1, h * 0.9
    if rank in "JQK":
        cv2.rectangle(face, (round(left), round(top)), (round(right), round(bottom)),
                      tuple(int(v) for v in ink), 1, cv2.LINE_AA)
        for _ in range(14):
            colour = tuple(int(v) for v in court_colours[rng.integers(3)])
            r = min(int(rng.integers(3, 18)), int(min(right - left, bottom - top) / 2) - 3)
            if r < 2:
                break  # an index so wide that no picture fits beside it
            x = rng.uniform(left + r + 2, right - r - 2)
            y = rng.uniform(top + r + 2, bottom - r - 2)
            cv2.ellipse(face, (round(x), round(y)), (r, int(rng.integers(3, r + 1))),
                        float(rng.uniform(0, 180)), 0, 360, (*colour, 255), -1, cv2.LINE_AA)
        size = round(w * pip_scale)
        pip = _fit(suit_mask, round(suit_mask.shape[1] / suit_mask.shape[0] * size), size)
        _ink(face, pip, left + 6, top + 6, ink)
        return
    size = round(w * (pip_scale * 2.2 if rank == "A" else pip_scale))
    pip = _fit(suit_mask, round(suit_mask.shape[1] / suit_mask.shape[0] * size), size)
    upside_down = cv2.flip(pip, -1)
    for col, row in _PIP_ROWS[rank]:
        x = max(left, left + (right - left) * (0.18 + 0.32 * col) - pip.shape[1] / 2)
        x = min(x, right - pip.shape[1])
        y = top + (bottom - top - pip.shape[0]) * (0.02 + 0.96 * row / 6)
        _ink(face, pip if row <= 3 else upside_down, x, y, ink)
