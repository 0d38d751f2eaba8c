"""Lens calibration (intrinsics) from chessboard or ChArUco images, with OpenCV doing the maths.

``calibrate_lens`` finds the board in each image, rejects images where it is missing, blurred or
did not move since an earlier image (naming each image and why), solves with
``cv2.calibrateCameraExtended`` and reports the RMS and per-image reprojection errors and how much
of the frame the board covered.
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import yaml

from dealer_assist.calibration.errors import (
    BlurredImageError,
    BoardNotFoundError,
    CalibrationError,
    CalibrationFileError,
    ImageReadError,
    TooFewImagesError,
)
from dealer_assist.calibration.layout import MAX_FILE_BYTES, shown
from dealer_assist.durable import create_new, fsync_dir
from dealer_assist.image_files import ImageFileError, read_image
from dealer_assist.small_files import read_small_file

CAMERA_FILE_KIND = "dealer-assist camera calibration"
FILE_VERSIONS = (1,)
"""Versions of the camera and table files this program reads; it writes the last."""
MIN_IMAGES = 5
"""Fewest usable board views accepted: fewer leave the focal length and centre poorly fixed."""
MAX_EDGE_WIDTH_PX = 4.0
"""Blur limit on the board's edge width (see ``edge_width_px``): a sharp image measures about 2 px,
a Gaussian blur of sigma 1 px about 3 px, sigma 1.6 px about 4 px; past that corners wander."""
SAME_VIEW_PX = 5.0
"""A board whose corners lie on average within this of an earlier image's did not move between
the shots: a second view of one pose adds no information, only weight. On the practice camera
(1280x720, focal 1000 px, board 380 mm away) a copy differs by 0 px, a re-shot of a board on a
stand by 0.1 px (detector noise) and a board held in the hands that drifted 1 or 2 mm by 2.4 or
4.9 px; the closest two of ``calibrate synth``'s 18 views differ by 23 px. No real hand-held
set was at hand: the drift figures are the practice camera's for a board shifted that far."""
LOW_COVERAGE = 0.5
"""Warn when the boards together touched less than this share of the frame (a 10x10 grid)."""
BLUR_HINT_LAPLACIAN = 60.0
"""Below this variance of the Laplacian a frame where nothing was found is called blurred."""
UNDISTORT_CRITERIA = (cv2.TERM_CRITERIA_COUNT | cv2.TERM_CRITERIA_EPS, 50, 1e-12)
"""cv2.undistortPoints inverts the lens model by iteration; with its default rounds the typical
synthetic lens re-projects up to 0.012 px off at the frame's corners, with these under 1e-11 px."""


@dataclass(frozen=True)
class ChessboardSpec:
    """A plain chessboard; ``cols`` x ``rows`` count inner corners."""

    cols: int
    rows: int
    square_mm: float

    def describe(self) -> str:
        """Short human description."""
        return f"chessboard {self.cols}x{self.rows} inner corners, {self.square_mm:g} mm squares"

    def object_points(self) -> np.ndarray:
        """Inner corners in board millimetres, row by row, as (N, 3) float32 (z = 0)."""
        grid = np.mgrid[0 : self.cols, 0 : self.rows].T.reshape(-1, 2) * self.square_mm
        return np.hstack([grid, np.zeros((len(grid), 1))]).astype(np.float32)


@dataclass(frozen=True)
class CharucoSpec:
    """A ChArUco board with ``cols`` x ``rows`` inner corners, so one more square each way."""

    cols: int
    rows: int
    square_mm: float
    marker_mm: float
    dictionary: str = "DICT_5X5_100"

    def __post_init__(self) -> None:
        if not self.dictionary.startswith("DICT_") or not hasattr(cv2.aruco, self.dictionary):
            raise CalibrationError(
                self.dictionary, "not an OpenCV ArUco dictionary (e.g. DICT_5X5_100)"
            )
        aruco_dict = cv2.aruco.getPredefinedDictionary(getattr(cv2.aruco, self.dictionary))
        needed = (self.cols + 1) * (self.rows + 1) // 2
        if needed > aruco_dict.bytesList.shape[0]:
            raise CalibrationError(
                self.dictionary,
                f"holds {aruco_dict.bytesList.shape[0]} markers; a board of"
                f" {self.cols + 1}x{self.rows + 1} squares needs {needed}",
            )

    def describe(self) -> str:
        """Short human description."""
        return (
            f"ChArUco {self.cols}x{self.rows} inner corners"
            f" ({self.cols + 1}x{self.rows + 1} squares),"
            f" {self.square_mm:g} mm squares, {self.marker_mm:g} mm {self.dictionary} markers"
        )

    def board(self) -> cv2.aruco.CharucoBoard:
        """The OpenCV board object (units: millimetres)."""
        dictionary = cv2.aruco.getPredefinedDictionary(getattr(cv2.aruco, self.dictionary))
        return cv2.aruco.CharucoBoard(
            (self.cols + 1, self.rows + 1), self.square_mm, self.marker_mm, dictionary
        )


