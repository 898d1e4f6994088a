"""The TUI over real lab runs: cells change live, one cell is re-run with the run's own id,
filter, search and export work on the live report, and `q` leaves nothing labelled."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path

import pytest

from ecoready.matrix.load import load
from ecoready.run.session import RunOptions
from ecoready.ui.tui.app import EcoreadyApp
from tests.support.cli import docker_labelled
from tests.support.keys import choose, quit_and_wait, wait_until

pytestmark = pytest.mark.docker

NOTHING: dict[str, list[str]] = {"containers": [], "networks": [], "volumes": []}

# Three rows, three categories, two statuses: a real server start on amd64, a single-arch
# image asked for arm64 (missing: "a single-arch image for amd64") and an image that does
# not exist at all (missing: not found). Only the first starts a container.
MATRIX = """
title = "tui lab"
arches = ["amd64", "arm64"]
profile = "smoke"

[[components]]
id = "mariadb-10.11"
category = "server"
probe = "server"
image = "127.0.0.1:5000/lab/mariadb:10.11"
arches = ["amd64"]

[[components]]
id = "mariadb-x86-only"
name = "MariaDB published for amd64 only"
category = "ha"
probe = "server"
image = "127.0.0.1:5000/amd64/mariadb:10.11"
arches = ["arm64"]

