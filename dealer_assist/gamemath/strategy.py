"""Spanish 21 basic strategy: the published charts as a lookup table, and the one decision function.

:func:`decide` works on plain integers and one numpy table so that the very same source runs in
plain Python (the demo's players, the engine cross-check) and compiled by numba (the fast
simulator). :class:`BasicStrategy` wraps it for hands made of :class:`~dealer_assist.rules.Card`.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache

import numpy as np

from dealer_assist.gamemath import charts
from dealer_assist.rules.cards import Card, Rank, Suit

# Tables of the lookup array, indexed [table, row, upcard value 2..11].
T_HARD, T_SOFT, T_PAIR, T_DOUBLED_HARD, T_DOUBLED_SOFT, T_RESCUE = range(6)
# Chart plays (low 3 bits of a square), card-count limit (next 3 bits), bonus mark (bits 6-8).
P_HIT, P_STAND, P_DOUBLE, P_SPLIT, P_SURRENDER, P_SURRENDER_ELSE_HIT = range(6)
MARK_NONE, MARK_ANY_678, MARK_SUITED_678, MARK_SPADE_678, MARK_SUPER_BONUS = range(5)
# What the player does: the result of decide().
HIT, STAND, DOUBLE, SPLIT, SURRENDER, RESCUE = range(6)
# draw_678 values: which 6-7-8 a two-card hand can still make.
DRAW_NONE, DRAW_MIXED, DRAW_SUITED, DRAW_SPADES = range(4)

_PLAYS = {"H": P_HIT, "S": P_STAND, "D": P_DOUBLE, "P": P_SPLIT, "R": P_SURRENDER,
          "RH": P_SURRENDER_ELSE_HIT}
_MARKS = {"": MARK_NONE, "*": MARK_ANY_678, "'": MARK_SUITED_678, '"': MARK_SPADE_678,
          "$": MARK_SUPER_BONUS}
_SQUARE = re.compile(r"^(RH|[HSDPR])([3-6]?)([*'\"$]?)$")


class ChartError(ValueError):
    """A strategy chart square or row that cannot be read; names the chart, row and square."""


class Play(enum.Enum):
    """A decision of the strategy, named as the round engine's actions are."""

    HIT = HIT
    STAND = STAND
    DOUBLE = DOUBLE
    SPLIT = SPLIT
    SURRENDER = SURRENDER
    RESCUE = RESCUE


def _parse_square(code: str, where: str) -> int:
    match = _SQUARE.match(code)
    if match is None:
        raise ChartError(f"{where}: unreadable square {code!r}")
    play, limit, mark = match.groups()
    return _PLAYS[play] | (int(limit or 0) << 3) | (_MARKS[mark] << 6)


def _row_key(label: str, where: str) -> int:
    if label.startswith("A-"):  # soft total or pair of aces
        rest = label[2:]
        return 12 if rest == "A" else 11 + int(rest)
    if "-" in label:  # pair "8-8" -> 8
        first, second = label.split("-")
        if first != second:
            raise ChartError(f"{where}: pair row {label!r} is not a pair")
        return int(first)
    if not label.isdigit():
        raise ChartError(f"{where}: unreadable row label {label!r}")
    return int(label)


def parse_grid(text: str, name: str) -> dict[int, list[int]]:
    """Read a chart grid: one row per line, a label then ten squares for upcards 2..10, A."""
    rows: dict[int, list[int]] = {}
    for number, line in enumerate(text.strip().splitlines(), start=1):
        fields = line.split()
        where = f"chart {name}, line {number}"
        if len(fields) != 11:
            raise ChartError(f"{where}: expected a label and 10 squares, got {len(fields)} fields")
        key = 11 if fields[0] == "A-A" and name.endswith("pairs") else _row_key(fields[0], where)
        if key in rows:
            raise ChartError(f"{where}: row {fields[0]!r} appears twice")
        rows[key] = [_parse_square(code, f"{where}, {fields[0]} vs {up}")
                     for code, up in zip(fields[1:], charts.UPCARDS, strict=True)]
    return rows


