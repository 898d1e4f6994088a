"""The published #mysqlonarm numbers rebuilt from their raw figures, through what a user
does: a saved report per native runner, `ecoready report --merge`, Markdown and JSON.

- "MySQL on x86 vs ARM" (mysqlonarm.github.io, 7 April 2020): MySQL 8.0.19, 24 vCPU ARM at
  2.6 GHz vs 24 vCPU Xeon Gold 6266C at 3.0 GHz, threads 1 to 256, five workloads; point
  select and read only published in qps. Its percentages are whole numbers: ours must be
  within one point of them, its scaled figures within one unit.
- The cost model (CPM): update-index at 1,024 threads, 78,869 vs 55,537 tps, both
  instances at 800 USD a year: 98 vs 69 tps per USD, +42%.
- The CPM post's same-cost pair (HuaweiCloud, 2020): 12 x86 vCPU at 3.0 GHz for 3,432
  USD a year vs 24 arm vCPU at 2.6 GHz for 3,578 USD a year: compute power 36 vs 62.4 GHz.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

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
    Stage,
    StageResult,
    Status,
)
from ecoready.domain.model import Outcome as Outcome
from ecoready.report import json as json_report
from ecoready.report.cost import compare
from ecoready.report.samecost import headline, same_cost, same_cost_hosts
from tests.support.cli import ecoready

THREADS = (1, 2, 4, 8, 16, 32, 64, 128, 256)
READ_ONLY_QUERIES = 16  # an oltp_read_only transaction: 14 selects, BEGIN and COMMIT
# workload -> per thread count (arm, x86, arm scaled, % arm vs x86, % arm scaled vs x86),
# qps for point select and read only, tps for the rest: as published
PUBLISHED: dict[str, list[tuple[int, int, int, int, int]]] = {
    "oltp_point_select": [
        (6696, 6439, 7726, 4, 20),
        (12482, 11774, 14402, 6, 22),
        (23881, 21308, 27555, 12, 29),
        (45993, 42110, 53069, 9, 26),
        (88517, 81239, 102135, 9, 26),
        (142974, 136724, 164970, 5, 21),
        (198839, 212484, 229430, -6, 8),
        (217778, 241555, 251282, -10, 4),
        (209797, 224009, 242073, -6, 8),
    ],
    "oltp_read_only": [
        (5222, 5259, 6025, -1, 15),
        (10333, 10200, 11923, 1, 17),
        (19176, 19349, 22126, -1, 14),
        (36881, 37035, 42555, 0, 15),
        (70337, 67065, 81158, 5, 21),
        (109207, 113210, 126008, -4, 11),
        (139294, 164148, 160724, -15, -2),
        (151382, 175872, 174672, -14, -1),
        (149136, 164382, 172080, -9, 5),
    ],
    "oltp_read_write": [
        (137, 149, 158, -8, 6),
        (251, 273, 290, -8, 6),
        (462, 502, 533, -8, 6),
        (852, 920, 983, -7, 7),
        (1539, 1678, 1776, -8, 6),
        (2556, 2906, 2949, -12, 1),
        (3770, 5158, 4350, -27, -16),
        (5015, 8131, 5787, -38, -29),
        (5676, 8562, 6549, -34, -24),
    ],
    "oltp_update_index": [
        (328, 373, 378, -12, 1),
        (623, 768, 719, -19, -6),
        (1060, 1148, 1223, -8, 7),
        (1905, 2028, 2198, -6, 8),
        (3284, 3590, 3789, -9, 6),
        (5543, 6275, 6396, -12, 2),
        (9138, 10381, 10544, -12, 2),
        (13879, 16868, 16014, -18, -5),
        (19954, 25459, 23024, -22, -10),
    ],
    "oltp_update_non_index": [
        (328, 373, 378, -12, 1),
        (588, 686, 678, -14, -1),
        (1075, 1118, 1240, -4, 11),
        (1941, 2043, 2240, -5, 10),
        (3367, 3662, 3885, -8, 6),
        (5681, 6438, 6555, -12, 2),
        (9328, 10631, 10763, -12, 1),
        (14158, 17245, 16336, -18, -5),
        (20377, 26367, 23512, -23, -11),
    ],
}
QPS = {"oltp_point_select": 1, "oltp_read_only": READ_ONLY_QUERIES}


def point(workload: str, threads: int, figure: float) -> BenchSeries:
    """A series measured alone whose median is the published figure (qps for the qps
    workloads: tps is qps over the queries of a transaction)."""
    queries = QPS.get(workload)
    tps, qps = (figure / queries, figure) if queries else (figure, figure * 18)
    run = BenchRun(workload, "uniform", threads, 1, tps, qps, 1.0, 0, 0, 300.0)
    return BenchSeries(workload, "uniform", threads, (run,), tps, qps, 1.0, 0.0, shared_with=())


def one_runner(arch: str, host: HostFacts, series: list[BenchSeries], run_id: str) -> Report:
    bench = BenchResult("sysbench 1.0.20", "", "server", False, "full", cpus=host.vcpus or 0, series=tuple(series))
    stages = tuple(StageResult(s, Outcome.PASS, 1.0) for s in (Stage.IMAGE, Stage.START, Stage.SMOKE, Stage.BENCH))
    cell = CellResult(
        f"mysql-8.0/{arch}", "mysql-8.0", "MySQL 8.0.19", Category.SERVER, arch, host.name, False, Status.READY,
        stages=stages, bench=bench, seconds=4.0,
    )  # fmt: skip
    return Report(
        1, run_id, "0", "m.toml", Profile.FULL, "2026-11-27T10:00:00.000Z", "2026-11-27T11:00:00.000Z",
        hosts=(host,), arches=(arch,), cells={cell.id: cell},
    )  # fmt: skip


ARM = HostFacts("kunpeng", "arm64", serves=("arm64",), cpus=24, cpu_ghz=2.6, vcpus=24)
X86 = HostFacts("xeon", "amd64", serves=("amd64",), cpus=24, cpu_ghz=3.0, vcpus=24)


def merged(tmp_path: Path, arm: Report, x86: Report) -> tuple[dict[str, Any], str]:
    """`ecoready report --merge` of the two saved reports: its JSON and Markdown."""
    a, b = tmp_path / "arm.json", tmp_path / "x86.json"
    a.write_text(json_report.render(arm))
    b.write_text(json_report.render(x86))
    out, md = tmp_path / "m.json", tmp_path / "m.md"
    result = ecoready("report", "--merge", str(a), str(b), "--json", str(out), "--md", str(md))
    assert result.returncode == 0, result.stderr
    return json.loads(out.read_text()), md.read_text()


def test_the_published_x86_vs_arm_tables_are_rebuilt(tmp_path: Path) -> None:
    arm = [point(w, t, row[0]) for w, rows in PUBLISHED.items() for t, row in zip(THREADS, rows, strict=True)]
    x86 = [point(w, t, row[1]) for w, rows in PUBLISHED.items() for t, row in zip(THREADS, rows, strict=True)]
    data, md = merged(tmp_path, one_runner("arm64", ARM, arm, "a" * 32), one_runner("amd64", X86, x86, "b" * 32))
    tables = {t["workload"]: t for t in data["comparison"]["tables"]}
    assert set(tables) == set(PUBLISHED)
    assert data["comparison"]["absent"] == [  # the post gives no prices
        "mysql-8.0: no price for host kunpeng (price_per_hour, price_per_month, price_per_year or instance), "
        "so no tps per USD"
    ]
    for workload, published in PUBLISHED.items():
        table = tables[workload]
        keys = [c["key"] for c in table["columns"]]
        assert "scaled_percent" in keys and ("arm64_qps" in keys) == (workload in QPS)
        assert [r["threads"] for r in table["rows"]] == list(THREADS)
        for row, (arm_fig, x86_fig, scaled, pct, scaled_pct) in zip(table["rows"], published, strict=True):
            figure = "qps" if workload in QPS else "tps"
            assert row[f"arm64_{figure}"] == pytest.approx(arm_fig) and row[f"amd64_{figure}"] == pytest.approx(x86_fig)
            assert abs(row[f"arm64_scaled_{figure}"] - scaled) <= 1, (workload, row)
            assert abs(row["tps_percent"] - pct) <= 1, (workload, row["threads"], row["tps_percent"], pct)
            assert abs(row["scaled_percent"] - scaled_pct) <= 1, (workload, row["threads"], row["scaled_percent"])
    # the Markdown shows the same columns: point select at 1 thread, qps beside tps
    assert (
        "| threads | arm64 tps | amd64 tps | arm64 vs amd64 | arm64 tps at amd64's clock | "
        "arm64 at amd64's clock vs amd64 | arm64 qps | amd64 qps | arm64 qps at amd64's clock |"
    ) in md
    assert "| 1 | 6,696.0 | 6,439.0 | +4.0% | 7,726.2 | +20.0% | 6,696.0 | 6,439.0 | 7,726.2 | - | - | - |" in md
    assert "| 64 | 3,770.0 | 5,158.0 | -26.9% | 4,350.0 | -15.7% | - | - | - |" in md  # read-write: tps only


def test_the_cpm_example_per_usd_year(tmp_path: Path) -> None:
    arm_host = HostFacts("arm", "arm64", serves=("arm64",), price_per_year=800.0)
    x86_host = HostFacts("x86", "amd64", serves=("amd64",), price_per_year=800.0)
    arm = one_runner("arm64", arm_host, [point("oltp_update_index", 1024, 78_869)], "c" * 32)
    x86 = one_runner("amd64", x86_host, [point("oltp_update_index", 1024, 55_537)], "d" * 32)
    data, md = merged(tmp_path, arm, x86)
    (table,) = data["comparison"]["tables"]
    (row,) = table["rows"]
    assert table["unit"] == "year"
    assert [c["title"] for c in table["columns"]][-3:] == [
        "arm64 tps per USD-year",
        "amd64 tps per USD-year",
        "arm64 vs amd64 per USD",
    ]
    assert abs(row["arm64_per_usd"] - 98) < 1 and abs(row["amd64_per_usd"] - 69) < 1  # 98.6 and 69.4
    assert round(row["per_usd_percent"]) == 42
    assert "| 1024 | 78,869.0 | 55,537.0 | +42.0% | - | - | 98.6 | 69.4 | +42.0% |" in md
    prices = {p["host"]: p for p in data["comparison"]["prices"]}
    assert prices["arm"]["given"] == {"usd": 800.0, "unit": "year"}
    assert prices["arm"]["price_per_hour"] == pytest.approx(800 / 8760)
    assert prices["arm"]["price_per_month"] == pytest.approx(800 / 12)
    assert r"host arm: 800 USD per year, from \[\[hosts\]\]" in md


def test_the_same_cost_view_of_the_cpm_pair() -> None:
    x86 = HostFacts("x86", "amd64", serves=("amd64",), price_per_year=3432.0, vcpus=12, cpu_ghz=3.0)
    arm = HostFacts("arm", "arm64", serves=("arm64",), price_per_year=3578.0, vcpus=24, cpu_ghz=2.6)
    view = same_cost_hosts(arm, x86)
    assert view.unit == "year"
    assert view.amd64.compute_ghz == pytest.approx(36.0) and view.arm64.compute_ghz == pytest.approx(62.4)
    assert view.saving_percent == pytest.approx((3432 - 3578) / 3432 * 100)  # arm costs 4% more here
    said = headline(view)
    assert said.startswith("For about 3,500 USD per year: amd64 host x86: 12 vCPU at 3 GHz for 3,432 USD")
    assert "vs arm64 host arm: 24 vCPU at 2.6 GHz for 3,578 USD." in said
    assert "2.0x the vCPUs, 1.7x the compute power (36 vs 62.4 GHz)" in said
    assert said.endswith("The arm64 host costs 4% more.")
    # with numbers of a run: what each delivers for the amd64 host's budget, a projection
    report_arm = one_runner("arm64", arm, [point("oltp_read_write", 64, 3770)], "e" * 32)
    report_x86 = one_runner("amd64", x86, [point("oltp_read_write", 64, 2600)], "f" * 32)
    both = Report(
        1, "g" * 32, "0", "m", Profile.FULL, "2026-11-27T10:00:00.000Z", hosts=(x86, arm),
        cells={**report_arm.cells, **report_x86.cells},
    )  # fmt: skip
    ((line,),) = [v.lines for v in same_cost(both, compare(both))]
    assert line.arm64_at_budget == pytest.approx(3770 * 3432 / 3578)
    assert line.percent == pytest.approx((3770 * 3432 / 3578 / 2600 - 1) * 100)
    assert line.projected and line.arm64_tps_per_vcpu == pytest.approx(3770 / 24)
