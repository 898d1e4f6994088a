"""What runs on one host while a bench measures, and the gate that keeps the rest of the
run off it.

The runner marks every stage of every cell it runs on a host (`begin`/`end`); a bench
opens a `window` per measured series and learns which other cells' stages ran on the host
while it measured (empty: it measured alone). The `BenchGate` is the other half: a bench
stage holds it alone, the image and audit stages (outside the CPU slots: pulls unpack
layers, the audit reads them) hold it shared, so none of them runs while a bench does.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager


class HostActivity:
    """Stages under way on one host, by cell, and the open bench windows."""

    def __init__(self) -> None:
        self._running: dict[tuple[str, str], int] = {}
        self._windows: list[tuple[str, set[str]]] = []

    def begin(self, cell_id: str, stage: str) -> None:
        key = (cell_id, stage)
        self._running[key] = self._running.get(key, 0) + 1
        for own, seen in self._windows:
            if cell_id != own:
                seen.add(f"{cell_id} {stage}")

    def end(self, cell_id: str, stage: str) -> None:
        key = (cell_id, stage)
        left = self._running.get(key, 0) - 1
        if left > 0:
            self._running[key] = left
        else:
            self._running.pop(key, None)

    def under_way(self, but: str = "") -> tuple[str, ...]:
        """`cell stage` of every stage running now, but the cell `but`'s own."""
        return tuple(sorted(f"{c} {s}" for c, s in self._running if c != but))

    @contextmanager
    def window(self, own: str) -> Iterator[set[str]]:
        """The stages of other cells than `own` that ran (or were running) while the block
        ran: filled in as they start; read it after the block."""
        seen = set(self.under_way(but=own))
        entry = (own, seen)
        self._windows.append(entry)
        try:
            yield seen
        finally:
            self._windows.remove(entry)


class BenchGate:
    """One bench at a time, and nothing holding the gate shared meanwhile. A bench waiting
    keeps new shared holders out (so a stream of pulls cannot starve it)."""

    def __init__(self) -> None:
        self._cond: asyncio.Condition | None = None
        self._shared = 0
        self._bench = False
        self._waiting = 0

    def _condition(self) -> asyncio.Condition:
        if self._cond is None:
            self._cond = asyncio.Condition()
        return self._cond

    @property
    def benching(self) -> bool:
        return self._bench

    @asynccontextmanager
    async def shared(self) -> AsyncIterator[None]:
        cond = self._condition()
        async with cond:
            await cond.wait_for(lambda: not self._bench and not self._waiting)
            self._shared += 1
        try:
            yield
        finally:
            async with cond:
                self._shared -= 1
                cond.notify_all()

    @asynccontextmanager
    async def alone(self) -> AsyncIterator[None]:
        cond = self._condition()
        async with cond:
            self._waiting += 1
            try:
                await cond.wait_for(lambda: not self._bench and self._shared == 0)
            finally:
                self._waiting -= 1
                cond.notify_all()
            self._bench = True
        try:
            yield
        finally:
            async with cond:
                self._bench = False
                cond.notify_all()
