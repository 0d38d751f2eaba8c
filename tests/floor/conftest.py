"""The room's store the floor tests run against, both kinds."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.floor.floor import RoomBackend
from tests.postgres import fresh_schema, server_url


@pytest.fixture(params=["sqlite", "postgres"])
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[RoomBackend]:
    """The room's store: SQLite, and the PostgreSQL store on the test server (a schema of its
    own, named after the test module)."""
    if request.param == "sqlite":
        yield RoomBackend(tmp_path / "room")
        return
    with fresh_schema(request.module.__name__.rpartition(".")[2]) as schema:
        yield RoomBackend(tmp_path / "room", (server_url(), schema))
