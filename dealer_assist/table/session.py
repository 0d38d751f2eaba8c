"""The round in play: its round-log lines and their fold through the engine, numbered rounds one
after another. What the session holds always settles, read back as a log, as the screen showed."""

from __future__ import annotations

import json
from typing import Any

from dealer_assist.roundlog import End, Event, RoundFold, RoundStart, dumps_event, parse_event
from dealer_assist.rules import CardTarget, Settlement


class RoundSession:
    """A table's rounds, one at a time: ``fold`` (None before the first), its ``lines``; round
    ids ``<prefix>-NNNNN`` go on from ``number`` (the last round's). ``fields`` are carried on
    every round line (``"models"``: what reads the cards)."""

    def __init__(self, rules_spec: Any, table_id: str, prefix: str, number: int = 0,
                 fields: dict[str, Any] | None = None):
        self.fields = dict(fields or {})
        self.rules_spec = rules_spec
        self.table_id = table_id
        self.prefix = prefix
        self.number = number
        self.fold: RoundFold | None = None
        self.lines: list[str] = []

    @property
    def round_id(self) -> str | None:
        return None if self.fold is None else self.fold.start.id

    @property
    def open(self) -> bool:
        return self.fold is not None and not self.fold.ended

    def start(self, dealer_id: str | None = None) -> str:
        """A new round (the next number), dealt by ``dealer_id`` (carried on its round line and
        into its settlement as ``"dealer_id"``): its id."""
        self.number += 1
        round_id = f"{self.prefix}-{self.number:05d}"
        carried: dict[str, Any] = {"table": self.table_id, **self.fields}
        if dealer_id is not None:
            carried["dealer_id"] = dealer_id
        start = RoundStart(round_id, self.rules_spec, carried)
        self.fold = RoundFold(start)
        self.lines = [dumps_event(start)]
        return round_id

    def apply(self, event: Event) -> CardTarget | None:
        """Apply ``event`` as its recorded line reads back, so that the round log always settles
        as the round was played: what a log reader refuses (a hit given an amount) is refused
        here too (EventError); a refused event (RoundError, EventError) changes nothing."""
        assert self.fold is not None
        line = dumps_event(event)
        target = self.fold.apply(parse_event(json.loads(line)))
        self.lines.append(line)
        return target

    def close(self) -> Settlement:
        """End the round: its settlement (RoundError naming what is still owed)."""
        self.apply(End())
        assert self.fold is not None and self.fold.settlement is not None
        return self.fold.settlement

    def replace(self, fold: RoundFold, lines: list[str]) -> None:
        """The round replayed afresh (a corrected card): its new fold and lines."""
        self.fold, self.lines = fold, lines

    def void(self) -> tuple[str, list[str]]:
        """Drop the round in play: its id and lines, for the void's record."""
        voided = (self.round_id or "?", list(self.lines))
        self.fold, self.lines = None, []
        return voided