BoardSpec = ChessboardSpec | CharucoSpec


@dataclass(frozen=True, eq=False)
class CameraModel:
    """A calibrated lens: camera matrix K, distortion (k1, k2, p1, p2, k3), image size (w, h)."""

    K: np.ndarray
    dist: np.ndarray
    image_size: tuple[int, int]
    rms_px: float | None = None
    images_used: int | None = None
    board: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "K", frozen_array(self.K))
        object.__setattr__(self, "dist", frozen_array(self.dist).ravel())
        object.__setattr__(self, "image_size", (int(self.image_size[0]), int(self.image_size[1])))

    def check_frame(self, image: np.ndarray, name: str) -> None:
        """Refuse a frame whose size is not the calibrated one (the lens model would not fit)."""
        height, width = image.shape[:2]
        if (width, height) != self.image_size:
            raise CalibrationError(
                name,
                f"image is {width}x{height} but the camera was calibrated at"
                f" {self.image_size[0]}x{self.image_size[1]}",
            )

    def to_dict(self) -> dict[str, Any]:
        """Plain form for YAML/JSON."""
        return {
            "kind": CAMERA_FILE_KIND,
            "version": FILE_VERSIONS[-1],
            "image_size": list(self.image_size),
            "K": [[float(v) for v in row] for row in self.K],
            "dist": [float(v) for v in self.dist.ravel()],
            "rms_px": self.rms_px,
            "images_used": self.images_used,
            "board": self.board,
        }

    def save(self, path: str | Path) -> None:
        """Write the camera file (YAML)."""
        write_whole(path, yaml.safe_dump(self.to_dict(), sort_keys=False))

    @classmethod
    def from_dict(cls, data: Any, source: str = "<camera>") -> CameraModel:
        """Read the plain form; raises CalibrationFileError naming the source and key."""
        if not isinstance(data, dict) or data.get("kind") != CAMERA_FILE_KIND:
            raise CalibrationFileError(
                source, f"not a camera calibration (kind must be {CAMERA_FILE_KIND!r})"
            )
        check_version(data, source)
        try:
            K = file_numbers(data["K"], source, "K", (3, 3))
            dist = file_numbers(data["dist"], source, "dist").ravel()
            size = data["image_size"]
        except KeyError as exc:
            raise CalibrationFileError(
                source, f"bad or missing K, dist or image_size: {exc}"
            ) from exc
        if dist.size not in (4, 5, 8, 12, 14):
            raise CalibrationFileError(
                source, f"dist must be 4, 5, 8, 12 or 14 numbers, got {dist.size}")
        if not (K[0, 0] > 0 and K[1, 1] > 0):
            raise CalibrationFileError(
                source, f"K's focal lengths fx, fy must be above 0, got {K[0, 0]:g}, {K[1, 1]:g}")
        if K[2].tolist() != [0, 0, 1]:
            raise CalibrationFileError(
                source, f"K's last row must be [0, 0, 1], got {K[2].tolist()}")
        if not (isinstance(size, list) and len(size) == 2
                and all(type(v) is int and v > 0 for v in size)):
            raise CalibrationFileError(
                source, "image_size must be [width, height] in whole pixels above 0, got"
                f" {shown(size)}")
        rms = data.get("rms_px")
        return cls(
            K,
            dist,
            (size[0], size[1]),
            None if rms is None else float(file_numbers(rms, source, "rms_px", ())),
            data.get("images_used"),
            data.get("board", ""),
        )

    @classmethod
    def load(cls, path: str | Path) -> CameraModel:
        """Read a camera file written by ``save``."""
        return cls.from_dict(read_yaml(path), str(path))


@dataclass(frozen=True, eq=False)
class BoardView:
    """A board found in one image: matching image (N, 2) and object (N, 3) points."""

    image: str
    image_points: np.ndarray
    object_points: np.ndarray
    image_size: tuple[int, int]
    edge_width_px: float | None


@dataclass(frozen=True)
class Rejection:
    """An image left out of the calibration and why."""

    image: str
    reason: str


