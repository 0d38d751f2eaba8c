"""``dealer-assist detect PATH...``: the cards in images, or card events in a video file."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from dealer_assist.vision.options import SCALE

if TYPE_CHECKING:
    from dealer_assist.vision.detector import CardDetector

VIDEO_SUFFIXES = {".mp4", ".avi", ".mkv", ".mov", ".m4v", ".webm", ".mjpeg", ".mjpg"}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("paths", nargs="+", metavar="PATH",
                        help="images (PNG or JPEG, at most 100,000,000 pixels; any other "
                        "format is refused undecoded) or video files (" +
                        ", ".join(sorted(VIDEO_SUFFIXES)) + ")")
    parser.add_argument("--json", action="store_true",
                        help="one JSON object a line: per image its cards, per video its events")
    parser.add_argument("--model", type=Path, default=None,
                        help="ONNX model (default: models/cards.int8.onnx)")
    parser.add_argument("--reader", type=Path, default=None,
                        help="ONNX index reader (default: models/index-reader.int8.onnx)")
    parser.add_argument("--scale", type=SCALE, default=1.0,
                        help="resize frames by this before inference, 0.25 to 4 (default 1.0; "
                        "0.75 faster)")
    parser.add_argument("--confidence", type=float, default=None,
                        help="least reading confidence of a corner index (default: the "
                        "detector's, 0.7: the mean of its four readings)")
    parser.add_argument("--stable-frames", type=int, default=3,
                        help="video: frames a card must be seen before it is an event (default 3)")
    parser.add_argument("--grace-frames", type=int, default=45,
                        help="video: frames a card may be hidden before it is removed (default 45)")


def run(args: argparse.Namespace) -> int:
    from dealer_assist.image_files import ImageFileError, read_image
    from dealer_assist.vision.detector import (
        DEFAULT_CONFIDENCE,
        DEFAULT_MODEL,
        DEFAULT_READER,
        CardDetector,
        ModelError,
    )

    confidence = DEFAULT_CONFIDENCE if args.confidence is None else args.confidence
    for wrong, option, rule in (
        (not 0 < confidence <= 1, "--confidence", "a fraction above 0, at most 1 (0.7, not 70)"),
        (args.stable_frames < 1, "--stable-frames", "at least 1"),
        (args.grace_frames < 0, "--grace-frames", "at least 0"),
    ):
        if wrong:
            print(f"dealer-assist detect: {option} must be {rule}", file=sys.stderr)
            return 2
    try:
        detector = CardDetector(args.model or DEFAULT_MODEL, args.reader or DEFAULT_READER,
                                scale=args.scale, confidence=confidence)
    except ModelError as exc:
        print(f"dealer-assist detect: {exc}", file=sys.stderr)
        return 2
    status = 0
    for name in args.paths:
        path = Path(name)
        try:
            name.encode("utf-8")
        except UnicodeEncodeError:  # cannot be printed, and OpenCV crashes opening such a video
            print(f"dealer-assist detect: {name!r}: the file name is not UTF-8 text; rename the "
                  "file", file=sys.stderr)
            status = 1
            continue
        if path.is_dir():
            print(f"dealer-assist detect: {name}: a directory, not an image or video file",
                  file=sys.stderr)
            status = 1
            continue
        if not path.is_file():
            print(f"dealer-assist detect: no such file: {name}", file=sys.stderr)
            status = 1
            continue
        if path.suffix.lower() in VIDEO_SUFFIXES:
            status = max(status, _video(detector, name, args))
            continue
        try:
            frame = read_image(path)
        except ImageFileError as error:
            print(f"dealer-assist detect: {error}", file=sys.stderr)
            status = 1
            continue
        cards = detector.detect(frame)
        if args.json:
            print(json.dumps({"image": name, "cards": [c.to_json() for c in cards]}), flush=True)
        else:
            listing = ", ".join(
                f"{c.card}{' sideways' if c.sideways else ''} at ({c.x:.0f}, {c.y:.0f}) "
                f"{c.confidence:.2f}" for c in cards)
            print(f"{name}: {len(cards)} card{'s' if len(cards) != 1 else ''}"
                  f"{': ' + listing if cards else ''}", flush=True)
    return status


def _video(detector: CardDetector, name: str, args: argparse.Namespace) -> int:
    """Print the card events of a video; 1 (with a line on stderr) when its frames are too
    large to read, when fewer frames decode than the file reports (cut short or damaged), or
    when a Motion JPEG frame's data is damaged (that frame is named and skipped)."""
    import cv2

    from dealer_assist.image_files import ImageFileError, check_pixels, decode_image
    from dealer_assist.vision.tracker import CardTracker

    capture = cv2.VideoCapture(name)
    if not capture.isOpened():
        print(f"dealer-assist detect: not a readable video: {name}", file=sys.stderr)
        return 1
    try:
        check_pixels(int(capture.get(cv2.CAP_PROP_FRAME_WIDTH)),
                     int(capture.get(cv2.CAP_PROP_FRAME_HEIGHT)), Path(name), "a video frame")
    except ImageFileError as error:
        capture.release()
        print(f"dealer-assist detect: {error}", file=sys.stderr)
        return 1
    reported = int(capture.get(cv2.CAP_PROP_FRAME_COUNT))
    # each Motion JPEG frame is a JPEG file: read undecoded and decoded as an image file is,
    # damaged data is found (FFmpeg's decoder draws it garbled, saying so only on stderr)
    packets = int(capture.get(cv2.CAP_PROP_FOURCC)) == cv2.VideoWriter.fourcc(*"MJPG") and \
        capture.set(cv2.CAP_PROP_FORMAT, -1)
    tracker = CardTracker(stable_frames=args.stable_frames, grace_frames=args.grace_frames)
    frame_number = -1
    damaged = False
    try:
        while True:
            ok, frame = capture.read()
            if not ok:
                break
            frame_number += 1
            if packets:
                packet = frame.tobytes()
                try:  # from its start marker, as FFmpeg's decoder reads a packet
                    frame = decode_image(packet[max(0, packet.find(b"\xff\xd8")):])
                except ImageFileError as error:
                    print(f"dealer-assist detect: {name}: frame {frame_number} skipped: {error}",
                          file=sys.stderr)
                    damaged = True
                    continue
            for event in tracker.update(frame_number, detector.detect(frame)):
                if args.json:
                    print(json.dumps({"video": name, **event.to_json()}), flush=True)
                else:
                    extra = f" (was {event.previous})" if event.previous else ""
                    print(f"{name} frame {event.frame}: {event.kind.value} {event.card}{extra} "
                          f"at ({event.x:.0f}, {event.y:.0f})", flush=True)
    finally:
        capture.release()
    if frame_number < 0:
        print(f"dealer-assist detect: no frames could be read from video: {name}",
              file=sys.stderr)
        return 1
    if frame_number + 1 < reported:
        print(f"dealer-assist detect: {name}: read {frame_number + 1} of the {reported} frames "
              f"it reports, stopped after frame {frame_number} (cut short or damaged)",
              file=sys.stderr)
        return 1
    return 1 if damaged else 0
