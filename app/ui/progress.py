"""Headless progress on stderr: a Rich live display on a terminal, plain lines otherwise.
stdout is never touched, so `--json -` pipes cleanly."""

from __future__ import annotations

import time
from typing import IO, Protocol

from ecoready.domain.blame import Trouble
from ecoready.domain.events import CellFinished, CellQueued, CellStarted, Event, RunNote, RunStarted, StageStarted
from ecoready.domain.model import Report, Status
from ecoready.domain.text import inert, plural
from ecoready.report.status_words import EMULATED_MARK, GLYPH, shows_emulated, status_detail, timed, took_text
from ecoready.report.text_grid import render_summary
from ecoready.report.troubles import trouble


class Progress(Protocol):
    def update(self, event: Event, report: Report) -> None: ...
    def note(self, text: str) -> None: ...
    def stop(self, report: Report) -> None: ...


def _done(report: Report) -> int:
    return sum(1 for c in report.cells.values() if c.status.finished)


class PlainProgress:
    """One line per finished cell (and per note): readable in CI logs. A trouble several
    cells share (a registry, a backend, an engine) is said with the first cell it stops;
    the others are not listed, and the summary says it once more with their count."""

    def __init__(self, stream: IO[str]) -> None:
        self.stream = stream
        self.started = time.monotonic()
        self.said: set[Trouble] = set()  # the shared troubles said already (registry, backend, engine)

    def _print(self, text: str) -> None:
        self.stream.write(inert(text, 0) + "\n")
        self.stream.flush()

    def start(self, report: Report) -> None:
        self.started = time.monotonic()
        hosts = ", ".join(
            f"{h.name} ({h.native_arch}"
            + (f", emulating {'/'.join(h.emulated_arches)}" if h.emulated_arches else "")
            + ")"
            for h in report.hosts
        )
        self._print(f"ecoready: run {report.run_id[:8]}: {plural(len(report.cells), 'cell')} on {hosts or 'local'}")
        for host in report.hosts:  # which engine answered, and how it was found
            if host.engine:
                self._print(f"ecoready: engine of {host.name}: {host.engine}")

    def update(self, event: Event, report: Report) -> None:
        if isinstance(event, RunStarted):
            self.start(report)
        elif isinstance(event, CellFinished):
            cell = report.cells[event.cell_id]
            count = f"[{_done(report):>3}/{len(report.cells)}] {GLYPH[cell.status]} {cell.id}"
            shared = trouble(cell)
            if shared is not None and shared[0] in self.said:  # said once, with its reason; the summary counts them
                return
            if shared is not None:
                self.said.add(shared[0])
            mark = f" {EMULATED_MARK}emulated" if shows_emulated(cell) else ""
            detail = f": {status_detail(cell).removeprefix(cell.status.value + ': ')}" if cell.detail else ""
            # a registry's verdict (missing, or not asked) took no time worth a number
            took = f" {took_text(cell)}" if timed(cell) else ""
            once = " (the other cells it stops are not listed: the summary counts them)" if shared else ""
            self._print(f"{count}{mark} {cell.status.value}{took}{detail}{once}")
        elif isinstance(event, RunNote):
            if event.about in self.said:
                return  # the summary says it once more, with the cells it cost and the way out
            self._print(f"ecoready: note: {event.text}")

    def note(self, text: str) -> None:
        self._print(text)

    def stop(self, report: Report) -> None:
        if report.cells:
            self._print("")
            self._print(render_summary(report))
            self._print(f"ecoready: {time.monotonic() - self.started:.1f}s")


class RichProgress(PlainProgress):
    """A live bar with the cells under way, above the plain lines."""

    def __init__(self, stream: IO[str]) -> None:
        super().__init__(stream)
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        self.console = Console(file=stream, stderr=True, highlight=False)
        self.bar = Progress(
            TextColumn("[bold]cells"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            TextColumn("{task.description}"),
            console=self.console,
            transient=True,
        )
        self.task = self.bar.add_task("", total=1)
        self.running: dict[str, str] = {}

    def _print(self, text: str) -> None:
        from rich.text import Text

        self.console.print(Text(inert(text, 0)))  # Text: cell details are never parsed as markup

    def start(self, report: Report) -> None:
        super().start(report)
        self.bar.update(self.task, total=len(report.cells), completed=0)
        self.bar.start()

    def update(self, event: Event, report: Report) -> None:
        if isinstance(event, (CellStarted, CellQueued)):  # waiting for its turn: not running
            self.running.pop(event.cell_id, None)
        elif isinstance(event, StageStarted):
            self.running[event.cell_id] = event.stage.value
        elif isinstance(event, CellFinished):
            self.running.pop(event.cell_id, None)
        super().update(event, report)
        self.bar.update(self.task, completed=_done(report), description=running_words(self.running, report))

    def stop(self, report: Report) -> None:
        self.bar.stop()
        super().stop(report)


def running_words(running: dict[str, str], report: Report) -> str:
    """`▶2 running: db/arm64 start, px/amd64 image · 34 queued`: cells at work (a few by
    name) apart from the cells waiting for their turn."""
    queued = sum(1 for c in report.cells.values() if c.queued)
    shown = ", ".join(f"{k} {v}" for k, v in list(running.items())[:3])
    parts = [f"{GLYPH[Status.RUNNING]}{len(running)} running: {shown}"] if running else []
    if queued:
        parts.append(f"{GLYPH[Status.PENDING]}{queued} queued")
    return "  ".join(parts)


def make_progress(stream: IO[str]) -> Progress:
    if stream.isatty():
        return RichProgress(stream)
    return PlainProgress(stream)
