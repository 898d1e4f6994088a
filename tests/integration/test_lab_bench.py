"""The bench stage on the lab's MariaDB, as a user runs it: `--profile full` with zipfian
(small settings from a test matrix) on amd64 and arm64 (emulated, reduced), a sysbench
image that is not there (the tool's fault, not the server's), a server that refuses the
benchmark, retried transactions. The quick profile on every server and through a load
balancer is read from the stand-ins' run of the default matrix, which benches them anyway
(test_stand_in_bench.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.support.bench import check_bench
from tests.support.cli import ecoready
from tests.support.matrices import LAB_SERVER

pytestmark = [pytest.mark.docker, pytest.mark.slow]


def run_report(matrix: Path, out: Path, *args: str) -> tuple[dict[str, Any], str]:
    result = ecoready("run", "--headless", "--matrix", str(matrix), "--json", str(out), *args, timeout=1200)
    report = json.loads(out.read_text())
    return report, f"exit {result.returncode}\n{result.stderr}"


def test_full_profile_runs_zipfian_through_the_lua_wrapper(lab: Path, tmp_path: Path, no_leaks: None) -> None:
    matrix = tmp_path / "full.toml"
    matrix.write_text(
        'arches = ["amd64", "arm64"]\nprofile = "full"\n'
        "[sysbench]\n"
        'image = "127.0.0.1:5000/lab/mariadb:10.11"\n'
        'workloads = ["oltp_point_select", "oltp_read_only", "oltp_update_non_index"]\n'
        "threads = [1, 2]\ntime = 2\nwarmup = 1\nrepeats = 2\ntables = 2\ntable_size = 2000\n"
        "[sysbench.emulated]\ntime = 2\n" + LAB_SERVER
    )
    report, log = run_report(matrix, tmp_path / "r.json")
    cells = {c["arch"]: c for c in report["cells"]}
    for cell in cells.values():
        assert cell["status"] == "ready", (cell, log)
    amd, arm = check_bench(cells["amd64"]), check_bench(cells["arm64"])
    for bench in (amd, arm):
        assert bench["profile"] == "full" and bench["zipfian"] == "lua"  # sysbench 1.0.20 has no zipfian
        assert {(s["workload"], s["access"]) for s in bench["series"]} == {
            (w, a)
            for w in ("oltp_point_select", "oltp_read_only", "oltp_update_non_index")
            for a in ("uniform", "zipfian")
        }
    assert {s["threads"] for s in amd["series"]} == {1, 2}
    assert all(len(s["runs"]) == 2 for s in amd["series"])  # repeats
    assert {s["threads"] for s in arm["series"]} == {1} and all(len(s["runs"]) == 1 for s in arm["series"])


def test_a_missing_sysbench_image_is_an_error_not_the_servers_fault(lab: Path, tmp_path: Path, no_leaks: None) -> None:
    matrix = tmp_path / "noimage.toml"
    matrix.write_text('[sysbench]\nimage = "127.0.0.1:5000/lab/no-sysbench-here:1"\n' + LAB_SERVER)
    report, log = run_report(matrix, tmp_path / "r.json", "--arch", "amd64", "--profile", "quick")
    (cell,) = report["cells"]
    stages = {s["stage"]: s for s in cell["stages"]}
    assert stages["smoke"]["outcome"] == "pass"
    assert stages["bench"]["outcome"] == "error", (stages["bench"], log)
    assert cell["status"] == "error" and "no-sysbench-here" in cell["detail"]
    assert "exit 3" in log


def test_a_server_that_refuses_the_benchmark_is_partial(lab: Path, tmp_path: Path, no_leaks: None) -> None:
    # a read-only server starts and passes smoke (root may write), but sysbench's own user
    # cannot create its tables: the component's fault, so the cell is partial, not error
    matrix = tmp_path / "ro.toml"
    matrix.write_text(
        '[sysbench]\nimage = "127.0.0.1:5000/lab/mariadb:10.11"\n'
        + LAB_SERVER
        + '[components.options]\nargs = ["--read-only"]\n'
    )
    report, log = run_report(matrix, tmp_path / "r.json", "--arch", "amd64", "--profile", "quick")
    (cell,) = report["cells"]
    bench = {s["stage"]: s for s in cell["stages"]}["bench"]
    assert bench["outcome"] == "fail", (bench, log)
    checks = {c["name"]: c for c in bench["checks"]}
    assert checks["prepare"]["outcome"] == "fail" and "read-only" in checks["prepare"]["detail"]
    assert cell["status"] == "partial" and "exit 1" in log


def test_transactions_sysbench_retries_are_counted_not_a_failure(lab: Path, tmp_path: Path, no_leaks: None) -> None:
    # 32 threads writing 10 rows: InnoDB deadlocks, which sysbench restarts and counts as
    # "ignored errors": the workload meeting the server's isolation, shown as retried, and
    # the workload's check passes (a run fails when it commits nothing)
    matrix = tmp_path / "deadlock.toml"
    matrix.write_text(
        '[sysbench]\nimage = "127.0.0.1:5000/lab/mariadb:10.11"\n'
        'workloads = ["oltp_read_write"]\nthreads = [32]\ntime = 4\nwarmup = 0\n'
        "tables = 1\ntable_size = 10\n" + LAB_SERVER
    )
    report, log = run_report(matrix, tmp_path / "r.json", "--arch", "amd64", "--profile", "quick")
    (cell,) = report["cells"]
    bench = {s["stage"]: s for s in cell["stages"]}["bench"]
    checks = {c["name"]: c for c in bench["checks"]}
    (series,) = cell["bench"]["series"]
    retried = series["runs"][0]["errors"]
    assert retried > 0 and series["runs"][0]["tps"] > 0, (series, log)
    assert checks["oltp_read_write uniform"]["outcome"] == "pass", (checks, log)
    assert f"{retried} retried" in checks["oltp_read_write uniform"]["detail"]
    assert bench["outcome"] == "pass" and cell["status"] == "ready"
