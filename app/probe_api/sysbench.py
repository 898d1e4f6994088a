"""sysbench, the pure parts: command lines, the Lua Zipfian wrapper, output parsing and the
statistics of repeats. `app/probe_api/bench.py` runs them through a ProbeContext.

The password never reaches an argv: sysbench reads it from `--config-file` (a 0444 file in
the sysbench container), so every command line here is safe to show as it is.
"""

from __future__ import annotations

import re
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources

from ecoready.domain.errors import SysbenchOutputError
from ecoready.domain.model import BenchRun, BenchSeries

SYSBENCH_DIR = "/run/ecoready/sysbench"
CONFIG_FILE = f"{SYSBENCH_DIR}/client.cfg"
ZIPFIAN_LUA = f"{SYSBENCH_DIR}/zipfian.lua"
BENCH_DB = "ecoready_sb"
BENCH_USER = "ecoready_sb"
PERCENTILE = 95
# Workload used for prepare/cleanup: every oltp_* script shares oltp_common's schema.
SCHEMA_WORKLOAD = "oltp_read_write"


@dataclass(frozen=True)
class Connection:
    """Where sysbench connects: over TCP to a name on the cell network."""

    host: str
    port: int
    user: str = BENCH_USER
    database: str = BENCH_DB


@dataclass(frozen=True)
class Capabilities:
    """What the sysbench binary in the image can do."""

    version: str  # "1.0.20"
    native_zipfian: bool
    zipfian_exp_option: bool  # --rand-zipfian-exp (sysbench >= 1.1)

    @property
    def tool(self) -> str:
        return f"sysbench {self.version}"


def config_file(password: str) -> bytes:
    """`--config-file` content: `name=value` lines, read before the command line."""
    if "\n" in password or "\r" in password:
        raise ValueError("a sysbench password cannot contain a line break")
    return f"mysql-password={password}\n".encode()


# Errors a transaction meets under concurrency, which applications answer by restarting it,
# and sysbench restarts it (its "ignored errors", its own default list, named here so every
# version does the same): deadlock (1213), lock wait timeout (1205), and "record has changed
# since last read" (1020), which MariaDB raises with innodb_snapshot_isolation, ON by default
# since 11.6.2. They are the workload meeting the server's isolation, the same on every arch:
# counted and shown beside the numbers, never a failed run. Any other error stops sysbench.
RETRIED_ERRORS: tuple[int, ...] = (1213, 1020, 1205)


def common_args(conn: Connection, tables: int, table_size: int) -> list[str]:
    return [
        f"--config-file={CONFIG_FILE}",
        "--db-driver=mysql",
        f"--mysql-host={conn.host}",  # a name, never localhost: localhost means the socket
        f"--mysql-port={conn.port}",
        f"--mysql-user={conn.user}",
        f"--mysql-db={conn.database}",
        f"--tables={tables}",
        f"--table_size={table_size}",
    ]


def prepare_argv(conn: Connection, tables: int, table_size: int, threads: int) -> list[str]:
    # prepare is parallel per table; more threads than tables would idle
    return ["sysbench", SCHEMA_WORKLOAD, *common_args(conn, tables, table_size), f"--threads={threads}", "prepare"]


def cleanup_argv(conn: Connection, tables: int, table_size: int) -> list[str]:
    return ["sysbench", SCHEMA_WORKLOAD, *common_args(conn, tables, table_size), "cleanup"]


def wrapper_stub_path(workload: str) -> str:
    return f"{SYSBENCH_DIR}/{workload}.zipfian.lua"


def wrapper_stub(workload: str, wrapper: str = ZIPFIAN_LUA) -> bytes:
    """The script sysbench runs for Lua-Zipfian access: names the stock workload and
    loads the wrapper (sysbench parses options only after loading the script, so the
    workload cannot be an option)."""
    if not re.fullmatch(r"[A-Za-z0-9_./-]+", workload) or not re.fullmatch(r"[A-Za-z0-9_./-]+", wrapper):
        raise ValueError(f"unexpected workload or wrapper name {workload!r} / {wrapper!r}")
    return f'ECOREADY_WORKLOAD = "{workload}"\ndofile("{wrapper}")\n'.encode()


