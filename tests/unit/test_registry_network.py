"""The sockets under the plain-HTTP pool (registry/network.py): connections opened ahead of
need, taken only once handed over, a failed one replaced by a connection of the asker's
own, the untaken ones closed with the client; an idle connection the server closed is
seen as readable. Against a real TCP server on loopback that counts what it accepts."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator, Callable

import httpcore
import pytest

from ecoready.registry.network import OpenAhead


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


async def test_connections_opened_ahead_are_taken_once_handed_over(listener: Listener) -> None:
    network = OpenAhead()
    network.open(listener.origin, 5.0)
    network.open(listener.origin, 5.0)
    await settle(lambda: listener.accepted == 2)
    first = await network.connect_tcp(*listener.origin)  # before the hand-over: one of its own
    await settle(lambda: listener.accepted == 3)
    network.hand_over(listener.origin)
    taken = [await network.connect_tcp(*listener.origin) for _ in range(2)]
    await asyncio.sleep(0.05)
    assert listener.accepted == 3  # the two opened ahead, no new one
    third = await network.connect_tcp(*listener.origin)  # none left: opened then
    await settle(lambda: listener.accepted == 4)
    for stream in (first, *taken, third):
        await stream.aclose()
    await network.aclose()
    await settle(lambda: listener.closed == 4)


async def test_a_connection_that_failed_ahead_is_opened_again_by_its_asker(listener: Listener) -> None:
    with socket.socket() as unused:
        unused.bind(("127.0.0.1", 0))
        dead = ("127.0.0.1", int(unused.getsockname()[1]))  # bound, not listening: refused
    network = OpenAhead()
    network.open(dead, 5.0)
    network.hand_over(dead)
    with pytest.raises(httpcore.ConnectError):
        await network.connect_tcp(*dead)  # its own attempt says why
    network.open(listener.origin, 5.0)
    network.hand_over(listener.origin)
    stream = await network.connect_tcp(*listener.origin)
    await stream.aclose()
    await network.aclose()


async def test_connections_never_taken_are_closed_with_the_client(listener: Listener) -> None:
    network = OpenAhead()
    for _ in range(3):
        network.open(listener.origin, 5.0)
    await settle(lambda: listener.accepted == 3)
    network.hand_over(listener.origin)
    await network.aclose()
    await settle(lambda: listener.closed == 3)


async def test_an_idle_connection_the_server_closed_is_readable(listener: Listener) -> None:
    network = OpenAhead()
    stream = await network.connect_tcp(*listener.origin)
    await settle(lambda: len(listener.writers) == 1)
    assert stream.get_extra_info("is_readable") is False  # idle, open: reusable
    assert stream.get_extra_info("socket") is not None  # the rest asked of anyio's stream
    listener.writers[0].close()  # the server ends it (a keep-alive timeout, say)
    await settle(lambda: stream.get_extra_info("is_readable") is True)
    await stream.aclose()
    await network.aclose()
