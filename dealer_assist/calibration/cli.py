"""``dealer-assist calibrate``: lens, table plane, locate, visual check, drift, printables.

Exit status: 0 done, 1 drift alarm (``drift``), 2 bad input (the message names the file or image),
3 drift cannot be judged: too few markers in view (``drift``).
OpenCV and numpy are imported inside ``run`` so ``dealer-assist --help`` stays fast.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from dealer_assist.cli import number_in

DEFAULT_LAYOUT = (
    Path(__file__).resolve().parents[2] / "calibration" / "layouts" / "standard-7seat.yaml"
)
"""The shipped standard 7-seat layout, in the source checkout (installs are editable)."""


_MM = number_in(float, 0, 10_000, "a length in mm", above=True)
_SQUARE_MM = number_in(float, 0, 500, "a board square's side in mm", above=True)
_DPI = number_in(int, 72, 2400, "a printer resolution in DPI")
_CORNERS = number_in(int, 2, 100, "a count of inner corners")
"""A board of 100 corners across shows squares 13 px wide in a 1280 px frame: more is a typo."""
_POSITION = number_in(float, -100_000, 100_000, "a pixel position")
_PIXELS = number_in(float, 0, 100_000, "a width in pixels", above=True)
_VIEWS = number_in(int, 5, 18, "a count of board views")
"""At least what ``calibrate camera`` needs by default, so the practice set always calibrates;
at most 18, the synthetic poses that keep the whole board in view (later ones leave the frame)."""
_NOISE = number_in(float, 0, 50, "sensor noise in grey levels")
"""Up to 50 the practice set still calibrates, places the table and sees the bump."""


#: ``calibrate table``'s exit status when the table is placed (its file written) but the camera
#: fails the install checks: cards outside 70-95 px wide, or markers not sharp.
INSTALL_CHECKS_FAILED = 4


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Declare the ``calibrate`` subcommands."""
    sub = parser.add_subparsers(dest="action", required=True, metavar="ACTION")

    def board_options(p: argparse.ArgumentParser) -> None:
        p.add_argument("--board", choices=("chessboard", "charuco"), default="chessboard")
        p.add_argument(
            "--cols", type=_CORNERS, default=9, help="inner corners across (ChArUco: squares - 1)"
        )
        p.add_argument(
            "--rows", type=_CORNERS, default=6, help="inner corners down (ChArUco: squares - 1)"
        )
        p.add_argument(
            "--square-mm", type=_SQUARE_MM, default=25.0, help="side of one square, as printed"
        )
        p.add_argument(
            "--marker-mm",
            type=_SQUARE_MM,
            default=None,
            help="ChArUco marker side (default 0.75 square)",
        )
        p.add_argument("--dictionary", default="DICT_5X5_100", help="ChArUco marker dictionary")

    p = sub.add_parser("camera", help="solve the lens from board images")
    p.add_argument("images", nargs="+", type=Path, metavar="IMAGE")
    board_options(p)
    p.add_argument("--min-images", type=number_in(int, 3, 10_000, "a count of images"), default=5)
    p.add_argument(
        "--max-blur-px", type=_PIXELS, default=4.0, help="reject boards with edges wider than this"
    )
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.add_argument("-o", "--output", type=Path, required=True, help="camera file to write (YAML)")

    p = sub.add_parser("board", help="write a printable calibration board (PNG at a DPI)")
    board_options(p)
    p.add_argument("--dpi", type=_DPI, default=300)
    p.add_argument("-o", "--output", type=Path, required=True)

    p = sub.add_parser("table", help="place the table plane from one frame of the layout's markers")
    p.add_argument("image", type=Path)
    p.add_argument("--camera", type=Path, required=True, help="camera file from 'calibrate camera'")
    p.add_argument("--layout", type=Path, default=DEFAULT_LAYOUT)
    p.add_argument(
        "--point",
        action="append",
        default=[],
        metavar="U,V=X,Y",
        help="a hand-measured point (pixel = table mm) instead of markers; give 4 or more",
    )
    p.add_argument("--json", action="store_true")
    p.add_argument("-o", "--output", type=Path, required=True, help="table file to write (YAML)")
    p.add_argument("--placement-only", action="store_true",
                   help="a camera that will not read cards (practice, a second view): the "
                   "install checks (cards 70-95 px wide, sharp markers) warn and exit 0, where "
                   f"they exit {INSTALL_CHECKS_FAILED}")

    p = sub.add_parser("markers", help="write printable sheets of the layout's ArUco markers")
    p.add_argument("--layout", type=Path, default=DEFAULT_LAYOUT)
    p.add_argument("--dpi", type=_DPI, default=300)
    p.add_argument(
        "-o", "--output", type=Path, required=True, help="PNG (pages get -1, -2... if several)"
    )

    p = sub.add_parser("locate", help="which seat and zone an image pixel falls in")
    p.add_argument("table", type=Path)
    p.add_argument("x", type=_POSITION)
    p.add_argument("y", type=_POSITION)
    p.add_argument("--json", action="store_true")

    p = sub.add_parser("check", help="draw the calibrated layout over a frame")
    p.add_argument("image", type=Path)
    p.add_argument("--table", type=Path, required=True)
    p.add_argument("-o", "--output", type=Path, required=True)

    p = sub.add_parser(
        "drift",
        help="has the camera moved since calibration? (exit 1 if so, 3 if it cannot tell)",
        description="Exit status: 0 the camera is still; 1 it moved (a drift alarm in any image);"
        " 3 no alarm, but an image shows fewer than 2 of the calibration's markers, so drift"
        " cannot be judged there (a hand over them, or a camera knocked to face away); 2 bad"
        " input.",
    )
    p.add_argument("images", nargs="+", type=Path, metavar="IMAGE")
    p.add_argument("--table", type=Path, required=True)
    p.add_argument("--threshold-mm", type=_MM, default=3.0)
    p.add_argument("--json", action="store_true")

    p = sub.add_parser(
        "synth", help="render a practice set from a known camera (boards, table frames)"
    )
    p.add_argument("outdir", type=Path)
    p.add_argument("--layout", type=Path, default=DEFAULT_LAYOUT)
    p.add_argument("--views", type=_VIEWS, default=9, help="board images to render (5 to 18)")
    p.add_argument(
        "--noise", type=_NOISE, default=2.0, help="sensor noise, grey levels (sigma, 0 to 50)"
    )


