"""The room's retention and legal holds, through ``dealer-assist room hold|release|holds|prune``
over a real PostgreSQL room store: a held round's frames outlive a prune, putting on and lifting
a hold are records of the room's chain (who, why, when), a prune is one too, and the page's
floor round view shows the hold and the pruned frames."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from dealer_assist.cli import main
from dealer_assist.surveillance.access import add_operator, os_account
from dealer_assist.surveillance.web import create_app
from tests.floor.recorded import Box, open_room, record_box, room_toml, take_in
from tests.postgres import fresh_schema, server_url
from tests.surveillance.page import CHEAP, PAGE_HEADERS, PASSWORD, login, page_settings


@pytest.fixture(scope="module")
def boxes(tmp_path_factory: pytest.TempPathFactory) -> list[Box]:
    folder = tmp_path_factory.mktemp("boxes")
    return [record_box(folder / "T1", "T1", 3), record_box(folder / "T2", "T2", 2)]


@pytest.fixture
def schema() -> Iterator[str]:
    server_url()
    with fresh_schema("retain") as name:
        yield name


def frame_files(box: Box, room: Path) -> dict[str | None, list[Path]]:
    """The room's copies of ``box``'s frame files, by round id."""
    by_round: dict[str | None, list[Path]] = {}
    for record in box.records:
        if record.kind == "frame" and record.file:
            by_round.setdefault(record.round_id, []).append(
                room / "floor" / box.table / box.chain / record.file)
    return by_round


def test_a_held_round_keeps_its_frames_through_a_prune_and_holds_are_recorded(
        tmp_path: Path, schema: str, boxes: list[Box],
        capsys: pytest.CaptureFixture[str]) -> None:
    room = open_room(server_url(), schema, tmp_path)
    try:  # the records and key frames as the room takes them from the floor
        for box in boxes:
            take_in(room, box)
        add_operator(room, "olga", PASSWORD, "operator", passwords=CHEAP)
        add_operator(room, "audrey", PASSWORD, "auditor", passwords=CHEAP)
    finally:
        room.close()
    config = str(room_toml(tmp_path, server_url(), schema, boxes))
    frames = tmp_path / "room-frames"
    t1, t2 = frame_files(boxes[0], frames), frame_files(boxes[1], frames)
    assert all(path.is_file() for paths in (*t1.values(), *t2.values()) for path in paths)

    # a hold needs a reason and a round the room holds; a round is held once
    assert main(["room", "hold", "--config", config, "T1", "bj-3", "--why", " "]) == 2
    assert "say why" in capsys.readouterr().err
    assert main(["room", "hold", "--config", config, "T1", "nope", "--why", "x"]) == 2
    assert "holds no round 'nope' of table 'T1'" in capsys.readouterr().err
    assert main(["room", "hold", "--config", config, "T1", f"{boxes[0].chain}/99", "--why",
                 "x"]) == 2
    assert "holds no round" in capsys.readouterr().err
    assert main(["room", "hold", "--config", config, "T1", "bj-3",
                 "--why", "dispute 4411: seat 2 says the 9S was paid short"]) == 0
    assert "round bj-3 of T1 on hold" in capsys.readouterr().out
    assert main(["room", "hold", "--config", config, "T1", "bj-3", "--why", "again"]) == 2
    assert "already on hold" in capsys.readouterr().err
    assert main(["room", "holds", "--config", config]) == 0
    assert "dispute 4411" in capsys.readouterr().out

    # a policy out of range is refused; the prune skips the held round only
    for hours in ("0", "nan", "1e300"):
        assert main(["room", "prune", "--config", config, "--older-than-hours", hours]) == 2
        assert "above 0" in capsys.readouterr().err
    assert main(["room", "prune", "--config", config, "--older-than-hours", "1"]) == 0
    out = capsys.readouterr().out
    assert "kept 1 round(s) on hold" in out
    assert all(path.is_file() for path in t1["bj-3"])
    assert not any(path.exists() for rid, paths in t1.items() if rid != "bj-3"
                   for path in paths)
    assert not any(path.exists() for paths in t2.values() for path in paths)  # bj-3 of T2 too

    # the page's floor view says so: the hold (who, why, when) and the pruned frames
    sent: list[str] = []  # room serve sends a hold put from the page to the table's box
    client = TestClient(create_app(lambda: open_room(server_url(), schema, tmp_path),
                                   page_settings(on_floor_hold=lambda: sent.append("hold"))),
                        headers=PAGE_HEADERS)
    login(client)
    found = client.get("/api/floor/rounds", params={"round": "bj-3"}).json()["rounds"]
    views = {r["box"]: client.get(f"/api/floor/rounds/{r['box']}/{r['chain']}/{r['key']}").json()
             for r in found}
    assert views["T1"]["hold"]["why"] == "dispute 4411: seat 2 says the 9S was paid short"
    assert views["T1"]["hold"]["user"] == os_account() and views["T1"]["hold"]["at"]
    assert views["T1"]["hold"]["reached"] is None  # no box answers in this test
    assert all(f["file_state"] == "intact" for f in views["T1"]["frames"])
    assert views["T2"]["hold"] is None
    # from the page: an auditor may not hold; an operator may, once, and without a CSRF token not
    t2 = next(r for r in found if r["box"] == "T2")
    on_t2 = f"/api/floor/rounds/T2/{t2['chain']}/{t2['key']}"
    auditor = TestClient(client.app, headers=PAGE_HEADERS)
    login(auditor, "audrey")
    assert auditor.post(f"{on_t2}/hold", json={"why": "x"}).status_code == 403
    assert client.post(f"{on_t2}/hold", json={"why": "x"},
                       headers={"X-CSRF-Token": "forged"}).status_code == 403
    assert client.post(f"{on_t2}/hold", json={"why": "x" * 2001}).status_code == 422
    put = client.post(f"{on_t2}/hold", json={"why": "complaint at T2"})
    assert put.status_code == 200 and put.json()["user"] == "olga"
    assert client.post(f"{on_t2}/hold", json={"why": "again"}).status_code == 409
    assert client.post(f"{on_t2}/release", json={"why": "no case"}).status_code == 200
    assert client.post(f"{on_t2}/release", json={"why": "no case"}).status_code == 409
    assert sent == ["hold"]  # the hold put, not the refused ones nor the release
    hold_key = views["T1"]["key"]
    assert views["T2"]["frames"] and all(f["pruned"] for f in views["T2"]["frames"])

    # lifting is recorded too; the next prune then takes the round's frames
    assert main(["room", "release", "--config", config, "T1",  # named by chain and key too
                 f"{boxes[0].chain}/{hold_key}", "--why", "dispute 4411 settled"]) == 0
    assert main(["room", "release", "--config", config, "T1", "bj-3", "--why", "x"]) == 2
    assert "not on hold" in capsys.readouterr().err
    assert main(["room", "prune", "--config", config, "--older-than-hours", "1"]) == 0
    assert not any(path.exists() for path in t1["bj-3"])

    room = open_room(server_url(), schema, tmp_path)
    try:
        chain = [r for r in room.records() if r.kind.startswith("floor-")]
    finally:
        room.close()
    assert [r.kind for r in chain] == ["floor-hold", "floor-prune", "floor-hold",
                                       "floor-release", "floor-release", "floor-prune"]
    hold, first_prune, _, _, release, _ = (r.body for r in chain)
    assert (hold["user"], hold["box"], hold["round"]) == (os_account(), "T1", "bj-3")
    assert release["why"] == "dispute 4411 settled" and release["hold"] == chain[0].seq
    assert first_prune["held"] == [["T1", boxes[0].chain, hold["round_key"]]]
    assert all(seq for _, _, seq in first_prune["frames"])
    # the tables' records are all still there: the room's copy verifies clean after the prunes
    assert main(["room", "verify", "--config", config]) == 0
