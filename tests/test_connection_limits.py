"""The web servers' connection limits (``dealer_assist.connection_limits``) on a real uvicorn
server and real sockets: the parts the dealer's screen test (tests/table/test_screen.py) does
not reach, with a small ASGI app whose one slow path answers after a wait, and whose two
WebSockets either wait for the client to leave or send it 8 MiB and end."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
import ssl
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import uvicorn
from websockets.sync.client import connect

from dealer_assist import connection_limits
from dealer_assist.connection_limits import BOUNDED_LOOP, BackpressuredWebSocket, bounded_h11
from tests.surveillance import certificates

SLOW_S = 1.5
BIG = 8 * 1024 * 1024  # more than both kernels' socket buffers take on loopback


async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    if scope["type"] == "lifespan":
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            else:
                await send({"type": "lifespan.shutdown.complete"})
                return
    if scope["type"] == "websocket":
        await receive()  # websocket.connect
        await send({"type": "websocket.accept"})
        if scope["path"] == "/big":
            await send({"type": "websocket.send", "bytes": bytes(BIG)})
            return  # uvicorn closes the connection, with most of the 8 MiB still to send
        while (await receive())["type"] != "websocket.disconnect":
            pass
        return
    if scope["path"] == "/slow":
        await asyncio.sleep(SLOW_S)
    await send({"type": "http.response.start", "status": 200,
                "headers": [(b"content-length", b"2")]})
    await send({"type": "http.response.body", "body": b"ok"})


def _served(**tls: str) -> Iterator[tuple[int, uvicorn.Server]]:
    listening = socket.create_server(("127.0.0.1", 0))
    server = uvicorn.Server(uvicorn.Config(app, log_level="error", loop=BOUNDED_LOOP,
                                           http=bounded_h11(header_timeout_s=0.5,
                                                            per_address=4),
                                           ws=BackpressuredWebSocket, **tls))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [listening]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.02)
    yield listening.getsockname()[1], server
    server.should_exit = True
    thread.join(10)


@pytest.fixture
def served() -> Iterator[tuple[int, uvicorn.Server]]:
    yield from _served()


@pytest.fixture
def port(served: tuple[int, uvicorn.Server]) -> int:
    return served[0]


@pytest.fixture
def tls_port(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[int, Path]]:
    monkeypatch.setattr(connection_limits, "HANDSHAKE_TIMEOUT_S", 0.5)
    certfile, keyfile = certificates.self_signed(tmp_path)
    for port, _ in _served(ssl_certfile=str(certfile), ssl_keyfile=str(keyfile)):
        yield port, certfile


def _read_until_closed(connection: socket.socket, wait_s: float) -> bytes:
    connection.settimeout(wait_s)
    data = b""
    try:
        while chunk := connection.recv(65536):
            data += chunk
    except TimeoutError:
        pass
    return data


def test_a_pipelined_request_slower_than_the_header_deadline_is_answered(port: int) -> None:
    """Two requests sent at once, the second answering after longer than the deadline for
    headers: both are answered (once, the deadline was armed on the second while it was served,
    and closed the connection before its answer)."""
    with socket.create_connection(("127.0.0.1", port), timeout=5) as connection:
        connection.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n"
                           b"GET /slow HTTP/1.1\r\nHost: x\r\n\r\n")
        data = _read_until_closed(connection, SLOW_S + 2.0)
    assert data.count(b"HTTP/1.1 200") == 2


def test_a_kept_alive_connection_sending_no_next_request_is_closed(port: int) -> None:
    """After an answer, the next request's headers are timed too."""
    with socket.create_connection(("127.0.0.1", port), timeout=5) as connection:
        connection.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\nGET / HTTP/1.1\r\n")
        data = _read_until_closed(connection, 10.0)
    assert data.count(b"HTTP/1.1 200") == 1 and data.endswith(b"ok")


