"""The TUI shows a component name and a cell detail carrying `<script>`, Rich markup,
ANSI/OSC escapes and bidi or invisible characters as plain, inert text (those shown
escaped)."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from rich.text import Text
from textual.widgets import DataTable

from ecoready.domain.events import (
    AuditReported,
    CellFinished,
    CellLog,
    CellPlanned,
    CellStarted,
    Event,
    RunFinished,
    RunStarted,
)
from ecoready.domain.model import AuditResult, BinaryAudit, Finding, Profile, Severity, Status
from ecoready.matrix.load import load
from ecoready.run.session import RunOptions
from ecoready.ui.tui.app import EcoreadyApp
from tests.support.cli import LAB_MATRIX

NAME = "[bold red]boom[/][link=https://evil.example]x[/link]\x1b[31m<script>alert(1)</script>"
LINE = (
    "[blink]log[/blink] \x1b]8;;https://evil.example\x1b\\osc\x1b]8;;\x1b\\ \x1b[2J<script>alert(2)</script>"
    " rtl\u202eoverride\u2066isolate\u200bzero"
)
ACTING = ("\x1b", "\x07", "\u202e", "\u2066", "\u200b")
# a program's path and build notes come from the image: as hostile as a log line
PROGRAM = "[reverse]/usr/sbin/x[/reverse]\x1b[5m<script>alert(3)</script>"


class QuietSession:
    """No engine: the test feeds the events itself through `handle_run_event`."""

    run_id = "0" * 32

    def __init__(self, matrix: object, options: object, emit: Callable[[Event], None]) -> None:
        self.emit = emit

    async def open(self) -> None:
        pass

    async def run(self) -> None:
        pass

    async def rerun(self, cell_ids: Iterable[str]) -> None:
        pass

    async def close(self) -> None:
        pass


def events() -> list[Event]:
    cell_id = f"{NAME}/amd64"
    planned = CellPlanned(cell_id, NAME, NAME, "server", "amd64", "local", False)
    at = "2026-01-01T00:00:00.000Z"
    return [
        RunStarted("1" * 32, at, "m.toml", Profile.SMOKE, ("amd64",), (planned,)),
        CellStarted(cell_id, at),
        CellLog(cell_id, (LINE,)),
        AuditReported(
            cell_id,
            AuditResult(
                "amd64",
                "sha256:0",
                (BinaryAudit("mysqld", PROGRAM, "amd64", build=PROGRAM, x86_needs="x86-64"),),
                (Finding("mysqld", "x86-level", Severity.NOTE, PROGRAM),),
            ),
        ),
        CellFinished(cell_id, at, 1.0, status=Status.BROKEN, detail=LINE),
        RunFinished(at),
    ]


def assert_inert(value: object) -> str:
    assert isinstance(value, Text)
    assert not value.spans  # markup in the text made no styles
    assert not any(char in value.plain for char in ACTING)
    return value.plain


async def test_markup_script_and_escapes_stay_text_in_the_grid() -> None:
    app = EcoreadyApp(load(LAB_MATRIX), RunOptions(), session_factory=QuietSession)
    async with app.run_test(size=(160, 20)) as pilot:
        for event in events():
            app.handle_run_event(event)
        app.flush()
        await pilot.pause()
        table = app.query_one("#grid", DataTable)
        label = assert_inert(table.get_cell(NAME, "component")).strip()  # indented under its category
        cell = assert_inert(table.get_cell(NAME, "amd64"))
        grid_screen = app.export_screenshot()
        await pilot.press("enter")  # the detail view shows the whole name and log line
        await pilot.pause()
        detail_screen = app.export_screenshot()
    assert label.startswith("[bold red]boom[/][link=https://evil.example]x[/link]")
    assert label.endswith("<script>alert(1)</script>")
    assert cell.startswith("✘ broken: [blink]log[/blink]")
    for screen in (grid_screen, detail_screen):
        assert not any(char in screen for char in ACTING)
    assert "rtl\\u202eoverride\\u2066isolate\\u200bzero" in detail_screen.replace("&#160;", " ")
    assert "[bold red]boom[/]" in grid_screen.replace("&#160;", " ")  # narrow column: the start of it
    assert "&lt;script&gt;alert(1)" in detail_screen  # drawn as text on the screen
    assert "&lt;script&gt;alert(2)" in detail_screen
    assert "&lt;script&gt;alert(3)" in detail_screen  # the build audit's path, build notes and finding
    assert "[reverse]/usr/sbin/x[/reverse]" in detail_screen.replace("&#160;", " ")
