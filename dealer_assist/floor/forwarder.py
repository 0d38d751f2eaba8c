"""Forwarding a table's signed recording to the floor: every record, in order, exactly once.

A :class:`Forwarder` reads the table's surveillance store (its own SQLite connection, in its own
asyncio loop: the table never waits for the network) and publishes each record after the
:class:`Cursor` to JetStream on the table's own subject, with the message id
``TABLE.CHAIN.SEQ.HASH16`` (:mod:`.wire`). Up to :attr:`FloorLink.window` records are in flight
at once (published, their PubAck not yet back), in order on one connection. The cursor, fsync'd
on the box, is the last record that the broker acknowledged with every record before it; it
never passes a record without a PubAck, so through a broker outage or a network cut the table
keeps recording locally and catches up afterwards, in order, from the first record the broker
did not acknowledge. A connection that drops is never resumed with what it had buffered: a new
one starts again from that record, alone until the broker acknowledges it. A key frame travels
in its record's message; other frames stay on the box and the room asks for them on
``floor.frames.<TABLE>`` (request/reply). The room's legal holds come on
``floor.holds.<TABLE>``: the box marks the held round's frames so its own retention keeps them
(:mod:`.box_hold`), signed with the table's key.

:class:`ForwarderHost` runs forwarders in one thread with one event loop (one on a table box,
hundreds in ``dealer-assist floor simulate``). :class:`FloorStatus` is what the dealer's screen
shows: records and seconds behind, and whether that is past the alarm's bound.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import ssl
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dealer_assist.durable import create_new, fsync_dir
from dealer_assist.floor.box_hold import HoldRefused, keep_held_round
from dealer_assist.floor.wire import (
    MAX_MESSAGE,
    STREAM,
    WireError,
    decode_hold_request,
    encode_record,
    frame_subject,
    hold_subject,
    message_id,
    record_subject,
)
from dealer_assist.surveillance.signed_chain import chain_id
from dealer_assist.surveillance.store import (
    Record,
    RecordingError,
    RecordingStore,
    RecordSigner,
    parse_time,
    utc_now,
)

logger = logging.getLogger(__name__)

CURSOR_NAME = "floor.cursor"
#: records acknowledged between two writes of the cursor (a crash resends at most these and
#: the window)
CURSOR_EVERY = 200
#: records in flight by default: published, their PubAck not yet back
WINDOW = 128
#: the most records a link may have in flight
MAX_WINDOW = 1024
#: what a record's message leaves of the broker's max_payload for its headers (message id...)
HEADERS_ROOM = 4096


@dataclass(frozen=True, slots=True)
class FloorLink:
    """A table's ``[floor]`` section: the broker, the table's credentials and TLS files, and the
    lag past which the dealer's screen raises an alarm; ``window``: the records in flight at once
    (1 to :data:`MAX_WINDOW`; 1: each waits for its predecessor's PubAck)."""

    url: str
    credentials: Path | None = None
    tls_ca: Path | None = None
    tls_cert: Path | None = None
    tls_key: Path | None = None
    alarm_after_s: float = 300.0
    alarm_after_records: int = 2000
    window: int = WINDOW

    def __post_init__(self) -> None:
        if isinstance(self.window, bool) or not isinstance(self.window, int) \
                or not 1 <= self.window <= MAX_WINDOW:
            raise ValueError(f"window must be 1 to {MAX_WINDOW} records, got {self.window!r}")

    def tls(self) -> ssl.SSLContext | None:
        """The TLS context for the broker (None: plain, as on a private loopback)."""
        if self.tls_ca is None and self.tls_cert is None:
            return None
        context = ssl.create_default_context(
            cafile=None if self.tls_ca is None else str(self.tls_ca))
        if self.tls_cert is not None:
            context.load_cert_chain(str(self.tls_cert),
                                    None if self.tls_key is None else str(self.tls_key))
        return context

    def connect_options(self, name: str, inbox: str) -> dict[str, Any]:
        """nats-py's connect options: reconnect for ever, quickly; replies come to the inbox
        ``_INBOX.<inbox>`` (so the broker can let each client read only its own replies)."""
        options: dict[str, Any] = {
            "servers": [self.url], "name": name, "inbox_prefix": f"_INBOX.{inbox}",
            "allow_reconnect": True,
            "max_reconnect_attempts": -1, "reconnect_time_wait": 0.5, "connect_timeout": 2,
            "error_cb": _quiet, "disconnected_cb": _none, "reconnected_cb": _none,
        }
        if self.credentials is not None:
            options["user_credentials"] = str(self.credentials)
        context = self.tls()
        if context is not None:
            options["tls"] = context
        return options


async def _quiet(error: Exception) -> None:
    logger.debug("floor broker: %s", error)


async def _none() -> None:
    return None


@dataclass(frozen=True, slots=True)
class FloorStatus:
    """How far the room is behind the table: ``records`` not yet acknowledged by the broker and
    the age in seconds of the oldest of them; ``alarm`` past the bound; ``connected`` to the
    broker; ``detail`` what is wrong, if anything."""

    records: int
    seconds: float
    connected: bool
    alarm: bool
    detail: str = ""

    def to_json(self) -> dict[str, Any]:
        return {"records": self.records, "seconds": round(self.seconds, 1),
                "connected": self.connected, "alarm": self.alarm, "detail": self.detail}


class Cursor:
    """The last record of a chain the broker acknowledged, kept in a file on the box (written
    to a new file, fsync'd, then renamed over the old one)."""

    def __init__(self, path: Path):
        self.path = path

    def load(self) -> tuple[str | None, int]:
        """(chain, seq); (None, 0) when there is none. A cursor that cannot be read is taken
        as none (everything is sent again: the room keeps one copy) and logged."""
        try:
            raw = json.loads(self.path.read_text(encoding="utf-8"))
            chain, seq = raw["chain"], raw["seq"]
            if not isinstance(chain, str) or isinstance(seq, bool) or not isinstance(seq, int) \
                    or seq < 0:
                raise ValueError(f"chain {chain!r}, seq {seq!r}")
        except FileNotFoundError:
            return None, 0
        except (OSError, ValueError, KeyError, TypeError) as error:
            logger.warning("%s cannot be read (%s): the table forwards its recording again "
                           "from the start; the room keeps one copy of each record",
                           self.path, error)
            return None, 0
        return chain, seq

    def save(self, chain: str, seq: int) -> None:
        temporary = self.path.with_name(self.path.name + ".new")
        with os.fdopen(create_new(temporary), "w", encoding="utf-8") as handle:
            handle.write(json.dumps({"chain": chain, "seq": seq}))
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, self.path)
        fsync_dir(self.path.parent)


