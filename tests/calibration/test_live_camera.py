"""The table's live camera on a real calibration: it checks focus with the calibration's
markers, and refuses frames of another size than the calibrated one, saying so."""

from __future__ import annotations

import threading

import cv2
import numpy as np

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
