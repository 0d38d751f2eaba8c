"""The demo table: a simulated shoe on a pseudo-terminal, simulated players and dealer, and the
real pipeline (shoe reader, table loop, recorder, dealer's screen) in between.

The simulated dealer deals from a seeded shuffled shoe: every card is drawn through the shoe
simulator (``dealer_assist.shoe.simulator``) and read back by the real reader over the pty;
every decision the dealer would touch is POSTed to the screen's ``/api/input`` like a touch.
With the synthetic camera (``synthetic_camera.py``: the felt rendered by the scene generator and
read by the card detector) the table runs shoe + camera; without it (no detector model, no card
artwork, or ``camera="off"``) it runs shoe only and the screen says why.

The simulated dealer signs in at the screen with its id and PIN, and a simulated supervisor
approves with its own what the dealer voids or corrects: both are registered, with PINs drawn
afresh each run, in a staff registry in a temporary folder of the demo's own (outside the
recording, as a table's lies beside its configuration).
"""

from __future__ import annotations

import json
import logging
import secrets
import tempfile
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from dealer_assist.roundlog.report import settlement_text
from dealer_assist.rules import DEALER, Action, Card, CardTarget, HandState, RuleSet, Settlement
from dealer_assist.table.alarms import AlarmKind
from dealer_assist.table.assembly import TableSetup, assemble
from dealer_assist.table.camera_source import FRAME_QUALITY
from dealer_assist.table.loop import TableLoop
from dealer_assist.table.pairing import CAMERA_WAIT_S, MAX_CAMERA_LAG_S
from dealer_assist.table.questions import OpenQuestion
from dealer_assist.table.recording import EvidenceFiles
from dealer_assist.table.screen import ScreenServer
from dealer_assist.table.screen_client import pinned_context, send_touch
from dealer_assist.table.screen_site import TlsFiles, exposure_warning
from dealer_assist.table.shoe_source import SerialShoeSource
from dealer_assist.table.simulation.synthetic_camera import HOUSE_DECK
from dealer_assist.table.simulation.world import DEFAULT_PLAYERS, Placement, SimulatedTable
from dealer_assist.table.sources import (
    DEALER_SPOT,
    AcknowledgeAlarm,
    AnswerQuestion,
    CloseInsurance,
    ConfirmFelt,
    CorrectCard,
    DealerInput,
    Decide,
    FeltCard,
    FeltStacks,
    FinishRound,
    HoleCardShown,
    Insure,
    KeyCard,
    NewShoe,
    PlaceBet,
    ShoeCard,
    SignIn,
    SignOut,
    Source,
    TableInput,
    VoidRound,
)
from dealer_assist.table.staff import StaffDesk, StaffRegistry

#: The simulated dealer and supervisor, as the demo's staff registry names them.
DEMO_DEALER, DEMO_SUPERVISOR = "DEMO-D1", "DEMO-S1"
#: The demo table's name in its recording.
DEMO_TABLE = "DEMO"
logger = logging.getLogger(__name__)
#: Why the demo's floor voids a round the table could not complete as dealt.
VOID_REASON = "the table could not complete the round as dealt"
#: Rounds in a row that may fail before the demo stops: something is broken, not one mishap.
FAILURES_ALLOWED = 3


@dataclass(frozen=True, slots=True)
class DemoOptions:
    """How the demo runs: ``rounds`` None plays until stopped; ``pace_s`` between cards;
    ``camera_wait_s`` and ``max_camera_lag_s`` the table's patience with its camera (see
    :mod:`dealer_assist.table.pairing`)."""

    rules: str = "h17-ddd-6"
    rounds: int | None = None
    seed: int = 1
    host: str = "127.0.0.1"
    port: int = 8021
    tls: TlsFiles | None = None  # the screen over HTTPS
    recording_dir: str | None = None
    pace_s: float = 0.6
    pause_after_round_s: float = 4.0
    card_timeout_s: float = 5.0
    camera: str = "auto"  # "on": the synthetic camera or fail; "auto": on if it can run; "off"
    camera_deck: str = HOUSE_DECK  # the synthetic camera's card design
    frame_quality: int = FRAME_QUALITY  # JPEG quality of the camera frames recorded
    shoe: bool = True  # False: a hand-held game, read by the camera alone (cards it misses keyed)
    camera_wait_s: float = CAMERA_WAIT_S
    max_camera_lag_s: float = MAX_CAMERA_LAG_S


