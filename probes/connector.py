"""The connector probe: one language's MySQL/MariaDB driver against the cell's backend.

Two kinds of rows. A Debian row (`language = "python-pymysql"`, ...) runs the connectors
image, whose drivers are Debian's. A driver row (`driver = "pypi:mysqlclient==2.2.*"`)
names a language runtime image and a driver pin: the packaging stage (app/run/) resolved
the pin and judged the registry's artifacts for the arch; start installs exactly that
version into the runtime image, as its users do (probes/shared/drivers.py), once per
image, arch and version (a cached image later: `ecoready.probe_api.install_cache`).

start: (driver rows: the install), the backend server (`ctx.backend()`), a database for
the smoke program, and the image on the cell network with the password as a file; ready
means the container runs, has the language's smoke program, and the backend answers SQL.
smoke: the smoke program (ecoready.probes.smoke: shipped in ecoready, put into the container
at run time or compiled at install on driver rows) runs under a deadline and prints one
JSON line per check; each line becomes a named check. A program that crashes, hangs or
stays silent fails every check it did not report, with its exit and stderr tail. A run
with a failed check that lasted the whole connect timeout (ours, not the driver's) runs
once more with three times that timeout, and the checks it failed say so.
Driver rows add `tls` and `caching_sha2_password` against a MySQL backend (not applicable
against MariaDB, which has no caching_sha2_password). A driver that speaks only the X Protocol
(Oracle's Connector/Node.js: `drivers.X_PROTOCOL_DRIVERS`) is given the backend's X port, and
needs a backend that has one (MySQL's X Plugin: `Endpoint.x_port`).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from ecoready.probe_api import (
    CheckFailed,
    DeadlineExceeded,
    Endpoint,
    ExecResult,
    InfraError,
    InstallKind,
    MatrixMismatch,
    PackagingVerdict,
    Probe,
    Secret,
    Skip,
    SqlTarget,
    StageFailed,
    install,
    report_packaging,
)
from ecoready.probes.shared import drivers
from ecoready.probes.shared.accounts import Account, create_accounts

CHECKS = ("connect", "version", "prepared_utf8mb4", "rollback", "wrong_password")
MYSQL_CHECKS = ("tls", "caching_sha2_password")  # driver rows; against MySQL backends only
PASSWORD_PATH = "/run/ecoready/connector-password"  # noqa: S105 - a path
SHA2_PASSWORD_PATH = "/run/ecoready/connector-sha2-password"  # noqa: S105 - a path
SHA2_USER = "ecoready_sha2"
DATABASE = "ecoready_connector"
CONNECT_TIMEOUT = 5.0  # seconds, native: the drivers' own connect timeout
RUN_LIMIT = 45.0  # seconds, native: the whole program, enforced inside the container
INSTALL_LIMIT = 360.0  # seconds, native: one install (a source build, Maven, a Go build)
RETRY_FACTOR = 3  # a failed run that spent its whole connect timeout runs again with this much
KILL_GRACE = 5  # seconds between TERM and KILL when the limit is reached
TIMED_OUT = (124, 137)  # coreutils `timeout`: TERM worked / KILL was needed

# Each language's program and its fixed arguments (all then take the same options); the
# keys are probes.CONNECTOR_LANGUAGES (a unit test holds them equal).
PROGRAMS: Mapping[str, tuple[str, ...]] = {
    "c": ("smoke-c",),
    "cpp": ("smoke-cpp",),
    "java": ("smoke-java",),
    "python-pymysql": ("smoke-python", "--driver", "pymysql"),
    "python-mysqlclient": ("smoke-python", "--driver", "mysqlclient"),
    "go": ("smoke-go",),
    "nodejs": ("smoke-nodejs",),
    "php": ("smoke-php",),
    "perl": ("smoke-perl",),
    "ruby": ("smoke-ruby",),
}

# `sh -c LIMITED_RUN GRACE LIMIT PROGRAM ARG...`: runs the program under `timeout`, prints
# its stdout and stderr as they were, and also copies both into the container's log (PID
# 1's stdout), so the cell's log tail shows them.
LIMITED_RUN = (
    'out=$(mktemp) err=$(mktemp); timeout -k "$0" "$@" >"$out" 2>"$err"; rc=$?; '
    'cat "$out"; cat "$err" >&2; cat "$out" "$err" >/proc/1/fd/1 2>/dev/null; '
    'rm -f "$out" "$err"; exit $rc'
)


@dataclass(frozen=True)
class CheckLine:
    name: str
    ok: bool
    detail: str


@dataclass(frozen=True)
class SmokeOutput:
    checks: Mapping[str, CheckLine]
    other: tuple[str, ...]  # stdout lines that were not check results


def parse_lines(stdout: str) -> SmokeOutput:
    """The check results a smoke program printed, one JSON object per line:
    `{"check": NAME, "ok": BOOL, "detail": TEXT}`. Other lines are kept aside; a check
    reported twice counts as failed if either report failed (a pass never hides a fail)."""
    checks: dict[str, CheckLine] = {}
    other: list[str] = []
    for raw in stdout.splitlines():
        line = raw.strip()
        if not line:
            continue
        try:
            obj = json.loads(line)
        except ValueError:
            other.append(line)
            continue
        if not isinstance(obj, dict) or not isinstance(obj.get("check"), str) or not isinstance(obj.get("ok"), bool):
            other.append(line)
            continue
        detail = obj.get("detail", "")
        found = CheckLine(obj["check"], obj["ok"], flatten(detail if isinstance(detail, str) else json.dumps(detail)))
        earlier = checks.get(found.name)
        if earlier is not None and not earlier.ok:
            continue
        checks[found.name] = found
    return SmokeOutput(checks, tuple(other))


def flatten(text: str) -> str:
    """One line: check details are shown on one line, and drivers' messages have several."""
    return " | ".join(part.strip() for part in text.splitlines() if part.strip())


