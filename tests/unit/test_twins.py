"""An emulated cell whose native twin (the same row, so the same image) failed its start in a
way that is no arch's is cut short: it ends `skipped`, cause `twin-failed`, with the native
cell's words, and the run does not wait out the emulated budget (app/run/twins.py).

In process, on the recording fake engine (tests/support/fake_host.py); the probes are
stand-ins whose start hangs or fails as told, since what is tested is the runner's timing.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import replace
from functools import partial

import pytest

from ecoready.domain.blame import Cause, Outcome, Stage, Status
from ecoready.domain.errors import StageFailed
from ecoready.domain.events import StageFinished
from ecoready.domain.state import fold
from ecoready.plan.cells import Budgets, CellPlan
from ecoready.probe_api.context import ProbeContext
from ecoready.probe_api.probe import Probe
from ecoready.report.reasons import advice
from ecoready.run import runner as runner_module
from ecoready.run.runner import Runner
from tests.support.fake_host import Rig, cell, component, plan, rig

NATIVE_START_S = 0.4  # the native cell's start budget here (90 s in a real run)
EMULATED_START_S = 30.0  # the emulated twin's (540 s in a real run): never waited out


class Hangs(Probe):
    """A start that never gets ready (a server waiting for an account it cannot have)."""

    async def start(self) -> None:
        await asyncio.Event().wait()


class Fails(Probe):
    """A start that fails at once natively with the given exception, and hangs emulated."""

    def __init__(self, ctx: ProbeContext, exc: Exception) -> None:
        super().__init__(ctx)
        self.exc = exc

    async def start(self) -> None:
        if not self.ctx.cell.emulated:
            raise self.exc
        await asyncio.Event().wait()


def with_start(c: CellPlan, seconds: float) -> CellPlan:
    return replace(c, budgets=Budgets({**c.budgets.seconds, Stage.START: seconds}))


def twins() -> tuple[CellPlan, CellPlan]:
    proxy = component("haproxy-3.2", "server", "haproxy:3.2")
    native = with_start(cell(proxy, arch="amd64"), NATIVE_START_S)
    emulated = with_start(cell(proxy, arch="arm64", emulated=True), EMULATED_START_S)
    return native, emulated


def start_of(r: Rig, cell_id: str) -> StageFinished:
    return next(e for e in r.events if isinstance(e, StageFinished) and e.cell_id == cell_id and e.stage is Stage.START)


async def run(r: Rig, cells: list[CellPlan]) -> float:
    began = time.monotonic()
    await Runner(plan(cells), r.run, concurrency=4).run_all()
    return time.monotonic() - began


async def test_a_native_timeout_cuts_its_emulated_twin_short_and_the_run_is_not_spent_on_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(runner_module, "load_probe", lambda kind: Hangs)
    r = rig()
    native, emulated = twins()
    seconds = await run(r, [native, emulated])
    assert seconds < NATIVE_START_S + 3.0  # not the emulated budget of 30 s: cut when the native one timed out
    assert start_of(r, native.id).outcome is Outcome.TIMEOUT
    cut = start_of(r, emulated.id)
    assert cut.outcome is Outcome.SKIP and cut.blame is not None
    assert (cut.blame.cause, cut.blame.subject) == (Cause.TWIN_FAILED, native.id)
    assert cut.seconds < NATIVE_START_S + 1.0
    assert cut.detail.startswith(f"its native twin {native.id} failed the same way at start: ")
    assert "exceeded its 0 s budget" in cut.detail  # the native cell's own words
    report = fold(r.events)
    twin = report.cells[emulated.id]
    assert twin.status is Status.SKIPPED and twin.detail.startswith("cut short: its native twin")
    (said,) = [a for a in advice(report) if a.cell_id == emulated.id]
    assert "arm64" not in said.reason and "native" in said.remedy and "confirm on a native" not in said.remedy


async def test_an_emulated_twin_that_comes_to_start_after_the_native_failure_is_cut_at_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(runner_module, "load_probe", lambda kind: partial(Fails, exc=StageFailed("exited with code 1")))
    r = rig()
    native, emulated = twins()
    runner = Runner(plan([native, emulated]), r.run)
    await runner.run_cell(native)  # one after the other: the twin knows before its start
    began = time.monotonic()
    await runner.run_cell(emulated)
    assert time.monotonic() - began < 5  # no start, no wait: milliseconds (a busy CI machine has paused past 1 s)
    cut = start_of(r, emulated.id)
    assert cut.blame is not None and cut.blame.cause is Cause.TWIN_FAILED
    assert "does-not-start" not in cut.detail and "exited with code 1" in cut.detail


async def test_an_arch_matter_natively_does_not_cut_the_twin(monkeypatch: pytest.MonkeyPatch) -> None:
    """exec format error natively says nothing of the other arch's image: the twin runs on."""
    exc = StageFailed("exec format error", cause=Cause.NOT_FOR_THIS_CPU)
    monkeypatch.setattr(runner_module, "load_probe", lambda kind: partial(Fails, exc=exc))
    r = rig()
    native, emulated = twins()
    emulated = with_start(emulated, 0.8)
    await run(r, [native, emulated])
    ended = start_of(r, emulated.id)
    assert ended.outcome is Outcome.TIMEOUT and ended.blame is not None and ended.blame.cause is Cause.OVER_BUDGET


async def test_a_rerun_of_the_emulated_cell_is_a_full_one(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(runner_module, "load_probe", lambda kind: partial(Fails, exc=StageFailed("exited with code 1")))
    r = rig()
    native, emulated = twins()
    emulated = with_start(emulated, 0.5)
    runner = Runner(plan([native, emulated]), r.run)
    await runner.run_cell(native)
    await runner.run_cells([emulated.id])  # asked for by name: runs its start in full
    ended = start_of(r, emulated.id)
    assert ended.outcome is Outcome.TIMEOUT
