"""The proxy's overhead per arch: its bench through the proxy against the server cell that
ran the same backend image on the same arch (hand-computed examples)."""

from __future__ import annotations

import pytest

from ecoready.domain.model import BenchResult, BenchRun, BenchSeries, Category, CellResult, Profile, Report, Status
from ecoready.report.cost import proxy_overhead

SERVER_DIGEST = {"amd64": "sha256:" + "a" * 64, "arm64": "sha256:" + "b" * 64}


def series(tps: float, threads: int) -> BenchSeries:
    run = BenchRun("oltp_point_select", "uniform", threads, 1, tps, tps, 1.0, 0, 0, 10.0)
    return BenchSeries("oltp_point_select", "uniform", threads, (run,), tps, tps, 1.0, 0.0)


def cell(component: str, arch: str, tps: dict[int, float], *, proxy: bool, emulated: bool = False) -> CellResult:
    digests = (
        {"component": "sha256:" + "c" * 64, "backend": SERVER_DIGEST[arch], "sysbench": "x"}
        if proxy
        else {"server": SERVER_DIGEST[arch], "sysbench": "x"}
    )
    bench = BenchResult(
        "sysbench 1.0.20",
        "",
        "through haproxy" if proxy else "server",
        emulated,
        "quick",
        image_digests=digests,
        series=tuple(series(t, n) for n, t in tps.items()),
    )
    category = Category.LOAD_BALANCER if proxy else Category.SERVER
    return CellResult(
        f"{component}/{arch}", component, component, category, arch, "local", emulated, Status.READY, bench=bench
    )


def report(*cells: CellResult) -> Report:
    return Report(1, "r", "0", "m", Profile.QUICK, "t", cells={c.id: c for c in cells})


def test_overhead_is_through_vs_direct_per_thread_count() -> None:
    tables = proxy_overhead(
        report(
            cell("db", "amd64", {1: 10_000.0, 8: 40_000.0}, proxy=False),
            cell("haproxy", "amd64", {1: 8_000.0, 8: 38_000.0}, proxy=True),
        )
    )
    (table,) = tables
    assert (table.component, table.arch, table.backend) == ("haproxy", "amd64", "db")
    one, eight = table.rows
    assert (one.threads, one.direct_tps, one.through_tps) == (1, 10_000.0, 8_000.0)
    assert one.percent == pytest.approx(-20.0)  # 8,000 / 10,000 - 1
    assert eight.percent == pytest.approx(-5.0)  # 38,000 / 40,000 - 1


def test_only_the_same_arch_and_backend_image_and_never_emulated() -> None:
    tables = proxy_overhead(
        report(
            cell("db", "amd64", {1: 10_000.0}, proxy=False),
            cell("db", "arm64", {1: 500.0}, proxy=False, emulated=True),
            cell("haproxy", "arm64", {1: 400.0}, proxy=True, emulated=True),
        )
    )
    assert tables == ()  # arm64 ran emulated; amd64 has no proxy cell
