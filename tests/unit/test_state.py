"""The reducer: statuses derive from stages; infrastructure failures are never blamed on
the component; interrupted runs say what never ran."""

from __future__ import annotations

import pytest

from ecoready.domain.blame import Blame, Cause
from ecoready.domain.events import (
    CellFinished,
    CellLog,
    CellPlanned,
    CellStarted,
    CheckReported,
    Event,
    RunFinished,
    RunNote,
    RunStarted,
    StageFinished,
    StageStarted,
)
from ecoready.domain.model import Check, Note, Outcome, Profile, Stage, Status
from ecoready.domain.state import NOTHING_CHECKED, derive_status, fold


def started(*ids: str) -> RunStarted:
    cells = tuple(
        CellPlanned(i, i.split("/")[0], i.split("/")[0], "server", i.split("/")[1], "local", i.endswith("arm64"))
        for i in ids
    )
    return RunStarted("run1", "2026-01-01T00:00:00Z", "m.toml", Profile.SMOKE, ("amd64", "arm64"), cells)


def stages(cell: str, *outcomes: tuple[Stage, Outcome, str] | tuple[Stage, Outcome, str, Blame]) -> list:
    """Events of a cell whose stages end so (a blame, when given, else the one implied); a
    smoke stage that passes passed its check, as a real one does."""
    events: list = [CellStarted(cell, "t")]
    for stage, outcome, detail, *blame in outcomes:
        events.append(StageStarted(cell, stage))
        if stage is Stage.SMOKE and outcome is Outcome.PASS:
            events.append(CheckReported(cell, stage, Check("crud", Outcome.PASS)))
        events.append(StageFinished(cell, stage, outcome, 1.0, detail, *blame))
    return [*events, CellFinished(cell, "t2", 3.0)]


P, F, E, T = Outcome.PASS, Outcome.FAIL, Outcome.ERROR, Outcome.TIMEOUT
IM, S, M = Stage.IMAGE, Stage.START, Stage.SMOKE
NOT_PUBLISHED = Cause.NOT_PUBLISHED


@pytest.mark.parametrize(
    ("outcomes", "status", "detail"),
    [
        ([(IM, P, ""), (S, P, ""), (M, P, "")], Status.READY, ""),
        ([(IM, P, ""), (S, P, ""), (M, F, "failed: crud")], Status.PARTIAL, "failed: crud"),
        ([(IM, P, ""), (S, F, "exec format error")], Status.BROKEN, "exec format error"),
        (
            [(IM, F, "the index publishes amd64", Blame(NOT_PUBLISHED))],
            Status.MISSING,
            "missing: the index publishes amd64",
        ),
        (
            [(IM, E, "unreachable", Blame(Cause.REGISTRY, "127.0.0.1:5000"))],
            Status.ERROR,
            "image: 127.0.0.1:5000: unreachable",
        ),
        ([(IM, P, ""), (S, T, "exceeded its 90 s budget")], Status.TIMEOUT, "start: exceeded its 90 s budget"),
        # an infrastructure error wins over a failed check: nothing else can be trusted then
        (
            [(IM, P, ""), (S, P, ""), (M, F, "x"), (Stage.BENCH, E, "docker daemon unavailable")],
            Status.ERROR,
            "bench: docker daemon unavailable",
        ),
        (
            [(IM, F, "the index says arm64, the image is amd64", Blame(Cause.MISLABELLED_IMAGE))],
            Status.BROKEN,
            "mislabelled: the index says arm64, the image is amd64",
        ),
    ],
)
def test_status_derives_from_stages(outcomes, status, detail) -> None:
    report = fold([started("db/amd64"), *stages("db/amd64", *outcomes)])
    cell = report.cells["db/amd64"]
    assert cell.status is status
    assert cell.detail == detail


def test_checks_accumulate_under_their_stage_and_logs_are_kept() -> None:
    events: list[Event] = [
        started("db/arm64"),
        CellStarted("db/arm64", "t"),
        StageStarted("db/arm64", M),
        CheckReported("db/arm64", M, Check("crud", P)),
        CheckReported("db/arm64", M, Check("arch", F, "x86_64")),
        CellLog("db/arm64", tuple(f"line {i}" for i in range(100))),
    ]
    report = fold(events)
    cell = report.cells["db/arm64"]
    assert cell.status is Status.RUNNING and cell.stage is M and cell.emulated
    result = cell.stage_result(M)
    assert result is not None and [c.name for c in result.checks] == ["crud", "arch"]
    assert cell.log_tail[-1] == "line 99" and len(cell.log_tail) == 40


def test_rerun_of_a_cell_starts_it_afresh() -> None:
    first = stages("db/amd64", (IM, P, ""), (S, F, "boom"))
    report = fold([started("db/amd64"), *first, CellStarted("db/amd64", "t3")])
    cell = report.cells["db/amd64"]
    assert cell.status is Status.RUNNING and cell.stages == () and cell.detail == ""


def test_interrupted_run_marks_unstarted_cells_skipped() -> None:
    report = fold(
        [
            started("a/amd64", "a/arm64"),
            *stages("a/amd64", (IM, P, ""), (S, P, ""), (M, P, "")),
            RunFinished("t9", interrupted=True),
        ]
    )
    assert report.interrupted
    assert report.cells["a/amd64"].status is Status.READY
    assert report.cells["a/arm64"].status is Status.SKIPPED
    assert "interrupted" in report.cells["a/arm64"].detail


