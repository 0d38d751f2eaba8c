"""The surveillance page under attack (issue #31): each test is an attack that worked before.

Brute force, bodies of any size in the evidence, sessions outliving their operator, pruning
fresh evidence, cross-site calls, header injection through a round id, looks off the record.
"""

from __future__ import annotations

import json
import secrets
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from dealer_assist.cli import main
from dealer_assist.surveillance import RecordingStore
from dealer_assist.surveillance.access import (
    access_log,
    add_operator,
    log_access,
    remove_operator,
)
from dealer_assist.surveillance.interface import StoredOperator
from dealer_assist.surveillance.login_limits import LoginLimits
from dealer_assist.surveillance.page_guard import CSRF_HEADER
from dealer_assist.surveillance.store import format_time
from dealer_assist.surveillance.web import SESSION_COOKIE, create_app
from tests.surveillance.factory import HAND_HELD_ROUND, build_recording
from tests.surveillance.old_hashes import old_scrypt_hash
from tests.surveillance.page import (
    CHEAP,
    PAGE_HEADERS,
    PASSWORD,
    add_operators,
    login,
    page_client,
    page_settings,
)

WRONG = "not the password"


@pytest.fixture
def operators(recording: Path) -> Path:
    add_operators(recording, olga="operator", audrey="auditor")
    return recording


def _attempt(client: TestClient, name: str, password: str) -> Any:
    return client.post("/api/login", json={"name": name, "password": password})


def _log(recording: Path) -> list[dict[str, Any]]:
    store = RecordingStore(recording)
    try:
        return access_log(store, 5000)
    finally:
        store.close()


def _from(recording: Path, address: str, **changes: Any) -> TestClient:
    """A client at another network address, on the same page as ``page_client`` would build."""
    return TestClient(create_app(recording, page_settings(**changes)), headers=PAGE_HEADERS,
                      client=(address, 50000))


# -- brute force ---------------------------------------------------------------------------------


def test_wrong_passwords_meet_a_delay_that_stops_even_the_right_one(operators: Path) -> None:
    """Before: 200 wrong passwords in 8 s, and the right one worked after."""
    client = page_client(operators)
    for _ in range(5):
        assert _attempt(client, "olga", WRONG).status_code == 401
    refused = _attempt(client, "olga", PASSWORD)
    assert refused.status_code == 429 and refused.headers["Retry-After"] == "1"
    assert "too many failed logins" in refused.json()["detail"]
    assert SESSION_COOKIE not in refused.cookies


def test_a_name_is_locked_after_20_failures_and_unlock_lifts_it_on_the_record(
    operators: Path,
) -> None:
    """20 failures from anywhere lock a name (known or not) until the technician's ``unlock``,
    which is a chained record; the lock is one too."""
    client = page_client(operators, login_limits=LoginLimits(first_delay_s=0.0))
    for number in range(20):
        assert _attempt(client, "olga", f"{WRONG} {number}").status_code == 401
        assert _attempt(client, "nobody", f"{WRONG} {number}").status_code == 401
    for name in ("olga", "nobody"):
        locked = _attempt(client, name, PASSWORD)
        assert locked.status_code == 429 and "unlock NAME" in locked.json()["detail"]
    assert [e["user"] for e in _log(operators) if e["action"] == "login-locked"] == [
        "nobody", "olga"]

    assert main(["surveillance", "operator", str(operators), "unlock", "olga"]) == 0
    unlocked = _log(operators)[0]
    assert (unlocked["action"], unlocked["target"]) == ("login-unlocked", {"name": "olga"})
    assert unlocked["account"]  # the OS account that ran it
    login(client, "olga")
    assert _attempt(client, "nobody", PASSWORD).status_code == 429  # still locked


