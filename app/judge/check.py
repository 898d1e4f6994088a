"""The scheduled readiness check: after a headless run, store the report, diff it against
the previous stored one, tell a webhook when something changed, and decide the exit code.
`watch` repeats the check on an interval and survives a check that fails.

Exit codes of a check: 1 when something regressed; else 3 when the tool or the
infrastructure failed a cell (the check could not judge it); else 0 (also for the first
check, which has nothing to compare with).
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ecoready.domain.errors import EcoreadyError, UsageError
from ecoready.domain.model import Report, Status
from ecoready.judge import history
from ecoready.judge.diff import Diff, diff, diff_text

_DURATION = re.compile(r"(\d+(?:\.\d+)?)([smhd])")
UNIT_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400}
MIN_INTERVAL_S = 1.0


@dataclass(frozen=True)
class CheckOutcome:
    code: int
    stored: Path
    diff: Diff | None  # None for the first check in a history folder
    text: str  # what changed, for people
    posted: bool


def check_report(report: Report, directory: Path, webhook: str | None, say: Callable[[str], None]) -> CheckOutcome:
    """Store `report`, diff it against the previous stored report, post when it changed."""
    problems: list[str] = []
    # The history is kept in time order: a report that started before the newest stored one
    # (`check --report` of an older run) is compared with the one stored before it in time,
    # so a later `diff --history` never contradicts what this check said of the same pair.
    name = history.file_name(report)
    newest = history.newest_name(directory)
    late = newest is not None and newest > name
    before = history.previous(directory, problems, before=name)
    stored = history.store(report, directory)
    for problem in problems:
        say(f"ecoready: history: {problem}")
    if late:
        against = f"compared with {before.path.name}, the one before it" if before else "nothing stored before it"
        say(f"ecoready: history: this report started before the newest stored one ({newest}): {against}")
    if before is None:
        change = None
        text = f"first report in {directory}: nothing to compare with yet (stored {stored.name})\n"
    else:
        judged = history.last_judged(directory, before, problems, exclude=stored)
        change = diff(before.report, report, judged)
        text = diff_text(change)
    posted = False
    if change is not None and change.changed and webhook:
        from ecoready.judge.webhook import payload, post

        failure = asyncio.run(post(webhook, payload(change)))
        if failure:
            say(f"ecoready: {failure} (the check goes on)")
        else:
            posted = True
    return CheckOutcome(check_code(report, change), stored, change, text, posted)


def check_code(report: Report, change: Diff | None) -> int:
    if change is not None and change.regressed:
        return 1
    if any(c.status is Status.ERROR for c in report.cells.values()):
        return 3
    return 0


def parse_duration(text: str, *, minimum: float = MIN_INTERVAL_S, option: str = "--every") -> float:
    """`6h`, `30m`, `1h30m`, `90s`, `1d`, or plain seconds; at least `minimum` seconds."""
    raw = text.strip().lower()
    if re.fullmatch(r"\d+(\.\d+)?", raw):
        seconds = float(raw)
    elif raw and _DURATION.sub("", raw) == "":
        seconds = sum(float(n) * UNIT_SECONDS[u] for n, u in _DURATION.findall(raw))
    else:
        raise UsageError(f"{option}: cannot read {text!r} as a duration (e.g. 6h, 30m, 1h30m, 90s)")
    if seconds < minimum:
        raise UsageError(f"{option}: {text!r} is shorter than {minimum:g} s")
    return seconds


def describe(seconds: float) -> str:
    if seconds >= 3600:
        return f"{seconds / 3600:.1f} h"
    if seconds >= 60:
        return f"{seconds / 60:.1f} min"
    return f"{seconds:.0f} s"


def watch_loop(
    check_once: Callable[[], int],
    every_s: float,
    say: Callable[[str], None],
    *,
    runs: int | None = None,
    sleep: Callable[[float], None] = time.sleep,
    clock: Callable[[], float] = time.monotonic,
) -> int:
    """Run `check_once` every `every_s` seconds (start to start) until stopped, or `runs`
    times. A check that fails (an exception or an environment error) is reported and the
    loop goes on; a check stopped by a signal (exit >= 128) stops the loop."""
    n = 0
    code = 0
    while True:
        n += 1
        started = clock()
        try:
            code = check_once()
        except EcoreadyError as exc:
            say(f"ecoready: watch: check {n} failed: {exc}")
            code = exc.exit_code
        except Exception as exc:  # a bug must not end a watch that runs for weeks
            say(f"ecoready: watch: check {n} failed unexpectedly: {type(exc).__name__}: {exc}")
            code = 3
        if code >= 128:
            return code
        if runs is not None and n >= runs:
            return code
        wait = max(0.0, every_s - (clock() - started))
        say(f"ecoready: watch: check {n} ended with exit {code}; next in {describe(wait)}")
        sleep(wait)
