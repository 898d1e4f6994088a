"""The diff between two reports: status changes and which are regressions, new and lost
cells and arches, bench changes beyond noise; and `ecoready diff` on saved reports."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from ecoready.domain.model import BenchSeries, CellResult, Report, Status
from ecoready.judge.diff import (
    NOISE_FLOOR,
    UNSTEADY_CV,
    Diff,
    Uncompared,
    diff,
    diff_dict,
    diff_text,
    is_regression,
)
from ecoready.report import json as json_report
from tests.support.cli import ecoready
from tests.support.reports_sample import bench_report, lab_report


def with_status(report: Report, cell_id: str, status: Status, detail: str = "") -> Report:
    cells = dict(report.cells)
    cells[cell_id] = replace(cells[cell_id], status=status, detail=detail)
    return replace(report, cells=cells, run_id="f" * 32)


@pytest.mark.parametrize(
    ("old", "new", "regression"),
    [
        (Status.READY, Status.PARTIAL, True),
        (Status.PARTIAL, Status.BROKEN, True),
        (Status.READY, Status.MISSING, True),
        (Status.BROKEN, Status.READY, False),
        (Status.READY, Status.ERROR, False),  # the tool failed: not the component
        (Status.ERROR, Status.BROKEN, False),  # nothing judged before: decided by history
        (Status.READY, Status.SKIPPED, False),
    ],
)
def test_which_status_changes_are_regressions(old: Status, new: Status, regression: bool) -> None:
    assert is_regression(old, new) is regression


def test_a_report_against_itself_has_no_change() -> None:
    report = lab_report("lab-mixed")
    change = diff(report, report)
    assert not change.changed and not change.regressed
    assert diff_text(change).startswith(f"tests/data/reports/lab-mixed.toml: no change since run {report.run_id[:8]}")


def test_a_cell_that_stopped_working_is_a_regression() -> None:
    old = lab_report("lab-run")
    new = with_status(old, "mariadb-10.11/amd64", Status.PARTIAL, "failed: crud")
    change = diff(old, new)
    assert change.changed and change.regressed
    (status,) = change.status
    assert (status.cell, status.old, status.new, status.regression) == (
        "mariadb-10.11/amd64",
        Status.READY,
        Status.PARTIAL,
        True,
    )
    assert "REGRESSED mariadb-10.11/amd64: ready -> partial: failed: crud" in diff_text(change)
    assert diff_text(diff(new, old)).count("changed mariadb-10.11/amd64: partial -> ready") == 1
    assert not diff(new, old).regressed


def test_an_error_between_two_runs_does_not_hide_a_regression() -> None:
    ready = lab_report("lab-run")
    errored = with_status(ready, "mariadb-10.11/amd64", Status.ERROR, "image: registry unreachable")
    broken = with_status(ready, "mariadb-10.11/amd64", Status.BROKEN, "exited with code 1")
    assert not diff(errored, broken).regressed  # error -> broken alone says nothing
    change = diff(errored, broken, {"mariadb-10.11/amd64": ready.cells["mariadb-10.11/amd64"]})
    assert change.regressed and change.status[0].judged_against is Status.READY
    assert "error (last judged: ready) -> broken" in diff_text(change)


def test_new_and_lost_arches_and_cells() -> None:
    mixed = lab_report("lab-mixed")
    amd_only = replace(mixed, arches=("amd64",), cells={k: c for k, c in mixed.cells.items() if c.arch == "amd64"})
    change = diff(amd_only, mixed)
    assert change.new_arches == ("arm64",) and change.new_cells == ()  # arm64's cells come with the arch
    assert not change.regressed
    fewer = replace(mixed, cells={k: c for k, c in mixed.cells.items() if not k.startswith("ghost/")})
    change = diff(mixed, fewer)
    assert [c.cell for c in change.lost_cells] == ["ghost/amd64", "ghost/arm64"]
    assert not change.regressed and change.changed  # a matrix change is reported, not a regression
    assert "lost cell ghost/amd64 (was missing)" in diff_text(change)


def scaled(report: Report, cell_id: str, factor: float, cv: float | None = None) -> Report:
    cells = dict(report.cells)
    cell = cells[cell_id]
    assert cell.bench is not None
    series = tuple(
        replace(s, median_tps=s.median_tps * factor, cv=s.cv if cv is None else cv) for s in cell.bench.series
    )
    cells[cell_id] = replace(cell, bench=replace(cell.bench, series=series))
    return replace(report, cells=cells)


def test_bench_changes_count_only_beyond_twice_the_noise_of_a_difference() -> None:
    # its series have a CV of 0.8%, so the floor of 2.5% applies to each side: the noise of
    # their difference is 2 x sqrt(2.5%^2 + 2.5%^2) = +-7.1%
    old = bench_report()
    assert NOISE_FLOOR == 0.025
    within = diff(old, scaled(old, "mariadb-10.11/amd64", 0.94))
    assert not within.bench and not within.changed
    beyond = diff(old, scaled(old, "mariadb-10.11/amd64", 0.90))
    assert len(beyond.bench) == 8 and beyond.regressed
    first = beyond.bench[0]
    assert first.change == pytest.approx(-0.10) and first.noise == pytest.approx(0.0707, abs=1e-4)
    assert "(-10.0%, beyond the noise of ±7.1%)" in diff_text(beyond)
    faster = diff(old, scaled(old, "mariadb-10.11/amd64", 1.10))
    assert faster.changed and not faster.regressed
    noisy = diff(old, scaled(old, "mariadb-10.11/amd64", 0.88, cv=0.06))  # 2 x sqrt(2.5%^2 + 6%^2) = +-13%
    assert not noisy.bench
    assert diff(old, scaled(old, "mariadb-10.11/amd64", 0.80, cv=0.06)).regressed


def said(d: Diff) -> list[str]:
    """The diff's not-compared reasons as a person reads them."""
    return [str(n) for n in d.not_compared]


