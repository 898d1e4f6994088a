"""percona-toolkit against the backend server: pt-summary and pt-mysql-summary (at once),
pt-table-checksum, pt-query-digest on a slow log the probe makes the server write, and
pt-online-schema-change altering a table of its own.

On MySQL 8.4 and later (and Percona Server) root authenticates with caching_sha2_password.
Toolkits before 3.7.1 have no TLS keys in their DSN (3.7.1 added them, PT-191; the lab's
Debian toolkit is 3.2.1), so the probe logs in once over TLS first (`warm_auth_cache`) and
the Perl tools can then log in whatever TLS support their DBD::mysql build has. pt-mysql-summary hands its options after
`--` to the image's `mysql` client.

pt-table-checksum on a single server: it checksums every chunk on the server itself and
records the results in percona.checksums, but with no replica there is nothing to compare,
so DIFFS cannot be found. It runs with `--recursion-method=none` (no replica discovery)
and passes when it exits 0 with ERRORS 0 and at least one chunk checksummed. (Without
that option it looks for replicas, and its exit status flags would report none found.)

pt-online-schema-change: a table of OSC_ROWS rows is altered online (`--execute`: a
shadow table, triggers, a chunked copy, an atomic rename) to get a column with a default;
it passes when every row is there with the new column's value and the tool left no
trigger behind. `--recursion-method=none` again (no replica to wait for), and
`--no-version-check` (the tool would otherwise call percona.com).
"""

from __future__ import annotations

import re

from ecoready.probe_api import CheckFailed, Probe, SqlError, StageFailed, together
from ecoready.probes.shared.accounts import warm_auth_cache
from ecoready.probes.shared.sql_server import Server, hex32, numbers

DATABASE = "ecoready_toolkit"
CNF = "/run/ecoready/toolkit.cnf"
SLOW_LOG = "/tmp/ecoready-slow.log"
SEED = (
    f"CREATE DATABASE {DATABASE}; "
    f"CREATE TABLE {DATABASE}.t (id INT PRIMARY KEY, v CHAR(32) NOT NULL) ENGINE=InnoDB; "
    f"INSERT INTO {DATABASE}.t SELECT n, {hex32('n')} FROM {numbers(5000)}"
)
OSC_TABLE = "osc"
OSC_ROWS = 2000
OSC_COLUMN = "added_online"
OSC_SEED = (
    f"CREATE TABLE {DATABASE}.{OSC_TABLE} (id INT PRIMARY KEY, v CHAR(32) NOT NULL) ENGINE=InnoDB; "
    f"INSERT INTO {DATABASE}.{OSC_TABLE} SELECT n, {hex32('n')} FROM {numbers(OSC_ROWS)}"
)
_CHECKSUM_ROW = re.compile(r"^\s*(\S+)\s+(\d+)\s+(\d+)\s+(\d+)\s+(?:(\d+)\s+)?(\d+)\s+(\d+)\s+([\d.]+)\s+(\S+)\s*$")


def option_file(password: str) -> bytes:
    escaped = password.replace("\\", "\\\\").replace('"', '\\"')
    return f'[client]\nuser=root\npassword="{escaped}"\n'.encode()


def checksum_command(host: str) -> list[str]:
    return [
        "pt-table-checksum",
        f"h={host},P=3306,F={CNF}",
        f"--databases={DATABASE}",
        "--recursion-method=none",
        "--no-check-binlog-format",
        "--replicate=percona.checksums",
        "--create-replicate-table",
    ]


def osc_command(host: str) -> list[str]:
    return [
        "pt-online-schema-change",
        f"h={host},P=3306,F={CNF},D={DATABASE},t={OSC_TABLE}",
        f"--alter=ADD COLUMN {OSC_COLUMN} INT NOT NULL DEFAULT 7",
        "--recursion-method=none",
        "--no-version-check",
        "--execute",
    ]


def parse_checksum(output: str) -> list[dict[str, str]]:
    """Rows of pt-table-checksum's report: TS ERRORS DIFFS ROWS [DIFF_ROWS] CHUNKS SKIPPED TIME TABLE."""
    rows = []
    for line in output.splitlines():
        match = _CHECKSUM_ROW.match(line)
        if match and not line.lstrip().startswith("TS"):
            g = match.groups()
            rows.append(
                {
                    "ts": g[0],
                    "errors": g[1],
                    "diffs": g[2],
                    "rows": g[3],
                    "chunks": g[5],
                    "skipped": g[6],
                    "table": g[8],
                }
            )
    return rows


def digest_classes(output: str) -> int:
    """How many query classes pt-query-digest's profile lists (`# Rank Query ID ...` table)."""
    in_profile = False
    count = 0
    for line in output.splitlines():
        if line.startswith("# Profile"):
            in_profile = True
            continue
        if in_profile:
            if re.match(r"^#\s+\d+\s+0x[0-9A-F]+", line):
                count += 1
            elif count and (line.strip() == "" or "MISC" in line):
                break
    return count


