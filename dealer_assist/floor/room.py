"""The surveillance room's side of the floor: one durable JetStream consumer over every table's
subject, ingesting each record into the room's store and verifying each table's chain as it
arrives.

A message is acknowledged only once its record is durable in the store (:meth:`RecordStore.ingest`
returned), so a room that stops at any point is sent again what it had not acknowledged; the
store keeps one copy of a record however often it comes (JetStream's de-duplication window is
minutes long, a table catching up after a long outage resends beyond it). As records arrive, each
table's chain is checked link by link and every signature against the keys ``room.toml`` trusts
for that table. What fails is a floor alarm, appended to the room's own chain (kind
``floor-alarm``): a gap, a fork (a record differing from the copy the room holds: a rewrite on
the box, caught against the room's copy), a table silent past a bound, a key failure (a
signature that does not verify, a chain that does not link, a table the room does not trust), a
message that is no record, a key frame not kept. A key frame that came with its record is
written once, after the record is held, where the table's key vouches for it and never over a
file that is there (:mod:`.room_frames`). Each chain's verification state is a
:class:`.chain_check.ChainCheck`; this module reads the records it checks and alarms what it
finds. While connected, the room's legal holds are sent to the table boxes as they are put on
and, while one has not reached its box, every ``hold_retry_s`` (:mod:`.hold_delivery`). The
room's retention policy (room.toml ``[retention]``) is applied at start and every
``retention_every_s`` (:mod:`.retention_policy`).
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from dealer_assist.floor.chain_check import ChainCheck
from dealer_assist.floor.config import NatsConfig, RetentionPolicy, TableKeys
from dealer_assist.floor.cuts import PRUNE, RecordedCuts, recorded_cuts
from dealer_assist.floor.hold_delivery import RETRY_S, deliver_until_stopped
from dealer_assist.floor.retention import pruned_frames
from dealer_assist.floor.retention_policy import RETENTION_EVERY_S, RetentionSchedule
from dealer_assist.floor.room_frames import FrameRefused, Kept, frame_parts, keep_frame_file
from dealer_assist.floor.wire import (
    MAX_MESSAGE,
    RECORDS,
    STREAM,
    Forwarded,
    WireError,
    decode_record,
    frame_subject,
)
from dealer_assist.surveillance.interface import Ingest, Ingested, RecordStore
from dealer_assist.surveillance.store import Record, RecordingError

logger = logging.getLogger(__name__)

ALARM_KIND = "floor-alarm"
DURABLE = "room"


@dataclass(frozen=True, slots=True)
class FloorAlarm:
    """One floor alarm: ``kind`` (gap, fork, silent, key, chain, untrusted, message, frame),
    the table, the chain and record where known, and what happened."""

    kind: str
    table: str
    text: str
    chain: str | None = None
    seq: int | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": self.kind, "table": self.table, "text": self.text}
        if self.chain is not None:
            out["chain"] = self.chain
        if self.seq is not None:
            out["seq"] = self.seq
        return out


class Room:
    """Consumes every table's records into the store ``open_store`` opens (in the room's own
    thread), verifying and alarming as they arrive. ``tables``: the tables the room trusts and
    their keys; ``silent_after_s``: a trusted table with nothing new this long is alarmed;
    ``on_record``: hears each record ingested (for the benchmark's lag); ``hold_retry_s``: how
    often the holds that have not reached their box are sent again; ``retention``: the policy
    applied at start and every ``retention_every_s`` (a PostgreSQL store's)."""

    def __init__(self, open_store: Callable[[], RecordStore], nats: NatsConfig,
                 tables: dict[str, TableKeys], *, silent_after_s: float = 120.0,
                 batch: int = 256, durable: str = DURABLE, replicas: int = 1,
                 on_record: Callable[[Forwarded, Ingested], None] | None = None,
                 hold_retry_s: float = RETRY_S, retention: RetentionPolicy | None = None,
                 retention_every_s: float = RETENTION_EVERY_S):
        self.open_store = open_store
        self.nats = nats
        self.tables = tables
        self.silent_after_s = silent_after_s
        self.batch = batch
        self.durable = durable
        self.replicas = replicas
        self.on_record = on_record
        self.hold_retry_s = hold_retry_s
        self.retention = retention or RetentionPolicy()
        self._retention = RetentionSchedule(open_store, self.retention, retention_every_s)
        self.store: RecordStore | None = None
        self.ingested = 0  # records held new in this run
        self.alarms: list[FloorAlarm] = []  # raised in this run (each is in the store too)
        self._checks: dict[tuple[str, str], ChainCheck] = {}
        self._frames_alarmed: set[tuple[str, str, int]] = set()  # a frame alarm once a run
        self._pruned: tuple[int, set[tuple[str, str, int]]] | None = None  # as last read
        self._cuts: RecordedCuts | None = None  # the retention cuts recorded, as last read
        self._heard: dict[str, float] = {}
        self._silent: set[str] = set()
        self._stop = asyncio.Event()
        self._holds_due = asyncio.Event()
        self._holds_told: dict[int, str] = {}
        self._nc: Any = None

    @property
    def retention_every_s(self) -> float:
        return self._retention.every_s

    @property
    def retention_runs(self) -> int:
        """The retention policy's applications that finished (failed ones not counted)."""
        return self._retention.runs

    def stop(self) -> None:
        self._stop.set()

    def send_holds(self) -> None:
        """Send the holds that have not reached their box now (from the room's loop)."""
        self._holds_due.set()

    async def run(self) -> None:
        """Consume until :meth:`stop`, reconnecting while the broker is away."""
        import nats

        self.store = self.open_store()
        keeper = asyncio.ensure_future(self._retention.keep(self._stop)) \
            if self.retention else None
        try:
            self._resume_checks()
            started = time.monotonic()
            self._heard = {table: started for table in self.tables}
            while not self._stop.is_set():
                try:
                    self._nc = await asyncio.wait_for(
                        nats.connect(**self._connect_options()), 10.0)
                except Exception as error:
                    logger.warning("the room cannot reach the floor broker: %s", error)
                    await self._sleep(1.0)
                    continue
                try:
                    await self._consume(self._nc)
                finally:
                    try:
                        await self._nc.close()
                    except Exception:
                        logger.debug("closing the room's connection", exc_info=True)
                    self._nc = None
        finally:
            if keeper is not None:  # a prune under way finishes (its thread cannot be cut)
                self._stop.set()
                await asyncio.gather(keeper, return_exceptions=True)
            self.store.close()

    def _connect_options(self) -> dict[str, Any]:
        return room_connect_options(self.nats)

    async def _sleep(self, seconds: float) -> None:
        try:
            await asyncio.wait_for(self._stop.wait(), seconds)
        except TimeoutError:
            pass

    async def _consume(self, nc: Any) -> None:
        from nats.js.api import AckPolicy, ConsumerConfig, StreamConfig
        from nats.js.errors import BadRequestError

        js = nc.jetstream()
        try:
            await js.add_stream(StreamConfig(
                name=STREAM, subjects=[f"{RECORDS}.>"], duplicate_window=120.0,
                max_msg_size=MAX_MESSAGE, num_replicas=self.replicas))
        except BadRequestError:  # there already, made by an earlier room: keep its settings
            pass
        subscription = await js.pull_subscribe(
            f"{RECORDS}.>", durable=self.durable, stream=STREAM,
            config=ConsumerConfig(ack_policy=AckPolicy.EXPLICIT, ack_wait=60,
                                  max_ack_pending=self.batch * 8))

        assert self.store is not None
        courier = asyncio.ensure_future(deliver_until_stopped(
            nc, self.store, self._holds_told, self._holds_due, self._stop, self.hold_retry_s))
        try:
            await self._fetch_until_stopped(nc, subscription)
        finally:
            courier.cancel()

    async def _fetch_until_stopped(self, nc: Any, subscription: Any) -> None:
        import nats.errors

        while not self._stop.is_set():
            try:
                self._check_silence()
            except RecordingError as error:  # the store away: alarmed once it is back
                logger.error("the room cannot record a silent table's alarm: %s", error)
                self._silent.clear()
            try:
                messages = await subscription.fetch(self.batch, timeout=1.0)
            except nats.errors.TimeoutError:
                continue
            except (nats.errors.ConnectionClosedError, nats.errors.NoServersError):
                return
            except Exception as error:  # the broker restarting: fetch again once back
                logger.info("the room's fetch failed (%s): trying again", error)
                await self._sleep(0.5)
                if nc.is_closed:
                    return
                continue
            if not await self._take_until_held(messages):
                return
            for message in messages:
                try:
                    await message.ack()
                except Exception as error:  # not acknowledged: sent again, held once
                    logger.info("ack failed (%s): the record comes again", error)
                    break

    async def _take_until_held(self, messages: list[Any]) -> bool:
        """Ingest a batch, again and again while the store refuses (PostgreSQL away, a lock),
        telling the broker the batch is still in hand; False when told to stop first (the
        batch is then sent again to the next room: nothing was acknowledged)."""
        pause = 0.5
        while True:
            try:
                self._take(messages)
                return True
            except RecordingError as error:
                logger.error("the room's store refuses the records (%s): nothing is "
                             "acknowledged; trying again", error)
            for message in messages:
                try:
                    await message.in_progress()
                except Exception:  # the broker away too: it sends them again later
                    break
            await self._sleep(pause)
            pause = min(pause * 2, 10.0)
            if self._stop.is_set():
                return False

    def _take(self, messages: list[Any]) -> None:
        """Ingest a batch (durably, before any of it is acknowledged), verify and alarm, then
        keep the key frames that came with it."""
        assert self.store is not None
        groups: dict[tuple[str, str], list[Forwarded]] = {}  # each chain's in stream order
        for message in messages:
            try:
                item = decode_record(message.subject, message.data)
            except WireError as error:
                table = message.subject.rpartition(".")[2][:32]
                self._alarm(FloorAlarm("message", table, str(error)))
                continue
            groups.setdefault((item.table, item.chain), []).append(item)
        for (table, chain), items in groups.items():
            outcomes = self.store.ingest(table, chain, [item.record for item in items])
            self._heard[table] = time.monotonic()
            if table in self._silent:
                self._alarm(FloorAlarm("heard", table, f"table {table} is heard again"))
                self._silent.discard(table)  # once recorded
            for item, outcome in zip(items, outcomes, strict=True):
                self._after(item, outcome)
            for item, outcome in zip(items, outcomes, strict=True):
                if item.frame is not None:
                    self._keep_frame(item, outcome)

    def _keep_frame(self, item: Forwarded, outcome: Ingested) -> None:
        """Keep the key frame that came with a record the store holds now (NEW) or held already
        (DUPLICATE: a resend after a crash between the ingest and the frame's write), under
        ``floor/TABLE/CHAIN/<its file>``, where the table's key vouches for the record: written
        once, never over a file that is there. A fork's frame is never written (the fork is
        alarmed; the room's record and frame stay); a frame the room will not keep is alarmed
        (once a run). OSErrors (a full disk) are RecordingError: nothing is acknowledged and
        the frame comes again."""
        assert self.store is not None and item.frame is not None
        if outcome.outcome not in (Ingest.NEW, Ingest.DUPLICATE):
            return
        record, table, chain = outcome.held, item.table, item.chain
        if outcome.outcome is Ingest.DUPLICATE and self._pruned_frame(table, chain, record.seq):
            return  # the room's retention deleted it: a resend does not bring it back
        check = self._check(table, chain)
        if check.trusted is None:
            return  # alarmed 'untrusted' once: no key vouches for its frames either
        why = check.vouches(record)
        parts = frame_parts(record.file)
        if why is None and parts is None:
            why = f"it names a frame file {str(record.file)[:80]!r} the room will not write"
        if why is None and hashlib.sha256(item.frame).hexdigest() != record.sha256:
            why = "the bytes that came are not the frame its record names"
        if why is None:
            assert parts is not None
            try:
                kept = keep_frame_file(self.store.directory, ("floor", table, chain), parts,
                                       item.frame)
            except FrameRefused as error:
                why = f"its file cannot be written: {error}"
            except OSError as error:
                raise RecordingError(f"the room cannot write the frame of "
                                     f"{record.describe()}: {error}") from None
            else:
                if kept is not Kept.DIFFERS:
                    return
                why = ("a different file has its name in the room already: that file is kept, "
                       "not overwritten")
        if (table, chain, record.seq) not in self._frames_alarmed:
            self._alarm(FloorAlarm("frame", table, f"the key frame of {record.describe()} is "
                                   f"not kept: {why}", chain, record.seq))
            self._frames_alarmed.add((table, chain, record.seq))  # once recorded

    def _pruned_frame(self, table: str, chain: str, seq: int) -> bool:
        """Whether the room's retention deleted its copy of that frame (its prune records,
        read again when a newer is there)."""
        assert self.store is not None
        newest = self.store.latest_records(PRUNE, 1)
        mark = newest[0].seq if newest else 0
        if self._pruned is None or self._pruned[0] != mark:
            self._pruned = (mark, pruned_frames(self.store))
        return (table, chain, seq) in self._pruned[1]

    def _after(self, item: Forwarded, outcome: Ingested) -> None:
        record, table, chain = item.record, item.table, item.chain
        if outcome.outcome is Ingest.NEW:
            self.ingested += 1
            if self.on_record is not None:
                self.on_record(item, outcome)
        if outcome.outcome is Ingest.PRUNED:
            logger.info("%s of table %s came again, but the room's retention pruned it:"
                        " ignored", record.describe(), table)
            return
        if outcome.outcome is Ingest.FORK:
            self._alarm(FloorAlarm("fork", table, (
                f"{record.describe()} differs from the copy the room holds (held hash "
                f"{outcome.held.hash[:16]}, offered {record.hash[:16]}): rewritten on the table "
                "box after it was forwarded; the room's record and frame are kept"), chain,
                record.seq))
            return
        check = self._check(table, chain)
        if outcome.next_seq <= record.seq and record.seq > check.verified + 1:
            first = outcome.next_seq
            if first not in check.gaps_alarmed:
                self._alarm(FloorAlarm("gap", table, (
                    f"records {first} to {record.seq - 1} of {table} have not come before "
                    f"record {record.seq}"), chain, first))
                check.gaps_alarmed.add(first)  # once recorded
        if record.seq <= check.verified:
            return  # verified when it first came
        if record.seq == check.verified + 1 and outcome.next_seq == record.seq + 1:
            self._verify_held(check, outcome.held)  # the run's next record: no query
        else:
            self._verify_run(check)

    def _check(self, table: str, chain: str) -> ChainCheck:
        key = (table, chain)
        check = self._checks.get(key)
        if check is None:
            trusted = self.tables.get(table)
            if trusted is None:
                self._alarm(FloorAlarm("untrusted", table, (
                    f"records come from table {table}, which room.toml does not name: held, "
                    "but no key vouches for them (their frames are not kept)"), chain))
            check = self._checks[key] = ChainCheck(
                table, chain, None if trusted is None else trusted.keys)
        return check

    def _verify_held(self, check: ChainCheck, record: Record) -> None:
        """Verify the record the store holds as the verified run's next one, and alarm. An
        alarm the store refuses (RecordingError) puts the check back as it was: the batch
        comes again and the record is verified, and alarmed, again."""
        before = (check.verified, check.last_hash, check.key, list(check.keys),
                  check.first_key_trusted)
        try:
            for kind, why in check.check(record):
                self._alarm(FloorAlarm(kind, check.table, why, check.chain, record.seq))
        except RecordingError:
            (check.verified, check.last_hash, check.key, check.keys,
             check.first_key_trusted) = before
            raise

    def _verify_run(self, check: ChainCheck) -> None:
        """Verify the records held past the verified run, as far as it is unbroken."""
        assert self.store is not None
        for record in self.store.chain_records(check.table, check.chain, after=check.verified):
            if record.seq != check.verified + 1 and not self._across(check, record.seq):
                return  # a gap: verification waits for the records missing
            self._verify_held(check, record)

    def _resume_checks(self) -> None:
        """Verify what the store holds already (a room restarted), without alarming again for
        what it alarmed before (its floor alarms are in its chain)."""
        assert self.store is not None
        alarmed = {(a.get("table"), a.get("chain"), a.get("seq"), a.get("kind"))
                   for a in (r.body for r in self.store.records(kinds=(ALARM_KIND,)))
                   if isinstance(a, dict)}
        for state in self.store.chains():
            trusted = self.tables.get(state.table)
            check = self._checks[(state.table, state.chain)] = ChainCheck(
                state.table, state.chain, None if trusted is None else trusted.keys)
            for record in self.store.chain_records(state.table, state.chain):
                if record.seq != check.verified + 1 and not self._across(check, record.seq):
                    break
                for kind, why in check.check(record):
                    if (state.table, state.chain, record.seq, kind) not in alarmed:
                        self._alarm(FloorAlarm(kind, state.table, why, state.chain,
                                               record.seq))
            if check.verified + 1 < state.next_seq:  # a cut up to the chain's end, maybe
                self._across(check, state.next_seq)

    def _across(self, check: ChainCheck, after: int) -> bool:
        """Take ``check`` across the hole before record ``after`` where the room's retention
        recorded it as a cut (reading the room's prune records again when a newer is there)."""
        assert self.store is not None
        newest = self.store.latest_records(PRUNE, 1)
        if self._cuts is None or self._cuts.newest != (newest[0].seq if newest else 0):
            self._cuts = recorded_cuts(self.store)
        link = self._cuts.across(check.table, check.chain, check.verified + 1, after)
        if link is None:
            return False
        check.cross(after, link)
        return True

    def _check_silence(self) -> None:
        if self.store is None:
            return
        now = time.monotonic()
        for table in self.tables:
            if table in self._silent:
                continue
            if now - self._heard.get(table, now) > self.silent_after_s:
                self._silent.add(table)
                self._alarm(FloorAlarm("silent", table, (
                    f"nothing new from table {table} for over {self.silent_after_s:.0f} s: "
                    "its box, its link or its forwarder is down")))

    def _alarm(self, alarm: FloorAlarm) -> None:
        """Record a floor alarm in the room's own chain, and log it."""
        assert self.store is not None
        logger.warning("floor alarm: %s: %s", alarm.kind, alarm.text)
        self.store.append(ALARM_KIND, alarm.to_json(), table=alarm.table)  # RecordingError:
        # the caller's batch is not acknowledged and comes again
        self.alarms.append(alarm)

    async def fetch_frame(self, table: str, seq: int, timeout: float = 5.0) -> bytes:
        """A frame kept on table ``table``'s box (record ``seq`` of its chain), asked of the
        box over NATS; RecordingError with the box's reason when it cannot give it."""
        import json

        if self._nc is None:
            raise RecordingError("the room is not connected to the floor broker")
        reply = await self._nc.request(frame_subject(table), json.dumps({"seq": seq}).encode(),
                                       timeout=timeout)
        error = (reply.headers or {}).get("Floor-Error")
        if error:
            raise RecordingError(f"table {table}: {error}")
        return bytes(reply.data)



def room_connect_options(nats: NatsConfig) -> dict[str, Any]:
    """nats-py's connect options for the room (replies on ``_INBOX.room``)."""
    from dealer_assist.floor.forwarder import FloorLink

    link = FloorLink(nats.url, nats.credentials, nats.tls_ca, nats.tls_cert, nats.tls_key)
    return link.connect_options("surveillance-room", "room")


class RoomThread:
    """Runs a :class:`Room` in a thread of its own with its own event loop."""

    def __init__(self, room: Room):
        self.room = room
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._run, name="floor-room", daemon=True)
        self.failed: BaseException | None = None

    def _run(self) -> None:
        try:
            self._loop.run_until_complete(self.room.run())
        except BaseException as error:  # told to whoever stops it, and logged now
            logger.exception("the room's consumer ended")
            self.failed = error
        finally:
            self._loop.close()

    def start(self) -> RoomThread:
        self._thread.start()
        return self

    def call(self, coroutine: Any, timeout: float = 10.0) -> Any:
        """Run ``coroutine`` in the room's loop (e.g. :meth:`Room.fetch_frame`)."""
        return asyncio.run_coroutine_threadsafe(coroutine, self._loop).result(timeout)

    def send_holds(self) -> None:
        """Have the room send its holds that have not reached their box now (any thread)."""
        if self._thread.is_alive():
            self._loop.call_soon_threadsafe(self.room.send_holds)

    def join(self) -> None:
        """Wait until the room's consumer ends."""
        self._thread.join()

    def stop(self, timeout: float = 15.0) -> None:
        if self._thread.is_alive():
            self._loop.call_soon_threadsafe(self.room.stop)
            self._thread.join(timeout)
