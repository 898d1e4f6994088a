"""`?`: the keys, what each glyph means, and how to read emulated cells."""

from __future__ import annotations

from rich.style import Style
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from ecoready.report.parity_words import PARITY_MARK, PARITY_MEANING
from ecoready.report.status_words import EMULATED_MARK, EMULATED_MEANING, GLYPH, MEANING

KEYS: tuple[tuple[str, str], ...] = (
    ("arrows", "move between cells (category rows are skipped)"),
    ("enter", "details of the selected cell: stages, checks, image, build audit, benchmark, log"),
    ("r", "re-run the selected cell (on the component column: its whole row)"),
    ("R", "re-run the whole matrix once nothing runs"),
    ("f", "filter rows by category or status (choose again to remove)"),
    ("/", "search components by id or name (enter keeps, esc clears)"),
    ("e", "export the report to a file: the format follows its extension (.json .md .html .xml)"),
    ("c", "compare arm64 with amd64: tps, frequency-scaled, tps per USD"),
    ("t", "switch between the dark and the light theme"),
    ("s", "save an SVG screenshot of the screen in the working directory (the notice says where)"),
    ("?", "this help"),
    ("esc", "back (from a view or a dialog); on the grid, clears a kept search"),
    ("q", "quit: stops the run and removes its containers first"),
)


def help_renderable() -> Table:
    table = Table(box=None, show_header=False, pad_edge=False)
    table.add_column(no_wrap=True, style="bold")
    table.add_column()
    table.add_row(Text("keys", style=Style(underline=True)), Text(""))
    for key, what in KEYS:
        table.add_row(Text(key), Text(what))
    table.add_row(Text(""), Text(""))
    table.add_row(Text("cells", style=Style(underline=True)), Text(""))
    for status, what in MEANING.items():
        table.add_row(Text(f"{GLYPH[status]} {status.value}"), Text(what))
    table.add_row(Text(EMULATED_MARK), Text(EMULATED_MEANING))
    table.add_row(Text(PARITY_MARK), Text(PARITY_MEANING))
    table.add_row(Text("arm64÷amd64"), Text("tps ratio (and tps per USD) when both ran natively with a benchmark"))
    return table


class HelpScreen(ModalScreen[None]):
    BINDINGS = [
        Binding("escape", "dismiss_help", "Back"),
        Binding("question_mark", "dismiss_help", "Back", show=False),
    ]

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="help-dialog", classes="dialog"):
            yield Static("ecoready: keys and glyphs  (esc: back)", classes="dialog-title")
            yield Static(help_renderable())

    def action_dismiss_help(self) -> None:
        self.dismiss(None)
