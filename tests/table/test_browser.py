"""The dealer's screen in headless Chromium (Debian's ``chromium`` driven by Playwright):
seats render, payouts appear with their reasons, an injected alarm appears at once, and touch
input places a bet and a decision. Each page is paired first (its one-time pairing URL); unpaired,
it shows nothing of the table, and a page of another origin in the same browser moves nothing.
A screenshot is kept under ``test-artifacts/``."""

from __future__ import annotations

import http.server
import json
import shutil
import threading
from decimal import Decimal
from pathlib import Path

import pytest

from dealer_assist.rules import Action, Card, CardTarget, RuleSet
from dealer_assist.table.loop import TableLoop
from dealer_assist.table.recording import MemoryRecorder
from dealer_assist.table.runner import TableRunner
from dealer_assist.table.screen import ScreenServer
from dealer_assist.table.simulation.world import Player, SimulatedTable
from dealer_assist.table.sources import (
    DEALER_SPOT,
    CameraLink,
    CameraMoved,
    Decide,
    FeltCard,
    HoleCardShown,
    PlaceBet,
    ShoeCard,
    ShoeLink,
    ShoeUnread,
)
from dealer_assist.table.staff import HashCost, StaffDesk, StaffRegistry

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"

pytestmark = pytest.mark.skipif(
    not Path(CHROMIUM).exists(), reason="needs Debian's chromium (apt-get install -y chromium)"
)
#: The table's staff here: a dealer and a supervisor, hashed cheaply (the default cost is
#: tests/table/test_sign_in.py's).
STAFF = {"D-7": ("dealer", "482913"), "S-3": ("supervisor", "730146")}


def staff_desk(directory: Path) -> StaffDesk:
    registry = StaffRegistry(directory / "table.staff.json",
                             HashCost(time_cost=1, memory_kib=8, parallelism=1))
    for staff_id, (role, pin) in STAFF.items():
        registry.add(staff_id, role, pin)
    return StaffDesk(registry)


def approve(page, supervisor: str = "S-3") -> None:
    """A supervisor approves, in the band the page opened, what the dealer touched."""
    page.locator("#approve").wait_for(state="visible", timeout=5000)
    page.fill("#approve-supervisor", supervisor)
    page.fill("#approve-pin", STAFF[supervisor][1])
    page.locator("#approve-go").tap()


@pytest.fixture
def table():
    loop = TableLoop("h17-ddd-6", MemoryRecorder(), table_id="T7", has_camera=False)
    loop.dealer = "D1"  # signed in (signing in: test_sign_in.py)
    runner = TableRunner(loop).start()
    screen = ScreenServer(runner, "127.0.0.1", 0).start()
    runner.submit(ShoeLink(True, "test shoe"))
    yield runner, screen
    screen.stop()
    runner.stop()


@pytest.fixture
def page():
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM, args=["--headless", "--no-sandbox", "--disable-gpu"]
        )
        # bypass_csp: Playwright's wait_for_function evaluates a string, which the page's own
        # Content-Security-Policy (no eval) refuses
        context = browser.new_context(viewport={"width": 1024, "height": 600}, has_touch=True,
                                      bypass_csp=True)
        yield context.new_page()
        browser.close()


class HandHeld:
    """A hand-held table (no shoe, a camera whose readings the test hands in) with its screen
    open in the page at 800x480."""

    def __init__(self, page, staff: StaffDesk):
        self.recorder = MemoryRecorder()
        self.loop = TableLoop("h17-ddd-6", self.recorder, table_id="T8", has_shoe=False,
                              has_camera=True)
        self.loop.dealer = "D1"  # signed in (signing in: test_sign_in.py)
        self.runner = TableRunner(self.loop).start()
        self.screen = ScreenServer(self.runner, "127.0.0.1", 0, staff).start()
        self.runner.submit(CameraLink(True, "test camera"))
        page.set_viewport_size({"width": 800, "height": 480})
        page.goto(self.screen.pairing_url())  # paired, then the page
        page.wait_for_selector("#link.link-up")

    def read(self, *cards: tuple[str | None, CardTarget]) -> None:
        """The camera reads each card where it lies (None: face down)."""
        for code, spot in cards:
            self.runner.submit(FeltCard(None if code is None else Card.parse(code), spot))

    def stop(self) -> None:
        self.screen.stop()
        self.runner.stop()


