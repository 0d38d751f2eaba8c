"""The PostgreSQL server the tests use: 127.0.0.1:5432, user postgres, trust authentication
(scripts/test.sh installs and starts it where it is missing). Each test gets its own schema,
dropped after it."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

URL = os.environ.get("DEALER_ASSIST_TEST_POSTGRES", "postgresql://postgres@127.0.0.1:5432/test")
#: set by scripts/test.sh when it could not install or start PostgreSQL (then the tests that
#: need it skip, saying why); otherwise an unreachable server fails them
UNAVAILABLE = "DEALER_ASSIST_POSTGRES_UNAVAILABLE"


def server_url() -> str:
    """The test server's URL; fails (or, where scripts/test.sh said it cannot run one, skips)
    when it cannot be reached."""
    import psycopg

    try:
        psycopg.connect(URL, connect_timeout=5).close()
    except psycopg.Error as error:
        why = f"PostgreSQL is not reachable at {URL}: {error}".strip()
        if os.environ.get(UNAVAILABLE):
            pytest.skip(f"{why} ({os.environ[UNAVAILABLE]})")
        pytest.fail(f"{why}: run scripts/test.sh, which installs and starts it")
    return URL


@contextmanager
def fresh_schema(prefix: str = "t") -> Iterator[str]:
    """A schema name no one uses; dropped (with everything in it) afterwards."""
    import psycopg
    from psycopg import sql

    name = f"{prefix}_{uuid.uuid4().hex[:16]}"
    try:
        yield name
    finally:
        with psycopg.connect(server_url(), autocommit=True) as conn:
            conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(
                sql.Identifier(name)))
