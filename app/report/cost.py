"""Performance per dollar, as the #mysqlonarm posts computed it by hand (pure).

For each component benchmarked natively on both arches: tps per USD-hour from each
host's `price_per_hour`, the arm64-vs-amd64 percentage, and arm64's tps scaled to amd64's
clock (`cpu_ghz`), shaped like the seed posts' tables: threads as rows. Emulated numbers
never enter a comparison; every cell left out gets a sentence saying why.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from ecoready.domain.model import BenchSeries, CellResult, HostFacts, Report, Status

BASE_ARCH = "amd64"
OTHER_ARCH = "arm64"


def tps_per_usd_hour(tps: float, price_per_hour: float | None) -> float | None:
    """Transactions per second bought by one USD per hour (None without a price)."""
    if price_per_hour is None or price_per_hour <= 0:
        return None
    return tps / price_per_hour


def percent(value: float, base: float) -> float | None:
    """How much `value` is above (+) or below (-) `base`, in percent."""
    if base <= 0:
        return None
    return (value / base - 1.0) * 100.0


def frequency_scaled(tps: float, own_ghz: float | None, to_ghz: float | None) -> float | None:
    """tps as if the CPU ran at `to_ghz` (linear in clock: the seed posts' simplification)."""
    if not own_ghz or not to_ghz:
        return None
    return tps * to_ghz / own_ghz


@dataclass(frozen=True)
class CompareRow:
    threads: int
    arm64_tps: float
    amd64_tps: float
    arm64_scaled_tps: float | None  # arm64 tps at amd64's clock
    tps_percent: float | None  # arm64 vs amd64, raw tps
    arm64_per_usd: float | None  # tps per USD-hour
    amd64_per_usd: float | None
    per_usd_percent: float | None  # arm64 vs amd64, tps per USD-hour


@dataclass(frozen=True)
class CompareColumn:
    """One column of the arm64-vs-amd64 table, as every view shows it."""

    title: str  # in the reports
    short: str  # in the TUI, where width is scarce
    value: Callable[[CompareRow], float | int | None]
    digits: int | None = 1  # None: a signed percentage

    def text(self, row: CompareRow, missing: str = "-") -> str:
        value = self.value(row)
        if value is None:
            return missing
        if isinstance(value, int):
            return str(value)
        if self.digits is None:
            return f"{value:+.1f}%"
        return f"{value:,.{self.digits}f}"


# The seed posts' table: threads as rows; raw tps, arm64 at amd64's clock, tps per USD-hour.
COMPARE_COLUMNS: tuple[CompareColumn, ...] = (
    CompareColumn("threads", "threads", lambda r: r.threads, 0),
    CompareColumn("arm64 tps", "arm64 tps", lambda r: r.arm64_tps),
    CompareColumn("amd64 tps", "amd64 tps", lambda r: r.amd64_tps),
    CompareColumn("arm64 vs amd64", "arm vs amd", lambda r: r.tps_percent, None),
    CompareColumn("arm64 tps at amd64's clock", "arm64 @amd64 GHz", lambda r: r.arm64_scaled_tps),
    CompareColumn("arm64 tps per USD-hour", "arm64 tps/$h", lambda r: r.arm64_per_usd, 0),
    CompareColumn("amd64 tps per USD-hour", "amd64 tps/$h", lambda r: r.amd64_per_usd, 0),
    CompareColumn("arm64 vs amd64 per USD", "per $ arm vs amd", lambda r: r.per_usd_percent, None),
)


def compare_heading(table: CompareTable) -> str:
    """`mariadb-10.11: oltp_read_only, uniform (server)`"""
    return f"{table.component}: {table.workload}, {table.access} ({table.target})"


def compare_hosts(table: CompareTable) -> str:
    return f"arm64 on host {table.arm64_host}, amd64 on host {table.amd64_host}; median tps"


@dataclass(frozen=True)
class CompareTable:
    component: str
    workload: str
    access: str
    target: str  # "server" or "through <proxy>"
    arm64_host: str
    amd64_host: str
    rows: tuple[CompareRow, ...]


@dataclass(frozen=True)
class Comparison:
    tables: tuple[CompareTable, ...]
    absent: tuple[str, ...]  # one sentence per cell (or component) left out, and why


def _why_not(cell: CellResult | None, arch: str, component: str) -> str | None:
    if cell is None:
        return f"{component}/{arch}: not in this run"
    if cell.emulated or (cell.bench is not None and cell.bench.emulated):
        return f"{cell.id}: ran emulated, so its numbers are not performance"
    if cell.bench is None or not cell.bench.series:
        if cell.status is not Status.READY and cell.status is not Status.PARTIAL:
            return f"{cell.id}: {cell.status.value}, no benchmark"
        return f"{cell.id}: no benchmark (profile smoke, or not a benchmarked kind)"
    return None


def _ran(cell: CellResult) -> bool:
    return cell.status not in (Status.PENDING, Status.RUNNING, Status.SKIPPED, Status.MISSING, Status.ERROR)


def _series(cell: CellResult) -> dict[tuple[str, str, int], BenchSeries]:
    assert cell.bench is not None
    return {(s.workload, s.access, s.threads): s for s in cell.bench.series if all(r.ok for r in s.runs)}


def compare(report: Report) -> Comparison:
    """Every arm64-vs-amd64 table the report supports, and why the rest is absent."""
    hosts: Mapping[str, HostFacts] = {h.name: h for h in report.hosts}
    by_component: dict[str, dict[str, CellResult]] = {}
    for cell in report.cells.values():
        by_component.setdefault(cell.component, {})[cell.arch] = cell
    tables: list[CompareTable] = []
    absent: list[str] = []
    for component, cells in by_component.items():
        if OTHER_ARCH not in cells and BASE_ARCH not in cells:
            continue
        pair = [(cells.get(a), _why_not(cells.get(a), a, component)) for a in (OTHER_ARCH, BASE_ARCH)]
        if any(reason for _cell, reason in pair):
            # a component never benchmarked anywhere (e.g. a connector) is not worth a sentence,
            # nor is a cell that did not run (missing, not checked, not started): its row says why
            if any(c.bench is not None for c in cells.values()) or any(c.emulated for c in cells.values()):
                absent.extend(reason for cell, reason in pair if reason and cell is not None and _ran(cell))
            continue
        arm, amd = cells[OTHER_ARCH], cells[BASE_ARCH]
        arm_host, amd_host = hosts.get(arm.host), hosts.get(amd.host)
        arm_price = arm_host.price_per_hour if arm_host else None
        amd_price = amd_host.price_per_hour if amd_host else None
        if arm_price is None or amd_price is None:
            absent.append(
                f"{component}: no price_per_hour for host "
                f"{arm.host if arm_price is None else amd.host}, so no tps per USD"
            )
        arm_series, amd_series = _series(arm), _series(amd)
        keys = sorted(set(arm_series) & set(amd_series))
        groups: dict[tuple[str, str], list[CompareRow]] = {}
        for workload, access, threads in keys:
            a, b = arm_series[(workload, access, threads)], amd_series[(workload, access, threads)]
            arm_usd = tps_per_usd_hour(a.median_tps, arm_price)
            amd_usd = tps_per_usd_hour(b.median_tps, amd_price)
            groups.setdefault((workload, access), []).append(
                CompareRow(
                    threads=threads,
                    arm64_tps=a.median_tps,
                    amd64_tps=b.median_tps,
                    arm64_scaled_tps=frequency_scaled(
                        a.median_tps, arm_host.cpu_ghz if arm_host else None, amd_host.cpu_ghz if amd_host else None
                    ),
                    tps_percent=percent(a.median_tps, b.median_tps),
                    arm64_per_usd=arm_usd,
                    amd64_per_usd=amd_usd,
                    per_usd_percent=percent(arm_usd, amd_usd) if arm_usd is not None and amd_usd else None,
                )
            )
        if not groups:
            absent.append(f"{component}: the two arches share no successful benchmark point")
        target = arm.bench.target if arm.bench else "server"
        for (workload, access), rows in groups.items():
            tables.append(CompareTable(component, workload, access, target, arm.host, amd.host, tuple(rows)))
    return Comparison(tuple(tables), tuple(absent))


@dataclass(frozen=True)
class OverheadRow:
    threads: int
    direct_tps: float  # the backend's own server cell
    through_tps: float  # the proxy cell, same backend image and arch
    percent: float | None  # through vs direct (negative: the proxy costs that much)


@dataclass(frozen=True)
class OverheadTable:
    component: str  # the proxy
    arch: str
    backend: str  # the server component measured directly
    workload: str
    access: str
    rows: tuple[OverheadRow, ...]


def proxy_overhead(report: Report) -> tuple[OverheadTable, ...]:
    """What a proxy costs per arch: its cell's bench ("through <proxy>") against the server
    cell that ran the same backend image (digest) on the same arch. Emulated cells never
    count, as everywhere in the cost model."""
    direct: dict[tuple[str, str], CellResult] = {}
    for cell in report.cells.values():
        bench = cell.bench
        if bench is None or cell.emulated or bench.emulated or bench.target != "server":
            continue
        digest = bench.image_digests.get("server")
        if digest:
            direct[(digest, cell.arch)] = cell
    tables: list[OverheadTable] = []
    for cell in report.cells.values():
        bench = cell.bench
        if bench is None or cell.emulated or bench.emulated or not bench.target.startswith("through "):
            continue
        server = direct.get((bench.image_digests.get("backend", ""), cell.arch))
        if server is None:
            continue
        mine, theirs = _series(cell), _series(server)
        groups: dict[tuple[str, str], list[OverheadRow]] = {}
        for workload, access, threads in sorted(set(mine) & set(theirs)):
            through, base = mine[(workload, access, threads)].median_tps, theirs[(workload, access, threads)].median_tps
            groups.setdefault((workload, access), []).append(
                OverheadRow(threads, base, through, percent(through, base))
            )
        for (workload, access), rows in groups.items():
            tables.append(OverheadTable(cell.component, cell.arch, server.component, workload, access, tuple(rows)))
    return tuple(tables)
