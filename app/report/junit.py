"""Report -> JUnit XML (pure), for CI systems that show test results.

One <testcase> per cell: classname = category, name = component/arch, with what its
verdict rests on (a `rests_on` property and the first line of its output). What blames the
component (partial, broken, missing) or the clock (timeout) is a <failure> listing the
failing checks; what blames the tool or its infrastructure (`error`) is an <error>, so CI
never shows it as the component's fault; skipped and unfinished cells are <skipped>.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from ecoready.domain.blame import Party
from ecoready.domain.coverage import coverage_of
from ecoready.domain.model import CellResult, Report, Status
from ecoready.domain.text import inert
from ecoready.report import mirror_words
from ecoready.report.coverage_words import coverage_line, rests_on
from ecoready.report.exporter_text import cells_in_grid_order, failures, run_seconds
from ecoready.report.parity_words import cell_finding, compared_line, differs
from ecoready.report.reasons import Advice, advice_by_cell, why
from ecoready.report.status_words import EMULATED_MEANING, packaging_line, shows_emulated, status_detail
from ecoready.report.troubles import infra_lines
from ecoready.report.verdict import arch_verdicts

# Characters XML 1.0 cannot carry at all (inert() already removed most controls).
_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
FAILED = frozenset({Status.PARTIAL, Status.BROKEN, Status.MISSING, Status.TIMEOUT})
# who is blamed -> what JUnit calls it: the tool's trouble is never the component's failure
# what only the user can give (a login, a licence key) is a <skipped> saying what to provide: it was
# not the component's failure nor the tool's error (the run still exits 1: it is not ready)
ELEMENT = {
    Party.COMPONENT: "failure",
    Party.CLOCK: "failure",
    Party.TOOL: "error",
    Party.NOBODY: "skipped",
    Party.USER: "skipped",
}


def element(cell: CellResult) -> str:
    """`failure`, `error`, `skipped`, or "" for a ready cell: from who its blame blames (a
    cell no stage explains, from its status)."""
    if cell.status is Status.READY:
        return ""
    blame = why(cell).blame
    if blame is not None:
        return ELEMENT[blame.facts.party]
    return "failure" if cell.status in FAILED else "error" if cell.status is Status.ERROR else "skipped"


def xml_text(text: str) -> str:
    return _NOT_XML.sub("", inert(text, 0))


def failure_text(cell: CellResult, advised: Advice | None = None) -> str:
    lines = [f"why: {advised.reason}", f"what to do: {advised.remedy}"] if advised else []
    lines += [f"{f.where} ({f.outcome}): {f.detail}" for f in failures(cell)]
    if cell.image is not None and cell.image.digest:
        came = mirror_words.via(cell.image.mirror, cell.image.fallback)
        via = f" ({came})" if came else ""
        lines.append(f"image {cell.image.reference} for {cell.image.arch}: {cell.image.digest}{via}")
    return xml_text("\n".join(lines))


def testcase(parent: ET.Element, cell: CellResult, advised: Advice | None = None) -> None:
    case = ET.SubElement(
        parent,
        "testcase",
        classname=xml_text(cell.category.value),
        name=xml_text(f"{cell.component}/{cell.arch}"),
        time=f"{cell.seconds:.3f}",
    )
    props = ET.SubElement(case, "properties")
    if cell.status.finished:  # what its verdict rests on (report/coverage_words.py)
        ET.SubElement(props, "property", name="rests_on", value=xml_text(coverage_line(coverage_of(cell))))
    if cell.parity is not None:  # ready or not, how it compares with its reference arch
        ET.SubElement(props, "property", name="parity", value=xml_text(compared_line(cell)))
    if cell.emulated:
        ET.SubElement(props, "property", name="emulated", value="true")
    if cell.packaging is not None:  # a driver row: its packaging verdict next to the runtime result
        ET.SubElement(props, "property", name="packaging", value=xml_text(packaging_line(cell.packaging)))
    message = xml_text(status_detail(cell))
    kind = element(cell)
    if kind == "failure":
        node = ET.SubElement(case, "failure", message=message, type=cell.status.value)
        node.text = failure_text(cell, advised)
    elif kind == "error":
        node = ET.SubElement(case, "error", message=message, type="tool or infrastructure error")
        node.text = failure_text(cell, advised)
    elif kind:  # skipped, locked (what to provide), or never finished (an interrupted run)
        judged = cell.status in (Status.SKIPPED, Status.LOCKED)
        node = ET.SubElement(case, "skipped", message=message if judged else f"did not finish ({cell.status.value})")
        if cell.status is Status.LOCKED:
            node.text = failure_text(cell, advised)
    out = [rests_on(cell)] if cell.status.finished else []
    if shows_emulated(cell):
        out.append(f"emulated: {EMULATED_MEANING}")
    elif cell.emulated:
        out.append("emulated: planned so, but it did not run")
    if differs(cell):
        out.append(cell_finding(cell))
    if cell.status is not Status.READY:
        out.extend(cell.log_tail)
    if not len(props):
        case.remove(props)
    if out:
        ET.SubElement(case, "system-out").text = xml_text("\n".join(out))


def render(report: Report) -> str:
    cells = cells_in_grid_order(report)
    kinds = [element(c) for c in cells]
    count = {
        "tests": len(cells),
        "failures": kinds.count("failure"),
        "errors": kinds.count("error"),
        "skipped": kinds.count("skipped"),
    }
    seconds = run_seconds(report)
    total = f"{seconds:.3f}" if seconds is not None else f"{sum(c.seconds for c in cells):.3f}"
    counts = {k: str(v) for k, v in count.items()}
    suites = ET.Element("testsuites", {"name": "ecoready", "time": total, **counts})
    suite = ET.SubElement(
        suites,
        "testsuite",
        {
            "name": xml_text(f"ecoready {report.title or report.matrix}"),
            "timestamp": xml_text(report.started_at),
            "time": total,
            **counts,
        },
    )
    props = ET.SubElement(suite, "properties")
    for name, value in (
        ("run_id", report.run_id),
        ("matrix", report.matrix),
        ("profile", report.profile.value),
        ("ecoready", report.tool_version),
        ("interrupted", "true" if report.interrupted else "false"),
    ):
        ET.SubElement(props, "property", name=name, value=xml_text(value))
    for i, line in enumerate(arch_verdicts(report)):
        ET.SubElement(props, "property", name=f"verdict.{i + 1}", value=xml_text(line))
    for i, line in enumerate(infra_lines(report)):  # each registry or backend that failed many cells
        ET.SubElement(props, "property", name=f"infrastructure.{i + 1}", value=xml_text(line))
    advised = advice_by_cell(report)
    for cell in cells:
        testcase(suite, cell, advised.get(cell.id))
    ET.indent(suites)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(suites, encoding="unicode") + "\n"
