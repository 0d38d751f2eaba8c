"""The shipped model on committed sample frames with known answers, the detect CLI's JSON, and
clear messages for a missing or corrupt model."""

from __future__ import annotations

import json
import math
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest

from dealer_assist.vision.detector import DEFAULT_MODEL, DEFAULT_READER, CardDetector, ModelError

DATA = Path(__file__).resolve().parents[1] / "data" / "vision"
ANSWERS = json.loads((DATA / "answers.json").read_text())
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def detector() -> CardDetector:
    return CardDetector(DEFAULT_MODEL)


def on_card(obs_x: float, obs_y: float, answer: dict) -> bool:
    """A detection's point lies on the answer's card (within its half-diagonal of the centre)."""
    return math.dist((obs_x, obs_y), (answer["x"], answer["y"])) < 75


@pytest.mark.parametrize("name", sorted(ANSWERS))
def test_shipped_model_reads_sample(detector: CardDetector, name: str) -> None:
    answer = ANSWERS[name]
    cards = detector.detect(cv2.imread(str(DATA / name)))
    assert sorted(c.card for c in cards) == sorted(a["card"] for a in answer["cards"]), name
    for expected in answer["cards"]:
        (seen,) = [c for c in cards if c.card == expected["card"]]
        assert on_card(seen.x, seen.y, expected), (name, seen, expected)
        assert seen.sideways == expected["sideways"], (name, seen)
        assert detector.confidence <= seen.confidence <= 1.0


def test_pip_tens_are_found_where_they_lie(detector: CardDetector) -> None:
    """A ten on a Spanish table is an alarm: both tens must be read, at their places."""
    cards = detector.detect(cv2.imread(str(DATA / "tens_paris.jpg")))
    for expected in ANSWERS["tens_paris.jpg"]["cards"]:
        assert any(c.card == expected["card"] and on_card(c.x, c.y, expected) for c in cards), (
            expected, cards)


def test_samples_cover_the_cases() -> None:
    cards = [c for a in ANSWERS.values() for c in a["cards"]]
    assert any(c["sideways"] for c in cards)
    assert any(c["card"][0] == "T" for c in cards)
    assert len({a["design"] for a in ANSWERS.values()}) >= 4
    assert max(len(a["cards"]) for a in ANSWERS.values()) >= 3  # a fan


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "dealer_assist", "detect", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_cli_json_one_line_per_image() -> None:
    names = sorted(ANSWERS)[:2]
    result = cli("--json", *(str(DATA / n) for n in names))
    assert result.returncode == 0, result.stderr
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    assert [line["image"] for line in lines] == [str(DATA / n) for n in names]
    for line, name in zip(lines, names, strict=True):
        assert set(line) == {"image", "cards"}
        for card in line["cards"]:
            assert set(card) == {"card", "x", "y", "confidence", "sideways"}
            assert isinstance(card["x"], float) and isinstance(card["sideways"], bool)
        assert sorted(c["card"] for c in line["cards"]) == sorted(
            a["card"] for a in ANSWERS[name]["cards"]
        )


def test_cli_bad_image_named_and_others_still_read(tmp_path: Path) -> None:
    bad = tmp_path / "broken.jpg"
    bad.write_bytes(b"\xff\xd8 not really a jpeg")
    result = cli("--json", str(bad), str(DATA / "split_tigullio.jpg"))
    assert result.returncode == 1
    assert f"{bad}: not a PNG or JPEG image (it starts with ff d8 20 6e" in result.stderr
    assert len(result.stdout.splitlines()) == 1


