"""Connection limits for this package's web servers (uvicorn's h11 protocol, bounded).

uvicorn closes a connection idle after a response, but not one that never finishes sending a
request's headers: a client opening connections and sending a header line now and then holds
each one open for as long as it likes, until the process runs out of file descriptors (the
dealer's screen runs inside the table's process, which then cannot open its own files). So:

- a request's headers must arrive within ``header_timeout_s`` of the connection opening, or of
  the last response on it (else the connection is closed);
- one client address holds at most ``per_address`` connections at once (one more is closed at
  once);
- :func:`raise_open_file_limit` lifts the process's soft limit on open files to its hard limit,
  so that limit is not the first thing a burst of connections reaches.

A WebSocket, once upgraded, is the WebSocket protocol's: no longer timed here (the app refuses one
it does not let in, which closes it), but still counted under its address until it is gone, where
the protocol is :class:`BackpressuredWebSocket` (``uvicorn.Config(ws=...)``); that protocol also
cuts off a closing WebSocket that is not gone within :data:`CLOSE_FLUSH_S`, so that a client that
stops reading holds no connection open. Over TLS a connection reaches this protocol once its
handshake is done; before that it is :class:`HandshakeBoundedLoop`'s (give
``uvicorn.Config(loop=BOUNDED_LOOP)`` and serve a listening socket, ``run(sockets=...)``): a
handshake not done in :data:`HANDSHAKE_TIMEOUT_S` is closed (asyncio's own patience is 60 s),
and one client address holds at most :data:`PER_ADDRESS` connections from the moment each is
accepted, its handshake not yet begun included (asyncio gives each a 256 KiB read buffer at
once: uncounted, 3,000 of them from one address took a screen's process from 63 to 971 MiB).
"""

from __future__ import annotations

import asyncio
import logging
import resource
import socket
import weakref
from collections import Counter, deque
from collections.abc import Callable
from typing import Any

from uvicorn.protocols.http.h11_impl import H11Protocol
from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol

from dealer_assist.logs import Throttled

logger = logging.getLogger(__name__)

#: Seconds a client has to send a request's headers (a browser sends them at once).
HEADER_TIMEOUT_S = 10.0
#: Connections one client address may hold at once (a browser opens six, a screen a WebSocket).
PER_ADDRESS = 32
#: Seconds a client has to finish a TLS handshake (a browser does it in one round trip or two).
HANDSHAKE_TIMEOUT_S = 10.0
#: Connections over the cap closed at most in one turn of the event loop: the next is left for
#: a later turn, so that a flood of them does not hold the loop from its other work.
REFUSALS_A_TURN = 100
#: Seconds a closing WebSocket has to send what it still has to send before it is cut off: less
#: than the screen's grace for requests in flight at a stop (``screen.STOP_GRACE_S``), so that a
#: page that stopped reading is gone before that grace ends.
CLOSE_FLUSH_S = 5.0
#: ``uvicorn.Config(loop=...)`` for :class:`HandshakeBoundedLoop`.
BOUNDED_LOOP = f"{__name__}:HandshakeBoundedLoop"


class HandshakeBoundedLoop(asyncio.SelectorEventLoop):
    """An event loop whose TLS servers close a connection that has not finished its handshake
    within :data:`HANDSHAKE_TIMEOUT_S`, and, serving a listening socket (``sock=``), one
    beyond :data:`PER_ADDRESS` of its client address (both read as each server starts)."""

    async def create_server(  # type: ignore[override]
            self, *args: Any, **kwargs: Any) -> asyncio.Server:
        if kwargs.get("ssl") is not None:
            if kwargs.get("ssl_handshake_timeout") is None:
                kwargs["ssl_handshake_timeout"] = HANDSHAKE_TIMEOUT_S
            if kwargs.get("sock") is not None:
                kwargs["sock"] = CappedListener(kwargs["sock"], PER_ADDRESS)
        return await super().create_server(*args, **kwargs)


