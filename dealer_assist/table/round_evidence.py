"""What the camera and the dealer's screen showed as a round was played, kept with its record.

Each time the round on the screen holds more cards than before, the camera's latest frame is
taken (one per new card) and handed over with the round's id and the card's place in it; each
time the screen's round state changes it is handed over too. The surveillance store ties the
k-th card frame of a round to its k-th ``card`` event and records the screen after each
decision and at settlement (see :class:`~dealer_assist.table.recording.StoreRecorder`).
Neither is journaled: a table killed before its round ends resumes the round without them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from dealer_assist.table.camera_source import Snapshot
from dealer_assist.table.question_frames import Snapshots

#: Hands on a card's frame: the round's id, the card's place in the round's order (0: its
#: first card), the frame.
KeepCard = Callable[[str, int, Snapshot], None]
#: Hands on what the screen shows of a round: the round's id, ``{"phase", "round", "question"}``.
KeepScreen = Callable[[str, dict[str, Any]], None]


def cards_shown(round_state: Mapping[str, Any]) -> int:
    """The cards on the felt in a round view (a hole card shown face down counts)."""
    dealer = len(round_state.get("dealer", {}).get("cards", []))
    return dealer + sum(len(hand.get("cards", [])) for seat in round_state.get("seats", [])
                        for hand in seat.get("hands", []))


class RoundEvidence:
    """A view listener (``TableRunner.subscribe``): a camera frame for each new card of the
    round (none without a ``camera``, or while it has no frame) handed to ``keep_card``, and the
    screen's round state each time it changes handed to ``keep_screen``."""

    def __init__(self, camera: Snapshots | None, keep_card: KeepCard, keep_screen: KeepScreen):
        self.camera = camera
        self.keep_card = keep_card
        self.keep_screen = keep_screen
        self._round: str | None = None
        self._cards = 0
        self._shown: dict[str, Any] | None = None

    def __call__(self, view: Mapping[str, Any]) -> None:
        state = view.get("round")
        if not state or not state.get("round"):
            return
        round_id = str(state["round"])
        if round_id != self._round:
            self._round, self._cards, self._shown = round_id, 0, None
        cards = cards_shown(state)
        if cards > self._cards and self.camera is not None:
            snapshot = self.camera.snapshot()
            if snapshot is not None:
                for ordinal in range(self._cards, cards):
                    self.keep_card(round_id, ordinal, snapshot)
        self._cards = max(self._cards, cards)
        shown = {"phase": view.get("phase"), "round": state, "question": view.get("question")}
        if shown != self._shown:
            self._shown = shown
            self.keep_screen(round_id, shown)