def test_closed_connections_free_their_place_under_the_cap(port: int) -> None:
    """Connections the deadline or the client closed no longer count: after four held and
    closed, four more are served."""
    for turn in range(3):
        held = [socket.create_connection(("127.0.0.1", port), timeout=5) for _ in range(4)]
        for connection in held:
            connection.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        for number, connection in enumerate(held):
            answer = _read_until_closed(connection, 0.2)
            assert answer.startswith(b"HTTP/1.1 200"), (turn, number, answer)
        for connection in held:
            connection.close()
        time.sleep(0.1)


def closed_by_server(connection: socket.socket, wait_s: float) -> bool:
    """Whether the server closes ``connection`` within ``wait_s`` (it sends nothing before)."""
    connection.settimeout(wait_s)
    try:
        return connection.recv(1) == b""
    except TimeoutError:
        return False
    except ConnectionResetError:
        return True


def https_get(port: int, certfile: Path, raw: socket.socket | None = None) -> bytes:
    """A GET over TLS (on ``raw``, a connection already open, if given), the answer's start
    (b"": the server closed the connection)."""
    context = ssl.create_default_context(cafile=str(certfile))
    raw = raw or socket.create_connection(("127.0.0.1", port), timeout=5)
    try:
        with context.wrap_socket(raw, server_hostname="127.0.0.1") as connection:
            connection.sendall(b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            return connection.recv(65536)
    except (ssl.SSLError, ConnectionError):
        return b""
    finally:
        raw.close()


def test_tls_handshakes_not_finished_are_closed_and_a_real_client_is_served(
        tls_port: tuple[int, Path]) -> None:
    """Connections opened over TLS that never finish the handshake (nothing sent, or a
    ClientHello cut short) are closed once the handshake's time is up (once, asyncio held
    each for 60 s, uncounted by the cap: a client could hold as many file descriptors as it
    opened in a minute); more of them than the cap are all closed, and a client that does the
    handshake is answered."""
    port, certfile = tls_port
    held = [socket.create_connection(("127.0.0.1", port), timeout=5) for _ in range(6)]
    held[0].sendall(b"\x16\x03\x01\x02\x00\x01")  # a ClientHello's first bytes, no more
    try:
        assert all(closed_by_server(connection, 10.0) for connection in held)
    finally:
        for connection in held:
            connection.close()
    assert https_get(port, certfile).startswith(b"HTTP/1.1 200")


@pytest.fixture
def tls_capped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[int, Path]]:
    """A TLS server whose loop holds 4 connections an address (read as it starts), each with
    10 s for its handshake, and closes one over the cap a turn of the loop."""
    monkeypatch.setattr(connection_limits, "PER_ADDRESS", 4)
    monkeypatch.setattr(connection_limits, "REFUSALS_A_TURN", 1)
    monkeypatch.setattr(connection_limits, "HANDSHAKE_TIMEOUT_S", 10.0)
    certfile, keyfile = certificates.self_signed(tmp_path)
    for port, _ in _served(ssl_certfile=str(certfile), ssl_keyfile=str(keyfile)):
        yield port, certfile


def test_over_tls_connections_count_under_the_cap_before_their_handshake(
        tls_capped: tuple[int, Path], caplog: pytest.LogCaptureFixture) -> None:
    """Over TLS a connection counts under its address's cap from the moment it is accepted
    (once, only once its handshake was done: asyncio gives each connection a 256 KiB buffer at
    once, and 3,000 opened from one address and left silent took a screen's process from 63 to
    971 MiB). Four held silent fill the cap, so three more are each closed at once (one a turn
    of the loop) and said so; the four stay open, one of them can still do its handshake and be
    answered, and once they are closed a client is served again."""
    caplog.set_level(logging.WARNING)
    port, certfile = tls_capped
    held = [socket.create_connection(("127.0.0.1", port), timeout=5) for _ in range(4)]
    try:
        more = [socket.create_connection(("127.0.0.1", port), timeout=5) for _ in range(3)]
        try:
            assert all(closed_by_server(connection, 5.0) for connection in more)
        finally:
            for connection in more:
                connection.close()
        assert not any(closed_by_server(connection, 0.2) for connection in held)
        assert https_get(port, certfile, held.pop()).startswith(b"HTTP/1.1 200")
    finally:
        for connection in held:
            connection.close()
    assert "connection closed: 127.0.0.1: over 4 connections at once" in caplog.text
    deadline = time.monotonic() + 5
    while not (answer := https_get(port, certfile)) and time.monotonic() < deadline:
        time.sleep(0.05)  # the server may see the closed connections leave a moment later
    assert answer.startswith(b"HTTP/1.1 200")