class CappedListener:
    """A listening socket whose :meth:`accept` closes a connection from an address that holds
    ``per_address`` already (at most :data:`REFUSALS_A_TURN` in a turn of the event loop, the
    rest in the next turns), counting each from its accept until it is closed (or collected);
    everything else is the socket's own. Only :meth:`accept` (the event loop's
    thread) touches the count: a connection's close, which the garbage collector may run on
    any thread and inside any code, only queues its address for the next accept to take off."""

    def __init__(self, listener: socket.socket, per_address: int) -> None:
        if per_address < 1:
            raise ValueError("the cap must be at least 1")
        self._listener = listener
        self._per_address = per_address
        self._open: Counter[str] = Counter()
        self._gone: deque[str] = deque()  # addresses of connections closed since (any thread)
        self._closed = Throttled(logger)
        self._refused = 0  # connections closed over the cap since the loop's turn began

    def accept(self) -> tuple[socket.socket, Any]:
        """The next connection under the cap. BlockingIOError, which ends asyncio's turn of
        accepts: none is waiting, or :data:`REFUSALS_A_TURN` were closed in this turn."""
        while True:
            if self._refused >= REFUSALS_A_TURN:
                self._refused = 0
                raise BlockingIOError("connections over the cap closed: the rest at a later turn")
            try:
                connection, address = self._listener.accept()
            except BlockingIOError:
                self._refused = 0
                raise
            while self._gone:
                gone = self._gone.popleft()
                self._open[gone] -= 1
                if self._open[gone] <= 0:
                    del self._open[gone]
            if not isinstance(address, tuple):
                return connection, address  # not an IP connection: nothing to count it by
            host = str(address[0])
            if self._open[host] >= self._per_address:
                self._closed.warning("cap", "connection closed: %s: over %d connections at once",
                                     host, self._per_address)
                connection.close()
                self._refused += 1
                continue
            self._open[host] += 1
            counted = _CountedConnection(connection.family, connection.type, connection.proto,
                                         fileno=connection.detach())
            # run once, at its close or when collected unclosed; a deque's append is atomic
            # and runs no Python code that could collect
            counted.leave = weakref.finalize(counted, self._gone.append, host)
            return counted, address

    def __getattr__(self, name: str) -> Any:
        return getattr(self._listener, name)


class _CountedConnection(socket.socket):
    """An accepted connection that leaves its listener's count (``leave``) when closed."""

    leave: weakref.finalize | None = None  # type: ignore[type-arg]

    def close(self) -> None:
        try:
            super().close()
        finally:
            if self.leave is not None:
                self.leave()


class _FlushBoundedTransport:
    """A transport whose ``close()`` becomes ``abort()`` if the connection is not gone within
    :data:`CLOSE_FLUSH_S` (asyncio waits for what is still to be sent as long as the client lets
    it, and over TLS for the client's own close as long as 30 s); everything else is the
    transport's own. The protocol calls :meth:`forget_cutoff` once the connection is gone."""

    def __init__(self, transport: asyncio.Transport, loop: asyncio.AbstractEventLoop) -> None:
        self._transport = transport
        self._loop = loop
        self._cutoff: asyncio.TimerHandle | None = None
        self._gone = False

    def close(self) -> None:
        if not self._transport.is_closing():
            self._transport.close()  # once: a TLS transport closed twice breaks
        if self._cutoff is None and not self._gone:  # closed by asyncio itself (EOF) too
            self._cutoff = self._loop.call_later(CLOSE_FLUSH_S, self._cut_off)

    def _cut_off(self) -> None:
        self._cutoff = None
        logger.debug("a closing WebSocket not gone in %g s: cut off", CLOSE_FLUSH_S)
        self._transport.abort()

    def forget_cutoff(self) -> None:
        self._gone = True
        if self._cutoff is not None:
            self._cutoff.cancel()
            self._cutoff = None

    def __getattr__(self, name: str) -> Any:
        return getattr(self._transport, name)