def tail(text: str, lines: int = 3) -> str:
    return flatten("\n".join([ln for ln in text.splitlines() if ln.strip()][-lines:]))


def unreported(program: str, result: ExecResult, limit: float) -> str:
    """Why a check has no result: the program's end, and what it said on stderr."""
    if result.exit_code in TIMED_OUT:
        why = f"{program} did not finish within {limit:.0f} s (killed; a hang?)"
    elif result.exit_code in (126, 127):
        why = f"{program} could not be run (exit {result.exit_code})"
    elif result.exit_code != 0:
        why = f"{program} ended with exit code {result.exit_code} before reporting this check"
    else:
        why = f"{program} did not report this check"
    err = tail(result.stderr)
    return f"{why}; stderr: {err}" if err else why


def smoke_argv(program: Sequence[str], host: str, port: int, user: str, connect_timeout: float) -> list[str]:
    return [
        *program,
        "--host",
        host,
        "--port",
        str(port),
        "--user",
        user,
        "--password-file",
        PASSWORD_PATH,
        "--database",
        DATABASE,
        "--connect-timeout",
        str(max(1, round(connect_timeout))),
    ]


def smoke_port(protocol: str, backend: Endpoint, row: str) -> int:
    """The backend's port the driver speaks to: the classic one, or the X Plugin's for an X
    Protocol driver (MatrixMismatch when the backend has none: MariaDB)."""
    if protocol != drivers.X_PROTOCOL:
        return backend.port
    if backend.x_port is None:
        flavor = "MariaDB" if backend.flavor == "mariadb" else backend.flavor
        raise MatrixMismatch(
            f"row {row}: the driver speaks only the X Protocol, and the backend ({flavor}) has no X Plugin: "
            "give it a MySQL or Percona Server backend"
        )
    return backend.x_port


def program_name(program: Sequence[str]) -> str:
    """The smoke program's name in messages: `smoke-python`, not the interpreter running it."""
    return next((os.path.basename(a) for a in program if os.path.basename(a).startswith("smoke-")), program[0])


