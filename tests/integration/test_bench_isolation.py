"""Several rows that bench, with many that do not, in one run on one host with the quick
profile: from the run's own events, no two bench stages overlapped and no other stage of
the run ran beside a bench; every series says it ran alone. The run is the session's
stand-ins' run of the default matrix (`stand_in_report`: four rows that bench on both
arches among 38 cells, runs of 2 s), read here instead of a run of its own (issue 55); the
figures are in bench/bench_isolation.py, a row that only tests publishing (`bench =
false`) gets no bench stage in its plan (tests/unit/test_bench_settings.py).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

pytestmark = [pytest.mark.docker, pytest.mark.slow]


def overlaps(events: list[dict[str, Any]]) -> tuple[list[str], list[str], int]:
    """(bench stages that started while another ran, other stages that started while a
    bench ran, benches seen), from the events in the order the run emitted them."""
    benching: set[str] = set()
    stacked: list[str] = []
    beside: list[str] = []
    seen = 0
    for event in events:
        kind, cell, stage = event["event"], event.get("cell_id"), event.get("stage")
        if kind == "StageStarted" and stage == "bench":
            seen += 1
            if benching:
                stacked.append(f"{cell} began while {sorted(benching)} benched")
            benching.add(str(cell))
        elif kind == "StageStarted" and benching:
            beside.append(f"{cell} {stage} began while {sorted(benching)} benched")
        elif kind == "StageFinished" and stage == "bench":
            benching.discard(str(cell))
    return stacked, beside, seen


def test_benches_of_several_rows_never_overlap(stand_in_report: dict[str, Any]) -> None:
    report = stand_in_report
    events = [json.loads(line) for line in Path(report["_events"]).read_text().splitlines()]
    benched = [c for c in report["cells"] if c["bench"] is not None]
    assert len(benched) == 8, [c["id"] for c in benched]  # four rows that bench, on both arches
    for cell in benched:
        assert cell["status"] == "ready" and [s["stage"] for s in cell["stages"]][-1] == "bench", cell["id"]
        series = cell["bench"]["series"]
        assert series and all(s["shared_with"] == [] for s in series), series
    for cell in report["cells"]:  # the rows whose probe runs no bench ran without one
        if cell not in benched:
            assert "bench" not in [s["stage"] for s in cell["stages"]], cell["id"]
    stacked, beside, seen = overlaps(events)
    assert seen == 8
    assert stacked == [] and beside == []
    assert any("one at a time" in note["text"] for note in report["notes"])


def test_the_overlap_reader_sees_an_overlap() -> None:
    """The check above can fail: two benches interleaved, a start beside a bench."""
    events = [
        {"event": "StageStarted", "cell_id": "a", "stage": "bench"},
        {"event": "StageStarted", "cell_id": "b", "stage": "start"},
        {"event": "StageStarted", "cell_id": "c", "stage": "bench"},
        {"event": "StageFinished", "cell_id": "a", "stage": "bench"},
        {"event": "StageFinished", "cell_id": "c", "stage": "bench"},
    ]
    stacked, beside, seen = overlaps(events)
    assert seen == 2 and len(stacked) == 1 and len(beside) == 1
