"""The camera source's feed handling with real OpenCV capture of a real video file: frames are
read and processed, and when they stop the feed is reported lost (the loop's CAMERA FEED LOST).

The detector stage returns no cards here (a test double: the model is not in this build) and the
drift verdicts are given (the calibration's drift check needs frames of its markers); the feed and
drift handling under test do not depend on what is read."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

from dealer_assist.table.camera_source import CameraSource, CameraStages, ViewCheck
from dealer_assist.table.felt import FeltTracker
from dealer_assist.table.live_camera import Capture
from dealer_assist.table.sources import CameraFocus, CameraLink, CameraMoved

cv2 = pytest.importorskip("cv2")


def write_video(path, frames: int) -> None:
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"MJPG"), 10, (320, 240))
    for index in range(frames):
        frame = np.full((240, 320, 3), 40 + index * 10, np.uint8)
        writer.write(frame)
    writer.release()


def run_source(stages: CameraStages, until, lost_after_s: float = 0.3) -> tuple[list, CameraSource]:
    seen: list = []
    done = threading.Event()

    def sink(item) -> None:
        seen.append(item)
        if until(seen):
            done.set()

    source = CameraSource(
        stages,
        FeltTracker(lambda x, y: None),
        description="test video",
        lost_after_s=lost_after_s,
        check_view_every_s=0.0,
    )
    source.start(sink)
    assert done.wait(10), seen
    source.stop()
    return seen, source


def test_video_file_is_read_then_the_feed_is_reported_lost(tmp_path):
    path = tmp_path / "table.avi"
    write_video(path, 12)
    capture = Capture(str(path))
    stages = CameraStages(
        grab=capture.grab,
        detect=lambda frame: [],
        track=lambda number, cards: [],
        to_table=lambda x, y: (x, y),
        close=capture.close,
    )
    seen, source = run_source(
        stages, lambda items: any(isinstance(i, CameraLink) and not i.up for i in items)
    )
    assert isinstance(seen[0], CameraLink) and seen[0].up
    assert isinstance(seen[-1], CameraLink) and not seen[-1].up
    assert "test video: no frame for 0.3 s" in seen[-1].detail
    assert source.frames_processed == 12


def test_missing_device_is_reported_lost_and_retried(tmp_path):
    capture = Capture(str(tmp_path / "no-such-stream.avi"), reopen_every_s=0.05)
    stages = CameraStages(
        grab=capture.grab,
        detect=lambda frame: [],
        track=lambda number, cards: [],
        to_table=lambda x, y: (x, y),
    )
    seen, source = run_source(stages, lambda items: bool(items), lost_after_s=0.2)
    assert seen == [CameraLink(False, "test video: no frame for 0.2 s")]
    assert source.frames_processed == 0


def test_a_missing_camera_warns_once_not_at_every_retry(capfd):
    """OpenCV warns on stderr at each open that fails: a camera left unplugged all shift must
    not fill the table's log with a pair of lines a second."""
    capture = Capture(99, reopen_every_s=0)  # no /dev/video99 on this machine or at a table
    for _ in range(5):
        assert capture.grab() is None
    warnings = [line for line in capfd.readouterr().err.splitlines() if "WARN" in line]
    assert warnings and len(warnings) <= 2  # the first open's own (V4L2, FFmpeg), then none


class Glitch(Exception):
    """Not one of the errors a grab is expected to raise (as cv2.error is not)."""


@pytest.mark.parametrize(("error", "reason"), [
    # a grab refusing frames of another size than calibrated
    (ValueError("image is 640x360 but the camera was calibrated at 1280x720"),
     "image is 640x360 but the camera was calibrated at 1280x720"),
    # whatever else a grab raises: named by its type, its text on one line
    (Glitch("driver\n  fault"), "Glitch: driver fault"),
])
def test_a_grab_that_raises_is_reported_lost_with_the_reason_and_tried_again(error, reason):
    """A grab that raises gives no frame to the detector, the feed-lost report carries its
    reason, the thread lives on, and the first frame that comes clears it."""
    answers = iter([error] * 8)

    def grab():
        answer = next(answers, None)
        if answer is None:
            return np.zeros((4, 4, 3), np.uint8)
        raise answer

    stages = CameraStages(grab=grab, detect=lambda frame: [], track=lambda number, cards: [],
                          to_table=lambda x, y: (x, y))
    seen, _ = run_source(stages, lambda items: len(items) >= 2, lost_after_s=0.2)
    assert seen[:2] == [CameraLink(False, f"test video: no frame for 0.2 s ({reason})"),
                        CameraLink(True, "test video")]


