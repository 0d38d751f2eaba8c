"""Drift: has the camera moved since calibration? Compares a live frame's markers with the baseline.

Each marker seen both now and at calibration is mapped through the stored calibration; how far its
corners moved, in table millimetres, is its displacement. The camera's movement is the median over
markers, so one marker nudged on the felt or half-covered by a hand does not raise the alarm alone.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dealer_assist.calibration.table import TableCalibration, detect_markers

DEFAULT_THRESHOLD_MM = 3.0
"""A bump that moves the felt's image by 3 mm already puts card corners near zone edges wrong."""
MIN_MARKERS_FOR_DRIFT = 2


@dataclass(frozen=True)
class DriftReport:
    """One frame's verdict. ``moved_mm`` is None when too few baseline markers were visible to
    judge (then ``alarm`` is False and ``message`` says so); ``per_marker_mm`` maps id -> mm."""

    moved_mm: float | None
    alarm: bool
    threshold_mm: float
    markers_found: tuple[int, ...]
    markers_missing: tuple[int, ...]
    per_marker_mm: dict[int, float] = field(default_factory=dict)
    message: str = ""

    def to_json(self) -> dict[str, Any]:
        """Plain form for ``calibrate drift --json`` and the table loop's logs."""
        return {
            "moved_mm": None if self.moved_mm is None else round(self.moved_mm, 2),
            "alarm": self.alarm,
            "threshold_mm": self.threshold_mm,
            "markers_found": list(self.markers_found),
            "markers_missing": list(self.markers_missing),
            "per_marker_mm": {str(k): round(v, 2) for k, v in self.per_marker_mm.items()},
            "message": self.message,
        }


def check_drift(
    calibration: TableCalibration,
    frame: np.ndarray,
    threshold_mm: float = DEFAULT_THRESHOLD_MM,
    min_markers: int = MIN_MARKERS_FOR_DRIFT,
    name: str = "frame",
    markers: Mapping[int, np.ndarray] | None = None,
) -> DriftReport:
    """Compare one frame's markers with the calibration's baseline (stateless). A frame of
    another size than the calibrated one raises CalibrationError naming ``name``. ``markers``:
    the frame's markers if already detected (``detect_markers``), else they are detected here."""
    calibration.camera.check_frame(frame, name)
    baseline = calibration.reference_markers
    seen = (detect_markers(frame, calibration.layout.aruco_dictionary)
            if markers is None else markers)
    found = tuple(sorted(i for i in seen if i in baseline))
    missing = tuple(sorted(set(baseline) - set(found)))
    if len(found) < min_markers:
        return DriftReport(
            None,
            False,
            threshold_mm,
            found,
            missing,
            {},
            f"cannot judge drift: {len(found)} of {len(baseline)} baseline markers visible"
            f" (need {min_markers})",
        )
    per_marker = {
        i: float(
            np.linalg.norm(
                calibration.images_to_table(seen[i]) - calibration.images_to_table(baseline[i]),
                axis=1,
            ).mean()
        )
        for i in found
    }
    moved = float(np.median(list(per_marker.values())))
    alarm = moved > threshold_mm
    verdict = "camera moved" if alarm else "camera still"
    message = f"{verdict}: {moved:.1f} mm (threshold {threshold_mm:g} mm) from {len(found)} markers"
    return DriftReport(moved, alarm, threshold_mm, found, missing, per_marker, message)


class DriftMonitor:
    """Drift check for the table loop: alarms once ``confirm_frames`` frames in a row are past the
    threshold (so one frame with a marker misread does not stop the game), and stays alarmed until
    a frame is back under it. Frames where drift cannot be judged leave the state as it was."""

    def __init__(
        self,
        calibration: TableCalibration,
        threshold_mm: float = DEFAULT_THRESHOLD_MM,
        confirm_frames: int = 2,
        min_markers: int = MIN_MARKERS_FOR_DRIFT,
    ) -> None:
        self.calibration = calibration
        self.threshold_mm = threshold_mm
        self.confirm_frames = confirm_frames
        self.min_markers = min_markers
        self._over = 0

    def check(self, frame: np.ndarray, name: str = "frame",
              markers: Mapping[int, np.ndarray] | None = None) -> DriftReport:
        """Judge one frame (``markers`` as :func:`check_drift`'s); ``alarm`` in the result is the
        debounced state."""
        report = check_drift(self.calibration, frame, self.threshold_mm, self.min_markers, name,
                             markers)
        if report.moved_mm is None:
            alarm = self._over >= self.confirm_frames
        else:
            self._over = self._over + 1 if report.moved_mm > self.threshold_mm else 0
            alarm = self._over >= self.confirm_frames
        return DriftReport(
            report.moved_mm,
            alarm,
            report.threshold_mm,
            report.markers_found,
            report.markers_missing,
            report.per_marker_mm,
            report.message,
        )
