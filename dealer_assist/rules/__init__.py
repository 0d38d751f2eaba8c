"""The pure rules core: cards, house rule sets, the round engine and its settlement.

No I/O, no clock, no OpenCV: the live table, the shoe, replay and tests all drive the same engine.
"""

from dealer_assist.rules.cards import (
    ALL_CARDS,
    ALLOWED_DECKS,
    SPANISH_DECK,
    Card,
    CardCodeError,
    Rank,
    Suit,
    hand_total,
    spanish_shoe,
)
from dealer_assist.rules.engine import (
    DEALER,
    Action,
    CardError,
    CardTarget,
    HandState,
    HandStatus,
    IllegalActionError,
    RoundEngine,
    RoundError,
    RoundIncompleteError,
    WagerError,
    is_whole_number,
)
from dealer_assist.rules.money import MoneyError, format_money, parse_money
from dealer_assist.rules.ruleset import (
    PRESETS,
    MatchPaytable,
    RuleSet,
    RuleSetError,
    SuperBonusTier,
)
from dealer_assist.rules.settlement import (
    Bonus21,
    DealerResult,
    HandResult,
    Outcome,
    PayoutLine,
    SeatResult,
    Settlement,
)

__all__ = [
    "ALL_CARDS",
    "ALLOWED_DECKS",
    "DEALER",
    "PRESETS",
    "SPANISH_DECK",
    "Action",
    "Bonus21",
    "Card",
    "CardCodeError",
    "CardError",
    "CardTarget",
    "HandState",
    "HandStatus",
    "DealerResult",
    "HandResult",
    "IllegalActionError",
    "MatchPaytable",
    "MoneyError",
    "Outcome",
    "PayoutLine",
    "Rank",
    "RoundEngine",
    "RoundError",
    "RoundIncompleteError",
    "RuleSet",
    "RuleSetError",
    "SeatResult",
    "Settlement",
    "SuperBonusTier",
    "Suit",
    "WagerError",
    "format_money",
    "hand_total",
    "is_whole_number",
    "parse_money",
    "spanish_shoe",
]
