"""What every exporter says the same way: counts, hosts, what failed, bench numbers.
Returns plain (not yet escaped) text; each exporter escapes for its own format."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from ecoready.domain.cpus import by_part
from ecoready.domain.model import (
    BenchResult,
    BenchSeries,
    CellResult,
    HostFacts,
    Outcome,
    PlatformFitness,
    Profile,
    Report,
    Status,
)
from ecoready.report.order import grid_rows
from ecoready.report.status_words import EMULATED_MARK, packaging_text, short_text, shows_emulated

NOT_FAILING = frozenset({Status.READY, Status.SKIPPED, Status.PENDING, Status.RUNNING})


def cells_in_grid_order(report: Report) -> list[CellResult]:
    arches = list(report.arches)
    out: list[CellResult] = []
    for _category, _cid, _name, cells in grid_rows(report):
        out.extend(sorted(cells.values(), key=lambda c: arches.index(c.arch) if c.arch in arches else len(arches)))
    return out


def counts_line(report: Report) -> str:
    """`7 cells: 2 ready, 2 partial, 1 broken, 2 missing`"""
    counts: dict[Status, int] = {}
    for cell in report.cells.values():
        counts[cell.status] = counts.get(cell.status, 0) + 1
    parts = [f"{counts[s]} {s.value}" for s in Status if s in counts]
    noun = "cell" if len(report.cells) == 1 else "cells"
    return f"{len(report.cells)} {noun}: " + ", ".join(parts) if parts else "no cells"


def when(stamp: str | None) -> str:
    """`2026-11-21 22:49 UTC` from an ISO-8601 UTC timestamp (the raw text when unparsable)."""
    if not stamp:
        return "unknown"
    try:
        moment = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    except ValueError:
        return stamp
    return moment.strftime("%Y-%m-%d %H:%M:%S UTC")


def run_seconds(report: Report) -> float | None:
    try:
        start = datetime.fromisoformat(report.started_at.replace("Z", "+00:00"))
        end = datetime.fromisoformat((report.finished_at or "").replace("Z", "+00:00"))
    except ValueError:
        return None
    return max(0.0, (end - start).total_seconds())


def run_line(report: Report) -> str:
    """`matrix containers/lab.toml, profile smoke, run 6f9b22f2, 2026-11-21 22:49:50 UTC, 12.3 s`"""
    parts = [f"matrix {report.matrix}", f"profile {report.profile.value}", f"run {report.run_id[:8]}"]
    parts.append(when(report.started_at))
    seconds = run_seconds(report)
    if seconds is not None:
        parts.append(f"{seconds:.1f} s")
    if report.interrupted:
        parts.append("INTERRUPTED: cells not started are skipped")
    elif report.finished_at is None:
        parts.append("did not finish")
    parts.append(f"ecoready {report.tool_version}")
    return ", ".join(parts)


def host_line(host: HostFacts) -> str:
    """`local: native amd64, emulating arm64 (qemu-aarch64 version 10.0.13), docker 20.10, 2 CPUs, 23.5 GiB`"""
    parts = [f"native {host.native_arch or 'unknown'}"]
    if host.native_arch and host.serves and host.native_arch not in host.serves:
        parts[0] += " (not used: [[hosts]] arches)"
    for arch in host.emulated_arches:
        emulator = host.emulators.get(arch, "")
        parts.append(f"emulating {arch}" + (f" ({emulator})" if emulator else ""))
    if host.docker_version:
        parts.append(f"docker {host.docker_version} (API {host.api_version})")
    if host.cpus:
        parts.append(f"{host.cpus} CPUs")
    if host.memory_bytes:
        parts.append(f"{host.memory_bytes / 2**30:.1f} GiB")
    if host.instance:
        parts.append(host.instance)
    for unit, price in (("h", host.price_per_hour), ("month", host.price_per_month), ("year", host.price_per_year)):
        if price is not None:
            parts.append(f"{price:g} USD/{unit}")
    if host.vcpus is not None:
        parts.append(f"{host.vcpus} vCPU")
    if host.cpu_ghz is not None:
        parts.append(f"{host.cpu_ghz:g} GHz")
    if host.docker:
        parts.append(f"at {host.docker}")
    elif host.engine:
        parts.append(host.engine)
    if host.error:
        parts.append(host.error)
    return f"{host.name}: " + ", ".join(parts)


PLATFORM_HEADER = (
    "host",
    "arch",
    "CPU",
    "cores",
    "MHz",
    "features",
    "x86 level",
    "cache line",
    "page size",
    "THP",
    "NUMA nodes",
    "kernel",
)


def platform_row(p: PlatformFitness, docker_version: str = "") -> list[str]:
    """One row of the platform fitness table (plain text, in PLATFORM_HEADER's order)."""
    features = [*p.features, *(f"no {name}" for name in p.missing)]
    kernel = p.kernel + (f", docker {docker_version}" if docker_version else "")
    if p.error and not p.machine:
        return [p.host, p.arch + (" (emulated)" if p.emulated else ""), f"not asked: {p.error}"] + [""] * 9
    return [
        p.host,
        p.arch + (" (emulated)" if p.emulated else ""),
        _cpu_model(p),
        str(p.cpus) if p.cpus else "-",
        f"{p.mhz:.0f}" if p.mhz else "-",
        " ".join(features) or "-",
        p.x86_level or "-",
        f"{p.cache_line} B" if p.cache_line else "-",
        f"{p.page_size // 1024} KiB" if p.page_size else "-",
        p.thp or "-",
        str(p.numa_nodes) if p.numa_nodes else "-",
        kernel or "-",
    ]


def _cpu_model(p: PlatformFitness) -> str:
    """ "AMD EPYC (Zen 5)": the kernel's model name and, when its part is known, the core."""
    found = by_part(p.cpu_part)
    core = found[0].core if found else ""
    if core and core.replace(" ", "-").lower() not in p.cpu_model.replace(" ", "-").lower():
        return f"{p.cpu_model} ({core})" if p.cpu_model else core
    return p.cpu_model or "-"


def platforms_in_order(report: Report) -> list[PlatformFitness]:
    """The report's platforms in [[hosts]] order, then arch order (they arrive as surveys end)."""
    hosts = [h.name for h in report.hosts]
    arches = list(report.arches)

    def key(p: PlatformFitness) -> tuple[int, int]:
        return (
            hosts.index(p.host) if p.host in hosts else len(hosts),
            arches.index(p.arch) if p.arch in arches else len(arches),
        )

    return sorted(report.platforms, key=key)


def platform_hazards(report: Report) -> list[str]:
    """`host/arch: sentence` for every hazard, and why a platform could not be asked."""
    out = []
    for p in platforms_in_order(report):
        for hazard in p.hazards:
            out.append(f"{p.host}/{p.arch}: {hazard.text}")
        if p.error and p.machine:
            out.append(f"{p.host}/{p.arch}: {p.error}")
    return out


def docker_versions(report: Report) -> dict[str, str]:
    return {h.name: h.docker_version for h in report.hosts if h.docker_version}


@dataclass(frozen=True)
class Failure:
    """One thing that went wrong in a cell: a failing check, or a stage that failed itself."""

    where: str  # "smoke crud", "start", or "cell" when no stage says more
    outcome: str  # fail, timeout, error (or the cell's status for "cell")
    detail: str


BAD = (Outcome.FAIL, Outcome.TIMEOUT, Outcome.ERROR)


def failures(cell: CellResult) -> list[Failure]:
    found: list[Failure] = []
    for stage in cell.stages:
        bad_checks = [c for c in stage.checks if c.outcome in BAD]
        found.extend(Failure(f"{stage.stage.value} {c.name}", c.outcome.value, c.detail) for c in bad_checks)
        if stage.outcome in BAD and not bad_checks:
            assert stage.outcome is not None
            found.append(Failure(stage.stage.value, stage.outcome.value, stage.shown))
    if not found and cell.status not in NOT_FAILING:
        found.append(Failure("cell", cell.status.value, cell.detail))
    return found


def driver_cells(report: Report) -> list[CellResult]:
    """Cells of driver rows (those with a packaging verdict), in grid order."""
    return [c for c in cells_in_grid_order(report) if c.packaging is not None]


DRIVER_HEADER = ("component", "arch", "driver", "version", "packaging", "runtime")


def driver_row(cell: CellResult) -> list[str]:
    """One row of the drivers table: the packaging verdict next to the runtime result."""
    p = cell.packaging
    assert p is not None
    cached = " (installed by an earlier run)" if p.cached else ""
    runtime = short_text(cell) + (f" {EMULATED_MARK}" if shows_emulated(cell) else "")
    return [cell.component, cell.arch, p.spec, p.version, packaging_text(p) + cached, runtime]


def failing_cells(report: Report) -> list[CellResult]:
    return [c for c in cells_in_grid_order(report) if c.status not in NOT_FAILING]


def bench_cells(report: Report) -> list[CellResult]:
    return [c for c in cells_in_grid_order(report) if c.bench is not None and c.bench.series]


def no_bench_sentence(report: Report) -> str:
    if report.profile is Profile.SMOKE:
        return "None in this run: profile smoke runs no benchmark (use --profile quick or full)."
    return "None in this run: no cell reached its bench stage, or no component is of a benchmarked kind."


def bench_conditions(bench: BenchResult) -> str:
    """Under what conditions the numbers were measured, beside them in every view: alone on
    the host or beside what; server and sysbench on their own CPUs or not."""
    beside = sorted({name for s in bench.series for name in (s.shared_with or ())})
    if beside:
        alone = f"NOT alone on the host: beside {', '.join(beside)} (not compared)"
    elif any(s.shared_with is None for s in bench.series):
        alone = "what shared the host was not recorded (a report older than the record: not compared)"
    else:
        alone = "measured alone on the host"
    if bench.cpusets:
        pinned = ", ".join(f"{role} on CPU {cpus}" for role, cpus in bench.cpusets.items())
    else:
        pinned = "server and sysbench shared the host's CPUs (too few to pin them apart)"
    return f"{alone}; {pinned}"


def target_words(target: str) -> str:
    """`against the server` / `through proxysql` (the bench target as a phrase)."""
    return "against the server" if target in ("", "server") else target


def number(value: float | None, digits: int = 0) -> str:
    """`12,345` / `12,345.6` / `-` for a missing value."""
    if value is None:
        return "-"
    return f"{value:,.{digits}f}"


def runs_text(series: BenchSeries) -> str:
    """A series' runs, the failed ones, and the transactions sysbench restarted."""
    failed = sum(1 for r in series.runs if not r.ok)
    retried = sum(r.errors for r in series.runs)
    notes = [f"{failed} failed"] if failed else []
    if retried:
        notes.append(f"{retried:,} retried")
    return f"{len(series.runs)}" + (f" ({', '.join(notes)})" if notes else "")


def cv_text(series: BenchSeries) -> str:
    """The runs' coefficient of variation, or a dash with fewer than two runs (one run has none)."""
    return f"{series.cv * 100:.1f}%" if len(series.runs) >= 2 else "–"
