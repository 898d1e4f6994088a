"""The progress line above the key hints: cells done of total (per status), elapsed time
and an estimate of what is left for the batch under way (the run, or a re-run), from what
its finished cells took (`plan/eta.py`)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

from rich.style import Style
from rich.text import Text
from textual.widgets import Static

from ecoready.domain.model import Report, Status
from ecoready.plan.eta import Expected, seconds_left
from ecoready.report.status_words import GLYPH


def clock_text(seconds: float) -> str:
    seconds = max(0, int(seconds))
    hours, rest = divmod(seconds, 3600)
    return f"{hours}:{rest // 60:02d}:{rest % 60:02d}" if hours else f"{rest // 60}:{rest % 60:02d}"


@dataclass
class Batch:
    """The cells of the latest run or re-run, and when it began/ended (monotonic seconds)."""

    cells: frozenset[str] = frozenset()
    started: float = 0.0
    ended: float | None = None
    label: str = "run"
    expected: Mapping[str, Expected] = field(default_factory=dict)  # cell id -> what the plan expects of it

    def remaining(self, report: Report) -> int:
        return sum(1 for cid in self.cells if cid in report.cells and not report.cells[cid].status.finished)

    def eta(self, report: Report, elapsed: float) -> float | None:
        """Seconds left, from what the finished cells took (`plan/eta.py`: per stage, by
        kind and emulation, through the host's slots, benches one after the other); never
        from budgets. None while too few cells have finished ("estimating")."""
        return seconds_left(report, self.expected, self.cells)


@dataclass
class ProgressState:
    clock: Callable[[], float]
    batch: Batch = field(default_factory=Batch)

    def start(self, cells: Iterable[str], label: str, expected: Mapping[str, Expected] | None = None) -> None:
        self.batch = Batch(frozenset(cells), self.clock(), None, label, dict(expected or {}))

    def text(self, report: Report, notice: str = "", filter_text: str = "") -> Text:
        cells = report.cells.values()
        total = len(report.cells)
        done = sum(1 for c in cells if c.status.finished)
        running = sum(1 for c in cells if c.status is Status.RUNNING and not c.queued)
        queued = sum(1 for c in cells if c.queued)
        counts = [(s, sum(1 for c in cells if c.status is s)) for s in Status if s.finished]
        out = Text()
        if notice:
            out.append(notice, style=Style(bold=True, reverse=True))
            return out
        out.append(f"{done}/{total} done", style=Style(bold=True))
        if running:
            out.append(f"  {GLYPH[Status.RUNNING]}{running} running")
        if queued:
            out.append(f"  {GLYPH[Status.PENDING]}{queued} queued")
        tally = " ".join(f"{GLYPH[s]}{n}" for s, n in counts if n)
        if tally:
            out.append(f"  {tally}")
        batch = self.batch
        if batch.cells:
            remaining = batch.remaining(report)
            if remaining == 0 and batch.ended is None:
                batch.ended = self.clock()
            elif remaining and batch.ended is not None:
                batch.ended = None
            now = batch.ended if batch.ended is not None else self.clock()
            elapsed = now - batch.started
            if batch.ended is not None:
                out.append(f"  {batch.label} took {clock_text(elapsed)}", style=Style(dim=True))
            else:
                left = batch.eta(report, elapsed)
                eta = "ETA estimating" if left is None else f"ETA ~{clock_text(left)}"
                out.append(f"  {clock_text(elapsed)} elapsed · {eta}", style=Style(dim=True))
        if filter_text:
            out.append(f"  filter: {filter_text}", style=Style(italic=True))
        return out


class ProgressLine(Static):
    """One line of fixed height: redrawn only when its text changes, without a layout pass
    (a layout pass of the whole screen per tick costs more than the grid's own updates)."""

    _shown: Text | None = None

    def show(self, text: Text) -> None:
        if self._shown is not None and text.plain == self._shown.plain and text.spans == self._shown.spans:
            return
        self._shown = text
        self.update(text, layout=False)
