"""A recorded 60-component x 4-arch run fed at full speed: the app applies every event,
writes cells in batches (never more writes than changes), and the grid ends equal to the
report folded by the same reducer. Speed is measured by `bench/tui_events.py`, not here."""

from __future__ import annotations

from collections import Counter

import pytest

from ecoready.domain.events import RunStarted
from ecoready.domain.state import fold
from ecoready.run.session import RunOptions
from ecoready.ui.tui.app import EcoreadyApp
from ecoready.ui.tui.grid import ReadinessGrid
from ecoready.ui.tui.look import Motion, cell_label
from tests.support import streams
from tests.support.keys import wait_until


class CountingApp(EcoreadyApp):
    """Counts the size of each batch."""

    batches: list[int]

    def on_mount(self) -> None:
        self.batches = []
        super().on_mount()

    def _apply(self, motion: Motion | None) -> None:
        self.batches.append(len(self._dirty))
        super()._apply(motion)


async def test_a_60x4_stream_at_full_speed_is_applied_in_batches(monkeypatch: pytest.MonkeyPatch) -> None:
    writes: Counter[str] = Counter()  # the cells written
    write = ReadinessGrid.update_cell

    def counting_write(grid, row_key, column_key, value, *, update_width=False):
        writes[f"{getattr(row_key, 'value', row_key)}/{getattr(column_key, 'value', column_key)}"] += 1
        return write(grid, row_key, column_key, value, update_width=update_width)

    monkeypatch.setattr(ReadinessGrid, "update_cell", counting_write)
    events = streams.big_matrix(60, streams.ARCHES_4)
    started = events[0]
    assert isinstance(started, RunStarted) and len(started.cells) == 240
    assert len(events) > 2_000
    app = CountingApp(streams.recorded_matrix(), RunOptions(), streams.replay(events), spin=False)
    async with app.run_test(size=(160, 48)) as pilot:
        await app.workers.wait_for_complete()
        await wait_until(pilot, lambda: app.rows_built and not app._dirty, "the last batch")  # the next tick
        report = fold(events)
        assert app.events_seen == len(events)
        assert app.report == report
        for cell in report.cells.values():
            assert app.cell_text(cell.component, cell.arch) == cell_label(cell, app.grid.arch_width), cell.id
        assert len(app.grid.shown) == 60
    per_cell = Counter(getattr(e, "cell_id", "") for e in events)
    # batched: a cell that changed several times within a tick is written once, and only
    # cells whose text changed are written at all
    assert sum(writes.values()) < len(events) - 2
    for cell_id, count in writes.items():
        if not cell_id.endswith("/compare"):
            assert count <= per_cell[cell_id], cell_id
    assert all(batch <= 240 for batch in app.batches)