@dataclass(frozen=True, eq=False)
class LensCalibration:
    """What ``calibrate_lens`` found: the camera, its errors, what was left out or is doubtful."""

    camera: CameraModel
    per_image_rms_px: tuple[tuple[str, float], ...]
    rejected: tuple[Rejection, ...]
    coverage: float
    warnings: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        """The ``calibrate camera --json`` output."""
        return {
            "K": [[float(v) for v in row] for row in self.camera.K],
            "dist": [float(v) for v in self.camera.dist.ravel()],
            "rms": self.camera.rms_px,
            "images_used": self.camera.images_used,
            "image_size": list(self.camera.image_size),
            "per_image_rms": {name: err for name, err in self.per_image_rms_px},
            "rejected": {r.image: r.reason for r in self.rejected},
            "coverage": self.coverage,
            "warnings": list(self.warnings),
        }


def read_gray(path: str | Path) -> np.ndarray:
    """Read an image file as 8-bit grey; raises ImageReadError naming the file."""
    image = read_color(path)
    return cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)


def read_color(path: str | Path) -> np.ndarray:
    """Read an image file as 8-bit BGR; raises ImageReadError naming the file."""
    try:
        return read_image(path)
    except ImageFileError as error:
        raise ImageReadError(str(error.path), error.why) from None


def laplacian_variance(gray: np.ndarray) -> float:
    """Variance of the Laplacian: a scene-dependent sharpness figure, low for blurred frames."""
    return float(cv2.Laplacian(gray, cv2.CV_64F).var())


def find_board(
    gray: np.ndarray, spec: BoardSpec, name: str, max_edge_width_px: float = MAX_EDGE_WIDTH_PX
) -> BoardView:
    """Find the board in one grey image; BoardNotFoundError or BlurredImageError name it."""
    size = (gray.shape[1], gray.shape[0])
    if isinstance(spec, ChessboardSpec):
        found, corners = cv2.findChessboardCornersSB(
            gray, (spec.cols, spec.rows), flags=cv2.CALIB_CB_NORMALIZE_IMAGE | cv2.CALIB_CB_ACCURACY
        )
        if not found:
            raise BoardNotFoundError(name, _not_found(gray, spec))
        image_points = corners.reshape(-1, 2).astype(np.float32)
        object_points = spec.object_points()
    else:
        board = spec.board()
        detector = cv2.aruco.CharucoDetector(board)
        corners, ids, _, _ = detector.detectBoard(gray)
        if ids is None or len(ids) < 6:
            found_count = 0 if ids is None else len(ids)
            raise BoardNotFoundError(name, _not_found(gray, spec, f" (only {found_count} corners)"))
        if board.checkCharucoCornersCollinear(ids):
            raise BoardNotFoundError(name, f"the {len(ids)} ChArUco corners found lie on one line")
        # The stub wants a list of markers; for ChArUco, OpenCV takes the (N, 1, 2) corner array.
        obj, img = board.matchImagePoints(corners, ids)  # type: ignore[call-overload]
        object_points = obj.reshape(-1, 3).astype(np.float32)
        image_points = img.reshape(-1, 2).astype(np.float32)
    edge = edge_width_px(gray, image_points)
    if edge is not None and edge > max_edge_width_px:
        raise BlurredImageError(
            name,
            f"board found but blurred: edges {edge:.1f} px wide (limit {max_edge_width_px:g} px);"
            " hold the board still, focus, or add light",
        )
    return BoardView(name, image_points, object_points, size, edge)


def edge_width_px(gray: np.ndarray, corners: np.ndarray) -> float | None:
    """How wide, in pixels, the board's black-to-white edges are near its corners (median).

    In a window round each corner, contrast (5th to 95th percentile) over the steepest gradient is
    the width a straight ramp of that slope would take; for a Gaussian-blurred step it is about
    2.5 sigma (the 10%..90% rise). Unlike cv2.estimateChessboardSharpness it needs neither the
    whole board nor plain squares, so it serves ChArUco boards too. None if no corner qualifies.
    """
    spacing = math.sqrt(cv2.contourArea(cv2.convexHull(corners.astype(np.float32))) / len(corners))
    radius = int(min(12, max(4, 0.4 * spacing)))
    height, width = gray.shape
    widths = []
    for x, y in np.round(corners).astype(int):
        if radius <= x < width - radius and radius <= y < height - radius:
            # The gradient of the window and the one pixel round it (all Sobel looks at):
            # the same as the whole frame's there, at a few hundred pixels' cost.
            top, left = max(y - radius - 1, 0), max(x - radius - 1, 0)
            patch = gray[top:y + radius + 2, left:x + radius + 2].astype(np.float32)
            slope = cv2.magnitude(
                cv2.Sobel(patch, cv2.CV_32F, 1, 0, ksize=3) / 8,
                cv2.Sobel(patch, cv2.CV_32F, 0, 1, ksize=3) / 8,
            )
            window = (slice(y - radius - top, y + radius + 1 - top),
                      slice(x - radius - left, x + radius + 1 - left))
            low, high = np.percentile(patch[window], (5, 95))
            steepest = float(slope[window].max())
            if high - low > 20 and steepest > 0:
                widths.append((high - low) / steepest)
    return float(np.median(widths)) if widths else None


