"""Where the dealer's screen is served: the names it answers to, the address it shows, and
whether serving it there is allowed (beyond this machine only over TLS or with the plain HTTP
acknowledged)."""

from __future__ import annotations

import ipaddress
import socket
from dataclasses import dataclass
from pathlib import Path

from dealer_assist.webguard import Site

#: The names this machine always answers to on its loopback interface.
LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})
_WILDCARDS = frozenset({"", "0.0.0.0", "::"})


@dataclass(frozen=True, slots=True)
class TlsFiles:
    """The screen's certificate chain and private key (PEM), handed to uvicorn."""

    certfile: Path
    keyfile: Path


def is_wildcard(host: str) -> bool:
    """Whether ``host`` binds every interface."""
    return host in _WILDCARDS


def is_loopback(host: str) -> bool:
    """Whether ``host`` is this machine only: ``localhost`` or a loopback address. Any other
    name counts as reaching beyond (what it resolves to may change)."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def network_address() -> str:
    """The address other machines reach this one at (the interface of its default route; no
    packet is sent), else its host name's address, else its host name."""
    probe = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        probe.connect(("192.0.2.1", 9))  # TEST-NET-1: routed like any outside address
        return str(probe.getsockname()[0])
    except OSError:
        try:
            return socket.gethostbyname(socket.gethostname())
        except OSError:
            return socket.gethostname()
    finally:
        probe.close()


def shown_host(host: str, name: str | None = None) -> str:
    """The host a browser opens the screen at: ``name`` if given, else this machine's network
    address for a wildcard, else ``host``."""
    if name:
        return name
    return network_address() if is_wildcard(host) else host


def screen_names(host: str, name: str | None = None) -> frozenset[str]:
    """The ``Host`` names the screen answers to: ``host`` and ``name``; with a loopback or
    wildcard ``host`` the loopback names; with a wildcard this machine's address and names."""
    names = {host.lower()} if not is_wildcard(host) else set()
    if name:
        names.add(name.lower())
    if is_loopback(host) or is_wildcard(host):
        names |= LOOPBACK_NAMES
    if is_wildcard(host):
        names |= {network_address(), socket.gethostname().lower(), socket.getfqdn().lower()}
    return frozenset(names)


def screen_site(host: str, port: int, name: str | None = None, tls: bool = False) -> Site:
    """The :class:`~dealer_assist.webguard.Site` of a screen listening on ``host``:``port``."""
    return Site(screen_names(host, name), "https" if tls else "http", port)


def url_of(host: str, port: int, tls: bool = False) -> str:
    """``http(s)://host:port/``, an IPv6 address in brackets."""
    shown = f"[{host}]" if ":" in host else host
    return f"{'https' if tls else 'http'}://{shown}:{port}/"


def exposure_problem(host: str, tls: bool, plain_http_acknowledged: bool,
                     tls_keys: str = "screen.certfile and screen.keyfile",
                     acknowledgement: str = "screen.plain_http_on_network = true") -> str | None:
    """Why the screen may not be served on ``host`` (None: it may): beyond this machine it
    needs TLS (``tls_keys`` name the settings), or plain HTTP acknowledged (``acknowledgement``
    names how)."""
    if is_loopback(host) or tls or plain_http_acknowledged:
        return None
    where = "every interface" if is_wildcard(host) else "an address other machines may reach"
    return (f"{host!r} is {where}: anyone on the network could read the screen's traffic and "
            f"take its cookie. Serve it over TLS ({tls_keys}) or accept plain HTTP on this "
            f"network with {acknowledgement}")


def exposure_warning(host: str, tls: bool) -> str | None:
    """The warning logged when the screen listens beyond this machine (None: it does not)."""
    if is_loopback(host):
        return None
    where = "every interface" if is_wildcard(host) else host
    return (f"the dealer's screen listens on {where}, reachable from the network"
            f"{' (TLS)' if tls else ' over PLAIN HTTP: its traffic can be read on the network'}")