def _fill(table: np.ndarray, index: int, rows: dict[int, list[int]], lowest: int) -> None:
    for key, squares in rows.items():
        table[index, key, 2:12] = squares
    first = min(rows)
    for key in range(lowest, first):  # totals below the chart play as its first row
        table[index, key] = table[index, first]


@cache
def strategy_table(chart: str) -> np.ndarray:
    """The lookup array of one published chart (``h17-redouble``, ``h17`` or ``s17``)."""
    if chart not in charts.CHARTS:
        raise ChartError(f"no chart {chart!r}; charts: {', '.join(sorted(charts.CHARTS))}")
    grids = charts.CHARTS[chart]
    table = np.zeros((6, 22, 12), dtype=np.int16)
    _fill(table, T_HARD, parse_grid(grids["hard"], f"{chart} hard"), 0)
    _fill(table, T_SOFT, parse_grid(grids["soft"], f"{chart} soft"), 0)
    _fill(table, T_PAIR, parse_grid(grids["pairs"], f"{chart} pairs"), 0)
    if "doubled_hard" in grids:
        _fill(table, T_DOUBLED_HARD, parse_grid(grids["doubled_hard"], f"{chart} doubled"), 0)
        _fill(table, T_DOUBLED_SOFT, parse_grid(grids["doubled_soft"], f"{chart} doubled"), 0)
    rescue = parse_grid(charts.RESCUE_WITHOUT_REDOUBLING, "rescue")
    _fill(table, T_RESCUE, rescue, 12)
    # A doubled total under 12 wins only on a dealer bust, exactly as 16 does (not in the charts).
    for total in range(0, 12):
        table[T_RESCUE, total] = table[T_RESCUE, 16]
    for total in range(18, 22):
        table[T_RESCUE, total, 2:12] = P_STAND
    table.setflags(write=False)
    return table


def chart_for(dealer_hits_soft_17: bool, redoubling: bool) -> str:
    """Which published chart a rule set plays (all charts are for six decks; used for any count)."""
    if redoubling:
        return "h17-redouble"
    return "h17" if dealer_hits_soft_17 else "s17"


def decide(
    table: np.ndarray,
    up: int,
    total: int,
    soft: bool,
    cards: int,
    pair_value: int,
    can_split: bool,
    can_surrender: bool,
    doublings: int,
    max_doublings: int,
    draw_678: int,
    super_bonus_possible: bool,
) -> int:
    """The chart's play for one hand; numba-compilable (ints and one array only).

    ``up`` is the up card's value (2-11, ace 11); ``pair_value`` the value of a two-card pair
    (ace 11) or 0; ``doublings`` how often this hand has doubled. Falls back as a pit would:
    a surrender that is not allowed hits (RH) or splits (8-8 vs A after a split); a pair that
    cannot be split again plays by its total; a hand at its last doubling stands or rescues.
    """
    if total >= 21:
        return STAND
    if doublings > 0:
        if doublings < max_doublings:
            square = table[T_DOUBLED_SOFT if soft else T_DOUBLED_HARD, total, up]
            play = square & 7
            if play == P_DOUBLE:
                return DOUBLE
            if play == P_SURRENDER:
                return RESCUE
            return STAND
        if table[T_RESCUE, total, up] & 7 == P_SURRENDER:
            return RESCUE
        return STAND
    if pair_value > 0 and can_split:
        square = table[T_PAIR, pair_value, up]
        play = square & 7
        if play == P_SPLIT:
            if (square >> 6) == MARK_SUPER_BONUS and super_bonus_possible:
                return HIT
            return SPLIT
        if play == P_SURRENDER:
            return SURRENDER if can_surrender else SPLIT
        if play == P_DOUBLE:
            return DOUBLE
        if play == P_STAND:
            return STAND
        return HIT
    square = table[T_SOFT if soft else T_HARD, total, up]
    play = square & 7
    limit = (square >> 3) & 7
    mark = square >> 6
    if mark == MARK_ANY_678 and draw_678 >= DRAW_MIXED:
        return HIT
    if mark == MARK_SUITED_678 and draw_678 >= DRAW_SUITED:
        return HIT
    if mark == MARK_SPADE_678 and draw_678 == DRAW_SPADES:
        return HIT
    if limit > 0 and cards >= limit:
        return HIT
    if play == P_STAND:
        return STAND
    if play == P_DOUBLE:
        return DOUBLE
    if play == P_SURRENDER or play == P_SURRENDER_ELSE_HIT:
        return SURRENDER if can_surrender else HIT
    return HIT


