"""Lining up the cards a shoe resends after its link was down with the cards the camera or the
dealer recorded meanwhile: both in the order they were dealt, where the camera may have missed
a card, recorded one the shoe never dealt, or read one card as another."""

from __future__ import annotations

from collections.abc import Sequence

from dealer_assist.rules import Card

#: (index in ``dealt``, index in ``recorded``); None on one side: a card with no partner
Pair = tuple[int | None, int | None]

_SAME, _UNKNOWN, _OTHER, _ALONE = 0, 1, 2, 2  # the costs of a pair and of a card alone


def line_up(dealt: Sequence[Card | None], recorded: Sequence[Card | None]) -> list[Pair]:
    """Pair the shoe's cards (``dealt``, in order; None: one it could not read) with the cards
    recorded while its link was down (``recorded``, in order; None: the face-down hole card,
    which no reader saw), in order, at the least cost: two equal cards pair for nothing, a
    card paired with an unknown one (None) costs 1, two different cards 2, and a card left
    without a partner 2, so one card read as another is one disagreement, not a missed card and
    an extra one, and an unknown card goes with the card at its own place. Among pairings of
    equal cost, the later card is the one left alone."""
    n, m = len(dealt), len(recorded)

    def pair_cost(i: int, j: int) -> int:
        a, b = dealt[i], recorded[j]
        if a is None or b is None:
            return _UNKNOWN
        return _SAME if a == b else _OTHER

    cost = [[0] * (m + 1) for _ in range(n + 1)]
    for i in range(n + 1):
        for j in range(m + 1):
            if i == 0 or j == 0:
                cost[i][j] = (i + j) * _ALONE
                continue
            cost[i][j] = min(cost[i - 1][j - 1] + pair_cost(i - 1, j - 1),
                             cost[i - 1][j] + _ALONE, cost[i][j - 1] + _ALONE)
    pairs: list[Pair] = []
    i, j = n, m
    while i or j:
        if i and cost[i][j] == cost[i - 1][j] + _ALONE:
            i -= 1
            pairs.append((i, None))
        elif j and cost[i][j] == cost[i][j - 1] + _ALONE:
            j -= 1
            pairs.append((None, j))
        else:
            i, j = i - 1, j - 1
            pairs.append((i, j))
    pairs.reverse()
    return pairs
