"""The proxysql probe: ProxySQL (`proxysql/proxysql`) in front of the cell's backend server.

Contract (docs/image-contracts.md "ProxySQL", proxysql.com "Configuration file" and
"Admin schemas"): the image has no env contract, it reads `/etc/proxysql.cnf` on its first
start (empty data dir, so every start here is a first start). The built-in `admin` user may
log in only from inside the container, so the config adds a second admin credential
(`radmin`, a per-run password) and binds the admin interface to the network. The probe
then talks to the admin interface on 6032 from the backend's own client (the ProxySQL
image ships none) and:

start: admin `SELECT 1` answers; the backend server, the monitor credentials and an app
user are inserted and `LOAD ... TO RUNTIME`; the runtime tables show them.
smoke: a query through 6033 reaches the backend (`@@hostname` equal to the backend's own);
CRUD through 6033; the connection pool shows the backend ONLINE with queries and no
connection errors; the monitor's connect and ping logs have fresh entries without errors.

MySQL 8.4+ backends authenticate with caching_sha2_password; ProxySQL then talks TLS to
the backend (`use_ssl=1`) so full authentication works without RSA key exchange.
"""

from __future__ import annotations

import asyncio
import time

from ecoready.probe_api import CheckFailed, Endpoint, Probe, Row, SqlTarget, StageFailed
from ecoready.probes.shared.accounts import Account, create_accounts, run_script
from ecoready.probes.shared.proxy_checks import APP_USER, SMOKE_DB, backend_hostname, crud_through, routed_to_backend

ADMIN_PORT = 6032
CLIENT_PORT = 6033
CONFIG_PATH = "/etc/proxysql.cnf"
ADMIN_USER = "radmin"
MONITOR_USER = "ecoready_monitor"
HOSTGROUP = 0
MONITOR_INTERVAL_MS = 2000  # defaults are 60 s (connect) and 10 s (ping): too slow for a smoke test


def sqlite_string(value: str) -> str:
    """The admin interface is SQLite underneath: quotes double, backslashes are literal."""
    return "'" + value.replace("'", "''") + "'"


def proxysql_config(admin_password: str) -> bytes:
    """/etc/proxysql.cnf: a network-reachable admin interface with a second credential, and
    the client interface on 6033. Everything else is configured through admin SQL."""
    return (
        'datadir="/var/lib/proxysql"\n'
        "admin_variables=\n{\n"
        f'    admin_credentials="admin:admin;{ADMIN_USER}:{admin_password}"\n'
        f'    mysql_ifaces="0.0.0.0:{ADMIN_PORT}"\n'
        "}\n"
        "mysql_variables=\n{\n"
        "    threads=2\n"
        f'    interfaces="0.0.0.0:{CLIENT_PORT}"\n'
        "}\n"
    ).encode()


def admin_script(backend: Endpoint, monitor_password: str, app_password: str) -> bytes:
    """Servers, monitor credentials and the app user, loaded to runtime, then the counts
    that prove it (the last result set)."""
    use_ssl = 1 if backend.flavor in ("mysql", "percona") else 0
    lines = [
        "DELETE FROM mysql_servers;",
        "INSERT INTO mysql_servers (hostgroup_id, hostname, port, use_ssl) "
        f"VALUES ({HOSTGROUP}, {sqlite_string(backend.host)}, {backend.port}, {use_ssl});",
        f"UPDATE global_variables SET variable_value={sqlite_string(MONITOR_USER)} "
        "WHERE variable_name='mysql-monitor_username';",
        f"UPDATE global_variables SET variable_value={sqlite_string(monitor_password)} "
        "WHERE variable_name='mysql-monitor_password';",
        f"UPDATE global_variables SET variable_value='{MONITOR_INTERVAL_MS}' "
        "WHERE variable_name IN ('mysql-monitor_connect_interval', 'mysql-monitor_ping_interval');",
        f"DELETE FROM mysql_users WHERE username={sqlite_string(APP_USER)};",
        "INSERT INTO mysql_users (username, password, default_hostgroup) "
        f"VALUES ({sqlite_string(APP_USER)}, {sqlite_string(app_password)}, {HOSTGROUP});",
        "LOAD MYSQL VARIABLES TO RUNTIME;",
        "LOAD MYSQL SERVERS TO RUNTIME;",
        "LOAD MYSQL USERS TO RUNTIME;",
        "SELECT (SELECT COUNT(*) FROM runtime_mysql_servers) AS servers, "
        f"(SELECT COUNT(*) FROM runtime_mysql_users WHERE username={sqlite_string(APP_USER)}) AS users;",
    ]
    return ("\n".join(lines) + "\n").encode()


def check_runtime(rows: list[Row]) -> str:
    row = rows[0] if rows else {}
    servers, users = int(row.get("servers") or 0), int(row.get("users") or 0)
    if servers < 1 or users < 1:
        raise StageFailed(f"not loaded to runtime: {servers} server(s), {users} user row(s)")
    return f"{servers} server(s) and the app user loaded to runtime"


VERSION_QUERY = "SELECT variable_value AS version FROM global_variables WHERE variable_name = 'admin-version'"
POOL_QUERY = (
    "SELECT hostgroup, srv_host, srv_port, status, ConnUsed, ConnFree, ConnOK, ConnERR, Queries "
    "FROM stats_mysql_connection_pool"
)


