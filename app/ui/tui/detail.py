"""The detail view of one cell: a driver row's packaging verdict, stages with times, each
check, the image and how it was found, the build audit of its programs, the benchmark
(table and tps-over-threads chart), and the container log tail.

Everything shown here may come from a container or a config, so it goes in as `Text`
(never parsed as markup) after `inert` (no escape sequences, no control characters).
Emulated benchmark numbers are marked and get no chart: they measure qemu, not the component.
"""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence

from rich.console import Console, Group, RenderableType
from rich.style import Style
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Static

from ecoready.domain.images import ImageInfo
from ecoready.domain.model import BenchResult, CellResult, Outcome, Report, Stage, Status
from ecoready.domain.packaging import Packaging
from ecoready.domain.text import inert
from ecoready.report import mirror_words
from ecoready.report.binaries import BINARY_HEADER, audit_about, binary_row, finding_lines
from ecoready.report.coverage_words import rests_on
from ecoready.report.exporter_text import bench_conditions, cv_text
from ecoready.report.parity_words import compared_lines
from ecoready.report.reasons import Advice, advice_for
from ecoready.report.status_words import (
    EMULATED_MARK,
    GLYPH,
    packaging_text,
    shows_emulated,
    size_text,
    timed,
    took_text,
)
from ecoready.report.targets import cell_target_lines
from ecoready.ui.tui.bars import bar_chart

OUTCOME_GLYPH: Mapping[Outcome | None, str] = {
    None: GLYPH[Status.RUNNING],
    Outcome.PASS: "✔",
    Outcome.FAIL: "✘",
    Outcome.SKIP: "–",
    Outcome.TIMEOUT: "⧗",
    Outcome.ERROR: "⚠",
}


def safe(text: str, style: str | Style = "") -> Text:
    return Text(inert(text), style=style)


def heading(title: str) -> Text:
    return Text(f"\n{title}", style=Style(bold=True, underline=True))


def summary_section(cell: CellResult) -> RenderableType:
    text = Text()
    text.append_text(safe(f"{cell.component} · {cell.arch}", Style(bold=True)))
    if shows_emulated(cell):
        text.append(f" {EMULATED_MARK}emulated", style=Style(italic=True))
    elif cell.emulated and cell.status.finished:  # planned emulated, but nothing of it ran
        text.append(" (to run emulated: it did not run)", style=Style(italic=True))
    text.append(f" on {inert(cell.host) or 'no host'}\n")
    text.append_text(safe(f"{cell.name} · {cell.category.value}\n"))
    if cell.queued:
        text.append(f"{GLYPH[Status.PENDING]} queued (waiting for its turn)", style=Style(bold=True))
    else:
        text.append(f"{GLYPH[cell.status]} {cell.status.value}", style=Style(bold=True))
    if cell.status is Status.RUNNING and cell.stage is not None:
        text.append(f" ({cell.stage.value})")
    if timed(cell) or (cell.status is Status.RUNNING and cell.seconds >= 0.05):
        text.append(f" in {took_text(cell)}")
    if cell.detail:
        detail = cell.detail.removeprefix(f"{cell.status.value}: ")  # `missing: missing: …` reads badly
        text.append_text(safe(f": {detail}"))
    return text


def stages_section(cell: CellResult) -> RenderableType:
    if not cell.stages:
        return Text("not started", style=Style(dim=True))
    table = Table(box=None, show_header=True, header_style="bold", pad_edge=False, expand=False)
    table.add_column("stage")
    table.add_column("", no_wrap=True)
    table.add_column("time", justify="right", no_wrap=True)
    table.add_column("detail", overflow="fold")
    for stage in cell.stages:
        running = stage.outcome is None
        table.add_row(
            Text(stage.stage.value),
            Text(OUTCOME_GLYPH[stage.outcome] + " " + (stage.outcome.value if stage.outcome else "running")),
            Text("" if running else f"{stage.seconds:.2f}s"),
            safe(stage.shown),
        )
        for check in stage.checks:
            table.add_row(
                Text(f"  {check.name}", style=Style(dim=False)),
                Text(OUTCOME_GLYPH[check.outcome] + " " + check.outcome.value),
                Text(f"{check.seconds:.2f}s" if check.seconds else ""),
                safe(check.detail),
            )
    return table


