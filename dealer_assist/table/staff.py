"""A table's staff: dealer and supervisor ids with PINs, and the check of a PIN at the screen.

The registry is a JSON file beside the table's configuration (``<config>.staff.json``, outside
the recording, mode 0600): ``{"version": 1, "staff": {"D123": {"role": "dealer", "hash":
"$argon2id$..."}}}``. A PIN is hashed with argon2id (``argon2-cffi``, its default cost; tests may
pass a cheaper :class:`HashCost`); the file never holds a PIN.

:class:`StaffDesk` checks a PIN where the touch arrives, before anything is journaled or
recorded: only the outcome and the id go further. Failed attempts are counted per id, and for
the whole table, in ``<config>.staff.attempts.json`` (so a restart does not reset them). After
:data:`FREE_FAILURES` failures in a row for an id, or :data:`TABLE_FREE_FAILURES` at the table
whatever the ids, each further attempt must wait, the wait doubling from :data:`FIRST_WAIT_S` up
to :data:`LONGEST_WAIT_S`. An id's right PIN clears its own count; the table's count clears
with no PIN, only with time, one failure every :data:`TABLE_FORGETS_ONE_S`, so one known PIN
cannot clear guesses at other ids. That bounds guessing at one screen to about one try per 15
minutes once the waits have grown (about 96 a day, whichever ids are tried): a 4-digit PIN
(10,000 values) lasts some 50 days on average, a 6-digit one 14 years, and every PIN refused is
recorded as it happens. A table's staff mistyping now and then never builds the table's count
up: it forgets faster than a busy table mistypes.
"""

from __future__ import annotations

import json
import logging
import math
import os
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError, VerifyMismatchError

from dealer_assist.backoff import Backoff
from dealer_assist.durable import create_new, fsync_dir
from dealer_assist.private_files import NotPrivateError, read_private

logger = logging.getLogger(__name__)

REGISTRY_VERSION = 1
ROLES = ("dealer", "supervisor")
#: A staff id: letters, digits and ``_.-``, 1 to 32 characters, starting with a letter or digit.
STAFF_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,31}")
#: A PIN: 4 to 12 digits (a touch screen's keypad).
PIN = re.compile(r"[0-9]{4,12}")
#: Failures in a row an id may make before each further attempt must wait.
FREE_FAILURES = 3
#: Failures at the table, whatever the ids, before each further attempt must wait.
TABLE_FREE_FAILURES = 10
FIRST_WAIT_S = 30.0
LONGEST_WAIT_S = 900.0
#: The table's count of failures loses one every this many seconds (no right PIN clears it):
#: as fast as the longest wait lets guesses come, so guessing cannot outrun the waits.
TABLE_FORGETS_ONE_S = LONGEST_WAIT_S
#: The most failures a count holds (each wait is the longest long before): a count in the
#: attempts file above it is not believed.
MOST_FAILURES_KEPT = 1_000_000
#: The key the table's own count is kept under in the attempts file (no staff id can be it).
TABLE_KEY = "*"
#: The waits of an id, and of the table whatever the ids, as their wrong PINs add up.
ID_BACKOFF = Backoff(FREE_FAILURES, FIRST_WAIT_S, LONGEST_WAIT_S)
TABLE_BACKOFF = Backoff(TABLE_FREE_FAILURES, FIRST_WAIT_S, LONGEST_WAIT_S)
#: Ids no registry holds whose failures are counted (the oldest forgotten first): a spray of
#: made-up ids cannot grow the count's file without end, nor push a real id's count out.
UNKNOWN_IDS_KEPT = 1000


class StaffError(ValueError):
    """A staff id, role, PIN or registry file that cannot be used (says which and why)."""


@dataclass(frozen=True, slots=True)
class HashCost:
    """argon2id's cost: passes, memory (KiB) and lanes. The default is argon2-cffi's (RFC 9106's
    low-memory choice: 3 passes over 64 MiB); only tests lower it."""

    time_cost: int = 3
    memory_kib: int = 65536
    parallelism: int = 4

    def hasher(self) -> PasswordHasher:
        return PasswordHasher(time_cost=self.time_cost, memory_cost=self.memory_kib,
                              parallelism=self.parallelism)


