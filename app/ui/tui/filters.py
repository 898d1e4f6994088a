"""Which rows the grid shows: a category, a status and a search text (`f` and `/`).

A row (one component) is shown when it is of the chosen category, when any of its cells
has the chosen status, and when the search text is in its id or name.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, OptionList, Static
from textual.widgets.option_list import Option

from ecoready.domain.model import Category, CellResult, Report, Status
from ecoready.report.status_words import GLYPH

# A pseudo-status: everything that did not end ready (or is not over yet).
PROBLEMS = "problems"
NOT_A_PROBLEM = frozenset({Status.READY, Status.PENDING, Status.RUNNING, Status.SKIPPED})


@dataclass(frozen=True)
class RowFilter:
    category: Category | None = None
    status: str | None = None  # a Status value or PROBLEMS
    search: str = ""

    @property
    def active(self) -> bool:
        return self.category is not None or self.status is not None or bool(self.search)

    def matches(self, component: str, name: str, category: Category, cells: Iterable[CellResult]) -> bool:
        if self.category is not None and category is not self.category:
            return False
        if self.search:
            needle = self.search.casefold()
            if needle not in component.casefold() and needle not in name.casefold():
                return False
        if self.status is not None:
            if self.status == PROBLEMS:
                return any(c.status not in NOT_A_PROBLEM for c in cells)
            return any(c.status.value == self.status for c in cells)
        return True

    def describe(self) -> str:
        parts = []
        if self.category is not None:
            parts.append(f"category {self.category.value}")
        if self.status is not None:
            parts.append(f"status {self.status}")
        if self.search:
            parts.append(f"/{self.search}")
        return " · ".join(parts)


def filter_choices(report: Report) -> list[tuple[str, str]]:
    """(option id, label) for the filter menu: categories and statuses present in the run."""
    categories = [c for c in Category if any(cell.category is c for cell in report.cells.values())]
    statuses = [s for s in Status if any(cell.status is s for cell in report.cells.values())]
    choices = [("clear", "all rows (clear category and status)")]
    choices += [(f"category:{c.value}", f"category  {c.value}") for c in categories]
    choices.append((f"status:{PROBLEMS}", "status    problems (not ready, not running)"))
    choices += [(f"status:{s.value}", f"status    {GLYPH[s]} {s.value}") for s in statuses]
    return choices


def apply_choice(current: RowFilter, choice: str) -> RowFilter:
    if choice == "clear":
        return replace(current, category=None, status=None)
    kind, _, value = choice.partition(":")
    if kind == "category":
        chosen = Category(value)
        return replace(current, category=None if current.category is chosen else chosen)
    if kind == "status":
        return replace(current, status=None if current.status == value else value)
    return current


class FilterScreen(ModalScreen[str | None]):
    """A menu of categories and statuses; choosing one again removes it."""

    BINDINGS = [Binding("escape", "dismiss_none", "Back"), Binding("f", "dismiss_none", "Back", show=False)]

    def __init__(self, report: Report, current: RowFilter) -> None:
        super().__init__()
        self.report = report
        self.current = current

    def compose(self) -> ComposeResult:
        options = []
        for option_id, label in filter_choices(self.report):
            on = (option_id == f"category:{self.current.category.value}" if self.current.category else False) or (
                option_id == f"status:{self.current.status}"
            )
            options.append(Option(("● " if on else "  ") + label, id=option_id))
        with Vertical(id="filter-dialog", classes="dialog"):
            yield Static("Filter rows  (enter: choose · again: remove · esc: back)", classes="dialog-title")
            yield OptionList(*options, id="filter-options", markup=False)

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(event.option.id)

    def action_dismiss_none(self) -> None:
        self.dismiss(None)


class SearchBox(Input):
    BINDINGS = [
        Binding("enter", "submit", "Keep filter", key_display="⏎"),
        Binding("escape", "cancel_search", "Clear search"),
    ]

    def action_cancel_search(self) -> None:
        self.value = ""
        self.post_message(self.Submitted(self, ""))
