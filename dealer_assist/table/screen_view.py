"""What the dealer's screen shows, as JSON-able data: the table's view (its phase, the round as
the screen may show it, each device's state, the alarms and the question), a settlement as one
PAY/TAKE line per bet, and (:func:`for_screen`) each payout's chips and the game's pace."""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable
from decimal import Decimal
from typing import Any, Protocol

from dealer_assist.roundlog import RoundFold
from dealer_assist.rules import (
    PayoutLine,
    RoundEngine,
    RoundError,
    RuleSet,
    SeatResult,
    Settlement,
    format_money,
)
from dealer_assist.table.alarms import Alarm
from dealer_assist.table.chips import ChipSet
from dealer_assist.table.mode import Mode
from dealer_assist.table.questions import OpenQuestion
from dealer_assist.table.sources import FloorLag


class ViewedTable(Protocol):
    """What the dealer's screen reads of the table."""

    table_id: str
    rules: RuleSet
    has_shoe: bool
    has_camera: bool
    shoe_up: bool
    camera_up: bool
    camera_moved: bool
    notes: dict[str, str]
    resumed: str | None
    dealer: str | None
    insurance_closed: bool
    rounds_played: int
    cards_committed: int
    updates: int

    @property
    def mode(self) -> Mode: ...
    @property
    def fold(self) -> RoundFold | None: ...
    @property
    def question(self) -> OpenQuestion | None: ...
    @property
    def round_questions(self) -> int: ...
    @property
    def camera_lag_s(self) -> float | None: ...
    floor: FloorLag | None
    @property
    def alarms(self) -> list[Alarm]: ...
    def active_alarms(self) -> list[Alarm]: ...
    def disagreements(self) -> list[Alarm]: ...
    def peek_pending(self) -> bool: ...


def table_view(table: ViewedTable) -> dict[str, Any]:
    """Everything the dealer's screen shows, as JSON-able data."""
    fold = table.fold
    peek_pending = table.peek_pending()
    engine_view = None if fold is None else round_view(
        fold.engine, table.has_shoe, peek_pending, table.insurance_closed)
    phase = "idle"
    if fold is not None:
        if fold.ended:
            phase = "settled"
        elif not fold.engine.dealing_started:
            phase = "betting"
        elif fold.engine.acting() is not None:
            phase = "playing"
        else:
            phase = "dealing" if not fold.engine.deal_complete else "dealer"
    settlement = None
    if fold is not None and fold.ended and fold.settlement is not None:
        settlement = settlement_view(fold.settlement)
    held = table.disagreements()
    if table.resumed is not None:
        phase, settlement = "resumed", None  # nothing is paid before the felt is checked
    elif peek_pending:
        phase = "insurance"  # what the peek finds is not shown until insurance is closed
    elif phase == "dealer" and fold is not None:
        # The dealer may still draw, but no result depends on it: the payouts are final,
        # and in a hand-held game the round waits for the dealer's check of the cards.
        try:
            settlement = settlement_view(fold.engine.settle())
            phase = "dealer" if table.has_shoe else "check"
        except RoundError:  # still owed: the hole card turned over, say
            settlement = None
    if table.question is not None:
        phase, settlement = "question", None
    elif settlement is not None and held:
        phase, settlement = "hold", None  # no PAY/TAKE while the readers disagree
    return {
        "table": table.table_id,
        "rules": table.rules.name,
        "mode": table.mode.value,
        "devices": {
            "shoe": device_state(table.has_shoe, table.shoe_up, False),
            "camera": device_state(table.has_camera, table.camera_up, table.camera_moved),
        },
        "notes": table.notes,
        "phase": phase,
        "round": engine_view,
        "settlement": settlement,
        "alarms": [a.to_json() for a in table.active_alarms()],
        "alarm_history": [a.to_json() for a in table.alarms[-20:]],
        "rounds_played": table.rounds_played,
        "cards_committed": table.cards_committed,
        "limits": {
            "min": format_money(table.rules.min_bet),
            "max": format_money(table.rules.max_bet),
        },
        "match_offered": table.rules.match_the_dealer is not None,
        "question": None if table.question is None else table.question.to_json(),
        "hold": [a.to_json() for a in held],
        "round_questions": table.round_questions,
        "camera_lag_ms": None if table.camera_lag_s is None or not table.has_camera
        else round(table.camera_lag_s * 1000),
        "floor": None if table.floor is None else {
            "records": table.floor.records, "seconds": round(table.floor.seconds),
            "behind": table.floor.behind, "connected": table.floor.connected},
        "resumed": table.resumed,
        "dealer_id": table.dealer,
        "updates": table.updates,
    }




def payout_words(amount_text: str) -> tuple[str, str]:
    """("PAY", "$15.00"), ("TAKE", "$10.00") or ("PUSH", "$0.00") for a signed money string."""
    negative = amount_text.startswith("-")
    digits = amount_text.lstrip("-")
    whole, _, cents = digits.partition(".")
    shown = f"${int(whole):,}.{cents or '00'}"
    if negative:
        return "TAKE", shown
    if digits.strip("0.") == "":
        return "PUSH", shown
    return "PAY", shown


