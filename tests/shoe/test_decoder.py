"""The pure decoder: every event type, splits, resync, duplicates, gaps, sessions, fuzz."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from dealer_assist.rules.cards import Card
from dealer_assist.shoe import protocol
from dealer_assist.shoe.decoder import ShoeDecoder
from dealer_assist.shoe.events import (
    BurnCard,
    CardDrawn,
    CaughtUp,
    CutCardReached,
    EventsLost,
    Gap,
    Heartbeat,
    LidClosed,
    LidOpened,
    MalformedFrame,
    SequencedEvent,
    ShoeAlarm,
    ShoeEmpty,
    ShoeEvent,
    ShoeLoaded,
    UnreadableCard,
)
from dealer_assist.shoe.protocol import FrameSplitter, FrameType, encode_frame
from tests.shoe.frames import SESSION, card, heartbeat, loaded


def synced() -> ShoeDecoder:
    """A decoder that has delivered the shoe-loaded event (seq 1) of SESSION."""
    decoder = ShoeDecoder()
    decoder.feed(heartbeat(1, pending=(SESSION, 1)))
    assert [type(e) for e in decoder.feed(loaded())] == [ShoeLoaded]
    return decoder


def numbered(events: list[ShoeEvent]) -> list[SequencedEvent]:
    return [e for e in events if isinstance(e, SequencedEvent)]


def test_every_event_type_round_trips() -> None:
    s = SESSION
    stream = b"".join(
        [
            loaded(decks=8, previous=(0x77, 41)),
            encode_frame(FrameType.BURN, s, 2, protocol.card_payload(Card.parse("QH"), 1)),
            encode_frame(FrameType.BURN, s, 3, protocol.card_payload(None, 2)),
            card(4, "7S", index=3),
            encode_frame(FrameType.UNREADABLE, s, 5, protocol.index_payload(4)),
            encode_frame(FrameType.CUT_CARD, s, 6, protocol.index_payload(4)),
            encode_frame(FrameType.LID_OPENED, s, 7),
            encode_frame(FrameType.LID_CLOSED, s, 8),
            encode_frame(FrameType.ALARM, s, 9, protocol.alarm_payload(3, "optical sensor")),
            encode_frame(FrameType.SHOE_EMPTY, s, 10, protocol.index_payload(384)),
        ]
    )
    decoder = ShoeDecoder()
    decoder.feed(heartbeat(0, pending=(s, 1)))
    assert decoder.feed(stream) == [
        ShoeLoaded(s, 1, 8, True, 384, 0x77, 41),
        BurnCard(s, 2, Card.parse("QH"), 1),
        BurnCard(s, 3, None, 2),
        CardDrawn(s, 4, Card.parse("7S"), 3),
        UnreadableCard(s, 5, 4),
        CutCardReached(s, 6, 4),
        LidOpened(s, 7),
        LidClosed(s, 8),
        ShoeAlarm(s, 9, 3, "optical sensor"),
        ShoeEmpty(s, 10, 384),
    ]
    assert decoder.ack_frame() == encode_frame(FrameType.ACK, s, 10)


def test_split_at_every_byte_gives_the_same_events() -> None:
    stream = loaded() + card(2, "AS") + heartbeat(2) + card(3, "KD")
    for cut in range(len(stream) + 1):
        decoder = ShoeDecoder()
        decoder.feed(heartbeat(0, pending=(SESSION, 1)))
        events = decoder.feed(stream[:cut]) + decoder.feed(stream[cut:])
        cards = [e.card.code for e in events if isinstance(e, CardDrawn)]
        assert cards == ["AS", "KD"]


def test_byte_at_a_time_feed() -> None:
    decoder = synced()
    events: list[ShoeEvent] = []
    for byte in card(2, "9C") + card(3, "8H"):
        events += decoder.feed(bytes([byte]))
    assert [e.card.code for e in events if isinstance(e, CardDrawn)] == ["9C", "8H"]


def test_resynchronises_after_garbage_and_counts_bad_frames() -> None:
    decoder = synced()
    corrupt = bytearray(card(2, "5S"))
    corrupt[12] ^= 0xFF
    events = decoder.feed(b"\x02\x02\xff garbage" + bytes(corrupt) + card(2, "5S") + b"\x00\x03")
    assert [e.card.code for e in events if isinstance(e, CardDrawn)] == ["5S"]
    assert decoder.framing.bad_crc >= 1
    assert decoder.framing.overlong >= 1


def test_duplicates_are_dropped_and_counted() -> None:
    decoder = synced()
    events = decoder.feed(card(2, "6D") + card(2, "6D") + loaded() + card(3, "6H"))
    assert [e.seq for e in numbered(events)] == [2, 3]
    assert decoder.stats.duplicates == 2


def test_gap_is_reported_once_and_nothing_passes_it_until_resent() -> None:
    decoder = synced()
    events = decoder.feed(card(3, "2S") + card(4, "3S") + card(5, "4S"))
    assert events == [Gap(SESSION, 1, SESSION, 3)]
    assert decoder.awaiting_resend
    assert decoder.resend_frame() == encode_frame(FrameType.RESEND, SESSION, 1)
    # the shoe goes back to seq 2 (go-back-N) and everything arrives in order
    events = decoder.feed(card(2, "AS") + card(3, "2S") + card(4, "3S") + card(5, "4S"))
    assert [e.card.code for e in events if isinstance(e, CardDrawn)] == ["AS", "2S", "3S", "4S"]
    assert not decoder.awaiting_resend


def test_heartbeat_reveals_lost_trailing_frames() -> None:
    decoder = synced()
    events = decoder.feed(heartbeat(3))
    assert Gap(SESSION, 1, SESSION, 3) in events
    assert decoder.awaiting_resend


def test_a_heartbeat_says_whether_every_event_sent_before_it_was_delivered() -> None:
    """A table takes a heartbeat as "the shoe has no card unreported" only where the decoder
    has every event the shoe sent before it: one that reveals a lost frame says not, until
    the resend has come."""
    decoder = synced()
    [beat] = [e for e in decoder.feed(heartbeat(1)) if isinstance(e, Heartbeat)]
    assert beat.delivered and "delivered" not in beat.to_json()
    decoder.feed(card(2, "7H"))  # card 3 is lost on the line
    [beat] = [e for e in decoder.feed(heartbeat(3, pending=(SESSION, 3)))
              if isinstance(e, Heartbeat)]
    assert not beat.delivered and beat.to_json()["delivered"] is False
    decoder.feed(card(3, "2C"))  # resent
    [beat] = [e for e in decoder.feed(heartbeat(3)) if isinstance(e, Heartbeat)]
    assert beat.delivered


def test_new_session_follows_the_old_one() -> None:
    decoder = synced()
    decoder.feed(card(2, "7H"))
    new = 0x5EED0002
    events = decoder.feed(loaded(session=new, previous=(SESSION, 2)) + card(2, "8H", session=new))
    assert [(e.session, e.seq) for e in numbered(events)] == [(new, 1), (new, 2)]


def test_new_session_waits_for_the_end_of_the_old_one() -> None:
    decoder = synced()
    new = 0x5EED0002
    events = decoder.feed(loaded(session=new, previous=(SESSION, 2)))
    assert events == [Gap(SESSION, 1, new, 1)]
    events = decoder.feed(card(2, "7H") + loaded(session=new, previous=(SESSION, 2)))
    assert [(e.session, e.seq) for e in numbered(events)] == [(SESSION, 2), (new, 1)]


def test_an_unheard_ack_for_the_end_of_the_session_left_loses_and_repeats_nothing() -> None:
    """The shoe still holds the last card of the old shoe (our ACK not heard yet) after we took
    the new shoe's load: session ids are random, so the decoder must know that session as one it
    left, not a later one. Before, it reported the card lost, rewound, and delivered it twice."""
    decoder = synced()
    decoder.feed(card(2, "8H"))
    new = 0x5EED0002
    decoder.feed(loaded(session=new, previous=(SESSION, 2)))
    events = decoder.feed(heartbeat(1, session=new, pending=(SESSION, 2)))
    assert not any(isinstance(e, EventsLost | Gap) for e in events)
    assert not decoder.awaiting_resend
    assert decoder.stale_heartbeats == 1  # an event we hold, named: counts towards "unheard"
    resent = decoder.feed(card(2, "8H") + loaded(session=new, previous=(SESSION, 2)))
    assert resent == [] and decoder.stats.duplicates == 2  # copies, not gaps
    assert [(e.session, e.seq) for e in numbered(decoder.feed(card(2, "AS", session=new)))] == [
        (new, 2)]
    for repeat in range(2, 8):  # the shoe keeps naming it: our ACKs are not reaching it
        decoder.feed(heartbeat(2, session=new, pending=(SESSION, 2)))
        assert decoder.stale_heartbeats == repeat


def test_a_card_held_through_a_window_of_shoe_changes_is_still_known_delivered() -> None:
    """Up to a window of events (16) may be delivered past one the shoe still holds: here nine
    more shoes, each a load alone. Its session is still one we left, and nothing repeats."""
    decoder = synced()
    decoder.feed(card(2, "8H"))
    previous = (SESSION, 2)
    for n in range(1, 10):
        session = 0x5EED0100 + n
        assert numbered(decoder.feed(loaded(session=session, previous=previous)))
        previous = (session, 1)
    events = decoder.feed(heartbeat(1, session=0xDEAD, pending=(SESSION, 2)))
    assert not any(isinstance(e, EventsLost) for e in events)
    assert decoder.feed(card(2, "8H") + loaded(session=0x5EED0101, previous=(SESSION, 2))) == []


def test_a_restarted_host_passed_an_event_of_a_session_it_never_saw() -> None:
    """Resumed in the shoe's current session (its record says so) while the shoe still holds
    an event of an earlier session it never heard acknowledged: the heartbeat names both, and
    the held one lies before the shoe's session, which is ours. Nothing is lost or repeated."""
    decoder = ShoeDecoder()
    new = 0x5EED0002
    decoder.session, decoder.last_seq = new, 1  # as ShoeReader(resume_from=(new, 1)) sets it
    events = decoder.feed(heartbeat(1, session=new, pending=(SESSION, 2)))
    assert not any(isinstance(e, EventsLost | Gap) for e in events)
    assert (decoder.session, decoder.last_seq) == (new, 1)


