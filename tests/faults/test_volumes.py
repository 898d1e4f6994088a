"""50 sequential runs leave none of their volumes behind: the official-style images declare
`VOLUME /var/lib/mysql`, whose anonymous volumes carry no label, so only removing them
with their containers (`v=True`) keeps them from piling up.

The runs' volumes are told apart from those of the other tests' runs on the engine by
the engine's own events, watched while the runs go: the containers the runs created
(labelled with their run ids) and the volumes mounted into those containers."""

from __future__ import annotations

import asyncio
import json
import subprocess
import threading
import time
from pathlib import Path

import pytest

from ecoready.domain.specs import LABEL_RUN
from ecoready.matrix.load import parse
from ecoready.run.session import RunOptions, Session
from tests.support.runs import server_rows

pytestmark = [pytest.mark.docker, pytest.mark.slow]
RUNS = 50


class EngineEvents:
    """The (actor id, attributes) of the `docker events` of some filters, read on a
    thread until `stop()`."""

    def __init__(self, *filters: str) -> None:
        argv = ["docker", "events", "--format", "{{json .Actor}}"]
        for f in filters:
            argv += ["--filter", f]
        self.seen: list[tuple[str, dict[str, str]]] = []
        self._process = subprocess.Popen(argv, stdout=subprocess.PIPE, text=True)
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self._process.stdout is not None
        for line in self._process.stdout:
            actor = json.loads(line)
            self.seen.append((actor["ID"], actor.get("Attributes") or {}))

    def stop(self) -> None:
        self._process.terminate()
        self._process.wait(timeout=10)
        self._reader.join(timeout=10)


def test_fifty_sequential_runs_leave_none_of_their_volumes(lab: Path, no_leaks: None) -> None:
    # a server that initialises its datadir (creating the anonymous volume) and then exits:
    # the cheapest cell that exercises the volume path end to end
    matrix = parse(
        server_rows("vol", extra='[components.options]\nargs = ["--no-such-option-for-this-test"]'), "volumes.toml"
    )
    created = EngineEvents("type=container", "event=create", f"label={LABEL_RUN}")
    mounted = EngineEvents("type=volume", "event=mount")

    async def one_run() -> str:
        session = Session(matrix, RunOptions(arches=["amd64"]), lambda event: None)
        await session.open()
        try:
            await session.run()
        finally:
            await session.close()
        return session.run_id

    def ours() -> set[str]:
        containers = {cid for cid, labels in created.seen if labels.get(LABEL_RUN) in run_ids}
        return {volume for volume, attributes in mounted.seen if attributes.get("container") in containers}

    try:
        run_ids = {asyncio.run(one_run()) for _ in range(RUNS)}
        deadline = time.monotonic() + 20  # the events of the last run may still be on their way
        while len(ours()) < RUNS and time.monotonic() < deadline:
            time.sleep(0.2)
    finally:
        created.stop()
        mounted.stop()
    volumes = ours()
    # each run mounts at least its server's volume (its platform survey, the same image, one more)
    assert len(volumes) >= RUNS, f"{len(volumes)} volumes seen mounted by {RUNS} runs' containers"
    listed = subprocess.run(["docker", "volume", "ls", "-q"], capture_output=True, text=True, check=True, timeout=30)
    left = volumes & set(listed.stdout.split())
    assert left == set(), f"{len(left)} of the {len(volumes)} volumes of {RUNS} runs left behind"
