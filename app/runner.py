"""The asyncio scheduler: runs the plan's cells under a concurrency limit, each stage under
its budget, and emits events. Cleanup is unconditional: every cell removes what it made in
`finally`, and the run ends with a sweep of everything labelled with its run id.

How a stage ends decides who is blamed: the component (StageFailed, SQL errors: fail),
the clock (budget exceeded: timeout) or the tool and its infrastructure (InfraError,
anything unexpected: error).
"""

from __future__ import annotations

import asyncio
import logging
import time
import traceback
from collections.abc import Awaitable, Iterable
from datetime import datetime, timezone

from app.context import ProbeContext, RunContext
from app.errors import DeadlineExceeded, EcoreadyError, InfraError
from app.events import (
    CellFinished,
    CellLog,
    CellPlanned,
    CellStarted,
    ImageResolved,
    RunFinished,
    RunStarted,
    StageFinished,
    StageStarted,
)
from app.images import ImageUnavailable
from app.model import Outcome, Stage
from app.plan import CellPlan, Plan
from app.sql import SqlError
from app.text import one_line
from probes import load
from probes.base import Probe, Skip, StageFailed

log = logging.getLogger("ecoready.runner")


def now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class Runner:
    def __init__(self, plan: Plan, run: RunContext, *, concurrency: int = 2) -> None:
        self.plan = plan
        self.run = run
        self.concurrency = max(1, concurrency)
        self._slots = asyncio.Semaphore(self.concurrency)
        # Cells under way, by id: the plan's first pass and any re-runs of an open session.
        self._active: dict[str, asyncio.Task[None]] = {}
        # Held while sweeping: a re-run must not create resources that a sweep by this run's
        # id would then remove under it.
        self._sweep_lock = asyncio.Lock()

    def planned(self) -> RunStarted:
        cells = tuple(
            CellPlanned(
                cell_id=c.id,
                component=c.component.id,
                name=c.component.name,
                category=c.component.category.value,
                arch=c.arch,
                host=c.host,
                emulated=c.emulated,
            )
            for c in self.plan.cells
        )
        return RunStarted(
            run_id=self.run.run_id,
            at=now(),
            matrix=self.plan.matrix.path,
            profile=self.plan.profile,
            arches=self.plan.arches,
            cells=cells,
            hosts=self.plan.hosts,
        )

    def under_way(self) -> frozenset[str]:
        """Ids of the cells running (or waiting for a slot) now."""
        return frozenset(cid for cid, task in self._active.items() if not task.done())

    async def run_all(self) -> bool:
        """Run every cell; True when the run finished, False when it was interrupted."""
        self.run.emit(self.planned())
        interrupted = False
        try:
            await self._run_many(self.plan.cells)
        except asyncio.CancelledError:
            interrupted = True
            raise
        finally:
            await to_the_end(self._finish_run(interrupted))
        return True

    async def run_cells(self, cell_ids: Iterable[str]) -> None:
        """Run these cells again in the same run (same run id, labels and secrets). Each
        emits CellStarted ... CellFinished, so the reducer starts it afresh; cells under way
        are left alone. Their resources go in each cell's `finally`; `close()` sweeps."""
        wanted = list(dict.fromkeys(cell_ids))
        known = {c.id: c for c in self.plan.cells}
        unknown = [cid for cid in wanted if cid not in known]
        if unknown:
            raise KeyError(f"not cells of this run: {', '.join(unknown)}")
        busy = self.under_way()
        await self._run_many([known[cid] for cid in wanted if cid not in busy])

    async def _run_many(self, cells: Iterable[CellPlan]) -> None:
        async with self._sweep_lock:  # a sweep under way ends before cells start again
            tasks = [asyncio.create_task(self.run_cell(cell), name=cell.id) for cell in cells]
            self._active = {cid: t for cid, t in self._active.items() if not t.done()}
            self._active.update({task.get_name(): task for task in tasks})
        try:
            await asyncio.gather(*tasks)
        except asyncio.CancelledError:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            raise

    async def close(self) -> None:
        """Stop the cells still under way, then sweep everything labelled with the run id
        (what a re-run left when the first pass's sweep had to wait for it)."""
        tasks = [t for t in self._active.values() if not t.done()]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await self._sweep()

    async def _finish_run(self, interrupted: bool) -> None:
        await self._sweep()
        self.run.emit(RunFinished(at=now(), interrupted=interrupted))

    async def _sweep(self) -> None:
        async with self._sweep_lock:
            if self.under_way():
                return  # re-run cells own resources of this run now; close() sweeps after them
            try:
                await self.run.host.sweep(run_id=self.run.run_id, me=self.run.owner)
            except Exception as exc:
                log.warning("final sweep failed: %s", exc)

    async def run_cell(self, cell: CellPlan) -> None:
        async with self._slots:
            await self._cell(cell)

    async def _cell(self, cell: CellPlan) -> None:
        emit = self.run.emit
        started = time.monotonic()
        emit(CellStarted(cell.id, now()))
        if cell.unrunnable:
            emit(StageFinished(cell.id, Stage.IMAGE, Outcome.ERROR, 0.0, cell.unrunnable))
            emit(CellFinished(cell.id, now(), 0.0))
            return
        ctx = ProbeContext(cell, self.run)
        probe = load(cell.component.probe)(ctx)
        stage = cell.stages[0]
        try:
            for stage in cell.stages:
                outcome = await self._stage(cell, ctx, probe, stage)
                if stage in (Stage.IMAGE, Stage.START) and outcome is not Outcome.PASS:
                    break
                if outcome in (Outcome.ERROR, Outcome.TIMEOUT):
                    break
        except asyncio.CancelledError:
            emit(StageFinished(cell.id, stage, Outcome.ERROR, 0.0, "interrupted"))
            raise
        finally:
            await to_the_end(self._wrap_up(cell, ctx, started))

    async def _wrap_up(self, cell: CellPlan, ctx: ProbeContext, started: float) -> None:
        """Log tail, removal of the cell's resources, and its last event: always all three."""
        if ctx.main is not None:
            lines = await _quiet(ctx.logs())
            self.run.emit(CellLog(cell.id, tuple(lines) if isinstance(lines, list) else ()))
        await _quiet(ctx.close())
        self.run.emit(CellFinished(cell.id, now(), round(time.monotonic() - started, 2)))

    async def _stage(self, cell: CellPlan, ctx: ProbeContext, probe: Probe, stage: Stage) -> Outcome:
        emit = self.run.emit
        emit(StageStarted(cell.id, stage))
        ctx.stage = stage
        budget = cell.budgets[stage]
        started = time.monotonic()
        outcome, detail, missing = Outcome.PASS, "", False
        try:
            detail = await asyncio.wait_for(self._do(cell, ctx, probe, stage), budget) or ""
            if stage is Stage.SMOKE and ctx.failed_checks:
                outcome = Outcome.FAIL
                detail = "failed: " + ", ".join(ctx.failed_checks)
            if stage is Stage.SMOKE and ctx.timed_out_checks:
                outcome = Outcome.TIMEOUT
                detail = "timed out: " + ", ".join(ctx.timed_out_checks)
        except asyncio.TimeoutError:
            outcome = Outcome.TIMEOUT
            detail = f"exceeded its {budget:.0f} s budget" + (f" ({ctx.waiting_for})" if ctx.waiting_for else "")
        except ImageUnavailable as exc:
            outcome, detail, missing = Outcome.FAIL, str(exc), exc.missing
        except Skip as exc:
            outcome, detail = Outcome.SKIP, str(exc)
        except (StageFailed, SqlError) as exc:
            outcome, detail = Outcome.FAIL, str(exc)
        except DeadlineExceeded as exc:
            outcome, detail = Outcome.TIMEOUT, str(exc)
        except InfraError as exc:
            outcome, detail = Outcome.ERROR, str(exc)
        except EcoreadyError as exc:
            outcome, detail = Outcome.ERROR, str(exc)
        except Exception as exc:
            log.error(
                "internal error in %s %s:\n%s", cell.id, stage.value, self.run.secrets.redact(traceback.format_exc())
            )
            outcome, detail = Outcome.ERROR, f"internal error: {type(exc).__name__}: {exc}"
        seconds = round(time.monotonic() - started, 3)
        emit(
            StageFinished(
                cell.id, stage, outcome, seconds, one_line(self.run.secrets.redact(detail), 300), missing=missing
            )
        )
        return outcome

    async def _do(self, cell: CellPlan, ctx: ProbeContext, probe: Probe, stage: Stage) -> str:
        if stage is Stage.IMAGE:
            info = await self.run.images.ensure(cell.component.image, cell.arch)
            self.run.emit(ImageResolved(cell.id, info))
            return f"{info.found_as} {info.digest[:19]}"
        if stage is Stage.START:
            begun = time.monotonic()
            await probe.start()
            return f"ready in {time.monotonic() - begun:.1f} s"
        if stage is Stage.SMOKE:
            await probe.smoke()
            return ""
        await probe.bench()
        return ""


async def to_the_end(awaitable: Awaitable[None]) -> None:
    """Await `awaitable` to completion even when the caller is cancelled meanwhile (cleanup
    must not be cut short by a second Ctrl-C); the cancellation is re-raised afterwards."""
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


async def _quiet(awaitable: object) -> object:
    try:
        return await awaitable  # type: ignore[misc]
    except Exception as exc:
        log.warning("cleanup step failed: %s", exc)
        return None
