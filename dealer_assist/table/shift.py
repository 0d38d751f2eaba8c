"""The dealer's shift at a table: who is signed in, changed between rounds only, and the touches
taken only from a signed-in dealer."""

from __future__ import annotations

from typing import Protocol

from dealer_assist.table.alarms import Alarm, AlarmKind
from dealer_assist.table.sources import (
    AnswerQuestion,
    CloseInsurance,
    ConfirmFelt,
    CorrectCard,
    Decide,
    FinishRound,
    Insure,
    KeyCard,
    NewShoe,
    PlaceBet,
    SignIn,
    SignOut,
    StaffRefused,
    TableInput,
)

#: Touches taken only from a signed-in dealer (a touched New shoe too: see :func:`unsigned`).
NEEDS_DEALER = (PlaceBet, Decide, Insure, CloseInsurance, FinishRound, KeyCard, CorrectCard,
                AnswerQuestion, ConfirmFelt)


class ShiftTable(Protocol):
    """What the dealer's shift asks of the table."""

    dealer: str | None

    @property
    def round_open(self) -> bool: ...
    @property
    def round_id(self) -> str | None: ...
    def alarm(self, kind: AlarmKind, text: str, resolved: bool = False) -> Alarm: ...


def unsigned(table: ShiftTable, item: TableInput) -> bool:
    """A touch that needs a signed-in dealer, with none signed in."""
    touched = isinstance(item, NEEDS_DEALER) or isinstance(item, NewShoe) and item.touched
    return touched and table.dealer is None


def touch_words(item: TableInput) -> str:
    """A touch as the screen names it, for an alarm: "PlaceBet" is "a bet"."""
    return {PlaceBet: "a bet", Decide: "a decision", Insure: "insurance",
            CloseInsurance: "Close insurance", FinishRound: "Finish round", KeyCard: "a card",
            CorrectCard: "a correction", AnswerQuestion: "an answer", ConfirmFelt:
            "Confirm felt", NewShoe: "New shoe"}.get(type(item), type(item).__name__)


def sign_in(table: ShiftTable, item: SignIn) -> None:
    """A dealer changes between rounds only: refused while a round is in play."""
    if table.dealer == item.dealer:
        return
    if table.round_open:
        table.alarm(AlarmKind.STAFF, f"{item.dealer} signed in while {table.dealer} deals "
                    f"round {table.round_id}: refused; a dealer changes between rounds")
        return
    before = f" (after {table.dealer})" if table.dealer else ""
    table.dealer = item.dealer
    table.alarm(AlarmKind.STAFF, f"dealer {item.dealer} signed in{before}", resolved=True)


def sign_out(table: ShiftTable, item: SignOut) -> None:
    """The dealer signs out between rounds only."""
    if table.dealer is None:
        return
    if table.round_open:
        table.alarm(AlarmKind.STAFF, f"{table.dealer} cannot sign out during round "
                    f"{table.round_id}: finish or void it first")
        return
    table.alarm(AlarmKind.STAFF, f"dealer {table.dealer} signed out", resolved=True)
    table.dealer = None


def staff_refused(table: ShiftTable, item: StaffRefused) -> None:
    table.alarm(AlarmKind.STAFF, f"{item.action} refused: {item.why}", resolved=True)
