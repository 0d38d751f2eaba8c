"""The dealer's screen: a FastAPI app served by the table process, pushed over a WebSocket.

``GET /`` is the page (HTML, JS and CSS shipped in this package: no CDN, works offline),
``GET /pair?code=...`` pairs the kiosk's browser once (:mod:`~dealer_assist.table.screen_access`),
and only the paired screen's cookie opens ``GET /api/view`` (the current view), ``WS /ws`` (every
new view, pushed) and ``POST /api/input`` (the dealer's touches: bets, decisions, insurance,
finish, acknowledge, void, a card keyed or corrected, sign in and out, as JSON). Before any of it,
:class:`~dealer_assist.webguard.RequestGuard` refuses foreign hosts and origins, bodies that are
not JSON and bodies over :data:`~dealer_assist.webguard.MAX_BODY` bytes. A touch carrying a PIN
(a dealer's sign-in, a supervisor's approval of a void or a correction) is checked here by the
table's :class:`~dealer_assist.table.staff.StaffDesk`; only the outcome and the id go on to the
table.
"""

from __future__ import annotations

import asyncio
import logging
import math
import socket
import threading
import unicodedata
from collections.abc import Callable, Coroutine
from decimal import Decimal
from importlib import resources
from typing import Any

import anyio
import uvicorn
from fastapi import Depends, FastAPI, HTTPException, Request, WebSocket, WebSocketDisconnect
from fastapi.responses import HTMLResponse, RedirectResponse
from fastapi.staticfiles import StaticFiles

from dealer_assist.connection_limits import (
    BOUNDED_LOOP,
    HEADER_TIMEOUT_S,
    BackpressuredWebSocket,
    bounded_h11,
    raise_open_file_limit,
)
from dealer_assist.logs import Throttled, guarded
from dealer_assist.roundlog import StrictJSONError, load_strict
from dealer_assist.rules import Action, Card, CardTarget, MoneyError, parse_money
from dealer_assist.table.chips import ChipSet
from dealer_assist.table.runner import TableRunner
from dealer_assist.table.screen_access import COOKIE, ScreenAccess
from dealer_assist.table.screen_site import (
    TlsFiles,
    screen_site,
    shown_host,
    url_of,
)
from dealer_assist.table.screen_view import PaceMeter, for_screen
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
from dealer_assist.webguard import ASGIApp, Refused, RequestGuard, Site, refuse_websocket

logger = logging.getLogger(__name__)
STATIC = resources.files("dealer_assist.table") / "static"


class TouchError(ValueError):
    """A touch message the screen cannot turn into a dealer input (names the field)."""


#: The largest whole number a touch may carry (a seat, a hand, an alarm or question id, a
#: choice, a shoe index): far above any real one, so that a number thousands of digits long is
#: refused before it reaches an alarm's text or the journal.
MAX_TOUCH_NUMBER = 2**31 - 1


def _int_field(message: dict[str, Any], key: str) -> int:
    value = message.get(key)
    if not isinstance(value, int) or isinstance(value, bool):
        raise TouchError(f"'{key}' must be a whole number, got {str(value)[:40]!r}")
    if abs(value) > MAX_TOUCH_NUMBER:
        raise TouchError(f"'{key}' is too large a number (the most is {MAX_TOUCH_NUMBER})")
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
        target = CardTarget.parse(raw)
    except ValueError as error:
        raise TouchError(str(error).replace("'to'", f"'{key}'")) from None
    if any(abs(number or 0) > MAX_TOUCH_NUMBER for number in (target.seat, target.hand)):
        raise TouchError(f"'{key}' names too large a number (the most is {MAX_TOUCH_NUMBER})")
    return target


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
        return _attested(message, CorrectCard(card, target, index, was, supervisor,
                                              _text_field(message, "round")),
                         supervisor, "supervisor", "correction")
    if kind == "answer":
        return AnswerQuestion(_int_field(message, "question"), _int_field(message, "choice"))
    if kind == "void":
        reason = _text_field(message, "reason")
        if reason is None or not reason.strip():
            raise TouchError("'reason' must say why the round is voided")
        supervisor = _staff_field(message, "supervisor")
        return _attested(message, VoidRound(reason.strip(), supervisor,
                                            _text_field(message, "round")),
                         supervisor, "supervisor", "void")
    raise TouchError(
        f"unknown touch type {kind!r} (one of bet, decide, insure, close_insurance, finish, "
        "confirm_felt, shuffle, ack, void, card, correct, answer, sign_in, sign_out)"
    )


