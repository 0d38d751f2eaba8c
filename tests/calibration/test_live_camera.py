"""The table's live camera on a real calibration: it checks focus with the calibration's
markers, and refuses frames of another size than the calibrated one, saying so."""

from __future__ import annotations

import threading

import cv2
import numpy as np

from dealer_assist.calibration import table as calibration_table
from dealer_assist.calibration.drift import check_drift
from dealer_assist.calibration.focus import check_focus
from dealer_assist.table.config import CameraConfig
from dealer_assist.table.live_camera import open_live_camera

from .conftest import TableScene


def frame(table_scene: TableScene, blur_sigma: float, seed: int = 21) -> np.ndarray:
    return table_scene.camera.render(table_scene.art, table_scene.pose, blur_sigma=blur_sigma,
                                     seed=seed)


def test_the_table_cameras_focus_check_is_this_monitor(table_scene: TableScene, tmp_path) -> None:
    """The live camera the table opens from its config checks focus on its calibration's
    markers: a soft view twice over gives the reason, a sharp one none."""
    calibration = tmp_path / "table.yaml"
    table_scene.fit.calibration.save(calibration)
    source = open_live_camera(CameraConfig(str(tmp_path / "no-such-video.avi"), calibration))
    focus = source.stages.focus
    assert focus is not None
    soft = frame(table_scene, 1.1)
    assert focus(soft) is None  # one soft frame alone
    reason = focus(soft)
    assert reason is not None and reason.startswith("frame soft: the markers' edges measure 3.")
    assert focus(frame(table_scene, 0.0)) is None


def test_the_drift_and_focus_checks_of_a_frame_find_its_markers_once(
        table_scene: TableScene, tmp_path, monkeypatch) -> None:
    """Both checks run on the same frame every few seconds; marker detection (the costly part,
    15 ms a 3K frame) is done once for the two, and the verdicts are what each check alone
    says. The real detector is counted, not replaced."""
    calibration = tmp_path / "table.yaml"
    table_scene.fit.calibration.save(calibration)
    calls: list[int] = []
    real = calibration_table.detect_markers

    def counted(image, dictionary):
        calls.append(1)
        return real(image, dictionary)

    monkeypatch.setattr(calibration_table, "detect_markers", counted)
    source = open_live_camera(CameraConfig(str(tmp_path / "no-such-video.avi"), calibration))
    drift, focus = source.stages.drift, source.stages.focus
    assert drift is not None and focus is not None
    soft = frame(table_scene, 1.1)
    for _ in range(2):  # the second time both are past their two-frame confirmation
        calls.clear()
        moved, blurred = drift(soft), focus(soft)
        assert len(calls) == 1
    assert moved is None and not check_drift(table_scene.fit.calibration, soft).alarm
    assert blurred == check_focus(table_scene.fit.calibration, soft).message
    calls.clear()
    assert focus(soft) is not None and len(calls) == 1  # a frame checked again is looked at again


def test_frames_of_another_size_are_refused_and_the_feed_reported_lost_saying_why(
        table_scene: TableScene, tmp_path) -> None:
    """A camera plugged back in at its default resolution: its frames would put cards in the
    wrong places, so none is used, and the dealer's alarm says why."""
    calibration = tmp_path / "table.yaml"
    table_scene.fit.calibration.save(calibration)
    video = tmp_path / "small.avi"
    writer = cv2.VideoWriter(str(video), cv2.VideoWriter_fourcc(*"MJPG"), 10, (640, 360))
    for _ in range(5):
        writer.write(cv2.resize(table_scene.frame, (640, 360)))
    writer.release()
    source = open_live_camera(CameraConfig(str(video), calibration))
    seen: list = []
    lost = threading.Event()

    def sink(item) -> None:
        seen.append(item)
        if getattr(item, "up", True) is False:
            lost.set()

    source.start(sink)
    try:
        assert lost.wait(10), seen
    finally:
        source.stop()
    assert source.frames_processed == 0
    assert seen[-1].detail == (
        f"camera {video}: no frame for 2 s (camera {video}: image is 640x360 but the camera was"
        " calibrated at 1280x720)")
