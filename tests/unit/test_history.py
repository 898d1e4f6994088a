"""The history folder: where it is, how files are named, what is refused, what is read."""

from __future__ import annotations

import os
import time
from dataclasses import replace
from pathlib import Path

import pytest

from ecoready.domain.errors import ReportError
from ecoready.domain.model import Report, Status
from ecoready.judge import history
from ecoready.report.files import write_atomic
from tests.support.reports_sample import lab_report


def at(report: Report, stamp: str, run: str) -> Report:
    return replace(report, started_at=stamp, run_id=run * 32)


def test_default_dir_follows_xdg_data_home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    assert history.default_dir() == tmp_path / "data" / "ecoready" / "history"
    monkeypatch.setenv("XDG_DATA_HOME", "relative/path")  # the spec says: ignore a relative one
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert history.default_dir() == tmp_path / "home" / ".local" / "share" / "ecoready" / "history"
    monkeypatch.delenv("XDG_DATA_HOME")
    assert history.default_dir() == tmp_path / "home" / ".local" / "share" / "ecoready" / "history"


def test_file_names_are_safe_and_sort_by_time() -> None:
    report = lab_report("lab-run")
    stamp = report.started_at[:19].replace("-", "").replace(":", "")  # 2026-11-21T22:49:41 -> 20261121T224941
    assert history.file_name(report) == f"{stamp}Z-{report.run_id[:12]}.json"
    hostile = replace(report, started_at="../../etc/passwd", run_id="../../x")
    name = history.file_name(hostile)
    assert "/" not in name and ".." not in name and history.NAME.match(name)
    names = [history.file_name(at(report, s, "a")) for s in ("2026-12-01T00:00:00Z", "2026-01-31T23:59:59Z")]
    assert sorted(names) == names[::-1]


def test_store_then_previous_returns_the_newest(tmp_path: Path) -> None:
    report = lab_report("lab-run")
    folder = tmp_path / "history"
    first = history.store(at(report, "2026-01-01T00:00:00.000Z", "a"), folder)
    second = history.store(at(report, "2026-01-02T00:00:00.000Z", "b"), folder)
    assert oct(folder.stat().st_mode & 0o777) == "0o700"
    assert history.entries(folder) == [first, second]
    problems: list[str] = []
    newest = history.previous(folder, problems)
    assert newest is not None and newest.path == second and newest.report.run_id == "b" * 32
    older = history.previous(folder, problems, exclude=second)
    assert older is not None and older.path == first
    assert problems == []


def test_unreadable_stored_reports_are_skipped_with_a_note(tmp_path: Path) -> None:
    report = lab_report("lab-run")
    good = history.store(at(report, "2026-01-01T00:00:00.000Z", "a"), tmp_path)
    (tmp_path / "20260102T000000Z-bbbb.json").write_text("{ torn")
    (tmp_path / "notes.txt").write_text("not a report")
    problems: list[str] = []
    found = history.previous(tmp_path, problems)
    assert found is not None and found.path == good
    assert len(problems) == 1 and "20260102T000000Z-bbbb.json" in problems[0] and "not JSON" in problems[0]


def test_a_symlinked_history_folder_or_a_symlinked_file_is_refused(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    link = tmp_path / "link"
    link.symlink_to(real)
    with pytest.raises(ReportError, match="symlink"):
        history.store(lab_report("lab-run"), link)
    report = lab_report("lab-run")
    target = real / history.file_name(report)
    target.symlink_to(tmp_path / "elsewhere.json")
    with pytest.raises(ReportError, match="symlink"):
        history.store(report, real)
    assert not (tmp_path / "elsewhere.json").exists()


def test_writes_outside_the_chosen_folder_are_refused(tmp_path: Path) -> None:
    inside = tmp_path / "inside"
    inside.mkdir()
    with pytest.raises(ReportError, match="outside"):
        write_atomic("../escape.json", "{}", base_dir=inside)
    with pytest.raises(ReportError, match="outside"):
        write_atomic(tmp_path / "escape.json", "{}", base_dir=inside)
    assert not (tmp_path / "escape.json").exists()


def test_last_judged_looks_back_past_errors(tmp_path: Path) -> None:
    ready = lab_report("lab-run")
    cells = dict(ready.cells)
    cells["mariadb-10.11/amd64"] = replace(cells["mariadb-10.11/amd64"], status=Status.ERROR)
    errored = replace(ready, cells=cells)
    history.store(at(ready, "2026-01-01T00:00:00.000Z", "a"), tmp_path)
    history.store(at(errored, "2026-01-02T00:00:00.000Z", "b"), tmp_path)
    problems: list[str] = []
    latest = history.previous(tmp_path, problems)
    assert latest is not None and latest.report.cells["mariadb-10.11/amd64"].status is Status.ERROR
    judged = history.last_judged(tmp_path, latest, problems)
    assert list(judged) == ["mariadb-10.11/amd64"] and judged["mariadb-10.11/amd64"].status is Status.READY


def test_temp_files_of_killed_writers_are_cleaned_once_stale(tmp_path: Path) -> None:
    stale = tmp_path / ".20260101T000000Z-a.json.abc123.tmp"
    fresh = tmp_path / ".20260101T000000Z-b.json.def456.tmp"
    stale.write_text("{ partial")
    fresh.write_text("{ partial")
    old = time.time() - history.STALE_TEMP_SECONDS - 60
    os.utime(stale, (old, old))
    history.store(lab_report("lab-run"), tmp_path)
    assert not stale.exists() and fresh.exists()  # a fresh one may belong to a writer at work
    assert all(history.NAME.match(p.name) for p in history.entries(tmp_path))
