"""The room's page in headless Chromium: it knows it serves the floor, finds a round by card and
seat across the floor's tables, narrows to one table, and opens the round with its events,
settlement, key frame (the room's copy, with its detections drawn) and replay, and puts it on
legal hold and lifts the hold; over a real
JetStream and a real PostgreSQL room store.

Needs Debian's chromium at /usr/bin/chromium, as tests/surveillance/test_browser.py does
(DEALER_ASSIST_NO_BROWSER=1 skips). A screenshot is kept in test-artifacts/floor-round.png.
"""

from __future__ import annotations

import os
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import uvicorn

from dealer_assist.surveillance.access import add_operator
from dealer_assist.surveillance.page_guard import page_site
from dealer_assist.surveillance.web import PageSettings, create_app
from tests.floor.broker import Broker
from tests.floor.floor import BoxTable, RoomBackend, all_arrived, forward, open_room, wait_for
from tests.postgres import fresh_schema, server_url
from tests.surveillance.page import CHEAP, PASSWORD

CHROMIUM = Path("/usr/bin/chromium")
ARTIFACTS = Path(__file__).parents[2] / "test-artifacts"

if os.environ.get("DEALER_ASSIST_NO_BROWSER") == "1":
    pytest.skip("DEALER_ASSIST_NO_BROWSER=1", allow_module_level=True)


@pytest.fixture
def room_page(tmp_path: Path) -> Iterator[str]:
    """A room that took two tables' rounds from the floor (T1: the golden logs bj-3, bj-2; T2:
    bj-3, bj-2, bj-1), its page served on a free port of 127.0.0.1."""
    broker = Broker(tmp_path / "jetstream").start()
    tables = [BoxTable(tmp_path / "boxes", name) for name in ("T1", "T2")]
    try:
        with fresh_schema("browser") as schema:
            backend = RoomBackend(tmp_path / "room", (server_url(), schema))
            room = open_room(backend, broker.url, tables)
            host, _ = forward(tables, broker.url)
            try:
                tables[0].play(2)
                tables[1].play(3)
                assert wait_for(all_arrived(backend, tables))
            finally:
                host.stop()
                room.stop()
            store = backend.open()
            try:
                add_operator(store, "olga", PASSWORD, "operator", passwords=CHEAP)
            finally:
                store.close()
            with socket.socket() as probe:
                probe.bind(("127.0.0.1", 0))
                port = probe.getsockname()[1]
            settings = PageSettings(site=page_site("127.0.0.1", port), passwords=CHEAP)
            running = uvicorn.Server(uvicorn.Config(
                create_app(backend.open, settings), host="127.0.0.1", port=port,
                log_level="warning"))
            thread = threading.Thread(target=running.run, daemon=True)
            thread.start()
            deadline = time.monotonic() + 30
            while not running.started:
                assert time.monotonic() < deadline, "the page server did not start"
                time.sleep(0.05)
            try:
                yield f"http://127.0.0.1:{port}"
            finally:
                running.should_exit = True
                thread.join(timeout=10)
    finally:
        broker.stop()


