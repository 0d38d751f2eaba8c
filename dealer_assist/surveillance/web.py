"""The surveillance page: a FastAPI app over one recording directory.

Every request passes :class:`~dealer_assist.webguard.RequestGuard` first (``Host``, ``Origin``,
``Sec-Fetch-Site`` but for the page and its static files, JSON bodies, the body limit). Every API
call needs a logged-in operator (session cookie) whom the store still holds as at login; every
state-changing call also the session's CSRF token and the page's own ``Origin``
(:mod:`~dealer_assist.surveillance.page_guard`); logins are
rate-limited (:mod:`~dealer_assist.surveillance.login_limits`). The page itself, its script and
style are served from the package (no CDN). Logins, searches, round views (naming the frames they
serve), replays, exports, statistics and storage views are appended to the recording's chain as
access records.
"""


import hashlib
import math
import re
import secrets
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from importlib import resources
from pathlib import Path
from typing import Annotated, Any
from urllib.parse import quote

from fastapi import Depends, FastAPI, HTTPException, Request, Response
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, JSONResponse
from fastapi.staticfiles import StaticFiles
from pydantic import BaseModel, Field

from dealer_assist.roundlog import AmbiguousJSONError, StrictJSONError, load_strict
from dealer_assist.rules.money import parse_money
from dealer_assist.surveillance.access import (
    AccessError,
    Operator,
    access_log,
    authenticate,
    current,
    log_access,
    login_key,
    recorded_name,
    unlocked_since,
)
from dealer_assist.surveillance.evidence_check import TrustedKeys
from dealer_assist.surveillance.frame_files import FrameFileRefused, read_frame, served_type
from dealer_assist.surveillance.interface import RecordStore
from dealer_assist.surveillance.login_limits import LoginLimiter, LoginLimits, LoginRefused
from dealer_assist.surveillance.page_guard import (
    DEFAULT_PORT,
    check_csrf,
    navigable,
    page_site,
    require_origin,
)
from dealer_assist.surveillance.passwords import Passwords
from dealer_assist.surveillance.query import (
    MAX_PRUNE_HOURS,
    RoundQuery,
    floor_frame_path,
    floor_round,
    floor_round_view,
    floor_statistics,
    floor_storage_report,
    frame_file,
    mark_key_frame,
    prune_frames,
    round_view_with_frames,
    search_floor,
    search_rounds,
    storage_report,
    table_statistics,
)
from dealer_assist.surveillance.replay import RoundData, load_round, replay_round
from dealer_assist.surveillance.report import incident_report_html
from dealer_assist.surveillance.report_pdf import PdfUnavailable, incident_report_pdf
from dealer_assist.surveillance.store import (
    INDEX_NAME,
    MAX_INTEGER,
    DamagedRecordingError,
    RecordingError,
    RecordingStore,
    format_time,
    parse_time,
)
from dealer_assist.webguard import STATE_CHANGING, RequestGuard, Site

