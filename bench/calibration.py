"""Accuracy and speed of camera calibration, measured against a known synthetic camera.

    PYTHONPATH=. python bench/calibration.py

Renders board views and table frames through SyntheticCamera.typical() (1280x720, ~65 degrees,
barrel distortion), calibrates them as a technician would, and prints how far the results are
from the truth, plus the time of each step on this machine.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import TypeVar

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from dealer_assist.calibration.drift import check_drift  # noqa: E402
from dealer_assist.calibration.focus import check_focus  # noqa: E402
from dealer_assist.calibration.layout import Layout  # noqa: E402
from dealer_assist.calibration.lens import (  # noqa: E402
    CameraModel,
    CharucoSpec,
    ChessboardSpec,
    calibrate_lens,
)
from dealer_assist.calibration.printables import board_art, table_art  # noqa: E402
from dealer_assist.calibration.synthetic import (  # noqa: E402
    SyntheticCamera,
    board_poses,
    table_pose,
)
from dealer_assist.calibration.table import detect_markers, fit_table  # noqa: E402

LAYOUT = Path(__file__).resolve().parents[1] / "calibration" / "layouts" / "standard-7seat.yaml"
T = TypeVar("T")


def timed(work: Callable[[], T]) -> tuple[T, float]:
    """Result and wall seconds of one call."""
    start = time.perf_counter()
    result = work()
    return result, time.perf_counter() - start


def median_ms(work: Callable[[], object], repeats: int = 40) -> float:
    """Median wall milliseconds of ``repeats`` calls."""
    return 1000 * float(np.median([timed(work)[1] for _ in range(repeats)]))


def lens_errors(label: str, camera: SyntheticCamera, model: CameraModel, seconds: float) -> None:
    """Print focal and principal-point errors of a recovered lens."""
    focal = 100 * (model.K[0, 0] / camera.K[0, 0] - 1), 100 * (model.K[1, 1] / camera.K[1, 1] - 1)
    centre = float(np.hypot(*(model.K[:2, 2] - camera.K[:2, 2])))
    print(
        f"{label}: {model.images_used} views, RMS {model.rms_px:.3f} px, focal error"
        f" {focal[0]:+.3f}% / {focal[1]:+.3f}%, principal point off by {centre:.2f} px,"
        f" solved in {seconds:.2f} s"
    )


def main() -> None:
    """Measure and print."""
    print(f"os.cpu_count() = {os.cpu_count()}")
    camera = SyntheticCamera.typical()
    chessboard = ChessboardSpec(9, 6, 25.0)
    art = board_art(chessboard, 3.0)
    views = [
        (f"b{k}", camera.render(art, p, seed=k)) for k, p in enumerate(board_poses((100, 62.5), 9))
    ]
    lens, seconds = timed(lambda: calibrate_lens(views, chessboard))
    lens_errors("chessboard 9x6", camera, lens.camera, seconds)
    charuco = CharucoSpec(9, 6, 25.0, 18.75)
    art = board_art(charuco, 3.0)
    views = [
        (f"c{k}", camera.render(art, p, seed=k)) for k, p in enumerate(board_poses((125, 87.5), 9))
    ]
    charuco_lens, seconds = timed(lambda: calibrate_lens(views, charuco))
    lens_errors("ChArUco 10x7", camera, charuco_lens.camera, seconds)

    layout = Layout.load(LAYOUT)
    table = table_art(layout)
    pose = table_pose()
    frame = camera.render(table, pose, seed=1)
    fit, seconds = timed(lambda: fit_table(frame, "table", lens.camera, layout))
    calibration = fit.calibration
    grid = np.mgrid[-1000:1001:25, 0:1001:25].T.reshape(-1, 2).astype(float)
    felt = np.array([p for p in grid if layout.outline.contains(*p)])
    pixels = camera.project(felt, pose)
    errors = np.linalg.norm(calibration.images_to_table(pixels) - felt, axis=1)
    print(
        f"table plane (lens from the chessboard): {len(felt)} felt points every 25 mm, error"
        f" max {errors.max():.2f} mm, mean {errors.mean():.2f} mm, 95th pct"
        f" {np.percentile(errors, 95):.2f} mm; marker fit RMS {calibration.residual_mm:.2f} mm;"
        f" fitted in {seconds * 1000:.0f} ms"
    )
    for label, moved_pose in (
        ("still (new noise)", pose),
        ("slid 5 mm", pose.moved((5.0, 0.0, 0.0))),
        ("tipped 0.2 deg", pose.moved(turn_deg=(0.2, 0.0, 0.0))),
        ("twisted 0.5 deg", pose.moved(turn_deg=(0.0, 0.0, 0.5))),
    ):
        live = camera.render(table, moved_pose, seed=7)
        report, seconds = timed(partial(check_drift, calibration, live))
        print(
            f"drift, camera {label}: moved {report.moved_mm:.2f} mm, alarm {report.alarm}"
            f" ({seconds * 1000:.0f} ms per frame)"
        )
    live = camera.render(table, pose, seed=7)

    def checks_sharing_markers() -> None:
        markers = detect_markers(live, layout.aruco_dictionary)
        check_drift(calibration, live, markers=markers)
        check_focus(calibration, live, markers=markers)

    def checks_each_finding_markers() -> None:
        check_drift(calibration, live)
        check_focus(calibration, live)

    print(
        f"the table's live checks of one frame (drift + focus), median of 40:"
        f" {median_ms(checks_sharing_markers):.1f} ms with the markers found once (as the table"
        f" runs them), {median_ms(checks_each_finding_markers):.1f} ms with each finding them"
    )
    many = pixels[:1000]
    _, seconds = timed(lambda: [calibration.locate(u, v) for u, v in many])
    print(f"locate: {seconds / len(many) * 1e6:.0f} us per pixel, one at a time")
    _, seconds = timed(lambda: calibration.images_to_table(many))
    print(f"images_to_table: {seconds / len(many) * 1e6:.1f} us per pixel, {len(many)} at once")


if __name__ == "__main__":
    main()
