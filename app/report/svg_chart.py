"""Inline SVG line charts for the HTML report (pure): tps over threads, one line per arch.

No library and no script: the chart is markup the browser draws, points carry a <title>
for the exact value. Every text is escaped. An emulated chart is drawn on a hatched
background with a banner, so it can never be mistaken for a performance figure.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from html import escape

WIDTH, HEIGHT = 560, 300
LEFT, RIGHT, TOP, BOTTOM = 64, 150, 36, 44  # margins: y labels, legend, title, x labels
ARCH_COLOURS = {"amd64": "#0969da", "arm64": "#d4640c", "ppc64le": "#8250df", "s390x": "#1a7f37"}
OTHER_COLOURS = ("#57606a", "#bf3989", "#0a7a7a")
EMULATED_COLOUR = "#6e7781"


@dataclass(frozen=True)
class Line:
    label: str
    points: tuple[tuple[int, float], ...]  # (threads, tps), threads ascending
    colour: str
    dashed: bool = False


def colour_for(arch: str, index: int = 0) -> str:
    return ARCH_COLOURS.get(arch, OTHER_COLOURS[index % len(OTHER_COLOURS)])


def nice_ceiling(value: float) -> float:
    """The smallest 1/2/2.5/5 x 10^n at or above `value` (axis maximum)."""
    if value <= 0:
        return 1.0
    power = 10.0 ** math.floor(math.log10(value))
    if power == 0.0:  # a subnormal value: its power of ten underflows to 0
        return 1.0
    for step in (1, 2, 2.5, 5, 10):
        if value <= step * power:
            return step * power
    return 10 * power  # pragma: no cover - the loop always returns


def _fmt(value: float) -> str:
    """Tick labels: 0, 625, 1.25k, 50k, 1.5M (no more digits than the value needs)."""
    for limit, unit in ((1e6, "M"), (1e3, "k")):
        if value >= limit:
            return f"{value / limit:,.2f}".rstrip("0").rstrip(".") + unit
    return f"{value:.2f}".rstrip("0").rstrip(".")


def line_chart(
    title: str, lines: Sequence[Line], *, emulated: bool = False, y_label: str = "tps", chart_id: str = "0"
) -> str:
    """An SVG chart of `lines` over thread counts, spaced evenly (thread lists double).
    `chart_id` keeps ids unique when a page holds several charts."""
    chart_id = re.sub(r"[^A-Za-z0-9_-]", "", chart_id) or "0"
    threads = sorted({t for line in lines for t, _ in line.points})
    top_value = nice_ceiling(max((v for line in lines for _, v in line.points), default=1.0))
    plot_w, plot_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM

    def x(t: int) -> float:
        if len(threads) == 1:
            return LEFT + plot_w / 2
        return LEFT + plot_w * threads.index(t) / (len(threads) - 1)

    def y(v: float) -> float:
        return TOP + plot_h * (1 - v / top_value)

    label = f"{title}: {y_label} over threads" + (" (emulated: not performance)" if emulated else "")
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="chart" viewBox="0 0 {WIDTH} {HEIGHT}" '
        f'width="{WIDTH}" height="{HEIGHT}" role="img" aria-label="{escape(label)}">',
        f"<title>{escape(label)}</title>",
    ]
    if emulated:
        out.append(
            f'<defs><pattern id="hatch-{chart_id}" width="8" height="8" patternUnits="userSpaceOnUse" '
            'patternTransform="rotate(45)"><rect width="8" height="8" fill="#f6f8fa"/>'
            '<line x1="0" y1="0" x2="0" y2="8" stroke="#d0d7de" stroke-width="3"/></pattern></defs>'
        )
        out.append(f'<rect x="{LEFT}" y="{TOP}" width="{plot_w}" height="{plot_h}" fill="url(#hatch-{chart_id})"/>')
    out.append(f'<text x="{LEFT}" y="20" class="chart-title">{escape(title)}</text>')
    if emulated:
        out.append(
            f'<text x="{LEFT + plot_w / 2:.1f}" y="{TOP + plot_h / 2:.1f}" text-anchor="middle" '
            'class="chart-banner">EMULATED: NOT PERFORMANCE</text>'
        )
    for i in range(5):
        value = top_value * i / 4
        yy = y(value)
        out.append(f'<line x1="{LEFT}" y1="{yy:.1f}" x2="{LEFT + plot_w}" y2="{yy:.1f}" class="grid-line"/>')
        out.append(f'<text x="{LEFT - 6}" y="{yy + 4:.1f}" text-anchor="end" class="tick">{_fmt(value)}</text>')
    for t in threads:
        out.append(f'<text x="{x(t):.1f}" y="{TOP + plot_h + 16}" text-anchor="middle" class="tick">{t}</text>')
    out.append(
        f'<text x="{LEFT + plot_w / 2:.1f}" y="{HEIGHT - 6}" text-anchor="middle" class="axis">threads</text>'
        f'<text x="14" y="{TOP + plot_h / 2:.1f}" text-anchor="middle" class="axis" '
        f'transform="rotate(-90 14 {TOP + plot_h / 2:.1f})">{escape(y_label)}</text>'
    )
    for n, line in enumerate(lines):
        dash = ' stroke-dasharray="6 4"' if line.dashed else ""
        path = " ".join(f"{x(t):.1f},{y(v):.1f}" for t, v in line.points)
        out.append(f'<polyline points="{path}" fill="none" stroke="{line.colour}" stroke-width="2"{dash}/>')
        for t, v in line.points:
            out.append(
                f'<circle cx="{x(t):.1f}" cy="{y(v):.1f}" r="3.5" fill="{line.colour}">'
                f"<title>{escape(line.label)}: {v:,.1f} {escape(y_label)} at {t} threads</title></circle>"
            )
        ly = TOP + 8 + 18 * n
        out.append(
            f'<line x1="{WIDTH - RIGHT + 12}" y1="{ly}" x2="{WIDTH - RIGHT + 32}" y2="{ly}" '
            f'stroke="{line.colour}" stroke-width="3"{dash}/>'
            f'<text x="{WIDTH - RIGHT + 36}" y="{ly + 4}" class="legend-text">{escape(line.label)}</text>'
        )
    out.append("</svg>")
    return "".join(out)
