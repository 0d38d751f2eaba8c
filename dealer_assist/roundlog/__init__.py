"""Round logs: the JSON Lines event stream every part of dealer-assist writes or reads."""

from dealer_assist.roundlog.events import (
    LOG_VERSION,
    Bet,
    CardDealt,
    End,
    Event,
    EventError,
    Insurance,
    PlayerAction,
    Reveal,
    RoundStart,
    ShoeOrigin,
    dumps_event,
    event_to_json,
    parse_event,
)
from dealer_assist.roundlog.fold import (
    LogError,
    LoggedEvent,
    RoundFold,
    read_events,
    settle_log,
    settle_rounds,
)

__all__ = [
    "LOG_VERSION",
    "Bet",
    "CardDealt",
    "End",
    "Event",
    "EventError",
    "Insurance",
    "LogError",
    "LoggedEvent",
    "PlayerAction",
    "Reveal",
    "RoundFold",
    "RoundStart",
    "ShoeOrigin",
    "dumps_event",
    "event_to_json",
    "parse_event",
    "read_events",
    "settle_log",
    "settle_rounds",
]
