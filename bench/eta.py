"""How close the TUI's ETA comes to a run's real end: a run's recorded events
(`ECOREADY_EVENT_LOG=PATH ecoready run ...`) replayed through the reducer; at every cell
that finishes, the time left the progress line would show (`plan/eta.py`) is added to the
time elapsed and set against the run's real end (RunFinished).

Prints, at a quarter, half, three quarters and nine tenths of the run, the predicted end
over the real one, then the worst ratio from the moment a tenth of the cells finished, and
the same for the estimate the TUI used before (the cells' pace so far plus every bench
left, at the plan's budgets' factor). Usage:
    .venv/bin/python bench/eta.py EVENTS.jsonl [MATRIX.toml]
A log written before runs recorded `expected_s` gets it from the matrix (the plan's
`expected_seconds` without history), so MATRIX is needed for such logs.
"""

from __future__ import annotations

import json
import sys
import typing
from dataclasses import replace
from datetime import datetime
from pathlib import Path

from ecoready.domain.codec import Layout, from_plain
from ecoready.domain.events import CellFinished, CellPlanned, Event, RunFinished, RunStarted
from ecoready.domain.model import Report, Stage
from ecoready.domain.state import empty_report, reduce
from ecoready.matrix.load import load
from ecoready.plan.eta import expected_of, seconds_left
from ecoready.plan.schedule import EMULATED_SLOWDOWN, EXPECTED_SECONDS

KINDS = {cls.__name__: cls for cls in typing.get_args(Event)}
# fields logs written before them lack
OLDER = {
    CellPlanned: Layout(optional=frozenset({"expected_s"})),
    RunStarted: Layout(optional=frozenset({"matrix_content", "matrix_place"})),
}
MARKS = (0.25, 0.5, 0.75, 0.9)
WITHIN = 0.30  # the target: the predicted end within 30% of the real one


def read(path: Path) -> list[Event]:
    events: list[Event] = []
    for line in path.read_text(encoding="utf-8").splitlines():
        data = json.loads(line)
        events.append(from_plain(KINDS[data.pop("event")], data, OLDER))
    return events


def seconds(at: str) -> float:
    return datetime.fromisoformat(at.replace("Z", "+00:00")).timestamp()


def with_expected(start: RunStarted, matrix: Path | None) -> RunStarted:
    """Old logs: each cell's expected seconds as the plan reckons them without history."""
    if all(c.expected_s for c in start.cells) or matrix is None:
        return start
    probes = {c.id: c.probe for c in load(matrix).components}

    def expected(c: CellPlanned) -> float:
        base = EXPECTED_SECONDS.get(probes.get(c.component, ""), EXPECTED_SECONDS["default"])
        return base * (EMULATED_SLOWDOWN if c.emulated else 1.0)

    return replace(start, cells=tuple(replace(c, expected_s=c.expected_s or expected(c)) for c in start.cells))


def before(report: Report, elapsed: float) -> float | None:
    """The estimate the TUI used before: the finished cells' pace, plus every bench left."""
    bench_done = bench_left = 0.0
    finished = left = 0
    for cell in report.cells.values():
        stage = cell.stage_result(Stage.BENCH)
        if stage is not None and stage.outcome is not None:
            bench_done += stage.seconds
        if cell.status.finished:
            finished += 1
        else:
            left += 1
            bench_left += BENCH_S.get(cell.id, 0.0)
    if not finished:
        return bench_left or None
    return max(0.0, elapsed - bench_done) / finished * left + bench_left


BENCH_S: dict[str, float] = {}


def main(path: Path, matrix: Path | None) -> int:
    events = read(path)
    start = next(e for e in events if isinstance(e, RunStarted))
    end = next(e for e in reversed(events) if isinstance(e, RunFinished))
    begun, total = seconds(start.at), seconds(end.at) - seconds(start.at)
    start = with_expected(start, matrix)
    BENCH_S.update({c.cell_id: c.bench_s for c in start.cells})
    expected = expected_of(start.cells)
    report = empty_report()
    seen: list[tuple[float, float | None, float | None, int]] = []  # (elapsed, new, old, finished)
    for event in events:
        report = reduce(report, start if isinstance(event, RunStarted) else event)
        if isinstance(event, CellFinished):
            t = seconds(event.at) - begun
            done = sum(1 for c in report.cells.values() if c.status.finished)
            seen.append((t, seconds_left(report, expected, report.cells), before(report, t), done))
    cells = len(report.cells)
    print(f"{path.name}: {cells} cells, the run took {total:.0f} s")
    print(f"{'at':>6} {'elapsed':>8} {'ETA now':>8} {'ratio':>6} {'ETA before':>10} {'ratio':>6}")
    for mark in MARKS:
        t, new, old, _ = min(seen, key=lambda s: abs(s[0] - mark * total))
        print(
            f"{mark:>6.0%} {t:>7.0f}s {_s(new):>8} {_ratio(t, new, total):>6} {_s(old):>10} {_ratio(t, old, total):>6}"
        )
    counted = [s for s in seen if s[3] >= cells / 10 and s[0] < total * 0.98]
    worst_new = max((abs((t + n) / total - 1) for t, n, _, _ in counted if n is not None), default=0.0)
    worst_old = max((abs((t + o) / total - 1) for t, _, o, _ in counted if o is not None), default=0.0)
    print(f"worst predicted end from a tenth of the cells on: now {worst_new:.0%} off, before {worst_old:.0%} off")
    print(f"within {WITHIN:.0%}: {'yes' if worst_new <= WITHIN else 'no'}")
    return 0 if worst_new <= WITHIN else 1


def _s(value: float | None) -> str:
    return "–" if value is None else f"{value:.0f}s"


def _ratio(t: float, left: float | None, total: float) -> str:
    return "–" if left is None else f"{(t + left) / total:.2f}"


if __name__ == "__main__":
    if len(sys.argv) < 2:
        print(__doc__)
        raise SystemExit(2)
    raise SystemExit(main(Path(sys.argv[1]), Path(sys.argv[2]) if len(sys.argv) > 2 else None))
