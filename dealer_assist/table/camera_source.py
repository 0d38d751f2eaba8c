"""The overhead camera as a table source: frames -> cards -> tracked events -> table plane -> loop.

:class:`CameraSource` runs one thread that grabs frames, has the card detector read them, the
frame tracker turn readings into appeared / removed / changed events, calibration place each event
on the table plane, and the :class:`~dealer_assist.table.felt.FeltTracker` turn those into the
loop's camera inputs. It reports the feed lost when no frame arrives for ``lost_after_s`` (and
keeps trying), the feed back when frames return, and what a look at the view every few
seconds finds: the camera moved from where it was calibrated, its view soft or sharp again. The
stages are plain callables, so the same thread serves a USB camera, a stream, a video file or the
demo's rendered table.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass, replace
from typing import Any, Protocol

from dealer_assist.logs import describe
from dealer_assist.rules import Card, CardCodeError
from dealer_assist.table.felt import FeltTracker, Sighting, SightingKind
from dealer_assist.table.sources import (
    CameraFocus,
    CameraLink,
    CameraMoved,
    FeltCard,
    FeltStacks,
    FeltSwap,
    HoleCardShown,
    Sink,
)


class Observation(Protocol):
    """A card read in one frame (``dealer_assist.vision.detector.CardObservation``)."""

    @property
    def card(self) -> str: ...

    @property
    def x(self) -> float: ...

    @property
    def y(self) -> float: ...

    @property
    def sideways(self) -> bool: ...


class TrackedEvent(Protocol):
    """A frame tracker's event (``dealer_assist.vision.tracker.CardEvent``)."""

    @property
    def card(self) -> str: ...

    @property
    def x(self) -> float: ...

    @property
    def y(self) -> float: ...

    @property
    def track(self) -> int: ...

    @property
    def sideways(self) -> bool: ...

    @property
    def kind(self) -> Any: ...

    # and, where the stages check cards against the shoe, ``verdict`` and ``checked``


logger = logging.getLogger(__name__)

#: Frames a table's camera detects at once, each on one core (``CardDetector(threads=1)``): on
#: 2 cores, 41 frames/s against 20 for one frame at a time on both (``bench/detect.py``).
DETECTION_WORKERS = 2
#: A frame handed to the detection pool: its number, when it was grabbed, its detection.
_InFlight = tuple[int, float, "Future[Any]"]


@dataclass(frozen=True, slots=True)
class ViewCheck:
    """What a look at the camera's view found: why it seems moved from where it was calibrated
    (None: it has not), why it seems too soft to read cards well (None: sharp)."""

    moved: str | None = None
    soft: str | None = None


@dataclass(frozen=True, slots=True)
class CameraStages:
    """The pipeline's parts: ``grab()`` a frame (None: none came; an OSError, ValueError or
    RuntimeError: none usable, its message saying why; any other exception likewise, its type
    named), ``detect(frame)`` the cards,
    ``track(frame_number, observations)`` into events, ``to_table(x, y)`` pixel -> mm,
    ``check_view(frame)`` whether the camera moved or went soft, every few seconds,
    ``picture(frame)`` the frame as an image file's bytes (JPEG), for the record,
    ``expect(codes)`` the shoe's codes in flight, for the stages to check new cards against
    (:class:`~dealer_assist.vision.shoe_check.ShoeCheck`; None: the stages name cards)."""

    grab: Callable[[], Any]
    #: the cards (a sequence of :class:`Observation`), or what else ``track`` takes
    detect: Callable[[Any], Any]
    track: Callable[[int, Any], Sequence[TrackedEvent]]  # given what detect returned
    to_table: Callable[[float, float], tuple[float, float]]
    check_view: Callable[[Any], ViewCheck] | None = None
    close: Callable[[], None] | None = None
    picture: Callable[[Any], bytes] | None = None
    expect: Callable[[tuple[str, ...]], None] | None = None


#: The JPEG quality of the frames a round records (table.toml ``[recording] frame_quality``);
#: docs/table.md gives the bytes per round it costs and what the card reader still reads.
FRAME_QUALITY = 85
#: The qualities a table may set: below 50 the card indices blur into the JPEG's blocks.
FRAME_QUALITIES = range(50, 101)


