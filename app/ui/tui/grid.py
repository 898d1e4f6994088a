"""The readiness grid: components grouped by category as rows, architectures as columns,
then the arm64-vs-amd64 compare column.

Rows are keyed by component id, columns by arch, so a cell is always found by its own key.
The table is built once per run (and again only when the filter or the width changes);
after that only cells whose text or style changed are written, in one batch per tick.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from rich.style import Style
from rich.text import Text
from textual.binding import Binding
from textual.coordinate import Coordinate
from textual.widgets import DataTable

from ecoready.domain.model import Category, CellResult, Profile, Report, Status
from ecoready.domain.text import inert
from ecoready.report.cost import Comparison
from ecoready.report.order import arches_of, grid_rows
from ecoready.ui.tui.filters import RowFilter
from ecoready.ui.tui.look import Motion, cell_renderable, compare_label, compare_renderable

COMPONENT = "component"
COMPARE = "compare"
CATEGORY_PREFIX = "category:"
COMPARED_ARCHES = ("amd64", "arm64")

Row = tuple[Category, str, str, dict[str, CellResult]]


def visible_rows(report: Report, row_filter: RowFilter) -> list[Row]:
    return [row for row in grid_rows(report) if row_filter.matches(row[1], row[2], row[0], row[3].values())]


# an arch column grows with the terminal up to this: room for a failure's detail
ARCH_MAX = 72


def column_widths(total: int, arches: Sequence[str], names: Iterable[str], compare: bool) -> tuple[int, int, int]:
    """(component, arch, compare) widths that fill `total` columns of terminal."""
    compare_w = (18 if total >= 120 else 12) if compare else 0
    # the names fit, unless that leaves the arch columns narrower than 12 (then 28 at least)
    room = total - compare_w - (12 + 2) * len(arches) - 6
    component = min(max([len(COMPONENT), *(len(n) + 2 for n in names)]), max(28, room))
    columns = 1 + len(arches) + (1 if compare else 0)
    spare = total - component - compare_w - 2 * columns - 2  # cell padding and the scrollbar
    arch = max(12, min(ARCH_MAX, spare // max(1, len(arches))))
    return component, arch, compare_w


def comparable(report: Report) -> bool:
    """Whether the compare column can hold anything: benchmarks run (not `smoke`) and both
    arches have native cells (emulated numbers are never compared)."""
    native = {c.arch for c in report.cells.values() if not c.emulated}
    return report.profile is not Profile.SMOKE and all(a in native for a in COMPARED_ARCHES)


class ReadinessGrid(DataTable[Text]):
    BINDINGS = [Binding("enter", "select_cursor", "Details", key_display="⏎")]

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        # the grid's keys are hidden while a dialog is in front of it
        return self.screen is self.app.screen

    def __init__(self) -> None:
        super().__init__(id="grid", cursor_type="cell", zebra_stripes=False, fixed_columns=1)
        self.arches: tuple[str, ...] = ()
        self.with_compare = False
        self.shown: list[str] = []  # component ids in display order
        self.arch_width = 20
        self._cache: dict[tuple[str, str], tuple[str, Style | str]] = {}

    # -- building -------------------------------------------------------------------------
    def rebuild(
        self,
        report: Report,
        row_filter: RowFilter,
        styles: Mapping[Status, Style],
        comparison: Comparison,
        total_width: int,
        motion: Motion | None = None,
    ) -> None:
        """Lay the table out again (a new run, a new filter, a new width); keep the cursor."""
        keep_row, keep_column = self.selection()
        self.arches = tuple(arches_of(report))
        self.with_compare = comparable(report)
        rows = visible_rows(report, row_filter)
        comp_w, self.arch_width, compare_w = column_widths(
            total_width, self.arches, (r[1] for r in rows), self.with_compare
        )
        self.clear(columns=True)
        self._cache.clear()
        self.add_column(Text(COMPONENT), key=COMPONENT, width=comp_w)
        for arch in self.arches:
            self.add_column(Text(arch), key=arch, width=self.arch_width)
        if self.with_compare:
            self.add_column(Text("arm64÷amd64" if compare_w >= 12 else "arm÷amd"), key=COMPARE, width=compare_w)
        self.shown = []
        category: Category | None = None
        blank = [Text("")] * (len(self.arches) + (1 if self.with_compare else 0))
        for cat, cid, _name, cells in rows:
            if cat is not category:
                self.add_row(Text(cat.value, style="bold italic"), *blank, key=CATEGORY_PREFIX + cat.value)
                category = cat
            values = [self._cell_value(cells[a], styles, motion) if a in cells else Text("") for a in self.arches]
            if self.with_compare:
                values.append(self._compare_value(cid, comparison, cells))
            self.add_row(Text(f"  {inert(cid, 0)}"), *values, key=cid)
            self.shown.append(cid)
        if not rows and row_filter.active:
            self.add_row(Text("no match", style="italic"), *blank, key=CATEGORY_PREFIX + "none")
            self.update_cell_at(
                Coordinate(0, 1), Text("nothing matches the filter: f or / to change it", style="italic")
            )
        self._restore_cursor(keep_row, keep_column)

    def _cell_value(self, cell: CellResult, styles: Mapping[Status, Style], motion: Motion | None) -> Text:
        text = cell_renderable(cell, self.arch_width, styles, motion)
        self._cache[(cell.component, cell.arch)] = (text.plain, text.style)
        return text

    def _compare_value(self, component: str, comparison: Comparison, cells: Mapping[str, CellResult]) -> Text:
        text = compare_renderable(compare_label(comparison, component, cells))
        self._cache[(component, COMPARE)] = (text.plain, text.style)
        return text

    # -- updating -------------------------------------------------------------------------
    def update_cells(
        self, cells: Iterable[CellResult], styles: Mapping[Status, Style], motion: Motion | None = None
    ) -> int:
        """Write the cells whose text or style changed; returns how many were written."""
        written = 0
        for cell in cells:
            key = (cell.component, cell.arch)
            if key not in self._cache:
                continue  # row filtered out
            text = cell_renderable(cell, self.arch_width, styles, motion)
            if self._cache[key] == (text.plain, text.style):
                continue
            self._cache[key] = (text.plain, text.style)
            self.update_cell(cell.component, cell.arch, text)
            written += 1
        return written

    def update_compare(self, report: Report, comparison: Comparison, components: Iterable[str]) -> None:
        if not self.with_compare:
            return
        by_component: dict[str, dict[str, CellResult]] = {}
        for cell in report.cells.values():
            by_component.setdefault(cell.component, {})[cell.arch] = cell
        for component in components:
            if (component, COMPARE) not in self._cache:
                continue
            text = compare_renderable(compare_label(comparison, component, by_component.get(component, {})))
            if self._cache[(component, COMPARE)] != (text.plain, text.style):
                self._cache[(component, COMPARE)] = (text.plain, text.style)
                self.update_cell(component, COMPARE, text)

    # -- reading --------------------------------------------------------------------------
    def text_at(self, component: str, column: str) -> str:
        value = self.get_cell(component, column)
        return value.plain if isinstance(value, Text) else str(value)

    def selection(self) -> tuple[str | None, str | None]:
        """(component id or None on a category row, column key) under the cursor."""
        if not self.row_count or not self.columns:
            return None, None
        try:
            row_key, column_key = self.coordinate_to_cell_key(self.cursor_coordinate)
        except Exception:  # the table is being rebuilt
            return None, None
        row = row_key.value or ""
        return (None if row.startswith(CATEGORY_PREFIX) else row), column_key.value

    def _is_category_row(self, index: int) -> bool:
        row_key = self._row_locations.get_key(index)
        return row_key is not None and (row_key.value or "").startswith(CATEGORY_PREFIX)

    def _restore_cursor(self, row: str | None, column: str | None) -> None:
        if not self.shown:
            return
        target_row = self.get_row_index(row if row in self.shown else self.shown[0])
        target_col = 1
        if column is not None and column in {c.value for c in self.columns}:
            target_col = self.get_column_index(column)
        self.cursor_coordinate = Coordinate(target_row, target_col)

    # -- moving: category rows are headings, the cursor steps over them ------------------
    def _step(self, delta: int) -> None:
        row, column = self.cursor_coordinate
        target = row + delta
        while 0 <= target < self.row_count and self._is_category_row(target):
            target += delta
        if 0 <= target < self.row_count:
            self.cursor_coordinate = Coordinate(target, column)

    def watch_cursor_coordinate(self, old_coordinate: Coordinate, new_coordinate: Coordinate) -> None:
        super().watch_cursor_coordinate(old_coordinate, new_coordinate)
        row = new_coordinate.row
        if not self._is_category_row(row):
            return
        # page keys, home/end or a click landed on a heading: go on to a component row
        ahead = 1 if row >= old_coordinate.row else -1
        for step in (ahead, -ahead):
            target = row + step
            while 0 <= target < self.row_count and self._is_category_row(target):
                target += step
            if 0 <= target < self.row_count:
                self.cursor_coordinate = Coordinate(target, new_coordinate.column)
                return

    def action_cursor_up(self) -> None:
        self._set_hover_cursor(False)
        self._step(-1)

    def action_cursor_down(self) -> None:
        self._set_hover_cursor(False)
        self._step(1)