def test_over_tls_connections_the_server_closes_leave_the_count(
        tls_port: tuple[int, Path]) -> None:
    """Connections whose handshake the server gave up on leave their address's count though
    the client still holds them open: after as many silent ones as the cap holds filled it
    and timed out, a client at that address is served again."""
    port, certfile = tls_port  # handshakes time out after 0.5 s; the cap is 32
    held = [socket.create_connection(("127.0.0.1", port), timeout=5)
            for _ in range(connection_limits.PER_ADDRESS)]
    try:
        assert all(closed_by_server(connection, 10.0) for connection in held)
        deadline = time.monotonic() + 5
        while not (answer := https_get(port, certfile)) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert answer.startswith(b"HTTP/1.1 200")
    finally:
        for connection in held:
            connection.close()


def test_open_websockets_count_under_the_cap_until_they_are_gone(port: int) -> None:
    """Four WebSockets open from one address fill its cap, so a fifth connection is closed at
    once (once, an upgraded WebSocket left the count: one address could hold as many as it
    opened); one of them closed, a request is served again."""
    with contextlib.ExitStack() as held:
        sockets = [held.enter_context(connect(f"ws://127.0.0.1:{port}/wait", open_timeout=5))
                   for _ in range(4)]
        with socket.create_connection(("127.0.0.1", port), timeout=5) as fifth:
            fifth.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
            assert closed_by_server(fifth, 5.0)
        sockets[0].close()
        deadline = time.monotonic() + 5
        while True:
            with socket.create_connection(("127.0.0.1", port), timeout=5) as again:
                again.sendall(b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
                answer = _read_until_closed(again, 2.0)
            if answer.startswith(b"HTTP/1.1 200") or time.monotonic() > deadline:
                break
            time.sleep(0.05)  # the server may take the closed WebSocket's leave a moment later
        assert answer.startswith(b"HTTP/1.1 200")


def test_a_closing_websocket_whose_client_reads_nothing_is_cut_off(
        served: tuple[int, uvicorn.Server], monkeypatch: pytest.MonkeyPatch,
        caplog: pytest.LogCaptureFixture) -> None:
    """The app sends 8 MiB and ends; the client, after its handshake, reads nothing. The
    server's close waits for the rest to be sent, at most ``CLOSE_FLUSH_S`` (once, for as long
    as the client kept the connection: its file descriptor, its buffer and its place under the
    cap); then the connection is cut off and gone."""
    monkeypatch.setattr(connection_limits, "CLOSE_FLUSH_S", 0.5)
    caplog.set_level(logging.DEBUG, connection_limits.__name__)
    port, server = served
    client = socket.socket()
    client.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    client.connect(("127.0.0.1", port))
    try:
        client.sendall(b"GET /big HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\n"
                       b"Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
                       b"Sec-WebSocket-Version: 13\r\n\r\n")
        client.settimeout(5)
        assert client.recv(12) == b"HTTP/1.1 101"
        deadline = time.monotonic() + 10
        while server.server_state.connections and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not server.server_state.connections
        assert any("cut off" in r.getMessage() for r in caplog.records)  # not sent in full
    finally:
        client.close()