@pytest.fixture
def hand_held(page, tmp_path):
    table = HandHeld(page, staff_desk(tmp_path))
    yield table
    table.stop()


def play_rounds(runner: TableRunner, rounds: int, seed: int) -> SimulatedTable:
    world = SimulatedTable(
        RuleSet.preset("h17-ddd-6"), [Player(s, f"P{s}") for s in (1, 2, 3, 5, 7)], seed=seed
    )
    world.camera_sees = False
    for number in range(1, rounds + 1):
        for _, item in world.round(number):
            runner.submit(item)
    assert runner.wait_until(lambda loop: loop.rounds_played == rounds, 10)
    return world


def test_screen_shows_seats_payouts_alarms_and_takes_a_bet(table, page):
    runner, screen = table
    world = play_rounds(runner, 3, seed=5)
    page.goto(screen.pairing_url())  # paired, then the page
    page.wait_for_selector("#link.link-up")
    page.wait_for_selector(".seat-total")
    assert page.inner_text("#mode") == "SHOE ONLY"
    assert "camera: not fitted" in page.inner_text("#devices")

    settlement = world.settlements[-1]
    for seat in settlement.seats:
        box = page.locator(f"#seat-{seat.seat}")
        text = box.inner_text()
        assert f"Seat {seat.seat}" in text
        for hand in seat.hands:
            for code in hand.cards:
                assert box.locator(f'.card[data-code="{code}"]').count() >= 1
        for line in seat.lines:
            assert line.reason in text  # every payout line's reason is on screen
        total = box.locator(".seat-total")
        assert total.get_attribute("data-net") == f"{seat.net:.2f}"
        verb = "TAKE" if seat.net < 0 else ("PUSH" if seat.net == 0 else "PAY")
        assert total.locator(".amount").inner_text() == f"{verb} ${abs(seat.net):,.2f}"
    assert page.locator("#seat-4.empty").count() == 1
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "table-screen-settled.png"), full_page=True)

    assert page.locator("#alarms").is_hidden()
    runner.submit(CameraMoved("markers moved 14 px"))
    band = page.locator("#alarms")
    band.wait_for(state="visible", timeout=5000)
    assert "CAMERA MOVED" in band.inner_text().upper() and "markers moved 14 px" in (
        band.inner_text()
    )
    page.screenshot(path=str(ARTIFACTS / "table-screen-alarm.png"), full_page=True)
    band.locator("button").first.tap()
    band.wait_for(state="hidden", timeout=5000)

    page.locator("#seat-button-4").tap()
    page.locator("#chip-25").tap()
    page.locator("#chip-5").tap()
    assert page.inner_text("#bet-amount") == "$30"
    page.locator("#place-bet").tap()
    page.wait_for_selector("#seat-4:not(.empty) .wager")
    assert page.locator("#key-card").is_hidden()  # the shoe deals every card: nothing to key
    assert page.locator("#seat-4 .wager").inner_text() == "$30.00"
    seats = runner.view()["round"]["seats"]
    assert [(s["seat"], s["wager"]) for s in seats] == [(4, "30.00")]
    page.screenshot(path=str(ARTIFACTS / "table-screen-bet.png"), full_page=True)

    for code in ("9S", "6D", "8H", "KD"):  # seat 4: 9 + 8 = 17; dealer 6 up, K in the hole
        runner.submit(ShoeCard(Card.parse(code)))
    page.locator("#decide-stand").wait_for(timeout=5000)
    assert page.inner_text("#acting-label") == "Seat 4 hand 1:"
    page.locator("#decide-stand").tap()
    page.wait_for_selector("#seat-4 .hand .status:has-text('stood')")
    runner.submit(ShoeCard(Card.parse("7C")))  # the dealer draws to 23
    page.wait_for_selector("#seat-4 .seat-total")
    assert page.locator("#seat-4 .seat-total .amount").inner_text() == "PAY $30.00"
    page.set_viewport_size({"width": 800, "height": 480})  # the small touchscreen
    assert page.locator("#seat-4 .seat-total").is_visible()
    assert page.locator("#seat-7").is_hidden()  # while paying, only the seats paid show
    page.screenshot(path=str(ARTIFACTS / "table-screen-800x480.png"))


