"""What changed between two reports, and which changes are regressions (pure).

- a cell whose status changed; a regression when it got worse on the scale
  ready < partial < timeout < broken < missing. `error`, `skipped` and unfinished cells are
  not judged (the tool or the run failed, not the component): a change to or from them is
  a change, never a regression; when the old report did not judge a cell, its last judged
  status (from older reports, see `history.last_judged`) decides.
- cells and arches that appeared or disappeared. A lost arch, a lost cell that was ready and
  a lost bench series are regressions (a CI job whose arm64 report never arrived must not
  stay green); a new arch or cell, and a lost cell that was not ready, are changes.
- reports of different matrices or profiles, or of a subset of the other's cells, are
  compared all the same, but the diff says so first (`mismatch`).
- bench series whose median tps moved by more than twice the noise of a difference of two
  measurements: each side's coefficient of variation (at least `NOISE_FLOOR`, what a
  server's restart alone moves), added in quadrature; a drop is a regression. A series measured once on
  either side has no measured noise, so no change is called on it (`quick` measures each
  point once: "not enough runs to call a change", never a regression), nor on a series
  whose repeats spread more than `UNSTEADY_CV` (not at a steady state). Emulated numbers,
  numbers from different hosts and series not measured alone on their host in both
  reports (another cell's stage beside them, or not recorded) are never compared: said in
  `not_compared`.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ecoready.domain.model import BenchSeries, CellResult, Report, Status
from ecoready.domain.text import inert
from ecoready.report.order import arches_of
from ecoready.report.parity_words import cell_finding

RANK: Mapping[Status, int] = {
    Status.READY: 0,
    Status.PARTIAL: 1,
    Status.TIMEOUT: 2,
    Status.BROKEN: 3,
    Status.LOCKED: 3,  # usable only with what the user gives: a tag that starts asking for a key regressed
    Status.MISSING: 4,
}
# The least CV a series is taken to have, however low its measured one: restarting the
# server alone moves sysbench results by about 3% (Percona, "Know your baseline variance").
NOISE_FLOOR = 0.025
# Runs a series needs on both sides before a change is called: one run measures no noise
# (two quick runs of the same rows on one quiet machine differed by +12% to +50%)
MIN_RUNS = 2
# The most a series' repeats may spread (CV) for its median to be a measurement: beyond it
# the server was not at a steady state (a lab run's first bench after the engine tests:
# 6,105, 7,256 and 14,599 tps, then 18,229-20,664 a minute later), so no change is called
UNSTEADY_CV = 0.25


class Uncompared(str, enum.Enum):
    """Why a cell's bench numbers were left out of the comparison (the JSON's `why`)."""

    EMULATED = "emulated"  # emulated numbers are not performance
    OTHER_HOST = "other-host"  # measured on two hosts
    SHARED_HOST = "shared-host"  # beside other work in a report, or what shared the host not recorded
    TOO_FEW_RUNS = "too-few-runs"  # one run per point: its noise not measured
    UNSTEADY = "unsteady"  # repeats spread over UNSTEADY_CV: not at a steady state


@dataclass(frozen=True)
class NotCompared:
    cell: str
    why: Uncompared
    detail: str  # in words, for a person

    def __str__(self) -> str:
        return f"{self.cell}: {self.detail}"


@dataclass(frozen=True)
class StatusChange:
    cell: str
    old: Status
    new: Status
    detail: str  # the new detail (why it is what it is now)
    emulated: bool
    regression: bool
    judged_against: Status | None = None  # the last judged status, when `old` was not judged


@dataclass(frozen=True)
class CellPresence:
    cell: str
    status: Status  # the status it had (lost) or has (new)


@dataclass(frozen=True)
class BenchChange:
    cell: str
    workload: str
    access: str
    threads: int
    old_tps: float
    new_tps: float
    change: float  # fraction: -0.2 is 20% fewer tps
    noise: float  # the threshold the change went beyond (fraction)

    @property
    def regression(self) -> bool:
        return self.change < 0


@dataclass(frozen=True)
class LostSeries:
    """A bench series measured before (all runs ok) and absent now: a regression."""

    cell: str
    workload: str
    access: str
    threads: int


@dataclass(frozen=True)
class ParityChange:
    """A cell's parity finding that appeared, disappeared or changed (a change, never a
    regression: the cell's readiness is its status)."""

    cell: str
    was: str  # the old finding ("" = none)
    now: str  # the new finding ("" = none)


