"""The demo's overhead camera: the simulated dealer's cards rendered on felt, frame after frame.

:class:`SyntheticFelt` keeps the cards the simulated dealer has placed (where a dealer puts them:
a fan per hand, a doubled card sideways, split hands side by side, the hole card face down and so
invisible to an index detector until it is turned) and renders the overhead frame with the vision
branch's scene generator (``dealer_assist.vision.scenes.FixedView``). :func:`demo_camera`
reads those frames with the real detector and frame tracker through
:class:`~dealer_assist.table.camera_source.CameraSource`, so the demo's camera is read exactly as a
real one would be. The virtual table is a 1280x720 view with its own zones (``VirtualTable``); the
calibration of a real table is not involved; ``VirtualTable(scale=2.4)`` spreads the same felt
over a 3072x1728 view, the cards keeping their pixel size, as a camera of more pixels over a
whole felt shows it.
"""

from __future__ import annotations

import functools
import math
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dealer_assist.table.camera_source import (
    DETECTION_WORKERS,
    FRAME_QUALITY,
    CameraSource,
    CameraStages,
    Snapshot,
    jpeg,
)
from dealer_assist.table.felt import FeltTracker
from dealer_assist.table.simulation.world import DEFAULT_PLAYERS
from dealer_assist.table.sources import (
    FeltCard,
    FeltStacks,
    FinishRound,
    HoleCardShown,
    Sink,
    TableInput,
)

FRAME_SIZE = (1280, 720)
#: The demo table's deck: one the shipped models were trained on, as a casino's own deck is once
#: enrolled (``python -m dealer_assist.vision.enrol``). ``--camera-deck kennard`` shows a deck
#: the models never saw.
HOUSE_DECK = "anglo"
CARD_WIDTH = 80.0  # the detector reads 80-px cards better than the 58-px end of its training
FAN_STEP = (16.0, -22.0)  # each card of a hand up and to the right of the last
#: The dealer's row: pixels between its cards (side by side, no card over another's index: two
#: cards of one code overlapping would leave only their upper indices to pair into one card) and
#: how far left of the middle it starts, so that seven cards lie in the dealer's zone, clear of
#: the demo's seats' hands on both sides (at 90 px from 100 px left, the sixth card lay in seat
#: 1's zone; from 220 px left, seat 5's split hands came close enough to the first card for the
#: detector to pair a seat card's index with the dealer's card of its code). An eighth card, a
#: few hands in 100,000, lies outside the zone.
DEALER_STEP = 80.0
DEALER_ROW_START = 200.0
#: A seat's zone: within this many pixels of its hands' middle (split hands and fans included).
SEAT_REACH = 200.0
#: Every seat of the table (a :class:`VirtualTable` with the seats in play spreads them out).
ALL_SEATS = (1, 2, 3, 4, 5, 6, 7)
#: The seats the demo's players sit at: the demo's cameras lay out these.
PLAYED_SEATS = tuple(player.seat for player in DEFAULT_PLAYERS)


