"""The time a run has left (plan/eta.py): learned from the finished cells' stages by probe
kind and emulation, else a twin's times the emulated slowdown, else the plan at the pace
kept; played through the host's slots, benches one after the other; "estimating" until
enough cells finished. And on a real run's recorded timeline: the predicted end within 30%
of the real one at a quarter, half and three quarters of the run."""

from __future__ import annotations

import pytest

from ecoready.domain.model import (
    Category,
    CellResult,
    HostFacts,
    Outcome,
    Profile,
    Report,
    Stage,
    StageResult,
    Status,
)
from ecoready.plan.eta import Expected, expected_of, seconds_left
from ecoready.plan.schedule import EMULATED_SLOWDOWN
from tests.support import timeline

HOST = HostFacts("h", "amd64", (), {}, cpus=2)  # 10 slot units: ten native cells at once


def cell(
    name: str,
    status: Status = Status.PENDING,
    *,
    stages: tuple[tuple[Stage, float], ...] = (),
    stage: Stage | None = None,
    emulated: bool = False,
) -> CellResult:
    arch = "arm64" if emulated else "amd64"
    results = tuple(StageResult(s, Outcome.PASS, seconds) for s, seconds in stages)
    if stage is not None:
        results += (StageResult(stage),)
    return CellResult(
        f"{name}/{arch}", name, name, Category.SERVER, arch, "h", emulated, status, stage=stage, stages=results
    )


def report(*cells: CellResult) -> Report:
    return Report(1, "r", "0", "m", Profile.SMOKE, "t", hosts=(HOST,), cells={c.id: c for c in cells})


def plan(c: CellResult, kind: str = "server", seconds: float = 0.0, bench: float = 0.0) -> Expected:
    return Expected(seconds, bench, 3 if c.emulated else 1, "h", kind, c.component, c.emulated)


def left(r: Report, expected: dict[str, Expected]) -> float | None:
    return seconds_left(r, expected, r.cells)


SERVER = ((Stage.IMAGE, 1.0), (Stage.START, 6.0), (Stage.SMOKE, 3.0))  # 10 s


def test_estimating_until_a_tenth_of_the_cells_and_three_have_finished() -> None:
    waiting = [cell(f"w{i}") for i in range(7)]
    done = [cell(f"d{i}", Status.READY, stages=SERVER) for i in range(3)]
    expected = {c.id: plan(c, seconds=5.0) for c in [*waiting, *done]}
    assert left(report(*waiting), expected) is None  # nothing finished: no guess, whatever the plan says
    assert left(report(*waiting, *done[:2]), expected) is None  # two of nine
    assert left(report(*waiting, *done), expected) == pytest.approx(10.0)  # three: the 7 left side by side, 10 s


def test_the_finished_cells_of_the_same_kind_and_side_say_what_each_stage_takes() -> None:
    done = [cell(f"d{i}", Status.READY, stages=SERVER) for i in range(3)]
    in_smoke = cell("s", Status.RUNNING, stages=SERVER[:2], stage=Stage.SMOKE)  # its smoke left: 3 s
    waiting = [cell(f"w{i}") for i in range(3)]
    other_kind = cell("g")  # a kind nothing finished of: the plan (20 s) at the pace kept (10 s for 5 planned)
    cells = [*done, in_smoke, *waiting, other_kind]
    expected = {c.id: plan(c, seconds=5.0) for c in cells}
    expected[other_kind.id] = plan(other_kind, "galera", seconds=20.0)
    assert left(report(*cells), expected) == pytest.approx(40.0)
    expected[other_kind.id] = plan(other_kind, "galera", seconds=2.0)
    assert left(report(*cells), expected) == pytest.approx(10.0)  # the servers' 10 s: the longest now


def test_an_emulated_cell_is_its_native_twin_times_how_much_slower_emulated_twins_were() -> None:
    rows = [cell(f"r{i}", Status.READY, stages=SERVER) for i in range(3)]
    waiting = cell("r0", emulated=True)  # no emulated server finished: its twin's 10 s times the slowdown
    expected = {c.id: plan(c) for c in [*rows, waiting]}
    assert left(report(*rows, waiting), expected) == pytest.approx(10.0 * EMULATED_SLOWDOWN)
    # a row with both sides finished says how much slower emulation is on this run: 4x
    other = cell("x", Status.READY, stages=((Stage.START, 2.0),))
    other_emulated = cell("x", Status.READY, stages=((Stage.START, 8.0),), emulated=True)
    expected.update({c.id: plan(c, "toolkit") for c in (other, other_emulated)})
    assert left(report(*rows, other, other_emulated, waiting), expected) == pytest.approx(40.0)


def test_cells_share_the_slots_and_benches_run_one_after_the_other() -> None:
    done = [cell(f"d{i}", Status.READY, stages=((Stage.START, 10.0), (Stage.BENCH, 80.0))) for i in range(3)]
    natives = [cell(f"n{i}") for i in range(10)]
    expected = {c.id: plan(c) for c in [*done, *natives]}
    r = report(*done, *natives)
    assert left(r, expected) == pytest.approx(10.0 + 10 * 80.0)  # ten side by side once, ten benches in turn
    emulated = [cell(f"e{i}", emulated=True) for i in range(6)]  # weight 3: three at a time on 10 units
    finished = [cell(f"f{i}", Status.READY, stages=((Stage.START, 30.0),), emulated=True) for i in range(3)]
    expected = {c.id: plan(c, "galera") for c in [*emulated, *finished]}
    assert left(report(*emulated, *finished), expected) == pytest.approx(60.0)
    finished = [
        cell(f"f{i}", Status.READY, stages=((Stage.START, 20.0), (Stage.SMOKE, 10.0)), emulated=True) for i in range(3)
    ]
    running = cell("e0", Status.RUNNING, stages=((Stage.START, 20.0),), stage=Stage.SMOKE, emulated=True)
    # under way first, where it is: its smoke (10 s) left in 3 units, two waiting beside it
    # (0-30 s), the third in its units once it ends (10-40 s)
    assert left(report(running, *emulated[1:4], *finished), expected) == pytest.approx(40.0)


def test_the_plan_s_cells_carry_their_kind() -> None:
    from ecoready.domain.events import CellPlanned

    planned = CellPlanned("g/arm64", "g", "G", "ha", "arm64", "h", True, expected_s=135.0, probe="galera")
    (expected,) = expected_of([planned]).values()
    assert (expected.kind, expected.component, expected.emulated, expected.weight) == ("galera", "g", True, 3)


@pytest.mark.parametrize("name", sorted(p.name for p in timeline.DATA.glob("*.json")))
def test_on_a_recorded_run_the_predicted_end_is_within_30_percent(name: str) -> None:
    run = timeline.load(name)
    start = run.start()
    expected = expected_of(start.cells)
    for mark in (0.25, 0.5, 0.75):
        t = mark * run.total
        state = run.report_at(t)
        rest = seconds_left(state, expected, state.cells)
        assert rest is not None, (name, mark)
        assert abs((t + rest) / run.total - 1) <= 0.30, (name, mark, t + rest, run.total)


def test_a_re_run_learns_from_the_whole_run() -> None:
    done = [cell(f"d{i}", Status.READY, stages=SERVER) for i in range(3)]
    again = cell("a", Status.RUNNING, stages=((Stage.IMAGE, 1.0),), stage=Stage.START)  # 6 + 3 s left
    expected = {c.id: plan(c) for c in [*done, again]}
    assert seconds_left(report(*done, again), expected, [again.id]) == pytest.approx(9.0)
