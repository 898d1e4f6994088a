"""The time a run has left, from what the run has shown so far, never from budgets.

What is known, in the order it is trusted:
1. each stage's seconds in the finished cells of the same probe kind and the same side of
   emulation (native or emulated) on this run: a cell still to finish is expected to take
   their mean per stage;
2. else its twin (the row's cell on the other side of emulation), finished: its stages'
   seconds times how much slower emulated cells were than their native twins on this run
   (`EMULATED_SLOWDOWN` until a row has both);
3. else what the plan expected of it (`CellPlanned.expected_s`: the last run's seconds,
   else its kind's lab time) times the pace the finished cells kept against theirs.
A cell under way counts its stages still to come, the one running whole (`RUNNING_LEFT`).

The cells left on each host are then played through that host's weighted slots as the
scheduler runs them (the cells under way first, where they are; then the longest first, an
emulated cell weighing EMULATED_WEIGHT), so cells side by side count once, and the benches
are added one after the other (each runs alone on its host). Until a tenth of the cells
(at least `MIN_KNOWN`) have finished there is too little to go on: the estimate is None,
shown as "estimating".

Pure: the TUI's progress line, `bench/eta.py` and the tests call it with a report and the
plan's cells (`expected_of`).
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from ecoready.domain.events import CellPlanned
from ecoready.domain.model import CellResult, Report, Stage
from ecoready.plan.schedule import EMULATED_SLOWDOWN, EMULATED_WEIGHT, capacity

MIN_KNOWN = 3  # finished cells before any estimate
KNOWN_SHARE = 0.1  # and a tenth of the cells
PACE_RANGE = (0.25, 4.0)  # how far the pace seen may move the plan's expectation
# The share of its expected time a running stage is counted with. Not half: a stage seen
# running is more likely a long one (the long ones are the ones still running when looked
# at), and how long it has run is not known; on a lab run counting half ended 27% early at
# a quarter of the run (docs/performance.md).
RUNNING_LEFT = 1.0


@dataclass(frozen=True)
class Expected:
    """A cell as the run planned it."""

    seconds: float  # what the plan expects its stages but the bench to take (0: not known)
    bench_s: float  # its bench (0: none), run alone
    weight: int  # slot units it takes
    host: str
    kind: str = ""  # its probe kind
    component: str = ""  # its row
    emulated: bool = False


def expected_of(cells: Iterable[CellPlanned]) -> dict[str, Expected]:
    return {
        c.cell_id: Expected(
            c.expected_s, c.bench_s, EMULATED_WEIGHT if c.emulated else 1, c.host, c.probe, c.component, c.emulated
        )
        for c in cells
    }


Group = tuple[str, bool]  # (probe kind, emulated)


@dataclass
class Known:
    """What the finished cells showed: stage seconds by group and by cell, the pace against
    the plan and how much slower emulated twins were."""

    stages: dict[Group, dict[Stage, float]] = field(default_factory=dict)  # summed seconds
    count: dict[Group, int] = field(default_factory=dict)
    by_cell: dict[str, dict[Stage, float]] = field(default_factory=dict)
    pace: float = 1.0
    slowdown: float = EMULATED_SLOWDOWN

    def group_mean(self, group: Group) -> dict[Stage, float] | None:
        n = self.count.get(group, 0)
        return {stage: s / n for stage, s in self.stages[group].items()} if n else None


def stage_seconds(cell: CellResult) -> dict[Stage, float]:
    return {s.stage: s.seconds for s in cell.stages if s.outcome is not None}


def learn(report: Report, expected: Mapping[str, Expected], cells: Iterable[str]) -> Known:
    known = Known()
    took = want = 0.0
    for cid in cells:
        cell, plan = report.cells[cid], expected[cid]
        if not cell.status.finished or not cell.stages:
            continue
        seconds = stage_seconds(cell)
        known.by_cell[cid] = seconds
        group = (plan.kind, plan.emulated)
        summed = known.stages.setdefault(group, {})
        for stage, s in seconds.items():
            summed[stage] = summed.get(stage, 0.0) + s
        known.count[group] = known.count.get(group, 0) + 1
        if plan.seconds > 0:
            took, want = took + _work(seconds), want + plan.seconds
    if took > 0 and want > 0:
        low, high = PACE_RANGE
        known.pace = min(high, max(low, took / want))
    known.slowdown = _slowdown(known, expected)
    return known


def _slowdown(known: Known, expected: Mapping[str, Expected]) -> float:
    """Emulated over native seconds, summed over the rows whose two sides both ran."""
    native: dict[str, float] = {}
    emulated: dict[str, float] = {}
    for cid, seconds in known.by_cell.items():
        plan = expected[cid]
        if Stage.START in seconds:
            (emulated if plan.emulated else native)[plan.component] = _work(seconds)
    rows = set(native) & set(emulated)
    a, b = sum(emulated[r] for r in rows), sum(native[r] for r in rows)
    return a / b if rows and a > 0 and b > 0 else EMULATED_SLOWDOWN


def _work(seconds: Mapping[Stage, float]) -> float:
    return sum(s for stage, s in seconds.items() if stage is not Stage.BENCH)


def _twin(cid: str, plan: Expected, known: Known, expected: Mapping[str, Expected]) -> dict[Stage, float] | None:
    for other, seen in known.by_cell.items():
        twin = expected[other]
        if twin.component == plan.component and twin.emulated != plan.emulated and other != cid:
            factor = known.slowdown if plan.emulated else 1.0 / known.slowdown
            return {stage: s * factor for stage, s in seen.items()}
    return None


def predicted(cid: str, plan: Expected, known: Known, expected: Mapping[str, Expected]) -> dict[Stage, float]:
    """Seconds each stage of the cell is expected to take (the bench under Stage.BENCH)."""
    found = known.group_mean((plan.kind, plan.emulated)) or _twin(cid, plan, known, expected)
    if found is not None:
        return found
    return {Stage.START: plan.seconds * known.pace, Stage.BENCH: plan.bench_s * known.pace}


def enough(report: Report, cells: list[str]) -> bool:
    done = sum(1 for cid in cells if report.cells[cid].status.finished)
    return done >= max(MIN_KNOWN, math.ceil(KNOWN_SHARE * len(cells))) or done == len(cells)


def seconds_left(report: Report, expected: Mapping[str, Expected], cells: Iterable[str]) -> float | None:
    """Wall seconds until `cells` are all finished (the run's, or a re-run's), learned from
    every finished cell of the report; None while too few have finished ("estimating")."""
    wanted = [cid for cid in cells if cid in report.cells and cid in expected]
    planned = [cid for cid in report.cells if cid in expected]  # a re-run learns from the whole run
    if not wanted or not enough(report, planned):
        return None
    known = learn(report, expected, planned)
    running: dict[str, list[tuple[float, int]]] = {}
    waiting: dict[str, list[tuple[float, int]]] = {}
    benches: dict[str, float] = {}
    for cid in wanted:
        cell, plan = report.cells[cid], expected[cid]
        if cell.status.finished:
            continue
        left = _left(cell, predicted(cid, plan, known, expected))
        bench = left.pop(Stage.BENCH, 0.0)
        under_way = cell.stage is not None and cell.stage is not Stage.BENCH
        (running if under_way else waiting).setdefault(plan.host, []).append((sum(left.values()), plan.weight))
        benches[plan.host] = benches.get(plan.host, 0.0) + bench
    hosts = {h.name: h for h in report.hosts}
    names = set(running) | set(waiting) | set(benches)
    ends = [
        _makespan(running.get(n, []), waiting.get(n, []), capacity(hosts.get(n))) + benches.get(n, 0.0) for n in names
    ]
    return max(ends, default=0.0)


def _left(cell: CellResult, stages: Mapping[Stage, float]) -> dict[Stage, float]:
    """What of the predicted stages is still to come for this cell."""
    done = stage_seconds(cell)
    left = {}
    for stage, seconds in stages.items():
        if stage in done:
            continue
        left[stage] = seconds * (RUNNING_LEFT if stage is cell.stage else 1.0)
    return left


def _makespan(running: list[tuple[float, int]], waiting: list[tuple[float, int]], units: int) -> float:
    """When the last job (seconds, weight) ends on `units` slot units: the running ones
    where they are, then the waiting ones longest first as soon as their weight is free."""
    ends: list[tuple[float, int]] = []  # (end, weight) of the jobs under way
    free = units
    for seconds, weight in running:
        weight = min(weight, units)
        heapq.heappush(ends, (seconds, weight))
        free -= weight
    now = 0.0
    for seconds, weight in sorted(waiting, key=lambda j: -j[0]):
        weight = min(weight, units)
        while free < weight and ends:
            now, back = heapq.heappop(ends)
            free += back
        heapq.heappush(ends, (now + seconds, weight))
        free -= weight
    return max((end for end, _ in ends), default=now)
