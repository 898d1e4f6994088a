"""Each running cell's timer: it counts the cell's work, from its first stage, and stands
still while the cell is queued for a slot (a cell waiting for its turn shows no timer)."""

from __future__ import annotations

from collections.abc import Callable

from ecoready.domain.events import CellFinished, CellQueued, CellStarted, Event, StageStarted


class WorkTimers:
    def __init__(self, clock: Callable[[], float]) -> None:
        self.clock = clock
        # cell id -> clock when its work began, less the work done before a wait
        self.since: dict[str, float] = {}
        self._worked: dict[str, float] = {}  # queued cells: seconds of work before the wait

    def clear(self) -> None:
        self.since.clear()
        self._worked.clear()

    def see(self, event: Event) -> None:
        if isinstance(event, (CellStarted, CellFinished)):  # started: queued until its first stage
            self.since.pop(event.cell_id, None)
            self._worked.pop(event.cell_id, None)
        elif isinstance(event, StageStarted) and event.cell_id not in self.since:
            self.since[event.cell_id] = self.clock() - self._worked.pop(event.cell_id, 0.0)
        elif isinstance(event, CellQueued) and event.cell_id in self.since:
            self._worked[event.cell_id] = self.clock() - self.since.pop(event.cell_id)
