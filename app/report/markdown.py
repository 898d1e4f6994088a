"""Report -> GitHub-flavoured Markdown (pure): the grid, what failed, benchmarks, and the
arm64-vs-amd64 tables of `cost.compare`.

Every value from a container or a config goes through `md()` (or into a code block whose
fence is longer than any backtick run in it): no markup, link, HTML or escape sequence in
a component name or a log line can act on the page that shows the report.
"""

from __future__ import annotations

import html
import re
from collections.abc import Sequence

from ecoready.domain.model import BenchResult, CellResult, Report, Status
from ecoready.domain.text import inert
from ecoready.report import mirror_words
from ecoready.report.binaries import (
    AUDIT_INTRO,
    BINARY_HEADER,
    SEVERITY_LEGEND,
    audit_about,
    audited_cells,
    binary_rows,
    finding_lines,
)
from ecoready.report.cost import (
    Comparison,
    columns_for,
    compare,
    compare_heading,
    compare_hosts,
    price_notes,
)
from ecoready.report.coverage_words import RESTS_ON_TITLE, rests_on_lines
from ecoready.report.exporter_text import (
    DRIVER_HEADER,
    PLATFORM_HEADER,
    bench_cells,
    bench_conditions,
    counts_line,
    cv_text,
    docker_versions,
    driver_cells,
    driver_row,
    failing_cells,
    failures,
    host_line,
    no_bench_sentence,
    number,
    platform_hazards,
    platform_row,
    platforms_in_order,
    run_line,
    runs_text,
    target_words,
)
from ecoready.report.migration import PIN_HEADER, PLAN_HEADER, actions, pin_row, plan_pins, plan_steps, step_row
from ecoready.report.order import arches_of, grid_rows
from ecoready.report.parity_words import PARITY_MARK, PARITY_MEANING, differs, section_lines
from ecoready.report.reasons import advice_by_cell
from ecoready.report.samecost import headline, line_text, same_cost
from ecoready.report.status_words import EMULATED_MARK, EMULATED_MEANING, GLYPH, MEANING, short_text, shows_emulated
from ecoready.report.targets import cell_target_lines, plan_target_lines, targets_intro
from ecoready.report.text_grid import column_title, host_mark
from ecoready.report.troubles import infra_lines
from ecoready.report.verdict import arch_verdicts

LOG_LINES = 10
_MD_SPECIAL = re.compile(r"([\\`*_\[\]|~#])")
_BACKTICKS = re.compile(r"`+")
_CODE_SPAN = re.compile(r"`([^`]+)`")  # `a word in backticks`: a code span


def md(text: str) -> str:
    """Inert, one-line, escaped Markdown text: HTML as entities, markup characters escaped;
    a `quoted` word (the remedies' `image`, `backend =`) is a code span, as GitHub shows
    it, unless it holds a character a code span would show raw (`<`, `&`)."""
    text = inert(text, 0).replace("\r", " ").replace("\n", " ").replace("\t", " ")
    out, at = [], 0
    for span in _CODE_SPAN.finditer(text):
        if "<" in span.group(1) or "&" in span.group(1):
            continue
        out.append(_escaped(text[at : span.start()]))
        out.append(f"`{span.group(1).replace('|', chr(92) + '|')}`")
        at = span.end()
    out.append(_escaped(text[at:]))
    return "".join(out)


def _escaped(text: str) -> str:
    return _MD_SPECIAL.sub(r"\\\1", html.escape(text, quote=False))


def code_block(lines: Sequence[str]) -> list[str]:
    """A fenced block that no line can close early (the fence outgrows any backtick run)."""
    body = [inert(line, 0) for line in lines]
    longest = max((len(m.group()) for line in body for m in _BACKTICKS.finditer(line)), default=0)
    fence = "`" * max(3, longest + 1)
    return [fence + "text", *body, fence]


def table(header: Sequence[str], rows: Sequence[Sequence[str]], right: Sequence[int] = ()) -> list[str]:
    align = ["---:" if i in right else "---" for i in range(len(header))]
    lines = ["| " + " | ".join(header) + " |", "| " + " | ".join(align) + " |"]
    lines.extend("| " + " | ".join(row) + " |" for row in rows)
    return lines


def cell_label(cell: CellResult) -> str:
    return (
        md(short_text(cell))
        + (f" {EMULATED_MARK}" if shows_emulated(cell) else "")
        + (f" {PARITY_MARK}" if differs(cell) else "")
    )


NOT_IN = "· not in the matrix"  # never a blank cell: GitHub draws it as nothing at all


def grid(report: Report) -> list[str]:
    arches = list(arches_of(report))
    rows = []
    for category, cid, name, cells in grid_rows(report):
        who = f"**{md(cid)}**" + (f"<br>{md(name)}" if name and name != cid else "")
        rows.append(
            [md(category.value), who]
            + [cell_label(cells[a]) + md(host_mark(report, cells[a])) if a in cells else NOT_IN for a in arches]
        )
    return table(["category", "component", *(md(column_title(report, a)) for a in arches)], rows)


