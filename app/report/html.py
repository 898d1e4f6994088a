"""Report -> one self-contained HTML file (pure).

No script, font, stylesheet or image is loaded from anywhere: styles are inline, charts
are inline SVG, and a Content-Security-Policy forbids everything else, so the file reads
the same offline and without JavaScript. Per-cell details are <details> elements (they
open and close natively). Every value from a container, a config or a report file goes
through `esc()` (inert, then HTML-escaped); nothing is ever inserted unescaped.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from html import escape

from ecoready.domain.model import BenchSeries, CellResult, Report, Status
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
from ecoready.report.cost import Comparison, columns_for, compare, compare_heading, compare_hosts, price_notes
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
from ecoready.report.parity_words import (
    PARITY_MARK,
    PARITY_MEANING,
    cell_finding,
    compared_line,
    differs,
    section_lines,
)
from ecoready.report.reasons import advice_by_cell
from ecoready.report.samecost import headline, line_text, same_cost
from ecoready.report.status_words import (
    COLOUR,
    EMULATED_MARK,
    EMULATED_MEANING,
    GLYPH,
    MEANING,
    packaging_line,
    short_text,
    shows_emulated,
    size_text,
)
from ecoready.report.svg_chart import EMULATED_COLOUR, Line, colour_for, line_chart
from ecoready.report.targets import cell_target_lines, targets_intro
from ecoready.report.text_grid import column_title, host_mark
from ecoready.report.troubles import infra_lines
from ecoready.report.verdict import arch_verdicts

# present.COLOUR names (Rich's) -> CSS colours with enough contrast on white
CSS_COLOUR: Mapping[str, str] = {
    "grey50": "#6e7781",
    "cyan": "#0a7a7a",
    "green": "#1a7f37",
    "yellow": "#9a6700",
    "red": "#cf222e",
    "magenta": "#8250df",
    "dark_orange": "#bc4c00",
    "bright_red": "#e3116c",
}
LOG_LINES = 40

STYLE = """
:root { color-scheme: light; }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", "DejaVu Sans", sans-serif; color: #1f2328;
  margin: 24px auto; max-width: 1200px; padding: 0 16px; background: #fff; }
