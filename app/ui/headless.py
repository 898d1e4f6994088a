"""The headless front end: a run with progress on stderr and report files, and the
scheduled check (`check`, `watch`) built on it.

Reports are written even when the run is stopped (the report then says it was
interrupted); the exit code is 128 + the signal's number when a signal stopped it.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ecoready.domain.errors import EcoreadyError, ReportError, UsageError
from ecoready.domain.events import Event
from ecoready.domain.model import Report
from ecoready.domain.state import empty_report, reduce
from ecoready.engine.aio import to_the_end
from ecoready.report import renderer
from ecoready.report.files import write_output
from ecoready.run.session import RunOptions, Session, exit_code
from ecoready.ui.console import eprint
from ecoready.ui.progress import make_progress
from ecoready.ui.signals import STOP_SIGNALS, catch_stop_signals, release_stop_signals

if TYPE_CHECKING:
    from ecoready.matrix.document import Matrix
    from ecoready.run.eventlog import EventLog


def write_reports(report: Report, outputs: Mapping[str, str]) -> dict[str, str]:
    """Each asked-for format (`json`, `md`, `html`, `junit`) to its path (`-`: stdout); one
    that cannot be written does not stop the others. Returns format -> why it failed."""
    failed: dict[str, str] = {}
    for fmt, path in outputs.items():
        try:
            write_output(path, renderer(fmt)(report))
        except ReportError as exc:
            failed[fmt] = str(exc)
    return failed


def deliver(report: Report, outputs: Mapping[str, str], *, keep: bool = True) -> bool:
    """`write_reports`, saying what failed. Then, with `keep`, unless the JSON report went
    to a file of its own, the run's JSON is kept in the state folder and its path printed:
    a run is never lost to a full disk or a folder made read-only meanwhile. True when
    every output was written."""
    failed = write_reports(report, outputs)
    for message in failed.values():
        eprint(f"ecoready: error: {message}")
    if not failed or not keep:
        return not failed
    again = " ".join(f"--{fmt} {outputs[fmt]}" for fmt in failed)
    json_path = outputs.get("json")
    if json_path and json_path != "-" and "json" not in failed:
        eprint(f"ecoready: the JSON report is in {json_path}; `ecoready report {json_path} {again}` writes the rest")
        return False
    from ecoready.judge.history import file_name
    from ecoready.report.files import keep_in_state

    try:
        kept = keep_in_state(file_name(report), renderer("json")(report))
    except ReportError as exc:
        eprint(f"ecoready: error: the run's report could not be kept in the state folder either: {exc}")
        return False
    eprint(f"ecoready: the run's JSON report is kept in {kept}; `ecoready report {kept} {again}` writes it again")
    return False


def run(matrix: Matrix, options: RunOptions, outputs: Mapping[str, str]) -> int:
    """`ecoready run --headless`: the exit code."""
    _report, code = asyncio.run(run_headless(matrix, options, outputs))
    return code


async def run_headless(matrix: Matrix, options: RunOptions, outputs: Mapping[str, str]) -> tuple[Report, int]:
    """Run the matrix with progress on stderr; write `outputs` even when the run is stopped.
    Returns the report and the exit code: 128 + the first signal's number when a signal
    stopped it, 2 when an output could not be written, else the run's own.

    The first SIGINT/SIGTERM/SIGHUP stops the run; more of them (a supervisor's stop then
    Ctrl-C, `timeout` escalating) are noted and change nothing: the cleanup and the reports
    are not cut short, and the handlers stay until both are done. After a signal, further
    ones are ignored while the process exits with the first one's code."""
    report = empty_report()
    progress = make_progress(sys.stderr)

    event_log = open_event_log()

    def emit(event: Event) -> None:
        nonlocal report
        report = reduce(report, event)
        if event_log is not None:
            event_log.write(event)
        progress.update(event, report)

    session = Session(matrix, options, emit)

    async def work() -> None:
        await session.open()
        await session.run()

    loop = asyncio.get_running_loop()
    running = asyncio.ensure_future(work())
    received: list[int] = []

    def on_signal(signum: int) -> None:
        received.append(signum)
        name = signal.Signals(signum).name
        if len(received) == 1:
            progress.note(f"ecoready: {name}: stopping, cleaning up...")
            running.cancel()  # the run's task, never this one: its cleanup below cannot be cancelled
        else:
            progress.note(f"ecoready: {name}: already stopping; the cleanup goes on")

    catch_stop_signals(loop, on_signal)

    async def wind_up() -> None:
        await asyncio.wait({running})
        await session.close()

    written = True
    from_outside = False  # cancelled by our caller, not by a signal: the same cleanup, then re-raised
    try:
        try:
            await asyncio.wait({running})
        except asyncio.CancelledError:
            from_outside = True
            running.cancel()
        try:
            await to_the_end(wind_up())
        except asyncio.CancelledError:
            from_outside = True
        finally:
            progress.stop(report)
        failure = None if running.cancelled() else running.exception()
        if failure is not None:
            raise failure
    finally:
        if report.run_id and outputs:
            written = deliver(report, outputs)
        release_stop_signals(loop, ignore=bool(received))
    if from_outside:
        raise asyncio.CancelledError
    if received:
        return report, 128 + received[0]
    if not written:
        return report, ReportError.exit_code
    return report, exit_code([c.status for c in report.cells.values()])


