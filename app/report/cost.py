"""Performance per dollar, as the #mysqlonarm posts computed it by hand (pure).

For each component benchmarked natively on both arches: tps per USD from each host's
price (per hour, month or year: the unit the user gave), the arm64-vs-amd64 percentage,
arm64's tps scaled to amd64's clock (`cpu_ghz`) and that against amd64, and qps beside
tps where qps is the figure people read (point select, read only); shaped like the seed
posts' tables: threads as rows. Emulated numbers never enter a comparison, nor do series
that did not run alone on their host; every cell left out gets a sentence saying why.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import date

from ecoready.domain.model import BenchSeries, CellResult, HostFacts, Report, Status
from ecoready.report.status_words import ran

BASE_ARCH = "amd64"
OTHER_ARCH = "arm64"
# hours in each price unit: a year of 365 days, a month of a twelfth of it
UNIT_HOURS: Mapping[str, float] = {"hour": 1.0, "month": 730.0, "year": 8760.0}
# workloads whose published tables are in qps: their tables show qps beside tps
QPS_WORKLOADS = frozenset({"oltp_point_select", "oltp_read_only"})
STALE_AFTER_DAYS = 183  # a price file entry older than about 6 months is said to be so


def price_given(host: HostFacts | None) -> tuple[float, str] | None:
    """(USD, unit) of a host as [[hosts]] (or the price file) gave it; None without a price."""
    if host is None:
        return None
    for unit, value in (("hour", host.price_per_hour), ("month", host.price_per_month), ("year", host.price_per_year)):
        if value is not None:
            return value, unit
    return None


def price_in(host: HostFacts | None, unit: str) -> float | None:
    """A host's price converted to USD per `unit` (None without a price)."""
    given = price_given(host)
    if given is None:
        return None
    value, own = given
    return value / UNIT_HOURS[own] * UNIT_HOURS[unit]


def table_unit(arm: HostFacts | None, amd: HostFacts | None) -> str:
    """The price unit of a table: the one both hosts were priced in, else hour."""
    units = {g[1] for g in (price_given(arm), price_given(amd)) if g is not None}
    return units.pop() if len(units) == 1 else "hour"


def tps_per_usd(tps: float, price: float | None) -> float | None:
    """Transactions per second bought by one USD per unit of time (None without a price)."""
    if price is None or price <= 0:
        return None
    return tps / price


tps_per_usd_hour = tps_per_usd  # the name of the hourly-only days


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


def stale(price_date: str, on: str) -> bool:
    """Whether a price read on `price_date` is older than about 6 months on `on` (ISO dates
    or timestamps); False when either cannot be read."""
    try:
        then, now = date.fromisoformat(price_date[:10]), date.fromisoformat(on[:10])
    except ValueError:
        return False
    return (now - then).days > STALE_AFTER_DAYS


def price_notes(report: Report) -> list[str]:
    """Where each priced host's numbers came from: the price file's instance, its page and
    date (and whether it is older than 6 months), or [[hosts]]."""
    notes = []
    for host in report.hosts:
        given = price_given(host)
        if given is None:
            continue
        value, unit = given
        price = f"{value:,.4g} USD per {unit}"
        if host.instance and host.price_source:
            old = (
                " (older than 6 months: check the provider's page)" if stale(host.price_date, report.started_at) else ""
            )
            notes.append(
                f"host {host.name}: {host.instance}, {price} on demand, from ecoready's price file "
                f"({host.price_source}, dated {host.price_date}){old}"
            )
        else:
            named = f" ({host.instance})" if host.instance else ""
            notes.append(f"host {host.name}{named}: {price}, from [[hosts]]")
    return notes


@dataclass(frozen=True)
class CompareRow:
    threads: int
    arm64_tps: float
    amd64_tps: float
    arm64_scaled_tps: float | None  # arm64 tps at amd64's clock
    tps_percent: float | None  # arm64 vs amd64, raw tps
    arm64_per_usd: float | None  # tps per USD in the table's unit
    amd64_per_usd: float | None
    per_usd_percent: float | None  # arm64 vs amd64, tps per USD
    scaled_percent: float | None = None  # arm64 at amd64's clock vs amd64
    arm64_qps: float | None = None  # where qps is the figure people read (QPS_WORKLOADS)
    amd64_qps: float | None = None
    arm64_scaled_qps: float | None = None


