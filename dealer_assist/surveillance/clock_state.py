"""The host clock's synchronisation state, as the kernel or systemd reports it, never guessed.

A recording's times are only as good as the clock that stamped them: an officer lining a round up
with CCTV needs to know whether the table's clock was synchronised and by how much it was off.
:func:`clock_state` reads the kernel's NTP state (``adjtimex(2)`` with no change asked, which
needs no privilege) and, where systemd runs, ``timedatectl show``; what neither says is
``"unknown"``.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import logging
import subprocess
from decimal import Decimal
from typing import Any

logger = logging.getLogger(__name__)

UNKNOWN = "unknown"
_STA_UNSYNC = 0x0040  # the kernel's "clock not synchronised" status bit
_STA_NANO = 0x2000  # offsets in nanoseconds, not microseconds
_TIME_ERROR = 5  # adjtimex's answer while the clock is not synchronised


class _Timeval(ctypes.Structure):
    _fields_ = [("tv_sec", ctypes.c_long), ("tv_usec", ctypes.c_long)]


class _Timex(ctypes.Structure):
    """``struct timex`` (linux/timex.h) as glibc lays it out on 64-bit Linux."""

    _fields_ = [
        ("modes", ctypes.c_uint), ("offset", ctypes.c_long), ("freq", ctypes.c_long),
        ("maxerror", ctypes.c_long), ("esterror", ctypes.c_long), ("status", ctypes.c_int),
        ("constant", ctypes.c_long), ("precision", ctypes.c_long),
        ("tolerance", ctypes.c_long), ("time", _Timeval), ("tick", ctypes.c_long),
        ("ppsfreq", ctypes.c_long), ("jitter", ctypes.c_long), ("shift", ctypes.c_int),
        ("stabil", ctypes.c_long), ("jitcnt", ctypes.c_long), ("calcnt", ctypes.c_long),
        ("errcnt", ctypes.c_long), ("stbcnt", ctypes.c_long), ("tai", ctypes.c_int),
        ("_reserved", ctypes.c_int * 11),
    ]


def _ms(value: int, per_ms: int) -> str:
    return str((Decimal(value) / per_ms).quantize(Decimal("0.001")))


def _adjtimex() -> dict[str, Any] | None:
    """The kernel's view, or None where it cannot be read (not Linux, no libc)."""
    name = ctypes.util.find_library("c")
    if name is None:
        return None
    try:
        libc = ctypes.CDLL(name, use_errno=True)
        timex = _Timex()  # modes 0: read only
        state = libc.adjtimex(ctypes.byref(timex))
    except (OSError, AttributeError):
        return None
    if state < 0:
        return None
    unsynchronised = state == _TIME_ERROR or bool(timex.status & _STA_UNSYNC)
    per_ms = 1_000_000 if timex.status & _STA_NANO else 1_000
    return {
        "synchronised": not unsynchronised,
        # the kernel's own figures: meaningful only while something disciplines the clock
        "offset_ms": UNKNOWN if unsynchronised else _ms(timex.offset, per_ms),
        "max_error_ms": _ms(timex.maxerror, 1_000),
        "estimated_error_ms": _ms(timex.esterror, 1_000),
    }


def _timedatectl() -> bool | None:
    """``NTPSynchronized`` from ``timedatectl show``, or None where systemd cannot say."""
    try:
        done = subprocess.run(["timedatectl", "show", "--property=NTPSynchronized"],
                              capture_output=True, text=True, timeout=5, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    answer = done.stdout.strip().partition("=")[2]
    if done.returncode != 0 or answer not in ("yes", "no"):
        return None
    return answer == "yes"


def clock_state() -> dict[str, Any]:
    """``synchronised`` (true, false or ``"unknown"``), ``offset_ms`` (the kernel's estimate of
    the clock's offset from its time source, or ``"unknown"``), the kernel's ``max_error_ms``
    and ``estimated_error_ms`` where it gives them, and ``source``: what said so."""
    kernel = _adjtimex()
    systemd = _timedatectl()
    sources = [name for name, found in (("adjtimex", kernel), ("timedatectl", systemd))
               if found is not None]
    state: dict[str, Any] = {"synchronised": UNKNOWN, "offset_ms": UNKNOWN,
                             "source": "+".join(sources) or "none"}
    if kernel is not None:
        state.update(kernel)
    if systemd is not None:
        state["synchronised"] = systemd if kernel is None else systemd and kernel["synchronised"]
    return state
