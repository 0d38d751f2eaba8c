"""Properties checked over many generated cases, with OpenCV as the independent oracle."""

from __future__ import annotations

import math

import cv2
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from dealer_assist.calibration.layout import Polygon

from .conftest import TableScene

star_polygons = st.lists(st.floats(10.0, 100.0), min_size=3, max_size=12).map(
    lambda radii: Polygon(
        tuple(
            (r * math.cos(2 * math.pi * k / len(radii)), r * math.sin(2 * math.pi * k / len(radii)))
            for k, r in enumerate(radii)
        )
    )
)


@settings(max_examples=60, deadline=None)
@given(star_polygons, st.floats(-110.0, 110.0), st.floats(-110.0, 110.0))
def test_polygon_contains_agrees_with_opencv(polygon: Polygon, x: float, y: float) -> None:
    contour = np.array(polygon.points, np.float32).reshape(-1, 1, 2)
    distance = cv2.pointPolygonTest(contour, (x, y), True)
    if abs(distance) > 1e-3:  # on the edge either answer is fine
        assert polygon.contains(x, y) == (distance > 0)


@settings(max_examples=60, deadline=None)
@given(st.floats(-950.0, 950.0), st.floats(10.0, 990.0))
def test_table_to_image_and_back_is_identity_on_the_felt(
    table_scene: TableScene, x: float, y: float
) -> None:
    calibration = table_scene.fit.calibration
    if not table_scene.layout.outline.contains(x, y):
        return
    u, v = calibration.table_to_image(x, y)
    assert 0 <= u < 1280 and 0 <= v < 720
    back = calibration.image_to_table(u, v)
    assert math.hypot(back[0] - x, back[1] - y) < 1e-3