def zipfian_lua() -> bytes:
    """The Lua wrapper that gives sysbench 1.0 a Zipfian `sysbench.rand.default`."""
    return (resources.files("ecoready.probe_api") / "sysbench_lua" / "zipfian.lua").read_bytes()


def run_argv(
    conn: Connection,
    workload: str,
    *,
    access: str,
    threads: int,
    seconds: int,
    tables: int,
    table_size: int,
    caps: Capabilities,
    zipf_exp: float,
    report_interval: int = 1,
) -> list[str]:
    """One measured (or warmup) run. Zipfian: native `--rand-type=zipfian` when the binary
    has it, else the Lua wrapper's stub script with `--zipf_exp`."""
    script = workload
    access_args = ["--rand-type=uniform"]
    if access == "zipfian":
        if caps.native_zipfian:
            access_args = ["--rand-type=zipfian"]
            if caps.zipfian_exp_option:
                access_args.append(f"--rand-zipfian-exp={zipf_exp:g}")
        else:
            script = wrapper_stub_path(workload)
            access_args = ["--rand-type=uniform", f"--zipf_exp={zipf_exp:g}"]
    elif access != "uniform":
        raise ValueError(f"unknown access pattern {access!r}")
    return [
        "sysbench",
        script,
        *common_args(conn, tables, table_size),
        f"--threads={threads}",
        f"--time={seconds}",
        "--events=0",
        f"--report-interval={report_interval}",
        f"--percentile={PERCENTILE}",
        f"--mysql-ignore-errors={','.join(map(str, RETRIED_ERRORS))}",
        *access_args,
        "run",
    ]


# -- what the binary can do -----------------------------------------------------------
_VERSION = re.compile(r"sysbench\s+(\d+\.\d+(?:\.\d+)?\S*)")
_RAND_TYPES = re.compile(r"--rand-type=\S+.*?\{([^}]*)\}")


def parse_version(text: str) -> str:
    match = _VERSION.search(text)
    if not match:
        raise SysbenchOutputError(f"no sysbench version in {text[:120]!r}")
    return match.group(1)


def capabilities(version_output: str, help_output: str) -> Capabilities:
    """From `sysbench --version` and `sysbench --help`."""
    match = _RAND_TYPES.search(help_output)
    kinds = {k.strip() for k in match.group(1).split(",")} if match else set()
    return Capabilities(
        version=parse_version(version_output),
        native_zipfian="zipfian" in kinds,
        zipfian_exp_option="--rand-zipfian-exp" in help_output,
    )


# -- output -------------------------------------------------------------------------
@dataclass(frozen=True)
class Interval:
    """One `--report-interval` line."""

    at_s: float
    threads: int
    tps: float
    qps: float
    p95_ms: float
    err_per_s: float
    reconn_per_s: float


@dataclass(frozen=True)
class RunOutput:
    """The final statistics of one run, and its interval lines."""

    tps: float
    qps: float
    transactions: int
    queries: int
    errors: int  # "ignored errors": transactions sysbench restarted (RETRIED_ERRORS)
    reconnects: int
    seconds: float  # total time
    p95_ms: float
    latency_avg_ms: float
    latency_max_ms: float
    threads: int
    intervals: tuple[Interval, ...]

    @property
    def stalled_intervals(self) -> int:
        """Interval lines in which nothing was committed (a stall worth mentioning)."""
        return sum(1 for i in self.intervals if i.tps == 0)


_NUM = r"([0-9]+(?:\.[0-9]+)?)"
_INTERVAL = re.compile(
    rf"^\[\s*{_NUM}s\s*\]\s+thds:\s+(\d+)\s+tps:\s+{_NUM}\s+qps:\s+{_NUM}.*?"
    rf"lat \(ms,\d+%\):\s+{_NUM}\s+err/s:\s+{_NUM}\s+reconn/s:\s+{_NUM}",
    re.M,
)
_COUNTER = r"^\s*{name}:\s+(\d+)\s+\(\s*{num} per sec\.\)"


def _counter(text: str, name: str) -> tuple[int, float]:
    match = re.search(_COUNTER.format(name=re.escape(name), num=_NUM), text, re.M)
    if not match:
        raise SysbenchOutputError(f"no '{name}' line in the sysbench output")
    return int(match.group(1)), float(match.group(2))


