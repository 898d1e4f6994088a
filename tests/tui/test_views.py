"""The app driven by the keyboard over recorded runs: every footer key does what it says.

Recorded streams make these fast and exact; `test_lab_actions.py` does the same keys over
a real lab run.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from textual.pilot import Pilot
from textual.widgets import Input, OptionList

from ecoready.domain.errors import EnvironmentProblem
from ecoready.domain.events import RunNote
from ecoready.domain.model import Status
from ecoready.domain.state import fold
from ecoready.run.session import RunOptions
from ecoready.ui.tui.app import EcoreadyApp
from ecoready.ui.tui.compare import CompareScreen
from ecoready.ui.tui.detail import DetailScreen
from ecoready.ui.tui.export import ExportScreen
from ecoready.ui.tui.filters import FilterScreen
from ecoready.ui.tui.help import HelpScreen
from ecoready.ui.tui.look import cell_label
from tests.support import streams
from tests.support.keys import choose, quit_and_wait, wait_until


def make_app(events: list) -> EcoreadyApp:
    return EcoreadyApp(streams.recorded_matrix(), RunOptions(), streams.replay(events), spin=False)


async def settle(app: EcoreadyApp, pilot: Pilot) -> None:
    """Until the recorded run is played and the grid shows it."""
    await app.workers.wait_for_complete()
    app.flush()
    await pilot.pause()


def notes(app: EcoreadyApp) -> list[str]:
    return [n.message for n in app._notifications]


async def test_the_grid_shows_the_folded_report() -> None:
    events = streams.lab_like()
    app = make_app(events)
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(app, pilot)
        report = fold(events)
        for cell in report.cells.values():
            assert app.cell_text(cell.component, cell.arch) == cell_label(cell, app.grid.arch_width)
        assert app.cell_text("connector-python", "arm64").startswith("▶ start")
        assert app.cell_text("proxysql-2.7", "arm64") == "∅ missing"  # never ran: no emulated mark
        assert app.grid.shown == [
            "mariadb-10.11",
            "mariadb-11.8",
            "proxysql-2.7",
            "galera-3node",
            "mariadb-backup",
            "connector-python",
        ]
        assert app.grid.selection() == ("mariadb-10.11", "amd64")  # the cursor starts on a cell


async def test_enter_opens_the_details_of_the_selected_cell() -> None:
    app = make_app(streams.lab_like())
    async with app.run_test(size=(100, 40)) as pilot:
        await settle(app, pilot)
        await pilot.press("down", "right", "enter")  # mariadb-11.8 on arm64
        assert isinstance(app.screen, DetailScreen)
        assert app.screen.cell_id == "mariadb-11.8/arm64"
        body = app.screen.body_text()
        assert "◐ partial" in body and "charset utf8mb4  ✘ fail" in body
        assert "character_set_server is latin1" in body
        assert "[red]not markup[/red]" in body  # log text shown as text, never as markup
        await pilot.press("escape")
        assert not isinstance(app.screen, DetailScreen)
        await pilot.press("down")  # category rows are skipped: galera is two rows below
        assert app.grid.selection() == ("proxysql-2.7", "arm64")
        await pilot.press("ctrl+home")  # top, bottom and page keys never rest on a heading either
        assert app.grid.selection() == ("mariadb-10.11", "arm64")
        await pilot.press("pagedown", "ctrl+end")
        assert app.grid.selection() == ("connector-python", "arm64")
        await pilot.press("up")
        assert app.grid.selection() == ("mariadb-backup", "arm64")


async def test_r_reruns_the_selected_cell_and_R_waits_until_nothing_runs() -> None:
    events = streams.two_native_hosts()
    app = make_app(events)
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(app, pilot)
        session = app.session
        assert isinstance(session, streams.ReplaySession)
        seen = app.events_seen
        await pilot.press("r")
        await settle(app, pilot)
        assert session.reruns == [["mariadb-10.11/amd64"]]
        assert app.events_seen - seen == sum(getattr(e, "cell_id", "") == "mariadb-10.11/amd64" for e in events)
        assert app.cell_text("mariadb-10.11", "amd64") == "✔ ready 4.2s + bench 60.0s"  # start and bench apart
        await pilot.press("R")
        await settle(app, pilot)
        assert sorted(session.reruns[-1]) == sorted(fold(events).cells)

    busy = make_app(streams.lab_like())  # connector-python/arm64 is still running there
    async with busy.run_test(size=(120, 30)) as pilot:
        await settle(busy, pilot)
        await pilot.press("R")
        assert isinstance(busy.session, streams.ReplaySession)
        assert busy.session.reruns == []
        assert any("still running" in n for n in notes(busy))


async def test_cells_waiting_for_their_turn_in_a_rerun_show_as_pending() -> None:
    events = streams.two_native_hosts()
    app = make_app(events)
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(app, pilot)
        session = app.session
        assert isinstance(session, streams.ReplaySession)
        session.gate = asyncio.Event()
        await pilot.press("R")
        app.flush()
        await pilot.pause()
        assert app.cell_text("mariadb-10.11", "amd64") == "· pending"
        assert app.cell_text("pmm-server", "arm64") == "· pending"
        assert str(app.progress_line.render()).startswith("0/10 done")
        assert app.report.cells["mariadb-10.11/amd64"].status is Status.READY  # the report is untouched
        session.gate.set()
        await settle(app, pilot)
        assert app.cell_text("mariadb-10.11", "amd64") == "✔ ready 4.2s + bench 60.0s"  # start and bench apart
        assert str(app.progress_line.render()).startswith("10/10 done")


async def test_f_filters_by_category_and_status() -> None:
    app = make_app(streams.lab_like())
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(app, pilot)
        await pilot.press("f")
        assert isinstance(app.screen, FilterScreen)
        await choose(pilot, "category:server")
        assert app.grid.shown == ["mariadb-10.11", "mariadb-11.8"]
        await pilot.press("f")
        await choose(pilot, "status:partial")
        assert app.grid.shown == ["mariadb-11.8"]
        assert "category server · status partial" in str(app.query_one("#progress").render())
        await pilot.press("f")
        await choose(pilot, "clear")
        assert len(app.grid.shown) == 6


async def test_slash_searches_and_escape_clears() -> None:
    app = make_app(streams.lab_like())
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(app, pilot)
        await pilot.press("slash", *"backup")
        assert app.grid.shown == ["mariadb-backup"]
        await pilot.press("enter")  # keep the filter, back to the grid
        assert app.focused is app.grid
        assert app.grid.selection() == ("mariadb-backup", "amd64")
        await pilot.press("slash", "escape")
        assert len(app.grid.shown) == 6


async def test_e_exports_to_the_path_typed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # a relative path is relative to the working directory
    events = streams.lab_like()
    app = make_app(events)
    target = tmp_path / "out.json"
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(app, pilot)
        await pilot.press("e")
        assert isinstance(app.screen, ExportScreen)
        await pilot.press("ctrl+u", *"out.json", "enter")
        await pilot.pause()
        assert not isinstance(app.screen, ExportScreen)
        assert any("out.json (JSON)" in n for n in notes(app))
    data = json.loads(target.read_text())
    assert data["run_id"] == fold(events).run_id and len(data["cells"]) == 12


async def test_e_exports_in_the_format_chosen(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    app = make_app(streams.lab_like())
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(app, pilot)
        await pilot.press("e", "shift+tab")
        await choose(pilot, "format-markdown")  # enter picks it and goes back to the file
        path_input = app.screen.query_one("#export-path", Input)
        assert path_input.value == "ecoready-01234567.md" and app.focused is path_input
        formats = app.screen.query_one("#export-format", OptionList)
        assert str(formats.get_option("format-markdown").prompt).startswith("●")
        await pilot.press("enter")
        await pilot.pause()
    text = (tmp_path / "ecoready-01234567.md").read_text()
    assert "mariadb-backup" in text and not text.lstrip().startswith("{")


async def test_the_dialog_marks_the_format_the_extension_typed_will_write(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    app = make_app(streams.lab_like())
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(app, pilot)
        await pilot.press("e", "ctrl+u", *"out.html")
        formats = app.screen.query_one("#export-format", OptionList)
        assert str(formats.get_option("format-html").prompt).startswith("●")
        assert str(formats.get_option("format-json").prompt).startswith("○")
        await pilot.press("enter")
        await pilot.pause()
        assert any("out.html (HTML)" in n for n in notes(app))
        assert app.saved == ["out.html"] and not app.saved_json
    assert (tmp_path / "out.html").read_text().startswith("<!DOCTYPE html>")


async def test_export_says_why_it_cannot_write(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    app = make_app(streams.lab_like())
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(app, pilot)
        await pilot.press("e", "ctrl+u", *"no/dir.json", "enter")
        await pilot.pause()
        assert isinstance(app.screen, ExportScreen)
        assert "does not exist" in str(app.screen.query_one("#export-error").render())
        await pilot.press("escape")
        assert not isinstance(app.screen, ExportScreen)


async def test_c_compares_and_question_mark_helps() -> None:
    app = make_app(streams.two_native_hosts())
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(app, pilot)
        assert app.cell_text("mariadb-10.11", "compare") == "tps ×1.08 $ ×1.35"
        await pilot.press("c")
        assert isinstance(app.screen, CompareScreen)
        body = app.screen.body_text()
        assert "+35.0%" in body and "mysql-8.4" in body
        await pilot.press("escape", "question_mark")
        assert isinstance(app.screen, HelpScreen)
        await pilot.press("escape")
        assert app.screen is app.screen_stack[0]


async def test_t_switches_theme_and_the_cells_follow() -> None:
    app = make_app(streams.lab_like())
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(app, pilot)
        background = app.screen.styles.background
        await pilot.press("t")
        await pilot.pause()
        assert not app.current_theme.dark
        assert app.screen.styles.background != background
        assert app.cell_text("proxysql-2.7", "arm64") == "∅ missing"  # drawn again, same words
        await pilot.press("t")
        assert app.current_theme.dark


async def test_no_color_keeps_the_glyphs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NO_COLOR", "1")
    app = make_app(streams.lab_like())
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(app, pilot)
        assert app.no_color
        assert app.cell_text("mariadb-backup", "arm64").startswith("✘ broken")
        for cell in fold(streams.lab_like()).cells.values():  # weight and slant only, no colour
            style = app.grid.get_cell(cell.component, cell.arch).style
            assert not isinstance(style, str) and style.color is None


async def test_q_closes_the_session_and_exits_with_the_run_code() -> None:
    app = make_app(streams.two_native_hosts())
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(app, pilot)
        await pilot.press("enter")  # q works from a view too
        await quit_and_wait(app, pilot)
    assert isinstance(app.session, streams.ReplaySession) and app.session.closed
    assert app.return_code == app.return_value == 1  # some cells are not ready
    assert fold(streams.two_native_hosts()).cells["pmm-server/arm64"].status is Status.MISSING


class UnreachableEngine(streams.ReplaySession):
    async def open(self) -> None:
        raise EnvironmentProblem("cannot connect to the docker engine at unix:///nowhere.sock")


async def test_a_run_that_cannot_start_says_why_and_exits_3() -> None:
    app = EcoreadyApp(
        streams.recorded_matrix(),
        RunOptions(),
        lambda matrix, options, emit: UnreachableEngine([], emit),
        spin=False,
    )
    async with app.run_test(size=(100, 24)) as pilot:
        await wait_until(pilot, lambda: "run failed" in str(app.progress_line.render()), "the failure shown")
        assert "docker engine" in str(app.progress_line.render())
        assert "no run" in str(app.header.render())
        await pilot.press("R")  # nothing to re-run: it says so instead of failing
        assert any("nothing to re-run" in n for n in notes(app))
        await quit_and_wait(app, pilot)
    assert app.return_code == 3


async def test_notes_from_the_run_are_shown_as_text_never_markup() -> None:
    note = RunNote("[link=http://evil.example]click[/link] \x1b[2J removed 2 resource(s)")
    app = make_app([note, *streams.lab_like()])
    async with app.run_test(size=(100, 24)) as pilot:
        await settle(app, pilot)
        shown = [n for n in app._notifications if n.title == "note"]
        assert shown and shown[0].markup is False
        assert shown[0].message == "[link=http://evil.example]click[/link]  removed 2 resource(s)"


@pytest.mark.parametrize(
    ("name", "starts"),
    [("out.html", "<!DOCTYPE html>"), ("out.md", "# ecoready"), ("out.xml", "<?xml"), ("out.json", "{")],
)
async def test_export_writes_the_format_the_extension_says(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, starts: str
) -> None:
    monkeypatch.chdir(tmp_path)
    app = make_app(streams.lab_like())
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(app, pilot)
        await pilot.press("e", "ctrl+u", *name, "enter")
        await pilot.pause()
        assert not isinstance(app.screen, ExportScreen)
    assert (tmp_path / name).read_text().startswith(starts)


async def test_a_format_picked_wins_over_the_extension(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    app = make_app(streams.lab_like())
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(app, pilot)
        await pilot.press("e", "shift+tab")
        await choose(pilot, "format-markdown")
        await pilot.press("ctrl+u", *"notes.txt", "enter")
        await pilot.pause()
    assert (tmp_path / "notes.txt").read_text().startswith("# ecoready")


async def test_escape_on_the_grid_clears_a_kept_search() -> None:
    app = make_app(streams.lab_like())
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(app, pilot)
        await pilot.press("slash", *"backup", "enter")  # kept: back on the grid, still filtered
        assert app.focused is app.grid and app.grid.shown == ["mariadb-backup"]
        assert app.check_action("clear_search", ())  # offered in the footer only now
        await pilot.press("escape")
        await pilot.pause()
        assert len(app.grid.shown) == 6 and not app.search_box.value
        assert not app.check_action("clear_search", ())


async def test_s_saves_an_svg_screenshot_and_says_where(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    app = make_app(streams.lab_like())
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(app, pilot)
        await pilot.press("s")
        await pilot.pause()
        (shot,) = tmp_path.glob("ecoready-01234567-*.svg")
        assert any(f"saved {shot}" in n for n in notes(app))
    text = shot.read_text()
    assert text.startswith("<svg") and "mariadb" in text


def test_the_exit_line_says_the_answer_and_where_the_report_went(tmp_path: Path) -> None:
    from ecoready.ui.tui.answer import exit_line

    report = fold(streams.lab_like())
    kept: list[str] = []

    def keep(name: str, text: str) -> Path:
        kept.append(text)
        return tmp_path / name

    line = exit_line(report, [], keep)
    assert line.startswith(
        "ecoready: amd64 5 of 6 ready, 1 not checked · arm64 1 of 6 ready, 2 blocked, 1 partial, 1 timed out, 1 to go;"
    )  # every cell in one group
    assert f"JSON kept in {tmp_path / 'ecoready-01234567.json'}" in line
    assert json.loads(kept[0])["run_id"] == report.run_id
    # an HTML export alone does not lose the JSON; a JSON export is the record itself
    html_only = exit_line(report, ["out.html"], keep)
    assert "; report written to out.html; JSON kept in " in html_only and len(kept) == 2
    assert exit_line(report, ["out.json"], keep, saved_json=True).endswith("; report written to out.json")
    assert len(kept) == 2