def staff_path(config: str | os.PathLike[str]) -> Path:
    """Where the staff registry of the table configured by ``config`` lies: beside it."""
    path = Path(config)
    return path.with_name(f"{path.stem}.staff.json")


def check_id(staff_id: object, what: str = "staff id") -> str:
    if not isinstance(staff_id, str) or not STAFF_ID.fullmatch(staff_id):
        raise StaffError(f"{what} must be 1 to 32 letters, digits or _.- (starting with a "
                         f"letter or digit), got {staff_id!r:.60}")
    return staff_id


def check_pin(pin: object) -> str:
    if not isinstance(pin, str) or not PIN.fullmatch(pin):
        raise StaffError("a PIN must be 4 to 12 digits")
    return pin


def _write_private(path: Path, data: dict[str, Any]) -> None:
    """Replace ``path`` by ``data`` as JSON, readable by this user only (mode 0600)."""
    aside = path.with_name(path.name + ".new")
    try:
        fd = create_new(aside, 0o600)  # never through a link
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            os.fchmod(handle.fileno(), 0o600)
            json.dump(data, handle, indent=1, sort_keys=True)
            handle.write("\n")
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(aside, path)
        fsync_dir(path.parent)
    except OSError as error:
        raise StaffError(f"{path}: {error.strerror or error}") from None


def _read_json(path: Path, holding: str = "the PIN hashes") -> Any:
    """``path``'s JSON (None: no such file), refused where others may read it (it holds
    ``holding``) or where it cannot be read."""
    try:
        return json.loads(read_private(path).decode("utf-8"))
    except FileNotFoundError:
        return None
    except NotPrivateError as error:
        raise StaffError(f"{error}: {holding} must stay private") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise StaffError(f"{path}: cannot be read: {error}") from None


@dataclass(frozen=True, slots=True)
class Member:
    staff_id: str
    role: str
    pin_hash: str = field(repr=False)


class StaffRegistry:
    """The staff of one table, read from and saved to ``path`` (see the module's docstring);
    :meth:`refresh` reads it again once the file has changed (``table staff`` run meanwhile)."""

    def __init__(self, path: str | os.PathLike[str], cost: HashCost = HashCost()):
        self.path = Path(path)
        self._hasher = cost.hasher()
        self.members: dict[str, Member] = {}
        self._decoy_hash: str | None = None
        self._stamp = self._file_stamp()
        raw = _read_json(self.path)
        if raw is not None:
            self.members = _members(raw, self.path)

    def _file_stamp(self) -> tuple[int, int, int] | None:
        try:
            found = self.path.stat()
        except OSError:
            return None
        return (found.st_ino, found.st_mtime_ns, found.st_size)

    def refresh(self) -> None:
        """Read the file again if it changed since it was read: an id removed can no longer
        sign in or approve, a new one can, without a restart. A file that cannot be read now
        leaves the staff as they were (logged)."""
        stamp = self._file_stamp()
        if stamp == self._stamp:
            return
        try:
            raw = _read_json(self.path)
            self.members = {} if raw is None else _members(raw, self.path)
        except StaffError as error:
            logger.error("staff registry not read again: %s (the staff read before stand)",
                         error)
            return
        self._stamp = stamp

    def add(self, staff_id: str, role: str, pin: str) -> None:
        """Register ``staff_id`` (or give it a new role and PIN) and save."""
        check_id(staff_id)
        if role not in ROLES:
            raise StaffError(f"role must be one of {', '.join(ROLES)}, got {role!r}")
        self.members[staff_id] = Member(staff_id, role, self._hasher.hash(check_pin(pin)))
        self.save()

    def remove(self, staff_id: str) -> None:
        if self.members.pop(staff_id, None) is None:
            raise StaffError(f"{self.path}: no staff id {staff_id!r}")
        self.save()

    def save(self) -> None:
        _write_private(self.path, {"version": REGISTRY_VERSION, "staff": {
            m.staff_id: {"role": m.role, "hash": m.pin_hash} for m in self.members.values()}})
        self._stamp = self._file_stamp()

    def count(self, role: str) -> int:
        return sum(1 for m in self.members.values() if m.role == role)

    def verify(self, staff_id: str, pin: str) -> str | None:
        """The role of ``staff_id`` if ``pin`` is its PIN, else None. An unknown id costs the
        same hashing as a known one, so the time taken does not tell which ids exist."""
        member = self.members.get(staff_id)
        try:
            self._hasher.verify(member.pin_hash if member else self._decoy, pin)
        except (VerifyMismatchError, VerificationError, InvalidHashError):
            return None
        return None if member is None else member.role

    @property
    def _decoy(self) -> str:
        if self._decoy_hash is None:
            self._decoy_hash = self._hasher.hash(os.urandom(16).hex())
        return self._decoy_hash


