"""Hostile or damaged input to what the technician runs: refused by name, never a hang, a
traceback, unbounded memory or a good calibration overwritten."""

from __future__ import annotations

import contextlib
import os
import resource
import subprocess
import sys
import threading
from pathlib import Path

import cv2
import numpy as np
import pytest
import yaml

from dealer_assist.calibration.errors import CalibrationFileError, LayoutError
from dealer_assist.calibration.layout import Layout
from dealer_assist.calibration.lens import CameraModel
from dealer_assist.calibration.table import TableCalibration
from dealer_assist.image_files import ImageFileError, decode_image

from .conftest import TableScene

DATA = Path(__file__).parents[1] / "data" / "vision"


def alias_bomb(levels: int = 9) -> list[str]:
    """YAML lines naming ``b{levels-1}``: a list of ten aliases of a list of ten ..."""
    lines = ["b0: &b0 [1, 1, 1, 1, 1, 1, 1, 1, 1, 1]"]
    lines += [f"b{k}: &b{k} [{', '.join([f'*b{k - 1}'] * 10)}]" for k in range(1, levels)]
    return lines


@pytest.mark.parametrize("load", [CameraModel.load, Layout.load, TableCalibration.load])
def test_a_fifo_or_a_device_is_refused_without_waiting_or_reading(tmp_path: Path, load) -> None:
    fifo = tmp_path / "camera.yaml"
    os.mkfifo(fifo)
    # were the open to wait for a writer, one comes after 10 s so that the test fails, not hangs
    rescue = threading.Timer(10, _open_for_writing, (fifo,))
    rescue.start()
    try:
        for path in (fifo, Path("/dev/zero")):  # no writer ever comes; never ends
            with pytest.raises((CalibrationFileError, LayoutError),
                               match="a FIFO, device or socket"):
                load(path)
    finally:
        rescue.cancel()


def _open_for_writing(fifo: Path) -> None:
    with contextlib.suppress(OSError):  # ENXIO: nobody is reading it
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))


def test_a_file_too_large_to_be_a_calibration_is_refused_unread(tmp_path: Path) -> None:
    path = tmp_path / "camera.yaml"
    path.write_bytes(b"# padding\n" * 200_000)
    with pytest.raises(CalibrationFileError, match="over 1,000,000 bytes"):
        CameraModel.load(path)


def test_a_yaml_alias_bomb_is_refused_in_bounded_time_and_memory(tmp_path: Path) -> None:
    """A billion numbers named by 100 lines: numpy was asked for 7.45 GiB, a message for the
    whole list."""
    camera = tmp_path / "camera.yaml"
    camera.write_text("\n".join([
        "kind: dealer-assist camera calibration", "version: 1", "image_size: [1280, 720]",
        "dist: [0, 0, 0, 0, 0]", *alias_bomb(), "K: *b8"]))
    layout = tmp_path / "layout.yaml"
    # the names under the dealer's zones, read only after the outline (unknown keys there too)
    layout.write_text("\n".join(["dealer:", *(f"  {line}" for line in alias_bomb()), "name: x",
                                 "outline: [*b8, *b8, *b8]"]))
    script = (
        "import resource, sys\n"
        "resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))\n"
        "from dealer_assist.calibration.layout import Layout\n"
        "from dealer_assist.calibration.lens import CameraModel\n"
        "for load, path in ((CameraModel.load, sys.argv[1]), (Layout.load, sys.argv[2])):\n"
        "    try:\n"
        "        load(path)\n"
        "    except ValueError as error:\n"
        "        print(len(str(error)), error)\n")
    done = subprocess.run([sys.executable, "-c", script, str(camera), str(layout)],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr[-2000:]
    lines = done.stdout.splitlines()
    assert "K must be a few numbers, got lists of more than 64" in lines[0]
    assert "outline[0]: expected [x, y] in mm" in lines[1]
    assert all(int(line.split()[0]) < 300 for line in lines)


def test_a_failed_write_leaves_the_good_calibration(tmp_path: Path,
                                                    table_scene: TableScene) -> None:
    """A full disk (here: a file size limit) used to leave the table file cut short."""
    path = tmp_path / "table.yaml"
    calibration = table_scene.fit.calibration
    calibration.save(path)
    good = path.read_bytes()
    script = (
        "import pickle, resource, sys\n"
        "resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))\n"
        "from dealer_assist.calibration.table import TableCalibration\n"
        "calibration = TableCalibration.load(sys.argv[1])\n"
        "try:\n"
        "    calibration.save(sys.argv[1])\n"
        "except OSError as error:\n"
        "    print(error)\n")
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    assert hard == resource.RLIM_INFINITY or hard > len(good)
    done = subprocess.run([sys.executable, "-c", script, str(path)], capture_output=True,
                          text=True, timeout=60)
    assert "File too large" in done.stdout and str(path) in done.stdout, done.stderr[-2000:]
    assert path.read_bytes() == good
    assert [p.name for p in tmp_path.iterdir()] == ["table.yaml"]  # no temporary file left


@pytest.mark.parametrize("damage", [("camera", "K", 0, 0), ("camera", "dist", 0),
                                    ("pose", "tvec", 2)])
def test_a_table_file_whose_lens_or_pose_is_damaged_is_refused(
        tmp_path: Path, table_scene: TableScene, damage: tuple[object, ...]) -> None:
    """Each passed every check and put a card lying in seat 4's card area on its insurance
    line, or nowhere: its own markers no longer land where its layout puts them."""
    path = tmp_path / "table.yaml"
    table_scene.fit.calibration.save(path)
    data = yaml.safe_load(path.read_text())
    inner = data
    for key in damage[:-1]:
        inner = inner[key]
    inner[damage[-1]] = 1e308 if damage[0] == "camera" else 1e-300
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    with pytest.raises(CalibrationFileError, match="reference_markers: the file's lens and pose "
                                                   "put 0 of its 6 markers within 60 mm"):
        TableCalibration.load(path)


def test_damaged_jpeg_data_that_ends_its_scan_early_is_refused() -> None:
    """libjpeg's only complaint was "N extraneous bytes before marker 0xd9", taken for a
    camera's zero padding; here those bytes are coded data, and the picture garbled."""
    whole = (DATA / "fan_anglo.jpg").read_bytes()
    photo = decode_image(whole)
    at = int(len(whole) * 0.7)
    damaged = whole[:at] + bytes([whole[at] ^ 0x55]) + whole[at + 1:]  # one byte
    assert np.abs(cv2.imdecode(np.frombuffer(damaged, np.uint8), cv2.IMREAD_COLOR).astype(int)
                  - photo).mean() > 10
    with pytest.raises(ImageFileError, match=r"damaged JPEG data \(libjpeg: 12 extraneous bytes "
                                             r"before marker 0xd9\)"):
        decode_image(damaged)
    assert np.array_equal(decode_image(whole[:-2] + bytes(12) + whole[-2:]), photo)