def draw_678(rank_a: int, suit_a: int, rank_b: int, suit_b: int) -> int:
    """Which 6-7-8 a two-card hand (ranks as numbers, suit 0 = spades) can still make."""
    low, high = min(rank_a, rank_b), max(rank_a, rank_b)
    if low == high or low < 6 or high > 8:
        return DRAW_NONE
    if suit_a != suit_b:
        return DRAW_MIXED
    return DRAW_SPADES if suit_a == 0 else DRAW_SUITED


def super_bonus_draw(
    decks: int, up_rank: int, up_suit: int, rank_a: int, suit_a: int, rank_b: int, suit_b: int
) -> bool:
    """Whether an original two-card hand can still become a Super Bonus (suit 0 = spades)."""
    if up_rank != 7 or rank_a != 7 or rank_b != 7:
        return False
    if decks == 2:  # 7♥ 7♣ 7♦ against 7♠
        return up_suit == 0 and suit_a != suit_b and suit_a != 0 and suit_b != 0
    return suit_a == suit_b


# Card numbering shared with the fast simulator: rank number (A=1, 2-9, J=11, Q=12, K=13), suit 0-3.
RANK_NUMBER = {Rank.ACE: 1, Rank.JACK: 11, Rank.QUEEN: 12, Rank.KING: 13, Rank.TEN: 10} | {
    r: int(r.value) for r in Rank if r.value.isdigit()
}
SUIT_NUMBER = {Suit.SPADES: 0, Suit.HEARTS: 1, Suit.DIAMONDS: 2, Suit.CLUBS: 3}


def card_value(rank_number: int) -> int:
    """Blackjack value with an ace as 11."""
    return 11 if rank_number == 1 else min(rank_number, 10)


@dataclass(frozen=True)
class BasicStrategy:
    """The chart for one rule set, answering for hands of real cards."""

    decks: int
    dealer_hits_soft_17: bool
    max_doublings: int
    late_surrender: bool = True
    max_hands: int = 4
    split_by_value: bool = True

    @property
    def chart(self) -> str:
        return chart_for(self.dealer_hits_soft_17, self.max_doublings > 1)

    def play(
        self,
        cards: Sequence[Card],
        up: Card,
        *,
        doublings: int = 0,
        split_hand: bool = False,
        hands: int = 1,
        super_bonus_eligible: bool = True,
    ) -> Play:
        """The play for ``cards`` against ``up``; ``hands`` is how many hands the seat holds."""
        ranks = [RANK_NUMBER[c.rank] for c in cards]
        suits = [SUIT_NUMBER[c.suit] for c in cards]
        total = sum(card_value(r) for r in ranks)
        aces = ranks.count(1)
        while total > 21 and aces:
            total -= 10
            aces -= 1
        two = len(cards) == 2 and doublings == 0
        pairs = two and card_value(ranks[0]) == card_value(ranks[1]) and (
            self.split_by_value or ranks[0] == ranks[1])
        pair_value = card_value(ranks[0]) if pairs else 0
        up_rank, up_suit = RANK_NUMBER[up.rank], SUIT_NUMBER[up.suit]
        return Play(decide(
            strategy_table(self.chart),
            card_value(up_rank),
            total,
            aces > 0,
            len(cards),
            pair_value,
            hands < self.max_hands,
            two and not split_hand and self.late_surrender,
            doublings,
            self.max_doublings,
            draw_678(ranks[0], suits[0], ranks[1], suits[1]) if two else DRAW_NONE,
            two and not split_hand and super_bonus_eligible and super_bonus_draw(
                self.decks, up_rank, up_suit, ranks[0], suits[0], ranks[1], suits[1]),
        ))
