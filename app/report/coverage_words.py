"""What a verdict rests on, in words (pure): one line per cell from its `Coverage`
(`domain/coverage.py`), worded once for every view (the headless summary, the TUI detail,
Markdown, HTML, JUnit and `ecoready plan`; the JSON report writes the data itself).

`rests on: ran image, audit, start, smoke, bench; 6 of 6 checks passed; benched; audited
mariadbd; emulated; probe met the real software here (lab)`. The words hold no character
Markdown or HTML would escape, so every view shows them as they are.
"""

from __future__ import annotations

from collections.abc import Mapping

from ecoready.domain.coverage import Coverage, coverage_of
from ecoready.domain.model import CellResult, Report, Verification
from ecoready.report.order import grid_rows

RESTS_ON = "rests on"
VERIFICATION_WORDS: Mapping[Verification | None, str] = {
    Verification.LAB: "probe met the real software here (lab)",
    Verification.CONTRACT: "probe knows only the documented contract (contract)",
    None: "probe verification not recorded",
}


def _stages(coverage: Coverage) -> str:
    ran = "ran " + ", ".join(s.value for s in coverage.ran) if coverage.ran else "no stage ran"
    if coverage.skipped:
        ran += "; skipped " + ", ".join(s.value for s in coverage.skipped)
    return ran


def _checks(coverage: Coverage) -> str:
    said = f"{coverage.checks_passed} of {coverage.checks_run} checks passed" if coverage.checks_run else "no check ran"
    return said + (f", {coverage.checks_skipped} skipped" if coverage.checks_skipped else "")


def coverage_line(coverage: Coverage) -> str:
    """The coverage's words, without the `rests on` label."""
    parts = [
        _stages(coverage),
        _checks(coverage),
        "benched" if coverage.benched else "no bench",
        ("audited " + ", ".join(coverage.audited)) if coverage.audited else "no program audited",
        "emulated" if coverage.emulated else "native",
        VERIFICATION_WORDS[coverage.verification],
    ]
    return "; ".join(parts)


def rests_on(cell: CellResult) -> str:
    """`rests on: …` for one cell."""
    return f"{RESTS_ON}: {coverage_line(coverage_of(cell))}"


def finished_cells(report: Report) -> list[CellResult]:
    """The report's finished cells in grid order: those whose verdict rests on something."""
    return [
        cell
        for _category, _component, _name, cells in grid_rows(report)
        for cell in cells.values()
        if cell.status.finished
    ]


def rests_on_lines(report: Report) -> list[str]:
    """`mariadb-11.8/arm64 (ready): ran image, …` for every finished cell, in grid order:
    the section every report and `ecoready plan` end with."""
    return [f"{cell.id} ({cell.status.value}): {coverage_line(coverage_of(cell))}" for cell in finished_cells(report)]


RESTS_ON_TITLE = "What each verdict rests on"