def test_a_frame_of_an_unknown_session_that_is_not_a_load_is_a_gap() -> None:
    decoder = synced()
    events = decoder.feed(card(5, "7H", session=0x1234))
    assert events == [Gap(SESSION, 1, 0x1234, 5)]


def test_a_decoder_without_state_starts_at_the_oldest_unacknowledged_event() -> None:
    decoder = ShoeDecoder()
    assert decoder.feed(card(7, "KS")) == []  # no position yet: wait for a heartbeat
    assert decoder.stats.unsynchronised == 1
    assert decoder.ack_frame() is None
    assert decoder.resend_frame() == encode_frame(FrameType.RESEND, 0, 0)
    events = decoder.feed(heartbeat(9, pending=(SESSION, 7)))
    assert events == [Heartbeat(SESSION, 9, SESSION, 7, delivered=False)]
    assert decoder.awaiting_resend
    events = decoder.feed(card(7, "KS") + card(8, "QS") + card(9, "JS"))
    assert [e.seq for e in numbered(events)] == [7, 8, 9]


def test_a_decoder_without_state_and_nothing_pending_starts_after_the_last() -> None:
    decoder = ShoeDecoder()
    decoder.feed(heartbeat(9))
    assert [e.seq for e in numbered(decoder.feed(card(10, "2D")))] == [10]


