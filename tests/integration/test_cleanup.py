"""Nothing labelled with a run's id stays on the engine: after a run, after a run cancelled
midway (in-process and by SIGINT/SIGTERM), and after kill -9 once ecoready starts again."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ecoready.domain.events import Event
from ecoready.domain.model import Report
from ecoready.domain.state import empty_report, reduce
from ecoready.engine.filedrop import default_root
from ecoready.matrix.load import load
from ecoready.run.session import RunOptions, Session
from tests.support.cli import ROOT, cell_containers, docker_labelled, ecoready

pytestmark = pytest.mark.docker


def wait_for_containers(label: str, timeout: float = 120, *, running: bool = False) -> list[str]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = cell_containers(label, running=running)
        if found:
            return found
        time.sleep(0.3)
    raise AssertionError(f"no container labelled {label} appeared within {timeout} s")


def test_cancelled_run_leaves_nothing_with_its_run_id(lab: Path, no_leaks: None) -> None:
    matrix = load(lab)

    async def scenario() -> tuple[str, Report]:
        report = empty_report()

        def emit(event: Event) -> None:
            nonlocal report
            report = reduce(report, event)

        session = Session(matrix, RunOptions(only=["mariadb-10.11"]), emit)
        await session.open()
        task = asyncio.create_task(session.run())
        label = f"ecoready.run={session.run_id}"
        await asyncio.to_thread(wait_for_containers, label)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        await session.close()
        return session.run_id, report

    run_id, report = asyncio.run(scenario())
    assert docker_labelled(f"ecoready.run={run_id}") == {"containers": [], "networks": [], "volumes": []}
    assert report.interrupted


def _start(args: list[str]) -> subprocess.Popen[str]:
    exe = Path(sys.executable).with_name("ecoready")
    return subprocess.Popen([str(exe), *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT)


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP])
def test_signal_midway_cleans_up_and_writes_the_report(lab: Path, tmp_path: Path, signum: int, no_leaks: None) -> None:
    out = tmp_path / "r.json"
    proc = _start(["run", "--headless", "--matrix", str(lab), "--json", str(out)])
    owner = f"ecoready.owner={socket.gethostname()}:{proc.pid}"
    wait_for_containers(owner)
    sent = time.monotonic()
    proc.send_signal(signum)
    _, stderr = proc.communicate(timeout=60)
    took = time.monotonic() - sent
    assert proc.returncode == 128 + signum, stderr
    assert took < 20, f"cleanup took {took:.1f} s"
    # every cell removed its own: nothing was started after its cancellation (tests/unit/test_cancel_honoured.py)
    assert "could not remove" not in stderr and "never retrieved" not in stderr, stderr[-2000:]
    assert docker_labelled(owner) == {"containers": [], "networks": [], "volumes": []}
    assert not list(default_root().glob(f"{proc.pid}-*")), "the run's files directory must go with it"
    report = json.loads(out.read_text())
    assert report["interrupted"] is True
    assert all(c["status"] != "running" for c in report["cells"])


@pytest.mark.alone  # any run's start sweeps dead runs: one on another worker would sweep these first
def test_kill_9_leftovers_are_swept_by_the_next_start(lab: Path, no_leaks: None) -> None:
    proc = _start(["run", "--headless", "--matrix", str(lab), "--json", os.devnull])
    owner = f"ecoready.owner={socket.gethostname()}:{proc.pid}"
    wait_for_containers(owner, running=True)
    proc.kill()
    proc.wait(timeout=30)
    assert cell_containers(owner), "kill -9 should leave the run's containers behind"
    # and the directories of its containers' files (app/engine/filedrop.py), on this machine's tmpfs
    files = list(default_root().glob(f"{proc.pid}-*"))
    assert files, "this engine shares our files: the run's secrets directory should be left behind"
    result = ecoready("cleanup")
    assert result.returncode == 0, result.stderr
    assert "removed container" in result.stderr
    assert docker_labelled(owner) == {"containers": [], "networks": [], "volumes": []}
    assert not [f for f in files if f.exists()]