def _what_differs(cell: CellResult) -> tuple[object, ...] | None:
    p = cell.parity
    return (p.reference, p.differences, sorted(p.counts.items()), p.unknown) if p is not None and p.differs else None


def _parity_change(old: CellResult, new: CellResult) -> ParityChange | None:
    if _what_differs(old) == _what_differs(new) or new.parity is None:  # not compared now: nothing said of it
        return None
    return ParityChange(new.id, cell_finding(old), cell_finding(new))


@dataclass(frozen=True)
class Diff:
    old_run: str
    new_run: str
    old_started: str
    new_started: str
    matrix: str
    status: tuple[StatusChange, ...] = ()
    new_cells: tuple[CellPresence, ...] = ()
    lost_cells: tuple[CellPresence, ...] = ()
    new_arches: tuple[str, ...] = ()
    lost_arches: tuple[str, ...] = ()
    bench: tuple[BenchChange, ...] = ()
    not_compared: tuple[NotCompared, ...] = field(default=())  # bench left out, and why
    lost_series: tuple[LostSeries, ...] = ()
    mismatch: tuple[str, ...] = ()  # the two reports did not ask the same thing, and how
    parity: tuple[ParityChange, ...] = ()

    @property
    def changed(self) -> bool:
        cells = self.new_cells or self.lost_cells or self.new_arches or self.lost_arches
        return bool(self.status or cells or self.bench or self.lost_series or self.parity)

    @property
    def regressions(self) -> list[str]:
        found = [f"{c.cell}: {c.old.value} -> {c.new.value}" for c in self.status if c.regression]
        found += [
            f"{b.cell} {b.workload} {b.access} {b.threads} threads: {b.change * 100:+.1f}% tps"
            for b in self.bench
            if b.regression
        ]
        found += [f"arch {a}: lost (no cell of it in the new report)" for a in self.lost_arches]
        found += [f"{c.cell}: lost (was ready)" for c in self.lost_cells if c.status is Status.READY]
        found += [f"{s.cell} bench {s.workload} {s.access} {s.threads} threads: lost" for s in self.lost_series]
        return found

    @property
    def regressed(self) -> bool:
        return bool(self.regressions)


def is_regression(old: Status, new: Status) -> bool:
    return old in RANK and new in RANK and RANK[new] > RANK[old]


def _usable(series: tuple[BenchSeries, ...]) -> dict[tuple[str, str, int], BenchSeries]:
    return {(s.workload, s.access, s.threads): s for s in series if s.runs and all(r.ok for r in s.runs)}


def _lost_series(old: CellResult, new: CellResult) -> list[LostSeries]:
    """Series measured cleanly before and not at all now, the cell's status unchanged (a
    changed status says why by itself; an emulated or unjudged cell is not judged)."""
    if old.bench is None or new.status not in RANK or new.status is not old.status or new.emulated or old.emulated:
        return []
    now = {(s.workload, s.access, s.threads) for s in new.bench.series} if new.bench else set()
    return [LostSeries(new.id, *key) for key in sorted(set(_usable(old.bench.series)) - now)]