class Forwarder:
    """Forwards one table's recording (``directory``: its recording directory, holding
    ``index.sqlite``) to the floor; ``on_status`` hears each change of its
    :class:`FloorStatus` (from the forwarder's thread); ``signer``: the table's key, which signs
    the marks a room's hold writes (None: holds are refused)."""

    def __init__(self, directory: Path, table: str, link: FloorLink, *,
                 on_status: Callable[[FloorStatus], None] | None = None,
                 poll_s: float = 0.2, ack_timeout_s: float = 5.0,
                 signer: RecordSigner | None = None):
        self.directory = Path(directory)
        self.table = table
        self.link = link
        self.signer = signer
        self.on_status = on_status
        self.poll_s = poll_s
        self.ack_timeout_s = ack_timeout_s
        self.cursor = Cursor(self.directory / CURSOR_NAME)
        self.published = 0  # records the broker acknowledged in this run
        self._status = FloorStatus(0, 0.0, False, False, "not started")
        self._stop = asyncio.Event()  # bound to no loop until awaited (3.10+)
        self._store: RecordingStore | None = None
        self._chain: str | None = None
        self._acked = 0
        self._in_flight: deque[tuple[int, asyncio.Future[Any] | None]] = deque()
        self._connected = False

    @property
    def status(self) -> FloorStatus:
        return self._status

    def stop(self) -> None:
        """Ask :meth:`run` to end (from the forwarder's loop)."""
        self._stop.set()

    async def run(self) -> None:
        """Forward until :meth:`stop`: connect (again and again while the broker is away),
        answer frame requests, publish every record after the cursor."""
        import nats

        backoff = 0.5
        while not self._stop.is_set():
            # no reconnecting: a connection resumed would send what it had buffered, after
            # records lost with the broker; a new one starts from the first unacknowledged
            options = {**self.link.connect_options(f"table-{self.table}", self.table),
                       "allow_reconnect": False, "disconnected_cb": self._connection_lost}
            try:
                nc = await self._until_stopped(nats.connect(**options))
                if nc is None:
                    break
            except Exception as error:  # the broker away, refused, or TLS: try again
                self._report(connected=False, detail=f"cannot reach the floor broker: {error}")
                await self._sleep(backoff)
                backoff = min(backoff * 2, 2.0)
                continue
            backoff = 0.5
            try:
                await self._forward(nc)
            finally:
                try:
                    await nc.close()
                except Exception:  # closing a broken connection: nothing more to do
                    logger.debug("closing the floor connection of %s", self.table,
                                 exc_info=True)
        if self._store is not None:
            self._store.close()
            self._store = None

    async def _forward(self, nc: Any) -> None:
        js = nc.jetstream()
        await nc.subscribe(frame_subject(self.table), cb=self._frame_request(nc))
        await nc.subscribe(hold_subject(self.table), cb=self._hold_request(nc))
        while not self._stop_set() and not nc.is_closed:  # closed: connect again
            try:
                sent = await self._publish_some(js, nc)
            except RecordingError as error:
                self._report(detail=f"cannot read the recording: {error}")
                sent = 0
            except Exception as error:  # a PubAck that did not come: the broker away or full
                self._report(connected=nc.is_connected,
                             detail=f"the floor broker did not acknowledge: {error}")
                if not nc.is_closed:
                    await self._sleep(1.0)
                continue
            if not sent:
                await self._sleep(self.poll_s)

    async def _connection_lost(self) -> None:
        """The connection is gone: what it had in flight will never be acknowledged."""
        for _, pending in self._in_flight:
            if pending is not None and not pending.done():
                pending.set_exception(ConnectionError("the floor broker's connection was lost"))

    async def _until_stopped(self, connecting: Any, timeout: float = 10.0) -> Any:
        """The connection ``connecting`` makes (None: :meth:`stop` came first)."""
        attempt = asyncio.ensure_future(asyncio.wait_for(connecting, timeout))
        stopped = asyncio.ensure_future(self._stop.wait())
        await asyncio.wait({attempt, stopped}, return_when=asyncio.FIRST_COMPLETED)
        stopped.cancel()
        if not attempt.done():
            attempt.cancel()
            return None
        return attempt.result()

    def _stop_set(self) -> bool:
        return self._stop.is_set()

    async def _sleep(self, seconds: float) -> None:
        try:
            await asyncio.wait_for(self._stop.wait(), seconds)
        except TimeoutError:
            pass

    def _open(self) -> RecordingStore | None:
        """The table's store and its chain id (None while there is no store or no key record
        yet: a floor table's store is signed)."""
        if self._store is None:
            if not (self.directory / "index.sqlite").is_file():
                return None
            self._store = RecordingStore(self.directory, signer=self.signer)
        if self._chain is None:
            self._chain = chain_id(self._store)
            if self._chain is None:
                return None
            chain, seq = self.cursor.load()
            if chain != self._chain and chain is not None:
                logger.warning("%s: the recording's chain is %s, the cursor's %s: a new chain "
                               "is forwarded from its start", self.table, self._chain, chain)
                seq = 0
            self._acked = seq
        return self._store

    async def _publish_some(self, js: Any, nc: Any) -> int:
        """Publish the records after the cursor up to the store's head, up to
        ``link.window`` of them awaiting their PubAck at once (the first alone: a broker just
        back may refuse a few); the cursor moves over each record acknowledged with all before
        it and is saved every :data:`CURSOR_EVERY` and at the end. A PubAck refused or not
        come ends the call with its error, the records after it unacknowledged: the next call
        sends again from that one. Returns how many were acknowledged."""
        store = self._open()
        if store is None or self._chain is None:
            self._report(connected=nc.is_connected, detail="waiting for the signed recording")
            return 0
        head = store.last_seq()
        window = self._in_flight = deque()
        following, saved, limit, sent = self._acked + 1, self._acked, 1, 0
        try:
            while not self._stop_set():
                while following <= head and len(window) < limit:
                    window.append((following, await self._send(js, store, following,
                                                               nc.max_payload)))
                    following += 1
                if not window:
                    break
                seq, pending = window[0]
                if pending is not None:
                    await asyncio.wait_for(pending, self.ack_timeout_s)
                    self.published += 1
                    sent += 1
                window.popleft()
                self._acked, limit = seq, self.link.window
                if self._acked - saved >= CURSOR_EVERY:
                    self.cursor.save(self._chain, self._acked)
                    saved = self._acked
                    self._report(connected=True, store=store)
        finally:
            _abandon(window)
            if self._acked != saved:
                self.cursor.save(self._chain, self._acked)
        self._report(connected=True, detail="", store=store)
        return sent

    async def _send(self, js: Any, store: RecordingStore, seq: int, max_payload: int
                    ) -> asyncio.Future[Any] | None:
        """Publish record ``seq``; its PubAck to come (None: the record is missing). Its key
        frame travels with it only where the message fits the broker's ``max_payload`` (its
        headers too); otherwise the record goes alone and the frame stays on the box."""
        assert self._chain is not None
        record = store.record(seq)
        if record is None:  # a hole in the chain: the room raises the gap
            logger.error("%s: record %d is missing from the recording", self.table, seq)
            return None
        payload = encode_record(self.table, self._chain, record, self._key_frame(record))
        if len(payload) > max_payload - HEADERS_ROOM:
            payload = encode_record(self.table, self._chain, record)
        future: asyncio.Future[Any] = await js.publish_async(
            record_subject(self.table), payload, stream=STREAM,
            headers={"Nats-Msg-Id": message_id(self.table, self._chain, record)})
        return future

    def _key_frame(self, record: Record) -> bytes | None:
        """A key frame's bytes, to travel with its record (None: no key frame, or gone)."""
        if record.kind != "frame" or record.file is None:
            return None
        try:
            key = json.loads(record.body_text).get("key")
        except (ValueError, AttributeError):
            return None
        if key is not True:
            return None
        path = self.directory / record.file
        try:
            if path.stat().st_size > MAX_MESSAGE // 2:
                return None  # too big to travel: the room fetches it
            return path.read_bytes()
        except OSError:
            return None

    def _frame_request(self, nc: Any) -> Callable[[Any], Any]:
        async def answer(msg: Any) -> None:
            data, error = self._frame_bytes(msg.data)
            if len(data) > nc.max_payload - HEADERS_ROOM:  # the broker would refuse the reply
                data, error = b"", (f"the frame is {len(data)} bytes, over the floor broker's "
                                    f"max_payload of {nc.max_payload}")
            if msg.reply:
                headers = {"Floor-Error": error} if error else None
                await nc.publish(msg.reply, data, headers=headers)

        return answer

    def _hold_request(self, nc: Any) -> Callable[[Any], Any]:
        async def answer(msg: Any) -> None:
            data, error = self._keep_held(msg.data)
            if msg.reply:
                headers = {"Floor-Error": error} if error else None
                await nc.publish(msg.reply, data, headers=headers)

        return answer

    def _keep_held(self, request: bytes) -> tuple[bytes, str]:
        """The answer to the room's hold request: the kept round as JSON (b"" and why not)."""
        try:
            hold = decode_hold_request(request)
            store = self._open()
            if store is None:
                return b"", f"{self.table} has no signed recording yet"
            kept = keep_held_round(store, self.table, hold)
        except (WireError, HoldRefused) as error:
            logger.warning("%s refuses a hold request: %s", self.table, error)
            return b"", _header_text(str(error))
        except RecordingError as error:
            logger.error("%s cannot keep a held round: %s", self.table, error)
            return b"", _header_text(f"{self.table} cannot write its recording: {error}")
        return json.dumps(kept.to_json()).encode(), ""

    def _frame_bytes(self, request: bytes) -> tuple[bytes, str]:
        """A frame's bytes for the room's request ``{"seq": N}`` (b"" and why not)."""
        try:
            seq = json.loads(request[:200]).get("seq")
        except (ValueError, AttributeError):
            seq = None
        if isinstance(seq, bool) or not isinstance(seq, int):
            return b"", "the request names no record: {\"seq\": N}"
        store = self._open()
        record = None if store is None else store.record(seq)
        if record is None or record.kind != "frame" or record.file is None:
            return b"", f"record {seq} is no frame of {self.table}"
        try:
            data = (self.directory / record.file).read_bytes()
        except OSError as error:
            return b"", f"frame of record {seq} cannot be read: {error.strerror or error}"
        if len(data) > MAX_MESSAGE:
            return b"", f"frame of record {seq} is over {MAX_MESSAGE} bytes"
        return data, ""

    def _report(self, *, connected: bool | None = None, detail: str = "",
                head: int | None = None, store: RecordingStore | None = None) -> None:
        if connected is not None:
            self._connected = connected
        records, seconds = 0, 0.0
        try:
            store = store or self._open()
        except RecordingError as error:
            store, detail = None, detail or f"cannot read the recording: {error}"
        if store is not None:
            try:
                head = store.last_seq() if head is None else head
                records = max(0, head - self._acked)
                oldest = store.record(self._acked + 1) if records else None
                if oldest is not None:
                    seconds = max(0.0, (utc_now() - parse_time(oldest.at)).total_seconds())
            except (RecordingError, ValueError) as error:
                detail = detail or f"cannot read the recording: {error}"
        alarm = records > self.link.alarm_after_records or seconds > self.link.alarm_after_s
        status = FloorStatus(records, seconds, self._connected, alarm, detail)
        changed = status != self._status
        self._status = status
        if changed and self.on_status is not None:
            try:
                self.on_status(status)
            except Exception:  # a listener's bug must not stop forwarding
                logger.exception("the floor status listener raised")


