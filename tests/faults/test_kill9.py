"""kill -9 of ecoready during pull, start and smoke: the next ecoready start removes every
labelled resource of the dead runs, while a concurrent live run keeps all of its own.
One live run outlives three doomed ones, each killed in its phase (a live Galera run for
each phase cost a minute apiece)."""

from __future__ import annotations

import signal
import time
from pathlib import Path

import pytest

from tests.support.cli import ecoready
from tests.support.registry_proxy import registry_proxy
from tests.support.runs import Run, server_rows, write_matrix

# alone: any run's start sweeps dead runs, so a run on another worker would sweep the
# killed runs' leftovers before this test looks at them
pytestmark = [pytest.mark.docker, pytest.mark.alone]
EMPTY: dict[str, list[str]] = {"containers": [], "networks": [], "volumes": []}
PHASES = ("image", "start", "smoke")  # the order each is reached, and killed


def test_kill_9_then_next_start_sweeps_the_dead_runs_only(lab: Path, tmp_path: Path, no_leaks: None) -> None:
    # a live run that outlives everything below: a Galera cluster takes ~40 s natively
    live = Run(lab, tmp_path, "--only", "galera", "--arch", "amd64")
    live.wait_for_stage("start")
    doomed: dict[str, Run] = {}
    left_behind: dict[str, dict[str, list[str]]] = {}
    # all three start before any is killed: a run that opened its session after a kill
    # would sweep the dead run itself, and the sweep under test is the next start's
    with registry_proxy() as slow, registry_proxy() as fast:
        slow.manifest_delay = 3.0  # the run killed in its image stage sits there, asking
        for phase in PHASES:
            proxy = slow if phase == "image" else fast
            matrix = write_matrix(
                tmp_path / f"doomed-{phase}.toml",
                server_rows(f"doomed-{phase}", image=f"{proxy.address}/lab/mariadb:10.11"),
            )
            doomed[phase] = Run(matrix, tmp_path, "--arch", "amd64")
        for phase, run in doomed.items():
            run.wait_for_stage(phase)
            if phase in ("start", "smoke"):
                deadline = time.monotonic() + 120
                while not run.cell_containers() and time.monotonic() < deadline:
                    time.sleep(0.2)
                assert run.cell_containers(), f"the run doomed in {phase} should own a cell's container by now"
            run.proc.send_signal(signal.SIGKILL)
            run.proc.wait(timeout=30)
            left_behind[phase] = run.resources()
    live_before = live.resources()
    assert live_before["containers"], "the live run should have containers while we sweep"
    assert left_behind["start"]["containers"] and left_behind["smoke"]["containers"], left_behind
    # the next start of ecoready (any verb that opens a session) sweeps dead owners
    nxt = ecoready(
        "run", "--headless", "--matrix", str(lab), "--only", "mariadb-10.11", "--arch", "amd64", "--json", "-"
    )
    assert nxt.returncode == 0, nxt.stderr
    for phase, run in doomed.items():
        assert run.resources() == EMPTY, f"left by the run killed in {phase}: {left_behind[phase]}"
    assert "left by ecoready runs that died" in nxt.stderr
    live_after = live.resources()
    assert set(live_before["containers"]) <= set(live_after["containers"]) or live.proc.poll() is not None
    code, report = live.finish()
    assert code == 0, report["_stderr"][-2000:]
    assert [c["status"] for c in report["cells"]] == ["ready"]
