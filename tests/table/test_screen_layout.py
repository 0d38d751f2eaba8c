"""The dealer's screen laid out for the worst rounds, measured in headless Chromium (Debian's
``chromium`` driven by Playwright) on the real server: at 800x480 (the touch panel) and
1280x800, every bet of every seat has its own PAY/TAKE line, whole inside the screen, none
overlapping another, amounts at least 24 px and reasons at least 16 px; with more seats than fit,
one touch steps through them, each seat whole on one page. Only the touches that make sense are
live, and the dealer's question is always right under the header."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import pytest

from dealer_assist.rules import Card, format_money
from dealer_assist.table.runner import TableRunner
from dealer_assist.table.screen import ScreenServer
from dealer_assist.table.sources import PlaceBet, ShoeCard, ShoeProblem
from tests.table.test_browser import ARTIFACTS, CHROMIUM
from tests.table.worst_rounds import ROUNDS, Player, played, shoe_table

pytestmark = pytest.mark.skipif(
    not Path(CHROMIUM).exists(), reason="needs Debian's chromium (apt-get install -y chromium)"
)

#: Each shown payout line and seat total: its box, and the font sizes of its amount and texts.
MEASURE = """() => [...document.querySelectorAll('.bet-line, .seat-total')]
  .filter((node) => node.offsetParent !== null)
  .map((node) => {
    const box = node.getBoundingClientRect();
    const size = (part) => { const found = node.querySelector(part);
      return found ? parseFloat(getComputedStyle(found).fontSize) : null; };
    const amount = node.querySelector('.amount').getBoundingClientRect();
    const seat = node.closest('.seat').getBoundingClientRect();
    const inSeat = box.left >= seat.left - 0.5 && box.right <= seat.right + 0.5 &&
      box.top >= seat.top - 0.5 && box.bottom <= seat.bottom + 0.5;
    return { seat: node.closest('.seat').id, total: node.classList.contains('seat-total'),
      amount: node.dataset.amount || null, verb: node.querySelector('.amount').innerText,
      text: node.innerText, inSeat, x: box.x, y: box.y, right: box.right, bottom: box.bottom,
      amountPx: size('.amount'), amountHeight: amount.height, reasonPx: size('.reason'),
      chipsPx: size('.chips'),
      cut: [...node.querySelectorAll('.amount, .reason, .chips')].some(
        (part) => part.scrollWidth > part.clientWidth + 1) };
  })"""


@pytest.fixture
def browser():
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as playwright:
        launched = playwright.chromium.launch(
            executable_path=CHROMIUM, args=["--headless", "--no-sandbox", "--disable-gpu"])
        yield launched
        launched.close()


def open_page(browser, screen: ScreenServer, width: int, height: int):
    # bypass_csp: Playwright's wait_for_function evaluates a string, which the page's own
    # Content-Security-Policy (no eval) refuses
    page = browser.new_context(viewport={"width": width, "height": height}, has_touch=True,
                               bypass_csp=True).new_page()
    page.goto(screen.pairing_url())  # paired, then the page
    page.wait_for_selector("#link.link-up")
    return page


class Serving:
    """A real runner and screen server around ``loop``."""

    def __init__(self, loop):
        self.loop = loop
        self.runner = TableRunner(loop).start()
        self.screen = ScreenServer(self.runner, "127.0.0.1", 0).start()

    def stop(self) -> None:
        self.screen.stop()
        self.runner.stop()


@pytest.fixture
def serve():
    started: list[Serving] = []

    def start(loop) -> Serving:
        started.append(Serving(loop))
        return started[-1]

    yield start
    for serving in started:
        serving.stop()


def overlapping(a: dict, b: dict) -> bool:
    return a["x"] < b["right"] - 0.5 and b["x"] < a["right"] - 0.5 and \
        a["y"] < b["bottom"] - 0.5 and b["y"] < a["bottom"] - 0.5


@pytest.mark.parametrize("size", [(800, 480), (1280, 800)], ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.parametrize("name", sorted(ROUNDS))
def test_every_bet_line_of_the_worst_rounds_is_whole_in_view(browser, serve, name, size):
    """Seven seats (splits to four hands, DDD, Match, insurance or a Super Bonus with Envy):
    stepping through the pages shows each seat once, whole, with one line per payout line of
    the engine's settlement (same amount, PAY or TAKE, its reason), each inside the screen and
    overlapping none, amounts >= 24 px, reasons and chips >= 16 px."""
    width, height = size
    table = serve(played(name))
    settlement = table.loop.last_settlement
    page = open_page(browser, table.screen, width, height)
    page.wait_for_selector(".seat-total")
    pages = page.evaluate("state.pages.length")
    if size == (800, 480):
        assert pages > 1  # seven seats of these rounds do not fit whole at once
    every_line_whole(page, settlement, width, height, f"{name}-{width}x{height}")


def test_with_alarms_standing_every_bet_line_still_shows_whole(browser, serve):
    """Three long alarms at 800x480 while the seven-up round is paid: the band folds to one
    line where a seat needs the room, and every line of every seat still shows whole."""
    loop = played("seven-up")
    for number in range(3):
        loop.handle(ShoeProblem(f"E{number} the shoe reports a problem whose text runs over "
                                "two lines of the small screen"), 100.0 + number)
    table = serve(loop)
    page = open_page(browser, table.screen, 800, 480)
    page.wait_for_selector(".seat-total")
    every_line_whole(page, loop.last_settlement, 800, 480, "alarms-800x480")
    assert page.locator(".seat.overflowing").count() == 0
    band = page.locator("#alarms").bounding_box()
    assert band is not None and band["height"] <= 480 / 4


def every_line_whole(page, settlement, width: int, height: int, shots: str) -> None:
    """Step through the settlement's pages: each seat shows on one page, every payout line and
    total inside the screen, none overlapping, amounts >= 24 px, reasons and chips >= 16 px, and
    the lines are the engine's settlement's, in order."""
    pages = page.evaluate("state.pages.length")
    assert (page.locator("#pay-step").is_visible()) == (pages > 1)
    shown_on: dict[str, int] = {}
    lines_seen: dict[str, list[dict]] = {}
    for number in range(pages):
        page.wait_for_function(f"document.body.dataset.payPage === '{number + 1}/{pages}'")
        boxes = page.evaluate(MEASURE)
        assert boxes, f"page {number + 1} shows no payout"
        assert sum(1 for b in boxes if b["total"]) <= 4  # at most four seats at once
        for box in boxes:
            where = f"{box['seat']} page {number + 1}: {box['text']!r}"
            assert 0 <= box["x"] and box["right"] <= width, where
            assert 0 <= box["y"] and box["bottom"] <= height, where
            assert box["inSeat"], where  # not clipped out of its seat's box
            assert box["amountPx"] >= 24 and box["amountHeight"] >= 24, where
            assert box["reasonPx"] >= 16, where
            assert box["chipsPx"] is None or box["chipsPx"] >= 16, where
            assert not box["cut"], where
            assert shown_on.setdefault(box["seat"], number) == number, f"{where}: seat split"
            if not box["total"]:
                lines_seen.setdefault(box["seat"], []).append(box)
        for i, a in enumerate(boxes):
            for b in boxes[i + 1:]:
                assert not overlapping(a, b), f"{a['text']!r} overlaps {b['text']!r}"
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / f"screen-{shots}-{number + 1}.png"))
        if pages > 1:
            page.locator("#pay-step").tap()
    assert sorted(shown_on) == sorted(f"seat-{s.seat}" for s in settlement.seats)
    for seat in settlement.seats:
        seen = lines_seen[f"seat-{seat.seat}"]
        assert [b["amount"] for b in seen] == [format_money(line.amount) for line in seat.lines]
        for box, line in zip(seen, seat.lines, strict=True):
            verb = "TAKE" if line.amount < 0 else ("PUSH" if line.amount == 0 else "PAY")
            assert box["verb"] == f"{verb} ${abs(line.amount):,.2f}"
            assert line.reason in box["text"]
            assert ("chips: " in box["text"]) == (line.amount > 0)


def test_with_seven_seats_at_800x480_one_touch_steps_to_the_next_seats(browser, serve):
    """The settlement shows the first page of seats; the step button names the next seats and
    one touch shows them; after the last page it comes back to the first."""
    table = serve(played("seven-up"))
    page = open_page(browser, table.screen, 800, 480)
    page.wait_for_selector(".seat-total")
    pages = page.evaluate("state.pages")
    assert len(pages) > 1 and sum(count for _, count in pages) == 7

    def visible_seats() -> list[int]:
        return [n for n in range(1, 8) if page.locator(f"#seat-{n}").is_visible()]

    order = []
    for first, count in pages:
        shown = visible_seats()
        assert shown == list(range(first + 1, first + count + 1))
        order += shown
        page.locator("#pay-step").tap()
        after = visible_seats()
        assert after and after[0] == (first + count) % 7 + 1
    assert order == list(range(1, 8))
    assert page.evaluate("document.body.dataset.payPage") == f"1/{len(pages)}"


def test_only_the_touches_that_make_sense_now_are_live(browser, serve):
    """Mid-round (seat 1's first hand to act): its decisions, the chips (a double for less) and
    Void are live; Finish round, Place, the seats and New shoe are not, and the state says
    "hand 1". Once the round settles: Finish round and Void are off, New shoe and the bets on."""
    loop = shoe_table()
    Player(loop, ROUNDS["ace-up"]()).play(
        until=lambda view: view["phase"] == "playing" and bool(view["round"]["legal_actions"]))
    table = serve(loop)
    page = open_page(browser, table.screen, 800, 480)
    page.wait_for_selector("#decide-stand")
    assert page.inner_text("#acting-label") == "Seat 1 hand 1:"
    assert "SEAT 1 HAND 1" in page.inner_text("#dealer .status")  # upper case by its style
    assert page.locator("#finish").is_disabled()
    assert page.locator("#place-bet").is_disabled()
    assert page.locator("#shuffle").is_disabled()
    assert page.locator("#seat-button-3").is_disabled()
    assert page.locator("#void").is_enabled()
    assert page.locator("#chip-5").is_enabled()
    assert page.locator("#decide-split").is_enabled()

    settled = serve(played("ace-up", "T8"))
    page = open_page(browser, settled.screen, 800, 480)
    page.wait_for_selector(".seat-total")
    assert page.locator("#finish").is_disabled()
    assert page.locator("#void").is_disabled()
    assert page.locator("#shuffle").is_enabled()
    assert page.locator("#place-bet").is_disabled()  # no seat and no amount chosen yet
    page.locator("#seat-button-3").tap()
    page.locator("#chip-25").tap()
    assert page.locator("#place-bet").is_enabled()
    page.locator("#place-bet").tap()
    page.wait_for_selector("#seat-3 .wager")  # the next round's first bet
    assert page.locator("#void").is_enabled()
    assert "pace" in page.inner_text("#pace") and "rounds/h" in page.inner_text("#pace")


def test_the_question_is_always_right_under_the_header(browser, serve):
    """With or without alarms in their band, the dealer's question stands in the same place:
    right under the header, above the alarms."""
    loop = shoe_table()
    table = serve(loop)
    page = open_page(browser, table.screen, 800, 480)
    table.runner.submit(PlaceBet(2, Decimal("10")))
    for code in ("5H", "9S", "6D", "7C", "JH"):  # nobody touched a decision for the JH
        table.runner.submit(ShoeCard(Card.parse(code)))
    page.wait_for_selector("#question:not([hidden])")

    def under_header() -> bool:
        header = page.locator("#status").bounding_box()
        question = page.locator("#question").bounding_box()
        assert header is not None and question is not None
        return abs(question["y"] - (header["y"] + header["height"])) < 1

    assert under_header()
    table.runner.submit(ShoeProblem("E3 card not read"))  # the shoe reports: an alarm
    page.locator("#alarms").wait_for(state="visible", timeout=5000)
    assert under_header()
    question = page.locator("#question").bounding_box()
    alarms = page.locator("#alarms").bounding_box()
    assert question is not None and alarms is not None
    assert question["y"] + question["height"] <= alarms["y"]


def test_mid_round_every_hand_of_seven_seats_shows_at_800x480(browser, serve):
    """Seat 4 to act, seat 2 split to four hands, seat 3 doubled three times: every hand of
    every seat lies inside its seat's box, none scrolled out of view."""
    loop = shoe_table()

    def seat_4_acts(view: dict) -> bool:
        acting = view["round"] and view["round"]["acting"]
        return bool(acting) and acting[0] == 4 and bool(view["round"]["legal_actions"])

    Player(loop, ROUNDS["seven-up"]()).play(until=seat_4_acts)
    table = serve(loop)
    page = open_page(browser, table.screen, 800, 480)
    page.wait_for_selector("#decide-stand")
    assert page.locator("#seat-2 .hand").count() == 4
    hidden = page.evaluate("""() => [...document.querySelectorAll('.seat .hand')].filter((h) => {
        const seat = h.closest('.seat').getBoundingClientRect(), box = h.getBoundingClientRect();
        return box.top < seat.top || box.bottom > seat.bottom || box.right > seat.right;
      }).map((h) => h.closest('.seat').id + ': ' + h.innerText)""")
    assert hidden == []
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "screen-mid-round-800x480.png"))
