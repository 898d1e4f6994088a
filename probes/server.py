"""The server probe: MariaDB, MySQL and Percona Server images with the official contract.

start: the root password goes in as a file (`*_ROOT_PASSWORD_FILE`), root may log in from
the cell network (`*_ROOT_HOST=%`: Oracle's own images create root@localhost only
otherwise); ready means a SQL round trip over TCP (every flavour's entrypoint first runs a
temporary init server with `--skip-networking` that also logs "ready for connections", so a
log line or a socket ping would lie). Percona Server's telemetry agent is switched off.
smoke: CRUD on a fresh table, the version, @@version_compile_machine against the cell's
arch, and the authentication defaults (MySQL 8.4 and later: root uses
caching_sha2_password, mysql_native_password is disabled or gone). Two client runs for the
four checks (each run is an exec: engine CPU, and an emulated client's start-up); the last
three read one row, and fall back to a query each when that row cannot be read, so one
failing expression never fails the others. With parity on (docs/parity.md), that second
client run reads the server's facts too (engines, plugins, character sets, collations,
global variables), and the server program's `--version` is asked meanwhile (one exec).
bench: sysbench against the server (`app/probe_api/bench.py`), the server pinned to its
own half of the host's CPUs.
"""

from __future__ import annotations

import contextlib

from ecoready.probe_api import (
    SERVER_STATEMENT,
    UNAME_MACHINE,
    CheckFailed,
    Facts,
    Probe,
    Row,
    Secret,
    SqlError,
    bench_detail,
    gathering,
    program_version,
    report_facts,
    run_bench,
    server_facts,
    together,
)
from ecoready.probes.shared.sql_server import ROOT_SECRET_PATH as SECRET_PATH
from ecoready.probes.shared.sql_server import Server, flavor_of, server_binary, start_server

__all__ = ["AUTH_QUERY", "FACTS_QUERY", "SECRET_PATH", "ServerProbe", "describe_auth", "flavor_of"]

SMOKE_DB = "ecoready_smoke"


CRUD_SETUP = (
    f"CREATE DATABASE IF NOT EXISTS {SMOKE_DB}; "
    f"CREATE TABLE {SMOKE_DB}.crud (id INT PRIMARY KEY AUTO_INCREMENT, v VARCHAR(64) NOT NULL) ENGINE=InnoDB; "
    f"INSERT INTO {SMOKE_DB}.crud (v) VALUES ('one'), ('two'); "
    f"UPDATE {SMOKE_DB}.crud SET v = 'deux' WHERE v = 'two'; "
    f"SELECT COUNT(*) AS n, SUM(v = 'deux') AS updated FROM {SMOKE_DB}.crud"
)
CRUD_TEARDOWN = f"DELETE FROM {SMOKE_DB}.crud WHERE id > 0; SELECT COUNT(*) AS n FROM {SMOKE_DB}.crud"
CRUD_DROP = f"DROP TABLE {SMOKE_DB}.crud; DROP DATABASE {SMOKE_DB}"
CRUD = f"{CRUD_SETUP}; {CRUD_TEARDOWN}; {CRUD_DROP}"  # two result sets: after setup, after delete
VERSION_QUERY = "SELECT @@version AS version, @@version_comment AS comment"
ARCH_QUERY = "SELECT @@version_compile_machine AS machine"


