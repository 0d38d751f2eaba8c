"""The screen's web app: the page and its assets are served locally, touches are validated and
reach the loop, and every change is pushed over the WebSocket."""

from __future__ import annotations

import socket
from decimal import Decimal

import pytest
from fastapi.testclient import TestClient

from dealer_assist.connection_limits import PER_ADDRESS
from dealer_assist.rules import Action, Card, CardTarget
from dealer_assist.table.loop import TableLoop
from dealer_assist.table.recording import MemoryRecorder
from dealer_assist.table.runner import TableRunner
from dealer_assist.table.screen import ScreenServer, TouchError, create_app, parse_touch
from dealer_assist.table.screen_access import COOKIE, ScreenAccess
from dealer_assist.table.sources import (
    CorrectCard,
    Decide,
    KeyCard,
    PlaceBet,
    ShoeLink,
    ShoeProblem,
)
from dealer_assist.webguard import Site
from tests.test_connection_limits import closed_by_server

#: The site of FastAPI's TestClient (its requests name the host "testserver").
TEST_SITE = Site(frozenset({"testserver"}), "http", 80)


def paired_client(runner: TableRunner) -> TestClient:
    """A client of ``runner``'s screen app holding the paired screen's cookie."""
    access = ScreenAccess.ephemeral()
    client = TestClient(create_app(runner, access, lambda: TEST_SITE))
    client.cookies.set(COOKIE, access.session)
    return client


@pytest.fixture
def runner():
    loop = TableLoop("h17-ddd-6", MemoryRecorder(), has_camera=False)
    loop.dealer = "D1"  # signed in (signing in: test_sign_in.py)
    with TableRunner(loop) as running:
        running.submit(ShoeLink(True, "test"))
        running.wait_idle()
        yield running


def test_page_and_assets_are_local(runner):
    client = paired_client(runner)
    page = client.get("/")
    assert page.status_code == 200
    assert "/static/screen.js" in page.text and "http" not in page.text.replace("http-equiv", "")
    for asset in ("/static/screen.js", "/static/screen.css"):
        response = client.get(asset)
        assert response.status_code == 200 and len(response.text) > 500
        assert "cdn" not in response.text.lower()


def test_touch_reaches_the_loop_and_is_pushed(runner):
    client = paired_client(runner)
    with client.websocket_connect("/ws") as socket:
        first = socket.receive_json()
        assert first["mode"] == "shoe only" and first["round"] is None
        response = client.post("/api/input", json={"type": "bet", "seat": 4, "amount": "25"})
        assert response.status_code == 200
        pushed = socket.receive_json()
        while pushed["round"] is None:
            pushed = socket.receive_json()
        assert pushed["round"]["seats"][0]["seat"] == 4
        assert pushed["round"]["seats"][0]["wager"] == "25.00"
        runner.submit(ShoeProblem("jam at the exit rollers"))
        pushed = socket.receive_json()
        while not pushed["alarms"]:
            pushed = socket.receive_json()
        assert pushed["alarms"][0]["text"] == "jam at the exit rollers"
    assert client.get("/api/view").json()["alarms"][0]["title"] == "shoe reports a problem"


@pytest.mark.parametrize(
    ("message", "field"),
    [
        ({"type": "bet", "seat": "4", "amount": "25"}, "'seat'"),
        ({"type": "bet", "seat": 4, "amount": "2.555"}, "amount"),
        ({"type": "bet", "seat": 4, "amount": "5", "wager": "side"}, "'wager'"),
        ({"type": "decide", "seat": 1, "action": "fold"}, "fold"),
        ({"type": "void", "reason": " "}, "'reason'"),
        ({"type": "dance"}, "dance"),
        ({"type": "card", "card": "ZZ"}, "'card' must be a card code"),
        ({"type": "card"}, "'card' must be a card code"),
        ({"type": "card", "card": "7H", "to": "seat 3"}, "'to' must be"),
        ({"type": "correct", "card": "7H"}, "'at' must say where"),
        ({"type": "correct", "card": "7H", "at": {"hand": 1}}, "'at' must be"),
        ({"type": "correct", "card": "1H", "at": "dealer"}, "'card' must be a card code"),
        ({"type": "correct", "card": "7H", "at": "dealer", "index": -1}, "'index' must be 0"),
        ({"type": "correct", "card": "7H", "at": "dealer", "index": "1"}, "'index' must be a"),
        ({"type": "correct", "card": "7H", "at": "dealer", "was": "TX"}, "'was' must be a card"),
        ({"type": "bet", "seat": int("9" * 4200), "amount": "5"}, "'seat' is too large"),
        ({"type": "ack", "id": 2**31}, "'id' is too large"),
        ({"type": "card", "card": "7H", "to": {"seat": 10**4000}}, "'to' names too large"),
        ({"type": "correct", "card": "7H", "at": {"seat": 1, "hand": 2**31}},
         "'at' names too large"),
        ([], "JSON object"),
    ],
)
def test_bad_touches_are_refused_by_field(runner, message, field):
    with pytest.raises(TouchError, match=field):
        parse_touch(message)
    if isinstance(message, dict):
        response = paired_client(runner).post("/api/input", json=message)
        assert response.status_code == 400 and field.strip("'") in response.json()["detail"]


