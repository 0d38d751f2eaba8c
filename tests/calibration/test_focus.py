"""Focus: a sharp camera is judged sharp, one out of focus soft (after two frames in a row), and a
frame with no marker in view gives no verdict."""

from __future__ import annotations

import numpy as np
import pytest

from dealer_assist.calibration.focus import FocusMonitor, check_focus
from dealer_assist.calibration.table import READABLE_EDGE_WIDTH_PX, detect_markers

from .conftest import TableScene


def frame(table_scene: TableScene, blur_sigma: float, seed: int = 21) -> np.ndarray:
    return table_scene.camera.render(table_scene.art, table_scene.pose, blur_sigma=blur_sigma,
                                     seed=seed)


def test_a_sharp_view_is_sharp(table_scene: TableScene) -> None:
    report = check_focus(table_scene.fit.calibration, frame(table_scene, 0.0))
    assert report.edge_width_px == pytest.approx(2.0, abs=0.15) and not report.soft
    assert report.message.startswith("frame sharp: the markers' edges measure 2.0 px")


def test_a_view_out_of_focus_is_soft(table_scene: TableScene) -> None:
    report = check_focus(table_scene.fit.calibration, frame(table_scene, 1.1))
    assert report.edge_width_px is not None and report.edge_width_px > READABLE_EDGE_WIDTH_PX
    assert report.soft
    assert report.message == (f"frame soft: the markers' edges measure "
                              f"{report.edge_width_px:.1f} px (cards read well up to 2.6 px)")
    assert report.to_json()["soft"] is True


def test_no_marker_in_view_gives_no_verdict(table_scene: TableScene) -> None:
    blank = np.full_like(table_scene.frame, 90)
    report = check_focus(table_scene.fit.calibration, blank)
    assert report.edge_width_px is None and not report.soft
    assert report.message == "cannot judge focus: no layout marker visible"


def test_markers_already_found_are_the_ones_measured(table_scene: TableScene) -> None:
    """Given the frame's markers (found once for the drift check too), focus measures those:
    none given, no verdict, though the frame shows them."""
    sharp = frame(table_scene, 0.0)
    assert check_focus(table_scene.fit.calibration, sharp, markers={}).edge_width_px is None
    found = detect_markers(sharp, table_scene.fit.calibration.layout.aruco_dictionary)
    assert check_focus(table_scene.fit.calibration, sharp, markers=found) == \
        check_focus(table_scene.fit.calibration, sharp)


def test_the_monitor_goes_soft_after_two_frames_in_a_row_and_sharp_at_once(
        table_scene: TableScene) -> None:
    """One soft frame alone is not enough; a frame with no marker leaves the state as it was;
    the first sharp frame clears it."""
    monitor = FocusMonitor(table_scene.fit.calibration)
    soft, sharp = frame(table_scene, 1.1), frame(table_scene, 0.0)
    blank = np.full_like(sharp, 90)
    verdicts = [monitor.check(f).soft for f in (soft, sharp, soft, blank, soft, blank, sharp)]
    assert verdicts == [False, False, False, False, True, True, False]

