"""The bench stage: sysbench against a SQL endpoint, through a ProbeContext.

sysbench runs in its own container of the cell's arch on the cell's private network,
pinned to other CPUs than the server where the host has them, and reaches the server over
TCP by its network name. The stage goes: an account for sysbench (random password, sent as
a file), the sysbench container, what its binary can do, prepare, then per access pattern
and workload a warmup and the measured runs (repeats interleaved over thread counts), and
cleanup. Each (workload, access) pair is one named check; the numbers are published after
each one, so they fill in as the stage runs.

Who is blamed: a server that refuses or crashes fails the stage (the component); a
missing sysbench image or a broken wrapper is an infrastructure error (ecoready); a run
that commits nothing fails its check. Transactions sysbench restarted after a deadlock or a
snapshot conflict (`RETRIED_ERRORS`) are counted and shown, not a failure.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, replace

from ecoready.domain.blame import Cause
from ecoready.domain.errors import (
    CheckFailed,
    DeadlineExceeded,
    ImageUnavailable,
    InfraError,
    Skip,
    StageFailed,
    SysbenchOutputError,
)
from ecoready.domain.model import BenchResult, BenchRun, BenchSeries
from ecoready.domain.text import one_line
from ecoready.matrix.bench_settings import ROWS_PER_S, BenchSettings
from ecoready.probe_api.context import SECRETS_DIR, ProbeContext
from ecoready.probe_api.handles import Container, Endpoint
from ecoready.probe_api.sql import SqlTarget
from ecoready.probe_api.sysbench import (
    BENCH_DB,
    BENCH_USER,
    CONFIG_FILE,
    ZIPFIAN_LUA,
    Capabilities,
    Connection,
    RunOutput,
    bench_run,
    capabilities,
    cleanup_argv,
    config_file,
    failed_silently,
    fatal_line,
    parse_run,
    prepare_argv,
    run_argv,
    series,
    wrapper_stub,
    wrapper_stub_path,
    zipfian_lua,
)
from ecoready.probe_api.tool_images import derived_sysbench

SYSBENCH_ROLE = "sysbench"
NOBODY = "65534:65534"  # sysbench needs no privilege at all
USER_SQL_PATH = f"{SECRETS_DIR}/sysbench-user.sql"
# Beyond a run's --time: connecting, thread start-up, the exec round trip (native seconds).
RUN_SLACK_S = 60.0


@dataclass(frozen=True)
class BenchTarget:
    """Where sysbench sends its load: the server itself, or a proxy in front of it."""

    host: str  # name on the cell network
    port: int
    label: str = "server"  # BenchResult.target: "server" or "through <proxy>"
    # Containers whose death ends the stage at once as the component's failure.
    watch: tuple[Container, ...] = ()


def user_sql(password: str) -> bytes:
    """The account sysbench logs in with: its own database, nothing else."""
    quoted = password.replace("\\", "\\\\").replace("'", "\\'")
    return (
        f"CREATE DATABASE IF NOT EXISTS {BENCH_DB};\n"
        f"CREATE USER IF NOT EXISTS '{BENCH_USER}'@'%' IDENTIFIED BY '{quoted}';\n"
        f"GRANT ALL PRIVILEGES ON {BENCH_DB}.* TO '{BENCH_USER}'@'%';\n"
    ).encode()


def cpu_model_of(cpuinfo: str) -> str:
    """The CPU as /proc/cpuinfo names it (x86: model name; arm64: implementer/part ids)."""
    fields: dict[str, str] = {}
    for line in cpuinfo.splitlines():
        key, sep, value = line.partition(":")
        if sep and key.strip() not in fields:
            fields[key.strip()] = value.strip()
    for key in ("model name", "Model", "Hardware", "cpu model"):
        if fields.get(key):
            return fields[key]
    if "CPU part" in fields:
        return f"CPU implementer {fields.get('CPU implementer', '?')} part {fields['CPU part']}"
    return ""


def series_detail(points: Sequence[BenchSeries]) -> str:
    parts = []
    for s in points:
        text = f"{s.threads} thr {s.median_tps:,.0f} tps p95 {s.median_p95_ms:g} ms"
        if len(s.runs) > 1:
            text += f" cv {s.cv * 100:.1f}%"
        retried = sum(r.errors for r in s.runs)
        if retried:
            text += f" {retried} retried"
        reconnects = sum(r.reconnects for r in s.runs)
        if reconnects:
            text += f" {reconnects} reconnects"
        parts.append(text)
    return "; ".join(parts)


class SysbenchDriver:
    """One cell's sysbench: set up once, then any number of runs, then cleanup."""

    def __init__(
        self, ctx: ProbeContext, backend: Endpoint, settings: BenchSettings, target: BenchTarget | None = None
    ) -> None:
        self.ctx = ctx
        self.backend = backend
        self.settings = settings
        self.target = target or BenchTarget(backend.host, backend.port, "server", (backend.container,))
        self.watch = self.target.watch or (backend.container,)
        self.container: Container | None = None
        self.caps: Capabilities | None = None
        self.cpu_model = ""
        self.page_size = 0
        self.cpusets: dict[str, str] = {}

    @property
    def connection(self) -> Connection:
        return Connection(self.target.host, self.target.port)

    @property
    def zipfian_mode(self) -> str:
        if "zipfian" not in self.settings.access or self.caps is None:
            return ""
        return "native" if self.caps.native_zipfian else "lua"

    # -- set-up -------------------------------------------------------------------------
    async def setup(self) -> None:
        ctx = self.ctx
        password = ctx.secret("sysbench")
        await ctx.put_files(self.backend.container, {USER_SQL_PATH: user_sql(password.reveal())})
        await self._admin_sql(f"source {USER_SQL_PATH}")
        # A first login through the client proves the account; on MySQL 8 it also fills
        # caching_sha2_password's cache, so sysbench's plain-TCP logins succeed after it.
        await ctx.sql(
            self.backend.container, SqlTarget("127.0.0.1", self.backend.port, BENCH_USER), password, "SELECT 1 AS ok"
        )
        client_cpus = ctx.cpuset("client")
        server_cpus = ctx.cpuset("server")
        if client_cpus and server_cpus:
            self.cpusets = {"server": server_cpus, SYSBENCH_ROLE: client_cpus}
        files: dict[str, bytes] = {CONFIG_FILE: config_file(password.reveal())}
        # the matrix's image, else one derived from a public base on first use (then cached)
        derived = None if self.settings.image else await derived_sysbench(ctx, self.settings.base)
        try:
            self.container = await ctx.start_container(
                SYSBENCH_ROLE,
                image=self.settings.image or None,
                image_id=derived,
                entrypoint=["sleep"],
                command=["infinity"],
                user=NOBODY,
                files=files,
                cpuset_cpus=client_cpus,
                tool=True,
            )
        except ImageUnavailable as exc:  # ecoready's tool image, not the component's
            why = f"the sysbench image {self.settings.tool_image}: {exc}"
            raise InfraError(why, cause=Cause.TOOL_IMAGE, subject=self.settings.tool_image) from None
        version = await self._exec(["sysbench", "--version"], ctx.scaled(30), what="sysbench --version")
        helptext = await self._exec(["sysbench", "--help"], ctx.scaled(30), what="sysbench --help")
        try:
            self.caps = capabilities(version, helptext)
        except SysbenchOutputError as exc:
            why = f"the sysbench image {self.settings.tool_image} has no usable sysbench: {exc}"
            raise InfraError(why, cause=Cause.TOOL_IMAGE, subject=self.settings.tool_image) from None
        if self.zipfian_mode == "lua":
            stubs = {wrapper_stub_path(w): wrapper_stub(w) for w in self.settings.workloads}
            await ctx.put_files(self.container, {ZIPFIAN_LUA: zipfian_lua(), **stubs})
        facts = await ctx.exec(
            self.container, ["sh", "-c", "getconf PAGESIZE; cat /proc/cpuinfo"], timeout=ctx.scaled(30)
        )
        first, _, rest = facts.stdout.partition("\n")
        self.page_size = int(first) if first.strip().isdigit() else 0
        self.cpu_model = one_line(cpu_model_of(rest), 120)
        if ctx.emulated and self.cpu_model:  # qemu-user shows a CPU of its own making
            self.cpu_model += " (as the emulator presents it)"

    async def _exec(self, argv: Sequence[str], timeout: float, *, what: str) -> str:
        assert self.container is not None
        result = await self.ctx.exec(self.container, argv, timeout=timeout)
        if not result.ok:
            raise InfraError(f"{what} failed in the sysbench container: {fatal_line(result.stderr + result.stdout)}")
        return result.stdout

    async def prepare(self) -> str:
        assert self.container is not None
        s = self.settings
        started = time.monotonic()
        rows = s.tables * s.table_size
        argv = prepare_argv(
            Connection(self.backend.host, self.backend.port), s.tables, s.table_size, threads=min(s.tables, 8)
        )
        result = await self.ctx.exec(self.container, argv, timeout=self.ctx.scaled(60 + 2 * rows / ROWS_PER_S))
        text = result.stdout + result.stderr
        if not result.ok or failed_silently(text):
            await self.server_alive()
            raise StageFailed(f"sysbench prepare failed: {fatal_line(text)}")
        seconds = time.monotonic() - started
        counts = " + ".join(f"(SELECT COUNT(*) FROM {BENCH_DB}.sbtest{i})" for i in range(1, s.tables + 1))
        rows_found = await self._admin_sql(f"SELECT {counts} AS n_rows", timeout=self.ctx.scaled(60 + rows / 1e5))
        if not rows_found or rows_found[0].get("n_rows") != str(rows):
            raise StageFailed(f"after prepare expected {rows} rows, found {rows_found}")
        return f"{s.tables} tables x {s.table_size:,} rows in {seconds:.1f} s"

    async def _admin_sql(self, statement: str, *, timeout: float | None = None) -> list[dict[str, str | None]]:
        admin = SqlTarget("127.0.0.1", self.backend.port, self.backend.user)
        return await self.ctx.sql(self.backend.container, admin, self.backend.password, statement, timeout=timeout)

    # -- runs -----------------------------------------------------------------------------
    async def run(self, workload: str, access: str, threads: int, seconds: int) -> RunOutput:
        """One sysbench run; StageFailed when sysbench fails (the server refused or died)."""
        assert self.container is not None and self.caps is not None
        s = self.settings
        argv = run_argv(
            self.connection,
            workload,
            access=access,
            threads=threads,
            seconds=seconds,
            tables=s.tables,
            table_size=s.table_size,
            caps=self.caps,
            zipf_exp=s.zipf_exp,
        )
        result = await self.ctx.exec(self.container, argv, timeout=seconds + self.ctx.scaled(RUN_SLACK_S))
        text = result.stdout + result.stderr
        if result.ok:
            try:
                return parse_run(result.stdout)
            except SysbenchOutputError as exc:
                raise InfraError(f"unreadable sysbench output for {workload}: {exc}") from None
        await self.server_alive()
        line = fatal_line(text)
        if "zipfian.lua:" in text:
            raise InfraError(f"ecoready's zipfian wrapper failed: {line}")
        raise StageFailed(f"sysbench {workload} {access} {threads} threads failed: {line}")

    async def server_alive(self) -> None:
        """StageFailed naming the watched container (server, proxy) that stopped, if any."""
        for container in self.watch:
            state = await self.ctx.state(container)
            if not state.running:
                why = await self.ctx.why_stopped(container)
                raise StageFailed(f"{container.role} stopped during the benchmark: {why}")

    async def cleanup(self) -> None:
        """Drop the tables and the account (the containers go with the cell anyway)."""
        assert self.container is not None
        s = self.settings
        argv = cleanup_argv(Connection(self.backend.host, self.backend.port), s.tables, s.table_size)
        result = await self.ctx.exec(self.container, argv, timeout=self.ctx.scaled(60))
        text = result.stdout + result.stderr
        if not result.ok or failed_silently(text):
            raise StageFailed(f"sysbench cleanup failed: {fatal_line(text)}")
        await self._admin_sql(f"DROP DATABASE IF EXISTS {BENCH_DB}; DROP USER IF EXISTS '{BENCH_USER}'@'%'")

    def result(self, points: Sequence[BenchSeries], image_digests: dict[str, str]) -> BenchResult:
        facts = self.ctx.host_facts
        return BenchResult(
            tool=self.caps.tool if self.caps else "sysbench",
            zipfian=self.zipfian_mode,
            target=self.target.label,
            emulated=self.ctx.emulated,
            profile=self.settings.profile,
            cpu_model=self.cpu_model,
            cpus=facts.cpus if facts else 0,
            page_size=self.page_size,
            image_digests=image_digests,
            series=tuple(points),
            cpusets=dict(self.cpusets),
            method=self.settings.describe(),
        )