def packaging_section(p: Packaging) -> RenderableType:
    """A driver row's package: the registry's verdict for the arch and how it installed."""
    rows = [
        ("verdict", packaging_text(p)),
        ("driver", f"{p.spec} -> {p.package} {p.version}"),
        ("registry says", p.detail),
        ("install", p.install_said + (" (by an earlier run: nothing installed now)" if p.cached else "")),
    ]
    return key_values(rows)


def key_values(rows: Sequence[tuple[str, str]]) -> Table:
    """Rows of `key  value`, keys dim, the ones without a value left out."""
    table = Table(box=None, show_header=False, pad_edge=False)
    table.add_column(style="dim", no_wrap=True)
    table.add_column(overflow="fold")
    for key, value in rows:
        if value:
            table.add_row(Text(key), safe(value))
    return table


def image_section(image: ImageInfo | None, finished: bool = False) -> RenderableType:
    if image is None:
        why = "none: the image stage found no usable image (see above)" if finished else "not resolved yet"
        return Text(why, style=Style(dim=True))
    rows = [
        ("reference", image.reference),
        ("arch", image.arch),
        ("found as", image.found_as),
        *([("mirror", mirror_words.via(image.mirror, image.fallback))] if image.mirror else []),
        ("digest", image.digest),
        ("index digest", image.index_digest),
        ("size", size_text(image.size)),
        ("local id", image.image_id[:19]),
    ]
    return key_values(rows)


def audit_section(cell: CellResult) -> RenderableType:
    """Each main program as read from the image (a key-value block per program), then the
    findings, worst first."""
    if cell.audit is None:
        why = "not yet"
        if cell.status.finished:
            had = cell.stage_result(Stage.AUDIT) is not None
            why = "none: the audit did not finish (see its stage)" if had else "none: no audit stage for this cell"
        return Text(why, style=Style(dim=True))
    parts: list[RenderableType] = [safe(audit_about(cell), Style(dim=True))]
    for binary in cell.audit.binaries:
        parts.append(key_values(list(zip(BINARY_HEADER, binary_row(cell.id, binary), strict=True))[1:]))
    parts.append(safe("\n".join(finding_lines(cell))))
    on_targets = cell_target_lines(cell)
    if on_targets:
        parts.append(safe("\n".join(f"on targets: {line}" for line in on_targets)))
    return Group(*parts)


def bench_section(bench: BenchResult | None, width: int) -> RenderableType:
    if bench is None:
        return Text("no benchmark (profile smoke, or not a benchmarked kind)", style=Style(dim=True))
    parts: list[RenderableType] = []
    about = f"{bench.tool} · {bench.target} · profile {bench.profile}"
    if bench.zipfian:
        about += f" · zipfian {bench.zipfian}"
    if bench.cpu_model:
        about += f" · {bench.cpu_model}, {bench.cpus} CPUs"
    parts.append(safe(about))
    parts.append(safe(bench_conditions(bench)))
    if bench.emulated:
        parts.append(
            Text(
                f"{EMULATED_MARK} emulated: these numbers measure qemu, not the component's performance",
                style=Style(bold=True, italic=True),
            )
        )
    table = Table(box=None, header_style="bold", pad_edge=False)
    for name in ("workload", "access", "threads", "tps", "qps", "p95 ms", "cv", "retried"):
        table.add_column(name, justify="left" if name in ("workload", "access") else "right", no_wrap=True)
    mark = f" {EMULATED_MARK}" if bench.emulated else ""
    for s in bench.series:
        retried = sum(r.errors for r in s.runs)
        table.add_row(
            safe(s.workload),
            safe(s.access),
            Text(str(s.threads)),
            Text(f"{s.median_tps:,.1f}{mark}"),
            Text(f"{s.median_qps:,.1f}"),
            Text(f"{s.median_p95_ms:.2f}"),
            Text(cv_text(s)),
            Text(str(retried), style=Style(bold=True) if retried else ""),
        )
    parts.append(table)
    if bench.emulated:
        parts.append(Text("no chart: emulated numbers are not performance", style=Style(dim=True)))
        return Group(*parts)
    groups: dict[tuple[str, str], list[tuple[int, float]]] = {}
    for s in bench.series:
        groups.setdefault((s.workload, s.access), []).append((s.threads, s.median_tps))
    for (workload, access), points in groups.items():
        parts.append(safe(f"\ntps over threads · {workload} {access}", Style(bold=True)))
        parts.append(Text("\n".join(bar_chart([("", sorted(points))], width))))
    return Group(*parts)