class ToolkitProbe(Probe):
    kind = "toolkit"

    async def start(self) -> None:
        ctx = self.ctx
        backend = await ctx.backend()
        self.server = Server(ctx, backend.container, backend.password, backend.flavor)
        self.host = backend.host
        self.tools = await ctx.start_container(
            "toolkit", command=["sleep", "infinity"], files={CNF: option_file(backend.password.reveal())}
        )
        await self.server.query(SEED)
        await self.server.query(OSC_SEED)
        await warm_auth_cache(ctx, backend)
        state = await ctx.state(self.tools)
        if not state.running:
            raise StageFailed(await ctx.why_stopped(self.tools))
        self.endpoint = backend

    async def smoke(self) -> None:
        # The two summaries at once: pt-summary reads only the tools container, and each is
        # a shell script of a few hundred short processes, slow to start under qemu (an arm64
        # smoke alone on a quiet machine: 54 s one after the other, 44 s at once).
        await together(
            self.ctx.check("pt-summary", self._summary), self.ctx.check("pt-mysql-summary", self._mysql_summary)
        )
        await self.ctx.check("pt-table-checksum", self._table_checksum)
        await self.ctx.check("pt-query-digest", self._query_digest)
        await self.ctx.check("pt-online-schema-change", self._online_schema_change)

    async def _tool(self, argv: list[str], *, ok_codes: tuple[int, ...] = (0,)) -> str:
        result = await self.ctx.exec(self.tools, argv, timeout=self.ctx.scaled(120))
        if result.exit_code not in ok_codes:
            raise CheckFailed(f"`{argv[0]}` exit {result.exit_code}: {result.last_line()}")
        return result.stdout

    async def _summary(self) -> str:
        out = await self._tool(["pt-summary"])
        if "# Percona Toolkit System Summary Report" not in out:
            raise CheckFailed("pt-summary printed no system summary report")
        arch = re.search(r"Architecture \| (.+)", out)
        return f"system summary ({arch.group(1).strip() if arch else 'architecture not shown'})"

    async def _mysql_summary(self) -> str:
        out = await self._tool(
            [
                "pt-mysql-summary",
                "--sleep=1",  # between its two samples of SHOW STATUS; its default 10 s only waits
                "--",
                f"--defaults-extra-file={CNF}",
                "-h",
                self.host,
                "-P",
                "3306",
                "--protocol=TCP",
            ]
        )
        version = re.search(r"^\s*Version \| (.+)$", out, re.M)
        if "# Percona Toolkit MySQL Summary Report" not in out or version is None:
            raise CheckFailed("pt-mysql-summary printed no MySQL summary with a version")
        return f"MySQL summary of {self.host}: {version.group(1).strip()}"

    async def _table_checksum(self) -> str:
        out = await self._tool(checksum_command(self.host))
        rows = parse_checksum(out)
        if not rows:
            raise CheckFailed("pt-table-checksum reported no table")
        bad = [r for r in rows if r["errors"] != "0" or r["skipped"] != "0"]
        if bad:
            raise CheckFailed(f"errors or skipped chunks: {bad}")
        chunks = sum(int(r["chunks"]) for r in rows)
        return f"{len(rows)} table(s), {chunks} chunk(s), 0 errors (single server: no replica to diff against)"

    async def _query_digest(self) -> str:
        try:
            await self.server.query(
                f"SET GLOBAL slow_query_log_file = '{SLOW_LOG}'; SET GLOBAL long_query_time = 0; "
                "SET GLOBAL slow_query_log = 1"
            )
            for i in range(5):
                await self.server.query(f"SELECT COUNT(*) AS n FROM {DATABASE}.t WHERE id > {i * 100}")
            await self.server.query(f"SELECT v FROM {DATABASE}.t WHERE id = 42")
            await self.server.query("SET GLOBAL slow_query_log = 0; FLUSH SLOW LOGS")
        except SqlError as exc:
            raise CheckFailed(f"could not make the server write a slow log: {exc}") from None
        log = await self.ctx.exec(self.server.container, ["cat", SLOW_LOG], timeout=self.ctx.scaled(20))
        if not log.ok or "Query_time" not in log.stdout:
            raise CheckFailed(f"the server wrote no slow log at {SLOW_LOG}: {log.last_line()}")
        await self.ctx.put_files(self.tools, {"/tmp/slow.log": log.stdout.encode()})
        out = await self._tool(["pt-query-digest", "--limit=100%", "/tmp/slow.log"])
        classes = digest_classes(out)
        if classes < 2:
            raise CheckFailed(f"pt-query-digest found {classes} query class(es) in the slow log")
        return f"{classes} query classes digested from a {len(log.stdout.splitlines())}-line slow log"

    async def _online_schema_change(self) -> str:
        out = await self._tool(osc_command(self.host))
        if "Successfully altered" not in out:
            last = out.strip().splitlines()[-1:] or ["no output"]
            raise CheckFailed(f"pt-online-schema-change did not say it altered the table; it ended: {last[0]}")
        try:
            rows = await self.server.query(
                f"SELECT COUNT(*) AS n, SUM({OSC_COLUMN} = 7) AS altered, (SELECT COUNT(*) FROM "
                f"information_schema.triggers WHERE trigger_schema = '{DATABASE}') AS triggers "
                f"FROM {DATABASE}.{OSC_TABLE}"
            )
        except SqlError as exc:
            raise CheckFailed(f"the altered table cannot be read: {exc}") from None
        counts = {k: str(v) for k, v in (rows[0] if rows else {}).items()}
        if counts.get("n") != str(OSC_ROWS) or counts.get("altered") != str(OSC_ROWS):
            raise CheckFailed(
                f"after the alter: {counts.get('n')} rows, {counts.get('altered')} with the new column "
                f"(want {OSC_ROWS})"
            )
        if counts.get("triggers") != "0":
            raise CheckFailed(f"{counts.get('triggers')} trigger(s) left on {DATABASE} after the alter")
        return f"{OSC_TABLE}: {OSC_ROWS} rows altered online (ADD COLUMN {OSC_COLUMN}), no trigger left"


PROBE = ToolkitProbe