[[components]]
id = "ghost"
name = "an image nobody published"
category = "toolkit"
probe = "server"
image = "127.0.0.1:5000/lab/does-not-exist:1"
arches = ["amd64"]
"""


class Recorder:
    """Every distinct text each watched cell showed, in order."""

    def __init__(self, app: EcoreadyApp, cells: list[tuple[str, str]]) -> None:
        self.app = app
        self.texts: dict[tuple[str, str], list[str]] = {c: [] for c in cells}

    def look(self) -> None:
        if not self.app.rows_built:
            return
        for key, seen in self.texts.items():
            if key[0] not in self.app.grid.shown:
                continue
            text = self.app.cell_text(*key)
            if not seen or seen[-1] != text:
                seen.append(text)

    def until(self, done: Callable[[], bool]) -> Callable[[], bool]:
        def check() -> bool:
            self.look()
            return done()

        return check


async def test_grid_updates_live_from_a_real_run(lab: Path, no_leaks: None) -> None:
    app = EcoreadyApp(load(lab), RunOptions(only=["mariadb-10.11"]))
    rec = Recorder(app, [("mariadb-10.11", "amd64"), ("mariadb-10.11", "arm64")])
    async with app.run_test(size=(120, 30)) as pilot:
        await wait_until(
            pilot,
            rec.until(lambda: bool(app.report.cells) and all(c.status.finished for c in app.report.cells.values())),
            "the run to finish",
        )
        app.flush()
        rec.look()
        await quit_and_wait(app, pilot)
    for key, texts in rec.texts.items():
        assert texts[-1].startswith("✔ ready"), (key, texts)
        assert any(t.startswith("▶") for t in texts), (key, texts)  # seen running first
    assert rec.texts[("mariadb-10.11", "arm64")][-1].endswith("ᵉ")
    assert not rec.texts[("mariadb-10.11", "amd64")][-1].endswith("ᵉ")
    assert app.return_code == 0


async def test_quit_during_a_run_cleans_up(lab: Path, no_leaks: None) -> None:
    app = EcoreadyApp(load(lab), RunOptions(only=["mariadb-10.11"], arches=["arm64"]))
    async with app.run_test(size=(100, 24)) as pilot:
        await wait_until(pilot, lambda: bool(app.session and app.report.run_id), "the run to start", 120)
        assert app.session is not None
        label = f"ecoready.run={app.session.run_id}"
        await wait_until(pilot, lambda: bool(docker_labelled(label)["containers"]), "a container", 120)
        await pilot.press("q")
        await pilot.pause()
        assert "removing its containers" in str(app.progress_line.render())  # says so meanwhile
        while app.return_code is None:
            await asyncio.sleep(0.1)
    assert app.return_code == 130  # stopped a run under way, as Ctrl-C does
    assert docker_labelled(label) == NOTHING


async def test_rerun_filter_search_export_and_quit_on_a_real_run(
    lab: Path, no_leaks: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    matrix_file = tmp_path / "tui.toml"
    matrix_file.write_text(MATRIX)
    monkeypatch.chdir(tmp_path)
    app = EcoreadyApp(load(matrix_file), RunOptions())
    server = ("mariadb-10.11", "amd64")
    rec = Recorder(app, [server, ("mariadb-x86-only", "arm64"), ("ghost", "amd64")])
    async with app.run_test(size=(120, 30)) as pilot:
        await wait_until(
            pilot,
            rec.until(lambda: bool(app.report.cells) and all(c.status.finished for c in app.report.cells.values())),
            "the first pass",
        )
        app.flush()
        rec.look()
        assert app.session is not None
        run_label = f"ecoready.run={app.session.run_id}"
        # pending (when the first look came before its start), then seen running, then ready
        seen = [t for t in rec.texts[server] if not t.startswith("· pending")]
        assert seen[0].startswith("▶") and seen[-1].startswith("✔ ready"), rec.texts[server]
        # never ran: its image is not published for arm64, so no emulation mark on it
        assert rec.texts[("mariadb-x86-only", "arm64")][-1] == "∅ missing"
        assert rec.texts[("ghost", "amd64")][-1] == "∅ missing"
        assert app.grid.shown == ["mariadb-10.11", "mariadb-x86-only", "ghost"]

        # filter: f, then a status; f again, then clear
        await pilot.press("f")
        await choose(pilot, "status:missing")
        assert app.grid.shown == ["mariadb-x86-only", "ghost"]
        await pilot.press("f")
        await choose(pilot, "category:toolkit")
        assert app.grid.shown == ["ghost"]
        await pilot.press("f")
        await choose(pilot, "clear")
        assert len(app.grid.shown) == 3

        # search: by name as well as id
        await pilot.press("slash", *"nobody")
        assert app.grid.shown == ["ghost"]
        await pilot.press("escape")
        assert len(app.grid.shown) == 3

        # re-run the server cell: up to it (the cursor stayed on ghost), r; same run id
        for _ in range(3):
            if app.grid.selection() != server:
                await pilot.press("up")
        assert app.grid.selection() == server
        before = {k: v[-1] for k, v in rec.texts.items()}
        rec.texts[server].clear()
        await pilot.press("r")
        containers: list[str] = []

        def rerun_done() -> bool:
            if not containers:
                containers.extend(docker_labelled(run_label)["containers"])
            return app.report.cells["mariadb-10.11/amd64"].status.finished and not any(
                w.group == "rerun" and w.is_running for w in app.workers
            )

        await wait_until(pilot, rec.until(rerun_done), "the re-run")
        app.flush()
        rec.look()
        assert containers, "the re-run started a container labelled with the run's id"
        assert any(t.startswith("▶") for t in rec.texts[server])  # it ran again...
        assert rec.texts[server][-1].startswith("✔ ready")  # ...and is ready again
        for key in rec.texts:
            if key != server:
                assert rec.texts[key][-1] == before[key]  # only the chosen cell ran again

        # export: e, a path, enter
        await pilot.press("e", "ctrl+u", *"lab.json", "enter")
        await pilot.pause()
        exported = json.loads((tmp_path / "lab.json").read_text())
        assert {c["id"]: c["status"] for c in exported["cells"]} == {
            "mariadb-10.11/amd64": "ready",
            "mariadb-x86-only/arm64": "missing",
            "ghost/amd64": "missing",
        }

        await quit_and_wait(app, pilot)
    await asyncio.sleep(0)
    assert docker_labelled(run_label) == NOTHING
    assert app.return_code == 1  # two cells are missing


async def test_cells_waiting_for_the_one_slot_read_queued(lab: Path, no_leaks: None) -> None:
    """`--concurrency 1`: while one cell holds the slot, the other reads `· queued`, with
    no timer and no spinner, and the progress line counts it as queued, not running."""
    app = EcoreadyApp(load(lab), RunOptions(only=["mariadb-10.11"], concurrency=1))
    cells = [("mariadb-10.11", "amd64"), ("mariadb-10.11", "arm64")]
    rec = Recorder(app, cells)
    lines: list[str] = []

    def one_queued_one_started() -> bool:
        texts = [app.cell_text(*c) for c in cells] if app.rows_built else []
        # either may get the slot first; the emulated one carries its mark: `· queued ᵉ`
        if any(t.removesuffix(" ᵉ") == "· queued" for t in texts) and any(t.startswith("▶ start") for t in texts):
            lines.append(str(app.progress_line.render()))
            return True
        return False

    async with app.run_test(size=(120, 30)) as pilot:
        await wait_until(pilot, rec.until(one_queued_one_started), "one cell starts while the other waits", 300)
        await wait_until(
            pilot,
            rec.until(lambda: all(c.status.finished for c in app.report.cells.values())),
            "the run to finish",
        )
        app.flush()  # the grid shows the last events on the next tick: draw them now
        rec.look()
        await quit_and_wait(app, pilot)
    assert "▶1 running" in lines[0] and "·1 queued" in lines[0], lines
    for key, texts in rec.texts.items():
        assert texts[-1].startswith("✔ ready"), (key, texts)
    assert app.return_code == 0