def test_a_burst_of_alarms_never_hides_the_payouts(table, page):
    """Fourteen alarms on the small touchscreen: the same alarm raised twice is one row with
    its count, newest first; the band holds only the rows that fit in a quarter of the screen,
    each whole, and counts the rest, so every seat's payout stays in view; one OK acknowledges
    every alarm of its row and brings up the next."""
    runner, screen = table
    world = play_rounds(runner, 1, seed=5)
    for number in range(14):  # seats 1-7, twice each: "stand entered but no round is in play"
        runner.submit(Decide(1 + number % 7, Action.STAND))
    assert runner.wait_until(lambda loop: len(loop.active_alarms()) == 14, 10)
    page.set_viewport_size({"width": 800, "height": 480})
    page.goto(screen.pairing_url())  # paired, then the page
    page.wait_for_selector(".seat-total")
    rows = page.locator("#alarms .alarm")
    rows.first.wait_for(timeout=5000)
    shown = rows.count()
    assert 1 <= shown < 7
    assert "seat 7:" in rows.first.inner_text() and "\u00d72" in rows.first.inner_text()
    assert page.inner_text("#alarms .alarm-more").startswith(f"+{7 - shown} more alarms")
    band = page.locator("#alarms").bounding_box()
    assert band is not None and band["height"] <= 480 / 4
    for row in range(shown):  # whole: nothing of a row's text cut off
        assert page.evaluate(
            "i => { const t = document.querySelectorAll('#alarms .alarm .text')[i];"
            " return t.scrollWidth <= t.clientWidth && t.scrollHeight <= t.clientHeight; }", row)
    seen = set()
    for _ in range(len(world.settlements[-1].seats)):
        for seat in world.settlements[-1].seats:
            total = page.locator(f"#seat-{seat.seat} .seat-total")
            if total.is_visible():
                box = total.bounding_box()
                assert box is not None and band["y"] + band["height"] <= box["y"]
                assert box["y"] + box["height"] <= 480
                seen.add(seat.seat)
        if page.locator("#pay-step").is_visible():
            page.locator("#pay-step").tap()
    assert seen == {seat.seat for seat in world.settlements[-1].seats}
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "table-screen-alarm-burst-800x480.png"))
    rows.first.locator("button").tap()
    assert runner.wait_until(lambda loop: len(loop.active_alarms()) == 12, 10)
    page.wait_for_function(
        "document.querySelector('#alarms .alarm .text').innerText.startsWith('seat 6:')")
    assert page.inner_text("#alarms .alarm-more").startswith(f"+{6 - shown} more alarm")


def test_with_an_ace_up_the_screen_hides_the_peek_until_insurance_is_closed(table, page):
    """Shoe only: the shoe has read a dealer blackjack under the ace, but the screen shows the
    hole card face down, no hand to act and INSURE for the chosen seat; Close insurance then
    settles the round, the insurance paid 2:1."""
    runner, screen = table
    page.goto(screen.pairing_url())  # paired, then the page
    page.wait_for_selector("#link.link-up")
    for seat in (1, 2):
        runner.submit(PlaceBet(seat, Decimal("10")))
    for code in ("9S", "AH", "AC", "7H", "KC", "KD"):  # seat 1 16, seat 2 blackjack, dealer A K
        runner.submit(ShoeCard(Card.parse(code)))
    page.locator("#close-insurance").wait_for(state="visible", timeout=5000)
    assert page.locator("#dealer .card.down").count() == 1
    assert page.inner_text("#acting-label") == "No hand to act"
    assert "THEN CLOSE INSURANCE" in page.inner_text("#dealer")  # upper case by its style
    page.locator("#seat-button-1").tap()
    page.locator("text=INSURE $5.00").tap()
    page.wait_for_function("document.querySelector('#seat-1')?.innerText.includes('ins $5.00')")
    page.locator("#close-insurance").tap()
    page.wait_for_function(
        "document.querySelector('#seat-1 .seat-total')?.dataset.net === '0.00'")
    assert runner.wait_until(lambda loop: loop.rounds_played == 1, 5)
    assert page.locator("#close-insurance").is_hidden()


