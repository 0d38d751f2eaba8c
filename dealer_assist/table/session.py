"""The round in play: its round-log lines and their fold through the engine, numbered rounds one
after another. What the session holds always settles, read back as a log, as the screen showed.

The session tells its :class:`Recorder` each line as it is added (the round's start, each event,
its end and settlement, a void, a round rewritten by a correction), so the recording store holds
the round as it is played, not only once it ends.

Each line it writes carries ``at`` (round-log extension): the UTC time the input that caused it
was handed to the table, as the loop set :attr:`RoundSession.at` for that input (journaled with
it, so a replay writes the same time); none while it is None."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from typing import Any, Protocol

from dealer_assist.roundlog import (
    End,
    Event,
    RoundFold,
    RoundStart,
    dumps_event,
    parse_event,
    read_events,
)
from dealer_assist.rules import CardTarget, Settlement
from dealer_assist.table.alarms import Alarm


class Recorder(Protocol):
    """Where a table's rounds and alarms go, as they happen: a round's first line, each line
    after it, its settlement (its ``end`` line already given) or its void, the whole round again
    after a correction replayed it, and every alarm. Each call hands the record over; a recorder
    that writes later (the store's thread) keeps the order it was given."""

    def begin_round(self, round_id: str, line: str) -> None: ...

    def round_event(self, round_id: str, line: str) -> None: ...

    def rewrite_round(self, round_id: str, lines: list[str]) -> None: ...

    def end_round(self, round_id: str, settlement: Settlement) -> None: ...

    def void_round(self, round_id: str, reason: str) -> None: ...

    def write_alarm(self, alarm: Alarm) -> None: ...


Tell = Callable[[Callable[[Recorder], None]], None]
"""Hands one call to the table's recorder (the loop's: a failure is an alarm, play goes on)."""


def _untold(call: Callable[[Recorder], None]) -> None:
    pass


class RoundSession:
    """A table's rounds, one at a time: ``fold`` (None before the first), its ``lines``; round
    ids ``<prefix>-NNNNN`` go on from ``number`` (the last round's). ``fields`` are carried on
    every round line (``"models"``: what reads the cards). ``tell``: how each line, settlement
    and void reaches the recorder (default: nowhere). ``at``: the round-log time
    (``format_at``) of the input being handled, written on each new line."""

    def __init__(self, rules_spec: Any, table_id: str, prefix: str, number: int = 0,
                 fields: dict[str, Any] | None = None, tell: Tell = _untold):
        self.fields = dict(fields or {})
        self.tell = tell
        self.rules_spec = rules_spec
        self.table_id = table_id
        self.prefix = prefix
        self.number = number
        self.fold: RoundFold | None = None
        self.lines: list[str] = []
        self.at: str | None = None

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
        if self.at is not None:
            carried["at"] = self.at
        start = RoundStart(round_id, self.rules_spec, carried)
        self.fold = RoundFold(start)
        self.lines = [line := dumps_event(start)]
        self.tell(lambda recorder: recorder.begin_round(round_id, line))
        return round_id

    def apply(self, event: Event) -> CardTarget | None:
        """Apply ``event`` as its recorded line reads back, so that the round log always settles
        as the round was played: what a log reader refuses (a hit given an amount) is refused
        here too (EventError); a refused event (RoundError, EventError) changes nothing."""
        assert self.fold is not None
        if self.at is not None and not isinstance(event, RoundStart) and event.at is None:
            event = dataclasses.replace(event, at=self.at)
        line = dumps_event(event)
        target = self.fold.apply(parse_event(json.loads(line)))
        self.lines.append(line)
        round_id = self.round_id or "?"
        self.tell(lambda recorder: recorder.round_event(round_id, line))
        return target

    def close(self) -> Settlement:
        """End the round: its settlement (RoundError naming what is still owed)."""
        self.apply(End())
        assert self.fold is not None and self.fold.settlement is not None
        round_id, settlement = self.round_id or "?", self.fold.settlement
        self.tell(lambda recorder: recorder.end_round(round_id, settlement))
        return settlement

    def show_ended(self, lines: list[str]) -> None:
        """The ended round a restarted table shows (its PAY/TAKE still owed on the felt): its
        fold from its recorded ``lines``, told to no recorder (it is recorded already). Raises
        ValueError (LogError, RoundError) where they are no ended round."""
        events = [logged.event for logged in read_events(lines)]
        if not events or not isinstance(events[0], RoundStart):
            raise ValueError("its first line is no round line")
        fold = RoundFold(events[0])
        for event in events[1:]:
            fold.apply(event)
        if not fold.ended:
            raise ValueError("it does not end")
        self.fold, self.lines = fold, list(lines)

    def replace(self, fold: RoundFold, lines: list[str]) -> None:
        """The round replayed afresh (a corrected card): its new fold and lines."""
        self.fold, self.lines = fold, lines
        round_id, copy = fold.start.id or "?", list(lines)
        self.tell(lambda recorder: recorder.rewrite_round(round_id, copy))

    def void(self, reason: str) -> tuple[str, list[str]]:
        """Drop the round in play, recorded as voided for ``reason``: its id and lines."""
        voided = (self.round_id or "?", list(self.lines))
        self.fold, self.lines = None, []
        self.tell(lambda recorder: recorder.void_round(voided[0], reason))
        return voided
