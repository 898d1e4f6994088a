"""TCP connections to the registries a command is about to ask, opened before it can ask
them. `ecoready images` knows its registries once the matrix is read, and the modules that
ask them (asyncio, httpx, the report's) take longer to import than a distant registry takes
to accept a connection (a round trip: 50 ms at an internet distance). Each connection is
made by a thread of its own (the name lookup included), so the import goes on meanwhile;
the pool's network (`network.py`) takes them in place of connecting, and those never taken
are closed with the client.

Polite as the first requests are: no more than the distinct images asked of a registry,
and at most as many as its first wave of requests opens at once: PER_REGISTRY over plain
HTTP (HTTP/1.1, a connection per request), one over HTTPS (offered HTTP/2, where every
request shares the first connection); no request is sent on them until the command sends
its own. Light on purpose (no httpx, no asyncio): it is imported before them.
"""

from __future__ import annotations

import ipaddress
import socket
import threading
from collections.abc import Iterable
from concurrent.futures import Future

from ecoready.matrix.document import EVERY_REGISTRY, Mirror
from ecoready.matrix.mirrors import upstream_name
from ecoready.registry.manifests import on_mirror, parse_reference

# Requests at once to one registry. Over HTTP/1.1 each is a connection of its own (kept
# for the next request): 8, as many as a polite parallel client opens (browsers open 6 per
# host); at a 50 ms round trip the lab matrix's cold lookups took 1.05 s with 6, 0.90 s
# with 8, 0.76 s with 12 (bench/registry.py). Over HTTP/2 they are streams of one
# connection, far below the 100 streams at once servers allow.
PER_REGISTRY = 8
PER_REGISTRY_H2 = 16
CONNECT_TIMEOUT = 5.0  # seconds to connect to a registry (transport.DEFAULT_TIMEOUT's)

Endpoint = tuple[str, int]  # host as the pool connects to it (no brackets), port


class EarlyConnections:
    """Connections being opened (or open) to registries, each taken at most once."""

    def __init__(self) -> None:
        self._opened: dict[Endpoint, list[Future[socket.socket]]] = {}

    def open(self, endpoint: Endpoint, count: int, timeout: float = CONNECT_TIMEOUT) -> None:
        """`count` connections to `endpoint`, each opened by a thread of its own, now. Nothing
        raises from here: a connection that cannot be opened (nor its thread started) is a
        failed future, and its asker connects on its own and says why."""
        for _ in range(count):
            future: Future[socket.socket] = Future()
            try:
                threading.Thread(target=_connect, args=(endpoint, timeout, future), daemon=True).start()
            except RuntimeError as exc:  # no thread to be had: the asker connects itself
                future.set_exception(exc)
            self._opened.setdefault(endpoint, []).append(future)

    def take(self, endpoint: Endpoint) -> Future[socket.socket] | None:
        """One of the connections opened to `endpoint` (it may still be connecting), or None."""
        opened = self._opened.get(endpoint)
        return opened.pop(0) if opened else None

    def close(self) -> None:
        """Those never taken are closed (as soon as they are open, for those still connecting)."""
        for opened in self._opened.values():
            for future in opened:
                future.add_done_callback(_close)
        self._opened.clear()


def open_early(
    images: Iterable[str], *, mirrors: tuple[Mirror, ...] = (), insecure: tuple[str, ...] = ()
) -> EarlyConnections:
    """Connections to the registries (or their mirrors) that `images` will be asked of: one
    per distinct image, at most PER_REGISTRY per plain-HTTP registry and one per HTTPS one."""
    by_upstream = {m.upstream: m for m in mirrors}
    asked: dict[Endpoint, set[str]] = {}
    waves: dict[Endpoint, int] = {}
    for image in images:
        ref = parse_reference(image)
        ref = on_mirror(ref, by_upstream.get(upstream_name(ref.registry)) or by_upstream.get(EVERY_REGISTRY))
        endpoint = endpoint_of(ref.api_host, insecure)
        if endpoint is not None:
            wave = PER_REGISTRY if scheme_of(ref.api_host, insecure) == "http" else 1
            asked.setdefault(endpoint, set()).add(f"{ref.repository}:{ref.tag}@{ref.digest}")
            waves[endpoint] = wave
    early = EarlyConnections()
    for endpoint, names in asked.items():
        early.open(endpoint, min(len(names), waves[endpoint]))
    return early


def scheme_of(host: str, insecure: tuple[str, ...]) -> str:
    """Plain HTTP for loopback and the matrix's `insecure` list, HTTPS for the rest."""
    if host in insecure or loopback(_bare(host)):
        return "http"
    return "https"


def endpoint_of(host: str, insecure: tuple[str, ...]) -> Endpoint | None:
    """Where a registry's API host (`host[:port]`, `[v6]:port`) is connected to; None when
    it names no usable port."""
    bare = _bare(host)
    rest = host[host.index("]") + 1 :] if host.startswith("[") and "]" in host else host[len(bare) :]
    if rest.startswith(":") and rest[1:].isascii() and rest[1:].isdigit() and 0 < int(rest[1:]) < 65536:
        return bare, int(rest[1:])
    if rest:
        return None
    return bare, 80 if scheme_of(host, insecure) == "http" else 443


def loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return host == "localhost"


def _bare(host: str) -> str:
    """The host of `host[:port]` without its port (and an IPv6 address without brackets)."""
    if host.startswith("[") and "]" in host:
        return host[1 : host.index("]")]
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host


def _connect(endpoint: Endpoint, timeout: float, future: Future[socket.socket]) -> None:
    """Settles `future` whatever happens (a name the IDNA codec refuses raises UnicodeError,
    not OSError): a future left unsettled would hold its asker until the request's deadline."""
    try:
        sock = socket.create_connection(endpoint, timeout)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    except Exception as exc:
        future.set_exception(exc)
    else:
        future.set_result(sock)


def _close(future: Future[socket.socket]) -> None:
    if not future.cancelled() and future.exception() is None:
        future.result().close()
