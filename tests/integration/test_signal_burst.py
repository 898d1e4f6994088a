"""Signals in a burst while a run stops: SIGTERM, SIGTERM, SIGINT within a second during a
real bench (the lab's MariaDB, profile quick, amd64, the shortest bench the settings allow)
neither cut the cleanup short nor end in a traceback: exit 143 (the first signal's code),
the report written and marked interrupted, nothing labelled left. Repeated 20 times, the
burst starting at a different moment of the bench each time, to catch the race (before the
fix: sometimes 143, sometimes killed by the second signal, sometimes a CancelledError
traceback). About 10 s a round here, 3 to 4 minutes in all."""

from __future__ import annotations

import asyncio
import json
import signal
import time
from pathlib import Path

import pytest

from ecoready.domain.model import Profile
from ecoready.matrix.load import load
from ecoready.run.session import RunOptions
from ecoready.ui.headless import run_headless
from tests.support.cli import TEST_LABEL_KEY, TEST_SESSION, cell_containers
from tests.support.matrices import LAB_SERVER
from tests.support.runs import Run

pytestmark = [pytest.mark.docker, pytest.mark.slow]

ROUNDS = 20
# the bench as short as its settings allow: one workload, one thread count, 1 s, 100 rows
SHORT_BENCH = """
[sysbench]
image = "127.0.0.1:5000/lab/mariadb:10.11"  # the lab's sysbench (the default derives one from Debian)
workloads = ["oltp_point_select"]
threads = [1]
time = 1
warmup = 0
tables = 1
table_size = 100
"""
BURST = (signal.SIGTERM, signal.SIGTERM, signal.SIGINT)
GAP = 0.3  # seconds between the burst's signals: all three within a second


@pytest.fixture(scope="module")
def short_bench(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("burst") / "bench.toml"
    path.write_text(SHORT_BENCH + LAB_SERVER)
    return path


@pytest.mark.parametrize("round_", range(ROUNDS))
def test_a_burst_of_signals_during_a_bench_exits_143_with_the_report_and_nothing_left(
    lab: Path, short_bench: Path, tmp_path: Path, round_: int, no_leaks: None
) -> None:
    run = Run(short_bench, tmp_path, "--arch", "amd64", "--profile", "quick", "--only", "mariadb-10.11")
    run.wait_for_stage("bench", timeout=300)
    time.sleep((round_ % 5) * 0.2)  # 0 to 0.8 s into the bench: prepare, the run, its cleanup
    for sig in BURST:
        if run.proc.poll() is None:
            run.proc.send_signal(sig)
        time.sleep(GAP)
    code, report = run.finish(timeout=300)
    stderr = report.pop("_stderr")
    assert code == 128 + signal.SIGTERM, stderr
    assert "Traceback" not in stderr and "CancelledError" not in stderr, stderr
    assert stderr.count("SIGTERM: stopping, cleaning up") == 1, stderr
    assert report["interrupted"] is True, stderr
    assert report["finished_at"], stderr
    assert all(c["status"] not in ("running", "pending") for c in report["cells"]), report["cells"]
    assert run.resources() == {"containers": [], "networks": [], "volumes": []}
    assert cell_containers(run.owner) == []


def test_a_headless_run_cancelled_by_its_caller_cleans_up_the_same(
    lab: Path, short_bench: Path, tmp_path: Path, no_leaks: None
) -> None:
    # no signal: the coroutine itself is cancelled (an embedding program, asyncio.run's own
    # Ctrl-C); the run stops, its cleanup and report happen all the same, then it re-raises
    out = tmp_path / "r.json"
    options = RunOptions(only=["mariadb-10.11"], arches=["amd64"], profile=Profile.QUICK)

    async def scenario() -> str:
        task = asyncio.ensure_future(run_headless(load(short_bench), options, {"json": str(out)}))
        while not await asyncio.to_thread(cell_containers, f"{TEST_LABEL_KEY}={TEST_SESSION}", running=True):
            assert not task.done(), task
            await asyncio.sleep(0.2)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return "cancelled"

    assert asyncio.run(scenario()) == "cancelled"
    report = json.loads(out.read_text())
    assert report["interrupted"] is True and report["finished_at"]