def test_cli_refuses_a_photo_cut_short(tmp_path: Path) -> None:
    """A copy cut short would otherwise be read with a grey bottom: "0 cards", exit 0."""
    whole = (DATA / "fan_anglo.jpg").read_bytes()
    cut = tmp_path / "fan_cut.jpg"
    cut.write_bytes(whole[: len(whole) // 2])
    result = cli("--json", str(cut), str(DATA / "split_tigullio.jpg"))
    assert result.returncode == 1
    assert f"{cut}: a JPEG file that does not decode whole (cut short or damaged)" \
        in result.stderr
    assert [json.loads(line)["image"] for line in result.stdout.splitlines()] == \
        [str(DATA / "split_tigullio.jpg")]


def test_cli_refuses_a_photo_with_damaged_data(tmp_path: Path) -> None:
    """OpenCV decoded it with garbled blocks: 7 cards, two of them phantoms, exit 0."""
    from tests.test_image_files import damaged_jpeg

    damaged = tmp_path / "fan_damaged.jpg"
    damaged.write_bytes(damaged_jpeg((DATA / "fan_anglo.jpg").read_bytes()))
    result = cli("--json", str(damaged), str(DATA / "split_tigullio.jpg"))
    assert result.returncode == 1
    assert result.stderr == (f"dealer-assist detect: {damaged}: damaged JPEG data (libjpeg: "
                             "premature end of data segment); not read\n")
    assert [json.loads(line)["image"] for line in result.stdout.splitlines()] == \
        [str(DATA / "split_tigullio.jpg")]


def test_cli_names_a_folder_as_one(tmp_path: Path, capsys) -> None:
    from dealer_assist.cli import main

    assert main(["detect", str(tmp_path), str(DATA / "split_tigullio.jpg")]) == 1
    captured = capsys.readouterr()
    assert captured.err == (f"dealer-assist detect: {tmp_path}: a directory, not an image or "
                            "video file\n")
    assert captured.out.startswith(f"{DATA / 'split_tigullio.jpg'}: 4 cards")


def write_video(path: Path, frame: Any, count: int) -> None:
    """An MJPG video of ``count`` copies of ``frame``."""
    writer = cv2.VideoWriter(
        str(path), cv2.VideoWriter.fourcc(*"MJPG"), 30, (frame.shape[1], frame.shape[0])
    )
    for _ in range(count):
        writer.write(frame)
    writer.release()


def test_cli_video_gives_events_with_frame_numbers(tmp_path: Path) -> None:
    frame = cv2.imread(str(DATA / "split_tigullio.jpg"))
    video = tmp_path / "table.avi"
    write_video(video, frame, 8)
    result = cli("--json", str(video))
    assert result.returncode == 0, result.stderr
    events = [json.loads(line) for line in result.stdout.splitlines()]
    assert sorted(e["card"] for e in events) == ["7D", "7H", "AC", "JH"]
    assert {e["event"] for e in events} == {"appeared"}
    # a card is an event only after 3 stable frames (0, 1, 2 at the earliest), and only once
    assert all(2 <= e["frame"] < 8 for e in events)


def test_cli_video_cut_short_is_named_with_where_reading_stopped(tmp_path: Path) -> None:
    """A video copy cut short had been read as far as it went: exit 0 and no word of it."""
    frame = cv2.imread(str(DATA / "split_tigullio.jpg"))
    whole = tmp_path / "table.avi"
    write_video(whole, frame, 8)
    cut = tmp_path / "cut.avi"
    cut.write_bytes(whole.read_bytes()[: whole.stat().st_size // 2])
    result = cli("--json", str(cut))
    assert result.returncode == 1
    assert re.search(rf"dealer-assist detect: {re.escape(str(cut))}: read [1-7] of the 8 frames "
                     r"it reports, stopped after frame [0-6] \(cut short or damaged\)",
                     result.stderr), result.stderr
    assert all(json.loads(line)["video"] == str(cut) for line in result.stdout.splitlines())


def test_cli_video_names_a_frame_with_damaged_data_and_reads_the_rest(tmp_path: Path) -> None:
    """FFmpeg decoded such frames garbled, saying "bad vlc" on stderr: no file, no frame,
    exit 0. Each Motion JPEG frame is a JPEG; the fourth one's data is damaged here."""
    from tests.test_image_files import damaged_jpeg

    whole = tmp_path / "table.avi"
    write_video(whole, cv2.imread(str(DATA / "split_tigullio.jpg")), 8)
    data = whole.read_bytes()
    frames = [at for at in range(len(data)) if data.startswith(b"\xff\xd8\xff", at)]
    damaged = tmp_path / "damaged.avi"
    damaged.write_bytes(data[:frames[3]] + damaged_jpeg(data[frames[3]:frames[4]]) +
                        data[frames[4]:])
    result = cli("--json", str(damaged))
    assert result.returncode == 1
    assert result.stderr == (f"dealer-assist detect: {damaged}: frame 3 skipped: damaged JPEG "
                             "data (libjpeg: premature end of data segment); not read\n")
    events = [json.loads(line) for line in result.stdout.splitlines()]
    assert sorted(e["card"] for e in events) == ["7D", "7H", "AC", "JH"]


def test_cli_video_frames_too_large_are_refused_before_reading(tmp_path: Path, monkeypatch,
                                                               capsys) -> None:
    """The image limit holds for video frames, judged by the size the file reports: here the
    limit is lowered below a 64x48 frame (a real video over it takes gigabytes to read)."""
    from dealer_assist import image_files
    from dealer_assist.cli import main

    video = tmp_path / "big.avi"
    write_video(video, cv2.imread(str(DATA / "fan_anglo.jpg"))[:48, :64], 1)

    def no_reading(*args, **kwargs):
        raise AssertionError("a frame was read")

    monkeypatch.setattr(image_files, "MAX_PIXELS", 3000)
    monkeypatch.setattr(CardDetector, "detect", no_reading)
    assert main(["detect", str(video)]) == 1
    err = capsys.readouterr().err
    assert f"dealer-assist detect: {video}: a video frame is 64x48, larger than 3,000 pixels" in err


def test_missing_model_is_a_clear_message(tmp_path: Path) -> None:
    with pytest.raises(ModelError, match="model file not found: .*nothing.onnx"):
        CardDetector(tmp_path / "nothing.onnx")
    result = cli("--model", str(tmp_path / "nothing.onnx"), str(DATA / "tens_paris.jpg"))
    assert result.returncode == 2
    assert "model file not found" in result.stderr and "Traceback" not in result.stderr


def test_corrupt_model_is_a_clear_message(tmp_path: Path) -> None:
    corrupt = tmp_path / "cards.onnx"
    corrupt.write_bytes(DEFAULT_MODEL.read_bytes()[:5000])
    with pytest.raises(ModelError, match="not a readable ONNX model"):
        CardDetector(corrupt)
    result = cli("--model", str(corrupt), str(DATA / "tens_paris.jpg"))
    assert result.returncode == 2 and "not a readable ONNX model" in result.stderr


def test_missing_reader_is_a_clear_message(tmp_path: Path) -> None:
    with pytest.raises(ModelError, match="model file not found: .*reader.onnx"):
        CardDetector(DEFAULT_MODEL, tmp_path / "reader.onnx")


def test_detector_model_given_as_reader_is_refused() -> None:
    with pytest.raises(ModelError, match="an index reader gives"):
        CardDetector(DEFAULT_MODEL, DEFAULT_MODEL)


def test_reader_given_as_the_detector_model_is_refused() -> None:
    with pytest.raises(ModelError, match=r"model outputs are .*a detector gives one.*is this the "
                                         r"index reader\?\): .*index-reader\.int8\.onnx"):
        CardDetector(DEFAULT_READER, DEFAULT_READER)


@pytest.mark.parametrize(("option", "value", "rule"), [
    ("--confidence", "70", "a fraction above 0, at most 1 (0.7, not 70)"),
    ("--confidence", "0", "a fraction above 0, at most 1"),
    ("--stable-frames", "0", "at least 1"),
    ("--grace-frames", "-1", "at least 0"),
])
def test_detect_options_out_of_range_are_refused(option, value, rule, capsys) -> None:
    from dealer_assist.cli import main

    assert main(["detect", str(DATA / "fan_anglo.jpg"), option, value]) == 2
    assert f"dealer-assist detect: {option} must be {rule}" in capsys.readouterr().err


@pytest.mark.parametrize("value", ["0.001", "0", "nan", "75"])
def test_a_scale_out_of_range_is_refused_by_its_option(value: str, capsys) -> None:
    """--scale 0.001 shrank frames to no pixels: OpenCV's error and a traceback."""
    from dealer_assist.cli import main

    with pytest.raises(SystemExit) as refused:
        main(["detect", str(DATA / "fan_anglo.jpg"), "--scale", value])
    assert refused.value.code == 2
    assert f"argument --scale: must be from 0.25 to 4, got {value}" in capsys.readouterr().err


@pytest.mark.parametrize("shape", [(1, 1, 3), (2, 2, 3), (1, 3000, 3)])
def test_a_sliver_of_a_frame_shrunk_reads_as_no_cards(shape: tuple[int, ...]) -> None:
    """A bright frame is read whole; shrunk by --scale 0.25 it had rounded to no pixels."""
    assert CardDetector(scale=0.25).detect(np.full(shape, 255, np.uint8)) == []
    with pytest.raises(ValueError, match="scale must be above 0, got 0"):
        CardDetector(scale=0)


def test_a_file_name_that_is_not_utf8_is_named_and_the_other_files_still_read(tmp_path) -> None:
    """OpenCV crashed the process (segmentation fault) opening such a name."""
    odd = os.fsencode(tmp_path) + b"/fan\xfe.jpg"
    with open(odd, "wb") as handle:
        handle.write((DATA / "fan_anglo.jpg").read_bytes())
    done = subprocess.run(
        [sys.executable.encode(), b"-m", b"dealer_assist", b"detect", odd,
         str(DATA / "fan_anglo.jpg").encode()],
        cwd=ROOT, capture_output=True, timeout=120)
    assert done.returncode == 1
    assert b"the file name is not UTF-8 text; rename the file" in done.stderr
    assert b"fan_anglo.jpg: 5 cards" in done.stdout
