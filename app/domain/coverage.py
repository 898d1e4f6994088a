"""What a cell's verdict rests on, as data: which stages ran, checks passed of checks run,
whether it was benchmarked, which programs the build audit read, native or emulated, and
whether its probe has met the real software here (`lab`) or only its documented contract.

Derived from the cell alone (`coverage_of`), once, by every view and by the reducer: a cell
whose stages checked nothing (`really_checked`: the component started here and at least one
of its named checks passed) never reads as `ready` (`domain/state.py`). Pure: no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass

from ecoready.domain.blame import Outcome, Party, Stage
from ecoready.domain.model import CellResult, StageResult, Verification


@dataclass(frozen=True)
class Coverage:
    """One cell's coverage line as data (the JSON report's `coverage`; the words are
    `report/coverage_words.py`'s)."""

    ran: tuple[Stage, ...] = ()  # stages that ran to an end (passed, failed, timed out, errored, locked), in order
    skipped: tuple[Stage, ...] = ()  # stages that ended skipped (did not apply, cut short)
    checks_passed: int = 0
    checks_run: int = 0  # checks that ran (a skipped check did not)
    checks_skipped: int = 0
    benched: bool = False  # a bench stage passed with numbers
    audited: tuple[str, ...] = ()  # main programs the build audit read in the image
    emulated: bool = False
    verification: Verification | None = None  # None: a report written before probes said it
    checked: bool = False  # `really_checked`: the component started here and a named check of it passed


def _ended(result: StageResult) -> bool:
    """Ran to an end: passed, failed, timed out, errored, or stopped for what only the user
    can give (a login, a licence key: it ran, and asked); a stage that did not apply did not."""
    if result.outcome is None:
        return False
    blame = result.blamed
    return result.outcome is not Outcome.SKIP or (blame is not None and blame.facts.party is Party.USER)


def _skipped(result: StageResult) -> bool:
    return result.outcome is Outcome.SKIP and not _ended(result)


def really_checked(stages: tuple[StageResult, ...]) -> bool:
    """Whether a cell's stages checked the component for real: its start passed (it ran on
    this arch and answered) and at least one of its named checks passed. An image that is
    only published, a start with every check skipped, stages all skipped: nothing checked."""
    started = any(r.stage is Stage.START and r.outcome is Outcome.PASS for r in stages)
    passed = any(c.outcome is Outcome.PASS for r in stages for c in r.checks)
    return started and passed


def coverage_of(cell: CellResult) -> Coverage:
    """The cell's coverage, from its stages, bench, audit and flags."""
    checks = [c for r in cell.stages for c in r.checks]
    bench = cell.stage_result(Stage.BENCH)
    benched = bench is not None and bench.outcome is Outcome.PASS and cell.bench is not None and bool(cell.bench.series)
    audited = tuple(b.program for b in cell.audit.binaries if b.path) if cell.audit is not None else ()
    return Coverage(
        ran=tuple(r.stage for r in cell.stages if _ended(r)),
        skipped=tuple(r.stage for r in cell.stages if _skipped(r)),
        checks_passed=sum(1 for c in checks if c.outcome is Outcome.PASS),
        checks_run=sum(1 for c in checks if c.outcome is not Outcome.SKIP),
        checks_skipped=sum(1 for c in checks if c.outcome is Outcome.SKIP),
        benched=benched,
        audited=audited,
        emulated=cell.emulated,
        verification=cell.verification,
        checked=really_checked(cell.stages),
    )
