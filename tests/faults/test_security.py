"""No secret escapes and nothing listens on the host, checked on a real lab run.

The canary: every password the run generates starts with a known marker; one probe also
fails on purpose with an exception that quotes its password. The marker must then be in
none of: the log records, the events (hence reports), the report in every format, the
stage details, nor `docker inspect` (Env, Cmd, Entrypoint) of any container of the run.
Ports: `NetworkSettings.Ports` of every container binds nothing but 127.0.0.1 (ecoready
publishes nothing at all)."""

from __future__ import annotations

import asyncio
import itertools
import json
import logging
import subprocess
from pathlib import Path
from typing import Any

import pytest

from ecoready.domain.errors import StageFailed
from ecoready.domain.state import empty_report, reduce
from ecoready.matrix.load import load
from ecoready.probe_api.secrets import Secrets
from ecoready.probes.replication import ReplicationProbe
from ecoready.report import html, junit, markdown
from ecoready.report import json as json_report
from ecoready.run.eventlog import to_line
from ecoready.run.session import RunOptions, Session

pytestmark = pytest.mark.docker
CANARY = "CanaryPw7c1d9e2f4a6b8c0d"  # 24 characters: the minimum a run generates


def inspect_run(run_id: str) -> list[dict[str, Any]]:
    ids = subprocess.run(
        ["docker", "ps", "-aq", "--filter", f"label=ecoready.run={run_id}"], capture_output=True, text=True, check=True
    ).stdout.split()
    if not ids:
        return []
    out = subprocess.run(["docker", "inspect", *ids], capture_output=True, text=True, check=False).stdout
    return json.loads(out) if out.strip().startswith("[") else []


@pytest.fixture(scope="module")
def canary_run(lab: Path) -> dict[str, Any]:
    counter = itertools.count()
    patch = pytest.MonkeyPatch()
    patch.setattr(Secrets, "new", lambda self, name, length=32: self.add(name, f"{CANARY}{next(counter):04d}"))

    original_smoke = ReplicationProbe.smoke

    async def leaky_smoke(self: ReplicationProbe) -> None:
        await original_smoke(self)
        raise StageFailed(f"deliberate failure quoting the password {self.repl_password.reveal()}")

    patch.setattr(ReplicationProbe, "smoke", leaky_smoke)
    records: list[logging.LogRecord] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            records.append(record)

    handler = Keep(level=logging.DEBUG)
    root = logging.getLogger()
    root.addHandler(handler)
    old_level = root.level
    root.setLevel(logging.DEBUG)
    events: list[Any] = []
    inspected: dict[str, dict[str, Any]] = {}

    async def scenario() -> Any:
        report = empty_report()

        def emit(event: Any) -> None:
            nonlocal report
            events.append(event)
            report = reduce(report, event)

        session = Session(
            load(lab), RunOptions(only=["mariadb-10.11", "replication", "haproxy"], arches=["amd64"]), emit
        )
        await session.open()
        task = asyncio.create_task(session.run())
        while not task.done():  # look at every container while it exists
            for info in await asyncio.to_thread(inspect_run, session.run_id):
                inspected[info["Id"]] = info
            await asyncio.sleep(0.3)
        await task
        await session.close()
        return report

    try:
        report = asyncio.run(scenario())
    finally:
        root.removeHandler(handler)
        root.setLevel(old_level)
        patch.undo()
    return {"report": report, "events": events, "records": records, "inspected": inspected}


def test_the_canary_password_escapes_nowhere(canary_run: dict[str, Any]) -> None:
    report = canary_run["report"]
    failed = report.cells["replication/amd64"]
    assert failed.status.value == "partial" or failed.status.value == "broken", failed
    assert "[redacted]" in failed.detail or any("[redacted]" in s.detail for s in failed.stages)
    places = {
        "events": "\n".join(to_line(e) for e in canary_run["events"]),
        "json": json_report.render(report),
        "markdown": markdown.render(report),
        "html": html.render(report),
        "junit": junit.render(report),
        "logs": "\n".join(r.getMessage() + str(r.exc_info or "") for r in canary_run["records"]),
    }
    for name, text in places.items():
        assert CANARY not in text, f"the canary leaked into the {name}"
    assert canary_run["inspected"], "the run's containers should have been inspected while they ran"
    for cid, info in canary_run["inspected"].items():
        config = info.get("Config") or {}
        exposed = json.dumps(
            {
                "Env": config.get("Env"),
                "Cmd": config.get("Cmd"),
                "Entrypoint": config.get("Entrypoint"),
                "Args": info.get("Args"),
                "Labels": config.get("Labels"),
            }
        )
        assert CANARY not in exposed, f"the canary is visible in docker inspect of {cid[:12]}"
        env = config.get("Env") or []
        assert any(e.endswith("_FILE=/run/ecoready/root-password") for e in env) or not any(
            "PASSWORD" in e for e in env
        ), env


def test_nothing_is_published_on_the_host(canary_run: dict[str, Any]) -> None:
    assert len(canary_run["inspected"]) >= 4  # servers, replica, proxy
    for cid, info in canary_run["inspected"].items():
        ports = (info.get("NetworkSettings") or {}).get("Ports") or {}
        for port, bindings in ports.items():
            for binding in bindings or []:
                assert binding.get("HostIp") == "127.0.0.1", f"{cid[:12]} publishes {port} on {binding}"
        host_config = info.get("HostConfig") or {}
        assert host_config.get("Privileged") is False
        assert "no-new-privileges" in (host_config.get("SecurityOpt") or [])
        assert host_config.get("PidsLimit") and host_config.get("Memory")
        assert "NET_RAW" in (host_config.get("CapDrop") or [])
