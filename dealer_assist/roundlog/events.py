"""Round-log events (version 1): parsing from JSON objects, canonical output, upgrades on read.

The round log is the product's one interchange format: the live table writes it, the shoe and the
camera feed it, ``settle`` adjudicates it, surveillance replays it.
See ``shared/spec/round-log.md``.

Any event may carry ``at`` (the UTC time it happened, :func:`format_at`'s text) and a bet,
insurance or decision ``by`` (who the table took it from, :data:`TAKEN_BY`): both are kept
through parsing and output, and neither is read by the engine nor compared between events.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

from dealer_assist.rules import (
    Action,
    Card,
    CardCodeError,
    CardTarget,
    MoneyError,
    RoundEngine,
    Settlement,
    is_whole_number,
    parse_money,
)
from dealer_assist.rules.money import format_money

LOG_VERSION = 1

#: Who the table took a bet, insurance or decision from (round-log field ``"by"``).
TAKEN_BY = ("dealer", "camera", "shoe")

_AT = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,6})?Z")


def format_at(moment: datetime) -> str:
    """The round-log ``"at"`` text of ``moment`` (aware): UTC to the millisecond,
    ``2026-12-02T04:32:14.001Z``."""
    if moment.tzinfo is None:
        raise ValueError(f"an event's time must carry a time zone, got naive {moment!r}")
    return moment.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class EventError(ValueError):
    """A line of a round log that is not a valid event."""


@dataclass(frozen=True, slots=True)
class RoundStart:
    """First line: the round's id, its rules (preset name or override object) and carried fields."""

    id: str | None
    rules: Any
    extra: dict[str, Any] = field(default_factory=dict)
    version: int = LOG_VERSION

    def apply_to(self, engine: RoundEngine) -> None:
        raise EventError("a new round starts before this one ended")


@dataclass(frozen=True, slots=True)
class Bet:
    seat: int
    amount: Decimal
    wager: str = "main"
    player: str | None = None
    by: str | None = field(default=None, compare=False)
    at: str | None = field(default=None, compare=False)

    def apply_to(self, engine: RoundEngine) -> None:
        engine.bet(self.seat, self.amount, self.wager, self.player)


@dataclass(frozen=True, slots=True)
class ShoeOrigin:
    """Where an electronic shoe said a card came from, in its own numbering (round-log field
    ``"shoe": {"session": 3, "seq": 41, "index": 12}``): the link session, the event's sequence
    number and the card's 1-based position in the shoe. Lets surveillance tie a logged card to
    the shoe's own record."""

    session: int
    seq: int
    index: int

    def to_json(self) -> dict[str, int]:
        return {"session": self.session, "seq": self.seq, "index": self.index}


@dataclass(frozen=True, slots=True)
class UnreadOrigin:
    """The shoe's report of a card it dealt but could not read (round-log field ``"unread":
    {"session": 3, "seq": 41, "index": 12}``): the link session and the report's sequence
    number, and the card's 1-based position in the shoe; ``index`` None where the report itself
    could not be decoded (it may have been that card)."""

    session: int
    seq: int
    index: int | None = None

    def to_json(self) -> dict[str, int]:
        out = {"session": self.session, "seq": self.seq}
        if self.index is not None:
            out["index"] = self.index
        return out


@dataclass(frozen=True, slots=True)
class CardDealt:
    """The next card out of the shoe (``card`` None only for a face-down hole card); ``shoe``:
    the shoe's own numbering of it, when a shoe dealt it; ``keyed``: no reader saw it, the dealer
    keyed it in (round-log field ``"keyed": true``); ``corrected``: the card first recorded
    here, which the dealer corrected to ``card`` (round-log field ``"corrected": "7S"``), with
    ``corrected_by`` the supervisor who approved it (``"corrected_by": "S9"``); ``unread``: the
    shoe dealt it but reported it unread, and the dealer keyed it (``keyed`` is then true)."""

    card: Card | None
    to: CardTarget | None = None
    face_down: bool = False
    shoe: ShoeOrigin | None = None
    keyed: bool = False
    corrected: Card | None = None
    corrected_by: str | None = None
    unread: UnreadOrigin | None = None
    at: str | None = field(default=None, compare=False)

    def apply_to(self, engine: RoundEngine) -> CardTarget:
        return engine.card(self.card, self.to, self.face_down)


