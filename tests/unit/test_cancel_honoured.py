"""A cancellation that lands in the same loop turn as the work it interrupts finishes must
still cancel. Python 3.11's `asyncio.wait_for` returns the finished work's result instead
(and drops the cancellation) in that case: a Ctrl-C then let cells go on to their next
stage and start containers after the run's sweep, so the engine kept networks with
"active endpoints" and the cleanup took 37 s. Deadlines are `asyncio.timeout` blocks.
And a create cancelled in flight still learns the id it made, to remove it."""

from __future__ import annotations

import ast
import asyncio
import threading
from pathlib import Path

import pytest

from ecoready.domain.blame import Cause
from ecoready.domain.events import RunFinished, StageFinished, StageStarted
from ecoready.domain.images import ImageInfo
from ecoready.domain.model import Outcome, Stage
from ecoready.engine.docker_host import DockerHost
from ecoready.engine.sdk import Sdk
from ecoready.engine.threads import DaemonThreadPool
from ecoready.run.runner import Runner
from tests.support.fake_host import FakeImages, cell, component, plan, rig

ROOT = Path(__file__).resolve().parents[2]


def sdk_without_clients(workers: int) -> Sdk:
    """The SDK's pool and deadlines without an engine: its docker clients are None, never called."""
    return Sdk("t", "", None, None, DaemonThreadPool(workers, "t"))  # type: ignore[arg-type]


async def test_a_docker_call_that_returns_as_its_caller_is_cancelled_still_cancels() -> None:
    sdk = sdk_without_clients(1)
    answer: asyncio.Future[str] = asyncio.get_running_loop().create_future()
    task = asyncio.create_task(sdk.wait(answer, 30))
    await asyncio.sleep(0)
    answer.set_result("created")
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


async def test_a_create_cancelled_in_flight_removes_what_it_created() -> None:
    host = DockerHost.__new__(DockerHost)  # only its SDK calls are used here
    host._sdk = sdk_without_clients(2)
    engine_answers = threading.Event()
    removed: list[str] = []

    def make() -> str:
        engine_answers.wait(5)
        return "net-1"

    async def remove(resource: str) -> bool:
        removed.append(resource)
        return True

    task = asyncio.create_task(host._create(make, remove))
    await asyncio.sleep(0.05)
    task.cancel()
    await asyncio.sleep(0.05)
    engine_answers.set()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert removed == ["net-1"]


async def test_a_cell_cancelled_as_its_start_returns_goes_no_further(monkeypatch: pytest.MonkeyPatch) -> None:
    r = rig()
    c = cell(component("mariadb-10.11", "server", "mariadb:10.11"), arch="amd64")
    runner = Runner(plan([c]), r.run)
    start: asyncio.Future[str] = asyncio.get_running_loop().create_future()

    async def do(cell: object, ctx: object, probe: object, stage: Stage) -> str:
        if stage is Stage.START:
            return await start
        await asyncio.sleep(0)
        return ""

    monkeypatch.setattr(runner, "_do", do)
    task = asyncio.create_task(runner._cell(c))
    while not any(isinstance(e, StageStarted) and e.stage is Stage.START for e in r.events):
        await asyncio.sleep(0)
    start.set_result("ready in 1.0 s")
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    started = [e.stage for e in r.events if isinstance(e, StageStarted)]
    assert Stage.SMOKE not in started, started
    last = [e for e in r.events if isinstance(e, StageFinished)][-1]
    assert (last.stage, last.outcome, last.detail) == (Stage.START, Outcome.ERROR, "interrupted")


class HandsOnACancellation(FakeImages):
    """An image store that hands its asker another task's CancelledError for one image (as
    one cell's cancelled pull once reached every cell waiting on the same image)."""

    async def ensure(self, reference: str, arch: str, *, for_cell: bool = True) -> ImageInfo:
        if reference == "lost:1":
            someone_elses: asyncio.Future[ImageInfo] = asyncio.get_running_loop().create_future()
            someone_elses.cancel()
            return await someone_elses
        return await super().ensure(reference, arch, for_cell=for_cell)


async def test_a_cell_handed_another_tasks_cancellation_is_no_interruption() -> None:
    """Only a cell (or run) asked to stop ends `interrupted`; a CancelledError that is not
    its own is our bug, said as such, and the other cells and the run go on."""
    r = rig(missing=["gone:1"])
    r.run.images = HandsOnACancellation(["gone:1"])
    lost = cell(component("lost", "server", "lost:1"), arch="amd64")
    other = cell(component("gone", "server", "gone:1"), arch="amd64")
    finished = await Runner(plan([lost, other]), r.run).run_all()
    assert finished
    ends = {e.cell_id: e for e in r.events if isinstance(e, StageFinished)}
    assert ends[lost.id].detail == "internal error: cancelled, though neither the cell nor the run was"
    causes = {cid: end.blame.cause if end.blame else None for cid, end in ends.items()}
    assert causes == {lost.id: Cause.INTERNAL, other.id: Cause.NOT_PUBLISHED}
    assert [e.interrupted for e in r.events if isinstance(e, RunFinished)] == [False]


@pytest.mark.parametrize("folder", ["app", "probes"])
def test_no_deadline_is_an_asyncio_wait_for(folder: str) -> None:
    found = [
        f"{path.relative_to(ROOT)}:{node.lineno}"
        for path in sorted((ROOT / folder).rglob("*.py"))
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.Attribute) and node.attr == "wait_for" and getattr(node.value, "id", "") == "asyncio"
    ]
    assert not found, f"use `async with asyncio.timeout(...)` (see this module's docstring): {found}"
