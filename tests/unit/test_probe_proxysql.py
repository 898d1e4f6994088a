"""The proxysql probe over a fake engine: the config file, the admin SQL sequence (through
the backend's client, as the second admin credential), runtime checks, routing, the pool
and the monitor, and what their parsers make of ProxySQL's real table formats.

Canned formats: ProxySQL admin tables `runtime_mysql_servers`, `stats_mysql_connection_pool`
(columns hostgroup, srv_host, srv_port, status, ConnUsed, ConnFree, ConnOK, ConnERR, ...,
Queries), `monitor.mysql_server_connect_log` (hostname, port, time_start_us,
connect_success_time_us, connect_error) and `monitor.mysql_server_ping_log` (..., ping_error)
as documented at proxysql.com/documentation ("Stats schema", "Monitor module"); the admin
variable `admin-version` (global_variables). `mysql --xml` output: MySQL manual.
"""

from __future__ import annotations

import pytest

from ecoready.domain.errors import CheckFailed, StageFailed
from ecoready.domain.model import Category
from ecoready.probes.proxysql import (
    ADMIN_USER,
    CONFIG_PATH,
    MONITOR_QUERY,
    MONITOR_USER,
    POOL_QUERY,
    VERSION_QUERY,
    ProxySQLProbe,
    check_pool,
    check_runtime,
    monitor_verdict,
    sqlite_string,
)
from ecoready.probes.shared.proxy_checks import APP_USER
from tests.support.fake_host import BACKEND_HOSTNAME, Sql, backend_server, component, context, rig

BACKEND = component("mysql-8.4", "server", "mysql:8.4")
PROXY = component(
    "proxysql", "proxysql", "proxysql/proxysql:2.7.3", category=Category.LOAD_BALANCER, backend="mysql-8.4"
)


def proxysql_admin(call: Sql) -> list[dict[str, object]] | None:
    if (call.host, call.port) != ("proxysql", 6032):
        return None
    assert call.user == ADMIN_USER  # the built-in admin may only log in locally
    if call.statement == "SELECT 1 AS ok":
        return [{"ok": 1}]
    if call.script is not None:
        return [{"servers": 1, "users": 2}]  # runtime_mysql_users holds a frontend and a backend row
    if call.statement == VERSION_QUERY:
        return [{"version": "2.7.3-4-g9f5a2b1"}]
    if call.statement == POOL_QUERY:
        return [
            {
                "hostgroup": 0,
                "srv_host": "backend-server",
                "srv_port": 3306,
                "status": "ONLINE",
                "ConnUsed": 0,
                "ConnFree": 1,
                "ConnOK": 1,
                "ConnERR": 0,
                "Queries": 9,
            },
        ]
    if call.statement == MONITOR_QUERY:
        return [
            {"kind": "ping", "hostname": "backend-server", "time_start_us": 1700000004000000, "error": None},
            {"kind": "connect", "hostname": "backend-server", "time_start_us": 1700000003000000, "error": None},
            {
                "kind": "ping",
                "hostname": "backend-server",
                "time_start_us": 1700000002000000,
                "error": "Access denied for user 'ecoready_monitor'",
            },
        ]
    return None


def proxysql_client(call: Sql) -> list[dict[str, object]] | None:
    if (call.host, call.port) != ("proxysql", 6033):
        return None
    assert call.user == APP_USER
    if call.statement.startswith("SELECT @@hostname"):
        return [{"host": BACKEND_HOSTNAME, "port": 3306}]
    if "SELECT COUNT(*) AS n" in call.statement:
        return [{"n": 2, "updated": 1}]
    return []