def moved_on(message: object, view: dict[str, Any]) -> str | None:
    """Why a touch naming a round (``"round"``: the round the screen showed when the void or
    the correction was begun, its approval band open while the supervisor came over) may not
    be taken: that round is no longer the table's (None: it is, or the touch names none)."""
    named = _text_field(message, "round") if isinstance(message, dict) else None
    shown = (view.get("round") or {}).get("round")
    if named is None or named == shown:
        return None
    now = f"round {shown} is" if shown else "no round is"
    return f"round {named} is no longer in play ({now}): the touch was not taken"


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
#: The largest WebSocket message taken from a client (the page sends none).
WS_MAX_MESSAGE = 4096
#: How long a stopping screen lets requests in flight finish before closing them (a touch's
#: wait for the journal fits).
STOP_GRACE_S = math.ceil(TOUCH_DURABLE_S) + 1


#: What an unpaired browser or client is told.
NOT_PAIRED = ("this screen is not paired with the table: open the pairing URL the table printed "
              "at start in the screen's browser")
#: The page's own headers: nothing loads from elsewhere, and no other site may frame it.
PAGE_HEADERS = {"Content-Security-Policy": "default-src 'self'; frame-ancestors 'none'",
                "X-Frame-Options": "DENY", "Cache-Control": "no-store"}


def create_app(runner: TableRunner, access: ScreenAccess, site: Callable[[], Site],
               staff: StaffDesk | None = None, chips: ChipSet | None = None) -> ASGIApp:
    """The screen's web app, showing ``runner``'s table to the screen ``access`` pairs and
    feeding its touches in, behind a :class:`~dealer_assist.webguard.RequestGuard` for
    ``site()``; ``staff`` checks the PINs touches carry (None: every such touch is refused);
    ``chips``: the table's chips, each payout is broken down into, and the bet row's buttons
    (default: DEFAULT_CHIPS)."""
    app = FastAPI(title="dealer-assist table", docs_url=None, redoc_url=None, openapi_url=None)
    clients: set[tuple[asyncio.AbstractEventLoop, asyncio.Queue[dict[str, Any]]]] = set()
    clients_lock = threading.Lock()
    # WebSockets refused (no pairing) and closed (a message sent): a line a minute at most
    refusals = Throttled(logger)
    chip_set = chips or ChipSet.default()
    pace = PaceMeter()

    def shown(view: dict[str, Any]) -> dict[str, Any]:
        return for_screen(view, chip_set, pace.observe(view["rounds_played"]))

    def push(view: dict[str, Any]) -> None:
        with clients_lock:
            targets = list(clients)
        if not targets:
            pace.observe(view["rounds_played"])
            return
        page_view = shown(view)
        for event_loop, inbox in targets:
            event_loop.call_soon_threadsafe(_replace_latest, inbox, page_view)

    def paired(request: Request) -> None:
        if not access.paired(request.cookies.get(COOKIE)):
            raise HTTPException(status_code=401, detail=NOT_PAIRED)

    runner.subscribe(push)
    app.mount("/static", StaticFiles(directory=str(STATIC)), name="static")

    @app.get("/", response_class=HTMLResponse)
    def page() -> HTMLResponse:
        return HTMLResponse((STATIC / "index.html").read_text(encoding="utf-8"),
                            headers=PAGE_HEADERS)

    @app.get("/pair")
    def pair(code: str = "") -> RedirectResponse:
        if not access.redeem(code):
            raise HTTPException(status_code=403, detail=(
                "this pairing code is unknown or was used already: each code pairs one "
                "browser once (the table prints a new one each time it starts)"))
        logger.warning("the dealer's screen was paired (a pairing code was used)")
        cookie = access.set_cookie(secure=site().scheme == "https")
        return RedirectResponse("/", status_code=303, headers={"Set-Cookie": cookie})

    @app.get("/api/view", dependencies=[Depends(paired)])
    def current_view() -> dict[str, Any]:
        return shown(runner.view())

    @app.post("/api/input", dependencies=[Depends(paired)])
    async def touch(request: Request) -> dict[str, Any]:
        try:
            message = read_touch(await request.body())
            touched = parse_touch(message)
            stale = moved_on(message, runner.view())
        except TouchError as error:
            raise HTTPException(status_code=400, detail=str(error)) from None
        if stale is not None:  # before any PIN is tried: a touch for another round moves nothing
            raise HTTPException(status_code=409, detail=stale)
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
        if not access.paired(socket.cookies.get(COOKIE)):
            refusals.warning("not paired", "refused a WebSocket from %s: %s", socket.client,
                             NOT_PAIRED)
            await refuse_websocket(socket.send, Refused(401, NOT_PAIRED))
            return
        await socket.accept()
        inbox: asyncio.Queue[dict[str, Any]] = asyncio.Queue(maxsize=1)
        entry = (asyncio.get_running_loop(), inbox)
        with clients_lock:
            clients.add(entry)
        try:  # ends when the client or the server closes, not at the next view
            await _first_to_end(_push_views(socket, shown(runner.view()), inbox),
                                _until_closed(socket, refusals))
        finally:
            with clients_lock:
                clients.discard(entry)

    return RequestGuard(app, site)


