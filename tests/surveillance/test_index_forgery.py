"""Write access to the recording alone, without the table's key: each test is an attack that
worked before. The search index only finds rounds; a round's view, its frames, their files and
the alarms naming it are read from the chained records, and a frame file is read only where it
is one plain file of the recording's frames."""

from __future__ import annotations

import os
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from dealer_assist.surveillance import RecordingStore
from tests.surveillance.page import add_operators, login, page_client

SECRET = b"-----BEGIN PRIVATE KEY-----\nnot for the page\n"


@pytest.fixture
def client(recording: Path) -> TestClient:
    add_operators(recording, audrey="auditor")
    client = page_client(recording)
    login(client, "audrey")
    return client


@pytest.fixture
def secret(recording: Path) -> Path:
    """A file beside the recording that the page must never serve (the table's key)."""
    path = recording.parent / "T1.key"
    path.write_bytes(SECRET)
    return path


def _view(client: TestClient, round_id: str = "sb-1") -> dict[str, Any]:
    key = client.get("/api/rounds", params={"round": round_id}).json()["rounds"][0]["key"]
    return dict(client.get(f"/api/rounds/{key}").json())


def _index(recording: Path, sql: str, *params: Any) -> None:
    conn = sqlite3.connect(recording / "index.sqlite")
    conn.execute(sql, params)
    conn.commit()
    conn.close()


def _key_frames(view: dict[str, Any]) -> list[dict[str, Any]]:
    return [frame for frame in view["frames"] if frame["key"]]


def test_a_frame_is_served_from_the_file_and_type_its_chained_record_names(
        client: TestClient, recording: Path, secret: Path) -> None:
    """The index's file name and media type, pointed at the key, at a system file served as a
    page, or at another card's frame, change nothing served."""
    first, other = _key_frames(_view(client))[:2]
    original = (recording / first["file"]).read_bytes()
    assert original != (recording / other["file"]).read_bytes()
    for file, media_type in ((f"../{secret.name}", "image/jpeg"), ("/etc/passwd", "text/html"),
                             (other["file"], "image/jpeg")):
        _index(recording, "UPDATE frames SET file = ?, media_type = ? WHERE seq = ?",
               file, media_type, first["seq"])
        view = _view(client)
        served = client.get(f"/api/frames/{first['seq']}")
        assert served.status_code == 200 and served.content == original, file
        assert served.headers["content-type"] == "image/jpeg"
        assert served.headers["x-frame-intact"] == "yes"
        shown = next(f for f in view["frames"] if f["seq"] == first["seq"])
        assert shown["file"] == first["file"] and shown["file_state"] == "intact"


REFUSALS = {"symbolic": "is a symbolic link", "hard": "has 2 hard links",
            "fifo": "is not a regular file", "folder": "on its way is a link"}


@pytest.mark.parametrize("link", sorted(REFUSALS))
def test_a_frame_file_replaced_by_a_link_is_not_served_and_fails_the_round(
        client: TestClient, recording: Path, secret: Path, link: str) -> None:
    """A link to the key at the file, or at a folder on its way (its other frames copied
    there), or a FIFO that would hang whoever opens it: refused, named, never served."""
    frame = _key_frames(_view(client))[0]
    path = recording / frame["file"]
    if link == "folder":
        elsewhere = recording.parent / "elsewhere"
        shutil.copytree(path.parent, elsewhere)
        (elsewhere / path.name).unlink()
        (elsewhere / path.name).symlink_to(secret)
        shutil.rmtree(path.parent)
        path.parent.symlink_to(elsewhere)
    else:
        path.unlink()
        {"symbolic": lambda: path.symlink_to(secret), "hard": lambda: os.link(secret, path),
         "fifo": lambda: os.mkfifo(path)}[link]()
    view = _view(client)
    assert view["integrity"]["verdict"] == "FAILED"
    [problem] = [p for p in view["integrity"]["problems"] if frame["file"] in p]
    assert problem.startswith(f"{frame['file']} of record {frame['seq']} (frame")
    assert REFUSALS[link] in problem
    assert next(f for f in view["frames"] if f["seq"] == frame["seq"])["file_state"] == "altered"
    served = client.get(f"/api/frames/{frame['seq']}")
    assert served.status_code == 404 and SECRET not in served.content
    export = client.get(f"/api/rounds/{view['key']}/export")
    assert export.status_code == 200 and b"not for the page" not in export.content
    assert secret.read_bytes() == SECRET


