"""asyncio helpers for work that must finish even when its caller is cancelled."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable


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
