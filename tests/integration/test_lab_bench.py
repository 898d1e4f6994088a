"""The bench stage on the lab's MariaDB, as a user runs it: `--profile quick` on amd64
(native) and arm64 (emulated, reduced), `--profile full` with zipfian (small settings from
a test matrix), and a sysbench image that is not there (the tool's fault, not the server's).
"""

from __future__ import annotations

import json
import statistics
from pathlib import Path
from typing import Any

import pytest

from tests.support.cli import ecoready
from tests.support.matrices import LAB_SERVER

pytestmark = [pytest.mark.docker, pytest.mark.slow]


def run_report(matrix: Path, out: Path, *args: str) -> tuple[dict[str, Any], str]:
    result = ecoready("run", "--headless", "--matrix", str(matrix), "--json", str(out), *args, timeout=1200)
    report = json.loads(out.read_text())
    return report, f"exit {result.returncode}\n{result.stderr}"


def check_bench(cell: dict[str, Any]) -> dict[str, Any]:
    """What every bench section must satisfy; returns it."""
    bench = cell["bench"]
    assert bench is not None, cell
    assert bench["tool"] == "sysbench 1.0.20"
    assert bench["emulated"] is cell["emulated"]
    assert bench["target"] == "server"
    assert bench["cpus"] >= 1 and bench["page_size"] > 0 and bench["cpu_model"]
    assert bench["image_digests"]["server"].startswith("sha256:")
    assert bench["image_digests"]["sysbench"].startswith("sha256:")
    if bench["cpus"] >= 2:  # pinned apart
        cpus = bench["cpusets"]
        assert set(cpus) == {"server", "sysbench"} and cpus["server"] != cpus["sysbench"]
    for series in bench["series"]:
        runs = series["runs"]
        assert runs and all(r["tps"] > 0 and r["qps"] >= r["tps"] and r["p95_ms"] > 0 for r in runs), series
        assert all(r["errors"] == 0 and r["seconds"] > 0 for r in runs), series
        # the statistics are those of the raw runs
        tps = [r["tps"] for r in runs]
        assert series["median_tps"] == pytest.approx(statistics.median(tps))
        assert series["median_qps"] == pytest.approx(statistics.median(r["qps"] for r in runs))
        assert series["median_p95_ms"] == pytest.approx(statistics.median(r["p95_ms"] for r in runs))
        expected_cv = statistics.stdev(tps) / statistics.fmean(tps) if len(tps) > 1 else 0.0
        assert series["cv"] == pytest.approx(expected_cv)
        assert sorted(r["repeat"] for r in runs) == list(range(1, len(runs) + 1))
    stage = {s["stage"]: s for s in cell["stages"]}["bench"]
    assert stage["outcome"] == "pass", stage
    checks = [c["name"] for c in stage["checks"]]
    assert checks[0] == "prepare" and checks[-1] == "cleanup"
    return bench


def test_quick_profile_benches_every_server_cell(lab: Path, tmp_path: Path, no_leaks: None) -> None:
    # the quick profile's workloads, threads and access; runs of 2 s instead of its 10 (the
    # shape is under test, not the figures: 75 s of both cores saved)
    matrix = tmp_path / "quick.toml"
    matrix.write_text(
        'arches = ["amd64", "arm64"]\n[sysbench]\nimage = "127.0.0.1:5000/lab/mariadb:10.11"\ntime = 2\nwarmup = 1\n'
        + LAB_SERVER
    )
    report, log = run_report(matrix, tmp_path / "r.json", "--profile", "quick")
    cells = {c["arch"]: c for c in report["cells"]}
    assert report["profile"] == "quick"
    for cell in cells.values():
        assert cell["status"] == "ready", (cell, log)
        assert [s["stage"] for s in cell["stages"]] == ["image", "audit", "start", "smoke", "bench"]
    amd, arm = check_bench(cells["amd64"]), check_bench(cells["arm64"])
    assert amd["emulated"] is False and arm["emulated"] is True
    for bench in (amd, arm):
        workloads = {s["workload"] for s in bench["series"]}
        assert len(workloads) >= 3 and {s["access"] for s in bench["series"]} == {"uniform"}
        assert bench["zipfian"] == "" and bench["profile"] == "quick"
    assert len({s["threads"] for s in amd["series"]}) == 2
    assert "reduced" in arm["method"] and "reduced" not in amd["method"]
    assert "not performance" in {s["stage"]: s for s in cells["arm64"]["stages"]}["bench"]["detail"]


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


def test_a_load_balancer_is_benched_through_the_proxy(lab: Path, tmp_path: Path, no_leaks: None) -> None:
    from ecoready.report.cost import proxy_overhead
    from ecoready.report.load import load_report

    matrix = tmp_path / "lb.toml"
    matrix.write_text(
        'concurrency = 1\n[sysbench]\nimage = "127.0.0.1:5000/lab/mariadb:10.11"\n'
        'workloads = ["oltp_point_select", "oltp_read_only", "oltp_read_write"]\n'
        "threads = [1, 2]\ntime = 2\nwarmup = 1\ntables = 2\ntable_size = 2000\n"
        + LAB_SERVER
        + '[[components]]\nid = "haproxy"\ncategory = "load-balancer"\nprobe = "haproxy"\n'
        'image = "127.0.0.1:5000/lab/haproxy:2.6"\nbackend = "mariadb-10.11"\n'
    )
    out = tmp_path / "r.json"
    report, log = run_report(matrix, out, "--arch", "amd64", "--profile", "quick")
    cells = {c["component"]: c for c in report["cells"]}
    for cell in cells.values():
        assert cell["status"] == "ready", (cell, log)
    proxy = cells["haproxy"]["bench"]
    assert proxy["target"] == "through haproxy" and proxy["emulated"] is False
    assert set(proxy["image_digests"]) == {"component", "backend", "sysbench"}
    assert proxy["image_digests"]["backend"] == cells["mariadb-10.11"]["bench"]["image_digests"]["server"]
    assert all(s["median_tps"] > 0 for s in proxy["series"])
    tables = proxy_overhead(load_report(out))
    assert {(t.component, t.backend, t.arch) for t in tables} == {("haproxy", "mariadb-10.11", "amd64")}
    assert {t.workload for t in tables} == {"oltp_point_select", "oltp_read_only", "oltp_read_write"}
    assert all(r.percent is not None and r.direct_tps > 0 for t in tables for r in t.rows)
