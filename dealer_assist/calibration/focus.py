"""Focus: is the camera still sharp enough to read cards? Measures the layout markers' edges.

The same measure as ``calibrate table``'s (``table.marker_edge_width_px``) on a live frame: a
lens that loses its focus, fogs or gets smeared during play makes the camera miss several times
more cards long before it stops seeing them, so the table loop raises an alarm for it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from dealer_assist.calibration.table import (
    READABLE_EDGE_WIDTH_PX,
    TableCalibration,
    detect_markers,
    marker_edge_width_px,
)


@dataclass(frozen=True)
class FocusReport:
    """One frame's verdict: ``edge_width_px`` is None when no layout marker was seen to measure;
    ``soft``: past ``limit_px`` (FocusMonitor: the debounced state); ``message`` is this frame's."""

    edge_width_px: float | None
    soft: bool
    limit_px: float
    message: str

    def to_json(self) -> dict[str, Any]:
        """Plain form for ``calibrate drift --json`` (its ``focus``)."""
        return {
            "edge_width_px": None if self.edge_width_px is None else round(self.edge_width_px, 2),
            "soft": self.soft,
            "limit_px": self.limit_px,
            "message": self.message,
        }


def check_focus(
    calibration: TableCalibration,
    frame: np.ndarray,
    limit_px: float = READABLE_EDGE_WIDTH_PX,
    markers: Mapping[int, np.ndarray] | None = None,
) -> FocusReport:
    """Measure one frame's sharpness on the layout markers in it (stateless). ``markers``: the
    frame's markers if already detected (``detect_markers``), else they are detected here."""
    layout = calibration.layout
    known = {m.marker_id for m in layout.markers}
    if markers is None:
        markers = detect_markers(frame, layout.aruco_dictionary)
    seen = {i: c for i, c in markers.items() if i in known}
    edge = marker_edge_width_px(frame, seen)
    if edge is None:
        return FocusReport(None, False, limit_px, "cannot judge focus: no layout marker visible")
    soft = edge > limit_px
    verdict = "frame soft" if soft else "frame sharp"
    return FocusReport(
        edge, soft, limit_px,
        f"{verdict}: the markers' edges measure {edge:.1f} px (cards read well up to "
        f"{limit_px:g} px)",
    )


class FocusMonitor:
    """Focus check for the table loop: soft once ``confirm_frames`` frames in a row measure past
    the limit (a marker glimpsed through a passing hand's blur does not raise it), sharp again at
    the first frame back under it. Frames with no marker to measure leave the state as it was."""

    def __init__(
        self,
        calibration: TableCalibration,
        limit_px: float = READABLE_EDGE_WIDTH_PX,
        confirm_frames: int = 2,
    ) -> None:
        self.calibration = calibration
        self.limit_px = limit_px
        self.confirm_frames = confirm_frames
        self._over = 0

    def check(self, frame: np.ndarray,
              markers: Mapping[int, np.ndarray] | None = None) -> FocusReport:
        """Judge one frame (``markers`` as :func:`check_focus`'s); ``soft`` in the result is the
        debounced state."""
        report = check_focus(self.calibration, frame, self.limit_px, markers)
        if report.edge_width_px is not None:
            self._over = self._over + 1 if report.soft else 0
        soft = self._over >= self.confirm_frames
        return FocusReport(report.edge_width_px, soft, report.limit_px, report.message)
