"""The table's stop signals: a signal at any moment of the main loop's wait ends it.

A real signal lands between two lines at a moment no test chooses, so this test chooses every
moment: a trace function calls the handler at the k-th line the wait runs (standard library
lines included), for each k in turn, as the interpreter would on a signal arriving there. A
handler that took a lock (``threading.Event.set``) hangs at the lines where the wait holds it;
the wait runs in a thread so that such a hang fails the test instead of stopping it. The real
signals, sent to a real table process, are in test_table_cli.py.
"""

from __future__ import annotations

import signal
import sys
import threading
from types import FrameType
from typing import Any

import pytest

from dealer_assist.table.stop_signals import STOPPING, StopSignals


def wait_signalled_at_line(k: int) -> list[bool]:
    """What :meth:`StopSignals.wait` returned with SIGTERM noted at its k-th line (empty if it
    has not returned within 5 s, or raised)."""
    signals = StopSignals()
    lines = 0
    returned: list[bool] = []

    def trace(frame: FrameType, event: str, arg: Any) -> Any:
        nonlocal lines
        if event == "line":
            lines += 1
            if lines == k:
                signals.note(signal.SIGTERM)
        return trace

    def run() -> None:
        sys.settrace(trace)
        try:
            returned.append(signals.wait(lambda: True, poll_s=0.001))
        finally:
            sys.settrace(None)

    waiter = threading.Thread(target=run, daemon=True)
    waiter.start()
    waiter.join(5)
    return returned


@pytest.mark.parametrize("k", range(1, 41))
def test_a_stop_signal_at_any_line_of_the_wait_ends_it(k):
    assert wait_signalled_at_line(k) == [True]


def test_the_wait_ends_without_a_signal_once_the_table_stops_running():
    signals = StopSignals()
    looks = iter([True, True, False])
    assert signals.wait(lambda: next(looks), poll_s=0.001) is False
    assert signals.received == []


def test_install_replaces_an_inherited_ignore_and_notes_each_signal():
    previous = {number: signal.getsignal(number) for number in STOPPING}
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # as a process started with '&' inherits it
    try:
        signals = StopSignals()
        signals.install()
        signal.raise_signal(signal.SIGINT)
        signal.raise_signal(signal.SIGTERM)
        assert signals.received == [signal.SIGINT, signal.SIGTERM]
        assert signals.wait(lambda: True) is True
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)
