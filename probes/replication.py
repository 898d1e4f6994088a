"""Async replication with GTID: a primary and a read-only replica (MariaDB syntax; MySQL's
group replication is its own kind).

start: both servers up, the replica follows the primary with `MASTER_USE_GTID=slave_pos`
using a replication user whose password is generated per run. smoke: rows written on the
primary appear on the replica, `Seconds_Behind_Master` reaches 0, and the replica refuses
writes from a normal user (read-only).
"""

from __future__ import annotations

import asyncio

from app.sql import SqlError, SqlTarget
from probes.base import CheckFailed, Probe, StageFailed
from probes.servers import start_server

PRIMARY_ARGS = ["--server-id=1", "--log-bin=mysql-bin", "--log-slave-updates=ON", "--binlog-format=ROW"]
REPLICA_ARGS = ["--server-id=2", "--log-bin=mysql-bin", "--read-only=ON", "--relay-log=relay-bin"]
DATABASE = "ecoready_repl"


def change_master(primary: str, user: str, password: str) -> str:
    quoted = password.replace("\\", "\\\\").replace("'", "\\'")
    return (
        f"CHANGE MASTER TO MASTER_HOST='{primary}', MASTER_PORT=3306, MASTER_USER='{user}', "
        f"MASTER_PASSWORD='{quoted}', MASTER_USE_GTID=slave_pos, MASTER_CONNECT_RETRY=1; START SLAVE"
    )


def replica_state(row: dict[str, str | None]) -> str | None:
    """None when both replication threads run, else what is wrong (with the last error)."""
    io, sql = row.get("Slave_IO_Running"), row.get("Slave_SQL_Running")
    if io == "Yes" and sql == "Yes":
        return None
    error = row.get("Last_IO_Error") or row.get("Last_SQL_Error") or ""
    return f"IO thread {io}, SQL thread {sql}" + (f": {error}" if error else "")


class ReplicationProbe(Probe):
    kind = "replication"

    async def start(self) -> None:
        ctx = self.ctx
        self.primary, self.replica = await asyncio.gather(
            start_server(ctx, "primary", args=PRIMARY_ARGS),
            start_server(ctx, "replica", args=REPLICA_ARGS),
        )
        self.repl_password = ctx.secret("repl")
        self.app_password = ctx.secret("app")
        pw, app = self.repl_password.reveal(), self.app_password.reveal()
        await self.primary.query(
            f"CREATE USER 'repl'@'%' IDENTIFIED BY '{pw}'; GRANT REPLICATION SLAVE ON *.* TO 'repl'@'%'; "
            f"CREATE DATABASE {DATABASE}; "
            f"CREATE USER 'app'@'%' IDENTIFIED BY '{app}'; GRANT ALL ON {DATABASE}.* TO 'app'@'%'"
        )
        await self.replica.query(change_master(self.primary.alias, "repl", pw))
        await self.ctx.wait_ready(self.replica.container, self._following, what="the replica following the primary")
        self.endpoint = self.primary.endpoint

    async def _status(self) -> dict[str, str | None]:
        rows = await self.replica.query("SHOW SLAVE STATUS")
        if not rows:
            raise StageFailed("SHOW SLAVE STATUS is empty: the replica is not configured")
        return rows[0]

    async def _following(self) -> None:
        problem = replica_state(await self._status())
        if problem:
            raise StageFailed(problem)

    async def smoke(self) -> None:
        await self.ctx.check("rows-replicate", self._rows_replicate)
        await self.ctx.check("lag-zero", self._lag_zero)
        await self.ctx.check("replica-read-only", self._read_only)

    async def _rows_replicate(self) -> str:
        await self.primary.query(
            f"CREATE TABLE {DATABASE}.t (id INT PRIMARY KEY, v VARCHAR(32)) ENGINE=InnoDB; "
            f"INSERT INTO {DATABASE}.t VALUES (1, 'a'), (2, 'b'), (3, 'c')"
        )
        gtid = await self.primary.value("@@gtid_binlog_pos")
        rows: list[dict[str, str | None]] = []
        for _ in range(int(self.ctx.scaled(30))):
            try:
                rows = await self.replica.query(f"SELECT COUNT(*) AS n FROM {DATABASE}.t")
            except SqlError:
                rows = []
            if rows and rows[0].get("n") == "3":
                slave_pos = await self.replica.value("@@gtid_slave_pos")
                return f"3 rows on the replica (primary GTID {gtid}, replica at {slave_pos})"
            await asyncio.sleep(0.5)
        raise CheckFailed(
            f"the replica has {rows[0].get('n') if rows else 'no table'} of 3 rows; "
            f"{replica_state(await self._status()) or 'threads running'}"
        )

    async def _lag_zero(self) -> str:
        status: dict[str, str | None] = {}
        for _ in range(int(self.ctx.scaled(30))):
            status = await self._status()
            if status.get("Seconds_Behind_Master") == "0":
                return "Seconds_Behind_Master = 0"
            await asyncio.sleep(0.5)
        raise CheckFailed(
            f"Seconds_Behind_Master is {status.get('Seconds_Behind_Master')!r}; "
            f"{replica_state(status) or 'threads running'}"
        )

    async def _read_only(self) -> str:
        if await self.replica.value("@@read_only") != "1":
            raise CheckFailed("@@read_only is not 1 on the replica")
        target = SqlTarget("127.0.0.1", 3306, "app", DATABASE)
        try:
            await self.ctx.sql(
                self.replica.container, target, self.app_password, f"INSERT INTO {DATABASE}.t VALUES (99, 'must fail')"
            )
        except SqlError as exc:
            if exc.code == 1290:
                return f"a write by a normal user is refused: {exc.message}"
            raise CheckFailed(f"the write failed, but not as read-only: {exc.message}") from None
        raise CheckFailed("a normal user could write on the replica")


PROBE = ReplicationProbe
