"""The generic `command` probe on the recording engine: what the user's image gets (the
backend's details in its environment, the password only as a file), how its end is judged
(exit 0, exit 1, a hang, a missing program, a foreign binary), service mode (healthcheck,
port, staying up), the check-line format, and the matrix options that describe it.

The engine's refusal texts are the ones dockerd 20.10 / runc gave on this machine
(`docker run IMAGE nosuchprog`, and the lab MariaDB image whose entrypoint script runs
`exec "$@"`); the /proc/net/tcp table is the kernel's format (proc(5))."""

from __future__ import annotations

import textwrap
from collections.abc import Callable
from typing import Any

import pytest

from ecoready.domain.errors import ConfigError, EngineError
from ecoready.domain.events import CheckReported, StageFinished
from ecoready.domain.model import Category, Component, Outcome, Stage
from ecoready.matrix.command_options import COMMAND_PLACEHOLDERS
from ecoready.matrix.load import parse
from ecoready.plan.cells import SMOKE_LIMIT_MARGIN, budgets_for
from ecoready.probes import command
from ecoready.probes.command import DEFAULT_ENV, PASSWORD_PATH, fill, parse_check_lines, placeholder_values
from ecoready.run.runner import Runner
from tests.support.fake_host import FakeContainer, Rig, Sql, backend_server, cell, component, ok, plan, rig

APP_IMAGE = "registry.example/shop/app:1.4"
SERVER = component("db", "server", "mariadb:10.11")
NOT_FOUND = (
    "failed to create shim task: OCI runtime create failed: runc create failed: unable to start container "
    'process: exec: "nosuchprog": executable file not found in $PATH: unknown'
)


def app_row(backend: bool = True, **options: Any) -> Component:
    return component(
        "app", "command", APP_IMAGE, category=Category.APP, backend="db" if backend else None, options=options
    )


def app_does(change: Callable[[FakeContainer], None]) -> Callable[[FakeContainer], None]:
    def hook(container: FakeContainer) -> None:
        if container.role == "app":
            change(container)

    return hook


def exits(code: int, *lines: str) -> Callable[[FakeContainer], None]:
    def change(container: FakeContainer) -> None:
        container.running, container.exit_code, container.log = False, code, list(lines)

    return app_does(change)


def with_backend(r: Rig) -> list[Sql]:
    backend_server(r.host)
    made: list[Sql] = []

    @r.host.sql
    def create(call: Sql) -> list[dict[str, Any]] | None:
        if call.statement.startswith("CREATE DATABASE"):
            made.append(call)
            return []
        return None

    return made


async def run_cell(r: Rig, row: Component, *, emulated: bool = False) -> dict[Stage, StageFinished]:
    c = cell(row, SERVER if row.backend else None, emulated=emulated)
    await Runner(plan([c]), r.run)._cell(c)
    return {e.stage: e for e in r.events if isinstance(e, StageFinished)}


def checks(r: Rig) -> dict[str, Any]:
    return {e.check.name: e.check for e in r.events if isinstance(e, CheckReported)}


