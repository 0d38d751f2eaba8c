"""Drift: a bumped camera alarms, a still one does not, hidden markers give no verdict."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from dealer_assist.calibration.drift import DriftMonitor, check_drift
from dealer_assist.calibration.layout import MarkerPlacement
from dealer_assist.calibration.printables import FlatArt, paste_marker
from dealer_assist.calibration.table import detect_markers

from .conftest import TableScene


def test_still_camera_does_not_alarm(table_scene: TableScene) -> None:
    """A later frame from the same camera: new sensor noise, a little brighter."""
    frame = table_scene.camera.render(table_scene.art, table_scene.pose, seed=11)
    frame = cv2.convertScaleAbs(frame, alpha=1.1, beta=5)
    report = check_drift(table_scene.fit.calibration, frame)
    assert not report.alarm
    assert report.moved_mm is not None and report.moved_mm < 0.5
    assert report.markers_found == (0, 1, 2, 3, 4, 5) and report.markers_missing == ()
    assert report.message.startswith("camera still")


@pytest.mark.parametrize(
    ("shift_mm", "turn_deg"),
    [
        ((5.0, 0.0, 0.0), (0.0, 0.0, 0.0)),
        ((0.0, 0.0, 0.0), (0.2, 0.0, 0.0)),
        ((0.0, 0.0, 0.0), (0.0, 0.0, 0.5)),
    ],
    ids=["slid 5 mm", "tipped 0.2 deg", "twisted 0.5 deg"],
)
def test_bumped_camera_raises_the_alarm(
    table_scene: TableScene,
    shift_mm: tuple[float, float, float],
    turn_deg: tuple[float, float, float],
) -> None:
    pose = table_scene.pose.moved(shift_mm, turn_deg)
    frame = table_scene.camera.render(table_scene.art, pose, seed=12)
    report = check_drift(table_scene.fit.calibration, frame)
    assert report.alarm
    assert report.moved_mm is not None and report.moved_mm > 3.0
    assert report.message.startswith("camera moved")


def test_slide_of_5mm_is_measured_as_about_5mm(table_scene: TableScene) -> None:
    frame = table_scene.camera.render(
        table_scene.art, table_scene.pose.moved((0.0, 5.0, 0.0)), seed=13
    )
    report = check_drift(table_scene.fit.calibration, frame)
    assert report.moved_mm == pytest.approx(5.0, abs=0.5)


def test_one_marker_nudged_on_the_felt_does_not_alarm(table_scene: TableScene) -> None:
    art = FlatArt(
        table_scene.art.image.copy(), table_scene.art.mm_per_px, table_scene.art.origin_mm
    )
    nudged = table_scene.layout.marker(2)
    paste_marker(
        art,
        "DICT_4X4_50",
        MarkerPlacement(2, (nudged.center[0] + 8, nudged.center[1]), nudged.size_mm),
    )
    report = check_drift(
        table_scene.fit.calibration, table_scene.camera.render(art, table_scene.pose, seed=14)
    )
    assert not report.alarm
    assert report.per_marker_mm[2] > 5.0
    assert report.moved_mm is not None and report.moved_mm < 0.5


def test_hidden_markers_give_no_verdict(table_scene: TableScene) -> None:
    blank = np.full_like(table_scene.frame, 60)
    report = check_drift(table_scene.fit.calibration, blank)
    assert report.moved_mm is None and not report.alarm
    assert report.markers_missing == (0, 1, 2, 3, 4, 5)
    assert report.message == "cannot judge drift: 0 of 6 baseline markers visible (need 2)"


def test_markers_already_found_are_the_ones_compared(table_scene: TableScene) -> None:
    """Given the frame's markers (found once for the focus check too), drift compares those."""
    calibration = table_scene.fit.calibration
    assert check_drift(calibration, table_scene.frame, markers={}).moved_mm is None
    found = detect_markers(table_scene.frame, calibration.layout.aruco_dictionary)
    assert check_drift(calibration, table_scene.frame, markers=found) == \
        check_drift(calibration, table_scene.frame)


def test_monitor_confirms_over_two_frames_and_clears_when_back(table_scene: TableScene) -> None:
    monitor = DriftMonitor(table_scene.fit.calibration, threshold_mm=3.0, confirm_frames=2)
    still = table_scene.camera.render(table_scene.art, table_scene.pose, seed=15)
    bumped = table_scene.camera.render(
        table_scene.art, table_scene.pose.moved((6.0, 0.0, 0.0)), seed=16
    )
    blank = np.full_like(still, 60)
    assert not monitor.check(still).alarm
    first = monitor.check(bumped)
    assert not first.alarm and first.moved_mm is not None and first.moved_mm > 3.0
    assert monitor.check(bumped).alarm
    assert monitor.check(blank).alarm  # no markers visible: the alarm stands
    assert not monitor.check(still).alarm


def test_frame_of_another_size_is_refused_by_name(table_scene: TableScene) -> None:
    from dealer_assist.calibration.errors import CalibrationError

    small = cv2.resize(table_scene.frame, (960, 540))
    with pytest.raises(CalibrationError, match=r"^cam2\.png: image is 960x540 but the camera"):
        check_drift(table_scene.fit.calibration, small, name="cam2.png")


def test_calibration_values_cannot_be_changed_in_place(table_scene: TableScene) -> None:
    calibration = table_scene.fit.calibration
    with pytest.raises(ValueError, match="read-only"):
        calibration.rvec[0] = 0.0
    with pytest.raises(ValueError, match="read-only"):
        calibration.camera.K[0, 0] = 1.0
    with pytest.raises(TypeError):
        calibration.reference_markers[0] = np.zeros((4, 2))  # type: ignore[index]