@dataclass(frozen=True, slots=True)
class Insurance:
    seat: int
    amount: Decimal
    by: str | None = field(default=None, compare=False)
    at: str | None = field(default=None, compare=False)

    def apply_to(self, engine: RoundEngine) -> None:
        engine.insurance(self.seat, self.amount)


@dataclass(frozen=True, slots=True)
class PlayerAction:
    seat: int
    action: Action
    amount: Decimal | None = None
    hand: int | None = None
    by: str | None = field(default=None, compare=False)
    at: str | None = field(default=None, compare=False)

    def apply_to(self, engine: RoundEngine) -> None:
        engine.action(self.seat, self.action, self.amount, self.hand)


@dataclass(frozen=True, slots=True)
class Reveal:
    """The face-down hole card turned over; ``keyed``: no reader saw it, the dealer keyed it;
    ``corrected``: the card first recorded, which the dealer corrected to ``card``, with
    ``corrected_by`` the supervisor who approved it."""

    card: Card
    keyed: bool = False
    corrected: Card | None = None
    corrected_by: str | None = None
    at: str | None = field(default=None, compare=False)

    def apply_to(self, engine: RoundEngine) -> None:
        engine.reveal(self.card)


@dataclass(frozen=True, slots=True)
class Question:
    """The table asked the dealer which play put ``card`` where it went (the evidence left more
    than one reading that pays differently); written just before the decisions and the card the
    answer chose. Changes nothing in the round; flags it for surveillance's review. ``by``:
    ``"dealer"`` (a touch) or ``"camera"`` (its late sighting settled it); ``waited_s``: seconds
    from the question to the answer; ``dealer_id``: the signed-in dealer who answered."""

    card: Card | None
    text: str
    why: str
    choices: tuple[str, ...]
    answer: str
    by: str = "dealer"
    waited_s: Decimal = Decimal(0)
    dealer_id: str | None = None
    at: str | None = field(default=None, compare=False)

    def apply_to(self, engine: RoundEngine) -> None:
        return None


@dataclass(frozen=True, slots=True)
class End:
    at: str | None = field(default=None, compare=False)

    def apply_to(self, engine: RoundEngine) -> Settlement:
        return engine.settle()  # raises if something is still owed


Event = RoundStart | Bet | CardDealt | Insurance | PlayerAction | Reveal | Question | End


def _seat(obj: Mapping[str, Any]) -> int:
    seat = obj.get("seat")
    if not is_whole_number(seat):
        raise EventError(f"'seat' must be a whole number, got {seat!r}")
    return seat


def _money(obj: Mapping[str, Any], key: str) -> Decimal:
    if key not in obj:
        raise EventError(f"missing {key!r}")
    try:
        return parse_money(obj[key], key)
    except MoneyError as error:
        raise EventError(str(error)) from None


def _card(raw: object) -> Card:
    try:
        return Card.parse(raw)
    except CardCodeError as error:
        raise EventError(str(error)) from None


