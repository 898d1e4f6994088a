"""The server probe's MySQL and Percona flavours through a real ProbeContext over a fake
engine: env contract, command, readiness by a TCP round trip, the auth-defaults check.

Canned outputs: `mysql --xml` result sets (MySQL manual, mysql client `--xml`), client
errors `ERROR 2003 (HY000): Can't connect to MySQL server on '127.0.0.1:3306' (111)` (the
message of CR_CONN_HOST_ERROR in MySQL's include/errmsg.h / libmysql/errmsg.cc).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from ecoready.domain.errors import CheckFailed
from ecoready.probes.server import (
    ARCH_QUERY,
    AUTH_QUERY,
    CRUD,
    FACTS_QUERY,
    SECRET_PATH,
    VERSION_QUERY,
    ServerProbe,
    describe_auth,
    flavor_of,
)
from ecoready.probes.shared.sql_server import root_env as server_env
from tests.support.fake_host import Sql, SqlFailure, component, context, rig


def test_flavor_from_image_and_option() -> None:
    assert flavor_of("mysql:8.4") == "mysql"
    assert flavor_of("container-registry.oracle.com/mysql/community-server:9.7") == "mysql"
    assert flavor_of("percona/percona-server:8.4") == "percona"
    assert flavor_of("mariadb:11.8") == "mariadb"
    assert flavor_of("127.0.0.1:5000/lab/mariadb:10.11", "mysql") == "mysql"


def test_env_contract_per_flavour() -> None:
    # docker-library/mysql and percona-docker ps-entry.sh: file_env MYSQL_ROOT_PASSWORD and
    # MYSQL_ROOT_HOST; MariaDB's entrypoint: MARIADB_* (MYSQL_* are aliases).
    assert server_env("mysql", "/p") == {"MYSQL_ROOT_PASSWORD_FILE": "/p", "MYSQL_ROOT_HOST": "%"}
    assert server_env("percona", "/p")["PERCONA_TELEMETRY_DISABLE"] == "1"
    assert server_env("mariadb", "/p") == {"MARIADB_ROOT_PASSWORD_FILE": "/p", "MARIADB_ROOT_HOST": "%"}


async def test_mysql_start_waits_for_tcp_after_the_init_server_and_passes_the_password_as_a_file() -> None:
    r = rig()
    ctx = context(r, component("mysql-8.4", "server", "mysql:8.4", options={"args": ["--mysql-native-password=ON"]}))
    attempts: list[Sql] = []

    @r.host.sql
    def server(call: Sql) -> list[dict[str, object]] | None:
        attempts.append(call)
        if len(attempts) < 3:  # the entrypoint's --skip-networking init server: TCP refused
            raise SqlFailure(2003, "HY000", "Can't connect to MySQL server on '127.0.0.1:3306' (111)")
        return [{"ok": 1}]

    probe = ServerProbe(ctx)
    await probe.start()
    (c,) = r.host.started
    assert c.spec.env["MYSQL_ROOT_PASSWORD_FILE"] == SECRET_PATH
    assert c.spec.env["MYSQL_ROOT_HOST"] == "%"
    assert not any("PASSWORD" in k and not k.endswith("_FILE") for k in c.spec.env)
    assert c.files[SECRET_PATH].decode() == probe.root.reveal()
    assert c.spec.command == ("mysqld", "--mysql-native-password=ON")
    assert len(attempts) == 3 and {(a.host, a.port, a.user) for a in attempts} == {("127.0.0.1", 3306, "root")}
    assert attempts[-1].password == probe.root.reveal()  # from the option file, not argv
    assert all(probe.root.reveal() not in " ".join(argv) for _, argv in r.host.execs)
    assert probe.endpoint is not None and probe.endpoint.flavor == "mysql" and probe.endpoint.host == "server"


async def test_percona_start_disables_telemetry() -> None:
    r = rig()
    ctx = context(r, component("ps", "server", "percona/percona-server:8.4"))
    r.host.sql(lambda call: [{"ok": 1}])
    await ServerProbe(ctx).start()
    assert r.host.started[0].spec.env["PERCONA_TELEMETRY_DISABLE"] == "1"
    assert r.host.started[0].spec.command is None  # the image's own CMD (mysqld)


async def test_auth_check_reads_root_plugin_and_native_password_status() -> None:
    r = rig()
    ctx = context(r, component("mysql-9.7", "server", "mysql:9.7"))

    @r.host.sql
    def server(call: Sql) -> list[dict[str, object]] | None:
        if call.statement == FACTS_QUERY:
            # MySQL 9.x: mysql_native_password removed, so the subquery is NULL.
            return [{"version": "9.7.0", "machine": "x86_64", "root_plugin": "caching_sha2_password", "native": None}]
        return [{"ok": 1}]

    probe = ServerProbe(ctx)
    await probe.start()
    assert await probe._auth() == "root@%: caching_sha2_password; mysql_native_password: absent"


FACTS_ROW = {
    "version": "8.4.6",
    "comment": "MySQL Community Server - GPL",
    "machine": "x86_64",
    "root_plugin": "caching_sha2_password",
    "native": "DISABLED",
}


async def smoke_with(answer: Callable[[str], object]) -> tuple[list[str], dict[str, Any]]:
    """The server probe's smoke against a fake server answering `answer(statement)`: the
    statements it ran (after start) and its checks by name."""
    r = rig()
    ctx = context(r, component("mysql-8.4", "server", "mysql:8.4"))
    calls: list[str] = []

    @r.host.sql
    def server(call: Sql) -> Any:
        calls.append(call.statement)
        return answer(call.statement)

    probe = ServerProbe(ctx)
    await probe.start()
    calls.clear()
    await probe.smoke()
    return calls, r.checks()


def outcomes(checks: dict[str, Any]) -> dict[str, str]:
    return {name: check.outcome.value for name, check in checks.items()}


def healthy(statement: str) -> object:
    if statement == CRUD:  # `--xml` prints a result set per SELECT only
        return [[{"n": "2", "updated": "1"}], [{"n": "0"}]]
    return [FACTS_ROW] if statement == FACTS_QUERY else [{"ok": 1}]


async def test_smoke_runs_its_four_checks_in_two_client_runs() -> None:
    calls, checks = await smoke_with(healthy)
    assert calls == [CRUD, FACTS_QUERY]
    assert outcomes(checks) == dict.fromkeys(("crud", "version", "arch", "auth"), "pass")
    assert checks["version"].detail == "8.4.6 (MySQL Community Server - GPL)"


async def test_a_crud_result_out_of_line_fails_crud_alone() -> None:
    _, checks = await smoke_with(
        lambda statement: [[{"n": "2", "updated": "0"}], [{"n": "0"}]] if statement == CRUD else healthy(statement)
    )
    assert outcomes(checks) == {"crud": "fail", "version": "pass", "arch": "pass", "auth": "pass"}
    assert "expected n=2 updated=1" in checks["crud"].detail


async def test_when_the_shared_row_cannot_be_read_each_check_asks_on_its_own() -> None:
    def answer(statement: str) -> object:
        if statement in (FACTS_QUERY, AUTH_QUERY):  # e.g. no SELECT on mysql.user
            raise SqlFailure(1142, "42000", "SELECT command denied to user 'root'@'%' for table 'user'")
        own = {VERSION_QUERY: [{"version": "8.4.6", "comment": "x"}], ARCH_QUERY: [{"machine": "x86_64"}]}
        return own.get(statement) or healthy(statement)

    calls, checks = await smoke_with(answer)
    assert calls == [CRUD, FACTS_QUERY, VERSION_QUERY, ARCH_QUERY, AUTH_QUERY]
    assert outcomes(checks) == {"crud": "pass", "version": "pass", "arch": "pass", "auth": "fail"}
    assert "SELECT command denied" in checks["auth"].detail


@pytest.mark.parametrize(
    ("flavor", "plugin", "native", "expected"),
    [
        (
            "mysql",
            "caching_sha2_password",
            "DISABLED",
            "root@%: caching_sha2_password; mysql_native_password: disabled",
        ),
        ("mariadb", "mysql_native_password", "ACTIVE", "root@%: mysql_native_password; mysql_native_password: active"),
    ],
)
def test_describe_auth(flavor: str, plugin: str, native: str, expected: str) -> None:
    assert describe_auth(flavor, plugin, native) == expected


def test_describe_auth_fails_without_remote_root_or_with_an_unloaded_plugin() -> None:
    with pytest.raises(CheckFailed, match="no root@'%'"):
        describe_auth("mysql", None, "DISABLED")
    with pytest.raises(CheckFailed, match="does not load"):
        describe_auth("mysql", "mysql_native_password", None)
