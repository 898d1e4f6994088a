"""Reports for the exporter tests.

`lab_report(name)` loads a report recorded from a real lab run (tests/data/reports/, see
its README). The lab has no bench stage yet, so `bench_report()` is CONSTRUCTED: its
numbers are illustrative (shaped like the #mysqlonarm posts), not a measurement, and the
report says so in its notes. It exercises the bench tables, charts and comparisons.
"""

from __future__ import annotations

from pathlib import Path

from ecoready.domain.images import ImageInfo
from ecoready.domain.model import (
    BenchResult,
    BenchRun,
    BenchSeries,
    Category,
    CellResult,
    Check,
    HostFacts,
    Note,
    Outcome,
    Profile,
    Report,
    Stage,
    StageResult,
    Status,
)
from ecoready.report.load import load_report

DATA = Path(__file__).resolve().parents[1] / "data" / "reports"
EXPECTED = DATA / "expected"
LAB_REPORTS = ("lab-run", "lab-mixed", "lab-audit")


def lab_report(name: str) -> Report:
    return load_report(DATA / f"{name}.json")


def series(workload: str, threads: int, tps: list[float], p95: float = 2.5) -> BenchSeries:
    runs = tuple(BenchRun(workload, "uniform", threads, i + 1, t, t * 20, p95, 0, 0, 10.0) for i, t in enumerate(tps))
    mean = sum(tps) / len(tps)
    spread = (sum((t - mean) ** 2 for t in tps) / len(tps)) ** 0.5
    ordered = sorted(tps)
    return BenchSeries(
        workload,
        "uniform",
        threads,
        runs,
        ordered[len(ordered) // 2],
        ordered[len(ordered) // 2] * 20,
        p95,
        spread / mean,
        shared_with=(),
    )


def bench(emulated: bool, scale: float) -> BenchResult:
    points = []
    for workload, base in (("oltp_point_select", 9000.0), ("oltp_read_write", 700.0)):
        for threads in (1, 2, 4, 8):
            tps = base * threads**0.8 * scale
            points.append(series(workload, threads, [tps * 0.99, tps, tps * 1.01]))
    return BenchResult(
        tool="sysbench 1.0.20",
        zipfian="",
        target="server",
        emulated=emulated,
        profile="quick",
        cpu_model="illustrative CPU",
        cpus=4,
        page_size=4096,
        image_digests={"server": "sha256:" + "a" * 64},
        series=tuple(points),
        cpusets={"server": "0-1", "sysbench": "2-3"},
        method="4 tables x 10000 rows; threads 1,2,4,8; 10 s runs after a 5 s warmup; 3 repeats",
    )


def cell(component: str, arch: str, host: str, emulated: bool, scale: float) -> CellResult:
    stages = (
        StageResult(Stage.IMAGE, Outcome.PASS, 0.1, "index sha256:aaaaaaaaaaaa"),
        StageResult(Stage.START, Outcome.PASS, 3.0, "ready in 3.0 s"),
        StageResult(Stage.SMOKE, Outcome.PASS, 0.5, "", (Check("crud", Outcome.PASS, "create, insert", 0.2),)),
        StageResult(Stage.BENCH, Outcome.PASS, 240.0, "2 workloads x 4 thread counts x 3 repeats"),
    )
    return CellResult(
        id=f"{component}/{arch}",
        component=component,
        name=component,
        category=Category.SERVER,
        arch=arch,
        host=host,
        emulated=emulated,
        status=Status.READY,
        stages=stages,
        image=ImageInfo("registry.example/mariadb:10.11", arch, "sha256:" + "b" * 64, "sha256:" + "c" * 64, 1 << 27),
        started_at="2026-01-02T03:04:05.000Z",
        finished_at="2026-01-02T03:08:09.000Z",
        seconds=244.0,
        bench=bench(emulated, scale),
    )


def bench_report() -> Report:
    cells = [
        cell("mariadb-10.11", "amd64", "x86", False, 1.0),
        cell("mariadb-10.11", "arm64", "graviton", False, 1.18),
        cell("mariadb-11.8", "amd64", "x86", False, 1.05),
        cell("mariadb-11.8", "arm64", "x86", True, 0.08),
    ]
    return Report(
        schema_version=1,
        run_id="0123456789abcdef0123456789abcdef",
        tool_version="0.1.0",
        matrix="sample.toml",
        profile=Profile.QUICK,
        started_at="2026-01-02T03:04:05.000Z",
        finished_at="2026-01-02T03:20:00.000Z",
        hosts=(
            HostFacts(
                "x86",
                "amd64",
                ("arm64",),
                {"arm64": "qemu-aarch64 10.0"},
                "20.10",
                "1.41",
                4,
                16 << 30,
                "6.1",
                price_per_hour=0.1920,
                cpu_ghz=3.1,
            ),
            HostFacts(
                "graviton", "arm64", (), {}, "20.10", "1.41", 4, 16 << 30, "6.1", price_per_hour=0.1632, cpu_ghz=2.6
            ),
        ),
        arches=("amd64", "arm64"),
        cells={c.id: c for c in cells},
        notes=(Note("constructed for the renderer tests: the numbers are illustrative, not a measurement"),),
    )