def _not_found(gray: np.ndarray, spec: BoardSpec, detail: str = "") -> str:
    message = f"no {spec.describe()} found{detail}"
    sharpness = laplacian_variance(gray)
    if sharpness < BLUR_HINT_LAPLACIAN:
        message += f"; the image looks blurred (variance of Laplacian {sharpness:.0f})"
    return (
        message + "; the whole board must be in view"
        if isinstance(spec, ChessboardSpec)
        else message
    )


def calibrate_lens(
    images: Sequence[tuple[str, np.ndarray]],
    spec: BoardSpec,
    min_images: int = MIN_IMAGES,
    max_edge_width_px: float = MAX_EDGE_WIDTH_PX,
) -> LensCalibration:
    """Solve the lens from named grey images of the board.

    Images without a usable board, or whose board did not move since an earlier one (see
    ``SAME_VIEW_PX``), are left out and listed in ``rejected``; if fewer than ``min_images``
    remain, raises TooFewImagesError listing every rejected image and its reason.
    """
    views: list[BoardView] = []
    rejected: list[Rejection] = []
    for name, gray in images:
        try:
            view = find_board(gray, spec, name, max_edge_width_px)
        except CalibrationError as exc:
            rejected.append(Rejection(name, exc.reason))
            continue
        if views and view.image_size != views[0].image_size:
            rejected.append(
                Rejection(
                    name,
                    f"size {view.image_size} differs from {views[0].image_size}"
                    f" of {views[0].image}",
                )
            )
            continue
        shift, since = min(
            ((corner_shift_px(v.image_points, view.image_points), v.image) for v in views),
            default=(math.inf, ""),
        )
        if shift < SAME_VIEW_PX:
            rejected.append(
                Rejection(
                    name,
                    f"the board did not move since {since}: its corners lie {shift:.1f} px from"
                    f" there on average (a new view moves them {SAME_VIEW_PX:g} px or more)",
                )
            )
            continue
        views.append(view)
    if len(views) < min_images:
        lines = "".join(f"\n  {r.image}: {r.reason}" for r in rejected)
        raise TooFewImagesError(
            f"{len(images)} image(s)",
            f"only {len(views)} usable board image(s), need at least {min_images}{lines}",
        )
    size = views[0].image_size
    rms, K, dist, _, _, _, _, per_view = cv2.calibrateCameraExtended(
        [v.object_points for v in views],
        [v.image_points for v in views],
        size,
        np.eye(3),
        np.zeros(5),
    )
    per_image = tuple((v.image, float(e)) for v, e in zip(views, per_view.ravel(), strict=True))
    coverage = frame_coverage([v.image_points for v in views], size)
    warnings = _warnings(float(rms), per_image, coverage)
    camera = CameraModel(K, dist.ravel()[:5], size, float(rms), len(views), spec.describe())
    return LensCalibration(camera, per_image, tuple(rejected), coverage, warnings)


def corner_shift_px(earlier: np.ndarray, later: np.ndarray) -> float:
    """Mean distance in pixels from each of ``later``'s corners to the nearest of ``earlier``'s
    (nearest, so a board found in the other corner order, or partly hidden, still compares)."""
    gaps = np.linalg.norm(later[:, None, :] - earlier[None, :, :], axis=2)
    return float(gaps.min(axis=1).mean())


def frame_coverage(
    point_sets: Sequence[np.ndarray], size: tuple[int, int], cells: int = 10
) -> float:
    """Share of a ``cells`` x ``cells`` grid over the frame touched by the boards' outlines."""
    mask = np.zeros((cells, cells), np.uint8)
    scale = np.array([cells / size[0], cells / size[1]])
    for points in point_sets:
        hull = cv2.convexHull((points * scale).astype(np.float32)).astype(np.int32)
        cv2.fillConvexPoly(mask, hull, 1)
    return float(mask.mean())


