"""A synthetic camera: what a known lens at a known pose sees of flat artwork (a board, the table).

Used to try the whole calibration procedure without a camera (``calibrate synth``), by the tests
and by the accuracy bench: because the true lens and pose are known, the recovered ones can be
checked. Projection uses OpenCV's lens model (cv2.undistortPoints inverts it per output pixel).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from dealer_assist.calibration.layout import Layout
from dealer_assist.calibration.lens import UNDISTORT_CRITERIA, ChessboardSpec
from dealer_assist.calibration.printables import FlatArt, board_art, table_art


@dataclass(frozen=True, eq=False)
class Pose:
    """World-to-camera rotation (Rodrigues vector) and translation (mm), OpenCV's convention."""

    rvec: np.ndarray
    tvec: np.ndarray

    @classmethod
    def looking_at(
        cls,
        eye_mm: tuple[float, float, float],
        target_mm: tuple[float, float, float],
        down: tuple[float, float, float] = (0.0, 1.0, 0.0),
        roll_deg: float = 0.0,
    ) -> Pose:
        """A camera at ``eye_mm`` aimed at ``target_mm``, with the image's downward direction as
        close to world direction ``down`` as possible, then turned ``roll_deg`` about its axis."""
        eye = np.asarray(eye_mm, float)
        forward = np.asarray(target_mm, float) - eye
        forward /= np.linalg.norm(forward)
        right = np.cross(np.asarray(down, float), forward)
        right /= np.linalg.norm(right)
        rotation = np.vstack([right, np.cross(forward, right), forward])
        roll, _ = cv2.Rodrigues(np.array([0.0, 0.0, np.radians(roll_deg)]))
        rotation = roll @ rotation
        rvec, _ = cv2.Rodrigues(rotation)
        return cls(rvec.ravel(), -rotation @ eye)

    def moved(
        self,
        shift_mm: tuple[float, float, float] = (0, 0, 0),
        turn_deg: tuple[float, float, float] = (0, 0, 0),
    ) -> Pose:
        """The same camera shifted ``shift_mm`` (world axes) and turned ``turn_deg`` about its own
        x, y, z axes: a bump."""
        rotation, _ = cv2.Rodrigues(self.rvec)
        eye = -rotation.T @ self.tvec + np.asarray(shift_mm, float)
        turn, _ = cv2.Rodrigues(np.radians(np.asarray(turn_deg, float)))
        rotation = turn @ rotation
        rvec, _ = cv2.Rodrigues(rotation)
        return Pose(rvec.ravel(), -rotation @ eye)


@dataclass(eq=False)
class SyntheticCamera:
    """A known lens; renders flat artwork seen from a pose, with optional noise and blur."""

    K: np.ndarray
    dist: np.ndarray
    image_size: tuple[int, int]
    supersample: int = 2
    _rays: np.ndarray | None = field(default=None, repr=False)

    @classmethod
    def typical(cls, image_size: tuple[int, int] = (1280, 720)) -> SyntheticCamera:
        """A wide table camera: about 65 degrees across, barrel distortion, centre off-middle."""
        width, height = image_size
        focal = 1000.0 * width / 1280
        K = np.array([[focal, 0, width / 2 + 9.7], [0, focal * 1.002, height / 2 - 6.3], [0, 0, 1]])
        return cls(K, np.array([-0.22, 0.09, 0.0007, -0.0004, -0.015]), image_size)

    def project(self, points_mm: np.ndarray, pose: Pose) -> np.ndarray:
        """Image pixels of world points (N, 2 on the z = 0 plane, or N, 3)."""
        points = np.asarray(points_mm, np.float64)
        if points.shape[1] == 2:
            points = np.hstack([points, np.zeros((len(points), 1))])
        pixels, _ = cv2.projectPoints(points, pose.rvec, pose.tvec, self.K, self.dist)
        return pixels.reshape(-1, 2)

    def _normalised_rays(self) -> np.ndarray:
        """Undistorted normalised coordinates of every supersampled output pixel (cached)."""
        if self._rays is None:
            width, height = self.image_size
            s = self.supersample
            cols, rows = np.meshgrid(
                (np.arange(width * s) + 0.5) / s - 0.5, (np.arange(height * s) + 0.5) / s - 0.5
            )
            pixels = np.stack([cols, rows], axis=-1).reshape(-1, 1, 2)
            rays = cv2.undistortPoints(pixels, self.K, self.dist, criteria=UNDISTORT_CRITERIA)
            self._rays = rays.reshape(height * s, width * s, 2)
        return self._rays

    def render(
        self,
        art: FlatArt,
        pose: Pose,
        background: int = 90,
        noise: float = 2.0,
        blur_sigma: float = 0.0,
        seed: int = 0,
    ) -> np.ndarray:
        """The image the camera takes of ``art`` lying on the world z = 0 plane."""
        rays = self._normalised_rays()
        rotation, _ = cv2.Rodrigues(pose.rvec)
        plane_to_camera = np.column_stack([rotation[:, 0], rotation[:, 1], pose.tvec])
        camera_to_plane = np.linalg.inv(plane_to_camera)
        homogeneous = rays @ camera_to_plane[:, :2].T + camera_to_plane[:, 2]
        depth = homogeneous[..., 2]
        visible = depth > 1e-9
        safe = np.where(visible, depth, 1.0)
        map_x = ((homogeneous[..., 0] / safe - art.origin_mm[0]) / art.mm_per_px - 0.5).astype(
            np.float32
        )
        map_y = ((homogeneous[..., 1] / safe - art.origin_mm[1]) / art.mm_per_px - 0.5).astype(
            np.float32
        )
        map_x[~visible] = -1e6
        border = (background,) * (art.image.shape[2] if art.image.ndim == 3 else 1)
        big = cv2.remap(
            art.image,
            map_x,
            map_y,
            cv2.INTER_LINEAR,
            borderMode=cv2.BORDER_CONSTANT,
            borderValue=border,
        )
        image = cv2.resize(big, self.image_size, interpolation=cv2.INTER_AREA)
        if blur_sigma > 0:
            image = cv2.GaussianBlur(image, (0, 0), blur_sigma)
        if noise > 0:
            rng = np.random.default_rng(seed)
            image = np.clip(image + rng.normal(0, noise, image.shape), 0, 255).astype(np.uint8)
        return image


