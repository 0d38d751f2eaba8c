"""A client that acts as the paired screen: ``dealer-assist table --touch`` (a technician or a
script on the table's box, holding the table's secret) and the demo's simulated dealer."""

from __future__ import annotations

import ssl
import urllib.error
import urllib.request
from dataclasses import dataclass

from dealer_assist.table.screen_site import TlsFiles, is_wildcard, url_of


@dataclass(frozen=True, slots=True)
class Reply:
    """The screen's answer: its HTTP status and body."""

    status: int
    body: bytes

    @property
    def accepted(self) -> bool:
        return self.status == 200


def send_touch(url: str, body: bytes, cookie: str, context: ssl.SSLContext | None = None,
               timeout: float = 5.0) -> Reply:
    """POST ``body`` (a touch's JSON) to the screen at ``url`` with the paired screen's
    ``cookie``, as its page does; OSError when no screen answers."""
    request = urllib.request.Request(
        url.rstrip("/") + "/api/input", data=body,
        headers={"Content-Type": "application/json", "Cookie": cookie}, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=timeout, context=context) as response:
            return Reply(response.status, response.read())
    except urllib.error.HTTPError as error:  # a refusal: its status and message
        with error:
            return Reply(error.code, error.read())


def local_url(host: str, port: int, tls: TlsFiles | None) -> str:
    """The screen's URL from its own box: its loopback address when it listens there (or on
    every interface), else the address it listens on."""
    if is_wildcard(host):
        host = "::1" if host == "::" else "127.0.0.1"
    return url_of(host, port, tls is not None)


def pinned_context(tls: TlsFiles | None) -> ssl.SSLContext | None:
    """For a screen served over TLS: a context trusting exactly its own certificate, the first
    of ``tls.certfile`` (the table's box trusts the certificate it serves, whoever issued it and
    whatever name it carries; no other certificate of its issuer)."""
    if tls is None:
        return None
    text = tls.certfile.read_text(encoding="ascii", errors="replace")
    end = "-----END CERTIFICATE-----"
    start = text.find("-----BEGIN CERTIFICATE-----")
    if start < 0 or end not in text[start:]:
        raise ssl.SSLError(f"{tls.certfile} holds no PEM certificate")
    leaf = text[start:text.index(end, start) + len(end)]
    context = ssl.create_default_context(cadata=leaf)
    context.check_hostname = False  # the certificate itself is the trust anchor
    context.verify_flags |= ssl.VERIFY_X509_PARTIAL_CHAIN
    return context