h1 { font-size: 22px; margin: 0 0 4px; } h2 { font-size: 18px; margin: 28px 0 8px; border-bottom: 1px solid #d0d7de; }
h3 { font-size: 15px; margin: 18px 0 6px; }
.meta { color: #57606a; margin: 0 0 16px; }
table { border-collapse: collapse; margin: 8px 0; }
th, td { border: 1px solid #d0d7de; padding: 4px 8px; text-align: left; vertical-align: top; }
thead th { background: #f6f8fa; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
table.grid { min-width: 60%; }
table.grid th.component small { display: block; font-weight: normal; color: #57606a; }
table.grid tr.category th { background: #f6f8fa; text-transform: uppercase; font-size: 12px; letter-spacing: .05em; }
table.grid td.cell { min-width: 200px; border-left: 6px solid var(--c); background: var(--bg); }
td.cell summary { cursor: pointer; font-weight: 600; color: var(--c); }
td.cell .glyph { font-size: 16px; }
.emu { color: #57606a; font-weight: normal; }
.cell-body { color: #1f2328; font-weight: normal; margin-top: 6px; max-width: 560px; overflow-wrap: anywhere; }
.cell-body table { font-size: 12px; }
pre { background: #f6f8fa; border: 1px solid #d0d7de; padding: 8px; overflow-x: auto; font-size: 12px;
  white-space: pre-wrap; word-break: break-all; max-height: 320px; }
.legend { display: flex; flex-wrap: wrap; gap: 6px 16px; margin: 8px 0; padding: 0; list-style: none; }
.legend li { display: flex; align-items: center; gap: 6px; }
.swatch { display: inline-block; width: 14px; height: 14px; border-radius: 3px; background: var(--c); }
.counts { font-weight: 600; }
.warning { border-left: 4px solid #9a6700; background: #fff8c5; padding: 6px 10px; }
.failure-list li { margin: 2px 0; }
.charts { display: flex; flex-wrap: wrap; gap: 8px 24px; }
.chart { display: block; margin: 8px 0 16px; max-width: 100%; height: auto; }
.chart-title { font-weight: 600; font-size: 13px; fill: #1f2328; }
.chart-banner { font-size: 15px; font-weight: 700; fill: #6e7781; opacity: .55; }
.tick, .legend-text { font-size: 11px; fill: #57606a; } .axis { font-size: 12px; fill: #1f2328; }
.grid-line { stroke: #eaeef2; }
"""


def esc(text: object) -> str:
    """Inert, then HTML-escaped (quotes too: safe in attributes as well as in text)."""
    return escape(inert(str(text), 0))


def css_colour(status: Status) -> str:
    return CSS_COLOUR.get(COLOUR[status], "#57606a")


def tint(colour: str, keep: float = 0.12) -> str:
    """`colour` mixed with white (a light cell background computed here, not by the browser)."""
    r, g, b = (int(colour[i : i + 2], 16) for i in (1, 3, 5))
    mix = [round(255 - (255 - c) * keep) for c in (r, g, b)]
    return "#" + "".join(f"{c:02x}" for c in mix)


def status_style(status: Status) -> str:
    colour = css_colour(status)
    return f"--c: {colour}; --bg: {tint(colour)}"


def table(header: Sequence[str], rows: Sequence[Sequence[str]], numeric: Sequence[int] = ()) -> str:
    """Cells must already be escaped HTML."""
    head = "".join(f"<th{' class=num' if i in numeric else ''}>{h}</th>" for i, h in enumerate(header))
    body = "".join(
        "<tr>" + "".join(f"<td{' class=num' if i in numeric else ''}>{v}</td>" for i, v in enumerate(row)) + "</tr>"
        for row in rows
    )
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def cell_body(cell: CellResult) -> str:
    parts = []
    if cell.detail:
        parts.append(f"<p>{esc(cell.detail)}</p>")
    if shows_emulated(cell):
        parts.append(f"<p class=emu>{EMULATED_MARK} {esc(EMULATED_MEANING)}</p>")
    if cell.parity is not None:
        parts.append(f"<p class=parity>{PARITY_MARK if differs(cell) else '='} {esc(compared_line(cell))}</p>")
    if cell.packaging is not None:
        packaging = esc(packaging_line(cell.packaging))
        parts.append(f"<p>packaging: {packaging}<br><small>{esc(cell.packaging.detail)}</small></p>")
    rows = []
    for stage in cell.stages:
        outcome = stage.outcome.value if stage.outcome else "running"
        rows.append([esc(stage.stage.value), esc(outcome), f"{stage.seconds:.1f}s", esc(stage.shown)])
        for check in stage.checks:
            rows.append(["", esc(f"{check.name}: {check.outcome.value}"), f"{check.seconds:.2f}s", esc(check.detail)])
    if rows:
        parts.append(table(["stage", "outcome", "time", "detail"], rows, numeric=[2]))
    if cell.image is not None:
        image = cell.image
        facts = [f"{esc(image.reference)} for {esc(image.arch)}"]
        if image.digest:
            facts.append(f"digest {esc(image.digest)}")
        if image.size:
            facts.append(size_text(image.size))
        if image.found_as:
            facts.append(f"found as {esc(image.found_as)}")
        if image.mirror:
            facts.append(esc(mirror_words.via(image.mirror, image.fallback)))
        parts.append(f"<p>image: {', '.join(facts)}</p>")
    if cell.audit is not None:
        items = "".join(f"<li>{esc(line)}</li>" for line in finding_lines(cell))
        parts.append(f"<p>build audit ({esc(audit_about(cell))}):</p><ul class=findings>{items}</ul>")
    parts.append(f"<p>host {esc(cell.host)}, started {esc(cell.started_at or '-')}</p>")
    if cell.log_tail:
        lines = "\n".join(esc(line) for line in cell.log_tail[-LOG_LINES:])
        parts.append(f"<details><summary>last log lines</summary><pre>{lines}</pre></details>")
    return "".join(parts)


def grid_cell(cell: CellResult | None, where: str = "") -> str:
    if cell is None:
        return "<td class=none>not in the matrix</td>"
    emu = f' <span class=emu title="emulated">{EMULATED_MARK}</span>' if shows_emulated(cell) else ""
    emu += f' <span class=parity title="{esc(cell_finding(cell))}">{PARITY_MARK}</span>' if differs(cell) else ""
    emu += f" <small>{esc(where.strip())}</small>" if where else ""
    label = esc(short_text(cell))
    return (
        f'<td class="cell st-{cell.status.value}" style="{status_style(cell.status)}">'
        f"<details><summary>{label}{emu}</summary><div class=cell-body>{cell_body(cell)}</div></details></td>"
    )


def grid(report: Report) -> str:
    arches = list(arches_of(report))
    head = "<th>component</th>" + "".join(f"<th>{esc(column_title(report, a))}</th>" for a in arches)
    rows = []
    category = None
    for cat, cid, name, cells in grid_rows(report):
        if cat is not category:
            rows.append(f'<tr class=category><th colspan="{len(arches) + 1}">{esc(cat.value)}</th></tr>')
            category = cat
        sub = f"<small>{esc(name)}</small>" if name and name != cid else ""
        row = "".join(grid_cell(cells.get(a), host_mark(report, cells[a]) if a in cells else "") for a in arches)
        rows.append(f"<tr><th scope=row class=component>{esc(cid)}{sub}</th>{row}</tr>")
    return f"<table class=grid><thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"


def legend(report: Report) -> str:
    seen = {c.status for c in report.cells.values()}
    items = [
        f'<li><span class=swatch style="{status_style(s)}"></span>'
        f"<span>{GLYPH[s]} <b>{s.value}</b>: {esc(MEANING[s])}</span></li>"
        for s in Status
        if s in seen or s in (Status.READY, Status.PARTIAL, Status.BROKEN, Status.MISSING, Status.ERROR)
    ]
    items.append(f"<li><span>{EMULATED_MARK} {esc(EMULATED_MEANING)}</span></li>")
    if any(differs(c) for c in report.cells.values()):
        items.append(f"<li><span>{PARITY_MARK} {esc(PARITY_MEANING)}</span></li>")
    return f'<ul class=legend aria-label="legend">{"".join(items)}</ul>'


def answer(report: Report) -> str:
    """The verdict per arch first, then each registry that could not be asked, once."""
    items = [
        f"<li><b>{esc(line.split(' ', 1)[0])}</b> {esc(line.split(' ', 1)[1])}</li>" for line in arch_verdicts(report)
    ]
    items += [f"<li>⚠ {esc(line)}</li>" for line in infra_lines(report)]
    return f"<ul class=verdicts>{''.join(items)}</ul>" if items else ""


def failed(report: Report) -> str:
    cells = failing_cells(report)
    if not cells:
        return ""
    out = ["<h2>What failed</h2>"]
    advised = advice_by_cell(report)
    for cell in cells:
        emu = f" <span class=emu>{EMULATED_MARK} emulated</span>" if shows_emulated(cell) else ""
        out.append(f"<h3>{GLYPH[cell.status]} {esc(cell.component)} on {esc(cell.arch)}: {cell.status.value}{emu}</h3>")
        items = "".join(
            f"<li><b>{esc(f.where)}</b> ({esc(f.outcome)}): {esc(f.detail) or 'no detail'}</li>" for f in failures(cell)
        )
        if cell.id in advised:
            why, todo = advised[cell.id].reason, advised[cell.id].remedy
            items = f"<li><b>why:</b> {esc(why)}</li><li><b>what to do:</b> {esc(todo)}</li>{items}"
        out.append(f"<ul class=failure-list>{items}</ul>")
    return "".join(out)


def series_rows(series: Sequence[BenchSeries]) -> list[list[str]]:
    return [
        [
            esc(s.workload),
            esc(s.access),
            str(s.threads),
            number(s.median_tps, 1),
            number(s.median_qps, 1),
            number(s.median_p95_ms, 2),
            cv_text(s),
            runs_text(s),
        ]
        for s in series
    ]


def charts(cells: Sequence[CellResult]) -> str:
    """One chart per (component, workload, access) with a line per native arch; emulated
    cells get charts of their own, hatched and bannered, never next to native lines."""
    groups: dict[tuple[str, str, str, bool], list[Line]] = {}
    for i, cell in enumerate(cells):
        assert cell.bench is not None
        emulated = cell.emulated or cell.bench.emulated
        by_key: dict[tuple[str, str], list[tuple[int, float]]] = {}
        for s in cell.bench.series:
            if all(r.ok for r in s.runs):
                by_key.setdefault((s.workload, s.access), []).append((s.threads, s.median_tps))
        for (workload, access), points in by_key.items():
            label = f"{cell.arch} (emulated)" if emulated else cell.arch
            colour = EMULATED_COLOUR if emulated else colour_for(cell.arch, i)
            line = Line(inert(label, 0), tuple(sorted(points)), colour, dashed=emulated)
            groups.setdefault((cell.component, workload, access, emulated), []).append(line)
    out = []
    for n, ((component, workload, access, emulated), lines) in enumerate(sorted(groups.items())):
        title = f"{component}: {workload}, {access}"
        if emulated:
            title = f"{title} (emulated)"
        out.append(line_chart(inert(title, 0), lines, emulated=emulated, chart_id=str(n)))
    return f"<div class=charts>{''.join(out)}</div>"


def benchmarks(report: Report) -> str:
    cells = bench_cells(report)
    out = ["<h2>Benchmarks</h2>"]
    if not cells:
        out.append(f"<p>{esc(no_bench_sentence(report))}</p>")
        return "".join(out)
    out.append(charts(cells))
    for cell in cells:
        assert cell.bench is not None
        bench = cell.bench
        out.append(f"<h3>{esc(cell.component)} on {esc(cell.arch)}</h3>")
        where = f"{esc(bench.tool)} {esc(target_words(bench.target))}, profile {esc(bench.profile)}"
        if bench.cpu_model:
            where += f", {esc(bench.cpu_model)}"
        if bench.cpus:
            where += f", {bench.cpus} CPUs"
        out.append(f"<p>{where}</p><p>{esc(bench_conditions(bench))}</p>")
        if bench.emulated or cell.emulated:
            out.append(
                f"<p class=warning><b>{EMULATED_MARK} Emulated:</b> these numbers measure the emulator, not the CPU. "
                "They are not performance and are never compared.</p>"
            )
        header = ["workload", "access", "threads", "tps", "qps", "p95 ms", "CV", "runs"]
        out.append(table(header, series_rows(bench.series), numeric=range(2, 8)))
    out.append(comparison(report, compare(report)))
    return "".join(out)


def comparison(report: Report, result: Comparison) -> str:
    if not result.tables and not result.absent:
        return ""
    out = ["<h2>arm64 vs amd64</h2>"]
    for t in result.tables:
        out.append(f"<h3>{esc(compare_heading(t))}</h3><p>{esc(compare_hosts(t))}</p>")
        columns = columns_for(t)
        rows = [[c.text(r) for c in columns] for r in t.rows]
        out.append(table([c.heading(t) for c in columns], rows, numeric=range(len(columns))))
    for view in same_cost(report, result):
        out.append(f"<h3>Same cost: {esc(view.arm64.host)} vs {esc(view.amd64.host)}</h3><p>{esc(headline(view))}</p>")
        out.append("<ul>" + "".join(f"<li>{esc(line_text(view, line))}</li>" for line in view.lines) + "</ul>")
    notes = price_notes(report)
    if notes:
        out.append("<ul>" + "".join(f"<li>{esc(n)}</li>" for n in notes) + "</ul>")
    if result.absent:
        out.append("<p>Not compared:</p><ul>" + "".join(f"<li>{esc(a)}</li>" for a in result.absent) + "</ul>")
    return "".join(out)


def binaries(report: Report) -> str:
    """The build audit: a row per program, then each cell's findings."""
    cells = audited_cells(report)
    rows = [[esc(v) for v in row] for row in binary_rows(report)]
    out = ["<h2>Binaries (build audit)</h2>", f"<p>{esc(AUDIT_INTRO)}</p>", table(list(BINARY_HEADER), rows)]
    if targets_intro(report):
        out.append(f"<p>{esc(targets_intro(report))}</p>")
    out.append(f"<p class=meta>{esc(SEVERITY_LEGEND)}</p><ul class=findings>")
    for cell in cells:
        items = "".join(f"<li>{esc(line)}</li>" for line in finding_lines(cell))
        items += "".join(f"<li>on targets: {esc(line)}</li>" for line in cell_target_lines(cell))
        out.append(f"<li><b>{esc(cell.id)}</b> ({esc(audit_about(cell))})<ul>{items}</ul></li>")
    out.append("</ul>")
    return "".join(out)


def platforms(report: Report) -> str:
    """Platform fitness: what a container of each arch saw on each host, and the hazards."""
    versions = docker_versions(report)
    rows = [[esc(v) for v in platform_row(p, versions.get(p.host, ""))] for p in platforms_in_order(report)]
    out = ["<h2>Platform fitness</h2>", table(list(PLATFORM_HEADER), rows, numeric=(3, 4, 7, 10))]
    hazards = platform_hazards(report)
    if hazards:
        out.append("<ul class=hazards>" + "".join(f"<li>{esc(h)}</li>" for h in hazards) + "</ul>")
    return "".join(out)


def drivers(report: Report) -> str:
    """Driver rows: each one's packaging verdict next to its runtime result."""
    cells = driver_cells(report)
    if not cells:
        return ""
    return "<h2>Drivers</h2>" + table(list(DRIVER_HEADER), [[esc(v) for v in driver_row(c)] for c in cells])


def rests_on(report: Report) -> str:
    """What each finished cell's verdict rests on, a line each (report/coverage_words.py)."""
    lines = rests_on_lines(report)
    if not lines:
        return ""
    return f"<h2>{esc(RESTS_ON_TITLE)}</h2><ul>" + "".join(f"<li>{esc(line)}</li>" for line in lines) + "</ul>"


def migration(report: Report) -> str:
    """The migration plan and the arch pins that can go (report/migration.py)."""
    steps = plan_steps(report)
    todo = actions(report)  # what `ecoready plan` and the Markdown list first, in the same order
    ordered = "<ol>" + "".join(f"<li>{esc(text)}</li>" for text in todo) + "</ol>"
    nothing = "<p>Nothing to change: every component is ready on every arch as pinned.</p>"
    parts = [
        "<h2>Migration plan</h2>",
        "<h3>What to change, in order</h3>",
        ordered if todo else nothing,
        "<h3>Every component and arch</h3>",
        table([esc(h) for h in PLAN_HEADER], [[esc(v) for v in step_row(s)] for s in steps]),
    ]
    pins = plan_pins(report, steps)
    if pins:
        parts.append("<h3>Arch pins (compose <code>platform:</code>, Kubernetes node selectors)</h3>")
        parts.append(table([esc(h) for h in PIN_HEADER], [[esc(v) for v in pin_row(p)] for p in pins]))
    return "".join(parts)


def render(report: Report) -> str:
    title = f"ecoready report: {report.title or report.matrix}"
    heading = f"{report.title}: ecoready readiness report" if report.title else "ecoready readiness report"
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        # nothing may load or run: inline styles only
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">",
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{esc(title)}</title><style>{STYLE}</style></head><body>",
        f"<h1>{esc(heading)}</h1>",
        f"<p class=meta>{esc(run_line(report))}</p>",
        answer(report),
        grid(report),
        f"<p class=counts>{esc(counts_line(report))}</p>",
        legend(report),
        failed(report) + rests_on(report) + drivers(report),
        benchmarks(report),
    ]
    if audited_cells(report):
        parts.append(binaries(report))
    compared = section_lines(report)
    if compared:
        parts.append(
            "<h2>Parity across arches</h2><ul>" + "".join(f"<li>{esc(line)}</li>" for line in compared) + "</ul>"
        )
    if report.hosts:
        parts.append("<h2>Hosts</h2><ul>" + "".join(f"<li>{esc(host_line(h))}</li>" for h in report.hosts) + "</ul>")
    if report.platforms:
        parts.append(platforms(report))
    if report.notes:
        parts.append("<h2>Notes</h2><ul>" + "".join(f"<li>{esc(n.text)}</li>" for n in report.notes) + "</ul>")
    if report.migration.origins:
        parts.append(migration(report))
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"
