"""Logging for every command: named loggers, one configuration.

Each module logs through ``logging.getLogger(__name__)``. :func:`configure` sets the level and
where the lines go: standard error, or a file (then standard error still shows warnings and
worse). It also logs, with its traceback, any exception that ends a thread uncaught. The
``dealer-assist`` entry calls it with ``--log-level`` and ``--log-file``; ``dealer-assist table``
calls it again with its configuration's ``[logging]`` where the command line leaves them unset.
"""

from __future__ import annotations

import logging
import logging.handlers
import os
import sys
import threading
import time
from collections.abc import Callable, Hashable

#: The level names a command line or a configuration may give, least severe first.
LEVELS = ("debug", "info", "warning", "error", "critical")
#: The level of a command that is not told one (``dealer-assist table`` defaults to ``info``).
DEFAULT_LEVEL = "warning"
FORMAT = "%(asctime)s %(levelname)s [%(threadName)s] %(name)s: %(message)s"

#: The logger every module's named logger is under.
PACKAGE = "dealer_assist"
#: Seconds between two lines of one throttled kind (:class:`Throttled`).
QUIET_S = 60.0

logger = logging.getLogger(__name__)
_installed: list[logging.Handler] = []


class LogFileError(ValueError):
    """The log file cannot be opened for writing (names it and why)."""


class _StandardError(logging.StreamHandler):  # type: ignore[type-arg]
    """Writes to whatever ``sys.stderr`` is when a line is written (a test may replace it)."""

    def __init__(self) -> None:
        super().__init__(sys.stderr)

    def emit(self, record: logging.LogRecord) -> None:
        self.stream = sys.stderr
        super().emit(record)


def level_number(name: str) -> int:
    """The ``logging`` level for one of :data:`LEVELS` (any case); ValueError names the choices."""
    if not isinstance(name, str) or name.strip().lower() not in LEVELS:
        raise ValueError(f"must be one of {', '.join(LEVELS)}, got {name!r}")
    return int(getattr(logging, name.strip().upper()))


def configure(level: str = DEFAULT_LEVEL, file: str | os.PathLike[str] | None = None) -> None:
    """Log this package at ``level`` (one of :data:`LEVELS`; other libraries at warning or
    worse) to standard error, or to ``file`` (appended to, reopened when rotated away) with
    warnings and worse also on standard error. Replaces what an earlier call set; installs
    :func:`log_thread_exception` as ``threading.excepthook``."""
    number = level_number(level)
    handlers: list[logging.Handler] = []
    stderr = _StandardError()
    if file is not None:
        try:
            handlers.append(logging.handlers.WatchedFileHandler(file, encoding="utf-8"))
        except OSError as error:
            raise LogFileError(f"cannot write the log file {file}: "
                               f"{error.strerror or error}") from None
        stderr.setLevel(max(number, logging.WARNING))
    handlers.append(stderr)
    formatter = logging.Formatter(FORMAT)
    formatter.converter = time.gmtime  # UTC, as the recording's times are
    root = logging.getLogger()
    for old in _installed:
        root.removeHandler(old)
        old.close()
    _installed[:] = handlers
    for handler in handlers:
        handler.setFormatter(formatter)
        root.addHandler(handler)
    # this package's lines at the level; other libraries' (uvicorn, asyncio) warnings and worse
    root.setLevel(max(number, logging.WARNING))
    logging.getLogger(PACKAGE).setLevel(number)
    threading.excepthook = log_thread_exception


def log_thread_exception(args: threading.ExceptHookArgs) -> None:
    """Log an exception that ended a thread, with its traceback (``threading.excepthook``)."""
    if args.exc_type is SystemExit:
        return
    name = args.thread.name if args.thread is not None else "a thread"
    error = args.exc_value if args.exc_value is not None else args.exc_type()
    logger.critical("thread %s stopped: %s", name, describe(error),
                    exc_info=(args.exc_type, error, args.exc_traceback))


def describe(error: BaseException) -> str:
    """An exception on one line: its type and its text."""
    text = " ".join(str(error).split())
    return f"{type(error).__name__}: {text}" if text else type(error).__name__


def guarded(target: Callable[[], None], what: str,
            on_death: Callable[[str], None] | None = None,
            log: logging.Logger = logger) -> Callable[[], None]:
    """``target`` for a thread: an exception that ends it is logged to ``log`` with its
    traceback, then :func:`described <describe>` to ``on_death`` (which raises the alarm)."""

    def run() -> None:
        try:
            target()
        except Exception as error:
            log.exception("%s stopped", what)
            if on_death is not None:
                on_death(describe(error))

    return run


class Throttled:
    """Warnings by kind (a refusal by its status, a connection closed by its cause), each kind
    at most once every ``every_s`` seconds: anyone who reaches a port can cause them, and a
    flood must not fill the disk, nor one kind's flood hide another kind. A line said after
    others of its kind were held back ends with how many (a burst's last count is said with
    the next line of its kind). ``kind``: from a small set the code chooses, never the
    client's words. Thread-safe."""

    def __init__(self, log: logging.Logger, every_s: float = QUIET_S,
                 clock: Callable[[], float] = time.monotonic):
        self._log = log
        self._every_s = every_s
        self._clock = clock
        self._lock = threading.Lock()
        self._last: dict[Hashable, float] = {}
        self._held: dict[Hashable, int] = {}

    def warning(self, kind: Hashable, message: str, *args: object) -> None:
        """Log ``message % args`` unless a line of ``kind`` was said within ``every_s`` (then
        it is counted)."""
        with self._lock:
            now = self._clock()
            last = self._last.get(kind)
            if last is not None and now - last < self._every_s:
                self._held[kind] = self._held.get(kind, 0) + 1
                return
            held = self._held.pop(kind, 0)
            self._last[kind] = now
        if held:
            self._log.warning(f"{message} (and {held} more of this kind held back since the "
                              "last such line)", *args)
        else:
            self._log.warning(message, *args)
