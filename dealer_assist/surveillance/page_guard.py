"""What the surveillance page asks of a request beyond :mod:`dealer_assist.webguard` (which
checks its ``Host``, ``Origin``, ``Sec-Fetch-Site``, content type and body size first): the
page's :class:`~dealer_assist.webguard.Site`, the paths a link from another site may open, and
on every state-changing call the page's own ``Origin`` (present: the guard lets a request without
one through) and the session's CSRF token.
"""

from __future__ import annotations

import hmac
from collections.abc import Iterable

from fastapi import HTTPException, Request

from dealer_assist.webguard import LOOPBACK_NAMES, STATE_CHANGING, Site

#: The port ``surveillance serve`` listens on unless told another.
DEFAULT_PORT = 8021
CSRF_HEADER = "X-CSRF-Token"
_WILDCARDS = ("0.0.0.0", "::")


def page_site(host: str, port: int, allowed_hosts: Iterable[str] = (),
              tls: bool = False) -> Site:
    """The page served on ``host``:``port``: it answers to the loopback names, ``host`` (unless
    it binds every interface: no name) and each of ``allowed_hosts``."""
    named = set() if host in _WILDCARDS else {host.lower()}
    return Site(LOOPBACK_NAMES | named | {name.lower() for name in allowed_hosts},
                "https" if tls else "http", port)


def navigable(path: str) -> bool:
    """The page itself and its static files: a bookmark or a portal's link on another site may
    open them. The API (``/api/...``) answers the page's own script only."""
    return path == "/" or path.startswith("/static/")


def require_origin(request: Request) -> None:
    """Refuse (403) a state-changing call without an ``Origin`` (the guard has refused one
    that is not the page's): every browser sends it with such a call, so its absence is a
    client the page did not make, and a CSRF token alone is not enough."""
    if request.method in STATE_CHANGING and request.headers.get("origin") is None:
        raise HTTPException(403, "refused: a state-changing call must come from the page itself"
                                 " (it sends the page's Origin)")


def check_csrf(request: Request, expected: str) -> None:
    """Refuse (403) a state-changing call without the session's CSRF token in its header."""
    sent = request.headers.get(CSRF_HEADER, "")
    if not hmac.compare_digest(sent.encode("utf-8", "replace"), expected.encode()):
        raise HTTPException(403, f"refused: missing or wrong {CSRF_HEADER} header")