def run(args: argparse.Namespace) -> int:
    """Run one ``calibrate`` action; returns the exit status."""
    from dealer_assist.calibration.errors import CalibrationError

    actions = {
        "camera": _camera,
        "board": _board,
        "table": _table,
        "markers": _markers,
        "locate": _locate,
        "check": _check,
        "drift": _drift,
        "synth": _synth,
    }
    try:
        return actions[args.action](args)
    except CalibrationError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        raise
    except OSError as exc:
        # a failed write (a full disk) names no file: the output being written is the one
        where = exc.filename or getattr(args, "output", None) or ""
        print(f"error: {where}: {exc.strerror or exc}", file=sys.stderr)
        return 2


def _spec(args: argparse.Namespace) -> Any:
    from dealer_assist.calibration.errors import CalibrationError
    from dealer_assist.calibration.lens import CharucoSpec, ChessboardSpec

    if args.board == "chessboard":
        return ChessboardSpec(args.cols, args.rows, args.square_mm)
    marker = args.marker_mm if args.marker_mm is not None else 0.75 * args.square_mm
    if not 0 < marker < args.square_mm:
        raise CalibrationError(
            "--marker-mm",
            f"must be between 0 and the square ({args.square_mm:g} mm), got {marker:g}",
        )
    return CharucoSpec(args.cols, args.rows, args.square_mm, marker, args.dictionary)


