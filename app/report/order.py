"""The grid's order, shared by every view: rows are components grouped by category (in
matrix order within one), columns the report's arches then any other its cells have."""

from __future__ import annotations

from collections.abc import Sequence

from ecoready.domain.model import Category, CellResult, Report


def grid_rows(report: Report) -> list[tuple[Category, str, str, dict[str, CellResult]]]:
    """(category, component id, name, {arch: cell}) in category order, then matrix order."""
    rows: dict[str, tuple[Category, str, str, dict[str, CellResult]]] = {}
    for cell in report.cells.values():
        row = rows.setdefault(cell.component, (cell.category, cell.component, cell.name, {}))
        row[3][cell.arch] = cell
    order = {c: i for i, c in enumerate(Category)}
    return sorted(rows.values(), key=lambda r: order[r[0]])


def arches_of(report: Report) -> Sequence[str]:
    seen = list(report.arches)
    for cell in report.cells.values():
        if cell.arch not in seen:
            seen.append(cell.arch)
    return seen
