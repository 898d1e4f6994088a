"""How close the TUI's ETA comes to a run's real end: a run's recorded events
(`ECOREADY_EVENT_LOG=PATH ecoready run ...`) replayed through the reducer; at every cell
that finishes, the time left the progress line would show (`plan/eta.py`) is added to the
time elapsed and set against the run's real end (RunFinished).

Prints, at a quarter, half and three quarters of the run, the predicted end over the real
one (the target: within 30%), the worst ratio from the moment the estimate has enough to go
on, and when it stopped saying "estimating". Usage:
    .venv/bin/python bench/eta.py EVENTS.jsonl [MATRIX.toml] [--fixture OUT.json]
A log written before runs recorded each cell's probe kind and expected seconds gets them
from the matrix, so MATRIX is needed for such logs. `--fixture` also writes the run as a
timeline (each cell's plan, start, end and stage seconds; tests/support/timeline.py reads
it) for the estimator's unit tests.
"""

from __future__ import annotations

import argparse
import json
import typing
from dataclasses import replace
from datetime import datetime
from pathlib import Path
from typing import Any

from ecoready.domain.codec import Layout, from_plain, to_plain
from ecoready.domain.events import (
    CellFinished,
    CellPlanned,
    CellStarted,
    Event,
    RunFinished,
    RunStarted,
    StageFinished,
)
from ecoready.domain.state import empty_report, reduce
from ecoready.matrix.load import load
from ecoready.plan.eta import expected_of, seconds_left
from ecoready.plan.schedule import EMULATED_SLOWDOWN, EXPECTED_SECONDS

KINDS = {cls.__name__: cls for cls in typing.get_args(Event)}
# fields logs written before them lack
OLDER = {
    CellPlanned: Layout(optional=frozenset({"expected_s", "probe"})),
    RunStarted: Layout(optional=frozenset({"matrix_content", "matrix_place"})),
}
MARKS = (0.25, 0.5, 0.75)
WITHIN = 0.30  # the target: the predicted end within 30% of the real one


def read(path: Path) -> list[Event]:
    events: list[Event] = []
    for line in path.read_text(encoding="utf-8").splitlines():
        data = json.loads(line)
        events.append(from_plain(KINDS[data.pop("event")], data, OLDER))
    return events


def seconds(at: str) -> float:
    return datetime.fromisoformat(at.replace("Z", "+00:00")).timestamp()


def with_plan(start: RunStarted, matrix: Path | None) -> RunStarted:
    """Old logs: each cell's probe kind and expected seconds as the plan reckons them
    without history."""
    if all(c.expected_s and c.probe for c in start.cells) or matrix is None:
        return start
    probes = {c.id: c.probe for c in load(matrix).components}

    def planned(c: CellPlanned) -> CellPlanned:
        probe = c.probe or probes.get(c.component, "")
        base = EXPECTED_SECONDS.get(probe, EXPECTED_SECONDS["default"])
        return replace(c, probe=probe, expected_s=c.expected_s or base * (EMULATED_SLOWDOWN if c.emulated else 1.0))

    return replace(start, cells=tuple(planned(c) for c in start.cells))


def fixture(events: list[Event], start: RunStarted, begun: float, total: float) -> dict[str, Any]:
    """The run as a timeline: each cell's plan, start and end (seconds from the run's
    start) and its stages (stage, seconds, outcome) in order."""
    cells: dict[str, dict[str, Any]] = {
        c.cell_id: {"plan": to_plain(c), "started": 0.0, "finished": total, "stages": []} for c in start.cells
    }
    for event in events:
        if isinstance(event, CellStarted):
            cells[event.cell_id].update(started=round(seconds(event.at) - begun, 2), stages=[])
        elif isinstance(event, StageFinished):
            cells[event.cell_id]["stages"].append([event.stage.value, event.seconds, event.outcome.value])
        elif isinstance(event, CellFinished):
            cells[event.cell_id]["finished"] = round(seconds(event.at) - begun, 2)
    host = to_plain(start.hosts[0])
    return {"total": round(total, 2), "host": host, "cells": list(cells.values())}


def main(path: Path, matrix: Path | None, out: Path | None) -> int:
    events = read(path)
    start = with_plan(next(e for e in events if isinstance(e, RunStarted)), matrix)
    end = next(e for e in reversed(events) if isinstance(e, RunFinished))
    begun, total = seconds(start.at), seconds(end.at) - seconds(start.at)
    if out is not None:
        out.write_text(json.dumps(fixture(events, start, begun, total), indent=1) + "\n", encoding="utf-8")
    expected = expected_of(start.cells)
    report = empty_report()
    seen: list[tuple[float, float | None]] = []  # (elapsed, seconds left) at each cell's end
    for event in events:
        report = reduce(report, start if isinstance(event, RunStarted) else event)
        if isinstance(event, CellFinished):
            seen.append((seconds(event.at) - begun, seconds_left(report, expected, report.cells)))
    print(f"{path.name}: {len(report.cells)} cells, the run took {total:.0f} s")
    print(f"{'at':>6} {'elapsed':>8} {'ETA':>10} {'predicted/real end':>19}")
    for mark in MARKS:
        t, left = min(seen, key=lambda s: abs(s[0] - mark * total))
        print(f"{mark:>6.0%} {t:>7.0f}s {_s(left):>10} {_ratio(t, left, total):>19}")
    known = [(t, left) for t, left in seen if left is not None and t < total * 0.98]
    since = known[0][0] if known else total
    worst = max((abs((t + left) / total - 1) for t, left in known), default=0.0)
    print(f"estimating until {since:.0f} s ({since / total:.0%} of the run)")
    print(f"worst predicted end from then on: {worst:.0%} off")
    print(f"within {WITHIN:.0%}: {'yes' if worst <= WITHIN else 'no'}")
    return 0 if worst <= WITHIN else 1


def _s(value: float | None) -> str:
    return "estimating" if value is None else f"{value:.0f}s"


def _ratio(t: float, left: float | None, total: float) -> str:
    return "–" if left is None else f"{(t + left) / total:.2f}"


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("events", type=Path)
    parser.add_argument("matrix", type=Path, nargs="?")
    parser.add_argument("--fixture", type=Path, help="also write the run as a timeline for the unit tests")
    args = parser.parse_args()
    raise SystemExit(main(args.events, args.matrix, args.fixture))
