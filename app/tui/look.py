"""How cells look in the TUI: status styles taken from the current theme (so dark and light
both read well), the spinner, and the compare column's headline. The words and glyphs come
from `app.present`, shared with the headless summary, so under NO_COLOR the glyphs still
carry the meaning."""

from __future__ import annotations

from collections.abc import Mapping

from rich.style import Style
from rich.text import Text
from textual.theme import Theme

from app.cost import CompareTable, Comparison
from app.model import CellResult, Status
from app.present import EMULATED_MARK, GLYPH, cell_text

SPINNER = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"

# Which comparison a row's compare cell shows first: the mixed workload says the most.
HEADLINE_WORKLOADS = ("oltp_read_write", "oltp_read_only", "oltp_point_select")
NOTHING_TO_COMPARE = "–"
# `✔ ready 123.4s ᵉ` needs 16 columns; narrower columns say `✔ 123.4s ᵉ` in every row.
COMPACT_READY_BELOW = 16


def palette(theme: Theme) -> Mapping[Status, Style]:
    """Status -> style from the theme's semantic colours."""
    muted = Style(dim=True)
    success = Style(color=theme.success or "green")
    warning = Style(color=theme.warning or "yellow")
    error = Style(color=theme.error or "red")
    return {
        Status.PENDING: muted,
        Status.RUNNING: Style(color=theme.accent or theme.primary, bold=True),
        Status.READY: success,
        Status.PARTIAL: warning,
        Status.BROKEN: error + Style(bold=True),
        Status.MISSING: Style(color=theme.secondary or theme.primary),
        Status.TIMEOUT: warning + Style(bold=True),
        Status.ERROR: error + Style(bold=True, underline=True),
        Status.SKIPPED: muted,
    }


def cell_label(cell: CellResult, width: int, frame: int | None = None) -> str:
    """`✔ ready 4.1s`, `▶ start ⠹ ᵉ` ... fitted to `width`; `frame` animates running cells.

    When the words do not fit, the glyph, the status and the emulated mark stay and the
    detail goes first (a detail cut to a few letters says nothing)."""
    tail = f" {EMULATED_MARK}" if cell.emulated else ""
    text = cell_text(cell, 10_000).removesuffix(tail)
    if cell.status is Status.RUNNING and frame is not None:
        text += f" {SPINNER[frame % len(SPINNER)]}"
    if cell.status is Status.READY and width < COMPACT_READY_BELOW:
        text = f"{GLYPH[cell.status]} {cell.seconds:.1f}s"  # the same form down the whole column
    if len(text) + len(tail) <= width:
        return text + tail
    if cell.status is Status.READY:
        text = f"{GLYPH[cell.status]} {cell.seconds:.1f}s"
    else:
        head, _, detail = text.partition(": ")
        room = width - len(head) - len(tail) - 2
        text = head if room < 8 or not detail else f"{head}: {detail[: room - 1]}…"
    if len(text) + len(tail) > width:
        text = text[: max(1, width - len(tail) - 1)] + "…"
    return text + tail


def cell_renderable(cell: CellResult, width: int, styles: Mapping[Status, Style], frame: int | None = None) -> Text:
    return Text(cell_label(cell, width, frame), style=styles[cell.status], no_wrap=True, overflow="ellipsis")


def _headline_table(tables: list[CompareTable]) -> CompareTable | None:
    for workload in HEADLINE_WORKLOADS:
        for table in tables:
            if table.workload == workload and table.rows:
                return table
    return next((t for t in tables if t.rows), None)


def compare_label(comparison: Comparison, component: str, cells: Mapping[str, CellResult]) -> str:
    """arm64 / amd64 for one row at the highest common thread count (tps, then tps per USD).

    Only native numbers are compared; an emulated cell says so instead of a ratio."""
    table = _headline_table([t for t in comparison.tables if t.component == component])
    if table is not None:
        row = table.rows[-1]
        text = f"tps ×{row.arm64_tps / row.amd64_tps:.2f}" if row.amd64_tps > 0 else "tps –"
        if row.arm64_per_usd is not None and row.amd64_per_usd:
            text += f" $ ×{row.arm64_per_usd / row.amd64_per_usd:.2f}"
        return text
    if any(c.emulated for c in cells.values()) and any(c.bench is not None for c in cells.values()):
        return f"{EMULATED_MARK} emulated: n/a"
    return NOTHING_TO_COMPARE


def compare_renderable(text: str) -> Text:
    dim = text == NOTHING_TO_COMPARE or text.startswith(EMULATED_MARK)
    return Text(text, style=Style(dim=dim), no_wrap=True, overflow="ellipsis")
