"""A camera's verdict on a new card checked against the shoe's cards in flight."""

from __future__ import annotations

import enum


class Verdict(enum.Enum):
    """What the reader says of an index against a shoe card's code; events carry ``.value``."""

    MATCH = "match"
    """The reader is sure enough the card is the shoe's."""
    MISMATCH = "mismatch"
    """Every index read is surely another card: a switched card."""
    UNSURE = "unsure"
    """Neither (or no index seen): the table asks; never an alarm."""