class BackpressuredWebSocket(WebSocketsSansIOProtocol):
    """uvicorn's WebSocket protocol (``uvicorn.Config(ws=...)``), reading nothing more from a
    client while what the server has still to send it is over the transport's high-water mark.
    uvicorn answers each ping with a pong however much is waiting to be sent: a client sending
    pings and reading nothing made that grow without end. Closing, it waits at most
    :data:`CLOSE_FLUSH_S` for what it still has to send. ``when_lost``, if set, is called once
    the connection is gone (:func:`bounded_h11` counts the connection until then)."""

    when_lost: Callable[[], None] | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        super().connection_made(_FlushBoundedTransport(transport, self.loop))  # type: ignore[arg-type]

    def connection_lost(self, exc: Exception | None) -> None:
        try:
            super().connection_lost(exc)  # closes the transport, which may set a cutoff
        finally:
            self.transport.forget_cutoff()  # type: ignore[attr-defined]
            if self.when_lost is not None:
                self.when_lost()
                self.when_lost = None

    def eof_received(self) -> None:
        self.transport.close()  # the client's end: what is left to send gets CLOSE_FLUSH_S

    def _hold_reading(self) -> None:
        """Reading off while writing is paused, whoever turned it back on (uvicorn's receive
        resumes it for its own pause, not knowing of this one)."""
        if not self.writable.is_set() and not self.transport.is_closing() \
                and self.transport.is_reading():
            self.transport.pause_reading()

    def pause_writing(self) -> None:
        super().pause_writing()
        self._hold_reading()

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        self._hold_reading()

    async def receive(self) -> Any:
        message = await super().receive()
        self._hold_reading()
        return message

    def resume_writing(self) -> None:
        super().resume_writing()
        # still paused when uvicorn holds a message the app has not taken
        if not self.read_paused and not self.transport.is_closing():
            self.transport.resume_reading()


def bounded_h11(header_timeout_s: float = HEADER_TIMEOUT_S,
                per_address: int = PER_ADDRESS) -> type[H11Protocol]:
    """An h11 protocol class for ``uvicorn.Config(http=...)``: one per server (it counts that
    server's connections by address)."""
    if header_timeout_s <= 0 or per_address < 1:
        raise ValueError("the header timeout must be above 0 and the cap at least 1")
    open_by_address: Counter[str] = Counter()
    closed = Throttled(logger)  # "connection closed: ..."

    class BoundedH11(H11Protocol):
        _deadline: asyncio.TimerHandle | None = None
        _address: str | None = None
        _cycle_timed: Any = None

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            peer = self.client
            self._address = None if peer is None else peer[0]
            if self._address is not None:
                open_by_address[self._address] += 1
                if open_by_address[self._address] > per_address:
                    closed.warning("cap", "connection closed: %s: over %d connections at once",
                                   self._address, per_address)
                    transport.close()
                    return
            self._time_headers()

        def connection_lost(self, exc: Exception | None) -> None:
            self._release()
            super().connection_lost(exc)

        def handle_websocket_upgrade(self, event: Any) -> None:
            self._forget_deadline()
            try:
                super().handle_websocket_upgrade(event)
            finally:
                upgraded = self.transport.get_protocol()
                if isinstance(upgraded, BackpressuredWebSocket):
                    upgraded.when_lost = self._release  # counted until the WebSocket is gone
                else:
                    self._release()

        def _release(self) -> None:
            self._forget_deadline()
            if self._address is not None:
                open_by_address[self._address] -= 1
                if open_by_address[self._address] <= 0:
                    del open_by_address[self._address]
                self._address = None

        def data_received(self, data: bytes) -> None:
            super().data_received(data)
            if self.cycle is not self._cycle_timed and self.cycle is not None:
                self._forget_deadline()  # a request's headers came

        def on_response_complete(self) -> None:
            answered = self.cycle
            super().on_response_complete()  # may start a pipelined request already received
            if not self.transport.is_closing() and self.cycle is answered:
                self._time_headers()  # the next request's headers, on a kept-alive connection

        def _time_headers(self) -> None:
            self._forget_deadline()
            self._cycle_timed = self.cycle
            self._deadline = self.loop.call_later(header_timeout_s, self._headers_late)

        def _forget_deadline(self) -> None:
            if self._deadline is not None:
                self._deadline.cancel()
                self._deadline = None

        def _headers_late(self) -> None:
            self._deadline = None
            if self.transport.is_closing() or self.transport.get_protocol() is not self:
                return  # closed, or upgraded to a WebSocket
            if self.cycle is self._cycle_timed:
                closed.warning("headers", "connection closed: %s: no request's headers in %g s",
                               self._address, header_timeout_s)
                self.transport.close()

    return BoundedH11


def raise_open_file_limit() -> tuple[int, int]:
    """Lift this process's soft limit on open files to its hard limit; the limits after."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY or soft < hard:
        target = hard if hard != resource.RLIM_INFINITY else max(soft, 65536)
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
        except (ValueError, OSError) as error:
            logger.warning("the open-file limit stays at %d: %s", soft, error)
    return resource.getrlimit(resource.RLIMIT_NOFILE)
