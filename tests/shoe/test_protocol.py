"""CRC and framing: the check value, a bit-by-bit reference, and frames split anywhere."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dealer_assist.rules.cards import Card
from dealer_assist.shoe import protocol
from dealer_assist.shoe.protocol import FrameSplitter, FrameType, crc16_ccitt_false, encode_frame


def reference_crc16_ccitt_false(data: bytes) -> int:
    """Bit-by-bit CRC-16/CCITT-FALSE straight from its definition (poly 0x1021, init 0xFFFF)."""
    crc = 0xFFFF
    for byte in data:
        crc ^= byte << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) if crc & 0x8000 else (crc << 1)
            crc &= 0xFFFF
    return crc


def test_crc_matches_the_published_check_value() -> None:
    assert crc16_ccitt_false(b"123456789") == 0x29B1
    assert reference_crc16_ccitt_false(b"123456789") == 0x29B1


@settings(max_examples=200)
@given(st.binary(max_size=80))
def test_crc_matches_the_bitwise_definition(data: bytes) -> None:
    assert crc16_ccitt_false(data) == reference_crc16_ccitt_false(data)


def test_frame_layout_is_stx_len_body_crc_etx() -> None:
    frame = encode_frame(FrameType.CARD, 0x01020304, 7, b"7S\x00\x05")
    assert frame[0] == protocol.STX and frame[-1] == protocol.ETX
    assert frame[1] == len(frame) - protocol.FRAME_OVERHEAD == 14
    assert frame[2:4] == bytes([protocol.VERSION, FrameType.CARD])
    assert frame[4:8] == b"\x01\x02\x03\x04" and frame[8:12] == (7).to_bytes(4, "big")
    assert int.from_bytes(frame[-3:-1], "big") == crc16_ccitt_false(frame[1:-3])


def test_payload_too_long_is_refused() -> None:
    with pytest.raises(ValueError, match="exceeds"):
        encode_frame(FrameType.ALARM, 1, 1, bytes(protocol.MAX_PAYLOAD + 1))


def test_alarm_text_is_cut_to_fit_on_a_character_boundary() -> None:
    payload = protocol.alarm_payload(9, "é" * 100)
    assert len(payload) <= protocol.MAX_PAYLOAD
    payload[1:].decode("utf-8")  # still valid UTF-8


def test_every_split_point_gives_the_same_frames() -> None:
    stream = b"".join(encode_frame(FrameType.LID_OPENED, 5, seq) for seq in range(1, 4))
    for cut in range(len(stream) + 1):
        splitter = FrameSplitter()
        frames = splitter.feed(stream[:cut]) + splitter.feed(stream[cut:])
        assert [f.seq for f in frames] == [1, 2, 3]
        assert [f.offset for f in frames] == [0, 15, 30]


def test_bad_frames_are_dropped_counted_and_resynchronised() -> None:
    good = encode_frame(FrameType.LID_CLOSED, 9, 1)
    bad_crc = bytearray(encode_frame(FrameType.LID_CLOSED, 9, 2))
    bad_crc[6] ^= 0x40
    bad_end = encode_frame(FrameType.LID_CLOSED, 9, 3)[:-1] + b"\x00"
    overlong = bytes([protocol.STX, protocol.MAX_BODY + 1]) + bytes(10)
    stream = b"noise" + bytes(bad_crc) + bad_end + overlong + good
    splitter = FrameSplitter()
    frames = splitter.feed(stream)
    assert [f.seq for f in frames] == [1]
    stats = splitter.stats
    assert (stats.frames, stats.bad_crc, stats.bad_end) == (1, 1, 1)
    assert stats.overlong >= 1  # ours, plus any 0x02 inside the bad frames that looks like one
    assert stats.discarded_bytes == len(stream) - len(good)


def test_a_frame_hidden_after_a_truncated_one_is_found() -> None:
    """A frame cut short by an unplug, followed by a whole one: the whole one still decodes."""
    first = encode_frame(FrameType.LID_OPENED, 3, 1)
    second = encode_frame(FrameType.LID_CLOSED, 3, 2)
    frames = FrameSplitter().feed(first[:9] + second + second)
    assert [f.seq for f in frames] == [2, 2]


SPEC = Path(__file__).parents[2] / "hardware" / "shoe-protocol.md"


def spec_example_frames() -> list[tuple[str, bytes]]:
    """(caption, frame) pairs from the spec's example section."""
    text = SPEC.read_text().split("## 8. Example frames", 1)[1].split("```", 2)[1]
    lines = [line for line in text.splitlines()[1:] if line.strip()]
    return [(cap, bytes.fromhex(hex_)) for cap, hex_ in zip(lines[::2], lines[1::2], strict=True)]


def test_the_spec_examples_are_valid_frames_that_decode_as_captioned() -> None:
    examples = spec_example_frames()
    assert len(examples) == 7
    splitter = FrameSplitter()
    frames = splitter.feed(b"".join(frame for _, frame in examples))
    assert splitter.stats.discarded_bytes == 0
    assert [f.type for f in frames] == [
        FrameType.SHOE_LOADED,
        FrameType.BURN,
        FrameType.CARD,
        FrameType.HEARTBEAT,
        FrameType.ALARM,
        FrameType.ACK,
        FrameType.RESEND,
    ]
    assert all(f.session == 0x1A2B3C4D for f in frames)
    for (caption, _), frame in zip(examples, frames, strict=True):
        assert caption.split()[0] == FrameType(frame.type).name
    card = frames[2]
    assert card.payload == protocol.card_payload(Card.parse("7S"), 2) and card.seq == 3
    assert frames[0].payload == protocol.loaded_payload(
        6, protocol.DeckKind.SPANISH, 288, 0x0F0E0D0C, 97
    )
