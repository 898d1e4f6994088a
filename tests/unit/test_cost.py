"""Cost math against hand-computed examples, including the seed post's."""

from __future__ import annotations

import pytest

from ecoready.domain.model import (
    BenchResult,
    BenchRun,
    BenchSeries,
    Category,
    CellResult,
    HostFacts,
    Profile,
    Report,
    Status,
)
from ecoready.report.cost import compare, frequency_scaled, percent, tps_per_usd_hour

HOURS_PER_YEAR = 24 * 365


def test_seed_example_same_price_is_plus_42_percent() -> None:
    # 78,869 tps (arm64) vs 55,537 tps (amd64), both instances at 800 USD/year
    price = 800 / HOURS_PER_YEAR
    arm, amd = tps_per_usd_hour(78_869, price), tps_per_usd_hour(55_537, price)
    assert arm is not None and amd is not None
    assert percent(arm, amd) == pytest.approx(42.01, abs=0.01)
    assert round(percent(arm, amd) or 0) == 42


def test_cheaper_arm_improves_the_per_dollar_figure() -> None:
    # equal tps, arm64 at 0.08 USD/h vs amd64 at 0.10 USD/h -> 25% more tps per dollar
    assert tps_per_usd_hour(1000, 0.08) == pytest.approx(12_500)
    assert percent(tps_per_usd_hour(1000, 0.08) or 0, tps_per_usd_hour(1000, 0.10) or 0) == pytest.approx(25.0)


def test_frequency_scaling_and_missing_inputs() -> None:
    assert frequency_scaled(1000, 2.5, 3.0) == pytest.approx(1200)
    assert frequency_scaled(1000, None, 3.0) is None
    assert tps_per_usd_hour(1000, None) is None and tps_per_usd_hour(1000, 0) is None
    assert percent(5, 0) is None
    assert percent(90, 100) == pytest.approx(-10.0)


def series(tps: float, threads: int = 8) -> BenchSeries:
    run = BenchRun("oltp_point_select", "uniform", threads, 1, tps, tps, 1.0, 0, 0, 10.0)
    return BenchSeries("oltp_point_select", "uniform", threads, (run,), tps, tps, 1.0, 0.0, shared_with=())


def cell(arch: str, host: str, tps: list[float], emulated: bool = False) -> CellResult:
    bench = BenchResult(
        "sysbench 1.0.20", "", "server", emulated, "quick", series=tuple(series(t, 2**i) for i, t in enumerate(tps))
    )
    return CellResult(f"db/{arch}", "db", "db", Category.SERVER, arch, host, emulated, Status.READY, bench=bench)


def report(*cells: CellResult, hosts: tuple[HostFacts, ...]) -> Report:
    return Report(1, "r", "0", "m", Profile.QUICK, "t", hosts=hosts, cells={c.id: c for c in cells})


HOSTS = (
    HostFacts("x86", "amd64", price_per_hour=0.10, cpu_ghz=3.0),
    HostFacts("graviton", "arm64", price_per_hour=0.08, cpu_ghz=2.5),
)


def test_compare_builds_seed_shaped_tables_with_each_hosts_price() -> None:
    result = compare(report(cell("arm64", "graviton", [1000, 1800]), cell("amd64", "x86", [1000, 2000]), hosts=HOSTS))
    (table,) = result.tables
    assert (table.workload, table.access, table.arm64_host, table.amd64_host) == (
        "oltp_point_select",
        "uniform",
        "graviton",
        "x86",
    )
    first, second = table.rows
    assert first.threads == 1 and second.threads == 2
    assert first.per_usd_percent == pytest.approx(25.0)
    assert second.tps_percent == pytest.approx(-10.0)
    assert second.arm64_scaled_tps == pytest.approx(1800 * 3.0 / 2.5)
    assert result.absent == ()


def test_emulated_cells_never_enter_a_comparison_and_say_why() -> None:
    result = compare(report(cell("arm64", "x86", [100], emulated=True), cell("amd64", "x86", [1000]), hosts=HOSTS))
    assert result.tables == ()
    assert result.absent == ("db/arm64: ran emulated, so its numbers are not performance",)


def test_missing_price_keeps_tps_but_not_per_usd() -> None:
    hosts = (HostFacts("x86", "amd64"), HostFacts("graviton", "arm64"))
    result = compare(report(cell("arm64", "graviton", [1000]), cell("amd64", "x86", [800]), hosts=hosts))
    (row,) = result.tables[0].rows
    assert row.tps_percent == pytest.approx(25.0) and row.per_usd_percent is None and row.arm64_scaled_tps is None
    assert any("no price for host" in a for a in result.absent)