def test_events_for_unknown_cells_and_duplicate_notes_are_harmless() -> None:
    report = fold([started("a/amd64"), CellStarted("ghost/amd64", "t"), RunNote("x"), RunNote("x")])
    assert set(report.cells) == {"a/amd64"} and report.notes == (Note("x"),)


def test_derive_status_with_nothing_run_is_skipped() -> None:
    assert derive_status(())[0] is Status.SKIPPED


SK = Outcome.SKIP


@pytest.mark.parametrize(
    "outcomes",
    [
        [(IM, SK, ""), (Stage.AUDIT, SK, ""), (S, SK, ""), (M, SK, ""), (Stage.BENCH, SK, "")],  # every stage skipped
        [(IM, P, ""), (S, SK, ""), (M, SK, "")],  # published, never started
        [(IM, P, ""), (S, SK, ""), (M, P, "")],  # a smoke that passed on a start that never ran
    ],
    ids=["every-stage-skipped", "only-published", "no-start"],
)
def test_a_cell_where_nothing_was_checked_is_never_ready(outcomes) -> None:
    report = fold([started("db/amd64"), *stages("db/amd64", *outcomes)])
    cell = report.cells["db/amd64"]
    assert cell.status is not Status.READY
    assert cell.status is Status.SKIPPED


def test_a_start_whose_every_check_was_skipped_is_not_ready() -> None:
    cell = "db/amd64"
    events: list[Event] = [started(cell), CellStarted(cell, "t")]
    for stage in (IM, S):
        events += [StageStarted(cell, stage), StageFinished(cell, stage, P, 1.0, "")]
    events += [
        StageStarted(cell, M),
        CheckReported(cell, M, Check("tls", SK, "not applicable: the backend is MariaDB")),
        StageFinished(cell, M, P, 1.0, ""),
        CellFinished(cell, "t2", 3.0),
    ]
    assert fold(events).cells[cell].status is Status.SKIPPED
    # the same cell with one check that ran and passed is ready
    events.insert(-2, CheckReported(cell, M, Check("crud", P)))
    assert fold(events).cells[cell].status is Status.READY


def test_a_cell_said_ready_by_its_last_event_with_nothing_checked_is_not_ready() -> None:
    events: list[Event] = [
        started("db/amd64"),
        CellStarted("db/amd64", "t"),
        CellFinished("db/amd64", "t2", 0.0, Status.READY),
    ]
    cell = fold(events).cells["db/amd64"]
    assert cell.status is Status.SKIPPED and cell.detail == NOTHING_CHECKED


def test_reduce_is_pure() -> None:
    events = [started("a/amd64"), *stages("a/amd64", (IM, P, ""))]
    assert fold(events) == fold(events)
    base = fold(events[:1])
    fold(events[1:], base)
    assert base.cells["a/amd64"].status is Status.PENDING  # the input report was not changed


def test_registry_observations_keep_the_latest_per_registry_in_first_seen_order() -> None:
    from ecoready.domain.events import RegistryObserved
    from ecoready.domain.images import RegistryStatus
    from ecoready.report.json import report_dict

    report = fold(
        [
            started("a/amd64"),
            RegistryObserved(RegistryStatus("docker.io", requests=1)),
            RegistryObserved(RegistryStatus("ghcr.io", requests=1, error="unreachable (ConnectError: x)")),
            RegistryObserved(
                RegistryStatus("docker.io", requests=7, limit=100, remaining=93, window_s=21600, source="ip")
            ),
        ]
    )
    assert [(r.registry, r.requests) for r in report.registries] == [("docker.io", 7), ("ghcr.io", 1)]
    data = report_dict(report)["registries"]
    assert data[0]["rate_limit"] == {"limit": 100, "remaining": 93, "window_s": 21600, "source": "ip"}
    assert data[1] == {
        "registry": "ghcr.io",
        "requests": 1,
        "rate_limit": None,
        "error": "unreachable (ConnectError: x)",
        "waited_s": 0.0,
    }


def test_a_cell_waiting_for_its_turn_is_queued_until_its_next_stage() -> None:
    from ecoready.domain.events import CellQueued

    report = fold([started("db/amd64"), CellStarted("db/amd64", "t")])
    assert report.cells["db/amd64"].queued  # started, no stage yet: waiting for a pull or a slot
    report = fold([StageStarted("db/amd64", Stage.IMAGE), CellQueued("db/amd64")], report)
    cell = report.cells["db/amd64"]
    assert cell.queued and cell.status is Status.RUNNING and cell.stages  # the image stage is kept
    report = fold([StageStarted("db/amd64", Stage.START)], report)
    assert not report.cells["db/amd64"].queued


def test_the_headless_bar_counts_running_and_queued_apart() -> None:
    from ecoready.domain.events import CellQueued
    from ecoready.ui.progress import running_words

    report = fold(
        [
            started("db/amd64", "db/arm64", "px/amd64"),
            *(CellStarted(c, "t") for c in ("db/amd64", "db/arm64", "px/amd64")),
            StageStarted("db/amd64", Stage.START),
            StageStarted("px/amd64", Stage.IMAGE),
            CellQueued("px/amd64"),
        ]
    )
    assert running_words({"db/amd64": "start"}, report) == "▶1 running: db/amd64 start  ·2 queued"
