"""Image files read whole: a picture cut short is refused, never half-read."""

from __future__ import annotations

import os
import struct
import sys
import threading
from pathlib import Path

import cv2
import numpy as np
import pytest

from dealer_assist.image_files import ImageFileError, decode_image, read_image

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
    (b"", "an empty file, not an image; not decoded"),
    (b"no picture", r"not a PNG or JPEG image \(it starts with 6e 6f 20 70 69 63 74 75\); not "
                    "decoded"),
])
def test_missing_empty_and_foreign_files_are_named(tmp_path: Path, content: bytes | None,
                                                   why: str) -> None:
    path = tmp_path / "shot.jpg"
    if content is not None:
        path.write_bytes(content)
    with pytest.raises(ImageFileError, match=why):
        read_image(path)


def test_a_folder_is_not_an_image(tmp_path: Path) -> None:
    with pytest.raises(ImageFileError, match="a directory, not an image file"):
        read_image(tmp_path)


def damaged_jpeg(whole: bytes, count: int = 1000) -> bytes:
    """A JPEG's bytes with ``count`` bytes of its coded data, past the scan header, overwritten
    (the same length: a bad sector or a bad copy, not a cut)."""
    sos = whole.index(b"\xff\xda")
    at = sos + 2 + int.from_bytes(whole[sos + 2:sos + 4], "big") + 2000
    return whole[:at] + b"\x55" * count + whole[at + count:]


def test_a_jpeg_with_damaged_data_is_refused_naming_libjpegs_complaint(
        photo: np.ndarray, tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    """OpenCV decoded it whole, garbled blocks and all (phantom cards), saying so only in
    libjpeg's line on stderr, which named no file."""
    path = tmp_path / "frame.jpg"
    path.write_bytes(damaged_jpeg((DATA / "fan_anglo.jpg").read_bytes()))
    assert cv2.imdecode(np.frombuffer(path.read_bytes(), np.uint8), cv2.IMREAD_COLOR).shape \
        == photo.shape
    capfd.readouterr()
    with pytest.raises(ImageFileError) as error:
        read_image(path)
    assert str(error.value) == (f"{path}: damaged JPEG data (libjpeg: premature end of data "
                                "segment); not read")
    assert capfd.readouterr().err == ""  # the complaint is in the message, not left on stderr
    assert np.array_equal(read_image(DATA / "fan_anglo.jpg"), photo)  # a whole one still reads


def test_zero_padding_before_the_end_marker_is_no_damage(photo: np.ndarray) -> None:
    """Some cameras pad a frame with zeros before its end marker; libjpeg says so ("extraneous
    bytes before marker 0xd9"), but the picture decodes whole."""
    whole = (DATA / "fan_anglo.jpg").read_bytes()
    assert np.array_equal(decode_image(whole[:-2] + bytes(8) + whole[-2:]), photo)


def test_any_other_libjpeg_warning_refuses_the_file() -> None:
    """libjpeg prints its first warning only: one about the file's header would hide damage in
    its data, so it refuses the file too."""
    whole = bytearray((DATA / "fan_anglo.jpg").read_bytes())
    app0 = whole.index(b"JFIF\x00")
    whole[app0 + 5] = 2  # JFIF version 2.x: "unknown JFIF revision number"
    with pytest.raises(ImageFileError, match="unknown JFIF revision"):
        decode_image(bytes(whole))


def test_another_threads_writes_to_standard_error_never_block_a_decode_or_are_lost(
        capfd: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """The check borrows file descriptor 2 while libjpeg decodes: a thread writing there
    meanwhile (more than a pipe holds) neither blocks the decode nor loses a line; with no
    standard error to give back, the bytes decode unchecked."""
    damaged = damaged_jpeg((DATA / "fan_anglo.jpg").read_bytes())
    line = b"x" * 1023 + b"\n"
    stop = threading.Event()

    def chatter() -> None:
        while not stop.is_set():
            os.write(2, line)

    writer = threading.Thread(target=chatter)
    capfd.readouterr()
    writer.start()
    try:
        for _ in range(20):
            with pytest.raises(ImageFileError, match="damaged JPEG data"):
                decode_image(damaged)
    finally:
        stop.set()
        writer.join()
    err = capfd.readouterr().err
    assert err and set(err.splitlines()) == {"x" * 1023}  # every line whole, libjpeg's not
    monkeypatch.setattr(sys, "stderr", None)
    assert decode_image(damaged).ndim == 3


def test_a_file_name_that_is_not_utf8_is_read(photo: np.ndarray, tmp_path: Path) -> None:
    name = os.fsdecode(b"table-\xe9.png")  # Latin-1 bytes, as an old camera names its files
    cv2.imwrite(str(tmp_path / "plain.png"), photo)
    (tmp_path / "plain.png").rename(tmp_path / name)
    assert read_image(tmp_path / name).shape == photo.shape


def _claiming(data: bytes, width: int, height: int) -> bytes:
    """A PNG's or baseline JPEG's bytes with the header changed to claim ``width`` x ``height``."""
    if data.startswith(b"\x89PNG"):
        return data[:16] + struct.pack(">II", width, height) + data[24:]
    at = data.index(b"\xff\xc0")
    return data[:at + 5] + struct.pack(">HH", height, width) + data[at + 9:]


def test_a_header_claiming_more_pixels_than_read_is_refused_undecoded(
        photo: np.ndarray, tmp_path: Path) -> None:
    """Past 2^30 pixels OpenCV raised its own error; below, it decoded into gigabytes."""
    for suffix in (".png", ".jpg"):
        whole = cv2.imencode(suffix, photo)[1].tobytes()
        for width, height in [(60000, 60000), (10001, 10000)]:
            path = tmp_path / f"huge{suffix}"
            path.write_bytes(_claiming(whole, width, height))
            why = (f"image is {width}x{height}, larger than 100,000,000 pixels (an 8K camera "
                   "frame is 33,177,600); not decoded")
            with pytest.raises(ImageFileError) as error:
                read_image(path)
            assert str(error.value) == f"{path}: {why}"
            with pytest.raises(ImageFileError) as error:  # bytes from a recording name no file
                decode_image(path.read_bytes())
            assert str(error.value) == why
    frame = tmp_path / "8k.png"  # an 8K camera frame is well within the limit
    cv2.imwrite(str(frame), np.zeros((4320, 7680), np.uint8))
    assert read_image(frame).shape == (4320, 7680, 3)