def _warnings(
    rms: float, per_image: tuple[tuple[str, float], ...], coverage: float
) -> tuple[str, ...]:
    warnings: list[str] = []
    if coverage < LOW_COVERAGE:
        warnings.append(
            f"poor coverage: the boards touched only {coverage:.0%} of the frame;"
            " add views with the"
            " board near the edges and corners, where lens distortion is strongest"
        )
    if rms > 1.0:
        warnings.append(f"high RMS reprojection error {rms:.2f} px (expect under 0.5 px)")
    median = float(np.median([e for _, e in per_image]))
    for name, err in per_image:
        if err > max(3 * median, 0.5):
            warnings.append(
                f"{name}: reprojection error {err:.2f} px, far above the median"
                f" {median:.2f} px (moved? rolling shutter?)"
            )
    return tuple(warnings)


def frozen_array(array: np.ndarray) -> np.ndarray:
    """A read-only float64 copy, so a frozen value's arrays cannot change under it either."""
    copy = np.array(array, np.float64)
    copy.setflags(write=False)
    return copy


def write_whole(path: str | Path, text: str) -> None:
    """Write ``text`` (UTF-8) to the file ``path`` whole or not at all: into a new file beside
    it, synced, then renamed over it, so a failed write (a full disk) leaves the calibration
    that was there. OSError names ``path``. Something else than a plain file there (a device)
    is written into."""
    path = Path(path)
    if path.exists() and not path.is_file():
        path.write_text(text, encoding="utf-8")
        return
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with os.fdopen(create_new(temporary), "wb") as handle:
            handle.write(text.encode("utf-8"))
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, path)
        fsync_dir(path.parent)
    except OSError as error:
        with suppress(OSError):
            temporary.unlink()
        raise OSError(error.errno, error.strerror, str(path)) from None


def read_yaml(path: str | Path) -> Any:
    """Parse a YAML file; CalibrationFileError names the file if it cannot be read (not a plain
    file, or larger than ``layout.MAX_FILE_BYTES``) or parsed."""
    try:
        # UTF-8, or UTF-16 with its BOM
        return yaml.safe_load(read_small_file(path, MAX_FILE_BYTES))
    except OSError as exc:
        raise CalibrationFileError(str(path), f"cannot read: {exc.strerror or exc}") from exc
    except yaml.YAMLError as exc:
        raise CalibrationFileError(str(path), f"not valid YAML: {exc}") from exc
    except RecursionError:
        raise CalibrationFileError(str(path), "not valid YAML: nested too deeply") from None


def check_version(data: dict[str, Any], source: str) -> None:
    """CalibrationFileError unless the file's ``version`` is one this program reads: a newer
    program's file may mean other things by the same keys."""
    version = data.get("version")
    if type(version) is not int or version not in FILE_VERSIONS:
        readable = " or ".join(map(str, FILE_VERSIONS))
        raise CalibrationFileError(
            source, f"version: this dealer-assist reads version {readable}, got"
            f" {shown(version)} (written by a newer dealer-assist, or damaged)")


MAX_FILE_NUMBERS = 64
"""Most list items a number in a calibration file nests (the most there is: K's 3 rows of 3,
12 items; 14 distortion coefficients)."""


def _longer_than(value: Any, most: int) -> bool:
    """Whether the lists in ``value`` hold more than ``most`` items in all, counted only up to
    there."""
    pending, count = [value], 0
    while pending:
        item = pending.pop()
        if isinstance(item, list):
            count += len(item)
            if count > most:
                return True
            pending.extend(item)
    return False


def file_numbers(value: Any, source: str, key: str, shape: tuple[int, ...] | None = None
                 ) -> np.ndarray:
    """``value`` from a calibration file as float64, of ``shape`` if given, every entry a finite
    number (not text or null); else CalibrationFileError naming the file and key."""
    if _longer_than(value, MAX_FILE_NUMBERS):  # a YAML alias bomb: ten aliases of ten of ...
        raise CalibrationFileError(
            source, f"{key} must be a few numbers, got lists of more than {MAX_FILE_NUMBERS}")
    try:
        array = np.array(value)
    except ValueError:  # a ragged list
        array = np.array(None)
    if (array.dtype.kind not in "iuf" or not np.all(np.isfinite(array))
            or shape is not None and array.shape != shape):
        what = ("a finite number" if shape == () else "finite numbers" if shape is None
                else f"{'x'.join(map(str, shape))} finite numbers")
        raise CalibrationFileError(source, f"{key} must be {what}, got {shown(value)}")
    return array.astype(np.float64)
