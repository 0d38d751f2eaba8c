"""The surveillance page's API over HTTP: logins, roles, search, round view, export, access log."""

from __future__ import annotations

import hashlib
import re
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from dealer_assist.surveillance import RecordingStore
from dealer_assist.surveillance.access import access_log, add_operator
from dealer_assist.surveillance.passwords import default_passwords
from dealer_assist.surveillance.web import SESSION_COOKIE
from tests.surveillance.damage import damage_page, unreadable_seqs
from tests.surveillance.factory import GOLDEN_COUNT, HAND_HELD_ROUND, build_recording
from tests.surveillance.page import PASSWORD, add_operators, login, page_client


@pytest.fixture
def client(recording: Path) -> TestClient:
    add_operators(recording, olga="operator", audrey="auditor")
    return page_client(recording)


def _login(client: TestClient, name: str = "olga") -> None:
    login(client, name)


def _open_round(client: TestClient, round_id: str) -> dict[str, Any]:
    key = client.get("/api/rounds", params={"round": round_id}).json()["rounds"][0]["key"]
    return dict(client.get(f"/api/rounds/{key}").json())


def test_passwords_are_stored_salted_argon2id_at_the_default_cost(recording: Path) -> None:
    store = RecordingStore(recording)
    add_operator(store, "a", PASSWORD, "auditor")
    add_operator(store, "b", PASSWORD, "auditor")
    stored = [row[0] for row in store.conn.execute("SELECT password FROM operators")]
    assert len(set(stored)) == 2 and all(PASSWORD not in s for s in stored)
    assert all(s.startswith("$argon2id$v=19$m=65536,t=3,p=4$") for s in stored)
    passwords = default_passwords()
    assert passwords.verify(PASSWORD, stored[0]) and not passwords.verify(PASSWORD + "x", stored[0])


def test_missing_login_is_refused_everywhere(client: TestClient) -> None:
    for path in (
        "/api/rounds",
        "/api/rounds/1",
        "/api/rounds/1/export",
        "/api/rounds/1/export.pdf",
        "/api/rounds/1/replay",
        "/api/frames/3",
        "/api/stats",
        "/api/storage",
        "/api/access",
        "/api/me",
    ):
        assert client.get(path).status_code == 401, path
    client.cookies.set(SESSION_COOKIE, "forged")
    assert client.get("/api/rounds").status_code == 401


