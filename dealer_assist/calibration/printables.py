"""Printable calibration boards and marker sheets, and the flat table artwork they come from.

Every image here is a ``FlatArt``: pixels plus where they lie in millimetres, so the same drawing
serves for printing (at a DPI) and as the texture the synthetic camera photographs.
"""

from __future__ import annotations

import math
import struct
import zlib
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

from dealer_assist.calibration.errors import CalibrationError
from dealer_assist.calibration.layout import Circle, Layout, MarkerPlacement
from dealer_assist.calibration.lens import BoardSpec, ChessboardSpec
from dealer_assist.image_files import MAX_PIXELS

MM_PER_INCH = 25.4
FELT_BGR = (48, 110, 40)
LINE_BGR = (225, 235, 235)
MARKER_MARGIN = 0.25
"""White margin round a marker, as a share of its side (ArUco needs light round the black)."""


@dataclass(frozen=True, eq=False)
class FlatArt:
    """An image of something flat: pixel (col, row)'s centre lies at
    ``origin_mm + ((col + 0.5) * mm_per_px, (row + 0.5) * mm_per_px)``."""

    image: np.ndarray
    mm_per_px: float
    origin_mm: tuple[float, float]

    def to_pixel(self, x_mm: float, y_mm: float) -> tuple[float, float]:
        """Pixel coordinates (centre convention) of a point in millimetres."""
        return (
            (x_mm - self.origin_mm[0]) / self.mm_per_px - 0.5,
            (y_mm - self.origin_mm[1]) / self.mm_per_px - 0.5,
        )


def board_art(spec: BoardSpec, px_per_mm: float, margin_mm: float | None = None) -> FlatArt:
    """The board with a white margin; its first inner corner is at (0, 0) mm for a chessboard and
    the board's top-left corner is at (0, 0) mm for ChArUco (OpenCV's conventions)."""
    square_px = max(1, round(spec.square_mm * px_per_mm))
    mm_per_px = spec.square_mm / square_px
    margin_px = round((spec.square_mm if margin_mm is None else margin_mm) / mm_per_px)
    squares_x, squares_y = spec.cols + 1, spec.rows + 1
    if isinstance(spec, ChessboardSpec):
        tiles = (np.indices((squares_y, squares_x)).sum(axis=0) % 2 == 1).astype(np.uint8) * 255
        board = cv2.resize(
            tiles, (squares_x * square_px, squares_y * square_px), interpolation=cv2.INTER_NEAREST
        )
        origin_shift = spec.square_mm  # first inner corner is one square in
    else:
        board = spec.board().generateImage(
            (squares_x * square_px, squares_y * square_px), marginSize=0
        )
        origin_shift = 0.0
    image = cv2.copyMakeBorder(
        board, margin_px, margin_px, margin_px, margin_px, cv2.BORDER_CONSTANT, value=255
    )
    origin = -origin_shift - margin_px * mm_per_px
    return FlatArt(image, mm_per_px, (origin, origin))


def marker_image(dictionary: str, marker_id: int, cells_px: int) -> np.ndarray:
    """The canonical marker (black border included), ``cells_px`` pixels per bit cell."""
    aruco_dict = cv2.aruco.getPredefinedDictionary(getattr(cv2.aruco, dictionary))
    cells = aruco_dict.markerSize + 2
    return cv2.aruco.generateImageMarker(aruco_dict, marker_id, cells * cells_px)


