"""Report -> JSON text (pure). The keys follow the model's fields (`domain/codec.py`);
`LAYOUTS` holds the few places the document differs from them, for writing and reading
alike (`report/load.py`). docs/report-schema.json describes the result."""

from __future__ import annotations

import json
from typing import Any

from ecoready.domain.codec import Layout, Plain, kind_of, to_plain
from ecoready.domain.coverage import coverage_of
from ecoready.domain.errors import DataError
from ecoready.domain.images import ImageInfo, RegistryStatus
from ecoready.domain.model import (
    AuditResult,
    BenchResult,
    BenchRun,
    BenchSeries,
    BinaryAudit,
    CellResult,
    Check,
    ComponentOrigin,
    HostFacts,
    PlatformFitness,
    Report,
    StageResult,
)
from ecoready.domain.packaging import Packaging
from ecoready.report.cost import UNIT_HOURS, columns_for, compare, price_given, price_in, stale
from ecoready.report.legacy import with_blame, with_found_tag, with_install_kind, with_note_objects
from ecoready.report.migration import plan_pins, plan_steps
from ecoready.report.samecost import headline, line_text, same_cost

RATE_LIMIT = ("limit", "remaining", "window_s", "source")
SERIES_KEYS = ("workload", "access", "threads")  # a run's, written once per series


def _nest_rate_limit(status: RegistryStatus, out: Plain) -> Plain:
    """`rate_limit` is null when the registry sent no RateLimit headers."""
    limit = {key: out.pop(key) for key in RATE_LIMIT}
    limited = status.limit is not None or status.remaining is not None
    return {"registry": out["registry"], "requests": out["requests"], "rate_limit": limit if limited else None, **out}


def _flatten_rate_limit(data: Plain, where: str) -> Plain:
    limit = data.get("rate_limit")
    if limit is not None and not isinstance(limit, dict):
        raise DataError(f"{where}.rate_limit", f"expected an object, found {kind_of(limit)}")
    nested = {k: v for k, v in (limit or {}).items() if k in RATE_LIMIT}
    return {**{k: v for k, v in data.items() if k != "rate_limit"}, **nested}


def _runs_without_series_keys(series: BenchSeries, out: Plain) -> Plain:
    for run in out["runs"]:
        for key in SERIES_KEYS:
            run.pop(key, None)
    return out


def _runs_with_series_keys(data: Plain, where: str) -> Plain:
    runs = data.get("runs")
    if isinstance(runs, list):
        shared = {key: data[key] for key in SERIES_KEYS if key in data}
        data = {**data, "runs": [{**shared, **run} if isinstance(run, dict) else run for run in runs]}
    return data


def _with_coverage(cell: CellResult, out: Plain) -> Plain:
    """What the cell's verdict rests on, after its detail (derived: written for readers,
    recomputed from the cell when a report is loaded)."""
    keys = list(out)
    at = keys.index("detail") + 1 if "detail" in keys else len(keys)
    coverage = {"coverage": to_plain(coverage_of(cell))}
    return {**{k: out[k] for k in keys[:at]}, **coverage, **{k: out[k] for k in keys[at:]}}


def _without_coverage(data: Plain, where: str) -> Plain:
    return {k: v for k, v in data.items() if k != "coverage"}


def _served(host: HostFacts, out: Plain) -> Plain:
    return {**out, "serves": list(host.arches)}  # what it ran cells for, not only what [[hosts]] said


