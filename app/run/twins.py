"""An emulated cell cut short when its native twin failed the same way.

The same image (one matrix row: one reference, one component) is often run natively on one
arch and emulated on the other. When the native cell's start ends in a way that is no arch's
(it ran over its budget, or its container did not start: the component's setting or our
probe's limit), the emulated cell would end the same way, only slower: it would wait out its
whole emulated budget (six times the native one). So its start is cut short, at once when
it comes to start after the native one failed, or as soon as the native one fails while it
is starting: it ends `skipped` with the cause `twin-failed` and the native cell's own words,
never blamed on its arch.

Decided from data only: the native cell's stage, its blame's cause, and the row the two
cells share (`CellPlan.component.id`). A cell run again (`Runner.run_cells`) forgets what
its row's twins ended with, so a re-run is a full one.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine, Iterable
from dataclasses import dataclass
from typing import Any

from ecoready.domain.blame import Blame, Cause, Stage, said
from ecoready.domain.errors import TwinFailed
from ecoready.plan.cells import CellPlan

# How a native start ends that its emulated twin would repeat: not the arch's doing there.
SAME_WAY = frozenset({Cause.OVER_BUDGET, Cause.DOES_NOT_START})


@dataclass(frozen=True)
class NativeEnding:
    """How a native cell's start failed: what its emulated twin is told."""

    cell_id: str
    blame: Blame
    detail: str

    def error(self) -> TwinFailed:
        words = said(self.blame, self.detail) or self.blame.cause.value
        return TwinFailed(f"its native twin {self.cell_id} failed the same way at start: {words}", subject=self.cell_id)


class Twins:
    """What the native cells of each row ended their start with, and the emulated cells
    of the same row waiting on it."""

    def __init__(self) -> None:
        self._failed: dict[str, NativeEnding] = {}
        self._signals: dict[str, asyncio.Event] = {}

    def _signal(self, row: str) -> asyncio.Event:
        return self._signals.setdefault(row, asyncio.Event())

    def ended(self, cell: CellPlan, stage: Stage, blame: Blame | None, detail: str) -> None:
        """A stage of `cell` ended: a native start that failed in a way no arch causes is
        kept for its emulated twins (the first one, when several native cells share a row)."""
        if cell.emulated or stage is not Stage.START or blame is None or blame.cause not in SAME_WAY:
            return
        row = cell.component.id
        if row not in self._failed:
            self._failed[row] = NativeEnding(cell.id, blame, detail)
            self._signal(row).set()

    def forget(self, cells: Iterable[CellPlan]) -> None:
        """These cells run again: their rows' twins are judged afresh."""
        for cell in cells:
            self._failed.pop(cell.component.id, None)
            self._signals.pop(cell.component.id, None)

    def failed_twin(self, cell: CellPlan) -> NativeEnding | None:
        """The native failure that cuts this emulated cell's start short, if any yet."""
        return self._failed.get(cell.component.id) if cell.emulated else None

    async def cut_short(self, cell: CellPlan, stage: Stage, work: Callable[[], Coroutine[Any, Any, str]]) -> str:
        """`work()`'s answer; for an emulated cell's start, raises TwinFailed instead as
        soon as its native twin has failed the same way (the start under way is cancelled,
        and what it made is removed with the cell's resources as always)."""
        if not cell.emulated or stage is not Stage.START:
            return await work()
        known = self.failed_twin(cell)
        if known is not None:
            raise known.error()
        task = asyncio.ensure_future(work())
        waiter = asyncio.ensure_future(self._signal(cell.component.id).wait())
        try:
            await asyncio.wait({task, waiter}, return_when=asyncio.FIRST_COMPLETED)
        finally:  # also when this stage itself is cancelled (its budget, a stop): neither outlives it
            waiter.cancel()
            if not task.done():
                task.cancel()
                await asyncio.gather(task, return_exceptions=True)
        known = self.failed_twin(cell)
        if task.cancelled() and known is not None:
            raise known.error()
        return task.result()  # it ended first (or together): its own answer stands
