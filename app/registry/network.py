"""The sockets under the pools of `transport.py`: the connections opened early
(`early.py`) taken before any of their own is opened, and a cheap answer to the question
httpcore asks most: each time it places a request it asks every idle connection
whether the server has closed it (`is_readable`), and anyio builds its whole table of a
socket's attributes for each such ask (some 1,200 of them in a cold `ecoready images` of the
lab: 5-10 ms of CPU, on the path of every answer). The streams handed out answer it from the
socket they looked up once.

httpx (0.27, 0.28) takes no network backend: `plain_http` and `tls_transport` make their
transport's pool again with one; should a later httpx keep its pool elsewhere, it keeps its own.
"""

from __future__ import annotations

import asyncio
import select
import socket
import ssl
from collections.abc import Iterable
from concurrent.futures import Future
from typing import Any, Protocol

import anyio.abc
import httpcore
import httpx

from ecoready.registry.early import EarlyConnections

try:  # the stream httpcore makes of anyio's (private: a later httpcore may move it)
    from httpcore._backends.anyio import AnyIOStream as _AnyIOStream
except ImportError:  # pragma: no cover
    _AnyIOStream = None  # type: ignore[assignment,misc]


def plain_http(limits: httpx.Limits, network: httpcore.AsyncNetworkBackend) -> httpx.AsyncHTTPTransport:
    """httpx's transport for http:// URLs, its pool connecting through `network`."""
    # only http:// URLs come here; a context that trusts no one keeps it that way
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    return _through(httpx.AsyncHTTPTransport(verify=context, limits=limits), context, limits, network, http2=False)


def tls_transport(
    context: ssl.SSLContext, limits: httpx.Limits, network: httpcore.AsyncNetworkBackend
) -> httpx.AsyncHTTPTransport:
    """httpx's transport for https:// URLs, offering HTTP/2, its pool connecting through `network`."""
    transport = httpx.AsyncHTTPTransport(verify=context, limits=limits, http2=True)
    return _through(transport, context, limits, network, http2=True)


def _through(
    transport: httpx.AsyncHTTPTransport,
    context: ssl.SSLContext,
    limits: httpx.Limits,
    network: httpcore.AsyncNetworkBackend,
    *,
    http2: bool,
) -> httpx.AsyncHTTPTransport:
    if isinstance(getattr(transport, "_pool", None), httpcore.AsyncConnectionPool):
        transport._pool = httpcore.AsyncConnectionPool(
            ssl_context=context,
            max_connections=limits.max_connections,
            max_keepalive_connections=limits.max_keepalive_connections,
            keepalive_expiry=limits.keepalive_expiry,
            http2=http2,
            network_backend=network,
        )
    return transport


class Network(httpcore.AsyncNetworkBackend):
    """The network as httpcore's pool sees it: anyio's, a connection opened early
    (`early.py`) taken in place of connecting, its TCP streams answering `is_readable`
    cheaply."""

    def __init__(self, early: EarlyConnections | None = None) -> None:
        self._network = httpcore.AnyIOBackend()
        self._early = early

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        opened = self._early.take((host, port)) if self._early and not local_address and not socket_options else None
        if opened is not None:
            stream = await _taken(opened)
            if stream is not None:
                return _Stream(stream)
        return _Stream(await self._network.connect_tcp(host, port, timeout, local_address, socket_options))

    async def connect_unix_socket(
        self, path: str, timeout: float | None = None, socket_options: Iterable[Any] | None = None
    ) -> httpcore.AsyncNetworkStream:
        return await self._network.connect_unix_socket(path, timeout, socket_options)

    async def sleep(self, seconds: float) -> None:
        await self._network.sleep(seconds)


class _Stream(httpcore.AsyncNetworkStream):
    """anyio's stream, whether it is readable answered from its socket looked up once."""

    def __init__(self, inner: httpcore.AsyncNetworkStream) -> None:
        self._inner = inner
        # anyio hands out asyncio's TransportSocket, a stand-in for the socket with its fileno()
        sock = inner.get_extra_info("socket")
        self._socket: _HasFileno | None = sock if callable(getattr(sock, "fileno", None)) else None

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


class _HasFileno(Protocol):
    def fileno(self) -> int: ...


async def _taken(opened: Future[socket.socket]) -> httpcore.AsyncNetworkStream | None:
    """The connection opened early as httpcore's stream; None when it failed (a connection of
    the asker's own says why) or this anyio cannot take a socket made elsewhere. One that
    timed out is the asker's connect timeout: not waited for twice."""
    try:
        sock = await asyncio.wrap_future(opened)
    except TimeoutError as exc:  # it waited as long as a connection of the asker's own would
        raise httpcore.ConnectTimeout(str(exc) or "timed out") from exc
    except Exception:
        return None
    if _AnyIOStream is None or not hasattr(anyio.abc.SocketStream, "from_socket"):
        sock.close()
        return None
    try:
        return _AnyIOStream(await anyio.abc.SocketStream.from_socket(sock))
    except OSError:
        sock.close()
        return None


def _readable(sock: _HasFileno) -> bool:
    """Data or an end waiting on an idle connection (the server closed it), or no socket."""
    if sock.fileno() < 0:
        return True
    if hasattr(select, "poll"):
        poller = select.poll()
        poller.register(sock, select.POLLIN)
        return bool(poller.poll(0))
    return bool(select.select([sock], [], [], 0)[0])  # Windows has no poll
