"""Export the current report (`e`): pick a format and a path, written atomically.

The formats are `ecoready.report.FORMATS` whose exporter module is installed.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, OptionList, Static
from textual.widgets.option_list import Option

from ecoready.domain.errors import EcoreadyError
from ecoready.domain.model import Report
from ecoready.report import Format, Renderer, available
from ecoready.report.files import write_atomic


def default_path(report: Report, fmt: Format) -> str:
    return f"ecoready-{report.run_id[:8] or 'report'}{fmt.suffix}"


def export_report(report: Report, render: Renderer, path: str) -> Path:
    """Render and write; `~` is expanded, a relative path is relative to the working dir."""
    if not path.strip():
        raise EcoreadyError("type a file path to write to")
    text = render(report)
    return write_atomic(Path(path.strip()).expanduser(), text if text.endswith("\n") else text + "\n")


@dataclass(frozen=True)
class Exported:
    path: Path
    format: str
    module: str = ""  # the format's exporter ("json", "markdown", ...)


class ExportScreen(ModalScreen[Exported | None]):
    """A format (`●` marks the chosen one, so it reads without colour) and a path."""

    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, report: Report) -> None:
        super().__init__()
        self.report = report
        self.formats = available()
        self.chosen = 0
        self.picked = False  # a format picked in the list wins over the file's extension

    def _prompt(self, index: int) -> str:
        fmt = self.formats[index][0]
        return f"{'●' if index == self.chosen else '○'} {fmt.title} ({fmt.suffix})"

    def compose(self) -> ComposeResult:
        fmt = self.formats[0][0]
        with Vertical(id="export-dialog", classes="dialog"):
            yield Static("Export the report", classes="dialog-title")
            yield OptionList(
                *(Option(self._prompt(i), id=f"format-{f.module}") for i, (f, _) in enumerate(self.formats)),
                id="export-format",
                markup=False,
            )
            yield Static("file (relative to the working directory):")
            yield Input(default_path(self.report, fmt), id="export-path", select_on_focus=False)
            yield Static(
                "the format follows the extension (.json .md .html .xml) unless picked · enter: write · "
                "shift+tab: format (enter picks it) · esc: cancel",
                classes="dialog-hint",
            )
            yield Static("", id="export-error")

    def on_mount(self) -> None:
        self.query_one("#export-path", Input).focus()

    def _mark(self) -> None:
        options = self.query_one("#export-format", OptionList)
        for index in range(len(self.formats)):
            options.replace_option_prompt_at_index(index, self._prompt(index))

    @on(Input.Changed, "#export-path")
    def path_typed(self, event: Input.Changed) -> None:
        """Until a format is picked, the mark follows the extension typed (out.html: HTML),
        so the dialog shows the format that will be written."""
        if self.picked:
            return
        typed = Path(event.value.strip()).suffix.lower()
        index = next((i for i, (f, _) in enumerate(self.formats) if f.suffix == typed), self.chosen)
        if index != self.chosen:
            self.chosen = index
            self._mark()

    @on(OptionList.OptionSelected, "#export-format")
    def format_chosen(self, event: OptionList.OptionSelected) -> None:
        old = self.formats[self.chosen][0]
        self.chosen = event.option_index
        self.picked = True
        new = self.formats[self.chosen][0]
        self._mark()
        path_input = self.query_one("#export-path", Input)
        if path_input.value.endswith(old.suffix):
            path_input.value = path_input.value[: -len(old.suffix)] + new.suffix
        path_input.focus()

    @on(Input.Submitted, "#export-path")
    def write(self, event: Input.Submitted) -> None:
        fmt, render = self.formats[self.chosen]
        if not self.picked:  # the format follows the extension typed: out.html is HTML
            typed = Path(event.value.strip()).suffix.lower()
            fmt, render = next(((f, r) for f, r in self.formats if f.suffix == typed), (fmt, render))
        try:
            path = export_report(self.report, render, event.value)
        except (EcoreadyError, OSError) as exc:
            self.query_one("#export-error", Static).update(Text(f"cannot write: {exc}"))
            return
        self.dismiss(Exported(path, fmt.title, fmt.module))

    def action_cancel(self) -> None:
        self.dismiss(None)
