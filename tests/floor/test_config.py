"""room.toml: what the room runs with, and every mistake named by file and key."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

import pytest

from dealer_assist.floor.config import RetentionPolicy, RoomConfigError, load_room_config
from dealer_assist.surveillance.signing import Signer

GOOD = """
[postgres]
url = "postgresql://postgres@127.0.0.1:5432/room"

[nats]
url = "nats://127.0.0.1:4222"

[page]
host = "127.0.0.1"
port = 8443

[tables]
T1 = "keys/T1.pub"
T2 = "keys/T2.pub"
"""


@pytest.fixture
def room(tmp_path: Path) -> Path:
    (tmp_path / "keys").mkdir()
    for table in ("T1", "T2"):
        (tmp_path / "keys" / f"{table}.pub").write_text(Signer.generate().public.text + "\n")
    return tmp_path


def write(room: Path, text: str) -> Path:
    path = room / "room.toml"
    path.write_text(text)
    return path


def test_a_room_config_gives_services_page_and_each_tables_keys(room: Path) -> None:
    config = load_room_config(write(room, GOOD))
    assert config.postgres_url == "postgresql://postgres@127.0.0.1:5432/room"
    assert (config.postgres_schema, config.frames_dir) == ("room", room / "room-frames")
    assert config.nats.url == "nats://127.0.0.1:4222" and config.nats.credentials is None
    assert (config.page_host, config.page_port) == ("127.0.0.1", 8443)
    assert sorted(config.tables) == ["T1", "T2"]
    key = (room / "keys" / "T1.pub").read_text().strip()
    assert [k.text for k in config.tables["T1"].keys] == [key]
    assert config.tables["T1"].file == room / "keys" / "T1.pub"
    # the room's own key by default beside room.toml (made by 'room keygen'); no retention
    assert (config.signing_key, config.signing_public) == (
        room / "room-signing.key", room / "room-signing.pub")
    assert config.retention == RetentionPolicy() and not config.retention
    assert config.anchor_log is None  # 'room verify' then says a cut tail cannot be told


def test_the_rooms_key_anchor_log_and_retention_policy_are_read(room: Path) -> None:
    config = load_room_config(write(room, GOOD + '[signing]\nkey = "secret/room.key"\n'
                                    'public = "/etc/room.pub"\nanchor_log = "anchors.jsonl"\n'
                                    "[retention]\nframes_hours = 720\nrecords_hours = 0.5\n"))
    assert (config.signing_key, config.signing_public) == (
        room / "secret" / "room.key", Path("/etc/room.pub"))
    assert config.anchor_log == room / "anchors.jsonl"
    assert config.retention == RetentionPolicy(timedelta(hours=720), timedelta(minutes=30))


def test_nats_credentials_and_tls_files_are_taken_from_beside_the_config(room: Path) -> None:
    for name in ("room.creds", "ca.pem", "room.crt", "room.key"):
        (room / name).write_text("x")
    config = load_room_config(write(room, GOOD.replace(
        'url = "nats://127.0.0.1:4222"',
        'url = "tls://nats.floor:4222"\ncredentials = "room.creds"\ntls_ca = "ca.pem"\n'
        'tls_cert = "room.crt"\ntls_key = "room.key"')))
    assert config.nats.credentials == room / "room.creds"
    assert (config.nats.tls_ca, config.nats.tls_cert, config.nats.tls_key) == (
        room / "ca.pem", room / "room.crt", room / "room.key")


@pytest.mark.parametrize(("change", "key", "why"), [
    (lambda t: t.replace('url = "postgresql', 'url = "mysql'), "postgres.url", "postgresql://"),
    (lambda t: t.replace("[postgres]\nurl", "[postgres]\nuri"), "postgres.uri", "unknown key"),
    (lambda t: t.replace('url = "nats://127.0.0.1:4222"', 'url = ""'), "nats.url", "non-empty"),
    (lambda t: t.replace('T2 = "keys/T2.pub"', 'T2 = "keys/T9.pub"'), "tables.T2", "no such file"),
    (lambda t: t.replace('T2 = "keys/T2.pub"', '"T/2" = "keys/T2.pub"'), "tables.T/2",
     "table id"),
    (lambda t: t.replace("port = 8443", "port = 70000"), "page.port", "port number"),
    (lambda t: t.replace("[postgres]", '[postgres]\nschema = "Room; drop"'), "postgres.schema",
     "schema name"),
    (lambda t: t.replace('T1 = "keys/T1.pub"\nT2 = "keys/T2.pub"', ""), "tables", "no table"),
    (lambda t: t + "\n[extra]\n", "extra", "unknown key"),
    (lambda t: t.replace("[nats]", "[nats]\ntls_cert = \"keys/T1.pub\""), "nats.tls_key",
     "required"),
    (lambda t: t.replace("[page]", "[page"), "(syntax)", ""),
    (lambda t: t + "[retention]\nframes_hours = 0\n", "retention.frames_hours", "above 0"),
    (lambda t: t + "[retention]\nrecords_hours = 876001\n", "retention.records_hours",
     "at most 876000"),
    (lambda t: t + "[retention]\nrecords_hours = nan\n", "retention.records_hours", "hours"),
    (lambda t: t + "[retention]\nrecords_hours = true\n", "retention.records_hours", "hours"),
    (lambda t: t + "[retention]\ndays = 3\n", "retention.days", "unknown key"),
    (lambda t: t + '[signing]\nkey = ""\n', "signing.key", "non-empty"),
    (lambda t: t + '[signing]\nanchor_log = "room-signing.key"\n', "signing.anchor_log",
     "file of its own"),
    (lambda t: t.replace("[nats]", '[nats]\ntls_cert = "keys/T1.pub"\ntls_key = "keys/T2.pub"')
     + '[signing]\nkey = "keys/T2.pub"\n', "signing.key", "file of its own"),
])
def test_a_mistake_is_named_by_file_and_key(room: Path, change: Callable[[str], str], key: str,
                                            why: str) -> None:
    path = write(room, change(GOOD))
    with pytest.raises(RoomConfigError) as refused:
        load_room_config(path)
    assert refused.value.key == key and why in refused.value.why
    assert str(path) in str(refused.value)


def test_a_key_file_that_holds_no_key_is_named(room: Path) -> None:
    (room / "keys" / "T2.pub").write_text("not a key\n")
    with pytest.raises(RoomConfigError) as refused:
        load_room_config(write(room, GOOD))
    assert refused.value.key == "tables.T2" and "T2.pub" in refused.value.why


def test_a_missing_config_is_named(tmp_path: Path) -> None:
    with pytest.raises(RoomConfigError) as refused:
        load_room_config(tmp_path / "room.toml")
    assert refused.value.key == "(file)"