async def run_bench(
    ctx: ProbeContext,
    backend: Endpoint,
    *,
    target: BenchTarget | None = None,
    settings: BenchSettings | None = None,
) -> BenchResult:
    """The whole bench stage against `backend` (or `target` in front of it): publishes the
    BenchResult as it grows and returns it; StageFailed when any workload failed."""
    settings = settings or ctx.bench_settings
    if settings is None:
        raise Skip("no bench in this profile")
    driver = SysbenchDriver(ctx, backend, settings, target)
    await driver.setup()
    main_role = "server" if driver.target.label == "server" else "component"
    digests = {main_role: (await ctx.image_info()).digest}
    if backend.container.image != ctx.image_ref:
        digests["backend"] = (await ctx.image_info(backend.container.image)).digest
    # a derived sysbench image is its base's digest and Debian's package of the day
    digests[SYSBENCH_ROLE] = (await ctx.image_info(settings.image or settings.base)).digest
    points: list[BenchSeries] = []
    failed: list[str] = []
    await _step(ctx, driver, "prepare", driver.prepare, failed)
    if failed:
        raise StageFailed("sysbench prepare failed")
    for access in settings.access:
        for workload in settings.workloads:

            async def measure(workload: str = workload, access: str = access) -> str:
                with ctx.run.activity.window(ctx.cell.id) as beside:
                    found, stalled = await _measure(driver, workload, access)
                shared = tuple(sorted(beside))
                found = [replace(s, shared_with=shared) for s in found]
                points.extend(found)
                ctx.report_bench(driver.result(points, digests))
                detail = series_detail(found) + (f"; {stalled} s with no commit" if stalled else "")
                if shared:
                    detail += f"; not alone on the host: {', '.join(shared)}"
                bad = [f"{r.threads} thr run {r.repeat}" for s in found for r in s.runs if not r.ok]
                if bad:
                    raise CheckFailed(f"runs that committed nothing ({', '.join(bad)}): {detail}")
                return detail

            await _step(ctx, driver, f"{workload} {access}", measure, failed)
    await _step(ctx, driver, "cleanup", driver.cleanup, failed)
    result = driver.result(points, digests)
    ctx.report_bench(result)
    if failed:
        raise StageFailed("failed: " + ", ".join(failed))
    return result


