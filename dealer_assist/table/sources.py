"""What the table loop is told: shoe events, camera events and the dealer's touches, as values.

The loop never talks to a serial port, a camera or a browser itself. Each device is a *source*: a
thread that turns its device's output into these small frozen values and hands them to a sink (the
runner's queue). The pure :class:`~dealer_assist.table.loop.TableLoop` folds them, so it is tested
by feeding values, and any shoe, camera or screen that can produce them can drive a table.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Protocol

from dealer_assist.roundlog import ShoeOrigin, UnreadOrigin
from dealer_assist.rules import DEALER, Action, Card, CardTarget

#: A place on the table is the engine's :class:`~dealer_assist.rules.CardTarget`: the dealer
#: (``seat`` None) or a seat's hand, counted in play order as the camera maps its stacks (0 the
#: original hand; after a split the new hand is the next). A place the camera reports always
#: names its hand.
DEALER_SPOT = DEALER


def place_words(place: CardTarget) -> str:
    """A place as the dealer's screen names it: "the dealer", "seat 2", "seat 2 hand 2" (a
    split's later hand, numbered from 1 as people count them: the round log's hand 1)."""
    if place.seat is None:
        return "the dealer"
    return f"seat {place.seat}" + (f" hand {place.hand + 1}" if place.hand else "")


def play_order(place: CardTarget | tuple[int, int] | None) -> tuple[float, int]:
    """Where ``place`` (a place, a (seat, hand), None: the dealer) comes in play order: seat by
    seat, hand by hand, then the dealer."""
    if place is None:
        return (float("inf"), 0)
    if isinstance(place, CardTarget):
        return (float("inf"), 0) if place.seat is None else (place.seat, place.hand or 0)
    return (place[0], place[1])


# ---------------------------------------------------------------------------------------- shoe


@dataclass(frozen=True, slots=True)
class ShoeCard:
    """A card left the shoe for play; ``origin``: the shoe's own numbering of it (link session,
    sequence number, position in the shoe), when a numbering shoe dealt it; ``at``: when it was
    handed to the table (UTC, round-log ``at`` text; the runner stamps it), the time its events
    carry however long it waits to be placed. ``unread``: the shoe dealt it but could not read
    it (its report, :class:`ShoeUnread`), and the dealer keyed it: recorded as keyed. ``held``:
    the shoe held it while its link was down and resends it now (until :class:`ShoeCaughtUp`)."""

    card: Card
    origin: ShoeOrigin | None = None
    at: str | None = field(default=None, compare=False)
    unread: UnreadOrigin | None = None
    held: bool = False


@dataclass(frozen=True, slots=True)
class ShoeUnread:
    """A card left the shoe but the shoe could not read it (``index``: its 1-based position in
    the shoe), or the shoe sent a numbered report that could not be decoded, which may have been
    a card (``index`` None); ``session``/``seq``: the shoe's numbering of the report; ``detail``:
    what the shoe or the decoder said; ``at``: when it was handed to the table (as a
    :class:`ShoeCard`'s), the time the card the dealer keys in its place carries. The card's
    place in the round is held until the dealer keys it (or, for an undecodable report, says no
    card left the shoe). ``held``: as a :class:`ShoeCard`'s."""

    session: int
    seq: int
    index: int | None = None
    detail: str = ""
    at: str | None = field(default=None, compare=False)
    held: bool = False


@dataclass(frozen=True, slots=True)
class ShoeBurn:
    """A card drawn and discarded unplayed (``card`` None when the shoe could not read it).
    ``held``: as a :class:`ShoeCard`'s."""

    card: Card | None
    held: bool = False


@dataclass(frozen=True, slots=True)
class ShoeLink:
    """The link to the shoe came up or went down (``detail`` says which port and why)."""

    up: bool
    detail: str = ""


@dataclass(frozen=True, slots=True)
class ShoeProblem:
    """Something the shoe or its link reported that needs a person: a jam, an unreadable card,
    a malformed frame, missing events."""

    text: str


@dataclass(frozen=True, slots=True)
class NewShoe:
    """A freshly shuffled shoe was loaded: the composition count starts again. ``touched``: the
    dealer touched New shoe (a hand-held game's fresh pack), rather than the shoe reporting it.
    ``held``: as a :class:`ShoeCard`'s."""

    decks: int
    touched: bool = False
    held: bool = False


@dataclass(frozen=True, slots=True)
class ShoeCaughtUp:
    """The shoe has resent every card it held while its link was down (up to its ``session``/
    ``seq``): they are checked, as one run, against what the camera and the dealer recorded
    meanwhile."""

    session: int = 0
    seq: int = 0


@dataclass(frozen=True, slots=True)
class ShoeHeard:
    """A heartbeat from the shoe after every event it sent before it reached the table (its
    frames come in order; one showing an event missing is not handed on): its link is alive and
    it has no card unreported. Handed to the loop only while a landing waits for its shoe
    card."""


ShoeInput = (ShoeCard | ShoeUnread | ShoeBurn | ShoeLink | ShoeProblem | NewShoe
             | ShoeCaughtUp | ShoeHeard)


# -------------------------------------------------------------------------------------- camera


@dataclass(frozen=True, slots=True)
class FeltCard:
    """The camera saw a new card come to rest at ``spot``.

    ``card`` is None when the camera cannot read it (a face-down hole card, or an unreadable
    index). ``sideways`` is a card placed crosswise: a double down. Where shoe cards were in
    flight when it appeared, its index was checked against them: ``verdict`` "match" (``card``
    is then the shoe's code ``checked``, verified), "mismatch" (surely none of them: ``card``
    as read, ``checked`` the first in flight) or "unsure" (neither: decides nothing); None:
    named, not checked.
    """

    card: Card | None
    spot: CardTarget
    sideways: bool = False
    seen_at: float | None = None  #: when the frame showing it was grabbed (monotonic seconds)
    verdict: str | None = None
    checked: Card | None = None


@dataclass(frozen=True, slots=True)
class FeltStacks:
    """The number of separate stacks at a seat grew: a split. ``from_stack`` is the stack that was
    divided (its new neighbour is the new hand), when the camera can tell."""

    seat: int
    stacks: int
    from_stack: int | None = None
    seen_at: float | None = None  #: when the frame showing it was grabbed (monotonic seconds)


@dataclass(frozen=True, slots=True)
class FeltSwap:
    """A card already on the felt now reads as another card, where it lies (a switched card)."""

    previous: Card
    card: Card
    spot: CardTarget
    seen_at: float | None = None  #: when the frame showing it was grabbed (monotonic seconds)


@dataclass(frozen=True, slots=True)
class HoleCardShown:
    """The dealer turned the hole card over (the players' turn is over); ``card`` as read."""

    card: Card | None
    seen_at: float | None = None  #: when the frame showing it was grabbed (monotonic seconds)


@dataclass(frozen=True, slots=True)
class CameraLink:
    """The camera feed started or was lost (``detail``: device and why)."""

    up: bool
    detail: str = ""


@dataclass(frozen=True, slots=True)
class CameraMoved:
    """Calibration drift: the camera no longer looks at the table it was calibrated for."""

    detail: str


@dataclass(frozen=True, slots=True)
class CameraFocus:
    """The camera's view went soft (``sharp`` False: it misses more cards) or is sharp again."""

    sharp: bool
    detail: str


CameraInput = (FeltCard | FeltStacks | FeltSwap | HoleCardShown | CameraLink | CameraMoved
               | CameraFocus)


# -------------------------------------------------------------------------------------- dealer


@dataclass(frozen=True, slots=True)
class PlaceBet:
    """The dealer entered a wager (main or Match the Dealer) for a seat."""

    seat: int
    amount: Decimal
    wager: str = "main"
    player: str | None = None


@dataclass(frozen=True, slots=True)
class Decide:
    """The dealer entered a player's decision the sensors cannot see (or confirmed one);
    ``hand`` (0-based, in play order) says which of a split seat's hands, when given."""

    seat: int
    action: Action
    amount: Decimal | None = None
    hand: int | None = None


@dataclass(frozen=True, slots=True)
class Insure:
    """The dealer entered an insurance wager."""

    seat: int
    amount: Decimal


@dataclass(frozen=True, slots=True)
class CloseInsurance:
    """The dealer has taken every insurance bet (an ace up): the peek may now be shown. Needed
    where the shoe has read the hole card, so the screen knows a dealer blackjack before the
    dealer may."""


@dataclass(frozen=True, slots=True)
class FinishRound:
    """The dealer has paid and cleared the table: close the round."""


@dataclass(frozen=True, slots=True)
class VoidRound:
    """The floor voided the round (a foreign card, a misdeal): record it apart, settle nothing.
    ``supervisor``: the id whose PIN approved it at the screen (None: the table itself voided
    it, e.g. a round that cannot be resumed after a restart). ``round_id``: the round it was
    begun for, refused if another is in play when it is handled (None: whatever round is)."""

    reason: str
    supervisor: str | None = None
    round_id: str | None = None


@dataclass(frozen=True, slots=True)
class AcknowledgeAlarm:
    """The dealer (or the floor) acknowledged an alarm; it leaves the band, stays recorded.
    ``kind``, ``text``, ``round_id`` and ``raised_at`` (its ``at``): that alarm's, as the table
    had it when the acknowledgement was journalled (the runner fills them in), so that a table
    rebuilt from its journal acknowledges that alarm even where it numbered it otherwise."""

    alarm_id: int
    kind: str | None = None
    text: str | None = None
    round_id: str | None = None
    raised_at: float | None = None


@dataclass(frozen=True, slots=True)
class KeyCard:
    """The dealer keyed in a card no reader saw (a hand-held game's card the camera cannot
    read), where it lies: ``spot`` a seat's hand (the hands before it stood, as a card the camera
    saw land there says), the dealer's (a draw, or the face-down hole card turned over), or None
    for the next card due (a hit for the hand in play). Recorded as keyed, with an alarm."""

    card: Card
    spot: CardTarget | None = None


@dataclass(frozen=True, slots=True)
class CorrectCard:
    """The dealer corrected a card the camera misread (or that was keyed wrong), in a game no
    shoe reads: a card recorded face up at ``at`` (the dealer, or a seat: any of its hands when
    ``at.hand`` is None) is ``card``. ``index`` says which, 0 the first there as the screen
    shows them (a whole seat: hand by hand); None, the latest. ``was``: the card the screen
    showed there, refused if the table has moved on since (a split, the hole card turned).
    Recorded with the card first recorded, and an alarm. ``supervisor``: the id whose PIN
    approved it at the screen. ``round_id``: the round it was begun in, refused if another is
    in play when it is handled (None: whatever round is)."""

    card: Card
    at: CardTarget
    index: int | None = None
    was: Card | None = None
    supervisor: str | None = None
    round_id: str | None = None


@dataclass(frozen=True, slots=True)
class AnswerQuestion:
    """The dealer's answer to the table's question ``question`` (its id): the play ``choice``
    (an index into the question's choices, as the screen lists them) put the card there."""

    question: int
    choice: int


@dataclass(frozen=True, slots=True)
class ConfirmFelt:
    """The dealer checked the felt against the screen of a round resumed after a restart, and
    they match: play goes on."""


@dataclass(frozen=True, slots=True)
class SignIn:
    """``dealer`` signed in at the screen (its PIN checked there, never handed on): the table
    takes bets and starts rounds only while a dealer is signed in; each round carries its id."""

    dealer: str


@dataclass(frozen=True, slots=True)
class SignOut:
    """The signed-in dealer signed out (between rounds): no bets until a dealer signs in."""


DealerInput = (PlaceBet | Decide | Insure | CloseInsurance | FinishRound | VoidRound
               | AcknowledgeAlarm | KeyCard | CorrectCard | AnswerQuestion | ConfirmFelt
               | SignIn | SignOut)


@dataclass(frozen=True, slots=True)
class StaffRefused:
    """The screen refused ``staff_id``'s PIN for ``action`` (sign in, void, correct): ``why``
    (a wrong PIN, the wait before the next try). Recorded; the PIN never leaves the screen."""

    staff_id: str
    action: str
    why: str


# ----------------------------------------------------------------------------------- recording


@dataclass(frozen=True, slots=True)
class RecordingFailed:
    """A recorder could not write (e.g. the surveillance store is read-only, locked or full)."""

    detail: str


@dataclass(frozen=True, slots=True)
class FloorLag:
    """How far the floor's room is behind this table: ``records`` the broker has not yet
    acknowledged, the oldest ``seconds`` old; ``behind`` past the alarm's bound; ``connected``
    to the broker; ``detail`` what is wrong."""

    records: int
    seconds: float
    behind: bool
    connected: bool
    detail: str = ""


@dataclass(frozen=True, slots=True)
class RoundResumed:
    """The table restarted with this round in play and rebuilt it from its journal: the dealer
    must check the felt against the screen (:class:`ConfirmFelt`) before play goes on."""

    detail: str


@dataclass(frozen=True, slots=True)
class ShownAfterRestart:
    """The table restarted showing the settled round ``round_id`` (its payouts may still be
    owed on the felt): the camera, starting again, reports its cards as new, so until the next
    round's first bet the camera's cards are let pass."""

    round_id: str


TableInput = (ShoeInput | CameraInput | DealerInput | StaffRefused | RecordingFailed
              | RoundResumed | ShownAfterRestart | FloorLag)


@dataclass(frozen=True, slots=True)
class ShoeDelivery:
    """What one numbered shoe event stands for, handed over as one: the table ``inputs`` (none
    for a lid, a cut card...), and the shoe's (``session``, ``seq``) of it. Once the table has
    made them durable it calls ``acknowledge(session, seq)``, and only then may the shoe be told
    it need not resend the event."""

    inputs: tuple[TableInput, ...]
    session: int
    seq: int
    acknowledge: Callable[[int, int], None] = field(compare=False, repr=False)


Sink = Callable[[TableInput | ShoeDelivery], object]


class Source(Protocol):
    """A device thread: :meth:`start` begins handing inputs to ``sink``; :meth:`stop` ends it.

    A source that loses its device keeps running, reports the loss (``ShoeLink(False)``,
    ``CameraLink(False)``), reconnects, and reports the recovery.
    """

    name: str

    def start(self, sink: Sink) -> None: ...

    def stop(self) -> None: ...