def test_a_hand_held_dealer_keys_the_card_the_camera_cannot_read(page, hand_held):
    """Camera only: the page offers "Key a card" once a round is in play (never while a shoe
    reads, as in the test above); rank, suit and the dealer's toggle key it, and the table
    records it as keyed, raising its alarm."""
    runner = hand_held.runner
    assert page.locator("#key-card").is_hidden()  # no round yet
    runner.submit(PlaceBet(1, Decimal("10")))
    hand_held.read(("9S", CardTarget(1, 0)))
    page.locator("#key-card").wait_for(state="visible", timeout=5000)
    page.locator("#key-card").tap()
    page.locator("#key-rank-5").tap()
    page.locator("#key-suit-H").tap()
    assert page.inner_text("#key-go") == "Key 5H"
    page.locator("#key-to-dealer").tap()  # the dealer's up card, unread
    assert "selected" in (page.locator("#key-to-dealer").get_attribute("class") or "")
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "table-screen-keying-800x480.png"))
    page.locator("#key-go").tap()
    assert runner.wait_until(lambda loop: loop.cards_committed == 2, 5)
    assert page.locator("#key-row").is_hidden()
    view = runner.view()
    assert view["round"]["dealer"]["cards"] == ["5H"]
    assert [a["kind"] for a in view["alarms"]] == ["keyed_card"]
    page.locator("#alarms").wait_for(state="visible", timeout=5000)
    page.screenshot(path=str(ARTIFACTS / "table-screen-keyed-card-800x480.png"))


def test_a_hand_held_dealer_checks_the_cards_and_corrects_a_misread_before_settling(
        page, hand_held):
    """Camera only, nothing questions the camera's reading: when play is over the page asks the
    dealer to check the cards on the felt before Finish round, and the dealer corrects the
    dealer's last card (read 2D, dealt 6D): the payout on the screen turns from TAKE to PAY,
    and the round is recorded with the correction once the dealer finishes."""
    runner, loop = hand_held.runner, hand_held.loop
    runner.submit(PlaceBet(1, Decimal("10")))
    hand_held.read(("9S", CardTarget(1, 0)), ("6S", DEALER_SPOT),
                   ("8H", CardTarget(1, 0)), (None, DEALER_SPOT))
    runner.submit(HoleCardShown(Card.parse("KD")))  # 16: seat 1 stood on 17
    hand_held.read(("2D", DEALER_SPOT))  # 18, as the camera read it
    page.locator("#settlement-total.check").wait_for(state="visible", timeout=5000)
    assert "Check every card on the felt" in page.inner_text("#settlement-total")
    assert page.get_attribute("#seat-1 .seat-total", "data-net") == "-10.00"
    assert loop.rounds_played == 0
    assert page.inner_text("#key-card") == "Key or correct a card"  # no shoe is fitted
    page.locator("#key-card").tap()
    page.locator("#key-rank-6").tap()
    page.locator("#key-suit-D").tap()
    assert page.locator("#correct-go").is_disabled()  # "next due" is no card to correct
    page.locator("#key-to-dealer").tap()
    assert page.inner_text("#correct-go") == "Correct the dealer's last card to 6D"
    page.locator("#correct-go").tap()
    assert page.inner_text("#approve-what") == ("Correct the dealer's last card to 6D: a "
                                                "supervisor approves")
    approve(page)
    page.wait_for_function(
        "document.querySelector('#seat-1 .seat-total')?.dataset.net === '10.00'")
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "table-screen-check-corrected-800x480.png"))
    page.locator("#finish").tap()
    assert runner.wait_until(lambda loop: loop.rounds_played == 1, 5)
    corrected = [{k: v for k, v in json.loads(line).items() if k != "at"}
                 for line in hand_held.recorder.rounds[-1][1]]  # "at": when the camera read it
    assert {"type": "card", "card": "6D", "to": "dealer", "corrected": "2D",
            "corrected_by": "S-3"} in corrected
    page.wait_for_function(
        "!document.querySelector('#settlement-total').classList.contains('check')")
    assert [a["kind"] for a in runner.view()["alarms"]] == ["corrected_card"]