def test_repeats_that_spread_too_far_are_not_steady_enough_to_call_a_change() -> None:
    """A run's first bench after a busy phase: 6,105, 7,256 and 14,599 tps (CV 49%), then
    18,229-20,664: no change is called on a series that was not at a steady state."""
    old = scaled(bench_report(), "mariadb-10.11/amd64", 1.0, cv=0.49)
    tripled = diff(old, scaled(bench_report(), "mariadb-10.11/amd64", 2.8))
    assert not tripled.bench and not tripled.changed and not tripled.regressed
    assert any(
        "the old report's repeats spread 49% (over 25%): not steady enough to call a change" in line
        for line in said(tripled)
    ), said(tripled)
    assert Uncompared.UNSTEADY in {n.why for n in tripled.not_compared if n.cell == "mariadb-10.11/amd64"}
    assert "no change since run" in diff_text(tripled)
    # at the bound, still compared
    steady = scaled(bench_report(), "mariadb-10.11/amd64", 1.0, cv=UNSTEADY_CV)
    assert diff(steady, scaled(bench_report(), "mariadb-10.11/amd64", 0.3)).regressed


def once(report: Report) -> Report:
    """`report` as a profile that measures each point once (quick) would have it."""
    cells = {}
    for key, cell in report.cells.items():
        if cell.bench is not None:
            series = tuple(replace(s, runs=s.runs[:1], cv=0.0) for s in cell.bench.series)
            cell = replace(cell, bench=replace(cell.bench, series=series))
        cells[key] = cell
    return replace(report, cells=cells)


def test_one_run_per_point_is_not_enough_to_call_a_change() -> None:
    """Two quick runs of the same rows on one machine differed by +12% to +50%: a series
    measured once has no measured noise, so no change is called and nothing regresses."""
    old = once(bench_report())
    halved = diff(old, scaled(old, "mariadb-10.11/amd64", 0.5))
    assert not halved.bench and not halved.regressed
    assert (
        "mariadb-10.11/amd64: 1 run per point in the old report: not enough runs to call a change "
        "(its noise is not measured; a profile with repeats >= 2 measures it): bench not compared"
    ) in said(halved)
    whys = {(n["cell"], n["why"]) for n in diff_dict(halved)["not_compared"]}
    assert ("mariadb-10.11/amd64", "too-few-runs") in whys
    # the text's "no change" says what it did not compare, one line per reason
    assert "note: bench not compared on 3 cells (mariadb-10.11/amd64, " in diff_text(halved)
    assert "1 run per point in the old report: not enough runs to call a change" in diff_text(halved)
    # repeats on one side only: still not enough
    assert not diff(bench_report(), scaled(old, "mariadb-10.11/amd64", 0.5)).regressed
    # with repeats on both sides the same drop is found
    assert diff(bench_report(), scaled(bench_report(), "mariadb-10.11/amd64", 0.5)).regressed


