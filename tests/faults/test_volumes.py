"""50 sequential runs leave the engine's volume count unchanged: the official-style
images declare `VOLUME /var/lib/mysql`, whose anonymous volumes carry no label, so only
removing them with their containers (`v=True`) keeps them from piling up."""

from __future__ import annotations

import asyncio
import subprocess
from pathlib import Path

import pytest

from ecoready.matrix.load import parse
from ecoready.run.session import RunOptions, Session
from tests.support.runs import server_rows

# alone: it counts the engine's dangling volumes, which other tests' runs create and remove
pytestmark = [pytest.mark.docker, pytest.mark.alone]
RUNS = 50


def dangling_volumes() -> set[str]:
    out = subprocess.run(
        ["docker", "volume", "ls", "-q", "--filter", "dangling=true"], capture_output=True, text=True, check=True
    ).stdout
    return set(out.split())


def test_fifty_sequential_runs_leave_the_volume_count_unchanged(lab: Path, no_leaks: None) -> None:
    # a server that initialises its datadir (creating the anonymous volume) and then exits:
    # the cheapest cell that exercises the volume path end to end
    matrix = parse(
        server_rows("vol", extra='[components.options]\nargs = ["--no-such-option-for-this-test"]'), "volumes.toml"
    )
    before = dangling_volumes()

    async def one_run() -> str:
        statuses: list[str] = []

        def emit(event: object) -> None:
            status = getattr(event, "status", None)
            if status is not None:
                statuses.append(str(status))

        session = Session(matrix, RunOptions(arches=["amd64"]), emit)
        await session.open()
        try:
            await session.run()
        finally:
            await session.close()
        return session.run_id

    for _ in range(RUNS):
        asyncio.run(one_run())
    after = dangling_volumes()
    assert after - before == set(), f"{len(after - before)} volumes left by {RUNS} runs"