def test_events_the_shoe_no_longer_holds_are_reported_lost_and_delivery_goes_on() -> None:
    decoder = synced()
    # a shoe that still holds the next event we want: a gap, waited for
    events = decoder.feed(card(3, "2S") + heartbeat(3, pending=(SESSION, 2)))
    assert not any(isinstance(e, EventsLost) for e in events)
    assert decoder.awaiting_resend
    assert [e.seq for e in numbered(decoder.feed(card(2, "AS") + card(3, "2S")))] == [2, 3]
    # one that holds 7 on (an earlier run acknowledged up to 6): 4 to 6 cannot come any more
    events = decoder.feed(heartbeat(9, pending=(SESSION, 7)))
    assert EventsLost(SESSION, 3, SESSION, 7) in events
    assert not any(isinstance(e, Gap) for e in events)
    assert decoder.awaiting_resend  # the held ones now
    events = decoder.feed(card(7, "KS") + card(8, "QS") + card(9, "JS"))
    assert [e.seq for e in numbered(events)] == [7, 8, 9]
    assert not decoder.awaiting_resend


def test_the_end_of_a_session_the_shoe_no_longer_holds_is_reported_lost() -> None:
    decoder = synced()
    new = 0x5EED0002
    decoder.feed(heartbeat(1, session=new, pending=(new, 1)))  # it holds the new load on
    events = decoder.feed(loaded(session=new, previous=(SESSION, 5)) + card(2, "8H", session=new))
    assert EventsLost(SESSION, 1, new, 1) in events
    assert [(e.session, e.seq) for e in numbered(events)] == [(new, 1), (new, 2)]
    # a later session past its load: the rest of ours and the start of it are gone
    decoder = synced()
    events = decoder.feed(heartbeat(4, session=new, pending=(new, 3)))
    assert EventsLost(SESSION, 1, new, 3) in events
    assert [(e.session, e.seq) for e in numbered(decoder.feed(card(3, "2D", session=new)))] == [
        (new, 3)]


