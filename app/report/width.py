"""How wide a table may be: the terminal's width (COLUMNS, else the terminal, else 80), and
how to share it among columns (narrow: cut words, then fewer columns per block; never a
glyph or a mark cut, see present.cell_text)."""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from typing import TypeVar

T = TypeVar("T")
FALLBACK = 80
MIN_WIDTH = 40


def terminal_width() -> int:
    """COLUMNS when set, else the terminal's width; 80 when neither is known (a pipe)."""
    return max(MIN_WIDTH, shutil.get_terminal_size((FALLBACK, 24)).columns)


def blocks(items: Sequence[T], fixed: int, each: int, total: int) -> list[Sequence[T]]:
    """`items` cut into runs that fit `total` columns beside a `fixed` part, `each` wide
    (at least one per run: wrapped rows rather than cut ones)."""
    per = max(1, (total - fixed) // max(each, 1))
    return [items[i : i + per] for i in range(0, len(items), per)] or [items]


def share(total: int, fixed: int, count: int, low: int, high: int) -> int:
    """The width of each of `count` columns beside `fixed`, between `low` and `high`."""
    if count <= 0:
        return high
    return max(low, min(high, (total - fixed) // count))


def fit_table(
    header: Sequence[str], rows: Sequence[Sequence[str]], total: int, droppable: Sequence[int] = (), min_last: int = 24
) -> list[str]:
    """A table in `total` columns whose last column is free text: the columns of `droppable`
    go first (in that order) when the others leave the text under `min_last`; the text wraps
    under its own column, or, when even that is too narrow, on the lines below the row. A
    column wider than a third of the width is cut with `…` (words, never a glyph's half)."""
    import textwrap

    keep = [i for i in range(len(header) - 1)]
    cap = max(8, total // 3)

    def natural(i: int) -> int:
        return min(cap, max(len(r[i]) for r in [header, *rows]))

    def fixed() -> int:
        return sum(natural(i) + 2 for i in keep)

    for i in droppable:
        if fixed() + min_last <= total:
            break
        keep.remove(i)
    widths = {i: natural(i) for i in keep}
    room = total - fixed()
    below = room < min_last
    text_w = total - 4 if below else room

    def cut(text: str, width: int) -> str:
        return text if len(text) <= width else text[: width - 1] + "…"

    lines: list[str] = []
    for n, row in enumerate([header, *rows]):
        prefix = "".join(cut(row[i], widths[i]).ljust(widths[i] + 2) for i in keep)
        chunks = textwrap.wrap(row[-1], max(text_w, 8), break_on_hyphens=False) or [""]
        if below:
            lines.append(prefix.rstrip())
            lines.extend(("    " + chunk).rstrip() for chunk in chunks if chunk)
        else:
            lines.append((prefix + chunks[0]).rstrip())
            lines.extend((" " * len(prefix) + chunk).rstrip() for chunk in chunks[1:])
        if n == 0:
            lines.append("-" * min(total, max(len(line) for line in lines)))
    return lines
