"""A legal hold reaching a table box: the room's hold kept by the box's own retention.

The box answers the room's :class:`~.wire.HoldRequest` (``floor.holds.<TABLE>``) by marking
every video frame of the held round with a ``keyframe`` record of its own chain, as an operator
marks a frame from the box's page, signed with the table's key; the box's ``prune_frames``
then keeps those frames for ever (a mark is never taken back: keeping more is safe). A frame
already key, already marked or already pruned (read in the mark's own write transaction, so a
prune and a mark never both take one frame) gets no record, so a repeat of a request writes
nothing new.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from dealer_assist.floor.wire import HoldRequest
from dealer_assist.surveillance.signed_chain import chain_id
from dealer_assist.surveillance.store import Record, RecordingStore

logger = logging.getLogger(__name__)


class HoldRefused(ValueError):
    """A hold request the box cannot keep (another chain, a round it does not hold, no key)."""


@dataclass(frozen=True, slots=True)
class KeptRound:
    """What the box did with a hold: the round's frames it keeps now (``kept``: key frames,
    frames marked before and those marked now), those this request marked (``marked``) and
    those already pruned before the hold reached it (``pruned``)."""

    hold: int
    chain: str
    round_key: int
    kept: list[int]
    marked: list[int]
    pruned: list[int]

    def to_json(self) -> dict[str, Any]:
        return {"hold": self.hold, "chain": self.chain, "round_key": self.round_key,
                "kept": self.kept, "marked": self.marked, "pruned": self.pruned}


def keep_held_round(store: RecordingStore, table: str, request: HoldRequest) -> KeptRound:
    """Mark the video frames of the requested round that neither are key, nor were marked, nor
    were pruned, each with a ``keyframe`` record appended through ``store`` (signed by its
    signer); HoldRefused where the request is not for this box's chain or round, or ``store``
    has no signer."""
    chain = chain_id(store)
    if chain != request.chain:
        raise HoldRefused(f"unknown chain {request.chain}: {table} records chain {chain}")
    if store.signer is None:
        raise HoldRefused(f"{table} has no key to sign its marks with")
    records = [r for r in store.round_records(request.round_key) if isinstance(r, Record)]
    if not any(r.kind == "round" for r in records):
        raise HoldRefused(f"unknown round {request.round_key} of chain {chain}")
    marked, pruned = _marked_and_pruned(store)
    kept: list[int] = []
    gone: list[int] = []
    fresh: list[int] = []
    for record in records:
        if record.kind != "frame":
            continue
        if record.seq in pruned:
            gone.append(record.seq)
            continue
        if record.seq not in marked and record.object_body().get("key") is False:
            mark = store.append_checked(
                "keyframe", _unless_pruned(store, record.seq, {
                    "user": f"room:{request.user}", "frame": record.seq,
                    "room_hold": request.hold, "why": request.why}),
                table=record.table, round_key=record.round_key, round_id=record.round_id)
            if mark is None:  # a prune listed it meanwhile
                gone.append(record.seq)
                continue
            fresh.append(record.seq)
        kept.append(record.seq)
    if fresh:
        logger.info("%s keeps %d frames of round %d for the room's hold %d", table, len(fresh),
                    request.round_key, request.hold)
    return KeptRound(request.hold, chain, request.round_key, kept, fresh, gone)


def _unless_pruned(store: RecordingStore, seq: int, body: dict[str, Any]
                   ) -> Callable[[], dict[str, Any] | None]:
    """The mark's body, unless frame ``seq`` is pruned (read in the mark's write transaction)."""
    def decide() -> dict[str, Any] | None:
        frame = store.frame(seq)
        return None if frame is None or frame.pruned_at else body

    return decide


def _marked_and_pruned(store: RecordingStore) -> tuple[set[int], set[int]]:
    """The frames the chain's ``keyframe`` records mark and its ``prune`` records list."""
    marked: set[int] = set()
    pruned: set[int] = set()
    for record in store.records(kinds=("keyframe", "prune")):
        body = record.object_body()
        if record.kind == "keyframe":
            frame = body.get("frame")
            if isinstance(frame, int):
                marked.add(frame)
        else:
            pruned.update(seq for seq in body.get("frames", []) if isinstance(seq, int))
    return marked, pruned