def _bench_changes(old: CellResult, new: CellResult, not_compared: list[NotCompared]) -> list[BenchChange]:
    if old.bench is None or new.bench is None:
        return []
    if old.emulated or new.emulated or old.bench.emulated or new.bench.emulated:
        not_compared.append(NotCompared(new.id, Uncompared.EMULATED, "emulated, its bench numbers are not compared"))
        return []
    if old.host != new.host:
        words = f"ran on host {old.host}, now on {new.host}: bench not compared"
        not_compared.append(NotCompared(new.id, Uncompared.OTHER_HOST, words))
        return []

    before, after = _usable(old.bench.series), _usable(new.bench.series)
    changes = []
    left_out: dict[str, Uncompared] = {}  # why not, once per reason
    for key in sorted(set(before) & set(after)):
        a, b = before[key], after[key]
        if not (a.alone and b.alone):
            left_out[_not_alone(a, "old") or _not_alone(b, "new")] = Uncompared.SHARED_HOST
            continue
        if min(len(a.runs), len(b.runs)) < MIN_RUNS:
            left_out[_too_few_runs(a, b)] = Uncompared.TOO_FEW_RUNS
            continue
        if max(a.cv, b.cv) > UNSTEADY_CV:
            left_out[_unsteady(a, b)] = Uncompared.UNSTEADY
            continue
        if a.median_tps <= 0:
            continue
        change = b.median_tps / a.median_tps - 1.0
        noise = noise_of(a, b)
        if abs(change) > noise:
            changes.append(BenchChange(new.id, key[0], key[1], key[2], a.median_tps, b.median_tps, change, noise))
    not_compared.extend(NotCompared(new.id, why, f"{words}: bench not compared") for words, why in left_out.items())
    return changes


def noise_of(old: BenchSeries, new: BenchSeries) -> float:
    """The change (a fraction) two runs of the same series may show by noise alone: twice
    the spread of a difference of two measurements, each side's measured CV (at least
    NOISE_FLOOR: one run's repeats share one server, a new run does not) in quadrature."""
    return 2 * math.hypot(max(old.cv, NOISE_FLOOR), max(new.cv, NOISE_FLOOR))


def _too_few_runs(old: BenchSeries, new: BenchSeries) -> str:
    runs = min(len(old.runs), len(new.runs))
    return (
        f"{runs} run per point in the {'old' if len(old.runs) == runs else 'new'} report: not enough runs to "
        f"call a change (its noise is not measured; a profile with repeats >= {MIN_RUNS} measures it)"
    )


def _unsteady(old: BenchSeries, new: BenchSeries) -> str:
    which, series = ("old", old) if old.cv >= new.cv else ("new", new)
    return (
        f"{series.workload} {series.threads} threads: the {which} report's repeats spread {series.cv * 100:.0f}% "
        f"(over {UNSTEADY_CV * 100:.0f}%): not steady enough to call a change (a longer warmup or time steadies it)"
    )


def _not_alone(series: BenchSeries, which: str) -> str:
    """Why a series is not a clean measurement ("" when it is)."""
    if series.shared_with is None:
        return f"the {which} report does not record what shared the host"
    if series.shared_with:
        return f"in the {which} report it ran beside {', '.join(series.shared_with)}"
    return ""


def diff(old: Report, new: Report, last_judged: Mapping[str, CellResult] | None = None) -> Diff:
    """Changes from `old` to `new`. `last_judged`: cell id -> the last result that judged the
    cell, for cells `old` did not judge (see `history.last_judged`)."""
    judged = last_judged or {}
    old_arches, new_arches = list(arches_of(old)), list(arches_of(new))
    gained = tuple(a for a in new_arches if a not in old_arches)
    lost = tuple(a for a in old_arches if a not in new_arches)
    status: list[StatusChange] = []
    bench: list[BenchChange] = []
    not_compared: list[NotCompared] = []
    lost_series: list[LostSeries] = []
    parity: list[ParityChange] = []
    for cell_id, cell in new.cells.items():
        before = old.cells.get(cell_id)
        if before is None:
            continue
        if (change := _parity_change(before, cell)) is not None:
            parity.append(change)
        if before.status is not cell.status:
            reference = before.status
            against = None
            if reference not in RANK and cell_id in judged:
                reference = against = judged[cell_id].status
            status.append(
                StatusChange(
                    cell_id,
                    before.status,
                    cell.status,
                    cell.detail,
                    cell.emulated,
                    is_regression(reference, cell.status),
                    against,
                )
            )
        bench.extend(_bench_changes(before, cell, not_compared))
        lost_series.extend(_lost_series(before, cell))
    new_cells = tuple(
        CellPresence(k, c.status) for k, c in new.cells.items() if k not in old.cells and c.arch not in gained
    )
    lost_cells = tuple(
        CellPresence(k, c.status) for k, c in old.cells.items() if k not in new.cells and c.arch not in lost
    )
    return Diff(
        old_run=old.run_id,
        new_run=new.run_id,
        old_started=old.started_at,
        new_started=new.started_at,
        matrix=new.matrix,
        status=tuple(status),
        new_cells=new_cells,
        lost_cells=lost_cells,
        new_arches=gained,
        lost_arches=lost,
        bench=tuple(bench),
        not_compared=tuple(not_compared),
        lost_series=tuple(lost_series),
        mismatch=mismatch(old, new),
        parity=tuple(parity),
    )


