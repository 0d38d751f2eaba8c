"""The table plane: where the felt lies in front of the calibrated lens, and pixel <-> table mm.

``fit_table`` finds the layout's ArUco markers in one frame (or takes four or more points given by
hand), solves the table's pose with ``cv2.solvePnP`` and returns a ``TableCalibration``: a pure,
side-effect-free mapping that the vision and table code query with ``image_to_table``,
``table_to_image`` and ``locate``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from contextlib import suppress
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

import cv2
import numpy as np
import yaml

from dealer_assist.calibration.errors import (
    CalibrationError,
    CalibrationFileError,
    MarkersMissingError,
)
from dealer_assist.calibration.layout import Layout, shown
from dealer_assist.calibration.lens import (
    BLUR_HINT_LAPLACIAN,
    FILE_VERSIONS,
    UNDISTORT_CRITERIA,
    CameraModel,
    check_version,
    edge_width_px,
    file_numbers,
    frozen_array,
    laplacian_variance,
    read_yaml,
    write_whole,
)

TABLE_FILE_KIND = "dealer-assist table calibration"
MIN_MARKERS = 3
"""Fewest layout markers that must be seen to place the table (12 corners, spread over the felt)."""
MIN_POINTS = 4
MAX_MARKER_RESIDUAL_MM = 15.0
#: A fit left further off than this cannot put a card in the right betting area: refused.
REFUSE_RESIDUAL_MM = 60.0
"""A marker this far from its layout place after the fit is taken as misplaced, and left out."""
CARD_WIDTH_MM = 63.5
"""A poker-size playing card's width."""
MAX_ROTATION_RAD = 4 * math.pi
"""Longest pose rotation vector a table file may hold: OpenCV's are at most pi (half a turn),
its refined fit's a little past; two turns is no pose but a damaged file (1e300 gives NaNs)."""
MIN_CAMERA_HEIGHT_MM = 100.0
"""Nearest the camera may be to the felt's plane in a table file: at 0 pixels have no table
point (the mapping is singular), below 0 it looks up through the felt."""
MAX_CAMERA_DISTANCE_MM = 20_000.0
"""Furthest the camera may be from the table's origin in a table file: a table's camera hangs
1-3 m above the felt, a ceiling dome's a few more; kilometres are a damaged file."""
READABLE_CARD_WIDTH_PX = (70.0, 95.0)
"""How wide a card should look in the frame, in pixels, for the camera to read it: the card
reader misses several times more cards below (models/README.md, "Card size in the frame"), and
above, cards are larger than any it was trained on."""
READABLE_EDGE_WIDTH_PX = 2.6
"""The widest the markers' black-to-white edges may measure (``lens.edge_width_px``) for the
camera to read cards well: about 2.0 px in a sharp frame, 2.6 px under a Gaussian blur of sigma
0.7 px, past which the card reader misses about three times as many cards (models/README.md,
"Camera blur"). It measures focus; a motion streak along an edge leaves the edge across it sharp."""


@dataclass(frozen=True)
class Location:
    """Where an image pixel falls on the table: mm, and the seat and zone if any
    (``seat`` is None for the dealer's zones and for points in no zone)."""

    table_mm: tuple[float, float]
    seat: int | None
    zone: str | None

    def to_json(self) -> dict[str, Any]:
        """The ``calibrate locate --json`` form."""
        return {
            "table_mm": [round(self.table_mm[0], 1), round(self.table_mm[1], 1)],
            "seat": self.seat,
            "zone": self.zone,
        }


@dataclass(frozen=True)
class PointPair:
    """A hand-given correspondence: image pixel (u, v) is table point (x, y) mm."""

    image_px: tuple[float, float]
    table_mm: tuple[float, float]

    @classmethod
    def parse(cls, text: str) -> PointPair:
        """Parse ``"U,V=X,Y"``; raises CalibrationError naming the text."""
        try:
            left, right = text.split("=")
            u, v = (float(p) for p in left.split(","))
            x, y = (float(p) for p in right.split(","))
        except ValueError as exc:
            raise CalibrationError(
                repr(text), "expected a point as U,V=X,Y (pixel = table mm)"
            ) from exc
        return cls((u, v), (x, y))


