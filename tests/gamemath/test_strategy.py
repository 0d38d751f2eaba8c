"""The published charts, square by square where they matter, and the fallbacks around them."""

import pytest

from dealer_assist.gamemath import charts
from dealer_assist.gamemath.strategy import BasicStrategy, ChartError, Play, parse_grid
from dealer_assist.rules.cards import Card

H17_DDD = BasicStrategy(decks=6, dealer_hits_soft_17=True, max_doublings=3)
H17 = BasicStrategy(decks=6, dealer_hits_soft_17=True, max_doublings=1)
S17 = BasicStrategy(decks=6, dealer_hits_soft_17=False, max_doublings=1)


def cards(codes: str) -> list[Card]:
    return [Card.parse(c) for c in codes.split()]


@pytest.mark.parametrize(
    ("strategy", "hand", "up", "kwargs", "play"),
    [
        # Card-count limits: 11 vs 10 doubles with two cards (D3), hits with three.
        (H17_DDD, "6H 5C", "KS", {}, Play.DOUBLE),
        (H17_DDD, "2H 4C 5D", "KS", {}, Play.HIT),
        # 16 vs 7-card count: 16 vs 2 stands (S6) up to five cards, hits at six.
        (H17, "9H 7C", "2S", {}, Play.STAND),
        (H17, "AH AC 2D 3S 4H 5C", "2S", {}, Play.HIT),
        # Late surrender only on the original two cards.
        (H17, "9H 7C", "AS", {}, Play.SURRENDER),
        (H17, "9H 7C", "AS", {"split_hand": True, "hands": 2}, Play.HIT),
        (H17, "9H 5C 2D", "AS", {}, Play.HIT),
        # Bonus chasing: 14 vs 6 stands (S6") unless a spade 6-7-8 can still come.
        (H17, "6S 8S", "6H", {}, Play.HIT),
        (H17, "6H 8H", "6S", {}, Play.STAND),
        (H17, "9H 5H", "6S", {}, Play.STAND),
        # 14 vs 5 (S5'): any suited 6-7-8 draw hits; 13 vs 6 (S4*): any 6-7-8 draw hits.
        (H17, "6H 8H", "5S", {}, Play.HIT),
        (H17, "6H 8C", "5S", {}, Play.STAND),
        (H17, "6H 7C", "6S", {}, Play.HIT),
        (H17, "9H 4C", "6S", {}, Play.STAND),
        # Super Bonus: suited 7-7 against a 7 is hit, not split; not after a split.
        (H17, "7D 7D", "7H", {}, Play.HIT),
        (H17, "7D 7C", "7H", {}, Play.SPLIT),
        (H17, "7D 7D", "7H", {"split_hand": True, "hands": 2}, Play.SPLIT),
        (H17, "7D 7D", "7H", {"super_bonus_eligible": False}, Play.SPLIT),
        # 8-8 vs A: surrender on H17, split on S17; after a split (no surrender) split again.
        (H17, "8D 8C", "AH", {}, Play.SURRENDER),
        (S17, "8D 8C", "AH", {}, Play.SPLIT),
        (H17, "8D 8C", "AH", {"split_hand": True, "hands": 2}, Play.SPLIT),
        # A pair that cannot be split again plays by its total: A-A is soft 12.
        (H17, "AD AC", "6H", {"split_hand": True, "hands": 4}, Play.HIT),
        # J-K is a pair of ten-values: stand.
        (S17, "JD KC", "6H", {}, Play.STAND),
        # Soft hands: A-7 vs 6 doubles with two cards (D6 on H17, D5 on S17).
        (H17, "AD 7C", "6H", {}, Play.DOUBLE),
        (S17, "AD 2C 2H 3S", "6H", {}, Play.DOUBLE),
        (S17, "AD 2C 2H 2S AS", "6H", {}, Play.HIT),
        # The redoubling chart: 5-5 and 4-4 vs 5 double; without redoubling 4-4 hits.
        (H17_DDD, "4D 4C", "5H", {}, Play.DOUBLE),
        (H17, "4D 4C", "5H", {}, Play.HIT),
        # Doubled hands: redouble 12 vs 7, rescue 16 vs 9, stand or rescue at the limit.
        (H17_DDD, "5D 4C 3H", "7H", {"doublings": 1}, Play.DOUBLE),
        (H17_DDD, "5D 4C 3H", "7H", {"doublings": 3}, Play.STAND),
        (H17_DDD, "9D 5C 2H", "9H", {"doublings": 2}, Play.RESCUE),
        (H17_DDD, "AD 2C 4H", "5H", {"doublings": 1}, Play.DOUBLE),
        (H17, "9D 5C 2H", "8H", {"doublings": 1}, Play.RESCUE),
        (H17, "9D 5C 2H", "7H", {"doublings": 1}, Play.STAND),
        (S17, "9D 5C 3H", "AH", {"doublings": 1}, Play.RESCUE),
        (S17, "9D 5C 3H", "KH", {"doublings": 1}, Play.STAND),
        # A doubled total below 12 plays as 16 does (not in the charts): rescue vs 8-A.
        (H17, "2D 3C 4H", "9H", {"doublings": 1}, Play.RESCUE),
    ],
)
def test_chart_plays(strategy: BasicStrategy, hand: str, up: str, kwargs: dict, play: Play) -> None:
    assert strategy.play(cards(hand), Card.parse(up), **kwargs) is play


def test_two_deck_super_bonus_draw_is_hearts_clubs_diamonds_against_the_seven_of_spades() -> None:
    two = BasicStrategy(decks=2, dealer_hits_soft_17=True, max_doublings=3)
    assert two.play(cards("7H 7C"), Card.parse("7S")) is Play.HIT
    assert two.play(cards("7H 7H"), Card.parse("7S")) is Play.SPLIT
    assert two.play(cards("7H 7C"), Card.parse("7D")) is Play.SPLIT


def test_every_chart_covers_every_upcard_of_every_row() -> None:
    for name, grids in charts.CHARTS.items():
        for table, grid in grids.items():
            rows = parse_grid(grid, f"{name} {table}")
            assert all(len(squares) == 10 for squares in rows.values())


@pytest.mark.parametrize(
    ("grid", "message"),
    [
        ("16 S S S S S H H H H", "expected a label and 10 squares"),
        ("16 S S S S S H H H H X", r"16 vs A: unreadable square 'X'"),
        ("16 S S S S S H H H H H\n16 S S S S S H H H H H", "appears twice"),
        ("x-y S S S S S H H H H H", "unreadable row label|not a pair"),
    ],
)
def test_bad_chart_text_names_line_and_square(grid: str, message: str) -> None:
    with pytest.raises(ChartError, match=message):
        parse_grid(grid, "test hard")
