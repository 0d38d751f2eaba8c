"""Synthetic overhead Spanish 21 table scenes with exact corner-index labels (numpy + OpenCV).

A scene is drawn on the table plane: felt and its printed layout, the dealer's row, each seat's
cards overlapping as a dealer places them (with sideways doubled cards and split hands), chips,
hands and arms. Then the camera: a mild perspective, lamp glare, shadows, blur, sensor noise and
JPEG artefacts. Each card's two corner indices are labelled only where at least
``VISIBLE_FRACTION`` of the index is uncovered; an index partly covered (at least
``GLIMPSE_FRACTION`` of it seen, less than ``VISIBLE_FRACTION``) is listed apart as one that must
not be read (its suit or rank may be the part hidden).

Cards are 58-95 px wide in a 1280x720 frame by default: the size a table's camera must show
them at to read them (a 1280x720 view of a whole 2 m felt shows them about 35 px wide; see
docs/vision.md, "Resolution"), and the detector is trained and run at the frame's own pixel scale.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import cv2
import numpy as np

from dealer_assist.vision.artwork import CARD_CODES, Design

VISIBLE_FRACTION = 0.8
GLIMPSE_FRACTION = 0.2
FRAME_SIZE = (1280, 720)
MIN_SIDE, MAX_SIDE = 32, 8192


@dataclass(frozen=True)
class PlacedCard:
    """A card on the table: its code, its four corners (TL, TR, BR, BL of the face, in frame
    pixels) and whether it lies sideways (a doubled card)."""

    code: str
    corners: np.ndarray
    sideways: bool

    @property
    def center(self) -> tuple[float, float]:
        c = self.corners.mean(axis=0)
        return float(c[0]), float(c[1])


@dataclass(frozen=True)
class IndexLabel:
    """A visible corner index: class id (index in ``CARD_CODES``), box ``x0,y0,x1,y1`` in frame
    pixels and which placed card it belongs to."""

    class_id: int
    box: tuple[float, float, float, float]
    card: int

    @property
    def code(self) -> str:
        return CARD_CODES[self.class_id]


@dataclass(frozen=True)
class Blur:
    """The camera blur drawn for a frame: ``kind`` is "none", "gaussian" (``size``: its sigma in
    pixels) or "motion" (``size``: the streak's length in pixels)."""

    kind: str = "none"
    size: float = 0.0


@dataclass(frozen=True)
class Scene:
    """A rendered frame (BGR uint8), the cards on it, the visible index labels, the partly
    covered indices (``covered``: seen in part, too little to be read) and the camera blur drawn
    for it (none without the camera's effects)."""

    image: np.ndarray
    cards: tuple[PlacedCard, ...]
    labels: tuple[IndexLabel, ...]
    covered: tuple[IndexLabel, ...] = ()
    blur: Blur = Blur()


@dataclass(frozen=True)
class SceneConfig:
    """Knobs of the generator; defaults: a 7-seat table's cards at 1280x720, 58-95 px wide."""

    size: tuple[int, int] = FRAME_SIZE
    card_width: tuple[float, float] = (58.0, 95.0)
    seat_probability: float = 0.8
    occluder_probability: float = 0.5
    allow_tens: bool = True
    photometric: bool = True


def parse_frame_size(text: str) -> tuple[int, int]:
    """``"3072x1728"`` as ``(3072, 1728)``; ValueError unless it is two integers from
    ``MIN_SIDE`` (the felt's noise is drawn at an eighth of the frame, blurred) to ``MAX_SIDE``
    (an 8K frame)."""
    try:
        width, height = (int(v) for v in text.lower().split("x"))
    except ValueError:
        raise ValueError(f"{text!r}: expected WxH, e.g. 3072x1728") from None
    if not (MIN_SIDE <= width <= MAX_SIDE and MIN_SIDE <= height <= MAX_SIDE):
        raise ValueError(f"{text!r}: width and height must be from {MIN_SIDE} to {MAX_SIDE}")
    return width, height


def check_card_width(least: float, most: float,
                     size: tuple[int, int] = FRAME_SIZE) -> tuple[float, float]:
    """``(least, most)``, cards' widths in pixels; ValueError unless ``0 < least <= most`` and
    a card ``most`` wide (and 1.4 times as tall) fits in a frame of ``size``."""
    if not (0 < least <= most and math.isfinite(most)):
        raise ValueError("need 0 < LEAST <= MOST, finite")
    fits = min(size[0], size[1] / 1.4)
    if most > fits:
        raise ValueError(f"a card {most:g} px wide (1.4 times as tall) does not fit in a "
                         f"{size[0]}x{size[1]} frame: MOST at most {int(fits)}")
    return least, most


def render_scene(
    rng: np.random.Generator, designs: list[Design], config: SceneConfig | None = None
) -> Scene:
    """Render one table scene with cards from ``designs`` (one design per scene, as a shoe)."""
    cfg = config or SceneConfig()
    scene = _unlit_scene(rng, designs, cfg)
    if not cfg.photometric:
        return scene
    image, blur = _photometric(rng, scene.image)
    return replace(scene, image=image, blur=blur)


def render_frames(
    rng: np.random.Generator, designs: list[Design], frames: int,
    config: SceneConfig | None = None,
) -> list[Scene]:
    """One table scene (as :func:`render_scene` draws them) seen in ``frames`` frames by a fixed
    camera: the light (white balance, lamps, glare, blur, JPEG quality) is drawn once, and only
    the sensor noise changes from frame to frame."""
    cfg = config or SceneConfig()
    scene = _unlit_scene(rng, designs, cfg)
    if not cfg.photometric:
        return [scene] * frames
    light, sensor = (int(v) for v in rng.integers(2**63, size=2))
    exposure = Exposure.of(np.random.default_rng(light), scene.image)
    return [replace(scene, image=exposure.frame(np.random.default_rng([sensor, frame])),
                    blur=exposure.blur) for frame in range(frames)]


def _unlit_scene(rng: np.random.Generator, designs: list[Design], cfg: SceneConfig) -> Scene:
    """The cards, chips and arms on the felt as the tilted camera sees them, before its light,
    blur and noise."""
    width, height = cfg.size
    design = designs[int(rng.integers(len(designs)))]
    canvas = _felt(rng, width, height)
    owner = np.full((height, width), -1, np.int32)
    card_w = float(rng.uniform(*cfg.card_width))
    placements = _layout(rng, width, height, card_w, cfg.seat_probability)
    codes = _deal_codes(rng, len(placements), cfg.allow_tens)
    cards: list[PlacedCard] = []
    for (corners, sideways), code in zip(placements, codes, strict=True):
        _paste_card(canvas, owner, design.faces[code], corners, len(cards), rng)
        cards.append(PlacedCard(code, corners, sideways))
    if rng.random() < cfg.occluder_probability:
        _chips(rng, canvas, owner, cards, card_w)
    if rng.random() < cfg.occluder_probability:
        _arm(rng, canvas, owner, width, height, card_w)
    labels, covered = _visible_labels(cards, design, owner)
    homography = _camera_tilt(rng, width, height)
    image = cv2.warpPerspective(canvas, homography, (width, height), borderMode=cv2.BORDER_REFLECT)
    cards = [
        PlacedCard(c.code, _apply(homography, c.corners), c.sideways) for c in cards
    ]
    labels = [_warp_label(lab, homography) for lab in labels]
    covered = [_warp_label(lab, homography) for lab in covered]
    return Scene(image, tuple(cards), tuple(lab for lab in labels if _inside(lab, width, height)),
                 tuple(lab for lab in covered if _inside(lab, width, height)))


def render_layout(
    rng: np.random.Generator,
    design: Design,
    cards: list[tuple[str, float, float, float, float]],
    size: tuple[int, int] = FRAME_SIZE,
    photometric: bool = True,
    sensor: np.random.Generator | None = None,
) -> Scene:
    """Render chosen cards ``(code, centre x, centre y, width, angle in degrees)`` on felt, in
    order (later cards cover earlier ones); an angle near +-90 lays a card sideways.

    ``sensor``: frames of one fixed camera. The felt and the light (lamps, glare, blur, JPEG
    quality) then depend on ``rng``'s state alone, not on how many cards lie on the felt, and
    only the sensor noise, drawn from ``sensor``, changes from frame to frame (as
    :meth:`FixedView.frame`). Without it the light is drawn after the cards (a one-off scene)."""
    if sensor is not None:
        return FixedView.of(rng, design, cards, size, photometric).frame(sensor)
    width, height = size
    canvas = _felt(rng, width, height)
    unlit = _lay_cards(rng, design, cards, canvas)
    if not photometric:
        return unlit
    image, blur = _photometric(rng, canvas)
    return replace(unlit, image=image, blur=blur)


@dataclass(frozen=True)
class FixedView:
    """One layout of cards under one fixed camera: every :meth:`frame` is the same felt, cards
    and light, with fresh sensor noise. Rendering the layout and its light once and only the
    noise per frame costs a fraction of rendering each frame whole, with the same pixels."""

    unlit: Scene
    exposure: Exposure | None  # None: no camera effects (``photometric`` False)

    @classmethod
    def of(cls, rng: np.random.Generator, design: Design,
           cards: list[tuple[str, float, float, float, float]],
           size: tuple[int, int] = FRAME_SIZE, photometric: bool = True) -> FixedView:
        """The view of ``cards`` as :func:`render_layout` draws it with a ``sensor``."""
        width, height = size
        canvas = _felt(rng, width, height)
        light = np.random.default_rng(int(rng.integers(2**63)))
        unlit = _lay_cards(rng, design, cards, canvas)
        return cls(unlit, Exposure.of(light, canvas) if photometric else None)

    def frame(self, sensor: np.random.Generator) -> Scene:
        """The next frame, its noise drawn from ``sensor``."""
        if self.exposure is None:
            return self.unlit
        return replace(self.unlit, image=self.exposure.frame(sensor), blur=self.exposure.blur)


def _lay_cards(rng: np.random.Generator, design: Design,
               cards: list[tuple[str, float, float, float, float]], canvas: np.ndarray) -> Scene:
    """Paste ``cards`` on ``canvas`` (in place) in order: the unlit scene and its labels."""
    height, width = canvas.shape[:2]
    owner = np.full((height, width), -1, np.int32)
    placed: list[PlacedCard] = []
    for code, cx, cy, card_w, angle in cards:
        corners = _card_quad(cx, cy, card_w, angle)
        _paste_card(canvas, owner, design.faces[code], corners, len(placed), rng)
        placed.append(PlacedCard(code, corners, abs(abs(angle) % 180 - 90) < 45))
    labels, covered = _visible_labels(placed, design, owner)
    return Scene(canvas, tuple(placed), tuple(labels), tuple(covered))


def _deal_codes(rng: np.random.Generator, count: int, allow_tens: bool) -> list[str]:
    pool = [c for c in CARD_CODES if allow_tens or c[0] != "T"]
    decks = pool * (1 + count // len(pool))
    return [decks[i] for i in rng.permutation(len(decks))[:count]]


# --- layout -------------------------------------------------------------------------------------


def _card_quad(cx: float, cy: float, w: float, angle_deg: float) -> np.ndarray:
    """Corners TL, TR, BR, BL of an upright card of width ``w`` rotated by ``angle_deg``."""
    h = w * 1.4
    local = np.array([[-w / 2, -h / 2], [w / 2, -h / 2], [w / 2, h / 2], [-w / 2, h / 2]])
    a = math.radians(angle_deg)
    rot = np.array([[math.cos(a), -math.sin(a)], [math.sin(a), math.cos(a)]])
    return (local @ rot.T + [cx, cy]).astype(np.float32)


def _layout(
    rng: np.random.Generator, width: int, height: int, card_w: float, seat_probability: float
) -> list[tuple[np.ndarray, bool]]:
    """Where cards lie: the dealer's row across the top, seats along an arc below."""
    out: list[tuple[np.ndarray, bool]] = []
    # dealer row: left to right, each card partly covering the previous one
    n_dealer = int(rng.integers(1, 7))
    step = card_w * rng.uniform(0.35, 0.75)
    x = width / 2 - step * (n_dealer - 1) / 2 + rng.normal(0, width * 0.03)
    y = height * rng.uniform(0.1, 0.22)
    tilt = rng.normal(0, 4)
    for i in range(n_dealer):
        out.append((_card_quad(x + i * step, y + rng.normal(0, 2), card_w, tilt + rng.normal(0, 3)),
                    False))
    # seats on an arc centred above the frame (the dealer's side)
    seats = 7
    arc_cx, arc_cy = width / 2 + rng.normal(0, 20), -height * rng.uniform(0.15, 0.45)
    radius = height * rng.uniform(1.0, 1.3)
    spacing = rng.uniform(17.0, 21.0)
    for s in range(seats):
        if rng.random() > seat_probability:
            continue
        theta = math.radians(90 + (s - (seats - 1) / 2) * spacing)
        sx = arc_cx + radius * math.cos(theta)
        sy = arc_cy + radius * math.sin(theta)
        facing = math.degrees(theta) - 90  # card's top toward the dealer
        if rng.random() < 0.15:  # split: two hands side by side
            gap = card_w * rng.uniform(1.2, 1.6)
            for side in (-1, 1):
                hx = sx + side * gap / 2 * math.cos(math.radians(facing))
                hy = sy + side * gap / 2 * math.sin(math.radians(facing))
                out += _fan(rng, hx, hy, card_w, facing, _hand_size(rng))
        else:
            out += _fan(rng, sx, sy, card_w, facing, _hand_size(rng))
    return out


def _hand_size(rng: np.random.Generator) -> int:
    return int(rng.choice([1, 2, 2, 2, 3, 3, 3, 4, 4, 5]))


def _fan(
    rng: np.random.Generator, x: float, y: float, card_w: float, facing: float, count: int
) -> list[tuple[np.ndarray, bool]]:
    """One hand: each card placed up and to the right of the last, the index corner left clear.

    A doubled hand ends with its card turned sideways across the others.
    """
    dx, dy = card_w * rng.uniform(0.22, 0.4), -card_w * 1.4 * rng.uniform(0.12, 0.28)
    a = math.radians(facing)
    cards = []
    for i in range(count):
        lx, ly = i * dx, i * dy
        cx = x + lx * math.cos(a) - ly * math.sin(a)
        cy = y + lx * math.sin(a) + ly * math.cos(a)
        cards.append((_card_quad(cx, cy, card_w, facing + rng.normal(0, 4)), False))
    if count >= 2 and rng.random() < 0.25:
        lx, ly = (count - 1) * dx + card_w * 0.2, (count - 1) * dy + card_w * rng.uniform(0.3, 0.6)
        cx = x + lx * math.cos(a) - ly * math.sin(a)
        cy = y + lx * math.sin(a) + ly * math.cos(a)
        turn = 90.0 if rng.random() < 0.5 else -90.0
        cards.append((_card_quad(cx, cy, card_w, facing + turn + rng.normal(0, 5)), True))
    return cards


# --- drawing ------------------------------------------------------------------------------------


def _felt(rng: np.random.Generator, width: int, height: int) -> np.ndarray:
    palettes = [(40, 110, 30), (35, 90, 25), (110, 60, 20), (30, 30, 120), (60, 60, 60),
                (30, 80, 70)]
    base = np.array(palettes[int(rng.integers(len(palettes)))], np.float32) * rng.uniform(0.7, 1.3)
    coarse = rng.normal(0, 1, (height // 8, width // 8)).astype(np.float32)
    noise = cv2.GaussianBlur(coarse, (0, 0), 2)
    noise = cv2.resize(noise, (width, height))
    grain = rng.normal(0, 4, (height, width)).astype(np.float32)
    felt = base[None, None, :] + (noise * 10 + grain)[:, :, None]
    img = np.clip(felt, 0, 255).astype(np.uint8)
    ink = tuple(int(v) for v in np.clip(base * rng.uniform(1.5, 2.5) + 30, 0, 255))
    cx, cy = width / 2, -height * rng.uniform(0.1, 0.5)
    for r_scale in (1.0, 1.35):
        radius = int(height * rng.uniform(0.8, 1.0) * r_scale)
        cv2.ellipse(img, (int(cx), int(cy)), (radius, radius), 0, 20, 160, ink, 2, cv2.LINE_AA)
    for s in range(7):
        theta = math.radians(90 + (s - 3) * 17)
        r = height * 1.25
        px, py = int(cx + r * math.cos(theta)), int(cy + r * math.sin(theta))
        cv2.circle(img, (px, py), int(height * 0.05), ink, 2, cv2.LINE_AA)
    if rng.random() < 0.7:
        text = ["BLACKJACK PAYS 3 TO 2", "DEALER MUST HIT SOFT 17", "SPANISH 21",
                "INSURANCE 2 TO 1"]
        cv2.putText(img, text[int(rng.integers(len(text)))], (int(width * 0.3), int(height * 0.42)),
                    cv2.FONT_HERSHEY_SIMPLEX, rng.uniform(0.8, 1.4), ink, 2, cv2.LINE_AA)
    return img


def _paste_card(
    canvas: np.ndarray,
    owner: np.ndarray,
    face: np.ndarray,
    corners: np.ndarray,
    card_id: int,
    rng: np.random.Generator,
) -> None:
    h, w = face.shape[:2]
    src = np.array([[0, 0], [w, 0], [w, h], [0, h]], np.float32)
    x0, y0 = np.floor(corners.min(axis=0)).astype(int) - 4
    x1, y1 = np.ceil(corners.max(axis=0)).astype(int) + 4
    height, width = owner.shape
    cx0, cy0, cx1, cy1 = max(x0, 0), max(y0, 0), min(x1, width), min(y1, height)
    if cx0 >= cx1 or cy0 >= cy1:
        return
    m = cv2.getPerspectiveTransform(src, corners - np.array([cx0, cy0], np.float32))
    size = (cx1 - cx0, cy1 - cy0)
    warped = cv2.warpPerspective(face, m, size, flags=cv2.INTER_AREA)
    roi: np.ndarray = canvas[cy0:cy1, cx0:cx1].astype(np.float32)
    # a soft shadow under the card, offset away from the lamp
    shadow = cv2.GaussianBlur(warped[:, :, 3].astype(np.float32) / 255, (0, 0), 2.0)
    shadow = np.roll(shadow, (2, 2), axis=(0, 1)) * rng.uniform(0.2, 0.45)
    roi *= (1 - shadow)[:, :, None]
    alpha = warped[:, :, 3:4].astype(np.float32) / 255
    roi = roi * (1 - alpha) + warped[:, :, :3].astype(np.float32) * alpha
    canvas[cy0:cy1, cx0:cx1] = np.clip(roi, 0, 255).astype(np.uint8)
    owner[cy0:cy1, cx0:cx1][warped[:, :, 3] > 127] = card_id


def _chips(
    rng: np.random.Generator,
    canvas: np.ndarray,
    owner: np.ndarray,
    cards: list[PlacedCard],
    card_w: float,
) -> None:
    colours = [(230, 230, 230), (40, 40, 200), (50, 150, 50), (20, 20, 20), (160, 40, 140)]
    for _ in range(int(rng.integers(1, 5))):
        if cards and rng.random() < 0.6:
            cx, cy = cards[int(rng.integers(len(cards)))].center
            cx += rng.normal(0, card_w * 0.6)
            cy += rng.normal(0, card_w * 0.6)
        else:
            cx, cy = rng.uniform(0, canvas.shape[1]), rng.uniform(0, canvas.shape[0])
        r = int(card_w * rng.uniform(0.25, 0.4))
        colour = colours[int(rng.integers(len(colours)))]
        centre = (int(cx), int(cy))
        cv2.circle(canvas, centre, r, colour, -1, cv2.LINE_AA)
        for k in range(6):
            a = k * math.pi / 3
            p = (int(cx + r * 0.8 * math.cos(a)), int(cy + r * 0.8 * math.sin(a)))
            cv2.circle(canvas, p, max(2, r // 5), (245, 245, 245), -1, cv2.LINE_AA)
        cv2.circle(canvas, centre, int(r * 0.55), (200, 200, 200), 1, cv2.LINE_AA)
        cv2.circle(owner, centre, r, -2, -1)


def _arm(
    rng: np.random.Generator, canvas: np.ndarray, owner: np.ndarray, width: int, height: int,
    card_w: float,
) -> None:
    """A hand and forearm reaching in from an edge (a player's, or the dealer's from the top)."""
    skin = np.array([rng.uniform(60, 190), rng.uniform(90, 200), rng.uniform(130, 235)])
    sleeve = tuple(int(v) for v in rng.uniform(10, 200, 3))
    from_top = rng.random() < 0.4
    start = np.array([rng.uniform(0.1, 0.9) * width, -20.0 if from_top else height + 20.0])
    reach = np.array([rng.uniform(0.2, 0.8) * width, rng.uniform(0.15, 0.85) * height])
    direction = reach - start
    direction /= np.linalg.norm(direction) + 1e-6
    normal = np.array([-direction[1], direction[0]])
    arm_w = card_w * rng.uniform(0.8, 1.2)
    wrist = reach - direction * card_w * 0.9
    poly_arm = np.array([start + normal * arm_w * 0.7, wrist + normal * arm_w * 0.45,
                         wrist - normal * arm_w * 0.45, start - normal * arm_w * 0.7], np.int32)
    cv2.fillPoly(canvas, [poly_arm], sleeve, cv2.LINE_AA)
    cv2.fillPoly(owner, [poly_arm], -3)
    palm = np.array([wrist + normal * arm_w * 0.45, reach + normal * arm_w * 0.5,
                     reach + direction * card_w * 0.3, reach - normal * arm_w * 0.5,
                     wrist - normal * arm_w * 0.45], np.int32)
    colour = tuple(int(v) for v in skin)
    cv2.fillPoly(canvas, [palm], colour, cv2.LINE_AA)
    for k in range(4):  # fingers
        base = reach + normal * arm_w * (0.35 - 0.23 * k)
        tip = base + direction * card_w * rng.uniform(0.35, 0.6)
        cv2.line(canvas, tuple(base.astype(int)), tuple(tip.astype(int)), colour,
                 max(3, int(arm_w * 0.16)), cv2.LINE_AA)
        cv2.line(owner, tuple(base.astype(int)), tuple(tip.astype(int)), -3,
                 max(3, int(arm_w * 0.16)))
    cv2.fillPoly(owner, [palm], -3)


# --- labels -------------------------------------------------------------------------------------


def index_quads(card: PlacedCard, box: tuple[float, float, float, float]) -> list[np.ndarray]:
    """The two corner-index quads of a placed card (top-left, then bottom-right turned 180)."""
    x0, y0, x1, y1 = box
    tl = np.array([[x0, y0], [x1, y0], [x1, y1], [x0, y1]])
    br = 1.0 - tl
    out = []
    for quad in (tl, br):
        m = cv2.getPerspectiveTransform(
            np.array([[0, 0], [1, 0], [1, 1], [0, 1]], np.float32), card.corners.astype(np.float32))
        out.append(cv2.perspectiveTransform(quad[None].astype(np.float32), m)[0])
    return out


def _visible_labels(
    cards: list[PlacedCard], design: Design, owner: np.ndarray
) -> tuple[list[IndexLabel], list[IndexLabel]]:
    """The indices seen whole enough to read, and those seen only in part."""
    labels: list[IndexLabel] = []
    covered: list[IndexLabel] = []
    for card_id, card in enumerate(cards):
        for quad in index_quads(card, design.index_boxes[card.code]):
            x0, y0 = np.floor(quad.min(axis=0)).astype(int)
            x1, y1 = np.ceil(quad.max(axis=0)).astype(int) + 1
            h, w = owner.shape
            if x0 < 0 or y0 < 0 or x1 > w or y1 > h:
                continue
            mask = np.zeros((y1 - y0, x1 - x0), np.uint8)
            cv2.fillPoly(mask, [np.round(quad - [x0, y0]).astype(np.int32)], 1)
            area = int(mask.sum())
            if area == 0:
                continue
            seen = int((owner[y0:y1, x0:x1][mask > 0] == card_id).sum())
            if seen < GLIMPSE_FRACTION * area:
                continue
            box = (float(quad[:, 0].min()), float(quad[:, 1].min()),
                   float(quad[:, 0].max()), float(quad[:, 1].max()))
            label = IndexLabel(CARD_CODES.index(card.code), box, card_id)
            (labels if seen >= VISIBLE_FRACTION * area else covered).append(label)
    return labels, covered


def _apply(homography: np.ndarray, points: np.ndarray) -> np.ndarray:
    return cv2.perspectiveTransform(points[None].astype(np.float32), homography)[0]


def _warp_label(label: IndexLabel, homography: np.ndarray) -> IndexLabel:
    x0, y0, x1, y1 = label.box
    pts = _apply(homography, np.array([[x0, y0], [x1, y0], [x1, y1], [x0, y1]], np.float32))
    box = (float(pts[:, 0].min()), float(pts[:, 1].min()),
           float(pts[:, 0].max()), float(pts[:, 1].max()))
    return IndexLabel(label.class_id, box, label.card)


def _inside(label: IndexLabel, width: int, height: int) -> bool:
    x0, y0, x1, y1 = label.box
    return x0 >= 0 and y0 >= 0 and x1 <= width and y1 <= height


# --- camera -------------------------------------------------------------------------------------


def _camera_tilt(rng: np.random.Generator, width: int, height: int) -> np.ndarray:
    src = np.array([[0, 0], [width, 0], [width, height], [0, height]], np.float32)
    jitter = rng.normal(0, 0.025, (4, 2)) * [width, height]
    return cv2.getPerspectiveTransform(src, (src + jitter).astype(np.float32))


def _photometric(rng: np.random.Generator, image: np.ndarray) -> tuple[np.ndarray, Blur]:
    """A one-off shot of ``image``: light, blur, sensor noise and JPEG, all drawn from ``rng``."""
    lit, blur, sigma = _light(rng, image)
    lit += rng.normal(0, sigma, lit.shape)
    return _sensor_out(lit, int(rng.integers(35, 95))), blur


@dataclass(frozen=True)
class Exposure:
    """An image under a fixed camera's light (white balance, lamps, glare, blur; float32, before
    the sensor), with the sensor's noise level and JPEG quality; each :meth:`frame` adds fresh
    noise."""

    lit: np.ndarray
    blur: Blur
    sigma: float
    quality: int

    @classmethod
    def of(cls, rng: np.random.Generator, image: np.ndarray) -> Exposure:
        lit, blur, sigma = _light(rng, image)
        return cls(lit, blur, sigma, int(rng.integers(35, 95)))

    def frame(self, sensor: np.random.Generator) -> np.ndarray:
        """One frame (BGR uint8): the lit image with noise drawn from ``sensor``, JPEG-coded."""
        noisy = self.lit.copy()
        noisy += sensor.normal(0, self.sigma, noisy.shape)
        return _sensor_out(noisy, self.quality)


def _light(rng: np.random.Generator, image: np.ndarray) -> tuple[np.ndarray, Blur, float]:
    """``image`` lit (float32) and blurred, the blur drawn, and the sensor noise's sigma."""
    h, w = image.shape[:2]
    img: np.ndarray = image.astype(np.float32)
    img *= rng.uniform(0.85, 1.15, 3)[None, None, :]  # white balance
    img = img * rng.uniform(0.7, 1.2) + rng.uniform(-20, 20)
    # lamp falloff and a soft shadow band
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    lx, ly = rng.uniform(0, w), rng.uniform(0, h)
    falloff = 1 - rng.uniform(0, 0.35) * (((xx - lx) / w) ** 2 + ((yy - ly) / h) ** 2)
    img *= falloff[:, :, None]
    for _ in range(int(rng.integers(0, 3))):  # glare spots from the lamps
        gx, gy = rng.uniform(0, w), rng.uniform(0, h)
        sx, sy = rng.uniform(20, 120), rng.uniform(15, 80)
        spot = np.exp(-(((xx - gx) / sx) ** 2 + ((yy - gy) / sy) ** 2))
        img += (spot * rng.uniform(60, 160))[:, :, None]
    img = np.clip(img, 0, 255)
    blur = Blur()
    if rng.random() < 0.5:
        blur = Blur("gaussian", float(rng.uniform(0.3, 1.1)))
        img = cv2.GaussianBlur(img, (0, 0), blur.size)
    elif rng.random() < 0.4:  # motion blur from a moving hand or camera shake
        k = int(rng.integers(3, 6))
        blur = Blur("motion", float(k))
        kernel = np.zeros((k, k), np.float32)
        kernel[k // 2, :] = 1 / k
        rot = cv2.getRotationMatrix2D((k / 2 - 0.5, k / 2 - 0.5), rng.uniform(0, 180), 1)
        img = cv2.filter2D(img, -1, cv2.warpAffine(kernel, rot, (k, k)))
    return img, blur, float(rng.uniform(1, 7))


def _sensor_out(noisy: np.ndarray, quality: int) -> np.ndarray:
    """The noisy float image as the camera delivers it: 8-bit, through JPEG at ``quality``."""
    out = np.clip(noisy, 0, 255).astype(np.uint8)
    ok, buf = cv2.imencode(".jpg", out, [cv2.IMWRITE_JPEG_QUALITY, quality])
    decoded = cv2.imdecode(buf, cv2.IMREAD_COLOR) if ok else None
    return out if decoded is None else decoded
