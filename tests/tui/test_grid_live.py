"""The TUI grid fed by a real lab run: cells change live from pending/running to ready,
and `q` quits after cleaning up."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from app.config import load
from app.session import RunOptions
from app.tui.app import EcoreadyApp
from tests.conftest import docker_labelled

pytestmark = pytest.mark.docker


async def test_grid_updates_live_from_a_real_run(lab: Path, no_leaks: None) -> None:
    app = EcoreadyApp(load(lab), RunOptions(only=["mariadb-10.11"]))
    history: dict[str, list[str]] = {"amd64": [], "arm64": []}
    async with app.run_test(size=(120, 30)) as pilot:
        deadline = time.monotonic() + 600
        while time.monotonic() < deadline:
            await pilot.pause(0.2)
            if not app.report.cells or not app._rows_built:
                continue
            for arch in history:
                text = app.cell_text("mariadb-10.11", arch)
                if not history[arch] or history[arch][-1] != text:
                    history[arch].append(text)
            if all(c.status.finished for c in app.report.cells.values()):
                break
        await pilot.pause(0.3)
        for arch in history:
            text = app.cell_text("mariadb-10.11", arch)
            if history[arch][-1] != text:
                history[arch].append(text)
        await pilot.press("q")
        await pilot.pause()
    for arch, texts in history.items():
        assert texts[-1].startswith("✔ ready"), (arch, texts)
        assert any(t.startswith("▶") for t in texts), (arch, texts)  # it was seen running first
    assert history["arm64"][-1].endswith("ᵉ") and not history["amd64"][-1].endswith("ᵉ")
    assert app.return_code == 0


async def test_quit_during_a_run_cleans_up(lab: Path, no_leaks: None) -> None:
    app = EcoreadyApp(load(lab), RunOptions(only=["mariadb-10.11"], arches=["arm64"]))
    async with app.run_test(size=(100, 24)) as pilot:
        while not (app.session and app.session.run_id):
            await pilot.pause(0.1)
        label = f"ecoready.run={app.session.run_id}"
        deadline = time.monotonic() + 120
        while not docker_labelled(label)["containers"] and time.monotonic() < deadline:
            await asyncio.sleep(0.3)
        assert docker_labelled(label)["containers"], "the run should have started a container"
        await pilot.press("q")
        await pilot.pause(0.5)
    assert docker_labelled(label) == {"containers": [], "networks": [], "volumes": []}
