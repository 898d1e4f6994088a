"""What every bench section of a report must satisfy, for the tests that read one."""

from __future__ import annotations

import statistics
from typing import Any

import pytest


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
