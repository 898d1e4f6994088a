"""The exporters on reports of real lab runs (tests/data/reports) and on the constructed
bench report: outputs equal checked expected files, and each format holds what it must."""

from __future__ import annotations

import json
import os
import xml.etree.ElementTree as ET
from collections.abc import Callable
from dataclasses import replace
from html.parser import HTMLParser
from pathlib import Path

import pytest
from markdown_it import MarkdownIt

from ecoready.domain.blame import Blame, said
from ecoready.domain.codec import from_plain, to_plain
from ecoready.domain.coverage import coverage_of
from ecoready.domain.model import Report, Status
from ecoready.report import html, junit, markdown
from ecoready.report import json as json_report
from ecoready.report.load import parse_report
from ecoready.report.status_words import shows_emulated
from tests.support.reports_sample import DATA, EXPECTED, LAB_REPORTS, bench_report, lab_report

RENDERERS: dict[str, Callable[[Report], str]] = {"md": markdown.render, "html": html.render, "xml": junit.render}


def report_named(name: str) -> Report:
    return bench_report() if name == "bench-sample" else lab_report(name)


@pytest.mark.parametrize("ext", sorted(RENDERERS))
@pytest.mark.parametrize("name", [*LAB_REPORTS, "bench-sample"])
def test_output_matches_the_checked_expected_file(name: str, ext: str) -> None:
    text = RENDERERS[ext](report_named(name))
    expected = EXPECTED / f"{name}.{ext}"
    if os.environ.get("ECOREADY_UPDATE_EXPECTED"):
        expected.parent.mkdir(exist_ok=True)
        expected.write_text(text, encoding="utf-8")
    assert expected.exists(), f"{expected} is missing: run with ECOREADY_UPDATE_EXPECTED=1 and review it"
    assert text == expected.read_text(encoding="utf-8"), f"{name}.{ext} differs from {expected}"


@pytest.mark.parametrize("name", LAB_REPORTS)
def test_json_of_a_loaded_report_is_the_file_it_came_from(name: str) -> None:
    """These were recorded before stages carried their blame (images their mirror, cells
    their probe's verification, reports their target CPUs): written again, each is its file
    with every stage's blame (an empty mirror, a null verification, no targets) added
    (report/legacy.py reads it from the wording), an empty `found_tag`, and
    its detail without the words its cause now says; read again, it is the same report."""
    original = json.loads((DATA / f"{name}.json").read_text(encoding="utf-8"))
    loaded = lab_report(name)
    text = json_report.render(loaded)
    written = json.loads(text)
    assert "targets" not in original and written.pop("targets") == []  # nor the matrix its target CPUs
    for platform in written["platforms"]:  # nor platforms their CPU's part
        assert platform.pop("cpu_part") == ""
    for cell in written["cells"]:  # nor audits their programs per target, and their SVE
        if cell.get("audit"):
            assert cell["audit"].pop("targets") == []
            assert all(b.pop("sve_count") == 0 for b in cell["audit"]["binaries"])
            assert all(b.pop("build_id") == "" for b in cell["audit"]["binaries"])  # nor their build IDs
    for key in ("matrix_content", "matrix_place"):  # recorded before reports said which matrix, by digest
        assert key not in original and written.pop(key) == ""
    blamed = 0
    for old_cell, cell in zip(original["cells"], written["cells"], strict=True):
        if cell["image"] is not None:  # recorded before the image said which mirror answered
            assert "mirror" not in old_cell["image"] and cell["image"].pop("mirror") == ""
            # and the tag it was found under apart from its words (found under its own: "")
            assert "found_tag" not in old_cell["image"] and cell["image"].pop("found_tag") == ""
            assert "fallback" not in old_cell["image"] and cell["image"].pop("fallback") is None  # nor why not
        assert "verification" not in old_cell and cell.pop("verification") is None  # nor the probe's
        # nor what its verdict rests on (derived from the cell, written for readers)
        assert "coverage" not in old_cell and cell.pop("coverage") == to_plain(coverage_of(loaded.cells[cell["id"]]))
        assert "facts" not in old_cell and cell.pop("facts") == []  # nor parity's facts and finding
        assert "parity" not in old_cell and cell.pop("parity") is None
        for old, new in zip(old_cell["stages"], cell["stages"], strict=True):
            blame = new.pop("blame")
            if old["outcome"] not in ("pass", None):
                blamed += 1
                shown = said(from_plain(Blame, blame), new["detail"])
                assert shown + (f"; fix: {blame['fix']}" if blame["fix"] else "") == old["detail"]
                new["detail"] = old["detail"]
            else:
                assert blame is None
    # recorded when a cell stopped at its build audit was still said to have "ran emulated"
    recorded = "gap-binary-mislabelled/arm64: ran emulated, so its numbers are not performance"
    now = "gap-binary-mislabelled/arm64: broken, it did not run"
    absent = original["comparison"]["absent"]
    original["comparison"]["absent"] = [now if line == recorded else line for line in absent]
    assert written == original
    assert blamed or name == "lab-run"
    assert json_report.render(parse_report(text)) == text


