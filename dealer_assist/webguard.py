"""A request guard for this package's web servers: an ASGI middleware refusing, before the app
sees it, any request that a page on another site, a DNS-rebound name or an oversized body could
make.

Refused with a 4xx and a JSON ``{"detail": ...}`` naming what was wrong:

- a ``Host`` header whose name is not one of the site's names (421): a DNS-rebinding page reaches
  the server under its own name;
- an ``Origin`` header other than the site's own (403): a page on another site (a browser sends
  ``Origin`` with every cross-origin request and every WebSocket handshake; a request without one
  comes from no browser page and is left to the app's credentials);
- a request a browser marks ``Sec-Fetch-Site: cross-site`` or ``same-site`` (403): another
  port of the same host is the same site, so a ``SameSite=Strict`` cookie goes with an
  ``<img>`` or a link there, which send no ``Origin``; except a GET or HEAD of a path the
  guard's ``navigable`` names (a page a link or bookmark on another site may open: it must
  change nothing and show nothing without the credentials such a request does not carry);
- a POST, PUT, PATCH or DELETE whose content type is not ``application/json`` (415): what an HTML
  form on any page can send without a CORS preflight;
- a body over ``max_body`` bytes (413), refused as soon as the announced length or the bytes
  streamed in pass it; the connection is closed, the rest never read.

A WebSocket handshake is checked for ``Host`` and ``Origin`` alike and refused with HTTP 403.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from dealer_assist.logs import Throttled

logger = logging.getLogger(__name__)

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

#: The default body limit: a touch or a login is a few hundred bytes.
MAX_BODY = 16 * 1024
#: The methods that change something: their body must be JSON.
STATE_CHANGING = frozenset({"POST", "PUT", "PATCH", "DELETE"})
#: The names this machine always answers to on its loopback interface.
LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})
_NAVIGATION_METHODS = frozenset({"GET", "HEAD"})
_DEFAULT_PORTS = {"http": 80, "https": 443}


class Refused(Exception):
    """A request the guard refuses: its HTTP status and the message sent back."""

    def __init__(self, status: int, detail: str):
        super().__init__(detail)
        self.status = status
        self.detail = detail


def _host_name(authority: str) -> str | None:
    """The name part of a ``Host`` header (``name``, ``name:port``, ``[v6]:port``), lower case;
    None when it cannot be read."""
    try:
        parts = urlsplit(f"//{authority}")
        _ = parts.port  # a port that is not a number: unreadable
    except ValueError:
        return None
    return parts.hostname


@dataclass(frozen=True, slots=True)
class Site:
    """Who a server is: the names (and addresses) it answers to, its scheme and its port.
    ``port`` may be set once the server listens (a port 0 asked the system for one)."""

    names: frozenset[str]
    scheme: str = "http"
    port: int = 0

    def check_host(self, header: str | None) -> None:
        """Refuse a ``Host`` that names another server (a DNS-rebinding page's)."""
        name = None if header is None else _host_name(header)
        if name is None or name not in self.names:
            # its own names are not listed: a rebinding page could read them
            raise Refused(421, f"this server does not answer to the host {header!r}")

    def check_origin(self, header: str | None) -> None:
        """Refuse an ``Origin`` other than this site's own scheme, name and port (absent: no
        browser page made the request)."""
        if header is None:
            return
        try:
            parts = urlsplit(header)
            port = parts.port or _DEFAULT_PORTS.get(parts.scheme)
        except ValueError:
            port = None
            parts = None
        if (parts is None or parts.scheme != self.scheme or parts.hostname not in self.names
                or port != self.port or parts.path not in ("", "/")):
            raise Refused(403, f"requests from the origin {header!r} are refused: only this "
                               "server's own page may make them")


def _check_fetch_site(header: str | None) -> None:
    """Refuse what a browser says another site's, or another port's, page asked for (absent:
    no browser, or one too old to say; ``none``: the user typed or bookmarked it)."""
    if header in ("cross-site", "same-site"):
        raise Refused(403, f"requests another page makes (Sec-Fetch-Site: {header}) are "
                           "refused: only this server's own page may make them")


def nowhere(path: str) -> bool:
    """No path may be navigated to from another site (the guard's default)."""
    return False


def _headers(scope: Scope) -> dict[str, str]:
    """The request's headers by lower-case name (the first of a repeated one); a header
    repeated with another value is kept as the empty string, which no check passes."""
    seen: dict[str, str] = {}
    for raw_name, raw_value in scope.get("headers", []):
        name, value = raw_name.decode("latin-1").lower(), raw_value.decode("latin-1")
        seen[name] = value if seen.get(name, value) == value else ""
    return seen


def _check_content(method: str, headers: dict[str, str], max_body: int) -> None:
    if method not in STATE_CHANGING:
        return
    media = headers.get("content-type", "").split(";", 1)[0].strip().lower()
    if media != "application/json":
        raise Refused(415, f"a {method} must send application/json, got "
                           f"{headers.get('content-type', 'no content type')!r}")
    length = headers.get("content-length")
    if length is not None:
        if not length.isdigit():
            raise Refused(400, f"Content-Length must be a number of bytes, got {length!r}")
        if int(length) > max_body:
            raise Refused(413, f"the body is {int(length)} bytes: at most {max_body} are taken")


async def _read_body(receive: Receive, max_body: int) -> tuple[bytes, bool]:
    """The request body, read as it streams in; Refused (413) the moment it passes
    ``max_body``. Returns the body and whether the client went away before its end."""
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return b"".join(chunks), True
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > max_body:
            raise Refused(413, f"the body passed {max_body} bytes: at most {max_body} are taken")
        chunks.append(chunk)
        if not message.get("more_body", False):
            return b"".join(chunks), False


async def _send_refusal(send: Send, refused: Refused) -> None:
    """The refusal, closing the connection: the rest of a refused body is never read."""
    body = json.dumps({"detail": refused.detail}).encode()
    await send({"type": "http.response.start", "status": refused.status,
                "headers": [(b"content-type", b"application/json"),
                            (b"content-length", str(len(body)).encode()),
                            (b"connection", b"close")]})
    await send({"type": "http.response.body", "body": body})


class RequestGuard:
    """ASGI middleware putting ``site``'s checks (module docstring) before ``app``.
    ``site`` is called for each request, so a server may learn its port after it listens.
    ``navigable(path)``: whether a GET or HEAD of ``path`` may come from another site's link or
    bookmark (``Sec-Fetch-Site`` is then not checked; ``Host`` and ``Origin`` still are);
    by default no path may. A refusal is logged as a warning, at most once a minute for each
    kind (HTTP or WebSocket, and its status: :class:`~dealer_assist.logs.Throttled`)."""

    def __init__(self, app: ASGIApp, site: Callable[[], Site], max_body: int = MAX_BODY,
                 navigable: Callable[[str], bool] = nowhere):
        self.app = app
        self.site = site
        self.max_body = max_body
        self.navigable = navigable
        self.refusals = Throttled(logger)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "websocket":
            await self._websocket(scope, receive, send)
        elif scope["type"] == "http":
            await self._http(scope, receive, send)
        else:
            await self.app(scope, receive, send)

    def _check(self, headers: dict[str, str], navigation: bool = False) -> None:
        site = self.site()
        site.check_host(headers.get("host"))
        site.check_origin(headers.get("origin"))
        if not navigation:
            _check_fetch_site(headers.get("sec-fetch-site"))

    async def _http(self, scope: Scope, receive: Receive, send: Send) -> None:
        headers = _headers(scope)
        navigation = (scope["method"] in _NAVIGATION_METHODS
                      and self.navigable(scope.get("path", "")))
        try:
            self._check(headers, navigation)
            _check_content(scope["method"], headers, self.max_body)
            body, gone = await _read_body(receive, self.max_body)
        except Refused as refused:
            self.refusals.warning(("http", refused.status), "refused %s %s from %s: %s",
                                  scope["method"], scope.get("path"), _client(scope),
                                  refused.detail)
            await _send_refusal(send, refused)
            return
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if not replayed and not gone:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive() if not gone else {"type": "http.disconnect"}

        await self.app(scope, replay, send)

    async def _websocket(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            self._check(_headers(scope))
        except Refused as refused:
            await receive()  # the handshake's websocket.connect, answered by the refusal
            self.refusals.warning(("websocket", refused.status),
                                  "refused a WebSocket to %s from %s: %s", scope.get("path"),
                                  _client(scope), refused.detail)
            await refuse_websocket(send, refused)
            return
        await self.app(scope, receive, send)


async def refuse_websocket(send: Send, refused: Refused) -> None:
    """Refuse a WebSocket handshake: the server answers it with HTTP 403 (a browser's page
    learns nothing more; the reason is logged here)."""
    await send({"type": "websocket.close", "code": 1008, "reason": refused.detail[:120]})


def _client(scope: Scope) -> str:
    client = scope.get("client")
    return "?" if not client else f"{client[0]}:{client[1]}"