def test_a_never_loaded_shoe_is_not_a_gap() -> None:
    decoder = synced()
    assert not any(isinstance(e, Gap) for e in decoder.feed(heartbeat(0, session=0)))


def test_crc_valid_nonsense_is_delivered_as_malformed_with_its_offset() -> None:
    decoder = synced()
    offset = len(heartbeat(1)) + len(loaded())
    bad_card = encode_frame(FrameType.CARD, SESSION, 2, b"ZZ\x00\x01")
    unknown = encode_frame(0x44, SESSION, 3, b"")
    short = encode_frame(FrameType.CUT_CARD, SESSION, 4, b"\x01")
    events = decoder.feed(bad_card + unknown + short)
    assert all(isinstance(e, MalformedFrame) for e in events) and len(events) == 3
    assert events[0].offset == offset and "not a card code" in events[0].reason
    assert "0x44" in events[1].reason
    assert decoder.stats.malformed == 3 and decoder.last_seq == 4


def test_host_frames_echoed_back_are_ignored() -> None:
    decoder = synced()
    assert decoder.feed(decoder.ack_frame() or b"") == []
    assert decoder.stats.unexpected == 1


@settings(max_examples=300, deadline=None)
@given(st.lists(st.binary(max_size=40), max_size=20))
def test_fuzz_arbitrary_bytes_never_crash(chunks: list[bytes]) -> None:
    decoder = ShoeDecoder()
    decoder.feed(heartbeat(0, pending=(SESSION, 1)))
    for chunk in chunks:
        for event in decoder.feed(chunk):
            assert isinstance(event, ShoeEvent)
    assert decoder.framing.discarded_bytes <= sum(map(len, chunks))


no_stx = st.binary(max_size=30).map(lambda b: b.replace(b"\x02", b""))


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.tuples(no_stx, st.sampled_from(["AS", "9H", "QC", "2D"])), max_size=12),
    st.integers(min_value=1, max_value=17),
)
def test_fuzz_frames_in_garbage_all_come_out_in_order(
    pieces: list[tuple[bytes, str]], chunk: int
) -> None:
    stream = b"".join(
        garbage + card(seq, code) for seq, (garbage, code) in enumerate(pieces, start=2)
    )
    decoder = synced()
    events: list[ShoeEvent] = []
    for start in range(0, len(stream), chunk):
        events += decoder.feed(stream[start : start + chunk])
    assert [e.card.code for e in events if isinstance(e, CardDrawn)] == [c for _, c in pieces]


def test_splitter_offsets_count_from_the_start_of_the_stream() -> None:
    splitter = FrameSplitter()
    splitter.feed(b"xyz")
    assert [f.offset for f in splitter.feed(card(2, "AS"))] == [3]
    assert splitter.stream_offset == 3 + len(card(2, "AS"))