def log_section(lines: tuple[str, ...]) -> RenderableType:
    if not lines:
        return Text("no log (the container did not start, or the cell is still running)", style=Style(dim=True))
    return Text("\n".join(inert(line) for line in lines), no_wrap=False)


def advice_section(advised: Advice) -> RenderableType:
    text = Text()
    text.append("why: ", style=Style(bold=True))
    text.append_text(safe(advised.reason + "\n"))
    text.append("what to do: ", style=Style(bold=True))
    text.append_text(safe(advised.remedy))
    return text


def detail_renderable(cell: CellResult, width: int, advised: Advice | None = None) -> RenderableType:
    packaging = [heading("packaging"), packaging_section(cell.packaging)] if cell.packaging is not None else []
    answer = [Text(""), advice_section(advised)] if advised is not None else []
    rests = [safe(rests_on(cell), Style(dim=True))] if cell.status.finished else []
    parity = [heading("parity"), safe("\n".join(compared_lines(cell)))] if cell.parity is not None else []
    return Group(
        summary_section(cell),
        *rests,
        *answer,
        *parity,
        *packaging,
        heading("stages"),
        stages_section(cell),
        heading("image"),
        image_section(cell.image, cell.status.finished),
        heading("build audit"),
        audit_section(cell),
        heading("benchmark"),
        bench_section(cell.bench, width),
        heading(f"container log (last {len(cell.log_tail)} lines)" if cell.log_tail else "container log"),
        log_section(cell.log_tail),
    )


class DetailScreen(Screen[None]):
    """One cell, kept current while it runs (the app calls `show` on each tick)."""

    BINDINGS = [
        Binding("escape", "app.pop_screen", "Back"),
        Binding("enter", "app.pop_screen", "Back", show=False),
        Binding("r", "app.rerun", "Rerun"),
    ]

    def __init__(self, cell: CellResult) -> None:
        super().__init__()
        self.cell = cell

    @property
    def cell_id(self) -> str:
        return self.cell.id

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="detail-scroll"):
            yield Static(id="detail-body")
        yield Footer(compact=True, show_command_palette=False)

    def on_mount(self) -> None:
        self.show(self.cell)
        self.query_one("#detail-scroll").focus()

    def show(self, cell: CellResult) -> None:
        self.cell = cell
        width = max(40, self.app.size.width - 4)
        self.query_one("#detail-body", Static).update(detail_renderable(cell, min(width, 100), self.advised()))

    def advised(self) -> Advice | None:
        """Why the cell is not ready and what to do, from the app's report (the migration
        plan's tag searches live there, not in the cell)."""
        report = getattr(self.app, "report", None)
        return advice_for(report, self.cell.id) if isinstance(report, Report) else None

    def body_text(self, width: int = 100) -> str:
        """What the view shows, as plain text (for tests and screen readers)."""
        return plain(detail_renderable(self.cell, width, self.advised()), width)


def plain(renderable: RenderableType, width: int) -> str:
    console = Console(width=width, file=io.StringIO(), color_system=None, record=True)
    console.print(renderable)
    return console.export_text()
