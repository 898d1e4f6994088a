"""The asyncio scheduler: runs the plan's cells under a concurrency limit, each stage under
its budget, and emits events. Cleanup is unconditional: every cell removes what it made in
`finally`, and the run ends with a sweep of everything labelled with its run id.

How a stage ends decides who is blamed: the component (StageFailed, SQL errors: fail),
the clock (budget exceeded: timeout) or the tool and its infrastructure (InfraError,
anything unexpected: error).
"""

from __future__ import annotations

import asyncio
import importlib
import logging
import time
import traceback
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import replace
from datetime import UTC, datetime

from ecoready.domain.blame import Blame, Cause
from ecoready.domain.errors import (
    DockerUnavailable,
    EcoreadyError,
)
from ecoready.domain.events import (
    CellFinished,
    CellLog,
    CellPlanned,
    CellQueued,
    CellStarted,
    HostLost,
    RunFinished,
    RunNote,
    RunStarted,
    StageFinished,
    StageStarted,
)
from ecoready.domain.flight import asked_to_stop
from ecoready.domain.model import ComponentOrigin, Outcome, Stage, Status
from ecoready.domain.specs import LABEL_RUN
from ecoready.domain.text import one_line
from ecoready.engine.aio import to_the_end
from ecoready.matrix.bench_settings import estimate_seconds
from ecoready.matrix.kinds import KINDS, verification
from ecoready.plan.cells import EMULATION_FACTOR, CellPlan, Plan
from ecoready.plan.schedule import Grant, Scheduler, expected_seconds, longest_first
from ecoready.probe_api.context import ProbeContext
from ecoready.probe_api.probe import Probe
from ecoready.probe_api.run_context import RunContext
from ecoready.run.audit_stage import AuditCache, Auditor, audit_targets, default_dir
from ecoready.run.image_stage import image_stage, search_tags_of
from ecoready.run.packaging_stage import packaging_stage
from ecoready.run.start_stage import start_stage
from ecoready.run.twins import Twins

log = logging.getLogger("ecoready.runner")


