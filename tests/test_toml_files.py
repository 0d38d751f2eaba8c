"""read_toml: the one reader of table.toml and room.toml, bounded and naming what is wrong."""

from __future__ import annotations

import pytest

from dealer_assist.floor.config import RoomConfigError, load_room_config
from dealer_assist.table.config import ConfigError, load_config
from dealer_assist.toml_files import TomlFileError, read_toml


def test_a_document_is_read_and_a_utf8_byte_order_mark_read_past(tmp_path):
    path = tmp_path / "a.toml"
    content = '\ufeffname = "T\u00e9"\n[part]\nn = 3\n'.encode("utf-8")
    path.write_bytes(content)
    assert read_toml(path, len(content)) == {"name": "T\u00e9", "part": {"n": 3}}


@pytest.mark.parametrize(("content", "where", "why"), [
    (b"x = 1\n" + b"#" * 95, "(file)", "over 100 bytes"),  # 101 bytes
    ('x = "\u00e9"'.encode("latin-1"), "(file)", "not UTF-8 text (byte 0xe9 at offset 5)"),
    (b"[part\n", "(syntax)", "line 1"),
    (b"x = " + b"[" * 5000 + b"]" * 5000, "(syntax)", "nested too deeply"),
])
def test_what_is_wrong_is_named_by_file_where_and_why(tmp_path, content, where, why):
    path = tmp_path / "a.toml"
    path.write_bytes(content)
    with pytest.raises(TomlFileError) as caught:
        read_toml(path, 100 if len(content) < 200 else len(content))
    assert (caught.value.path, caught.value.where) == (str(path), where)
    assert why in caught.value.why
    assert str(caught.value).startswith(f"{path}: {where}: ")


def test_a_missing_file_is_named(tmp_path):
    with pytest.raises(TomlFileError, match="cannot read") as caught:
        read_toml(tmp_path / "gone.toml")
    assert caught.value.where == "(file)"


@pytest.mark.parametrize(("load", "error", "name"), [
    (load_config, ConfigError, "table.toml"), (load_room_config, RoomConfigError, "room.toml")])
def test_both_configurations_refuse_a_file_too_large_to_be_one_in_their_own_error(
        tmp_path, load, error, name):
    path = tmp_path / name
    path.write_bytes(b"# padding\n" * 200_000)  # 2 MB of comments
    with pytest.raises(error) as caught:
        load(path)
    assert caught.value.key == "(file)" and "over 1,000,000 bytes" in caught.value.why