def _camera(args: argparse.Namespace) -> int:
    from dealer_assist.calibration.lens import calibrate_lens, read_gray

    spec = _spec(args)
    images = [(str(path), read_gray(path)) for path in args.images]
    result = calibrate_lens(images, spec, args.min_images, args.max_blur_px)
    result.camera.save(args.output)
    if args.json:
        print(json.dumps(result.to_json(), indent=1))
    else:
        K = result.camera.K
        print(
            f"{spec.describe()}: {result.camera.images_used} image(s) used,"
            f" RMS {result.camera.rms_px:.3f} px"
        )
        print(
            f"focal {K[0, 0]:.1f} x {K[1, 1]:.1f} px, centre ({K[0, 2]:.1f}, {K[1, 2]:.1f}),"
            f" distortion {' '.join(f'{v:+.4f}' for v in result.camera.dist)}"
        )
        for name, err in result.per_image_rms_px:
            print(f"  {name}: {err:.3f} px")
        print(f"frame coverage {result.coverage:.0%}; wrote {args.output}")
    for rejection in result.rejected:
        print(f"skipped {rejection.image}: {rejection.reason}", file=sys.stderr)
    for warning in result.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    return 0


def _board(args: argparse.Namespace) -> int:
    from dealer_assist.calibration.printables import printable_board, write_png

    spec = _spec(args)
    write_png(args.output, printable_board(spec, args.dpi), args.dpi)
    print(f"wrote {args.output}: {spec.describe()}, print at {args.dpi} DPI and 100% scale")
    return 0


def _table(args: argparse.Namespace) -> int:
    from dealer_assist.calibration.layout import Layout
    from dealer_assist.calibration.lens import CameraModel, read_color
    from dealer_assist.calibration.table import (
        READABLE_CARD_WIDTH_PX,
        READABLE_EDGE_WIDTH_PX,
        PointPair,
        fit_table,
    )

    camera = CameraModel.load(args.camera)
    layout = Layout.load(args.layout)
    points = [PointPair.parse(text) for text in args.point]
    fit = fit_table(read_color(args.image), str(args.image), camera, layout, points)
    calibration = fit.calibration
    calibration.save(args.output)
    eye = calibration.camera_position_mm
    widths = calibration.card_widths_px()
    if args.json:
        print(
            json.dumps(
                {
                    "residual_mm": calibration.residual_mm,
                    "residuals_mm": dict(fit.residuals_mm),
                    "markers_seen": sorted(calibration.reference_markers),
                    "camera_position_mm": list(eye),
                    "tilt_deg": calibration.tilt_deg,
                    "card_widths_px": {k: round(v, 1) for k, v in widths.items()},
                    "marker_edge_width_px": None if fit.marker_edge_width_px is None
                    else round(fit.marker_edge_width_px, 2),
                    "warnings": list(fit.warnings),
                    "install_checks": "failed" if fit.install_failures else "passed",
                },
                indent=1,
            )
        )
    else:
        print(
            f"{layout.name} placed from {calibration.method}: RMS {calibration.residual_mm:.2f} mm;"
            f" camera {-eye[2]:.0f} mm above the felt at ({eye[0]:.0f}, {eye[1]:.0f}) mm,"
            f" tilted {calibration.tilt_deg:.1f} deg"
        )
        for label, residual in fit.residuals_mm:
            print(f"  {label}: {residual:.2f} mm")
        if widths:
            least, most = READABLE_CARD_WIDTH_PX
            narrowest = min(widths, key=widths.__getitem__)
            print(
                f"a card looks {min(widths.values()):.0f}-{max(widths.values()):.0f} px wide in"
                f" the card areas (narrowest: {narrowest}); the camera reads cards"
                f" {least:.0f}-{most:.0f} px wide"
            )
        if fit.marker_edge_width_px is not None:
            print(
                f"the markers' edges measure {fit.marker_edge_width_px:.1f} px (sharpness; the"
                f" camera reads cards well up to {READABLE_EDGE_WIDTH_PX:g} px)"
            )
        print(f"wrote {args.output}")
    for warning in fit.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    if fit.install_failures and not args.placement_only:
        print(f"error: {args.image}: the camera fails the install checks (above): {args.output}"
              " is written and places the table, but the table would miss cards; fix the camera"
              " and calibrate again, or give --placement-only for a camera that will not read"
              " cards", file=sys.stderr)
        return INSTALL_CHECKS_FAILED
    return 0


