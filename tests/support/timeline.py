"""A recorded run as a timeline (tests/data/eta/*.json, written by `bench/eta.py LOG --fixture
OUT` from a real run's event log): each cell's plan, when it started and finished (seconds
from the run's start) and its stages' seconds and outcomes. `report_at` folds it, as the
reducer would have seen it, into the report at any moment of the run: a cell's stages are
laid back to back ending when the cell did (the time before them is its wait for a slot).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ecoready.domain.codec import from_plain
from ecoready.domain.events import (
    CellFinished,
    CellPlanned,
    CellQueued,
    CellStarted,
    Event,
    RunStarted,
    StageFinished,
    StageStarted,
)
from ecoready.domain.model import HostFacts, Outcome, Profile, Report, Stage
from ecoready.domain.state import fold

DATA = Path(__file__).resolve().parents[1] / "data" / "eta"
AT = "2026-12-03T00:00:00Z"


@dataclass(frozen=True)
class TimedCell:
    plan: CellPlanned
    started: float
    finished: float
    stages: tuple[tuple[Stage, float, Outcome], ...]


@dataclass(frozen=True)
class Timeline:
    total: float  # the run's seconds, start to RunFinished
    host: HostFacts
    cells: tuple[TimedCell, ...]

    def start(self) -> RunStarted:
        plans = tuple(c.plan for c in self.cells)
        return RunStarted("e" * 32, AT, "lab.toml", Profile.SMOKE, ("amd64", "arm64"), plans, (self.host,))

    def report_at(self, t: float) -> Report:
        events: list[Event] = [self.start()]
        for cell in sorted(self.cells, key=lambda c: c.started):
            if cell.started <= t:
                events += _cell_events(cell, t)
        return fold(events)


def _cell_events(cell: TimedCell, t: float) -> list[Event]:
    cid = cell.plan.cell_id
    out: list[Event] = [CellStarted(cid, AT)]
    begin = cell.finished - sum(s for _, s, _ in cell.stages)
    if t < begin:
        return [*out, CellQueued(cid)]
    for stage, seconds, outcome in cell.stages:
        if t < begin:
            break
        out.append(StageStarted(cid, stage))
        begin += seconds
        if t < begin:
            break
        out.append(StageFinished(cid, stage, outcome, seconds))
    if cell.finished <= t:
        out.append(CellFinished(cid, AT, round(sum(s for _, s, _ in cell.stages), 2)))
    return out


def load(name: str) -> Timeline:
    data: dict[str, Any] = json.loads((DATA / name).read_text(encoding="utf-8"))
    host = from_plain(HostFacts, data["host"])
    cells = tuple(
        TimedCell(
            from_plain(CellPlanned, c["plan"]),
            float(c["started"]),
            float(c["finished"]),
            tuple((Stage(stage), float(seconds), Outcome(outcome)) for stage, seconds, outcome in c["stages"]),
        )
        for c in data["cells"]
    )
    return Timeline(float(data["total"]), host, cells)
