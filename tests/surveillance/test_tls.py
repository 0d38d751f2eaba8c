"""``surveillance serve --certfile/--keyfile``: the page over HTTPS, its cookie ``Secure``; over
plain HTTP the cookie is HttpOnly and SameSite=Strict but cannot be Secure.

A real ``dealer-assist`` process with a self-signed certificate made here (``cryptography``), and
a client that trusts only that certificate.
"""

from __future__ import annotations

import http.client
import json
import socket
import ssl
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.surveillance.certificates import self_signed
from tests.surveillance.page import PASSWORD, add_operators, login, page_client

ROOT = Path(__file__).parents[2]


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture
def tls_page(recording: Path, tmp_path: Path) -> Iterator[tuple[int, ssl.SSLContext]]:
    from dealer_assist.surveillance import RecordingStore
    from dealer_assist.surveillance.access import add_operator

    store = RecordingStore(recording)
    add_operator(store, "audrey", PASSWORD, "auditor")  # the served page hashes at the default
    store.close()
    certfile, keyfile = self_signed(tmp_path)
    port = _free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "dealer_assist", "surveillance", "serve", str(recording),
         "--port", str(port), "--certfile", str(certfile), "--keyfile", str(keyfile)],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    context = ssl.create_default_context(cafile=str(certfile))
    try:
        deadline = time.monotonic() + 60
        while True:
            assert server.poll() is None, server.communicate()[1]
            assert time.monotonic() < deadline, "the page did not start"
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=1):
                    break
            except OSError:
                time.sleep(0.2)
        yield port, context
    finally:
        server.terminate()
        server.wait(timeout=30)


def test_the_page_serves_https_with_a_secure_cookie(
    tls_page: tuple[int, ssl.SSLContext],
) -> None:
    port, context = tls_page
    connection = http.client.HTTPSConnection("127.0.0.1", port, context=context, timeout=30)
    body = json.dumps({"name": "audrey", "password": PASSWORD})
    connection.request("POST", "/api/login", body=body, headers={
        "Content-Type": "application/json", "Origin": f"https://127.0.0.1:{port}"})
    response = connection.getresponse()
    assert response.status == 200, response.read()
    set_cookie = response.getheader("set-cookie", "")
    cookie = set_cookie.lower()
    assert "secure" in cookie and "httponly" in cookie and "samesite=strict" in cookie
    assert response.getheader("strict-transport-security") == "max-age=31536000"
    token = set_cookie.split(";")[0]
    response.read()
    connection.request("GET", "/api/me", headers={"Cookie": token})
    me = connection.getresponse()
    assert me.status == 200 and json.loads(me.read())["name"] == "audrey"
    connection.close()
    with socket.create_connection(("127.0.0.1", port), timeout=10) as plain:
        plain.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        assert not plain.recv(64).startswith(b"HTTP/1.1 200")  # no clear-text answer


def test_over_plain_http_the_cookie_is_httponly_and_strict_but_not_secure(
    recording: Path,
) -> None:
    add_operators(recording, audrey="auditor")
    client = page_client(recording)
    response = client.post("/api/login", json={"name": "audrey", "password": PASSWORD})
    cookie = response.headers["set-cookie"].lower()
    assert "httponly" in cookie and "samesite=strict" in cookie and "secure" not in cookie
    login(client, "audrey")
    assert "strict-transport-security" not in client.get("/api/me").headers


def test_a_certificate_without_its_key_is_refused(recording: Path, tmp_path: Path) -> None:
    certfile, _keyfile = self_signed(tmp_path)
    result = subprocess.run(
        [sys.executable, "-m", "dealer_assist", "surveillance", "serve", str(recording),
         "--certfile", str(certfile)], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert result.returncode == 2
    assert "--certfile and --keyfile go together" in result.stderr


def test_a_certificate_tls_cannot_load_is_named(recording: Path, tmp_path: Path) -> None:
    certfile, keyfile = self_signed(tmp_path)
    keyfile.write_text("not a key")
    result = subprocess.run(
        [sys.executable, "-m", "dealer_assist", "surveillance", "serve", str(recording),
         "--certfile", str(certfile), "--keyfile", str(keyfile)],
        cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert f"--keyfile {keyfile}" in result.stderr