SESSION_COOKIE = "da_surveillance"
SESSION_SECONDS = 8 * 3600
#: The youngest frames the page may prune by default: 7 days (``serve --retention-floor-hours``).
RETENTION_FLOOR_HOURS = 168.0
MAX_LOGIN_NAME, MAX_PASSWORD = 256, 1024
MAX_SEARCH_TEXT = 256
#: The most access-log entries one look returns.
MAX_ACCESS_ENTRIES = 5000
_STATIC = resources.files("dealer_assist.surveillance") / "static"
_SECURITY_HEADERS = {
    "Content-Security-Policy": "default-src 'self'; img-src 'self' data:; style-src 'self'; "
    "script-src 'self'; frame-ancestors 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}
_SQLITE_MIN, _SQLITE_MAX = -MAX_INTEGER - 1, MAX_INTEGER  # the integers SQLite stores
_INTEGER = re.compile(r"[+-]?[0-9]+")


@dataclass(frozen=True, slots=True)
class PageSettings:
    """How the page is served. ``site``: the names, scheme and port it answers to (``https``:
    the cookie is ``Secure``, HSTS is sent); ``retention_floor_hours``: the page prunes no frame
    younger; ``passwords``/``login_limits``: hashing cost and login policy (tests lower the cost
    here; the defaults are the production ones); ``trusted_keys``: the table's public keys, which
    each round view checks the recording's signatures against (None: the key it names)."""

    site: Site = page_site("127.0.0.1", DEFAULT_PORT)
    retention_floor_hours: float = RETENTION_FLOOR_HOURS
    passwords: Passwords | None = None
    login_limits: LoginLimits | None = None
    trusted_keys: TrustedKeys | None = None
    #: called after a floor round is put on hold (``room serve``: send it to the table's box)
    on_floor_hold: Callable[[], None] | None = None

    @property
    def tls(self) -> bool:
        return self.site.scheme == "https"


@dataclass(frozen=True, slots=True)
class Session:
    operator: Operator
    expires: float
    csrf: str
    #: the frames named by this session's recorded round views: the only ones it is served
    frames: set[int] = field(default_factory=set)
    #: the same for the floor's round views: (box, chain, seq) -> the frame's file, media type
    #: and recorded SHA-256 as the room's record holds them
    floor_frames: dict[tuple[str, str, int], tuple[str, str, str]] = field(default_factory=dict)


class Login(BaseModel):
    name: str = Field(max_length=MAX_LOGIN_NAME)
    password: str = Field(max_length=MAX_PASSWORD)


class PruneRequest(BaseModel):
    older_than_hours: float


class HoldRequest(BaseModel):
    why: str = Field(max_length=2000)  # retention.MAX_WHY


def _round_key(key: int) -> int:
    """A round key from the path: one SQLite cannot hold is no round, as -1 is."""
    if not _SQLITE_MIN <= key <= _SQLITE_MAX:
        raise HTTPException(404, f"no round #{key}")
    return key


def _frame_seq(seq: int) -> int:
    """A frame record's number from the path: one SQLite cannot hold is no frame, as -1 is."""
    if not _SQLITE_MIN <= seq <= _SQLITE_MAX:
        raise HTTPException(404, f"no frame record {seq}")
    return seq


RoundKey = Annotated[int, Depends(_round_key)]
FrameSeq = Annotated[int, Depends(_frame_seq)]


async def _unique_keys(request: Request) -> None:
    """Refuse a JSON body read two ways (a key given twice: ``json`` keeps the last without a
    word; NaN); a body that is not JSON is left to the route's own parsing to refuse."""
    try:
        load_strict(await request.body())
    except AmbiguousJSONError as error:
        raise HTTPException(400, f"the request body is {error}") from None
    except StrictJSONError:
        pass


def create_app(recording: Path | str | Callable[[], RecordStore],
               settings: PageSettings | None = None) -> FastAPI:
    """The surveillance page for one recording directory, or for the store ``recording()``
    opens (the floor's room), opened per request."""
    settings = settings or PageSettings()
    if callable(recording):
        open_store = recording
    else:
        directory = Path(recording)

        def open_store() -> RecordStore:
            return RecordingStore(directory)

    first = open_store()  # fail now, and upgrade an old schema once, up front
    #: the room's store (the floor's tables) rather than one table's recording: the page
    #: searches and opens the floor's rounds (``floor`` in /api/me and the login's answer)
    floor = callable(getattr(first, "find_floor_rounds", None))
    first.close()
    sessions: dict[str, Session] = {}
    lock = threading.Lock()
    limiter = LoginLimiter(settings.login_limits)
    app = FastAPI(title="dealer-assist surveillance", docs_url=None, redoc_url=None,
                  openapi_url=None, dependencies=[Depends(require_origin)])
    app.state.sessions = sessions  # the logins open now (tests look at them)
    app.mount("/static", StaticFiles(directory=str(_STATIC)), name="static")
    headers = {**_SECURITY_HEADERS, **({"Strict-Transport-Security": "max-age=31536000"}
                                      if settings.tls else {})}

    app.add_middleware(RequestGuard, site=lambda: settings.site, navigable=navigable)

    @app.middleware("http")
    async def security_headers(request: Request, call_next: Any) -> Response:
        """On every answer, the guard's refusals too (this middleware runs outside it)."""
        response: Response = await call_next(request)
        for name, value in headers.items():
            response.headers.setdefault(name, value)
        return response

    @contextmanager
    def store() -> Iterator[RecordStore]:
        opened = open_store()
        try:
            yield opened
        finally:
            opened.close()

    def session(request: Request) -> Session:
        """The caller's session: one whose operator the store no longer holds as at login
        (removed, another role or password) is ended; a state-changing call needs its token."""
        token = request.cookies.get(SESSION_COOKIE, "")
        with lock:
            found = sessions.get(token)
            if found is not None and found.expires < time.time():
                del sessions[token]
                found = None
        if found is None:
            raise HTTPException(401, "log in first")
        with store() as opened:
            still = current(opened, found.operator)
        if not still:
            with lock:
                sessions.pop(token, None)
            raise HTTPException(401, "this login has ended (the operator was removed or changed):"
                                     " log in again")
        if request.method in STATE_CHANGING:
            check_csrf(request, found.csrf)
        return found

    This = Annotated[Session, Depends(session)]

    def operator(this: This) -> Operator:
        return this.operator

    Who = Annotated[Operator, Depends(operator)]

    def full_operator(who: Who) -> Operator:
        if who.read_only:
            raise HTTPException(403, "the auditor role is read-only")
        return who

    FullOperator = Annotated[Operator, Depends(full_operator)]

    def admit(name: str, address: str) -> None:
        """Let a login attempt on to the password check, or refuse it (429) by the policy; a
        lock the technician lifted (a ``login-unlocked`` record) is lifted here first."""
        with lock:
            search_from = limiter.unlock_search_from(name)
        if search_from is not None:
            with store() as opened:
                newest = opened.last_seq()  # one appended during the search: looked at next time
                lifted = unlocked_since(opened, name, search_from)
            with lock:
                if lifted:
                    limiter.unlock(name)
                else:
                    limiter.unlock_searched(name, newest)
        with lock:
            try:
                limiter.admit(name, address)
            except LoginRefused as refused:
                wait = refused.retry_after_s
                raise HTTPException(429, str(refused), headers=None if wait is None else
                                    {"Retry-After": str(math.ceil(wait))}) from None

    def check_login(body: Login, address: str) -> Operator:
        name = login_key(body.name)
        admit(name, address)
        try:
            with store() as opened:
                try:
                    who = authenticate(opened, name, body.password, passwords=settings.passwords,
                                       address=address)
                except AccessError:
                    with lock:
                        locks = limiter.failed(name, address)
                    if locks:
                        seq = log_access(opened, recorded_name(name), "login-locked",
                                         {"address": address})
                        with lock:
                            limiter.lock(name, seq)
                    raise HTTPException(401, "wrong operator name or password") from None
            with lock:
                limiter.succeeded(name, address)
            return who
        finally:
            with lock:
                limiter.done(address)

    @app.get("/", response_class=HTMLResponse)
    def page() -> str:
        return (_STATIC / "index.html").read_text(encoding="utf-8")

    @app.post("/api/login", dependencies=[Depends(_unique_keys)])
    def login(body: Login, request: Request, response: Response) -> dict[str, Any]:
        who = check_login(body, request.client.host if request.client else "(unknown)")
        token = secrets.token_urlsafe(32)
        now = time.time()
        opened = Session(who, now + SESSION_SECONDS, secrets.token_urlsafe(32))
        with lock:
            for expired in [t for t, s in sessions.items() if s.expires < now]:
                del sessions[expired]  # logins never used again would be kept for ever
            sessions[token] = opened
        response.set_cookie(SESSION_COOKIE, token, max_age=SESSION_SECONDS, httponly=True,
                            samesite="strict", secure=settings.tls)
        return {"name": who.name, "role": who.role, "csrf": opened.csrf, "floor": floor}

    @app.post("/api/logout")
    def logout(request: Request, response: Response, this: This) -> dict[str, bool]:
        with lock:
            sessions.pop(request.cookies.get(SESSION_COOKIE, ""), None)
        response.delete_cookie(SESSION_COOKIE, httponly=True, samesite="strict",
                               secure=settings.tls)
        return {"ok": True}

    @app.get("/api/me")
    def me(this: This) -> dict[str, Any]:
        """Who is logged in, the session's CSRF token, and whether this page serves the floor's
        room (its search and round views are then the floor's)."""
        return {"name": this.operator.name, "role": this.operator.role, "csrf": this.csrf,
                "floor": floor}

    @app.get("/api/rounds")
    def rounds(request: Request, who: Who) -> dict[str, Any]:
        query = _query_from(request.query_params)
        with store() as opened:
            found, unsearchable = search_rounds(opened, query)
            log_access(opened, who.name, "search", {**query.to_json(), "results": len(found)})
            tables, alarm_kinds = opened.search_choices()
            answer = {"rounds": found, "partial": bool(unsearchable),
                      "unsearchable": unsearchable, "tables": tables, "alarm_kinds": alarm_kinds}
        if unsearchable:
            shown = ", ".join(f"#{key}" for key in unsearchable[:10])
            more = f" and {len(unsearchable) - 10} more" if len(unsearchable) > 10 else ""
            answer["damaged"] = (
                f"the search index in {INDEX_NAME} is damaged: rounds {shown}{more} could not be"
                " searched and are left out (each still opens from its records); run"
                " 'dealer-assist replay --verify' on the recording")
        return answer

    @app.get("/api/floor/rounds")
    def floor_rounds(request: Request, who: Who) -> dict[str, Any]:
        """The floor's search: rounds of every table the room holds (404: a table's own
        recording, which holds no floor)."""
        query = _query_from(request.query_params)
        with store() as opened:
            found = search_floor(opened, query)
            if found is None:
                raise HTTPException(404, "this recording holds no floor: search it with "
                                    "/api/rounds")
            log_access(opened, who.name, "floor-search", {**query.to_json(),
                                                         "results": len(found)})
            tables, alarm_kinds = opened.floor_choices()  # type: ignore[attr-defined]
        return {"rounds": found, "tables": tables, "alarm_kinds": alarm_kinds}

    def floor_data(opened: RecordStore, box: str, chain: str, key: int) -> RoundData:
        """A floor round's records as the room holds them (404: no such table, chain or round,
        or a store that holds no floor)."""
        if not floor:
            raise HTTPException(404, "this recording holds no floor")
        if not _FLOOR_BOX.fullmatch(box) or not _FLOOR_CHAIN.fullmatch(chain):
            raise HTTPException(404, "no such table or chain")
        data = floor_round(opened, box, chain, key)
        if data is None:
            raise HTTPException(404, f"no round #{key} of {box}")
        return data

    @app.get("/api/floor/rounds/{box}/{chain}/{key}")
    def floor_one_round(box: str, chain: str, key: RoundKey, this: This) -> dict[str, Any]:
        """One round of a table the room holds (from the floor search's box, chain and key),
        recorded with the room's frames it lets this session fetch."""
        with store() as opened:
            view = floor_round_view(opened, floor_data(opened, box, chain, key), box, chain)
            _floor_retention(opened, view)
            shown = {(box, chain, f["seq"]): (str(f["file"]), str(f["media_type"] or ""),
                                              str(f["sha256"] or ""))
                     for f in view["frames"] if f["in_room"]}
            log_access(opened, this.operator.name, "floor-view", {
                "box": box, "chain": chain, "round_key": key, "round": view["round"],
                "frames": sorted(seq for _, _, seq in shown)})
        with lock:
            this.floor_frames.update(shown)
        return view

    @app.get("/api/floor/rounds/{box}/{chain}/{key}/replay")
    def floor_replay(box: str, chain: str, key: RoundKey, who: Who) -> dict[str, Any]:
        """A floor round replayed through today's engine against its recorded settlement."""
        with store() as opened:
            data = floor_data(opened, box, chain, key)
            result = replay_round(data)
            log_access(opened, who.name, "floor-replay", {
                "box": box, "chain": chain, "round_key": key, "round": data.round_id,
                "discrepancies": len(result.discrepancies)})
        return {**result.to_json(), "texts": [d.text() for d in result.discrepancies],
                "replayed": result.replayed}

    def floor_hold(box: str, chain: str, key: int, body: HoldRequest, who: Operator,
                   lift: bool) -> dict[str, Any]:
        from dealer_assist.floor import retention

        with store() as opened:
            data = floor_data(opened, box, chain, key)
            ref = retention.FloorRoundRef(box, chain, key, data.round_id)
            try:
                change = retention.lift_hold if lift else retention.put_hold
                hold = change(opened, ref, body.why, who.name)  # type: ignore[arg-type]
            except ValueError as error:
                raise HTTPException(409, str(error)) from None
        if not lift and settings.on_floor_hold is not None:
            settings.on_floor_hold()
        return hold.to_json()

    @app.post("/api/floor/rounds/{box}/{chain}/{key}/hold", dependencies=[Depends(_unique_keys)])
    def put_hold(box: str, chain: str, key: RoundKey, body: HoldRequest,
                 who: FullOperator) -> dict[str, Any]:
        """Put a floor round on legal hold: its frames outlive the room's retention (recorded
        in the room's chain: who, why, when)."""
        return floor_hold(box, chain, key, body, who, lift=False)

    @app.post("/api/floor/rounds/{box}/{chain}/{key}/release",
              dependencies=[Depends(_unique_keys)])
    def lift_hold(box: str, chain: str, key: RoundKey, body: HoldRequest,
                  who: FullOperator) -> dict[str, Any]:
        """Lift a floor round's legal hold (recorded: who, why, when); the hold lifted."""
        return floor_hold(box, chain, key, body, who, lift=True)

    @app.get("/api/floor/frames/{box}/{chain}/{seq}")
    def floor_frame(box: str, chain: str, seq: FrameSeq, this: This) -> Response:
        """A key frame the room holds, named by a floor round view this session opened, served
        as :func:`frame` serves one (``X-Frame-SHA256``, ``X-Frame-Intact``)."""
        with lock:
            named = this.floor_frames.get((box, chain, seq))
        if named is None:
            raise HTTPException(403, f"frame record {seq} of {box} is served only with its round:"
                                     " open the round first (its view is recorded with its"
                                     " frames)")
        file, media_type, recorded = named
        with store() as opened:
            path = floor_frame_path(opened, box, chain, file)
            try:
                data = None if path is None else read_frame(opened.directory, path)
            except FrameFileRefused as why:
                raise HTTPException(409, f"frame {seq} of {box} is not served: {why}") from None
        if data is None:
            raise HTTPException(404, f"frame {seq} of {box} is not in the room")
        digest = hashlib.sha256(data).hexdigest()
        return Response(data, media_type=served_type(media_type), headers={
            "X-Frame-SHA256": digest, "X-Frame-Intact": "yes" if digest == recorded else "no"})

    @app.get("/api/rounds/{key}")
    def one_round(key: RoundKey, this: This) -> dict[str, Any]:
        """The round, recorded with the frames it lets this session fetch (one record a view,
        not one a frame)."""
        with store() as opened:
            view = _view(opened, key, settings.trusted_keys)
            frames = [frame["seq"] for frame in view["frames"] if not frame["pruned"]]
            log_access(opened, this.operator.name, "view",
                       {"round_key": key, "round": view["round"], "frames": frames})
        with lock:
            this.frames.update(frames)
        return view

    @app.get("/api/rounds/{key}/replay")
    def replay_one(key: RoundKey, who: Who) -> dict[str, Any]:
        with store() as opened:
            data = load_round(opened, key)
            if data is None:
                raise HTTPException(404, f"no round #{key}")
            result = replay_round(data)
            log_access(opened, who.name, "replay", {"round_key": key, "round": data.round_id,
                                                    "discrepancies": len(result.discrepancies)})
        return {**result.to_json(), "texts": [d.text() for d in result.discrepancies],
                "replayed": result.replayed}

    @app.get("/api/rounds/{key}/export")
    def export(key: RoundKey, who: Who) -> Response:
        with store() as opened:
            view, images = _view_with_frames(opened, key, settings.trusted_keys)
            data = load_round(opened, key)
            assert data is not None
            log_access(opened, who.name, "export", {"round_key": key, "round": view["round"],
                                                    "frames": sorted(images)})
            html = incident_report_html(
                view, replay_round(data), images, exported_by=f"{who.name} ({who.role})",
                exported_at=format_time(datetime.now(UTC)), chain_head=opened.head())
        name = f"incident-{view['table']}-{view['round']}-{key}.html"
        return Response(html, media_type="text/html; charset=utf-8",
                        headers={"Content-Disposition": attachment(name)})

    @app.get("/api/rounds/{key}/export.pdf")
    def export_pdf(key: RoundKey, who: Who) -> Response:
        """The incident report as a PDF; its SHA-256 is recorded in the export's access record,
        so a copy handed on can be matched with what the page produced."""
        with store() as opened:
            view, images = _view_with_frames(opened, key, settings.trusted_keys)
            try:
                pdf = incident_report_pdf(
                    view, images, exported_by=f"{who.name} ({who.role})",
                    exported_at=format_time(datetime.now(UTC)), chain_head=opened.head())
            except PdfUnavailable as error:
                raise HTTPException(501, str(error)) from None
            digest = hashlib.sha256(pdf).hexdigest()
            log_access(opened, who.name, "export", {
                "round_key": key, "round": view["round"], "frames": sorted(images),
                "format": "pdf", "sha256": digest, "bytes": len(pdf),
                "verdict": view["integrity"]["verdict"]})
        name = f"incident-{view['table']}-{view['round']}-{key}.pdf"
        return Response(pdf, media_type="application/pdf", headers={
            "Content-Disposition": attachment(name), "X-Report-SHA256": digest})

    @app.get("/api/frames/{seq}")
    def frame(seq: FrameSeq, this: This) -> Response:
        """A frame named by a round view this session opened (and so recorded), served with the
        SHA-256 of its bytes as read now and whether that is the one its chained record holds
        (``X-Frame-SHA256``, ``X-Frame-Intact: yes|no``): an altered frame is still evidence."""
        with lock:
            viewed = seq in this.frames
        if not viewed:
            raise HTTPException(403, f"frame record {seq} is served only with its round: open the"
                                     " round first (its view is recorded with its frames)")
        with store() as opened:
            try:
                data, media_type = frame_file(opened, seq)
            except DamagedRecordingError:
                raise
            except RecordingError as error:
                raise HTTPException(404, str(error)) from None
            record = opened.record(seq)
        digest = hashlib.sha256(data).hexdigest()
        intact = record is not None and record.kind == "frame" and record.sha256 == digest
        return Response(data, media_type=media_type, headers={
            "X-Frame-SHA256": digest, "X-Frame-Intact": "yes" if intact else "no"})

    @app.get("/api/stats")
    def stats(who: Who, by: str = "table,shift,dealer", table: str = "") -> Any:
        """Statistics per group of rounds; in the room, of every table's rounds it holds
        (``table``: only that table's; ``tables``: the tables there are)."""
        if len(table) > MAX_SEARCH_TEXT:
            raise HTTPException(422, f"table: over {MAX_SEARCH_TEXT} characters")
        if table and not floor:
            raise HTTPException(400, "a table's own recording holds one table: no table filter")
        if len(by) > MAX_SEARCH_TEXT:
            raise HTTPException(422, f"by: over {MAX_SEARCH_TEXT} characters")
        grouping = tuple(p for p in by.split(",") if p)
        with store() as opened:
            try:
                rows = floor_statistics(opened, by=grouping, table=table or None) if floor \
                    else table_statistics(opened, by=grouping)
            except DamagedRecordingError:
                raise
            except ValueError as error:
                raise HTTPException(422, str(error)) from None
            log_access(opened, who.name, "statistics", {"by": by, **(
                {"table": table} if table else {})})
            if not floor:
                return {"groups": rows}
            return {"groups": rows, "tables": opened.floor_choices()[0]}  # type: ignore[attr-defined]

    @app.get("/api/storage")
    def storage(who: Who) -> Any:
        """Bytes stored per table and hour: in the room, the whole floor's."""
        with store() as opened:
            report = floor_storage_report(opened) if floor else storage_report(opened)
            log_access(opened, who.name, "storage", {})
        return report

    @app.get("/api/access")
    def access(who: Who, limit: int = 200) -> Any:
        limit = max(1, min(limit, MAX_ACCESS_ENTRIES))
        with store() as opened:
            log_access(opened, who.name, "access-log", {"limit": limit})
            return {"entries": access_log(opened, limit)}

    @app.post("/api/retention/prune", dependencies=[Depends(_unique_keys)])
    def prune(body: PruneRequest, who: FullOperator) -> Any:
        if not 0 < body.older_than_hours <= MAX_PRUNE_HOURS:
            raise HTTPException(422, f"older_than_hours must be above 0 and at most "
                                     f"{MAX_PRUNE_HOURS} (100 years)")
        if body.older_than_hours < settings.retention_floor_hours:
            raise HTTPException(403, f"the page keeps every frame younger than the retention"
                                     f" policy: older_than_hours must be at least"
                                     f" {settings.retention_floor_hours:g}")
        with store() as opened:
            return prune_frames(opened, timedelta(hours=body.older_than_hours), who.name)

    @app.post("/api/frames/{seq}/key")
    def keep_frame(seq: FrameSeq, who: FullOperator) -> Any:
        with store() as opened:
            try:
                mark_key_frame(opened, seq, who.name)
            except DamagedRecordingError:
                raise
            except RecordingError as error:
                raise HTTPException(404, str(error)) from None
        return {"ok": True}

    @app.exception_handler(RequestValidationError)
    def invalid(request: Request, error: RequestValidationError) -> JSONResponse:
        # what was wrong and where, never the input itself (a 16 KiB name, text UTF-8 cannot hold)
        return JSONResponse({"detail": [{"loc": list(e["loc"]), "msg": e["msg"]}
                                        for e in error.errors()]}, status_code=422)

    @app.exception_handler(RecordingError)
    def recording_error(request: Request, error: RecordingError) -> JSONResponse:
        # what is not there is answered 404 where it is looked up; this is a store that cannot
        # do what was asked now (locked by another program, read-only, its disk full)
        return JSONResponse({"detail": str(error)}, status_code=503)

    @app.exception_handler(DamagedRecordingError)
    def damaged(request: Request, error: DamagedRecordingError) -> JSONResponse:
        return JSONResponse({"detail": str(error)}, status_code=500)

    return app


def attachment(filename: str) -> str:
    """A ``Content-Disposition`` for a download (RFC 6266): an ASCII fallback ``filename`` (each
    character but letters, digits and ``._-`` as ``_``) and the exact name as ``filename*``,
    UTF-8 percent-encoded (RFC 5987)."""
    fallback = re.sub(r"[^A-Za-z0-9._-]", "_", filename)
    exact = quote(filename.encode("utf-8", "replace"), safe="")
    return f"attachment; filename=\"{fallback}\"; filename*=UTF-8''{exact}"


def _floor_retention(store: Any, view: dict[str, Any]) -> None:
    """A floor round view's legal hold (``hold``: who put it on, when and why, and whether it
    reached the table's box, ``reached``; None) and the frames the room's retention pruned
    (``pruned``)."""
    from dealer_assist.floor import hold_delivery, retention

    where = (view["box"], view["chain"], view["key"])
    hold = retention.holds(store).get(where)
    view["hold"] = None if hold is None else hold.to_json()
    if hold is not None:
        reached = hold_delivery.reached(store).get(hold.seq)
        view["hold"]["reached"] = None if reached is None else reached.to_json()
    gone = retention.pruned_frames(store)
    for frame in view["frames"]:
        if (view["box"], view["chain"], frame["seq"]) in gone:
            frame.update(pruned=True, file_state="pruned")


def _view(store: RecordStore, key: int, trusted: TrustedKeys | None) -> dict[str, Any]:
    return _view_with_frames(store, key, trusted)[0]


def _view_with_frames(store: RecordStore, key: int, trusted: TrustedKeys | None
                      ) -> tuple[dict[str, Any], dict[int, tuple[bytes, str]]]:
    """The round's view and its frames' bytes as checked (:func:`round_view_with_frames`);
    404 where there is no such round."""
    try:
        return round_view_with_frames(store, key, trusted)
    except DamagedRecordingError:
        raise
    except RecordingError:
        raise HTTPException(404, f"no round #{key}") from None


#: The search criteria the page takes; any other name in the query string is refused (400)
SEARCH_FIELDS = ("table", "round", "alarm", "seat", "card", "amount", "dealer", "payout_above",
                 "since", "until", "limit")


def _query_from(params: Any) -> RoundQuery:
    """The search criteria in a query string; a name the search does not take (400: a search
    that ignored it would answer every round) or a bad value (or one over
    :data:`MAX_SEARCH_TEXT` characters, which would go into the access record; 422) is refused
    by name."""
    unknown = sorted({name for name in params.keys() if name not in SEARCH_FIELDS})
    if unknown:
        shown = ", ".join(repr(name[:MAX_SEARCH_TEXT]) for name in unknown[:5])
        raise HTTPException(400, f"bad search: no such criterion {shown} (the search takes "
                                 f"{', '.join(SEARCH_FIELDS)})")
    for name in SEARCH_FIELDS:
        if len(params.getlist(name)) > 1:
            raise HTTPException(400, f"bad search: {name} given more than once")

    def value(name: str, parse: Callable[[str], Any] = str) -> Any:
        text = params.get(name, "").strip()
        if not text:
            return None
        if len(text) > MAX_SEARCH_TEXT:
            raise HTTPException(422, f"bad search: {name}: over {MAX_SEARCH_TEXT} characters")
        try:
            return parse(text)
        except (ValueError, ArithmeticError) as error:  # ArithmeticError: a date out of range
            raise HTTPException(422, f"bad search: {name}: {error}") from None

    limit = value("limit", _integer)
    return RoundQuery(
        table=value("table"), round_id=value("round"), alarm=value("alarm"),
        seat=value("seat", _integer), payout_above=value("payout_above", parse_money),
        card=value("card", _card_code), amount=value("amount", _amount),
        dealer=value("dealer"),
        since=value("since", parse_time), until=value("until", parse_time),
        limit=200 if limit is None else limit,
    )


#: a table box's id and a chain id as the floor names them (dealer_assist/floor/wire.py)
_FLOOR_BOX = re.compile(r"[A-Za-z0-9_-]{1,32}")
_FLOOR_CHAIN = re.compile(r"[A-Za-z0-9_-]{1,64}")


def _card_code(text: str) -> str:
    """A card code as the round log writes it (``jh``, ``10H`` read as ``JH``, ``TH``)."""
    from dealer_assist.rules.cards import Card

    return Card.parse(text).code


def _amount(text: str) -> Any:
    """An amount of money, exact to the cent, from 0 up."""
    amount = parse_money(text)
    if amount < 0:
        raise ValueError(f"{text!r} is below 0 (an amount is searched for won or lost alike)")
    return amount


def _integer(text: str) -> int:
    """A whole number in the digits 0-9 (``int`` also reads other scripts') that SQLite holds."""
    if not _INTEGER.fullmatch(text):
        raise ValueError(f"{text!r} is not a whole number in the digits 0-9")
    number = int(text)
    if not _SQLITE_MIN <= number <= _SQLITE_MAX:
        raise ValueError(f"{number} is out of range")
    return number
