"""A forwarder with many records in flight, against a real JetStream: every record is stored once
and in order through a broker restart mid-window, a refusal mid-window is sent again from the
first record not acknowledged, and the saved cursor never passes a record the broker lacks."""

from __future__ import annotations

import asyncio
import gc
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from dealer_assist.floor.forwarder import (
    CURSOR_EVERY,
    CURSOR_NAME,
    Cursor,
    FloorLink,
    FloorStatus,
    Forwarder,
    ForwarderHost,
)
from dealer_assist.floor.wire import MAX_MESSAGE, RECORDS, STREAM, decode_record
from tests.floor.broker import Broker
from tests.floor.floor import (
    BoxTable,
    RoomBackend,
    all_arrived,
    held,
    open_room,
    room_alarms,
    wait_for,
)

#: rounds recorded before forwarding starts: a backlog of several windows and cursor saves
BACKLOG_ROUNDS = 24


@pytest.fixture
def broker(tmp_path: Path) -> Iterator[Broker]:
    running = Broker(tmp_path / "jetstream").start()
    yield running
    running.stop()


def forwarding(table: BoxTable, url: str, window: int,
               on_status: Callable[[FloorStatus], None] | None = None
               ) -> tuple[ForwarderHost, Forwarder]:
    host = ForwarderHost().start()
    forwarder = host.add(Forwarder(table.directory, table.name, FloorLink(url, window=window),
                                   on_status=on_status, poll_s=0.05, signer=table.signer))
    return host, forwarder


def stream_seqs(url: str, table: str) -> list[int]:
    """The record numbers of ``table``'s messages in the stream, in the stream's order."""
    import nats

    async def read() -> list[int]:
        nc = await nats.connect(url)
        js = nc.jetstream()
        last = (await js.stream_info(STREAM)).state.last_seq
        seqs = []
        for number in range(1, last + 1):
            message = await js.get_msg(STREAM, number)
            if message.subject == f"{RECORDS}.{table}":
                seqs.append(decode_record(message.subject, message.data or b"").record.seq)
        await nc.close()
        return seqs

    return asyncio.run(read())


def make_stream(url: str, **limits: Any) -> None:
    """The floor's stream, as the room makes it, with ``limits`` (the room keeps a stream it
    finds)."""
    import nats
    from nats.js.api import StreamConfig

    async def make() -> None:
        nc = await nats.connect(url)
        await nc.jetstream().add_stream(StreamConfig(
            name=STREAM, subjects=[f"{RECORDS}.>"], duplicate_window=120.0,
            max_msg_size=MAX_MESSAGE, **limits))
        await nc.close()

    asyncio.run(make())


class Spy:
    """Every message published on a table's subject, as the broker relays it (refused ones
    too), in the order they came: their record numbers."""

    def __init__(self, url: str, table: str):
        self.seqs: list[int] = []
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, args=(url, table), daemon=True)
        self._thread.start()
        assert self._ready.wait(30)

    def _run(self, url: str, table: str) -> None:
        import nats

        async def listen() -> None:
            self._nc = await nats.connect(url)

            async def heard(msg: Any) -> None:
                self.seqs.append(decode_record(msg.subject, msg.data).record.seq)

            await self._nc.subscribe(f"{RECORDS}.{table}", cb=heard)
            await self._nc.flush()
            self._ready.set()

        self._loop.run_until_complete(listen())
        self._loop.run_forever()

    def close(self) -> None:
        asyncio.run_coroutine_threadsafe(self._nc.close(), self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)


def test_a_broker_restart_mid_window_stores_every_record_once_in_order(
        tmp_path: Path, broker: Broker, monkeypatch: pytest.MonkeyPatch):
    """Every record arrives once and in order across a broker restart with a window in flight,
    and the connection the broker dropped leaves none of the client's tasks behind: none is
    torn down after the forwarders' loop has closed ("Event loop is closed", raised where
    nobody can catch it)."""
    torn_down: list[str] = []
    monkeypatch.setattr(sys, "unraisablehook",
                        lambda raised: torn_down.append(f"{raised.exc_value!r}: {raised.object}"))
    table = BoxTable(tmp_path / "boxes", "T1")
    table.play(BACKLOG_ROUNDS)
    records = len(table.records())
    assert records > 2 * CURSOR_EVERY
    backend = RoomBackend(tmp_path / "room")
    room = open_room(backend, broker.url, [table])
    stopped = threading.Event()

    def stop_broker_at_first_save(status: FloorStatus) -> None:
        # called in the forwarder's loop as it saves its cursor: the window is full
        if not stopped.is_set() and 0 < status.records < records - 1:
            broker.stop()
            stopped.set()

    host, forwarder = forwarding(table, broker.url, 64, stop_broker_at_first_save)
    try:
        assert wait_for(stopped.is_set, 60)
        assert wait_for(lambda: not forwarder.status.connected, 30)
        _, acked = Cursor(table.directory / CURSOR_NAME).load()
        assert 0 < acked < records
        broker.start()
        assert wait_for(all_arrived(backend, [table]), 90)
        assert wait_for(lambda: forwarder.status.records == 0)
        assert stream_seqs(broker.url, "T1") == list(range(1, records + 1))
        assert held(backend, table) == table.records()
        assert room_alarms(backend) == []
    finally:
        host.stop()
        room.stop()
    gc.collect()
    assert torn_down == []


