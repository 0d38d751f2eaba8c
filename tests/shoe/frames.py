"""Builders of shoe-to-host frames for the decoder tests."""

from __future__ import annotations

from dealer_assist.rules.cards import Card
from dealer_assist.shoe import protocol
from dealer_assist.shoe.protocol import DeckKind, FrameType, encode_frame

SESSION = 0x5EED0001


def loaded(seq: int = 1, session: int = SESSION, decks: int = 6, previous=(0, 0)) -> bytes:
    payload = protocol.loaded_payload(decks, DeckKind.SPANISH, decks * 48, *previous)
    return encode_frame(FrameType.SHOE_LOADED, session, seq, payload)


def card(seq: int, code: str, index: int | None = None, session: int = SESSION) -> bytes:
    payload = protocol.card_payload(Card.parse(code), seq - 1 if index is None else index)
    return encode_frame(FrameType.CARD, session, seq, payload)


def heartbeat(last_seq: int, session: int = SESSION, pending=(0, 0)) -> bytes:
    payload = protocol.HEARTBEAT_PAYLOAD.pack(*pending)
    return encode_frame(FrameType.HEARTBEAT, session, last_seq, payload)