def detect_markers(image: np.ndarray, dictionary: str) -> dict[int, np.ndarray]:
    """ArUco markers in a frame: id -> its four corners (4, 2) in pixels, sub-pixel refined."""
    gray = image if image.ndim == 2 else cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
    parameters = cv2.aruco.DetectorParameters()
    parameters.cornerRefinementMethod = cv2.aruco.CORNER_REFINE_SUBPIX
    detector = cv2.aruco.ArucoDetector(
        cv2.aruco.getPredefinedDictionary(getattr(cv2.aruco, dictionary)), parameters
    )
    corners, ids, _ = detector.detectMarkers(gray)
    if ids is None:
        return {}
    return {
        int(i): c.reshape(4, 2).astype(np.float64)
        for i, c in zip(ids.ravel(), corners, strict=True)
    }


@dataclass(frozen=True, eq=False)
class TableCalibration:
    """A calibrated lens plus the table's pose in front of it, with the layout it was fitted to.

    ``rvec``/``tvec`` take table millimetres (z = 0 on the felt) to camera coordinates.
    ``reference_markers`` are the marker corners seen at calibration time, the baseline for drift.
    """

    camera: CameraModel
    layout: Layout
    rvec: np.ndarray
    tvec: np.ndarray
    reference_markers: Mapping[int, np.ndarray]
    residual_mm: float
    method: str
    source_image: str
    _table_from_normalised: np.ndarray = field(init=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "rvec", frozen_array(self.rvec).reshape(3))
        object.__setattr__(self, "tvec", frozen_array(self.tvec).reshape(3))
        markers = {int(i): frozen_array(c).reshape(4, 2) for i, c in self.reference_markers.items()}
        object.__setattr__(self, "reference_markers", MappingProxyType(markers))
        rotation, _ = cv2.Rodrigues(self.rvec)
        plane = np.column_stack([rotation[:, 0], rotation[:, 1], self.tvec])
        object.__setattr__(self, "_table_from_normalised", frozen_array(np.linalg.inv(plane)))

    def images_to_table(self, pixels: np.ndarray) -> np.ndarray:
        """Table mm (N, 2) of image pixels (N, 2), as seen through the (distorted) lens."""
        pixels = np.asarray(pixels, np.float64).reshape(-1, 1, 2)
        normalised = cv2.undistortPoints(
            pixels, self.camera.K, self.camera.dist, criteria=UNDISTORT_CRITERIA
        )
        return cv2.perspectiveTransform(normalised, self._table_from_normalised).reshape(-1, 2)

    def image_to_table(self, x: float, y: float) -> tuple[float, float]:
        """Table mm of one image pixel."""
        mm = self.images_to_table(np.array([[x, y]]))[0]
        return (float(mm[0]), float(mm[1]))

    def tables_to_image(self, points_mm: np.ndarray) -> np.ndarray:
        """Image pixels (N, 2) of table points (N, 2) mm."""
        points = np.asarray(points_mm, np.float64).reshape(-1, 2)
        points3 = np.hstack([points, np.zeros((len(points), 1))])
        pixels, _ = cv2.projectPoints(
            points3, self.rvec, self.tvec, self.camera.K, self.camera.dist
        )
        return pixels.reshape(-1, 2)

    def table_to_image(self, x_mm: float, y_mm: float) -> tuple[float, float]:
        """Image pixel of one table point."""
        pixel = self.tables_to_image(np.array([[x_mm, y_mm]]))[0]
        return (float(pixel[0]), float(pixel[1]))

    def locate(self, x: float, y: float) -> Location:
        """Table mm, seat and zone under image pixel (x, y)."""
        mm = self.image_to_table(x, y)
        zone = self.layout.zone_at(*mm)
        return Location(mm, zone.seat if zone else None, zone.name if zone else None)

    def card_widths_px(self) -> dict[str, float]:
        """How wide a card lying at the centre of each card area looks in the frame, in pixels
        (the narrower of a card laid along the table's x and y axes); keys "seat N", "dealer"."""
        widths = {}
        half = CARD_WIDTH_MM / 2
        for zone in self.layout.zones:
            if zone.name != "cards":
                continue
            x, y = zone.shape.centroid
            ends = self.tables_to_image(np.array(
                [[x - half, y], [x + half, y], [x, y - half], [x, y + half]]))
            across = float(np.linalg.norm(ends[1] - ends[0]))
            down = float(np.linalg.norm(ends[3] - ends[2]))
            widths["dealer" if zone.seat is None else f"seat {zone.seat}"] = min(across, down)
        return widths

    @property
    def camera_position_mm(self) -> tuple[float, float, float]:
        """Where the camera's centre is in table mm (z negative: above the felt)."""
        rotation, _ = cv2.Rodrigues(self.rvec)
        eye = -rotation.T @ self.tvec
        return (float(eye[0]), float(eye[1]), float(eye[2]))

    @property
    def tilt_deg(self) -> float:
        """Angle between the camera's axis and straight down onto the felt."""
        rotation, _ = cv2.Rodrigues(self.rvec)
        return float(np.degrees(np.arccos(np.clip(rotation[2, 2], -1, 1))))

    def to_dict(self) -> dict[str, Any]:
        """Plain form for YAML."""
        return {
            "kind": TABLE_FILE_KIND,
            "version": FILE_VERSIONS[-1],
            "source_image": self.source_image,
            "method": self.method,
            "residual_mm": round(self.residual_mm, 3),
            "pose": {"rvec": [float(v) for v in self.rvec], "tvec": [float(v) for v in self.tvec]},
            "reference_markers": {
                int(i): [[round(float(v), 3) for v in corner] for corner in c]
                for i, c in sorted(self.reference_markers.items())
            },
            "camera": self.camera.to_dict(),
            "layout_source": self.layout.source,
            "layout": self.layout.data,
        }

    def save(self, path: str | Path) -> None:
        """Write the table calibration (YAML, self-contained: lens and layout included)."""
        write_whole(path, yaml.safe_dump(self.to_dict(), sort_keys=False, width=120))

    @classmethod
    def load(cls, path: str | Path) -> TableCalibration:
        """Read a table calibration file; raises CalibrationFileError naming the file and key."""
        source = str(path)
        data = read_yaml(path)
        if not isinstance(data, dict) or data.get("kind") != TABLE_FILE_KIND:
            raise CalibrationFileError(
                source, f"not a table calibration (kind must be {TABLE_FILE_KIND!r})"
            )
        check_version(data, source)
        camera = CameraModel.from_dict(data.get("camera"), f"{source}: camera")
        layout = Layout.from_dict(data.get("layout"), f"{source}: layout")
        pose = data.get("pose")
        if not isinstance(pose, dict):
            raise CalibrationFileError(
                source, f"pose must map rvec and tvec to 3 numbers each, got {shown(pose)}")
        rvec = file_numbers(pose.get("rvec"), source, "pose.rvec", (3,))
        tvec = file_numbers(pose.get("tvec"), source, "pose.tvec", (3,))
        residual = float(file_numbers(data.get("residual_mm"), source, "residual_mm", ()))
        found = data.get("reference_markers") or {}
        if not isinstance(found, dict) or not all(type(i) is int for i in found):
            raise CalibrationFileError(
                source, "reference_markers must map marker ids to their four corner pixels,"
                f" got {shown(found)}")
        markers = {i: file_numbers(corners, source, f"reference_markers.{i}", (4, 2))
                   for i, corners in found.items()}
        placed = sorted(m.marker_id for m in layout.markers)
        strangers = sorted(set(markers) - set(placed))
        if strangers:
            raise CalibrationFileError(
                source, f"reference_markers: no marker {', '.join(map(str, strangers))} in the"
                f" layout (its markers: {', '.join(map(str, placed)) or 'none'})")
        turn = math.hypot(*rvec)
        if not turn <= MAX_ROTATION_RAD:
            raise CalibrationFileError(
                source, f"pose.rvec must turn at most {MAX_ROTATION_RAD:.1f} rad (two turns),"
                f" got {turn:g}: calibrate the table again")
        distance = math.hypot(*tvec)  # the camera centre, -R^T t, is as far from the origin
        if not distance <= MAX_CAMERA_DISTANCE_MM:
            raise CalibrationFileError(
                source, f"pose.tvec must put the camera within {MAX_CAMERA_DISTANCE_MM / 1000:g} m"
                f" of the table, got {distance / 1000:.3g} m: calibrate the table again")
        height = float(cv2.Rodrigues(rvec)[0][:, 2] @ tvec)
        if not height >= MIN_CAMERA_HEIGHT_MM:
            raise CalibrationFileError(
                source, f"pose.tvec must put the camera at least {MIN_CAMERA_HEIGHT_MM:g} mm above"
                f" the felt, got {height:.0f} mm: calibrate the table again")
        calibration = cls(
            camera,
            layout,
            rvec,
            tvec,
            markers,
            residual,
            str(data.get("method", "")),
            str(data.get("source_image", "")),
        )
        if calibration.method == "aruco":
            calibration._check_markers(source)
        return calibration

    def _check_markers(self, source: str) -> None:
        """CalibrationFileError unless :data:`MIN_MARKERS` of the reference markers, mapped
        through this calibration, lie within :data:`REFUSE_RESIDUAL_MM` of their layout places,
        as ``fit_table`` left them: a damaged lens or pose (a distortion of 1e308) would put
        cards in the wrong zones."""
        placed = 0
        for marker_id, pixels in self.reference_markers.items():
            mm = np.array(self.layout.marker(marker_id).corners())
            with suppress(cv2.error):
                off = float(np.linalg.norm(self.images_to_table(pixels) - mm, axis=1).mean())
                placed += off <= REFUSE_RESIDUAL_MM  # not NaN
        if placed < MIN_MARKERS:
            raise CalibrationFileError(
                source, f"reference_markers: the file's lens and pose put {placed} of its"
                f" {len(self.reference_markers)} markers within {REFUSE_RESIDUAL_MM:.0f} mm of"
                f" where its layout puts them (its fit left {MIN_MARKERS} or more there): K, dist"
                " or pose is damaged; calibrate the table again")


