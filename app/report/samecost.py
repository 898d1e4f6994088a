"""The same-cost view, as the CPM post puts it (pure): keep the cost constant, get more
arm64 resources. Per pair of hosts compared: each host's compute power (vCPU x GHz) and
price, how much less (or more) the arm64 host costs, and per component and workload what
each arch delivers for the budget of the amd64 host, from the measured tps: a projection
(linear in vCPUs, as the post's is) whenever the two prices differ.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from ecoready.domain.model import HostFacts, Report
from ecoready.report.cost import Comparison, compare, percent, price_in, table_unit
from ecoready.report.targets import instance_blockers


@dataclass(frozen=True)
class HostPower:
    host: str
    arch: str
    vcpus: int | None
    cpu_ghz: float | None
    compute_ghz: float | None  # vCPUs x GHz: "compute power"
    price: float | None  # USD per the view's unit
    instance: str = ""


@dataclass(frozen=True)
class BudgetLine:
    """One component and workload: the best median tps each arch measured (over its
    thread counts), and what arm64 gives for the amd64 host's budget."""

    component: str
    workload: str
    access: str
    arm64_tps: float
    amd64_tps: float
    arm64_tps_per_vcpu: float | None
    amd64_tps_per_vcpu: float | None
    arm64_at_budget: float | None  # arm64 tps scaled by the price ratio
    percent: float | None  # arm64_at_budget vs amd64_tps
    projected: bool  # the prices differ: arm64_at_budget assumes tps linear in vCPUs


@dataclass(frozen=True)
class SameCost:
    unit: str
    arm64: HostPower
    amd64: HostPower
    saving_percent: float | None  # how much less the arm64 host costs (negative: more)
    lines: tuple[BudgetLine, ...] = ()
    # programs that do not run on a host's instance (report/targets.py): that host is no choice
    arm64_cannot: tuple[str, ...] = ()
    amd64_cannot: tuple[str, ...] = ()

    @property
    def power_ratio(self) -> float | None:
        a, b = self.arm64.compute_ghz, self.amd64.compute_ghz
        return a / b if a and b else None


def host_power(host: HostFacts, unit: str) -> HostPower:
    ghz = host.cpu_ghz
    vcpus = host.vcpus
    power = vcpus * ghz if vcpus and ghz else None
    return HostPower(host.name, host.native_arch, vcpus, ghz, power, price_in(host, unit), host.instance)


def same_cost_hosts(arm: HostFacts, amd: HostFacts, unit: str | None = None) -> SameCost:
    """The two hosts side by side, without numbers of a run."""
    unit = unit or table_unit(arm, amd)
    a, b = host_power(arm, unit), host_power(amd, unit)
    saving = None
    if a.price is not None and b.price:
        ratio = percent(a.price, b.price)
        saving = -ratio if ratio is not None else None
    return SameCost(unit, a, b, saving)


def same_cost(report: Report, comparison: Comparison | None = None) -> tuple[SameCost, ...]:
    """One view per (arm64 host, amd64 host) pair of the comparison, with a line per table."""
    comparison = comparison or compare(report)
    hosts: Mapping[str, HostFacts] = {h.name: h for h in report.hosts}
    views: dict[tuple[str, str], SameCost] = {}
    lines: dict[tuple[str, str], list[BudgetLine]] = {}
    for table in comparison.tables:
        arm, amd = hosts.get(table.arm64_host), hosts.get(table.amd64_host)
        if arm is None or amd is None or not table.rows:
            continue
        key = (arm.name, amd.name)
        if key not in views:
            views[key] = same_cost_hosts(arm, amd, table.unit)
            lines[key] = []
        view = views[key]
        if blocked(report, arm, table.component) or blocked(report, amd, table.component):
            continue  # an instance the images cannot run on is never offered for its numbers
        arm_tps = max(r.arm64_tps for r in table.rows)
        amd_tps = max(r.amd64_tps for r in table.rows)
        a_price, b_price = view.arm64.price, view.amd64.price
        at_budget = arm_tps * b_price / a_price if a_price and b_price else None
        projected = bool(a_price and b_price and abs(a_price - b_price) > 1e-9 * b_price)
        lines[key].append(
            BudgetLine(
                component=table.component,
                workload=table.workload,
                access=table.access,
                arm64_tps=arm_tps,
                amd64_tps=amd_tps,
                arm64_tps_per_vcpu=arm_tps / view.arm64.vcpus if view.arm64.vcpus else None,
                amd64_tps_per_vcpu=amd_tps / view.amd64.vcpus if view.amd64.vcpus else None,
                arm64_at_budget=at_budget,
                percent=percent(at_budget, amd_tps) if at_budget is not None else None,
                projected=projected,
            )
        )
    return tuple(
        SameCost(
            v.unit,
            v.arm64,
            v.amd64,
            v.saving_percent,
            tuple(lines[k]),
            tuple(blocked(report, hosts[k[0]])),
            tuple(blocked(report, hosts[k[1]])),
        )
        for k, v in views.items()
    )