def open_event_log() -> EventLog | None:
    """`ECOREADY_EVENT_LOG=PATH`: append every event of the run as a JSON line."""
    from ecoready.run.eventlog import EventLog

    path = os.environ.get("ECOREADY_EVENT_LOG")
    if not path:
        return None
    try:
        return EventLog(open(path, "a", encoding="utf-8"))
    except OSError as exc:
        raise EcoreadyError(f"ECOREADY_EVENT_LOG={path}: {exc.strerror}") from None


@dataclass(frozen=True)
class CheckRequest:
    """One scheduled check as the command line asked for it."""

    history: Path
    webhook: str | None
    webhook_option: str  # how the URL was given, for error messages
    outputs: Mapping[str, str]
    saved: str | None = None  # judge this saved report instead of running
    matrix_path: str = ""
    options: RunOptions | None = None  # None with `saved`


def check_once(request: CheckRequest) -> int:
    """One scheduled check (`check`, and each round of `watch`): run (or read), store,
    diff against the previous stored report, tell the webhook; the check's exit code."""
    from ecoready.judge import history
    from ecoready.judge.check import check_report
    from ecoready.judge.webhook import url_problem

    history.prepare(request.history)
    problem = url_problem(request.webhook) if request.webhook else None
    if problem:
        raise UsageError(f"{request.webhook_option}: {problem}")
    if request.saved:
        from ecoready.report.load import load_report

        report = load_report(request.saved)
        if report.interrupted or report.finished_at is None:
            raise ReportError(f"{request.saved}: the run did not finish: not a report to compare others with")
        written = deliver(report, request.outputs, keep=False)
    else:
        from ecoready.matrix.load import load

        assert request.options is not None
        matrix = load(request.matrix_path)  # read every time: a watch picks up edits
        ran, code = asyncio.run(run_headless(matrix, request.options, request.outputs))
        if code >= 128 or ran.interrupted or not ran.run_id:
            eprint("ecoready: check stopped before the end: report not stored in the history")
            return code
        report = ran
        written = code != ReportError.exit_code
    outcome = check_report(report, request.history, request.webhook, eprint)
    # stdout carries the change, unless a report was asked for on stdout
    stream = sys.stderr if "-" in request.outputs.values() else sys.stdout
    stream.write(outcome.text)
    stream.flush()
    eprint(f"ecoready: stored {outcome.stored}" + (" and told the webhook" if outcome.posted else ""))
    return outcome.code if written else ReportError.exit_code


def watch(every: float, runs: int | None, check: Callable[[], int]) -> int:
    """`ecoready watch`: `check()` every `every` seconds until stopped (or `runs` times)."""
    from ecoready.judge.check import describe, watch_loop

    def stop(signum: int, frame: object) -> None:
        raise SystemExit(128 + signum)

    def between_checks() -> None:
        # a run installs its own handlers and resets them when it ends: between checks,
        # SIGTERM/SIGHUP just end the watch (SIGINT is KeyboardInterrupt already)
        for sig in STOP_SIGNALS:
            if sig is not signal.SIGINT:
                signal.signal(sig, stop)

    def check_once_then_reset() -> int:
        try:
            return check()
        finally:
            between_checks()

    between_checks()
    eprint(f"ecoready: watch: a check every {describe(every)}" + (f", {runs} times" if runs else ""))
    return watch_loop(check_once_then_reset, every, eprint, runs=runs, sleep=time.sleep)
