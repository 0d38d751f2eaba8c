"""A settlement printed for a person: one line per hand, amounts aligned."""

from __future__ import annotations

import json
from decimal import Decimal

from dealer_assist.rules import Settlement


def printable(text: str) -> str:
    """``text`` safe to print on a terminal: control characters (an escape sequence in a round
    id) and lone surrogates (which no output encoding takes) written as escapes."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii")
                   for c in text)


def _signed(amount: Decimal) -> str:
    return f"{amount:+,.2f}"


def settlement_text(settlement: Settlement) -> str:
    """The round's payouts as aligned text: each hand (numbered from 1) and side bet, seat
    totals, the players' net."""
    rows: list[tuple[str, str, str, str]] = []
    for seat in settlement.seats:
        label = f"seat {seat.seat}" + (f" ({printable(seat.player)})" if seat.player else "")
        for index, hand in enumerate(seat.hands):
            cards = " ".join(hand.cards)
            what = f"hand {index + 1}: {cards} = {hand.total}, wagered {hand.wagered:,.2f}"
            rows.append((label, what, seat.lines[index].reason, _signed(hand.net)))
        for line in seat.lines[len(seat.hands) :]:
            rows.append((label, line.kind, line.reason, _signed(line.amount)))
        rows.append((label, "seat total", "", _signed(seat.net)))
    dealer = settlement.dealer
    state = " blackjack" if dealer.blackjack else (" bust" if dealer.bust else "")
    rules = settlement.rules if isinstance(settlement.rules, str) else json.dumps(settlement.rules)
    out = [
        f"round {printable(str(settlement.round_id))}   rules {printable(rules)}",
        f"dealer: {' '.join(dealer.cards)} = {dealer.total}{state}",
    ]
    rows.append(("players' net", "", "", _signed(settlement.net)))
    widths = [max(len(row[i]) for row in rows) for i in range(4)]
    for a, b, c, d in rows:
        out.append(f"{a:<{widths[0]}}  {b:<{widths[1]}}  {c:<{widths[2]}}  {d:>{widths[3]}}")
    return "\n".join(out)
