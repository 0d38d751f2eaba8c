"""Builds real recordings for the tests and the benchmark from the golden round logs.

Frames are real JPEGs drawn with OpenCV (a green felt with the card's code on a white card), with
detections in the vision module's wire form (card, x, y, confidence) plus a box and seat zones.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from dealer_assist.roundlog import CardDealt, RoundFold, RoundStart, read_events
from dealer_assist.surveillance import Recorder
from dealer_assist.surveillance.store import chain_hash

ROUNDS = Path(__file__).parents[1] / "data" / "rounds"
GOLDEN_COUNT = len(list(ROUNDS.glob("*.jsonl")))  # every golden round log is recorded
FRAME_SIZE = (480, 270)  # width, height: small frames keep the tests fast
ZONES = [
    {"name": "dealer", "polygon": [[140, 10], [340, 10], [340, 90], [140, 90]]},
    {"name": "seats", "polygon": [[20, 150], [460, 150], [460, 260], [20, 260]]},
]


class StepClock:
    """A clock for tests: starts at ``start`` and moves ``step`` on every reading."""

    def __init__(self, start: datetime | None = None, step: timedelta = timedelta(seconds=2)):
        self.now = start or datetime(2026, 11, 29, 9, 0, tzinfo=UTC)
        self.step = step

    def __call__(self) -> datetime:
        self.now += self.step
        return self.now


def frame_jpeg(card: str, slot: int) -> tuple[bytes, list[dict[str, Any]]]:
    """A JPEG of a card on felt, and its detections (box and centre)."""
    width, height = FRAME_SIZE
    image = np.zeros((height, width, 3), np.uint8)
    image[:] = (40, 110, 30)
    x = 30 + (slot % 8) * 55
    y = 160 if slot % 2 else 30
    cv2.rectangle(image, (x, y), (x + 45, y + 65), (250, 250, 250), -1)
    cv2.putText(image, card, (x + 3, y + 40), cv2.FONT_HERSHEY_SIMPLEX, 0.7, (0, 0, 200), 2)
    ok, encoded = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, 80])
    assert ok
    detections = [
        {
            "card": card,
            "x": x + 22.5,
            "y": y + 32.5,
            "confidence": 0.97,
            "sideways": False,
            "box": [x, y, x + 45, y + 65],
        }
    ]
    return encoded.tobytes(), detections


def record_round(
    recorder: Recorder,
    lines: list[str],
    *,
    frames: bool = True,
    video_frames: bool = False,
    alarm: tuple[str, str] | None = None,
) -> int:
    """Record one round log as the live table would; returns the round key."""
    logged = list(read_events(lines))
    start = logged[0].event
    assert isinstance(start, RoundStart)
    fold = RoundFold(start)
    key = recorder.begin_round(start)
    slot = 0
    for item in logged[1:]:
        index = recorder.event(item.event)
        fold.apply(item.event)
        event = item.event
        if frames and isinstance(event, CardDealt) and event.card is not None:
            jpeg, detections = frame_jpeg(event.card.code, slot)
            recorder.frame(jpeg, {"detections": detections, "zones": ZONES}, index)
            if video_frames:
                recorder.frame(jpeg, None, index, key=False)
            slot += 1
        if slot == 4 and isinstance(event, CardDealt):
            recorder.screen(fold.engine.view())
    if alarm is not None:
        recorder.alarm(*alarm)
    assert fold.settlement is not None
    recorder.end_round(fold.settlement)
    return key


#: A hand-held round: seat 1's second card keyed (no reader saw it), the dealer's draw read as
#: 2D and corrected to 6D by the dealer.
HAND_HELD_ROUND = [
    '{"type": "round", "id": "hh-1", "rules": "h17-ddd-6"}',
    '{"type": "bet", "seat": 1, "amount": "10"}',
    '{"type": "card", "card": "9S", "to": {"seat": 1, "hand": 0}}',
    '{"type": "card", "card": "6S", "to": "dealer"}',
    '{"type": "card", "card": "8H", "to": {"seat": 1, "hand": 0}, "keyed": true}',
    '{"type": "card", "card": null, "to": "dealer", "face_down": true}',
    '{"type": "reveal", "card": "KD"}',
    '{"type": "action", "seat": 1, "action": "stand", "hand": 0}',
    '{"type": "card", "card": "6D", "to": "dealer", "corrected": "2D"}',
    '{"type": "end"}',
]


def golden_logs(names: Iterable[str] | None = None) -> list[list[str]]:
    paths = sorted(ROUNDS.glob("*.jsonl"))
    if names is not None:
        wanted = set(names)
        paths = [p for p in paths if p.stem in wanted]
    return [p.read_text().splitlines() for p in paths]


def build_recording(
    directory: Path,
    logs: list[list[str]],
    *,
    table: str = "T1",
    clock: StepClock | None = None,
    frames: bool = True,
    video_frames: bool = False,
) -> list[int]:
    """Record every log into ``directory``; returns the round keys."""
    clock = clock or StepClock()
    keys = []
    with Recorder.open(directory, table, clock=clock) as recorder:
        for number, lines in enumerate(logs):
            alarm = ("shoe", "E3 card not read") if number % 5 == 2 else None
            keys.append(
                record_round(recorder, lines, frames=frames, video_frames=video_frames, alarm=alarm)
            )
    return keys


# -- schema 1, as the first recorder wrote it (frozen here to build old recordings) -------------

SCHEMA_V1 = """
CREATE TABLE schema_version (version INTEGER NOT NULL, applied_at TEXT NOT NULL);
CREATE TABLE records (seq INTEGER PRIMARY KEY, at TEXT NOT NULL, round_id TEXT, kind TEXT NOT NULL,
    body TEXT NOT NULL, file TEXT, sha256 TEXT, prev_hash TEXT NOT NULL, hash TEXT NOT NULL);
