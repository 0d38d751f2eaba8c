"""A wait that grows with failures in a row: none for the first few, then doubling up to a cap.
The guard against guessing that the surveillance page's logins and the screen's PINs share."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Backoff:
    """``free`` failures wait nothing; the next waits ``first_s``, each after it twice the last,
    never more than ``longest_s``."""

    free: int
    first_s: float
    longest_s: float

    def wait(self, failures: int) -> float:
        """Seconds the next attempt waits after ``failures`` failures in a row."""
        if failures < self.free:
            return 0.0
        # the exponent bounded: past 64 doublings any wait is the longest (no overflow)
        return min(self.longest_s, self.first_s * 2.0 ** min(failures - self.free, 64))