def _markers(args: argparse.Namespace) -> int:
    from dealer_assist.calibration.layout import Layout
    from dealer_assist.calibration.printables import marker_sheets, write_png

    layout = Layout.load(args.layout)
    pages = marker_sheets(layout, args.dpi)
    output: Path = args.output
    names = (
        [output]
        if len(pages) == 1
        else [output.with_name(f"{output.stem}-{k + 1}{output.suffix}") for k in range(len(pages))]
    )
    for name, page in zip(names, pages, strict=True):
        write_png(name, page, args.dpi)
    print(
        f"wrote {', '.join(map(str, names))}: {len(layout.markers)} markers,"
        f" print at {args.dpi} DPI and 100% scale"
    )
    return 0


def _locate(args: argparse.Namespace) -> int:
    from dealer_assist.calibration.table import TableCalibration

    location = TableCalibration.load(args.table).locate(args.x, args.y)
    if args.json:
        print(json.dumps(location.to_json()))
    else:
        where = (
            "no zone"
            if location.zone is None
            else (
                f"dealer {location.zone}"
                if location.seat is None
                else f"seat {location.seat} {location.zone}"
            )
        )
        print(f"({location.table_mm[0]:.1f}, {location.table_mm[1]:.1f}) mm: {where}")
    return 0


def _check(args: argparse.Namespace) -> int:
    from dealer_assist.calibration.drift import check_drift
    from dealer_assist.calibration.focus import check_focus
    from dealer_assist.calibration.lens import read_color
    from dealer_assist.calibration.overlay import draw_overlay
    from dealer_assist.calibration.printables import write_png
    from dealer_assist.calibration.table import TableCalibration, detect_markers

    calibration = TableCalibration.load(args.table)
    frame = read_color(args.image)
    seen = detect_markers(frame, calibration.layout.aruco_dictionary)
    drift = check_drift(calibration, frame, name=str(args.image), markers=seen)
    write_png(args.output, draw_overlay(frame, calibration, seen, drift))
    missing = [m.marker_id for m in calibration.layout.markers if m.marker_id not in seen]
    print(
        f"wrote {args.output}; markers seen {sorted(seen)}"
        + (f", missing {missing}" if missing else "")
        + f"; {drift.message}; {check_focus(calibration, frame, markers=seen).message}"
    )
    return 0


def _drift(args: argparse.Namespace) -> int:
    from dealer_assist.calibration.drift import DriftMonitor
    from dealer_assist.calibration.focus import check_focus
    from dealer_assist.calibration.lens import read_color
    from dealer_assist.calibration.table import TableCalibration, detect_markers

    calibration = TableCalibration.load(args.table)
    monitor = DriftMonitor(calibration, args.threshold_mm, confirm_frames=1)
    alarmed = unjudged = False
    for path in args.images:
        frame = read_color(path)
        seen = detect_markers(frame, calibration.layout.aruco_dictionary)
        report = monitor.check(frame, str(path), markers=seen)
        focus = check_focus(calibration, frame, markers=seen)
        alarmed |= report.alarm
        unjudged |= report.moved_mm is None
        if args.json:
            print(json.dumps({"image": str(path), **report.to_json(), "focus": focus.to_json()}))
        else:
            print(f"{path}: {'ALARM ' if report.alarm else ''}{report.message}; {focus.message}")
    # a camera knocked to face away shows no marker: not a pass for a script testing the status
    return 1 if alarmed else 3 if unjudged else 0


def _synth(args: argparse.Namespace) -> int:
    from dealer_assist.calibration.synthetic import write_practice_set

    truth = write_practice_set(args.outdir, args.layout, args.views, args.noise)
    print(json.dumps(truth, indent=1))
    return 0