def answer(report: Report) -> list[str]:
    """The verdict per arch first, then each registry that could not be asked, once."""
    lines = [f"- **{md(line.split(' ', 1)[0])}** {md(line.split(' ', 1)[1])}" for line in arch_verdicts(report)]
    lines.extend(f"- ⚠ {md(line)}" for line in infra_lines(report))
    return [*lines, ""] if lines else []


def legend(report: Report) -> str:
    seen = {c.status for c in report.cells.values()}
    parts = [f"{GLYPH[s]} {s.value}: {MEANING[s]}" for s in Status if s in seen]
    if any(c.emulated for c in report.cells.values()):
        parts.append(f"{EMULATED_MARK} {EMULATED_MEANING}")
    if any(differs(c) for c in report.cells.values()):
        parts.append(f"{PARITY_MARK} {PARITY_MEANING}")
    return "Legend: " + " · ".join(parts)


def failed(report: Report) -> list[str]:
    cells = failing_cells(report)
    if not cells:
        return []
    lines = ["## What failed", ""]
    advised = advice_by_cell(report)
    for cell in cells:
        emulated = f" {EMULATED_MARK} emulated" if shows_emulated(cell) else ""
        lines.append(f"### {GLYPH[cell.status]} {md(cell.component)} on {md(cell.arch)}: {cell.status.value}{emulated}")
        lines.append("")
        found = failures(cell)
        if cell.id in advised:
            lines.append(f"- **why:** {md(advised[cell.id].reason)}")
            lines.append(f"- **what to do:** {md(advised[cell.id].remedy)}")
        elif cell.detail and not found:
            lines.extend([md(cell.detail), ""])
        for failure in found:
            lines.append(f"- {md(failure.where)} ({md(failure.outcome)}): {md(failure.detail) or 'no detail'}")
        if cell.image is not None and cell.image.digest:
            came = mirror_words.via(cell.image.mirror, cell.image.fallback)
            via = f" ({md(came)})" if came else ""
            lines.append(f"- image {md(cell.image.reference)} for {md(cell.image.arch)}: {md(cell.image.digest)}{via}")
        lines.append("")
        if cell.log_tail:
            lines.extend(["<details><summary>last log lines</summary>", ""])
            lines.extend(code_block(cell.log_tail[-LOG_LINES:]))
            lines.extend(["", "</details>", ""])
    return lines


def bench_section(cell: CellResult, bench: BenchResult) -> list[str]:
    where = f"{md(bench.tool)} {md(target_words(bench.target))}, profile {md(bench.profile)}"
    if bench.cpu_model:
        where += f", {md(bench.cpu_model)}"
    if bench.cpus:
        where += f", {bench.cpus} CPUs"
    lines = [f"### {md(cell.component)} on {md(cell.arch)}", "", where, "", md(bench_conditions(bench)), ""]
    if bench.emulated or cell.emulated:
        lines.extend(
            [
                f"> **{EMULATED_MARK} Emulated:** these numbers measure the emulator, not the CPU. "
                "They are not performance and are never compared.",
                "",
            ]
        )
    rows = []
    for s in bench.series:
        rows.append(
            [
                md(s.workload),
                md(s.access),
                str(s.threads),
                number(s.median_tps, 1),
                number(s.median_qps, 1),
                number(s.median_p95_ms, 2),
                cv_text(s),
                runs_text(s),
            ]
        )
    lines.extend(
        table(["workload", "access", "threads", "tps", "qps", "p95 ms", "CV", "runs"], rows, right=range(2, 8))
    )
    lines.append("")
    return lines


def comparison(report: Report, result: Comparison) -> list[str]:
    if not result.tables and not result.absent:
        return []
    lines = ["## arm64 vs amd64", ""]
    for t in result.tables:
        lines.extend([f"### {md(compare_heading(t))}", "", md(compare_hosts(t)), ""])
        columns = columns_for(t)
        rows = [[c.text(r) for c in columns] for r in t.rows]
        lines.extend(table([c.heading(t) for c in columns], rows, right=range(len(columns))))
        lines.append("")
    for view in same_cost(report, result):
        lines.extend([f"### Same cost: {md(view.arm64.host)} vs {md(view.amd64.host)}", "", md(headline(view)), ""])
        lines.extend(f"- {md(line_text(view, line))}" for line in view.lines)
        lines.append("")
    lines.extend(f"- {md(note)}" for note in price_notes(report))
    if price_notes(report):
        lines.append("")
    if result.absent:
        lines.extend(["Not compared:", ""])
        lines.extend(f"- {md(reason)}" for reason in result.absent)
        lines.append("")
    return lines