@dataclass(frozen=True, eq=False)
class TableFit:
    """A fitted table with the residual of each fitted marker or point, any warnings, how wide
    the markers' edges measured (None without markers): how sharp the camera is, and the
    install checks it fails (cards outside :data:`READABLE_CARD_WIDTH_PX`, edges past
    :data:`READABLE_EDGE_WIDTH_PX`), each also among the warnings."""

    calibration: TableCalibration
    residuals_mm: tuple[tuple[str, float], ...]
    warnings: tuple[str, ...]
    marker_edge_width_px: float | None = None
    install_failures: tuple[str, ...] = ()


def fit_table(
    image: np.ndarray,
    name: str,
    camera: CameraModel,
    layout: Layout,
    points: Sequence[PointPair] = (),
) -> TableFit:
    """Place the table from one frame: from the layout's markers, or from ``points`` if given
    (markers seen are then kept only as the drift baseline). Raises MarkersMissingError naming the
    image when too few markers or points are available."""
    camera.check_frame(image, name)
    seen = detect_markers(image, layout.aruco_dictionary)
    known = {m.marker_id for m in layout.markers}
    warnings = [
        f"{name}: marker {i} is not in layout {layout.name}; ignored"
        for i in sorted(set(seen) - known)
    ]
    seen = {i: c for i, c in seen.items() if i in known}
    if points:
        if len(points) < MIN_POINTS:
            raise MarkersMissingError(
                name, f"{len(points)} hand-given point(s); need at least {MIN_POINTS}"
            )
        groups = {
            f"point {k + 1}": (np.array([p.table_mm]), np.array([p.image_px]))
            for k, p in enumerate(points)
        }
        method = "points"
    else:
        missing = sorted(known - set(seen))
        if len(seen) < MIN_MARKERS:
            hint = ""
            sharpness = laplacian_variance(
                image if image.ndim == 2 else cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
            )
            if sharpness < BLUR_HINT_LAPLACIAN:
                hint = f"; the image looks blurred (variance of Laplacian {sharpness:.0f})"
            raise MarkersMissingError(
                name,
                f"found {len(seen)} of layout {layout.name}'s {len(known)}"
                f" {layout.aruco_dictionary} markers"
                f" (missing ids {', '.join(map(str, missing))}); need at least {MIN_MARKERS}{hint}."
                " Check that they are uncovered, lit, in view and in focus, or give points by hand",
            )
        if missing:
            warnings.append(
                f"{name}: markers {', '.join(map(str, missing))} not found; fitted on {len(seen)}"
            )
        groups = {f"marker {i}": (np.array(layout.marker(i).corners()), c) for i, c in seen.items()}
        method = "aruco"
    left_out: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    while True:
        calibration, residuals = _solve(camera, layout, groups, seen, method, name)
        label, worst = max(residuals, key=lambda r: r[1])
        if method == "points" or worst <= MAX_MARKER_RESIDUAL_MM or len(groups) <= MIN_MARKERS:
            break
        left_out[label] = groups.pop(label)
    for dropped, (mm, pixels) in left_out.items():
        offset = float(np.linalg.norm(calibration.images_to_table(pixels) - mm, axis=1).mean())
        warnings.append(
            f"{name}: {dropped} lies {offset:.0f} mm from where the layout puts it (moved?);"
            " left out"
        )
    if not worst <= REFUSE_RESIDUAL_MM:  # also NaN
        raise CalibrationError(
            name, f"{label} is {worst:.0f} mm off after the fit (at most {REFUSE_RESIDUAL_MM:.0f} "
            "mm is usable): check the layout file, the points and the camera calibration"
        )
    if worst > MAX_MARKER_RESIDUAL_MM:
        warnings.append(
            f"{name}: {label} is {worst:.0f} mm off after the fit; check the layout and the points"
        )
    install = card_size_warnings(calibration, name)
    edge = marker_edge_width_px(image, seen)
    if edge is not None and edge > READABLE_EDGE_WIDTH_PX:
        install.append(
            f"{name}: the frame is soft: the markers' edges measure {edge:.1f} px (sharp: about"
            f" 2 px; cards read well up to {READABLE_EDGE_WIDTH_PX:g} px), and the camera misses"
            " several times more cards in frames this soft: focus the camera, clean its lens or"
            " raise the stream's quality"
        )
    return TableFit(calibration, tuple(residuals), tuple(warnings + install), edge, tuple(install))


