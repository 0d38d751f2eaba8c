"""Bounded input: an image is refused from its header, before anything is decoded, by every
command that reads image files. Only PNG and JPEG are decoded (dealer_assist.image_files); a
TIFF or WebP bomb, which each command decoded into gigabytes, is refused naming its file, its
format and its size, in a process whose peak memory stays far below what the decode takes."""

from __future__ import annotations

import struct
import subprocess
import sys
import tracemalloc
from pathlib import Path
from typing import NamedTuple

import cv2
import numpy as np
import pytest

from dealer_assist.image_files import ImageFileError, decode_image
from tests.image_bombs import BOMBS

ROOT = Path(__file__).resolve().parents[1]

_PEAK = ("import resource, subprocess, sys; code = subprocess.run(sys.argv[2:]).returncode; "
         "open(sys.argv[1], 'w').write(str(resource.getrusage(resource.RUSAGE_CHILDREN)"
         ".ru_maxrss)); sys.exit(code)")
"""Runs a command, then writes its peak resident memory (KiB, Linux) to a file."""


def run_measured(tmp_path: Path, *command: str) -> tuple[subprocess.CompletedProcess, int]:
    """``python -m`` ``command`` run to its end, and its peak resident memory in bytes."""
    peak = tmp_path / "peak-rss"
    done = subprocess.run([sys.executable, "-c", _PEAK, str(peak), sys.executable, "-m",
                           *command], cwd=ROOT, capture_output=True, text=True, timeout=300)
    return done, int(peak.read_text()) * 1024


class Bomb(NamedTuple):
    kind: str
    data: bytes
    width: int
    height: int

    @property
    def refusal(self) -> str:
        """How its refusal begins: from its header, its format and size."""
        return (f"a {self.kind} image of {self.width}x{self.height} pixels: only PNG or JPEG "
                "images are read")


@pytest.fixture(params=sorted(BOMBS))
def bomb(request: pytest.FixtureRequest) -> Bomb:
    make, width, height = BOMBS[request.param]
    return Bomb(request.param, make(), width, height)


def assert_undecoded(done: subprocess.CompletedProcess, peak: int, bomb: Bomb) -> None:
    """No traceback, and far less memory than the picture alone takes decoded (BGR, width x
    height x 3 bytes: 805 MB to 1.2 GB; the commands' own need is 100-200 MB)."""
    assert "Traceback" not in done.stderr, done.stderr
    assert peak < bomb.width * bomb.height * 3 / 2, f"peak {peak / 2**20:.0f} MiB"


def test_detect_refuses_a_bomb(tmp_path: Path, bomb: Bomb) -> None:
    """It took 2.4 GB (TIFF) and 1.6 GB (WebP) and printed "0 cards"."""
    path = tmp_path / "frame.jpg"  # named as a camera frame: the bytes decide
    path.write_bytes(bomb.data)
    done, peak = run_measured(tmp_path, "dealer_assist", "detect", str(path))
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr == (f"dealer-assist detect: {path}: {bomb.refusal} "
                           "(the camera's, the recording's and the card artwork's formats); "
                           "not decoded\n")
    assert_undecoded(done, peak, bomb)


def test_replay_refuses_a_bomb_in_place_of_a_recorded_key_frame(
        tmp_path: Path, bomb: Bomb) -> None:
    """Someone who can write the recording directory puts a bomb where a key frame was; replay's
    re-detection names the frame and carries on."""
    from tests.surveillance.test_redetect_shipped_model import record

    record(tmp_path / "rec", hole_card="JH")
    frame = sorted((tmp_path / "rec" / "frames").rglob("*-005-key-*.jpg"))[0]
    frame.write_bytes(bomb.data)
    done, peak = run_measured(tmp_path, "dealer_assist", "replay", str(tmp_path / "rec"),
                              "--redetect")
    assert done.returncode == 1
    relative = frame.relative_to(tmp_path / "rec")
    assert (f"event 5 recorded card JH; its key frame {relative} cannot be decoded: "
            f"{bomb.refusal}") in done.stdout
    assert "3 frames re-detected" in done.stdout  # the other key frames still are
    assert_undecoded(done, peak, bomb)


