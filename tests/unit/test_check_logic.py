"""The check after a run (store, diff, webhook, exit code), the webhook client against a
real local HTTP server, and the watch loop. The full check with the lab: tests/integration."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from pathlib import Path

import pytest

from ecoready.domain.errors import EnvironmentProblem, UsageError
from ecoready.domain.model import Report, Status
from ecoready.judge.check import check_report, parse_duration, watch_loop
from ecoready.judge.webhook import post, shown, url_problem
from ecoready.report import json as json_report
from tests.support.cli import ecoready
from tests.support.receiver import Receiver
from tests.support.reports_sample import lab_report


def run(report: Report, n: int, status: Status | None = None) -> Report:
    cells = dict(report.cells)
    if status is not None:
        cells["mariadb-10.11/amd64"] = replace(cells["mariadb-10.11/amd64"], status=status, detail="failed: crud")
    return replace(report, cells=cells, run_id=f"{n:032x}", started_at=f"2026-01-0{n}T00:00:00.000Z")


def test_only_a_change_is_posted_and_a_regression_exits_1(tmp_path: Path) -> None:
    said: list[str] = []
    base = lab_report("lab-run")
    with Receiver() as hook:
        first = check_report(run(base, 1), tmp_path, hook.url, said.append)
        assert first.code == 0 and first.diff is None and not first.posted
        assert "nothing to compare with yet" in first.text
        same = check_report(run(base, 2), tmp_path, hook.url, said.append)
        assert same.code == 0 and same.diff is not None and not same.diff.changed and not same.posted
        worse = check_report(run(base, 3, Status.PARTIAL), tmp_path, hook.url, said.append)
        assert worse.code == 1 and worse.posted
        still = check_report(run(base, 4, Status.PARTIAL), tmp_path, hook.url, said.append)
        assert still.code == 0 and not still.posted  # no change since the last check
        better = check_report(run(base, 5), tmp_path, hook.url, said.append)
        assert better.code == 0 and better.posted  # a recovery is news too
    assert len(hook.posts) == 2
    regression = hook.posts[0]
    assert regression["diff"]["regressed"] is True
    assert regression["diff"]["status_changes"][0]["cell"] == "mariadb-10.11/amd64"
    assert "REGRESSED mariadb-10.11/amd64: ready -&gt; partial" in regression["text"]
    assert hook.posts[1]["diff"]["regressed"] is False
    assert len(list(tmp_path.glob("2026*.json"))) == 5
    assert said == []


def test_an_infrastructure_error_exits_3_unless_something_regressed(tmp_path: Path) -> None:
    base = lab_report("lab-run")
    check_report(run(base, 1), tmp_path, None, print)
    errored = run(base, 2, Status.ERROR)
    assert check_report(errored, tmp_path, None, print).code == 3


def test_a_webhook_that_fails_never_fails_the_check(tmp_path: Path) -> None:
    said: list[str] = []
    base = lab_report("lab-run")
    with Receiver(status=500) as hook:
        check_report(run(base, 1), tmp_path, hook.url, said.append)
        outcome = check_report(run(base, 2, Status.BROKEN), tmp_path, hook.url, said.append)
    assert outcome.code == 1 and not outcome.posted and len(hook.posts) == 1
    assert said == [f"ecoready: webhook {shown(hook.url)} answered HTTP 500 (the check goes on)"]
    assert "secret-token" not in said[0]  # the URL is a credential


async def test_webhook_client_against_real_servers() -> None:
    with Receiver() as hook:
        assert await post(hook.url, {"text": "hi"}) is None
        assert hook.posts == [{"text": "hi"}]
        assert hook.headers[0]["Content-Type"] == "application/json"
    with Receiver() as gone:
        url = gone.url
    problem = await post(url, {"text": "hi"})  # nobody listens there any more
    assert problem is not None and problem.startswith(f"webhook {shown(url)}: ConnectError")
    with Receiver(delay_s=2) as slow:
        problem = await post(slow.url, {"text": "hi"}, total_s=0.5)  # the server holds the answer back
    assert problem == f"webhook {shown(slow.url)}: gave up after 0.5 s"
    assert "secret-token" not in problem


def test_webhook_urls_are_checked_and_never_shown_whole() -> None:
    assert url_problem("ftp://x/y") and url_problem("https:///nohost") and url_problem("hooks.slack.com/x")
    assert url_problem("https://hooks.slack.com/services/T0/B0/abc") is None
    assert shown("https://hooks.slack.com/services/T0/B0/abc") == "https://hooks.slack.com/…"
    assert asyncio.run(post("file:///etc/passwd", {})) == "the webhook URL must start with http:// or https://"


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("6h", 21600), ("30m", 1800), ("1h30m", 5400), ("90s", 90), ("1d", 86400), ("45", 45), ("1.5h", 5400)],
)
def test_durations(text: str, seconds: float) -> None:
    assert parse_duration(text) == seconds


@pytest.mark.parametrize("text", ["", "6x", "h", "0s", "-1h", "6 h"])
def test_bad_durations(text: str) -> None:
    with pytest.raises(UsageError):
        parse_duration(text)


def test_watch_survives_failed_checks_and_keeps_time() -> None:
    outcomes: list[object] = [EnvironmentProblem("docker is down"), RuntimeError("a bug"), 1, 0]
    slept: list[float] = []
    said: list[str] = []
    now = [0.0]

    def check() -> int:
        now[0] += 10  # each check takes 10 s
        outcome = outcomes.pop(0)
        if isinstance(outcome, Exception):
            raise outcome
        assert isinstance(outcome, int)
        return outcome

    code = watch_loop(check, 60, said.append, runs=4, sleep=slept.append, clock=lambda: now[0])
    assert code == 0 and outcomes == []
    assert slept == [50, 50, 50]  # start to start, whatever the check did
    assert "check 1 failed: docker is down" in said[0]
    assert "check 2 failed unexpectedly: RuntimeError: a bug" in said[2]


def test_watch_stops_when_a_check_was_stopped_by_a_signal() -> None:
    codes = [0, 143, 0]
    code = watch_loop(lambda: codes.pop(0), 1, lambda _: None, sleep=lambda _: None)
    assert code == 143 and codes == [0]


def test_cli_check_judges_a_saved_report_as_ci_does_after_a_merge(tmp_path: Path) -> None:
    base = lab_report("lab-run")
    good, bad = tmp_path / "good.json", tmp_path / "bad.json"
    good.write_text(json_report.render(run(base, 1)))
    bad.write_text(json_report.render(run(base, 2, Status.BROKEN)))
    history = str(tmp_path / "history")
    with Receiver() as hook:
        first = ecoready("check", "--report", str(good), "--history", history, "--webhook", hook.url)
        assert first.returncode == 0, first.stderr
        second = ecoready("check", "--report", str(bad), "--history", history, "--webhook", hook.url)
        assert second.returncode == 1, second.stderr
        assert "REGRESSED mariadb-10.11/amd64: ready -> broken" in second.stdout
    assert len(hook.posts) == 1
    mixed = ecoready("check", "--report", str(good), "--history", history, "--only", "x")
    assert mixed.returncode == 2 and "drop --only" in mixed.stderr
    unfinished = tmp_path / "unfinished.json"
    unfinished.write_text(json_report.render(replace(run(base, 3), finished_at=None)))
    refused = ecoready("check", "--report", str(unfinished), "--history", history)
    assert refused.returncode == 2 and "did not finish" in refused.stderr
    assert len(list((tmp_path / "history").glob("*.json"))) == 2


def test_cli_check_report_needs_no_matrix_toml(tmp_path: Path) -> None:
    import os
    import subprocess
    import sys

    base = lab_report("lab-run")
    good, bad = tmp_path / "good.json", tmp_path / "bad.json"
    good.write_text(json_report.render(run(base, 1)))
    bad.write_text(json_report.render(run(base, 2, Status.BROKEN)))
    empty = tmp_path / "empty"  # no matrix.toml here
    empty.mkdir()
    exe = Path(sys.executable).with_name("ecoready")

    def check(*args: str) -> subprocess.CompletedProcess[str]:
        argv = [str(exe), "check", "--history", str(tmp_path / "h"), *args]
        return subprocess.run(argv, capture_output=True, text=True, cwd=empty, env=os.environ, timeout=120)

    first = check("--report", str(good))
    assert first.returncode == 0, first.stderr
    second = check("--report", str(bad), "--matrix", "whatever.toml")  # --matrix is not read with --report
    assert second.returncode == 1, second.stderr
    assert "REGRESSED mariadb-10.11/amd64: ready -> broken" in second.stdout


def test_an_older_report_is_checked_against_the_one_before_it_in_time(tmp_path: Path) -> None:
    """`check --report` of a run older than the newest stored one: the history stays in
    time order and the check compares the report with its predecessor in time, as `diff
    --history` over those two would."""
    said: list[str] = []
    base = lab_report("lab-run")
    check_report(run(base, 1), tmp_path, None, said.append)
    check_report(run(base, 3), tmp_path, None, said.append)
    late = check_report(run(base, 2, Status.PARTIAL), tmp_path, None, said.append)
    assert late.code == 1 and late.diff is not None and late.diff.regressed  # against run 1, ready
    assert [p.name[:8] for p in sorted(tmp_path.glob("2026*.json"))] == ["20260101", "20260102", "20260103"]
    assert said == [
        "ecoready: history: this report started before the newest stored one (20260103T000000Z-000000000000.json): "
        "compared with 20260101T000000Z-000000000000.json, the one before it"
    ]
    first = check_report(run(base, 0), tmp_path, None, said.append)  # older than everything
    assert first.diff is None and said[-1].endswith("nothing stored before it")