def marker_edge_width_px(image: np.ndarray, markers: Mapping[int, np.ndarray]) -> float | None:
    """How wide the black-to-white edges at ``markers``' corners are (``lens.edge_width_px``):
    how sharp the frame is there; None without markers."""
    if not markers:
        return None
    gray = image if image.ndim == 2 else cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
    return edge_width_px(gray, np.concatenate(list(markers.values())))


def card_size_warnings(calibration: TableCalibration, name: str) -> list[str]:
    """A warning for the smallest and for the largest card area whose cards look narrower or
    wider in the frame than :data:`READABLE_CARD_WIDTH_PX`, saying how to move the camera."""
    widths = calibration.card_widths_px()
    if not widths:
        return []
    least, most = READABLE_CARD_WIDTH_PX
    warnings = []
    small = min(widths, key=widths.__getitem__)
    if widths[small] < least:
        warnings.append(
            f"{name}: a card in the {small} card area looks {widths[small]:.0f} px wide; the"
            f" camera reads cards {least:.0f}-{most:.0f} px wide and misses many more the smaller"
            " they are: move the camera closer, zoom in or raise its resolution"
        )
    large = max(widths, key=widths.__getitem__)
    if widths[large] > most:
        warnings.append(
            f"{name}: a card in the {large} card area looks {widths[large]:.0f} px wide; the"
            f" camera reads cards {least:.0f}-{most:.0f} px wide; larger than it was trained on,"
            " it loses decks with large indices: move the camera further away, zoom out or"
            " lower its resolution"
        )
    return warnings