def load_probe(kind: str) -> type[Probe]:
    """The probe class of a kind (imports its module, ecoready.probes.<kind>, on first use)."""
    module = importlib.import_module(KINDS[kind].module)
    cls: type[Probe] = module.PROBE
    return cls


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class Runner:
    """Runs a plan. `run` is the context of the default host; with several hosts, `hosts`
    maps each host name to its own context (engine, images): each cell runs on its plan's
    host, hosts run in parallel, each with its own slots."""

    def __init__(
        self,
        plan: Plan,
        run: RunContext,
        *,
        concurrency: int | None = None,
        finishing: Callable[[], None] | None = None,
        history: Mapping[str, float] | None = None,
        hosts: Mapping[str, RunContext] | None = None,
        limits: Mapping[str, int] | None = None,
        side_tasks: Sequence[Callable[[], Awaitable[None]]] = (),
    ) -> None:
        """`concurrency` (or a host's entry in `limits`): cells at once on a host, each
        weighing 1; None: weighted slots sized from the host (app/plan/schedule.py). `history`:
        seconds per cell id of a previous run, to start the longest cells first.
        `side_tasks`: work alongside the cells that ends before the final sweep."""
        self.plan = plan
        self.run = run
        self.hosts: dict[str, RunContext] = dict(hosts or {})
        facts = {h.name: h for h in plan.hosts}
        self.scheduler = Scheduler.for_run(plan.hosts[:1], plan.profile, concurrency)
        self.schedulers = {
            name: Scheduler.for_run(
                [facts[name]] if name in facts else [], plan.profile, (limits or {}).get(name) or concurrency
            )
            for name in self.hosts
        }
        self.side_tasks = tuple(side_tasks)
        self._lost: dict[str, str] = {}  # host name -> why it is considered gone
        self.finishing = finishing  # emits run-wide events (e.g. registry notes) before RunFinished
        self.history = dict(history or {})
        self.auditor = Auditor(run.emit, AuditCache(default_dir()), audit_targets(plan), parity=run.parity)
        # Cells under way, by id: the plan's first pass and any re-runs of an open session.
        self._active: dict[str, asyncio.Task[None]] = {}
        # Held while sweeping: a re-run must not create resources that a sweep by this run's
        # id would then remove under it.
        self._sweep_lock = asyncio.Lock()
        self._missing: set[str] = set()  # cells whose image stage found no image for the arch
        self.twins = Twins()  # an emulated start cut short when its native twin failed the same way

    def context_for(self, cell: CellPlan) -> RunContext:
        """The context of the host the plan put the cell on (the default one otherwise)."""
        return self.hosts.get(cell.host, self.run)

    def scheduler_for(self, cell: CellPlan) -> Scheduler:
        return self.schedulers.get(cell.host, self.scheduler)

    def _contexts(self) -> list[RunContext]:
        return list(self.hosts.values()) or [self.run]

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
                verification=verification(KINDS[c.component.probe], c.component.options),
                bench_s=_bench_seconds(c),
                expected_s=0.0 if c.unrunnable else round(expected_seconds(c, self.history), 1),
                probe=c.component.probe,
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
            origins=tuple(
                {
                    c.component.id: ComponentOrigin(
                        c.component.id,
                        c.component.image,
                        c.component.service,
                        c.component.platform,
                        c.component.pinned_at,
                    )
                    for c in self.plan.cells
                }.values()
            ),
            title=self.plan.matrix.title,
            targets=self.plan.matrix.targets,
            matrix_content=self.plan.matrix.content,
            matrix_place=self.plan.matrix.place,
        )

    def under_way(self) -> frozenset[str]:
        """Ids of the cells running (or waiting for a slot) now."""
        return frozenset(cid for cid, task in self._active.items() if not task.done())

    async def run_all(self) -> bool:
        """Run every cell; True when the run finished, False when it was interrupted."""
        self.run.emit(self.planned())
        interrupted = False
        if any(c.exclusive for c in self.plan.cells):
            self.run.emit(
                RunNote(
                    "benchmarks run one at a time per host with nothing else of the run beside them, "
                    "so their numbers are clean (the run takes longer)"
                )
            )
        order = longest_first(self.plan.cells, self.history)
        sides = [asyncio.create_task(_quiet(side()), name="side") for side in self.side_tasks]
        try:
            await self._run_many(order)
            await asyncio.gather(*sides)
        except asyncio.CancelledError:
            interrupted = True
            for task in sides:
                task.cancel()
            await asyncio.gather(*sides, return_exceptions=True)
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
        self.twins.forget(known[cid] for cid in wanted if cid not in busy)
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
        if self.finishing is not None:
            try:
                self.finishing()
            except Exception as exc:
                log.warning("finishing the run failed: %s", exc)
        self.run.emit(RunFinished(at=now(), interrupted=interrupted))

    async def _sweep(self) -> None:
        """On every host, remove whatever still carries this run's id (in parallel); say so
        when an engine keeps any, or was lost. Not while re-run cells own resources of this
        run: `close()` sweeps after them."""
        async with self._sweep_lock:
            if self.under_way():
                return
            await asyncio.gather(*(self._sweep_host(run) for run in self._contexts()))

    async def _sweep_host(self, run: RunContext) -> None:
        name = run.host.name
        where = f" on host {name}" if len(self.hosts) > 1 else ""
        cleanup = "`ecoready cleanup" + (" --matrix <this matrix>`" if len(self.hosts) > 1 else "`")
        if name in self._lost:
            self.run.emit(
                RunNote(
                    f"host {name} was lost mid-run ({self._lost[name]}): resources of this run may remain "
                    f"there; {cleanup} removes them once it answers"
                )
            )
            return
        try:
            await run.host.sweep(run_id=run.run_id, me=run.owner)
            left = await run.host.labelled(f"{LABEL_RUN}={run.run_id}")
        except Exception as exc:
            self.run.emit(RunNote(f"the final cleanup{where} failed ({one_line(str(exc))}): run {cleanup}"))
            return
        count = sum(len(kind) for kind in left)
        if count:
            self.run.emit(
                RunNote(
                    f"{count} resource(s) of this run{where} could not be removed (the engine did not "
                    f"answer); {cleanup} removes them once it does"
                )
            )

    async def run_cell(self, cell: CellPlan) -> None:
        await self._cell(cell)

    async def host_lost(self, run: RunContext, reason: str = "docker daemon unavailable") -> bool:
        """Whether the cell's host is gone: known lost, or not answering a ping now (then
        said once, as HostLost). A failed call alone is not enough: the engine may have
        refused one request and still be there."""
        name = run.host.name
        if name in self._lost:
            return True
        if await run.host.ping():
            return False
        if name not in self._lost:
            self._lost[name] = reason
            self.run.emit(HostLost(name, reason))
        return True

    async def _cell(self, cell: CellPlan) -> None:
        emit = self.run.emit
        emit(CellStarted(cell.id, now()))
        self.auditor.forget(cell.id)
        if cell.unrunnable:
            refused = cell.unrunnable
            emit(StageFinished(cell.id, Stage.IMAGE, refused.blame.outcome, 0.0, refused.detail, refused.blame))
            emit(CellFinished(cell.id, now(), 0.0))
            return
        run = self.context_for(cell)
        if run.host.name in self._lost:  # fail fast: no call to an engine known to be gone
            detail = f"docker daemon unavailable (host {run.host.name} was lost mid-run)"
            emit(StageFinished(cell.id, Stage.IMAGE, Outcome.ERROR, 0.0, detail, Blame(Cause.HOST_LOST, run.host.name)))
            emit(CellFinished(cell.id, now(), 0.0))
            return
        ctx = ProbeContext(cell, run)
        probe = load_probe(cell.component.probe)(ctx)
        stage = cell.stages[0]
        scheduler = self.scheduler_for(cell)
        slots = scheduler.slots
        expected = expected_seconds(cell, self.history)
        held: Grant | None = None
        try:
            for stage in cell.stages:
                if stage is Stage.PACKAGING:  # registry requests only: no slot, no container
                    outcome = await self._stage(cell, ctx, probe, stage)
                elif stage is Stage.IMAGE:  # network-bound: outside the CPU slots, overlapping other work
                    if scheduler.pulls.locked():
                        emit(CellQueued(cell.id))
                    async with scheduler.pulls, run.gate.shared():  # never beside a bench
                        outcome = await self._stage(cell, ctx, probe, stage)
                    if cell.id in self._missing:
                        self._missing.discard(cell.id)
                        await search_tags_of(cell, ctx, self.run.emit)
                elif stage is Stage.AUDIT:  # reads files and parses them: outside the CPU slots too
                    async with run.gate.shared():
                        outcome = await self._stage(cell, ctx, probe, stage)
                elif stage in cell.exclusive:
                    if held is not None:  # give the slot back first: two cells waiting for all would deadlock
                        slots.release(held)
                    held = None
                    emit(CellQueued(cell.id))
                    held = await slots.acquire(slots.units, expected)
                    async with run.gate.alone():  # and no pull or audit of the run beside it
                        outcome = await self._stage(cell, ctx, probe, stage)
                else:
                    if held is None:
                        emit(CellQueued(cell.id))
                        held = await slots.acquire(scheduler.weight(cell), expected)
                    outcome = await self._stage(cell, ctx, probe, stage)
                if _ends_the_cell(stage, outcome):
                    break
        except asyncio.CancelledError:
            emit(StageFinished(cell.id, stage, Outcome.ERROR, 0.0, "interrupted", Blame(Cause.INTERRUPTED)))
            raise
        finally:
            if held is not None:
                slots.release(held)
            await to_the_end(self._wrap_up(cell, ctx))

    async def _wrap_up(self, cell: CellPlan, ctx: ProbeContext) -> None:
        """Log tail, the cell's last event, then removal of its resources: always all three.
        The cell ends before the removal, so an engine slow to remove does not stretch it;
        what the engine would not remove becomes a note (the final sweep tries again).
        On a lost host only the event: every call there would wait for its deadline."""
        lost = ctx.run.host.name in self._lost
        if ctx.main is not None and not lost:
            lines = await _quiet(ctx.logs())
            self.run.emit(CellLog(cell.id, tuple(lines) if isinstance(lines, list) else ()))
        # the cell's own work (its stages), not the time it waited for a slot
        self.run.emit(CellFinished(cell.id, now(), round(ctx.spent, 2)))
        if lost:
            return
        failed = await _quiet(ctx.close())
        for line in failed if isinstance(failed, list) else []:
            self.run.emit(RunNote(f"{cell.id}: could not remove {line}"))

    async def _stage(self, cell: CellPlan, ctx: ProbeContext, probe: Probe, stage: Stage) -> Outcome:
        emit = self.run.emit
        emit(StageStarted(cell.id, stage))
        ctx.stage = stage
        ctx.run.activity.begin(cell.id, stage.value)
        try:
            return await self._stage_body(cell, ctx, probe, stage)
        finally:
            ctx.run.activity.end(cell.id, stage.value)

    async def _stage_body(self, cell: CellPlan, ctx: ProbeContext, probe: Probe, stage: Stage) -> Outcome:
        emit = self.run.emit
        budget = cell.budgets[stage]
        started = time.monotonic()
        detail, blame = "", None
        try:
            async with asyncio.timeout(budget):
                detail = await self.twins.cut_short(cell, stage, lambda: self._do(cell, ctx, probe, stage)) or ""
            if stage is Stage.SMOKE and ctx.failed_checks:
                names = ", ".join(ctx.failed_checks)
                detail, blame = f"failed: {names}", Blame(Cause.CHECK_FAILED, names)
            if stage is Stage.SMOKE and ctx.timed_out_checks:
                names = ", ".join(ctx.timed_out_checks)
                detail, blame = f"timed out: {names}", Blame(Cause.OVER_BUDGET, names)
        except TimeoutError:
            detail = f"exceeded its {budget:.0f} s budget" + (f" ({ctx.waiting_for})" if ctx.waiting_for else "")
            blame = Blame(Cause.OVER_BUDGET)
            if await self.host_lost(ctx.run):  # not the component's slowness: the engine is gone
                detail, blame = "docker daemon unavailable", Blame(Cause.HOST_LOST, ctx.run.host.name)
        except EcoreadyError as exc:
            detail, blame = exc.detail, exc.blame(stage)
            if blame.cause is Cause.OVER_BUDGET and await self.host_lost(ctx.run):  # it hung: the engine went away
                detail, blame = "docker daemon unavailable", Blame(Cause.HOST_LOST, ctx.run.host.name)
            elif isinstance(exc, DockerUnavailable) and await self.host_lost(ctx.run):
                blame = Blame(Cause.HOST_LOST, ctx.run.host.name)
            if blame.status is Status.MISSING and stage is Stage.IMAGE:
                self._missing.add(cell.id)
        except asyncio.CancelledError:
            if asked_to_stop():  # the cell (or the run) was stopped: `interrupted`, said by `_cell`
                raise
            # another task's cancellation handed on to this cell: a bug of ours, not `interrupted`
            log.error("stray cancellation in %s %s:\n%s", cell.id, stage.value, traceback.format_exc())
            detail, blame = "internal error: cancelled, though neither the cell nor the run was", Blame(Cause.INTERNAL)
        except Exception as exc:
            log.error(
                "internal error in %s %s:\n%s", cell.id, stage.value, self.run.secrets.redact(traceback.format_exc())
            )
            detail, blame = f"internal error: {type(exc).__name__}: {exc}", Blame(Cause.INTERNAL)
        seconds = round(time.monotonic() - started, 3)
        ctx.spent += seconds
        outcome = blame.outcome if blame is not None else Outcome.PASS
        redact = self.run.secrets.redact
        if blame is not None:
            blame = replace(blame, subject=one_line(redact(blame.subject), 200), fix=one_line(redact(blame.fix), 300))
        detail = one_line(redact(detail), 300)
        self.twins.ended(cell, stage, blame, detail)
        emit(StageFinished(cell.id, stage, outcome, seconds, detail, blame))
        return outcome

    async def _do(self, cell: CellPlan, ctx: ProbeContext, probe: Probe, stage: Stage) -> str:
        if stage is Stage.PACKAGING:
            return await packaging_stage(cell, ctx)
        if stage is Stage.IMAGE:
            return await image_stage(cell, ctx, probe, self.run.emit)
        if stage is Stage.AUDIT:  # the image stage resolved and pulled it: this is its answer again
            info = await ctx.run.images.ensure(cell.component.image, cell.arch)
            programs = KINDS[cell.component.probe].programs
            return await self.auditor.audit(ctx.run, cell.id, cell.host, info, programs)
        if stage is Stage.START:
            return await start_stage(cell, ctx, probe, self.run.emit)
        if stage is Stage.SMOKE:
            await probe.smoke()
            return ""
        return await probe.bench() or ""


def _ends_the_cell(stage: Stage, outcome: Outcome) -> bool:
    """Whether the cell's later stages cannot run after this stage's outcome."""
    if outcome in (Outcome.ERROR, Outcome.TIMEOUT):
        return True
    if stage in (Stage.PACKAGING, Stage.IMAGE, Stage.START):
        return outcome is not Outcome.PASS
    return stage is Stage.AUDIT and outcome is Outcome.FAIL  # a mislabelled binary: nothing to start


def _bench_seconds(cell: CellPlan) -> float:
    """What the cell's bench stage is expected to take (0: it has none)."""
    if cell.bench is None:
        return 0.0
    return round(estimate_seconds(cell.bench, EMULATION_FACTOR if cell.emulated else 1.0), 1)


async def _quiet(awaitable: object) -> object:
    try:
        return await awaitable  # type: ignore[misc]
    except Exception as exc:
        log.warning("cleanup step failed: %s", exc)
        return None