def test_emulated_bench_numbers_are_never_compared() -> None:
    old = bench_report()
    change = diff(old, scaled(old, "mariadb-11.8/arm64", 0.5))
    assert not change.bench and not change.regressed
    assert "mariadb-11.8/arm64: emulated, its bench numbers are not compared" in said(change)
    assert [n.why for n in change.not_compared] == [Uncompared.EMULATED]


def test_bench_on_another_host_is_not_compared() -> None:
    old = bench_report()
    cells = dict(old.cells)
    cells["mariadb-10.11/amd64"] = replace(cells["mariadb-10.11/amd64"], host="elsewhere")
    moved = scaled(replace(old, cells=cells), "mariadb-10.11/amd64", 0.5)
    change = diff(old, moved)
    assert not change.bench and any("now on elsewhere" in n for n in said(change))
    (moved_away,) = [n for n in diff_dict(change)["not_compared"] if n["why"] == "other-host"]
    assert moved_away["cell"] == "mariadb-10.11/amd64"
    assert moved_away["detail"].endswith("now on elsewhere: bench not compared")


def test_failed_bench_runs_are_not_compared() -> None:
    old = bench_report()
    cells = dict(old.cells)
    cell: CellResult = cells["mariadb-10.11/amd64"]
    assert cell.bench is not None
    broken: tuple[BenchSeries, ...] = tuple(
        replace(s, median_tps=1.0, runs=tuple(replace(r, tps=0.0) for r in s.runs)) for s in cell.bench.series
    )
    cells[cell.id] = replace(cell, bench=replace(cell.bench, series=broken))
    assert not diff(old, replace(old, cells=cells)).bench


def test_diff_dict_has_stable_keys() -> None:
    old = lab_report("lab-run")
    change = diff(old, with_status(old, "mariadb-10.11/arm64", Status.BROKEN, "exec format error"))
    data = diff_dict(change)
    assert list(data) == [
        "matrix",
        "old_run",
        "new_run",
        "old_started_at",
        "new_started_at",
        "changed",
        "regressed",
        "status_changes",
        "new_cells",
        "lost_cells",
        "new_arches",
        "lost_arches",
        "bench_changes",
        "not_compared",
        "lost_series",
        "mismatch",
        "parity_changes",
        "regressions",
    ]
    assert data["status_changes"] == [
        {
            "cell": "mariadb-10.11/arm64",
            "old": "ready",
            "new": "broken",
            "judged_against": None,
            "detail": "exec format error",
            "emulated": True,
            "regression": True,
        }
    ]
    json.dumps(data)


def test_cli_diff_exits_1_on_a_regression_and_0_otherwise(tmp_path: Path) -> None:
    old = lab_report("lab-run")
    old_path, new_path = tmp_path / "old.json", tmp_path / "new.json"
    old_path.write_text(json_report.render(old))
    new_path.write_text(json_report.render(with_status(old, "mariadb-10.11/amd64", Status.PARTIAL, "failed: crud")))
    worse = ecoready("diff", str(old_path), str(new_path), "--json", str(tmp_path / "diff.json"))
    assert worse.returncode == 1, worse.stderr
    assert "REGRESSED mariadb-10.11/amd64: ready -> partial" in worse.stdout
    assert json.loads((tmp_path / "diff.json").read_text())["regressed"] is True
    better = ecoready("diff", str(new_path), str(old_path))
    assert better.returncode == 0 and "changed mariadb-10.11/amd64: partial -> ready" in better.stdout
    same = ecoready("diff", str(old_path), str(old_path))
    assert same.returncode == 0 and "no change" in same.stdout
    missing = ecoready("diff", str(old_path), str(tmp_path / "absent.json"))
    assert missing.returncode == 2 and "cannot read" in missing.stderr


