"""reduce(report, event) -> report: the one place where events become the report.

Pure: no I/O, no clock. The TUI and the headless path both fold the same events through
this function, so they cannot disagree about a cell.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from ecoready import __version__
from ecoready.domain.blame import Blame
from ecoready.domain.coverage import really_checked
from ecoready.domain.events import (
    AuditReported,
    BenchReported,
    CellFinished,
    CellLog,
    CellQueued,
    CellStarted,
    CheckReported,
    Event,
    FactsGathered,
    HostLost,
    ImageResolved,
    PackagingReported,
    ParityCompared,
    PlatformObserved,
    RegistryObserved,
    RunFinished,
    RunNote,
    RunStarted,
    StageFinished,
    StageStarted,
    TagsSearched,
)
from ecoready.domain.model import (
    REPORT_SCHEMA_VERSION,
    Category,
    CellResult,
    Migration,
    Note,
    Outcome,
    Profile,
    Report,
    Stage,
    StageResult,
    Status,
)
from ecoready.domain.parity import merged_prints, print_of

LOG_TAIL_LINES = 40


def empty_report() -> Report:
    return Report(
        schema_version=REPORT_SCHEMA_VERSION,
        run_id="",
        tool_version=__version__,
        matrix="",
        profile=Profile.QUICK,
        started_at="",
    )


# Which ending decides a cell, lowest first; equal ones by stage order.
PRECEDENCE: Mapping[Status, int] = {
    Status.ERROR: 0,
    Status.TIMEOUT: 1,
    Status.MISSING: 2,
    Status.BROKEN: 2,
    Status.LOCKED: 2,  # it stopped where the user must give a login or a licence key: nothing after it ran
    Status.PARTIAL: 3,
    Status.SKIPPED: 4,  # a start cut short (its native twin failed it): said only when nothing else failed
}


def deciding(stages: tuple[StageResult, ...]) -> tuple[StageResult, Blame] | None:
    """The stage whose ending decides a finished cell's status, with its blame (None when
    none failed). Infrastructure trouble (`error`) wins over everything, because then
    nothing else can be trusted; then a stage out of time; then the first stage that blocks
    the component (`missing`, `broken`: nothing after it ran); then failing checks
    (`partial`)."""
    blamed = [(r, b) for r in stages if (b := r.blamed) and b.status in PRECEDENCE]
    return min(blamed, key=lambda found: PRECEDENCE[found[1].status or Status.PARTIAL], default=None)


NOTHING_CHECKED = "nothing checked: the component did not start here or none of its checks ran"


def derive_status(stages: tuple[StageResult, ...]) -> tuple[Status, str]:
    """A finished cell's status and its one-line reason, from its stages' blames."""
    found = deciding(stages)
    if found is None:
        if not any(r.outcome is Outcome.PASS for r in stages):
            return Status.SKIPPED, "nothing ran"
        if not really_checked(stages):  # passed, but nothing of the component was checked
            return Status.SKIPPED, NOTHING_CHECKED
        return Status.READY, ""
    result, blame = found
    status = blame.status
    assert status is not None  # a skipped stage decides nothing
    if status in (Status.ERROR, Status.TIMEOUT):
        return status, f"{result.stage.value}: {result.shown}".rstrip(": ")
    if status is Status.PARTIAL:
        partial = [r for r in stages if (b := r.blamed) and b.status is Status.PARTIAL]
        names = [c.name for r in partial for c in r.checks if c.outcome is Outcome.FAIL]
        if names:
            return status, "failed: " + ", ".join(names)
    return status, result.shown


def _update_stage(cell: CellResult, stage: Stage, **changes: object) -> CellResult:
    stages = list(cell.stages)
    for i, result in enumerate(stages):
        if result.stage is stage:
            stages[i] = replace(result, **changes)  # type: ignore[arg-type]
            break
    else:
        stages.append(replace(StageResult(stage=stage), **changes))  # type: ignore[arg-type]
    return replace(cell, stages=tuple(stages))


def _with_cell(report: Report, cell: CellResult) -> Report:
    cells = dict(report.cells)
    cells[cell.id] = cell
    return replace(report, cells=cells)


def reduce(report: Report, event: Event) -> Report:  # noqa: C901 - one branch per event kind, folded in one place
    if isinstance(event, RunStarted):
        cells = {
            p.cell_id: CellResult(
                id=p.cell_id,
                component=p.component,
                name=p.name,
                category=Category(p.category),
                arch=p.arch,
                host=p.host,
                emulated=p.emulated,
                verification=p.verification,
            )
            for p in event.cells
        }
        return replace(
            report,
            run_id=event.run_id,
            started_at=event.at,
            matrix=event.matrix,
            profile=event.profile,
            arches=event.arches,
            hosts=event.hosts,
            cells=cells,
            finished_at=None,
            interrupted=False,
            migration=Migration(origins=event.origins),
            title=event.title,
            targets=event.targets,
            matrix_content=event.matrix_content,
            matrix_place=event.matrix_place,
        )
    if isinstance(event, RunFinished):
        finished: Mapping[str, CellResult] = report.cells
        if event.interrupted:  # cells that never started: say so rather than leave them pending
            finished = {
                k: (
                    replace(c, status=Status.SKIPPED, detail="not run: the run was interrupted")
                    if c.status is Status.PENDING
                    else c
                )
                for k, c in finished.items()
            }
        return replace(report, finished_at=event.at, interrupted=event.interrupted, cells=finished)
    if isinstance(event, RunNote):
        if any(n.text == event.text for n in report.notes):
            return report
        return replace(report, notes=(*report.notes, Note(event.text, event.about)))
    if isinstance(event, PlatformObserved):
        key = (event.platform.host, event.platform.arch)
        if any((p.host, p.arch) == key for p in report.platforms):
            platforms = tuple(event.platform if (p.host, p.arch) == key else p for p in report.platforms)
        else:
            platforms = (*report.platforms, event.platform)
        return replace(report, platforms=platforms)
    if isinstance(event, TagsSearched):
        key = (event.search.component, event.search.arch)
        kept = tuple(s for s in report.migration.searches if (s.component, s.arch) != key)
        return replace(report, migration=replace(report.migration, searches=(*kept, event.search)))
    if isinstance(event, ParityCompared):
        cells = {
            k: replace(c, parity=event.by_arch.get(c.arch)) if c.component == event.component else c
            for k, c in report.cells.items()
        }
        return replace(report, cells=cells)
    if isinstance(event, HostLost):
        hosts = tuple(
            replace(h, error=f"lost mid-run: {event.reason}") if h.name == event.host else h for h in report.hosts
        )
        return replace(report, hosts=hosts)
    if isinstance(event, RegistryObserved):
        name = event.status.registry
        known = [r.registry for r in report.registries]
        if name in known:
            registries = tuple(event.status if r.registry == name else r for r in report.registries)
        else:
            registries = (*report.registries, event.status)
        return replace(report, registries=registries)

    cell = report.cells.get(event.cell_id)
    if cell is None:
        return report  # an event for a cell of another plan: ignore, never crash the UI
    if isinstance(event, CellStarted):
        cell = replace(
            cell,
            status=Status.RUNNING,
            started_at=event.at,
            finished_at=None,
            stage=None,
            stages=(),
            detail="",
            image=None,
            seconds=0.0,
            log_tail=(),
            bench=None,
            packaging=None,
            audit=None,
            facts=(),
            parity=None,
        )
    elif isinstance(event, CellQueued):
        cell = replace(cell, stage=None)  # waiting: no stage under way (CellResult.queued)
    elif isinstance(event, StageStarted):
        cell = replace(_update_stage(cell, event.stage, outcome=None, blame=None), stage=event.stage)
    elif isinstance(event, CheckReported):
        current = cell.stage_result(event.stage) or StageResult(stage=event.stage)
        cell = _update_stage(cell, event.stage, checks=(*current.checks, event.check))
    elif isinstance(event, ImageResolved):
        cell = replace(cell, image=event.image)
    elif isinstance(event, StageFinished):
        cell = _update_stage(
            cell, event.stage, outcome=event.outcome, seconds=event.seconds, detail=event.detail, blame=event.blame
        )
    elif isinstance(event, BenchReported):
        cell = replace(cell, bench=event.bench)
    elif isinstance(event, PackagingReported):
        cell = replace(cell, packaging=event.packaging)
    elif isinstance(event, AuditReported):
        cell = replace(cell, audit=event.audit)
    elif isinstance(event, FactsGathered):
        cell = replace(cell, facts=merged_prints(cell.facts, (print_of(f) for f in event.facts)))
    elif isinstance(event, CellLog):
        cell = replace(cell, log_tail=tuple(event.lines[-LOG_TAIL_LINES:]))
    elif isinstance(event, CellFinished):
        status, detail = derive_status(cell.stages)
        if event.status is not None:
            status, detail = event.status, event.detail or detail
        elif event.detail:
            detail = event.detail
        if status is Status.READY and not really_checked(cell.stages):  # said ready, checked nothing
            status, detail = Status.SKIPPED, NOTHING_CHECKED
        cell = replace(cell, status=status, detail=detail, finished_at=event.at, seconds=event.seconds, stage=None)
    return _with_cell(report, cell)


def fold(events: list[Event], report: Report | None = None) -> Report:
    result = report or empty_report()
    for event in events:
        result = reduce(result, event)
    return result
