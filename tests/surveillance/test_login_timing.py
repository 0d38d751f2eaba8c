"""An unknown name must not answer faster or slower than a real one with a wrong password: the
difference lets anyone list the operators' names (before: ~66 ms against ~36 ms).

Statistical, never a timed assertion: the two kinds of refusal are timed in interleaved pairs
at the production hashing cost, and the median of the pairs' ratios must lie within a wide band
(2/3 to 3/2) that a second hash for unknown names (a ratio near 2) falls outside, while the load
of a shared machine, which slows both halves of a pair alike, does not.
"""

from __future__ import annotations

import statistics
import time
from pathlib import Path

import pytest

from dealer_assist.surveillance import RecordingStore
from dealer_assist.surveillance.access import AccessError, add_operator, authenticate
from dealer_assist.surveillance.interface import StoredOperator
from dealer_assist.surveillance.store import format_time
from tests.surveillance.old_hashes import old_scrypt_hash

PAIRS = 15
PASSWORD = "correct horse battery"


def _refusal_seconds(store: RecordingStore, name: str) -> float:
    start = time.perf_counter()
    try:
        authenticate(store, name, "not the password at all")
    except AccessError:
        return time.perf_counter() - start
    raise AssertionError("a wrong password was accepted")


@pytest.mark.parametrize("hashed", ["argon2id", "scrypt, from before argon2id"])
def test_unknown_and_known_names_cost_the_same_work(recording: Path, hashed: str) -> None:
    """Also while an operator's hash is still the old scrypt one (not yet upgraded by a login)."""
    store = RecordingStore(recording)
    try:
        if hashed == "argon2id":
            add_operator(store, "olga", PASSWORD, "operator")
        else:
            store.put_operator(StoredOperator("olga", "operator", old_scrypt_hash(PASSWORD)),
                               format_time(store.clock()))
        _refusal_seconds(store, "olga")  # warm both paths (first hash, first append)
        _refusal_seconds(store, "mallory")
        ratios = []
        for number in range(PAIRS):
            if number % 2:  # alternate which goes first, so drift favours neither
                unknown, known = _refusal_seconds(store, "mallory"), _refusal_seconds(store, "olga")
            else:
                known, unknown = _refusal_seconds(store, "olga"), _refusal_seconds(store, "mallory")
            ratios.append(unknown / known)
    finally:
        store.close()
    ratio = statistics.median(ratios)
    assert 2 / 3 < ratio < 3 / 2, f"unknown/known refusal time: median ratio {ratio:.2f}"
