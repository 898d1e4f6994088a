"""Recorded event streams for the TUI tests, snapshots and `bench/tui_events.py`.

The events have the shape and order the runner emits for a real lab run (CellStarted,
then per stage StageStarted ... StageFinished with ImageResolved, CheckReported and
BenchReported in between, CellLog, CellFinished), cells interleaved as concurrent cells
are. Values are fixed (no clock), so snapshots are deterministic.
"""

from __future__ import annotations

import asyncio
import hashlib
import random
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

from ecoready.domain.blame import Blame, Cause
from ecoready.domain.events import (
    BenchReported,
    CellFinished,
    CellLog,
    CellPlanned,
    CellStarted,
    CheckReported,
    Event,
    ImageResolved,
    RunFinished,
    RunStarted,
    StageFinished,
    StageStarted,
)
from ecoready.domain.images import ImageInfo
from ecoready.domain.model import BenchResult, BenchRun, BenchSeries, Check, HostFacts, Outcome, Profile, Stage
from ecoready.matrix.document import Matrix
from ecoready.matrix.load import parse
from ecoready.run.session import RunOptions

AT = "2026-01-01T00:00:00.000Z"
LAB_HOST = HostFacts(
    name="local",
    native_arch="amd64",
    emulated_arches=("arm64",),
    emulators={"arm64": "qemu-aarch64 version 10.0.2"},
    docker_version="20.10.24",
    api_version="1.41",
    cpus=2,
)
XEON = HostFacts("xeon", "amd64", docker_version="27.3.1", cpus=16, price_per_hour=0.768, cpu_ghz=3.5)
GRAVITON = HostFacts("graviton", "arm64", docker_version="27.3.1", cpus=16, price_per_hour=0.616, cpu_ghz=2.6)


EXPECTED_S = 8.0  # a cell's expected seconds natively (plan/schedule.py's default kind)


@dataclass(frozen=True)
class CellSpec:
    component: str
    category: str
    arch: str
    host: str
    emulated: bool
    outcome: str  # ready | partial | broken | missing | timeout | error | running
    seconds: float = 4.0
    bench: Sequence[tuple[int, float]] = ()  # (threads, tps) of oltp_read_write uniform

    @property
    def id(self) -> str:
        return f"{self.component}/{self.arch}"


def _digest(seed: str) -> str:
    return "sha256:" + hashlib.sha256(seed.encode()).hexdigest()


def _bench(spec: CellSpec) -> BenchResult:
    series = []
    for threads, tps in spec.bench:
        run = BenchRun("oltp_read_write", "uniform", threads, 1, tps, tps * 20, 12.5 / threads + 3, 0, 0, 10.0)
        series.append(BenchSeries("oltp_read_write", "uniform", threads, (run,), tps, tps * 20, run.p95_ms, 0.01, ()))
    return BenchResult(
        tool="sysbench 1.0.20",
        zipfian="",
        target="server",
        emulated=spec.emulated,
        profile="quick",
        cpus=16,
        series=tuple(series),
    )