@dataclass(frozen=True, slots=True)
class VirtualTable:
    """Where the demo's cards lie in the rendered frame, and which zone a pixel is in.

    ``seats``: the seats in play, laid out evenly along the arc from first base (the frame's
    right) to third base (its left), so a seat's split hands fan out well clear of its
    neighbours' (seven seats side by side leave a split hand's fan over the next seat's cards,
    which the camera then sees land there).

    ``scale``: how many times :data:`FRAME_SIZE` the view is across, 1 to 4 (else
    ``ValueError``). The arc of seats, the dealer's row and the dealer zone's lower edge spread
    with it; the cards, their fans, split hands, the spacing of the dealer's cards and the
    widths of the zones keep their pixel sizes (at 2.4, 3072x1728 with 80-px cards: a camera
    over a whole felt at the install's card width)."""

    seats: tuple[int, ...] = ALL_SEATS
    stack_spacing: float = 130.0
    scale: float = 1.0

    def __post_init__(self) -> None:
        if not self.seats or sorted(set(self.seats)) != list(self.seats):
            raise ValueError(f"seats must be distinct and in order, got {self.seats!r}")
        if not 1.0 <= self.scale <= 4.0:
            raise ValueError(f"scale must be 1 to 4, got {self.scale!r}")

    @property
    def frame_size(self) -> tuple[int, int]:
        """The rendered frame's (width, height)."""
        return round(FRAME_SIZE[0] * self.scale), round(FRAME_SIZE[1] * self.scale)

    def seat_anchor(self, seat: int) -> tuple[float, float]:
        """Where the seat's first card lies: the seats in play spread over the arc from 20 to
        160 degrees."""
        places = len(self.seats)
        step = 140.0 / (places - 1) if places > 1 else 0.0
        angle = math.radians(20.0 + self.seats.index(seat) * step if places > 1 else 90.0)
        return (self.middle_x + self.scale * 480 * math.cos(angle),
                self.scale * (150 + 330 * math.sin(angle)))

    def stack_origin(self, seat: int, stack: int) -> tuple[float, float]:
        x, y = self.seat_anchor(seat)
        column, row = stack % 2, stack // 2
        return x + (column - 0.5) * self.stack_spacing, y - row * 120.0

    @property
    def middle_x(self) -> float:
        """The frame's middle, across: where the arc of seats is centred."""
        return FRAME_SIZE[0] / 2 * self.scale

    def dealer_origin(self, index: int) -> tuple[float, float]:
        """Where the dealer's ``index``-th card lies: a row from :data:`DEALER_ROW_START` px
        left of the middle."""
        return self.middle_x - DEALER_ROW_START + DEALER_STEP * index, 80.0 * self.scale

    def zone_of(self, x: float, y: float) -> tuple[str, int | None] | None:
        """The dealer's zone above the seats' arc within 300 px of the middle, else the seat
        whose hands' middle is nearest (a hand fans up and to the right of its first card),
        within ``SEAT_REACH``."""
        if y < 150 * self.scale and abs(x - self.middle_x) < 300:
            return ("dealer", None)
        best: tuple[float, int] | None = None
        for seat in self.seats:
            ax, ay = self.seat_anchor(seat)
            middle = ax + 2.5 * FAN_STEP[0], ay + 2.5 * FAN_STEP[1]
            distance = math.hypot(x - middle[0], y - middle[1])
            if distance <= SEAT_REACH and (best is None or distance < best[0]):
                best = (distance, seat)
        return None if best is None else ("seat", best[1])


class SyntheticFelt:
    """The cards on the demo's felt; :meth:`show` takes the simulated dealer's physical steps,
    :meth:`render` draws the frame the overhead camera sees (thread-safe)."""

    def __init__(self, design: Any, table: VirtualTable | None = None, seed: int = 0):
        self.design = design
        self.table = table or VirtualTable()
        self.seed = seed
        self._lock = threading.Lock()
        self._dealer: list[tuple[str, float]] = []  # (code, angle)
        self._stacks: dict[int, list[list[tuple[str, bool]]]] = {}
        self._frames = 0
        self._view: tuple[list[tuple[str, float, float, float, float]], Any] | None = None

    def show(self, item: TableInput) -> None:
        with self._lock:
            if isinstance(item, FeltCard):
                if item.spot.is_dealer:
                    if item.card is not None:
                        self._dealer.append((item.card.code, 0.0))
                    return
                if item.card is None:
                    return
                stacks = self._stacks.setdefault(item.spot.seat or 0, [])
                stack = item.spot.hand or 0
                while len(stacks) <= stack:
                    stacks.append([])
                stacks[stack].append((item.card.code, item.sideways))
            elif isinstance(item, FeltStacks):
                stacks = self._stacks[item.seat]
                source = item.from_stack or 0
                moved = stacks[source].pop()
                stacks.insert(source + 1, [moved])
            elif isinstance(item, HoleCardShown) and item.card is not None:
                self._dealer.insert(1, (item.card.code, 0.0))
            elif isinstance(item, FinishRound):
                self._dealer, self._stacks = [], {}

    @property
    def empty(self) -> bool:
        with self._lock:
            return not self._dealer and not any(any(s) for s in self._stacks.values())

    def layout(self) -> list[tuple[str, float, float, float, float]]:
        """The cards to draw, in the order they were placed: (code, x, y, width, angle)."""
        with self._lock:
            cards = [
                (code, *self.table.dealer_origin(index), CARD_WIDTH, angle)
                for index, (code, angle) in enumerate(self._dealer)
            ]
            for seat, stacks in sorted(self._stacks.items()):
                for stack_index, stack in enumerate(stacks):
                    x, y = self.table.stack_origin(seat, stack_index)
                    for position, (code, sideways) in enumerate(stack):
                        cards.append((
                            code,
                            x + FAN_STEP[0] * position,
                            y + FAN_STEP[1] * position,
                            CARD_WIDTH,
                            90.0 if sideways else 0.0,
                        ))
        return cards

    def render(self) -> Any:
        """The next frame's :class:`~dealer_assist.vision.scenes.Scene`: the same felt and light
        every frame (the camera does not move), new sensor noise in each (as a real camera). The
        layout and its light are rendered once per change of the cards on the felt, the noise
        per frame."""
        import numpy as np

        from dealer_assist.vision.scenes import FixedView

        layout = self.layout()
        with self._lock:
            self._frames += 1
            frame = self._frames
            view = self._view if self._view is not None and self._view[0] == layout else None
        if view is None:
            view = (layout, FixedView.of(np.random.default_rng(self.seed), self.design, layout,
                                         self.table.frame_size))
            with self._lock:
                self._view = view
        return view[1].frame(np.random.default_rng([self.seed, frame]))


