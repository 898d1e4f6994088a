"""Report -> JSON text (pure). Keys are stable; docs/report-schema.json describes them."""

from __future__ import annotations

import json
from typing import Any

from ecoready.domain.model import (
    BenchResult,
    BenchRun,
    BenchSeries,
    CellResult,
    Check,
    HostFacts,
    ImageInfo,
    PlatformFitness,
    RegistryStatus,
    Report,
    StageResult,
)


def check_dict(check: Check) -> dict[str, Any]:
    return {"name": check.name, "outcome": check.outcome.value, "seconds": check.seconds, "detail": check.detail}


def stage_dict(stage: StageResult) -> dict[str, Any]:
    return {
        "stage": stage.stage.value,
        "outcome": stage.outcome.value if stage.outcome else None,
        "seconds": stage.seconds,
        "detail": stage.detail,
        "checks": [check_dict(c) for c in stage.checks],
    }


def image_dict(image: ImageInfo | None) -> dict[str, Any] | None:
    if image is None:
        return None
    return {
        "reference": image.reference,
        "arch": image.arch,
        "digest": image.digest,
        "index_digest": image.index_digest,
        "size": image.size,
        "found_as": image.found_as,
        "image_id": image.image_id,
    }


def run_dict(run: BenchRun) -> dict[str, Any]:
    return {
        "repeat": run.repeat,
        "tps": run.tps,
        "qps": run.qps,
        "p95_ms": run.p95_ms,
        "errors": run.errors,
        "reconnects": run.reconnects,
        "seconds": run.seconds,
    }


def series_dict(series: BenchSeries) -> dict[str, Any]:
    return {
        "workload": series.workload,
        "access": series.access,
        "threads": series.threads,
        "median_tps": series.median_tps,
        "median_qps": series.median_qps,
        "median_p95_ms": series.median_p95_ms,
        "cv": series.cv,
        "runs": [run_dict(r) for r in series.runs],
    }


def bench_dict(bench: BenchResult | None) -> dict[str, Any] | None:
    if bench is None:
        return None
    return {
        "tool": bench.tool,
        "zipfian": bench.zipfian,
        "target": bench.target,
        "emulated": bench.emulated,
        "profile": bench.profile,
        "cpu_model": bench.cpu_model,
        "cpus": bench.cpus,
        "page_size": bench.page_size,
        "image_digests": dict(bench.image_digests),
        "cpusets": dict(bench.cpusets),
        "method": bench.method,
        "series": [series_dict(s) for s in bench.series],
    }


def cell_dict(cell: CellResult) -> dict[str, Any]:
    return {
        "id": cell.id,
        "component": cell.component,
        "name": cell.name,
        "category": cell.category.value,
        "arch": cell.arch,
        "host": cell.host,
        "status": cell.status.value,
        "emulated": cell.emulated,
        "detail": cell.detail,
        "seconds": cell.seconds,
        "started_at": cell.started_at,
        "finished_at": cell.finished_at,
        "image": image_dict(cell.image),
        "stages": [stage_dict(s) for s in cell.stages],
        "bench": bench_dict(cell.bench),
        "log_tail": list(cell.log_tail),
    }


def host_dict(host: HostFacts) -> dict[str, Any]:
    return {
        "name": host.name,
        "native_arch": host.native_arch,
        "emulated_arches": list(host.emulated_arches),
        "emulators": dict(host.emulators),
        "docker_version": host.docker_version,
        "api_version": host.api_version,
        "cpus": host.cpus,
        "memory_bytes": host.memory_bytes,
        "kernel": host.kernel,
        "price_per_hour": host.price_per_hour,
        "cpu_ghz": host.cpu_ghz,
        "docker": host.docker,
        "serves": list(host.arches),
        "error": host.error,
    }


def platform_dict(p: PlatformFitness) -> dict[str, Any]:
    return {
        "host": p.host,
        "arch": p.arch,
        "emulated": p.emulated,
        "image": p.image,
        "machine": p.machine,
        "kernel": p.kernel,
        "cpu_model": p.cpu_model,
        "cpus": p.cpus,
        "mhz": p.mhz,
        "features": list(p.features),
        "missing": list(p.missing),
        "x86_level": p.x86_level,
        "cache_line": p.cache_line,
        "page_size": p.page_size,
        "thp": p.thp,
        "numa_nodes": p.numa_nodes,
        "hazards": [{"code": h.code, "text": h.text} for h in p.hazards],
        "error": p.error,
    }


def registry_dict(status: RegistryStatus) -> dict[str, Any]:
    """A registry as the run saw it; `rate_limit` is null when it sent no RateLimit headers."""
    limited = status.limit is not None or status.remaining is not None
    return {
        "registry": status.registry,
        "requests": status.requests,
        "rate_limit": {
            "limit": status.limit,
            "remaining": status.remaining,
            "window_s": status.window_s,
            "source": status.source,
        }
        if limited
        else None,
        "error": status.error,
    }


def report_dict(report: Report) -> dict[str, Any]:
    cells = [cell_dict(c) for c in report.cells.values()]
    counts: dict[str, int] = {}
    for cell in report.cells.values():
        counts[cell.status.value] = counts.get(cell.status.value, 0) + 1
    return {
        "schema_version": report.schema_version,
        "tool": {"name": "ecoready", "version": report.tool_version},
        "run_id": report.run_id,
        "matrix": report.matrix,
        "profile": report.profile.value,
        "started_at": report.started_at,
        "finished_at": report.finished_at,
        "interrupted": report.interrupted,
        "arches": list(report.arches),
        "hosts": [host_dict(h) for h in report.hosts],
        "summary": dict(sorted(counts.items())),
        "notes": list(report.notes),
        "registries": [registry_dict(r) for r in report.registries],
        "platforms": [platform_dict(p) for p in report.platforms],
        "cells": cells,
    }


def render(report: Report) -> str:
    return json.dumps(report_dict(report), indent=2, ensure_ascii=False) + "\n"
