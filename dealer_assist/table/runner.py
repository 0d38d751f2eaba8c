"""The runner: the one thread that owns the table loop, fed by the device sources' threads.

Sources and the screen's touch handler :meth:`TableRunner.submit` inputs from any thread; the
runner thread takes them in arrival order, stamps them with the monotonic clock (for the waits)
and with the UTC time :meth:`TableRunner.submit` was called (``utc_clock``: the table's clock;
the ``at`` of every round-log event the input causes), folds them
through the :class:`~dealer_assist.table.loop.TableLoop`, lets waits expire every ``tick_s``, and
publishes the screen's view to subscribers after every change.

With a :class:`~dealer_assist.table.journal.TableJournal` every input is appended to it (fsync'd)
before the loop handles it; a shoe event's inputs travel as one
:class:`~dealer_assist.table.sources.ShoeDelivery`, acknowledged to the shoe once on disk, and
:meth:`TableRunner.submit` returns an event set once the input is durable (the screen answers a
touch only then). At rest (no round open, every round recorded) the journal is checkpointed.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

from dealer_assist.roundlog import format_at
from dealer_assist.table.journal import Checkpoint, JournalEntry, JournalError, TableJournal
from dealer_assist.table.loop import ERRORS_KEPT, TableLoop
from dealer_assist.table.recording import RecordedUpTo
from dealer_assist.table.sources import (
    AcknowledgeAlarm,
    NewShoe,
    RecordingFailed,
    ShoeCard,
    ShoeDelivery,
    ShoeHeard,
    ShoeUnread,
    Source,
    TableInput,
    VoidRound,
)

log = logging.getLogger(__name__)

logger = logging.getLogger(__name__)
ViewListener = Callable[[dict[str, Any]], None]


class TableRunner:
    """Runs a :class:`TableLoop` in a thread; thread-safe :meth:`submit`, :meth:`view`.

    ``errors``: the latest ``ERRORS_KEPT`` inputs the loop raised on (a bug), the last five shown
    on the screen; the table goes on with the next input. ``recording_pending()``: True while a
    recorder has not durably written all it was handed (a failed write kept, a store's queue):
    the journal is not checkpointed then, so it still holds those rounds after a crash.
    ``recorded_up_to()``: how far the recording has got, asked for as a checkpoint is taken
    (every round and alarm before it written: a restart writes the alarms after it that the
    store lacks); where it cannot say (None: the store took an item since ``recording_pending``
    was asked), no checkpoint is taken until a later rest. None: no recording to ask.
    ``resumed_round``: the round the journal resumed at start (its verdict,
    :attr:`~dealer_assist.table.journal.Resumed.resumed`): while that round is in play, a new
    shoe reported by the shoe voids it (reshuffled while the table was down), whatever the loop
    is doing then (a question open, the felt confirmed or not)."""

    def __init__(
        self,
        loop: TableLoop,
        sources: list[Source] | None = None,
        *,
        tick_s: float = 0.05,
        clock: Callable[[], float] = time.monotonic,
        journal: TableJournal | None = None,
        journal_config: dict[str, Any] | None = None,
        recording_pending: Callable[[], bool] = lambda: False,
        recorded_up_to: Callable[[], RecordedUpTo | None] | None = None,
        shoe_position: tuple[int, int] | None = None,
        utc_clock: Callable[[], datetime] = lambda: datetime.now(UTC),
        resumed_round: str | None = None,
    ):
        self.loop = loop
        self.sources = list(sources or [])
        self.tick_s = tick_s
        self.clock = clock
        self.utc_clock = utc_clock
        self.errors: list[str] = []
        self.journal = journal
        self.journal_config = journal_config or {}
        self._recording_pending = recording_pending
        self._recorded_up_to = recorded_up_to
        self._journal_failing = False
        self._journal_alarm: str | None = None  # the first failure of a run, for its alarm
        self._shoe_durable = shoe_position  # the shoe's last event journaled
        #: the shoe source's acknowledgement (from its latest delivery)
        self._acknowledge_shoe: Callable[[int, int], None] | None = None
        self.resumed_round = resumed_round
        self._queue: queue.Queue[
            tuple[TableInput | ShoeDelivery, threading.Event, str] | None] = queue.Queue()
        self._listeners: list[ViewListener] = []
        self._changed = threading.Condition()
        self._view: dict[str, Any] = loop.view()
        self._seen_updates = -1
        self._round_seen: str | None = None
        self._in_flight: tuple[str, ...] = ()  # the shoe codes the camera was last told
        self._thread = threading.Thread(target=self._run, name="table-loop", daemon=True)
        self._stopping = False

    # ------------------------------------------------------------------ public

    def subscribe(self, listener: ViewListener) -> None:
        """Call ``listener(view)`` (from the runner thread) after every change."""
        self._listeners.append(listener)

    def submit(self, item: TableInput | ShoeDelivery) -> threading.Event:
        """Queue one input (from any thread), stamped with the UTC time it was handed over; the
        event returned is set once it is durable (journaled, or without a journal, handed to the
        loop)."""
        durable = threading.Event()
        self._queue.put((item, durable, format_at(self.utc_clock())))
        return durable

    def view(self) -> dict[str, Any]:
        """The latest published view."""
        with self._changed:
            return self._view

    def wait_until(self, predicate: Callable[[TableLoop], bool], timeout: float) -> bool:
        """Block until ``predicate(loop)`` holds and the view showing it is published (so the
        screen already has it), or ``timeout`` seconds; returns whether it holds."""
        deadline = time.monotonic() + timeout
        with self._changed:
            while not (predicate(self.loop) and self._seen_updates == self.loop.updates):
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._changed.wait(left)
        return True

    def wait_idle(self, timeout: float = 2.0) -> bool:
        """Block until every submitted input has been handled."""
        deadline = time.monotonic() + timeout
        while self._queue.unfinished_tasks and time.monotonic() < deadline:
            time.sleep(0.002)
        return not self._queue.unfinished_tasks

    def start(self) -> TableRunner:
        self._thread.start()
        for source in self.sources:
            source.start(self.submit)
        return self

    def stop(self) -> None:
        for source in self.sources:
            source.stop()
        self._stopping = True
        self._queue.put(None)
        self._thread.join(5)

    def __enter__(self) -> TableRunner:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # ------------------------------------------------------------------ thread

    def _run(self) -> None:
        loop = self.loop
        while not self._stopping:
            try:
                queued = self._queue.get(timeout=self.tick_s)
                got = True
            except queue.Empty:
                queued, got = None, False
            now = self.clock()
            inputs: tuple[TableInput, ...] = ()
            if queued is not None:
                item, durable, at = queued
                if isinstance(item, ShoeHeard) and not loop.camera.awaits_heartbeat:
                    durable.set()  # a heartbeat nothing waits for: not journaled, not handled
                else:
                    inputs = self._make_durable(_on_clock(item, now), durable, now, at)
            else:
                at = format_at(self.utc_clock())  # a wait that expires now
            # Waiters see the loop only between inputs, never half-way through one.
            with self._changed:
                for one in inputs:
                    try:
                        loop.handle(one, now, at)
                    except Exception as error:  # a bug must not stop the table: show it
                        logger.exception("the table loop raised on %r", one)
                        self.errors.append(f"{type(error).__name__}: {error} (input {one!r})")
                        del self.errors[:-ERRORS_KEPT]
                        loop.updates += 1
                before, alarms = loop.updates, loop.alarms_raised
                loop.tick(now, at)
                if not inputs and loop.updates != before and self.journal is not None:
                    # a wait expired: replay it
                    self._append(JournalEntry(now, tick=True, at=at, alarms=alarms))
                    if self._journal_alarm is not None:
                        loop.handle(RecordingFailed(self._journal_alarm), now, at)
                        self._journal_alarm = None
                if inputs and self.journal is not None:
                    self._checkpoint_at_rest(now)
                view = self._publish() if loop.updates != self._seen_updates else None
                new_round = loop.round_id != self._round_seen
                self._round_seen = loop.round_id
                in_flight = loop.camera.flight.codes()
            if new_round and loop.round_id is not None:
                for source in self.sources:
                    starting = getattr(source, "new_round", None)
                    if starting is not None:
                        starting()  # e.g. the camera forgets the last round's felt
            if in_flight != self._in_flight:
                self._in_flight = in_flight
                for source in self.sources:
                    expecting = getattr(source, "expect", None)
                    if expecting is not None:
                        expecting(in_flight)  # the camera checks new cards against them
            if got:
                self._queue.task_done()
            if view is not None:
                for listener in self._listeners:
                    listener(view)

    def _make_durable(self, item: TableInput | ShoeDelivery, durable: threading.Event,
                      now: float, at: str) -> tuple[TableInput, ...]:
        """Journal what ``item`` stands for, then acknowledge it (the shoe's event, the touch's
        answer); returns the inputs for the loop. A journal that cannot be written is an alarm,
        and nothing more is acknowledged until it takes every record kept."""
        delivery = item if isinstance(item, ShoeDelivery) else None
        inputs: tuple[TableInput, ...] = tuple(
            replace(one, at=at) if isinstance(one, ShoeCard | ShoeUnread) else
            self.loop.named_acknowledgement(one) if isinstance(one, AcknowledgeAlarm) else one
            for one in (item.inputs if isinstance(item, ShoeDelivery) else (item,)))
        if (self.resumed_round is not None and self.loop.round_open
                and self.loop.round_id == self.resumed_round
                and any(isinstance(one, NewShoe) for one in inputs)):
            # the shoe was reshuffled while the table was down: the round cannot go on
            inputs = (VoidRound("the table restarted in this round and the shoe reports a new "
                                "shoe: its cards cannot be trusted"), *inputs)
        if delivery is not None:
            self._acknowledge_shoe = delivery.acknowledge
        if self.journal is None:
            written = True
        else:
            shoe = None if delivery is None else (delivery.session, delivery.seq)
            written = self._append(JournalEntry(now, inputs, shoe, at=at,
                                                alarms=self.loop.alarms_raised))
        if written:
            if self.journal is None and delivery is not None:
                self._shoe_durable = (delivery.session, delivery.seq)
                delivery.acknowledge(delivery.session, delivery.seq)
            durable.set()
        if self._journal_alarm is not None:
            inputs = (*inputs, RecordingFailed(self._journal_alarm))
            self._journal_alarm = None
        return inputs

    def _append(self, entry: JournalEntry) -> bool:
        """Append to the journal; False if the disk refused (the first failure of a run is
        kept in ``_journal_alarm`` for the loop's alarm)."""
        assert self.journal is not None
        shoe_before = self.journal.shoe_written
        try:
            self.journal.append(entry)
        except Exception as error:  # a full disk, or a bug: either way the input is not on disk
            log.error("journal: %s", error, exc_info=not isinstance(error, JournalError))
            if not self._journal_failing:
                self._journal_alarm = (f"{error}: nothing more is acknowledged to the shoe "
                                       "until it can be written")
            self._journal_failing = True
            return False
        self._journal_failing = False
        written = self.journal.shoe_written
        if written is not None and written != shoe_before:
            # the shoe's event just written, or one a failed write kept and this one wrote
            # first: its durable position, acknowledged to the shoe
            self._shoe_durable = written
            if self._acknowledge_shoe is not None:
                self._acknowledge_shoe(*written)
        return True

    def _checkpoint_at_rest(self, now: float) -> None:
        """Start the journal again from here once the loop is at rest and its rounds recorded."""
        journal = self.journal
        assert journal is not None
        if (not journal.entries_since_checkpoint or journal.behind or not self.loop.at_rest
                or self._recording_pending()):
            return
        recorded = None if self._recorded_up_to is None else self._recorded_up_to()
        if recorded is None and self._recorded_up_to is not None:
            return  # a checkpoint that cannot say how far the recording got recovers no alarm
        try:
            journal.checkpoint(Checkpoint.of(self.loop, self.journal_config,
                                             self._shoe_durable, now, recorded))
        except JournalError as error:
            log.error("%s (the journal keeps growing until a checkpoint works)", error)

    def _publish(self) -> dict[str, Any]:
        """Take the view the screen shows now (called holding the condition)."""
        view = self.loop.view()
        if self.errors:
            view["errors"] = self.errors[-5:]
        self._seen_updates = self.loop.updates
        self._view = view
        self._changed.notify_all()
        return view


def _on_clock(item: TableInput | ShoeDelivery, now: float) -> TableInput | ShoeDelivery:
    """A camera input's ``seen_at`` (its source's ``time.monotonic()``) on the runner's clock,
    which goes on from the journal's time after a restart, not from the monotonic clock: else
    the camera's lag would read as the time the table was down (0 once clamped) or, after a
    reboot, as hours (every sighting too late to place a card)."""
    seen_at = getattr(item, "seen_at", None)
    if seen_at is None:
        return item
    return replace(item, seen_at=seen_at + (now - time.monotonic()))