def test_a_deleted_key_frame_is_missing_whatever_the_index_or_a_prune_record_says(
        client: TestClient, recording: Path) -> None:
    """Retention deletes video frames only: a key frame deleted and marked pruned in the index,
    or named by a prune record written without the table's key, is still missing."""
    frame = _key_frames(_view(client))[0]
    (recording / frame["file"]).unlink()
    _index(recording, "UPDATE frames SET pruned_at = '2026-11-29T09:00:00Z' WHERE seq = ?",
           frame["seq"])
    for attempt in ("index", "prune record"):
        if attempt == "prune record":
            store = RecordingStore(recording)
            store.append("prune", {"user": "mallory", "frames": [frame["seq"]]})
            store.close()
        view = _view(client)
        assert view["integrity"]["verdict"] == "FAILED", attempt
        shown = next(f for f in view["frames"] if f["seq"] == frame["seq"])
        assert shown["file_state"] == "missing" and not shown["pruned"], attempt
        [problem] = [p for p in view["integrity"]["problems"] if frame["file"] in p]
        assert problem.startswith(f"{frame['file']} of record {frame['seq']} (frame, round"
                                  " sb-1 on T1) is missing")


def test_a_video_frame_pruned_by_a_prune_record_is_shown_pruned(
        client: TestClient, recording: Path) -> None:
    """What the last test refuses for a key frame holds for a video frame (the chained prune
    record accounts for it), and the index's mark alone does not."""
    video = next(f for f in _view(client)["frames"] if not f["key"])
    (recording / video["file"]).unlink()
    _index(recording, "UPDATE frames SET pruned_at = '2026-11-29T09:00:00Z' WHERE seq = ?",
           video["seq"])
    shown = next(f for f in _view(client)["frames"] if f["seq"] == video["seq"])
    assert shown["file_state"] == "missing" and not shown["pruned"]
    store = RecordingStore(recording)
    store.append("prune", {"user": "olga", "frames": [video["seq"]]})
    store.close()
    view = _view(client)
    shown = next(f for f in view["frames"] if f["seq"] == video["seq"])
    assert shown["file_state"] == "pruned" and shown["pruned"]
    assert not any(video["file"] in problem for problem in view["integrity"]["problems"])


def test_an_alarm_naming_the_round_is_shown_when_deleted_from_the_index(
        client: TestClient, recording: Path) -> None:
    store = RecordingStore(recording)
    alarm = store.append("alarm", {"kind": "switched_card", "text": "seat 2: 9S is not the shoe's"
                                   " 9C", "round": "sb-1"}, table="T1")
    store.close()
    assert alarm.seq in [a["seq"] for a in _view(client)["alarms"]]
    _index(recording, "DELETE FROM alarms WHERE seq = ?", alarm.seq)
    assert alarm.seq in [a["seq"] for a in _view(client)["alarms"]]


def test_a_prune_record_edited_fails_the_round_and_a_frame_marked_to_keep_is_never_pruned(
        client: TestClient, recording: Path) -> None:
    """The prune records a view relies on are checked with it (one edited in the database is
    named), and a video frame an operator marked to keep, deleted under a prune record, is
    missing, not pruned."""
    view = _view(client)
    video, marked = [f for f in view["frames"] if not f["key"]][:2]
    store = RecordingStore(recording)
    store.append("keyframe", {"user": "olga", "frame": marked["seq"]}, table="T1",
                 round_key=view["key"])
    prune = store.append("prune", {"user": "olga", "frames": [video["seq"], marked["seq"]]})
    store.close()
    (recording / video["file"]).unlink()
    (recording / marked["file"]).unlink()
    view = _view(client)
    states = {f["seq"]: f["file_state"] for f in view["frames"]}
    assert (states[video["seq"]], states[marked["seq"]]) == ("pruned", "missing")
    assert view["integrity"]["verdict"] == "FAILED"
    assert [p for p in view["integrity"]["problems"] if "prune" in p] == [
        f"{marked['file']} of record {marked['seq']} (frame, round sb-1 on T1) is missing: a key"
        " frame or one marked to keep, which retention never deletes, yet a prune record names"
        " it"]
    _index(recording, "UPDATE records SET body = ? WHERE seq = ?",
           prune.body_text.replace("olga", "nobody"), prune.seq)
    problems = _view(client)["integrity"]["problems"]
    assert f"record {prune.seq} (prune) was altered: its content does not match its hash" in \
        problems
