"""Adapter for plain ASCII shoes: no sequence numbers, no CRC, typically 9600 8N1.

The only real shoe format in open code (a reverse-engineered Bee-Tek shoe) sends messages such as
``[Game]<Card:4S>``, ``[Manual Burn Cards]<Card:H3>`` (suit first also occurs), ``[Game]<Game>``
(a card it could not read), ``[Game]<Alarm:E3 Card Not Read>``, ``[GameAlarm]<Alarm:...>`` and
``<W0x01>`` (a warning code), separated by spaces or line ends. Such a shoe cannot resend, so a
garbled message is reported (:class:`MalformedFrame`) and losses are found by counting cards against
the shoe's composition (:meth:`AsciiShoeDecoder.end_of_shoe`). The decoder numbers events itself so
the rest of the program treats both kinds of shoe alike.
"""

from __future__ import annotations

import re
from collections import Counter

from dealer_assist.rules.cards import Card, CardCodeError, spanish_shoe
from dealer_assist.shoe.events import (
    BurnCard,
    CardDrawn,
    CountMismatch,
    MalformedFrame,
    SequencedEvent,
    ShoeAlarm,
    ShoeEmpty,
    ShoeEvent,
    ShoeLoaded,
    UnreadableCard,
)

ASCII_BAUDRATE = 9600

_TOKEN = re.compile(
    rb"\[(?P<op>[^\[\]<>\r\n]{1,40})\]<(?P<body>[^\[\]<>\r\n]{1,60})>|<(?P<warn>W0x[0-9A-Fa-f]{1,8})>"
)
_PARTIAL = re.compile(
    rb"(\[[^\[\]<>\r\n]{0,40}(\](<[^\[\]<>\r\n]{0,60})?)?|<(W(0(x[0-9A-Fa-f]{0,8})?)?)?)\Z"
)
_SEPARATORS = re.compile(rb"[\s\x00]*")
_GARBAGE_END = re.compile(rb"[\s\x00\[<]")
_ALARM_CODE = re.compile(r"E(\d{1,3})\b", re.IGNORECASE)
_GAME_OPS = {"game": False, "manual burn cards": True}  # op -> is a burn
_ALARM_OPS = {"game", "gamealarm", "manual burn cards"}


def parse_ascii_card(text: str) -> Card:
    """A card code as an ASCII shoe writes it: ``4S``, ``10H`` or suit first (``H3``)."""
    text = text.strip().upper()
    try:
        return Card.parse(text)
    except CardCodeError:
        if text[:1] in ("S", "H", "D", "C"):
            return Card.parse(text[1:] + text[0])
        raise