class ServerProbe(Probe):
    kind = "server"
    _facts: Row | None = None  # FACTS_QUERY's row, once read
    _facts_failed = False

    async def start(self) -> None:
        ctx = self.ctx
        env = {k: str(v) for k, v in ctx.options.get("env", {}).items()}
        args = [str(a) for a in ctx.options.get("args", [])]
        self.server: Server = await start_server(ctx, "server", args=args, env=env, root=ctx.secret("root"))
        self.flavor = self.server.flavor
        self.endpoint = self.server.endpoint

    @property
    def root(self) -> Secret:
        return self.server.root

    async def query(self, statement: str, timeout: float | None = None) -> list[dict[str, str | None]]:
        return await self.server.query(statement, timeout=timeout)

    async def smoke(self) -> None:
        self._facts, self._facts_failed = None, False
        await self.ctx.check("crud", self._crud)
        await self.ctx.check("version", self._version)
        await self.ctx.check("arch", self._arch)
        await self.ctx.check("auth", self._auth)

    async def bench(self) -> str:
        assert self.endpoint is not None
        return bench_detail(await run_bench(self.ctx, self.endpoint))

    async def _crud(self) -> str:
        results = await self.server.query_results(CRUD)
        after_setup, after_delete = [*results, [], []][:2]
        if not after_setup or after_setup[0].get("n") != "2" or after_setup[0].get("updated") != "1":
            raise CheckFailed(f"after 2 inserts and 1 update expected n=2 updated=1, got {after_setup}")
        if not after_delete or after_delete[0].get("n") != "0":
            raise CheckFailed(f"after delete expected 0 rows, got {after_delete}")
        return "create, insert, update, select, delete, drop"

    async def _fact(self, own_query: str) -> Row:
        """The row a check reads: FACTS_QUERY's, read once for the three checks, or when
        that failed, the check's own query's. With parity on, the same client run reads
        the server's facts, and the server program's version output is asked meanwhile."""
        if self._facts is None and not self._facts_failed and gathering(self.ctx):
            with contextlib.suppress(SqlError):  # parity's queries refused: the checks' own row alone
                await self._with_parity_facts()
        if self._facts is None and not self._facts_failed:
            try:
                rows = await self.query(FACTS_QUERY)
            except SqlError:
                self._facts_failed = True
            else:
                self._facts = rows[0] if rows else {}
        if self._facts is not None:
            return self._facts
        rows = await self.query(own_query)
        return rows[0] if rows else {}

    async def _with_parity_facts(self) -> None:
        sets: list[list[Row]] = []
        versions: list[Facts | None] = []

        async def read() -> None:
            sets.extend(await self.server.query_results(f"{FACTS_QUERY}; {SERVER_STATEMENT}"))

        async def version() -> None:
            names = dict.fromkeys((server_binary(self.flavor), "mariadbd", "mysqld"))
            versions.append(await program_version(self.ctx, self.server.container, list(names)))

        await together(read(), version())
        self._facts = sets[0][0] if sets and sets[0] else {}
        report_facts(self.ctx, (*server_facts(self._facts, sets[1:]), *versions))

    async def _version(self) -> str:
        row = await self._fact(VERSION_QUERY)
        if not row.get("version"):
            raise CheckFailed("SELECT @@version returned nothing")
        return f"{row['version']} ({row.get('comment') or ''})"

    async def _arch(self) -> str:
        machine = (await self._fact(ARCH_QUERY)).get("machine") or ""
        expected = UNAME_MACHINE.get(self.ctx.arch, self.ctx.arch)
        if machine != expected:
            raise CheckFailed(f"@@version_compile_machine is {machine!r}, expected {expected!r} for {self.ctx.arch}")
        return machine

    async def _auth(self) -> str:
        row = await self._fact(AUTH_QUERY)
        return describe_auth(self.flavor, row.get("root_plugin"), row.get("native"))


# root@'%' is the account every TCP client of this probe uses; mysql_native_password's
# status is NULL when the server has no such plugin (MySQL 9.x removed it).
AUTH_QUERY = (
    "SELECT (SELECT plugin FROM mysql.user WHERE user = 'root' AND host = '%') AS root_plugin, "
    "(SELECT plugin_status FROM information_schema.plugins WHERE plugin_name = 'mysql_native_password') AS native"
)
# the three checks' columns in one row (one client run instead of three)
FACTS_QUERY = (
    "SELECT @@version AS version, @@version_comment AS comment, @@version_compile_machine AS machine, "
    + AUTH_QUERY.removeprefix("SELECT ")
)


def describe_auth(flavor: str, root_plugin: str | None, native: str | None) -> str:
    """The auth facts in one line; fails when remote root does not exist (then nothing on
    the cell network could log in, e.g. an image that creates root@localhost only)."""
    if not root_plugin:
        raise CheckFailed("no root@'%' account: remote root login is impossible (set MYSQL_ROOT_HOST?)")
    native_state = (native or "absent").lower()
    detail = f"root@%: {root_plugin}; mysql_native_password: {native_state}"
    if flavor in ("mysql", "percona") and root_plugin == "mysql_native_password" and native_state != "active":
        raise CheckFailed(f"{detail}: root uses a plugin the server does not load")
    return detail


PROBE = ServerProbe
