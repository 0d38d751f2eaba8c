"""The visual check: the layout's zones, axes and markers drawn over a camera frame.

Drawing is kept apart from the maths: ``draw_overlay`` only reads a calibration and the markers
found in the frame, and returns a new image.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import cv2
import numpy as np

from dealer_assist.calibration.drift import DriftReport
from dealer_assist.calibration.layout import Point
from dealer_assist.calibration.table import TableCalibration

ZONE_BGR = {
    "bet": (0, 215, 255),
    "match": (255, 80, 255),
    "cards": (255, 255, 0),
    "insurance": (0, 140, 255),
    "chip_tray": (80, 80, 255),
    "discard": (80, 80, 255),
}
DEALER_CARDS_BGR = (80, 80, 255)
OUTLINE_BGR = (255, 255, 255)
FOUND_BGR = (0, 230, 0)
MISSING_BGR = (0, 0, 255)
AXES_BGR = (255, 170, 0)
SHIFT = 4  # sub-pixel drawing: coordinates in 1/16 px


def _fixed(pixels: np.ndarray) -> np.ndarray:
    return np.round(pixels * (1 << SHIFT)).astype(np.int32).reshape(-1, 1, 2)


Box = tuple[int, int, int, int]  # x1, y1, x2, y2 in pixels


class Labels:
    """Places text labels so that none overprints another: a label whose box would overlap one
    already placed moves down, then up, by its own height until it is clear (``boxes``: where
    each landed, in the order placed). :meth:`draw` paints them, after every line, so no line
    crosses a label either."""

    def __init__(self) -> None:
        self.boxes: list[tuple[str, Box]] = []
        self._pending: list[tuple[str, tuple[int, int], tuple[int, int, int], float, int, Box]] = []

    def place(self, image: np.ndarray, text: str, at: tuple[float, float],
              color: tuple[int, int, int], scale: float) -> Box:
        thickness = max(1, round(scale * 2))
        (width, height), baseline = cv2.getTextSize(text, cv2.FONT_HERSHEY_SIMPLEX, scale,
                                                    thickness)
        pad = max(1, round(3 * scale))
        x, y = round(at[0]), round(at[1])
        step = height + baseline + 2 * pad
        shift = 0
        for tries in range(40):
            shift = (tries + 1) // 2 * step * (1 if tries % 2 else -1)
            box = (x - pad, y + shift - height - pad, x + width + pad, y + shift + baseline)
            if not any(_overlap(box, other) for _, other in self.boxes):
                break
        self.boxes.append((text, box))
        self._pending.append((text, (x, y + shift), color, scale, thickness, box))
        return box

    def draw(self, image: np.ndarray) -> None:
        """Paint every label placed and not yet painted: its text on a black box."""
        for text, org, color, scale, thickness, box in self._pending:
            cv2.rectangle(image, box[:2], box[2:], (0, 0, 0), cv2.FILLED)
            cv2.putText(image, text, org, cv2.FONT_HERSHEY_SIMPLEX, scale, color, thickness,
                        cv2.LINE_AA)
        self._pending.clear()


def _overlap(a: Box, b: Box) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def draw_overlay(
    frame: np.ndarray,
    calibration: TableCalibration,
    seen_markers: Mapping[int, np.ndarray],
    drift: DriftReport | None = None,
    labels: Labels | None = None,
) -> np.ndarray:
    """A copy of ``frame`` with the layout projected through the calibration: felt outline, every
    zone (seat numbers at the betting spots), the table axes, the markers found (green, with the
    layout's idea of them in white) and the ones missing (red), and a summary line; a drift
    alarm across the top in large red letters. No label overprints another (``labels``, when
    given, is where they were placed)."""
    image = frame.copy() if frame.ndim == 3 else cv2.cvtColor(frame, cv2.COLOR_GRAY2BGR)
    labels = Labels() if labels is None else labels
    _label = labels.place
    banner = None
    if drift is not None and drift.alarm and drift.moved_mm is not None:
        text = f"CAMERA MOVED {drift.moved_mm:.1f} mm: RECALIBRATE"
        band, banner = _alarm_banner(image, text)
        labels.boxes.append((text, band))  # drawn last, over the lines; the labels keep clear
    scale = image.shape[1] / 1600
    line = max(1, round(2 * scale))
    layout = calibration.layout

    def polyline(
        points_mm: list[Point], color: tuple[int, int, int], closed: bool = True, width: int = line
    ) -> None:
        pixels = calibration.tables_to_image(np.array(points_mm))
        cv2.polylines(image, [_fixed(pixels)], closed, color, width, cv2.LINE_AA, SHIFT)

    polyline(layout.outline.outline(20.0), OUTLINE_BGR)
    for zone in layout.zones:
        color = (
            DEALER_CARDS_BGR if zone.seat is None and zone.name == "cards" else ZONE_BGR[zone.name]
        )
        polyline(zone.shape.outline(), color)
        if zone.name == "bet" or zone.seat is None:
            text = (
                f"{zone.seat}" if zone.seat is not None else f"dealer {zone.name}".replace("_", " ")
            )
            x, y = calibration.table_to_image(*zone.shape.centroid)
            _label(
                image,
                text,
                (x - 8 * scale * len(text), y + 10 * scale),
                (255, 255, 255),
                0.8 * scale,
            )
    origin = calibration.table_to_image(0, 0)
    for end, name in (((200.0, 0.0), "+x"), ((0.0, 200.0), "+y")):
        tip = calibration.table_to_image(*end)
        cv2.arrowedLine(
            image,
            tuple(round(v) for v in origin),
            tuple(round(v) for v in tip),
            AXES_BGR,
            line + 1,
            cv2.LINE_AA,
            0,
            0.15,
        )
        _label(image, f"{name} (200 mm)", tip, AXES_BGR, 0.6 * scale)
    for marker in layout.markers:
        expected = calibration.tables_to_image(np.array(marker.corners()))
        found = seen_markers.get(marker.marker_id)
        if found is None:
            center = expected.mean(axis=0)
            size = 14 * scale
            for dx, dy in ((1, 1), (1, -1)):
                a = (round(center[0] - dx * size), round(center[1] - dy * size))
                b = (round(center[0] + dx * size), round(center[1] + dy * size))
                cv2.line(image, a, b, MISSING_BGR, line + 1, cv2.LINE_AA)
            _label(
                image,
                f"id {marker.marker_id} missing",
                (center[0] + size, center[1]),
                MISSING_BGR,
                0.6 * scale,
            )
            continue
        cv2.polylines(image, [_fixed(expected)], True, (255, 255, 255), 1, cv2.LINE_AA, SHIFT)
        cv2.polylines(image, [_fixed(found)], True, FOUND_BGR, line, cv2.LINE_AA, SHIFT)
        _label(
            image,
            f"id {marker.marker_id}",
            (found[:, 0].max() + 4 * scale, found[:, 1].mean()),
            FOUND_BGR,
            0.6 * scale,
        )
    eye = calibration.camera_position_mm
    summary = (
        f"{layout.name}: fit {calibration.residual_mm:.2f} mm RMS"
        f" | camera {-eye[2] / 1000:.2f} m above felt, tilt {calibration.tilt_deg:.0f} deg"
        f" | markers {sum(m.marker_id in seen_markers for m in layout.markers)}"
        f"/{len(layout.markers)}"
    )
    if drift is not None and drift.moved_mm is not None:
        summary += f" | drift {drift.moved_mm:.1f} mm{' ALARM' if drift.alarm else ''}"
    _label(image, summary, (10 * scale, image.shape[0] - 14 * scale), (255, 255, 255), 0.75 * scale)
    labels.draw(image)
    if banner is not None:
        banner()
    return image


def _alarm_banner(image: np.ndarray, text: str) -> tuple[Box, Callable[[], None]]:
    """Where the drift alarm goes (a band across the top, as large as fits) and how to draw it:
    white on red."""
    scale = 3.0
    thickness = 6
    while scale > 0.5:
        thickness = max(2, round(scale * 2))
        (width, _height), _ = cv2.getTextSize(text, cv2.FONT_HERSHEY_SIMPLEX, scale, thickness)
        if width <= image.shape[1] * 0.9:
            break
        scale *= 0.9
    (width, height), baseline = cv2.getTextSize(text, cv2.FONT_HERSHEY_SIMPLEX, scale, thickness)
    pad = round(height * 0.5)
    band = (0, 0, image.shape[1], height + baseline + 2 * pad)

    def draw() -> None:
        cv2.rectangle(image, band[:2], band[2:], MISSING_BGR, cv2.FILLED)
        cv2.putText(image, text, ((image.shape[1] - width) // 2, pad + height),
                    cv2.FONT_HERSHEY_SIMPLEX, scale, (255, 255, 255), thickness, cv2.LINE_AA)

    return band, draw
