"""matrix -> the cells to run: which host serves each arch, natively or emulated, with
what backend and what time budgets. Pure: host facts are gathered before planning.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from ecoready.domain.blame import Blame, Cause
from ecoready.domain.errors import EnvironmentProblem
from ecoready.domain.model import Component, HostFacts, Profile, Stage
from ecoready.engine.engine_kinds import BY_KEY, DOCKER_ENGINE, emulation_fix
from ecoready.matrix.bench_settings import DERIVE_S, BenchSettings, estimate_seconds, settings_for
from ecoready.matrix.document import Matrix
from ecoready.matrix.kinds import KINDS

# Emulated cells cost several times the CPU and wall time of native ones (qemu-user:
# 4x for server start-up here, 11x for sysbench); budgets scale by this factor.
EMULATION_FACTOR = 6.0

# Native budgets in seconds per stage, by probe kind; "default" for the rest. The bench
# stage's budget comes from its settings instead (`bench_budget`).
DEFAULT_BUDGETS: Mapping[str, Mapping[Stage, float]] = {
    "default": {Stage.IMAGE: 300.0, Stage.START: 90.0, Stage.SMOKE: 60.0, Stage.BENCH: 600.0},
    # three nodes started one after the other, state transfers, a node leaving and rejoining
    "galera": {Stage.IMAGE: 300.0, Stage.START: 150.0, Stage.SMOKE: 120.0, Stage.BENCH: 600.0},
    # PXC also makes certificates first; its state transfers run XtraBackup.
    "pxc": {Stage.IMAGE: 300.0, Stage.START: 240.0, Stage.SMOKE: 180.0, Stage.BENCH: 600.0},
    # three members joining one after the other, then a failover in smoke
    "group-replication": {Stage.IMAGE: 300.0, Stage.START: 180.0, Stage.SMOKE: 120.0, Stage.BENCH: 600.0},
    # backup, prepare, copy-back and a restored server starting, all in smoke
    "mariabackup": {Stage.IMAGE: 300.0, Stage.START: 90.0, Stage.SMOKE: 150.0, Stage.BENCH: 600.0},
    "xtrabackup": {Stage.IMAGE: 300.0, Stage.START: 120.0, Stage.SMOKE: 180.0, Stage.BENCH: 600.0},
    "toolkit": {Stage.IMAGE: 300.0, Stage.START: 90.0, Stage.SMOKE: 120.0, Stage.BENCH: 600.0},
    # gh-ost's build is the install (INSTALL_BUDGET); smoke: one online migration
    "ghost": {Stage.IMAGE: 300.0, Stage.START: 90.0, Stage.SMOKE: 120.0, Stage.BENCH: 600.0},
    # A proxy starts its backend first; its smoke waits for a few monitor rounds.
    "proxysql": {Stage.IMAGE: 300.0, Stage.START: 150.0, Stage.SMOKE: 120.0, Stage.BENCH: 600.0},
    "maxscale": {Stage.IMAGE: 300.0, Stage.START: 150.0, Stage.SMOKE: 90.0, Stage.BENCH: 600.0},
    "router": {Stage.IMAGE: 300.0, Stage.START: 150.0, Stage.SMOKE: 90.0, Stage.BENCH: 600.0},
    # PMM server runs several databases of its own; the client registration starts the backend.
    "pmm": {Stage.IMAGE: 600.0, Stage.START: 300.0, Stage.SMOKE: 240.0, Stage.BENCH: 600.0},
    "shell": {Stage.IMAGE: 300.0, Stage.START: 150.0, Stage.SMOKE: 90.0, Stage.BENCH: 600.0},
    # the user's image: its backend, then a service that may take a while to be healthy;
    # the smoke budget grows with the command's own `limit` (SMOKE_LIMIT_MARGIN)
    "command": {Stage.IMAGE: 300.0, Stage.START: 120.0, Stage.SMOKE: 90.0, Stage.BENCH: 600.0},
}
# Driver rows: asking the package registry (network-bound, not scaled for emulation), and
# the installing (a source build, a Maven or Go download and build) added to the start stage.
PACKAGING_BUDGET = 120.0
INSTALL_BUDGET = 900.0  # holds the longest install limit (gh-ost's build, probes/ghost.py) and its placing
# The build audit reads files of an image already on the host and parses them here: its
# budget is not scaled under emulation (nothing runs emulated).
AUDIT_BUDGET_S = 120.0
# Seconds of smoke budget over a kind's own smoke time limit (reading the output, checks).
SMOKE_LIMIT_MARGIN = 30.0
# Margin over the bench estimate: a loaded machine, a slow prepare.
BENCH_MARGIN = 1.5
BENCH_SLACK_S = 60.0


@dataclass(frozen=True)
class Budgets:
    seconds: Mapping[Stage, float]

    def __getitem__(self, stage: Stage) -> float:
        return self.seconds[stage]

    @property
    def total(self) -> float:
        return sum(self.seconds.values())


@dataclass(frozen=True)
class Unrunnable:
    """Why a cell cannot run at all: the stage detail it ends with, and who is blamed."""

    detail: str
    blame: Blame


@dataclass(frozen=True)
class CellPlan:
    id: str
    component: Component
    arch: str
    host: str
    emulated: bool
    budgets: Budgets
    backend: Component | None = None
    stages: tuple[Stage, ...] = (Stage.IMAGE, Stage.START, Stage.SMOKE)
    # Why the cell cannot run at all (no host for its arch, its host down); it ends as `error`.
    unrunnable: Unrunnable | None = None
    bench: BenchSettings | None = None  # what the bench stage runs (None: no bench stage)
    # Stages that must not share the host's CPUs with any other work (every bench, in every
    # profile): the runner runs them alone on their host (every slot held, the bench gate).
    exclusive: frozenset[Stage] = frozenset()


@dataclass(frozen=True)
class Plan:
    matrix: Matrix
    profile: Profile
    arches: tuple[str, ...]
    cells: tuple[CellPlan, ...]
    hosts: tuple[HostFacts, ...] = ()
    notes: tuple[str, ...] = field(default_factory=tuple)


def bench_budget(settings: BenchSettings, emulated: bool) -> float:
    """Seconds for a bench stage: its estimate (measured time is wall-clock time even under
    emulation; set-up and prepare scale with the emulator) with a margin."""
    factor = EMULATION_FACTOR if emulated else 1.0
    derive = 0.0 if settings.image else DERIVE_S * factor  # a first run derives sysbench (then cached)
    return estimate_seconds(settings, factor) * BENCH_MARGIN + BENCH_SLACK_S + derive


def installs(component: Component) -> bool:
    """A driver row: its probe installs a package from its registry (packaging stage)."""
    option = KINDS[component.probe].installs
    return option is not None and bool(component.options.get(option))


def budgets_for(component: Component, emulated: bool, bench: BenchSettings | None = None) -> Budgets:
    base = dict(DEFAULT_BUDGETS.get(component.probe, DEFAULT_BUDGETS["default"]))
    if component.timeout_s is not None:
        base[Stage.START] = component.timeout_s
    if installs(component):
        base[Stage.PACKAGING] = PACKAGING_BUDGET
        if component.timeout_s is None:  # a row's own `timeout` is its whole start budget
            base[Stage.START] += INSTALL_BUDGET
    limit = component.options.get(KINDS[component.probe].smoke_limit) if component.probe in KINDS else None
    if isinstance(limit, (int, float)) and not isinstance(limit, bool):
        base[Stage.SMOKE] = max(base[Stage.SMOKE], float(limit) + SMOKE_LIMIT_MARGIN)
    factor = EMULATION_FACTOR if emulated else 1.0
    unscaled = (Stage.IMAGE, Stage.PACKAGING)  # network-bound
    scaled = {stage: seconds * (factor if stage not in unscaled else 1.0) for stage, seconds in base.items()}
    scaled[Stage.AUDIT] = AUDIT_BUDGET_S
    if bench is not None:
        scaled[Stage.BENCH] = bench_budget(bench, emulated)
    return Budgets(scaled)


def _choose_host(arch: str, hosts: Sequence[HostFacts]) -> tuple[HostFacts | None, bool, Unrunnable | None]:
    """(host, emulated, why-not): a reachable host native for the arch first; then one that
    could not be reached but lists the arch (its cells end as `error` naming why: a native
    host that is down is not silently replaced by emulation); then one that emulates it."""
    for facts in hosts:
        if not facts.error and facts.native_arch == arch and arch in facts.arches:
            return facts, False, None
    for facts in hosts:
        if facts.error and arch in facts.arches:
            unreachable = Unrunnable(f"host {facts.name}: {facts.error}", Blame(Cause.ENGINE_UNREACHABLE, facts.name))
            return facts, facts.native_arch != arch, unreachable
    for facts in hosts:
        if not facts.error and arch in facts.arches:
            return facts, True, None
    natives = ", ".join(sorted({a for h in hosts if not h.error for a in h.arches})) or "none"
    down = "".join(f"; host {h.name}: {h.error}" for h in hosts if h.error)
    fix = emulation_fix(arch, [BY_KEY.get(h.engine_kind, DOCKER_ENGINE) for h in hosts if not h.error])
    return (
        None,
        False,
        Unrunnable(f"no host for {arch} (hosts serve: {natives}{down})", Blame(Cause.NO_HOST, arch, fix)),
    )


def refuse_unserved(asked: Iterable[str], hosts: Sequence[HostFacts]) -> None:
    """Arches asked for by name (`--arch`) that no engine serves, natively or emulated, nor
    lists (a listed host that is down gets its cells as `error`, naming it): the run is
    refused before it starts (exit 3), saying what would serve them on the user's engines.
    An arch of the matrix not asked by name instead ends its cells as `error` with the fix
    (`_choose_host`)."""
    known = {arch for h in hosts for arch in h.arches}
    lacking = [arch for arch in asked if arch not in known]
    if lacking:
        kinds = [BY_KEY.get(h.engine_kind, DOCKER_ENGINE) for h in hosts if not h.error]
        said = (f"no engine serves {arch}: {emulation_fix(arch, kinds)}" for arch in lacking)
        raise EnvironmentProblem("; ".join(said))


def make_plan(
    matrix: Matrix,
    hosts: Sequence[HostFacts],
    *,
    only: Iterable[str] | None = None,
    arches: Iterable[str] | None = None,
    profile: Profile | None = None,
) -> Plan:
    """Cells in matrix order (components x arches), each bound to a host."""
    wanted_ids = set(only) if only else None
    wanted_arches = tuple(arches) if arches else matrix.arches
    chosen = profile or matrix.profile
    cells: list[CellPlan] = []
    for component in matrix.components:
        if wanted_ids is not None and component.id not in wanted_ids:
            continue
        backend = matrix.component(component.backend) if component.backend else None
        comp_arches = component.arches or matrix.arches
        for arch in wanted_arches:
            if arch not in comp_arches:
                continue
            host, emulated, reason = _choose_host(arch, hosts)
            bench = (
                settings_for(chosen, matrix.sysbench, emulated=emulated)
                if KINDS[component.probe].benchmarks and component.bench
                else None
            )
            stages = (
                *((Stage.PACKAGING,) if installs(component) else ()),
                Stage.IMAGE,
                *((Stage.AUDIT,) if KINDS[component.probe].programs else ()),
                Stage.START,
                Stage.SMOKE,
                *((Stage.BENCH,) if bench is not None else ()),
            )
            cells.append(
                CellPlan(
                    id=f"{component.id}/{arch}",
                    component=component,
                    arch=arch,
                    host=host.name if host else "",
                    emulated=emulated,
                    budgets=budgets_for(component, emulated, bench),
                    backend=backend,
                    stages=stages,
                    unrunnable=reason,
                    bench=bench,
                    exclusive=frozenset({Stage.BENCH}) if bench is not None else frozenset(),
                )
            )
    return Plan(matrix=matrix, profile=chosen, arches=wanted_arches, cells=tuple(cells), hosts=tuple(hosts))