def test_the_floor_page_finds_a_round_by_card_and_seat_across_tables_and_opens_it(
        room_page: str) -> None:
    assert CHROMIUM.exists(), "install Debian's chromium: apt-get install -y chromium"
    from playwright.sync_api import expect, sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=str(CHROMIUM), args=["--headless", "--no-sandbox", "--disable-gpu"])
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        errors: list[str] = []
        page.on("pageerror", lambda error: errors.append(str(error)))
        page.goto(room_page)
        page.fill("#login-name", "olga")
        page.fill("#login-password", PASSWORD)
        page.click("#login-submit")
        expect(page.locator("#who")).to_have_text("olga (operator)")
        expect(page.locator("#mode")).to_contain_text("the floor")
        expect(page.locator("#search-count")).to_have_text("5 round(s)")  # both tables' rounds

        # bj-3 (on both tables) is the only round with a 9S and a bet on seat 2
        page.fill("#f-card", "9s")
        page.fill("#f-seat", "2")
        page.click("#search-submit")
        expect(page.locator("#search-count")).to_have_text("2 round(s)")
        rows = page.locator("#results tbody tr")
        expect(rows).to_have_count(2)
        tables = sorted(rows.nth(i).locator("td").first.inner_text() for i in range(2))
        assert tables == ["T1", "T2"]
        for i in range(2):
            expect(rows.nth(i).locator("td").nth(1)).to_have_text("bj-3")

        # the table filter lists the floor's tables and narrows the search to one
        page.select_option("#f-table", "T2")
        page.click("#search-submit")
        expect(page.locator("#search-count")).to_have_text("1 round(s)")
        rows.first.click()
        expect(page.locator("#round-title")).to_contain_text("Round bj-3 on T2")
        expect(page.locator("#round-title")).to_contain_text("box T2")
        expect(page.locator("#settlement")).to_contain_text("seat 2 net")
        expect(page.locator("#event-log tbody tr")).to_have_count(10)
        expect(page.locator("#export-link")).to_be_hidden()

        # the first card's key frame: the room's copy, intact, its detection drawn over it
        page.locator("#event-log tr.has-frame").first.click()
        image = page.locator("#frame-box img.frame-image")
        expect(image).to_be_visible()
        page.wait_for_function("document.querySelector('#frame-box img').naturalWidth === 480")
        expect(page.locator("#frame-box svg rect.detection")).to_have_count(1)
        expect(page.locator("#frame-box svg text").last).to_have_text("AS 0.97")
        expect(page.locator("#frame-caption")).to_contain_text("intact, SHA-256")

        page.click("#replay-button")
        expect(page.locator("#replay-result")).to_have_text(
            "Replay matches the recorded settlement.")
        # an operator puts the round on legal hold, saying why; the view shows it, then lifts it
        page.click("#hold-put")
        expect(page.locator("#hold-result")).to_contain_text("say why")
        page.fill("#hold-why", "dispute 4411")
        page.click("#hold-put")
        expect(page.locator("#round-hold")).to_contain_text("ON LEGAL HOLD since")
        expect(page.locator("#round-hold")).to_contain_text("(olga): dispute 4411")
        expect(page.locator("#hold-put")).to_be_hidden()
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "floor-round.png"), full_page=True)

        # the round view was recorded (with its frames) in the room's access log
        page.click("button[data-tab=access-tab]")
        expect(page.locator("#access")).to_contain_text("floor-view")
        page.click("button[data-tab=search-tab]")
        page.fill("#hold-why", "dispute 4411 settled")
        page.click("#hold-lift")
        expect(page.locator("#round-hold")).to_have_text("")
        expect(page.locator("#hold-put")).to_be_visible()
        browser.close()
    assert errors == []


def test_the_floor_pages_statistics_and_storage_list_every_table(room_page: str) -> None:
    assert CHROMIUM.exists(), "install Debian's chromium: apt-get install -y chromium"
    from playwright.sync_api import expect, sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=str(CHROMIUM), args=["--headless", "--no-sandbox", "--disable-gpu"])
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        errors: list[str] = []
        page.on("pageerror", lambda error: errors.append(str(error)))
        page.goto(room_page)
        page.fill("#login-name", "olga")
        page.fill("#login-password", PASSWORD)
        page.click("#login-submit")
        expect(page.locator("#mode")).to_contain_text("the floor")

        # Statistics: a row per table of the floor (T1 dealt 2 rounds, T2 3)
        page.click("button[data-tab=stats-tab]")
        expect(page.locator("#stats-table-label")).to_be_visible()
        page.select_option("#stats-by", "table")
        rows = page.locator("#stats tbody tr")
        expect(rows).to_have_count(2)
        expect(rows.nth(0).locator("td").nth(0)).to_have_text("T1")  # redrawn by table
        assert [(rows.nth(i).locator("td").nth(0).inner_text(),
                 rows.nth(i).locator("td").nth(1).inner_text()) for i in range(2)] == [
            ("T1", "2"), ("T2", "3")]
        # narrowed to one table by the filter the floor's tables fill
        page.select_option("#stats-table", "T2")
        expect(rows).to_have_count(1)
        expect(rows.first.locator("td").first).to_have_text("T2")

        # Storage: the floor's records per table and hour, the prune form (a table's) hidden
        page.click("button[data-tab=storage-tab]")
        expect(page.locator("#storage-summary")).to_contain_text("in the database")
        expect(page.locator("#prune-form")).to_be_hidden()
        tables = page.locator("#storage tbody tr td:first-child")
        expect(tables.first).to_be_visible()
        assert set(tables.all_inner_texts()) == {"T1", "T2"}
        browser.close()
    assert errors == []