@pytest.fixture(autouse=True)
def _short_waits(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(command, "STAY_UP", 0.01)
    monkeypatch.setattr(command, "SETTLE", 0.05)
    monkeypatch.setattr(command, "EARLY_EXIT", 0.05)


# -- run mode ---------------------------------------------------------------------------
async def test_the_app_gets_the_backend_in_its_environment_and_the_password_as_a_file() -> None:
    r = rig()
    made = with_backend(r)
    r.host.on_run.append(exits(0, "ok connect db:3306 as root", "ok query SELECT 1 answered", "bye"))
    stages = await run_cell(r, app_row(env={"APP_DSN": "mysql://{user}@{host}:{port}/{database}"}))
    assert [s.outcome for s in stages.values()] == [Outcome.PASS, Outcome.PASS, Outcome.PASS]
    app = r.host.by_role("app")
    backend = r.host.by_role("backend-server")
    password = app.files[PASSWORD_PATH].decode()
    assert password and password == backend.files[next(p for p in backend.files if "root" in p)].decode().strip()
    assert app.env["DB_HOST"] == "backend-server" and app.env["DB_PORT"] == "3306"
    assert app.env["DB_USER"] == "root" and app.env["DB_NAME"] == "ecoready_app"
    assert app.env["DB_PASSWORD_FILE"] == PASSWORD_PATH
    assert app.env["APP_DSN"] == "mysql://root@backend-server:3306/ecoready_app"
    assert all(password not in value for value in app.env.values())
    assert all(password not in arg for arg in app.spec.command or ())
    assert [c.statement for c in made] == ["CREATE DATABASE IF NOT EXISTS ecoready_app CHARACTER SET utf8mb4"]
    seen = checks(r)
    assert seen["connect"].outcome is Outcome.PASS and seen["connect"].detail == "db:3306 as root"
    assert seen["query"].outcome is Outcome.PASS
    assert seen["command"].outcome is Outcome.PASS and "exit 0" in seen["command"].detail
    assert "bye" in seen["command"].detail  # the output, shown


async def test_exit_1_fails_the_smoke_naming_the_failing_checks_with_the_output() -> None:
    r = rig()
    with_backend(r)
    r.host.on_run.append(exits(1, "ok connect", "fail write INSERT denied: error 1142", "giving up"))
    stages = await run_cell(r, app_row())
    assert stages[Stage.START].outcome is Outcome.PASS
    smoke = stages[Stage.SMOKE]
    assert smoke.outcome is Outcome.FAIL and smoke.detail == "failed: write, command"
    seen = checks(r)
    assert seen["write"].detail == "INSERT denied: error 1142"
    assert "exited with code 1" in seen["command"].detail and "giving up" in seen["command"].detail


async def test_a_hang_past_its_limit_times_out_with_the_output_so_far() -> None:
    r = rig()
    with_backend(r)
    r.host.on_run.append(app_does(lambda c: c.log.extend(["ok connect", "waiting for a lock ..."])))
    stages = await run_cell(r, app_row(limit=0.3))
    smoke = stages[Stage.SMOKE]
    assert smoke.outcome is Outcome.TIMEOUT and smoke.detail == "timed out: command"
    seen = checks(r)
    assert seen["connect"].outcome is Outcome.PASS
    assert seen["command"].outcome is Outcome.TIMEOUT
    assert "did not end within 0.3 s" in seen["command"].detail
    assert "waiting for a lock" in seen["command"].detail


async def test_a_program_the_image_lacks_is_the_matrix_rows_error() -> None:
    r = rig()
    with_backend(r)

    def refuse(container: FakeContainer) -> None:
        if container.role == "app":
            raise EngineError(NOT_FOUND)

    r.host.on_run.append(refuse)
    stages = await run_cell(r, app_row(command=["nosuchprog", "--check"]))
    start = stages[Stage.START]
    assert start.outcome is Outcome.ERROR  # the cell is `error`, never `broken`
    assert "matrix row 'app' (probe command)" in start.detail and "'nosuchprog'" in start.detail


async def test_a_shell_entrypoint_that_cannot_find_the_program_is_the_rows_error_too() -> None:
    r = rig()
    with_backend(r)
    r.host.on_run.append(exits(127, "/usr/local/bin/docker-entrypoint.sh: line 169: exec: nosuchprog: not found"))
    stages = await run_cell(r, app_row(command=["nosuchprog"]))
    start = stages[Stage.START]
    assert start.outcome is Outcome.ERROR and "matrix row 'app'" in start.detail and "exit 127" in start.detail


async def test_a_binary_for_another_cpu_breaks_the_start() -> None:
    r = rig()
    with_backend(r)
    r.host.on_run.append(exits(1, "exec /usr/local/bin/app: exec format error"))
    stages = await run_cell(r, app_row())
    start = stages[Stage.START]
    assert start.outcome is Outcome.FAIL and "exec format error" in start.detail
    assert Stage.SMOKE not in stages


async def test_without_a_backend_nothing_of_a_database_is_set() -> None:
    r = rig()
    r.host.on_run.append(exits(0, "ok selftest"))
    stages = await run_cell(r, app_row(backend=False, command=["app", "--selftest"], env={"MODE": "test"}))
    assert stages[Stage.SMOKE].outcome is Outcome.PASS
    app = r.host.by_role("app")
    assert dict(app.env) == {"MODE": "test"} and PASSWORD_PATH not in app.files
    assert list(app.spec.command or ()) == ["app", "--selftest"]
    assert [x.role for x in r.host.started] == ["app"]


async def test_files_and_arguments_get_the_placeholders_filled() -> None:
    r = rig()
    with_backend(r)
    r.host.on_run.append(exits(0))
    config = '{"db": {"host": "{host}", "port": {port}, "password_file": "{password_file}"}, "other": "{keep}"}'
    row = app_row(command=["app", "--db={host}:{port}"], files={"/etc/app/config.json": config})
    await run_cell(r, row)
    app = r.host.by_role("app")
    assert list(app.spec.command or ()) == ["app", "--db=backend-server:3306"]
    written = app.files["/etc/app/config.json"].decode()
    assert written == (
        '{"db": {"host": "backend-server", "port": 3306, "password_file": "' + PASSWORD_PATH + '"}, "other": "{keep}"}'
    )


# -- service mode -------------------------------------------------------------------------
async def test_a_service_is_up_when_its_healthcheck_says_healthy_and_stays_up(monkeypatch: pytest.MonkeyPatch) -> None:
    r = rig()
    with_backend(r)
    looks = iter(["starting", "starting", "healthy"])

    def state_changes(container: FakeContainer) -> None:
        container.health = "starting"

    r.host.on_run.append(app_does(state_changes))
    original = r.host.state

    async def state(container_id: str) -> Any:
        container = r.host.containers[container_id]
        if container.role == "app" and container.health != "healthy":
            container.health = next(looks, "healthy")
        return await original(container_id)

    monkeypatch.setattr(r.host, "state", state)
    stages = await run_cell(r, app_row(mode="service", healthcheck=["CMD", "curl", "-fsS", "http://localhost/"]))
    assert stages[Stage.START].outcome is Outcome.PASS, stages[Stage.START]
    assert stages[Stage.SMOKE].outcome is Outcome.PASS
    seen = checks(r)
    assert seen["healthy"].detail == "its Docker healthcheck says healthy"
    assert "still running" in seen["stays-up"].detail
    app = r.host.by_role("app")
    assert app.spec.healthcheck == ("CMD", "curl", "-fsS", "http://localhost/")
    assert app.spec.health_interval == command.HEALTH_INTERVAL


PROC_NET_TCP = textwrap.dedent(
    """\
      sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
       0: 0100007F:0CEA 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1 1 0 100 0 0 10 0
       1: 00000000:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 2 1 0 100 0 0 10 0
    """
)


async def test_a_service_without_a_healthcheck_is_up_when_its_port_listens() -> None:
    r = rig()
    with_backend(r)
    asked: list[list[str]] = []

    def cat(container: FakeContainer, argv: list[str]) -> Any:
        if container.role == "app" and argv[0] == "cat":
            asked.append(argv)
            return ok(PROC_NET_TCP if len(asked) > 1 else PROC_NET_TCP.splitlines()[0] + "\n")
        return None

    r.host.execs_to(cat)
    stages = await run_cell(r, app_row(mode="service", port=8080))
    assert stages[Stage.START].outcome is Outcome.PASS, stages[Stage.START]
    assert checks(r)["healthy"].detail == "port 8080 listens"
    assert asked[0] == ["cat", "/proc/net/tcp", "/proc/net/tcp6"] and len(asked) == 2


async def test_a_service_that_exits_is_broken() -> None:
    r = rig()
    with_backend(r)
    r.host.on_run.append(exits(1, "panic: cannot read /etc/app/config.json"))
    stages = await run_cell(r, app_row(mode="service", port=8080))
    start = stages[Stage.START]
    assert start.outcome is Outcome.FAIL and "exited with code 1" in start.detail and "config.json" in start.detail


async def test_a_service_that_dies_after_it_was_up_fails_stays_up(monkeypatch: pytest.MonkeyPatch) -> None:
    r = rig()
    with_backend(r)
    states = {"n": 0}
    original = r.host.state

    async def state(container_id: str) -> Any:
        container = r.host.containers[container_id]
        if container.role == "app":
            states["n"] += 1
            if states["n"] > 3:
                container.running, container.exit_code, container.log = False, 137, ["Killed"]
        return await original(container_id)

    monkeypatch.setattr(r.host, "state", state)
    stages = await run_cell(r, app_row(mode="service"))
    assert stages[Stage.START].outcome is Outcome.PASS
    assert stages[Stage.SMOKE].outcome is Outcome.FAIL
    assert "stopped" in checks(r)["stays-up"].detail


# -- pure parts ---------------------------------------------------------------------------
def test_check_lines() -> None:
    lines = [
        "ok connect db:3306",
        "  fail write denied  ",
        "ok write retried",  # a pass never hides a fail
        "OK shout",  # lower case only
        "ok",  # a name is required
        "okay connect",
        "ok command mine",  # the probe's own name
        "ok a/b:c.d-e_f detail with  spaces",
        "fail nodetail",
    ]
    found = parse_check_lines(lines)
    assert list(found) == ["connect", "write", "a/b:c.d-e_f", "nodetail"]
    assert found["write"].ok is False and found["write"].detail == "denied"
    assert found["a/b:c.d-e_f"].detail == "detail with  spaces"
    assert found["nodetail"].detail == ""


def test_placeholders_are_the_ones_validate_knows() -> None:
    from ecoready.probe_api.handles import Container, Endpoint
    from ecoready.probe_api.secrets import Secret

    endpoint = Endpoint("db", 3306, "root", Secret("p", "x"), Container("i", "n", "db", "server", "img", "id"))
    assert set(placeholder_values(endpoint, "d")) == set(COMMAND_PLACEHOLDERS)
    assert set(DEFAULT_ENV) == {"DB_HOST", "DB_PORT", "DB_USER", "DB_NAME", "DB_PASSWORD_FILE"}
    assert fill("{host}:{port} {nope} {{host}}", {"host": "db", "port": "3306"}) == "db:3306 {nope} {db}"


def test_the_limit_grows_the_smoke_budget() -> None:
    assert budgets_for(app_row(limit=300), emulated=False)[Stage.SMOKE] == 300 + SMOKE_LIMIT_MARGIN
    assert budgets_for(app_row(limit=300), emulated=True)[Stage.SMOKE] == (300 + SMOKE_LIMIT_MARGIN) * 6
    assert budgets_for(app_row(), emulated=False)[Stage.SMOKE] == 90


MATRIX = """
[[components]]
id = "db"
category = "server"
probe = "server"
image = "mariadb:10.11"
"""


def problems(options: str, backend: bool = True) -> list[str]:
    text = MATRIX + textwrap.dedent(
        f"""
        [[components]]
        id = "app"
        category = "app"
        probe = "command"
        image = "{APP_IMAGE}"
        {'backend = "db"' if backend else ""}
        platform = "linux/amd64"
        service = "web"

        [components.options]
        """
    )
    try:
        parse(text + textwrap.dedent(options), "m.toml")
    except ConfigError as exc:
        return [p.message for p in exc.problems]
    return []


def test_a_full_row_validates() -> None:
    good = """
        mode = "service"
        command = ["app", "--port=8080"]
        env = { DB_HOST = "{host}", DB_PASSWORD_FILE = "{password_file}", TZ = "UTC" }
        files = { "/etc/app.ini" = "host = {host}" }
        port = 8080
        healthcheck = ["CMD-SHELL", "curl -f http://localhost:8080/"]
        user = "1000"
        database = "shop"
    """
    assert problems(good) == []


@pytest.mark.parametrize(
    ("options", "backend", "words"),
    [
        ('env = { DB = "{hots}" }', True, "unknown placeholder '{hots}' (did you mean '{host}'?)"),
        ('env = { DB = "{password}" }', True, "unknown placeholder '{password}'"),
        ('env = { DB = "{host}" }', False, "'{host}' is the backend's: this row needs a 'backend'"),
        ('env = { "BAD-NAME" = "x" }', True, "environment name 'BAD-NAME'"),
        ("env = { N = 3 }", True, "'env.N' must be a string"),
        ("command = []", True, "'command' must list at least one string"),
        ("command = [1]", True, "'command' must list strings only"),
        ('files = { "etc/x" = "" }', True, "must be absolute"),
        ('mode = "run"\nport = 80', True, "'port' applies to mode = \"service\""),
        ('mode = "daemon"', True, "unknown mode 'daemon'"),
        ("port = 70000", True, "'port' must be between 1 and 65535"),
        ('healthcheck = ["curl"]', True, 'starts with "CMD" or "CMD-SHELL"'),
        ('database = "a;b"', True, "'database' must be 1-64 letters"),
        ("limit = 0", True, "'limit' must be between 0 and 86400"),
        ("nope = 1", True, "unknown key"),
    ],
)
def test_option_problems_are_named(options: str, backend: bool, words: str) -> None:
    found = problems(options, backend)
    assert any(words in p for p in found), found


def test_a_platform_pin_must_be_a_platform() -> None:
    text = MATRIX + '\nplatform = "amd64"\n'
    with pytest.raises(ConfigError, match="must be a platform like linux/amd64"):
        parse(text, "m.toml")
    parsed = parse(MATRIX + 'platform = "linux/arm64/v8"\nservice = "db"\n', "m.toml")
    assert parsed.components[0].platform == "linux/arm64/v8" and parsed.components[0].service == "db"
