"""The bench stage keeps sysbench's password secret, checked on a real lab run.

Every password the run generates starts with a canary. While the bench runs, the command
lines of every process in the sysbench container are read (`/proc/*/cmdline`): the canary
(sysbench's password) must be in none of them, since sysbench reads it from its
`--config-file`. Afterwards it must be in none of the events, the report in every format,
nor the log records."""

from __future__ import annotations

import asyncio
import itertools
import logging
import subprocess
from pathlib import Path
from typing import Any

import pytest

from ecoready.domain.state import empty_report, reduce
from ecoready.matrix.load import load
from ecoready.probe_api.secrets import Secrets
from ecoready.report import html, junit, markdown
from ecoready.report import json as json_report
from ecoready.run.eventlog import to_line
from ecoready.run.session import RunOptions, Session
from tests.support.matrices import LAB_SERVER

pytestmark = pytest.mark.docker
CANARY = "CanaryBenchPw3e5a7c9b1d2f"


def command_lines(run_id: str) -> list[str]:
    """Command lines of every process in the run's sysbench containers (now)."""
    ids = subprocess.run(
        ["docker", "ps", "-q", "--filter", f"label=ecoready.run={run_id}", "--filter", "label=ecoready.role=sysbench"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    lines: list[str] = []
    for cid in ids:
        out = subprocess.run(
            ["docker", "exec", cid, "sh", "-c", "for f in /proc/[0-9]*/cmdline; do tr '\\0' ' ' < $f; echo; done"],
            capture_output=True,
            text=True,
            check=False,
        )
        lines.extend(ln for ln in out.stdout.splitlines() if ln.strip())
    return lines


def test_sysbench_password_is_on_no_command_line_and_in_no_output(
    lab: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, no_leaks: None
) -> None:
    counter = itertools.count()
    monkeypatch.setattr(Secrets, "new", lambda self, name, length=32: self.add(name, f"{CANARY}{next(counter):04d}"))
    matrix = tmp_path / "m.toml"
    matrix.write_text(
        '[sysbench]\nimage = "127.0.0.1:5000/lab/mariadb:10.11"\n'
        'workloads = ["oltp_point_select", "oltp_read_only"]\naccess = ["uniform", "zipfian"]\n'
        "threads = [2]\ntime = 3\nwarmup = 1\ntables = 1\ntable_size = 1000\n" + LAB_SERVER
    )
    records: list[logging.LogRecord] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            records.append(record)

    handler = Keep(level=logging.DEBUG)
    logging.getLogger().addHandler(handler)
    events: list[Any] = []
    seen: list[str] = []

    async def scenario() -> Any:
        report = empty_report()

        def emit(event: Any) -> None:
            nonlocal report
            events.append(event)
            report = reduce(report, event)

        from ecoready.domain.model import Profile

        session = Session(load(matrix), RunOptions(arches=["amd64"], profile=Profile.FULL), emit)
        await session.open()
        task = asyncio.create_task(session.run())
        while not task.done():
            seen.extend(await asyncio.to_thread(command_lines, session.run_id))
            await asyncio.sleep(0.2)
        await task
        await session.close()
        return report

    try:
        report = asyncio.run(scenario())
    finally:
        logging.getLogger().removeHandler(handler)
    (cell,) = report.cells.values()
    assert cell.status.value == "ready", cell
    assert cell.bench is not None and cell.bench.zipfian == "lua"
    # sysbench really ran while we looked, with its password file
    runs = [ln for ln in seen if ln.startswith("sysbench ") and " run" in ln]
    assert runs, seen
    assert all("--config-file=" in ln for ln in runs)
    assert not [ln for ln in seen if CANARY in ln], "the password is on a command line"
    places = {
        "events": "\n".join(to_line(e) for e in events),
        "json": json_report.render(report),
        "markdown": markdown.render(report),
        "html": html.render(report),
        "junit": junit.render(report),
        "logs": "\n".join(r.getMessage() + str(r.exc_info or "") for r in records),
    }
    for name, text in places.items():
        assert CANARY not in text, f"the canary leaked into the {name}"