def cell_events(spec: CellSpec) -> list[Event]:
    """The events of one cell, in the runner's order."""
    cid = spec.id
    image = f"127.0.0.1:5000/lab/{spec.component}:1"
    out: list[Event] = [CellStarted(cid, AT), StageStarted(cid, Stage.IMAGE)]
    if spec.outcome == "missing":
        detail = "the index publishes amd64"
        return [
            *out,
            StageFinished(cid, Stage.IMAGE, Outcome.FAIL, 0.02, detail, Blame(Cause.NOT_PUBLISHED)),
            CellFinished(cid, AT, 0.1),
        ]
    if spec.outcome == "error":
        blame = Blame(Cause.REGISTRY, "127.0.0.1:5000")
        detail = "unreachable (connection refused)"
        return [*out, StageFinished(cid, Stage.IMAGE, Outcome.ERROR, 0.01, detail, blame), CellFinished(cid, AT, 0.1)]
    info = ImageInfo(image, spec.arch, _digest(cid), _digest(image), 98_000_000, "index", _digest("id" + cid))
    out += [
        ImageResolved(cid, info),
        StageFinished(cid, Stage.IMAGE, Outcome.PASS, 0.4, f"index {info.digest[:19]}"),
        StageStarted(cid, Stage.START),
    ]
    if spec.outcome == "running":
        return out
    log = CellLog(cid, ("2026-01-01 0:00:00 0 [Note] mariadbd: ready for connections.", "[red]not markup[/red]"))
    if spec.outcome == "broken":
        detail = "exec format error (the binary is not for this CPU and no emulator ran it)"
        broke = StageFinished(cid, Stage.START, Outcome.FAIL, 0.3, detail, Blame(Cause.NOT_FOR_THIS_CPU))
        return [*out, broke, log, CellFinished(cid, AT, 1.0)]
    if spec.outcome == "timeout":
        detail = f"exceeded its {90 * (6 if spec.emulated else 1)} s budget (waiting for SELECT 1)"
        late = StageFinished(cid, Stage.START, Outcome.TIMEOUT, 90.0, detail, Blame(Cause.OVER_BUDGET))
        return [*out, late, log, CellFinished(cid, AT, 91.0)]
    out += [StageFinished(cid, Stage.START, Outcome.PASS, spec.seconds * 0.7, "ready in 2.8 s")]
    out.append(StageStarted(cid, Stage.SMOKE))
    checks = [("crud", Outcome.PASS, ""), ("charset utf8mb4", Outcome.PASS, ""), ("innodb", Outcome.PASS, "")]
    if spec.outcome == "partial":
        checks[1] = ("charset utf8mb4", Outcome.FAIL, "character_set_server is latin1")
    out += [CheckReported(cid, Stage.SMOKE, Check(name, outcome, detail, 0.05)) for name, outcome, detail in checks]
    failed = [name for name, outcome, _ in checks if outcome is Outcome.FAIL]
    if failed:
        names = ", ".join(failed)
        out.append(
            StageFinished(cid, Stage.SMOKE, Outcome.FAIL, 0.2, f"failed: {names}", Blame(Cause.CHECK_FAILED, names))
        )
    else:
        out.append(StageFinished(cid, Stage.SMOKE, Outcome.PASS, 0.2))
    if spec.bench:
        out += [
            StageStarted(cid, Stage.BENCH),
            BenchReported(cid, _bench(spec)),
            StageFinished(cid, Stage.BENCH, Outcome.PASS, 60.0, ""),
        ]
    return [*out, log, CellFinished(cid, AT, spec.seconds)]


def run_started(specs: Sequence[CellSpec], hosts: Sequence[HostFacts], arches: Sequence[str]) -> RunStarted:
    cells = tuple(
        CellPlanned(
            s.id,
            s.component,
            s.component.replace("-", " "),
            s.category,
            s.arch,
            s.host,
            s.emulated,
            expected_s=EXPECTED_S * (3.0 if s.emulated else 1.0),  # as the runner plans them (schedule.py)
        )
        for s in specs
    )
    return RunStarted("0123456789abcdef" * 2, AT, "recorded.toml", Profile.QUICK, tuple(arches), cells, tuple(hosts))


def interleave(per_cell: Sequence[list[Event]], concurrency: int) -> list[Event]:
    """Merge cells' events as a runner with `concurrency` slots emits them."""
    out: list[Event] = []
    waiting = list(per_cell)
    active: list[list[Event]] = []
    while waiting or active:
        while waiting and len(active) < concurrency:
            active.append(list(waiting.pop(0)))
        for events in list(active):
            out.append(events.pop(0))
            if not events:
                active.remove(events)
    return out


def stream(
    specs: Sequence[CellSpec], hosts: Sequence[HostFacts], arches: Sequence[str], concurrency: int = 4
) -> list[Event]:
    body = interleave([cell_events(s) for s in specs], concurrency)
    done = all(s.outcome != "running" for s in specs)
    return [run_started(specs, hosts, arches), *body, *([RunFinished(AT)] if done else [])]


def lab_like() -> list[Event]:
    """A small lab run: one amd64 host emulating arm64, every status once."""
    rows = [
        ("mariadb-10.11", "server", "ready", "ready"),
        ("mariadb-11.8", "server", "ready", "partial"),
        ("proxysql-2.7", "load-balancer", "ready", "missing"),
        ("galera-3node", "ha", "ready", "timeout"),
        ("mariadb-backup", "backup", "ready", "broken"),
        ("connector-python", "connector", "error", "running"),
    ]
    specs = []
    for component, category, amd, arm in rows:
        specs.append(CellSpec(component, category, "amd64", "local", False, amd, 4.1))
        specs.append(CellSpec(component, category, "arm64", "local", True, arm, 12.9))
    return stream(specs, [LAB_HOST], ("amd64", "arm64"))