@pytest.mark.parametrize(("body", "detail"), [
    # JSON decoded as Python does it took the last key, and a float for a number: both
    # recorded another amount than the one sent (500.00, 25.00)
    (b'{"type": "bet", "seat": 1, "amount": "5", "amount": "500"}',
     "ambiguous JSON (key 'amount' is given twice)"),
    (b'{"type": "bet", "seat": 2, "amount": 24.999999999999999999}',
     "amount must be in whole cents"),
    (b'{"type": "bet", "seat": 2, "amount": NaN}', "ambiguous JSON (NaN is not"),
    (b'{"type": "bet", "seat": 4, "amount": "10", "player": {"id": 7}}',
     "'player' must be text"),
    # a lone surrogate in the view made every later screen update fail (HTTP 500, WebSocket
    # closed) until the round was gone
    (b'{"type": "bet", "seat": 3, "amount": "10", "player": "\\ud800"}',
     "'player' must not hold control characters or lone surrogates"),
    (b'{"type": "void", "reason": "foreign \\u001b[2J card"}',
     "'reason' must not hold control characters"),
    (b'{"type": "void", "reason": "' + b"x" * 201 + b'"}',
     "'reason' must be at most 200 characters, got 201"),
    (b"[" * 8000 + b"]" * 8000, "not valid JSON (nested too deeply)"),  # within the body limit
    (b'{"type": "void", "reason": "\xff"}', "not valid JSON (not UTF-8 text)"),
    ('{"type": "bet", "seat": 1, "amount": "5"}'.encode("utf-16"),
     "not valid JSON (not UTF-8 text)"),
    (b'{"type": "bet", "seat": 1, "amount": ' + b"9" * 5000 + b"}",
     "not valid JSON (a number with too many digits)"),
])
def test_touches_read_another_way_than_sent_are_refused_and_the_screen_goes_on(
        runner, body, detail):
    client = paired_client(runner)
    response = client.post("/api/input", content=body,
                           headers={"content-type": "application/json"})
    assert response.status_code == 400 and detail in response.json()["detail"]
    view = client.get("/api/view")
    assert view.status_code == 200 and view.json()["round"] is None


def test_a_screen_that_cannot_listen_says_why(runner):
    """It said "in use by another program?" whatever the cause, after uvicorn's tracebacks."""
    first = ScreenServer(runner, "127.0.0.1", 0).start()
    try:
        for host, port, why in [
            ("127.0.0.1", first.port, "Address already in use"),
            ("192.0.2.1", 0, "Cannot assign requested address"),  # not this machine's
            ("127.0.0.1\x00", 0, "must not contain null character"),
        ]:
            with pytest.raises(OSError, match=f"the screen could not listen on .*{why}"):
                ScreenServer(runner, host, port).start()
    finally:
        first.stop()


