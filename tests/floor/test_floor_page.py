"""The room's page searches the whole floor: rounds of every table the room took from the
floor, found by table, seat and card across tables (PostgreSQL room store, real JetStream)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from dealer_assist.surveillance.access import add_operator
from dealer_assist.surveillance.web import create_app
from tests.floor.broker import Broker
from tests.floor.floor import LOGS, BoxTable, RoomBackend, all_arrived, forward, open_room, wait_for
from tests.postgres import fresh_schema, server_url
from tests.surveillance.page import CHEAP, PAGE_HEADERS, PASSWORD, login, page_settings


@pytest.fixture
def broker(tmp_path: Path):
    running = Broker(tmp_path / "jetstream").start()
    yield running
    running.stop()


def test_the_page_finds_rounds_across_the_floors_tables(tmp_path: Path, broker: Broker):
    tables = [BoxTable(tmp_path / "boxes", name) for name in ("T1", "T2")]
    with fresh_schema("page") as schema:
        backend = RoomBackend(tmp_path / "room", (server_url(), schema))
        room = open_room(backend, broker.url, tables)
        host, _ = forward(tables, broker.url)
        try:
            tables[0].play(2)
            tables[1].play(3)
            assert wait_for(all_arrived(backend, tables))
        finally:
            host.stop()
            room.stop()
        store = backend.open()
        try:
            add_operator(store, "olga", PASSWORD, "operator", passwords=CHEAP)
        finally:
            store.close()
        client = TestClient(create_app(backend.open, page_settings()), headers=PAGE_HEADERS)
        assert client.get("/api/floor/rounds").status_code == 401  # logged in only
        for path in ("/api/floor/rounds/T1/c/1", "/api/floor/rounds/T1/c/1/replay",
                     "/api/floor/frames/T1/c/1"):
            assert client.get(path).status_code == 401, path
        assert login(client)["floor"] is True
        assert client.get("/api/me").json()["floor"] is True  # the page searches the floor

        def found(**query: str) -> list[dict[str, object]]:
            answer = client.get("/api/floor/rounds", params=query)
            assert answer.status_code == 200, answer.text
            return list(answer.json()["rounds"])

        every = found()
        assert sorted({r["box"] for r in every}) == ["T1", "T2"] and len(every) == 5
        assert {r["box"] for r in found(table="T2")} == {"T2"} and len(found(table="T2")) == 3
        card = found(table="T1")[0]
        seated = found(seat="1")
        assert seated and all(r["box"] in ("T1", "T2") for r in seated)
        # a card of the first round both tables dealt (the same golden log) finds both
        first_card = next(json.loads(line)["card"] for line in LOGS[0]
                          if json.loads(line).get("type") == "card" and json.loads(line)["card"])
        both = found(card=first_card.lower())
        assert {r["box"] for r in both} == {"T1", "T2"}
        assert card["chain"] == tables[0].chain
        # a round found opens: its events, settlement and key frames as the room holds them
        view = client.get(f"/api/floor/rounds/T1/{card['chain']}/{card['key']}")
        assert view.status_code == 200, view.text
        shown = view.json()
        assert shown["box"] == "T1" and shown["round"] == card["round"]
        assert shown["settlement"] is not None and shown["events"]
        assert shown["frames"] and all(f["in_room"] for f in shown["frames"] if f["key"])
        key_frame = next(f for f in shown["frames"] if f["key"])
        assert key_frame["file_state"] == "intact"
        served = client.get(f"/api/floor/frames/T1/{card['chain']}/{key_frame['seq']}")
        assert served.status_code == 200 and served.headers["X-Frame-Intact"] == "yes"
        # the room's copy altered: the view and the frame say so
        copy = backend.directory / "floor" / "T1" / card["chain"] / key_frame["file"]
        copy.write_bytes(copy.read_bytes() + b"x")
        again = client.get(f"/api/floor/rounds/T1/{card['chain']}/{card['key']}").json()
        assert next(f for f in again["frames"] if f["seq"] == key_frame["seq"]
                    )["file_state"] == "altered"
        assert client.get(f"/api/floor/frames/T1/{card['chain']}/{key_frame['seq']}"
                          ).headers["X-Frame-Intact"] == "no"
        # another site's page is refused, logged in or not
        assert client.get(f"/api/floor/frames/T1/{card['chain']}/{key_frame['seq']}",
                          headers={"Origin": "http://evil.example"}).status_code == 403
        # a frame of a round this session did not open is not served
        other = found(table="T2")[0]
        other_view = TestClient(create_app(backend.open, page_settings()), headers=PAGE_HEADERS)
        login(other_view)
        assert other_view.get(f"/api/floor/frames/T1/{card['chain']}/{key_frame['seq']}"
                              ).status_code == 403
        replayed = client.get(f"/api/floor/rounds/T2/{other['chain']}/{other['key']}/replay")
        assert replayed.status_code == 200 and replayed.json()["texts"] == []
        assert client.get(f"/api/floor/rounds/T1/{card['chain']}/999").status_code == 404
        assert client.get(f"/api/floor/rounds/T..1/{card['chain']}/1").status_code == 404
        assert client.get("/api/floor/rounds", params={"card": "ZZ"}).status_code == 422
        assert client.get("/api/floor/rounds", params={"table": "x" * 5000}).status_code == 422
