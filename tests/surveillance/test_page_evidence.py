"""The surveillance page as evidence, in headless Chromium, on a recording the real table made
(``dealer-assist demo --record``: the table loop, the shoe simulator on a pty, the synthetic
overhead camera read by the shipped models, the signed store): an officer finds a round by a card
in it, sees its frames in order with the times they were grabbed and written, every line of its
settlement, and a red verdict when a frame's bytes or its settlement were altered.

Needs Debian's chromium (see test_browser.py; DEALER_ASSIST_NO_BROWSER=1 skips deliberately).
Screenshots: test-artifacts/surveillance-evidence-*.png.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from dealer_assist.surveillance import RecordingStore
from dealer_assist.surveillance.evidence_check import trusted_keys
from dealer_assist.vision.artwork import installed_designs
from tests.surveillance.test_browser import ARTIFACTS, CHROMIUM, PASSWORD, _serve

ROOT = Path(__file__).resolve().parents[2]

if os.environ.get("DEALER_ASSIST_NO_BROWSER") == "1":
    pytest.skip("DEALER_ASSIST_NO_BROWSER=1", allow_module_level=True)


@pytest.fixture(scope="module")
def table_recording(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Three rounds the demo table dealt and recorded, with its camera on (its questions'
    frames are what the store keeps)."""
    if not installed_designs():
        pytest.fail("the demo's camera needs the card artwork: run scripts/install-card-art.sh")
    recording = tmp_path_factory.mktemp("evidence") / "table"
    done = subprocess.run(
        [sys.executable, "-m", "dealer_assist", "demo", "--headless", "--rounds", "3",
         "--seed", "12", "--record", str(recording)],
        capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    return recording


@pytest.fixture
def server(table_recording: Path) -> Iterator[str]:
    """The page, checking signatures against the table's own public key (the demo keeps its
    key files beside the recording, as a technician would hand them over)."""
    public = table_recording.with_name(table_recording.name + ".evidence") / "table.pub"
    yield from _serve(table_recording, trusted_keys=trusted_keys([str(public)]))


def _framed_round(recording: Path) -> dict[str, Any]:
    """The settled round with the most frames: its id, a card dealt in it, its frame records
    and its recorded settlement."""
    store = RecordingStore(recording)
    try:
        rounds = [r for r in store.indexed_rounds() if r.status == "settled"]
        chosen = max(rounds, key=lambda r: r.frames)
        assert chosen.frames >= 1, "the demo table asked no question in 3 rounds: no frame"
        records = list(store.records(round_key=chosen.round_key))
    finally:
        store.close()
    cards = [r.body["card"] for r in records if r.kind == "event"
             and r.body.get("type") == "card" and r.body.get("card")]
    frames = [r for r in records if r.kind == "frame"]
    settlement = next(r for r in records if r.kind == "settlement")
    return {"id": chosen.round_id, "card": cards[-1], "frames": frames,
            "settlement": settlement}


def _open(page: Any, round_id: str) -> None:
    page.locator("#results tbody tr", has_text=round_id).first.click()
    from playwright.sync_api import expect

    expect(page.locator("#round-title")).to_contain_text(f"Round {round_id}")


def test_an_officer_finds_a_round_by_card_and_sees_at_once_whether_it_is_intact(
        server: str, table_recording: Path) -> None:
    assert CHROMIUM.exists(), "install Debian's chromium: apt-get install -y chromium"
    from playwright.sync_api import expect, sync_playwright

    chosen = _framed_round(table_recording)
    lines = [line for seat in chosen["settlement"].body["seats"] for line in seat["lines"]]
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=str(CHROMIUM), args=["--headless", "--no-sandbox", "--disable-gpu"])
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        errors: list[str] = []
        page.on("pageerror", lambda error: errors.append(str(error)))
        page.goto(server)
        page.fill("#login-name", "audrey")
        page.fill("#login-password", PASSWORD)
        page.click("#login-submit")
        expect(page.locator("#search-count")).to_have_text("3 round(s)")

        page.fill("#f-card", chosen["card"].lower())  # typed as an officer might
        page.click("#search-submit")
        expect(page.locator("#results tbody tr", has_text=chosen["id"])).to_have_count(1)
        _open(page, chosen["id"])

        verdict = page.locator("#integrity")
        expect(verdict).to_have_class("intact")
        expect(page.locator("#integrity-verdict")).to_contain_text("INTACT")
        # the frames in order, each with the time the camera grabbed it and when it was written
        rows = page.locator("#frame-list tbody tr")
        expect(rows).to_have_count(len(chosen["frames"]))
        shown = [[cell.strip() for cell in row.split("\t")] for row in rows.all_inner_texts()]
        events = [int(row[1]) for row in shown]
        assert events == sorted(events)
        captured = [row[2] for row in shown]
        assert all(when.endswith("Z") and len(when) == 24 for when in captured), captured
        assert [row[0] for row in shown] == [str(r.seq) for r in sorted(
            chosen["frames"], key=lambda r: (r.body["event_index"], r.body["captured_at"],
                                             r.seq))]
        assert all("intact" in row[4] for row in shown)
        # every line of the settlement, each hand's wager and every side bet
        expect(page.locator("#settlement tr.line")).to_have_count(len(lines))
        table = [[cell.strip() for cell in row.split("\t")]
                 for row in page.locator("#settlement tr.line").all_inner_texts()]
        assert [row[:5] for row in table] == [
            [str(line["seat"]), "" if line["hand"] is None else str(line["hand"] + 1),
             line["kind"], line["reason"], line["amount"]] for line in lines]
        expect(page.locator("#settlement tr.differs")).to_have_count(0)
        # the alarms the table raised in this round (its alarms.jsonl says which), linked to it
        raised = [json.loads(line) for line in
                  (table_recording / "alarms.jsonl").read_text().splitlines()]
        mine = [alarm for alarm in raised if alarm["round"] == chosen["id"]]
        expect(page.locator("#alarm-list li")).to_have_count(len(mine))
        expect(page.locator("#integrity-notes")).to_contain_text("table.pub")
        # the event log in words, hands numbered from 1, and who says so
        log = page.locator("#event-log tbody")
        expect(log).to_contain_text(f"{chosen['card']} to ")
        expect(log).to_contain_text("hand 1")
        expect(log).to_contain_text("shoe card")
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "surveillance-evidence-intact.png"),
                        full_page=True)

        # one byte of a frame changed on disk: red at once, the frame named
        frame = chosen["frames"][0]
        path = table_recording / frame.file
        original = path.read_bytes()
        altered = bytearray(original)
        altered[len(altered) // 2] ^= 0xFF
        path.write_bytes(bytes(altered))
        try:
            _open(page, chosen["id"])
            expect(verdict).to_have_class("failed")
            expect(page.locator("#integrity-verdict")).to_contain_text("INTEGRITY FAILED")
            expect(page.locator("#integrity-problems")).to_contain_text(
                f"{frame.file} of record {frame.seq}")
            expect(page.locator("#frame-list tr.altered")).to_have_count(1)
            assert page.evaluate(
                "getComputedStyle(document.getElementById('integrity')).backgroundColor"
            ) == "rgb(204, 0, 0)"
            page.screenshot(path=str(ARTIFACTS / "surveillance-evidence-altered-frame.png"),
                            full_page=True)
        finally:
            path.write_bytes(original)
        _open(page, chosen["id"])
        expect(verdict).to_have_class("intact")

        # the settlement edited in the database: red, the re-settled figure beside the edited one
        settlement = chosen["settlement"]
        body = settlement.body
        seat = body["seats"][0]
        edited_net = f"{int(seat['net'].split('.')[0]) + 100}.{seat['net'].split('.')[1]}"
        seat["net"] = edited_net
        conn = sqlite3.connect(table_recording / "index.sqlite")
        try:
            conn.execute("UPDATE records SET body = ? WHERE seq = ?",
                         (json.dumps(body, sort_keys=True, separators=(",", ":")),
                          settlement.seq))
            conn.commit()
        finally:
            conn.close()
        _open(page, chosen["id"])
        expect(verdict).to_have_class("failed")
        expect(page.locator("#integrity-problems")).to_contain_text(
            f"record {settlement.seq} (settlement, round {chosen['id']}")
        edited = page.locator("#settlement tr.differs")
        expect(edited).to_have_count(1)
        expect(edited).to_contain_text(f"recorded {edited_net}")
        page.screenshot(path=str(ARTIFACTS / "surveillance-evidence-edited-settlement.png"),
                        full_page=True)
        browser.close()
    assert errors == []
