"""SVG snapshots pin the layout at 80x24 and 160x48. They are fed recorded events with a
frozen clock and no spinner, so nothing in them depends on when or how fast they ran.

Update after an intended change with `pytest tests/tui/test_snapshots.py --snapshot-update`
and look at the SVGs before committing them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import pytest
from textual.pilot import Pilot

from ecoready.domain.events import Event
from ecoready.run.session import RunOptions
from ecoready.ui.tui.app import EcoreadyApp
from tests.support import streams


def recorded_app(events: Sequence[Event], theme: str = "dark") -> EcoreadyApp:
    return EcoreadyApp(
        streams.recorded_matrix(),
        RunOptions(),
        streams.replay(list(events)),
        clock=lambda: 0.0,
        spin=False,
        theme=theme,
    )


def settled(*keys: str) -> Callable[[Pilot], Any]:
    async def run_before(pilot: Pilot) -> None:
        app = pilot.app
        assert isinstance(app, EcoreadyApp)
        await app.workers.wait_for_complete()
        app.flush()
        await pilot.pause()
        if keys:
            await pilot.press(*keys)
            await pilot.pause()

    return run_before


def test_lab_grid_at_80x24(snap_compare: Any) -> None:
    assert snap_compare(recorded_app(streams.lab_like()), terminal_size=(80, 24), run_before=settled())


def test_native_grid_with_compare_column_at_160x48(snap_compare: Any) -> None:
    assert snap_compare(recorded_app(streams.two_native_hosts()), terminal_size=(160, 48), run_before=settled())


def test_detail_of_a_partial_emulated_cell_at_80x24(snap_compare: Any) -> None:
    app = recorded_app(streams.lab_like())
    assert snap_compare(app, terminal_size=(80, 24), run_before=settled("down", "right", "enter"))


def test_compare_view_light_theme_at_160x48(snap_compare: Any) -> None:
    app = recorded_app(streams.two_native_hosts(), theme="light")
    assert snap_compare(app, terminal_size=(160, 48), run_before=settled("c"))


def test_no_color_grid_at_80x24(snap_compare: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NO_COLOR", "1")
    assert snap_compare(recorded_app(streams.lab_like()), terminal_size=(80, 24), run_before=settled())