def _abandon(window: deque[tuple[int, asyncio.Future[Any] | None]]) -> None:
    """Give up the PubAcks still awaited (their records are sent again); a refusal already
    come is taken as read."""
    for _, pending in window:
        if pending is None:
            continue
        if pending.done():
            if not pending.cancelled():
                pending.exception()
        else:
            pending.cancel()
    window.clear()


def _header_text(text: str) -> str:
    """``text`` as one header line of at most 500 characters."""
    return " ".join(text.split())[:500]


class ForwarderHost:
    """One thread running one asyncio loop that hosts forwarders."""

    def __init__(self, name: str = "floor-forwarder"):
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._forwarders: list[tuple[Forwarder, Any]] = []

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)
        self._loop.run_forever()

    def start(self) -> ForwarderHost:
        self._thread.start()
        return self

    def add(self, forwarder: Forwarder) -> Forwarder:
        future = asyncio.run_coroutine_threadsafe(forwarder.run(), self._loop)
        self._forwarders.append((forwarder, future))
        return forwarder

    def stop(self, timeout: float = 10.0) -> None:
        """Stop every forwarder (what the broker has acknowledged stays in the cursor); once."""
        if self._loop.is_closed() or not self._thread.is_alive():
            return
        for forwarder, _ in self._forwarders:
            self._loop.call_soon_threadsafe(forwarder.stop)
        deadline = time.monotonic() + timeout
        for forwarder, future in self._forwarders:
            try:
                future.result(max(0.1, deadline - time.monotonic()))
            except Exception:
                logger.exception("the floor forwarder of %s ended badly", forwarder.table)
        try:
            asyncio.run_coroutine_threadsafe(_end_leftover_tasks(), self._loop).result(
                max(0.1, deadline - time.monotonic()))
        except Exception:
            logger.exception("the floor client's tasks did not end")
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout)
        if not self._thread.is_alive():
            self._loop.close()


