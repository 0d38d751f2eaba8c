"""The practice camera's table placed from hand-given points, at any resolution (test helper)."""

from __future__ import annotations

import numpy as np

from dealer_assist.calibration.layout import Layout
from dealer_assist.calibration.lens import CameraModel
from dealer_assist.calibration.synthetic import SyntheticCamera, table_pose
from dealer_assist.calibration.table import PointPair, TableFit, fit_table

# five felt points (table mm) a technician would click: the rail's ends, two seats, the far edge
HAND_POINTS_MM = [(-700.0, 100.0), (700.0, 100.0), (-450.0, 750.0), (450.0, 750.0), (0.0, 950.0)]


def fit_from_hand_points(size: tuple[int, int], layout: Layout) -> TableFit:
    """The typical camera at ``size`` (W, H) in the practice pose, its table fitted on a blank
    frame from :data:`HAND_POINTS_MM` clicked exactly where they project."""
    camera = SyntheticCamera.typical(size)
    lens = CameraModel(camera.K, camera.dist, camera.image_size)
    pixels = camera.project(np.array(HAND_POINTS_MM), table_pose())
    points = [PointPair((float(u), float(v)), (x, y))
              for (u, v), (x, y) in zip(pixels, HAND_POINTS_MM, strict=True)]
    return fit_table(np.zeros((size[1], size[0], 3), np.uint8), "table.png", lens, layout, points)