def test_an_attempt_on_a_locked_name_looks_through_each_access_record_once(
    operators: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Each refused attempt on a locked name looks for the technician's unlock among the
    access records since the lock; once, every attempt looked through all of them again, so a
    stranger repeating one locked (or made-up) name cost the page a scan of the whole access log
    each time (0.4 s of CPU an attempt at 20 000 records, 46 s for an operator's login under
    45 such clients). Now each record is looked through once, and the unlock is still found."""
    client = page_client(operators, login_limits=LoginLimits(first_delay_s=0.0))
    for number in range(20):
        assert _attempt(client, "nobody", f"{WRONG} {number}").status_code == 401
    store = RecordingStore(operators)
    try:
        store.conn.execute("PRAGMA synchronous=OFF")  # the test's own setup: 3 000 records fast
        for _ in range(3000):
            log_access(store, "olga", "search", {"table": "T1", "results": 3})
    finally:
        store.close()
    asked: list[int] = []
    real = RecordingStore.latest_records

    def counted(self: RecordingStore, kind: str, limit: int) -> list[Any]:
        if kind == "access":
            asked.append(limit)
        return real(self, kind, limit)

    monkeypatch.setattr(RecordingStore, "latest_records", counted)
    assert _attempt(client, "nobody", PASSWORD).status_code == 429
    assert sum(asked) > 3000  # the records since the lock, looked through once
    asked.clear()
    for _ in range(3):
        assert _attempt(client, "nobody", PASSWORD).status_code == 429
    assert asked == [256] * 3  # only the records since the last attempt's look
    assert main(["surveillance", "operator", str(operators), "unlock", "nobody"]) == 0
    assert _attempt(client, "nobody", PASSWORD).status_code == 401  # unlocked: a wrong password


def test_the_operators_own_workstation_is_not_locked_out_by_an_attacker(operators: Path) -> None:
    """The trade-off: the address a name last logged in from is trusted for that name, so an
    attacker elsewhere cannot keep the operator out; five failures there end the trust."""
    settings: dict[str, Any] = {"login_limits": LoginLimits(first_delay_s=0.0)}
    app = create_app(operators, page_settings(**settings))
    desk = TestClient(app, headers=PAGE_HEADERS, client=("10.0.0.5", 50000))
    attacker = TestClient(app, headers=PAGE_HEADERS, client=("10.0.0.66", 50000))
    login(desk, "olga")
    for number in range(20):
        assert _attempt(attacker, "olga", f"{WRONG} {number}").status_code == 401
    assert _attempt(attacker, "olga", PASSWORD).status_code == 429
    login(desk, "olga")
    for _ in range(5):
        assert _attempt(desk, "olga", WRONG).status_code == 401
    assert _attempt(desk, "olga", PASSWORD).status_code == 429


def test_one_address_guessing_many_names_is_delayed_too(operators: Path) -> None:
    client = page_client(operators)
    for number in range(5):
        assert _attempt(client, f"guess{number}", WRONG).status_code == 401
    assert _attempt(client, "olga", PASSWORD).status_code == 429
    assert _attempt(_from(operators, "10.0.0.7"), "olga", PASSWORD).status_code == 200


# -- what a login can put in the evidence ---------------------------------------------------------


def test_a_16_mib_login_name_is_refused_before_it_reaches_the_record(operators: Path) -> None:
    """Before: the whole name was stored in the permanent evidence."""
    client = page_client(operators)
    before = len(_log(operators))
    body = json.dumps({"name": "x" * (16 << 20), "password": WRONG}).encode()
    response = client.post("/api/login", content=body,
                           headers={"content-type": "application/json"})
    assert response.status_code == 413
    assert len(_log(operators)) == before


def test_a_body_streamed_past_the_limit_without_a_length_is_refused(operators: Path) -> None:
    client = page_client(operators)

    def chunks() -> Any:
        yield b'{"name": "'
        for _ in range(64):
            yield b"x" * 1024
        yield b'", "password": "x"}'

    response = client.post("/api/login", content=chunks(),
                           headers={"content-type": "application/json"})
    assert response.status_code == 413


def test_a_long_refused_name_is_recorded_cut_to_64_characters(operators: Path) -> None:
    client = page_client(operators)
    name = "m" * 200
    assert _attempt(client, name, WRONG).status_code == 401
    entry = _log(operators)[0]
    assert entry["action"] == "login-refused"
    assert entry["user"] == "m" * 64 + "\u2026"
    assert entry["target"]["name_length"] == 200
    too_long = _attempt(client, "m" * 257, WRONG)
    assert too_long.status_code == 422 and "m" * 100 not in too_long.text


def test_a_search_criterion_too_long_for_the_record_is_refused(operators: Path) -> None:
    client = page_client(operators)
    login(client, "audrey")
    before = len(_log(operators))
    response = client.get("/api/rounds", params={"round": "r" * 5000})
    assert response.status_code == 422
    assert response.json()["detail"] == "bad search: round: over 256 characters"
    assert len(_log(operators)) == before


def test_statistics_groupings_and_access_limits_are_bounded_before_the_record(
        operators: Path) -> None:
    """A grouping repeated thousands of times, or a limit thousands of digits long, once wrote
    itself whole into an access record at every look."""
    client = page_client(operators)
    login(client, "audrey")
    before = len(_log(operators))
    assert client.get("/api/stats", params={"by": ",".join(["table"] * 8000)}).json() == {
        "detail": "by: over 256 characters"}
    refused = client.get("/api/stats", params={"by": "table,table"})
    assert refused.status_code == 422 and refused.json()["detail"] == (
        "groups statistics by table twice")
    assert len(_log(operators)) == before
    assert client.get("/api/access", params={"limit": "9" * 4300}).status_code == 200
    assert _log(operators)[0]["target"] == {"limit": 5000}


# -- sessions ------------------------------------------------------------------------------------


def test_a_removed_operators_session_ends_at_once(operators: Path) -> None:
    """Before: it kept working for up to 8 hours."""
    client = page_client(operators)
    login(client, "audrey")
    assert client.get("/api/rounds").status_code == 200
    store = RecordingStore(operators)
    assert remove_operator(store, "audrey")
    store.close()
    response = client.get("/api/rounds")
    assert response.status_code == 401 and "removed or changed" in response.json()["detail"]
    assert client.app.state.sessions == {}  # type: ignore[attr-defined]


def test_a_session_ends_when_its_operator_changes_role_or_password(operators: Path) -> None:
    client = page_client(operators)
    login(client, "olga")
    store = RecordingStore(operators)
    add_operator(store, "olga", PASSWORD, "auditor", passwords=CHEAP)  # demoted
    store.close()
    assert client.get("/api/me").status_code == 401
    login(client, "olga")
    assert client.get("/api/me").json()["role"] == "auditor"
    store = RecordingStore(operators)
    add_operator(store, "olga", PASSWORD + " new", "auditor", passwords=CHEAP)
    store.close()
    assert client.get("/api/me").status_code == 401


# -- retention -----------------------------------------------------------------------------------


def test_the_page_cannot_prune_frames_younger_than_the_policy(operators: Path) -> None:
    """Before: ``older_than_hours: 0.001`` deleted every video frame but the last few seconds."""
    client = page_client(operators)
    login(client, "olga")
    frames = sorted((operators / "frames").rglob("*.*"))
    response = client.post("/api/retention/prune", json={"older_than_hours": 0.001})
    assert response.status_code == 403 and "at least 168" in response.json()["detail"]
    assert sorted((operators / "frames").rglob("*.*")) == frames
    store = RecordingStore(operators)
    assert list(store.records(kinds=("prune",))) == []
    store.close()
    floor = page_client(operators, retention_floor_hours=24.0)
    login(floor, "olga")
    assert floor.post("/api/retention/prune", json={"older_than_hours": 23.9}).status_code == 403
    assert floor.post("/api/retention/prune", json={"older_than_hours": 24}).status_code == 200


# -- cross-site calls -----------------------------------------------------------------------------


def _a_frame(client: TestClient) -> int:
    key = client.get("/api/rounds", params={"round": "sb-1"}).json()["rounds"][0]["key"]
    return int(client.get(f"/api/rounds/{key}").json()["frames"][0]["seq"])


def test_a_state_changing_call_needs_the_sessions_csrf_token(operators: Path) -> None:
    client = page_client(operators)
    login(client, "olga")
    seq = _a_frame(client)
    token = client.headers.pop(CSRF_HEADER)
    assert client.post(f"/api/frames/{seq}/key").status_code == 403
    other = secrets.token_urlsafe(32)
    assert client.post(f"/api/frames/{seq}/key", headers={CSRF_HEADER: other}).status_code == 403
    assert client.post("/api/retention/prune", json={"older_than_hours": 200}).status_code == 403
    assert client.post("/api/logout").status_code == 403
    store = RecordingStore(operators)
    assert list(store.records(kinds=("keyframe", "prune"))) == []
    store.close()
    assert client.post(f"/api/frames/{seq}/key", headers={CSRF_HEADER: token}).status_code == 200


def test_a_call_from_another_origin_or_host_is_refused(operators: Path) -> None:
    client = page_client(operators)
    me = login(client, "olga")
    seq = _a_frame(client)
    foreign = {"Origin": "http://evil.example", CSRF_HEADER: me["csrf"]}
    assert client.post(f"/api/frames/{seq}/key", headers=foreign).status_code == 403
    assert client.post("/api/login", json={"name": "olga", "password": PASSWORD},
                       headers={"Origin": "http://evil.example"}).status_code == 403
    no_origin = TestClient(client.app, cookies=dict(client.cookies))
    refused = no_origin.post(f"/api/frames/{seq}/key", headers={
        CSRF_HEADER: me["csrf"], "Content-Type": "application/json"})
    assert refused.status_code == 403 and "from the page itself" in refused.json()["detail"]
    for elsewhere in ({"Origin": "http://127.0.0.1:9999"}, {"Sec-Fetch-Site": "same-site"},
                      {"Sec-Fetch-Site": "cross-site"}):  # an <img> on another port, a link
        assert client.get("/api/rounds/1", headers=elsewhere).status_code == 403
        assert client.get("/api/me", headers=elsewhere).status_code == 403
    store = RecordingStore(operators)
    assert list(store.records(kinds=("keyframe",))) == []
    store.close()
    rebound = client.get("/api/rounds", headers={"Host": "attacker.example"})  # DNS rebinding
    assert rebound.status_code == 421
    assert client.get("/api/rounds").status_code == 200


def test_the_page_opens_from_another_sites_link_but_its_api_does_not(operators: Path) -> None:
    """A bookmark or a portal's link opens the page (``Sec-Fetch-Site: cross-site``, no
    ``Origin``); the same request for the API, or anything but a GET there, is refused."""
    client = page_client(operators)
    me = login(client, "olga")
    del client.headers["Origin"]  # a navigation by GET sends none
    page = client.get("/", headers={"Sec-Fetch-Site": "cross-site"})
    assert page.status_code == 200 and 'id="login-form"' in page.text
    assert client.get("/static/page.js", headers={"Sec-Fetch-Site": "same-site"}).status_code == 200
    for path in ("/api/me", "/api/rounds", "/api/access"):
        refused = client.get(path, headers={"Sec-Fetch-Site": "cross-site"})
        assert refused.status_code == 403 and "Sec-Fetch-Site: cross-site" in refused.text
    posted = client.post("/api/logout", headers={"Sec-Fetch-Site": "same-site",
                                                 CSRF_HEADER: me["csrf"]})
    assert posted.status_code == 403
    assert client.get("/api/me").status_code == 200  # still logged in


# -- export names --------------------------------------------------------------------------------


@pytest.mark.parametrize(("round_id", "fallback", "exact"), [
    ("ラウンド-1", "incident-T1-____-1-1.html",
     "incident-T1-%E3%83%A9%E3%82%A6%E3%83%B3%E3%83%89-1-1.html"),
    ('"; filename="evil.html', "incident-T1-___filename__evil.html-1.html",
     "incident-T1-%22%3B%20filename%3D%22evil.html-1.html"),
])
def test_export_names_are_encoded_per_rfc_6266(
    tmp_path: Path, round_id: str, fallback: str, exact: str
) -> None:
    """Before: the first was a 500, the second put ``filename="evil.html"`` in the header."""
    lines = [json.dumps({"type": "round", "id": round_id, "rules": "h17-ddd-6"}),
             *HAND_HELD_ROUND[1:]]
    build_recording(tmp_path, [lines])
    add_operators(tmp_path, audrey="auditor")
    client = page_client(tmp_path)
    login(client, "audrey")
    response = client.get("/api/rounds/1/export")
    assert response.status_code == 200
    assert response.headers["content-disposition"] == (
        f"attachment; filename=\"{fallback}\"; filename*=UTF-8''{exact}")


# -- passwords -----------------------------------------------------------------------------------


def test_an_old_scrypt_hash_still_logs_in_and_is_upgraded_to_argon2id(recording: Path) -> None:
    store = RecordingStore(recording)
    store.put_operator(StoredOperator("olga", "operator", old_scrypt_hash(PASSWORD)),
                       format_time(store.clock()))
    store.close()
    client = page_client(recording)
    assert _attempt(client, "olga", WRONG).status_code == 401
    login(client, "olga")
    store = RecordingStore(recording)
    stored = store.operator("olga")
    store.close()
    assert stored is not None and stored.password_hash.startswith("$argon2id$")
    assert CHEAP.verify(PASSWORD, stored.password_hash)
    assert [e["action"] for e in _log(recording)[:2]] == ["login", "password-rehashed"]
    assert client.get("/api/me").status_code == 200  # the upgrade does not end this session
    client.cookies.clear()
    login(client, "olga")


# -- every look on the record --------------------------------------------------------------------


def test_a_round_view_records_the_frames_it_serves_and_no_other_frame_is_served(
    operators: Path,
) -> None:
    """Before: any frame downloaded by number, unrecorded. Now one record a view names its
    frames; a frame outside every recorded view of this session is refused."""
    client = page_client(operators)
    login(client, "audrey")
    rounds = client.get("/api/rounds").json()["rounds"]
    first, second = rounds[0]["key"], rounds[1]["key"]
    view = client.get(f"/api/rounds/{first}").json()
    entry = _log(operators)[0]
    assert entry["action"] == "view" and entry["target"]["round_key"] == first
    assert entry["target"]["frames"] == [f["seq"] for f in view["frames"]]
    before = len(_log(operators))
    for seq in entry["target"]["frames"][:3]:
        assert client.get(f"/api/frames/{seq}").status_code == 200
    assert len(_log(operators)) == before  # no record per frame: the view named them
    elsewhere = page_client(operators)
    login(elsewhere, "audrey")
    unseen = elsewhere.get(f"/api/rounds/{second}").json()["frames"][0]["seq"]
    assert elsewhere.get(f"/api/frames/{unseen}").status_code == 200
    refused = client.get(f"/api/frames/{unseen}")
    assert refused.status_code == 403 and "open the round first" in refused.json()["detail"]


def test_storage_statistics_and_exports_are_on_the_record(operators: Path) -> None:
    client = page_client(operators)
    login(client, "audrey")
    assert client.get("/api/storage").status_code == 200
    assert client.get("/api/stats").status_code == 200
    key = client.get("/api/rounds", params={"round": "sb-1"}).json()["rounds"][0]["key"]
    assert client.get(f"/api/rounds/{key}/export").status_code == 200
    entries = _log(operators)
    assert [(e["user"], e["action"]) for e in entries[:4]] == [
        ("audrey", "export"), ("audrey", "search"), ("audrey", "statistics"),
        ("audrey", "storage")]
    assert len(entries[0]["target"]["frames"]) == 20


def test_the_storage_and_statistics_commands_record_the_os_account(
    recording: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before: ``surveillance storage`` was not recorded at all."""
    import os
    import pwd

    account = pwd.getpwuid(os.getuid()).pw_name
    for command in ("storage", "stats"):
        assert main(["surveillance", command, str(recording)]) == 0
        entry = _log(recording)[0]
        assert (entry["action"], entry["user"], entry["account"]) == (
            {"storage": "storage", "stats": "statistics"}[command], account, account)
    capsys.readouterr()
