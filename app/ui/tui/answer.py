"""The answer at a glance: a verdict line per arch above the grid, and under it the
selected cell's reason and what to do about it. The words come from `report/verdict.py`,
`reasons.py` and `troubles.py`, shared with the headless summary and the reports."""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from rich.style import Style
from rich.text import Text
from textual.widgets import Static

from ecoready.domain.errors import EcoreadyError
from ecoready.domain.model import CellResult, Report, Status
from ecoready.domain.text import inert
from ecoready.report.files import keep_in_state
from ecoready.report.json import render as render_json
from ecoready.report.reasons import advice_for
from ecoready.report.status_words import EMULATED_MARK, GLYPH, QUEUED_WORD, shows_emulated, took_text
from ecoready.report.troubles import infra_lines
from ecoready.report.verdict import arch_verdicts, glance


def exit_line(report: Report, saved: Sequence[str], keep: Callable[[str, str], Path], saved_json: bool = False) -> str:
    """What the terminal keeps once the app is gone: the answer in a line, and where the
    report went: the files exported, and the JSON kept in the state folder unless one of
    them is the JSON (an HTML export alone must not lose the record)."""
    parts = [f"report written to {', '.join(saved)}"] if saved else []
    if not saved_json:
        try:
            kept = keep(f"ecoready-{report.run_id[:8] or 'run'}.json", render_json(report))
            parts.append(f"JSON kept in {kept} (`ecoready report {kept} --html FILE` renders it)")
        except (EcoreadyError, OSError) as exc:
            parts.append(f"JSON not saved ({exc}): export it with e next time")
    return f"ecoready: {glance(report)}; {'; '.join(parts)}"


def say_on_exit(report: Report, saved: Sequence[str], saved_json: bool = False) -> None:
    """Once the terminal is back: one line of what the run found, and where it went."""
    if report.cells:
        print(inert(exit_line(report, saved, keep_in_state, saved_json), 0), file=sys.stderr)


def verdict_text(report: Report) -> Text:
    text = Text()
    for line in arch_verdicts(report, short=True):  # the header names hosts and emulators
        arch, _, rest = line.partition(" ")
        if text:
            text.append("\n")
        text.append(inert(arch, 0), style=Style(bold=True))
        text.append(" " + inert(rest, 0))
    for line in infra_lines(report):
        text.append(("\n" if text else "") + f"{GLYPH[Status.ERROR]} {inert(line, 0)}", style=Style(bold=True))
    return text


def reason_text(report: Report, cell: CellResult | None) -> Text:
    """What the selected cell says: under way, ready, or why not and what to do."""
    if cell is None:
        return Text("choose a cell: its reason shows here (⏎ opens its details)", style=Style(dim=True))
    where = f"{inert(cell.id, 0)}{f' {EMULATED_MARK}emulated' if shows_emulated(cell) else ''}: "
    if cell.queued:
        return Text(f"{GLYPH[Status.PENDING]} {where}{QUEUED_WORD}, waiting for a free slot", style=Style(dim=True))
    if cell.status is Status.RUNNING:
        return Text(f"{GLYPH[Status.RUNNING]} {where}{cell.stage.value if cell.stage else 'starting'} under way")
    if cell.status is Status.PENDING:
        return Text(f"{GLYPH[Status.PENDING]} {where}not started", style=Style(dim=True))
    if cell.status is Status.READY:
        if cell.image is not None and cell.image.found_tag:  # ready, but not under the tag the matrix names
            tag = inert(cell.image.found_tag, 0)
            return Text(f"{GLYPH[Status.READY]} {where}ready under the tag {tag} only: pin that tag for {cell.arch}")
        return Text(f"{GLYPH[Status.READY]} {where}ready in {took_text(cell)}: every stage passed")
    advised = advice_for(report, cell.id)
    text = Text(f"{GLYPH[cell.status]} {where}{cell.status.value}", style=Style(bold=True))
    if advised is not None:
        text.append(": " + inert(advised.reason, 0))
        text.append("\nwhat to do: ", style=Style(italic=True))
        text.append(inert(advised.remedy, 0))
    elif cell.detail:
        text.append(": " + inert(cell.detail, 0))
    return text


class VerdictLines(Static):
    """One line per arch: how many components are ready, and what blocks the rest."""

    _shown: str | None = None

    def show(self, report: Report) -> None:
        text = verdict_text(report)
        if text.plain != self._shown:
            self._shown = text.plain
            self.update(text)


class ReasonLine(Static):
    """The selected cell's reason and remedy, wrapped; redrawn when the cell changes."""

    _shown: CellResult | None = None
    _none_shown = False

    def show(self, report: Report, cell: CellResult | None) -> None:
        if cell is not None and cell is self._shown:
            return
        if cell is None and self._none_shown:
            return
        self._shown, self._none_shown = cell, cell is None
        self.update(reason_text(report, cell))