def test_a_refusal_mid_window_is_sent_again_from_the_first_record_not_acknowledged(
        tmp_path: Path, broker: Broker):
    import nats

    limit = 40  # the stream is full past this many messages: the broker refuses the rest
    from nats.js.api import DiscardPolicy

    make_stream(broker.url, max_msgs=limit, discard=DiscardPolicy.NEW)
    table = BoxTable(tmp_path / "boxes", "T1")
    table.play(4)
    records = len(table.records())
    assert records > limit + 16
    backend = RoomBackend(tmp_path / "room")
    room = open_room(backend, broker.url, [table])
    spy = Spy(broker.url, "T1")
    host, forwarder = forwarding(table, broker.url, 16)
    try:
        assert wait_for(lambda: "did not acknowledge" in forwarder.status.detail, 60)
        assert wait_for(lambda: spy.seqs.count(limit + 1) >= 2, 30)
        assert Cursor(table.directory / CURSOR_NAME).load() == (table.chain, limit)
        assert forwarder.status.records == records - limit
        assert stream_seqs(broker.url, "T1") == list(range(1, limit + 1))

        async def lift() -> None:
            nc = await nats.connect(broker.url)
            js = nc.jetstream()
            config = (await js.stream_info(STREAM)).config
            config.max_msgs = -1
            await js.update_stream(config)
            await nc.close()

        asyncio.run(lift())
        assert wait_for(all_arrived(backend, [table]), 60)
        assert stream_seqs(broker.url, "T1") == list(range(1, records + 1))
        assert held(backend, table) == table.records()
        assert room_alarms(backend) == []
        # the first pass had records past the refused one in flight; every pass after it
        # began again at the refused one
        seen = list(spy.seqs)
        first_pass = seen[:seen.index(limit + 1, seen.index(limit + 1) + 1)]
        assert first_pass == list(range(1, len(first_pass) + 1))
        assert len(first_pass) > limit + 1
        passes = [n for n in range(1, len(seen)) if seen[n] <= seen[n - 1]]
        assert passes and all(seen[n] == limit + 1 for n in passes)
    finally:
        host.stop()
        spy.close()
        room.stop()


def test_the_cursor_never_passes_a_record_the_broker_lacks(tmp_path: Path, broker: Broker):
    make_stream(broker.url)
    table = BoxTable(tmp_path / "boxes", "T1")
    table.play(BACKLOG_ROUNDS)
    records = len(table.records())
    frozen = threading.Event()
    holder: list[Forwarder] = []

    def freeze_broker_then_stop(status: FloorStatus) -> None:
        # the window full of records sent: the broker stops answering, the box is switched off
        if not frozen.is_set() and 0 < status.records < records - 1:
            assert broker.process is not None
            os.kill(broker.process.pid, signal.SIGSTOP)
            frozen.set()
            holder[0].stop()

    host, forwarder = forwarding(table, broker.url, 64, freeze_broker_then_stop)
    holder.append(forwarder)
    try:
        assert wait_for(frozen.is_set, 60)
    finally:
        host.stop()
    assert broker.process is not None
    broker.process.kill()  # what it had not stored is lost with it
    broker.process.wait(20)
    broker.process = None
    chain, acked = Cursor(table.directory / CURSOR_NAME).load()
    assert chain == table.chain and acked >= CURSOR_EVERY
    assert forwarder.published == acked
    broker.start()
    stored = stream_seqs(broker.url, "T1")
    assert stored[:acked] == list(range(1, acked + 1))  # all the cursor passed, in order
    assert stored == list(range(1, len(stored) + 1))
    # started again, the box sends from its cursor: once each, in order
    backend = RoomBackend(tmp_path / "room")
    room = open_room(backend, broker.url, [table])
    host, forwarder = forwarding(table, broker.url, 64)
    try:
        assert wait_for(all_arrived(backend, [table]), 90)
        assert stream_seqs(broker.url, "T1") == list(range(1, records + 1))
        assert room_alarms(backend) == []
    finally:
        host.stop()
        room.stop()
