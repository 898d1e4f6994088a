"""The comparison view (`c`): arm64 vs amd64 per component, workload and access, threads
as rows, as the #mysqlonarm posts tabulated them: tps on each arch, arm64 scaled to amd64's
clock, the percentage, and tps per USD-hour. Only native numbers are compared (`report/cost.py`
leaves emulated cells out and says why)."""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.style import Style
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Static

from ecoready.domain.model import Report
from ecoready.domain.text import inert
from ecoready.report.cost import CompareTable, Comparison, columns_for, compare, price_notes
from ecoready.report.samecost import headline, line_text, same_cost
from ecoready.ui.tui.bars import bar_chart
from ecoready.ui.tui.detail import plain


def table_renderable(table: CompareTable, width: int) -> RenderableType:
    title = Text(
        inert(f"{table.component} · {table.workload} · {table.access} · {table.target}"),
        style=Style(bold=True, underline=True),
    )
    hosts = Text(inert(f"arm64 on {table.arm64_host}, amd64 on {table.amd64_host}"), style=Style(dim=True))
    grid = Table(box=None, header_style="bold", pad_edge=False)
    columns = columns_for(table)
    for column in columns:
        grid.add_column(column.label(table), justify="right", no_wrap=True)
    bold = Style(bold=True)
    for row in table.rows:
        cells = [(c.text(row, missing="–"), c.digits is None and c.value(row) is not None) for c in columns]
        grid.add_row(*(Text(text, style=bold if percent else "") for text, percent in cells))
    chart = bar_chart(
        [
            ("arm64", [(r.threads, r.arm64_tps) for r in table.rows]),
            ("amd64", [(r.threads, r.amd64_tps) for r in table.rows]),
        ],
        min(width, 90),
    )
    return Group(title, hosts, grid, Text("tps over threads", style=Style(bold=True)), Text("\n".join(chart)), Text(""))


def comparison_renderable(report: Report, comparison: Comparison, width: int) -> RenderableType:
    parts: list[RenderableType] = []
    if not comparison.tables:
        parts.append(
            Text(
                "Nothing to compare yet: a comparison needs a benchmark (profile quick or full) that ran "
                "natively on both arm64 and amd64 (a host of each arch under [[hosts]]).\n",
                style=Style(italic=True),
            )
        )
    parts.extend(table_renderable(t, width) for t in comparison.tables)
    for view in same_cost(report, comparison):
        title = inert(f"same cost: {view.arm64.host} vs {view.amd64.host}")
        parts.append(Text(title, style=Style(bold=True, underline=True)))
        parts.append(Text(inert(headline(view))))
        parts.extend(Text(inert(f"• {line_text(view, line)}")) for line in view.lines)
        parts.append(Text(""))
    parts.extend(Text(inert(note), style=Style(dim=True)) for note in price_notes(report))
    if comparison.absent:
        parts.append(Text("left out", style=Style(bold=True, underline=True)))
        parts.extend(Text(inert(f"• {sentence}")) for sentence in comparison.absent)
    return Group(*parts)


class CompareScreen(Screen[None]):
    BINDINGS = [
        Binding("escape", "app.pop_screen", "Back"),
        Binding("c", "app.pop_screen", "Back", show=False),
    ]

    def __init__(self, report: Report) -> None:
        super().__init__()
        self.report = report

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="compare-scroll"):
            yield Static(Text("arm64 vs amd64", style=Style(bold=True)), id="compare-title")
            yield Static(id="compare-body")
        yield Footer(compact=True, show_command_palette=False)

    def on_mount(self) -> None:
        self.show(self.report)
        self.query_one("#compare-scroll").focus()

    def show(self, report: Report) -> None:
        self.report = report
        self.query_one("#compare-body", Static).update(
            comparison_renderable(report, compare(report), self.app.size.width - 4)
        )

    def body_text(self, width: int = 160) -> str:
        """What the view shows, as plain text (for tests and screen readers)."""
        return plain(comparison_renderable(self.report, compare(self.report), width), width)
