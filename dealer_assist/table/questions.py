"""The table's question to the dealer: the card it holds, the plays that could have taken it
there (readings), and how the screen words them."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from dealer_assist.roundlog import ShoeOrigin
from dealer_assist.rules import Action, Card, CardTarget
from dealer_assist.rules.readings import Reading


@dataclass(frozen=True, slots=True)
class HeldCard:
    """A card the table cannot place until the dealer answers, as it would be recorded."""

    card: Card | None
    landing: CardTarget | None
    sideways: bool
    face_down: bool = False
    origin: ShoeOrigin | None = None
    keyed: bool = False


@dataclass(frozen=True, slots=True)
class OpenQuestion:
    """The one question on the dealer's screen: which of ``choices`` (readings, labelled by
    ``labels`` in the same order) put ``held`` where it went; ``why`` the evidence left it open.
    """

    id: int
    round_id: str | None
    held: HeldCard
    choices: tuple[Reading, ...]
    labels: tuple[str, ...]
    text: str
    why: str
    asked_at: float

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "round": self.round_id,
            "card": self.held.card.code if self.held.card else None,
            "text": self.text,
            "why": self.why,
            "choices": [{"choice": i, "label": label} for i, label in enumerate(self.labels)],
        }


def reading_label(reading: Reading, hands: Mapping[int, int]) -> str:
    """A reading in the dealer's words: "HIT seat 2", "STAND seat 2, DOUBLE seat 3"; hands are
    numbered from 1 at a seat with more than one (``hands``: seat -> hands there now)."""

    def place(seat: int, hand: int) -> str:
        split = hands.get(seat, 1) > 1 or any(
            d.seat == seat and d.action is Action.SPLIT for d in reading.decisions)
        return f"seat {seat}" + (f" hand {hand + 1}" if split else "")

    words = [f"{d.action.name} {place(d.seat, d.hand)}" for d in reading.decisions]
    if reading.target.is_dealer:
        words.append("to the DEALER")
    elif reading.asked_by is None:
        words.append(f"to {place(reading.target.seat or 0, reading.target.hand or 0)}")
    return ", ".join(words)


def question_text(held: HeldCard, choices: tuple[Reading, ...], labels: tuple[str, ...]) -> str:
    """"JH at seat 2: HIT or DOUBLE?" where every choice puts the card in one place, else
    "Where did JH go?" (the choices' buttons name the plays)."""
    shown = held.card.code if held.card else "The card"
    places = {r.target for r in choices}
    if len(places) == 1 and all(r.asked_by is not None for r in choices) and \
            all(len(r.decisions) == 1 for r in choices):
        verbs = " or ".join(r.asked_by.name for r in choices if r.asked_by is not None)
        return f"{shown} at {labels[0].split(' ', 1)[1]}: {verbs}?"
    return f"Where did {shown} go?"
