"""The ASCII shoe adapter on a recorded sample, split anywhere, with garbled text and counts."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dealer_assist.rules.cards import SPANISH_DECK, Card
from dealer_assist.shoe.ascii import AsciiShoeDecoder, parse_ascii_card
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

SAMPLE = Path(__file__).parents[1] / "data" / "shoe" / "ascii-shoe-sample.log"


def decode_sample(chunk: int | None = None) -> tuple[list[ShoeEvent], AsciiShoeDecoder]:
    data = SAMPLE.read_bytes()
    decoder = AsciiShoeDecoder(decks=6)
    if chunk is None:
        return decoder.feed(data), decoder
    events: list[ShoeEvent] = []
    for start in range(0, len(data), chunk):
        events += decoder.feed(data[start : start + chunk])
    return events, decoder


def test_recorded_sample() -> None:
    events, decoder = decode_sample()
    summary = [(type(e).__name__, getattr(e, "card", None)) for e in events]
    c = Card.parse
    assert summary == [
        ("ShoeLoaded", None),
        ("BurnCard", c("3H")),
        ("CardDrawn", c("4S")),
        ("CardDrawn", c("KD")),
        ("CardDrawn", c("AH")),
        ("CardDrawn", c("7C")),
        ("CardDrawn", c("TH")),
        ("UnreadableCard", None),
        ("ShoeAlarm", None),
        ("CardDrawn", c("QS")),
        ("CardDrawn", c("5D")),
        ("ShoeAlarm", None),
        ("MalformedFrame", None),
        ("CardDrawn", c("2C")),
        ("ShoeAlarm", None),
        ("CardDrawn", c("8S")),
        ("CardDrawn", c("JH")),
    ]
    assert [e.seq for e in events if isinstance(e, SequencedEvent)] == list(range(1, 18))
    alarms = [e for e in events if isinstance(e, ShoeAlarm)]
    assert [(a.code, a.text) for a in alarms] == [
        (3, "E3 Card Not Read"),
        (1, "warning W0x01"),
        (7, "E7 Shoe Jam"),
    ]
    (garbled,) = [e for e in events if isinstance(e, MalformedFrame)]
    line_12 = SAMPLE.read_bytes().index(b"[Game]<Ca#d:9H>")
    assert garbled.offset == line_12 and "Ca#d:9H" in garbled.reason
    assert isinstance(events[7], UnreadableCard) and events[7].index == 7
    assert decoder.garbled == 1


@settings(max_examples=40, deadline=None)
@given(st.integers(min_value=1, max_value=40))
def test_sample_split_anywhere_gives_the_same_events(chunk: int) -> None:
    assert decode_sample(chunk)[0] == decode_sample()[0]


@pytest.mark.parametrize(
    ("text", "code"), [("4S", "4S"), ("10h", "TH"), ("H3", "3H"), ("s8", "8S"), ("CK", "KC")]
)
def test_card_codes_rank_first_or_suit_first(text: str, code: str) -> None:
    assert parse_ascii_card(text) == Card.parse(code)


def test_unknown_message_and_bad_code_are_reported_not_guessed() -> None:
    decoder = AsciiShoeDecoder(decks=2)
    data = b" [Game]<Card:ZZ> [Shuffle]<Start> ~~~ [Game]<Card:9C> "
    events = decoder.feed(data)
    assert [type(e) for e in events] == [
        ShoeLoaded,
        MalformedFrame,
        MalformedFrame,
        MalformedFrame,
        CardDrawn,
    ]
    assert "bad card code" in events[1].reason and "unknown message" in events[2].reason
    assert events[3].offset == data.index(b"~~~")


def test_incomplete_message_waits_for_its_end() -> None:
    decoder = AsciiShoeDecoder(decks=2)
    assert [type(e) for e in decoder.feed(b" [Game]<Card:Q")] == [ShoeLoaded]
    assert [e.card for e in decoder.feed(b"H>\r\n") if isinstance(e, CardDrawn)] == [
        Card.parse("QH")
    ]


def test_a_whole_shoe_counted_ends_itself_and_a_lost_card_is_named() -> None:
    decoder = AsciiShoeDecoder(decks=2)
    cards = list(SPANISH_DECK) * 2
    lost = cards.pop(10)
    stream = b"".join(f" [Game]<Card:{c.code}> \r\n".encode() for c in cards)
    events = decoder.feed(stream)
    assert not any(isinstance(e, ShoeEmpty) for e in events)  # one short: not known to be over
    (mismatch,) = decoder.end_of_shoe()
    assert isinstance(mismatch, CountMismatch)
    assert (mismatch.counted, mismatch.expected, mismatch.missing) == (95, 96, (lost.code,))


def test_a_misread_shows_as_one_missing_and_one_in_excess() -> None:
    decoder = AsciiShoeDecoder(decks=2)
    cards = [c.code for c in SPANISH_DECK] * 2
    cards[0] = "KS" if cards[0] != "KS" else "QS"  # the shoe read card 1 wrongly
    events = decoder.feed(b"".join(f"[Game]<Card:{c}>\n".encode() for c in cards))
    assert isinstance(events[-2], ShoeEmpty) and events[-2].cards_drawn == 96
    mismatch = events[-1]
    assert isinstance(mismatch, CountMismatch)
    assert mismatch.missing == (SPANISH_DECK[0].code,) and mismatch.excess == ("KS",)


def test_new_shoe_starts_a_new_session_and_count() -> None:
    decoder = AsciiShoeDecoder(decks=2)
    decoder.feed(b"[Manual Burn Cards]<Game>\n")
    (load,) = decoder.new_shoe()
    assert isinstance(load, ShoeLoaded) and (load.session, load.seq) == (2, 1)
    (burn,) = decoder.feed(b"[Manual Burn Cards]<Card:AS>\n")
    assert isinstance(burn, BurnCard) and (burn.seq, burn.index) == (2, 1)
    assert decoder.ack_frame() is None and decoder.resend_frame() is None


def test_a_burst_of_line_noise_is_one_report_until_the_next_message() -> None:
    """Random bytes on the line (a loose connector) arrive in many small reads: one report per
    burst, not one per byte, so the table's alarms and their fsyncs keep pace; a message after
    the burst is read, and noise after it is a second report."""
    import random

    noise = bytes(random.Random(7).randrange(256) for _ in range(20_000))
    decoder = AsciiShoeDecoder(6)
    events: list[ShoeEvent] = []
    for start in range(0, len(noise), 64):
        events += decoder.feed(noise[start : start + 64])
    events += decoder.feed(b"\r\n[Game]<Card:QH>\r\n")
    events += decoder.feed(noise[:500])
    reports = [e for e in events if isinstance(e, MalformedFrame)]
    assert len(reports) == 2, [e.reason for e in reports]
    assert reports[0].offset == 0 and reports[1].offset > len(noise)
    assert "and any more before the next message" in reports[0].reason
    assert Card.parse("QH") in [e.card for e in events if isinstance(e, CardDrawn)]
