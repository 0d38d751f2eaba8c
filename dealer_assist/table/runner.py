"""The runner: the one thread that owns the table loop, fed by the device sources' threads.

Sources and the screen's touch handler :meth:`TableRunner.submit` inputs from any thread; the
runner thread takes them in arrival order, stamps them with the monotonic clock, folds them
through the :class:`~dealer_assist.table.loop.TableLoop`, lets waits expire every ``tick_s``, and
publishes the screen's view to subscribers after every change.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable
from typing import Any

from dealer_assist.table.loop import ERRORS_KEPT, TableLoop
from dealer_assist.table.sources import Source, TableInput

logger = logging.getLogger(__name__)
ViewListener = Callable[[dict[str, Any]], None]


class TableRunner:
    """Runs a :class:`TableLoop` in a thread; thread-safe :meth:`submit`, :meth:`view`.

    ``errors``: the latest ``ERRORS_KEPT`` inputs the loop raised on (a bug), the last five shown
    on the screen; the table goes on with the next input."""

    def __init__(
        self,
        loop: TableLoop,
        sources: list[Source] | None = None,
        *,
        tick_s: float = 0.05,
        clock: Callable[[], float] = time.monotonic,
    ):
        self.loop = loop
        self.sources = list(sources or [])
        self.tick_s = tick_s
        self.clock = clock
        self.errors: list[str] = []
        self._queue: queue.Queue[TableInput | None] = queue.Queue()
        self._listeners: list[ViewListener] = []
        self._changed = threading.Condition()
        self._view: dict[str, Any] = loop.view()
        self._seen_updates = -1
        self._round_seen: str | None = None
        self._thread = threading.Thread(target=self._run, name="table-loop", daemon=True)
        self._stopping = False

    # ------------------------------------------------------------------ public

    def subscribe(self, listener: ViewListener) -> None:
        """Call ``listener(view)`` (from the runner thread) after every change."""
        self._listeners.append(listener)

    def submit(self, item: TableInput) -> None:
        """Queue one input (from any thread)."""
        self._queue.put(item)

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
                item: TableInput | None = self._queue.get(timeout=self.tick_s)
                got = True
            except queue.Empty:
                item, got = None, False
            # Waiters see the loop only between inputs, never half-way through one.
            with self._changed:
                if item is not None:
                    try:
                        loop.handle(item, self.clock())
                    except Exception as error:  # a bug must not stop the table: show it
                        logger.exception("the table loop raised on %r", item)
                        self.errors.append(f"{type(error).__name__}: {error} (input {item!r})")
                        del self.errors[:-ERRORS_KEPT]
                        loop.updates += 1
                loop.tick(self.clock())
                view = self._publish() if loop.updates != self._seen_updates else None
                new_round = loop.round_id != self._round_seen
                self._round_seen = loop.round_id
            if new_round and loop.round_id is not None:
                for source in self.sources:
                    starting = getattr(source, "new_round", None)
                    if starting is not None:
                        starting()  # e.g. the camera forgets the last round's felt
            if got:
                self._queue.task_done()
            if view is not None:
                for listener in self._listeners:
                    listener(view)

    def _publish(self) -> dict[str, Any]:
        """Take the view the screen shows now (called holding the condition)."""
        view = self.loop.view()
        if self.errors:
            view["errors"] = self.errors[-5:]
        self._seen_updates = self.loop.updates
        self._view = view
        self._changed.notify_all()
        return view