def binaries(report: Report) -> list[str]:
    """The build audit: a row per program, then each cell's findings."""
    cells = audited_cells(report)
    if not cells:
        return []
    lines = ["## Binaries (build audit)", "", md(AUDIT_INTRO), ""]
    lines.extend(table(list(BINARY_HEADER), [[md(v) for v in row] for row in binary_rows(report)]))
    lines.extend(["", md(SEVERITY_LEGEND), ""])
    if targets_intro(report):
        lines.extend([md(targets_intro(report)), ""])
    for cell in cells:
        lines.append(f"- **{md(cell.id)}** ({md(audit_about(cell))})")
        lines.extend(f"  - {md(line)}" for line in finding_lines(cell))
        lines.extend(f"  - on targets: {md(line)}" for line in cell_target_lines(cell))
    lines.append("")
    return lines


def platforms(report: Report) -> list[str]:
    """Platform fitness: what a container of each arch saw on each host, and the hazards."""
    versions = docker_versions(report)
    rows = [[md(v) for v in platform_row(p, versions.get(p.host, ""))] for p in platforms_in_order(report)]
    lines = ["## Platform fitness", ""]
    lines.extend(table(list(PLATFORM_HEADER), rows, right=(3, 4, 7, 10)))
    lines.append("")
    hazards = platform_hazards(report)
    if hazards:
        lines.extend(f"- {md(h)}" for h in hazards)
        lines.append("")
    return lines


def drivers(report: Report) -> list[str]:
    """Driver rows: each one's packaging verdict next to its runtime result."""
    cells = driver_cells(report)
    if not cells:
        return []
    return ["## Drivers", "", *table(list(DRIVER_HEADER), [[md(v) for v in driver_row(c)] for c in cells]), ""]


def rests_on(report: Report, level: str = "##") -> list[str]:
    """What each finished cell's verdict rests on, a line each (report/coverage_words.py)."""
    lines = rests_on_lines(report)
    if not lines:
        return []
    return [f"{level} {RESTS_ON_TITLE}", "", *(f"- {md(line)}" for line in lines), ""]


def migration(report: Report, with_rests_on: bool = True) -> list[str]:
    """The migration plan: per component and arch what to do, and which arch pins can
    go; tables meant to be pasted into a ticket (`ecoready plan` prints this alone, with
    what each verdict rests on; the whole report says that once, in its own section)."""
    steps = plan_steps(report)
    lines = ["## Migration plan", "", "### What to change, in order", ""]
    todo = actions(report)
    lines.extend(f"{n}. {md(text)}" for n, text in enumerate(todo, 1))
    if not todo:
        lines.append("Nothing to change: every component is ready on every arch as pinned.")
    lines.extend(["", "### Every component and arch", ""])
    lines.extend(table(list(PLAN_HEADER), [[md(v) for v in step_row(s)] for s in steps]))
    lines.append("")
    pins = plan_pins(report, steps)
    if pins:
        lines.extend(["### Arch pins (compose `platform:`, Kubernetes node selectors)", ""])
        lines.extend(table(list(PIN_HEADER), [[md(v) for v in pin_row(p)] for p in pins]))
        lines.append("")
    on_targets = plan_target_lines(report)
    if on_targets:
        lines.extend(["### On the target CPUs the matrix names", ""])
        lines.extend(f"- {md(text)}" for text in on_targets)
        lines.append("")
    if with_rests_on:
        lines.extend(rests_on(report, "###"))
    return lines


def render(report: Report) -> str:
    heading = f"{md(report.title)}: ecoready readiness report" if report.title else "ecoready readiness report"
    lines = [f"# {heading}", "", md(run_line(report)), ""]
    lines.extend(answer(report))
    lines.extend(grid(report))
    lines.extend(["", f"**{md(counts_line(report))}**", "", legend(report), ""])
    lines.extend(failed(report))
    lines.extend(rests_on(report))
    lines.extend(drivers(report))
    benched = bench_cells(report)
    lines.extend(["## Benchmarks", ""])
    if not benched:
        lines.extend([md(no_bench_sentence(report)), ""])
    for cell in benched:
        assert cell.bench is not None
        lines.extend(bench_section(cell, cell.bench))
    if benched:
        lines.extend(comparison(report, compare(report)))
    lines.extend(binaries(report))
    compared = section_lines(report)
    if compared:
        lines.extend(["## Parity across arches", "", *(f"- {md(line)}" for line in compared), ""])
    if report.hosts:
        lines.extend(["## Hosts", ""])
        lines.extend(f"- {md(host_line(h))}" for h in report.hosts)
        lines.append("")
    if report.platforms:
        lines.extend(platforms(report))
    if report.notes:
        lines.extend(["## Notes", ""])
        lines.extend(f"- {md(note.text)}" for note in report.notes)
        lines.append("")
    if report.migration.origins:
        lines.extend(migration(report, with_rests_on=False))
    return "\n".join(lines).rstrip("\n") + "\n"