class SyntheticCamera:
    """The demo's camera source: a :class:`SyntheticFelt` read by a camera pipeline."""

    name = "camera"

    def __init__(self, felt: SyntheticFelt, source: CameraSource):
        self.felt = felt
        self.source = source

    def start(self, sink: Sink) -> None:
        self.source.start(sink)

    def stop(self) -> None:
        self.source.stop()

    def new_round(self) -> None:
        self.source.new_round()

    def expect(self, codes: tuple[str, ...]) -> None:
        self.source.expect(codes)

    def snapshot(self) -> Snapshot | None:
        return self.source.snapshot()

    def show(self, item: TableInput) -> None:
        self.felt.show(item)

    @property
    def sees_hole_card(self) -> bool:
        """The camera pipeline has seen the dealer's hole card turned over."""
        return self.source.felt.hole_card_seen

    @property
    def sees_empty_felt(self) -> bool:
        """The camera pipeline has seen the felt cleared (its picture of the round is reset)."""
        return self.source.felt.empty


def scene_truth(scene: Any) -> list[Any]:
    """What a perfect detector would report for a rendered scene: each card with a visible corner
    index, at its centre, sideways as laid. For tests and benchmarks of the rest of the pipeline
    where the trained model is absent; never used by the demo or the table."""
    from dealer_assist.vision.detector import CardObservation

    seen = {label.card for label in scene.labels}
    observations = []
    for index, card in enumerate(scene.cards):
        if index in seen:
            x, y = card.center
            observations.append(CardObservation(card.code, x, y, 1.0, card.sideways, ()))
    return observations


def truth_camera(design: Any, seed: int = 0,
                 seats: tuple[int, ...] = PLAYED_SEATS) -> SyntheticCamera:
    """The synthetic camera with :func:`scene_truth` as its detector (tests, benchmarks)."""
    from dealer_assist.vision.tracker import CardTracker

    felt = SyntheticFelt(design, VirtualTable(seats), seed=seed)
    stages = CameraStages(
        grab=felt.render,
        detect=scene_truth,
        track=CardTracker(stable_frames=2, grace_frames=3).update,
        to_table=lambda x, y: (x, y),
        picture=lambda scene: jpeg(scene.image),
    )
    source = CameraSource(stages, FeltTracker(felt.table.zone_of), description="synthetic camera")
    return SyntheticCamera(felt, source)


def demo_camera(
    model: Path | None = None, design_name: str = HOUSE_DECK, seed: int = 0, fps: float = 8.0,
    seats: tuple[int, ...] = PLAYED_SEATS, check_shoe: bool = True,
    frame_quality: int = FRAME_QUALITY,
) -> SyntheticCamera:
    """The synthetic camera read by the real detector and tracker, each new card checked against
    the shoe's cards in flight (``check_shoe`` False: named, as a hand-held game's are); raises
    ``ValueError`` subclasses naming what is missing (the model file, the card artwork)."""
    from dealer_assist.vision.artwork import load_designs
    from dealer_assist.vision.detector import DEFAULT_MODEL, CardDetector
    from dealer_assist.vision.shoe_check import ShoeCheck
    from dealer_assist.vision.tracker import CardTracker

    detector = CardDetector(model or DEFAULT_MODEL, threads=1)
    design = load_designs([design_name])[0]
    felt = SyntheticFelt(design, VirtualTable(seats), seed=seed)
    tracker = CardTracker(stable_frames=2, grace_frames=6)
    check = ShoeCheck(detector, tracker)
    stages = CameraStages(
        grab=lambda: felt.render().image,
        detect=check.read if check_shoe else detector.detect,
        track=check.track if check_shoe else tracker.update,
        to_table=lambda x, y: (x, y),
        picture=functools.partial(jpeg, quality=frame_quality),
        expect=check.expect if check_shoe else None,
    )
    source = CameraSource(
        stages, FeltTracker(felt.table.zone_of), description="synthetic camera", max_fps=fps,
        workers=DETECTION_WORKERS,
    )
    return SyntheticCamera(felt, source)