async def _step(
    ctx: ProbeContext, driver: SysbenchDriver, name: str, fn: Callable[[], Awaitable[str | None]], failed: list[str]
) -> None:
    """A named check. A timeout ends the stage (a run may still be going in the container,
    and anything measured next would share the CPU with it), and so does a server that
    stopped (nothing after it could pass)."""
    timed_out = len(ctx.timed_out_checks)
    if not await ctx.check(name, fn):
        if len(ctx.timed_out_checks) > timed_out:
            raise DeadlineExceeded(f"{name} did not finish in time")
        failed.append(name)
        await driver.server_alive()


async def _measure(driver: SysbenchDriver, workload: str, access: str) -> tuple[list[BenchSeries], int]:
    """Warmup at the highest thread count, then the repeats, each over every thread count
    (interleaved, so a slow phase of the machine does not land on one point only). Also
    the seconds of measured runs in which nothing committed (stalls worth a mention)."""
    s = driver.settings
    if s.warmup > 0:
        await driver.run(workload, access, max(s.threads), s.warmup)
    runs: dict[int, list[BenchRun]] = {t: [] for t in s.threads}
    stalled = 0
    for repeat in range(1, s.repeats + 1):
        for threads in s.threads:
            output = await driver.run(workload, access, threads, s.time)
            stalled += output.stalled_intervals
            runs[threads].append(bench_run(output, workload, access, threads, repeat))
    return [series(runs[t]) for t in s.threads], stalled


def bench_detail(result: BenchResult) -> str:
    """The bench stage's one line."""
    workloads = len({s.workload for s in result.series})
    zipf = f", zipfian via {result.zipfian}" if result.zipfian else ""
    pinned = (
        ", pinned " + " / ".join(f"{role} {cpus}" for role, cpus in result.cpusets.items())
        if result.cpusets
        else ", not pinned"
    )
    note = "; emulated: proves the path, not performance" if result.emulated else ""
    return f"{result.tool}: {workloads} workloads, {len(result.series)} points{zipf}{pinned}{note}"