def test_an_expired_login_is_refused_and_forgotten_at_the_next_login(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A login expires after SESSION_SECONDS; the page keeps no login never used again (a
    surveillance page runs for months)."""
    from dealer_assist.surveillance import web

    _login(client, "olga")
    olga = client.cookies.get(SESSION_COOKIE)
    later = web.time.time() + web.SESSION_SECONDS + 1
    monkeypatch.setattr(web.time, "time", lambda: later)
    _login(client, "audrey")
    sessions = client.app.state.sessions  # type: ignore[attr-defined]
    assert list(sessions) == [client.cookies.get(SESSION_COOKIE)] and olga not in sessions
    client.cookies.clear()
    client.cookies.set(SESSION_COOKIE, olga)
    assert client.get("/api/me").status_code == 401


def test_wrong_password_and_unknown_name_are_refused_and_logged(
    client: TestClient, recording: Path
) -> None:
    wrong = client.post("/api/login", json={"name": "olga", "password": "not it at all"})
    unknown = client.post("/api/login", json={"name": "mallory", "password": PASSWORD})
    assert wrong.status_code == unknown.status_code == 401
    assert SESSION_COOKIE not in wrong.cookies
    assert client.get("/api/rounds").status_code == 401
    log = access_log(RecordingStore(recording))
    assert [(e["user"], e["action"]) for e in log[:2]] == [
        ("mallory", "login-refused"),
        ("olga", "login-refused"),
    ]
    assert log[0]["target"] == {"address": "testclient"}


def test_search_by_table_time_seat_alarm_and_payout(client: TestClient) -> None:
    _login(client)
    everything = client.get("/api/rounds").json()
    assert len(everything["rounds"]) == GOLDEN_COUNT and everything["tables"] == ["T1"]
    assert everything["alarm_kinds"] == ["shoe"]

    big = client.get("/api/rounds", params={"payout_above": "999.99"}).json()["rounds"]
    assert {r["round"] for r in big} >= {"sb-1"}
    assert all(float(r["max_payout"]) > 999.99 for r in big)  # display check only
    seat5 = client.get("/api/rounds", params={"seat": 5, "round": "sb-1"}).json()["rounds"]
    assert [r["round"] for r in seat5] == ["sb-1"]
    assert client.get("/api/rounds", params={"seat": 6, "round": "sb-1"}).json()["rounds"] == []
    alarmed = client.get("/api/rounds", params={"alarm": "shoe"}).json()["rounds"]
    assert len(alarmed) == 10 and all(r["alarms"] == 1 for r in alarmed)
    assert client.get("/api/rounds", params={"table": "T2"}).json()["rounds"] == []
    first = everything["rounds"][-1]["started_at"]
    early = client.get("/api/rounds", params={"until": first}).json()["rounds"]
    assert len(early) == 1
    late = client.get("/api/rounds", params={"since": first}).json()["rounds"]
    assert len(late) == GOLDEN_COUNT
    bad = client.get("/api/rounds", params={"seat": "two"})
    assert bad.status_code == 422 and "bad search" in bad.json()["detail"]


def _keys_of(recording: Path, seqs: list[int]) -> list[int]:
    """The round keys of some records, from the round index (their table pages may be gone)."""
    conn = sqlite3.connect(recording / "index.sqlite")
    rows = conn.execute("SELECT DISTINCT round_key FROM records INDEXED BY records_round WHERE"
                        f" seq IN ({','.join('?' * len(seqs))}) ORDER BY round_key", seqs)
    keys = [row[0] for row in rows]
    conn.close()
    return keys


def test_a_round_on_a_damaged_page_is_named_and_the_others_still_served(
    client: TestClient, recording: Path
) -> None:
    """These answered a bare 500 ("database disk image is malformed" in the server's log)."""
    _login(client)
    damage_page(recording, "records", leaf=70)
    damaged = _keys_of(recording, unreadable_seqs(recording))
    assert damaged
    for path in (f"/api/rounds/{damaged[0]}", f"/api/rounds/{damaged[0]}/export",
                 f"/api/rounds/{damaged[0]}/replay"):
        response = client.get(path)
        assert response.status_code == 500, path
        detail = response.json()["detail"]
        assert detail.startswith(f"{recording}/index.sqlite: round ") and f"(#{damaged[0]})" \
            in detail, path
        assert "cannot be read from index.sqlite (database disk image is malformed)" in detail
        assert detail.endswith("run 'dealer-assist replay --verify' on it")
    storage = client.get("/api/storage")
    assert storage.status_code == 500
    assert storage.json()["detail"] == (
        f"{recording}/index.sqlite: the index database is damaged (database disk image is"
        " malformed): run 'dealer-assist replay --verify' on it")
    whole = next(key for key in range(1, GOLDEN_COUNT + 1) if key not in damaged)
    assert client.get(f"/api/rounds/{whole}").status_code == 200
    assert client.get(f"/api/rounds/{whole}/export").status_code == 200
    assert len(client.get("/api/rounds").json()["rounds"]) == GOLDEN_COUNT  # the index is whole


def test_a_search_index_page_damaged_gives_the_rest_flagged_partial(
    client: TestClient, recording: Path
) -> None:
    """The search answered a bare 500; now the rounds it can still read, and which it cannot,
    each of which still opens from its records."""
    _login(client)
    damage_page(recording, "rounds", leaf=0)
    found = client.get("/api/rounds").json()
    assert found["partial"] is True and found["unsearchable"]
    assert len(found["rounds"]) + len(found["unsearchable"]) == GOLDEN_COUNT
    assert found["damaged"].startswith(
        f"the search index in index.sqlite is damaged: rounds #{found['unsearchable'][0]}, #")
    assert found["damaged"].endswith("could not be searched and are left out (each still opens"
                                     " from its records); run 'dealer-assist replay --verify'"
                                     " on the recording")
    view = client.get(f"/api/rounds/{found['unsearchable'][0]}")
    assert view.status_code == 200 and view.json()["settlement"] is not None
    stats = client.get("/api/stats")
    assert stats.status_code == 500
    assert "index.sqlite: the index database is damaged (database disk image is malformed)" \
        in stats.json()["detail"]


@pytest.mark.parametrize(
    ("params", "name"),
    [
        ({"seat": "9223372036854775808"}, "seat"),
        ({"seat": "\u0662"}, "seat"),  # an Arabic-Indic 2, which int() reads as 2
        ({"limit": "abc"}, "limit"),
        ({"payout_above": "NaN"}, "payout_above"),
        ({"payout_above": "Infinity"}, "payout_above"),
        ({"payout_above": "1e30"}, "payout_above"),
        ({"since": "0001-01-01T00:00:00+14:00"}, "since"),
        ({"until": "9999-12-31T23:59:59-14:00"}, "until"),
    ],
)
def test_a_bad_search_parameter_is_refused_by_name(
    client: TestClient, params: dict[str, str], name: str
) -> None:
    _login(client)
    response = client.get("/api/rounds", params=params)
    assert response.status_code == 422
    assert response.json()["detail"].startswith(f"bad search: {name}: ")


def test_numbers_past_sqlite_and_policies_past_the_cap_are_refused_not_crashed(
    client: TestClient,
) -> None:
    _login(client)
    huge = 2**63
    for path in (f"/api/rounds/{huge}", f"/api/rounds/{huge}/replay",
                 f"/api/rounds/{huge}/export"):
        response = client.get(path)
        assert (response.status_code, response.json()) == (404, {"detail": f"no round #{huge}"})
    assert client.get(f"/api/frames/{huge}").json() == {"detail": f"no frame record {huge}"}
    assert client.post(f"/api/frames/{huge}/key").status_code == 404
    for hours, status, detail in [
        (b"1e12", 422, "at most 876000"), (b"1e400", 422, "at most 876000"),
        (b"Infinity", 400, "Infinity is not a number"), (b"NaN", 400, "NaN is not a number"),
    ]:
        response = client.post("/api/retention/prune", content=b'{"older_than_hours": %s}' % hours,
                               headers={"content-type": "application/json"})
        assert response.status_code == status
        assert detail in response.json()["detail"]


def test_a_login_utf8_cannot_hold_or_giving_a_key_twice_is_refused(
    client: TestClient, recording: Path
) -> None:
    def post(body: bytes) -> Any:
        return client.post("/api/login", content=body,
                           headers={"content-type": "application/json"})

    before = len(access_log(RecordingStore(recording)))
    odd = post(b'{"name": "\\ud800", "password": "\\ud800"}')
    assert odd.status_code == 422 and "valid string" in odd.json()["detail"][0]["msg"]
    assert len(access_log(RecordingStore(recording))) == before
    twice = post(f'{{"name": "olga", "password": "wrong", "password": "{PASSWORD}"}}'.encode())
    assert twice.status_code == 400 and "key 'password' is given twice" in twice.text
    assert client.get("/api/me").status_code == 401


def test_round_view_has_events_frames_settlement_and_the_frame_bytes(client: TestClient) -> None:
    _login(client, "audrey")
    view = _open_round(client, "sb-1")
    assert view["round"] == "sb-1" and view["status"] == "settled"
    assert [e["event"]["type"] for e in view["events"]][:2] == ["round", "bet"]
    card_events = [e["index"] for e in view["events"] if e["event"]["type"] == "card"]
    key_frames = [f for f in view["frames"] if f["key"]]
    assert [f["event_index"] for f in key_frames] == card_events
    assert view["settlement"]["net"] == "1215.00"
    frame = key_frames[0]
    image = client.get(f"/api/frames/{frame['seq']}")
    assert image.headers["content-type"] == "image/jpeg"
    assert hashlib.sha256(image.content).hexdigest() == frame["sha256"]
    assert client.get("/api/rounds/9999").status_code == 404


def test_export_is_one_self_contained_html_file(client: TestClient) -> None:
    _login(client, "audrey")
    key = client.get("/api/rounds", params={"round": "sb-1"}).json()["rounds"][0]["key"]
    cards = [
        e for e in client.get(f"/api/rounds/{key}").json()["events"] if e["event"]["type"] == "card"
    ]
    response = client.get(f"/api/rounds/{key}/export")
    assert response.status_code == 200
    assert "attachment" in response.headers["content-disposition"]
    html = response.text
    assert "Incident report: round sb-1 on table T1" in html
    assert len(cards) == 10
    assert html.count("data:image/jpeg;base64,") == 20  # a key and a video frame per card
    assert not re.search(r"""(src|href)=['"](https?:|/)""", html), "nothing fetched from outside"
    assert "SUPER BONUS" in html and "1215.00" in html
    assert "matches the recorded settlement" in html
    assert "audrey (auditor)" in html


def test_the_export_says_which_cards_a_hand_held_dealer_entered(tmp_path: Path) -> None:
    build_recording(tmp_path, [HAND_HELD_ROUND])
    add_operators(tmp_path, audrey="auditor")
    client = page_client(tmp_path)
    _login(client, "audrey")
    html = client.get("/api/rounds/1/export").text
    assert "<strong> (keyed by the dealer: no reader saw it)</strong>" in html
    assert "<strong> (corrected by the dealer from 2D)</strong>" in html


def test_every_search_view_replay_and_export_is_in_the_access_log(client: TestClient) -> None:
    _login(client, "audrey")
    key = client.get("/api/rounds", params={"seat": 5}).json()["rounds"][0]["key"]
    client.get(f"/api/rounds/{key}")
    replayed = client.get(f"/api/rounds/{key}/replay").json()
    assert replayed["discrepancies"] == [] and replayed["replayed"] is not None
    client.get(f"/api/rounds/{key}/export")
    entries = client.get("/api/access").json()["entries"]
    actions = [(e["user"], e["action"]) for e in entries]
    assert actions[:6] == [
        ("audrey", "access-log"),
        ("audrey", "export"),
        ("audrey", "replay"),
        ("audrey", "view"),
        ("audrey", "search"),
        ("audrey", "login"),
    ]
    assert entries[4]["target"]["seat"] == 5
    assert entries[1]["target"]["round_key"] == key and entries[1]["at"].endswith("Z")


def test_the_auditor_is_read_only(client: TestClient) -> None:
    _login(client, "audrey")
    assert client.post("/api/retention/prune", json={"older_than_hours": 168}).status_code == 403
    assert client.post("/api/frames/3/key").status_code == 403
    _login(client, "olga")
    assert client.post("/api/retention/prune", json={"older_than_hours": 168}).status_code == 200


def test_logout_ends_the_session(client: TestClient) -> None:
    _login(client)
    assert client.get("/api/me").json() == {"name": "olga", "role": "operator",
                                            "csrf": client.headers["X-CSRF-Token"],
                                            "floor": False}
    client.post("/api/logout")
    assert client.get("/api/me").status_code == 401


def test_the_page_and_its_assets_come_from_the_package(client: TestClient) -> None:
    page = client.get("/")
    assert page.status_code == 200 and '<script src="/static/page.js"' in page.text
    assert "script-src 'self'" in page.headers["content-security-policy"]
    assert not re.search(r"https?://", page.text)
    for asset in ("/static/page.js", "/static/page.css"):
        response = client.get(asset)
        assert response.status_code == 200 and "http://" not in response.text.replace(
            "http://www.w3.org/2000/svg", ""
        )


def test_a_store_another_program_has_locked_is_503_naming_it_not_404(
    client: TestClient, recording: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Looking at a round logs the look; with the store locked (a real SQLite lock, the 30 s wait
    cut short) that cannot be written now: 503 naming the database, not "not found"."""
    monkeypatch.setattr(RecordingStore, "busy_timeout_s", 0.05)
    _login(client)
    lock = sqlite3.connect(recording / "index.sqlite", isolation_level=None)
    lock.execute("BEGIN EXCLUSIVE")
    try:
        response = client.get("/api/rounds/1")
    finally:
        lock.execute("ROLLBACK")
        lock.close()
    assert response.status_code == 503
    assert "index.sqlite: cannot write to the index database (database is locked)" in (
        response.json()["detail"])
    assert client.get("/api/rounds/1").status_code == 200


def test_search_by_card_amount_and_dealer_and_an_unknown_criterion_refused(
        client: TestClient) -> None:
    """``card=JH`` finds the rounds that dealt it (any spelling of the code); a criterion the
    search does not take is refused (400), never ignored (which would answer every round)."""
    _login(client)
    found = client.get("/api/rounds", params={"card": "9h"}).json()["rounds"]
    assert "sb-1" in {r["round"] for r in found}
    none = client.get("/api/rounds", params={"card": "9H", "round": "bj-3"}).json()["rounds"]
    assert none == []
    bad_card = client.get("/api/rounds", params={"card": "1Z"})
    assert bad_card.status_code == 422 and bad_card.json()["detail"].startswith("bad search: card")
    envy = client.get("/api/rounds", params={"amount": "50", "round": "sb-1"}).json()["rounds"]
    assert [r["round"] for r in envy] == ["sb-1"]  # seat 2's Envy line: +50.00
    assert client.get("/api/rounds", params={"amount": "51", "round": "sb-1"}).json()[
        "rounds"] == []
    for params in ({"cards": "JH"}, {"colour": "red", "seat": "1"}):
        refused = client.get("/api/rounds", params=params)
        assert refused.status_code == 400, params
        assert "no such criterion" in refused.json()["detail"]
    twice = client.get("/api/rounds?seat=1&seat=2")
    assert twice.status_code == 400 and "more than once" in twice.json()["detail"]


def test_the_round_view_explains_each_seat_in_words_and_lines(client: TestClient) -> None:
    _login(client, "audrey")
    view = _open_round(client, "sb-1")
    texts = [(e["text"], e["by"]) for e in view["events"]]
    assert texts[1] == ("seat 1 bets 10.00", "dealer")
    assert texts[4] == ("7D to seat 1 hand 1", "camera")
    assert ("KD to the dealer", "camera") in texts
    assert ("seat 1: hit", "table") in texts
    lines = {seat["seat"]: seat for seat in view["settlement_lines"]["seats"]}
    assert [(line["kind"], line["amount"]) for line in lines[2]["lines"]] == [
        ("bust", "-5.00"), ("envy", "50.00")]
    assert lines[2]["net"] == "45.00" and not lines[2]["net_differs"]
    assert [line["kind"] for line in lines[1]["lines"]] == ["bonus-21", "super-bonus"]
    assert view["integrity"]["intact"] and view["integrity"]["verdict"] == "INTACT"
    assert all(f["file_state"] == "intact" for f in view["frames"])
    assert [f["event_index"] for f in view["frames"]] == sorted(
        f["event_index"] for f in view["frames"])


def test_an_altered_frame_or_settlement_fails_the_round_view(client: TestClient,
                                                             recording: Path) -> None:
    """A frame's bytes changed on disk, and a settlement edited in the database: the view says
    FAILED naming each, shows the re-settled figure beside the recorded one, and the frame's
    bytes are served with the SHA-256 they have now."""
    _login(client, "audrey")
    view = _open_round(client, "sb-1")
    frame = view["frames"][0]
    path = recording / frame["file"]
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(data))
    store = RecordingStore(recording)
    record = next(r for r in store.records(kinds=("settlement",)) if r.round_id == "sb-1")
    store.close()
    conn = sqlite3.connect(recording / "index.sqlite")
    conn.execute("UPDATE records SET body = ? WHERE seq = ?",
                 (record.body_text.replace('"net":"45.00"', '"net":"450.00"'), record.seq))
    conn.commit()
    conn.close()

    view = _open_round(client, "sb-1")
    integrity = view["integrity"]
    assert not integrity["intact"] and integrity["verdict"] == "FAILED"
    problems = "\n".join(integrity["problems"])
    assert f"{frame['file']} of record {frame['seq']}" in problems and "was altered" in problems
    assert f"record {record.seq} (settlement, round sb-1 on T1) was altered" in problems
    assert "seat net: recorded 450.00, replayed 45.00" in problems
    altered = next(f for f in view["frames"] if f["seq"] == frame["seq"])
    assert altered["file_state"] == "altered" and altered["sha256_now"] != altered["sha256"]
    seat2 = next(s for s in view["settlement_lines"]["seats"] if s["seat"] == 2)
    assert seat2["net"] == "45.00" and seat2["recorded_net"] == "450.00" and seat2["net_differs"]
    served = client.get(f"/api/frames/{frame['seq']}")
    assert served.status_code == 200
    assert served.headers["x-frame-sha256"] == hashlib.sha256(served.content).hexdigest()
    assert served.headers["x-frame-intact"] == "no"


def test_the_pdf_report_opens_names_the_round_and_its_hash_is_recorded(
        client: TestClient, recording: Path, tmp_path: Path) -> None:
    """The PDF renders (``pdftoppm``, Debian's poppler-utils, which scripts/test.sh installs),
    its text names the round, its payouts, its verdict and the chain head, and the SHA-256 of
    the bytes served is in the export's access record."""
    import shutil
    import subprocess

    assert shutil.which("pdftoppm") and shutil.which("pdftotext"), \
        "install Debian's poppler-utils: apt-get install -y poppler-utils"
    _login(client, "audrey")
    key = client.get("/api/rounds", params={"round": "sb-1"}).json()["rounds"][0]["key"]
    response = client.get(f"/api/rounds/{key}/export.pdf")
    assert response.status_code == 200 and response.headers["content-type"] == "application/pdf"
    assert "attachment" in response.headers["content-disposition"]
    pdf = tmp_path / "report.pdf"
    pdf.write_bytes(response.content)
    digest = hashlib.sha256(response.content).hexdigest()
    assert response.headers["x-report-sha256"] == digest
    subprocess.run(["pdftoppm", "-png", "-r", "40", "-f", "1", "-l", "1", str(pdf),
                    str(tmp_path / "page")], check=True, timeout=60)
    (rendered,) = tmp_path.glob("page-*.png")  # numbered as wide as the page count
    assert rendered.read_bytes().startswith(b"\x89PNG")
    text = subprocess.run(["pdftotext", "-layout", str(pdf), "-"], check=True, timeout=60,
                          capture_output=True, text=True).stdout
    assert "Incident report: round sb-1 on table T1" in text
    assert "INTACT" in text and "SUPER BONUS" in text and "1215.00" in text
    head_seq = int(text.split("Chain head when exported")[1].split("record ")[1].split(",")[0])
    assert head_seq > 0
    assert text.count("frame record ") == 20  # a key and a video frame per card
    store = RecordingStore(recording)
    try:
        exports = [e for e in access_log(store, 50) if e["action"] == "export"]
    finally:
        store.close()
    assert exports[0]["target"]["sha256"] == digest
    assert exports[0]["target"]["format"] == "pdf" and exports[0]["target"]["verdict"] == "INTACT"