def test_cli_diff_without_files_compares_the_last_two_reports_of_the_history(tmp_path: Path) -> None:
    from dataclasses import replace

    from ecoready.judge.history import store

    old = replace(lab_report("lab-run"), started_at="2026-11-21T23:00:00.000Z", run_id="a" * 32)
    new = replace(
        with_status(old, "mariadb-10.11/amd64", Status.PARTIAL, "failed: crud"),
        started_at="2026-11-22T23:00:00.000Z",
        run_id="b" * 32,
    )
    folder = tmp_path / "history"
    store(new, folder)
    store(old, folder)  # stored later, yet older: the order is the runs' own
    result = ecoready("diff", "--history", str(folder))
    assert result.returncode == 1 and "REGRESSED mariadb-10.11/amd64: ready -> partial" in result.stdout
    lonely = tmp_path / "lonely"
    store(old, lonely)
    alone = ecoready("diff", "--history", str(lonely))
    assert alone.returncode == 2 and "1 report(s) in the history" in alone.stderr
    helped = ecoready("diff", "--help")
    assert "OLD is the earlier report" in " ".join(helped.stdout.split())


def crowded(report: Report, cell_id: str, shared_with: tuple[str, ...] | None) -> Report:
    cells = dict(report.cells)
    cell = cells[cell_id]
    assert cell.bench is not None
    series = tuple(replace(s, shared_with=shared_with) for s in cell.bench.series)
    cells[cell_id] = replace(cell, bench=replace(cell.bench, series=series))
    return replace(report, cells=cells)


def test_bench_series_are_compared_only_when_both_ran_alone_on_their_host() -> None:
    """The issue's case: 1,565 tps beside four other benches vs 7,171 alone is no +358%."""
    old = bench_report()
    beside = crowded(scaled(old, "mariadb-10.11/amd64", 0.2), "mariadb-10.11/amd64", ("mysql-8.4/amd64 bench",))
    change = diff(beside, old)
    assert not change.bench and not change.regressed and not change.changed
    assert "mariadb-10.11/amd64: in the old report it ran beside mysql-8.4/amd64 bench: bench not compared" in (
        said(change)
    )
    unknown = crowded(old, "mariadb-10.11/amd64", None)  # a report older than the record
    change = diff(unknown, scaled(old, "mariadb-10.11/amd64", 0.5))
    assert not change.bench
    assert "mariadb-10.11/amd64: the old report does not record what shared the host: bench not compared" in (
        said(change)
    )
    assert len(diff(old, scaled(old, "mariadb-10.11/amd64", 0.5)).bench) == 8  # both alone: compared


def amd64_only(report: Report) -> Report:
    cells = {k: c for k, c in report.cells.items() if c.arch == "amd64"}
    return replace(report, arches=("amd64",), cells=cells, run_id="e" * 32)


def test_a_lost_arch_is_a_regression_and_the_subset_is_said_first() -> None:
    full = lab_report("lab-mixed")
    change = diff(full, amd64_only(full))
    assert change.lost_arches == ("arm64",) and change.regressed
    assert "arch arm64: lost (no cell of it in the new report)" in change.regressions
    text = diff_text(change).splitlines()
    assert text[1].startswith("  note: the new report covers") and "(a subset)" in text[1]
    assert "  REGRESSED lost arch arm64" in text
    assert diff_dict(change)["mismatch"] and diff_dict(change)["regressed"] is True


def test_a_lost_ready_cell_is_a_regression_a_lost_broken_one_is_not() -> None:
    old = lab_report("lab-run")
    ready = next(k for k, c in old.cells.items() if c.status is Status.READY and c.arch == "amd64")
    fewer = replace(old, cells={k: c for k, c in old.cells.items() if k != ready})
    change = diff(old, fewer)
    assert change.regressed and f"{ready}: lost (was ready)" in change.regressions
    assert f"  REGRESSED lost cell {ready} (was ready)" in diff_text(change).splitlines()
    broken = with_status(old, ready, Status.BROKEN)
    assert not diff(broken, replace(fewer, run_id="d" * 32)).regressed