def test_a_hand_held_dealer_keys_and_corrects_a_card_for_a_split_seats_second_hand(
        page, hand_held):
    """A split seat offers each of its hands as a place: a card keyed for its second hand goes
    there (the first hand, dealt its card, stood), and Correct reaches that hand's card."""
    runner = hand_held.runner
    runner.submit(PlaceBet(1, Decimal("10")))
    hand_held.read(("8D", CardTarget(1, 0)), ("6S", DEALER_SPOT),
                   ("8H", CardTarget(1, 0)), (None, DEALER_SPOT))
    runner.submit(Decide(1, Action.SPLIT))
    hand_held.read(("3C", CardTarget(1, 0)))  # the first hand's card: 11
    page.locator("#key-card").tap()
    page.locator("#key-to-1h1").wait_for(state="visible", timeout=5000)
    assert page.inner_text("#key-to-1h1") == "seat 1 hand 2"
    page.locator("#key-rank-5").tap()
    page.locator("#key-suit-H").tap()
    page.locator("#key-to-1h1").tap()
    page.locator("#key-go").tap()
    assert runner.wait_until(lambda loop: loop.cards_committed == 6, 5)
    hands = runner.view()["round"]["seats"][0]["hands"]
    assert [h["cards"] for h in hands] == [["8D", "3C"], ["8H", "5H"]]
    page.locator("#key-card").tap()
    page.locator("#key-rank-4").tap()
    page.locator("#key-suit-H").tap()
    page.locator("#key-to-1h1").tap()
    assert page.inner_text("#correct-go") == "Correct seat 1 hand 2's last card to 4H"
    page.locator("#correct-go").tap()
    approve(page)
    assert runner.wait_until(
        lambda loop: _codes(loop.engine.hands(1)[1].cards) == ["8H", "4H"], 5)
    # An earlier card there: picked among the hand's face-up cards, as the screen shows them.
    page.locator("#key-card").tap()
    page.locator("#key-rank-8").tap()
    page.locator("#key-suit-S").tap()
    page.locator("#key-to-1h1").tap()
    assert page.locator("#key-which button").all_inner_texts() == ["last card", "8H", "4H"]
    page.locator("#key-which-0").tap()
    assert page.inner_text("#correct-go") == "Correct seat 1 hand 2's 8H to 8S"
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "table-screen-correct-earlier-card-800x480.png"))
    page.locator("#correct-go").tap()
    approve(page)
    assert runner.wait_until(
        lambda loop: _codes(loop.engine.hands(1)[1].cards) == ["8S", "4H"], 5)
    assert [a["kind"] for a in runner.view()["alarms"]][-2:] == ["corrected_card"] * 2


def test_a_question_is_shown_in_its_band_and_one_touch_answers_it(table, page):
    """Shoe only: a card no touch asked for is a question; the dealer touches DOUBLE in the
    yellow band at 800x480, the question goes, and the round goes on with the double."""
    runner, screen = table
    page.set_viewport_size({"width": 800, "height": 480})
    page.goto(screen.pairing_url())  # paired, then the page
    page.wait_for_selector("#link.link-up")
    runner.submit(PlaceBet(2, Decimal("10")))
    for code in ("5H", "9S", "6D", "7C"):  # seat 2: 5 + 6 = 11; the dealer 9 up, 7 in the hole
        runner.submit(ShoeCard(Card.parse(code)))
    runner.submit(ShoeCard(Card.parse("JH")))  # nobody touched a decision for it
    page.wait_for_selector("#question:not([hidden])")
    assert "Where did JH go?" in page.inner_text("#question-text")
    box = page.locator("#question").bounding_box()
    assert box is not None and box["y"] + box["height"] <= 480  # in view, not scrolled to
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "dealer-question.png"))
    page.get_by_role("button", name="DOUBLE seat 2").click()
    page.wait_for_selector("#question", state="hidden")
    assert runner.wait_until(lambda loop: loop.question is None, 5)
    runner.submit(ShoeCard(Card.parse("2S")))  # the dealer: 9 + 7 + 2 = 18
    assert runner.wait_until(lambda loop: loop.rounds_played == 1, 5)
    assert runner.loop.last_settlement is not None
    assert runner.loop.last_settlement.to_json()["seats"][0]["net"] == "20.00"