def _solve(
    camera: CameraModel,
    layout: Layout,
    groups: Mapping[str, tuple[np.ndarray, np.ndarray]],
    seen: Mapping[int, np.ndarray],
    method: str,
    name: str,
) -> tuple[TableCalibration, list[tuple[str, float]]]:
    table_points = np.vstack([g[0] for g in groups.values()])
    image_points = np.vstack([g[1] for g in groups.values()])
    object_points = np.hstack([table_points, np.zeros((len(table_points), 1))])
    ok, rvec, tvec = cv2.solvePnP(
        object_points, image_points, camera.K, camera.dist, flags=cv2.SOLVEPNP_IPPE
    )
    if not ok:
        raise CalibrationError(
            name, "could not solve the table's pose from these points (are they on one line?)"
        )
    rvec, tvec = cv2.solvePnPRefineLM(
        object_points, image_points, camera.K, camera.dist, rvec, tvec
    )
    rvec, tvec = rvec.ravel(), tvec.ravel()
    if not (np.all(np.isfinite(rvec)) and np.all(np.isfinite(tvec)) and tvec[2] > 0):
        raise CalibrationError(
            name, "these points do not put the table in front of the camera (some repeated, "
            "all on one line, or a layout that is not this felt's?)"
        )
    provisional = TableCalibration(camera, layout, rvec, tvec, dict(seen), 0.0, method, name)
    residuals = [
        (label, float(np.linalg.norm(provisional.images_to_table(pixels) - mm, axis=1).mean()))
        for label, (mm, pixels) in groups.items()
    ]
    errors = np.linalg.norm(provisional.images_to_table(image_points) - table_points, axis=1)
    rms = float(np.sqrt(np.mean(errors**2)))
    return TableCalibration(camera, layout, rvec, tvec, dict(seen), rms, method, name), residuals
