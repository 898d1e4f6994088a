"""asyncio helpers for work that must finish even when its caller is cancelled, and for
work that must not outlive it."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable, Sequence
from typing import TypeVar

T = TypeVar("T")


async def to_the_end(awaitable: Awaitable[None]) -> None:
    """Await `awaitable` to completion even when the caller is cancelled meanwhile, once
    or several times (cleanup must not be cut short by a second Ctrl-C, nor by a run whose
    tasks are cancelled twice); the cancellation is re-raised afterwards."""
    task = asyncio.ensure_future(awaitable)
    cancelled = False
    while not task.done():
        try:
            await asyncio.shield(task)
        except asyncio.CancelledError:
            cancelled = True
    task.result()
    if cancelled:
        raise asyncio.CancelledError


async def remove_when_made(
    created: asyncio.Future[str], remove: Callable[[str], Awaitable[object]], timeout: float
) -> None:
    """Remove what a create call cancelled in flight still makes (the container), once the
    call returns within `timeout`; errors are swallowed: the sweep by label remains."""
    with contextlib.suppress(Exception):
        async with asyncio.timeout(timeout):
            made = await asyncio.shield(created)
        await remove(made)


async def together(*awaitables: Awaitable[T]) -> list[T]:
    """Await all at once; their results in order. The first to fail cancels the others and
    is raised as it is (not wrapped, as TaskGroup would: the runner blames by its type);
    when the caller is cancelled, so are they. Either way none runs on after this returns:
    `asyncio.gather` would leave them running, e.g. starting containers after the cell's
    cleanup."""
    tasks = [asyncio.ensure_future(a) for a in awaitables]
    if not tasks:
        return []
    try:
        await asyncio.wait(tasks, return_when=asyncio.FIRST_EXCEPTION)
    finally:
        for task in tasks:
            task.cancel()
        await to_the_end(_settled(tasks))
    failures = [task.exception() for task in tasks if not task.cancelled()]
    first = next((exc for exc in failures if exc is not None), None)
    if first is not None:
        raise first
    return [task.result() for task in tasks]


async def _settled(tasks: Sequence[asyncio.Future[T]]) -> None:
    """Wait for them all and read every failure (asyncio logs one nobody read as "Task
    exception was never retrieved", also when only the first is raised)."""
    await asyncio.wait(tasks)
    for task in tasks:
        if not task.cancelled():
            task.exception()
