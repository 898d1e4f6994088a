"""kill -9 of ecoready during pull, start and smoke: the next ecoready start removes every
labelled resource of the dead run, while a concurrent live run keeps all of its own."""

from __future__ import annotations

import signal
import time
from pathlib import Path

import pytest

from tests.support.cli import ecoready
from tests.support.registry_proxy import registry_proxy
from tests.support.runs import Run, server_rows, write_matrix

pytestmark = pytest.mark.docker
EMPTY: dict[str, list[str]] = {"containers": [], "networks": [], "volumes": []}


@pytest.mark.parametrize("phase", ["image", "start", "smoke"])
def test_kill_9_then_next_start_sweeps_the_dead_run_only(lab: Path, tmp_path: Path, phase: str, no_leaks: None) -> None:
    # a live run that outlives everything below: a Galera cluster takes ~40 s natively
    live = Run(lab, tmp_path, "--only", "galera", "--arch", "amd64")
    live.wait_for_stage("start")
    with registry_proxy() as proxy:
        # the doomed run asks a registry that answers slowly, so it sits in its image stage
        proxy.manifest_delay = 3.0 if phase == "image" else 0.0
        matrix = write_matrix(
            tmp_path / "doomed.toml", server_rows("doomed", image=f"{proxy.address}/lab/mariadb:10.11")
        )
        doomed = Run(matrix, tmp_path, "--arch", "amd64")
        doomed.wait_for_stage(phase)
        if phase in ("start", "smoke"):
            deadline = time.monotonic() + 120
            while not doomed.cell_containers() and time.monotonic() < deadline:
                time.sleep(0.2)
            assert doomed.cell_containers(), "the doomed run should own a cell's container by now"
        doomed.proc.send_signal(signal.SIGKILL)
        doomed.proc.wait(timeout=30)
    left_behind = doomed.resources()
    live_before = live.resources()
    assert live_before["containers"], "the live run should have containers while we sweep"
    # the next start of ecoready (any verb that opens a session) sweeps dead owners
    nxt = ecoready(
        "run", "--headless", "--matrix", str(lab), "--only", "mariadb-10.11", "--arch", "amd64", "--json", "-"
    )
    assert nxt.returncode == 0, nxt.stderr
    assert doomed.resources() == EMPTY, f"left by the killed run: {left_behind}"
    live_after = live.resources()
    assert set(live_before["containers"]) <= set(live_after["containers"]) or live.proc.poll() is not None
    code, report = live.finish()
    assert code == 0, report["_stderr"][-2000:]
    assert [c["status"] for c in report["cells"]] == ["ready"]
    if left_behind != EMPTY:
        assert "left by ecoready runs that died" in nxt.stderr
