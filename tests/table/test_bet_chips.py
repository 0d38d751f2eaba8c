"""The bet row's chip buttons are the table's own (table.toml ``[screen] chips`` and
``bet_chips``), measured in headless Chromium on the real server at 800x480: each configured chip
is a button, the row stays one line inside the screen, and a bet built by touching them reaches
the table as the exact sum in cents."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import pytest

from dealer_assist.table.config import load_config
from dealer_assist.table.runner import TableRunner
from dealer_assist.table.screen import ScreenServer
from tests.table.test_browser import ARTIFACTS, CHROMIUM
from tests.table.test_screen_layout import browser, open_page  # noqa: F401 (a fixture)
from tests.table.worst_rounds import shoe_table

pytestmark = pytest.mark.skipif(
    not Path(CHROMIUM).exists(), reason="needs Debian's chromium (apt-get install -y chromium)"
)

#: The bet row's labels and buttons: each one's id or text, and its box.
ROW = """() => [...document.getElementById('bet-row').querySelectorAll('.label, button')]
  .map((node) => { const box = node.getBoundingClientRect();
    return { name: node.id || node.textContent, top: box.top, bottom: box.bottom,
             left: box.left, right: box.right }; })"""


@pytest.fixture
def table_with_chips(tmp_path):
    """A shoe table serving its screen with the chips a table.toml names."""
    started: list[tuple[TableRunner, ScreenServer]] = []

    def start(screen_section: str) -> tuple[TableRunner, ScreenServer]:
        path = tmp_path / "table.toml"
        path.write_text('[shoe]\nurl = "u"\n[screen]\n' + screen_section)
        runner = TableRunner(shoe_table()).start()
        screen = ScreenServer(runner, "127.0.0.1", 0, chips=load_config(path).chips).start()
        started.append((runner, screen))
        return runner, screen

    yield start
    for runner, screen in started:
        screen.stop()
        runner.stop()


def bet_row_inside(page, width: int, one_line: bool) -> None:
    """Every part of the bet row inside the screen's width, on one line if ``one_line``."""
    boxes = page.evaluate(ROW)
    assert boxes, "no bet row"
    assert all(0 <= b["left"] and b["right"] <= width for b in boxes), boxes
    if one_line:
        assert max(b["top"] for b in boxes) - min(b["top"] for b in boxes) < 20, boxes


@pytest.mark.parametrize(("section", "labels"), [
    ('chips = ["0.10", "0.20", "2.50", "20", "1000"]\n', ["$0.10", "$0.20", "$2.50", "$20",
                                                          "$1000"]),
    ('chips = ["1", "5", "25", "100", "1000", "5000"]\n', ["$5", "$25", "$100", "$1000",
                                                           "$5000"]),  # the five largest
    ('bet_chips = ["0.50", "1", "5", "25", "100"]\n', ["$0.50", "$1", "$5", "$25", "$100"]),
])
def test_the_bet_rows_chips_are_the_tables_and_fit_one_line_at_800x480(
        browser, table_with_chips, section, labels):  # noqa: F811
    _, screen = table_with_chips(section)
    page = open_page(browser, screen, 800, 480)
    page.wait_for_selector("#chip-buttons button")
    assert page.locator("#chip-buttons button").all_inner_texts() == labels
    bet_row_inside(page, 800, one_line=True)


def test_a_bet_built_from_the_tables_chips_is_their_exact_sum_in_cents(
        browser, table_with_chips):  # noqa: F811
    """$0.10 + $0.20 + 3 x $2.50 + $20 is $27.80 (in floats of dollars it is not)."""
    runner, screen = table_with_chips('chips = ["0.10", "0.20", "2.50", "20", "1000"]\n')
    page = open_page(browser, screen, 800, 480)
    page.wait_for_selector("#chip-2_50")
    page.locator("#seat-button-3").tap()
    for chip in ("0_10", "0_20", "2_50", "2_50", "2_50", "20"):
        page.locator(f"#chip-{chip}").tap()
    assert page.inner_text("#bet-amount") == "$27.80"
    bet_row_inside(page, 800, one_line=False)  # a wider Place button may wrap Clear
    page.locator("#place-bet").tap()
    page.wait_for_selector("#seat-3:not(.empty) .wager")
    assert page.locator("#seat-3 .wager").inner_text() == "$27.80"
    seats = runner.view()["round"]["seats"]
    assert [(s["seat"], Decimal(s["wager"])) for s in seats] == [(3, Decimal("27.80"))]
    assert page.inner_text("#bet-amount") == "$0"
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "screen-bet-chips-800x480.png"))