def test_a_device_index_opencv_cannot_take_is_reported_lost_and_retried():
    """cv2.VideoCapture raises cv2.error for an index past a C int, as a missing camera gives no
    frame: the feed is reported lost saying why, and the capture is tried again."""
    capture = Capture(2**32, reopen_every_s=0.05)
    refusals: list = []

    def grab():
        try:
            return capture.grab()
        except cv2.error as error:
            refusals.append(error)
            raise

    stages = CameraStages(grab=grab, detect=lambda frame: [], track=lambda number, cards: [],
                          to_table=lambda x, y: (x, y))
    lost = threading.Event()
    seen: list = []
    source = CameraSource(stages, FeltTracker(lambda x, y: None), description="test video",
                          lost_after_s=0.2)
    source.start(lambda item: (seen.append(item), lost.set()))
    try:
        assert lost.wait(10)
        tried = len(refusals)
        deadline = time.monotonic() + 5
        while len(refusals) < tried + 3 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert len(refusals) >= tried + 3  # still trying after the report
    finally:
        source.stop()
    assert len(seen) == 1 and not seen[0].up
    assert seen[0].detail.startswith("test video: no frame for 0.2 s (error: OpenCV")
    assert "integer won't fit into a C int" in seen[0].detail


@pytest.mark.parametrize(("verdicts", "reported"), [
    ([ViewCheck(moved="moved 6.1 mm"), ViewCheck(moved="moved 6.3 mm")],
     [CameraMoved("moved 6.1 mm"), CameraLink(True, "test video: back in place")]),
    ([ViewCheck(soft="frame soft: 3.1 px"), ViewCheck(soft="frame soft: 3.2 px")],
     [CameraFocus(False, "frame soft: 3.1 px"), CameraFocus(True, "test video: sharp again")]),
    ([ViewCheck(moved="moved 6.1 mm", soft="frame soft: 3.1 px")],
     [CameraMoved("moved 6.1 mm"), CameraFocus(False, "frame soft: 3.1 px"),
      CameraLink(True, "test video: back in place"),
      CameraFocus(True, "test video: sharp again")]),
], ids=["moved", "soft", "both"])
def test_a_view_check_is_reported_once_and_cleared_when_it_passes(tmp_path, verdicts, reported):
    """The camera moved or its view soft: two failing looks in a row give one report, the first
    passing look clears it."""
    path = tmp_path / "table.avi"
    write_video(path, 6)
    capture = Capture(str(path))
    answers = iter(verdicts)
    stages = CameraStages(
        grab=capture.grab,
        detect=lambda frame: [],
        track=lambda number, cards: [],
        to_table=lambda x, y: (x, y),
        check_view=lambda frame: next(answers, ViewCheck()),
    )
    seen, _ = run_source(stages, lambda items: len(items) >= 1 + len(reported))
    assert seen[:1 + len(reported)] == [CameraLink(True, "test video"), *reported]


def test_frames_detected_at_once_are_tracked_in_frame_order(tmp_path):
    """Two workers: a frame's detection may finish before the one grabbed ahead of it (here
    every other frame is slower), yet the tracker sees each frame's cards, in frame order; and
    two detections do run at once."""
    path = tmp_path / "table.avi"
    write_video(path, 20)
    capture = Capture(str(path))
    running, most = [0], [0]
    lock = threading.Lock()

    def detect(frame):
        with lock:
            running[0] += 1
            most[0] = max(most[0], running[0])
        shade = int(frame[0, 0, 0])
        # every other frame slower; the last one slowest, so it is still out when frames end
        threading.Event().wait(0.3 if shade >= 220 else 0.06 if shade // 10 % 2 else 0.01)
        with lock:
            running[0] -= 1
        return [shade]

    tracked: list = []

    def track(number, observations):
        tracked.append((number, observations[0]))
        return []

    stages = CameraStages(grab=capture.grab, detect=detect, track=track,
                          to_table=lambda x, y: (x, y), close=capture.close)
    lost = threading.Event()
    source = CameraSource(stages, FeltTracker(lambda x, y: None), description="test video",
                          lost_after_s=0.3, check_view_every_s=0.0, workers=2)
    source.start(lambda item: lost.set() if not item.up else None)  # the video has ended
    assert lost.wait(10), tracked
    source.stop()
    assert [number for number, _ in tracked] == list(range(1, 21))
    shades = [shade for _, shade in tracked]
    assert shades == sorted(shades) and len(set(shades)) == 20  # each frame's own cards
    assert most[0] == 2
    with pytest.raises(ValueError, match="workers must be at least 1"):
        CameraSource(stages, FeltTracker(lambda x, y: None), workers=0)
