"""Image files read whole: a picture cut short is refused, never half-read."""

from __future__ import annotations

import os
from pathlib import Path

import cv2
import numpy as np
import pytest

from dealer_assist.image_files import ImageFileError, read_image

DATA = Path(__file__).parent / "data" / "vision"


@pytest.fixture(scope="module")
def photo() -> np.ndarray:
    return cv2.imread(str(DATA / "fan_anglo.jpg"))


@pytest.mark.parametrize("suffix, kind", [(".jpg", "JPEG"), (".png", "PNG")])
@pytest.mark.parametrize("kept", [0.3, 0.9, 0.999])
def test_a_file_cut_short_is_refused(photo: np.ndarray, tmp_path: Path, suffix: str, kind: str,
                                     kept: float) -> None:
    whole = cv2.imencode(suffix, photo)[1].tobytes()
    path = tmp_path / f"frame{suffix}"
    path.write_bytes(whole[: int(len(whole) * kept)])
    with pytest.raises(ImageFileError, match=f"a {kind} file that does not decode whole") as error:
        read_image(path)
    assert error.value.path == path and str(path) in str(error.value)
    # OpenCV's own file reader would have given a whole-sized picture with a grey bottom
    if suffix == ".jpg":
        assert cv2.imread(str(path)).shape == photo.shape


def test_a_whole_file_reads_as_opencv_writes_it(photo: np.ndarray, tmp_path: Path) -> None:
    path = tmp_path / "frame.png"
    cv2.imwrite(str(path), photo)
    assert np.array_equal(read_image(path), photo)
    rgba = cv2.cvtColor(photo, cv2.COLOR_BGR2BGRA)
    cv2.imwrite(str(path), rgba)
    assert read_image(path).shape[2] == 3
    assert np.array_equal(read_image(path, keep_alpha=True), rgba)


@pytest.mark.parametrize("content, why", [
    (None, "no such image file"),
    (b"", "not a readable image"),
    (b"GIF89a not quite", "not a readable image"),
])
def test_missing_empty_and_foreign_files_are_named(tmp_path: Path, content: bytes | None,
                                                   why: str) -> None:
    path = tmp_path / "shot.jpg"
    if content is not None:
        path.write_bytes(content)
    with pytest.raises(ImageFileError, match=why):
        read_image(path)


def test_a_folder_is_not_an_image(tmp_path: Path) -> None:
    with pytest.raises(ImageFileError, match="no such image file"):
        read_image(tmp_path)


def test_a_file_name_that_is_not_utf8_is_read(photo: np.ndarray, tmp_path: Path) -> None:
    name = os.fsdecode(b"table-\xe9.png")  # Latin-1 bytes, as an old camera names its files
    cv2.imwrite(str(tmp_path / "plain.png"), photo)
    (tmp_path / "plain.png").rename(tmp_path / name)
    assert read_image(tmp_path / name).shape == photo.shape
