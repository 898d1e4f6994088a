"""What the tests of the one single-flight's users share (app/domain/flight.py): the
scenario of a first asker running out of its budget while a second one waits, and a real
HTTP server in this process whose answers a test holds back."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Coroutine, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, TypeVar

import pytest

T = TypeVar("T")
BUDGET = 0.3  # the first asker's, spent while the work is held


async def first_cancelled(
    ask: Callable[[], Coroutine[Any, Any, T]],
    release: Callable[[], object],
    second_ask: Callable[[], Coroutine[Any, Any, T]] | None = None,
) -> T:
    """A first asker whose budget runs out mid-way, a second one (`second_ask`, else the
    same question) with time to spare: the second is not let go with the first, and its
    answer, once `release()` lets the work end, is returned."""

    async def hurried() -> T:
        async with asyncio.timeout(BUDGET):
            return await ask()

    first = asyncio.create_task(hurried())
    await asyncio.sleep(0.05)  # the first has started the work
    second = asyncio.create_task((second_ask or ask)())
    with pytest.raises(TimeoutError):
        await first
    await asyncio.sleep(0.05)
    assert not second.done(), "the second asker was let go with the first"
    release()
    return await second


@contextmanager
def serving(handler: type[BaseHTTPRequestHandler], gate: threading.Event | None = None) -> Iterator[str]:
    """`handler` served on a free loopback port (its `host:port`); `gate` is opened before
    the server stops, so no held answer keeps it."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"127.0.0.1:{server.server_address[1]}"
    finally:
        if gate is not None:
            gate.set()
        server.shutdown()
        server.server_close()


class Held:
    """Work held until `release` is set: how often it was asked, how often cancelled."""

    def __init__(self) -> None:
        self.release = asyncio.Event()
        self.calls = 0
        self.cancelled = 0

    async def wait(self) -> None:
        self.calls += 1
        try:
            await self.release.wait()
        except asyncio.CancelledError:
            self.cancelled += 1
            raise
