"""Async replication with GTID: a primary and a read-only replica, on MariaDB or on MySQL
and Percona Server (MySQL's group replication is its own kind).

The two families spell it differently, and `DIALECTS` is the one place that knows how:

- MariaDB: `CHANGE MASTER TO ... MASTER_USE_GTID=slave_pos`, `START SLAVE`,
  `SHOW SLAVE STATUS` (`Slave_IO_Running`, `Seconds_Behind_Master`), `@@gtid_binlog_pos`.
- MySQL 8.4 (and Percona Server) removed those statements: `CHANGE REPLICATION SOURCE TO
  ... SOURCE_AUTO_POSITION=1`, `START REPLICA`, `SHOW REPLICA STATUS`
  (`Replica_IO_Running`, `Seconds_Behind_Source`), `@@gtid_executed`; GTIDs need
  `--gtid-mode=ON --enforce-gtid-consistency=ON`. The replication user authenticates with
  caching_sha2_password, so the replica connects with TLS (`SOURCE_SSL=1`).

start: both servers up, binary logs reset on both (the images' init scripts leave
transactions of their own there), the replication user (password generated per run) and
an app user created on the primary, the replica following it. Statements that carry a
password run from a script file, never from an argv. smoke: rows written on the primary
appear on the replica, the replication lag reaches 0, and the replica refuses writes
from a normal user (read-only).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from ecoready.probe_api import CheckFailed, Probe, Secret, StageFailed, together
from ecoready.probes.shared.accounts import auth_clause, sql_string
from ecoready.probes.shared.cluster import reset_binary_logs, run_secret_script, wait_for_count, write_refused
from ecoready.probes.shared.sql_server import flavor_of, start_server

DATABASE = "ecoready_repl"
REPL_USER = "repl"
APP_USER = "app"


@dataclass(frozen=True)
class Dialect:
    """How one server family sets up and reports async replication."""

    family: str
    primary_args: tuple[str, ...]
    replica_args: tuple[str, ...]
    start_replica: str
    status: str
    io_running: str
    sql_running: str
    lag: str
    primary_gtid: str
    replica_gtid: str

    def change_source(self, primary: str, user: str, password: str) -> str:
        if self.family == "mariadb":
            return (
                f"CHANGE MASTER TO MASTER_HOST={sql_string(primary)}, MASTER_PORT=3306, "
                f"MASTER_USER={sql_string(user)}, MASTER_PASSWORD={sql_string(password)}, "
                "MASTER_USE_GTID=slave_pos, MASTER_CONNECT_RETRY=1"
            )
        return (
            f"CHANGE REPLICATION SOURCE TO SOURCE_HOST={sql_string(primary)}, SOURCE_PORT=3306, "
            f"SOURCE_USER={sql_string(user)}, SOURCE_PASSWORD={sql_string(password)}, "
            "SOURCE_AUTO_POSITION=1, SOURCE_SSL=1, SOURCE_CONNECT_RETRY=1"
        )


_GTID_MYSQL = ("--gtid-mode=ON", "--enforce-gtid-consistency=ON")
DIALECTS = {
    "mariadb": Dialect(
        family="mariadb",
        primary_args=("--server-id=1", "--log-bin=mysql-bin", "--log-slave-updates=ON", "--binlog-format=ROW"),
        replica_args=("--server-id=2", "--log-bin=mysql-bin", "--read-only=ON", "--relay-log=relay-bin"),
        start_replica="START SLAVE",
        status="SHOW SLAVE STATUS",
        io_running="Slave_IO_Running",
        sql_running="Slave_SQL_Running",
        lag="Seconds_Behind_Master",
        primary_gtid="@@gtid_binlog_pos",
        replica_gtid="@@gtid_slave_pos",
    ),
    "mysql": Dialect(
        family="mysql",
        primary_args=("--server-id=1", "--log-bin=mysql-bin", *_GTID_MYSQL),
        replica_args=("--server-id=2", "--log-bin=mysql-bin", *_GTID_MYSQL, "--read-only=ON", "--relay-log=relay-bin"),
        start_replica="START REPLICA",
        status="SHOW REPLICA STATUS",
        io_running="Replica_IO_Running",
        sql_running="Replica_SQL_Running",
        lag="Seconds_Behind_Source",
        primary_gtid="@@gtid_executed",
        replica_gtid="@@gtid_executed",
    ),
}


def dialect(flavor: str) -> Dialect:
    """MariaDB's or MySQL's (Percona Server speaks MySQL's)."""
    return DIALECTS["mariadb" if flavor == "mariadb" else "mysql"]


def replica_state(row: dict[str, str | None], d: Dialect) -> str | None:
    """None when both replication threads run, else what is wrong (with the last error)."""
    io, sql = row.get(d.io_running), row.get(d.sql_running)
    if io == "Yes" and sql == "Yes":
        return None
    error = row.get("Last_IO_Error") or row.get("Last_SQL_Error") or ""
    return f"IO thread {io}, SQL thread {sql}" + (f": {error}" if error else "")


def primary_setup(flavor: str, repl: str, app: str) -> list[str]:
    """Accounts and the database, created on the primary (they replicate to the replica)."""
    auth = auth_clause(flavor)
    return [
        f"CREATE USER '{REPL_USER}'@'%' {auth} {sql_string(repl)}",
        f"GRANT REPLICATION SLAVE ON *.* TO '{REPL_USER}'@'%'",
        f"CREATE DATABASE {DATABASE}",
        f"CREATE USER '{APP_USER}'@'%' {auth} {sql_string(app)}",
        f"GRANT ALL ON {DATABASE}.* TO '{APP_USER}'@'%'",
        "SELECT COUNT(*) AS users FROM mysql.user WHERE user IN ('repl', 'app')",
    ]


class ReplicationProbe(Probe):
    kind = "replication"

    async def start(self) -> None:
        ctx = self.ctx
        flavor = flavor_of(ctx.image_ref, ctx.options.get("flavor"))
        self.dialect = d = dialect(flavor)
        extra = [str(a) for a in ctx.options.get("args", [])]  # the matrix's, after ours: they win
        self.primary, self.replica = await together(
            start_server(ctx, "primary", args=[*d.primary_args, *extra]),
            start_server(ctx, "replica", args=[*d.replica_args, *extra]),
        )
        version = await self.primary.version()
        for server in (self.primary, self.replica):
            await server.query(reset_binary_logs(flavor, version))
        self.repl_password: Secret = ctx.secret("repl")
        self.app_password: Secret = ctx.secret("app")
        setup = primary_setup(flavor, self.repl_password.reveal(), self.app_password.reveal())
        await run_secret_script(self.primary, "replication-users", setup)
        await run_secret_script(
            self.replica,
            "replication-source",
            [d.change_source(self.primary.alias, REPL_USER, self.repl_password.reveal()), d.start_replica],
        )
        await ctx.wait_ready(self.replica.container, self._following, what="the replica following the primary")
        self.endpoint = self.primary.endpoint

    async def _status(self) -> dict[str, str | None]:
        rows = await self.replica.query(self.dialect.status)
        if not rows:
            raise StageFailed(f"{self.dialect.status} is empty: the replica is not configured")
        return rows[0]

    async def _following(self) -> None:
        problem = replica_state(await self._status(), self.dialect)
        if problem:
            raise StageFailed(problem)

    async def smoke(self) -> None:
        await self.ctx.check("rows-replicate", self._rows_replicate)
        await self.ctx.check("lag-zero", self._lag_zero)
        await self.ctx.check("replica-read-only", self._read_only)

    async def _rows_replicate(self) -> str:
        d = self.dialect
        await self.primary.query(
            f"CREATE TABLE {DATABASE}.t (id INT PRIMARY KEY, v VARCHAR(32)) ENGINE=InnoDB; "
            f"INSERT INTO {DATABASE}.t VALUES (1, 'a'), (2, 'b'), (3, 'c')"
        )
        gtid = await self.primary.value(d.primary_gtid)
        seen = await wait_for_count(self.replica, f"SELECT COUNT(*) AS n FROM {DATABASE}.t", 3)
        if seen is not None:
            state = replica_state(await self._status(), d) or "threads running"
            raise CheckFailed(f"the replica has {seen} of 3 rows; {state}")
        replica_gtid = await self.replica.value(d.replica_gtid)
        return f"3 rows on the replica (primary GTID {gtid}, replica at {replica_gtid})"

    async def _lag_zero(self) -> str:
        lag = self.dialect.lag
        status: dict[str, str | None] = {}
        for _ in range(int(self.ctx.scaled(30))):
            status = await self._status()
            if status.get(lag) == "0":
                return f"{lag} = 0"
            await asyncio.sleep(0.5)
        raise CheckFailed(f"{lag} is {status.get(lag)!r}; {replica_state(status, self.dialect) or 'threads running'}")

    async def _read_only(self) -> str:
        if (read_only := await self.replica.value("@@read_only")) != "1":
            raise CheckFailed(f"@@read_only is {read_only!r} on the replica, not 1")
        return await write_refused(
            self.replica,
            f"INSERT INTO {DATABASE}.t VALUES (99, 'must fail')",
            user=APP_USER,
            password=self.app_password,
            database=DATABASE,
        )


PROBE = ReplicationProbe
