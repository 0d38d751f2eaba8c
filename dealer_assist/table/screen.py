"""The dealer's screen: a FastAPI app served by the table process, pushed over a WebSocket.

``GET /`` is the page (HTML, JS and CSS shipped in this package: no CDN, works offline),
``GET /api/view`` the current view, ``WS /ws`` pushes every new view, and ``POST /api/input``
takes the dealer's touches (bets, decisions, insurance, finish, acknowledge, void, a card
keyed or corrected, sign in and out) as JSON. A touch carrying a PIN (a dealer's sign-in, a
supervisor's approval of a void or a correction) is checked here by the table's
:class:`~dealer_assist.table.staff.StaffDesk`; only the outcome and the id go on to the table.
"""

from __future__ import annotations

import asyncio
import logging
import socket
import threading
import unicodedata
from decimal import Decimal
from importlib import resources
from typing import Any

import uvicorn
from fastapi import FastAPI, HTTPException, Request, WebSocket, WebSocketDisconnect
from fastapi.responses import HTMLResponse
from fastapi.staticfiles import StaticFiles

from dealer_assist.logs import guarded
from dealer_assist.roundlog import StrictJSONError, load_strict
from dealer_assist.rules import Action, Card, CardTarget, MoneyError, parse_money
from dealer_assist.table.runner import TableRunner
from dealer_assist.table.sources import (
    AcknowledgeAlarm,
    AnswerQuestion,
    CloseInsurance,
    ConfirmFelt,
    CorrectCard,
    DealerInput,
    Decide,
    FinishRound,
    Insure,
    KeyCard,
    NewShoe,
    PlaceBet,
    SignIn,
    SignOut,
    StaffRefused,
    VoidRound,
)
from dealer_assist.table.staff import Attested, StaffDesk, StaffError, check_id, check_pin

logger = logging.getLogger(__name__)
STATIC = resources.files("dealer_assist.table") / "static"


class TouchError(ValueError):
    """A touch message the screen cannot turn into a dealer input (names the field)."""


def _int_field(message: dict[str, Any], key: str) -> int:
    value = message.get(key)
    if not isinstance(value, int) or isinstance(value, bool):
        raise TouchError(f"'{key}' must be a whole number, got {value!r}")
    return value


#: The longest player name or void reason taken: each is shown on every screen update.
MAX_TEXT = 200


def _text_field(message: dict[str, Any], key: str) -> str | None:
    """An optional text field: text of at most MAX_TEXT characters, without control characters
    or lone surrogates (which no screen update can carry)."""
    value = message.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        raise TouchError(f"'{key}' must be text, got {value!r}")
    if len(value) > MAX_TEXT:
        raise TouchError(f"'{key}' must be at most {MAX_TEXT} characters, got {len(value)}")
    if any(unicodedata.category(c) in ("Cc", "Cs") for c in value):
        raise TouchError(f"'{key}' must not hold control characters or lone surrogates, got"
                         f" {value!r}")
    return value


def _money_field(message: dict[str, Any], key: str) -> Decimal:
    try:
        return parse_money(message.get(key), key)
    except MoneyError as error:
        raise TouchError(str(error)) from None


def _card_field(message: dict[str, Any], key: str = "card") -> Card:
    try:
        return Card.parse(message.get(key))
    except ValueError as error:
        raise TouchError(f"'{key}' must be a card code such as \"7H\": {error}") from None


def _target_field(raw: object, key: str) -> CardTarget:
    try:
        return CardTarget.parse(raw)
    except ValueError as error:
        raise TouchError(str(error).replace("'to'", f"'{key}'")) from None


def read_touch(body: bytes) -> object:
    """A touch's JSON, read as a round log is (:func:`~dealer_assist.roundlog.load_strict`): an
    amount given twice, a float or NaN would otherwise be taken as another amount than sent."""
    try:
        return load_strict(body)
    except StrictJSONError as error:
        raise TouchError(str(error)) from None


def _staff_field(message: dict[str, Any], key: str) -> str:
    try:
        return check_id(message.get(key), f"'{key}'")
    except StaffError as error:
        raise TouchError(str(error)) from None


def _attested(message: dict[str, Any], item: DealerInput, staff_id: str, role: str,
              action: str) -> Attested:
    """``item``, to go on once ``staff_id``'s PIN (the touch's ``pin``) is checked."""
    try:
        pin = check_pin(message.get("pin"))
    except StaffError as error:
        raise TouchError(f"'pin': {error}") from None
    return Attested(item, staff_id, pin, (role,), action)


Touch = DealerInput | NewShoe | Attested


