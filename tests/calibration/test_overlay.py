"""The calibration overlay a technician reads: a bumped camera's drift alarm across the top in
large red letters, and no label printed over another (the "+x" axis once covered "dealer chip
tray")."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np

from dealer_assist.calibration.drift import check_drift
from dealer_assist.calibration.overlay import Labels, draw_overlay
from dealer_assist.calibration.table import detect_markers

from .conftest import TableScene

ARTIFACTS = Path(__file__).parents[2] / "test-artifacts"


def _overlaps(a: tuple[int, int, int, int], b: tuple[int, int, int, int]) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def _drawn(table_scene: TableScene, frame: np.ndarray) -> tuple[np.ndarray, Labels, object]:
    calibration = table_scene.fit.calibration
    drift = check_drift(calibration, frame)
    labels = Labels()
    seen = detect_markers(frame, calibration.layout.aruco_dictionary)
    image = draw_overlay(frame, calibration, seen, drift, labels)
    return image, labels, drift


def test_no_label_overprints_another(table_scene: TableScene) -> None:
    image, labels, _ = _drawn(table_scene, table_scene.frame)
    texts = [text for text, _ in labels.boxes]
    assert "+x (200 mm)" in texts and "dealer chip tray" in texts
    for i, (text, box) in enumerate(labels.boxes):
        assert 0 <= box[0] and box[2] <= image.shape[1] + 40, (text, box)
        for other, other_box in labels.boxes[i + 1:]:
            assert not _overlaps(box, other_box), (text, box, other, other_box)


def test_labels_placed_on_one_spot_are_stacked_clear_of_each_other() -> None:
    image = np.zeros((400, 600, 3), np.uint8)
    labels = Labels()
    boxes = [labels.place(image, text, (100, 200), (255, 255, 255), 0.8)
             for text in ("dealer chip tray", "+x (200 mm)", "id 3")]
    for i, box in enumerate(boxes):
        for other in boxes[i + 1:]:
            assert not _overlaps(box, other)


def test_a_bumped_camera_is_drawn_as_a_large_red_alarm_across_the_top(
        table_scene: TableScene) -> None:
    pose = table_scene.pose.moved((8.0, 0.0, 0.0), (0.0, 0.0, 0.0))
    frame = table_scene.camera.render(table_scene.art, pose, seed=12)
    image, labels, drift = _drawn(table_scene, frame)
    ARTIFACTS.mkdir(exist_ok=True)
    cv2.imwrite(str(ARTIFACTS / "calibration-overlay-drift.png"), image)
    assert drift.alarm  # type: ignore[attr-defined]
    text, band = next((t, b) for t, b in labels.boxes if t.startswith("CAMERA MOVED"))
    assert text.endswith("mm: RECALIBRATE")
    assert band[2] == image.shape[1] and band[3] >= image.shape[0] * 0.05  # full width, tall
    top = image[band[1]:band[3], :, :].reshape(-1, 3).astype(int)
    red = (top[:, 2] > 200) & (top[:, 1] < 60) & (top[:, 0] < 60)
    white = (top > 200).all(axis=1)
    assert red.mean() > 0.5 and white.mean() > 0.05  # white letters on a red band
    for other, box in labels.boxes:
        if other != text:
            assert not _overlaps(box, band), other
    still, _, _ = _drawn(table_scene, table_scene.frame)
    assert not ((still[:20, :, 2] > 200) & (still[:20, :, 1] < 60)).mean() > 0.5