def test_a_lost_bench_series_is_a_regression() -> None:
    old = bench_report()
    cells = dict(old.cells)
    cell = cells["mariadb-10.11/amd64"]
    assert cell.bench is not None and len(cell.bench.series) > 1
    kept = cell.bench.series[1:]
    cells[cell.id] = replace(cell, bench=replace(cell.bench, series=kept))
    change = diff(old, replace(old, cells=cells))
    gone = cell.bench.series[0]
    (lost,) = change.lost_series
    assert (lost.cell, lost.workload, lost.threads) == (cell.id, gone.workload, gone.threads)
    assert change.regressed and any(
        "REGRESSED lost bench mariadb-10.11/amd64" in line for line in diff_text(change).splitlines()
    )


def test_different_matrices_and_profiles_are_said_before_the_changes() -> None:
    from ecoready.domain.model import Profile

    old = lab_report("lab-run")
    other = replace(
        old, matrix="elsewhere.toml", profile=Profile.FULL if old.profile is not Profile.FULL else Profile.SMOKE
    )
    lines = diff_text(diff(old, other)).splitlines()
    assert lines[1] == f"  note: different matrices: {old.matrix} then elsewhere.toml"
    assert lines[2].startswith("  note: different profiles: ")


def test_cli_diff_of_a_lost_arch_exits_1(tmp_path: Path) -> None:
    full = lab_report("lab-mixed")
    old_path, new_path = tmp_path / "full.json", tmp_path / "amd64-only.json"
    old_path.write_text(json_report.render(full))
    new_path.write_text(json_report.render(amd64_only(full)))
    result = ecoready("diff", str(old_path), str(new_path))
    assert result.returncode == 1, result.stdout + result.stderr
    assert "REGRESSED lost arch arm64" in result.stdout


def report_of_matrix(path: str) -> Report:
    """The report a run of the matrix file at `path` starts (RunStarted folded), written
    as JSON and read back, as `ecoready diff` reads it."""
    from ecoready.domain.state import fold
    from ecoready.matrix.load import load
    from ecoready.report.load import parse_report
    from ecoready.run.runner import Runner
    from tests.support.fake_host import cell, component, plan, rig

    matrix = load(path)
    runner = Runner(replace(plan([cell(component("db", "server", "r.example/db:1"))]), matrix=matrix), rig().run)
    return parse_report(json_report.render(fold([runner.planned()])))


MATRIX_TEXT = """[[components]]
id = "db"
name = "db"
category = "server"
probe = "server"
image = "r.example/db:1"
"""


def test_a_relative_and_an_absolute_path_to_one_matrix_are_one_matrix(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "matrix.toml").write_text(MATRIX_TEXT)
    monkeypatch.chdir(tmp_path)
    relative, absolute = report_of_matrix("matrix.toml"), report_of_matrix(str(tmp_path / "matrix.toml"))
    assert (relative.matrix, absolute.matrix) == ("matrix.toml", str(tmp_path / "matrix.toml"))
    assert relative.matrix_place == absolute.matrix_place and relative.matrix_place.startswith("sha256:")
    assert str(tmp_path) not in json_report.render(relative).replace(relative.matrix, "")  # no folder written
    assert diff(relative, absolute).mismatch == ()
    (tmp_path / "copy").mkdir()  # the same text elsewhere (another machine's checkout): one matrix too
    (tmp_path / "copy" / "matrix.toml").write_text(MATRIX_TEXT)
    assert diff(relative, report_of_matrix("copy/matrix.toml")).mismatch == ()
    (tmp_path / "other.toml").write_text(MATRIX_TEXT.replace("db:1", "db:2"))
    (note,) = diff(relative, report_of_matrix("other.toml")).mismatch
    assert note == "different matrices: matrix.toml then other.toml"


def test_reports_of_older_runs_without_a_matrix_identity_compare_its_path() -> None:
    old = replace(lab_report("lab-run"), matrix_content="", matrix_place="")
    assert diff(old, replace(old, matrix="./" + old.matrix)).mismatch == (
        f"different matrices: {old.matrix} then ./{old.matrix}",
    )
    assert diff(old, old).mismatch == ()