def round_view(engine: RoundEngine, shoe_read: bool, peek_pending: bool,
                  insurance_closed: bool) -> dict[str, Any]:
    """The round as the dealer's screen shows it. A hole card the shoe read (``shoe_read``)
    stays face down there until the players' turn is over, as on the felt (a dealer who could
    read it sooner could signal it), and out of the pack count; while insurance is open
    (``peek_pending``) nothing shows what the peek will find, a dealer blackjack or that there
    is none: no hand to act, no state past it. Insurance the dealer closed is shown closed."""
    view = engine.view()
    dealer = view["dealer"]["cards"]
    hidden = shoe_read and len(dealer) >= 2 and dealer[1] is not None and (
        peek_pending or engine.acting() is not None)  # none acts after a dealer blackjack
    if hidden:
        view["dealer"] = {"cards": [dealer[0], None, *dealer[2:]], "total": None}
        counts = view["shoe_counts"]
        counts[dealer[1]] -= 1
        if not counts[dealer[1]]:
            del counts[dealer[1]]
    if insurance_closed:
        view["insurance_open"] = False
    if peek_pending:
        view.update(acting=None, legal_actions=[], next_card=None, state=(
            "insurance open (an ace up): INSURE each seat that asks, then Close insurance"))
    return view


def device_state(fitted: bool, up: bool, moved: bool) -> str:
    if not fitted:
        return "not fitted"
    if not up:
        return "down"
    return "moved" if moved else "up"


#: Payout kinds that are no hand's main wager (a Super Bonus line names hand 0, which won it).
SIDE_KINDS = ("match", "insurance", "super-bonus", "envy")


def _bet_words(seat: SeatResult, line: PayoutLine) -> tuple[str, Decimal | None]:
    """What bet a payout line settles, as people name it, and its stake (None: no stake of its
    own, a bonus)."""
    if line.kind == "match" and seat.match is not None:
        return "Match the Dealer", seat.match.wagered
    if line.kind == "insurance" and seat.insurance is not None:
        return "Insurance", seat.insurance.wagered
    if line.kind == "super-bonus":
        return "Super Bonus", None
    if line.kind == "envy":
        return "Envy bonus", None
    assert line.hand is not None, line
    return f"Hand {line.hand + 1}", seat.hands[line.hand].wagered


def settlement_view(settlement: Settlement) -> dict[str, Any]:
    """A settlement as the screen shows it: per seat, each payout line (every bet: each hand's
    main wager, Match the Dealer, insurance, Super Bonus, Envy) as PAY/TAKE with what it settles
    and the engine's reason, then one total per seat. ``hand`` stays 0-based as in the round
    log; every text a person reads numbers hands from 1."""
    seats = []
    for seat in settlement.seats:
        lines = []
        for line in seat.lines:
            verb, shown = payout_words(format_money(line.amount))
            bet, stake = _bet_words(seat, line)
            lines.append(
                {
                    "hand": line.hand,
                    "side": line.kind in SIDE_KINDS,
                    "kind": line.kind,
                    "bet": bet,
                    "stake": None if stake is None else format_money(stake),
                    "reason": line.reason,
                    "text": f"{bet}" + ("" if stake is None else f" (${stake:,.2f} bet)")
                            + f": {line.reason}",
                    "amount": format_money(line.amount),
                    "verb": verb,
                    "shown": shown,
                }
            )
        verb, shown = payout_words(format_money(seat.net))
        seats.append(
            {
                "seat": seat.seat,
                "player": seat.player,
                "lines": lines,
                "net": format_money(seat.net),
                "verb": verb,
                "shown": shown,
            }
        )
    return {
        "round": settlement.round_id,
        "dealer": settlement.dealer.to_json(),
        "seats": seats,
        "net": format_money(settlement.net),
        "net_shown": ("-" if settlement.net < 0 else "") + f"${abs(settlement.net):,.2f}",
    }


class PaceMeter:
    """The game's pace: rounds settled in the last hour, or, in the first hour it watched, the
    rounds so far scaled to an hour (none before a minute has passed). Thread-safe."""

    WINDOW_S = 3600.0
    SETTLE_S = 60.0

    def __init__(self, clock: Callable[[], float] = time.monotonic):
        self._clock = clock
        self._lock = threading.Lock()
        self._started = clock()
        self._count: int | None = None
        self._settled: deque[float] = deque()

    def observe(self, rounds_played: int) -> int | None:
        """Note the table's count of settled rounds; the pace in rounds per hour (None: too
        soon to say)."""
        with self._lock:
            now = self._clock()
            if self._count is not None and rounds_played > self._count:
                self._settled.extend([now] * min(rounds_played - self._count, 10_000))
            self._count = rounds_played
            while self._settled and self._settled[0] < now - self.WINDOW_S:
                self._settled.popleft()
            span = min(self.WINDOW_S, now - self._started)
            if span < self.SETTLE_S:
                return None
            return round(len(self._settled) * 3600 / span)


def for_screen(view: dict[str, Any], chips: ChipSet, pace: int | None) -> dict[str, Any]:
    """The table's view as the page shows it: each payout with its chips (what the table's chips
    cannot make, in cash), the chips the bet row offers, and the game's pace (rounds per hour,
    None: too soon). ``view`` is not changed."""
    shown = dict(view, pace_per_hour=pace, chips=[format_money(v) for v in chips.values],
                 bet_chips=[format_money(v) for v in chips.bet_row])
    settlement = view.get("settlement")
    if settlement is not None:
        seats = []
        for seat in settlement["seats"]:
            lines = [dict(line, chips=chips.breakdown(Decimal(line["amount"])).to_json()
                          if line["verb"] == "PAY" else None) for line in seat["lines"]]
            seats.append(dict(seat, lines=lines))
        shown["settlement"] = dict(settlement, seats=seats)
    return shown