def _members(raw: Any, path: Path) -> dict[str, Member]:
    if not isinstance(raw, dict) or raw.get("version") != REGISTRY_VERSION or \
            not isinstance(raw.get("staff"), dict):
        raise StaffError(f"{path}: not a version {REGISTRY_VERSION} staff registry")
    members = {}
    for staff_id, entry in raw["staff"].items():
        if not isinstance(entry, dict) or entry.get("role") not in ROLES or \
                not str(entry.get("hash", "")).startswith("$argon2id$"):
            raise StaffError(f"{path}: staff id {staff_id!r}: needs a role and an argon2id hash")
        members[check_id(staff_id)] = Member(staff_id, entry["role"], entry["hash"])
    return members


@dataclass(frozen=True, slots=True)
class Refusal:
    """A PIN check that failed: why (for the screen and the record), the seconds before the
    id may try again (0: at once), and whether the PIN was not even tried (a wait not over)."""

    why: str
    wait_s: float = 0.0
    throttled: bool = False


class StaffDesk:
    """Checks staff PINs at the screen, one at a time, with the failures of each id counted in
    ``attempts`` (a file) and a growing wait once an id's :data:`FREE_FAILURES` or the table's
    :data:`TABLE_FREE_FAILURES` are used up. ``clock``: wall-clock seconds (the count outlives a
    restart)."""

    def __init__(self, registry: StaffRegistry, attempts: str | os.PathLike[str] | None = None,
                 clock: Callable[[], float] = time.time):
        self.registry = registry
        self.attempts_path = Path(attempts) if attempts is not None else \
            registry.path.with_suffix(".attempts.json")
        self._clock = clock
        self._lock = threading.Lock()
        self._failures: dict[str, tuple[int, float]] = {}  # id: (failures in a row, last)
        self._table = (0.0, 0.0)  # the table's count as of its last failure, and that time
        self._load()

    def check(self, staff_id: str, pin: str, roles: tuple[str, ...]) -> Refusal | None:
        """None when ``pin`` is ``staff_id``'s and its role is one of ``roles``; else why not.
        While the id or the table must wait, its PIN is not even tried."""
        with self._lock:  # one check at a time: parallel tries cannot outrun the count
            self.registry.refresh()
            self._bring_back_to(self._clock())  # a clock set back: no wait counts from later
            left, whose = self._wait_left(staff_id)
            if left > 0:
                return Refusal(f"{staff_id}: too many wrong PINs{whose}: try again in "
                               f"{left:.0f} s", left, throttled=True)
            role = self.registry.verify(staff_id, pin) if PIN.fullmatch(pin) else None
            if role is None:
                now = self._clock()
                self._failures[staff_id] = (
                    min(self._failures.get(staff_id, (0, 0.0))[0] + 1, MOST_FAILURES_KEPT), now)
                self._table = (min(self._table_count(now) + 1, MOST_FAILURES_KEPT), now)
                self._forget_oldest_unknown()
                self._save()
                failures = self._failures[staff_id][0]
                wait, whose = self._wait_left(staff_id)
                later = f"; the next try{whose} in {wait:.0f} s" if wait > 0 else ""
                return Refusal(f"{staff_id}: wrong id or PIN ({failures} in a row{later})", wait)
            if self._failures.pop(staff_id, None) is not None:
                self._save()
            if role not in roles:
                return Refusal(f"{staff_id} is a {role}: this needs a {' or '.join(roles)}")
            return None

    def _table_count(self, now: float) -> float:
        """The table's count of failures at ``now``, less those it has forgotten since."""
        count, last = self._table
        return max(0.0, count - max(0.0, now - last) / TABLE_FORGETS_ONE_S)

    def _wait_left(self, staff_id: str) -> tuple[float, str]:
        """Seconds before ``staff_id`` may try, the longer of its own wait and the table's, each
        counted from its last failure (the table's count rounded: 9.98 failures are 10), and
        whose wait that is in words (``""``: the id's own; `` at this table``)."""
        now = self._clock()
        failures, last = self._failures.get(staff_id, (0, 0.0))
        own = last + ID_BACKOFF.wait(failures) - now
        table = self._table[1] + TABLE_BACKOFF.wait(round(self._table[0])) - now
        return (own, "") if own >= table else (table, " at this table")

    def _bring_back_to(self, now: float) -> None:
        """Date any failure recorded later than ``now`` (the clock was ahead, then set back)
        at ``now``, so that its wait ends a wait's length from now rather than never."""
        ahead = {k: (n, now) for k, (n, t) in self._failures.items() if t > now}
        if ahead or self._table[1] > now:
            self._failures.update(ahead)
            self._table = (self._table[0], min(self._table[1], now))
            self._save()

    def _load(self) -> None:
        """Read the counts back; an entry that is not a count is left out, with a warning."""
        raw = _read_json(self.attempts_path, "the failed PIN attempts")
        if raw is None:
            return
        if not isinstance(raw, dict):
            raise StaffError(f"{self.attempts_path}: cannot be read: not a JSON object")
        for key, entry in raw.items():
            count = _count(entry)
            if count is None or not (key == TABLE_KEY or STAFF_ID.fullmatch(str(key))) or \
                    key != TABLE_KEY and (count[0] < 1 or count[0] != int(count[0])) or \
                    count[0] > MOST_FAILURES_KEPT:
                logger.warning("%s: %r: not a count of failed PINs, left out",
                               self.attempts_path, key)
            elif key == TABLE_KEY:
                self._table = count
            else:
                self._failures[str(key)] = (int(count[0]), count[1])

    def _forget_oldest_unknown(self) -> None:
        unknown = [k for k in self._failures if k not in self.registry.members]
        for staff_id in sorted(unknown, key=lambda k: self._failures[k][1])[
                :max(0, len(unknown) - UNKNOWN_IDS_KEPT)]:
            del self._failures[staff_id]

    def _save(self) -> None:
        try:
            _write_private(self.attempts_path,
                           {k: [n, t] for k, (n, t) in
                            sorted(self._failures.items()) + [(TABLE_KEY, self._table)]})
        except StaffError as error:  # the count still holds in memory
            logger.error("failed PIN attempts not saved: %s", error)


def _count(entry: object) -> tuple[float, float] | None:
    """An attempts file's entry as (failures, when the last came); None: not such a pair (a
    negative or non-finite number included)."""
    if not (isinstance(entry, list) and len(entry) == 2 and
            all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in entry)):
        return None
    count, last = float(entry[0]), float(entry[1])
    return (count, last) if math.isfinite(count) and math.isfinite(last) and count >= 0 \
        else None


@dataclass(frozen=True, slots=True)
class Attested:
    """A touch that carries a staff member's PIN: ``item`` (a sign-in, a void, a correction,
    naming ``staff_id``) goes to the table only once :meth:`StaffDesk.check` has passed
    ``staff_id``'s ``pin`` for one of ``roles``. ``action`` names the touch for the record."""

    item: Any
    staff_id: str
    pin: str = field(repr=False)
    roles: tuple[str, ...]
    action: str