def test_a_two_host_run_compares_with_each_hosts_own_price() -> None:
    """Folded from the events a run over two native hosts emits (the bench stage's results
    are constructed: it is not on this branch); each arch's tps per USD-hour uses the price
    of the host that ran it, from [[hosts]] via RunStarted."""
    from ecoready.domain.events import (
        BenchReported,
        CellFinished,
        CellPlanned,
        CheckReported,
        Event,
        RunStarted,
        StageFinished,
    )
    from ecoready.domain.model import Check, Outcome, Stage
    from ecoready.domain.state import fold

    hosts = (
        HostFacts("x86", "amd64", serves=("amd64",), price_per_hour=0.192, cpu_ghz=3.1),
        HostFacts("graviton", "arm64", serves=("arm64",), docker="ssh://ops@g:22", price_per_hour=0.1632, cpu_ghz=2.6),
    )
    planned = tuple(
        CellPlanned(f"db/{arch}", "db", "db", "server", arch, host, False)
        for arch, host in (("amd64", "x86"), ("arm64", "graviton"))
    )
    events: list[Event] = [RunStarted("a" * 32, "t", "m.toml", Profile.QUICK, ("amd64", "arm64"), planned, hosts)]
    for arch, tps in (("amd64", 5000.0), ("arm64", 4800.0)):
        bench = cell(arch, "-", [tps]).bench
        assert bench is not None
        events += [
            StageFinished(f"db/{arch}", Stage.IMAGE, Outcome.PASS, 0.1),
            StageFinished(f"db/{arch}", Stage.START, Outcome.PASS, 1.0),
            CheckReported(f"db/{arch}", Stage.SMOKE, Check("crud", Outcome.PASS)),
            StageFinished(f"db/{arch}", Stage.SMOKE, Outcome.PASS, 1.0),
            BenchReported(f"db/{arch}", bench),
            CellFinished(f"db/{arch}", "t", 1.0),
        ]
    result = compare(fold(events))
    ((row,),) = [t.rows for t in result.tables]
    assert (result.tables[0].arm64_host, result.tables[0].amd64_host) == ("graviton", "x86")
    assert row.arm64_per_usd == pytest.approx(4800 / 0.1632) and row.amd64_per_usd == pytest.approx(5000 / 0.192)
    assert row.per_usd_percent == pytest.approx(((4800 / 0.1632) / (5000 / 0.192) - 1) * 100)
    assert row.arm64_scaled_tps == pytest.approx(4800 * 3.1 / 2.6)
    assert result.absent == ()


def test_cells_that_did_not_run_are_not_listed_as_not_compared() -> None:
    from dataclasses import replace

    from ecoready.domain.model import Status
    from ecoready.domain.state import fold
    from ecoready.report.cost import compare
    from tests.support import streams

    report = fold(streams.two_native_hosts())
    cells = dict(report.cells)
    cells["mysql-8.4/arm64"] = replace(cells["mysql-8.4/arm64"], status=Status.MISSING, bench=None)
    cells["mariadb-10.11/arm64"] = replace(cells["mariadb-10.11/arm64"], status=Status.PARTIAL, bench=None)
    absent = compare(replace(report, cells=cells)).absent
    assert not any("mysql-8.4" in sentence for sentence in absent)  # missing: its row says so
    assert "mariadb-10.11/arm64: no benchmark (profile smoke, or not a benchmarked kind)" in absent  # it ran


def test_each_bench_says_under_what_conditions_it_measured() -> None:
    from dataclasses import replace

    from ecoready.report.exporter_text import bench_conditions

    alone = cell("amd64", "x86", [1000]).bench
    assert alone is not None
    pinned = replace(alone, cpusets={"server": "0", "sysbench": "1"})
    assert bench_conditions(pinned) == "measured alone on the host; server on CPU 0, sysbench on CPU 1"
    assert bench_conditions(alone).endswith("server and sysbench shared the host's CPUs (too few to pin them apart)")
    beside = replace(pinned, series=tuple(replace(s, shared_with=("mysql/amd64 bench",)) for s in pinned.series))
    assert bench_conditions(beside).startswith("NOT alone on the host: beside mysql/amd64 bench (not compared)")
    older = replace(pinned, series=tuple(replace(s, shared_with=None) for s in pinned.series))
    assert bench_conditions(older).startswith("what shared the host was not recorded")
    # and such a cell enters no comparison: "not measured"
    result = compare(
        report(cell("arm64", "graviton", [1000]), replace(cell("amd64", "x86", [800]), bench=beside), hosts=HOSTS)
    )
    assert result.tables == ()
    assert result.absent == ("db/amd64: not measured alone (beside mysql/amd64 bench): no ratio from it",)