def test_only_the_same_unheard_event_heartbeat_after_heartbeat_counts_as_stale() -> None:
    # Dealing fast, each heartbeat may name a newer event whose ACK is still on its way: that is
    # not a shoe that cannot hear us (a false "not receiving acknowledgements" alarm before).
    decoder = synced()
    for seq in range(2, 12):
        decoder.feed(card(seq, "7S"))
        decoder.feed(heartbeat(seq, pending=(SESSION, seq)))
        assert decoder.stale_heartbeats == 1
    # Our ACKs really are lost: the shoe keeps naming the same event.
    for repeat in range(2, 8):
        decoder.feed(heartbeat(11, pending=(SESSION, 11)))
        assert decoder.stale_heartbeats == repeat
    decoder.feed(heartbeat(11))  # nothing pending any more: the ACK got through
    assert decoder.stale_heartbeats == 0


def test_with_acknowledgement_lagging_delivery_only_what_the_shoe_was_told_counts_as_unheard(
) -> None:
    """A reader that acknowledges only what is durable: the shoe naming an event delivered but
    not yet acknowledged (a slow or failing disk) is not a shoe that cannot hear us."""
    decoder = synced()
    decoder.acknowledged = (SESSION, 1)
    decoder.feed(card(2, "7S") + card(3, "8S"))
    for _ in range(8):
        decoder.feed(heartbeat(3, pending=(SESSION, 2)))
        assert decoder.stale_heartbeats == 0
    decoder.acknowledged = (SESSION, 2)  # told; the shoe still names it: now it counts
    for repeat in range(1, 4):
        decoder.feed(heartbeat(3, pending=(SESSION, 2)))
        assert decoder.stale_heartbeats == repeat
    # across a shoe change: an ACK in the new session covers the old one's end
    new = 0x5EED0002
    decoder.feed(loaded(session=new, previous=(SESSION, 3)))
    decoder.feed(heartbeat(1, session=new, pending=(SESSION, 3)))
    assert decoder.stale_heartbeats == 0
    decoder.acknowledged = (new, 1)
    decoder.feed(heartbeat(1, session=new, pending=(SESSION, 3)))
    assert decoder.stale_heartbeats == 1


def test_after_a_reset_events_are_resent_until_a_heartbeat_shows_nothing_held() -> None:
    """Re-opened, the decoder marks what it delivers resent until a heartbeat says the shoe
    holds nothing unacknowledged, its last event delivered; then it says so, and later events
    are live."""
    decoder = synced()
    assert not numbered(decoder.feed(card(2, "7H")))[0].resent
    decoder.link_reset()
    events = decoder.feed(card(3, "8H") + card(4, "9H"))
    assert [e.resent for e in numbered(events)] == [True, True]
    # the shoe still holds 3 and 4 (our ACK not heard yet), and had sent 5 and 6: not caught up
    for beat in (heartbeat(4, pending=(SESSION, 3)), heartbeat(6)):
        assert not any(isinstance(e, CaughtUp) for e in decoder.feed(beat))
    events = decoder.feed(card(5, "2S") + card(6, "3S") + heartbeat(6) + card(7, "4S"))
    assert [(type(e), getattr(e, "resent", None)) for e in events if not isinstance(
        e, Heartbeat)] == [(CardDrawn, True), (CardDrawn, True), (CaughtUp, None),
                           (CardDrawn, False)]
    assert CaughtUp(SESSION, 6) in events
    assert numbered(events)[0].to_json()["resent"] is True
    assert "resent" not in numbered(events)[-1].to_json()  # shown only where true


def test_a_reset_with_nothing_held_is_caught_up_at_the_first_heartbeat() -> None:
    decoder = synced()
    decoder.link_reset()
    assert decoder.feed(heartbeat(1))[-1] == CaughtUp(SESSION, 1)
    assert not numbered(decoder.feed(card(2, "7H")))[0].resent


def test_the_first_open_of_a_decoder_without_state_resends_nothing() -> None:
    decoder = ShoeDecoder()
    decoder.link_reset()
    decoder.feed(heartbeat(1, pending=(SESSION, 1)))
    events = decoder.feed(loaded() + card(2, "7H"))
    assert [e.resent for e in numbered(events)] == [False, False]
    assert not any(isinstance(e, CaughtUp) for e in events)
