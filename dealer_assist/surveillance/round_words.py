"""A round's events in words, for the page and the incident report.

Each event says what happened, to which seat and hand (numbered from 1, as people count them),
and by whom it is known: the ``shoe`` (a card it dealt), the ``camera`` (a card it read, or where
it saw a card land), the ``dealer`` (a bet or insurance entered, a question answered at the
screen, a card keyed or corrected), or the ``table`` (a decision, taken from the dealer's touch or
the camera's sighting, where the event's ``by`` does not say which). Where a card went is the
engine's assignment, folded from the events as replay folds them; a camera's ``to`` that says
otherwise is shown beside it.
"""

from __future__ import annotations

from typing import Any

from dealer_assist.roundlog import EventError, RoundFold, RoundStart, parse_event
from dealer_assist.rules import CardTarget, RoundError


def _place(target: CardTarget | None) -> str | None:
    if target is None:
        return None
    if target.seat is None:
        return "the dealer"
    return f"seat {target.seat}" + ("" if target.hand is None else f" hand {target.hand + 1}")


def _seen_at(to: Any) -> str | None:
    if to == "dealer":
        return "the dealer"
    if isinstance(to, dict) and isinstance(to.get("seat"), int):
        hand = to.get("hand")
        return f"seat {to['seat']}" + (f" hand {hand + 1}" if isinstance(hand, int) else "")
    return None


def _card_words(event: dict[str, Any], target: CardTarget | None) -> tuple[str, str]:
    card = event.get("card")
    place = _place(target) or _seen_at(event.get("to")) or "a hand the engine could not place"
    if event.get("type") == "reveal":
        text = f"the dealer's hole card is {card}"
    elif card is None:
        text = f"a card face down to {place}"
    else:
        text = f"{card} to {place}"
    shoe = event.get("shoe")
    if event.get("keyed") is True:
        by = "dealer"
        text += " (keyed in by the dealer: no reader saw it)"
    elif isinstance(shoe, dict):
        by = "shoe"
        text += f" (shoe card {shoe.get('index')})"
    else:
        by = "camera"
    seen = _seen_at(event.get("to"))
    if seen is not None and by != "camera":
        text += f"; the camera saw it land at {seen}"
    if seen is not None and target is not None and seen != place:
        text += f" (the engine puts it at {place})"
    corrected = event.get("corrected")
    if isinstance(corrected, str):
        by = "dealer"
        text += f"; corrected by the dealer from {corrected}"
        if event.get("corrected_by"):
            text += f", approved by supervisor {event['corrected_by']}"
    return text, by


def _hand(event: dict[str, Any]) -> str:
    hand = event.get("hand")
    return f" hand {hand + 1}" if isinstance(hand, int) and not isinstance(hand, bool) else ""


def _by(event: dict[str, Any], default: str) -> str:
    """Who an event is known by: its ``by`` (a round-log extension) where it names one, else
    ``default``: ``dealer`` for what only the screen takes (bets, insurance), ``table`` for a
    decision, which the table takes from the dealer's touch or from where the camera saw the
    card land, and a log without ``by`` does not say which."""
    by = event.get("by")
    return by if by in ("dealer", "camera", "shoe") else default


def event_words(event: Any, target: CardTarget | None = None) -> tuple[str, str]:
    """One event (its JSON object) in words, and who it is known by."""
    if not isinstance(event, dict):
        return f"unreadable event {event!r}", ""
    kind = event.get("type")
    seat = event.get("seat")
    if kind == "round":
        dealer = event.get("dealer_id")
        return (f"round {event.get('id')} begins (rules {event.get('rules')}"
                + (f", dealer {dealer}" if dealer else "") + ")", "table")
    if kind == "bet":
        wager = " on Match the Dealer" if event.get("wager") == "match" else ""
        player = f" (player {event['player']})" if event.get("player") else ""
        return f"seat {seat} bets {event.get('amount')}{wager}{player}", _by(event, "dealer")
    if kind in ("card", "reveal"):
        return _card_words(event, target)
    if kind == "insurance":
        return (f"seat {seat} takes insurance for {event.get('amount')}",
                _by(event, "dealer"))
    if kind == "action":
        amount = f" {event['amount']}" if event.get("amount") is not None else ""
        return (f"seat {seat}{_hand(event)}: {event.get('action')}{amount}",
                _by(event, "table"))
    if kind == "question":
        waited = event.get("waited_s")
        return (f"asked \"{event.get('text')}\" ({event.get('why')}); answered"
                f" \"{event.get('answer')}\"" + (f" after {waited} s" if waited else ""),
                str(event.get("by") or "dealer"))
    if kind == "end":
        return "the round is closed", "dealer"
    return f"{kind} event", ""


def round_in_words(events: list[Any]) -> list[dict[str, str]]:
    """Every event of a round (the round line first) in words, with who it is known by; cards
    placed where the engine assigns them, as far as the engine accepts the events."""
    fold: RoundFold | None = None
    out = []
    for event in events:
        target: CardTarget | None = None
        if isinstance(event, dict):
            try:
                parsed = parse_event(event)
                if fold is None:
                    fold = RoundFold(parsed) if isinstance(parsed, RoundStart) else None
                elif not fold.ended:
                    target = fold.apply(parsed)
            except (EventError, RoundError, ValueError):
                fold = None  # refused: replay says why; later cards where they were seen
        text, by = event_words(event, target)
        out.append({"text": text, "by": by})
    return out
