"""The page in headless Chromium: log in, find a round by search, step to its frames; the
session cookie's flags, and a state-changing call carrying the session's CSRF token.

Needs Debian's chromium at /usr/bin/chromium (``apt-get install -y chromium``); Playwright drives
it (``playwright install`` cannot download a browser here). Set DEALER_ASSIST_NO_BROWSER=1 to skip
on a machine without it; otherwise a missing browser fails the test rather than hiding it.
A screenshot is kept in test-artifacts/surveillance-round.png.
"""

from __future__ import annotations

import os
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import uvicorn

from dealer_assist.surveillance import RecordingStore
from dealer_assist.surveillance.access import add_operator
from dealer_assist.surveillance.page_guard import page_site
from dealer_assist.surveillance.web import PageSettings, create_app
from tests.surveillance.certificates import self_signed
from tests.surveillance.factory import GOLDEN_COUNT, HAND_HELD_ROUND, build_recording

CHROMIUM = Path("/usr/bin/chromium")
ARTIFACTS = Path(__file__).parents[2] / "test-artifacts"
PASSWORD = "correct horse battery"

if os.environ.get("DEALER_ASSIST_NO_BROWSER") == "1":
    pytest.skip("DEALER_ASSIST_NO_BROWSER=1", allow_module_level=True)


@pytest.fixture
def server(recording: Path) -> Iterator[str]:
    yield from _serve(recording)


@pytest.fixture
def day_floor_server(recording: Path) -> Iterator[str]:
    """The page with a one-day retention floor (the recording's frames are older)."""
    yield from _serve(recording, retention_floor_hours=24.0)


@pytest.fixture
def tls_server(recording: Path, tmp_path: Path) -> Iterator[str]:
    """The page over HTTPS with a self-signed certificate (the browser told to accept it)."""
    certfile, keyfile = self_signed(tmp_path)
    yield from _serve(recording, tls={"ssl_certfile": str(certfile),
                                      "ssl_keyfile": str(keyfile)})


@pytest.fixture
def hand_held_server(tmp_path: Path) -> Iterator[str]:
    build_recording(tmp_path, [HAND_HELD_ROUND])
    yield from _serve(tmp_path)


def _serve(recording: Path, tls: dict[str, str] | None = None,
           **settings: Any) -> Iterator[str]:
    """The page on a free port of 127.0.0.1 (over HTTPS with ``tls``'s uvicorn arguments)."""
    store = RecordingStore(recording)
    add_operator(store, "audrey", PASSWORD, "auditor")
    add_operator(store, "olga", PASSWORD, "operator")
    store.close()
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    site = page_site("127.0.0.1", port, tls=bool(tls))
    config = uvicorn.Config(create_app(recording, PageSettings(site=site, **settings)),
                            host="127.0.0.1", port=port, log_level="warning", **(tls or {}))
    running = uvicorn.Server(config)
    thread = threading.Thread(target=running.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not running.started:
        assert time.monotonic() < deadline, "the page server did not start"
        time.sleep(0.05)
    yield f"{'https' if tls else 'http'}://127.0.0.1:{port}"
    running.should_exit = True
    thread.join(timeout=10)


def _log_in(page: Any, name: str) -> None:
    page.fill("#login-name", name)
    page.fill("#login-password", PASSWORD)
    page.click("#login-submit")


def test_the_page_finds_a_round_by_search_and_shows_its_frames(server: str) -> None:
    assert CHROMIUM.exists(), "install Debian's chromium: apt-get install -y chromium"
    from playwright.sync_api import expect, sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=str(CHROMIUM), args=["--headless", "--no-sandbox", "--disable-gpu"]
        )
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        errors: list[str] = []
        page.on("pageerror", lambda error: errors.append(str(error)))
        page.goto(server)

        page.fill("#login-name", "audrey")
        page.fill("#login-password", "wrong password")
        page.click("#login-submit")
        expect(page.locator("#login-error")).to_have_text("wrong operator name or password")
        expect(page.locator("#app-view")).to_be_hidden()

        page.fill("#login-password", PASSWORD)
        page.click("#login-submit")
        expect(page.locator("#who")).to_have_text("audrey (auditor)")
        expect(page.locator("#search-count")).to_have_text(f"{GOLDEN_COUNT} round(s)")

        page.fill("#f-round", "sb-1")
        page.click("#search-submit")
        expect(page.locator("#search-count")).to_have_text("1 round(s)")
        page.locator("#results tbody tr").first.click()
        expect(page.locator("#round-title")).to_contain_text("Round sb-1 on T1")
        expect(page.locator("#settlement")).to_contain_text("1215.00")
        expect(page.locator("#frame-empty")).to_have_text("No frame at this event.")

        page.locator("#event-log tr.has-frame").first.click()  # the first card: event 4
        expect(page.locator("#step-label")).to_have_text("event 4 of 17")
        image = page.locator("#frame-box img.frame-image")
        expect(image).to_be_visible()
        page.wait_for_function("document.querySelector('#frame-box img').naturalWidth === 480")
        expect(page.locator("#frame-box svg rect.detection")).to_have_count(1)
        expect(page.locator("#frame-box svg polygon.zone")).to_have_count(2)
        expect(page.locator("#frame-box svg text").last).to_have_text("7D 0.97")

        page.click("#step-next")
        expect(page.locator("#step-label")).to_have_text("event 5 of 17")
        expect(page.locator("#frame-box svg text").last).to_have_text("KS 0.97")
        page.click("#replay-button")
        expect(page.locator("#replay-result")).to_have_text(
            "Replay matches the recorded settlement."
        )

        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "surveillance-round.png"), full_page=True)
        browser.close()
    assert errors == []