def same_matrix(old: Report, new: Report) -> bool:
    """Whether two reports ran one matrix: the same file, whichever path named it (a
    relative and an absolute path are one file), or the same text (one matrix copied to
    another machine). Reports of older runs lack both: then the paths as given."""
    if old.matrix_place and old.matrix_place == new.matrix_place:
        return True
    if old.matrix_content and old.matrix_content == new.matrix_content:
        return True
    if (old.matrix_place or old.matrix_content) and (new.matrix_place or new.matrix_content):
        return False
    return old.matrix == new.matrix


def mismatch(old: Report, new: Report) -> tuple[str, ...]:
    """How the two reports asked different things (said before any change: a "lost" cell
    may be a narrower --only, not a broken component)."""
    found = []
    if not same_matrix(old, new):
        found.append(f"different matrices: {old.matrix} then {new.matrix}")
    if old.profile is not new.profile:
        found.append(f"different profiles: {old.profile.value} then {new.profile.value}")
    before, after = set(old.cells), set(new.cells)
    if before != after:
        if after < before:
            found.append(f"the new report covers {len(after)} of the old report's {len(before)} cells (a subset)")
        elif before < after:
            found.append(f"the old report covers {len(before)} of the new report's {len(after)} cells (a subset)")
        else:
            found.append(
                f"different cells: {len(before - after)} only in the old report, {len(after - before)} only in the new"
            )
    return tuple(found)


def diff_lines(d: Diff) -> list[str]:
    """One line per change, regressions first (plain text; callers escape for their medium)."""
    lines: list[str] = []
    for c in sorted(d.status, key=lambda c: not c.regression):
        mark = "REGRESSED" if c.regression else "changed"
        via = f" (last judged: {c.judged_against.value})" if c.judged_against is not None else ""
        emulated = " [emulated]" if c.emulated else ""
        detail = f": {c.detail}" if c.detail else ""
        lines.append(f"{mark} {c.cell}{emulated}: {c.old.value}{via} -> {c.new.value}{detail}")
    for b in sorted(d.bench, key=lambda b: not b.regression):
        mark = "REGRESSED" if b.regression else "changed"
        lines.append(
            f"{mark} {b.cell} bench {b.workload} {b.access} {b.threads} threads: {b.old_tps:,.1f} -> "
            f"{b.new_tps:,.1f} tps ({b.change * 100:+.1f}%, beyond the noise of ±{b.noise * 100:.1f}%)"
        )
    lines.extend(f"REGRESSED lost arch {a}" for a in d.lost_arches)
    lost = sorted(d.lost_cells, key=lambda c: c.status is not Status.READY)
    lines.extend(
        f"{'REGRESSED ' if c.status is Status.READY else ''}lost cell {c.cell} (was {c.status.value})" for c in lost
    )
    lines.extend(f"REGRESSED lost bench {s.cell} {s.workload} {s.access} {s.threads} threads" for s in d.lost_series)
    for p in d.parity:
        if not p.was:
            lines.append(f"parity {p.cell}: now {p.now}")
        elif not p.now:
            lines.append(f"parity {p.cell}: no longer differs (was: {p.was})")
        else:
            lines.append(f"parity {p.cell}: {p.now} (was: {p.was})")
    lines.extend(f"new arch {a}" for a in d.new_arches)
    lines.extend(f"new cell {c.cell}: {c.status.value}" for c in d.new_cells)
    # report files come from elsewhere: nothing in them may reach a terminal as an escape
    return [inert(line, 0).replace("\n", " ") for line in lines]