def test_lens_calibration_refuses_a_bomb(tmp_path: Path, bomb: Bomb) -> None:
    path = tmp_path / "board-01.png"
    path.write_bytes(bomb.data)
    done, peak = run_measured(tmp_path, "dealer_assist", "calibrate", "camera", str(path),
                              "-o", str(tmp_path / "camera.yaml"))
    assert done.returncode == 2 and not (tmp_path / "camera.yaml").exists()
    assert done.stderr.startswith(f"error: {path}: {bomb.refusal}")
    assert_undecoded(done, peak, bomb)


def test_enrolment_refuses_a_bomb_among_a_decks_faces(
        tmp_path: Path, bomb: Bomb) -> None:
    deck = tmp_path / "ourdeck"
    deck.mkdir()
    (deck / "AS.png").write_bytes(bomb.data)
    done, peak = run_measured(tmp_path, "dealer_assist.vision.enrol", str(deck))
    assert done.returncode == 2
    assert done.stderr.startswith(f"enrol: face AS: {bomb.refusal}")
    assert done.stderr.rstrip().endswith(f"not decoded: {deck / 'AS.png'}")
    assert_undecoded(done, peak, bomb)


FORMATS = [  # OpenCV's encoders: the file's suffix, the format named, the size read from it
    (".tiff", "TIFF", True), (".webp", "WebP", True), (".bmp", "BMP", True),
    (".gif", "GIF", True), (".pbm", "PBM", True), (".pgm", "PGM", True), (".ppm", "PPM", True),
    (".pam", "PAM", True), (".pfm", "PFM", True), (".ras", "Sun raster", True),
    (".jp2", "JPEG 2000", False), (".hdr", "Radiance HDR", False), (".avif", "AVIF", False),
]


@pytest.mark.parametrize(("suffix", "kind", "sized"), FORMATS, ids=[f[1] for f in FORMATS])
def test_every_other_format_opencv_decodes_is_refused_naming_it(suffix: str, kind: str,
                                                                 sized: bool) -> None:
    """Small, whole files OpenCV writes and reads back; here refused, named and measured."""
    picture = np.full((37, 53, 3), 200, np.uint8)
    try:
        data = cv2.imencode(suffix, picture[:, :, 0] if suffix in (".pbm", ".pgm") else
                            picture)[1].tobytes()
    except cv2.error:
        pytest.skip(f"this OpenCV writes no {kind}")
    assert cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_COLOR).shape[:2] == (37, 53)
    with pytest.raises(ImageFileError) as error:
        decode_image(data, Path("shot" + suffix))
    size = " of 53x37 pixels" if sized else ""
    assert str(error.value) == (f"shot{suffix}: a {kind} image{size}: only PNG or JPEG images "
                                "are read (the camera's, the recording's and the card artwork's "
                                "formats); not decoded")


def test_a_jpeg_frame_header_hidden_behind_stray_bytes_is_refused_undecoded() -> None:
    """libjpeg skips stray bytes between segments, warning only: a frame header claiming
    20000x20000 behind three of them was not found by the cap's walk, and the picture was
    allocated (1.1 GB) before the warning refused it."""
    whole = (ROOT / "tests" / "data" / "vision" / "fan_anglo.jpg").read_bytes()
    at = whole.index(b"\xff\xc0")
    claiming = whole[:at + 5] + struct.pack(">HH", 20000, 20000) + whole[at + 9:]
    tracemalloc.start()  # numpy's allocations, where OpenCV puts a decoded picture, are traced
    try:
        with pytest.raises(ImageFileError) as error:
            decode_image(claiming[:at] + b"\x00\x00\x00" + claiming[at:])
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert str(error.value) == ("a JPEG file whose header gives no image size (cut short or "
                                "damaged); not decoded")
    assert peak < 2**20