@dataclass(frozen=True)
class CompareColumn:
    """One column of the arm64-vs-amd64 table, as every view shows it (`{unit}`: the
    table's price unit)."""

    key: str  # in the JSON report
    title: str  # in the reports
    short: str  # in the TUI, where width is scarce
    value: Callable[[CompareRow], float | int | None]
    digits: int | None = 1  # None: a signed percentage; -1: none from 1,000 up, else one
    qps: bool = False  # only in tables of QPS_WORKLOADS

    def text(self, row: CompareRow, missing: str = "-") -> str:
        value = self.value(row)
        if value is None:
            return missing
        if isinstance(value, int):
            return str(value)
        if self.digits is None:
            return f"{value:+.1f}%"
        digits = self.digits if self.digits >= 0 else (0 if abs(value) >= 1000 else 1)
        return f"{value:,.{digits}f}"

    def heading(self, table: CompareTable) -> str:
        return self.title.format(unit=table.unit)

    def label(self, table: CompareTable) -> str:
        return self.short.format(unit=table.unit[0])


# The seed posts' table: threads as rows; raw tps, arm64 at amd64's clock and against
# amd64, qps where the posts read qps, tps per USD in the unit the hosts were priced in.
COMPARE_COLUMNS: tuple[CompareColumn, ...] = (
    CompareColumn("threads", "threads", "threads", lambda r: r.threads, 0),
    CompareColumn("arm64_tps", "arm64 tps", "arm64 tps", lambda r: r.arm64_tps),
    CompareColumn("amd64_tps", "amd64 tps", "amd64 tps", lambda r: r.amd64_tps),
    CompareColumn("tps_percent", "arm64 vs amd64", "arm vs amd", lambda r: r.tps_percent, None),
    CompareColumn("arm64_scaled_tps", "arm64 tps at amd64's clock", "arm64 @amd64 GHz", lambda r: r.arm64_scaled_tps),
    CompareColumn(
        "scaled_percent", "arm64 at amd64's clock vs amd64", "@GHz arm vs amd", lambda r: r.scaled_percent, None
    ),
    CompareColumn("arm64_qps", "arm64 qps", "arm64 qps", lambda r: r.arm64_qps, qps=True),
    CompareColumn("amd64_qps", "amd64 qps", "amd64 qps", lambda r: r.amd64_qps, qps=True),
    CompareColumn(
        "arm64_scaled_qps",
        "arm64 qps at amd64's clock",
        "arm64 qps @GHz",
        lambda r: r.arm64_scaled_qps,
        qps=True,
    ),
    CompareColumn("arm64_per_usd", "arm64 tps per USD-{unit}", "arm64 tps/${unit}", lambda r: r.arm64_per_usd, -1),
    CompareColumn("amd64_per_usd", "amd64 tps per USD-{unit}", "amd64 tps/${unit}", lambda r: r.amd64_per_usd, -1),
    CompareColumn("per_usd_percent", "arm64 vs amd64 per USD", "per $ arm vs amd", lambda r: r.per_usd_percent, None),
)


def columns_for(table: CompareTable) -> tuple[CompareColumn, ...]:
    """The columns of one table: every one, qps ones only where qps is read."""
    qps = table.workload in QPS_WORKLOADS
    return tuple(c for c in COMPARE_COLUMNS if qps or not c.qps)


def compare_heading(table: CompareTable) -> str:
    """`mariadb-10.11: oltp_read_only, uniform (server)`"""
    return f"{table.component}: {table.workload}, {table.access} ({table.target})"


def compare_hosts(table: CompareTable) -> str:
    said = (
        f"arm64 on host {table.arm64_host}, amd64 on host {table.amd64_host}; median tps; "
        f"prices per {table.unit}; each series measured alone on its host"
    )
    if table.unpinned:
        said += f"; on {', '.join(table.unpinned)} server and sysbench shared the CPUs (too few to pin apart)"
    return said


@dataclass(frozen=True)
class CompareTable:
    component: str
    workload: str
    access: str
    target: str  # "server" or "through <proxy>"
    arm64_host: str
    amd64_host: str
    rows: tuple[CompareRow, ...]
    unit: str = "hour"  # the price unit of the per-USD columns
    unpinned: tuple[str, ...] = ()  # hosts too small to keep server and sysbench on CPUs of their own


@dataclass(frozen=True)
class Comparison:
    tables: tuple[CompareTable, ...]
    absent: tuple[str, ...]  # one sentence per cell (or component) left out, and why


