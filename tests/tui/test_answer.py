"""The answer at a glance in the TUI: a verdict line per arch above the grid, and the
selected cell's reason and remedy under it, for a broken and a missing cell."""

from __future__ import annotations

from ecoready.run.session import RunOptions
from ecoready.ui.tui.app import EcoreadyApp
from ecoready.ui.tui.detail import DetailScreen
from tests.support import streams


async def test_verdict_lines_and_the_reason_of_a_broken_and_a_missing_cell() -> None:
    app = EcoreadyApp(streams.recorded_matrix(), RunOptions(), streams.replay(streams.lab_like()), spin=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await app.workers.wait_for_complete()
        app.flush()
        await pilot.pause()
        amd64, arm64, registry = str(app.verdicts.render()).splitlines()
        assert amd64.startswith("amd64 (native): 5 of 6 components ready;")
        assert "not checked: connector-python (registry 127.0.0.1:5000 unreachable)" in amd64
        assert arm64.startswith("arm64 (emulated): 1 of 6 components ready so far, 1 to go;")
        assert "blocked by proxysql-2.7 (no arm64 image), mariadb-backup (does not start)" in arm64
        assert "partial: mariadb-11.8 (charset utf8mb4 failed)" in arm64
        assert registry.startswith("⚠ registry 127.0.0.1:5000: unreachable (connection refused): 1 cell")
        assert "way out: start the registry at 127.0.0.1:5000" in registry  # one on this machine: not started

        await pilot.press("down", "right", "down")  # proxysql-2.7 on arm64: missing
        app.flush()
        assert app.grid.selection() == ("proxysql-2.7", "arm64")
        reason = str(app.reason.render())
        assert reason.startswith("∅ proxysql-2.7/arm64: missing: no arm64 image: the index publishes amd64")
        assert "\nwhat to do: look for a tag that publishes arm64" in reason

        await pilot.press("ctrl+end", "up")  # mariadb-backup on arm64: broken
        app.flush()
        assert app.grid.selection() == ("mariadb-backup", "arm64")
        reason = str(app.reason.render())
        assert reason.startswith("✘ mariadb-backup/arm64 ᵉemulated: broken: does not start: exec format error")
        assert "\nwhat to do: register an emulator for arm64 (qemu-user >= 8" in reason
        await pilot.press("enter")  # the details say it too
        assert isinstance(app.screen, DetailScreen)
        body = app.screen.body_text()
        assert "why: does not start: exec format error" in body and "what to do: register an emulator" in body


def test_a_cell_ready_only_under_a_suffix_tag_says_which_tag_to_pin() -> None:
    from dataclasses import replace

    from ecoready.domain.images import ImageInfo
    from ecoready.domain.model import Status
    from ecoready.domain.state import fold
    from ecoready.ui.tui.answer import reason_text

    report = fold(streams.lab_like())
    cell = report.cells["mariadb-10.11/arm64"]
    image = ImageInfo("lab/gap-suffix-only:1", "arm64", found_as="tag 1-aarch64", found_tag="1-aarch64")
    tagged = replace(cell, image=image)
    assert tagged.status is Status.READY
    text = reason_text(report, tagged).plain
    assert text == "✔ mariadb-10.11/arm64 ᵉemulated: ready under the tag 1-aarch64 only: pin that tag for arm64"
