"""The sockets under the registry pools (registry/network.py, registry/early.py):
connections opened early are taken before any of the pool's own, a failed one replaced by
a connection of the asker's own, the untaken ones closed with the client; an idle
connection the server closed is seen as readable, answered from the socket without asking
anyio. Against a real TCP server on loopback that counts what it accepts."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator, Callable

import httpcore
import pytest

from ecoready.matrix.document import Mirror
from ecoready.registry.early import PER_REGISTRY, EarlyConnections, endpoint_of, open_early, scheme_of
from ecoready.registry.network import Network


class Listener:
    def __init__(self) -> None:
        self.accepted = 0
        self.closed = 0
        self.server: asyncio.Server | None = None
        self.writers: list[asyncio.StreamWriter] = []

    async def _client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.accepted += 1
        self.writers.append(writer)
        await reader.read()  # until the other side closes
        self.closed += 1
        writer.close()

    @property
    def origin(self) -> tuple[str, int]:
        assert self.server is not None
        return "127.0.0.1", int(self.server.sockets[0].getsockname()[1])


@pytest.fixture
async def listener() -> AsyncIterator[Listener]:
    counting = Listener()
    counting.server = await asyncio.start_server(counting._client, "127.0.0.1", 0)
    yield counting
    counting.server.close()


async def settle(condition: Callable[[], bool], *, seconds: float = 5.0) -> None:
    async with asyncio.timeout(seconds):
        while not condition():
            await asyncio.sleep(0.01)


async def test_connections_opened_early_are_taken_before_any_of_its_own(listener: Listener) -> None:
    early = EarlyConnections()
    early.open(listener.origin, 2)
    await settle(lambda: listener.accepted == 2)
    network = Network(early)
    taken = [await network.connect_tcp(*listener.origin) for _ in range(2)]
    await asyncio.sleep(0.05)
    assert listener.accepted == 2  # the two opened early, no new one
    third = await network.connect_tcp(*listener.origin)  # none left: opened then
    await settle(lambda: listener.accepted == 3)
    for stream in (*taken, third):
        await stream.aclose()
    early.close()
    await settle(lambda: listener.closed == 3)


async def test_a_connection_that_failed_early_is_opened_again_by_its_asker(listener: Listener) -> None:
    with socket.socket() as unused:
        unused.bind(("127.0.0.1", 0))
        dead = ("127.0.0.1", int(unused.getsockname()[1]))  # bound, not listening: refused
    early = EarlyConnections()
    early.open(dead, 1)
    early.open(listener.origin, 1)
    network = Network(early)
    with pytest.raises(httpcore.ConnectError):
        await network.connect_tcp(*dead)  # its own attempt says why
    stream = await network.connect_tcp(*listener.origin)  # the one opened early
    await settle(lambda: listener.accepted == 1)
    await stream.aclose()
    early.close()


async def test_a_connection_that_timed_out_early_is_not_waited_for_twice() -> None:
    with socket.socket() as full:
        full.bind(("127.0.0.1", 0))
        full.listen(0)  # never accepts: once its queue is full, the next handshakes get no answer
        origin = ("127.0.0.1", int(full.getsockname()[1]))
        queued: list[socket.socket] = []
        while len(queued) < 8:  # fill its queue: the first handshake that times out says it is full
            try:
                queued.append(socket.create_connection(origin, timeout=0.2))
            except TimeoutError:
                break
        early = EarlyConnections()
        early.open(origin, 1, timeout=0.3)
        async with asyncio.timeout(3):  # a connection of its own would wait its 5 s again
            with pytest.raises(httpcore.ConnectTimeout):
                await Network(early).connect_tcp(*origin, timeout=5.0)
        for sock in queued:
            sock.close()


async def test_connections_never_taken_are_closed_with_the_client(listener: Listener) -> None:
    early = EarlyConnections()
    early.open(listener.origin, 3)
    early.close()  # some may still be connecting: closed once they are open
    await settle(lambda: listener.accepted == 3 and listener.closed == 3)


async def test_an_idle_connection_the_server_closed_is_readable(listener: Listener) -> None:
    stream = await Network().connect_tcp(*listener.origin)
    await settle(lambda: len(listener.writers) == 1)
    assert stream.get_extra_info("is_readable") is False  # idle, open: reusable
    assert stream.get_extra_info("socket") is not None  # the rest asked of anyio's stream
    listener.writers[0].close()  # the server ends it (a keep-alive timeout, say)
    await settle(lambda: stream.get_extra_info("is_readable") is True)
    await stream.aclose()


async def test_whether_it_is_readable_is_answered_without_asking_anyio(
    listener: Listener, monkeypatch: pytest.MonkeyPatch
) -> None:
    """httpcore asks it of every idle connection each time it places a request; anyio
    answers by building a table of the socket's attributes (its socket is asyncio's
    TransportSocket, no socket.socket)."""
    stream = await Network().connect_tcp(*listener.origin)
    asked: list[str] = []
    inner = vars(stream)["_inner"]  # the anyio stream ecoready's wraps
    real = inner.get_extra_info

    def counted(info: str) -> object:
        asked.append(info)
        return real(info)

    monkeypatch.setattr(inner, "get_extra_info", counted)
    assert stream.get_extra_info("is_readable") is False
    assert asked == []
    await stream.aclose()


@pytest.mark.parametrize(
    ("host", "endpoint", "scheme"),
    [
        ("127.0.0.1:5000", ("127.0.0.1", 5000), "http"),
        ("localhost", ("localhost", 80), "http"),
        ("[::1]:5000", ("::1", 5000), "http"),
        ("registry-1.docker.io", ("registry-1.docker.io", 443), "https"),
        ("ghcr.io:8443", ("ghcr.io", 8443), "https"),
        ("r.example:port", None, "https"),
    ],
)
def test_registries_are_connected_where_their_requests_go(host: str, endpoint: object, scheme: str) -> None:
    assert endpoint_of(host, ()) == endpoint
    assert scheme_of(host, ()) == scheme
    assert scheme_of("r.example:5000", ("r.example:5000",)) == "http"  # the matrix's `insecure`


def test_early_connections_go_to_the_registry_asked_at_most_the_first_wave(monkeypatch: pytest.MonkeyPatch) -> None:
    opened: list[tuple[tuple[str, int], int]] = []
    monkeypatch.setattr(EarlyConnections, "open", lambda self, endpoint, count: opened.append((endpoint, count)))
    images = [f"r.example:5000/app/{n}:1" for n in range(12)] + ["mysql:8.4", "mysql:8.4", "mariadb:11"]
    mirror = (Mirror("docker.io", "mirror.example:5000"),)
    open_early([*images, "ghcr.io/a/b:1", "ghcr.io/a/c:1"], mirrors=mirror, insecure=("r.example:5000",))
    assert sorted(opened) == [
        (("ghcr.io", 443), 1),  # HTTPS: HTTP/2 carries every request on one connection
        (("mirror.example", 5000), 1),  # over HTTPS too: not in `insecure`
        (("r.example", 5000), PER_REGISTRY),  # plain HTTP: one per request at once
    ]