# -- HTML ---------------------------------------------------------------------------------
class Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))


def tags_of(text: str) -> list[tuple[str, dict[str, str | None]]]:
    parser = Tags()
    parser.feed(text)
    return parser.tags


@pytest.mark.parametrize("name", [*LAB_REPORTS, "bench-sample"])
def test_html_is_self_contained_and_needs_no_script(name: str) -> None:
    text = html.render(report_named(name))
    tags = tags_of(text)
    names = {t for t, _ in tags}
    assert not names & {"script", "link", "iframe", "img", "object", "embed", "base", "form"}, names
    for tag, attrs in tags:
        assert "src" not in attrs and "href" not in attrs, (tag, attrs)
        assert not any(a.startswith("on") for a in attrs), (tag, attrs)  # no event handlers
    assert "@import" not in text and "url(http" not in text
    assert "default-src 'none'" in text  # the CSP: nothing loads or runs even if something slipped in


def test_html_grid_has_a_details_cell_per_cell_a_legend_and_marks_emulation() -> None:
    report = lab_report("lab-mixed")
    text = html.render(report)
    tags = tags_of(text)
    cells = [a for t, a in tags if t == "td" and "cell" in (a.get("class") or "").split()]
    assert len(cells) == len(report.cells)
    assert sum(1 for t, _ in tags if t == "details") >= len(report.cells)
    for status in {c.status for c in report.cells.values()}:
        assert f"st-{status.value}" in text and f"<b>{status.value}</b>" in text  # in the grid and the legend
    emulated = [c for c in report.cells.values() if shows_emulated(c)]  # never on a cell that never ran
    assert text.count('<span class=emu title="emulated">ᵉ</span>') == len(emulated)
    assert "ᵉ ran emulated" in text


def test_html_bench_charts_keep_emulated_numbers_apart() -> None:
    text = html.render(bench_report())
    charts = text.split("<svg")[1:]
    native = [c for c in charts if "EMULATED" not in c]
    emulated = [c for c in charts if "EMULATED: NOT PERFORMANCE" in c]
    assert len(native) == 4 and len(emulated) == 2
    assert all("arm64 (emulated)" in c and "stroke-dasharray" in c for c in emulated)
    assert not any("(emulated)" in c for c in native)  # never one line beside native ones
    assert "arm64 vs amd64" in text and "mariadb-11.8/arm64: ran emulated" in text


