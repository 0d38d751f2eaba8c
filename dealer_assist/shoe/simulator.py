"""A shoe simulator that speaks the dealer-assist protocol over a pty or a TCP server.

It keeps what a real shoe keeps in non-volatile memory (session, sequence numbers, unacknowledged
events), so it survives the host reconnecting and its own "power cycles"; it retransmits on
RESEND and when acknowledgements stop (go-back-N, window of 16 frames); it sends heartbeats; and it
can inject faults: corrupted bytes, dropped or duplicated frames, and link cuts.
"""

from __future__ import annotations

import abc
import contextlib
import math
import os
import random
import select
import socket
import threading
import time
import tty
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from dealer_assist.rules.cards import Card, spanish_shoe
from dealer_assist.shoe import protocol
from dealer_assist.shoe.protocol import DeckKind, FrameSplitter, FrameType


@dataclass(frozen=True, slots=True)
class Faults:
    """Fault injection on the shoe-to-host direction; rates are probabilities in [0, 1)."""

    corrupt_rate: float = 0.0  # per byte: replaced by a different random byte
    drop_rate: float = 0.0  # per frame: never sent
    duplicate_rate: float = 0.0  # per frame: sent twice
    seed: int = 0

    def __post_init__(self) -> None:
        for name in ("corrupt_rate", "drop_rate", "duplicate_rate"):
            value = getattr(self, name)
            if not 0.0 <= value < 1.0:
                raise ValueError(f"{name} must be in [0, 1), got {value!r}")


class SimLink(abc.ABC):
    """One end of a byte link to the host (the simulator's side), polled by its thread.

    Not thread-safe: once a simulator runs, only its thread touches the link; other threads
    unplug it through :meth:`ShoeSimulator.cut_link` and :meth:`ShoeSimulator.restore_link`."""

    generation: int = 0  # bumped whenever a fresh host connection appears

    @property
    @abc.abstractmethod
    def url(self) -> str:
        """What the host opens."""

    @property
    @abc.abstractmethod
    def connected(self) -> bool:
        """Whether bytes sent now can reach a host."""

    @property
    @abc.abstractmethod
    def backlog(self) -> int:
        """Bytes waiting to go out."""

    @abc.abstractmethod
    def poll(self, timeout: float) -> bytes:
        """Move queued bytes out and return bytes from the host, waiting up to ``timeout``."""

    @abc.abstractmethod
    def send(self, data: bytes) -> None:
        """Queue bytes for the host (lost if no host is connected)."""

    @abc.abstractmethod
    def cut(self) -> None:
        """Unplug."""

    @abc.abstractmethod
    def restore(self) -> None:
        """Plug back in."""

    @abc.abstractmethod
    def close(self) -> None:
        """Release everything."""


class PtyLink(SimLink):
    """A pseudo-terminal; the host opens the slave side like a USB serial device.

    ``link_path``, if given, is a symlink to the slave (like ``/dev/serial/by-id/...``): a cut
    removes it and closes the pty (the host sees EIO, as on an unplug); a restore opens a new pty
    and points the link at it. Without a link path, the slave's own name is the URL and a cut
    is final.
    """

    def __init__(self, link_path: str | None = None) -> None:
        self.link_path = link_path
        self._out = bytearray()
        self._master = -1
        self._slave = -1
        self.slave_name = ""
        self.restore()

    @property
    def url(self) -> str:
        return self.link_path or self.slave_name

    def restore(self) -> None:
        self._master, self._slave = os.openpty()
        tty.setraw(self._slave)  # no echo or line editing before the host configures it
        os.set_blocking(self._master, False)
        self.slave_name = os.ttyname(self._slave)
        self._out.clear()
        if self.link_path:
            tmp = f"{self.link_path}.{os.getpid()}.tmp"
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)
            os.symlink(self.slave_name, tmp)
            os.replace(tmp, self.link_path)
        self.generation += 1

    def cut(self) -> None:
        if self.link_path:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self.link_path)
        for fd in (self._master, self._slave):
            if fd >= 0:
                os.close(fd)
        self._master = self._slave = -1
        self._out.clear()

    def close(self) -> None:
        self.cut()

    @property
    def connected(self) -> bool:
        return self._master >= 0

    @property
    def backlog(self) -> int:
        return len(self._out)

    def send(self, data: bytes) -> None:
        if self._master >= 0:
            self._out += data

    def poll(self, timeout: float) -> bytes:
        if self._master < 0:
            time.sleep(timeout)
            return b""
        want_write = [self._master] if self._out else []
        readable, writable, _ = select.select([self._master], want_write, [], timeout)
        if writable and self._out:
            try:
                written = os.write(self._master, self._out)
                del self._out[:written]
            except BlockingIOError:
                pass
        if readable:
            try:
                return os.read(self._master, 4096)
            except (BlockingIOError, OSError):
                return b""
        return b""


