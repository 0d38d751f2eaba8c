"""A table's alarms: what each kind means, one alarm, and the book that keeps them."""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any


class AlarmKind(enum.Enum):
    """Why the dealer's screen shows an alarm; each is recorded with the round it happened in."""

    SWITCHED_CARD = "shoe and camera disagree"  #: the card on the felt is not the one drawn
    NOT_FROM_SHOE = "card never left the shoe"  #: a card on the felt the shoe never reported
    PIP_TEN = "pip ten"  #: a ten in a Spanish game: a foreign card
    BEYOND_COMPOSITION = "card beyond the shoe's composition"  #: more copies than the decks hold
    ILLEGAL_ACTION = "illegal action"  #: a decision or card the rules refuse
    MISPLACED = "card in the wrong place"  #: landed where the engine did not expect it
    CAMERA_MISSED = "camera missed a card"  #: a shoe card the camera never saw land
    UNREADABLE = "unreadable card"  #: neither reader could identify a card
    CAMERA_MOVED = "camera moved"  #: calibration drift
    CAMERA_SOFT = "camera out of focus"  #: its view too soft to read cards well
    SHOE_LINK_DOWN = "shoe link down"
    CAMERA_LOST = "camera feed lost"
    SHOE_PROBLEM = "shoe reports a problem"  #: jam, unreadable card, lost frames
    BET_REFUSED = "bet refused"
    ROUND_VOIDED = "round voided"  #: the floor voided the round: nothing settled
    RECORDING_FAILED = "recording failed"  #: the surveillance store could not be written
    KEYED_CARD = "card keyed by the dealer"  #: no reader saw it: surveillance should look
    CORRECTED_CARD = "card corrected by the dealer"  #: a misread put right: surveillance looks
    DEALER_ASKED = "dealer asked"  #: the evidence left a card's play open: the dealer answered
    CAMERA_BEHIND = "camera behind"  #: its sightings arrive too late to place cards by
    ROUND_RESUMED = "round resumed after a restart"  #: the dealer checks the felt, then confirms
    STAFF = "staff"  #: a sign-in or -out, a PIN refused, a touch with no dealer signed in
    FLOOR_BEHIND = "floor behind"  #: the room has not had this table's records for too long


#: Alarms where the readers disagree about a card of a round: no PAY/TAKE is shown for the round
#: while one is unacknowledged.
DISAGREEMENTS = frozenset({AlarmKind.SWITCHED_CARD, AlarmKind.NOT_FROM_SHOE, AlarmKind.MISPLACED})

#: Alarms a table keeps in memory: every active one, and done ones (acknowledged or resolved),
#: the oldest let go first, up to this many in all (the screen shows the last 20 in its
#: history; the recorder has them all).
ALARMS_KEPT = 200


@dataclass(frozen=True, slots=True)
class Alarm:
    """One alarm: shown in the band until acknowledged or resolved, recorded either way."""

    id: int
    kind: AlarmKind
    text: str
    round_id: str | None
    at: float
    acknowledged: bool = False
    resolved: bool = False

    @property
    def active(self) -> bool:
        return not (self.acknowledged or self.resolved)

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "kind": self.kind.name.lower(),
            "title": self.kind.value,
            "text": self.text,
            "round": self.round_id,
            "at": round(self.at, 3),
            "acknowledged": self.acknowledged,
            "resolved": self.resolved,
        }


class AlarmBook:
    """A table's alarms, numbered as raised: every active one and the latest done ones, up to
    :data:`ALARMS_KEPT` in all (a table runs for weeks). Each is handed to ``record`` as it is
    raised."""

    def __init__(self, record: Callable[[Alarm], None]):
        self._record = record
        self.alarms: list[Alarm] = []
        self._raised = 0

    @property
    def raised(self) -> int:
        """How many alarms have been raised: the last one's number."""
        return self._raised

    def number_on_from(self, raised: int) -> None:
        """Number the next alarm ``raised + 1``: a table rebuilt from its journal numbers its
        alarms on as it did before, so the acknowledgements journaled find theirs."""
        if raised < self._raised:
            raise ValueError(f"alarms are numbered up to {self._raised} already, not {raised}")
        self._raised = raised

    def raise_alarm(self, kind: AlarmKind, text: str, round_id: str | None, at: float,
                    resolved: bool = False) -> Alarm:
        """Raise (and record) an alarm; ``resolved``: recorded for surveillance, done already."""
        self._raised += 1
        alarm = Alarm(self._raised, kind, text, round_id, at, resolved=resolved)
        self.alarms.append(alarm)
        excess = len(self.alarms) - ALARMS_KEPT
        if excess > 0:  # let the oldest done alarms go (after a burst, as many as it takes)
            kept = []
            for old in self.alarms:
                if excess > 0 and not old.active:
                    excess -= 1
                else:
                    kept.append(old)
            self.alarms = kept
        self._record(alarm)
        return alarm

    def resolve(self, kind: AlarmKind) -> None:
        """Every alarm of ``kind`` is over (the device is back, the camera caught up)."""
        self.alarms = [replace(a, resolved=True) if a.kind is kind and not a.resolved else a
                       for a in self.alarms]

    def get(self, alarm_id: int) -> Alarm | None:
        """The alarm kept under number ``alarm_id``, if any."""
        return next((a for a in self.alarms if a.id == alarm_id), None)

    def acknowledge(self, alarm_id: int,
                    named: tuple[str, str, str | None, float] | None = None) -> None:
        """Acknowledge alarm ``alarm_id``; given ``named`` (its kind's name, text, round and
        ``at``, as the dealer saw it), the alarm so named: number ``alarm_id`` if it is one,
        else, of those (a table rebuilt from its journal that numbered them otherwise), the one
        numbered nearest below it, else the first; none where none is so named."""
        target = self.get(alarm_id)
        if named is not None:
            alike = [a for a in self.alarms if (a.kind.name, a.text, a.round_id, a.at) == named]
            if target not in alike:
                below = [a for a in alike if a.id < alarm_id]
                target = below[-1] if below else alike[0] if alike else None
        if target is None:
            return
        self.alarms = [replace(a, acknowledged=True) if a is target else a for a in self.alarms]

    def active(self) -> list[Alarm]:
        return [a for a in self.alarms if a.active]

    def disagreements(self, round_id: str | None) -> list[Alarm]:
        """``round_id``'s active alarms where the readers disagree about one of its cards."""
        return [a for a in self.alarms if a.active and a.round_id == round_id
                and a.kind in DISAGREEMENTS]
