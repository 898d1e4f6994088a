"""Several server rows at once on one host with the quick profile: from the run's own
events, no two bench stages overlapped and no other stage of the run ran beside a bench;
every series says it ran alone; the row that only tests publishing got no bench.
(Runs of 2 s: the schedule is under test here, the figures in bench/bench_isolation.py.)
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.support.cli import ecoready

pytestmark = [pytest.mark.docker, pytest.mark.slow]

ROWS = """
[[components]]
id = "mariadb-10.11"
category = "server"
probe = "server"
image = "127.0.0.1:5000/lab/mariadb:10.11"

[[components]]
id = "mariadb-11.8"
category = "server"
probe = "server"
image = "127.0.0.1:5000/lab/mariadb:11.8"

[[components]]
id = "mysql-9.7"
category = "server"
probe = "server"
image = "127.0.0.1:5000/lab/mysql:9.7"

[[components]]
id = "gap-amd64-only"
category = "server"
probe = "server"
image = "127.0.0.1:5000/lab/gap-amd64-only:1"
options = { flavor = "mariadb" }
bench = false
"""


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


def test_benches_of_several_rows_never_overlap(lab: Path, tmp_path: Path, no_leaks: None) -> None:
    matrix = tmp_path / "rows.toml"
    matrix.write_text(
        'arches = ["amd64"]\n[sysbench]\nimage = "127.0.0.1:5000/lab/mariadb:10.11"\ntime = 2\nwarmup = 1\n' + ROWS
    )
    log = tmp_path / "events.jsonl"
    out = tmp_path / "r.json"
    result = ecoready(
        "run",
        "--headless",
        "--matrix",
        str(matrix),
        "--profile",
        "quick",
        "--json",
        str(out),
        timeout=1500,
        env={"ECOREADY_EVENT_LOG": str(log)},
    )
    report = json.loads(out.read_text())
    events = [json.loads(line) for line in log.read_text().splitlines()]
    cells = {c["id"]: c for c in report["cells"]}
    for cid in ("mariadb-10.11/amd64", "mariadb-11.8/amd64", "mysql-9.7/amd64"):
        assert cells[cid]["status"] == "ready", (cells[cid], result.stderr)
        assert [s["stage"] for s in cells[cid]["stages"]][-1] == "bench"
        series = cells[cid]["bench"]["series"]
        assert series and all(s["shared_with"] == [] for s in series), series
    stacked, beside, seen = overlaps(events)
    assert seen == 3
    assert stacked == [] and beside == []
    # the publishing row ran (image, start, smoke) but was not benchmarked
    gap = cells["gap-amd64-only/amd64"]
    assert gap["bench"] is None and "bench" not in [s["stage"] for s in gap["stages"]]
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
