"""Ctrl-C (SIGINT) and a service manager's stop (SIGTERM), noted for the table's main loop.

A Python signal handler runs in the main thread between any two of its lines, including lines
that hold a lock: a handler that takes a lock (``threading.Event.set`` does) can wait forever
on a lock its own thread already holds. The handler here only appends to a list, which takes
no lock, and the main loop looks at that list between short sleeps.
"""

from __future__ import annotations

import signal
import time
from collections.abc import Callable
from types import FrameType

STOPPING = (signal.SIGINT, signal.SIGTERM)


class StopSignals:
    """The stop signals received so far; :meth:`install` makes them arrive here."""

    def __init__(self) -> None:
        self.received: list[int] = []

    def install(self) -> None:
        """Handle SIGINT and SIGTERM here, in place of what the process inherited (a process
        started in the background inherits SIGINT ignored)."""
        for number in STOPPING:
            signal.signal(number, self.note)

    def note(self, number: int, frame: FrameType | None = None) -> None:
        """The handler: records ``number`` and nothing else."""
        self.received.append(number)

    def wait(self, still_running: Callable[[], bool], poll_s: float = 0.2) -> bool:
        """Return True once a stop signal is received, False once ``still_running()`` is
        False, looking every ``poll_s`` seconds."""
        while not self.received:
            if not still_running():
                return False
            time.sleep(poll_s)
        return True
