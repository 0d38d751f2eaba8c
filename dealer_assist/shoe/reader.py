"""The reader: a thread that owns the shoe's port and hands events to the program.

It opens the port with ``serial.serial_for_url`` (a device path, ``/dev/serial/by-id/...``,
``socket://``, ``loop://``, ``spy://``), reads ``in_waiting or 1`` bytes at a time so a
disconnect never costs bytes already received, feeds the decoder, acknowledges what was delivered,
supervises heartbeats (a :class:`LinkDown` within 2 s of the last valid frame), reconnects with
back-off when the port vanishes, and stops cleanly. Consumers read events from a queue::

    with ShoeReader("socket://127.0.0.1:7000") as reader:
        for event in reader.events():
            ...
"""

from __future__ import annotations

import os
import queue
import socket
import threading
import time
import urllib.parse
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Protocol

import serial

from dealer_assist.shoe import protocol
from dealer_assist.shoe.decoder import ShoeDecoder
from dealer_assist.shoe.events import Gap, Heartbeat, LinkDown, LinkUp, ShoeEvent


class StreamDecoder(Protocol):
    """What the reader needs of a decoder (``ShoeDecoder``, ``AsciiShoeDecoder``)."""

    awaiting_resend: bool
    stale_heartbeats: int

    @property
    def frames_seen(self) -> int: ...

    def feed(self, data: bytes) -> list[ShoeEvent]: ...

    def link_reset(self) -> None: ...

    def ack_frame(self) -> bytes | None: ...

    def resend_frame(self) -> bytes | None: ...


@dataclass(slots=True)
class ReaderStats:
    """Running totals of what the reader did."""

    bytes_read: int = 0
    connects: int = 0
    disconnects: int = 0
    acks_sent: int = 0
    resends_sent: int = 0


_STOP = object()

# A USB device unplugged under pyserial surfaces as SerialException or a bare OSError (EIO), and
# a port that vanishes between open and configuration as termios.error (not an OSError).
_PORT_ERRORS: tuple[type[Exception], ...] = (serial.SerialException, OSError)
if os.name == "posix":
    import termios

    _PORT_ERRORS += (termios.error,)
# Opening also raises ValueError for a URL pyserial cannot parse.
_OPEN_ERRORS: tuple[type[Exception], ...] = (*_PORT_ERRORS, ValueError)


def check_port_url(url: str) -> None:
    """Refuse (ValueError saying why) a port URL that could never open: a scheme pyserial does
    not know, a network one (``socket://``, ``rfc2217://``) without a host and a port from 1
    to 65535, or a ``spy://`` log that is a folder or in a folder that does not exist. A device
    path is not checked: a shoe may be plugged in later. Nothing is opened or created."""
    parts = urllib.parse.urlsplit(url)
    if parts.scheme == "spy":
        # pyserial opens the spy log as it parses the URL: check its folder, then parse without it
        options = urllib.parse.parse_qs(parts.query, keep_blank_values=True)
        for log in options.pop("file", []):
            if not os.path.isdir(os.path.dirname(log) or "."):
                raise ValueError(f"the spy log's folder does not exist: {log!r}")
            if os.path.isdir(log):
                raise ValueError(f"the spy log is a folder: {log!r}")
        url = url.partition("?")[0] + "?" + urllib.parse.urlencode(options, doseq=True)
    try:
        serial.serial_for_url(url, do_not_open=True)
    except serial.SerialException as error:
        raise ValueError(str(error)) from None
    scheme, _, rest = url.partition("://")
    if scheme.lower() in ("socket", "rfc2217"):
        host, _, port = rest.split("?")[0].rpartition(":")
        if not host or not port.isdigit() or not 1 <= int(port) <= 65535:
            raise ValueError(f"{scheme}:// needs HOST:PORT with a port from 1 to 65535")