async def _first_to_end(*jobs: Coroutine[Any, Any, None]) -> None:
    """Run ``jobs`` together until one of them ends; the others are cancelled."""
    async with anyio.create_task_group() as group:
        async def run(job: Coroutine[Any, Any, None]) -> None:
            await job
            group.cancel_scope.cancel()

        for job in jobs:
            group.start_soon(run, job)


async def _push_views(socket: WebSocket, view: dict[str, Any],
                      inbox: asyncio.Queue[dict[str, Any]]) -> None:
    """Send ``view``, then each newer one, until the connection fails."""
    try:
        await socket.send_json(view)
        while True:
            await socket.send_json(await inbox.get())
    except (WebSocketDisconnect, RuntimeError):
        pass


async def _until_closed(socket: WebSocket, refusals: Throttled) -> None:
    """Return once the client or the server closes the connection. The page sends nothing over
    it (touches go to /api/input): a client that sends a message is closed (1003), and
    ``refusals`` says so."""
    message = await socket.receive()
    if message["type"] != "websocket.disconnect":
        refusals.warning("sent a message", "closed a WebSocket from %s: it sent a message",
                         socket.client)
        try:
            await socket.close(code=1003,
                               reason="the screen takes no messages over its WebSocket")
        except (WebSocketDisconnect, RuntimeError):
            pass  # it went first


def _replace_latest(inbox: asyncio.Queue[dict[str, Any]], view: dict[str, Any]) -> None:
    """Keep only the newest view for a slow client: the screen shows state, not history."""
    while not inbox.empty():
        inbox.get_nowait()
    inbox.put_nowait(view)


class ScreenServer:
    """uvicorn serving the screen in a background thread; ``url`` and :meth:`pairing_url` once
    started. ``access``: who may drive it (default: credentials of this process only);
    ``name``: the name browsers open it at (e.g. its TLS certificate's); ``tls``: serve HTTPS;
    ``chips``: the table's chips (default: DEFAULT_CHIPS). Connections are bounded
    (:mod:`dealer_assist.connection_limits`: ``header_timeout_s`` for a request's headers)."""

    def __init__(self, runner: TableRunner, host: str = "127.0.0.1", port: int = 8021,
                 staff: StaffDesk | None = None, *, access: ScreenAccess | None = None,
                 name: str | None = None, tls: TlsFiles | None = None,
                 chips: ChipSet | None = None, header_timeout_s: float = HEADER_TIMEOUT_S):
        self.access = access or ScreenAccess.ephemeral()
        self.host = host
        self.port = port
        self.name = name
        self.tls = tls
        self.site = screen_site(host, port, name, tls is not None)
        config = uvicorn.Config(  # log_config None: uvicorn's lines go where the table's go
            create_app(runner, self.access, lambda: self.site, staff, chips), host=host,
            port=port,
            log_level="warning", access_log=False, log_config=None,
            http=bounded_h11(header_timeout_s), loop=BOUNDED_LOOP,
            ws=BackpressuredWebSocket, ws_max_size=WS_MAX_MESSAGE,
            timeout_graceful_shutdown=STOP_GRACE_S,
            ssl_certfile=None if tls is None else str(tls.certfile),
            ssl_keyfile=None if tls is None else str(tls.keyfile),
        )
        self._server = uvicorn.Server(config)
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        """The page's address as a browser opens it (the real address for a wildcard host)."""
        return url_of(shown_host(self.host, self.name), self.port, self.tls is not None)

    def pairing_url(self) -> str:
        """A URL that pairs the browser opening it, once (each call issues a new code)."""
        return f"{self.url}pair?code={self.access.new_pairing_code()}"

    def start(self, timeout: float = 10.0) -> ScreenServer:
        """Listen (here, so that a refusal says why: the port in use, an address this machine
        does not have, a name that does not resolve), then serve from a background thread."""
        raise_open_file_limit()
        try:
            family = socket.getaddrinfo(self.host or None, self.port, type=socket.SOCK_STREAM,
                                        flags=socket.AI_PASSIVE)[0][0]
            listening = socket.create_server((self.host, self.port), family=family)
        except (OSError, ValueError, TypeError) as error:  # TypeError: a NUL in the host
            raise OSError(f"the screen could not listen on {self.host!r}:{self.port}: {error}"
                          ) from None
        self.port = listening.getsockname()[1]
        self.site = screen_site(self.host, self.port, self.name, self.tls is not None)
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
        """Stop serving: open WebSockets are closed and requests in flight get
        ``STOP_GRACE_S`` to finish (a client not reading what it is sent may hold its
        connection that long); returns once the serving thread has ended (or 2 s later)."""
        self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(STOP_GRACE_S + 2)
