"""The interactive readiness grid (Textual).

The run is a worker in the app's own event loop; every event is folded with the same
`state.reduce` the headless path uses. Changed cells are collected and written to the
grid in one batch per tick, by stable row (component) and column (arch) keys. The session
stays open after the run so cells can be re-run with the same run id; `q` stops what runs,
closes the session (which sweeps everything labelled with the run id) and says so meanwhile.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Callable, Iterable
from dataclasses import replace
from pathlib import Path

from rich.style import Style
from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.events import Resize
from textual.widgets import DataTable, Footer, Input
from textual.worker import Worker, WorkerState

from ecoready.domain.errors import EcoreadyError
from ecoready.domain.events import CellStarted, Event, RegistryObserved, RunNote, RunStarted
from ecoready.domain.model import CellResult, Report, Status
from ecoready.domain.state import empty_report, reduce
from ecoready.domain.text import inert, one_line
from ecoready.matrix.document import Matrix
from ecoready.plan.eta import Expected, expected_of
from ecoready.report.cost import Comparison, compare
from ecoready.run.session import RunOptions, Session, exit_code
from ecoready.ui.signals import catch_stop_signals
from ecoready.ui.tui.answer import ReasonLine, VerdictLines, say_on_exit
from ecoready.ui.tui.compare import CompareScreen
from ecoready.ui.tui.detail import DetailScreen
from ecoready.ui.tui.export import Exported, ExportScreen
from ecoready.ui.tui.filters import FilterScreen, RowFilter, SearchBox, apply_choice
from ecoready.ui.tui.grid import COMPARE, COMPONENT, ReadinessGrid, visible_rows
from ecoready.ui.tui.header import RunHeader
from ecoready.ui.tui.help import HelpScreen
from ecoready.ui.tui.look import Motion, palette
from ecoready.ui.tui.quitting import CleanQuit
from ecoready.ui.tui.runs import RunSession, SessionFactory
from ecoready.ui.tui.shots import save_screenshot
from ecoready.ui.tui.statusbar import ProgressLine, ProgressState
from ecoready.ui.tui.timers import WorkTimers

FLUSH_SECONDS = 0.1
# Each spinner step redraws the whole visible table (DataTable renders all or nothing):
# 8 steps/s cost a third of a core at 160x48, 2 steps/s under a tenth.
SPIN_PER_SECOND = 2
THEMES = {"dark": "textual-dark", "light": "textual-light"}


TALL = 40  # rows from which the lines around the grid may take more of the screen


class EcoreadyApp(CleanQuit):
    TITLE = "ecoready"
    CSS_PATH = str(Path(__file__).with_name("app.tcss"))  # absolute: subclasses live elsewhere
    ENABLE_COMMAND_PALETTE = False
    BINDINGS = [
        Binding("r", "rerun", "Rerun"),
        Binding("R", "rerun_all", "Rerun all"),
        Binding("f", "filter", "Filter"),
        Binding("slash", "search", "Search", key_display="/"),
        Binding("e", "export", "Export"),
        Binding("c", "compare", "Compare"),
        Binding("question_mark", "help", "Help", key_display="?"),
        Binding("t", "toggle_theme", "Theme", show=False),
        Binding("s", "save_screenshot", "Screenshot", show=False),
        Binding("escape", "clear_search", "Clear search"),
        Binding("q", "quit_clean", "Quit"),
        Binding("ctrl+c", "quit_clean", "Quit", show=False, priority=True),
        Binding("ctrl+q", "quit_clean", "Quit", show=False, priority=True),
    ]

    def __init__(
        self,
        matrix: Matrix,
        options: RunOptions,
        session_factory: SessionFactory = Session,
        *,
        clock: Callable[[], float] = time.monotonic,
        spin: bool = True,
        theme: str | None = None,
    ) -> None:
        super().__init__()
        self.matrix = matrix
        self.options = options
        self.session_factory = session_factory
        self.clock = clock
        self.spin = spin
        self.theme = THEMES.get(theme or os.environ.get("ECOREADY_THEME", "dark"), THEMES["dark"])
        self.report: Report = empty_report()
        self.session_open = False
        self.row_filter = RowFilter()
        self.progress = ProgressState(clock)
        self._expected: dict[str, Expected] = {}  # cell id -> what it is expected to take (RunStarted)
        self.comparison = Comparison((), ())
        self.events_seen = 0
        self._dirty: set[str] = set()
        self.timers = WorkTimers(clock)  # running cells' timers: their work, not their waits
        # Cells of a re-run not started yet: drawn as pending, not as their old result.
        self._queued: set[str] = set()
        self._rebuild = False
        self._answered: Report | None = None  # the report the verdict lines were drawn for
        self._header_dirty = False
        self._rows_built = False
        self._built_width = 0
        self._frame: int | None = None
        self._notice = ""
        self._error = ""
        self._failure_code: int | None = None  # the exit code when the run itself failed
        self.saved: list[str] = []  # the files written from the app (exports), for the exit line
        self.saved_json = False  # one of them is the JSON (else the JSON is kept on exit too)

    def compose(self) -> ComposeResult:
        # Kept by reference: `query_one` looks at the screen in front, which may be a view.
        self.header = RunHeader(id="run-header")
        self.grid = ReadinessGrid()
        self.search_box = SearchBox(
            placeholder="search components (enter keeps the filter, esc clears it)", id="search"
        )
        self.progress_line = ProgressLine(id="progress")
        self.verdicts, self.reason = VerdictLines(id="verdicts"), ReasonLine(id="reason")
        yield self.header
        yield self.verdicts
        yield self.grid
        yield self.reason
        yield self.search_box
        yield self.progress_line
        yield Footer(compact=True, show_command_palette=False)

    def on_mount(self) -> None:
        self._use_height(self.size.height)
        self.header.show(self.report, self.matrix.title, self.size.width)
        self.set_interval(FLUSH_SECONDS, self.flush)
        catch_stop_signals(asyncio.get_running_loop(), self._stop_signal)
        self.grid.focus()
        self.run_matrix()

    # Actions that make sense on the screen in front; the others are hidden from the footer.
    SCREEN_ACTIONS: dict[type, frozenset[str]] = {
        DetailScreen: frozenset({"rerun", "export", "compare", "help", "toggle_theme", "quit_clean"}),
        CompareScreen: frozenset({"export", "help", "toggle_theme", "quit_clean"}),
    }

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action not in {b.action for b in self.BINDINGS if isinstance(b, Binding)}:
            return True
        if len(self.screen_stack) <= 1:
            # typing a search: letters are text, not commands (ctrl+c still quits)
            if self.focused is self.search_box:
                return action == "quit_clean"
            return bool(self.search_box.value) if action == "clear_search" else True  # a kept search
        allowed = self.SCREEN_ACTIONS.get(type(self.screen), frozenset({"quit_clean"}))
        return action in allowed

    # -- the run --------------------------------------------------------------------------
    @work(exclusive=True, group="run", exit_on_error=False)
    async def run_matrix(self) -> None:
        self.session = self.session_factory(self.matrix, self.options, self.handle_run_event)
        await self.session.open()
        self.session_open = True
        await self.session.run()

    def handle_run_event(self, event: Event) -> None:
        """Fold one event into the report and remember which cell changed (no drawing)."""
        self.events_seen += 1
        self.report = reduce(self.report, event)
        if isinstance(event, RunStarted):
            self._rebuild = True
            self._dirty.clear()
            self.timers.clear()
            self._queued.clear()
            self._expected = expected_of(event.cells)
            self.progress.start(self.report.cells, "run", self._expected)
        elif isinstance(event, RunNote):
            self.notify(inert(event.text), title="note", markup=False)  # text from the run: never markup
        elif isinstance(event, RegistryObserved):
            self._header_dirty = True
        elif hasattr(event, "cell_id"):
            cell_id: str = event.cell_id
            self._dirty.add(cell_id)
            self.timers.see(event)
            if isinstance(event, CellStarted):
                self._queued.discard(cell_id)

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.worker.group not in ("run", "rerun"):
            return
        if self._queued and not any(w.group == "rerun" and w.is_running for w in self.workers):
            self._dirty |= self._queued  # stopped before their turn: their last result stands
            self._queued.clear()
        if event.state is WorkerState.ERROR:
            error = event.worker.error
            self._error = one_line(f"{event.worker.group} failed: {error}", 300)
            if event.worker.group == "run":  # e.g. the engine does not answer: exit 3, as headless
                self._failure_code = error.exit_code if isinstance(error, EcoreadyError) else 3
                self.header.show(self.report, self.matrix.title, self.size.width, failed=True)
            self.notify(
                inert(str(error)), title=f"{event.worker.group} failed", severity="error", timeout=10, markup=False
            )
        self.flush()

    # -- drawing --------------------------------------------------------------------------
    def flush(self) -> None:
        """Write what changed since the last tick, in one batch."""
        if not self.grid.is_attached:  # shutting down
            return
        if self.report.cells:
            motion = self._motion()
            frame = motion.frame if motion else None
            if self._rebuild or not self._rows_built:
                self._build()
            elif self._dirty or (self.timers.since and frame != self._frame):
                self._apply(motion)
            self._frame = frame
        if self._header_dirty:
            self._header_dirty = False
            self.header.show(self.report, self.matrix.title, self.size.width)
        self._show_progress()
        self._show_answer()

    def _show_answer(self) -> None:
        """The verdict lines (when the report changed) and the selected cell's reason."""
        view = self.view
        if view is not self._answered:
            self._answered = view
            self.verdicts.show(view)
        _, column = self.grid.selection() if self._rows_built else (None, None)
        cells = self.selected_cells() if column not in (COMPONENT, COMPARE, None) else []
        self.reason.show(view, view.cells.get(cells[0].id) if cells else None)

    @property
    def view(self) -> Report:
        """The report as drawn: the folded report, with queued re-run cells as pending."""
        if not self._queued:
            return self.report
        cells = dict(self.report.cells)
        for cid in self._queued:
            if cid in cells:
                cells[cid] = replace(cells[cid], status=Status.PENDING, stage=None, detail="")
        return replace(self.report, cells=cells)

    def _motion(self) -> Motion | None:
        if not self.spin:
            return None
        now = self.clock()
        return Motion(int(now * SPIN_PER_SECOND), now, self.timers.since)

    def _build(self) -> None:
        view = self.view
        self.comparison = compare(self.report)
        width = self.size.width
        with self.batch_update():
            self.grid.rebuild(
                view,
                self.row_filter,
                palette(self.current_theme, self.no_color),
                self.comparison,
                width,
                self._motion(),
            )
            self.header.show(self.report, self.matrix.title, self.size.width)
        self._rows_built, self._rebuild, self._built_width = True, False, width
        self._dirty.clear()
        self._refresh_views(set(self.report.cells))

    def _apply(self, motion: Motion | None) -> None:
        dirty, self._dirty = self._dirty, set()
        grid, view = self.grid, self.view
        if self.row_filter.status is not None:  # statuses change: rows may come or go
            wanted = [row[1] for row in visible_rows(view, self.row_filter)]
            if wanted != grid.shown:
                self._build()
                return
        changed = dirty | set(self.timers.since)
        cells = [view.cells[cid] for cid in changed if cid in view.cells]
        finished = [c for c in cells if c.id in dirty and (c.status.finished or c.bench is not None)]
        with self.batch_update():
            grid.update_cells(cells, palette(self.current_theme, self.no_color), motion)
            if finished:
                self.comparison = compare(self.report)
                grid.update_compare(self.report, self.comparison, {c.component for c in finished})
        self._refresh_views(dirty)

    def _refresh_views(self, dirty: set[str]) -> None:
        screen = self.screen
        if isinstance(screen, DetailScreen) and screen.cell_id in dirty and screen.cell_id in self.report.cells:
            screen.show(self.report.cells[screen.cell_id])
        elif isinstance(screen, CompareScreen) and dirty:
            screen.show(self.report)

    def _show_progress(self) -> None:
        line = self.progress_line
        if self._error and not self._notice:
            line.show(Text(self._error, style=Style(bold=True, reverse=True)))
        elif not self.report.cells and not self._notice:
            line.show(Text("starting the run…", style=Style(dim=True)))
        else:
            line.show(self.progress.text(self.view, self._notice, self.row_filter.describe()))

    def on_resize(self, event: Resize) -> None:
        self._use_height(event.size.height)
        if self._rows_built and event.size.width != self._built_width:
            self._rebuild = True

    def _use_height(self, height: int) -> None:
        """A tall terminal gives the verdict and reason lines room to say all (a short one
        keeps them to a few lines: the grid comes first)."""
        tall = height >= TALL
        self.verdicts.styles.max_height = 10 if tall else 4
        self.reason.styles.max_height = 8 if tall else 4

    def cell_text(self, component: str, arch: str) -> str:
        """The text a cell shows now (for tests and screen readers)."""
        return self.grid.text_at(component, arch)

    @property
    def rows_built(self) -> bool:
        return self._rows_built

    # -- selection ------------------------------------------------------------------------
    def selected_cells(self) -> list[CellResult]:
        """The cell under the cursor; on the component column, the cells of its row."""
        component, column = self.grid.selection()
        if component is None:
            return []
        cells = [c for c in self.report.cells.values() if c.component == component]
        if column in (COMPONENT, COMPARE, None):
            return cells
        return [c for c in cells if c.arch == column]

    @on(DataTable.CellSelected, "#grid")
    def open_selected(self, event: DataTable.CellSelected) -> None:
        _, column = self.grid.selection()
        if column == COMPARE:
            self.action_compare()
            return
        cells = self.selected_cells()
        if not cells:
            self.notify("choose a component's cell (this row is a category heading)")
            return
        self.push_screen(DetailScreen(cells[0]))

    # -- actions --------------------------------------------------------------------------
    def rerun_cells(self, cell_ids: Iterable[str]) -> None:
        """Start a re-run of these cells in the open session (those that are not busy)."""
        if self._quitting:
            return
        if self.session is None or not self.session_open:
            self.notify("nothing to re-run yet: the run has not started", severity="warning")
            return
        ids = [cid for cid in cell_ids if cid in self.report.cells]
        ready = [cid for cid in ids if self.report.cells[cid].status.finished]
        if not ready:
            self.notify("already running or waiting for its turn", severity="warning")
            return
        self.progress.start(ready, "re-run", self._expected)
        self._queued.update(ready)  # waiting for a slot until the runner starts them
        self._dirty.update(ready)
        self.run_worker(self.session.rerun(ready), group="rerun", exit_on_error=False)
        self.notify(f"re-running {', '.join(ready) if len(ready) <= 3 else f'{len(ready)} cells'}", markup=False)

    def action_rerun(self) -> None:
        screen = self.screen
        if isinstance(screen, DetailScreen):
            self.rerun_cells([screen.cell_id])
            return
        cells = self.selected_cells()
        if not cells:
            self.notify("choose a component's cell to re-run", severity="warning")
            return
        self.rerun_cells(c.id for c in cells)

    def action_rerun_all(self) -> None:
        busy = any(not c.status.finished for c in self.report.cells.values())
        if busy or any(w.group == "run" and w.is_running for w in self.workers):
            self.notify("cells are still running: R re-runs everything once nothing runs", severity="warning")
            return
        self.rerun_cells(list(self.report.cells))

    def action_filter(self) -> None:
        def chosen(choice: str | None) -> None:
            if choice is not None:
                self.row_filter = apply_choice(self.row_filter, choice)
                self._build()
                self._show_progress()

        self.push_screen(FilterScreen(self.report, self.row_filter), chosen)

    def action_search(self) -> None:
        search = self.search_box
        search.add_class("shown")
        search.focus()

    @on(Input.Changed, "#search")
    def search_changed(self, event: Input.Changed) -> None:
        self.row_filter = RowFilter(self.row_filter.category, self.row_filter.status, event.value.strip())
        if self._rows_built:
            self._build()
        self._show_progress()

    @on(Input.Submitted, "#search")
    def search_done(self, event: Input.Submitted) -> None:
        search = self.search_box
        if not search.value:
            search.remove_class("shown")
        self.grid.focus()

    def action_clear_search(self) -> None:
        self.search_box.action_cancel_search()

    def action_save_screenshot(self) -> None:
        save_screenshot(self, self.report.run_id)

    def action_export(self) -> None:
        if not self.report.run_id:
            self.notify("nothing to export yet: the run has not started", severity="warning")
            return

        def done(result: Exported | None) -> None:
            if result is not None:
                self.saved.append(str(result.path))
                if result.module == "json":
                    self.saved_json = True
                self.notify(inert(f"wrote {result.path} ({result.format})"), title="exported", markup=False)

        self.push_screen(ExportScreen(self.report), done)

    def action_compare(self) -> None:
        if not isinstance(self.screen, CompareScreen):
            self.push_screen(CompareScreen(self.report))

    def action_help(self) -> None:
        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen())

    def action_toggle_theme(self) -> None:
        self.theme = THEMES["light"] if self.current_theme.dark else THEMES["dark"]
        self._rebuild = True
        self.flush()

    # -- ending (quitting.py) ----------------------------------------------------------
    def stopping(self, notice: str) -> None:
        self._notice = notice
        self._show_progress()

    def cut_short(self) -> bool:
        return not self.report.cells or any(not c.status.finished for c in self.view.cells.values())

    def run_code(self) -> int:
        statuses = [c.status for c in self.report.cells.values()]
        return self._failure_code or (exit_code(statuses) if statuses else 0)


def run_app(matrix: Matrix, options: RunOptions, theme: str | None = None) -> int:
    app = EcoreadyApp(matrix, options, theme=theme)
    code = app.run()
    say_on_exit(app.report, app.saved, app.saved_json)
    return code if isinstance(code, int) else 0


__all__ = ["EcoreadyApp", "RunSession", "Status", "run_app"]