def parse_touch(message: object) -> Touch:
    """A dealer input from the page's JSON (``{"type": "bet", "seat": 2, "amount": "25"}``...);
    a touch carrying a PIN (sign in, void, correct) as :class:`Attested`, to be checked."""
    if not isinstance(message, dict):
        raise TouchError(f"a touch must be a JSON object, got {type(message).__name__}")
    kind = message.get("type")
    if kind == "bet":
        wager = message.get("wager", "main")
        if wager not in ("main", "match"):
            raise TouchError(f"'wager' must be \"main\" or \"match\", got {wager!r}")
        return PlaceBet(
            _int_field(message, "seat"),
            _money_field(message, "amount"),
            wager,
            _text_field(message, "player"),
        )
    if kind == "decide":
        try:
            action = Action.parse(message.get("action"))
        except ValueError as error:
            raise TouchError(str(error)) from None
        amount = message.get("amount")
        hand = message.get("hand")
        return Decide(
            _int_field(message, "seat"),
            action,
            None if amount is None else _money_field(message, "amount"),
            None if hand is None else _int_field(message, "hand"),
        )
    if kind == "insure":
        return Insure(_int_field(message, "seat"), _money_field(message, "amount"))
    if kind == "close_insurance":
        return CloseInsurance()
    if kind == "finish":
        return FinishRound()
    if kind == "confirm_felt":
        return ConfirmFelt()
    if kind == "shuffle":
        return NewShoe(0, touched=True)  # a hand-held game's new pack: the count starts again
    if kind == "sign_in":
        dealer = _staff_field(message, "dealer")
        return _attested(message, SignIn(dealer), dealer, "dealer", "sign in")
    if kind == "sign_out":
        return SignOut()
    if kind == "ack":
        return AcknowledgeAlarm(_int_field(message, "id"))
    if kind == "card":
        to = message.get("to")
        target = None if to is None else _target_field(to, "to")
        return KeyCard(_card_field(message),
                       None if target is None else CardTarget(target.seat, target.hand or 0))
    if kind == "correct":
        at = message.get("at")
        if at is None:
            raise TouchError("'at' must say where the card lies: \"dealer\" or {\"seat\": N}")
        index = None if message.get("index") is None else _int_field(message, "index")
        if index is not None and index < 0:
            raise TouchError(f"'index' must be 0 (the first card there) or more, got {index}")
        was = None if message.get("was") is None else _card_field(message, "was")
        card, target = _card_field(message), _target_field(at, "at")
        supervisor = _staff_field(message, "supervisor")
        return _attested(message, CorrectCard(card, target, index, was, supervisor), supervisor,
                         "supervisor", "correction")
    if kind == "answer":
        return AnswerQuestion(_int_field(message, "question"), _int_field(message, "choice"))
    if kind == "void":
        reason = _text_field(message, "reason")
        if reason is None or not reason.strip():
            raise TouchError("'reason' must say why the round is voided")
        supervisor = _staff_field(message, "supervisor")
        return _attested(message, VoidRound(reason.strip(), supervisor), supervisor,
                         "supervisor", "void")
    raise TouchError(
        f"unknown touch type {kind!r} (one of bet, decide, insure, close_insurance, finish, "
        "confirm_felt, shuffle, ack, void, card, correct, answer, sign_in, sign_out)"
    )


async def admit(touch: Touch, staff: StaffDesk | None, runner: TableRunner
                ) -> DealerInput | NewShoe:
    """The input ``touch`` stands for, once any PIN it carries is checked: a PIN refused is
    handed to the table as :class:`StaffRefused` (recorded, without the PIN) and answered 403,
    or 429 with ``Retry-After`` while the id must wait (the PIN not tried)."""
    if not isinstance(touch, Attested):
        return touch
    if staff is None:
        raise HTTPException(status_code=403, detail="this table has no staff registry: no PIN"
                            " can be checked")
    refusal = await asyncio.to_thread(staff.check, touch.staff_id, touch.pin, touch.roles)
    if refusal is None:
        return touch.item  # type: ignore[no-any-return]
    if not refusal.throttled:
        runner.submit(StaffRefused(touch.staff_id, touch.action, refusal.why))
        raise HTTPException(status_code=403, detail=refusal.why)
    raise HTTPException(status_code=429, detail=refusal.why,
                        headers={"Retry-After": str(max(1, round(refusal.wait_s)))})


#: How long a touch's answer waits for the touch to be journaled.
TOUCH_DURABLE_S = 5.0