CREATE TABLE rounds (round_id TEXT PRIMARY KEY, table_id TEXT NOT NULL, started_at TEXT NOT NULL,
    ended_at TEXT, status TEXT NOT NULL);
"""


def build_v1_recording(directory: Path, logs: list[list[str]], table: str = "T9") -> None:
    """A schema-1 recording: records without table or round-key columns, hash format 1."""
    directory.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(directory / "index.sqlite")
    conn.executescript(SCHEMA_V1)
    conn.execute("INSERT INTO schema_version VALUES (1, '2025-03-01T10:00:00.000Z')")
    state = {"seq": 0, "hash": "0" * 64, "minute": 0}

    def append(kind: str, round_id: str | None, body: Any) -> None:
        state["seq"] += 1
        state["minute"] += 1
        at = f"2025-03-01T10:{state['minute'] // 60:02d}:{state['minute'] % 60:02d}.000Z"
        text = json.dumps(body, sort_keys=True, separators=(",", ":"))
        payload = json.dumps(
            {
                "seq": state["seq"],
                "at": at,
                "round": round_id,
                "kind": kind,
                "body": text,
                "sha256": None,
            },
            sort_keys=True,
            separators=(",", ":"),
        ).encode()
        digest = chain_hash(str(state["hash"]), payload)
        conn.execute(
            "INSERT INTO records VALUES (?,?,?,?,?,?,?,?,?)",
            (state["seq"], at, round_id, kind, text, None, None, state["hash"], digest),
        )
        state["hash"] = digest

    for lines in logs:
        events = [json.loads(line) for line in lines if line.strip()]
        round_id = events[0]["id"]
        conn.execute(
            "INSERT INTO rounds VALUES (?,?,?,?,?)",
            (round_id, table, "2025-03-01T10:00:00.000Z", None, "settled"),
        )
        append("round", round_id, events[0])
        for event in events[1:]:
            append("event", round_id, event)
        fold_lines = [json.dumps(e) for e in events]
        from dealer_assist.roundlog import settle_log

        append("settlement", round_id, settle_log(fold_lines).to_json())
    conn.commit()
    conn.close()