async def test_start_and_smoke_sequence() -> None:
    r = rig()
    backend_server(r.host)
    r.host.sql(proxysql_admin)
    r.host.sql(proxysql_client)
    probe = ProxySQLProbe(context(r, PROXY, BACKEND))
    await probe.start()
    await probe.smoke()
    checks = r.checks()
    assert {n: c.outcome.value for n, c in checks.items()} == {
        "version": "pass",
        "routing": "pass",
        "crud-through-proxy": "pass",
        "connection-pool": "pass",
        "monitor": "pass",
    }
    assert checks["routing"].detail == f"6033 -> backend-server (@@hostname {BACKEND_HOSTNAME}, port 3306)"
    assert [c.role for c in r.host.started] == ["backend-server", "proxysql"]

    # the config: a second admin credential with the per-run password, on the network
    config = r.host.by_role("proxysql").files[CONFIG_PATH].decode()
    assert f'admin_credentials="admin:admin;{ADMIN_USER}:{probe.admin_password.reveal()}"' in config
    assert 'mysql_ifaces="0.0.0.0:6032"' in config and 'interfaces="0.0.0.0:6033"' in config

    # backend accounts first (caching_sha2_password on MySQL 8.4), then admin SQL
    accounts = next(c.script for c in r.host.sql_log if c.script and "CREATE USER" in c.script)
    assert f"'{MONITOR_USER}'@'%' IDENTIFIED WITH caching_sha2_password BY" in accounts
    admin = next(c.script for c in r.host.sql_log if c.port == 6032 and c.script)
    order = [
        "INSERT INTO mysql_servers",
        "mysql-monitor_username",
        "mysql-monitor_password",
        "INSERT INTO mysql_users",
        "LOAD MYSQL VARIABLES TO RUNTIME",
        "LOAD MYSQL SERVERS TO RUNTIME",
        "LOAD MYSQL USERS TO RUNTIME",
        "runtime_mysql_servers",
    ]
    positions = [admin.index(word) for word in order]
    assert positions == sorted(positions)
    assert "VALUES (0, 'backend-server', 3306, 1)" in admin  # TLS to a MySQL 8.4 backend
    # passwords travel in files only: never in an argv
    for secret in (probe.admin_password, probe.monitor_password, probe.app_password):
        assert all(secret.reveal() not in " ".join(argv) for _, argv in r.host.execs)


async def test_a_proxy_that_never_loads_users_fails_the_start() -> None:
    r = rig()
    backend_server(r.host)

    @r.host.sql
    def admin(call: Sql) -> list[dict[str, object]] | None:
        if call.port == 6032:
            return [{"servers": 1, "users": 0}] if call.script else [{"ok": 1}]
        return None

    with pytest.raises(StageFailed, match="not loaded to runtime: 1 server"):
        await ProxySQLProbe(context(r, PROXY, BACKEND)).start()


def test_sqlite_quoting() -> None:
    assert sqlite_string("it's") == "'it''s'"
    assert sqlite_string("a\\b") == "'a\\b'"


def test_runtime_pool_and_monitor_parsers() -> None:
    assert check_runtime([{"servers": "1", "users": "2"}]).startswith("1 server(s)")
    good: dict[str, str | None] = {"srv_host": "b", "status": "ONLINE", "ConnERR": "0", "Queries": "3", "ConnOK": "1"}
    assert check_pool([good], "b") == "b ONLINE, 3 queries, 1 connections OK, 0 errors"
    with pytest.raises(CheckFailed, match="SHUNNED"):
        check_pool([{**good, "status": "SHUNNED"}], "b")
    with pytest.raises(CheckFailed, match="2 backend connection error"):
        check_pool([{**good, "ConnERR": "2"}], "b")
    with pytest.raises(CheckFailed, match="not in stats_mysql_connection_pool"):
        check_pool([good], "other")
    assert monitor_verdict([{"kind": "ping", "hostname": "b", "error": None}], "b") is None  # no connect yet
    rows: list[dict[str, str | None]] = [
        {"kind": "connect", "hostname": "b", "error": "Access denied for user 'ecoready_monitor'@'172.18.0.3'"},
        {"kind": "ping", "hostname": "b", "error": None},
    ]
    with pytest.raises(CheckFailed, match="connect: Access denied"):
        monitor_verdict(rows, "b")