class AsciiShoeDecoder:
    """Bytes of an ASCII shoe in (split anywhere), numbered events out.

    ``decks`` is the shoe's composition (Spanish decks), which the shoe itself never states.
    The first feed starts session 1 with a :class:`ShoeLoaded` marked ``assumed`` (the shoe
    never says it was loaded: a decoder starting, as at every start of a table, is no
    reshuffle); :meth:`new_shoe` starts the next.
    """

    awaiting_resend = False  # an ASCII shoe cannot resend
    stale_heartbeats = 0  # nor send heartbeats

    def __init__(self, decks: int) -> None:
        self.composition = spanish_shoe(decks)
        self.decks = decks
        self.session = 0
        self._seq = 0
        self._index = 0
        self._counted: Counter[Card] = Counter()
        self._unreadable = 0
        self._buffer = bytearray()
        self._buffer_offset = 0
        self.messages = 0
        self.garbled = 0
        self._in_garbage = False  # since the last message: noise is one report, not one a byte
        self._pending_load = True

    @property
    def frames_seen(self) -> int:
        return self.messages

    def ack_frame(self) -> None:
        return None

    def resend_frame(self) -> None:
        return None

    def link_reset(self) -> None:
        """The port was re-opened: a partial message is lost (reported as garbled)."""
        self._buffer_offset += len(self._buffer)
        self._buffer.clear()
        self._in_garbage = False

    def _next(self) -> tuple[int, int]:
        self._seq += 1
        return self.session, self._seq

    def new_shoe(self, assumed: bool = False) -> list[ShoeEvent]:
        """Start counting a fresh shoe (the dealer loaded one): a :class:`ShoeLoaded` event;
        ``assumed``: none was reported, the decoder starts counting (see :class:`ShoeLoaded`)."""
        self.session += 1
        self._seq = 0
        self._index = 0
        self._counted = Counter()
        self._unreadable = 0
        self._pending_load = False
        total = sum(self.composition.values())
        return [ShoeLoaded(*self._next(), self.decks, True, total, 0, 0, assumed)]

    def end_of_shoe(self) -> list[ShoeEvent]:
        """Reconcile the cards read against the composition: a :class:`CountMismatch` if any card
        is missing or in excess (call once every card has passed through the reader)."""
        missing = self.composition - self._counted
        excess = self._counted - self.composition
        if not missing and not excess:
            return []
        counted = sum(self._counted.values())
        return [
            CountMismatch(
                self.session,
                counted,
                sum(self.composition.values()),
                tuple(sorted(c.code for c in missing.elements())),
                tuple(sorted(c.code for c in excess.elements())),
            )
        ]

    def feed(self, data: bytes | bytearray | memoryview) -> list[ShoeEvent]:
        """Decode bytes; return the events of every complete message, in order."""
        events: list[ShoeEvent] = self.new_shoe(assumed=True) if self._pending_load else []
        buf = self._buffer
        buf += data
        pos = 0
        while True:
            pos = _SEPARATORS.match(buf, pos).end()  # type: ignore[union-attr]
            if pos >= len(buf):
                break
            match = _TOKEN.match(buf, pos)
            if match is not None:
                events.extend(self._message(match, self._buffer_offset + pos))
                self._in_garbage = False
                pos = match.end()
                continue
            if _PARTIAL.match(buf, pos):
                break  # an incomplete message: wait for the rest
            stop = _GARBAGE_END.search(buf, pos + 1)
            end = stop.start() if stop else len(buf)
            if not self._in_garbage:  # the rest of a burst, up to the next message, is merged
                text = bytes(buf[pos:min(end, pos + 40)])
                self.garbled += 1
                events.append(
                    MalformedFrame(
                        *self._next(), self._buffer_offset + pos,
                        f"unrecognised text {text!r}{' ...' if end > pos + 40 else ''} "
                        "(and any more before the next message)",
                    )
                )
                self._in_garbage = True
            pos = end
        del buf[:pos]
        self._buffer_offset += pos
        events.extend(self._check_complete(events))
        return events

    def _check_complete(self, events: list[ShoeEvent]) -> list[ShoeEvent]:
        drawn = sum(self._counted.values()) + self._unreadable
        if drawn != sum(self.composition.values()):
            return []
        if not any(isinstance(e, CardDrawn | BurnCard | UnreadableCard) for e in events):
            return []
        return [ShoeEmpty(*self._next(), self._index), *self.end_of_shoe()]

    def _message(self, match: re.Match[bytes], offset: int) -> list[SequencedEvent]:
        self.messages += 1
        if match["warn"] is not None:
            warning = match["warn"].decode("ascii")
            return [ShoeAlarm(*self._next(), int(warning[3:], 16), f"warning {warning}")]
        op = match["op"].decode("latin-1").strip()
        body = match["body"].decode("latin-1").strip()
        name, _, value = body.partition(":")
        op_key, name_key = op.lower(), name.strip().lower()
        if name_key == "alarm" and op_key in _ALARM_OPS:
            code = _ALARM_CODE.match(value.strip())
            return [ShoeAlarm(*self._next(), int(code[1]) if code else 0, value.strip())]
        if op_key in _GAME_OPS and name_key == "game" and not value:
            self._index += 1
            self._unreadable += 1
            if _GAME_OPS[op_key]:
                return [BurnCard(*self._next(), None, self._index)]
            return [UnreadableCard(*self._next(), self._index)]
        if op_key in _GAME_OPS and name_key == "card":
            try:
                card = parse_ascii_card(value)
            except CardCodeError:
                return [self._garbled(offset, f"bad card code in [{op}]<{body}>")]
            self._index += 1
            self._counted[card] += 1
            if _GAME_OPS[op_key]:
                return [BurnCard(*self._next(), card, self._index)]
            return [CardDrawn(*self._next(), card, self._index)]
        return [self._garbled(offset, f"unknown message [{op}]<{body}>")]

    def _garbled(self, offset: int, reason: str) -> MalformedFrame:
        self.garbled += 1
        return MalformedFrame(*self._next(), offset, reason)
