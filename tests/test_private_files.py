"""The private files (signing key, screen secret, staff registry) are read one way: refused when
they are links, not this user's, or open to others; each reader says so in its own terms."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from dealer_assist.private_files import NotPrivateError, create_private, read_private
from dealer_assist.surveillance.signing import KeyFileError, Signer, load_signer
from dealer_assist.table.screen_access import SecretError, read_secret
from dealer_assist.table.staff import HashCost, StaffError, StaffRegistry

CHEAP = HashCost(time_cost=1, memory_kib=8, parallelism=1)


def test_a_private_file_reads_back_what_was_created(tmp_path: Path) -> None:
    path = tmp_path / "secret"
    create_private(path, b"held")
    assert read_private(path) == b"held"
    assert os.stat(path).st_mode & 0o777 == 0o600


@pytest.mark.parametrize("mode", [0o640, 0o604, 0o620, 0o602])
def test_any_access_for_others_is_refused_naming_the_file_and_mode(tmp_path: Path,
                                                                   mode: int) -> None:
    path = tmp_path / "secret"
    create_private(path, b"held")
    path.chmod(mode)
    with pytest.raises(NotPrivateError, match=f"{path}.*mode {mode:04o}"):
        read_private(path)


def test_a_link_to_a_private_file_is_refused(tmp_path: Path) -> None:
    target = tmp_path / "secret"
    create_private(target, b"held")
    link = tmp_path / "link"
    link.symlink_to(target)
    with pytest.raises(NotPrivateError, match="is a link"):
        read_private(link)


def test_a_folder_is_not_a_private_file(tmp_path: Path) -> None:
    folder = tmp_path / "folder"
    folder.mkdir(mode=0o700)
    with pytest.raises(NotPrivateError, match="not a plain file"):
        read_private(folder)


def test_a_missing_file_is_an_os_error_not_a_privacy_error(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        read_private(tmp_path / "nothing")


def test_each_reader_refuses_a_file_others_may_read(tmp_path: Path) -> None:
    key = tmp_path / "table.key"
    Signer.generate().save(key)
    secret = tmp_path / "screen.secret"
    create_private(secret, b"00" * 32 + b"\n")
    registry_path = tmp_path / "staff.json"
    registry = StaffRegistry(registry_path, CHEAP)
    registry.add("D1", "dealer", "1234")
    assert load_signer(key) and len(read_secret(secret)) == 32
    assert StaffRegistry(registry_path, CHEAP).count("dealer") == 1
    for path in (key, secret, registry_path):
        path.chmod(0o644)
    with pytest.raises(KeyFileError, match="consider the table's key exposed"):
        load_signer(key)
    with pytest.raises(SecretError, match="pair the screen again"):
        read_secret(secret)
    with pytest.raises(StaffError, match="PIN hashes must stay private"):
        StaffRegistry(registry_path, CHEAP)