def _json_native(value: Any) -> Any:
    """Carried fields as plain JSON values: a JSON number read as Decimal goes back to int or float.

    Only numbers whose float prints back exactly become floats; any other stays a decimal string.
    The engine never reads money from these echoes as floats (``parse_money`` takes them exactly).
    """
    if isinstance(value, Decimal):
        if value == value.to_integral_value():
            return int(value)
        return float(value) if repr(float(value)) == str(value) else str(value)
    if isinstance(value, dict):
        return {k: _json_native(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_json_native(v) for v in value]
    return value


def _parse_round(obj: Mapping[str, Any]) -> RoundStart:
    if "rules" not in obj:
        raise EventError("the round line needs 'rules' (a preset name or an object)")
    version = obj.get("version", LOG_VERSION)
    carried = {
        k: _json_native(v) for k, v in obj.items() if k not in ("type", "id", "rules", "version")
    }
    round_id = obj.get("id")
    rules = _json_native(obj["rules"])
    return RoundStart(None if round_id is None else str(round_id), rules, carried, version)


def _parse_bet(obj: Mapping[str, Any]) -> Bet:
    wager = obj.get("wager", "main")
    if wager not in ("main", "match"):
        raise EventError(f'\'wager\' must be "main" or "match", got {wager!r}')
    player = obj.get("player")
    return Bet(_seat(obj), _money(obj, "amount"), wager, None if player is None else str(player),
               _taken_by(obj))


def _taken_by(obj: Mapping[str, Any]) -> str | None:
    by = obj.get("by")
    if by is not None and by not in TAKEN_BY:
        raise EventError(f"'by' must be one of {', '.join(map(repr, TAKEN_BY))}, got {by!r:.40}")
    return by  # type: ignore[no-any-return]


def _at(obj: Mapping[str, Any]) -> str | None:
    at = obj.get("at")
    return None if at is None else check_at(at)


def check_at(at: object) -> str:
    """``at`` as an event's ``"at"`` text (UTC ISO 8601 ending ``Z``); EventError if not."""
    try:
        if not isinstance(at, str) or not _AT.fullmatch(at):
            raise ValueError
        datetime.fromisoformat(at.replace("Z", "+00:00"))
    except ValueError:
        raise EventError(f"'at' must be a UTC time like \"2026-12-02T04:32:14.001Z\", "
                         f"got {at!r:.40}") from None
    return at


def _parse_card(obj: Mapping[str, Any]) -> CardDealt:
    face_down = obj.get("face_down", False)
    if not isinstance(face_down, bool):
        raise EventError(f"'face_down' must be true or false, got {face_down!r}")
    raw = obj.get("card")
    if raw is None and not face_down:
        raise EventError("'card' is missing (only a face_down hole card may have card null)")
    card = None if raw is None else _card(raw)
    keyed = _keyed(obj)
    if keyed and card is None:
        raise EventError("a keyed card names its card ('card' null is a face-down hole card)")
    if keyed and obj.get("shoe") is not None:
        raise EventError("a keyed card has no 'shoe' numbering: no reader saw it")
    unread = _unread_origin(obj.get("unread"))
    if unread is not None and not keyed:
        raise EventError("'unread' names a card the shoe could not read, which the dealer "
                         "keyed: it needs \"keyed\": true")
    corrected = _corrected(obj)
    if corrected is not None and card is None:
        raise EventError("a corrected card names its card ('card' null is a face-down hole card)")
    to = obj.get("to")
    try:
        target = None if to is None else CardTarget.parse(to)
    except ValueError as error:
        raise EventError(str(error)) from None
    return CardDealt(card, target, face_down, _shoe_origin(obj.get("shoe")), keyed, corrected,
                     _corrected_by(obj, corrected), unread)


def _keyed(obj: Mapping[str, Any]) -> bool:
    keyed = obj.get("keyed", False)
    if not isinstance(keyed, bool):
        raise EventError(f"'keyed' must be true or false, got {keyed!r}")
    return keyed


def _corrected(obj: Mapping[str, Any]) -> Card | None:
    raw = obj.get("corrected")
    if raw is None:
        return None
    try:
        return _card(raw)
    except EventError as error:
        raise EventError(f"'corrected': {error}") from None


def _staff_id(obj: Mapping[str, Any], key: str) -> str | None:
    """An optional staff id (at most 32 characters: see ``dealer_assist.table.staff``)."""
    raw = obj.get(key)
    if raw is None:
        return None
    if not isinstance(raw, str) or not 1 <= len(raw) <= 32:
        raise EventError(f"{key!r} must be a staff id of 1 to 32 characters, got {raw!r:.60}")
    return raw


def _corrected_by(obj: Mapping[str, Any], corrected: Card | None) -> str | None:
    by = _staff_id(obj, "corrected_by")
    if by is not None and corrected is None:
        raise EventError("'corrected_by' names who approved a correction: it needs 'corrected'")
    return by


def _parse_reveal(obj: Mapping[str, Any]) -> Reveal:
    corrected = _corrected(obj)
    return Reveal(_card(obj.get("card")), _keyed(obj), corrected, _corrected_by(obj, corrected))


def _shoe_origin(raw: object) -> ShoeOrigin | None:
    if raw is None:
        return None
    if not isinstance(raw, dict) or set(raw) != {"session", "seq", "index"}:
        raise EventError(f"'shoe' must be {{\"session\", \"seq\", \"index\"}}, got {raw!r}")
    values = [raw["session"], raw["seq"], raw["index"]]
    if not all(is_whole_number(v) and v >= 0 for v in values):
        raise EventError(f"'shoe' numbers must be whole numbers from 0, got {raw!r}")
    return ShoeOrigin(*values)


def _unread_origin(raw: object) -> UnreadOrigin | None:
    if raw is None:
        return None
    if not isinstance(raw, dict) or not {"session", "seq"} <= set(raw) or \
            not set(raw) <= {"session", "seq", "index"}:
        raise EventError(f"'unread' must be {{\"session\", \"seq\"}} and may have \"index\", "
                         f"got {raw!r:.80}")
    values = [raw["session"], raw["seq"], raw.get("index", 0)]
    if not all(is_whole_number(v) and v >= 0 for v in values):
        raise EventError(f"'unread' numbers must be whole numbers from 0, got {raw!r:.80}")
    return UnreadOrigin(raw["session"], raw["seq"], raw.get("index"))


def _parse_action(obj: Mapping[str, Any]) -> PlayerAction:
    if "action" not in obj:
        raise EventError("missing 'action'")
    try:
        action = Action.parse(obj["action"])
    except ValueError as error:
        raise EventError(str(error)) from None
    amount = _money(obj, "amount") if obj.get("amount") is not None else None
    if amount is not None and action is not Action.DOUBLE:
        raise EventError(f"only a double takes an amount, not a {action.value}")
    hand = obj.get("hand")
    if hand is not None and (not is_whole_number(hand) or hand < 0):
        raise EventError(f"'hand' must be a hand number from 0, got {hand!r}")
    return PlayerAction(_seat(obj), action, amount, hand, _taken_by(obj))


def _text(obj: Mapping[str, Any], key: str, limit: int = 1000) -> str:
    value = obj.get(key)
    if not isinstance(value, str) or len(value) > limit:
        raise EventError(f"{key!r} must be text of at most {limit} characters, got {value!r:.80}")
    return value


def _parse_question(obj: Mapping[str, Any]) -> Question:
    raw = obj.get("card")
    choices = obj.get("choices")
    if not isinstance(choices, list) or not 2 <= len(choices) <= 64 or \
            not all(isinstance(c, str) and len(c) <= 200 for c in choices):
        raise EventError(f"'choices' must be a list of 2 to 64 texts, got {choices!r:.80}")
    answer = _text(obj, "answer", 200)
    if answer not in choices:
        raise EventError(f"'answer' {answer!r} is not one of the choices")
    by = obj.get("by", "dealer")
    if by not in ("dealer", "camera"):
        raise EventError(f'\'by\' must be "dealer" or "camera", got {by!r}')
    try:
        waited = parse_money(obj.get("waited_s", 0), "waited_s")
    except MoneyError as error:
        raise EventError(str(error)) from None
    return Question(None if raw is None else _card(raw), _text(obj, "text"), _text(obj, "why"),
                    tuple(choices), answer, by, waited, _staff_id(obj, "dealer_id"))


_PARSERS: dict[str, Callable[[Mapping[str, Any]], Event]] = {
    "round": _parse_round,
    "bet": _parse_bet,
    "card": _parse_card,
    "insurance": lambda obj: Insurance(_seat(obj), _money(obj, "amount"), _taken_by(obj)),
    "action": _parse_action,
    "reveal": _parse_reveal,
    "question": _parse_question,
    "end": lambda obj: End(),
}

# version -> function upgrading one event object from that version to the next.
UPGRADES: dict[int, Callable[[dict[str, Any]], dict[str, Any]]] = {}


def upgrade(obj: dict[str, Any], version: int) -> dict[str, Any]:
    """Bring an event written under an older log version up to :data:`LOG_VERSION`."""
    if not is_whole_number(version) or version < 1:
        raise EventError(f"log version must be a whole number from 1, got {version!r}")
    if version > LOG_VERSION:
        raise EventError(
            f"log version {version} is newer than this program reads ({LOG_VERSION}): upgrade it"
        )
    while version < LOG_VERSION:
        obj = UPGRADES[version](obj)
        version += 1
    return obj


def parse_event(obj: object, version: int = LOG_VERSION) -> Event:
    """One event from a decoded JSON object written under log ``version``."""
    if not isinstance(obj, dict):
        raise EventError(f"an event must be a JSON object, got {type(obj).__name__}")
    obj = upgrade(obj, version)
    kind = obj.get("type")
    parser = _PARSERS.get(kind) if isinstance(kind, str) else None
    if parser is None:
        raise EventError(f"unknown event type {kind!r} (one of {', '.join(_PARSERS)})")
    at = _at(obj)
    event = parser(obj)
    if at is None or isinstance(event, RoundStart):  # the round line keeps it with its extras
        return event
    return dataclasses.replace(event, at=at)


def event_to_json(event: Event) -> dict[str, Any]:
    """The canonical JSON object of an event (card codes canonical, money as strings), its
    ``by`` and ``at`` last."""
    out = _event_body(event)
    if isinstance(event, Bet | Insurance | PlayerAction) and event.by is not None:
        out["by"] = event.by
    if not isinstance(event, RoundStart) and event.at is not None:
        out["at"] = event.at
    return out


def _event_body(event: Event) -> dict[str, Any]:
    if isinstance(event, RoundStart):
        out: dict[str, Any] = {"type": "round", "id": event.id, "rules": event.rules}
        out.update(event.extra)
        if event.version != LOG_VERSION:
            out["version"] = event.version
        return out
    if isinstance(event, Bet):
        out = {"type": "bet", "seat": event.seat}
        if event.wager != "main":
            out["wager"] = event.wager
        out["amount"] = format_money(event.amount)
        if event.player is not None:
            out["player"] = event.player
        return out
    if isinstance(event, CardDealt):
        out = {"type": "card", "card": event.card.code if event.card else None}
        if event.to is not None:
            out["to"] = event.to.to_json()
        if event.face_down:
            out["face_down"] = True
        if event.shoe is not None:
            out["shoe"] = event.shoe.to_json()
        if event.keyed:
            out["keyed"] = True
        if event.corrected is not None:
            out["corrected"] = event.corrected.code
        if event.corrected_by is not None:
            out["corrected_by"] = event.corrected_by
        if event.unread is not None:
            out["unread"] = event.unread.to_json()
        return out
    if isinstance(event, Insurance):
        return {"type": "insurance", "seat": event.seat, "amount": format_money(event.amount)}
    if isinstance(event, PlayerAction):
        out = {"type": "action", "seat": event.seat, "action": event.action.value}
        if event.amount is not None:
            out["amount"] = format_money(event.amount)
        if event.hand is not None:
            out["hand"] = event.hand
        return out
    if isinstance(event, Reveal):
        revealed: dict[str, Any] = {"type": "reveal", "card": event.card.code}
        if event.keyed:
            revealed["keyed"] = True
        if event.corrected is not None:
            revealed["corrected"] = event.corrected.code
        if event.corrected_by is not None:
            revealed["corrected_by"] = event.corrected_by
        return revealed
    if isinstance(event, Question):
        asked: dict[str, Any] = {
            "type": "question", "card": event.card.code if event.card else None,
            "text": event.text, "why": event.why, "choices": list(event.choices),
            "answer": event.answer, "by": event.by, "waited_s": format_money(event.waited_s)}
        if event.dealer_id is not None:
            asked["dealer_id"] = event.dealer_id
        return asked
    return {"type": "end"}


def dumps_event(event: Event) -> str:
    """One line of a round log (no newline)."""
    return json.dumps(event_to_json(event), separators=(", ", ": "))