def test_the_page_marks_the_cards_a_hand_held_dealer_entered(hand_held_server: str) -> None:
    """The officer sees at a glance which cards no reader stands behind: keyed, or corrected
    from what the camera read."""
    assert CHROMIUM.exists(), "install Debian's chromium: apt-get install -y chromium"
    from playwright.sync_api import expect, sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=str(CHROMIUM), args=["--headless", "--no-sandbox", "--disable-gpu"]
        )
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.goto(hand_held_server)
        _log_in(page, "audrey")
        expect(page.locator("#search-count")).to_have_text("1 round(s)")
        page.locator("#results tbody tr").first.click()
        entered = page.locator("#event-log tr.entered")
        expect(entered).to_have_count(2)
        expect(entered.first).to_contain_text("keyed in by the dealer")
        expect(entered.last).to_contain_text("corrected by the dealer from 2D")
        assert page.locator("#event-log tbody tr").count() == 10
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "surveillance-hand-held-round.png"), full_page=True)
        browser.close()


def test_the_cookie_is_httponly_and_strict_and_the_page_sends_its_csrf_token(
    day_floor_server: str, recording: Path
) -> None:
    """An operator prunes old video from the Storage tab: the call carries the session's CSRF
    token (a bare fetch from the same page without it is refused), the retention floor refuses
    too short a policy, and logging out (also state-changing) works."""
    assert CHROMIUM.exists(), "install Debian's chromium: apt-get install -y chromium"
    from playwright.sync_api import expect, sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=str(CHROMIUM), args=["--headless", "--no-sandbox", "--disable-gpu"]
        )
        context = browser.new_context(viewport={"width": 1400, "height": 1000})
        page = context.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda error: errors.append(str(error)))
        page.goto(day_floor_server)
        _log_in(page, "olga")
        expect(page.locator("#who")).to_have_text("olga (operator)")
        (cookie,) = context.cookies()
        assert (cookie["name"], cookie["httpOnly"], cookie["sameSite"], cookie["secure"]) == (
            "da_surveillance", True, "Strict", False)  # Secure over TLS: test_tls.py
        assert page.evaluate("document.cookie") == ""  # the page's script cannot read it

        bare = page.evaluate("""fetch('/api/retention/prune', {method: 'POST',
            headers: {'Content-Type': 'application/json'}, body: '{"older_than_hours": 48}'})
            .then((r) => r.status)""")
        assert bare == 403  # without the token, even from the page itself

        page.click("button[data-tab=storage-tab]")
        expect(page.locator("#prune-form")).to_be_visible()
        page.fill("#prune-hours", "1")
        page.click("#prune-submit")
        expect(page.locator("#prune-result")).to_contain_text(
            "keeps every frame younger than the retention policy")
        page.fill("#prune-hours", "48")
        page.click("#prune-submit")
        expect(page.locator("#prune-result")).to_contain_text("pruned ")
        store = RecordingStore(recording)
        prunes = [record.body for record in store.records(kinds=("prune",))]
        store.close()
        assert len(prunes) == 1 and prunes[0]["user"] == "olga" and prunes[0]["frames"]
        assert f"pruned {len(prunes[0]['frames'])} frame(s)" in page.inner_text("#prune-result")

        page.click("#logout")
        expect(page.locator("#login-view")).to_be_visible()
        assert page.evaluate("fetch('/api/me').then((r) => r.status)") == 401
        browser.close()
    assert errors == []


def test_over_https_the_cookie_is_secure_and_the_page_works(tls_server: str) -> None:
    assert CHROMIUM.exists(), "install Debian's chromium: apt-get install -y chromium"
    from playwright.sync_api import expect, sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=str(CHROMIUM), args=["--headless", "--no-sandbox", "--disable-gpu"]
        )
        context = browser.new_context(ignore_https_errors=True)
        page = context.new_page()
        page.goto(tls_server)
        _log_in(page, "audrey")
        expect(page.locator("#who")).to_have_text("audrey (auditor)")
        (cookie,) = context.cookies()
        assert (cookie["httpOnly"], cookie["sameSite"], cookie["secure"]) == (
            True, "Strict", True)
        expect(page.locator("#search-count")).to_have_text(f"{GOLDEN_COUNT} round(s)")
        page.click("#logout")
        expect(page.locator("#login-view")).to_be_visible()
        browser.close()