def headline(d: Diff) -> str:
    since = f"since run {d.old_run[:8]} ({d.old_started})"
    if not d.changed:
        return f"no change {since}"
    count = len(diff_lines(d))
    regressions = len(d.regressions)
    what = f"{count} change{'s' if count != 1 else ''}"
    if regressions:
        what = f"{regressions} regression{'s' if regressions != 1 else ''} in {what}"
    return f"{what} {since}"


def uncompared_notes(d: Diff) -> list[str]:
    """One line per reason bench numbers were left out, with how many cells and which (a
    "no change" that compared no bench must not read as a steady bench)."""
    by_why: dict[Uncompared, list[NotCompared]] = {}
    for n in d.not_compared:
        by_why.setdefault(n.why, []).append(n)
    lines = []
    for found in by_why.values():
        cells = list(dict.fromkeys(n.cell for n in found))
        named = ", ".join(cells[:3]) + (f" and {len(cells) - 3} more" if len(cells) > 3 else "")
        count = f"{len(cells)} cell{'s' if len(cells) != 1 else ''}"
        lines.append(f"bench not compared on {count} ({named}): {found[0].detail.removesuffix(': bench not compared')}")
    return lines


def diff_text(d: Diff) -> str:
    title = inert(f"{d.matrix}: {headline(d)}", 0).replace("\n", " ")
    said = [*d.mismatch, *uncompared_notes(d)]
    notes = [inert(f"  note: {m}", 0).replace("\n", " ") for m in said]
    return "\n".join([title, *notes, *(f"  {line}" for line in diff_lines(d))]) + "\n"


def diff_dict(d: Diff) -> dict[str, Any]:
    """The structured diff (for the webhook and scripts); keys are stable."""
    return {
        "matrix": d.matrix,
        "old_run": d.old_run,
        "new_run": d.new_run,
        "old_started_at": d.old_started,
        "new_started_at": d.new_started,
        "changed": d.changed,
        "regressed": d.regressed,
        "status_changes": [
            {
                "cell": c.cell,
                "old": c.old.value,
                "new": c.new.value,
                "judged_against": c.judged_against.value if c.judged_against else None,
                "detail": c.detail,
                "emulated": c.emulated,
                "regression": c.regression,
            }
            for c in d.status
        ],
        "new_cells": [{"cell": c.cell, "status": c.status.value} for c in d.new_cells],
        "lost_cells": [{"cell": c.cell, "status": c.status.value} for c in d.lost_cells],
        "new_arches": list(d.new_arches),
        "lost_arches": list(d.lost_arches),
        "bench_changes": [
            {
                "cell": b.cell,
                "workload": b.workload,
                "access": b.access,
                "threads": b.threads,
                "old_tps": b.old_tps,
                "new_tps": b.new_tps,
                "change": round(b.change, 4),
                "noise": round(b.noise, 4),
                "regression": b.regression,
            }
            for b in d.bench
        ],
        "not_compared": [{"cell": n.cell, "why": n.why.value, "detail": n.detail} for n in d.not_compared],
        "lost_series": [
            {"cell": s.cell, "workload": s.workload, "access": s.access, "threads": s.threads} for s in d.lost_series
        ],
        "mismatch": list(d.mismatch),
        "parity_changes": [{"cell": p.cell, "was": p.was, "now": p.now} for p in d.parity],
        "regressions": d.regressions,
    }
