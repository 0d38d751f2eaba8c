"""The surveillance page as the tests drive it: a cheap password hash (the production cost is
argon2id's default; tests lower it through ``PageSettings``, never the default), a client that
sends the page's own Origin, and a login that keeps the session's CSRF token for later calls."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from argon2 import PasswordHasher
from fastapi.testclient import TestClient

from dealer_assist.surveillance import RecordingStore
from dealer_assist.surveillance.access import add_operator
from dealer_assist.surveillance.passwords import Passwords
from dealer_assist.surveillance.request_guard import CSRF_HEADER
from dealer_assist.surveillance.web import PageSettings, create_app

PASSWORD = "correct horse battery"
CHEAP = Passwords(PasswordHasher(time_cost=1, memory_cost=64, parallelism=1))
ORIGIN = "http://testserver"  # TestClient's Host


def add_operators(recording: Path, **roles: str) -> None:
    store = RecordingStore(recording)
    try:
        for name, role in roles.items():
            add_operator(store, name, PASSWORD, role, passwords=CHEAP)
    finally:
        store.close()


def page_settings(**changes: Any) -> PageSettings:
    return PageSettings(**{"allowed_hosts": ("testserver",), "passwords": CHEAP, **changes})


def page_client(recording: Path, **changes: Any) -> TestClient:
    return TestClient(create_app(recording, page_settings(**changes)), headers={"Origin": ORIGIN})


def login(client: TestClient, name: str = "olga", password: str = PASSWORD) -> dict[str, Any]:
    """Log in (asserting it works); later calls carry the session's CSRF token."""
    response = client.post("/api/login", json={"name": name, "password": password})
    assert response.status_code == 200, response.text
    client.headers[CSRF_HEADER] = response.json()["csrf"]
    return dict(response.json())
