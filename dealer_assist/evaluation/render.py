"""Overhead table sequences rendered apart from the training generator, with exact answers.

A :class:`Sequence` is one deal seen by a fixed camera over ``frames`` frames: cards land in
dealing order (one per player seat round the arc, then the dealer, again), several a frame or, at
a table's pace, one at a time; each frame shows those dealt so far. Every card carries its
ground truth (:class:`TrueCard`): code, design, where it lies (its four corners in frame
pixels and their box, clipped to the frame), its width in pixels (the mean of its two short
edges as the camera sees them), whether it is the dealer's or a player's, sideways (a doubled
card, turned a quarter), and per frame how much of its corner indices shows.

How it differs from the training generator (``dealer_assist.vision.scenes``), on purpose:
- felt: a photographic texture (GIMP's burlap, leather, paper, fibres, granite) tinted to a
  cloth colour and tiled at a random scale and angle, or, where none is installed, a woven
  pattern of its own; a printed arc, betting boxes and an insurance line in gold or white ink;
- layout: a dealer's row (spread or overlapping) and the seats of an arc that the frame shows
  (three to five of seven, four card widths apart); each hand a
  cascade as dealers lay them (up and right, right only or down and right, at offsets from a
  fifth to a half of a card, some tight enough to cover part of an index), splits side by side,
  doubles turned a quarter across the hand;
- light: one to three lamps (soft round pools of their own colour) and a spill of the room's
  light, card shadows away from the main lamp, a specular sheen on the cards;
- camera: a tilt of the whole table plane (a homography), lens vignetting, defocus by a disk
  (not a Gaussian), motion streaks in single frames, shot and read noise, white balance,
  gamma, JPEG at quality 45-92.
Nothing here imports the training scene code.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import cv2
import numpy as np

from dealer_assist.evaluation.artwork import CODES, Deck

FRAME_W, FRAME_H = 1280, 720
#: Least share of an index's pixels uncovered (and in the frame) for it to count as visible.
VISIBLE_SHARE = 0.8
#: Frames a card must show a visible index in to count in the per-card (tracked) figures.
TRACK_FRAMES = 3


@dataclass
class TrueCard:
    """Ground truth of one physical card (see the module's docstring)."""

    number: int
    code: str
    design: str
    corners: np.ndarray  # (4, 2) float32: the face's top-left, top-right, bottom-right, bottom-left
    box: tuple[float, float, float, float]  # x0, y0, x1, y1, clipped to the frame
    width_px: float
    place: str  # "dealer" or "player"
    seat: int  # 0 for the dealer, 1.. for players
    sideways: bool
    arrives: int  # the first frame it is on the felt
    index_quads: tuple[np.ndarray, np.ndarray] = field(repr=False)  # both corner indices
    #: per frame from ``arrives``: the larger share of its two indices that shows
    shown: list[float] = field(default_factory=list)

    def visible(self, frame: int) -> bool:
        """True when an index of this card shows (at least :data:`VISIBLE_SHARE`) in ``frame``."""
        k = frame - self.arrives
        return 0 <= k < len(self.shown) and self.shown[k] >= VISIBLE_SHARE

    def trackable(self) -> bool:
        """True when its index shows in at least :data:`TRACK_FRAMES` frames."""
        return sum(s >= VISIBLE_SHARE for s in self.shown) >= TRACK_FRAMES


@dataclass
class Sequence:
    """One deal over ``len(frames)`` frames (BGR uint8, decoded from JPEG) and its cards."""

    design: str
    cards: list[TrueCard]
    frames: list[np.ndarray] = field(repr=False)
    blur: list[str]  # per frame: "none", "defocus R px", "motion L px"
    sharp: bool  # the defocus drawn is within the install's sharpness bound (radius <= 1 px)
    felt: str

    def cards_on(self, frame: int) -> list[TrueCard]:
        """The cards on the felt in ``frame``, in the order they were laid (last on top)."""
        return [c for c in self.cards if c.arrives <= frame]

    def distances_at(self, x: float, y: float, frame: int) -> list[tuple[TrueCard, float]]:
        """Each card on the felt in ``frame`` with the signed distance (pixels) of point
        ``(x, y)`` from its outline: positive inside, 0 on it; topmost last."""
        return [(c, cv2.pointPolygonTest(c.corners, (float(x), float(y)), True))
                for c in self.cards_on(frame)]


# ---------------------------------------------------------------- felt

_CLOTH = [(38, 96, 30), (30, 80, 22), (70, 60, 20), (90, 40, 20), (30, 30, 110), (50, 25, 80),
          (45, 45, 45), (20, 70, 90)]  # BGR: greens, teal, blue, navy, burgundy, grey, red-brown


def _felt(rng: np.random.Generator, textures: dict[str, np.ndarray]) -> tuple[np.ndarray, str]:
    """A felt of frame size, float32 BGR albedo in 0..1, and what it is made of."""
    base = np.array(_CLOTH[rng.integers(len(_CLOTH))], np.float32) / 255.0
    base *= rng.uniform(0.8, 1.25, 3).astype(np.float32)
    if textures:
        name = sorted(textures)[int(rng.integers(len(textures)))]
        tex = textures[name].astype(np.float32) / 255.0
        scale = rng.uniform(0.6, 2.5)
        tile = cv2.resize(tex, None, fx=scale, fy=scale, interpolation=cv2.INTER_LINEAR)
        reps = (FRAME_H * 2 // tile.shape[0] + 2, FRAME_W * 2 // tile.shape[1] + 2)
        big = np.tile(tile, reps)
        centre = (big.shape[1] / 2, big.shape[0] / 2)
        turn = cv2.getRotationMatrix2D(centre, float(rng.uniform(0, 180)), 1.0)
        turn[:, 2] -= (centre[0] - FRAME_W / 2, centre[1] - FRAME_H / 2)
        grain = cv2.warpAffine(big, turn, (FRAME_W, FRAME_H), flags=cv2.INTER_LINEAR,
                               borderMode=cv2.BORDER_REFLECT)
        grain = grain - cv2.blur(grain, (31, 31)) + float(grain.mean())  # keep the texture
        grain = (grain - grain.mean()) * rng.uniform(0.3, 0.8) + 1.0
    else:
        name = "woven"
        yy, xx = np.mgrid[0:FRAME_H, 0:FRAME_W].astype(np.float32)
        period = rng.uniform(2.5, 5.0)
        weave = np.sin(xx * 2 * np.pi / period) * np.sin(yy * 2 * np.pi / period)
        fuzz = cv2.GaussianBlur(rng.normal(0, 1, (FRAME_H, FRAME_W)).astype(np.float32), (0, 0), 2)
        grain = 1.0 + 0.05 * weave + 0.06 * fuzz
    felt = grain[:, :, None] * base[None, None, :]
    _print_layout(felt, rng)
    return np.clip(felt, 0, 1), name


def _print_layout(felt: np.ndarray, rng: np.random.Generator) -> None:
    ink = (0.35, 0.7, 0.8) if rng.random() < 0.6 else (0.85, 0.85, 0.85)
    thick = int(rng.integers(2, 5))
    centre = (FRAME_W // 2 + int(rng.integers(-30, 30)), int(rng.integers(-420, -300)))
    for radius in (int(rng.integers(760, 820)), int(rng.integers(560, 620))):
        cv2.ellipse(felt, centre, (radius, radius), 0, 25, 155, ink, thick, cv2.LINE_AA)
    for k in range(7):
        a = math.radians(150 - k * 20)
        x = centre[0] + 690 * math.cos(a)
        y = centre[1] + 690 * math.sin(a)
        cv2.circle(felt, (int(x), int(y)), int(rng.integers(26, 36)), ink, 2, cv2.LINE_AA)


# ---------------------------------------------------------------- layout


@dataclass
class _Placed:
    code: str
    centre: tuple[float, float]  # on the table plane, in pixels
    angle: float  # degrees, the card's up direction turned from the frame's up
    place: str
    seat: int
    sideways: bool
    order: int


def _fan(rng: np.random.Generator, start: tuple[float, float], angle: float, count: int,
         width: float, height: float, style: str) -> list[tuple[tuple[float, float], float]]:
    """Positions of a hand's cards, each laid on the one before as dealers cascade them."""
    dx = rng.uniform(0.2, 0.5) * width
    dy = {"up": -rng.uniform(0.12, 0.3), "flat": rng.uniform(-0.04, 0.04),
          "down": rng.uniform(0.12, 0.3)}[style] * height
    a = math.radians(angle)
    cos, sin = math.cos(a), math.sin(a)
    out = []
    for k in range(count):
        lx, ly = k * dx + rng.normal(0, 1.5), k * dy + rng.normal(0, 1.5)
        out.append(((start[0] + lx * cos - ly * sin, start[1] + lx * sin + ly * cos),
                    angle + float(rng.normal(0, 2.5))))
    return out


def _layout(rng: np.random.Generator, width: float, height: float) -> list[_Placed]:
    codes = list(rng.permutation(CODES))
    placed: list[_Placed] = []
    hands: list[tuple[int, list[tuple[tuple[float, float], float]], bool]] = []
    # Seats on an arc round the dealer, a betting spot about four card widths from the next:
    # a frame whose cards are 60-95 px wide shows three to five of the seven.
    radius = rng.uniform(7.5, 9.5) * width
    step = rng.uniform(3.3, 4.3) * width / radius
    phase = rng.uniform(-0.5, 0.5) * step
    centre = (FRAME_W / 2 + rng.uniform(-30, 30), rng.uniform(520, 580) - radius)
    for s in range(7):
        a = math.pi / 2 + (s - 3) * step + phase
        a_deg = math.degrees(a)
        seat_xy = (centre[0] + radius * math.cos(a), centre[1] + radius * math.sin(a))
        if not 0.6 * width < seat_xy[0] < FRAME_W - 1.8 * width or rng.random() < 0.12:
            continue  # off the frame, or an empty seat
        facing = 0.8 * (a_deg - 90)  # cards turned towards their player
        style = str(rng.choice(["up", "flat", "down"], p=[0.55, 0.25, 0.2]))
        split = rng.random() < 0.12
        for h in range(2 if split else 1):
            count = int(rng.choice([1, 2, 2, 3, 3, 4, 5]))
            doubled = count == 2 and rng.random() < 0.3
            offset = (h - (0.5 if split else 0)) * 1.5 * width
            start = (seat_xy[0] - 0.6 * width + offset * math.cos(math.radians(facing)),
                     seat_xy[1] - 0.4 * height + offset * math.sin(math.radians(facing)))
            cards = _fan(rng, start, facing, count, width, height, style)
            if doubled:  # the double's card across the hand, a quarter turned
                (x, y), ang = cards[-1]
                lift = rng.uniform(0.15, 0.35) * height
                cards.append(((x + rng.uniform(0.1, 0.3) * width, y - lift), ang + 90))
            hands.append((s + 1, cards, doubled))
    dealer_count = int(rng.integers(2, 7))
    gap = rng.uniform(0.55, 1.15) * width
    x0 = FRAME_W / 2 - gap * (dealer_count - 1) / 2 + rng.uniform(-60, 60)
    y0 = rng.uniform(0.03, 0.1) * FRAME_H + height / 2
    dealer_angle = float(rng.choice([0.0, 180.0])) + float(rng.normal(0, 3))
    dealer = [((x0 + k * gap, y0 + rng.normal(0, 2)), dealer_angle + float(rng.normal(0, 2)))
              for k in range(dealer_count)]
    # dealing order: a card to each hand in turn, then the dealer, round after round
    order = 0
    rounds = max([len(c) for _, c, _ in hands] + [dealer_count])
    for r in range(rounds):
        for seat, cards, doubled in hands:
            if r < len(cards):
                (x, y), ang = cards[r]
                placed.append(_Placed(codes.pop(), (x, y), ang, "player", seat,
                                      doubled and r == len(cards) - 1, order))
                order += 1
        if r < dealer_count:
            (x, y), ang = dealer[r]
            placed.append(_Placed(codes.pop(), (x, y), ang, "dealer", 0, False, order))
            order += 1
    return placed


# ---------------------------------------------------------------- camera and light


def _tilt(rng: np.random.Generator) -> np.ndarray:
    """A homography from the table plane to the frame: a mild tilt of the camera about the
    frame's centre, and a small zoom and shift."""
    w, h = FRAME_W, FRAME_H
    src = np.array([[0, 0], [w, 0], [w, h], [0, h]], np.float32)
    tx, ty = rng.uniform(-0.05, 0.05, 2)  # keystone left-right, top-bottom
    dst = src.copy()
    dst[:, 0] += np.array([tx * w, -tx * w, 0, 0], np.float32)
    dst[:, 1] += np.array([ty * h, ty * h, 0, 0], np.float32)
    zoom = rng.uniform(0.96, 1.03)
    moved = (dst - (w / 2, h / 2)) * zoom + (w / 2, h / 2) + rng.uniform(-12, 12, 2)
    return cv2.getPerspectiveTransform(src, moved.astype(np.float32))


def _lamps(rng: np.random.Generator) -> np.ndarray:
    """The light falling on the felt, float32 (H, W, 3) around 1."""
    yy, xx = np.mgrid[0:FRAME_H, 0:FRAME_W].astype(np.float32)
    light = np.full((FRAME_H, FRAME_W, 3), rng.uniform(0.25, 0.45), np.float32)
    for _ in range(int(rng.integers(1, 4))):
        cx, cy = rng.uniform(-0.1, 1.1) * FRAME_W, rng.uniform(-0.2, 1.0) * FRAME_H
        radius = rng.uniform(0.5, 1.2) * FRAME_W
        pool = 1.0 / (1.0 + ((xx - cx) ** 2 + (yy - cy) ** 2) / radius**2) ** 1.5
        colour = np.array([rng.uniform(0.75, 1.0), rng.uniform(0.9, 1.0), 1.0], np.float32)
        light += pool[:, :, None] * colour * rng.uniform(0.5, 0.9)
    return light / float(light.mean()) * rng.uniform(0.85, 1.1)


def _disk(radius: float) -> np.ndarray:
    size = 2 * math.ceil(radius) + 1
    yy, xx = np.mgrid[0:size, 0:size].astype(np.float32) - size // 2
    # anti-aliased disk: coverage of each kernel pixel by a disk of this radius
    kernel = np.clip(radius + 0.5 - np.sqrt(xx**2 + yy**2), 0, 1)
    return kernel / kernel.sum()


def _streak(length: float, angle: float) -> np.ndarray:
    size = 2 * math.ceil(length / 2) + 1
    kernel = np.zeros((size, size), np.float32)
    c = size // 2
    dx, dy = math.cos(angle) * length / 2, math.sin(angle) * length / 2
    cv2.line(kernel, (round(c - dx), round(c - dy)), (round(c + dx), round(c + dy)), 1.0, 1,
             cv2.LINE_AA)
    return kernel / kernel.sum()


# ---------------------------------------------------------------- compositing


def _card_matrix(deck: Deck, p: _Placed, width: float, tilt: np.ndarray) -> np.ndarray:
    """Face pixels -> frame pixels (3x3) for a card of ``width`` table-plane pixels."""
    face = deck.faces[p.code]
    s = width / face.shape[1]
    a = math.radians(p.angle)
    cos, sin = math.cos(a) * s, math.sin(a) * s
    fw, fh = face.shape[1] / 2, face.shape[0] / 2
    affine = np.array([[cos, -sin, p.centre[0] - cos * fw + sin * fh],
                       [sin, cos, p.centre[1] - sin * fw - cos * fh],
                       [0, 0, 1]], np.float64)
    return tilt @ affine


def _project(matrix: np.ndarray, points: np.ndarray) -> np.ndarray:
    return cv2.perspectiveTransform(points.reshape(-1, 1, 2).astype(np.float64),
                                    matrix).reshape(-1, 2).astype(np.float32)


def _paste(canvas: np.ndarray, face: np.ndarray, matrix: np.ndarray, corners: np.ndarray,
           shadow: tuple[float, float, float], sheen: float) -> None:
    """Composite a face (RGBA uint8) onto the float canvas with its shadow, in place."""
    x0, y0 = np.floor(corners.min(axis=0)).astype(int) - 12
    x1, y1 = np.ceil(corners.max(axis=0)).astype(int) + 12
    x0, y0 = max(x0, 0), max(y0, 0)
    x1, y1 = min(x1, FRAME_W), min(y1, FRAME_H)
    if x1 <= x0 or y1 <= y0:
        return
    shift = np.array([[1, 0, -x0], [0, 1, -y0], [0, 0, 1]], np.float64)
    size = (int(x1 - x0), int(y1 - y0))
    warped = cv2.warpPerspective(face, shift @ matrix, size, flags=cv2.INTER_AREA
                                 if matrix[0, 0] ** 2 + matrix[1, 0] ** 2 < 0.25
                                 else cv2.INTER_LINEAR, borderValue=(0, 0, 0, 0))
    alpha = warped[:, :, 3:4].astype(np.float32) / 255.0
    region = canvas[y0:y1, x0:x1]
    dx, dy, strength = shadow
    drop = cv2.warpAffine(alpha, np.array([[1, 0, dx], [0, 1, dy]], np.float32), size)
    drop = cv2.GaussianBlur(drop, (0, 0), 2.5)[:, :, None] if drop.ndim == 2 else drop
    region *= 1.0 - strength * drop
    colour = warped[:, :, :3].astype(np.float32) / 255.0
    colour = colour * (1.0 - sheen) + sheen
    region[:] = region * (1.0 - alpha) + colour * alpha


def render_sequence(deck: Deck, seed: int, *, frames: int = 8, width: tuple[float, float] = (
        60.0, 95.0), textures: dict[str, np.ndarray] | None = None,
        per_card: int | None = None) -> Sequence:
    """Render one deal of ``deck`` over ``frames`` frames (at least 4), its cards landing over
    all but the last 3; or, with ``per_card``, at a table's pace: one card at a time, each lying
    ``per_card`` frames (1 or more) before the next lands, and the last at least 3 frames (then
    ``frames`` is not used). Cards are drawn ``width`` (least, most) table-plane pixels wide."""
    if per_card is None and frames < 4:
        raise ValueError(f"a sequence needs at least 4 frames, got {frames}")
    if per_card is not None and per_card < 1:
        raise ValueError(f"a card lies at least 1 frame before the next, got {per_card}")
    if not 0 < width[0] <= width[1]:
        raise ValueError(f"card width must be above 0 and least <= most, got {width}")
    rng = np.random.default_rng(seed)
    card_w = float(rng.uniform(*width))
    aspect = float(np.median([f.shape[0] / f.shape[1] for f in deck.faces.values()]))
    placed = _layout(rng, card_w, card_w * aspect)
    tilt = _tilt(rng)
    felt, felt_name = _felt(rng, textures or {})
    light = _lamps(rng)
    main_lamp = rng.uniform(0, 2 * math.pi)
    shadow_len = rng.uniform(1.5, 5.0)
    shadow = (shadow_len * math.cos(main_lamp), shadow_len * math.sin(main_lamp),
              float(rng.uniform(0.2, 0.5)))
    defocus = float(rng.choice([0.0, rng.uniform(0.4, 1.0), rng.uniform(1.0, 1.6)],
                               p=[0.35, 0.45, 0.2]))
    quality = int(rng.integers(45, 93))
    wb = rng.uniform(0.9, 1.1, 3).astype(np.float32)
    gamma = float(rng.uniform(0.85, 1.15))
    vignette = _vignette(float(rng.uniform(0.0, 0.35)))
    gain = float(rng.uniform(0.002, 0.012))
    # cards land over the first frames - 3 frames, so the last one is seen in at least 3
    landing = max(1, frames - 3)
    cards: list[TrueCard] = []
    faces_at: list[np.ndarray] = []
    for p in placed:
        face = deck.faces[p.code]
        matrix = _card_matrix(deck, p, card_w * float(rng.uniform(0.98, 1.02)), tilt)
        fw, fh = face.shape[1], face.shape[0]
        corners = _project(matrix, np.array([[0, 0], [fw, 0], [fw, fh], [0, fh]], np.float32))
        x0, y0, x1, y1 = deck.index_boxes[p.code]
        top = np.array([[x0 * fw, y0 * fh], [x1 * fw, y0 * fh], [x1 * fw, y1 * fh],
                          [x0 * fw, y1 * fh]], np.float32)
        bottom = np.array([fw, fh], np.float32) - top
        quads = (_project(matrix, top), _project(matrix, bottom))
        short = (np.linalg.norm(corners[1] - corners[0]) + np.linalg.norm(corners[2] - corners[3]))
        box = (float(np.clip(corners[:, 0].min(), 0, FRAME_W)),
               float(np.clip(corners[:, 1].min(), 0, FRAME_H)),
               float(np.clip(corners[:, 0].max(), 0, FRAME_W)),
               float(np.clip(corners[:, 1].max(), 0, FRAME_H)))
        arrives = min(landing - 1, p.order * landing // max(1, len(placed)))
        cards.append(TrueCard(len(cards), p.code, deck.name, corners, box, float(short / 2),
                              p.place, p.seat, p.sideways, arrives, quads))
        faces_at.append(matrix)
    # keep only cards at least partly in the frame
    cards = [c for c in cards if c.box[2] - c.box[0] > 2 and c.box[3] - c.box[1] > 2]
    if per_card is not None:  # one card at a time, in dealing order
        for k, c in enumerate(cards):
            c.arrives = k * per_card
        frames = max(len(cards) - 1, 0) * per_card + max(per_card, TRACK_FRAMES)
    canvas = felt.copy()
    owner = np.full((FRAME_H, FRAME_W), -1, np.int32)
    out_frames: list[np.ndarray] = []
    blur: list[str] = []
    laid = 0
    for f in range(frames):
        while laid < len(cards) and cards[laid].arrives <= f:
            c = cards[laid]
            sheen = float(rng.uniform(0.0, 0.08))
            _paste(canvas, deck.faces[c.code], faces_at[c.number], c.corners, shadow, sheen)
            cv2.fillConvexPoly(owner, np.round(c.corners).astype(np.int32), c.number)
            laid += 1
        for c in cards[:laid]:
            c.shown.append(max(_shown(owner, q, c.number) for q in c.index_quads))
        lit = canvas * light * vignette[:, :, None] * wb
        what = "none"
        if defocus > 0:
            lit = cv2.filter2D(lit, -1, _disk(defocus))
            what = f"defocus {defocus:.1f} px"
        if rng.random() < 0.15:  # a hand passing, a knock on the camera: one frame streaked
            length = float(rng.uniform(2, 5))
            lit = cv2.filter2D(lit, -1, _streak(length, float(rng.uniform(0, math.pi))))
            what = f"motion {length:.0f} px"
        blur.append(what)
        signal = np.clip(lit, 0, 1)
        noise = rng.standard_normal(signal.shape, dtype=np.float32)
        signal = signal + noise * np.sqrt(signal * gain + 0.00002)
        frame = (np.clip(signal, 0, 1) ** gamma * 255).astype(np.uint8)
        ok, jpeg = cv2.imencode(".jpg", frame, [cv2.IMWRITE_JPEG_QUALITY, quality])
        decoded = cv2.imdecode(jpeg, cv2.IMREAD_COLOR) if ok else None
        out_frames.append(frame if decoded is None else np.asarray(decoded))
    return Sequence(deck.name, cards, out_frames, blur, defocus <= 1.0, felt_name)


def _vignette(strength: float) -> np.ndarray:
    yy, xx = np.mgrid[0:FRAME_H, 0:FRAME_W].astype(np.float32)
    r2 = ((xx - FRAME_W / 2) / (FRAME_W / 2)) ** 2 + ((yy - FRAME_H / 2) / (FRAME_W / 2)) ** 2
    return 1.0 - strength * r2


def _shown(owner: np.ndarray, quad: np.ndarray, number: int) -> float:
    """The share of an index quad's pixels that this card owns (on top, in the frame)."""
    x0, y0 = np.floor(quad.min(axis=0)).astype(int)
    x1, y1 = np.ceil(quad.max(axis=0)).astype(int) + 1
    w, h = x1 - x0, y1 - y0
    if w <= 0 or h <= 0:
        return 0.0
    mask = np.zeros((h, w), np.uint8)
    cv2.fillConvexPoly(mask, np.round(quad - (x0, y0)).astype(np.int32), 1)
    total = int(mask.sum())
    if total == 0:
        return 0.0
    cx0, cy0 = max(x0, 0), max(y0, 0)
    cx1, cy1 = min(x1, FRAME_W), min(y1, FRAME_H)
    if cx1 <= cx0 or cy1 <= cy0:
        return 0.0
    inside = mask[cy0 - y0 : cy1 - y0, cx0 - x0 : cx1 - x0].astype(bool)
    mine = owner[cy0:cy1, cx0:cx1] == number
    return float((inside & mine).sum()) / total