def touch_json(item: DealerInput | NewShoe, pin: str | None = None) -> dict[str, object]:
    """The JSON the screen's page POSTs for a dealer input; ``pin``: the PIN of the staff id
    the input names (a sign-in's dealer, a void's or a correction's supervisor)."""
    out = _touch_fields(item)
    if pin is not None:
        out["pin"] = pin
    return out


def _touch_fields(item: DealerInput | NewShoe) -> dict[str, object]:
    if isinstance(item, PlaceBet):
        out: dict[str, object] = {
            "type": "bet",
            "seat": item.seat,
            "amount": str(item.amount),
            "wager": item.wager,
        }
        if item.player is not None:
            out["player"] = item.player
        return out
    if isinstance(item, Decide):
        out = {"type": "decide", "seat": item.seat, "action": item.action.value}
        if item.amount is not None:
            out["amount"] = str(item.amount)
        if item.hand is not None:
            out["hand"] = item.hand
        return out
    if isinstance(item, Insure):
        return {"type": "insure", "seat": item.seat, "amount": str(item.amount)}
    if isinstance(item, CloseInsurance):
        return {"type": "close_insurance"}
    if isinstance(item, FinishRound):
        return {"type": "finish"}
    if isinstance(item, ConfirmFelt):
        return {"type": "confirm_felt"}
    if isinstance(item, NewShoe):
        return {"type": "shuffle"}
    if isinstance(item, AcknowledgeAlarm):
        return {"type": "ack", "id": item.alarm_id}
    if isinstance(item, VoidRound):
        return {"type": "void", "reason": item.reason, "supervisor": item.supervisor}
    if isinstance(item, SignIn):
        return {"type": "sign_in", "dealer": item.dealer}
    if isinstance(item, SignOut):
        return {"type": "sign_out"}
    if isinstance(item, AnswerQuestion):
        return {"type": "answer", "question": item.question, "choice": item.choice}
    if isinstance(item, KeyCard):
        out = {"type": "card", "card": item.card.code}
        if item.spot is not None:
            out["to"] = "dealer" if item.spot.is_dealer else {"seat": item.spot.seat,
                                                              "hand": item.spot.hand}
        return out
    if isinstance(item, CorrectCard):
        out = {"type": "correct", "card": item.card.code, "at": item.at.to_json()}
        if item.index is not None:
            out["index"] = item.index
        if item.was is not None:
            out["was"] = item.was.code
        out["supervisor"] = item.supervisor
        return out
    raise TypeError(f"not a dealer input: {item!r}")


def post_touch(screen: ScreenServer, item: DealerInput | NewShoe, pin: str | None = None) -> None:
    """Send a dealer input to ``screen`` exactly as its paired page does (``pin``: see
    :func:`touch_json`); a refusal raises DemoError."""
    reply = send_touch(screen.url, json.dumps(touch_json(item, pin)).encode(),
                       screen.access.cookie_header(), pinned_context(screen.tls))
    if not reply.accepted:
        raise DemoError(f"the screen refused a {type(item).__name__} (HTTP {reply.status}): "
                        f"{reply.body.decode('utf-8', 'replace')}")