BOARD_SPOTS = (
    (-120, -55),
    (0, 0),
    (120, 55),
    (120, -55),
    (-120, 55),
    (0, -60),
    (-120, 0),
    (120, 0),
    (0, 60),
)
"""Where successive board views aim (mm from the board's centre), to cover the whole frame."""
TILTS = (
    (-220, -160),
    (200, 140),
    (-160, -170),
    (-190, 150),
    (0, -230),
    (240, 0),
    (-240, 20),
    (20, 220),
    (120, 120),
)
"""Sideways offsets of the eye (mm): each view sees the board tilted 20-30 degrees a new way."""


def board_poses(
    center_mm: tuple[float, float], count: int, distance_mm: float = 380.0
) -> list[Pose]:
    """``count`` varied views of a board centred at ``center_mm``: tilted, turned, near every part
    of the frame of a camera like ``SyntheticCamera.typical()``."""
    poses = []
    for k in range(count):
        spot = BOARD_SPOTS[k % len(BOARD_SPOTS)]
        tilt = TILTS[k % len(TILTS)]
        target = (center_mm[0] - spot[0], center_mm[1] - spot[1], 0.0)
        eye = (target[0] + tilt[0], target[1] + tilt[1], -(distance_mm + 25 * (k % 3)))
        poses.append(Pose.looking_at(eye, target, roll_deg=(k * 23) % 60 - 30))
    return poses


def table_pose() -> Pose:
    """A camera on a pole behind the dealer, 1.5 m up, looking out over the felt."""
    return Pose.looking_at((30.0, -250.0, -1500.0), (0.0, 480.0, 0.0), roll_deg=1.5)


def write_practice_set(
    outdir: str | Path, layout_path: str | Path, views: int = 9, noise: float = 2.0
) -> dict[str, Any]:
    """Render board views and table frames from a known camera into ``outdir``; returns (and writes
    as truth.json) the true lens and what each file is, so a calibration can be checked."""
    outdir = Path(outdir)
    outdir.mkdir(parents=True, exist_ok=True)
    camera = SyntheticCamera.typical()
    spec = ChessboardSpec(9, 6, 25.0)
    art = board_art(spec, 3.0)
    center = ((spec.cols - 1) * spec.square_mm / 2, (spec.rows - 1) * spec.square_mm / 2)
    boards = []
    for k, pose in enumerate(board_poses(center, views)):
        name = f"board-{k + 1:02d}.png"
        cv2.imwrite(str(outdir / name), camera.render(art, pose, noise=noise, seed=k))
        boards.append(name)
    table = table_art(Layout.load(layout_path))
    pose = table_pose()
    frames = {
        "table.png": (pose, 1),
        "table-still.png": (pose, 2),
        "table-bumped.png": (pose.moved(turn_deg=(0.2, 0.0, 0.0)), 3),
    }
    for name, (frame_pose, seed) in frames.items():
        cv2.imwrite(str(outdir / name), camera.render(table, frame_pose, noise=noise, seed=seed))
    truth = {
        "K": camera.K.tolist(),
        "dist": camera.dist.tolist(),
        "image_size": list(camera.image_size),
        "board": {"files": boards, "spec": spec.describe()},
        "table": {
            "calibration_frame": "table.png",
            "same_camera": "table-still.png",
            "camera_turned_0.2_deg": "table-bumped.png",
            "layout": str(layout_path),
        },
    }
    (outdir / "truth.json").write_text(json.dumps(truth, indent=1), encoding="utf-8")
    return truth
