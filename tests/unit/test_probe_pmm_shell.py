"""The pmm and shell (mysqlsh) probes over a fake engine.

Canned formats:
- PMM 3 API (percona/pmm `api/server/v1/server.proto`: readyz answers `{}`; VersionResponse
  {"version", "server": {"version", "full_version", "timestamp"}, "managed", "distribution_method"};
  `api/inventory/v1/services.proto` ListServicesResponse {"mysql": [MySQLService{service_id,
  service_name, node_id, address, port, ...}]}).
- `pmm-admin status --json` ({"pmm_agent_status": agentlocal.Status{agent_id, node_id, server_url,
  ..., connected}, "pmm_admin_version"}: admin/commands/status.go, admin/agentlocal) and
  `pmm-admin add mysql --json` ({"service": {"service_id", "service_name"}, "mysqld_exporter", ...}:
  admin/commands/management/add_mysql.go).
- MySQL Shell `--json=raw`: one document per line; results {"hasData", "rows", "executionTime",
  ...} (MySQL Shell manual 5.7.5 "JSON Wrapping"), console messages as one-key objects
  {"password"|"info"|"warning"|"error": ...}, SQL errors as {"error": {"code", "state", "message",
  ...}} (mysql/mysql-shell mysqlshdk/shellcore/shell_console.cc); `mysqlsh --version` banner
  "mysqlsh   Ver 8.4.6 for Linux on x86_64 - for MySQL 8.4.6 (MySQL Community Server (GPL))".
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from ecoready.domain.errors import CheckFailed
from ecoready.domain.model import Category
from ecoready.probes.pmm import (
    DEFAULT_CLIENT_IMAGE,
    PASSWORD_FILE,
    PMM_USER,
    SERVICE_NAME,
    PMMProbe,
    add_mysql_command,
    agent_connected,
    listed_service,
    parse_added,
    parse_version,
)
from ecoready.probes.shell import PASSWORD_FILE as SHELL_PW
from ecoready.probes.shell import ShellProbe, mysqlsh_command, parse_json_output
from ecoready.probes.shell import parse_version as mysqlsh_version
from tests.support.fake_host import FakeContainer, backend_server, component, context, failed, ok, rig

MYSQL = component("mysql-8.4", "server", "mysql:8.4")
PMM = component(
    "pmm",
    "pmm",
    "percona/pmm-server:3",
    category=Category.MONITORING,
    backend="mysql-8.4",
    options={"client_image": "percona/pmm-client:3.4.1"},
)
SHELL = component(
    "mysql-shell", "shell", "mysql:8.4", category=Category.SHELL, backend="mysql-8.4", options={"client": "mysqlsh"}
)

VERSION = {
    "version": "3.4.1",
    "server": {"version": "3.4.1", "full_version": "3.4.1-g1a2b3c4", "timestamp": "2025-09-01T10:00:00Z"},
    "managed": {"version": "3.4.1"},
    "distribution_method": "DOCKER",
}
STATUS: dict[str, Any] = {
    "pmm_agent_status": {
        "agent_id": "3b8c",
        "node_id": "9f0d",
        "node_name": "pmm-client",
        "server_url": "https://pmm-server:8443/",
        "server_insecure_tls": True,
        "server_version": "3.4.1",
        "agent_version": "3.4.1",
        "agents": [],
        "connected": True,
        "connection_uptime": 100,
    },
    "pmm_admin_version": "3.4.1",
}
ADDED = {
    "service": {
        "service_id": "a1b2c3",
        "service_name": SERVICE_NAME,
        "node_id": "9f0d",
        "address": "backend-server",
        "port": 3306,
    },
    "mysqld_exporter": {"agent_id": "e1"},
}
SERVICES = {
    "mysql": [
        {
            "service_id": "a1b2c3",
            "service_name": SERVICE_NAME,
            "node_id": "9f0d",
            "address": "backend-server",
            "port": 3306,
            "version": "8.4.6",
        }
    ]
}


def pmm_engine(readyz: list[int]):
    def handle(c: FakeContainer, argv: list[str]):
        if c.role == "pmm-server" and argv[0] == "curl":
            url = argv[-1]
            if url.endswith("/v1/server/readyz"):
                assert "-u" not in argv  # readyz needs no auth
                code = readyz.pop(0) if len(readyz) > 1 else readyz[0]
                return ok("{}") if code == 0 else failed(22, "curl: (22) The requested URL returned error: 503")
            assert argv[argv.index("-u") + 1] == "admin:admin"
            if url.endswith("/v1/server/version"):
                return ok(json.dumps(VERSION))
            if url.endswith("/v1/inventory/services"):
                return ok(json.dumps(SERVICES))
        if c.role == "pmm-client":
            if argv == ["pmm-admin", "status", "--json"]:
                return ok(json.dumps(STATUS))
            if argv[:2] == ["sh", "-c"] and "pmm-admin add mysql" in argv[2]:
                return ok(json.dumps(ADDED) + "\n")
        return None

    return handle


async def test_pmm_sequence() -> None:
    r = rig()
    backend_server(r.host)
    r.host.execs_to(pmm_engine([22, 22, 0]))
    probe = PMMProbe(context(r, PMM, MYSQL))
    assert probe.images() == ("percona/pmm-client:3.4.1",)
    await probe.start()
    assert [c.role for c in r.host.started] == ["pmm-server"]  # the backend waits for the smoke stage
    assert r.host.by_role("pmm-server").spec.mem_limit == "4g"
    await probe.smoke()
    checks = r.checks()
    assert {n: c.outcome.value for n, c in checks.items()} == dict.fromkeys(
        ["version", "client-registers", "server-lists"], "pass"
    )
    assert checks["version"].detail == "PMM 3.4.1 (DOCKER)"
    assert checks["server-lists"].detail == f"server lists {SERVICE_NAME} at backend-server:3306"
    client = r.host.by_role("pmm-client")
    assert client.spec.image == "img:percona/pmm-client:3.4.1"
    assert client.spec.env["PMM_AGENT_SERVER_ADDRESS"] == "pmm-server:8443"
    assert client.spec.env["PMM_AGENT_SETUP"] == "1"
    pw = client.files[PASSWORD_FILE].decode()
    assert pw and all(pw not in " ".join(argv) for _, argv in r.host.execs)
    assert all(pw not in v for v in client.spec.env.values())
    accounts = next(c.script for c in r.host.sql_log if c.script)
    assert f"'{PMM_USER}'@'%' IDENTIFIED WITH caching_sha2_password" in accounts and "BACKUP_ADMIN" in accounts


def test_pmm_default_client_image() -> None:
    r = rig()
    probe = PMMProbe(context(r, component("pmm", "pmm", "percona/pmm-server:3", backend="x"), MYSQL))
    assert probe.images() == (DEFAULT_CLIENT_IMAGE,)


def test_pmm_parsers() -> None:
    assert parse_version(json.dumps({"server": {"version": "3.0.0"}})) == "PMM 3.0.0"
    assert agent_connected(json.dumps(STATUS))
    assert not agent_connected(json.dumps({"pmm_agent_status": {**STATUS["pmm_agent_status"], "connected": False}}))
    assert parse_added("some progress line\n" + json.dumps(ADDED)) == "a1b2c3"
    assert listed_service(json.dumps(SERVICES), SERVICE_NAME)["address"] == "backend-server"
    with pytest.raises(CheckFailed, match="lists no MySQL service"):
        listed_service(json.dumps({"mysql": [], "proxysql": []}), SERVICE_NAME)
    with pytest.raises(CheckFailed, match="not JSON"):
        parse_version("<html>502 Bad Gateway</html>")
    script = add_mysql_command("backend-server:3306")[2]
    assert f'--password="$(cat {PASSWORD_FILE})"' in script and script.endswith(f"{SERVICE_NAME} backend-server:3306")


# -- mysqlsh ------------------------------------------------------------------------------
PROMPT = json.dumps({"password": "Please provide the password for 'root@backend-server:3306': "})


def mysqlsh_engine(machine: str = "x86_64"):
    def handle(c: FakeContainer, argv: list[str]):
        if c.role != "client":
            return None
        if argv == ["mysqlsh", "--version"]:
            return ok(f"mysqlsh   Ver 8.4.6 for Linux on {machine} - for MySQL 8.4.6 (MySQL Community Server (GPL))\n")
        script = argv[2]
        assert script.endswith(f"< {SHELL_PW}")  # the password comes on stdin from a file
        if "SELEC nonsense" in script:
            err = {
                "error": {
                    "code": 1064,
                    "line": 1,
                    "message": "You have an error in your SQL syntax; check the "
                    "manual that corresponds to your MySQL server version for the right syntax to use near "
                    "'SELEC nonsense' at line 1",
                    "state": "42000",
                    "type": "MySQL Error",
                }
            }
            return failed(1, "", PROMPT + "\n" + json.dumps(err) + "\n")
        if "--mysqlx" in script:
            assert "--uri=root@backend-server:33060" in script
            rows: list[dict[str, Any]] = [{"answer": 42, "xport": 33060}]
        elif "SELECT 1 AS ok" in script:
            rows = [{"ok": 1}]
        else:
            rows = [{"two": 2, "version": "8.4.6", "text": "ünïcødé ✓"}]
        result = {
            "hasData": True,
            "rows": rows,
            "executionTime": "0.0008 sec",
            "affectedRowCount": 0,
            "affectedItemsCount": 0,
            "warningCount": 0,
            "warningsCount": 0,
            "warnings": [],
            "info": "",
            "autoIncrementValue": 0,
        }
        return ok(PROMPT + "\n" + json.dumps(result, ensure_ascii=False) + "\n")

    return handle


async def test_mysqlsh_sequence() -> None:
    r = rig()
    backend_server(r.host)
    r.host.execs_to(mysqlsh_engine())
    probe = ShellProbe(context(r, SHELL, MYSQL))
    await probe.start()
    await probe.smoke()
    checks = r.checks()
    assert {n: c.outcome.value for n, c in checks.items()} == dict.fromkeys(
        ["version", "classic-sql", "x-protocol", "error-exit"], "pass"
    ), checks
    assert checks["error-exit"].detail == "exit 1, JSON error 1064 (syntax error)"
    client = r.host.by_role("client")
    assert client.spec.entrypoint == ("sleep",) and client.spec.command == ("infinity",)
    assert client.files[SHELL_PW].decode() == probe.backend.password.reveal()


async def test_mysqlsh_for_the_wrong_cpu_fails_the_version_check() -> None:
    r = rig()
    backend_server(r.host)
    r.host.execs_to(mysqlsh_engine(machine="aarch64"))
    probe = ShellProbe(context(r, SHELL, MYSQL))
    await probe.start()
    with pytest.raises(CheckFailed, match="built for aarch64, the cell is x86_64"):
        await probe.checks.version()


def test_mysqlsh_output_parsing() -> None:
    out = parse_json_output(
        PROMPT
        + "\n"
        + json.dumps({"warning": "Using a password on the command line"})
        + "\n"
        + json.dumps({"hasData": True, "rows": [{"a": 1}]})
        + "\nnot json\n"
    )
    assert out.rows == [{"a": 1}] and len(out.messages) == 2 and out.other == ["not json"]
    text_error = parse_json_output(json.dumps({"error": "MySQL Error 1045 (28000): Access denied for user 'root'"}))
    assert text_error.error_code() == 1045
    assert mysqlsh_version(
        "mysqlsh   Ver 9.7.0 for Linux on aarch64 - for MySQL 9.7.0 (MySQL Community Server (GPL))"
    ) == ("9.7.0", "Linux", "aarch64")
    argv = mysqlsh_command("x", "root@h:33060", "SELECT 1")
    assert argv[:2] == ["sh", "-c"] and "--mysqlx --sql" in argv[2] and "--json=raw" in argv[2]
    assert "--passwords-from-stdin" in argv[2]
