"""The table's live camera on a real calibration: it checks focus with the calibration's
markers, and refuses frames of another size than the calibrated one, saying so."""

from __future__ import annotations

import threading

import cv2
import numpy as np

from dealer_assist.calibration import table as calibration_table
from dealer_assist.calibration.drift import check_drift
from dealer_assist.calibration.focus import check_focus
from dealer_assist.table.config import CameraConfig, VisionConfig
from dealer_assist.table.live_camera import open_live_camera
from tests.vision.test_runtime import shipped_pins

from .conftest import TableScene

#: The shipped models' hashes, pinned as a table's [vision] pins them.
PINNED = VisionConfig(detector_sha256=shipped_pins("detector"),
                      reader_sha256=shipped_pins("reader"))


def frame(table_scene: TableScene, blur_sigma: float, seed: int = 21) -> np.ndarray:
    return table_scene.camera.render(table_scene.art, table_scene.pose, blur_sigma=blur_sigma,
                                     seed=seed)


def test_the_table_cameras_view_check_is_these_monitors(table_scene: TableScene,
                                                       tmp_path) -> None:
    """The live camera the table opens from its config looks at its view on its calibration's
    markers: a soft view twice over gives the focus check's reason, a sharp one none, and a
    camera where it was calibrated is not moved."""
    calibration = tmp_path / "table.yaml"
    table_scene.fit.calibration.save(calibration)
    source = open_live_camera(CameraConfig(str(tmp_path / "no-such-video.avi"), calibration,
                                                 vision=PINNED))
    check_view = source.stages.check_view
    assert check_view is not None
    soft = frame(table_scene, 1.1)
    assert check_view(soft).soft is None  # one soft frame alone
    view = check_view(soft)
    assert view.soft is not None
    assert view.soft.startswith("frame soft: the markers' edges measure 3.")
    assert view.soft == check_focus(table_scene.fit.calibration, soft).message
    assert view.moved is None and not check_drift(table_scene.fit.calibration, soft).alarm
    assert check_view(frame(table_scene, 0.0)).soft is None


def test_a_look_at_the_view_finds_the_frames_markers_once(
        table_scene: TableScene, tmp_path, monkeypatch) -> None:
    """Drift and focus are checked on the same frame every few seconds; marker detection (the
    costly part, 15 ms a 3K frame) is done once for the two, each look at the frame afresh. The
    real detector is counted, not replaced."""
    calibration = tmp_path / "table.yaml"
    table_scene.fit.calibration.save(calibration)
    calls: list[int] = []
    real = calibration_table.detect_markers

    def counted(image, dictionary):
        calls.append(1)
        return real(image, dictionary)

    monkeypatch.setattr(calibration_table, "detect_markers", counted)
    source = open_live_camera(CameraConfig(str(tmp_path / "no-such-video.avi"), calibration,
                                                 vision=PINNED))
    check_view = source.stages.check_view
    assert check_view is not None
    soft = frame(table_scene, 1.1)
    for looks in (1, 2, 3):
        check_view(soft)
        assert len(calls) == looks


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
    source = open_live_camera(CameraConfig(str(video), calibration, vision=PINNED))
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