def create_app(runner: TableRunner, staff: StaffDesk | None = None) -> FastAPI:
    """The screen's web app, showing ``runner``'s table and feeding touches into it; ``staff``
    checks the PINs touches carry (None: every such touch is refused)."""
    app = FastAPI(title="dealer-assist table", docs_url=None, redoc_url=None, openapi_url=None)
    clients: set[tuple[asyncio.AbstractEventLoop, asyncio.Queue[dict[str, Any]]]] = set()
    clients_lock = threading.Lock()

    def push(view: dict[str, Any]) -> None:
        with clients_lock:
            targets = list(clients)
        for event_loop, inbox in targets:
            event_loop.call_soon_threadsafe(_replace_latest, inbox, view)

    runner.subscribe(push)
    app.mount("/static", StaticFiles(directory=str(STATIC)), name="static")

    @app.get("/", response_class=HTMLResponse)
    def page() -> str:
        return (STATIC / "index.html").read_text(encoding="utf-8")

    @app.get("/api/view")
    def current_view() -> dict[str, Any]:
        return runner.view()

    @app.post("/api/input")
    async def touch(request: Request) -> dict[str, Any]:
        try:
            touched = parse_touch(read_touch(await request.body()))
        except TouchError as error:
            raise HTTPException(status_code=400, detail=str(error)) from None
        item = await admit(touched, staff, runner)
        durable = runner.submit(item)
        # answered once the touch is on disk: a touch the screen accepted is never lost
        if not await asyncio.to_thread(durable.wait, TOUCH_DURABLE_S):
            raise HTTPException(
                status_code=503,
                detail="the touch was taken but the table's journal could not be written: "
                       "call the technician")
        return {"accepted": type(item).__name__}

    @app.websocket("/ws")
    async def updates(socket: WebSocket) -> None:
        await socket.accept()
        inbox: asyncio.Queue[dict[str, Any]] = asyncio.Queue(maxsize=1)
        entry = (asyncio.get_running_loop(), inbox)
        with clients_lock:
            clients.add(entry)
        try:
            await socket.send_json(runner.view())
            while True:
                await socket.send_json(await inbox.get())
        except (WebSocketDisconnect, RuntimeError):
            pass
        finally:
            with clients_lock:
                clients.discard(entry)

    return app


def _replace_latest(inbox: asyncio.Queue[dict[str, Any]], view: dict[str, Any]) -> None:
    """Keep only the newest view for a slow client: the screen shows state, not history."""
    while not inbox.empty():
        inbox.get_nowait()
    inbox.put_nowait(view)


class ScreenServer:
    """uvicorn serving the screen in a background thread; ``url`` once started."""

    def __init__(self, runner: TableRunner, host: str = "127.0.0.1", port: int = 8021,
                 staff: StaffDesk | None = None):
        config = uvicorn.Config(  # log_config None: uvicorn's lines go where the table's go
            create_app(runner, staff), host=host, port=port, log_level="warning", access_log=False,
            log_config=None,
        )
        self._server = uvicorn.Server(config)
        self._thread: threading.Thread | None = None
        self.host = host
        self.port = port

    @property
    def url(self) -> str:
        host = "127.0.0.1" if self.host in ("0.0.0.0", "") else self.host
        return f"http://{f'[{host}]' if ':' in host else host}:{self.port}/"

    def start(self, timeout: float = 10.0) -> ScreenServer:
        """Listen (here, so that a refusal says why: the port in use, an address this machine
        does not have, a name that does not resolve), then serve from a background thread."""
        try:
            family = socket.getaddrinfo(self.host or None, self.port, type=socket.SOCK_STREAM,
                                        flags=socket.AI_PASSIVE)[0][0]
            listening = socket.create_server((self.host, self.port), family=family)
        except (OSError, ValueError, TypeError) as error:  # TypeError: a NUL in the host
            raise OSError(f"the screen could not listen on {self.host!r}:{self.port}: {error}"
                          ) from None
        self.port = listening.getsockname()[1]
        # an exception that ends it is logged; the table sees it stopped (``running``)
        serve = guarded(lambda: self._server.run(sockets=[listening]), "the dealer's screen",
                        log=logger)
        self._thread = threading.Thread(target=serve, name="screen", daemon=True)
        self._thread.start()
        waited = 0.0
        while not self._server.started:
            if not self._thread.is_alive():
                raise OSError(f"the screen did not start on {self.host}:{self.port}")
            threading.Event().wait(0.02)
            waited += 0.02
            if waited > timeout:
                raise OSError(f"the screen did not start on {self.host}:{self.port}")
        return self

    @property
    def running(self) -> bool:
        """Whether the screen is still served (False once its thread has ended, or stopped)."""
        return self._thread is not None and self._thread.is_alive()

    def stop(self) -> None:
        self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(5)
