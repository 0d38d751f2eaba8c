"""The room's legal holds reaching the table boxes, where the frames other than key frames are.

The room asks the box on ``floor.holds.<TABLE>`` (:class:`~.wire.HoldRequest`, request/reply)
to keep the held round; the box marks its frames so its own retention keeps them
(:mod:`.box_hold`) and says which it keeps and which were pruned before the hold reached it. The
room records that answer as ``floor-hold-reached`` in its own chain. A hold is sent when it is
put on (``room hold``, and the page through ``room serve``) and, by ``room serve``, again every
:data:`RETRY_S` while it has not reached its box (:func:`deliver_until_stopped`: a box offline
gets it once it is back). A release stays in the room: the box keeps what it marked (keeping
more is safe).
"""

from __future__ import annotations

import asyncio
import json
import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from dealer_assist.floor.retention import Hold, holds
from dealer_assist.floor.wire import HoldRequest, hold_subject
from dealer_assist.surveillance.store import RecordingError

if TYPE_CHECKING:
    from dealer_assist.floor.config import NatsConfig
    from dealer_assist.surveillance.interface import RecordStore

logger = logging.getLogger(__name__)

HOLD_REACHED = "floor-hold-reached"
#: ``room serve`` sends the holds that have not reached their box this often (seconds)
RETRY_S = 30.0
#: how long the room waits for a box's answer (seconds)
ANSWER_S = 5.0


class HoldNotReached(Exception):
    """A hold the box did not take: no answer (offline, the broker away) or refused (why)."""


@dataclass(frozen=True, slots=True)
class Reached:
    """A hold that reached its box: the ``floor-hold-reached`` record (its seq and time), the
    hold's seq, the frames the box keeps and those it had pruned before."""

    hold: int
    seq: int
    at: str
    kept: list[int]
    pruned: list[int]

    def to_json(self) -> dict[str, Any]:
        return {"hold": self.hold, "seq": self.seq, "at": self.at, "kept": self.kept,
                "pruned": self.pruned}


def reached(store: RecordStore) -> dict[int, Reached]:
    """The holds that reached their box, by the seq of their ``floor-hold`` record."""
    found: dict[int, Reached] = {}
    for record in store.records(kinds=(HOLD_REACHED,)):
        body = record.object_body()
        hold = body.get("hold")
        if isinstance(hold, int) and hold not in found:
            found[hold] = Reached(hold, record.seq, record.at, _seqs(body.get("kept")),
                                  _seqs(body.get("pruned")))
    return found


def undelivered(store: RecordStore) -> list[Hold]:
    """The holds on now that have not reached their box, oldest first."""
    done = reached(store)
    return sorted((h for h in holds(store).values() if h.seq not in done),  # type: ignore[arg-type]
                  key=lambda h: h.seq)


async def deliver(nc: Any, store: RecordStore, hold: Hold, timeout: float = ANSWER_S
                  ) -> Reached:
    """Ask ``hold``'s box to keep its round over the connection ``nc``, and record its answer
    (``floor-hold-reached``, once per hold); HoldNotReached says why not."""
    request = HoldRequest(hold.seq, hold.chain, hold.round_key, hold.user, hold.why)
    try:
        reply = await nc.request(hold_subject(hold.box), request.encode(), timeout=timeout)
    except Exception as error:  # no responders (the box offline), a timeout, the broker away
        raise HoldNotReached(f"the box of {hold.box} did not answer"
                             f" ({type(error).__name__}: {error})") from None
    refusal = (reply.headers or {}).get("Floor-Error")
    if refusal:
        raise HoldNotReached(f"the box of {hold.box} refuses: {refusal}")
    try:
        answer = json.loads(reply.data)
        kept, pruned = answer["kept"], answer["pruned"]
        same = (answer["hold"], answer["chain"], answer["round_key"]) == (
            hold.seq, hold.chain, hold.round_key)
    except (ValueError, TypeError, KeyError):
        same, kept, pruned = False, None, None
    if not same or not _is_seqs(kept) or not _is_seqs(pruned):
        raise HoldNotReached(f"the box of {hold.box} answered with no kept round for hold"
                             f" {hold.seq}")
    return record_reached(store, hold, kept, pruned)


def record_reached(store: RecordStore, hold: Hold, kept: list[int], pruned: list[int]
                   ) -> Reached:
    """Record that ``hold`` reached its box (nothing where it is recorded already)."""
    already = reached(store).get(hold.seq)
    if already is not None:
        return already
    record = store.append(HOLD_REACHED, {"hold": hold.seq, "box": hold.box,
                                         "chain": hold.chain, "round_key": hold.round_key,
                                         "kept": kept, "pruned": pruned}, table=hold.box)
    logger.info("hold %d on round %s of %s reached the box: %d frames kept, %d pruned before",
                hold.seq, hold.round, hold.box, len(kept), len(pruned))
    return Reached(hold.seq, record.seq, record.at, kept, pruned)


async def deliver_due(nc: Any, store: RecordStore, told: dict[int, str]) -> list[Reached]:
    """Send every hold that has not reached its box; each new reason one has not reached it
    is logged once (``told``: the last reason logged, by hold)."""
    done: list[Reached] = []
    for hold in undelivered(store):
        try:
            done.append(await deliver(nc, store, hold))
            told.pop(hold.seq, None)
        except HoldNotReached as error:
            if told.get(hold.seq) != str(error):
                told[hold.seq] = str(error)
                logger.warning("hold %d on round %s of %s has not reached the box: %s",
                               hold.seq, hold.round, hold.box, error)
    return done


async def deliver_until_stopped(nc: Any, store: RecordStore, told: dict[int, str],
                                due: asyncio.Event, stop: asyncio.Event,
                                retry_s: float = RETRY_S) -> None:
    """:func:`deliver_due` over the connection ``nc``, now and every ``retry_s`` (or when
    ``due`` is set), until ``stop`` is set; a failure is logged and the next round tries
    again."""
    while not stop.is_set():
        due.clear()
        try:
            await deliver_due(nc, store, told)
        except RecordingError as error:  # the store away: the next round tries again
            logger.error("the room cannot send its holds: %s", error)
        except Exception:  # a bug: logged with its trace, the room consumes on
            logger.exception("sending the room's holds failed")
        try:
            await asyncio.wait_for(due.wait(), retry_s)
        except TimeoutError:
            pass


def deliver_now(nats: NatsConfig, store: RecordStore, hold: Hold,
                timeout: float = ANSWER_S) -> Reached:
    """:func:`deliver` from a program without a connection (``room hold``): connects as the
    room, asks once, closes; HoldNotReached when the broker or the box does not take it."""
    from dealer_assist.floor.room import room_connect_options

    async def once() -> Reached:
        import nats as nats_client

        options = {**room_connect_options(nats), "allow_reconnect": False}
        try:
            nc = await asyncio.wait_for(nats_client.connect(**options), timeout)
        except Exception as error:  # the broker away or refusing
            raise HoldNotReached(f"the floor broker cannot be reached ({error})") from None
        try:
            return await deliver(nc, store, hold, timeout)
        finally:
            await nc.close()

    return asyncio.run(once())


def _is_seqs(value: Any) -> bool:
    return isinstance(value, list) and all(
        isinstance(seq, int) and not isinstance(seq, bool) and seq > 0 for seq in value)


def _seqs(value: Any) -> list[int]:
    return list(value) if _is_seqs(value) else []