LAYOUTS = {
    CellResult: Layout(
        first=(
            *("id", "component", "name", "category", "arch", "host", "status", "emulated", "detail", "seconds"),
            *("started_at", "finished_at", "image", "audit", "stages", "bench", "log_tail"),
        ),
        skip=frozenset({"stage"}),  # only while a run is under way
        optional=frozenset({"audit", "packaging", "verification"})  # added after schema 1 was first written
        | frozenset({"facts", "parity"}),  # parity (issue 58)
        finish=_with_coverage,
        prepare=_without_coverage,
    ),
    Check: Layout(first=("name", "outcome", "seconds", "detail")),
    # blames were added after schema 1 was first written: older reports get theirs from wording
    StageResult: Layout(optional=frozenset({"blame"}), prepare=with_blame),
    BenchSeries: Layout(
        first=("workload", "access", "threads", "median_tps", "median_qps", "median_p95_ms", "cv"),
        finish=_runs_without_series_keys,
        prepare=_runs_with_series_keys,
    ),
    BenchRun: Layout(),
    BenchResult: Layout(
        first=("tool", "zipfian", "target", "emulated", "profile", "cpu_model", "cpus", "page_size", "image_digests"),
        optional=frozenset({"cpusets", "method"}),  # added after schema 1 was first written
    ),
    HostFacts: Layout(
        finish=_served,
        optional=frozenset(
            {"docker", "serves", "error", "engine", "engine_kind"}
            | {"price_per_month", "price_per_year", "vcpus", "memory_gib", "instance", "price_source", "price_date"}
        ),
    ),
    RegistryStatus: Layout(
        finish=_nest_rate_limit, prepare=_flatten_rate_limit, optional=frozenset({"source", "waited_s"})
    ),
    # notes were bare text before they said what they are about: older reports' are given theirs
    Report: Layout(
        optional=frozenset(
            {"platforms", "migration", "title", "merged_from", "targets", "matrix_content", "matrix_place"}
        ),
        prepare=with_note_objects,
    ),
    # added after schema 1 was first written: the target CPUs and the CPU's part
    PlatformFitness: Layout(optional=frozenset({"cpu_part"})),
    BinaryAudit: Layout(optional=frozenset({"sve_count", "build_id"})),
    AuditResult: Layout(optional=frozenset({"targets"})),
    ComponentOrigin: Layout(optional=frozenset({"pinned_at"})),  # added after schema 1 was first written
    # reports before mirrors per registry; before `found_tag`, read from `found_as`'s words
    ImageInfo: Layout(optional=frozenset({"mirror", "fallback"}), prepare=with_found_tag),
    Packaging: Layout(prepare=with_install_kind),  # before `install_kind`: read from `install`'s words
}


def report_dict(report: Report) -> dict[str, Any]:
    plain = to_plain(report, LAYOUTS)
    counts: dict[str, int] = {}
    for cell in report.cells.values():
        counts[cell.status.value] = counts.get(cell.status.value, 0) + 1
    return {
        "schema_version": report.schema_version,
        "tool": {"name": "ecoready", "version": report.tool_version},
        **{key: plain[key] for key in ("run_id", "matrix", "matrix_content", "matrix_place", "title")},
        **{key: plain[key] for key in ("profile", "started_at", "finished_at")},
        "interrupted": plain["interrupted"],
        "merged_from": plain["merged_from"],
        "arches": plain["arches"],
        "targets": plain["targets"],
        "hosts": plain["hosts"],
        "summary": dict(sorted(counts.items())),
        **{key: plain[key] for key in ("notes", "registries", "platforms")},
        "migration": migration_dict(report, plain["migration"]),
        "comparison": comparison_dict(report),
        "cells": list(plain["cells"].values()),
    }


def migration_dict(report: Report, written: Plain) -> Plain:
    """What the plan is made from (origins, tag searches; read back) and the plan itself
    (derived: written for readers, recomputed from the report when it is loaded)."""
    steps = plan_steps(report)
    return {**written, "plan": to_plain(steps), "pins": to_plain(plan_pins(report, steps))}


def comparison_dict(report: Report) -> Plain:
    """The arm64-vs-amd64 tables (every column the views show, by key), the same-cost
    view and the prices they rest on (derived: written for readers, never read back)."""
    result = compare(report)
    tables = [
        {
            **{k: v for k, v in to_plain(t).items() if k != "rows"},
            "columns": [{"key": c.key, "title": c.heading(t)} for c in columns_for(t)],
            "rows": to_plain(t.rows),
        }
        for t in result.tables
    ]
    views = [
        {
            **to_plain(view),
            "headline": headline(view),
            "lines": [{**to_plain(line), "text": line_text(view, line)} for line in view.lines],
        }
        for view in same_cost(report, result)
    ]
    return {"tables": tables, "same_cost": views, "prices": prices_list(report), "absent": list(result.absent)}


def prices_list(report: Report) -> list[Plain]:
    """Each priced host: the price as given, every unit derived from it, and its source."""
    out = []
    for host in report.hosts:
        given = price_given(host)
        if given is None:
            continue
        out.append(
            {
                "host": host.name,
                "instance": host.instance,
                "given": {"usd": given[0], "unit": given[1]},
                **{f"price_per_{unit}": price_in(host, unit) for unit in UNIT_HOURS},
                "vcpus": host.vcpus,
                "cpu_ghz": host.cpu_ghz,
                "memory_gib": host.memory_gib,
                "source": host.price_source,
                "date": host.price_date,
                "stale": bool(host.price_date) and stale(host.price_date, report.started_at),
            }
        )
    return out


def registry_dict(status: RegistryStatus) -> dict[str, Any]:
    """A registry as the run saw it (the `registries` of a report and of `ecoready images`)."""
    plain: dict[str, Any] = to_plain(status, LAYOUTS)
    return plain


def render(report: Report) -> str:
    return json.dumps(report_dict(report), indent=2, ensure_ascii=False) + "\n"
