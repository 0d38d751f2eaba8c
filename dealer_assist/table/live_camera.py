"""The table's real overhead camera: OpenCV capture, the card detector, the frame tracker, the
table calibration (pixel -> table mm, the layout's card zones) and its drift and focus checks,
assembled into a :class:`~dealer_assist.table.camera_source.CameraSource` whose new cards are
checked against the shoe's cards in flight (:mod:`dealer_assist.vision.shoe_check`).
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from dealer_assist.table.camera_source import (
    DETECTION_WORKERS,
    FRAME_QUALITY,
    CameraSource,
    CameraStages,
    ViewCheck,
    jpeg,
)
from dealer_assist.table.config import CameraConfig
from dealer_assist.table.felt import FeltTracker


class Capture:
    """``cv2.VideoCapture`` that reopens its device or stream when frames stop (unplugged USB
    camera, dropped stream); a video file is read once and then reports no more frames. OpenCV
    warns on stderr of each open that fails: the first is let through, the retries that follow
    (one a second while the camera is away) are kept quiet, the table's alarm saying it."""

    def __init__(self, source: int | str, reopen_every_s: float = 1.0):
        self.source = source
        self.reopen_every_s = reopen_every_s
        self.is_file = isinstance(source, str) and Path(source).is_file()
        self._capture: Any = None
        self._next_open = 0.0
        self._retrying = False

    def grab(self) -> Any:
        if self._capture is None:
            now = time.monotonic()
            if now < self._next_open:
                return None
            self._next_open = now + self.reopen_every_s
            capture = self._open()
            if not capture.isOpened():
                capture.release()
                self._retrying = True
                return None
            self._capture, self._retrying = capture, False
        ok, frame = self._capture.read()
        if ok:
            return frame
        if not self.is_file:
            self.close()  # reopen on a later grab
        return None

    def _open(self) -> Any:
        import cv2

        if not self._retrying:
            return self._latest_first(cv2.VideoCapture(self.source))
        logging = cv2.utils.logging
        level = logging.getLogLevel()
        logging.setLogLevel(logging.LOG_LEVEL_ERROR)  # process-wide, for the open only
        try:
            return self._latest_first(cv2.VideoCapture(self.source))
        finally:
            logging.setLogLevel(level)

    def _latest_first(self, capture: Any) -> Any:
        """A live camera keeps one frame in its driver's queue, not several: each grab is the
        newest frame, never one left waiting (the backends that cannot, V4L2 can, ignore it)."""
        import cv2

        if not self.is_file and capture.isOpened():
            capture.set(cv2.CAP_PROP_BUFFERSIZE, 1)
        return capture

    def close(self) -> None:
        if self._capture is not None:
            self._capture.release()
            self._capture = None


def open_live_camera(config: CameraConfig,
                     warn: Callable[[str], None] = lambda message: None,
                     where: str = "table.toml",
                     frame_quality: int = FRAME_QUALITY, shoe: bool = False) -> CameraSource:
    """The camera pipeline for ``[camera]`` and ``[vision]`` (``where``: the config, for
    messages; ``shoe``: the table has one, so an enrolled deck's acceptance may be its figures
    through the shoe check); raises ``ValueError`` subclasses naming what is missing or wrong
    (the model file, the calibration file and its key; a model not pinned or not accepted:
    :class:`~dealer_assist.vision.model_control.PinError`) and ``RuntimeError`` for a runtime
    named but not installed. ``warn`` is told what runs but reads worse: cards the calibrated
    camera shows too small or too large to read. The source's ``models`` is what each round
    records of the models."""
    from dealer_assist.calibration.drift import DriftMonitor
    from dealer_assist.calibration.focus import FocusMonitor
    from dealer_assist.calibration.table import (
        TableCalibration,
        card_size_warnings,
        detect_markers,
    )
    from dealer_assist.table.config import VisionConfig
    from dealer_assist.vision.shoe_check import ShoeCheck
    from dealer_assist.vision.startup import start_detector
    from dealer_assist.vision.tracker import CardTracker

    assert config.calibration is not None  # the config requires it with a camera
    calibration = TableCalibration.load(config.calibration)
    vision = config.vision or VisionConfig()
    started = start_detector(
        runtime_choice=vision.runtime, model=config.model, reader=config.reader,
        detector_pins=vision.detector_sha256, reader_pins=vision.reader_sha256,
        acceptance=vision.acceptance, where=where, frame_size=calibration.camera.image_size,
        at_once=DETECTION_WORKERS, shoe=shoe)
    detector = started.detector
    for warning in card_size_warnings(calibration, str(config.calibration)):
        warn(warning)
    layout = calibration.layout
    drift = DriftMonitor(calibration)
    focus = FocusMonitor(calibration)
    capture = Capture(config.source)

    def zone_of(x: float, y: float) -> tuple[str, int | None] | None:
        zone = layout.zone_at(x, y)
        if zone is None or zone.name != "cards":
            return None
        return ("dealer", None) if zone.seat is None else ("seat", zone.seat)

    def check_view(frame: Any) -> ViewCheck:
        """Drift and focus, on one detection of the frame's layout markers (the costly part)."""
        markers = detect_markers(frame, layout.aruco_dictionary)
        drifted = drift.check(frame, markers=markers)
        blurred = focus.check(frame, markers=markers)
        return ViewCheck(moved=drifted.message if drifted.alarm else None,
                         soft=blurred.message if blurred.soft else None)

    def grab() -> Any:
        """The next frame; a frame of another size than the calibrated one is refused (its
        pixels would land cards in the wrong places), e.g. a camera plugged back in at its
        default resolution: the feed is then reported lost, saying so."""
        frame = capture.grab()
        if frame is not None:
            calibration.camera.check_frame(frame, f"camera {config.source}")
        return frame

    check = ShoeCheck(detector, CardTracker())
    stages = CameraStages(
        grab=grab,
        detect=check.read,
        track=check.track,
        expect=check.expect,
        to_table=calibration.image_to_table,
        check_view=check_view,
        close=capture.close,
        picture=functools.partial(jpeg, quality=frame_quality),
    )
    return CameraSource(stages, FeltTracker(zone_of), description=f"camera {config.source}",
                        workers=DETECTION_WORKERS, models=started.to_json(),
                        names_cards=started.names_cards)
