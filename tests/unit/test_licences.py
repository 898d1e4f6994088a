"""What only the user can give, as its own outcome (`locked`): an image that stops at start
asking for a licence key or a EULA's acceptance (probe_api/licences.py's phrase table, read
by every probe through `ProbeContext.stopped_error` and the command probe's early exit), and
a registry that wants a login none is configured for (registry/transport.py). Neither is
`broken` (the component's fault) nor `error` (the tool's); the run exits 1.

The phrases are the images' own: SQL Server's EULA text as microsoft/mssql-docker#199 quotes
it, MaxScale's `license_key` setting as MariaDB's trial page documents it, and the lab's
`lab/licensed:1` (containers/licensed/entrypoint)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ecoready.domain.blame import Blame, Cause, Party, Status
from ecoready.domain.coverage import coverage_of
from ecoready.domain.errors import LicenceRequired, LoginRequired, RegistryError
from ecoready.domain.events import CellFinished, CellPlanned, CellStarted, Event, RunStarted, StageFinished
from ecoready.domain.model import Category, ComponentOrigin, Outcome, Profile, Report, Stage
from ecoready.domain.state import fold
from ecoready.probe_api.licences import LICENCE_ASKS, licence_refusal
from ecoready.report.migration import Action, plan_steps
from ecoready.report.reasons import advice
from ecoready.run.runner import Runner
from ecoready.run.session import exit_code
from tests.support.fake_host import FakeContainer, component, rig
from tests.support.fake_host import cell as cell_plan
from tests.support.fake_host import plan as plan_of

ROOT = Path(__file__).resolve().parents[2]
MSSQL = (
    "The SQL Server End-User License Agreement (EULA) must be accepted before SQL",
    "Server can start. The license terms for this product can be downloaded from",
    "http://go.microsoft.com/fwlink/?LinkId=746388.",
)
LAB_LINE = next(
    line.split('"')[1].replace("$", "")
    for line in (ROOT / "containers" / "licensed" / "entrypoint").read_text().splitlines()
    if "ERROR:" in line
)
# lines of servers that start fine and say "license" on the way (never a refusal)
HARMLESS = (
    "2026-12-03  7:00:00 0 [Note] Starting MariaDB 11.8.3-MariaDB-0+deb13u1 source revision as process 1",
    "This software comes with ABSOLUTELY NO WARRANTY. This is free software, licensed under the GPL",
    "MaxScale 24.02.11 is licensed under the Business Source License 1.1",
    "2026-12-03T07:00:00.000000Z 0 [System] [MY-010931] [Server] /usr/sbin/mysqld: ready for connections.",
)


@pytest.mark.parametrize(
    ("lines", "wants"),
    [
        (MSSQL, "the acceptance of its End-User License Agreement (EULA)"),
        (("error  : Configuration parameter 'license_key' is missing.",), "a licence key (`license_key`)"),
        ((LAB_LINE,), "a licence key"),
        (("FATAL: no valid license found for this node",), "a licence key"),
    ],
    ids=["mssql-eula", "maxscale-license-key", "lab-image", "no-valid-license"],
)
def test_each_phrase_is_recognised_with_what_to_provide(lines: tuple[str, ...], wants: str) -> None:
    refusal = licence_refusal(["starting ...", *lines])
    assert isinstance(refusal, LicenceRequired)
    ask = next(a for a in LICENCE_ASKS if a.wants == wants)
    assert refusal.blame(Stage.START).cause is Cause.NEEDS_LICENCE and refusal.fix == ask.provide
    assert f"asking for {wants}" in refusal.detail
    assert refusal.blame(Stage.START).status is Status.LOCKED


def test_a_log_that_only_mentions_a_licence_is_no_refusal() -> None:
    assert licence_refusal(HARMLESS) is None


def test_every_phrase_has_its_source_and_a_way_out() -> None:
    for ask in LICENCE_ASKS:
        assert ask.source and ask.provide and ask.wants, ask
        assert ask.source.startswith("https://") or "containers/licensed/" in ask.source, ask.source


async def test_a_container_stopping_for_its_licence_ends_the_start_locked() -> None:
    """The generic probe in service mode, its container gone at once with the lab image's
    words: the start stage is skipped for what the user must give, never `broken`."""
    r = rig()

    def refuse(container: FakeContainer) -> None:
        if container.role == "app":
            container.running, container.exit_code, container.log = False, 1, ["licensed: starting", LAB_LINE]

    r.host.on_run.append(refuse)
    row = component("licensed", "command", "r.example/licensed:1", category=Category.APP, options={"mode": "service"})
    c = cell_plan(row)
    await Runner(plan_of([c]), r.run)._cell(c)
    start = next(e for e in r.events if isinstance(e, StageFinished) and e.stage is Stage.START)
    assert start.outcome is Outcome.SKIP and start.blame is not None
    assert start.blame.cause is Cause.NEEDS_LICENCE and start.blame.facts.party is Party.USER
    assert LAB_LINE in start.detail
    assert not any(isinstance(e, StageFinished) and e.stage is Stage.SMOKE for e in r.events)  # nothing after it


def locked_report(cause: Cause, detail: str, subject: str = "") -> Report:
    planned = (CellPlanned("db/arm64", "db", "db", "server", "arm64", "local", True),)
    origins = (ComponentOrigin("db", "r.example/acme/db:1"),)
    stage = Stage.IMAGE if cause is Cause.NEEDS_LOGIN else Stage.START
    fix = "" if cause is Cause.NEEDS_LOGIN else "set LICENSE_KEY"
    events: list[Event] = [
        RunStarted("r", "t", "m.toml", Profile.SMOKE, ("arm64",), planned, origins=origins),
        CellStarted("db/arm64", "t"),
    ]
    if stage is Stage.START:
        events.append(StageFinished("db/arm64", Stage.IMAGE, Outcome.PASS, 0.1))
    events += [
        StageFinished("db/arm64", stage, Outcome.SKIP, 0.2, detail, Blame(cause, subject, fix)),
        CellFinished("db/arm64", "t2", 0.3),
    ]
    return fold(events)


@pytest.mark.parametrize("cause", [Cause.NEEDS_LOGIN, Cause.NEEDS_LICENCE])
def test_locked_is_not_ready_its_exit_is_1_and_the_plan_says_what_to_provide(cause: Cause) -> None:
    report = locked_report(cause, "access to acme/db refused (HTTP 401)", "r.example")
    cell = report.cells["db/arm64"]
    assert cell.status is Status.LOCKED
    assert exit_code([cell.status]) == 1  # not ready; not the tool's (3)
    (advised,) = advice(report)
    (step,) = plan_steps(report)
    assert step.action is Action.PROVIDE
    if cause is Cause.NEEDS_LOGIN:
        assert advised.short == "needs a login to r.example" and "docker login r.example" in advised.remedy
        assert step.text == "log in to r.example"
    else:
        assert advised.short == "needs a licence" and advised.remedy == "set LICENSE_KEY"


def test_a_login_required_is_a_registry_error_blamed_on_what_the_user_gives() -> None:
    exc = LoginRequired("r.example", "access to acme/db refused (HTTP 401)")
    assert isinstance(exc, RegistryError)  # the registry's manners and mirrors handle it as one
    assert exc.blame(Stage.IMAGE).status is Status.LOCKED and exc.blame(Stage.IMAGE).subject == "r.example"


def test_a_locked_stage_ran_and_asked_in_what_the_verdict_rests_on() -> None:
    licence = coverage_of(
        locked_report(Cause.NEEDS_LICENCE, "stopped at start asking for a licence key").cells["db/arm64"]
    )
    assert licence.ran == (Stage.IMAGE, Stage.START) and licence.skipped == () and not licence.checked
    login = coverage_of(locked_report(Cause.NEEDS_LOGIN, "refused (HTTP 401)", "r.example").cells["db/arm64"])
    assert login.ran == (Stage.IMAGE,) and not login.checked
