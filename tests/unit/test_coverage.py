"""What a verdict rests on: each cell's coverage is data (domain/coverage.py), derived from
its stages, checks, bench, audit and flags, and every view says it in the same words
(report/coverage_words.py): the headless summary, the TUI detail, JSON (and its schema),
Markdown, HTML, JUnit and `ecoready plan`."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from dataclasses import replace
from pathlib import Path

import jsonschema
import pytest

from ecoready.domain.codec import to_plain
from ecoready.domain.coverage import Coverage, coverage_of, really_checked
from ecoready.domain.model import (
    AuditResult,
    BinaryAudit,
    Category,
    CellResult,
    Check,
    Outcome,
    Report,
    Stage,
    StageResult,
    Status,
    Verification,
)
from ecoready.domain.state import derive_status
from ecoready.report import html, junit, markdown
from ecoready.report import json as json_report
from ecoready.report.coverage_words import coverage_line, finished_cells, rests_on
from ecoready.report.load import parse_report
from ecoready.report.plan_text import render_plan
from ecoready.report.text_grid import render_summary
from ecoready.ui.tui.detail import detail_renderable, plain
from tests.support.reports_sample import bench_report, lab_report

REPORT_SCHEMA = Path(__file__).resolve().parents[2] / "docs" / "report-schema.json"
P, F, S = Outcome.PASS, Outcome.FAIL, Outcome.SKIP


def cell_with(stages: tuple[StageResult, ...], **changes: object) -> CellResult:
    status, detail = derive_status(stages)
    base = CellResult("db/arm64", "db", "db", Category.SERVER, "arm64", "local", True, status, None, stages)
    return replace(base, detail=detail, **changes)  # type: ignore[arg-type]


def test_coverage_counts_what_ran_and_what_was_checked() -> None:
    stages = (
        StageResult(Stage.IMAGE, P),
        StageResult(Stage.AUDIT, P),
        StageResult(Stage.START, P),
        StageResult(Stage.SMOKE, F, checks=(Check("crud", P), Check("arch", F), Check("tls", S))),
        StageResult(Stage.BENCH, S),
    )
    audit = AuditResult("arm64", "sha256:0", (BinaryAudit("mariadbd", "/usr/sbin/mariadbd"), BinaryAudit("x")))
    cell = cell_with(stages, audit=audit, verification=Verification.CONTRACT)
    assert coverage_of(cell) == Coverage(
        ran=(Stage.IMAGE, Stage.AUDIT, Stage.START, Stage.SMOKE),
        skipped=(Stage.BENCH,),
        checks_passed=1,
        checks_run=2,
        checks_skipped=1,
        benched=False,
        audited=("mariadbd",),  # a program not found in the image was not audited
        emulated=True,
        verification=Verification.CONTRACT,
        checked=True,
    )
    assert coverage_line(coverage_of(cell)) == (
        "ran image, audit, start, smoke; skipped bench; 1 of 2 checks passed, 1 skipped; no bench; "
        "audited mariadbd; emulated; probe knows only the documented contract (contract)"
    )


def test_a_cell_with_every_stage_skipped_is_not_ready_and_says_nothing_was_checked() -> None:
    stages = tuple(StageResult(stage, S) for stage in (Stage.IMAGE, Stage.AUDIT, Stage.START, Stage.SMOKE, Stage.BENCH))
    cell = cell_with(stages, verification=Verification.LAB)
    assert cell.status is not Status.READY
    coverage = coverage_of(cell)
    assert not coverage.checked and coverage.ran == () and len(coverage.skipped) == 5
    assert coverage_line(coverage).startswith("no stage ran; skipped image, audit, start, smoke, bench; no check ran")


@pytest.mark.parametrize(
    ("stages", "checked"),
    [
        ((StageResult(Stage.IMAGE, P),), False),
        ((StageResult(Stage.IMAGE, P), StageResult(Stage.START, P), StageResult(Stage.SMOKE, P)), False),
        ((StageResult(Stage.START, P), StageResult(Stage.SMOKE, P, checks=(Check("c", S),))), False),
        ((StageResult(Stage.START, S), StageResult(Stage.SMOKE, P, checks=(Check("c", P),))), False),
        ((StageResult(Stage.START, P), StageResult(Stage.SMOKE, P, checks=(Check("c", P),))), True),
    ],
    ids=["published-only", "no-check-reported", "every-check-skipped", "start-skipped", "checked"],
)
def test_really_checked_needs_a_start_and_a_passed_check(stages: tuple[StageResult, ...], checked: bool) -> None:
    assert really_checked(stages) is checked
    assert (derive_status(stages)[0] is Status.READY) is checked


def views_of(report_name: str) -> tuple[Report, dict[str, str]]:
    report = bench_report() if report_name == "bench-sample" else lab_report(report_name)
    views = {
        "summary": render_summary(report),
        "md": markdown.render(report),
        "html": html.render(report),
        "junit": junit.render(report),
        "json": json_report.render(report),
        "plan": render_plan(report, 2000),
        "plan-md": "\n".join(markdown.migration(report)),
    }
    return report, views


@pytest.mark.parametrize("name", ["lab-run", "lab-audit", "bench-sample"])
def test_every_view_says_what_each_verdict_rests_on_in_the_same_words(name: str) -> None:
    report, views = views_of(name)
    cells = finished_cells(report)
    assert cells
    written = {c["id"]: c["coverage"] for c in json.loads(views["json"])["cells"]}
    jsonschema.Draft202012Validator(json.loads(REPORT_SCHEMA.read_text())).validate(json.loads(views["json"]))
    properties = {
        case.get("name"): {p.get("name"): p.get("value") for p in case.iter("property")}
        for case in ET.fromstring(views["junit"]).iter("testcase")
    }
    for cell in cells:
        words = coverage_line(coverage_of(cell))
        assert words in views["summary"], (cell.id, "summary")
        assert markdown.md(words) in views["md"], (cell.id, "md")
        assert html.esc(words) in views["html"], (cell.id, "html")
        assert properties[f"{cell.component}/{cell.arch}"]["rests_on"] == words, (cell.id, "junit")
        assert words in views["plan"], (cell.id, "plan")
        if report.migration.origins:
            assert markdown.md(words) in views["plan-md"], (cell.id, "plan-md")
        assert written[cell.id] == to_plain(coverage_of(cell)), (cell.id, "json")
        assert rests_on(cell) in plain(detail_renderable(cell, 2000), 2000), (cell.id, "tui")
    # read back, the report is the same, so its coverage is too (derived, never read)
    again = parse_report(views["json"])
    assert {c.id: coverage_of(c) for c in again.cells.values()} == {c.id: coverage_of(c) for c in report.cells.values()}


def test_the_recorded_lab_run_rests_on_different_things_per_cell() -> None:
    """The words are the cell's own: the recorded run has native and emulated cells, audited
    and unaudited ones, and each line says which (no line shared by every cell)."""
    report = lab_report("lab-audit")
    lines = {coverage_line(coverage_of(c)) for c in finished_cells(report)}
    assert len(lines) > 1
    assert any("; emulated;" in line for line in lines) and any("; native;" in line for line in lines)
    assert any("; audited " in line for line in lines)
