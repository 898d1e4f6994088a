"""How cells look in the TUI: status styles taken from the current theme (so dark and light
both read well), the spinner, and the compare column's headline. The words and glyphs come
from `report/status_words.py`, shared with the headless summary, so under NO_COLOR the glyphs still
carry the meaning."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from rich.style import Style
from rich.text import Text
from textual.theme import Theme

from ecoready.domain.model import CellResult, Status
from ecoready.domain.text import inert
from ecoready.report.cost import CompareTable, Comparison
from ecoready.report.parity_words import PARITY_MARK, differs
from ecoready.report.status_words import EMULATED_MARK, GLYPH, cell_text, shows_emulated, took_text

SPINNER = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"

# Which comparison a row's compare cell shows first: the mixed workload says the most.
HEADLINE_WORKLOADS = ("oltp_read_write", "oltp_read_only", "oltp_point_select")
NOTHING_TO_COMPARE = "–"
# `✔ ready 123.4s ᵉ` needs 16 columns; narrower columns say `✔ 123.4s ᵉ` in every row.
COMPACT_READY_BELOW = 16


def palette(theme: Theme, no_color: bool = False) -> Mapping[Status, Style]:
    """Status -> style from the theme's semantic colours (Textual's dark and light themes
    share success/warning/error, so the light theme differs mostly in its background).

    Under NO_COLOR the styles keep only weight and slant: Textual would turn colours into
    greys, and dark ones (red, magenta) would fade into the background."""
    muted = Style(dim=True)
    if no_color:
        plain, strong = Style(), Style(bold=True)
        return {
            Status.PENDING: muted,
            Status.RUNNING: strong,
            Status.READY: plain,
            Status.PARTIAL: strong,
            Status.BROKEN: strong,
            Status.MISSING: Style(italic=True),
            Status.TIMEOUT: strong,
            Status.ERROR: Style(bold=True, underline=True),
            Status.SKIPPED: muted,
            Status.LOCKED: Style(italic=True, bold=True),
        }
    success = Style(color=theme.success or "green")
    warning = Style(color=theme.warning or "yellow")
    error = Style(color=theme.error or "red")
    return {
        Status.PENDING: muted,
        Status.RUNNING: Style(color=theme.accent or theme.primary, bold=True),  # orange in both themes
        Status.READY: success,
        Status.PARTIAL: warning,
        Status.BROKEN: error + Style(bold=True),
        # not published: neither the component's failure nor a pass; magenta reads on both
        Status.MISSING: Style(color="magenta"),
        Status.TIMEOUT: warning + Style(bold=True),
        Status.ERROR: error + Style(bold=True, underline=True),
        Status.SKIPPED: muted,
        # wants a login or a licence key: neither a failure nor a pass; blue reads on both
        Status.LOCKED: Style(color="blue", bold=True),
    }


@dataclass(frozen=True)
class Motion:
    """What moves in running cells: the spinner's frame and the seconds since each started."""

    frame: int
    now: float
    since: Mapping[str, float]  # cell id -> clock reading when its work began (waits left out)

    def running_words(self, cell: CellResult) -> tuple[str, ...]:
        spin = SPINNER[self.frame % len(SPINNER)]
        started = self.since.get(cell.id)
        if started is None:
            return (spin,)
        return (f"{max(0.0, self.now - started):.0f}s", spin)


def cell_label(cell: CellResult, width: int, motion: Motion | None = None) -> str:
    """`✔ ready 4.1s`, `▶ start 12s ⠹ ᵉ` ... fitted to `width`; `motion` animates running cells.

    When the words do not fit, the glyph, the status and the emulated mark stay and the
    detail goes first (a detail cut to a few letters says nothing)."""
    tail = (f" {EMULATED_MARK}" if shows_emulated(cell) else "") + (f" {PARITY_MARK}" if differs(cell) else "")
    # details come from containers: inert() drops escape sequences, Text keeps brackets literal
    text = inert(cell_text(cell, 10_000), 0).replace("\n", " ").removesuffix(tail)
    if cell.status is Status.RUNNING and not cell.queued:
        extras = list(motion.running_words(cell)) if motion is not None else []
        while extras and len(" ".join([text, *extras])) + len(tail) > width:
            extras.pop(0)  # the seconds go before the spinner
        text = " ".join([text, *extras])
    if cell.status is Status.READY and width < COMPACT_READY_BELOW:
        text = f"{GLYPH[cell.status]} {took_text(cell, compact=True)}"  # the same form down the whole column
    if len(text) + len(tail) <= width:
        return text + tail
    if cell.status is Status.READY:
        text = f"{GLYPH[cell.status]} {took_text(cell, compact=True)}"
    else:
        head, _, detail = text.partition(": ")
        room = width - len(head) - len(tail) - 2
        text = head if room < 8 or not detail else f"{head}: {detail[: room - 1]}…"
    if len(text) + len(tail) > width:
        text = text[: max(1, width - len(tail) - 1)] + "…"
    return text + tail


def cell_renderable(cell: CellResult, width: int, styles: Mapping[Status, Style], motion: Motion | None = None) -> Text:
    style = styles[Status.PENDING] if cell.queued else styles[cell.status]
    return Text(cell_label(cell, width, motion), style=style, no_wrap=True, overflow="ellipsis")


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