class ConnectorProbe(Probe):
    kind = "connector"

    async def start(self) -> None:
        ctx = self.ctx
        self.language = str(ctx.options["language"])
        self.argv: tuple[str, ...] = PROGRAMS.get(self.language, ())
        image_id: str | None = None
        env: dict[str, str] = {}
        program_files: dict[str, bytes] = {}
        self.program = ""
        self.protocol = drivers.CLASSIC
        if ctx.options.get("driver"):
            image_id, env, program_files = await self._install()
        self.program = self.program or program_name(self.argv)
        backend = await ctx.backend()
        self.port = smoke_port(self.protocol, backend, ctx.cell.component.id)
        literal = ctx.options.get("password")
        password = ctx.known_secret("connector-password", str(literal)) if literal is not None else backend.password
        files: dict[str, bytes | Secret] = {PASSWORD_PATH: password, **program_files}
        # TLS and caching_sha2_password: registry driver rows against MySQL (MariaDB has no such
        # plugin); the smoke programs of Debian's packages' languages do not check them
        self.registry_row = bool(ctx.options.get("driver")) and not str(ctx.options["driver"]).startswith("deb:")
        self.mysql_checks = self.registry_row and backend.flavor in ("mysql", "percona")
        sha2 = ctx.secret("connector-sha2-password") if self.mysql_checks else None
        if sha2 is not None:
            files[SHA2_PASSWORD_PATH] = sha2
        self.container = await ctx.start_container(
            "connector",
            image_id=image_id,
            env=env,
            files=files,
            command=["sleep", "infinity"],
            user="nobody",
            mem_limit="1g",
        )
        self.backend = backend
        setup = f"CREATE DATABASE IF NOT EXISTS {DATABASE} CHARACTER SET utf8mb4; SELECT 1 AS ok"
        target = SqlTarget(backend.host, backend.port, backend.user)

        async def backend_answers() -> None:
            await ctx.sql(backend.container, target, backend.password, setup, timeout=ctx.scaled(10))

        await ctx.wait_ready(
            self.container,
            backend_answers,
            what=f"the backend {backend.host} to answer SQL",
            port=self.port,
            port_of=backend.container,
        )
        if sha2 is not None:
            account = Account(SHA2_USER, sha2, (f"ALL ON {DATABASE}.*",))
            await create_accounts(ctx, backend, [account], "connector-sha2")
        found = await ctx.exec(self.container, ["sh", "-c", f"command -v {self.argv[0]}"], timeout=ctx.scaled(15))
        if not found.ok:
            runtime = (
                "a runtime image of the driver's language"
                if ctx.options.get("driver")
                else "the lab's connectors image"
            )
            raise MatrixMismatch(
                f"row {ctx.cell.component.id}: the image has no {self.argv[0]} on its PATH (is it {runtime}?)"
            )

    async def _install(self) -> tuple[str, dict[str, str], dict[str, bytes]]:
        """The driver the packaging stage resolved, installed into the runtime image (from
        the cache when an earlier run did it); the image, the smoke program's env, and the
        files the connector container is given (a script's smoke program, from ecoready's
        package: the runtime image needs nothing of ours)."""
        ctx = self.ctx
        packaging = ctx.packaging
        if packaging is None:
            raise InfraError("the packaging stage gave this driver row no package to install")
        # one try of a download that can stall: a third of the install's time
        recipe = drivers.recipe(packaging, ctx.scaled(INSTALL_LIMIT) / 3, self.language)
        self.argv = recipe.program
        self.program = recipe.name
        self.protocol = recipe.protocol
        done = await install(
            ctx,
            recipe.script,
            of=f"{packaging.registry}:{packaging.package} {packaging.version}",
            env=recipe.env,
            timeout=ctx.scaled(INSTALL_LIMIT),
            files=recipe.install_files,
            reaches=drivers.downloads_from(packaging),
        )
        if done.image_id:
            label = done.labels.get("ecoready.install.how", "")
            source = label == drivers.BUILT_FROM_SOURCE or (not label and packaging.verdict is PackagingVerdict.SOURCE)
            how = label or (drivers.BUILT_FROM_SOURCE if source else "installed")
            kind = InstallKind.SOURCE if source else InstallKind.INSTALLED
            if done.labels.get("ecoready.install.file"):  # the file pip took, e.g. which wheel
                how = f"{how} ({done.labels['ecoready.install.file']})"
            if not done.cached:
                how = f"{how} in {done.seconds:.0f} s"
            # what the install took, where the packaging stage could not say (Debian's packages)
            version = packaging.version or done.labels.get("ecoready.install.version", "")
            ready = replace(
                packaging,
                verdict=PackagingVerdict.READY,
                install=how,
                install_kind=kind,
                cached=done.cached,
                version=version,
            )
            report_packaging(ctx, ready)
            return done.image_id, dict(recipe.run_env), dict(recipe.run_files)
        assert done.result is not None
        failed = drivers.failure(done.result.stdout, done.result.stderr)
        if failed.mismatch:
            raise MatrixMismatch(f"row {ctx.cell.component.id}: {failed.mismatch}")
        why = f"the image has no {', '.join(failed.absent)}" if failed.absent else ""
        why = "; ".join(part for part in (why, failed.last) if part) or f"exit code {done.result.exit_code}"
        report_packaging(
            ctx, replace(packaging, verdict=PackagingVerdict.MISSING, install=why, install_kind=InstallKind.FAILED)
        )
        raise StageFailed(f"{packaging.package} {packaging.version} did not install: {why}")

    async def smoke(self) -> None:
        ctx = self.ctx
        connect_timeout = ctx.scaled(CONNECT_TIMEOUT)
        first = await self._run_program(connect_timeout)
        run, note = first, ""
        if first.may_have_run_out_of_connect_time():
            # Its failure may be our deadline, not the driver: the drivers' connect timeout is
            # ours, and a loaded or emulated machine can spend all of it on one handshake.
            # Once more with three times the time before the driver is blamed.
            run = await self._run_program(connect_timeout * RETRY_FACTOR)
            note = (
                f"second run, with a {run.connect_timeout:.0f} s connect timeout: the first failed "
                f"after {first.seconds:.0f} s, its {connect_timeout:.0f} s connect timeout spent"
            )
        names = CHECKS + (MYSQL_CHECKS if self.mysql_checks else ())
        for name in names:
            failed_first = note != "" and not first.passed(name)
            await ctx.check(name, _Report(name, run, self.program, note if failed_first else ""))
        if self.registry_row and not self.mysql_checks:
            for name in MYSQL_CHECKS:
                await ctx.check(name, _not_applicable(self.backend.flavor))

    async def _run_program(self, connect_timeout: float) -> _Run:
        """The smoke program once, under `timeout` inside the container and a deadline outside."""
        ctx = self.ctx
        limit = ctx.scaled(RUN_LIMIT) + connect_timeout - ctx.scaled(CONNECT_TIMEOUT)
        argv = smoke_argv(self.argv, self.backend.host, self.port, self.backend.user, connect_timeout)
        if self.mysql_checks:
            argv += ["--tls", "yes", "--sha2-user", SHA2_USER, "--sha2-password-file", SHA2_PASSWORD_PATH]
        wrapped = ["sh", "-c", LIMITED_RUN, str(KILL_GRACE), f"{limit:.0f}", *argv]
        try:
            result = await ctx.exec(self.container, wrapped, timeout=limit + KILL_GRACE + ctx.scaled(15))
        except DeadlineExceeded as exc:  # `timeout` did not end it: the engine's exec stalled
            return _Run(None, SmokeOutput({}, ()), limit, connect_timeout, f"{self.program}: {exc}")
        return _Run(result, parse_lines(result.stdout), limit, connect_timeout)