class TcpLink(SimLink):
    """A TCP server for ``socket://HOST:PORT``; one host at a time, a new one replaces the old.

    A cut closes the connection and, until restored, refuses newcomers (accepts and closes).
    """

    def __init__(self, host: str = "127.0.0.1", port: int = 0) -> None:
        self._server = socket.create_server((host, port), reuse_port=False)
        self._server.setblocking(False)
        self.host, self.port = self._server.getsockname()[:2]
        self._conn: socket.socket | None = None
        self._out = bytearray()
        self._refusing = False

    @property
    def url(self) -> str:
        return f"socket://{self.host}:{self.port}"

    @property
    def connected(self) -> bool:
        return self._conn is not None

    @property
    def backlog(self) -> int:
        return len(self._out)

    def send(self, data: bytes) -> None:
        if self._conn is not None:
            self._out += data

    def _drop_conn(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None
        self._out.clear()

    def cut(self) -> None:
        self._drop_conn()
        self._refusing = True

    def restore(self) -> None:
        self._refusing = False

    def close(self) -> None:
        self._drop_conn()
        self._server.close()

    def poll(self, timeout: float) -> bytes:
        rlist: list[socket.socket] = [self._server]
        if self._conn is not None:
            rlist.append(self._conn)
        wlist = [self._conn] if self._conn is not None and self._out else []
        readable, writable, _ = select.select(rlist, wlist, [], timeout)
        if self._server in readable:
            try:
                conn, _ = self._server.accept()
            except BlockingIOError:
                conn = None
            if conn is not None:
                if self._refusing:
                    conn.close()
                else:
                    self._drop_conn()
                    conn.setblocking(False)
                    conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                    self._conn = conn
                    self.generation += 1
                    return b""
        conn = self._conn
        if conn is None:
            return b""
        try:
            if writable and self._out:
                del self._out[: conn.send(self._out)]
            if conn in readable:
                data = conn.recv(4096)
                if not data:
                    self._drop_conn()  # the host hung up
                return data
        except BlockingIOError:
            pass
        except OSError:
            self._drop_conn()
        return b""


@dataclass(frozen=True, slots=True)
class _Pending:
    session: int
    seq: int
    frame: bytes


def shuffled_spanish_shoe(decks: int, seed: int) -> list[Card]:
    """Every card of a Spanish shoe of ``decks`` decks, in a seeded random order."""
    cards = list(spanish_shoe(decks).elements())
    random.Random(seed).shuffle(cards)
    return cards


class ShoeSimulator:
    """A protocol-speaking shoe on ``link``; its thread runs between :meth:`start` and
    :meth:`stop`. The event methods (``load_shoe``, ``draw``, ...) are called by one thread, the
    dealer's, while the simulator's thread transmits; each stores an event for transmission, as a
    real shoe stores it before sending. ``on_acknowledged(session, seq)``, if given, is called
    from the simulator's thread the moment an ACK or RESEND from the host deletes stored events
    (up to that one); it must not call back into the simulator."""

    WINDOW = protocol.WINDOW

    def __init__(
        self,
        link: SimLink,
        *,
        faults: Faults | None = None,
        heartbeat_interval: float = protocol.HEARTBEAT_INTERVAL_S,
        ack_timeout: float = 0.25,
        on_acknowledged: Callable[[int, int], None] | None = None,
    ) -> None:
        self.link = link
        self.faults = faults or Faults()
        self.heartbeat_interval = heartbeat_interval
        self.ack_timeout = ack_timeout
        self.on_acknowledged = on_acknowledged
        self._fault_rng = random.Random(self.faults.seed)
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="shoe-simulator", daemon=True)
        # the shoe's non-volatile state
        self.session = 0
        self._next_seq = 1
        self._index = 0
        self._pending: deque[_Pending] = deque()
        self._sent = 0  # how many of _pending went out since the last rewind
        self._max_sent_seq = 0
        self._progress_at = time.monotonic()
        self._restore_at: float | None = None
        self._cut_request: float | None = None
        self._restore_request = False

    @property
    def url(self) -> str:
        return self.link.url

    # -- events ------------------------------------------------------------------------------
    def _store(self, frame_type: FrameType, payload: bytes = b"") -> int:
        with self._lock:
            if self.session == 0:
                raise ValueError("load a shoe first: no events before load_shoe()")
            seq = self._next_seq
            self._next_seq += 1
            if not self._pending:
                self._progress_at = time.monotonic()
            frame = protocol.encode_frame(frame_type, self.session, seq, payload)
            self._pending.append(_Pending(self.session, seq, frame))
            return seq

    def load_shoe(self, decks: int, *, spanish: bool = True) -> int:
        """Start a new session with a SHOE_LOADED event; returns the new session id."""
        kind = DeckKind.SPANISH if spanish else DeckKind.STANDARD
        cards = decks * (48 if spanish else 52)
        with self._lock:
            previous = (self.session, self._next_seq - 1) if self.session else (0, 0)
            session = 0
            while session in (0, self.session):  # never a seeded value: ids must not repeat
                session = int.from_bytes(os.urandom(4), "big")
            self.session, self._next_seq, self._index = session, 1, 0
            self._max_sent_seq = 0
        self._store(FrameType.SHOE_LOADED, protocol.loaded_payload(decks, kind, cards, *previous))
        return session

    def draw(self, card: Card | str) -> int:
        """A card drawn for play; returns its sequence number."""
        self._index += 1
        return self._store(FrameType.CARD, protocol.card_payload(Card.parse(card), self._index))

    def burn(self, card: Card | str | None) -> int:
        self._index += 1
        parsed = None if card is None else Card.parse(card)
        return self._store(FrameType.BURN, protocol.card_payload(parsed, self._index))

    def unreadable(self) -> int:
        self._index += 1
        return self._store(FrameType.UNREADABLE, protocol.index_payload(self._index))

    def cut_card(self) -> int:
        return self._store(FrameType.CUT_CARD, protocol.index_payload(self._index))

    def shoe_empty(self) -> int:
        return self._store(FrameType.SHOE_EMPTY, protocol.index_payload(self._index))

    def lid(self, opened: bool) -> int:
        return self._store(FrameType.LID_OPENED if opened else FrameType.LID_CLOSED)

    def alarm(self, code: int, text: str) -> int:
        return self._store(FrameType.ALARM, protocol.alarm_payload(code, text))

    def deal(self, cards: Iterable[Card | str], rate: float | None = None) -> None:
        """Draw ``cards`` in order, ``rate`` per second (None: as fast as the window allows)."""
        for card in cards:
            if self._stop.is_set():
                return
            self.draw(card)
            if rate:
                self._stop.wait(1.0 / rate)
            else:
                self.wait_window()

    def wait_window(self) -> None:
        """Block while more than a window of events awaits acknowledgement."""
        while not self._stop.is_set():
            with self._lock:
                if len(self._pending) <= self.WINDOW:
                    return
            time.sleep(0.002)

    @property
    def unacknowledged(self) -> int:
        with self._lock:
            return len(self._pending)

    def wait_all_acked(self, timeout: float) -> bool:
        """True once the host has acknowledged every event, False after ``timeout`` seconds."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if not self.unacknowledged:
                return True
            time.sleep(0.01)
        return not self.unacknowledged

    # -- faults ------------------------------------------------------------------------------
    def cut_link(self, down_for: float | None = None) -> None:
        """Unplug the link now and plug it back in after ``down_for`` seconds (None: when
        :meth:`restore_link` is called)."""
        with self._lock:  # done by the simulator's thread, which owns the link
            self._cut_request = math.inf if down_for is None else down_for

    def restore_link(self) -> None:
        """Plug a link cut by :meth:`cut_link` back in now."""
        with self._lock:
            self._restore_request = True

    # -- the thread ---------------------------------------------------------------------------
    def start(self) -> ShoeSimulator:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(2.0)
        self.link.close()

    def __enter__(self) -> ShoeSimulator:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _emit(self, frame: bytes) -> None:
        faults, rng = self.faults, self._fault_rng
        if faults.drop_rate and rng.random() < faults.drop_rate:
            return
        copies = 2 if faults.duplicate_rate and rng.random() < faults.duplicate_rate else 1
        for _ in range(copies):
            data = bytearray(frame)
            if faults.corrupt_rate:
                for i in range(len(data)):
                    if rng.random() < faults.corrupt_rate:
                        data[i] ^= rng.randrange(1, 256)
            self.link.send(bytes(data))

    def _on_host_frame(self, frame_type: int, session: int, seq: int) -> None:
        pending = self._pending
        position = next(
            (i for i, p in enumerate(pending) if p.session == session and p.seq == seq), None
        )
        if position is not None:
            for _ in range(position + 1):
                pending.popleft()
            self._sent = max(0, self._sent - (position + 1))
            self._progress_at = time.monotonic()
            if self.on_acknowledged is not None:
                self.on_acknowledged(session, seq)
        if frame_type == FrameType.RESEND:
            self._rewind()

    def _rewind(self) -> None:
        self._sent = 0
        self._progress_at = time.monotonic()

    def _run(self) -> None:
        splitter = FrameSplitter()
        generation = self.link.generation
        next_heartbeat = time.monotonic()
        while not self._stop.is_set():
            data = self.link.poll(0.005)
            with self._lock:
                now = time.monotonic()
                if self._cut_request is not None:
                    self.link.cut()
                    self._restore_at = now + self._cut_request
                    self._cut_request = None
                if self._restore_request:
                    self._restore_request = False
                    if self._restore_at is not None:  # a cut is in force
                        self._restore_at = now
                if self._restore_at is not None and now >= self._restore_at:
                    self._restore_at = None
                    self.link.restore()
                if self.link.generation != generation:
                    generation = self.link.generation
                    splitter.reset()
                    self._rewind()
                for frame in splitter.feed(data) if data else ():
                    if frame.type in (FrameType.ACK, FrameType.RESEND):
                        self._on_host_frame(frame.type, frame.session, frame.seq)
                if not self.link.connected:
                    continue
                if self._pending and now - self._progress_at > self.ack_timeout:
                    self._rewind()
                while self._sent < min(len(self._pending), self.WINDOW) and self.link.backlog < 512:
                    entry = self._pending[self._sent]
                    self._emit(entry.frame)
                    self._sent += 1
                    if entry.session == self.session:
                        self._max_sent_seq = max(self._max_sent_seq, entry.seq)
                if now >= next_heartbeat and self.link.backlog < 512:
                    next_heartbeat = now + self.heartbeat_interval
                    oldest = self._pending[0] if self._pending else None
                    pending = (oldest.session, oldest.seq) if oldest else (0, 0)
                    payload = protocol.HEARTBEAT_PAYLOAD.pack(*pending)
                    heartbeat = protocol.encode_frame(
                        FrameType.HEARTBEAT, self.session, self._max_sent_seq, payload
                    )
                    self._emit(heartbeat)
