"""tps over threads as text: one horizontal bar per thread count, eighth-block precision.

Bars suit a terminal better than a line plot: they stay readable at 80 columns, under
NO_COLOR and in a screen reader, and the number is printed beside each bar.
"""

from __future__ import annotations

from collections.abc import Sequence

EIGHTHS = " ▏▎▍▌▋▊▉█"


def bar(value: float, top: float, width: int) -> str:
    """A bar `width` cells long at most, `value / top` of it filled."""
    if top <= 0 or value <= 0 or width <= 0:
        return ""
    eighths = round(min(1.0, value / top) * width * 8)
    full, part = divmod(eighths, 8)
    return "█" * full + (EIGHTHS[part] if part else "")


def bar_chart(series: Sequence[tuple[str, Sequence[tuple[int, float]]]], width: int) -> list[str]:
    """Lines of a chart of tps over threads for one or more named series (e.g. arches).

    `series` is [(label, [(threads, tps), ...]), ...]; bars share one scale so they can be
    compared; each line is `threads label |bar| value`.
    """
    points = [(label, threads, tps) for label, pts in series for threads, tps in pts]
    if not points:
        return []
    top = max(tps for _, _, tps in points)
    label_w = max(len(label) for label, _, _ in points)
    threads_w = max(len(str(t)) for _, t, _ in points)
    value_w = max(len(f"{tps:,.0f}") for _, _, tps in points)
    bar_w = max(4, width - threads_w - label_w - value_w - 6)
    lines = []
    for threads in sorted({t for _, t, _ in points}):
        for label, pts in series:
            for t, tps in pts:
                if t == threads:
                    name = f" {label.ljust(label_w)}" if label_w else ""
                    lines.append(
                        f"{threads:>{threads_w}}{name} ▕{bar(tps, top, bar_w).ljust(bar_w)} {tps:>{value_w},.0f}"
                    )
    return lines
