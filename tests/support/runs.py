"""Running ecoready as a separate process the way a user does, and watching where it is
through its event log (ECOREADY_EVENT_LOG)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from tests.support.cli import ROOT, cell_containers, docker_labelled, ecoready


class Run:
    def __init__(self, matrix: Path, tmp: Path, *args: str, env: dict[str, str] | None = None) -> None:
        self.events_path = tmp / f"events-{time.monotonic_ns()}.jsonl"
        self.report_path = tmp / f"report-{time.monotonic_ns()}.json"
        exe = Path(sys.executable).with_name("ecoready")
        self.proc = subprocess.Popen(
            [str(exe), "run", "--headless", "--matrix", str(matrix), "--json", str(self.report_path), *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=ROOT,
            env={**os.environ, "ECOREADY_EVENT_LOG": str(self.events_path), **(env or {})},
        )

    @property
    def owner(self) -> str:
        return f"ecoready.owner={socket.gethostname()}:{self.proc.pid}"

    def events(self) -> list[dict[str, Any]]:
        if not self.events_path.exists():
            return []
        lines = self.events_path.read_text().splitlines()
        return [json.loads(line) for line in lines if line.endswith("}")]

    def wait_for(self, predicate: Any, timeout: float = 300, what: str = "") -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for event in self.events():
                if predicate(event):
                    return event
            if self.proc.poll() is not None:
                stderr = self.proc.stderr.read() if self.proc.stderr else ""
                raise AssertionError(f"ecoready ended ({self.proc.returncode}) before {what}: {stderr}")
            time.sleep(0.1)
        raise AssertionError(f"timed out waiting for {what}")

    def wait_for_stage(self, stage: str, timeout: float = 300) -> None:
        self.wait_for(lambda e: e["event"] == "StageStarted" and e["stage"] == stage, timeout, f"stage {stage}")

    def resources(self) -> dict[str, list[str]]:
        return docker_labelled(self.owner)

    def cell_containers(self) -> list[str]:
        return cell_containers(self.owner, running=True)

    def finish(self, timeout: float = 600) -> tuple[int, dict[str, Any]]:
        _, err = self.proc.communicate(timeout=timeout)
        report = json.loads(self.report_path.read_text()) if self.report_path.exists() else {}
        report["_stderr"] = err
        return self.proc.returncode, report


def write_matrix(path: Path, body: str) -> Path:
    path.write_text(body)
    return path


def run_to_report(work: Path, matrix: str, timeout: float = 900) -> dict[str, Any]:
    """A headless run of `matrix` (its text) to its end, in `work`: its JSON report, with
    the exit code and stderr as `_exit` and `_stderr`."""
    out = work / "report.json"
    result = ecoready(
        "run",
        "--headless",
        "--matrix",
        str(write_matrix(work / "matrix.toml", matrix)),
        "--json",
        str(out),
        timeout=timeout,
    )
    report: dict[str, Any] = json.loads(out.read_text())
    report["_exit"], report["_stderr"] = result.returncode, result.stderr
    return report


def report_cell(report: dict[str, Any], cell_id: str) -> dict[str, Any]:
    return next(c for c in report["cells"] if c["id"] == cell_id)


def cell_checks(cell: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """A cell's checks by name, over its stages."""
    return {k["name"]: k for s in cell["stages"] for k in s["checks"]}


SERVER = """
[[components]]
id = "{id}"
category = "server"
probe = "server"
image = "{image}"
{extra}
"""


def server_rows(*ids: str, image: str = "127.0.0.1:5000/lab/mariadb:10.11", extra: str = "") -> str:
    return "".join(SERVER.format(id=i, image=image, extra=extra) for i in ids)
