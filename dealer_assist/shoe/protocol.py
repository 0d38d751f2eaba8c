"""The dealer-assist shoe protocol, version 1: framing, CRC and payloads.

See ``hardware/shoe-protocol.md`` for the full specification. A frame on the wire::

    STX(0x02) LEN body[LEN] CRC_HI CRC_LO ETX(0x03)
    body = VERSION(1) TYPE(1) SESSION(u32) SEQ(u32) payload      (big-endian)

The CRC is CRC-16/CCITT-FALSE over LEN and the body. This module is pure: it turns values into
bytes and bytes into :class:`Frame` values, never touching a port.
"""

from __future__ import annotations

import binascii
import enum
import struct
from dataclasses import dataclass

from dealer_assist.rules.cards import Card

STX = 0x02
ETX = 0x03
VERSION = 1
HEADER = struct.Struct(">BBII")  # version, type, session, seq
MIN_BODY = HEADER.size
MAX_BODY = 64
MAX_PAYLOAD = MAX_BODY - HEADER.size
FRAME_OVERHEAD = 5  # STX, LEN, two CRC bytes, ETX
MAX_FRAME = MAX_BODY + FRAME_OVERHEAD
UNREAD_CODE = b"??"

SERIAL_BAUDRATE = 115200
HEARTBEAT_INTERVAL_S = 0.5
LINK_TIMEOUT_S = 1.5
WINDOW = 16  # go-back-N: at most this many unacknowledged events in flight
STALE_HEARTBEATS = 6  # heartbeats (3 s) naming an acknowledged event: the shoe cannot hear us


def crc16_ccitt_false(data: bytes | bytearray | memoryview) -> int:
    """CRC-16/CCITT-FALSE (poly 0x1021, init 0xFFFF, no reflection, no final xor).

    Check value: ``crc16_ccitt_false(b"123456789") == 0x29B1``.
    """
    return binascii.crc_hqx(data, 0xFFFF)


class FrameType(enum.IntEnum):
    """Frame types. Shoe to host: 0x01-0x0A; host to shoe: 0x81-0x82."""

    CARD = 0x01
    BURN = 0x02
    UNREADABLE = 0x03
    CUT_CARD = 0x04
    SHOE_EMPTY = 0x05
    SHOE_LOADED = 0x06
    HEARTBEAT = 0x07
    ALARM = 0x08
    LID_OPENED = 0x09
    LID_CLOSED = 0x0A
    ACK = 0x81
    RESEND = 0x82


class DeckKind(enum.IntEnum):
    SPANISH = 0  # 48 cards: no pip tens
    STANDARD = 1  # 52 cards


CARD_PAYLOAD = struct.Struct(">2sH")  # code, index
INDEX_PAYLOAD = struct.Struct(">H")
LOADED_PAYLOAD = struct.Struct(">BBHII")  # decks, deck kind, cards, previous session, seq
ALARM_CODE = struct.Struct(">B")
HEARTBEAT_PAYLOAD = struct.Struct(">II")  # oldest unacknowledged event: session, seq (0, 0: none)


@dataclass(frozen=True, slots=True)
class Frame:
    """One CRC-checked frame; ``offset`` is the stream offset of its STX byte."""

    version: int
    type: int
    session: int
    seq: int
    payload: bytes
    offset: int


def encode_frame(frame_type: int, session: int, seq: int, payload: bytes = b"") -> bytes:
    """The wire bytes of one frame."""
    if len(payload) > MAX_PAYLOAD:
        raise ValueError(f"payload of {len(payload)} bytes exceeds {MAX_PAYLOAD}: {payload!r}")
    body = HEADER.pack(VERSION, frame_type, session, seq) + payload
    covered = bytes([len(body)]) + body
    return bytes([STX]) + covered + crc16_ccitt_false(covered).to_bytes(2, "big") + bytes([ETX])


def card_payload(card: Card | None, index: int) -> bytes:
    """Payload of a CARD or BURN frame; ``None`` is an unread burn card (``??``)."""
    code = UNREAD_CODE if card is None else card.code.encode("ascii")
    return CARD_PAYLOAD.pack(code, index)


def index_payload(index: int) -> bytes:
    """Payload of UNREADABLE, CUT_CARD and SHOE_EMPTY frames."""
    return INDEX_PAYLOAD.pack(index)


def loaded_payload(
    decks: int, kind: DeckKind, cards: int, previous_session: int, previous_seq: int
) -> bytes:
    """Payload of a SHOE_LOADED frame."""
    return LOADED_PAYLOAD.pack(decks, kind, cards, previous_session, previous_seq)


def alarm_payload(code: int, text: str) -> bytes:
    """Payload of an ALARM frame: code then UTF-8 text, cut to fit a frame."""
    raw = text.encode("utf-8")[: MAX_PAYLOAD - 1]
    return ALARM_CODE.pack(code) + raw.decode("utf-8", "ignore").encode("utf-8")


@dataclass(slots=True)
class FramingStats:
    """Counters of what the framing layer dropped (running totals since creation)."""

    frames: int = 0
    bad_crc: int = 0
    bad_end: int = 0
    overlong: int = 0
    too_short: int = 0
    discarded_bytes: int = 0


class FrameSplitter:
    """Finds CRC-valid frames in a byte stream split anywhere; resynchronises after garbage.

    A candidate that fails (length out of range, wrong end byte, bad CRC) costs one byte: the
    search restarts just after its STX, so a real frame hidden behind garbage is still found.
    """

    def __init__(self) -> None:
        self._buffer = bytearray()
        self._buffer_offset = 0  # stream offset of _buffer[0]
        self.stats = FramingStats()

    @property
    def stream_offset(self) -> int:
        """Bytes fed so far."""
        return self._buffer_offset + len(self._buffer)

    def reset(self) -> None:
        """Forget a partial frame (the link was re-opened); its bytes count as discarded."""
        self.stats.discarded_bytes += len(self._buffer)
        self._buffer_offset += len(self._buffer)
        self._buffer.clear()

    def feed(self, data: bytes | bytearray | memoryview) -> list[Frame]:
        """Append bytes; return every complete valid frame, in stream order."""
        buf = self._buffer
        buf += data
        frames: list[Frame] = []
        stats = self.stats
        pos = 0
        end = len(buf)
        while pos < end:
            start = buf.find(STX, pos)
            if start < 0:
                stats.discarded_bytes += end - pos
                pos = end
                break
            stats.discarded_bytes += start - pos
            pos = start
            if end - pos < 2:
                break
            length = buf[pos + 1]
            if length > MAX_BODY or length < MIN_BODY:
                if length > MAX_BODY:
                    stats.overlong += 1
                else:
                    stats.too_short += 1
                stats.discarded_bytes += 1
                pos += 1
                continue
            total = length + FRAME_OVERHEAD
            if end - pos < total:
                break
            if buf[pos + total - 1] != ETX:
                stats.bad_end += 1
                stats.discarded_bytes += 1
                pos += 1
                continue
            crc = (buf[pos + total - 3] << 8) | buf[pos + total - 2]
            if binascii.crc_hqx(buf[pos + 1 : pos + 2 + length], 0xFFFF) != crc:
                stats.bad_crc += 1
                stats.discarded_bytes += 1
                pos += 1
                continue
            version, frame_type, session, seq = HEADER.unpack_from(buf, pos + 2)
            payload = bytes(buf[pos + 2 + HEADER.size : pos + 2 + length])
            frames.append(
                Frame(version, frame_type, session, seq, payload, self._buffer_offset + pos)
            )
            stats.frames += 1
            pos += total
        del buf[:pos]
        self._buffer_offset += pos
        return frames
