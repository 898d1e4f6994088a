"""The quick profile's bench stage, read from the session's run of the default matrix
through the stand-ins (`stand_in_report`, tests/support/stand_in.py), which benches its
servers and its load balancer on both arches anyway: the lab's MariaDB 10.11, MariaDB 11.8
and MySQL 9.7 under their upstream names, HAProxy 3.2 in front of MariaDB 11.8, sysbench
derived from the stand-in's debian:trixie-slim (Debian's sysbench 1.0.20, on MariaDB's
client library), the quick profile's workloads and threads in runs of 2 s.

These were runs of their own before (issue 55: each expensive thing once): the quick
profile on MariaDB 10.11 on both arches, on MySQL 9.7 (caching_sha2_password through
MariaDB's client library), and a load balancer benched through the proxy with its overhead
against the same backend benched directly."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from ecoready.report.cost import proxy_overhead
from ecoready.report.load import load_report
from tests.support.bench import check_bench

pytestmark = [pytest.mark.docker, pytest.mark.slow]

QUICK = {"oltp_point_select", "oltp_read_only", "oltp_read_write"}


def cells_of(report: dict[str, Any], row: str) -> dict[str, dict[str, Any]]:
    cells = {c["arch"]: c for c in report["cells"] if c["component"] == row}
    assert set(cells) == {"amd64", "arm64"}, (row, report["_stderr"][-2000:])
    for cell in cells.values():
        assert cell["status"] == "ready", (cell["id"], cell["detail"], report["_stderr"][-2000:])
    return cells


def test_the_quick_profile_benches_a_server_on_both_arches(stand_in_report: dict[str, Any]) -> None:
    cells = cells_of(stand_in_report, "mariadb-10.11")
    assert stand_in_report["profile"] == "quick"
    for cell in cells.values():
        assert [s["stage"] for s in cell["stages"]] == ["image", "audit", "start", "smoke", "bench"]
    amd, arm = check_bench(cells["amd64"]), check_bench(cells["arm64"])
    assert amd["emulated"] is False and arm["emulated"] is True
    for bench in (amd, arm):
        assert {s["workload"] for s in bench["series"]} == QUICK
        assert {s["access"] for s in bench["series"]} == {"uniform"}
        assert bench["zipfian"] == "" and bench["profile"] == "quick"
    assert {s["threads"] for s in amd["series"]} == {1, 8} and {s["threads"] for s in arm["series"]} == {1}
    assert "reduced" in arm["method"] and "reduced" not in amd["method"]
    assert "not performance" in {s["stage"]: s for s in cells["arm64"]["stages"]}["bench"]["detail"]


def test_the_quick_bench_runs_on_mysql_through_mariadbs_client_library(stand_in_report: dict[str, Any]) -> None:
    # MySQL 9.7's root logs in with caching_sha2_password; Debian's sysbench links libmariadb
    for cell in cells_of(stand_in_report, "mysql-9.7").values():
        bench = check_bench(cell)
        assert {s["workload"] for s in bench["series"]} == QUICK
        assert all(r["tps"] > 0 and r["errors"] == 0 for s in bench["series"] for r in s["runs"])


def test_a_load_balancer_is_benched_through_the_proxy(stand_in_report: dict[str, Any]) -> None:
    proxy_cells, backend_cells = cells_of(stand_in_report, "haproxy"), cells_of(stand_in_report, "mariadb-11.8")
    for arch, cell in proxy_cells.items():
        proxy = cell["bench"]
        assert proxy["target"] == "through haproxy" and proxy["emulated"] is (arch == "arm64")
        assert set(proxy["image_digests"]) == {"component", "backend", "sysbench"}
        assert proxy["image_digests"]["backend"] == backend_cells[arch]["bench"]["image_digests"]["server"]
        assert {s["workload"] for s in proxy["series"]} == QUICK
        assert all(s["median_tps"] > 0 for s in proxy["series"])
    # the overhead against the backend benched directly, natively only: emulated figures
    # are not performance
    tables = proxy_overhead(load_report(Path(stand_in_report["_path"])))
    assert {(t.component, t.backend, t.arch) for t in tables} == {("haproxy", "mariadb-11.8", "amd64")}
    assert {t.workload for t in tables} == QUICK
    assert all(r.percent is not None and r.direct_tps > 0 for t in tables for r in t.rows)
