"""The surveillance page: a FastAPI app over one recording directory.

Every API call needs a logged-in operator (session cookie); the page itself, its script and style
are served from the package (no CDN). Searches, round views, replays and exports are appended to
the recording's chain as access records.
"""


import re
import secrets
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from importlib import resources
from pathlib import Path
from typing import Annotated, Any

from fastapi import Depends, FastAPI, HTTPException, Request, Response
from fastapi.responses import HTMLResponse, JSONResponse
from fastapi.staticfiles import StaticFiles
from pydantic import BaseModel

from dealer_assist.roundlog import AmbiguousJSONError, StrictJSONError, load_strict
from dealer_assist.rules.money import parse_money
from dealer_assist.surveillance.access import (
    AccessError,
    Operator,
    access_log,
    authenticate,
    log_access,
)
from dealer_assist.surveillance.interface import RecordStore
from dealer_assist.surveillance.query import (
    MAX_PRUNE_HOURS,
    RoundQuery,
    frame_file,
    mark_key_frame,
    prune_frames,
    round_view,
    search_rounds,
    storage_report,
    table_statistics,
)
from dealer_assist.surveillance.replay import load_round, replay_round
from dealer_assist.surveillance.report import incident_report_html
from dealer_assist.surveillance.store import (
    INDEX_NAME,
    MAX_INTEGER,
    DamagedRecordingError,
    RecordingError,
    RecordingStore,
    format_time,
    parse_time,
)

SESSION_COOKIE = "da_surveillance"
SESSION_SECONDS = 8 * 3600
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
class Session:
    operator: Operator
    expires: float


class Login(BaseModel):
    name: str
    password: str


class PruneRequest(BaseModel):
    older_than_hours: float


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


