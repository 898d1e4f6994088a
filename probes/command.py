"""The generic probe: any image (the user's own app included) on the cell's network, with
its backend's connection details in the environment.

mode "run" (the default): the container's command is the test. start: the backend (when
the row names one), a database for the app, the container started and not dead at once;
smoke: the command ends within its limit; the lines it printed as `ok NAME detail` /
`fail NAME detail` become named checks, and `command` passes on exit 0.
mode "service": the image should stay up (an app server). start: ready once its Docker
healthcheck says healthy (the image's own or the row's `healthcheck`), else once its
`port` listens, else once it has run a few seconds; smoke: `healthy`, `stays-up` (still
running a while later), and the check lines it logged.

The password reaches the container only as a file whose path is in the environment. A
program the image does not have is the matrix row's mistake (`error`), never the image's.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ecoready.probe_api import (
    CheckFailed,
    Container,
    ContainerState,
    DeadlineExceeded,
    Endpoint,
    Probe,
    Secret,
    SqlTarget,
    StageFailed,
    licence_refusal,
    matrix_mismatch,
    port_listens,
)

PASSWORD_PATH = "/run/ecoready/db-password"  # noqa: S105 - a path
DEFAULT_DATABASE = "ecoready_app"
# What the image finds in its environment when the row has a backend and says nothing else
# (a row's `env` adds to these and overrides them).
DEFAULT_ENV: Mapping[str, str] = {
    "DB_HOST": "{host}",
    "DB_PORT": "{port}",
    "DB_USER": "{user}",
    "DB_NAME": "{database}",
    "DB_PASSWORD_FILE": "{password_file}",
}
RUN_LIMIT = 60.0  # native seconds the command may take, unless the row's `limit` says
EARLY_EXIT = 1.0  # native seconds start watches for a container that dies at once
SETTLE = 5.0  # native seconds a service with no healthcheck nor port must run to be up
STAY_UP = 5.0  # seconds a ready service must keep running (smoke)
HEALTH_INTERVAL = 2.0  # seconds between Docker healthcheck runs (the image's own interval may be long)
OUTPUT_LINES = 400  # log lines read for check lines
OWN_CHECKS = ("command", "healthy", "stays-up")
_CHECK_LINE = re.compile(r"^(ok|fail)\s+([A-Za-z0-9][A-Za-z0-9._:/-]{0,63})(?:\s+(.*))?$")
_TOKEN = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")


@dataclass(frozen=True)
class CheckLine:
    name: str
    ok: bool
    detail: str


def parse_check_lines(lines: Sequence[str]) -> dict[str, CheckLine]:
    """The checks a program printed, in order of first report: `ok NAME detail` or
    `fail NAME detail`, one per line; other lines are output. A check reported twice counts
    as failed if either report failed (a pass never hides a fail); names the probe reports
    itself (OWN_CHECKS) are left to it."""
    checks: dict[str, CheckLine] = {}
    for raw in lines:
        found = _CHECK_LINE.match(raw.strip())
        if found is None or found.group(2) in OWN_CHECKS:
            continue
        line = CheckLine(found.group(2), found.group(1) == "ok", (found.group(3) or "").strip())
        earlier = checks.get(line.name)
        if earlier is None or earlier.ok:
            checks[line.name] = line
    return checks


def fill(text: str, values: Mapping[str, str]) -> str:
    """`text` with each known `{placeholder}` replaced; every other brace left as written."""
    return _TOKEN.sub(lambda m: values.get(m.group(1), m.group(0)), text)


def placeholder_values(backend: Endpoint | None, database: str) -> dict[str, str]:
    """What the placeholders stand for (none without a backend: validate refuses them then).
    The keys are matrix.command_options.COMMAND_PLACEHOLDERS (a unit test holds them equal)."""
    if backend is None:
        return {}
    return {
        "host": backend.host,
        "port": str(backend.port),
        "user": backend.user,
        "database": database,
        "password_file": PASSWORD_PATH,
    }


def output_tail(lines: Sequence[str], count: int = 3) -> str:
    """The last lines of output, on one line (details are shown on one line)."""
    kept = [line.strip() for line in lines if line.strip()][-count:]
    return " | ".join(kept) if kept else "no output"


def missing_program(state: ContainerState, lines: Sequence[str]) -> bool:
    """A shell (an entrypoint script's `exec "$@"`) that could not find or run the program."""
    if state.exit_code not in (126, 127):
        return False
    text = "\n".join(lines[-5:]).lower()
    return any(words in text for words in ("not found", "no such file", "permission denied", "cannot execute"))


def crashed(state: ContainerState, lines: Sequence[str]) -> bool:
    """Ended by the system, not by the program's own exit status: OOM, a foreign binary,
    the emulator, or a signal."""
    text = "\n".join(lines).lower()
    signalled = state.exit_code is not None and state.exit_code > 128
    return state.oom_killed or signalled or "exec format error" in text or "uncaught target signal" in text


class CommandProbe(Probe):
    kind = "command"

    async def start(self) -> None:
        ctx = self.ctx
        options = ctx.options
        self.mode = str(options.get("mode", "run"))
        backend = await ctx.backend() if ctx.cell.backend is not None else None
        database = str(options.get("database", DEFAULT_DATABASE))
        values = placeholder_values(backend, database)
        files: dict[str, bytes | Secret] = {}
        if backend is not None:
            setup = f"CREATE DATABASE IF NOT EXISTS {database} CHARACTER SET utf8mb4"
            target = SqlTarget(backend.host, backend.port, backend.user)
            await ctx.sql(backend.container, target, backend.password, setup, timeout=ctx.scaled(30))
            files[PASSWORD_PATH] = backend.password
        env = {**(DEFAULT_ENV if backend is not None else {}), **dict(options.get("env") or {})}
        for path, content in dict(options.get("files") or {}).items():
            files[path] = fill(str(content), values).encode()
        command = options.get("command")
        entrypoint = options.get("entrypoint")
        self.program = " ".join(command or entrypoint or ["the image's command"])[:80]
        self.container = await ctx.start_container(
            "app",
            env={name: fill(str(value), values) for name, value in env.items()},
            files=files,
            command=[fill(str(a), values) for a in command] if command else None,
            entrypoint=[fill(str(a), values) for a in entrypoint] if entrypoint else None,
            user=options.get("user"),
            healthcheck=[str(a) for a in options.get("healthcheck") or ()],
            health_interval=HEALTH_INTERVAL if self.mode == "service" else None,
        )
        self.started = time.monotonic()
        if self.mode == "service":
            await self._until_up()
        else:
            await self._not_dead_at_once()

    # -- run --------------------------------------------------------------------------
    async def _not_dead_at_once(self) -> None:
        """A container that dies at once of a missing program or a foreign binary fails the
        start; one that ran its command (exit 0 or not) leaves that to smoke."""
        ctx, container = self.ctx, self.container
        until = self.started + ctx.scaled(EARLY_EXIT)
        while time.monotonic() < until:
            state = await ctx.state(container)
            if not state.running:
                await self._blame_early_exit(container, state)
                return
            await asyncio.sleep(0.2)

    async def _blame_early_exit(self, container: Container, state: ContainerState) -> None:
        lines = await self.ctx.logs(container, 60)
        self._no_program(container, state, lines)
        refusal = licence_refusal(lines)  # it stopped asking for a licence key or a EULA's acceptance
        if refusal is not None:
            raise refusal
        if crashed(state, lines):
            raise await self.ctx.stopped_error(container)

    def _no_program(self, container: Container, state: ContainerState, lines: Sequence[str]) -> None:
        if missing_program(state, lines):
            what = f"{container.image} cannot run {self.program!r} (exit {state.exit_code}: {output_tail(lines, 1)})"
            raise matrix_mismatch(self.ctx.cell.component, what)

    async def _run_smoke(self) -> None:
        ctx, container = self.ctx, self.container
        limit = ctx.scaled(float(ctx.options.get("limit", RUN_LIMIT)))
        ctx.waiting_for = f"waiting for {self.program} to end (limit {limit:g} s)"
        state = await ctx.state(container)
        while state.running and time.monotonic() - self.started < limit:
            await asyncio.sleep(0.5)
            state = await ctx.state(container)
        seconds = time.monotonic() - self.started
        lines = await ctx.logs(container, OUTPUT_LINES)
        if not state.running:
            self._no_program(container, state, lines)
        await self._report_lines(lines)
        await ctx.check("command", lambda: self._verdict(state, lines, seconds, limit))

    async def _verdict(self, state: ContainerState, lines: Sequence[str], seconds: float, limit: float) -> str:
        """The command's end: exit 0 passes; a hang past the limit times out; anything else
        fails, with the output (the whole of it is in the cell's log tail)."""
        if state.running:
            raise DeadlineExceeded(
                f"{self.program} did not end within {limit:g} s; output so far: {output_tail(lines)}"
            )
        if crashed(state, lines):
            raise CheckFailed(f"{self.program}: {await self.ctx.why_stopped(self.container)}")
        if state.exit_code != 0:
            raise CheckFailed(
                f"{self.program} exited with code {state.exit_code} after {seconds:.1f} s; output: {output_tail(lines)}"
            )
        return f"exit 0 after {seconds:.1f} s; output: {output_tail(lines, 1)}"

    # -- service ------------------------------------------------------------------------
    async def _until_up(self) -> None:
        ctx, container = self.ctx, self.container
        port = ctx.options.get("port")
        self.judged_by = ""

        async def up() -> None:
            state = await ctx.state(container)
            if state.health:
                if state.health != "healthy":
                    raise CheckFailed(f"its healthcheck says {state.health}")
                self.judged_by = "its Docker healthcheck says healthy"
            elif port is not None:
                if not await port_listens(ctx, container, int(port)):
                    raise CheckFailed(f"nothing listens on port {port} yet")
                self.judged_by = f"port {port} listens"
            else:
                settle = ctx.scaled(SETTLE)
                if time.monotonic() - self.started < settle:
                    raise CheckFailed(f"running for less than {settle:.0f} s")
                self.judged_by = f"running for {settle:.0f} s (no healthcheck or port to ask)"

        try:
            await ctx.wait_ready(container, up, what="the service to be up")
        except StageFailed:
            state = await ctx.state(container)
            if not state.running:
                await self._blame_early_exit(container, state)
            raise

    async def _service_smoke(self) -> None:
        ctx, container = self.ctx, self.container

        async def healthy() -> str:
            return self.judged_by

        async def stays_up() -> str:
            wait = STAY_UP  # wall-clock time to watch, not work: the same under emulation
            await asyncio.sleep(wait)
            state = await ctx.state(container)
            if not state.running:
                raise CheckFailed(f"stopped: {await ctx.why_stopped(container)}")
            if state.health == "unhealthy":
                raise CheckFailed("running, but its healthcheck now says unhealthy")
            return f"still running {wait:.0f} s after it was up"

        await ctx.check("healthy", healthy)
        await ctx.check("stays-up", stays_up)
        await self._report_lines(await ctx.logs(container, OUTPUT_LINES))

    # -- both ---------------------------------------------------------------------------
    async def _report_lines(self, lines: Sequence[str]) -> None:
        for line in parse_check_lines(lines).values():
            await self.ctx.check(line.name, _Line(line))

    async def smoke(self) -> None:
        if self.mode == "service":
            await self._service_smoke()
        else:
            await self._run_smoke()


@dataclass(frozen=True)
class _Line:
    """One check line the program printed, as a `ctx.check` callable."""

    line: CheckLine

    async def __call__(self) -> str:
        if not self.line.ok:
            raise CheckFailed(self.line.detail or "reported a failure without detail")
        return self.line.detail


PROBE = CommandProbe