class DemoTable:
    """Everything the demo runs, started and stopped together.

    The folders it makes for itself, the shoe's link and (without ``options.recording_dir``)
    the recording and its evidence folder beside it, lie in one temporary folder, removed when
    it stops and when its start is refused; a recording directory it was given is never
    removed."""

    def __init__(
        self, options: DemoOptions, camera: FeltCamera | None = None, camera_note: str = ""
    ):
        from dealer_assist.shoe.simulator import PtyLink, ShoeSimulator

        if not options.shoe and camera is None:
            raise DemoError("a hand-held game (no shoe) is read by the camera alone, and there"
                            f" is none{': ' + camera_note if camera_note else ''}")
        self.options = options
        self.rules = RuleSet.from_spec(options.rules)
        self._scratch = tempfile.TemporaryDirectory(prefix="dealer-assist-demo-")
        scratch = Path(self._scratch.name)
        self.recording_dir = Path(options.recording_dir or scratch / "recording")
        self.recording_is_temporary = not options.recording_dir
        self.evidence = EvidenceFiles.beside(self.recording_dir)  # key and anchors
        self.simulator: ShoeSimulator | None = None
        try:
            shoe_url = ""
            if options.shoe:
                self.simulator = ShoeSimulator(PtyLink(link_path=str(scratch / "shoe")))
                shoe_url = self.simulator.link.url
            self.camera = camera

            def make_sources(shoe_position: tuple[int, int] | None) -> list[Source]:
                sources: list[Source] = []
                if shoe_url:
                    sources.append(SerialShoeSource(shoe_url, defer_ack=True,
                                                    resume_from=shoe_position))
                if camera is not None:
                    sources.append(camera)
                return sources

            # the staff who sign in and approve, registered afresh each run outside the recording
            registry = StaffRegistry(scratch / "demo.staff.json")
            self._pins = {staff_id: f"{secrets.randbelow(10**6):06d}"
                          for staff_id in (DEMO_DEALER, DEMO_SUPERVISOR)}
            registry.add(DEMO_DEALER, "dealer", self._pins[DEMO_DEALER])
            registry.add(DEMO_SUPERVISOR, "supervisor", self._pins[DEMO_SUPERVISOR])
            # a table's recording directory: round logs, alarms, the journal and the store
            self.table = assemble(TableSetup(
                self.recording_dir, DEMO_TABLE, options.rules,
                shoe_protocol="dealer-assist" if options.shoe else None,
                has_camera=camera is not None, host=options.host, port=options.port,
                tls=options.tls,
                notes={"camera": camera_note} if camera is None and camera_note else {},
                round_prefix=f"demo-{time.strftime('%Y%m%d-%H%M%S', time.gmtime())}",
                evidence=self.evidence, camera_wait_s=options.camera_wait_s,
                max_camera_lag_s=options.max_camera_lag_s,
            ), make_sources, staff=StaffDesk(registry))
        except BaseException:
            self._release()
            raise
        self.loop = self.table.loop
        self.runner = self.table.runner
        self.screen = self.table.screen
        self.world = SimulatedTable(self.rules, list(DEFAULT_PLAYERS), seed=options.seed)
        self.world.camera_sees = camera is not None
        self.stopped = threading.Event()
        self._cards_dealt = 0  # cards the simulated dealer has drawn from the shoe

    @property
    def screen_url(self) -> str:
        return self.screen.url

    def start(self) -> DemoTable:
        """Start the shoe and the table and sign the simulated dealer in; a start refused (the
        screen's port in use) leaves nothing running and nothing of the demo's own on disk."""
        try:
            if self.simulator is not None:
                self.simulator.start()
            self.table.start()  # refused, it has closed what it opened
        except BaseException:
            self._release()
            raise
        try:
            if self.table.opened.resumed is not None:  # a demo stopped mid-round in this folder
                self.runner.submit(VoidRound("the demo deals afresh: a round left from an "
                                             "earlier run"))
            self.touch(SignIn(DEMO_DEALER))
            if not self.runner.wait_until(lambda loop: loop.dealer == DEMO_DEALER,
                                          self.options.card_timeout_s):
                raise DemoError(f"the simulated dealer {DEMO_DEALER} could not sign in")
        except BaseException:
            self.stop()
            raise
        return self

    def touch(self, item: DealerInput | NewShoe) -> None:
        """Touch the screen as the simulated dealer, with the PIN of the staff id ``item``
        names (the dealer signing in, the supervisor approving a void or a correction)."""
        named = getattr(item, "supervisor", None) or getattr(item, "dealer", None)
        post_touch(self.screen, item, None if named is None else self._pins[named])

    def stop(self) -> None:
        self.stopped.set()
        try:
            self.table.stop()
        finally:
            self._release()

    def _release(self) -> None:
        """Stop the shoe and remove the demo's temporary folder."""
        try:
            if self.simulator is not None:
                self.simulator.stop()  # and closes its link
        finally:
            self._scratch.cleanup()

    def __enter__(self) -> DemoTable:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def deliver(self, channel: str, item: TableInput, pace_s: float = 0.0) -> None:
        """Make one physical step happen: a card out of the shoe, something on the felt, or a
        dealer's touch; then wait, as a dealer watching the screen would, until the table has
        taken it in (a card recorded, a split or the hole card seen, the cleared felt seen)."""
        timeout = self.options.card_timeout_s
        dealt = self._cards_dealt

        def all_recorded(loop: TableLoop) -> bool:
            return loop.cards_committed >= dealt

        if isinstance(item, NewShoe):
            if self.simulator is not None:
                self.simulator.load_shoe(item.decks)
            else:
                self.touch(NewShoe(0))  # a hand-held game's fresh pack
            return
        if channel == "dealer":
            # A touch follows what the dealer has seen recorded: every card dealt so far.
            self._until(all_recorded, timeout)
            self.touch(item)  # type: ignore[arg-type]
            if isinstance(item, FinishRound) and self.camera is not None:
                self.camera.show(item)  # the dealer clears the felt
                if self.world.camera_sees:
                    self._wait(lambda: self.camera.sees_empty_felt, timeout)  # type: ignore[union-attr]
            return
        if isinstance(item, ShoeCard):
            self._cards_dealt += 1
            dealt = self._cards_dealt
            if self.simulator is None:
                return  # hand-held: pitched from the dealer's hand, seen where it lands
            self.simulator.draw(item.card)
            if self.world.camera_sees:
                return  # recorded once the camera sees where it lands
            self._until(all_recorded, timeout)
        elif self.camera is None or not self.world.camera_sees:
            return
        else:
            self.camera.show(item)
            hand_held = self.simulator is None
            if isinstance(item, FeltCard) and item.card is not None:
                if not self._until(all_recorded, timeout):
                    if hand_held:
                        self._key(item)
                elif hand_held:
                    self._correct(item.card, item.spot)
            elif isinstance(item, FeltStacks):
                def split(loop: TableLoop) -> bool:
                    return _hands_at(loop, item.seat) >= item.stacks

                if not self.runner.wait_until(split, timeout) and hand_held:
                    self.touch(Decide(item.seat, Action.SPLIT))
                    self.runner.wait_until(split, timeout)
            elif isinstance(item, HoleCardShown):
                # A dealer turns the hole card and lets it be seen before drawing: a card drawn
                # before the camera has read the hole card would be taken for it.
                self._wait(lambda: self.camera.sees_hole_card, timeout)  # type: ignore[union-attr]

                def turned(loop: TableLoop) -> bool:
                    return not loop.round_open or (_hole_known(loop)
                                                   and not _players_deciding(loop))

                if (not self.runner.wait_until(turned, timeout) and hand_held
                        and item.card is not None and not _hole_known(self.loop)):
                    self.touch(KeyCard(item.card, DEALER_SPOT))
                    self.runner.wait_until(turned, timeout)
                elif hand_held and item.card is not None and _hole_known(self.loop):
                    self._correct(item.card, DEALER_SPOT)
            else:
                return
        if pace_s:
            self.stopped.wait(pace_s)

    def _until(self, condition: Callable[[TableLoop], bool], timeout: float) -> bool:
        """Wait until ``condition`` holds, answering each question the table asks meanwhile as
        the dealer would: from what truly happened. A question it cannot answer so (the table
        asks about a card it never dealt) is left open: the round is voided in the end."""
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0 or self.stopped.is_set():
                return False
            if self.runner.wait_until(lambda loop: condition(loop) or loop.question is not None,
                                      left):
                question = self.loop.question
                if question is None:
                    return True
                choice = true_choice(question, self.world.placed)
                if choice is None:
                    return self.runner.wait_until(condition, deadline - time.monotonic())
                self.touch(AnswerQuestion(question.id, choice))
                self.runner.wait_until(_answered(question.id),
                                       max(0.0, deadline - time.monotonic()))

    def _key(self, felt: FeltCard) -> None:
        """Hand-held: the camera never read the card that landed; the dealer keys it, touching
        the double first when it lies crosswise (a keyed card is otherwise taken as a hit)."""
        assert felt.card is not None
        if felt.sideways and felt.spot.seat is not None:
            self.touch(Decide(felt.spot.seat, Action.DOUBLE, hand=felt.spot.hand))
        self.touch(KeyCard(felt.card, felt.spot))
        dealt = self._cards_dealt
        self._until(lambda loop: loop.cards_committed >= dealt, self.options.card_timeout_s)

    def _correct(self, card: Card, spot: CardTarget) -> None:
        """Hand-held: the dealer looks at the screen, and a card it shows otherwise than the
        card lying there (the latest at that place) is corrected."""
        at = CardTarget() if spot.is_dealer else CardTarget(spot.seat, spot.hand)
        if _latest_at(self.loop, at) in (None, card.code):
            return
        self.touch(CorrectCard(card, at, supervisor=DEMO_SUPERVISOR))
        self.runner.wait_until(lambda loop: _latest_at(loop, at) == card.code,
                               self.options.card_timeout_s)

    def _wait(self, condition: Callable[[], bool], timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        while not condition():
            if time.monotonic() > deadline or self.stopped.is_set():
                return False
            time.sleep(0.02)
        return True

    def play_round(self, number: int, pace_s: float) -> Settlement | None:
        """Deal one round through the real pipeline; the loop's settlement. A round the table
        could not complete as dealt (its alarms say why) is voided, as the floor would, so the
        next round can be dealt; then None."""
        rounds_before = self.loop.rounds_played
        for channel, item in self.world.round(number):
            if self.stopped.is_set():
                return None
            self.deliver(channel, item, pace_s)
        self.runner.wait_until(
            lambda loop: loop.rounds_played > rounds_before, self.options.card_timeout_s
        )
        if self.loop.rounds_played > rounds_before:
            return self.loop.last_settlement
        engine = self.loop.engine
        if self.loop.round_open and engine is not None:
            why = f"{VOID_REASON} ({engine.describe()})"
            self.touch(VoidRound(why if len(why) <= 200 else VOID_REASON, DEMO_SUPERVISOR))
            self.runner.wait_until(lambda loop: not loop.round_open, self.options.card_timeout_s)
        return None


class FeltCamera(Source, Protocol):
    """A camera the demo can show physical steps to (the rendered synthetic camera, or in tests a
    scripted stand-in): ``show`` receives what happened on the felt; ``sees_hole_card`` and
    ``sees_empty_felt`` say the camera has seen the hole card turned and the felt cleared."""

    def show(self, item: TableInput) -> None: ...

    @property
    def sees_hole_card(self) -> bool: ...

    @property
    def sees_empty_felt(self) -> bool: ...


def true_choice(question: OpenQuestion, placed: Iterable[Placement]) -> int | None:
    """The answer of a dealer who saw where the card asked about went: the choice that takes
    it to its true place by the decision that truly asked for it. The card is found by its
    place in the shoe when the shoe numbered it, else as the latest dealt of its code."""
    held = question.held
    candidates = [p for p in placed if p.card == held.card]
    if held.origin is not None:
        candidates = [p for p in candidates if p.shoe_index == held.origin.index]
    if not candidates:
        return None
    placement = candidates[-1]
    spot = placement.spot
    truth = DEALER if spot.is_dealer else CardTarget(spot.seat, spot.hand)
    for index, reading in enumerate(question.choices):
        if reading.target == truth and reading.asked_by is placement.asked:
            return index
    return None


def _answered(question: int) -> Callable[[TableLoop], bool]:
    return lambda loop: loop.question is None or loop.question.id != question


def _seat_hands(loop: TableLoop, seat: int | None) -> tuple[HandState, ...]:
    """The hands at ``seat`` (none without a round or a bet there)."""
    engine = loop.engine
    return () if engine is None or seat is None else engine.hands(seat)


def _hands_at(loop: TableLoop, seat: int) -> int:
    return len(_seat_hands(loop, seat))


def _hole_known(loop: TableLoop) -> bool:
    """The dealer's hole card is recorded face up (from the shoe, or turned and read)."""
    cards = () if loop.engine is None else loop.engine.dealer_cards()
    return len(cards) >= 2 and cards[1] is not None


def _latest_at(loop: TableLoop, at: CardTarget) -> str | None:
    """The code of the latest card recorded at ``at`` (None: none, or face down)."""
    engine = loop.engine
    if engine is None:
        return None
    cards: tuple[Card | None, ...]
    if at.is_dealer:
        cards = engine.dealer_cards()
    else:
        hands = _seat_hands(loop, at.seat)
        cards = hands[at.hand].cards if at.hand is not None and at.hand < len(hands) else ()
    latest = cards[-1] if cards else None
    return None if latest is None else latest.code


def _players_deciding(loop: TableLoop) -> bool:
    return loop.engine is not None and loop.engine.acting() is not None


def run_demo(options: DemoOptions, out: Callable[[str], None] = print) -> None:
    """Play ``options.rounds`` rounds (forever when None), printing each settlement."""
    camera, note = open_demo_camera(options)
    with DemoTable(options, camera=camera, camera_note=note) as demo:
        exposed = exposure_warning(options.host, options.tls is not None)
        if exposed is not None:
            logger.warning("%s", exposed)
            out(f"warning: {exposed}")
        out(f"dealer's screen: {demo.screen_url}")
        # the simulated dealer touches as the paired screen; a browser pairs with this once
        out(f"pair a browser to watch and touch (open once; the code works once): "
            f"{demo.screen.pairing_url()}")
        if demo.recording_is_temporary:
            out(f"recording to: {demo.recording_dir} (temporary, with its key and anchor log: "
                "removed when the demo ends; --record DIR keeps one)")
        else:
            out(f"recording to: {demo.recording_dir} (dealer-assist replay "
                f"{demo.recording_dir} --verify --key {demo.evidence.public_key} --anchor-log "
                f"{demo.evidence.anchor_log} re-settles and verifies it)")
        if not options.shoe:
            out(f"mode: camera only (a hand-held game: no shoe; overhead camera: deck "
                f"{options.camera_deck} rendered on felt and read by the card detector; a card "
                "it cannot read is keyed, one it misreads corrected, by the dealer)")
        elif camera is not None:
            out(f"mode: shoe + camera (shoe simulator on a pty; overhead camera: deck "
                f"{options.camera_deck} rendered on felt and read by the card detector)")
        else:
            out(f"mode: shoe only (shoe simulator on a pty; camera {note})")
        number = failures = 0
        while options.rounds is None or number < options.rounds:
            number += 1
            settlement = demo.play_round(number, options.pace_s)
            if settlement is None:
                problems = [a.text for a in demo.loop.active_alarms()] + demo.runner.errors
                failures += 1
                if failures == FAILURES_ALLOWED:
                    raise DemoError(f"{failures} rounds in a row did not settle; round {number}: "
                                    f"{'; '.join(problems) or '?'}")
                out(f"round {number} did not settle: {'; '.join(problems) or '?'}; dealing on\n")
                continue
            failures = 0
            out(settlement_text(settlement))
            out(round_report(demo.loop, settlement.round_id))
            out("")
            if options.pause_after_round_s:
                demo.stopped.wait(options.pause_after_round_s)


def round_report(loop: TableLoop, round_id: str | None) -> str:
    """The dealer's questions and the alarms of a settled round, in one line."""
    alarms = [a for a in loop.alarms if a.round_id == round_id]
    asked = [a for a in alarms if a.kind is AlarmKind.DEALER_ASKED]
    others = [a for a in alarms if a.kind is not AlarmKind.DEALER_ASKED]
    text = f"questions: {loop.round_questions}; alarms: {len(others)}"
    details = [a.text for a in asked] + [f"{a.kind.value}: {a.text}" for a in others]
    return text + "".join(f"\n  {line}" for line in details)


def open_demo_camera(options: DemoOptions) -> tuple[FeltCamera | None, str]:
    """The synthetic camera, or None and why it cannot run (``camera="on"``: DemoError)."""
    if options.camera == "off":
        return None, "off (--camera off)"
    from dealer_assist.table.simulation.synthetic_camera import demo_camera

    try:
        return demo_camera(design_name=options.camera_deck, seed=options.seed,
                           frame_quality=options.frame_quality), ""
    except ValueError as error:  # the detector's ModelError, the artwork's ArtworkError
        if options.camera == "on":
            raise DemoError(f"--camera on: {error}") from None
        return None, f"unavailable: {error}"


class DemoError(ValueError):
    """A demo round that the live pipeline could not settle (a bug: the demo's play is legal)."""