def test_parse_touch_values():
    assert parse_touch({"type": "bet", "seat": 2, "amount": "10", "wager": "match"}) == PlaceBet(
        2, Decimal("10.00"), "match"
    )
    assert parse_touch({"type": "decide", "seat": 3, "action": "Double", "hand": 1}) == Decide(
        3, Action.DOUBLE, None, 1
    )
    assert parse_touch({"type": "card", "card": "7h"}) == KeyCard(Card.parse("7H"))
    assert parse_touch({"type": "card", "card": "KD", "to": "dealer"}) == KeyCard(
        Card.parse("KD"), CardTarget())
    assert parse_touch({"type": "card", "card": "KD", "to": {"seat": 3, "hand": 1}}) == KeyCard(
        Card.parse("KD"), CardTarget(3, 1))
    approved = {"supervisor": "S9", "pin": "1357"}
    assert parse_touch({"type": "correct", "card": "5d", "at": "dealer", **approved}).item == \
        CorrectCard(Card.parse("5D"), CardTarget(), supervisor="S9")
    assert parse_touch({"type": "correct", "card": "7H", "at": {"seat": 2}, **approved}).item \
        == CorrectCard(Card.parse("7H"), CardTarget(2), supervisor="S9")
    assert parse_touch({"type": "correct", "card": "7H", "at": {"seat": 2, "hand": 1},
                        "index": 0, **approved}).item == CorrectCard(
        Card.parse("7H"), CardTarget(2, 1), 0, supervisor="S9")


def test_every_dealer_input_reads_back_from_the_json_the_page_posts():
    """``touch_json`` (what the demo posts, as the page does) and ``parse_touch`` agree."""
    from dealer_assist.table.simulation.demo import touch_json
    from dealer_assist.table.sources import (
        AcknowledgeAlarm,
        CloseInsurance,
        ConfirmFelt,
        FinishRound,
        Insure,
        NewShoe,
        SignIn,
        SignOut,
        VoidRound,
    )
    from dealer_assist.table.staff import Attested

    for item in (PlaceBet(2, Decimal("25.00"), "match", "P-7"),
                 Decide(3, Action.DOUBLE, Decimal("5.00"), 1), Insure(2, Decimal("5.00")),
                 FinishRound(), CloseInsurance(), NewShoe(0, touched=True), AcknowledgeAlarm(4),
                 ConfirmFelt(), SignOut(),
                 KeyCard(Card.parse("7H")), KeyCard(Card.parse("KD"), CardTarget()),
                 KeyCard(Card.parse("2C"), CardTarget(4, 1))):
        assert parse_touch(touch_json(item)) == item
    for item in (VoidRound("foreign card", "S9"), SignIn("D-12"),  # these carry a PIN
                 CorrectCard(Card.parse("5D"), CardTarget(), supervisor="S9"),
                 CorrectCard(Card.parse("7H"), CardTarget(2), supervisor="S9"),
                 CorrectCard(Card.parse("7H"), CardTarget(2, 1), supervisor="S9"),
                 CorrectCard(Card.parse("9C"), CardTarget(2, 1), 0, supervisor="S9"),
                 CorrectCard(Card.parse("9C"), CardTarget(2), 1, Card.parse("8C"), "S9")):
        touched = parse_touch(touch_json(item, "97531"))
        assert isinstance(touched, Attested) and touched.item == item
        assert touched.pin == "97531" and "97531" not in repr(touched)


def _answers(port: int) -> bool:
    with socket.create_connection(("127.0.0.1", port), timeout=5) as connection:
        connection.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        return connection.recv(12).startswith(b"HTTP/1.1 ")


def test_connections_that_never_finish_their_headers_are_closed_and_capped(runner):
    """A client that opens connections and never finishes a request's headers held each one
    open as long as it liked (in a review, 300 such took every file descriptor of a table whose
    limit was 256, the table's own files included). Now one address holds at most
    ``PER_ADDRESS`` connections at once, each closed once its headers are late, and a request
    sent whole is answered as before."""
    patient = ScreenServer(runner, "127.0.0.1", 0, header_timeout_s=60.0).start()
    held = []
    try:
        for _ in range(PER_ADDRESS + 4):
            connection = socket.create_connection(("127.0.0.1", patient.port), timeout=5)
            connection.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n")  # never finished
            held.append(connection)
        # the cap closes the extra ones as they are accepted, the rest stay open
        assert all(closed_by_server(connection, 5.0) for connection in held[PER_ADDRESS:])
        assert not any(closed_by_server(connection, 0.05) for connection in held[:PER_ADDRESS])
        for connection in held:
            connection.close()
        held.clear()
        assert _answers(patient.port)
    finally:
        for connection in held:
            connection.close()
        patient.stop()
    hasty = ScreenServer(runner, "127.0.0.1", 0, header_timeout_s=0.5).start()
    try:
        with socket.create_connection(("127.0.0.1", hasty.port), timeout=5) as connection:
            connection.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n")
            assert closed_by_server(connection, 30.0)
        assert _answers(hasty.port)
    finally:
        hasty.stop()