async def _end_leftover_tasks() -> None:
    """Cancel and wait for every other task still on this loop. A connection the broker dropped
    with data unsent is closed by nats-py from its own reader, and that close fails before it
    ends its subscriptions' tasks (its response subscription's among them): left pending, they
    would be torn down after the loop closed ("Event loop is closed", raised where nobody can
    catch it)."""
    leftover = [task for task in asyncio.all_tasks() if task is not asyncio.current_task()]
    for task in leftover:
        task.cancel()
    await asyncio.gather(*leftover, return_exceptions=True)


class ScreenReport:
    """Hands the forwarder's :class:`FloorStatus` to the table as it changes, at most every
    ``every_s`` seconds unless the alarm, the link or caught-up-ness changes (each is journaled
    by the table, so not on every poll)."""

    def __init__(self, submit: Callable[[Any], Any], every_s: float = 5.0,
                 clock: Callable[[], float] = time.monotonic):
        self.submit = submit
        self.every_s = every_s
        self.clock = clock
        self._last: FloorStatus | None = None
        self._at = 0.0

    def __call__(self, status: FloorStatus) -> None:
        from dealer_assist.table.sources import FloorLag

        last, now = self._last, self.clock()
        if last is not None and last.alarm == status.alarm and \
                last.connected == status.connected and \
                (last.records == 0) == (status.records == 0) and now - self._at < self.every_s:
            return
        self._last, self._at = status, now
        self.submit(FloorLag(status.records, status.seconds, status.alarm, status.connected,
                             status.detail[:200]))
