"""The connector probe when a check fails after the whole connect timeout: that timeout is
ecoready's, so the program runs once more with three times it before the driver is blamed
(over a fake engine; the real smoke programs run in tests/integration/test_lab_connectors.py).
"""

from __future__ import annotations

from typing import Any

from ecoready.domain.events import CheckReported, StageFinished
from ecoready.domain.model import Category, Outcome, Stage
from ecoready.domain.specs import ExecResult
from ecoready.probes.connector import CHECKS
from ecoready.run.runner import Runner
from tests.support.fake_host import FakeContainer, Rig, Sql, backend_server, cell, component, ok, plan, rig

SERVER = component("db", "server", "mariadb:10.11")
CONNECTOR = component(
    "connector-java",
    "connector",
    "127.0.0.1:5000/lab/connectors:bookworm",
    category=Category.CONNECTOR,
    backend="db",
    options={"language": "java"},
)
LINK_FAILURE = "Communications link failure | The driver has not received any packets from the server."


def line(check: str, passed: bool, detail: str) -> str:
    return f'{{"check": "{check}", "ok": {"true" if passed else "false"}, "detail": "{detail}"}}'


def every_check(passed: bool, detail: str) -> str:
    return "\n".join(line(name, passed, detail if not passed else f"{name} ok") for name in CHECKS) + "\n"


def program_runs(r: Rig, answers: list[ExecResult]) -> list[list[str]]:
    """The backend answers; each run of the smoke program gets the next answer; returns the
    smoke programs' command lines."""
    backend_server(r.host)
    runs: list[list[str]] = []

    @r.host.sql
    def create(call: Sql) -> list[dict[str, Any]] | None:
        return [{"ok": 1}] if call.statement.startswith("CREATE DATABASE") else None

    @r.host.execs_to
    def smoke(container: FakeContainer, argv: list[str]) -> ExecResult | None:
        if container.role != "connector":
            return None
        if argv[:2] == ["sh", "-c"] and argv[2].startswith("command -v"):
            return ok("/usr/local/bin/smoke-java\n")
        runs.append(argv)
        return answers[len(runs) - 1]

    return runs


def connect_timeout_of(argv: list[str]) -> str:
    return argv[argv.index("--connect-timeout") + 1]


async def run_cell(r: Rig, *, emulated: bool = False) -> tuple[dict[Stage, StageFinished], dict[str, Any]]:
    c = cell(CONNECTOR, SERVER, emulated=emulated, arch="arm64" if emulated else "amd64")
    await Runner(plan([c]), r.run)._cell(c)
    stages = {e.stage: e for e in r.events if isinstance(e, StageFinished)}
    return stages, {e.check.name: e.check for e in r.events if isinstance(e, CheckReported)}


async def test_a_failure_that_spent_the_connect_timeout_runs_again_with_three_times_it() -> None:
    r = rig()
    # emulated: the connect timeout is 5 s x 6; the first run failed after 31 s
    runs = program_runs(r, [ExecResult(1, every_check(False, LINK_FAILURE), "", 31.0), ok(every_check(True, ""))])
    stages, checks = await run_cell(r, emulated=True)
    assert [connect_timeout_of(argv) for argv in runs] == ["30", "90"]
    # the run limit inside the container grows by the added connect time: 45 x 6 + 60
    assert [argv[4] for argv in runs] == ["270", "330"]
    assert stages[Stage.SMOKE].outcome is Outcome.PASS
    assert checks["connect"].outcome is Outcome.PASS
    assert checks["connect"].detail == (
        "connect ok (second run, with a 90 s connect timeout: the first failed after 31 s, "
        "its 30 s connect timeout spent)"
    )


async def test_a_second_failure_is_the_drivers_and_says_it_had_more_time() -> None:
    r = rig()
    runs = program_runs(
        r,
        [
            ExecResult(1, every_check(False, LINK_FAILURE), "", 5.2),
            ExecResult(1, every_check(False, LINK_FAILURE), "", 15.1),
        ],
    )
    stages, checks = await run_cell(r)
    assert [connect_timeout_of(argv) for argv in runs] == ["5", "15"]
    assert stages[Stage.SMOKE].outcome is Outcome.FAIL
    assert checks["connect"].outcome is Outcome.FAIL
    assert checks["connect"].detail.startswith(LINK_FAILURE + " (second run, with a 15 s connect timeout")


async def test_a_failure_quicker_than_the_connect_timeout_is_the_drivers_at_once() -> None:
    r = rig()
    refused = every_check(False, "Connection refused")
    runs = program_runs(r, [ExecResult(1, refused, "", 1.5)])
    stages, checks = await run_cell(r)
    assert len(runs) == 1
    assert stages[Stage.SMOKE].outcome is Outcome.FAIL
    assert checks["connect"].detail == "Connection refused"


async def test_a_program_killed_at_its_limit_is_not_run_again() -> None:
    r = rig()
    runs = program_runs(r, [ExecResult(124, line("connect", False, LINK_FAILURE) + "\n", "", 50.0)])
    stages, checks = await run_cell(r)
    assert len(runs) == 1 and stages[Stage.SMOKE].outcome is Outcome.FAIL
    assert checks["connect"].detail == LINK_FAILURE
    assert "did not finish within 45 s" in checks["version"].detail