# -- Markdown -----------------------------------------------------------------------------
def test_markdown_grid_renders_as_a_table_with_a_row_per_component() -> None:
    report = lab_report("lab-mixed")
    text = markdown.render(report)
    rendered = MarkdownIt("commonmark").enable("table").render(text)
    rows = tags_of(rendered)
    components = {c.component for c in report.cells.values()}
    first_table = rendered.split("</table>")[0]
    assert first_table.count("<tr>") == len(components) + 1  # + the header
    assert "ᵉ" in first_table
    assert sum(1 for t, _ in rows if t == "h3") == sum(1 for c in report.cells.values() if c.status is not Status.READY)
    assert "smoke crud (fail)" in text and "start (fail)" in text and "image (fail)" in text


def test_markdown_bench_tables_and_comparisons() -> None:
    text = markdown.render(bench_report())
    assert text.count("| workload | access | threads | tps | qps | p95 ms | CV | runs |") == 4
    assert "arm64 tps per USD-hour" in text and "+38.8%" in text
    assert "**ᵉ Emulated:**" in text


def test_markdown_says_why_there_are_no_benchmarks() -> None:
    assert "profile smoke runs no benchmark" in markdown.render(lab_report("lab-run"))


# -- JUnit --------------------------------------------------------------------------------
def test_junit_has_a_testcase_per_cell_with_failures_errors_and_skips() -> None:
    report = lab_report("lab-mixed")
    cells = dict(report.cells)
    cells["ghost/arm64"] = replace(cells["ghost/arm64"], status=Status.SKIPPED, detail="not run: interrupted")
    cells["mariadb-10.11/arm64"] = replace(
        cells["mariadb-10.11/arm64"], status=Status.ERROR, detail="image: registry unreachable"
    )
    root = ET.fromstring(junit.render(replace(report, cells=cells)))
    (suite,) = root.findall("testsuite")
    cases = {c.get("name"): c for c in suite.findall("testcase")}
    assert set(cases) == {f"{c.component}/{c.arch}" for c in cells.values()}
    assert {c.get("classname") for c in cases.values()} == {"server"}
    assert cases["mariadb-10.11/amd64"].find("failure") is None and cases["mariadb-10.11/amd64"].find("error") is None
    failure = cases["mariadb-aria-only/amd64"].find("failure")
    assert failure is not None and failure.get("type") == "partial"
    assert "smoke crud (fail)" in (failure.text or "")
    assert cases["mariadb-innodb-ro/amd64"].find("failure") is not None
    assert cases["ghost/amd64"].find("failure") is not None  # missing is the component's fault
    assert cases["ghost/arm64"].find("skipped") is not None
    error = cases["mariadb-10.11/arm64"].find("error")
    assert error is not None and "registry unreachable" in (error.get("message") or "")
    assert suite.get("tests") == "7" and suite.get("failures") == "4"
    assert suite.get("errors") == "1" and suite.get("skipped") == "1"


def test_every_exporter_writes_utf8_text_ending_in_a_newline(tmp_path: Path) -> None:
    for name in (*LAB_REPORTS, "bench-sample"):
        for render in (*RENDERERS.values(), json_report.render):
            text = render(report_named(name))
            assert text.endswith("\n") and "\x1b" not in text
            (tmp_path / "out").write_text(text, encoding="utf-8")


def test_markdown_shows_code_as_code_and_no_blank_cell_on_github() -> None:
    text = markdown.render(lab_report("lab-mixed"))
    assert "check the row's `image` (repository and tag)" in text  # a code span, not \\`image\\`
    assert "\\`" not in text
    grid = [line for line in text.splitlines() if line.startswith("| server |")]
    assert grid and all("|  |" not in line for line in grid)
    assert any("· not in the matrix" in line for line in grid)  # the arch that row does not have
    # what comes from elsewhere stays inert: no HTML from inside a code span
    assert markdown.md("`<img src=x>` and `a|b`") == "\\`&lt;img src=x&gt;\\` and `a\\|b`"
    page = MarkdownIt("commonmark").enable("table").render(text)  # as GitHub draws it
    assert "<code>image</code>" in page and "<td></td>" not in page