@dataclass(frozen=True)
class _Run:
    """One run of the smoke program: its result (None when the engine's exec stalled)."""

    result: ExecResult | None
    output: SmokeOutput
    limit: float
    connect_timeout: float
    stalled: str = ""

    @property
    def seconds(self) -> float:
        return self.result.seconds if self.result is not None else 0.0

    def passed(self, name: str) -> bool:
        line = self.output.checks.get(name)
        return line is not None and line.ok

    def may_have_run_out_of_connect_time(self) -> bool:
        """A check reported a failure, and the program ran at least as long as the connect
        timeout it was given (a failure in less time was not that timeout). A program killed
        at its run limit is not run again: that is a hang, and a second one would be longer."""
        if self.result is None or self.result.exit_code in TIMED_OUT:
            return False
        reported_failure = any(not line.ok for line in self.output.checks.values())
        return reported_failure and self.result.seconds >= self.connect_timeout


def _not_applicable(flavor: str) -> _NotApplicable:
    return _NotApplicable(f"not applicable: the backend is {flavor.capitalize() if flavor != 'mariadb' else 'MariaDB'}")


@dataclass(frozen=True)
class _NotApplicable:
    """A check that does not apply to this backend, as a `ctx.check` callable."""

    why: str

    async def __call__(self) -> str:
        raise Skip(f"{self.why} (TLS and caching_sha2_password are checked against MySQL)")


@dataclass(frozen=True)
class _Report:
    """One check's result from the program's output, as a `ctx.check` callable; `note` says
    why it comes from a second run."""

    name: str
    run: _Run
    program: str
    note: str = ""

    async def __call__(self) -> str:
        if self.run.result is None:
            raise DeadlineExceeded(self.run.stalled)
        line = self.run.output.checks.get(self.name)
        if line is None:
            raise CheckFailed(self._noted(unreported(self.program, self.run.result, self.run.limit)))
        if not line.ok:
            raise CheckFailed(self._noted(line.detail or f"{self.program} reported a failure without detail"))
        return self._noted(line.detail)

    def _noted(self, detail: str) -> str:
        return f"{detail} ({self.note})" if self.note else detail


PROBE = ConnectorProbe
