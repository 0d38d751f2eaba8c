"""Shared scenes for the calibration tests: a known camera photographs a board and the table.

Everything is rendered once per session (the renders are the slow part) at 1280x720.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from dealer_assist.calibration.layout import Layout
from dealer_assist.calibration.lens import ChessboardSpec, LensCalibration, calibrate_lens
from dealer_assist.calibration.printables import FlatArt, board_art, table_art
from dealer_assist.calibration.synthetic import Pose, SyntheticCamera, board_poses, table_pose
from dealer_assist.calibration.table import TableFit, fit_table

STANDARD_LAYOUT = Path(__file__).parents[2] / "calibration" / "layouts" / "standard-7seat.yaml"
CHESSBOARD = ChessboardSpec(9, 6, 25.0)
CHESSBOARD_CENTER = (100.0, 62.5)


@dataclass
class TableScene:
    """The true camera and pose, the table art, the calibration frame and its fit."""

    camera: SyntheticCamera
    layout: Layout
    art: FlatArt
    pose: Pose
    frame: np.ndarray
    fit: TableFit


@pytest.fixture(scope="session")
def camera() -> SyntheticCamera:
    return SyntheticCamera.typical()


@pytest.fixture(scope="session")
def layout() -> Layout:
    return Layout.load(STANDARD_LAYOUT)


@pytest.fixture(scope="session")
def chessboard_art() -> FlatArt:
    return board_art(CHESSBOARD, 3.0)


@pytest.fixture(scope="session")
def board_images(camera: SyntheticCamera, chessboard_art: FlatArt) -> list[tuple[str, np.ndarray]]:
    return [
        (f"board-{k + 1:02d}.png", camera.render(chessboard_art, pose, seed=k))
        for k, pose in enumerate(board_poses(CHESSBOARD_CENTER, 9))
    ]


@pytest.fixture(scope="session")
def lens(board_images: list[tuple[str, np.ndarray]]) -> LensCalibration:
    return calibrate_lens(board_images, CHESSBOARD)


@pytest.fixture(scope="session")
def table_scene(camera: SyntheticCamera, layout: Layout, lens: LensCalibration) -> TableScene:
    art = table_art(layout)
    pose = table_pose()
    frame = camera.render(art, pose, seed=1)
    fit = fit_table(frame, "table.png", lens.camera, layout)
    return TableScene(camera, layout, art, pose, frame, fit)


@pytest.fixture(scope="session")
def layout_path() -> Path:
    return STANDARD_LAYOUT
