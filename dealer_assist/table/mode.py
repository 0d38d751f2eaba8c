"""Which card readers a table trusts right now."""

from __future__ import annotations

import enum


class Mode(enum.Enum):
    """Which readers the loop trusts right now (shown on the dealer's screen)."""

    SHOE_AND_CAMERA = "shoe + camera"
    SHOE_ONLY = "shoe only"
    CAMERA_ONLY = "camera only"
    NO_READER = "no card reader"