def blocked(report: Report, host: HostFacts, component: str = "") -> list[str]:
    return instance_blockers(report, host.name, host.instance, component)


def _money(value: float) -> str:
    return f"{value:,.0f}" if value >= 100 else f"{value:,.2f}" if value >= 1 else f"{value:.4f}"


def _about(a: float, b: float) -> str:
    """`about 3,500`: the two prices' mean to two significant digits."""
    mean = (a + b) / 2
    digits = len(str(int(mean))) - 2
    return f"{round(mean, -digits) if digits > 0 else mean:,.0f}" if mean >= 100 else _money(mean)


def _host(p: HostPower) -> str:
    what = f"{p.vcpus} vCPU" if p.vcpus else "? vCPU"
    if p.cpu_ghz:
        what += f" at {p.cpu_ghz:g} GHz"
    named = f" ({p.instance})" if p.instance else ""
    return f"{p.arch} host {p.host}{named}: {what}"


def headline(view: SameCost) -> str:
    """The CPM post's sentence: for about X USD a year, N vCPU of amd64 or M of arm64, and
    the compute power of each."""
    a, b = view.arm64, view.amd64
    parts = []
    if a.price is not None and b.price is not None:
        parts.append(f"For about {_about(a.price, b.price)} USD per {view.unit}:")
    parts.append(f"{_host(b)}" + (f" for {_money(b.price)} USD" if b.price is not None else ""))
    parts.append(f"vs {_host(a)}" + (f" for {_money(a.price)} USD" if a.price is not None else "") + ".")
    text = " ".join(parts)
    if a.compute_ghz and b.compute_ghz and a.vcpus and b.vcpus:
        text += (
            f" {a.vcpus / b.vcpus:.1f}x the vCPUs, {a.compute_ghz / b.compute_ghz:.1f}x the compute power "
            f"({b.compute_ghz:g} vs {a.compute_ghz:g} GHz)."
        )
    else:
        clockless = [p for p in (b, a) if p.instance and p.vcpus and not p.cpu_ghz]
        if clockless:
            text += "".join(
                f" Compute power: give host {p.host} its cpu_ghz"
                f" ({p.instance}'s provider publishes no sustained clock)."
                for p in clockless
            )
        else:
            text += " Compute power: give each host its vcpus and cpu_ghz (or an instance)."
    cannot = [(p, why) for p, why in ((b, view.amd64_cannot), (a, view.arm64_cannot)) if why]
    for power, why in cannot:
        text += f" Not a choice: {power.instance} cannot run {', '.join(why)}."
    if view.saving_percent is not None and not cannot:
        s = view.saving_percent
        text += f" The arm64 host costs {abs(s):.0f}% {'less' if s >= 0 else 'more'}."
    return text


def line_text(view: SameCost, line: BudgetLine) -> str:
    what = f"{line.component} {line.workload} {line.access}"
    best = f"best measured: arm64 {line.arm64_tps:,.0f} tps, amd64 {line.amd64_tps:,.0f} tps"
    if line.arm64_tps_per_vcpu is not None and line.amd64_tps_per_vcpu is not None:
        best += f" ({line.arm64_tps_per_vcpu:,.0f} vs {line.amd64_tps_per_vcpu:,.0f} tps per vCPU)"
    if line.arm64_at_budget is None or line.percent is None or view.amd64.price is None:
        return f"{what}: {best}; for the same budget: not measured (a price is missing)"
    budget = f"for the amd64 host's {_money(view.amd64.price)} USD per {view.unit}"
    said = f"arm64 delivers {line.arm64_at_budget:,.0f} tps vs amd64's {line.amd64_tps:,.0f} ({line.percent:+.0f}%)"
    mark = " [projection: linear in vCPUs]" if line.projected else ""
    return f"{what}: {budget}, {said}{mark}; {best}"
