"""The table box's side of the floor: ``[floor]`` in table.toml, and the room's lag on the
dealer's screen, alarmed past its bound and resolved once the table has caught up."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from dealer_assist.floor.forwarder import FloorLink, ForwarderHost
from dealer_assist.floor.simulate import SimOptions, SimTable
from dealer_assist.floor.wire import RECORDS, STREAM
from dealer_assist.table.config import ConfigError, load_config
from tests.floor.broker import Broker, free_port
from tests.floor.floor import wait_for

TABLE = """
table_id = "T4"
[shoe]
url = "socket://127.0.0.1:7000"
[recording]
dir = "rec"
"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "table.toml"
    path.write_text(text)
    return path


def test_a_floor_section_is_read_with_its_files(tmp_path: Path):
    (tmp_path / "T4.creds").write_text("creds")
    config = load_config(write(tmp_path, TABLE + '[floor]\nurl = "nats://10.0.0.5:4222"\n'
                               'credentials = "T4.creds"\nalarm_after_s = 60\n'))
    assert config.floor == FloorLink("nats://10.0.0.5:4222", tmp_path / "T4.creds",
                                     alarm_after_s=60.0)
    assert load_config(write(tmp_path, TABLE)).floor is None


@pytest.mark.parametrize(("section", "key"), [
    ('url = "http://x:4222"', "floor.url"),
    ('url = "nats://x:4222"\ncredentials = "missing.creds"', "floor.credentials"),
    ('url = "nats://x:4222"\ncredentials = "rec/T4.creds"', "floor.credentials"),
    ('url = "nats://x:4222"\nalarm_after_s = -1', "floor.alarm_after_s"),
    ('url = "nats://x:4222"\nalarm_after_records = true', "floor.alarm_after_records"),
    ('url = "nats://x:4222"\nsubject = "floor.records.T9"', "floor.subject"),
])
def test_floor_mistakes_name_the_key(tmp_path: Path, section: str, key: str):
    with pytest.raises(ConfigError) as caught:
        load_config(write(tmp_path, TABLE + "[floor]\n" + section + "\n"))
    assert caught.value.key == key


def make_stream(url: str) -> None:
    import nats

    async def make() -> None:
        nc = await nats.connect(url)
        await nc.jetstream().add_stream(name=STREAM, subjects=[f"{RECORDS}.>"])
        await nc.close()

    asyncio.run(make())


def test_the_dealers_screen_shows_the_lag_and_alarms_past_the_bound(tmp_path: Path):
    broker = Broker(tmp_path / "jetstream", free_port())  # not started: the floor is down
    link = FloorLink(broker.url, alarm_after_records=5)
    host = ForwarderHost().start()
    table = SimTable("T1", tmp_path / "boxes", SimOptions(tmp_path, link), 3, host)
    try:
        table.play_round(1)
        table.play_round(2)
        assert wait_for(lambda: (table.table.runner.view().get("floor") or {}).get("behind"),
                        30)
        view = table.table.runner.view()
        assert view["floor"]["records"] > 5 and not view["floor"]["connected"]
        assert any(a["kind"] == "floor_behind" for a in view["alarms"])
        broker.start()
        make_stream(broker.url)
        assert wait_for(lambda: (table.table.runner.view().get("floor") or {}).get(
            "records") == 0, 60)
        view = table.table.runner.view()
        assert not view["floor"]["behind"] and view["floor"]["connected"]
        assert not any(a["kind"] == "floor_behind" for a in view["alarms"])  # resolved
    finally:
        host.stop()
        table.stop()
        broker.stop()
