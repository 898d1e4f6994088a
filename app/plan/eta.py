"""The time a run has left, from what each cell is expected to take, never from budgets.

A budget is a deadline with a margin (an emulated start may take 540 s); what a cell is
expected to take is `schedule.expected_seconds` (the last run's seconds, else its probe
kind's lab time, three times it emulated) and its bench's `estimate_seconds`. The estimate
plays the cells still to finish through the host's weighted slots as the scheduler does
(longest first, an emulated cell weighing EMULATED_WEIGHT), so cells running side by side
count once, then adds the benches one after the other (they run alone). Both are scaled by
how the cells that ran so far compared with their expectation (a slow machine, a loaded
one), so the estimate follows the run instead of growing near its end.

Pure: the TUI's progress line and `bench/eta.py` call it with a report and the plan's
expectations (`CellPlanned.expected_s`, `bench_s`).
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from ecoready.domain.events import CellPlanned
from ecoready.domain.model import CellResult, Report, Stage
from ecoready.plan.schedule import EMULATED_WEIGHT, capacity
from ecoready.report.status_words import ran

SCALE_RANGE = (0.25, 4.0)  # how far the pace seen may move the expectation (a few cells say little)
UNDER_WAY_LEFT = 0.5  # the share of its expected time a running cell has left, on average


@dataclass(frozen=True)
class Expected:
    """What a cell is expected to take, as the run planned it."""

    seconds: float  # its stages but the bench, alone on the host's slots
    bench_s: float  # its bench (0: none), run alone
    weight: int  # slot units it takes
    host: str


def expected_of(cells: Iterable[CellPlanned]) -> dict[str, Expected]:
    return {c.cell_id: Expected(c.expected_s, c.bench_s, EMULATED_WEIGHT if c.emulated else 1, c.host) for c in cells}


def seconds_left(report: Report, expected: Mapping[str, Expected], cells: Iterable[str]) -> float | None:
    """Wall seconds until `cells` are all finished; None when nothing is known to estimate
    from (a run whose plan carried no expectations)."""
    wanted = [cid for cid in cells if cid in report.cells and cid in expected]
    if not wanted or not any(expected[cid].seconds or expected[cid].bench_s for cid in wanted):
        return None
    work_scale, bench_scale = _pace(report, expected, wanted)
    by_host: dict[str, list[tuple[float, int]]] = {}
    benches: dict[str, float] = {}
    for cid in wanted:
        cell, plan = report.cells[cid], expected[cid]
        if cell.status.finished:
            continue
        share = UNDER_WAY_LEFT if cell.stage is not None and not cell.queued else 1.0
        if cell.stage is not Stage.BENCH:
            by_host.setdefault(plan.host, []).append((plan.seconds * work_scale * share, plan.weight))
        if cell.stage_result(Stage.BENCH) is None or cell.stage is Stage.BENCH:
            benches[plan.host] = benches.get(plan.host, 0.0) + plan.bench_s * bench_scale * share
    hosts = {h.name: h for h in report.hosts}
    names = set(by_host) | set(benches)
    left = [_makespan(by_host.get(n, []), capacity(hosts.get(n))) + benches.get(n, 0.0) for n in names]
    return max(left, default=0.0)


def _pace(report: Report, expected: Mapping[str, Expected], cells: list[str]) -> tuple[float, float]:
    """(work, bench): seconds taken over seconds expected, by the finished cells that ran."""
    took = want = bench_took = bench_want = 0.0
    for cid in cells:
        cell, plan = report.cells[cid], expected[cid]
        if not cell.status.finished or not ran(cell):
            continue
        bench = _bench_seconds(cell)
        took, want = took + max(0.0, cell.seconds - bench), want + plan.seconds
        if bench and plan.bench_s:
            bench_took, bench_want = bench_took + bench, bench_want + plan.bench_s
    return _bounded(took, want), _bounded(bench_took, bench_want)


def _bench_seconds(cell: CellResult) -> float:
    stage = cell.stage_result(Stage.BENCH)
    return stage.seconds if stage is not None and stage.outcome is not None else 0.0


def _bounded(took: float, want: float) -> float:
    if took <= 0 or want <= 0:
        return 1.0
    low, high = SCALE_RANGE
    return min(high, max(low, took / want))


def _makespan(jobs: list[tuple[float, int]], units: int) -> float:
    """When the last of these jobs (seconds, weight) ends on `units` slot units, started
    longest first as soon as their weight is free."""
    ends: list[tuple[float, int]] = []  # (end, weight) of the jobs under way
    now, free = 0.0, units
    for seconds, weight in sorted(jobs, key=lambda j: -j[0]):
        weight = min(weight, units)
        while free < weight:
            now, back = heapq.heappop(ends)
            free += back
        heapq.heappush(ends, (now + seconds, weight))
        free -= weight
    return max((end for end, _ in ends), default=now)
