"""The request guard (dealer_assist/webguard.py) on its own: each check refuses with its 4xx
and a JSON message before the app runs, the body limit while the body streams in, and what it
lets through reaches the app whole."""

from __future__ import annotations

import asyncio

import pytest
from fastapi import FastAPI, Request, WebSocket
from fastapi.testclient import TestClient
from starlette.websockets import WebSocketDisconnect

from dealer_assist.webguard import MAX_BODY, RequestGuard, Site

SITE = Site(frozenset({"testserver", "127.0.0.1"}), "http", 80)


def guarded_echo() -> tuple[TestClient, list[bytes]]:
    """A client of an app that records every body it is handed, behind the guard."""
    app = FastAPI()
    seen: list[bytes] = []

    @app.post("/echo")
    async def echo(request: Request) -> dict[str, int]:
        seen.append(await request.body())
        return {"bytes": len(seen[-1])}

    @app.get("/echo")
    def look() -> dict[str, str]:
        return {"ok": "yes"}

    return TestClient(RequestGuard(app, lambda: SITE)), seen


JSON = {"content-type": "application/json"}


@pytest.mark.parametrize(("headers", "status", "detail"), [
    ({"host": "attacker.example"}, 421, "does not answer to the host 'attacker.example'"),
    ({"host": "attacker.example:80"}, 421, "does not answer to the host"),
    ({"host": "testserver:notaport"}, 421, "does not answer to the host"),
    ({"origin": "http://evil.example"}, 403, "the origin 'http://evil.example' are refused"),
    ({"origin": "https://testserver"}, 403, "are refused"),  # another scheme: another origin
    ({"origin": "http://testserver:8080"}, 403, "are refused"),  # another port
    ({"origin": "null"}, 403, "are refused"),  # a sandboxed frame or a file
    ({"sec-fetch-site": "same-site"}, 403, "(Sec-Fetch-Site: same-site) are refused"),
    ({"sec-fetch-site": "cross-site"}, 403, "(Sec-Fetch-Site: cross-site) are refused"),
    ({"content-type": "text/plain"}, 415, "must send application/json, got 'text/plain'"),
    ({"content-type": "application/x-www-form-urlencoded"}, 415, "must send application/json"),
    ({"content-type": "multipart/form-data; boundary=x"}, 415, "must send application/json"),
])
def test_each_foreign_request_is_refused_before_the_app(headers, status, detail):
    client, seen = guarded_echo()
    response = client.post("/echo", content=b'{"a": 1}', headers={**JSON, **headers})
    assert response.status_code == status
    assert detail in response.json()["detail"]
    assert response.headers["connection"] == "close"  # nothing more is read from it
    assert seen == []


def test_own_origin_and_no_origin_pass_and_the_body_arrives_whole():
    client, seen = guarded_echo()
    body = b'{"a": "' + b"x" * (MAX_BODY - 10) + b'"}'
    for origin in ({"origin": "http://testserver", "sec-fetch-site": "same-origin"},
                   {"origin": "http://127.0.0.1:80"}, {"sec-fetch-site": "none"}, {}):
        response = client.post("/echo", content=body,
                               headers={"content-type": "application/json; charset=utf-8",
                                        **origin})
        assert response.status_code == 200, response.text
    assert seen == [body] * 4
    assert client.get("/echo").json() == {"ok": "yes"}  # a GET needs no content type


def test_an_announced_length_over_the_limit_is_refused_unread():
    client, seen = guarded_echo()
    response = client.post("/echo", content=b"[" + b" " * MAX_BODY + b"]", headers=JSON)
    assert response.status_code == 413
    assert response.json()["detail"] == (
        f"the body is {MAX_BODY + 2} bytes: at most {MAX_BODY} are taken")
    assert seen == []


def test_a_streamed_body_is_refused_once_it_passes_the_limit_without_reading_the_rest():
    """No Content-Length (chunked): the guard stops pulling chunks as soon as the limit is
    passed, so a 100 MB stream costs it 16 KiB."""
    app_called = []

    async def app(scope, receive, send):
        app_called.append(scope)

    chunk = b" " * 4096
    pulled = 0

    async def receive():
        nonlocal pulled
        pulled += 1
        return {"type": "http.request", "body": chunk, "more_body": pulled < 25_000}

    sent = []

    async def send(message):
        sent.append(message)

    scope = {"type": "http", "method": "POST", "path": "/echo",
             "headers": [(b"host", b"testserver"), (b"content-type", b"application/json")]}
    asyncio.run(RequestGuard(app, lambda: SITE)(scope, receive, send))
    assert sent[0]["status"] == 413 and b"passed 16384 bytes" in sent[1]["body"]
    assert pulled == MAX_BODY // len(chunk) + 1  # the chunk that passed it, and no more
    assert app_called == []


def test_a_websocket_handshake_is_checked_for_host_and_origin():
    app = FastAPI()

    @app.websocket("/ws")
    async def hello(socket: WebSocket) -> None:
        await socket.accept()
        await socket.send_text("hello")
        await socket.close()

    client = TestClient(RequestGuard(app, lambda: SITE))
    with client.websocket_connect("/ws", headers={"origin": "http://testserver"}) as socket:
        assert socket.receive_text() == "hello"
    for headers in ({"origin": "http://evil.example"}, {"host": "attacker.example"}):
        with pytest.raises(WebSocketDisconnect) as refused, \
                client.websocket_connect("/ws", headers=headers):
            pass
        assert refused.value.code == 1008
