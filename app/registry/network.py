"""The sockets under the plain-HTTP pool of `transport.py`: TCP connections opened ahead of
need, and a cheap answer to the question httpcore asks most.

- `OpenAhead.open` starts a connection to a registry before any request needs it (while
  the registry's first answer, which goes alone, is on its way); once `hand_over` says so,
  a connection the pool asks for takes one of those instead of waiting a round trip for a
  handshake. Those never taken are closed with the pool's network (`aclose`).
- Each time httpcore places a request it asks every idle connection whether the server has
  closed it (`is_readable`); anyio builds its whole table of a socket's attributes for
  each such ask (some 1,100 of them in a cold `ecoready images` of the lab: ~20 ms of CPU).
  The streams handed out answer it from the socket they looked up once.

httpx (0.27, 0.28) takes no network backend: `plain_http` makes its transport's pool
again with one; should a later httpx keep its pool elsewhere, it keeps its own.
"""

from __future__ import annotations

import asyncio
import collections
import select
import socket
import ssl
from collections.abc import Iterable
from typing import Any

import httpcore
import httpx

Origin = tuple[str, int]  # host (as httpcore names it: no brackets, IDNA), port


def origin_of(url: httpx.URL) -> Origin | None:
    """The origin of a plain-HTTP URL as the pool connects to it; None for any other."""
    if url.scheme != "http":
        return None
    return url.raw_host.decode("ascii"), url.port or 80


def plain_http(limits: httpx.Limits, network: httpcore.AsyncNetworkBackend) -> httpx.AsyncHTTPTransport:
    """httpx's transport for http:// URLs, its pool connecting through `network`."""
    # only http:// URLs come here; a context that trusts no one keeps it that way
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    transport = httpx.AsyncHTTPTransport(verify=context, limits=limits)
    if isinstance(getattr(transport, "_pool", None), httpcore.AsyncConnectionPool):
        transport._pool = httpcore.AsyncConnectionPool(
            ssl_context=context,
            max_connections=limits.max_connections,
            max_keepalive_connections=limits.max_keepalive_connections,
            keepalive_expiry=limits.keepalive_expiry,
            network_backend=network,
        )
    return transport


class OpenAhead(httpcore.AsyncNetworkBackend):
    """The network as httpcore's pool sees it, with TCP connections opened ahead of need."""

    def __init__(self) -> None:
        self._network = httpcore.AnyIOBackend()
        self._opening: dict[Origin, list[asyncio.Task[httpcore.AsyncNetworkStream]]] = {}
        self._ahead: dict[Origin, collections.deque[asyncio.Task[httpcore.AsyncNetworkStream]]] = {}

    def open(self, origin: Origin, timeout: float | None) -> None:
        """A connection to `origin` opened now, kept until handed over."""
        task = asyncio.ensure_future(self._network.connect_tcp(*origin, timeout=timeout))
        task.add_done_callback(_seen)
        self._opening.setdefault(origin, []).append(task)

    def hand_over(self, origin: Origin) -> None:
        """The connections opened ahead to `origin` are now for the pool to take."""
        self._ahead.setdefault(origin, collections.deque()).extend(self._opening.pop(origin, ()))

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        opened = self._ahead.get((host, port))
        while opened and local_address is None and not socket_options:
            try:
                return _Stream(await opened.popleft())
            except (OSError, httpcore.NetworkError, httpcore.TimeoutException):
                continue  # that one failed: the next, or a connection of its own says why
        return _Stream(await self._network.connect_tcp(host, port, timeout, local_address, socket_options))

    async def connect_unix_socket(
        self, path: str, timeout: float | None = None, socket_options: Iterable[Any] | None = None
    ) -> httpcore.AsyncNetworkStream:
        return await self._network.connect_unix_socket(path, timeout, socket_options)

    async def sleep(self, seconds: float) -> None:
        await self._network.sleep(seconds)

    async def aclose(self) -> None:
        tasks = [task for opened in (*self._opening.values(), *self._ahead.values()) for task in opened]
        self._opening.clear()
        self._ahead.clear()
        for task in tasks:
            if not task.done():
                task.cancel()
            elif not task.cancelled() and task.exception() is None:
                await task.result().aclose()


class _Stream(httpcore.AsyncNetworkStream):
    """anyio's stream, whether it is readable answered from its socket looked up once."""

    def __init__(self, inner: httpcore.AsyncNetworkStream) -> None:
        self._inner = inner
        sock = inner.get_extra_info("socket")
        self._socket: socket.socket | None = sock if isinstance(sock, socket.socket) else None

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return await self._inner.read(max_bytes, timeout)

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:
        await self._inner.write(buffer, timeout)

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def start_tls(
        self, ssl_context: ssl.SSLContext, server_hostname: str | None = None, timeout: float | None = None
    ) -> httpcore.AsyncNetworkStream:
        return await self._inner.start_tls(ssl_context, server_hostname, timeout)

    def get_extra_info(self, info: str) -> Any:
        if info == "is_readable" and self._socket is not None:
            return _readable(self._socket)
        return self._inner.get_extra_info(info)


def _readable(sock: socket.socket) -> bool:
    """Data or an end waiting on an idle connection (the server closed it), or no socket."""
    if sock.fileno() < 0:
        return True
    if hasattr(select, "poll"):
        poller = select.poll()
        poller.register(sock, select.POLLIN)
        return bool(poller.poll(0))
    return bool(select.select([sock], [], [], 0)[0])  # Windows has no poll


def _seen(task: asyncio.Task[Any]) -> None:
    """A connection opened ahead that failed: its failure is not news (asyncio would log it)."""
    if not task.cancelled():
        task.exception()
