"""``dealer-assist calibrate`` end to end on files, as a technician runs it, plus the printables."""

from __future__ import annotations

import json
import os
import re
import struct
from pathlib import Path

import cv2
import numpy as np
import pytest
import yaml

from dealer_assist.calibration.lens import read_color, read_gray
from dealer_assist.calibration.table import TableCalibration
from dealer_assist.cli import main


@pytest.fixture(scope="module")
def practice(tmp_path_factory: pytest.TempPathFactory, layout_path: Path) -> Path:
    """A synthetic practice set, calibrated through the CLI: camera.yaml and table.yaml made."""
    folder = tmp_path_factory.mktemp("practice")
    assert (
        main(["calibrate", "synth", str(folder), "--layout", str(layout_path), "--views", "7"]) == 0
    )
    boards = sorted(str(p) for p in folder.glob("board-*.png"))
    assert main(["calibrate", "camera", *boards, "-o", str(folder / "camera.yaml")]) == 0
    assert (
        main(
            [
                "calibrate",
                "table",
                str(folder / "table.png"),
                "--camera",
                str(folder / "camera.yaml"),
                "--layout",
                str(layout_path),
                "-o",
                str(folder / "table.yaml"),
                "--placement-only",  # its cards are 32-38 px wide
            ]
        )
        == 0
    )
    return folder


