"""What replay and verification report: one :class:`Discrepancy` per difference found."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class Discrepancy:
    """One difference found by replay or verification, with everything needed to find it."""

    kind: str  # chain, signature, anchor, operators, database, index, file, settlement,
    #            refused, detection
    what: str
    round_key: int | None = None
    round_id: str | None = None
    table: str | None = None
    seq: int | None = None
    seat: int | None = None
    hand: int | None = None
    recorded: Any = None
    replayed: Any = None

    def text(self) -> str:
        parts = []
        if self.table:
            parts.append(f"table {self.table}")
        if self.round_id is not None or self.round_key is not None:
            parts.append(f"round #{self.round_key}" if self.round_id is None
                         else f"round {self.round_id} (#{self.round_key})")
        if self.seat is not None:
            parts.append(f"seat {self.seat}")
        if self.hand is not None:
            parts.append(f"hand {self.hand + 1}")  # people count hands from 1; JSON from 0
        where = ", ".join(parts)
        return f"{self.kind}: {where + ': ' if where else ''}{self.what}"

    def to_json(self) -> dict[str, Any]:
        return {k: v for k, v in asdict(self).items() if v is not None}