class ShoeReader:
    """Owns one shoe port in a background thread; events come out of :meth:`events`/:meth:`get`.

    ``heartbeat_timeout`` (seconds, None to disable for shoes without heartbeats) is how long
    without a valid frame before the link is declared down and the port re-opened. The link is
    also down while the shoe's heartbeats show it has not heard our acknowledgements.
    Heartbeats and gaps are handled here and not queued unless ``pass_heartbeats``/``pass_gaps``.

    ``defer_ack``: the shoe is told an event is held only once the consumer says it is durable
    (:meth:`acknowledge`); until then every ACK and RESEND names the last event acknowledged so,
    and the shoe keeps (and resends) the rest. ``resume_from`` (session, seq): the last event a
    previous run made durable, so the shoe's resent copies of it and earlier are dropped.
    """

    def __init__(
        self,
        url: str,
        *,
        decoder: StreamDecoder | None = None,
        baudrate: int = protocol.SERIAL_BAUDRATE,
        heartbeat_timeout: float | None = protocol.LINK_TIMEOUT_S,
        backoff_initial: float = 0.05,
        backoff_max: float = 1.0,
        pass_heartbeats: bool = False,
        pass_gaps: bool = True,
        defer_ack: bool = False,
        resume_from: tuple[int, int] | None = None,
    ) -> None:
        self.url = url
        self.decoder: StreamDecoder = decoder if decoder is not None else ShoeDecoder()
        self.baudrate = baudrate
        self.heartbeat_timeout = heartbeat_timeout
        self.backoff_initial = backoff_initial
        self.backoff_max = backoff_max
        self.pass_heartbeats = pass_heartbeats
        self.pass_gaps = pass_gaps
        self.stats = ReaderStats()
        self.link_up: bool | None = None  # None: not known yet
        self._queue: queue.Queue[Any] = queue.Queue()
        self._stop = threading.Event()
        self._port: serial.SerialBase | None = None
        self.defer_ack = defer_ack
        # the last event the consumer made durable (defer_ack), and the lock ordering port writes
        # from the reader thread and from acknowledge()
        self._durable: tuple[int, int] | None = resume_from
        self._write_lock = threading.Lock()
        if resume_from is not None and isinstance(self.decoder, ShoeDecoder):
            self.decoder.session, self.decoder.last_seq = resume_from
        if defer_ack and isinstance(self.decoder, ShoeDecoder):
            # "the shoe cannot hear us" judged against what it was told, not what was delivered
            self.decoder.acknowledged = resume_from or (0, 0)
        self._thread = threading.Thread(target=self._run, name=f"shoe-reader {url}", daemon=True)

    # -- consumer side ---------------------------------------------------------------------------
    def start(self) -> ShoeReader:
        self._thread.start()
        return self

    def stop(self, timeout: float = 2.0) -> None:
        """Stop the thread and close the port; events already queued stay readable."""
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout)

    def __enter__(self) -> ShoeReader:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def get(self, timeout: float | None = None) -> ShoeEvent | None:
        """The next event, or None after ``timeout`` seconds or once stopped and drained."""
        try:
            item = self._queue.get(timeout=timeout)
        except queue.Empty:
            return None
        if item is _STOP:
            self._queue.put(_STOP)  # keep the end visible to every later get()
            return None
        return item  # type: ignore[no-any-return]

    def acknowledge(self, session: int, seq: int) -> None:
        """(``defer_ack``; any thread) Everything up to and including (``session``, ``seq``) is
        durable: tell the shoe now, so it need not resend it."""
        with self._write_lock:
            self._durable = (session, seq)
            if self.defer_ack and isinstance(self.decoder, ShoeDecoder):
                self.decoder.acknowledged = self._durable
            self._send(protocol.encode_frame(protocol.FrameType.ACK, session, seq))

    def events(self, idle_timeout: float | None = None) -> Iterator[ShoeEvent]:
        """Events in order until the reader stops (or nothing arrives for ``idle_timeout``)."""
        while True:
            event = self.get(idle_timeout)
            if event is None:
                return
            yield event

    # -- the thread ------------------------------------------------------------------------------
    def _open(self) -> serial.SerialBase:
        kwargs: dict[str, Any] = {"baudrate": self.baudrate, "timeout": 0.05, "write_timeout": 0.5}
        if os.name == "posix" and ("://" not in self.url or self.url.startswith("spy://")):
            kwargs["exclusive"] = True  # a device: no second program may read our cards
        port = serial.serial_for_url(self.url, **kwargs)
        link = getattr(port, "_socket", None)  # socket:// (pyserial keeps its socket there)
        if isinstance(link, socket.socket):
            # frames are tiny: without this an ACK written just after another waits for the
            # shoe's delayed TCP acknowledgement (about 40 ms) before it leaves
            link.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return port

    def _set_link(self, up: bool, reason: str = "") -> None:
        if self.link_up is up:
            return
        self.link_up = up
        self._queue.put(LinkUp(self.url) if up else LinkDown(self.url, reason))

    def _close(self, reason: str) -> None:
        with self._write_lock:
            port, self._port = self._port, None
        self._set_link(False, reason)  # before closing: a socket:// close waits 0.3 s
        if port is not None:
            self.stats.disconnects += 1
            try:
                port.close()
            except _PORT_ERRORS:
                pass

    def _write(self, data: bytes | None) -> None:
        with self._write_lock:
            self._send(data)

    def _send(self, data: bytes | None) -> None:
        """Write ``data`` (the caller holds the write lock); a port error from another thread's
        write is left for the reader thread to find at its next read."""
        if data is None or self._port is None:
            return
        if threading.current_thread() is self._thread:
            self._port.write(data)
            return
        try:
            self._port.write(data)
        except _PORT_ERRORS:
            pass

    def _ack(self) -> bytes | None:
        """The ACK to send: everything delivered, or with ``defer_ack`` everything durable."""
        if not self.defer_ack:
            return self.decoder.ack_frame()
        if self._durable is None:
            return None
        return protocol.encode_frame(protocol.FrameType.ACK, *self._durable)

    def _resend(self) -> bytes | None:
        """The RESEND to send; with ``defer_ack`` it names the last durable event (a RESEND also
        acknowledges), and the copies of events delivered since are dropped as duplicates."""
        frame = self.decoder.resend_frame()
        if not self.defer_ack or frame is None:
            return frame
        session, seq = self._durable or (0, 0)
        return protocol.encode_frame(protocol.FrameType.RESEND, session, seq)

    def _run(self) -> None:
        backoff = self.backoff_initial
        try:
            while not self._stop.is_set():
                if self._port is None:
                    try:
                        self._port = self._open()
                    except _OPEN_ERRORS as exc:
                        self._set_link(False, f"cannot open: {exc}")
                        self._stop.wait(backoff)
                        backoff = min(backoff * 2, self.backoff_max)
                        continue
                    self.stats.connects += 1
                    self.decoder.link_reset()
                    last_rx = time.monotonic()
                    heard = False
                    try:
                        self._write(self._resend())  # ask for anything unacknowledged
                        self.stats.resends_sent += 1
                    except _PORT_ERRORS as exc:
                        self._close(f"write failed: {exc}")
                        continue
                try:
                    data = self._port.read(self._port.in_waiting or 1)
                    now = time.monotonic()
                    if data:
                        self.stats.bytes_read += len(data)
                        if self._handle(data):
                            last_rx = now
                            heard = True
                            backoff = self.backoff_initial
                    timeout = self.heartbeat_timeout
                    if timeout is not None and now - last_rx > timeout:
                        self._close(f"no valid frame for {timeout:g} s")
                except _PORT_ERRORS as exc:
                    self._close(f"port error: {exc}")
                    if not heard:  # opens but fails at once (a server that hangs up): back off
                        self._stop.wait(backoff)
                        backoff = min(backoff * 2, self.backoff_max)
        finally:
            if self._port is not None:
                self._close("reader stopped")
            self._queue.put(_STOP)

    def _handle(self, data: bytes) -> bool:
        """Decode, queue, then acknowledge (with ``defer_ack``, only what is durable); True if a
        valid frame arrived."""
        decoder = self.decoder
        before = decoder.frames_seen
        events = decoder.feed(data)
        alive = decoder.frames_seen > before
        if alive:
            if decoder.stale_heartbeats >= protocol.STALE_HEARTBEATS:
                self._set_link(
                    False,
                    "the shoe is not receiving acknowledgements: check the "
                    "host-to-shoe line (shoe RX)",
                )
            else:
                self._set_link(True)
        resend = False
        for event in events:
            if isinstance(event, Heartbeat):
                resend = resend or decoder.awaiting_resend
                if not self.pass_heartbeats:
                    continue
            elif isinstance(event, Gap):
                resend = True
                if not self.pass_gaps:
                    continue
            self._queue.put(event)
        if alive:
            self._write(self._ack())
            self.stats.acks_sent += 1
        if resend:
            self._write(self._resend())
            self.stats.resends_sent += 1
        return alive