def test_camera_json_matches_the_true_lens(
    practice: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    truth = json.loads((practice / "truth.json").read_text())
    boards = sorted(str(p) for p in practice.glob("board-*.png"))
    out = practice / "camera-json.yaml"
    assert main(["calibrate", "camera", *boards, "--json", "-o", str(out)]) == 0
    result = json.loads(capsys.readouterr().out)
    assert set(result) >= {"K", "dist", "rms", "images_used"}
    assert result["images_used"] == 7 and len(result["dist"]) == 5 and result["rms"] < 0.3
    assert result["K"][0][0] == pytest.approx(truth["K"][0][0], rel=0.005)
    assert result["K"][0][2] == pytest.approx(truth["K"][0][2], abs=2)
    assert result["K"][1][2] == pytest.approx(truth["K"][1][2], abs=2)
    assert out.is_file()


def test_a_copied_board_image_is_skipped_naming_the_image_it_repeats(
    practice: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A copy of a shot is one view, not two: it is not counted, and the technician is told."""
    boards = sorted(practice.glob("board-*.png"))
    copy = tmp_path / "board-01-again.png"
    copy.write_bytes(boards[0].read_bytes())
    out = tmp_path / "camera.yaml"
    assert main(["calibrate", "camera", *map(str, boards), str(copy), "-o", str(out)]) == 0
    captured = capsys.readouterr()
    assert "7 image(s) used" in captured.out
    assert f"skipped {copy}: the board did not move since {boards[0]}: its corners" in captured.err


def test_table_reports_how_wide_cards_look_and_how_sharp_the_frame_is(
    practice: Path, layout_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The technician sees each card area's card width in pixels, and a warning when the camera
    shows cards smaller than it reads well (the practice camera does), and how sharp the frame
    is (the practice frame is sharp)."""
    written = practice / "table-again.yaml"
    args = ["calibrate", "table", str(practice / "table.png"), "--camera",
            str(practice / "camera.yaml"), "--layout", str(layout_path), "-o", str(written)]
    assert main(args) == 4  # the install checks fail: the table is placed, the exit says so
    out, err = capsys.readouterr()
    assert "a card looks 32-38 px wide in the card areas (narrowest: seat 4)" in out
    assert "warning: " in err and "seat 4 card area looks 32 px wide" in err
    assert f"error: {practice / 'table.png'}: the camera fails the install checks" in err
    assert re.search(r"the markers' edges measure 2\.\d px \(sharpness; the camera reads cards"
                     r" well up to 2\.6 px\)", out)
    assert TableCalibration.load(written).method == "aruco"
    assert main([*args, "--placement-only"]) == 0  # a camera that will not read cards
    assert "error: " not in capsys.readouterr().err
    assert main([*args, "--json"]) == 4
    result = json.loads(capsys.readouterr().out)
    assert result["install_checks"] == "failed"
    assert 1.8 < result["marker_edge_width_px"] < 2.3
    widths = result["card_widths_px"]
    assert sorted(widths) == ["dealer"] + [f"seat {n}" for n in range(1, 8)]
    assert 31 < widths["seat 4"] < 33 and all(w < 70 for w in widths.values())


def test_locate_prints_seat_and_zone(practice: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from dealer_assist.calibration.table import TableCalibration

    calibration = TableCalibration.load(practice / "table.yaml")
    x, y = calibration.table_to_image(*calibration.layout.zone(3, "cards").shape.centroid)
    assert (
        main(
            ["calibrate", "locate", str(practice / "table.yaml"), f"{x:.1f}", f"{y:.1f}", "--json"]
        )
        == 0
    )
    result = json.loads(capsys.readouterr().out)
    assert result["seat"] == 3 and result["zone"] == "cards"
    x, y = calibration.table_to_image(0.0, 300.0)
    assert main(["calibrate", "locate", str(practice / "table.yaml"), str(x), str(y)]) == 0
    assert capsys.readouterr().out.endswith("mm: dealer cards\n")


def test_check_draws_the_overlay(practice: Path, capsys: pytest.CaptureFixture[str]) -> None:
    overlay = practice / "overlay.png"
    assert (
        main(
            [
                "calibrate",
                "check",
                str(practice / "table.png"),
                "--table",
                str(practice / "table.yaml"),
                "-o",
                str(overlay),
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    assert "markers seen [0, 1, 2, 3, 4, 5]; camera still" in out
    assert "; frame sharp: the markers' edges measure 2." in out
    frame = read_color(practice / "table.png")
    drawn = read_color(overlay)
    assert drawn.shape == frame.shape
    changed = np.any(drawn != frame, axis=2)
    assert 0.02 < changed.mean() < 0.3  # lines and labels, not a repainted frame


def test_drift_exit_status(practice: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Exit 1 on a drift alarm; each frame's focus is reported beside its drift, never an
    alarm of this command's (the practice frames are sharp)."""
    table = str(practice / "table.yaml")
    assert main(["calibrate", "drift", str(practice / "table-still.png"), "--table", table]) == 0
    out = capsys.readouterr().out
    assert "camera still" in out and "; frame sharp: the markers' edges measure 2." in out
    assert (
        main(["calibrate", "drift", str(practice / "table-bumped.png"), "--table", table, "--json"])
        == 1
    )
    report = json.loads(capsys.readouterr().out.splitlines()[-1])
    assert report["alarm"] is True and report["moved_mm"] > 3
    assert report["focus"]["soft"] is False and 1.8 < report["focus"]["edge_width_px"] < 2.3


def test_drift_that_cannot_be_judged_exits_3(
    practice: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A camera knocked to face away sees no marker: that exited 0, as a still camera does."""
    away = tmp_path / "away.png"
    cv2.imwrite(str(away), np.full((720, 1280, 3), (40, 110, 48), np.uint8))
    table = str(practice / "table.yaml")
    assert main(["calibrate", "drift", str(away), "--table", table]) == 3
    assert capsys.readouterr().out.startswith(f"{away}: cannot judge drift: 0 of 6 baseline")
    still, bumped = str(practice / "table-still.png"), str(practice / "table-bumped.png")
    assert main(["calibrate", "drift", still, str(away), "--table", table]) == 3
    assert main(["calibrate", "drift", str(away), bumped, "--table", table]) == 1  # the alarm


def test_bad_inputs_exit_2_naming_the_file(
    practice: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    blank = tmp_path / "wall.png"
    cv2.imwrite(str(blank), np.full((720, 1280), 128, np.uint8))
    boards = sorted(str(p) for p in practice.glob("board-*.png"))[:2]
    assert main(["calibrate", "camera", *boards, str(blank), "-o", str(tmp_path / "c.yaml")]) == 2
    err = capsys.readouterr().err
    assert (
        "only 2 usable board image(s), need at least 5" in err and f"{blank}: no chessboard" in err
    )
    assert (
        main(
            [
                "calibrate",
                "table",
                str(blank),
                "--camera",
                str(practice / "camera.yaml"),
                "-o",
                str(tmp_path / "t.yaml"),
            ]
        )
        == 2
    )
    assert f"error: {blank}: found 0 of layout standard-7seat's 6" in capsys.readouterr().err
    assert main(["calibrate", "locate", str(tmp_path / "none.yaml"), "1", "2"]) == 2
    assert "none.yaml: cannot read" in capsys.readouterr().err


def test_an_image_claiming_too_many_pixels_exits_2_like_a_missing_one(
    practice: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A 74-byte PNG claiming 60000x60000 ended the command with OpenCV's traceback."""
    huge = tmp_path / "huge.png"
    small = cv2.imencode(".png", np.zeros((2, 2), np.uint8))[1].tobytes()
    huge.write_bytes(small[:16] + struct.pack(">II", 60000, 60000) + small[24:])
    table = str(practice / "table.yaml")
    for image in (huge, tmp_path / "missing.png"):
        assert main(["calibrate", "drift", str(image), str(practice / "table-still.png"),
                     "--table", table]) == 2
        captured = capsys.readouterr()
        assert captured.out == "" and captured.err.startswith(f"error: {image}: ")
    assert main(["calibrate", "check", str(huge), "--table", table, "-o",
                 str(tmp_path / "o.png")]) == 2
    assert capsys.readouterr().err == (
        f"error: {huge}: image is 60000x60000, larger than 100,000,000 pixels (an 8K camera frame"
        " is 33,177,600); not decoded\n")


def test_a_table_file_with_an_impossible_pose_exits_2_instead_of_answering(
    practice: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A rotation of 1e300 rad loaded, and then every pixel was "no zone", exit 0."""
    data = yaml.safe_load((practice / "table.yaml").read_text())
    data["pose"]["rvec"] = [1e300, 0, 0]
    table = tmp_path / "table.yaml"
    table.write_text(yaml.safe_dump(data))
    assert main(["calibrate", "locate", str(table), "640", "400"]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err == (
        f"error: {table}: pose.rvec must turn at most 12.6 rad (two turns), got 1e+300: "
        "calibrate the table again\n")


def _png_dpi(path: Path) -> float:
    data = path.read_bytes()
    at = data.index(b"pHYs")
    per_metre = struct.unpack(">I", data[at + 4 : at + 8])[0]
    return per_metre * 0.0254


def test_printable_chessboard_is_true_size_and_detectable(tmp_path: Path) -> None:
    out = tmp_path / "board.png"
    assert (
        main(
            [
                "calibrate",
                "board",
                "--cols",
                "9",
                "--rows",
                "6",
                "--square-mm",
                "25",
                "--dpi",
                "150",
                "-o",
                str(out),
            ]
        )
        == 0
    )
    assert _png_dpi(out) == pytest.approx(150, abs=0.1)
    image = read_gray(out)
    found, corners = cv2.findChessboardCornersSB(image, (9, 6))
    assert found
    spacing_px = np.linalg.norm(corners[1, 0] - corners[0, 0])
    assert spacing_px == pytest.approx(25 * 150 / 25.4, rel=0.01)


def test_printable_charuco_board_is_detectable(tmp_path: Path) -> None:
    from dealer_assist.calibration.lens import CharucoSpec, find_board

    out = tmp_path / "charuco.png"
    assert (
        main(
            [
                "calibrate",
                "board",
                "--board",
                "charuco",
                "--square-mm",
                "30",
                "--dpi",
                "100",
                "-o",
                str(out),
            ]
        )
        == 0
    )
    view = find_board(read_gray(out), CharucoSpec(9, 6, 30.0, 22.5), str(out))
    assert len(view.image_points) == 54


def test_marker_sheet_has_every_marker_at_true_size(tmp_path: Path, layout_path: Path) -> None:
    from dealer_assist.calibration.table import detect_markers

    out = tmp_path / "markers.png"
    assert (
        main(["calibrate", "markers", "--layout", str(layout_path), "--dpi", "150", "-o", str(out)])
        == 0
    )
    pages = sorted(tmp_path.glob("markers*.png"))
    found: dict[int, np.ndarray] = {}
    for page in pages:
        assert _png_dpi(page) == pytest.approx(150, abs=0.1)
        found.update(detect_markers(read_color(page), "DICT_4X4_50"))
    assert sorted(found) == [0, 1, 2, 3, 4, 5]
    for corners in found.values():
        side_px = np.linalg.norm(corners[1] - corners[0])
        assert side_px == pytest.approx(80 * 150 / 25.4, rel=0.01)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--dictionary", "DICT_NOPE"], "DICT_NOPE: not an OpenCV ArUco dictionary"),
        (["--dictionary", "DICT_4X4_50", "--cols", "11", "--rows", "9"], "holds 50 markers"),
        (["--marker-mm", "30"], "--marker-mm: must be between 0 and the square (25 mm), got 30"),
    ],
)
def test_bad_charuco_options_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], options: list[str], message: str
) -> None:
    out = tmp_path / "b.png"
    assert main(["calibrate", "board", "--board", "charuco", *options, "-o", str(out)]) == 2
    assert message in capsys.readouterr().err
    assert not out.exists()


@pytest.mark.parametrize(("options", "pixels"), [
    (["--cols", "100", "--rows", "100"], "30385x30668"),
    (["--square-mm", "500", "--dpi", "2400"], "566928x427464"),
])
def test_a_board_of_more_pixels_than_an_image_may_have_is_refused_before_drawing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], options: list[str], pixels: str
) -> None:
    out = tmp_path / "b.png"
    assert main(["calibrate", "board", *options, "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert f" would be {pixels} pixels, more than 100,000,000: use fewer or smaller squares, or" \
        " a lower --dpi" in err and err.startswith("error: board options: chessboard ")
    assert not out.exists()


def test_markers_larger_than_a_page_are_refused_naming_the_layout(
    tmp_path: Path, layout_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A 150 mm marker was printed cut off by the page's edge, one to a page."""
    data = yaml.safe_load(layout_path.read_text())
    data["markers"]["placed"][4]["size_mm"] = 150
    layout = tmp_path / "big-markers.yaml"
    layout.write_text(yaml.safe_dump(data))
    out = tmp_path / "markers.png"
    assert main(["calibrate", "markers", "--layout", str(layout), "-o", str(out)]) == 2
    assert capsys.readouterr().err == (
        f"error: {layout}: marker 4 is 150 mm: with its white margin and label it needs 231 mm,"
        " more than the 190 mm a 210x297 mm page holds; print it another way\n")
    assert list(tmp_path.glob("markers*.png")) == []


def test_marker_sheets_blend_each_marker_where_it_lies_not_over_the_page(
    layout_path: Path
) -> None:
    """Every marker was blended over the whole page in floating point: `calibrate markers`
    took 4 GB at 1200 DPI, and --dpi allows 2400. Now the pages' own bytes and a little more."""
    import tracemalloc

    from dealer_assist.calibration.layout import Layout
    from dealer_assist.calibration.printables import marker_sheets

    tracemalloc.start()
    try:
        pages = marker_sheets(Layout.load(layout_path), 300)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 2 * sum(page.nbytes for page in pages)


def test_an_image_whose_name_is_not_utf8_is_read(practice: Path, tmp_path: Path) -> None:
    """OpenCV crashed the process opening such a name; the image is decoded from its bytes."""
    odd = os.fsencode(tmp_path) + b"/table\xfe.png"
    with open(odd, "wb") as handle:
        handle.write((practice / "table.png").read_bytes())
    assert np.array_equal(read_color(os.fsdecode(odd)), read_color(practice / "table.png"))


DPI_RANGE = "argument --dpi: a printer resolution in DPI must be from 72 to 2400"
SQUARE_RANGE = "argument --square-mm: a board square's side in mm must be above 0 and at most 500"
CORNERS_RANGE = "argument --cols: a count of inner corners must be from 2 to 100"


@pytest.mark.parametrize(("argv", "message"), [
    (["board", "--dpi", "0"], f"{DPI_RANGE}, got 0"),
    (["board", "--dpi", "-300"], f"{DPI_RANGE}, got -300"),
    (["board", "--square-mm", "nan"], f"{SQUARE_RANGE}, got nan"),
    (["board", "--square-mm", "1e9"], f"{SQUARE_RANGE}, got 1e9"),
    (["board", "--cols", "1"], f"{CORNERS_RANGE}, got 1"),
    (["board", "--board", "charuco", "--rows", "1"],
     "argument --rows: a count of inner corners must be from 2 to 100, got 1"),
    # a 500x500 board grew to 24 GB and was killed; 3000 across gave OpenCV's memory error
    (["board", "--cols", "500", "--rows", "500"], f"{CORNERS_RANGE}, got 500"),
    (["camera", "x.png", "--cols", "3000"], f"{CORNERS_RANGE}, got 3000"),
    (["camera", "x.png", "--min-images", "0"],
     "argument --min-images: a count of images must be from 3 to 10000, got 0"),
    (["camera", "x.png", "--max-blur-px", "nan"],
     "argument --max-blur-px: a width in pixels must be above 0 and at most 100000, got nan"),
    (["drift", "x.png", "--table", "t.yaml", "--threshold-mm", "nan"],
     "argument --threshold-mm: a length in mm must be above 0 and at most 10000, got nan"),
    (["locate", "t.yaml", "nan", "1"],
     "argument x: a pixel position must be from -100000 to 100000, got nan"),
])
def test_numbers_out_of_range_are_refused_by_their_option(
    argv: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A technician's typo (0 DPI wrote a 5-pixel board; nan never raised a drift alarm)."""
    with pytest.raises(SystemExit) as refused:
        main(["calibrate", *argv, "-o", str(tmp_path / "out.png")] if argv[0] in (
            "board", "camera") else ["calibrate", *argv])
    assert refused.value.code == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "out.png").exists()


VIEWS_RANGE = "argument --views: a count of board views must be from 5 to 18"
NOISE_RANGE = "argument --noise: sensor noise in grey levels must be from 0 to 50"


@pytest.mark.parametrize(("option", "message"), [
    (["--views", "0"], f"{VIEWS_RANGE}, got 0"),
    (["--views", "-1"], f"{VIEWS_RANGE}, got -1"),
    (["--views", "4"], f"{VIEWS_RANGE}, got 4"),
    (["--noise", "nan"], f"{NOISE_RANGE}, got nan"),
    (["--noise", "-5"], f"{NOISE_RANGE}, got -5"),
    (["--noise", "1e308"], f"{NOISE_RANGE}, got 1e308"),
])
def test_a_practice_set_calibrate_camera_cannot_use_is_refused_by_its_option(
    option: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """--views 0 wrote no boards and --noise -5 no noise, 1e308 nothing but salt and pepper;
    all exited 0. The set is promised to calibrate, so fewer views than it needs are refused."""
    out = tmp_path / "practice"
    with pytest.raises(SystemExit) as refused:
        main(["calibrate", "synth", str(out), *option])
    assert refused.value.code == 2
    assert message in capsys.readouterr().err
    assert not out.exists()


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs Linux's /dev/full")
def test_a_full_disk_while_writing_names_the_output(capsys: pytest.CaptureFixture[str]) -> None:
    """/dev/full is a real device whose every write fails with 'No space left on device'."""
    assert main(["calibrate", "board", "-o", "/dev/full"]) == 2
    assert "error: /dev/full: No space left on device" in capsys.readouterr().err