def check_pool(rows: list[Row], backend_host: str) -> str:
    """The backend is ONLINE in the pool, served queries, and no connection failed."""
    mine = [r for r in rows if r.get("srv_host") == backend_host]
    if not mine:
        raise CheckFailed(f"{backend_host} is not in stats_mysql_connection_pool ({len(rows)} rows)")
    row = mine[0]
    status, errors, queries = row.get("status"), int(row.get("ConnERR") or 0), int(row.get("Queries") or 0)
    if status != "ONLINE":
        raise CheckFailed(f"{backend_host} is {status} in the connection pool")
    if errors:
        raise CheckFailed(f"{errors} backend connection error(s) in the pool")
    if queries < 1:
        raise CheckFailed("the pool shows no query served by the backend")
    return f"{backend_host} ONLINE, {queries} queries, {row.get('ConnOK')} connections OK, 0 errors"


MONITOR_QUERY = (
    "SELECT 'connect' AS kind, hostname, time_start_us, connect_error AS error FROM monitor.mysql_server_connect_log "
    "UNION ALL "
    "SELECT 'ping' AS kind, hostname, time_start_us, ping_error AS error FROM monitor.mysql_server_ping_log "
    "ORDER BY time_start_us DESC LIMIT 20"
)


def monitor_verdict(rows: list[Row], backend_host: str) -> str | None:
    """None while the monitor has not logged both a connect and a ping for the backend;
    else a detail, or CheckFailed when its latest entries carry errors."""
    latest: dict[str, Row] = {}
    for row in rows:  # newest first
        if row.get("hostname") == backend_host and row.get("kind") not in latest:
            latest[str(row.get("kind"))] = row
    if set(latest) != {"connect", "ping"}:
        return None
    errors = [f"{kind}: {row.get('error')}" for kind, row in sorted(latest.items()) if row.get("error")]
    if errors:
        raise CheckFailed("monitor reports " + "; ".join(errors))
    return "latest monitor connect and ping to the backend succeeded"


class ProxySQLProbe(Probe):
    kind = "proxysql"

    async def start(self) -> None:
        ctx = self.ctx
        self.backend = await ctx.backend()
        self.backend_host = await backend_hostname(ctx, self.backend)
        self.admin_password = ctx.secret("proxysql-admin")
        self.monitor_password = ctx.secret("proxysql-monitor")
        self.app_password = ctx.secret("proxysql-app")
        await create_accounts(
            ctx,
            self.backend,
            [
                Account(MONITOR_USER, self.monitor_password, ("USAGE ON *.*",)),
                Account(APP_USER, self.app_password, (f"ALL ON {SMOKE_DB}.*",)),
            ],
            "proxysql-accounts",
        )
        self.container = await ctx.start_container(
            "proxysql", files={CONFIG_PATH: proxysql_config(self.admin_password.reveal())}
        )
        self.admin = SqlTarget(self.container.alias, ADMIN_PORT, ADMIN_USER)
        self.client = SqlTarget(self.container.alias, CLIENT_PORT, APP_USER)
        await ctx.wait_ready(self.container, self._admin_ping, what="the admin interface on 6032", port=ADMIN_PORT)
        rows = await run_script(
            ctx,
            self.backend.container,
            self.admin,
            self.admin_password,
            "proxysql-admin",
            admin_script(self.backend, self.monitor_password.reveal(), self.app_password.reveal()),
        )
        check_runtime(rows)

    async def _admin_ping(self) -> None:
        await self.admin_sql("SELECT 1 AS ok", timeout=self.ctx.scaled(10))

    async def admin_sql(self, statement: str, timeout: float | None = None) -> list[Row]:
        return await self.ctx.sql(self.backend.container, self.admin, self.admin_password, statement, timeout=timeout)

    async def through(self, statement: str) -> list[Row]:
        """A statement sent through the proxy's client port as the app user."""
        return await self.ctx.sql(self.backend.container, self.client, self.app_password, statement)

    async def smoke(self) -> None:
        ctx = self.ctx
        await ctx.check("version", self._version)
        await ctx.check("routing", self._routing)
        await ctx.check("crud-through-proxy", self._crud)
        await ctx.check("connection-pool", self._pool)
        await ctx.check("monitor", self._monitor)

    async def _version(self) -> str:
        rows = await self.admin_sql(
            "SELECT variable_value AS version FROM global_variables WHERE variable_name = 'admin-version'"
        )
        if not rows or not rows[0].get("version"):
            raise CheckFailed("admin-version is empty")
        return f"ProxySQL {rows[0]['version']}"

    async def _routing(self) -> str:
        return await routed_to_backend(self.backend, self.backend_host, self.through, str(CLIENT_PORT))

    async def _crud(self) -> str:
        return await crud_through(self.through, str(CLIENT_PORT))

    async def _pool(self) -> str:
        return check_pool(await self.admin_sql(POOL_QUERY), self.backend.host)

    async def _monitor(self) -> str:
        # The monitor runs every MONITOR_INTERVAL_MS; give it a few rounds.
        deadline = time.monotonic() + self.ctx.scaled(5 * MONITOR_INTERVAL_MS / 1000 + 5)
        while True:
            verdict = monitor_verdict(await self.admin_sql(MONITOR_QUERY), self.backend.host)
            if verdict is not None:
                return verdict
            if time.monotonic() > deadline:
                raise CheckFailed("the monitor logged no connect and ping for the backend in time")
            await asyncio.sleep(1.0)


PROBE = ProxySQLProbe
