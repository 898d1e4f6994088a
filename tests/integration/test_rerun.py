"""An open session re-runs one cell for real: same run id on its containers, events for that
cell only, and closing the session leaves nothing labelled with the run id."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from ecoready.domain.events import CellFinished, CellStarted, Event, RunFinished, RunStarted
from ecoready.domain.model import Status
from ecoready.domain.state import fold
from ecoready.matrix.load import load
from ecoready.run.session import RunOptions, Session
from tests.support.cli import docker_labelled

pytestmark = pytest.mark.docker


def test_rerun_of_one_cell_in_an_open_session(lab: Path, no_leaks: None) -> None:
    events: list[Event] = []

    async def scenario() -> tuple[str, list[str], int]:
        session = Session(load(lab), RunOptions(only=["mariadb-10.11"], arches=["amd64"]), events.append)
        await session.open()
        try:
            await session.run()
            first = len(events)
            label = f"ecoready.run={session.run_id}"
            rerun = asyncio.create_task(session.rerun(["mariadb-10.11/amd64"]))
            seen: list[str] = []
            while not rerun.done() and not seen:
                seen = (await asyncio.to_thread(docker_labelled, label))["containers"]
                await asyncio.sleep(0.2)
            await rerun
        finally:
            await session.close()
        return session.run_id, seen, first

    run_id, seen_during_rerun, first = asyncio.run(scenario())
    again = events[first:]
    assert seen_during_rerun, "the re-run should start a container labelled with the same run id"
    assert {getattr(e, "cell_id", None) for e in again} == {"mariadb-10.11/amd64"}
    assert isinstance(again[0], CellStarted) and isinstance(again[-1], CellFinished)
    assert not any(isinstance(e, (RunStarted, RunFinished)) for e in again)
    assert fold(events).cells["mariadb-10.11/amd64"].status is Status.READY
    assert docker_labelled(f"ecoready.run={run_id}") == {"containers": [], "networks": [], "volumes": []}