def test_a_card_the_shoe_could_not_read_is_asked_for_and_keyed_on_the_page(table, page):
    """Shoe only: the dealer's up card left the shoe unread. The band asks for it and the page
    offers Key a card, though the shoe reads; keyed, it takes its place and the cards that waited
    behind it follow."""
    runner, screen = table
    page.set_viewport_size({"width": 800, "height": 480})
    page.goto(screen.pairing_url())  # paired, then the page
    page.wait_for_selector("#link.link-up")
    runner.submit(PlaceBet(1, Decimal("10")))
    runner.submit(ShoeCard(Card.parse("9S")))
    runner.submit(ShoeUnread(7, 3, 2, "the shoe reported the card unreadable"))
    runner.submit(ShoeCard(Card.parse("6D")))  # waits behind the unread card
    page.wait_for_selector("#question:not([hidden])")
    assert "could not read card 2 of the shoe" in page.inner_text("#question-text")
    page.locator("#key-card").wait_for(state="visible", timeout=5000)
    page.locator("#key-card").tap()
    page.locator("#key-rank-7").tap()
    page.locator("#key-suit-C").tap()
    page.locator("#key-go").tap()
    page.wait_for_selector("#question", state="hidden")
    assert runner.wait_until(lambda loop: loop.cards_committed == 3, 5)
    view = runner.view()
    assert view["round"]["dealer"]["cards"] == ["7C"]
    assert view["round"]["seats"][0]["hands"][0]["cards"] == ["9S", "6D"]
    assert page.locator("#key-card").is_hidden()  # the shoe deals every card again


def test_unpaired_the_page_shows_nothing_of_the_table_and_one_pairing_url_pairs_once(
        table, page):
    """The page itself loads unpaired but says so, shows no seat and no button; the pairing URL
    sets an HttpOnly, SameSite=Strict cookie the page's scripts cannot read, and the table
    appears; the same URL opened in another browser is refused and leaves it unpaired."""
    runner, screen = table
    runner.submit(PlaceBet(3, Decimal("25")))
    assert runner.wait_until(lambda loop: loop.round_id is not None, 5)
    answer = page.goto(screen.url)
    assert answer is not None and answer.headers["content-security-policy"] == (
        "default-src 'self'; frame-ancestors 'none'")  # no other site may frame the screen
    page.wait_for_selector("#unpaired", state="visible")
    assert "not paired" in page.inner_text("#unpaired")
    assert page.inner_text("#mode") == "NOT PAIRED"
    assert page.locator("#seats").is_hidden() and page.locator("#touch").is_hidden()
    assert page.locator("#seat-3").count() == 0  # nothing of the round reached the page
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "table-screen-not-paired.png"))

    pairing_url = screen.pairing_url()
    page.goto(pairing_url)
    page.wait_for_selector("#link.link-up")
    assert page.url == screen.url  # redirected to the page, the code out of the address bar
    page.wait_for_selector("#seat-3:not(.empty) .wager")
    assert page.locator("#unpaired").is_hidden()
    cookies = page.context.cookies()
    assert [(c["name"], c["httpOnly"], c["sameSite"], c["secure"]) for c in cookies] == [
        ("dealer_screen", True, "Strict", False)]  # Secure only over TLS
    assert page.evaluate("document.cookie") == ""  # no script of the page can read it

    other = page.context.browser.new_context()
    try:
        stranger = other.new_page()
        answer = stranger.goto(pairing_url)
        assert answer is not None and answer.status == 403
        assert "used already" in stranger.inner_text("body")
        assert other.cookies() == []
        stranger.goto(screen.url)
        stranger.wait_for_selector("#unpaired", state="visible")
    finally:
        other.close()


class _EvilPage(http.server.BaseHTTPRequestHandler):
    """Another origin's page (same machine, another port: the same site, so a SameSite cookie
    goes with its requests) trying every way a page can reach the screen."""

    screen_url = ""

    def do_GET(self) -> None:  # noqa: N802 (the handler's name)
        target = self.screen_url
        body = f"""<!doctype html><html><body>
<form id="form" method="POST" action="{target}api/input" enctype="text/plain">
<input name='{{"type": "bet", "seat": 1, "amount": "500", "x": "' value='"}}'></form>
<script>
const bet = JSON.stringify({{type: "bet", seat: 2, amount: "500"}});
Promise.allSettled([
  fetch("{target}api/input", {{method: "POST", mode: "no-cors", credentials: "include",
        headers: {{"Content-Type": "text/plain"}}, body: bet}}),
  fetch("{target}api/input", {{method: "POST", credentials: "include",
        headers: {{"Content-Type": "application/json"}}, body: bet}}),
  fetch("{target}api/view", {{credentials: "include"}}).then((r) => r.text()),
  new Promise((resolve) => {{
    const socket = new WebSocket("{target.replace("http", "ws")}ws");
    socket.onmessage = () => resolve("opened");
    socket.onerror = socket.onclose = () => resolve("refused");
  }}),
]).then((results) => {{
  document.title = JSON.stringify(results.map((r) => r.status === "fulfilled"
    ? (typeof r.value === "string" ? r.value : r.value.status) : "blocked"));
}});
</script></body></html>""".encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


