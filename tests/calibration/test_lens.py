"""Lens calibration against a known synthetic camera, and its refusals of bad images."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pytest
import yaml

from dealer_assist.calibration.errors import (
    BlurredImageError,
    BoardNotFoundError,
    CalibrationFileError,
    ImageReadError,
    TooFewImagesError,
)
from dealer_assist.calibration.lens import (
    CameraModel,
    CharucoSpec,
    LensCalibration,
    calibrate_lens,
    find_board,
    read_gray,
)
from dealer_assist.calibration.printables import FlatArt, board_art
from dealer_assist.calibration.synthetic import SyntheticCamera, board_poses

from .conftest import CHESSBOARD, CHESSBOARD_CENTER


def test_chessboard_recovers_focal_length_and_principal_point(
    lens: LensCalibration, camera: SyntheticCamera
) -> None:
    K = lens.camera.K
    assert K[0, 0] == pytest.approx(camera.K[0, 0], rel=0.005)
    assert K[1, 1] == pytest.approx(camera.K[1, 1], rel=0.005)
    assert np.hypot(*(K[:2, 2] - camera.K[:2, 2])) < 2.0
    assert lens.camera.rms_px is not None and lens.camera.rms_px < 0.3
    assert lens.camera.images_used == 9 and not lens.rejected
    assert all(err < 0.3 for _, err in lens.per_image_rms_px)


def test_recovered_distortion_undoes_the_true_lens_across_the_frame(
    lens: LensCalibration, camera: SyntheticCamera
) -> None:
    """Distortion coefficients trade off against each other; what matters is the mapping."""
    width, height = camera.image_size
    grid = np.mgrid[20 : width - 20 : 60, 20 : height - 20 : 60].T.reshape(-1, 1, 2).astype(float)
    truth = cv2.undistortPoints(grid, camera.K, camera.dist, P=camera.K)
    recovered = cv2.undistortPoints(grid, lens.camera.K, lens.camera.dist, P=camera.K)
    assert np.abs(truth - recovered).max() < 1.0


def test_charuco_board_recovers_the_lens_too(camera: SyntheticCamera) -> None:
    spec = CharucoSpec(9, 6, 25.0, 18.75)
    art = board_art(spec, 3.0)
    images = [
        (f"charuco-{k}.png", camera.render(art, pose, seed=k))
        for k, pose in enumerate(board_poses((125.0, 87.5), 7))
    ]
    result = calibrate_lens(images, spec)
    assert result.camera.K[0, 0] == pytest.approx(camera.K[0, 0], rel=0.005)
    assert np.hypot(*(result.camera.K[:2, 2] - camera.K[:2, 2])) < 2.0
    assert "ChArUco" in result.camera.board


def test_image_without_board_is_named() -> None:
    blank = np.full((720, 1280), 128, np.uint8)
    with pytest.raises(BoardNotFoundError) as caught:
        find_board(blank, CHESSBOARD, "empty-wall.png")
    assert str(caught.value).startswith("empty-wall.png: no chessboard 9x6 inner corners")
    assert caught.value.source == "empty-wall.png"


def test_blurred_board_is_refused_naming_the_image(
    board_images: list[tuple[str, np.ndarray]],
) -> None:
    name, sharp = board_images[1]
    edge = find_board(sharp, CHESSBOARD, name).edge_width_px
    assert edge is not None and edge < 2.5
    blurred = cv2.GaussianBlur(sharp, (0, 0), 2.5)
    with pytest.raises(BlurredImageError, match=r"^shaky\.png: board found but blurred: edges"):
        find_board(blurred, CHESSBOARD, "shaky.png")


def test_too_few_usable_images_lists_each_rejected_image(
    board_images: list[tuple[str, np.ndarray]],
) -> None:
    blank = np.full((720, 1280), 128, np.uint8)
    blurred = cv2.GaussianBlur(board_images[0][1], (0, 0), 2.5)
    images = [*board_images[:3], ("wall.png", blank), ("shaky.png", blurred)]
    with pytest.raises(TooFewImagesError) as caught:
        calibrate_lens(images, CHESSBOARD)
    message = str(caught.value)
    assert "only 3 usable board image(s), need at least 5" in message
    assert "\n  wall.png: no chessboard" in message
    assert "\n  shaky.png: board found but blurred" in message


def test_bad_images_are_skipped_and_reported_when_enough_remain(
    board_images: list[tuple[str, np.ndarray]],
) -> None:
    blank = np.full((720, 1280), 128, np.uint8)
    small = cv2.resize(board_images[0][1], (640, 360))
    result = calibrate_lens(
        [*board_images[1:6], ("wall.png", blank), ("small.png", small)], CHESSBOARD
    )
    assert result.camera.images_used == 5
    reasons = {r.image: r.reason for r in result.rejected}
    assert set(reasons) == {"wall.png", "small.png"}
    assert "differs from (1280, 720)" in reasons["small.png"]


def test_views_of_a_board_that_did_not_move_count_once(
    board_images: list[tuple[str, np.ndarray]], camera: SyntheticCamera, chessboard_art: FlatArt
) -> None:
    """Five copies of one shot made a wrong lens (centre 63 px off) with a plausible RMS. A copy,
    or a re-shot of a board that drifted a millimetre, is named with the image it repeats."""
    board_03 = board_poses(CHESSBOARD_CENTER, 3)[2]
    reshot = camera.render(chessboard_art, board_03.moved(shift_mm=(1, 0, 0)), seed=50)
    images = [*board_images[:4], ("copy.png", board_images[0][1]), ("reshot.png", reshot)]
    with pytest.raises(TooFewImagesError) as caught:
        calibrate_lens(images, CHESSBOARD)
    message = str(caught.value)
    assert "only 4 usable board image(s), need at least 5" in message
    assert "\n  copy.png: the board did not move since board-01.png: its corners lie 0.0 px" in (
        message
    )
    assert "\n  reshot.png: the board did not move since board-03.png" in message


def test_poor_coverage_is_warned(camera: SyntheticCamera, chessboard_art: FlatArt) -> None:
    """Five views all near the middle of the frame leave the corners unconstrained."""
    middle = board_poses(CHESSBOARD_CENTER, 2)[1]
    central = [
        (f"middle-{k}.png", camera.render(chessboard_art, middle.moved(turn_deg=(0, 0, 8 * k))))
        for k in range(5)
    ]
    result = calibrate_lens(central, CHESSBOARD)
    assert result.camera.images_used == 5
    assert result.coverage < 0.5
    assert any(w.startswith("poor coverage") for w in result.warnings)


def test_unreadable_image_files_are_named(tmp_path: Path) -> None:
    with pytest.raises(ImageReadError, match="no such image file"):
        read_gray(tmp_path / "missing.png")
    junk = tmp_path / "junk.png"
    junk.write_bytes(b"not a png at all")
    with pytest.raises(ImageReadError, match=r"junk\.png: not a PNG or JPEG image"):
        read_gray(junk)
    cut = tmp_path / "board-cut.png"
    whole = cv2.imencode(".png", np.full((480, 640), 200, np.uint8))[1].tobytes()
    cut.write_bytes(whole[: len(whole) - 20])  # a copy that lost its last bytes
    with pytest.raises(ImageReadError, match=r"board-cut\.png: a PNG file that does not decode"):
        read_gray(cut)


def test_camera_file_round_trips(lens: LensCalibration, tmp_path: Path) -> None:
    path = tmp_path / "camera-T1.yaml"
    lens.camera.save(path)
    again = CameraModel.load(path)
    np.testing.assert_array_equal(again.K, lens.camera.K)
    np.testing.assert_array_equal(again.dist, lens.camera.dist)
    assert again.image_size == (1280, 720) and again.images_used == 9


def test_bad_camera_files_are_refused(tmp_path: Path) -> None:
    wrong = tmp_path / "wrong.yaml"
    wrong.write_text("kind: something else\n")
    with pytest.raises(CalibrationFileError, match=r"wrong\.yaml: not a camera calibration"):
        CameraModel.load(wrong)
    short = tmp_path / "short.yaml"
    short.write_text(
        "kind: dealer-assist camera calibration\nversion: 1\n"
        "K: [[1, 0], [0, 1]]\ndist: [0]\nimage_size: [1, 1]\n"
    )
    with pytest.raises(CalibrationFileError, match=r"short\.yaml: K must be 3x3"):
        CameraModel.load(short)
    latin = tmp_path / "latin.yaml"
    latin.write_bytes("kind: dealer-assist camera calibration\nnote: caméra\n".encode("latin-1"))
    with pytest.raises(CalibrationFileError, match=r"latin\.yaml: not valid YAML: unacceptable "
                                                   r"character #x00e9[\s\S]*position 48"):
        CameraModel.load(latin)
    flat = tmp_path / "flat.yaml"
    flat.write_text(
        "kind: dealer-assist camera calibration\nversion: 1\n"
        "K: [[0, 0, 640], [0, 1000, 360], [0, 0, 1]]\ndist: [0, 0, 0, 0, 0]\n"
        "image_size: [1280, 720]\n"
    )
    with pytest.raises(CalibrationFileError, match=r"flat\.yaml: K's focal lengths fx, fy must "
                                                   r"be above 0, got 0, 1000"):
        CameraModel.load(flat)


GOOD_CAMERA = {
    "kind": "dealer-assist camera calibration", "version": 1, "image_size": [1280, 720],
    "K": [[1000.0, 0.0, 640.0], [0.0, 1000.0, 360.0], [0.0, 0.0, 1.0]],
    "dist": [0.0, 0.0, 0.0, 0.0, 0.0], "rms_px": 0.1,
}


@pytest.mark.parametrize(("key", "value", "message"), [
    ("image_size", [float("inf"), 720],
     "image_size must be [width, height] in whole pixels above 0, got [inf, 720]"),
    ("image_size", [1280.9, 720.2],
     "image_size must be [width, height] in whole pixels above 0, got [1280.9, 720.2]"),
    ("K", [["1000", "0", "640"], ["0", "1000", "360"], ["0", "0", "1"]],
     "K must be 3x3 finite numbers, got [['1000', '0', '640'], ['0', '1000', '360'], "
     "['0', '0', '1']]"),
    ("K", [[1000, 0, 640], [0, 1000, 360], [0, 0, 0]],
     "K's last row must be [0, 0, 1], got [0.0, 0.0, 0.0]"),
    ("rms_px", float("nan"), "rms_px must be a finite number, got nan"),
], ids=["size-inf", "size-fractional", "K-text", "K-last-row-0", "rms-nan"])
def test_camera_files_with_values_no_lens_has_are_refused_naming_the_key(
    tmp_path: Path, key: str, value: object, message: str
) -> None:
    """These loaded, then crashed (an infinite size) or gave a lens that is no lens."""
    path = tmp_path / "camera.yaml"
    path.write_text(yaml.safe_dump({**GOOD_CAMERA, key: value}))
    with pytest.raises(CalibrationFileError) as caught:
        CameraModel.load(path)
    assert str(caught.value) == f"{path}: {message}"


@pytest.mark.parametrize("version", [99, 2, "1", True, None])
def test_a_camera_file_of_a_version_this_program_does_not_read_is_refused(
    tmp_path: Path, version: object
) -> None:
    """A newer program's file (version 99) was read as if it were version 1."""
    path = tmp_path / "camera.yaml"
    path.write_text(yaml.safe_dump({**GOOD_CAMERA, "version": version}))
    with pytest.raises(CalibrationFileError) as caught:
        CameraModel.load(path)
    assert str(caught.value) == (f"{path}: version: this dealer-assist reads version 1, got"
                                 f" {version!r} (written by a newer dealer-assist, or damaged)")
    path.write_text(yaml.safe_dump(GOOD_CAMERA))
    assert CameraModel.load(path).image_size == (1280, 720)


def test_yaml_nested_too_deeply_is_refused_naming_the_file(tmp_path: Path) -> None:
    """PyYAML recursed once per level and raised RecursionError."""
    path = tmp_path / "deep.yaml"
    path.write_text("K: " + "[" * 5000 + "]" * 5000 + "\n")
    with pytest.raises(CalibrationFileError) as caught:
        CameraModel.load(path)
    assert str(caught.value) == f"{path}: not valid YAML: nested too deeply"