def _why_not(cell: CellResult | None, arch: str, component: str) -> str | None:
    if cell is None:
        return f"{component}/{arch}: not in this run"
    if not ran(cell):
        return f"{cell.id}: {cell.status.value}, it did not run"
    if cell.emulated or (cell.bench is not None and cell.bench.emulated):
        return f"{cell.id}: ran emulated, so its numbers are not performance"
    if cell.bench is None or not cell.bench.series:
        if cell.status is not Status.READY and cell.status is not Status.PARTIAL:
            return f"{cell.id}: {cell.status.value}, no benchmark"
        return f"{cell.id}: no benchmark (profile smoke, or not a benchmarked kind)"
    return None


def _ran(cell: CellResult) -> bool:
    unrun = (Status.PENDING, Status.RUNNING, Status.SKIPPED, Status.MISSING, Status.ERROR, Status.LOCKED)
    return cell.status not in unrun


def _series(cell: CellResult) -> dict[tuple[str, str, int], BenchSeries]:
    assert cell.bench is not None
    return {(s.workload, s.access, s.threads): s for s in cell.bench.series if all(r.ok for r in s.runs)}


def _crowded(cell: CellResult, series: Mapping[tuple[str, str, int], BenchSeries]) -> str | None:
    """Why a cell's series cannot be set against another host's ("not measured"), if so."""
    beside = sorted({name for s in series.values() for name in (s.shared_with or ())})
    if beside:
        return f"{cell.id}: not measured alone (beside {', '.join(beside)}): no ratio from it"
    if any(s.shared_with is None for s in series.values()):
        return f"{cell.id}: the report does not record what shared its host: not measured alone, no ratio from it"
    return None


def _row(
    threads: int, a: BenchSeries, b: BenchSeries, arm: HostFacts | None, amd: HostFacts | None, unit: str, qps: bool
) -> CompareRow:
    arm_usd = tps_per_usd(a.median_tps, price_in(arm, unit))
    amd_usd = tps_per_usd(b.median_tps, price_in(amd, unit))
    arm_ghz, amd_ghz = (arm.cpu_ghz if arm else None), (amd.cpu_ghz if amd else None)
    scaled = frequency_scaled(a.median_tps, arm_ghz, amd_ghz)
    return CompareRow(
        threads=threads,
        arm64_tps=a.median_tps,
        amd64_tps=b.median_tps,
        arm64_scaled_tps=scaled,
        tps_percent=percent(a.median_tps, b.median_tps),
        arm64_per_usd=arm_usd,
        amd64_per_usd=amd_usd,
        per_usd_percent=percent(arm_usd, amd_usd) if arm_usd is not None and amd_usd else None,
        scaled_percent=percent(scaled, b.median_tps) if scaled is not None else None,
        arm64_qps=a.median_qps if qps else None,
        amd64_qps=b.median_qps if qps else None,
        arm64_scaled_qps=frequency_scaled(a.median_qps, arm_ghz, amd_ghz) if qps else None,
    )


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
        arm_series, amd_series = _series(arm), _series(amd)
        crowded = [why for why in (_crowded(arm, arm_series), _crowded(amd, amd_series)) if why]
        if crowded:
            absent.extend(crowded)
            continue
        if price_given(arm_host) is None or price_given(amd_host) is None:
            absent.append(
                f"{component}: no price for host {arm.host if price_given(arm_host) is None else amd.host} "
                "(price_per_hour, price_per_month, price_per_year or instance), so no tps per USD"
            )
        unit = table_unit(arm_host, amd_host)
        keys = sorted(set(arm_series) & set(amd_series))
        groups: dict[tuple[str, str], list[CompareRow]] = {}
        for workload, access, threads in keys:
            a, b = arm_series[(workload, access, threads)], amd_series[(workload, access, threads)]
            row = _row(threads, a, b, arm_host, amd_host, unit, workload in QPS_WORKLOADS)
            groups.setdefault((workload, access), []).append(row)
        if not groups:
            absent.append(f"{component}: the two arches share no successful benchmark point")
        target = arm.bench.target if arm.bench else "server"
        unpinned = tuple(c.host for c in (arm, amd) if c.bench is not None and not c.bench.cpusets)
        for (workload, access), rows in groups.items():
            tables.append(
                CompareTable(component, workload, access, target, arm.host, amd.host, tuple(rows), unit, unpinned)
            )
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
        if bench is None or cell.emulated or bench.emulated or bench.target == "server":  # else "through <proxy>"
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