def create_app(recording: Path | str) -> FastAPI:
    """The surveillance page for one recording directory (opened per request)."""
    directory = Path(recording)
    RecordingStore(directory).close()  # fail now, and upgrade an old schema once, up front
    sessions: dict[str, Session] = {}
    lock = threading.Lock()
    app = FastAPI(title="dealer-assist surveillance", docs_url=None, redoc_url=None,
                  openapi_url=None)
    app.state.sessions = sessions  # the logins open now (tests look at them)
    app.mount("/static", StaticFiles(directory=str(_STATIC)), name="static")

    @app.middleware("http")
    async def security_headers(request: Request, call_next: Any) -> Response:
        response: Response = await call_next(request)
        for name, value in _SECURITY_HEADERS.items():
            response.headers.setdefault(name, value)
        return response

    @contextmanager
    def store() -> Iterator[RecordStore]:
        opened = RecordingStore(directory)
        try:
            yield opened
        finally:
            opened.close()

    def operator(request: Request) -> Operator:
        token = request.cookies.get(SESSION_COOKIE, "")
        with lock:
            session = sessions.get(token)
            if session is not None and session.expires < time.time():
                del sessions[token]
                session = None
        if session is None:
            raise HTTPException(401, "log in first")
        return session.operator

    Who = Annotated[Operator, Depends(operator)]

    def full_operator(who: Who) -> Operator:
        if who.read_only:
            raise HTTPException(403, "the auditor role is read-only")
        return who

    FullOperator = Annotated[Operator, Depends(full_operator)]

    @app.get("/", response_class=HTMLResponse)
    def page() -> str:
        return (_STATIC / "index.html").read_text(encoding="utf-8")

    @app.post("/api/login", dependencies=[Depends(_unique_keys)])
    def login(body: Login, response: Response) -> dict[str, str]:
        with store() as opened:
            try:
                who = authenticate(opened, body.name, body.password)
            except AccessError:
                raise HTTPException(401, "wrong operator name or password") from None
        token = secrets.token_urlsafe(32)
        now = time.time()
        with lock:
            for expired in [t for t, s in sessions.items() if s.expires < now]:
                del sessions[expired]  # logins never used again would be kept for ever
            sessions[token] = Session(who, now + SESSION_SECONDS)
        response.set_cookie(SESSION_COOKIE, token, max_age=SESSION_SECONDS, httponly=True,
                            samesite="strict")
        return {"name": who.name, "role": who.role}

    @app.post("/api/logout")
    def logout(request: Request, response: Response) -> dict[str, bool]:
        with lock:
            sessions.pop(request.cookies.get(SESSION_COOKIE, ""), None)
        response.delete_cookie(SESSION_COOKIE)
        return {"ok": True}

    @app.get("/api/me")
    def me(who: Who) -> dict[str, str]:
        return {"name": who.name, "role": who.role}

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

    @app.get("/api/rounds/{key}")
    def one_round(key: RoundKey, who: Who) -> dict[str, Any]:
        with store() as opened:
            view = _view(opened, key)
            log_access(opened, who.name, "view", {"round_key": key, "round": view["round"]})
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
            view = _view(opened, key)
            data = load_round(opened, key)
            assert data is not None
            images = {}
            for frame in view["frames"]:
                try:
                    images[frame["seq"]] = frame_file(opened, frame["seq"])
                except DamagedRecordingError:
                    raise
                except RecordingError:  # pruned or missing: the report says so
                    continue
            log_access(opened, who.name, "export", {"round_key": key, "round": view["round"]})
            html = incident_report_html(
                view, replay_round(data), images, exported_by=f"{who.name} ({who.role})",
                exported_at=format_time(datetime.now(UTC)), chain_head=opened.head())
        name = f"incident-{view['table']}-{view['round']}-{key}.html".replace("/", "_")
        return Response(html, media_type="text/html; charset=utf-8",
                        headers={"Content-Disposition": f'attachment; filename="{name}"'})

    @app.get("/api/frames/{seq}")
    def frame(seq: FrameSeq, who: Who) -> Response:
        with store() as opened:
            try:
                data, media_type = frame_file(opened, seq)
            except DamagedRecordingError:
                raise
            except RecordingError as error:
                raise HTTPException(404, str(error)) from None
        return Response(data, media_type=media_type)

    @app.get("/api/stats")
    def stats(who: Who, by: str = "table,shift,dealer") -> Any:
        with store() as opened:
            try:
                rows = table_statistics(opened, by=tuple(p for p in by.split(",") if p))
            except DamagedRecordingError:
                raise
            except ValueError as error:
                raise HTTPException(422, str(error)) from None
            log_access(opened, who.name, "statistics", {"by": by})
        return {"groups": rows}

    @app.get("/api/storage")
    def storage(who: Who) -> Any:
        with store() as opened:
            return storage_report(opened)

    @app.get("/api/access")
    def access(who: Who, limit: int = 200) -> Any:
        with store() as opened:
            log_access(opened, who.name, "access-log", {"limit": limit})
            return {"entries": access_log(opened, max(1, min(limit, 5000)))}

    @app.post("/api/retention/prune", dependencies=[Depends(_unique_keys)])
    def prune(body: PruneRequest, who: FullOperator) -> Any:
        if not 0 < body.older_than_hours <= MAX_PRUNE_HOURS:
            raise HTTPException(422, f"older_than_hours must be above 0 and at most "
                                     f"{MAX_PRUNE_HOURS} (100 years)")
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

    @app.exception_handler(RecordingError)
    def recording_error(request: Request, error: RecordingError) -> JSONResponse:
        # what is not there is answered 404 where it is looked up; this is a store that cannot
        # do what was asked now (locked by another program, read-only, its disk full)
        return JSONResponse({"detail": str(error)}, status_code=503)

    @app.exception_handler(DamagedRecordingError)
    def damaged(request: Request, error: DamagedRecordingError) -> JSONResponse:
        return JSONResponse({"detail": str(error)}, status_code=500)

    return app


def _view(store: RecordStore, key: int) -> dict[str, Any]:
    try:
        return round_view(store, key)
    except DamagedRecordingError:
        raise
    except RecordingError:
        raise HTTPException(404, f"no round #{key}") from None


def _query_from(params: Any) -> RoundQuery:
    """The search criteria in a query string; a bad one is refused (422) by name."""
    def value(name: str, parse: Callable[[str], Any] = str) -> Any:
        text = params.get(name, "").strip()
        if not text:
            return None
        try:
            return parse(text)
        except (ValueError, ArithmeticError) as error:  # ArithmeticError: a date out of range
            raise HTTPException(422, f"bad search: {name}: {error}") from None

    limit = value("limit", _integer)
    return RoundQuery(
        table=value("table"), round_id=value("round"), alarm=value("alarm"),
        seat=value("seat", _integer), payout_above=value("payout_above", parse_money),
        since=value("since", parse_time), until=value("until", parse_time),
        limit=200 if limit is None else limit,
    )


def _integer(text: str) -> int:
    """A whole number in the digits 0-9 (``int`` also reads other scripts') that SQLite holds."""
    if not _INTEGER.fullmatch(text):
        raise ValueError(f"{text!r} is not a whole number in the digits 0-9")
    number = int(text)
    if not _SQLITE_MIN <= number <= _SQLITE_MAX:
        raise ValueError(f"{number} is out of range")
    return number