def _value(text: str, pattern: str) -> float:
    match = re.search(pattern, text, re.M)
    if not match:
        raise SysbenchOutputError(f"no match for {pattern!r} in the sysbench output")
    return float(match.group(1))


def parse_run(text: str) -> RunOutput:
    """Parse the output of `sysbench <oltp workload> run` (1.0.x and 1.1 layouts)."""
    if "SQL statistics:" not in text:
        fatal = [ln.strip() for ln in text.splitlines() if ln.startswith("FATAL")]
        raise SysbenchOutputError(fatal[-1] if fatal else "no final statistics in the sysbench output")
    transactions, tps = _counter(text, "transactions")
    queries, qps = _counter(text, "queries")
    errors, _ = _counter(text, "ignored errors")
    reconnects, _ = _counter(text, "reconnects")
    threads_match = re.search(r"^Number of threads:\s+(\d+)", text, re.M)
    intervals = tuple(
        Interval(
            at_s=float(m.group(1)),
            threads=int(m.group(2)),
            tps=float(m.group(3)),
            qps=float(m.group(4)),
            p95_ms=float(m.group(5)),
            err_per_s=float(m.group(6)),
            reconn_per_s=float(m.group(7)),
        )
        for m in _INTERVAL.finditer(text)
    )
    return RunOutput(
        tps=tps,
        qps=qps,
        transactions=transactions,
        queries=queries,
        errors=errors,
        reconnects=reconnects,
        seconds=_value(text, rf"^\s*total time:\s+{_NUM}s"),
        p95_ms=_value(text, rf"^\s*{PERCENTILE}th percentile:\s+{_NUM}"),
        latency_avg_ms=_value(text, rf"^\s*avg:\s+{_NUM}"),
        latency_max_ms=_value(text, rf"^\s*max:\s+{_NUM}"),
        threads=int(threads_match.group(1)) if threads_match else 0,
        intervals=intervals,
    )


def fatal_line(text: str) -> str:
    """The most telling line of a failed sysbench command: the first FATAL line with a
    server error number, else the first FATAL line, else the last line."""
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    fatal = [ln for ln in lines if ln.startswith(("FATAL", "ALERT"))]
    with_code = [ln for ln in fatal if re.search(r"error:? \d+", ln)]
    if with_code or fatal:
        return (with_code or fatal)[0]
    return lines[-1] if lines else "no output"


def failed_silently(text: str) -> bool:
    """sysbench 1.0's prepare and cleanup exit 0 even when a statement failed."""
    return any(ln.startswith("FATAL") for ln in text.splitlines())


# -- statistics -------------------------------------------------------------------------
def coefficient_of_variation(values: Sequence[float]) -> float:
    """Sample standard deviation over mean; 0.0 for fewer than two values or a zero mean."""
    if len(values) < 2:
        return 0.0
    mean = statistics.fmean(values)
    if mean == 0:
        return 0.0
    return statistics.stdev(values) / mean


def series(runs: Sequence[BenchRun]) -> BenchSeries:
    """The statistics of the repeats of one (workload, access, threads) point: medians of
    tps, qps and p95 over every run (failed runs included: they are shown, and a series
    with a failed run never enters a comparison), and the CV of tps."""
    if not runs:
        raise ValueError("a series needs at least one run")
    first = runs[0]
    if any((r.workload, r.access, r.threads) != (first.workload, first.access, first.threads) for r in runs):
        raise ValueError("runs of different points cannot form one series")
    tps = [r.tps for r in runs]
    return BenchSeries(
        workload=first.workload,
        access=first.access,
        threads=first.threads,
        runs=tuple(sorted(runs, key=lambda r: r.repeat)),
        median_tps=statistics.median(tps),
        median_qps=statistics.median(r.qps for r in runs),
        median_p95_ms=statistics.median(r.p95_ms for r in runs),
        cv=coefficient_of_variation(tps),
    )


def bench_run(output: RunOutput, workload: str, access: str, threads: int, repeat: int) -> BenchRun:
    return BenchRun(
        workload=workload,
        access=access,
        threads=threads,
        repeat=repeat,
        tps=output.tps,
        qps=output.qps,
        p95_ms=output.p95_ms,
        errors=output.errors,
        reconnects=output.reconnects,
        seconds=output.seconds,
    )
