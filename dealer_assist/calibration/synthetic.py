"""A synthetic camera: what a known lens at a known pose sees of flat artwork (a board, the table).

Used to try the whole calibration procedure without a camera (``calibrate synth``), by the tests
and by the accuracy bench: because the true lens and pose are known, the recovered ones can be
checked. Projection uses OpenCV's lens model (cv2.undistortPoints inverts it per output pixel).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import cv2
import numpy as np

from dealer_assist.calibration.lens import CameraModel
from dealer_assist.calibration.printables import FlatArt

UNDISTORT_CRITERIA = (cv2.TERM_CRITERIA_COUNT | cv2.TERM_CRITERIA_EPS, 50, 1e-12)


@dataclass(frozen=True, eq=False)
class Pose:
    """World-to-camera rotation (Rodrigues vector) and translation (mm), OpenCV's convention."""

    rvec: np.ndarray
    tvec: np.ndarray

    @classmethod
    def looking_at(cls, eye_mm: tuple[float, float, float], target_mm: tuple[float, float, float],
                   down: tuple[float, float, float] = (0.0, 1.0, 0.0), roll_deg: float = 0.0) -> Pose:
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

    def moved(self, shift_mm: tuple[float, float, float] = (0, 0, 0), turn_deg: tuple[float, float, float] = (0, 0, 0)) -> Pose:
        """The same camera shifted ``shift_mm`` (world axes) and turned by ``turn_deg`` about its own
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
        """A wide table camera: about 65 degrees across, barrel distortion, centre off the middle."""
        width, height = image_size
        focal = 1000.0 * width / 1280
        K = np.array([[focal, 0, width / 2 + 9.7], [0, focal * 1.002, height / 2 - 6.3], [0, 0, 1]])
        return cls(K, np.array([-0.22, 0.09, 0.0007, -0.0004, -0.015]), image_size)

    def model(self) -> CameraModel:
        """The true lens as a CameraModel (what a perfect calibration would give)."""
        return CameraModel(self.K.copy(), self.dist.copy(), self.image_size)

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
            cols, rows = np.meshgrid((np.arange(width * s) + 0.5) / s - 0.5, (np.arange(height * s) + 0.5) / s - 0.5)
            pixels = np.stack([cols, rows], axis=-1).reshape(-1, 1, 2)
            rays = cv2.undistortPoints(pixels, self.K, self.dist, criteria=UNDISTORT_CRITERIA)
            self._rays = rays.reshape(height * s, width * s, 2)
        return self._rays

    def render(self, art: FlatArt, pose: Pose, background: int = 90, noise: float = 2.0,
               blur_sigma: float = 0.0, seed: int = 0) -> np.ndarray:
        """The image the camera takes of ``art`` lying on the world z = 0 plane."""
        rays = self._normalised_rays()
        rotation, _ = cv2.Rodrigues(pose.rvec)
        plane_to_camera = np.column_stack([rotation[:, 0], rotation[:, 1], pose.tvec])
        camera_to_plane = np.linalg.inv(plane_to_camera)
        homogeneous = rays @ camera_to_plane[:, :2].T + camera_to_plane[:, 2]
        depth = homogeneous[..., 2]
        visible = depth > 1e-9
        safe = np.where(visible, depth, 1.0)
        map_x = ((homogeneous[..., 0] / safe - art.origin_mm[0]) / art.mm_per_px - 0.5).astype(np.float32)
        map_y = ((homogeneous[..., 1] / safe - art.origin_mm[1]) / art.mm_per_px - 0.5).astype(np.float32)
        map_x[~visible] = -1e6
        border = (background,) * (art.image.shape[2] if art.image.ndim == 3 else 1)
        big = cv2.remap(art.image, map_x, map_y, cv2.INTER_LINEAR, borderMode=cv2.BORDER_CONSTANT, borderValue=border)
        image = cv2.resize(big, self.image_size, interpolation=cv2.INTER_AREA)
        if blur_sigma > 0:
            image = cv2.GaussianBlur(image, (0, 0), blur_sigma)
        if noise > 0:
            rng = np.random.default_rng(seed)
            image = np.clip(image + rng.normal(0, noise, image.shape), 0, 255).astype(np.uint8)
        return image
