"""The page's checks on a request before any route sees it: a ``Host`` the page answers to (DNS
rebinding), an ``Origin`` that is the page itself on every state-changing call and on any API
read a browser says came from elsewhere (cross-site and same-site requests), a body no larger
than a bound, and the session's CSRF token on state-changing calls.
"""

from __future__ import annotations

import hmac
from collections.abc import Awaitable, Callable, Iterable, MutableMapping
from typing import Any

from fastapi import HTTPException, Request

#: The largest request body the page accepts (a login or a prune is a few hundred bytes).
MAX_BODY_BYTES = 16 * 1024
CSRF_HEADER = "X-CSRF-Token"
STATE_CHANGING = frozenset({"POST", "PUT", "PATCH", "DELETE"})
LOOPBACK_NAMES = ("127.0.0.1", "localhost", "::1")

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]


def host_name(host_header: str) -> str:
    """The name in a ``Host`` header, without its port (``[::1]:8021`` is ``::1``)."""
    host = host_header.strip().lower()
    if host.startswith("["):
        return host[1:].split("]", 1)[0]
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host


def check_host(request: Request, allowed: Iterable[str]) -> None:
    """Refuse (400) a request whose ``Host`` is not one the page is served as."""
    if host_name(request.headers.get("host", "")) not in allowed:
        raise HTTPException(400, "this page is not served under that Host name")


def check_origin(request: Request, scheme: str, api: bool) -> None:
    """Refuse (403) a state-changing call whose ``Origin`` is missing or not the page's own, and
    an ``api`` read that a browser marks as sent from another origin (its ``Origin``, or
    ``Sec-Fetch-Site`` other than ``same-origin`` or ``none``: an ``<img>`` on another port of the
    same host would otherwise send the cookie and write access records in the officer's name)."""
    own = f"{scheme}://{request.headers.get('host', '').strip().lower()}"
    origin = request.headers.get("origin")
    if request.method in STATE_CHANGING:
        if (origin or "").strip().lower() != own:
            raise HTTPException(403, f"refused: a state-changing call must come from the page"
                                     f" itself (Origin {own})")
    elif api and ((origin is not None and origin.strip().lower() != own)
                  or request.headers.get("sec-fetch-site", "none") not in ("same-origin", "none")):
        raise HTTPException(403, "refused: the page's API answers the page itself only")


def check_csrf(request: Request, expected: str) -> None:
    """Refuse (403) a state-changing call without the session's CSRF token in its header."""
    sent = request.headers.get(CSRF_HEADER, "")
    if not hmac.compare_digest(sent.encode("utf-8", "replace"), expected.encode()):
        raise HTTPException(403, f"refused: missing or wrong {CSRF_HEADER} header")


class BodyLimit:
    """ASGI middleware: a body over ``limit`` bytes is refused with 413 before the page reads it,
    whether it says its length up front or streams past it (it is read here, at most ``limit``
    bytes, then handed on)."""

    def __init__(self, app: Callable[[Scope, Receive, Send], Awaitable[None]],
                 limit: int = MAX_BODY_BYTES):
        self.app, self.limit = app, limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope.get("headers", [])).get(b"content-length", b"0")
        if not declared.isdigit() or int(declared) > self.limit:
            await _too_large(send, self.limit)
            return
        messages: list[Message] = []
        seen, more = 0, True
        while more:
            message = await receive()
            messages.append(message)
            seen += len(message.get("body", b""))
            if seen > self.limit:
                await _too_large(send, self.limit)
                return
            more = message["type"] == "http.request" and message.get("more_body", False)

        async def replay() -> Message:
            return messages.pop(0) if messages else await receive()

        await self.app(scope, replay, send)


async def _too_large(send: Send, limit: int) -> None:
    body = b'{"detail":"request body over %d bytes"}' % limit
    await send({"type": "http.response.start", "status": 413,
                "headers": [(b"content-type", b"application/json"),
                            (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})