def jpeg(image: Any, quality: int = FRAME_QUALITY) -> bytes:
    """An image (a BGR array, as OpenCV grabs) as JPEG bytes at ``quality``, for the record."""
    import cv2

    ok, encoded = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, quality])
    if not ok:
        raise ValueError("the frame could not be encoded as JPEG")
    return bytes(encoded.tobytes())


@dataclass(frozen=True, slots=True)
class Snapshot:
    """A frame the camera grabbed, kept for the record: ``picture()`` encodes it (JPEG bytes),
    so the cost is paid where it is recorded, not on the camera's thread."""

    frame: Any
    grabbed_at: float
    encode: Callable[[Any], bytes]

    def picture(self) -> bytes:
        return self.encode(self.frame)


class CameraSource:
    """The camera thread; ``frames_processed`` and ``seconds_busy`` are kept for the benchmark.

    An exception that ends the thread (a stage that raises other than ``grab``) is logged with
    its traceback and reported as the feed lost, naming it: the table goes on without the
    camera, its alarm saying so.

    ``workers``: frames detected at once. With more than one, the camera thread hands each frame
    to a pool and goes on grabbing, and the frames' cards are tracked in frame order as they
    come back: a detector that takes longer than a frame interval on one core keeps up with the
    camera on several (``detect`` must then be safe to call from several threads, as
    :class:`~dealer_assist.vision.detector.CardDetector` is).

    ``models``: what reads the frames (runtime, detector and reader file, version, SHA-256), as
    each round's ``round`` line records it; None where nobody said. ``names_cards``: its
    reading of a card may be the card while the shoe is down (False: its models are accepted
    only for checking cards against the shoe's)."""

    name = "camera"

    def __init__(
        self,
        stages: CameraStages,
        felt: FeltTracker,
        *,
        description: str = "camera",
        lost_after_s: float = 2.0,
        check_view_every_s: float = 5.0,
        max_fps: float | None = None,
        workers: int = 1,
        models: dict[str, Any] | None = None,
        names_cards: bool = True,
    ):
        if workers < 1:
            raise ValueError(f"workers must be at least 1, got {workers}")
        self.stages = stages
        self.felt = felt
        self.description = description
        self.lost_after_s = lost_after_s
        self.check_view_every_s = check_view_every_s
        self.min_interval = 0.0 if not max_fps else 1.0 / max_fps
        self.workers = workers
        self.models = models
        self.names_cards = names_cards
        self.frames_processed = 0
        self.seconds_busy = 0.0
        self._stop = threading.Event()
        self._new_round = threading.Event()
        self._thread: threading.Thread | None = None
        self._latest: Snapshot | None = None

    def snapshot(self) -> Snapshot | None:
        """The latest frame grabbed (None before the first, or with no ``picture`` stage)."""
        return self._latest

    def expect(self, codes: tuple[str, ...]) -> None:
        """The shoe's cards drawn and not yet landed, oldest first: a card that appears is
        checked against them (where the stages can). Any thread; never blocks."""
        if self.stages.expect is not None:
            self.stages.expect(codes)

    def new_round(self) -> None:
        """A round has opened (its first bet): forget the last round's felt before the next
        frame, whether or not the camera has yet seen those cards cleared away."""
        self._new_round.set()

    def start(self, sink: Sink) -> None:
        self._thread = threading.Thread(
            target=self._run, args=(sink,), name="camera-source", daemon=True
        )
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(5)
        if self.stages.close is not None:
            self.stages.close()

    def _run(self, sink: Sink) -> None:
        try:
            if self.workers == 1:
                self._loop(sink, None)
                return
            with ThreadPoolExecutor(self.workers, thread_name_prefix="camera-detect") as pool:
                self._loop(sink, pool)
        except Exception as error:
            logger.exception("%s: the camera thread stopped", self.description)
            sink(CameraLink(False, f"{self.description}: the camera stopped on an error "
                                   f"({describe(error)}); restart the table to bring it back"))

    def _loop(self, sink: Sink, pool: ThreadPoolExecutor | None) -> None:
        stages = self.stages
        in_flight: deque[_InFlight] = deque()
        up: bool | None = None
        moved = soft = False
        last_frame = time.monotonic()
        last_check = 0.0
        frame_number = 0
        refused = ""  # why the last grab gave no frame, when it said
        while not self._stop.is_set():
            started = time.monotonic()
            try:
                frame = stages.grab()
            except (OSError, ValueError, RuntimeError) as error:
                if not refused:  # the first of a run of refusals; the rest are the same
                    logger.warning("%s: no frame: %s", self.description, error)
                frame, refused = None, str(error)
            except Exception as error:
                # Anything else (cv2.error: cv2 is not imported here) is caught at this one
                # boundary, so the thread never dies: the feed is lost, the error's type and
                # text say why, and the grab is tried again.
                if not refused:
                    logger.exception("%s: the frame grab raised", self.description)
                frame, refused = None, describe(error)
            if frame is None:
                while in_flight:  # no frame is coming: the ones in hand are tracked now
                    self._track_oldest(sink, in_flight)
                if up is not False and started - last_frame >= self.lost_after_s:
                    up = False
                    lost = CameraLink(False, f"{self.description}: no frame for "
                                             f"{self.lost_after_s:g} s"
                                             + (f" ({refused})" if refused else ""))
                    logger.info("camera feed lost: %s", lost.detail)
                    sink(lost)
                self._stop.wait(0.05)
                continue
            refused = ""
            last_frame = started
            if stages.picture is not None:
                self._latest = Snapshot(frame, started, stages.picture)
            if up is not True:
                up = True
                logger.info("camera feed up: %s", self.description)
                sink(CameraLink(True, self.description))
            if started - last_check >= self.check_view_every_s:
                last_check = started
                view = ViewCheck() if stages.check_view is None else stages.check_view(frame)
                if view.moved is not None and not moved:
                    moved = True
                    sink(CameraMoved(view.moved))
                elif view.moved is None and moved:
                    moved = False  # back where it was calibrated: trusted again
                    sink(CameraLink(True, f"{self.description}: back in place"))
                if (view.soft is not None) != soft:
                    soft = view.soft is not None
                    sink(CameraFocus(not soft, view.soft or f"{self.description}: sharp again"))
            if self._new_round.is_set():
                self._new_round.clear()
                self.felt.reset()
            frame_number += 1
            if pool is None:
                self._track(sink, frame_number, stages.detect(frame), started)
            else:
                in_flight.append((frame_number, started, pool.submit(stages.detect, frame)))
                while in_flight and (len(in_flight) >= self.workers or in_flight[0][2].done()):
                    self._track_oldest(sink, in_flight)
            deadline = started + self.min_interval
            # frames in hand are tracked while the rate limit waits, not a frame later
            while in_flight and time.monotonic() < deadline and \
                    self._track_oldest(sink, in_flight, deadline - time.monotonic()):
                pass
            if deadline > time.monotonic():
                self._stop.wait(deadline - time.monotonic())

    def _track_oldest(self, sink: Sink, in_flight: deque[_InFlight],
                      timeout: float | None = None) -> bool:
        """Track the oldest frame in hand once its detection is done; False if it was not done
        within ``timeout`` seconds (then it stays in hand)."""
        number, grabbed, detection = in_flight[0]
        try:
            observations = detection.result(timeout=timeout)
        except FutureTimeout:
            return False
        in_flight.popleft()
        self._track(sink, number, observations, grabbed)
        return True

    def _track(self, sink: Sink, frame_number: int, observations: Any,
               grabbed: float) -> None:
        for event in self.stages.track(frame_number, observations):
            for item in self._to_inputs(event):
                if isinstance(item, FeltCard | FeltStacks | FeltSwap | HoleCardShown):
                    item = replace(item, seen_at=grabbed)  # the loop measures the lag by it
                logger.debug("frame %d: %s", frame_number, item)
                sink(item)
        self.frames_processed += 1
        self.seconds_busy += time.monotonic() - grabbed

    def _to_inputs(self, event: TrackedEvent) -> list[Any]:
        try:
            card = Card.parse(event.card)
        except CardCodeError:
            return []
        kind = SightingKind(getattr(event.kind, "value", event.kind))
        x_mm, y_mm = self.stages.to_table(event.x, event.y)
        checked = getattr(event, "checked", None)
        return list(self.felt.feed(Sighting(
            kind, card, x_mm, y_mm, event.track, event.sideways,
            verdict=getattr(event, "verdict", None),
            checked=None if checked is None else Card.parse(checked))))
