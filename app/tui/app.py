"""The interactive readiness grid (Textual).

The run is a worker in the app's own event loop; every event is folded with the same
`state.reduce` the headless path uses. Changed cells are collected and written to the
DataTable in one batch per tick, by stable row (component) and column (arch) keys.
"""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Callable

from rich.text import Text
from textual import work
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.widgets import DataTable, Footer, Header, Static
from textual.worker import Worker, WorkerState

from app.config import Matrix
from app.events import Event, RunStarted
from app.model import CellResult, Status
from app.present import COLOUR, GLYPH, cell_text
from app.session import RunOptions, Session, exit_code
from app.state import empty_report, reduce
from app.summary import grid_rows
from app.text import inert

FLUSH_SECONDS = 0.1


def cell_renderable(cell: CellResult) -> Text:
    # Text (never markup) keeps brackets literal; inert() drops escape sequences
    return Text(inert(cell_text(cell, 34), 0).replace("\n", " "), style=COLOUR[cell.status])


class EcoreadyApp(App[int]):
    TITLE = "ecoready"
    CSS_PATH = "app.tcss"
    BINDINGS = [
        Binding("q", "quit_clean", "Quit"),
        Binding("ctrl+c", "quit_clean", "Quit", show=False, priority=True),
    ]

    def __init__(
        self,
        matrix: Matrix,
        options: RunOptions,
        session_factory: Callable[[Matrix, RunOptions, Callable[[Event], None]], Session] = Session,
    ) -> None:
        super().__init__()
        self.matrix = matrix
        self.options = options
        self.session_factory = session_factory
        self.report = empty_report()
        self.session: Session | None = None
        self._dirty: set[str] = set()
        self._rows_built = False
        self._quitting = False
        self.events_seen = 0

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static("connecting to the docker engine…", id="status")
        yield DataTable(id="grid", cursor_type="cell", zebra_stripes=False)
        yield Footer()

    def on_mount(self) -> None:
        self.sub_title = self.matrix.title
        self.set_interval(FLUSH_SECONDS, self.flush)
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGHUP):
            try:
                loop.add_signal_handler(sig, lambda: self.call_later(self.action_quit_clean))
            except (NotImplementedError, RuntimeError):  # not the main thread (tests)
                pass
        self.run_matrix()

    # -- the run ------------------------------------------------------------------------
    @work(exclusive=True, group="run", exit_on_error=False)
    async def run_matrix(self) -> None:
        self.session = self.session_factory(self.matrix, self.options, self.handle_run_event)
        try:
            await self.session.open()
            await self.session.run()
        finally:
            await asyncio.shield(self.session.close())

    def handle_run_event(self, event: Event) -> None:
        self.events_seen += 1
        self.report = reduce(self.report, event)
        if isinstance(event, RunStarted):
            self._rows_built = False
            self._dirty.clear()
        elif hasattr(event, "cell_id"):
            self._dirty.add(event.cell_id)

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.worker.group != "run":
            return
        status = self.query_one("#status", Static)
        if event.state is WorkerState.ERROR:
            status.update(Text(f"error: {event.worker.error}", style="bold red"))
        elif event.state is WorkerState.SUCCESS:
            status.update(Text(self._progress_text() + " - finished", style="bold"))
        self.flush()

    # -- drawing ------------------------------------------------------------------------
    def _build_rows(self) -> None:
        table = self.query_one("#grid", DataTable)
        table.clear(columns=True)
        arches = list(self.report.arches)
        table.add_column("component", key="component")
        for arch in arches:
            table.add_column(arch, key=arch)
        for _category, cid, _name, cells in grid_rows(self.report):
            row = [Text(inert(cid, 0))] + [cell_renderable(cells[a]) if a in cells else Text("") for a in arches]
            table.add_row(*row, key=cid)
        self._rows_built = True

    def flush(self) -> None:
        """Write the cells that changed since the last tick, in one batch."""
        if not self.report.cells:
            return
        if not self._rows_built:
            self._build_rows()
            self._dirty.clear()
        elif self._dirty:
            table = self.query_one("#grid", DataTable)
            dirty, self._dirty = self._dirty, set()
            with self.batch_update():
                for cell_id in dirty:
                    cell = self.report.cells.get(cell_id)
                    if cell is not None:
                        table.update_cell(cell.component, cell.arch, cell_renderable(cell))
        if not self._quitting:
            self.query_one("#status", Static).update(self._progress_text())

    def _progress_text(self) -> str:
        cells = self.report.cells.values()
        done = sum(1 for c in cells if c.status.finished)
        counts = {s: sum(1 for c in cells if c.status is s) for s in Status if s.finished}
        parts = " ".join(f"{GLYPH[s]}{n}" for s, n in counts.items() if n)
        return f"{done}/{len(self.report.cells)} cells done {parts}"

    def cell_text(self, component: str, arch: str) -> str:
        """The text a cell shows now (for tests and screen readers)."""
        table = self.query_one("#grid", DataTable)
        value = table.get_cell(component, arch)
        return value.plain if isinstance(value, Text) else str(value)

    # -- actions ------------------------------------------------------------------------
    async def action_quit_clean(self) -> None:
        """Stop the run, remove what it started (saying so), then exit."""
        if self._quitting:
            return
        self._quitting = True
        running = [w for w in self.workers if w.group == "run" and w.is_running]
        if running:
            self.query_one("#status", Static).update(
                Text("stopping the run and cleaning up containers…", style="bold yellow")
            )
            for worker in running:
                worker.cancel()
            for worker in running:
                try:
                    await worker.wait()
                except Exception:  # noqa: S110 - cancelled or failed: either way it ended
                    pass
        self.exit(exit_code([c.status for c in self.report.cells.values()]) if self.report.cells else 0)


def run_app(matrix: Matrix, options: RunOptions) -> int:
    app = EcoreadyApp(matrix, options)
    code = app.run()
    return code if isinstance(code, int) else 0
