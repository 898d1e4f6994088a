"""Once per key: work that several askers want at once is done once, and shared.

The work runs as a task of its own, owned by the `Flights`, never inside an asker's task.
Each asker awaits it shielded, so an asker cancelled (its own budget spent, its own cell
stopped) leaves alone: the work and the other askers go on untouched. When the last asker
leaves, the work is cancelled and awaited, and its key forgotten: nothing outlives its
askers, and a later asker starts afresh. A failure is handed to every asker waiting, then
forgotten (a later asker tries again). A success is remembered for later askers when the
`Flights` is made with `remember=True` (a memo), else forgotten too. Work may also be
started before anyone asks (`start`), to overlap other work.

The one copy of this in ecoready: images pulled per host (`registry/image_store.py`),
registry lookups, bodies, tag lists and tokens (`registry/client.py`, `transport.py`),
package registry URLs and verdicts (`packages/http.py`, `client.py`), build audits
(`run/audit_stage.py`), the lab's images, build contexts and native tools (`lab/build.py`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine, Hashable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from ecoready.domain.errors import EcoreadyError

K = TypeVar("K", bound=Hashable)
T = TypeVar("T")


@dataclass
class _Flight(Generic[T]):
    work: asyncio.Task[T]
    askers: int = 0


class Flights(Generic[K, T]):
    """Shared work per key (see the module). Use one from one event loop."""

    def __init__(self, *, remember: bool) -> None:
        self.remember = remember
        self._kept: dict[K, T] = {}
        self._flying: dict[K, _Flight[T]] = {}

    @classmethod
    def memo(cls) -> Flights[K, T]:
        """A `Flights` that remembers its successes (a dataclass field's default_factory)."""
        return cls(remember=True)

    def __contains__(self, key: object) -> bool:
        """Whether `key` is remembered or under way: an asker now would not start it."""
        return key in self._kept or key in self._flying

    def under_way(self) -> int:
        """How many works are running now."""
        return len(self._flying)

    def kept(self) -> list[T]:
        """The answers remembered (a memo's)."""
        return list(self._kept.values())

    def start(self, key: K, work: Callable[[], Coroutine[Any, Any, T]]) -> None:
        """Start `work()` for `key` now, unless known, for askers to come (work that should
        overlap other work): it runs until it ends, is closed, or its askers all left."""
        if key not in self:
            self._start(key, work)

    def keep(self, key: K, value: T) -> None:
        """Remember `value` for `key`, learned another way (a memo only)."""
        if self.remember:
            self._kept.setdefault(key, value)

    async def ask(self, key: K, work: Callable[[], Coroutine[Any, Any, T]]) -> T:
        """The answer for `key`: remembered, the one under way, or `work()` started now."""
        if key in self._kept:
            return self._kept[key]
        flight = self._flying.get(key) or self._start(key, work)
        flight.askers += 1
        try:
            return await asyncio.shield(flight.work)
        except asyncio.CancelledError:
            if not asked_to_stop():  # the work was stopped under a waiting asker: `aclose`
                raise EcoreadyError("the shared work it waited for was stopped before its end") from None
            if flight.askers == 1 and not flight.work.done():  # the last asker leaves
                await self._stop(key, flight)
            raise
        finally:
            flight.askers -= 1

    def _start(self, key: K, work: Callable[[], Coroutine[Any, Any, T]]) -> _Flight[T]:
        flight = _Flight(asyncio.get_running_loop().create_task(work(), name=f"flight {key!r}"[:120]))
        self._flying[key] = flight
        flight.work.add_done_callback(lambda done: self._settle(key, flight, done))
        return flight

    async def aclose(self) -> None:
        """Stop every work under way, wait until each has, and forget every answer (at the
        end of a run)."""
        flying = [flight.work for flight in self._flying.values()]
        self._flying.clear()
        for work in flying:
            work.cancel()
        if flying:
            await asyncio.wait(flying)
        self._kept.clear()

    async def _stop(self, key: K, flight: _Flight[T]) -> None:
        """Cancel the work nobody waits for any more, forget it, and wait until it ended."""
        if self._flying.get(key) is flight:
            del self._flying[key]
        flight.work.cancel()
        await asyncio.wait([flight.work])

    def _settle(self, key: K, flight: _Flight[T], done: asyncio.Task[T]) -> None:
        if self._flying.get(key) is flight:
            del self._flying[key]
        if done.cancelled() or done.exception() is not None:  # retrieved: never logged as lost
            return
        if self.remember:
            self._kept[key] = done.result()


def asked_to_stop() -> bool:
    """Whether the task running now was asked to stop (cancelled, or its `asyncio.timeout`
    fired), not merely handed another task's CancelledError."""
    task = asyncio.current_task()
    return task is None or task.cancelling() > 0
