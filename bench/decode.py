"""What decoding a camera's JPEG costs before the table's check sees it, per frame size.

    PYTHONPATH=. python bench/decode.py [--frames 60] [--quality 90]

Renders the demo's felt with a card at every seat (the 1280x720 view of its played seats, and
all seven seats over a 3072x1728 frame with the cards keeping their 80 px: the views of
``bench/shoe_check.py --size``), JPEG-codes each as a camera's Motion JPEG delivers it, and
decodes it with OpenCV in full colour (what the camera does), and at a half and an eighth of the
size (libjpeg's scaled decoding, which skips most of the inverse DCT and colour work but not the
entropy decoding), one after another in one run. Prints the median and 95th percentile of the
decoding thread's CPU time, and each way's ratio to full colour.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

import cv2
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from machine import cpu_model  # noqa: E402
from shoe_check import VIEWS  # noqa: E402

from dealer_assist.rules import Card, CardTarget  # noqa: E402
from dealer_assist.table.simulation.synthetic_camera import SyntheticFelt, VirtualTable  # noqa: E402
from dealer_assist.table.sources import DEALER_SPOT, FeltCard  # noqa: E402
from dealer_assist.vision.artwork import installed_designs, load_designs  # noqa: E402

#: Each decoding measured: its name and OpenCV's flag.
WAYS = (("full colour", cv2.IMREAD_COLOR), ("half size", cv2.IMREAD_REDUCED_COLOR_2),
        ("an eighth", cv2.IMREAD_REDUCED_COLOR_8))


def dealt_frame(table: VirtualTable, design: str) -> np.ndarray:
    """The felt with one card at each of ``table``'s seats and the dealer's."""
    felt = SyntheticFelt(load_designs([design])[0], table, seed=5)
    codes = ("KH", "7S", "QD", "4C", "AH", "9D", "JS", "2H")
    for code, spot in zip(codes, [CardTarget(s, 0) for s in table.seats] + [DEALER_SPOT],
                          strict=False):
        felt.show(FeltCard(Card.parse(code), spot))
    return felt.render().image


def cpu_ms(jpeg: np.ndarray, flag: int, frames: int) -> list[float]:
    """The decoding thread's CPU time of each of ``frames`` decodings, in ms."""
    cv2.imdecode(jpeg, flag)  # warm
    times = []
    for _ in range(frames):
        started = time.thread_time()
        cv2.imdecode(jpeg, flag)
        times.append(1e3 * (time.thread_time() - started))
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frames", type=int, default=60, help="decodings of each way")
    parser.add_argument("--quality", type=int, default=90, help="the JPEG's quality (1-100)")
    parser.add_argument("--design", default="anglo")
    args = parser.parse_args()
    if not 1 <= args.quality <= 100 or args.frames < 1:
        parser.error("--quality takes 1-100 and --frames at least 1")
    if args.design not in installed_designs():
        parser.error(f"design not installed: {args.design} (scripts/install-card-art.sh)")
    print(f"CPU: {cpu_model()}, os.cpu_count() = {os.cpu_count()}, OpenCV {cv2.__version__}")
    for table in VIEWS.values():
        image = dealt_frame(table, args.design)
        jpeg = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, args.quality])[1]
        size = f"{image.shape[1]}x{image.shape[0]}"
        full = None
        for name, flag in WAYS:
            times = sorted(cpu_ms(jpeg, flag, args.frames))
            median = statistics.median(times)
            full = full or median
            p95 = times[min(len(times) - 1, round(0.95 * (len(times) - 1)))]
            print(f"{size} ({len(jpeg) // 1024} KiB at quality {args.quality}), {name:11s}: "
                  f"{median:.2f} ms (p95 {p95:.2f}), {median / full:.2f} of full colour")


if __name__ == "__main__":
    main()
