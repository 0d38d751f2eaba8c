"""``dealer-assist floor simulate`` deals through the real table loop, recorder and forwarder;
``dealer-assist room``'s consumer takes every record, verified against the tables' keys."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dealer_assist.cli import main
from dealer_assist.floor.config import load_room_config
from dealer_assist.floor.room import Room, RoomThread
from dealer_assist.surveillance.signing import Signer
from tests.floor.broker import Broker
from tests.floor.floor import RoomBackend, room_alarms, wait_for


@pytest.fixture
def broker(tmp_path: Path):
    running = Broker(tmp_path / "jetstream").start()
    yield running
    running.stop()


def room_toml(path: Path, url: str, keys: dict[str, Path]) -> Path:
    tables = "\n".join(f'{name} = "{key}"' for name, key in keys.items())
    path.write_text(f'[postgres]\nurl = "postgresql://postgres@127.0.0.1:5432/room"\n'
                    f'[nats]\nurl = "{url}"\n[tables]\n{tables}\n')
    return path


def test_simulated_tables_reach_the_room_verified(tmp_path: Path, broker: Broker,
                                                   capsys: pytest.CaptureFixture[str]):
    placeholder = tmp_path / "T0.pub"
    placeholder.write_text(Signer.generate().public.text + "\n")
    sim = tmp_path / "sim"
    first = room_toml(tmp_path / "room0.toml", broker.url, {"T0": placeholder})
    # set the tables up (their keys), as scripts/floor.sh does before the room starts
    assert main(["floor", "simulate", "--config", str(first), "--tables", "3", "--rounds", "0",
                 "--dir", str(sim)]) == 0
    capsys.readouterr()
    keys = {f"SIM{n:03d}": sim / f"SIM{n:03d}.evidence" / "table.pub" for n in (1, 2, 3)}
    config = load_room_config(room_toml(tmp_path / "room.toml", broker.url, keys))
    backend = RoomBackend(tmp_path / "room")
    room = RoomThread(Room(lambda: backend.open(create=True), config.nats,
                           config.tables)).start()
    try:
        assert main(["floor", "simulate", "--config", str(tmp_path / "room.toml"), "--tables",
                     "3", "--rounds", "2", "--seed", "5", "--dir", str(sim)]) == 0
        summary = json.loads(capsys.readouterr().out)
        assert summary["tables"] == 3 and summary["rounds"] + summary["voided"] == 6
        assert summary["records_behind"] == 0 and summary["failures"] == []

        def all_held() -> bool:
            store = backend.open()
            try:
                return sum(c.held for c in store.chains()) == summary["records"]
            finally:
                store.close()

        assert wait_for(all_held)
        assert room_alarms(backend) == []  # every chain links, every signature verifies
    finally:
        room.stop()
