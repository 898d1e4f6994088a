"""`ecoready plan` for a terminal (pure): the actions first, numbered and wrapped, then the
plan and the pins as tables that fit the width (report/width.py). The Markdown form for
tickets is report/markdown.py's `migration`."""

from __future__ import annotations

import textwrap

from ecoready.domain.model import Report
from ecoready.domain.text import inert
from ecoready.report.coverage_words import RESTS_ON_TITLE, rests_on_lines
from ecoready.report.exporter_text import run_line
from ecoready.report.migration import PIN_HEADER, PLAN_HEADER, actions, pin_row, plan_pins, plan_steps, step_row
from ecoready.report.targets import plan_target_lines
from ecoready.report.width import fit_table


def render_plan(report: Report, total: int) -> str:
    def clean(text: str) -> str:
        return inert(text, 0).replace("\n", " ")

    lines = [clean(f"Migration plan: {report.matrix}")]
    lines.extend(textwrap.wrap(clean(run_line(report)), total, break_on_hyphens=False))
    lines.extend(["", "What to change, in order:"])
    todo = actions(report)
    for n, text in enumerate(todo, 1):
        lead = f"{n:>3}. "
        wrapped = textwrap.wrap(clean(text), max(total - len(lead), 20), break_on_hyphens=False)
        lines.append(lead + wrapped[0])
        lines.extend(" " * len(lead) + more for more in wrapped[1:])
    if not todo:
        lines.append("  nothing: every component is ready on every arch as pinned")
    steps = plan_steps(report)
    lines.extend(["", "Every component and arch:"])
    # the image column goes first when narrow; `why` wraps
    lines.extend(fit_table(PLAN_HEADER, [[clean(v) for v in step_row(s)] for s in steps], total, droppable=(1,)))
    pins = plan_pins(report, steps)
    if pins:
        lines.extend(["", "Arch pins (compose platform:, Kubernetes node selectors):"])
        header = (*PIN_HEADER[:4], f"{PIN_HEADER[4]} / {PIN_HEADER[5]}")
        rows = [
            [*map(clean, row[:4]), clean(f"{row[4]} (written at {row[5]})" if row[5] != "-" else row[4])]
            for row in map(pin_row, pins)
        ]
        lines.extend(fit_table(header, rows, total, droppable=(1,)))
    on_targets = plan_target_lines(report)
    if on_targets:
        lines.extend(["", "On the target CPUs the matrix names:"])
        for text in on_targets:
            wrapped = textwrap.wrap(clean(text), max(total - 4, 20), break_on_hyphens=False)
            lines.append("  - " + wrapped[0])
            lines.extend("    " + more for more in wrapped[1:])
    rests = rests_on_lines(report)
    if rests:  # what each verdict the plan reads rests on
        lines.extend(["", f"{RESTS_ON_TITLE}:"])
        for text in rests:
            wrapped = textwrap.wrap(clean(text), max(total - 4, 20), break_on_hyphens=False)
            lines.append("  - " + wrapped[0])
            lines.extend("    " + more for more in wrapped[1:])
    return "\n".join(lines) + "\n"
