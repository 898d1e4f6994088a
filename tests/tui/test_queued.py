"""Queued is not running: a cell waiting for its turn reads `· queued`, with no timer and
no spinner, the progress line counts queued and running apart, and a cell's timer counts
its work, not its wait (events fed to the app as the runner emits them)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from ecoready.domain.events import CellQueued, CellStarted, Event, StageFinished, StageStarted
from ecoready.domain.model import Outcome, Stage
from ecoready.matrix.document import Matrix
from ecoready.run.session import RunOptions
from ecoready.ui.tui.app import EcoreadyApp
from tests.support import streams
from tests.support.keys import quit_and_wait, wait_until

SPECS = [
    streams.CellSpec("mariadb-10.11", "server", "amd64", "local", False, "running"),
    streams.CellSpec("mysql-8.4", "server", "amd64", "local", False, "running"),
    streams.CellSpec("proxysql-2.7", "load-balancer", "amd64", "local", False, "running"),
]


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class StepSession(streams.ReplaySession):
    """Plays its events, then waits for `more` to play the next batch."""

    more: asyncio.Queue[list[Event]]

    async def run(self) -> None:
        for event in self.events:
            self.emit(event)
        while True:
            for event in await self.more.get():
                self.emit(event)


async def test_queued_cells_show_no_timer_and_are_counted_apart() -> None:
    first, second, third = (s.id for s in SPECS)
    events: list[Event] = [
        streams.run_started(SPECS, [streams.LAB_HOST], ("amd64",)),
        *(CellStarted(cid, streams.AT) for cid in (first, second, third)),
        StageStarted(first, Stage.IMAGE),
        StageFinished(first, Stage.IMAGE, Outcome.PASS, 0.4, "index"),
        CellQueued(first),
        StageStarted(second, Stage.IMAGE),
    ]
    clock = Clock()
    more: asyncio.Queue[list[Event]] = asyncio.Queue()

    def factory(matrix: Matrix, options: RunOptions, emit: Callable[[Event], None]) -> StepSession:
        session = StepSession(events, emit)
        session.more = more
        return session

    app = EcoreadyApp(streams.recorded_matrix(), RunOptions(), factory, clock=clock)
    async with app.run_test(size=(140, 30)) as pilot:
        await wait_until(pilot, lambda: app.rows_built and app.events_seen == len(events), "the events", 30)
        clock.now += 7
        app.flush()
        assert app.cell_text("mariadb-10.11", "amd64") == "· queued"  # its image done, waiting for a slot
        assert app.cell_text("proxysql-2.7", "amd64") == "· queued"  # not started at all
        running = app.cell_text("mysql-8.4", "amd64")
        assert running.startswith("▶ image 7s "), running  # its timer began with its first stage
        progress = str(app.progress_line.render())
        assert "▶1 running" in progress and "·2 queued" in progress, progress

        # the slot comes: the timer goes on from the 0 s of work done before the wait
        await more.put([StageStarted(first, Stage.START)])
        await wait_until(pilot, lambda: app.report.cells[first].stage is Stage.START, "the start", 30)
        clock.now += 3
        app.flush()
        assert app.cell_text("mariadb-10.11", "amd64").startswith("▶ start 3s "), app.cell_text(
            "mariadb-10.11", "amd64"
        )
        assert "▶2 running" in str(app.progress_line.render())
        await quit_and_wait(app, pilot, 60)