def test_a_page_of_another_origin_in_the_paired_browser_moves_nothing(table, page):
    """The kiosk's browser is paired; a page served from another port of the same machine (a
    form posting text/plain, fetches with its cookie, a WebSocket) places no bet, reads no
    view and opens no WebSocket. Before the guard the form and the fetch placed their bets."""
    runner, screen = table
    page.goto(screen.pairing_url())
    page.wait_for_selector("#link.link-up")
    _EvilPage.screen_url = screen.url
    evil = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _EvilPage)
    threading.Thread(target=evil.serve_forever, daemon=True).start()
    try:
        page.goto(f"http://localhost:{evil.server_address[1]}/")
        page.wait_for_function("document.title.startsWith('[')")
        # the no-cors post's answer is opaque (0); the others are refused or blocked
        no_cors, cors, view, socket = json.loads(page.title())
        assert (no_cors, cors, socket) == (0, "blocked", "refused")
        assert view == "blocked" or '"round"' not in view
        with page.expect_navigation():
            page.evaluate("document.getElementById('form').submit()")
        assert "requests from the origin" in page.inner_text("body")  # the form's answer
    finally:
        evil.shutdown()
        evil.server_close()
    assert runner.wait_idle()
    assert runner.view()["round"] is None  # no bet reached the table
def test_the_dealer_signs_in_on_the_page_and_a_supervisor_approves_a_void(page, tmp_path):
    """No dealer signed in: the page shows the sign-in form, not the touch rows; a wrong PIN is
    refused with its reason and the form stays; the right one shows the touch rows and the
    dealer's id. A void touched asks for a supervisor's id and PIN, and is recorded with both."""
    recorder = MemoryRecorder()
    loop = TableLoop("h17-ddd-6", recorder, table_id="T9", has_camera=False)
    runner = TableRunner(loop).start()
    screen = ScreenServer(runner, "127.0.0.1", 0, staff_desk(tmp_path)).start()
    try:
        runner.submit(ShoeLink(True, "test shoe"))
        page.set_viewport_size({"width": 800, "height": 480})
        page.goto(screen.pairing_url())  # paired, then the page
        page.locator("#sign-in").wait_for(state="visible", timeout=5000)
        assert page.locator("#touch").is_hidden()
        assert page.inner_text("#dealer-id") == "no dealer signed in"
        page.fill("#sign-in-dealer", "D-7")
        page.fill("#sign-in-pin", "000000")
        page.locator("#sign-in-go").tap()
        page.locator("#touch-error").wait_for(state="visible", timeout=5000)
        assert page.inner_text("#touch-error") == "D-7: wrong id or PIN (1 in a row)"
        assert page.input_value("#sign-in-pin") == ""  # a PIN typed is never kept
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "table-screen-sign-in-800x480.png"))
        page.fill("#sign-in-pin", STAFF["D-7"][1])
        page.locator("#sign-in-go").tap()
        page.locator("#touch").wait_for(state="visible", timeout=5000)
        assert page.locator("#sign-in").is_hidden()
        assert page.inner_text("#dealer-id") == "dealer D-7"
        runner.submit(PlaceBet(2, Decimal("25")))
        assert runner.wait_until(lambda lp: lp.round_open, 5)
        page.locator("#void").wait_for(state="visible", timeout=5000)
        page.wait_for_function("!document.querySelector('#void').disabled")
        assert page.locator("#sign-out").is_disabled()  # a dealer changes between rounds
        page.once("dialog", lambda dialog: dialog.accept("misdeal"))
        page.locator("#void").tap()
        approve(page)
        assert runner.wait_until(lambda lp: not lp.round_open, 5)
        assert page.input_value("#approve-pin") == ""
        (_, _, reason), = recorder.voids
        assert reason == "misdeal (voided by supervisor S-3; dealer D-7)"
        page.wait_for_function("!document.querySelector('#sign-out').disabled")
        page.locator("#sign-out").tap()
        page.locator("#sign-in").wait_for(state="visible", timeout=5000)
        assert runner.wait_until(lambda lp: lp.dealer is None, 5)
    finally:
        screen.stop()
        runner.stop()


def _codes(cards: tuple[Card, ...]) -> list[str]:
    return [card.code for card in cards]
