"""The login policy's arithmetic with a clock the test moves: delays grow 1, 2, 4 ... 60 s per
name and per address, 20 failures lock a name, and memory stays bounded under a flood of names."""

from __future__ import annotations

import pytest

from dealer_assist.surveillance.login_limits import LoginLimiter, LoginLimits, LoginRefused


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _fail(limiter: LoginLimiter, name: str, address: str) -> bool:
    limiter.admit(name, address)
    try:
        return limiter.failed(name, address)
    finally:
        limiter.done(address)


def _wait(limiter: LoginLimiter, name: str, address: str) -> float | None:
    try:
        limiter.admit(name, address)
    except LoginRefused as refused:
        return refused.retry_after_s
    limiter.done(address)
    return 0.0


def test_delays_grow_after_five_failures_up_to_a_minute_then_the_name_locks() -> None:
    clock = Clock()
    limiter = LoginLimiter(LoginLimits(), clock)
    waits = []
    for number in range(20):
        address = f"10.0.0.{number}"  # a new address each time: only the name's delay counts
        wait = _wait(limiter, "olga", address)
        assert wait is not None
        waits.append(wait)
        clock.now += wait
        assert _fail(limiter, "olga", address) == (number == 19)
    assert waits == [0, 0, 0, 0, 0, 1, 2, 4, 8, 16, 32, 60, 60, 60, 60, 60, 60, 60, 60, 60]
    limiter.lock("olga", 123)
    clock.now += 3600
    with pytest.raises(LoginRefused) as locked:
        limiter.admit("olga", "10.0.0.99")
    assert locked.value.retry_after_s is None and "locked" in str(locked.value)
    limiter.unlock("olga")
    assert _wait(limiter, "olga", "10.0.0.99") == 0


def test_an_address_is_delayed_across_names_and_a_success_restarts_its_count() -> None:
    clock = Clock()
    limiter = LoginLimiter(LoginLimits(), clock)
    for number in range(5):
        _fail(limiter, f"guess{number}", "10.0.0.1")
    assert _wait(limiter, "someone-new", "10.0.0.1") == 1
    clock.now += 1
    limiter.admit("olga", "10.0.0.1")
    limiter.succeeded("olga", "10.0.0.1")
    limiter.done("10.0.0.1")
    assert _wait(limiter, "someone-new", "10.0.0.1") == 0


def test_one_attempt_at_a_time_per_address() -> None:
    limiter = LoginLimiter(LoginLimits(), Clock())
    limiter.admit("olga", "10.0.0.1")
    with pytest.raises(LoginRefused):
        limiter.admit("audrey", "10.0.0.1")
    limiter.admit("audrey", "10.0.0.2")


def test_a_flood_of_names_is_forgotten_oldest_first_but_locks_are_kept() -> None:
    clock = Clock()
    limiter = LoginLimiter(LoginLimits(tracked=50, free_failures=100, lock_after=2), clock)
    assert not _fail(limiter, "locked", "10.0.0.1")
    assert _fail(limiter, "locked", "10.0.0.1")
    assert limiter.locked_by("locked") is not None  # at once, before its record is written
    limiter.lock("locked", 7)
    for number in range(500):
        _fail(limiter, f"flood{number}", f"10.1.{number // 250}.{number % 250}")
    assert limiter.locked_by("locked") == 7
    assert len(limiter._names) <= 51 and len(limiter._addresses) <= 50
