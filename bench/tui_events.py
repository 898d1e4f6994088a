"""How fast the TUI takes in a run's events: a recorded 60-component x 4-arch run (240
cells, ~2,700 events) fed at full speed into the app (headless, real rendering), side by
side with the reducer alone.

For each it prints events handled per second (wall time from the first event until the
grid shows the last one) and the process CPU time per 1,000 events, then a ratio line
against the 2,000 events/s target. Usage: .venv/bin/python bench/tui_events.py [repeats]
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the checkout: tests/ imports as a package

from ecoready.domain.events import Event
from ecoready.domain.state import fold
from ecoready.run.session import RunOptions
from ecoready.ui.tui.app import EcoreadyApp
from ecoready.ui.tui.look import Motion
from tests.support import streams

TARGET = 2_000.0  # events per second the app must take in without falling behind


def reducer_only(events: list[Event]) -> tuple[float, float]:
    wall, cpu = time.perf_counter(), time.process_time()
    fold(events)
    return time.perf_counter() - wall, time.process_time() - cpu


async def app_run(events: list[Event], size: tuple[int, int]) -> tuple[float, float, int]:
    """(wall seconds, CPU seconds, largest batch) from the first event until drawn."""
    app = EcoreadyApp(streams.recorded_matrix(), RunOptions(), streams.replay(events), spin=True)
    marks: dict[str, float] = {}
    largest = 0
    original_handle = app.handle_run_event
    original_apply = app._apply

    def handle(event: Event) -> None:
        if not marks:
            marks["wall"], marks["cpu"] = time.perf_counter(), time.process_time()
        original_handle(event)

    def apply(motion: Motion | None) -> None:
        nonlocal largest
        largest = max(largest, len(app._dirty))
        original_apply(motion)

    app.handle_run_event = handle  # type: ignore[method-assign]
    app._apply = apply  # type: ignore[method-assign]
    async with app.run_test(size=size) as pilot:
        await app.workers.wait_for_complete()
        while app._dirty or not app.rows_built:  # until the tick after the last event drew it
            await pilot.pause(0.01)
        wall, cpu = time.perf_counter() - marks["wall"], time.process_time() - marks["cpu"]
        assert app.events_seen == len(events)
        await pilot.press("q")
    return wall, cpu, largest


def main() -> None:
    repeats = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    events = streams.big_matrix(60, streams.ARCHES_4)
    n = len(events)
    print(f"stream: 60 components x 4 arches = 240 cells, {n} events, fed at full speed; {repeats} repeats")
    rows: list[tuple[str, float, float, str]] = []
    runs = [reducer_only(events) for _ in range(repeats)]
    wall = statistics.median(r[0] for r in runs)
    cpu = statistics.median(r[1] for r in runs)
    rows.append(("reducer alone (state.fold)", n / wall, cpu / n * 1e6, ""))
    for size in ((80, 24), (160, 48)):
        app_runs = [asyncio.run(app_run(events, size)) for _ in range(repeats)]
        wall = statistics.median(r[0] for r in app_runs)
        cpu = statistics.median(r[1] for r in app_runs)
        largest = max(r[2] for r in app_runs)
        rows.append((f"app at {size[0]}x{size[1]}", n / wall, cpu / n * 1e6, f"largest batch {largest} cells"))
    print(f"{'':<28}{'events/s':>12}{'CPU ms/1,000 events':>22}")
    for name, rate, cpu_ms, note in rows:
        print(f"{name:<28}{rate:>12,.0f}{cpu_ms:>22.1f}  {note}")
    slowest = min(rate for name, rate, _, _ in rows if name.startswith("app"))
    print(f"ratio: the app handles {slowest:,.0f} events/s = {slowest / TARGET:.1f}x the {TARGET:,.0f} events/s target")


if __name__ == "__main__":
    main()
