"""Folding round-log events through the engine: the one path live play, settle and replay share."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from dealer_assist.roundlog.events import (
    LOG_VERSION,
    Event,
    EventError,
    RoundStart,
    parse_event,
)
from dealer_assist.roundlog.report import printable
from dealer_assist.rules import CardTarget, RoundEngine, RoundError, RuleSet, Settlement

_MAX_SHOWN = 160


class LogError(ValueError):
    """A rejected round log: names the line number, the event and why."""

    def __init__(self, line: int | None, event_text: str | None, why: str):
        self.line = line
        self.event_text = event_text
        self.why = why
        where = f"line {line}" if line is not None else "end of log"
        shown = ""
        if event_text:
            text = event_text if len(event_text) <= _MAX_SHOWN else event_text[:_MAX_SHOWN] + "..."
            text = printable(text)
            shown = f": {text}"
        super().__init__(f"{where}{shown}: {why}")


@dataclass(frozen=True, slots=True)
class LoggedEvent:
    """An event with the line it came from (1-based) and that line's text."""

    line: int
    text: str
    event: Event


def read_events(lines: Iterable[str | bytes]) -> Iterator[LoggedEvent]:
    """Parse JSON Lines into events; blank lines are skipped; the round line sets the version.

    Lines may be bytes (a file opened in binary), so that text that is not UTF-8 is refused
    naming its line; a byte-order mark before the first line is allowed."""
    version = LOG_VERSION
    for number, raw in enumerate(lines, start=1):
        text = _decoded(raw, number).strip()
        if not text:
            continue
        try:
            obj = load_strict(text)
        except StrictJSONError as error:
            raise LogError(number, text, str(error)) from None
        try:
            if isinstance(obj, dict) and obj.get("type") == "round":
                version = obj.get("version", LOG_VERSION)
            event = parse_event(obj, version)
        except (EventError, ValueError) as error:
            raise LogError(number, text, str(error)) from None
        yield LoggedEvent(number, text, event)


class StrictJSONError(ValueError):
    """Text :func:`load_strict` refuses; the message says why ("not valid JSON (...)")."""


class AmbiguousJSONError(StrictJSONError):
    """JSON that Python reads but money must not come from: NaN or Infinity, a key given twice."""


def load_strict(text: str | bytes) -> Any:
    """JSON read as money must be: numbers with a fraction as ``Decimal`` (never float).

    Raises :class:`AmbiguousJSONError` for what readers take differently (a key given twice,
    which Python would keep the last of; ``NaN`` or ``Infinity``) and :class:`StrictJSONError`
    for anything else that is not JSON: a syntax error, bytes not UTF-8, nesting too deep, an
    integer past Python's limit on digits."""
    try:
        if isinstance(text, bytes):  # json.loads would take UTF-16 and UTF-32 too
            text = text.decode("utf-8")
        return json.loads(text, parse_float=Decimal, parse_constant=_no_constant,
                          object_pairs_hook=_no_repeated_keys)
    except StrictJSONError:
        raise
    except json.JSONDecodeError as error:
        raise StrictJSONError(f"not valid JSON ({error.msg} at column {error.colno})") from None
    except RecursionError:
        raise StrictJSONError("not valid JSON (nested too deeply)") from None
    except UnicodeDecodeError:
        raise StrictJSONError("not valid JSON (not UTF-8 text)") from None
    except ValueError:  # an integer past Python's limit on digits
        raise StrictJSONError("not valid JSON (a number with too many digits)") from None


def _no_constant(name: str) -> Any:
    raise AmbiguousJSONError(f"ambiguous JSON ({name} is not a number)")


def _no_repeated_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj: dict[str, Any] = {}
    for key, value in pairs:
        if key in obj:
            raise AmbiguousJSONError(f"ambiguous JSON (key {key!r} is given twice)")
        obj[key] = value
    return obj


def _decoded(raw: str | bytes, number: int) -> str:
    if isinstance(raw, str):
        return raw.removeprefix("\ufeff") if number == 1 else raw
    try:
        return raw.decode("utf-8-sig" if number == 1 else "utf-8")
    except UnicodeDecodeError as error:
        shown = raw.decode("utf-8", errors="replace").strip()
        raise LogError(number, shown, f"not UTF-8 text (byte 0x{raw[error.start]:02x} at "
                                      f"column {error.start + 1})") from None


class RoundFold:
    """Applies one round's events to a :class:`RoundEngine` and remembers what it has seen."""

    def __init__(self, start: RoundStart):
        try:
            rules = RuleSet.from_spec(start.rules)
        except ValueError as error:
            raise EventError(str(error)) from None
        self.start = start
        self.engine = RoundEngine(rules, start.id, rules_spec=start.rules, extra=start.extra)
        self.ended = False
        self.settlement: Settlement | None = None

    def apply(self, event: Event) -> CardTarget | None:
        """Apply one event; returns where a card went. Raises RoundError/EventError on refusal."""
        if self.ended:
            raise EventError("the round has already ended")
        result = event.apply_to(self.engine)
        if isinstance(result, Settlement):
            self.settlement = result
            self.ended = True
            return None
        return result


def settle_rounds(lines: Iterable[str | bytes]) -> Iterator[Settlement]:
    """Settle every round in a log, in order; raises :class:`LogError` at the first refusal."""
    fold: RoundFold | None = None
    last_line: int | None = None
    for logged in read_events(lines):
        last_line = logged.line
        event = logged.event
        try:
            if fold is None or fold.ended:
                if not isinstance(event, RoundStart):
                    what = "the first line" if fold is None else "a line after 'end'"
                    raise EventError(f"{what} must be a 'round' event")
                fold = RoundFold(event)
                continue
            fold.apply(event)
            if fold.settlement is not None:
                yield fold.settlement
        except (RoundError, EventError) as error:
            raise LogError(logged.line, logged.text, str(error)) from None
    if fold is None:
        raise LogError(None, None, "the log is empty: no 'round' line")
    if not fold.ended:
        try:
            settlement = fold.engine.settle()
        except RoundError as error:
            raise LogError(
                None, None, f"the log stops after line {last_line} before the round ends: {error}"
            ) from None
        yield settlement


def settle_log(lines: Iterable[str | bytes]) -> Settlement:
    """Settle a log holding exactly one round."""
    settlements = list(settle_rounds(lines))
    if len(settlements) != 1:
        raise LogError(None, None, f"expected one round, found {len(settlements)}")
    return settlements[0]
