"""What the dealer's screen shows, as JSON-able data: the round as the screen may show it, each
device's state, and a settlement as PAY/TAKE lines."""

from __future__ import annotations

from typing import Any

from dealer_assist.rules import RoundEngine, Settlement, format_money


def payout_words(amount_text: str) -> tuple[str, str]:
    """("PAY", "$15.00"), ("TAKE", "$10.00") or ("PUSH", "$0.00") for a signed money string."""
    negative = amount_text.startswith("-")
    digits = amount_text.lstrip("-")
    whole, _, cents = digits.partition(".")
    shown = f"${int(whole):,}.{cents or '00'}"
    if negative:
        return "TAKE", shown
    if digits.strip("0.") == "":
        return "PUSH", shown
    return "PAY", shown


def round_view(engine: RoundEngine, shoe_read: bool, peek_pending: bool,
                  insurance_closed: bool) -> dict[str, Any]:
    """The round as the dealer's screen shows it. A hole card the shoe read (``shoe_read``)
    stays face down there until the players' turn is over, as on the felt (a dealer who could
    read it sooner could signal it), and out of the pack count; while insurance is open
    (``peek_pending``) nothing shows what the peek will find, a dealer blackjack or that there
    is none: no hand to act, no state past it. Insurance the dealer closed is shown closed."""
    view = engine.view()
    dealer = view["dealer"]["cards"]
    hidden = shoe_read and len(dealer) >= 2 and dealer[1] is not None and (
        peek_pending or engine.acting() is not None)  # none acts after a dealer blackjack
    if hidden:
        view["dealer"] = {"cards": [dealer[0], None, *dealer[2:]], "total": None}
        counts = view["shoe_counts"]
        counts[dealer[1]] -= 1
        if not counts[dealer[1]]:
            del counts[dealer[1]]
    if insurance_closed:
        view["insurance_open"] = False
    if peek_pending:
        view.update(acting=None, legal_actions=[], next_card=None, state=(
            "insurance open (an ace up): INSURE each seat that asks, then Close insurance"))
    return view


def device_state(fitted: bool, up: bool, moved: bool) -> str:
    if not fitted:
        return "not fitted"
    if not up:
        return "down"
    return "moved" if moved else "up"


def settlement_view(settlement: Settlement) -> dict[str, Any]:
    """A settlement as the screen shows it: per seat, each payout line as PAY/TAKE with its reason,
    and one total per seat."""
    seats = []
    for seat in settlement.seats:
        lines = []
        for line in seat.lines:
            verb, shown = payout_words(format_money(line.amount))
            lines.append(
                {
                    "hand": line.hand,
                    "kind": line.kind,
                    "reason": line.reason,
                    "amount": format_money(line.amount),
                    "verb": verb,
                    "shown": shown,
                }
            )
        verb, shown = payout_words(format_money(seat.net))
        seats.append(
            {
                "seat": seat.seat,
                "player": seat.player,
                "lines": lines,
                "net": format_money(seat.net),
                "verb": verb,
                "shown": shown,
            }
        )
    return {
        "round": settlement.round_id,
        "dealer": settlement.dealer.to_json(),
        "seats": seats,
        "net": format_money(settlement.net),
    }
