"""How often the page lets anyone guess a password: growing delays per name and per address, and
a lockout of a name that only ``surveillance operator RECORDING unlock NAME`` (or a restart) lifts.

The policy (:class:`LoginLimits`): each name and each address has 5 free failures; after that the
next attempt is refused (429, ``Retry-After``) until 1 s, then 2, 4, 8 ... up to 60 s have passed
since the last failure. 20 failures for one name lock it. Known and unknown names are counted
alike, so neither the delays nor the lock tell which names exist.

The trade-off: a lock only a technician lifts would let anyone who knows an operator's name keep
that operator out with 20 guesses. So an address from which a name logged in successfully (since
the page started) is *trusted* for that name: neither the name's delays nor its lock apply there,
only that address's own delays; 5 failures for the name from that address end the trust. An
attacker elsewhere locks the name for everyone else but not for the operator's own workstation,
and gets at most 20 guesses at it in all. Counts are kept in memory: a restart of the page clears
them (as it ends every session).
"""

from __future__ import annotations

import itertools
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypeVar

from dealer_assist.backoff import Backoff

T = TypeVar("T")
#: ``locked_by`` of a name locked whose record is still being written: no unlock can follow it
_RECORD_PENDING = 2**63


@dataclass(frozen=True, slots=True)
class LoginLimits:
    free_failures: int = 5
    first_delay_s: float = 1.0
    max_delay_s: float = 60.0
    lock_after: int = 20
    #: addresses remembered per name as trusted, and names/addresses tracked at all
    trusted_per_name: int = 8
    tracked: int = 10_000

    @property
    def backoff(self) -> Backoff:
        """The wait before the next attempt, by consecutive failures."""
        return Backoff(self.free_failures, self.first_delay_s, self.max_delay_s)


class LoginRefused(Exception):
    """An attempt refused before its password was checked: ``retry_after_s`` until the next may
    be, or ``None`` while the name is locked."""

    def __init__(self, message: str, retry_after_s: float | None):
        super().__init__(message)
        self.retry_after_s = retry_after_s


@dataclass(slots=True)
class _Failures:
    count: int = 0
    last: float = 0.0


@dataclass(slots=True)
class _Name:
    failures: _Failures = field(default_factory=_Failures)
    trusted: OrderedDict[str, int] = field(default_factory=OrderedDict)  # address: its failures
    locked_by: int | None = None  # the seq of the access record that says it was locked
    unlock_looked_to: int = 0  # access records up to this seq hold nothing lifting the lock


class LoginLimiter:
    """The counts behind :class:`LoginLimits`; one per page, used under the caller's lock."""

    def __init__(self, limits: LoginLimits | None = None,
                 clock: Callable[[], float] = time.monotonic):
        self.limits = limits or LoginLimits()
        self.clock = clock
        self._names: OrderedDict[str, _Name] = OrderedDict()
        self._addresses: OrderedDict[str, _Failures] = OrderedDict()
        self._checking: set[str] = set()

    def locked_by(self, name: str) -> int | None:
        """The seq of the record that locked ``name``, if it is locked."""
        entry = self._names.get(name)
        return None if entry is None else entry.locked_by

    def unlock_search_from(self, name: str) -> int | None:
        """Where to look for a record lifting ``name``'s lock: after this seq (None: it is not
        locked), so each access record is looked through once, not at every attempt."""
        entry = self._names.get(name)
        if entry is None or entry.locked_by is None:
            return None
        return max(entry.locked_by, entry.unlock_looked_to)

    def unlock_searched(self, name: str, seq: int) -> None:
        """The access records up to ``seq`` hold nothing lifting ``name``'s lock."""
        entry = self._names.get(name)
        if entry is not None and entry.locked_by is not None:
            entry.unlock_looked_to = max(entry.unlock_looked_to, seq)

    def admit(self, name: str, address: str) -> None:
        """Let one attempt go on to the password check, or raise :class:`LoginRefused`. Every
        admitted attempt ends with :meth:`failed` or :meth:`succeeded`, then :meth:`done`."""
        if address in self._checking:
            raise LoginRefused("a login from this address is being checked: try again", 1.0)
        entry = self._names.get(name)
        trusted = entry is not None and address in entry.trusted
        if entry is not None and entry.locked_by is not None and not trusted:
            raise LoginRefused(
                "this login is locked after too many failed attempts: the technician lifts it with"
                " 'dealer-assist surveillance operator RECORDING unlock NAME'", None)
        waits = [self._wait(self._addresses.get(address))]
        if not trusted and entry is not None:
            waits.append(self._wait(entry.failures))
        wait = max(waits)
        if wait > 0:
            raise LoginRefused(
                f"too many failed logins for this name or from this address: try again in"
                f" {wait:.0f} s", wait)
        self._checking.add(address)

    def done(self, address: str) -> None:
        self._checking.discard(address)

    def failed(self, name: str, address: str) -> bool:
        """Count a wrong password; whether this failure locked the name (it is locked at once;
        :meth:`lock` then names the record that says so)."""
        now = self.clock()
        entry = self._entry(name)
        failures = self._address(address)
        failures.count, failures.last = failures.count + 1, now
        if address in entry.trusted:
            entry.trusted[address] += 1
            if entry.trusted[address] >= self.limits.free_failures:
                del entry.trusted[address]
            return False
        entry.failures.count, entry.failures.last = entry.failures.count + 1, now
        if entry.locked_by is None and entry.failures.count >= self.limits.lock_after:
            entry.locked_by = _RECORD_PENDING
            return True
        return False

    def lock(self, name: str, record_seq: int) -> None:
        self._entry(name).locked_by = record_seq

    def succeeded(self, name: str, address: str) -> None:
        """A right password: the address's count restarts, and the address is trusted for the
        name; the name's own count restarts unless it is locked (the lock stays for the rest)."""
        self._addresses.pop(address, None)
        entry = self._entry(name)
        if entry.locked_by is None:
            entry.failures = _Failures()
        entry.trusted[address] = 0
        entry.trusted.move_to_end(address)
        while len(entry.trusted) > self.limits.trusted_per_name:
            entry.trusted.popitem(last=False)

    def unlock(self, name: str) -> None:
        entry = self._names.get(name)
        if entry is not None:
            entry.locked_by, entry.failures, entry.unlock_looked_to = None, _Failures(), 0

    def _wait(self, failures: _Failures | None) -> float:
        if failures is None:
            return 0.0
        return max(0.0, failures.last + self.limits.backoff.wait(failures.count) - self.clock())

    def _entry(self, name: str) -> _Name:
        entry = self._names.setdefault(name, _Name())
        self._names.move_to_end(name)
        _forget_oldest(self._names, self.limits.tracked, keep=lambda e: e.locked_by is not None)
        return entry

    def _address(self, address: str) -> _Failures:
        failures = self._addresses.setdefault(address, _Failures())
        self._addresses.move_to_end(address)
        _forget_oldest(self._addresses, self.limits.tracked, keep=lambda _f: False)
        return failures


def _forget_oldest(entries: OrderedDict[str, T], most: int, keep: Callable[[T], bool]) -> None:
    """Bound memory: drop the least recently touched entries past ``most`` (but not those kept)."""
    for key in list(itertools.islice(entries, max(0, len(entries) - most))):
        if not keep(entries[key]):
            del entries[key]
