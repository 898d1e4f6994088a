"""Re-running cells of an open run: only those cells emit events, a cell under way is not
started twice, and the sweep by run id never runs while a re-run owns resources of the run.

No engine here: the image stage is the only one a cell reaches, through an image store
that waits on a gate and then says the arch is not published (the runner's own path for a
missing image), and the host only records its sweeps.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

import pytest

from ecoready.domain.errors import ImageUnavailable
from ecoready.domain.events import CellFinished, CellStarted, Event, RunFinished, RunStarted
from ecoready.domain.images import ImageInfo
from ecoready.domain.model import HostFacts, Status
from ecoready.domain.specs import SweepResult
from ecoready.domain.state import fold
from ecoready.engine.owners import OwnerInfo
from ecoready.matrix.load import parse
from ecoready.plan.cells import make_plan
from ecoready.probe_api.run_context import RunContext
from ecoready.probe_api.secrets import Secrets
from ecoready.run.runner import Runner
from tests.support.fake_host import FakeHost, FakeImages

MATRIX = """
title = "t"
arches = ["amd64", "arm64"]
[[components]]
id = "db"
category = "server"
probe = "server"
image = "127.0.0.1:5000/lab/mariadb:10.11"
"""


@dataclass
class Gates:
    """One gate per cell id; a closed gate keeps the cell in its image stage."""

    open: dict[str, asyncio.Event] = field(default_factory=dict)

    def gate(self, key: str) -> asyncio.Event:
        return self.open.setdefault(key, asyncio.Event())


class GatedImages(FakeImages):
    def __init__(self, gates: Gates) -> None:
        super().__init__()
        self.gates = gates

    async def ensure(self, reference: str, arch: str, *, for_cell: bool = True) -> ImageInfo:
        await self.gates.gate(f"db/{arch}").wait()
        raise ImageUnavailable(f"no {arch} here")


class RecordingHost(FakeHost):
    """Records which cells were under way at each sweep."""

    def __init__(self) -> None:
        super().__init__()
        self.name = "local"
        self.runner: Runner | None = None
        self.sweeps: list[frozenset[str]] = []

    async def sweep(
        self,
        *,
        run_id: str | None = None,
        dead_owners: bool = False,
        everything: bool = False,
        me: OwnerInfo | None = None,
    ) -> SweepResult:
        assert self.runner is not None
        self.sweeps.append(self.runner.under_way())
        await asyncio.sleep(0.01)
        return SweepResult()


def make_runner() -> tuple[Runner, list[Event], Gates, RecordingHost]:
    plan = make_plan(parse(MATRIX), [HostFacts("local", "amd64", ("arm64",))])
    events: list[Event] = []
    gates = Gates()
    host = RecordingHost()
    run = RunContext(
        run_id="r1",
        host=host,
        owner=OwnerInfo("test", 1, ""),
        secrets=Secrets(),
        images=GatedImages(gates),
        emit=events.append,
    )
    runner = Runner(plan, run, concurrency=4)
    host.runner = runner
    return runner, events, gates, host


async def settle() -> None:
    for _ in range(20):
        await asyncio.sleep(0)


async def test_a_rerun_emits_events_for_its_cells_only() -> None:
    runner, events, gates, host = make_runner()
    for cid in ("db/amd64", "db/arm64"):
        gates.gate(cid).set()
    await runner.run_all()
    first = len(events)
    await runner.run_cells(["db/arm64"])
    again = events[first:]
    assert {getattr(e, "cell_id", None) for e in again} == {"db/arm64"}
    assert isinstance(again[0], CellStarted) and isinstance(again[-1], CellFinished)
    assert not any(isinstance(e, (RunStarted, RunFinished)) for e in again)
    report = fold(events)
    assert report.cells["db/arm64"].status is Status.MISSING
    assert report.cells["db/amd64"].status is Status.MISSING
    assert host.sweeps == [frozenset()]  # the first pass swept; a re-run alone does not
    await runner.close()
    assert host.sweeps == [frozenset(), frozenset()]


async def test_unknown_cells_are_refused() -> None:
    runner, _, _, _ = make_runner()
    with pytest.raises(KeyError, match="nope/amd64"):
        await runner.run_cells(["nope/amd64"])


async def test_a_cell_under_way_is_not_started_twice() -> None:
    runner, events, gates, _ = make_runner()
    first = asyncio.create_task(runner.run_cells(["db/amd64"]))
    await settle()
    assert runner.under_way() == {"db/amd64"}
    await runner.run_cells(["db/amd64"])  # returns at once: nothing new to run
    gates.gate("db/amd64").set()
    await first
    assert sum(isinstance(e, CellStarted) for e in events) == 1


async def test_no_sweep_while_a_rerun_owns_resources_and_close_sweeps_after_it() -> None:
    runner, events, gates, host = make_runner()
    gates.gate("db/arm64").set()
    whole = asyncio.create_task(runner.run_all())
    await settle()  # arm64 finished, amd64 waits at its gate
    gates.open.pop("db/arm64")  # the re-run of arm64 will wait at a fresh gate
    rerun = asyncio.create_task(runner.run_cells(["db/arm64"]))
    await settle()
    assert runner.under_way() == {"db/amd64", "db/arm64"}
    gates.gate("db/amd64").set()
    await whole  # the first pass ends while the re-run still runs: it must not sweep
    assert host.sweeps == []
    assert any(isinstance(e, RunFinished) for e in events)
    await runner.close()  # cancels the re-run, then sweeps with nothing under way
    assert host.sweeps == [frozenset()]
    with pytest.raises(asyncio.CancelledError):
        await rerun
    cell = fold(events).cells["db/arm64"]
    assert cell.status is Status.ERROR and "interrupted" in cell.detail