def paste_marker(canvas: FlatArt, dictionary: str, marker: MarkerPlacement) -> None:
    """Draw a marker with its white margin onto ``canvas`` at its exact (sub-pixel) place."""
    cells = cv2.aruco.getPredefinedDictionary(getattr(cv2.aruco, dictionary)).markerSize + 2
    cells_px = max(4, math.ceil(marker.size_mm / canvas.mm_per_px / cells))
    sticker = marker_image(dictionary, marker.marker_id, cells_px)
    side = sticker.shape[0]
    pad = round(side * MARKER_MARGIN)
    sticker = cv2.copyMakeBorder(sticker, pad, pad, pad, pad, cv2.BORDER_CONSTANT, value=255)
    grown = MarkerPlacement(
        marker.marker_id,
        marker.center,
        marker.size_mm * (side + 2 * pad) / side,
        marker.rotation_deg,
    )
    source = np.array(
        [
            [-0.5, -0.5],
            [sticker.shape[1] - 0.5, -0.5],
            [sticker.shape[1] - 0.5, sticker.shape[0] - 0.5],
            [-0.5, sticker.shape[0] - 0.5],
        ],
        np.float32,
    )
    target = np.array([canvas.to_pixel(x, y) for x, y in grown.corners()], np.float32)
    # only the pixels the sticker covers are blended (the whole page took 4 GB at 1200 DPI)
    height, width = canvas.image.shape[:2]
    x0, y0 = np.clip(np.floor(target.min(axis=0)).astype(int) - 1, 0, (width, height))
    x1, y1 = np.clip(np.ceil(target.max(axis=0)).astype(int) + 2, 0, (width, height))
    if x1 <= x0 or y1 <= y0:
        return  # wholly off the canvas
    warp = cv2.getPerspectiveTransform(source, target - np.array([x0, y0], np.float32))
    size = (int(x1 - x0), int(y1 - y0))
    ink = cv2.warpPerspective(sticker, warp, size, flags=cv2.INTER_LINEAR)
    cover = cv2.warpPerspective(np.full_like(sticker, 255), warp, size,
                                flags=cv2.INTER_LINEAR).astype(np.uint16)
    area = canvas.image[y0:y1, x0:x1]
    if area.ndim == 3:
        ink, cover = ink[..., None], cover[..., None]
    # the blend rounded, in whole numbers: 255 * 255 fits in 16 bits
    area[:] = ((area * (255 - cover) + ink * cover + 127) // 255).astype(np.uint8)


def table_art(layout: Layout, px_per_mm: float = 2.0, margin_mm: float = 150.0) -> FlatArt:
    """The felt as printed: outline, zones drawn as white lines, markers glued on."""
    xs = [p[0] for p in layout.outline.points]
    ys = [p[1] for p in layout.outline.points]
    x0, y0 = min(xs) - margin_mm, min(ys) - margin_mm
    width = math.ceil((max(xs) - x0 + margin_mm) * px_per_mm)
    height = math.ceil((max(ys) - y0 + margin_mm) * px_per_mm)
    art = FlatArt(np.full((height, width, 3), 70, np.uint8), 1 / px_per_mm, (x0, y0))
    shift = 4
    scale = 2**shift

    def fixed(points: list[tuple[float, float]]) -> np.ndarray:
        return np.array(
            [[round(c * scale) for c in art.to_pixel(x, y)] for x, y in points], np.int32
        )

    cv2.fillPoly(art.image, [fixed(list(layout.outline.points))], FELT_BGR, cv2.LINE_AA, shift)
    line_px = max(1, round(6 * px_per_mm))
    for zone in layout.zones:
        if isinstance(zone.shape, Circle):
            center = fixed([zone.shape.center])[0]
            radius = round(zone.shape.radius * px_per_mm * scale)
            cv2.circle(
                art.image,
                tuple(int(v) for v in center),
                radius,
                LINE_BGR,
                line_px,
                cv2.LINE_AA,
                shift,
            )
        else:
            cv2.polylines(
                art.image,
                [fixed(list(zone.shape.points))],
                True,
                LINE_BGR,
                line_px,
                cv2.LINE_AA,
                shift,
            )
    for marker in layout.markers:
        paste_marker(art, layout.aruco_dictionary, marker)
    return art


def marker_sheets(
    layout: Layout, dpi: int, page_mm: tuple[float, float] = (210.0, 297.0)
) -> list[np.ndarray]:
    """Pages (A4 by default) with every layout marker at true size, each labelled with its id and
    where it goes on the table; print at 100% scale at ``dpi``. CalibrationError, naming the
    layout, for a marker too large for the page."""
    px_per_mm = dpi / MM_PER_INCH
    largest = max(layout.markers, key=lambda m: m.size_mm)
    sticker = largest.size_mm * (1 + 2 * MARKER_MARGIN)
    cell = sticker + 6  # labels go in the outer edge of each sticker's white margin
    usable = min(page_mm[0] - 20, page_mm[1] - 34)
    if cell > usable:
        raise CalibrationError(
            layout.source,
            f"marker {largest.marker_id} is {largest.size_mm:g} mm: with its white margin and label"
            f" it needs {cell:g} mm, more than the {usable:g} mm a {page_mm[0]:g}x{page_mm[1]:g}"
            " mm page holds; print it another way",
        )
    columns = int((page_mm[0] - 20) // cell)
    rows = int((page_mm[1] - 34) // cell)
    pages: list[np.ndarray] = []
    per_page = columns * rows
    for start in range(0, len(layout.markers), per_page):
        page = FlatArt(
            np.full((round(page_mm[1] * px_per_mm), round(page_mm[0] * px_per_mm)), 255, np.uint8),
            1 / px_per_mm,
            (0.0, 0.0),
        )
        _text(
            page,
            f"{layout.name}: {layout.aruco_dictionary} markers, print at {dpi} DPI, 100% scale;"
            f" page {start // per_page + 1}",
            (10, 10),
        )
        for slot, marker in enumerate(layout.markers[start : start + per_page]):
            col, row = slot % columns, slot // columns
            cx = 10 + cell * (col + 0.5)
            cy = 18 + cell * (row + 0.5)
            paste_marker(
                page,
                layout.aruco_dictionary,
                MarkerPlacement(marker.marker_id, (cx, cy), marker.size_mm),
            )
            _text(
                page,
                f"id {marker.marker_id}: centre at ({marker.center[0]:g}, {marker.center[1]:g}) mm,"
                f" {marker.size_mm:g} mm, top to dealer"
                + (f" +{marker.rotation_deg:g} deg" if marker.rotation_deg else ""),
                (cx - sticker / 2 + 3, cy + sticker / 2 - 4.5),
            )
        _scale_bar(page, (page_mm[0] - 110, page_mm[1] - 12))
        pages.append(page.image)
    return pages


def printable_board(spec: BoardSpec, dpi: int) -> np.ndarray:
    """The board at true size for ``dpi``, captioned, with a 100 mm bar to check the print;
    CalibrationError if that is more pixels than an image may have (:data:`MAX_PIXELS`)."""
    caption_px = round(24 * dpi / MM_PER_INCH)
    square_px = max(1, round(spec.square_mm * dpi / MM_PER_INCH))
    width = (spec.cols + 3) * square_px  # board_art: a square's margin round the squares
    height = (spec.rows + 3) * square_px + caption_px
    if width * height > MAX_PIXELS:
        raise CalibrationError(
            "board options",
            f"{spec.describe()} at {dpi} DPI would be {width}x{height} pixels, more than"
            f" {MAX_PIXELS:,}: use fewer or smaller squares, or a lower --dpi",
        )
    art = board_art(spec, dpi / MM_PER_INCH)
    page = FlatArt(
        cv2.copyMakeBorder(art.image, 0, caption_px, 0, 0, cv2.BORDER_CONSTANT, value=255),
        art.mm_per_px,
        (0.0, 0.0),
    )
    height_mm = art.image.shape[0] * art.mm_per_px
    _text(page, f"{spec.describe()}; print at {dpi} DPI, 100% scale", (4, height_mm + 1))
    _scale_bar(page, (4, height_mm + 14))
    return page.image


def _text(page: FlatArt, text: str, top_left_mm: tuple[float, float]) -> None:
    scale = 2.5 / page.mm_per_px / 22  # about 2.5 mm tall capitals
    x, y = page.to_pixel(*top_left_mm)
    cv2.putText(
        page.image,
        text,
        (round(x), round(y + 22 * scale)),
        cv2.FONT_HERSHEY_SIMPLEX,
        scale,
        0,
        max(1, round(scale * 1.5)),
        cv2.LINE_AA,
    )


def _scale_bar(page: FlatArt, left_mm: tuple[float, float]) -> None:
    x0, y0 = page.to_pixel(*left_mm)
    x1, _ = page.to_pixel(left_mm[0] + 100, left_mm[1])
    thick = max(1, round(0.8 / page.mm_per_px))
    cv2.line(page.image, (round(x0), round(y0)), (round(x1), round(y0)), 0, thick)
    for x in (x0, x1):
        cv2.line(
            page.image, (round(x), round(y0 - 2 / page.mm_per_px)), (round(x), round(y0)), 0, thick
        )
    _text(page, "100 mm: measure to check the scale", (left_mm[0] + 2, left_mm[1] - 7))


def write_png(path: str | Path, image: np.ndarray, dpi: int | None = None) -> None:
    """Write a PNG; with ``dpi``, record it (pHYs chunk) so viewers print at true size."""
    ok, encoded = cv2.imencode(".png", image)
    if not ok:
        raise OSError(f"{path}: PNG encoding failed")
    data = encoded.tobytes()
    if dpi:
        per_metre = round(dpi / 0.0254)
        body = b"pHYs" + struct.pack(">IIB", per_metre, per_metre, 1)
        chunk = struct.pack(">I", 9) + body + struct.pack(">I", zlib.crc32(body))
        data = data[:33] + chunk + data[33:]  # right after the 8-byte signature and 25-byte IHDR
    Path(path).write_bytes(data)