def two_native_hosts() -> list[Event]:
    """Two native hosts with prices and a benchmark, so the compare column has numbers."""
    points_x86 = [(1, 310.0), (8, 2210.0), (32, 4120.0)]
    points_arm = [(1, 265.0), (8, 2105.0), (32, 4460.0)]
    specs = [
        CellSpec("mariadb-10.11", "server", "amd64", "xeon", False, "ready", 64.2, points_x86),
        CellSpec("mariadb-10.11", "server", "arm64", "graviton", False, "ready", 66.0, points_arm),
        CellSpec("mysql-8.4", "server", "amd64", "xeon", False, "ready", 61.0, [(1, 290.0), (8, 2050.0)]),
        CellSpec("mysql-8.4", "server", "arm64", "graviton", False, "ready", 63.5, [(1, 240.0), (8, 1990.0)]),
        CellSpec("proxysql-2.7", "load-balancer", "amd64", "xeon", False, "ready", 5.2),
        CellSpec("proxysql-2.7", "load-balancer", "arm64", "graviton", False, "partial", 5.9),
        CellSpec("pmm-server", "monitoring", "amd64", "xeon", False, "ready", 20.4),
        CellSpec("pmm-server", "monitoring", "arm64", "graviton", False, "missing"),
        CellSpec("xtrabackup-8.0", "backup", "amd64", "xeon", False, "ready", 9.1),
        CellSpec("xtrabackup-8.0", "backup", "arm64", "graviton", False, "broken"),
    ]
    return stream(specs, [XEON, GRAVITON], ("amd64", "arm64"))


ARCHES_4 = ("amd64", "arm64", "ppc64le", "s390x")
CATEGORIES = ("server", "load-balancer", "monitoring", "ha", "backup", "connector", "shell", "toolkit")


def big_matrix(components: int = 60, arches: Sequence[str] = ARCHES_4, seed: int = 7) -> list[Event]:
    """components x arches cells on one amd64 host emulating the rest, mixed outcomes."""
    rng = random.Random(seed)
    host = HostFacts(
        "local", "amd64", tuple(a for a in arches if a != "amd64"), {a: "qemu 10.0.2" for a in arches}, cpus=8
    )
    outcomes = ["ready"] * 12 + ["partial", "broken", "missing", "missing", "timeout", "error"]
    specs = [
        CellSpec(
            f"component-{i:02d}",
            CATEGORIES[i % len(CATEGORIES)],
            arch,
            "local",
            arch != "amd64",
            rng.choice(outcomes),
            round(rng.uniform(2, 40), 1),
        )
        for i in range(components)
        for arch in arches
    ]
    return stream(specs, [host], arches, concurrency=8)


MATRIX_TEXT = """
title = "recorded run"
arches = ["amd64", "arm64"]
[[components]]
id = "recorded"
category = "server"
probe = "server"
image = "127.0.0.1:5000/lab/mariadb:10.11"
"""


def recorded_matrix() -> Matrix:
    return parse(MATRIX_TEXT, "recorded.toml")


@dataclass
class ReplaySession:
    """A session that plays recorded events instead of running containers."""

    events: Sequence[Event]
    emit: Callable[[Event], None]
    yield_every: int = 1
    run_id: str = "0123456789abcdef" * 2
    closed: bool = False
    reruns: list[list[str]] = field(default_factory=list)
    gate: asyncio.Event | None = None  # when set up, re-runs wait for it (cells queue meanwhile)

    async def open(self) -> None:
        return None

    async def run(self) -> None:
        for i, event in enumerate(self.events):
            self.emit(event)
            if self.yield_every and i % self.yield_every == 0:
                await asyncio.sleep(0)  # the runner yields to the loop between events too

    async def rerun(self, cell_ids: Iterable[str]) -> None:
        ids = list(cell_ids)
        self.reruns.append(ids)
        if self.gate is not None:
            await self.gate.wait()
        for event in self.events:
            if getattr(event, "cell_id", None) in ids:
                self.emit(event)
                await asyncio.sleep(0)

    async def close(self) -> None:
        self.closed = True


def replay(
    events: Sequence[Event], yield_every: int = 1
) -> Callable[[Matrix, RunOptions, Callable[[Event], None]], ReplaySession]:
    def factory(matrix: Matrix, options: RunOptions, emit: Callable[[Event], None]) -> ReplaySession:
        return ReplaySession(events, emit, yield_every)

    return factory
