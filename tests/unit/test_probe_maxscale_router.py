"""The maxscale and router probes over a fake engine.

Canned formats:
- MaxScale REST API (MaxScale docs "REST API": resources /v1/maxscale, /v1/servers/:name,
  /v1/services/:name, /v1/listeners/:name are JSON:API documents {"links", "data": {"id",
  "type", "attributes": {...}}}; servers carry `attributes.state` like "Master, Running",
  services `attributes.router` and `attributes.state` "Started", listeners
  `attributes.state` "Running"); `maxctrl api get <resource>` prints that document.
- `mysqlrouter --version`: "MySQL Router  Ver 8.4.0 for Linux on x86_64 (MySQL Community -
  GPL)" (mysql-server router/src/router/src/router_app.cc, the version banner).
"""

from __future__ import annotations

import json

import pytest

from ecoready.domain.errors import CheckFailed
from ecoready.domain.model import Category
from ecoready.probe_api import Container, Endpoint, Secret
from ecoready.probes.maxscale import (
    CONFIG_PATH,
    LISTENER_PORT,
    SERVICE_USER,
    MaxScaleProbe,
    maxscale_config,
    parse_api,
    server_state,
    service_grants,
)
from ecoready.probes.router import CONFIG_PATH as ROUTER_CONFIG
from ecoready.probes.router import RouterProbe, parse_version, router_config
from tests.support.fake_host import BACKEND_HOSTNAME, FakeContainer, Sql, backend_server, component, context, ok, rig

MARIADB = component("mariadb-11.8", "server", "mariadb:11.8")
MYSQL = component("mysql-8.4", "server", "mysql:8.4")
MAXSCALE = component(
    "maxscale", "maxscale", "mariadb/maxscale:24.02", category=Category.LOAD_BALANCER, backend="mariadb-11.8"
)
ROUTER = component(
    "mysql-router",
    "router",
    "container-registry.oracle.com/mysql/community-router:8.4",
    category=Category.LOAD_BALANCER,
    backend="mysql-8.4",
)


def api_doc(kind: str, name: str, **attributes: object) -> str:
    return json.dumps(
        {
            "links": {"self": f"http://127.0.0.1:8989/v1/{kind}/{name}"},
            "data": {"id": name, "type": kind, "attributes": attributes},
        },
        indent=4,
    )


def maxctrl(states: list[str]):
    def handle(container: FakeContainer, argv: list[str]):
        if container.role != "maxscale" or argv[:3] != ["maxctrl", "api", "get"]:
            return None
        resource = argv[3]
        if resource == "maxscale":
            return ok(api_doc("maxscale", "maxscale", version="24.02.4", uptime=3))
        if resource == "servers/server1":
            return ok(api_doc("servers", "server1", state=states.pop(0) if len(states) > 1 else states[0]))
        if resource == "services/RW-Service":
            return ok(api_doc("services", "RW-Service", router="readwritesplit", state="Started"))
        if resource == "listeners/RW-Listener":
            return ok(api_doc("listeners", "RW-Listener", state="Running"))
        return None

    return handle


def through(host: str, port: int):
    def handle(call: Sql):
        if (call.host, call.port) != (host, port):
            return None
        if call.statement.startswith("SELECT @@hostname"):
            return [{"host": BACKEND_HOSTNAME, "port": 3306}]
        if "COUNT(*) AS n" in call.statement:
            return [{"n": 2, "updated": 1}]
        return []

    return handle


async def test_maxscale_start_waits_for_a_running_server_then_checks() -> None:
    r = rig()
    backend_server(r.host)
    r.host.execs_to(maxctrl(["Down", "Running", "Master, Running"]))
    r.host.sql(through("maxscale", LISTENER_PORT))
    probe = MaxScaleProbe(context(r, MAXSCALE, MARIADB))
    await probe.start()
    await probe.smoke()
    checks = r.checks()
    assert {n: c.outcome.value for n, c in checks.items()} == dict.fromkeys(
        ["rest-api", "monitor", "service", "routing", "crud-through-proxy"], "pass"
    )
    assert checks["rest-api"].detail == "MaxScale 24.02.4"
    assert checks["monitor"].detail == "server1: Master, Running"
    config = r.host.by_role("maxscale").files[CONFIG_PATH].decode()
    for line in (
        "router=readwritesplit",
        "module=mariadbmon",
        "protocol=MariaDBClient",
        f"port={LISTENER_PORT}",
        "address=backend-server",
        f"password={probe.service_password.reveal()}",
    ):
        assert line in config
    assert "ssl=true" not in config  # MariaDB backend: no TLS needed
    accounts = next(c.script for c in r.host.sql_log if c.script)
    assert f"'{SERVICE_USER}'@'%' IDENTIFIED BY" in accounts and "REPLICA MONITOR" in accounts
    assert "GRANT SELECT ON mysql.* TO" in accounts


def mysql_backend() -> Endpoint:
    """A MySQL backend as the configuration writers see it (they read its alias, port and flavor)."""
    server = Container("c1", "backend-server", "backend-server", "backend-server", "mysql:8.4", "img:mysql")
    return Endpoint("backend-server", 3306, "root", Secret("root", "pw"), server, flavor="mysql")


def test_maxscale_config_and_grants_for_a_mysql_backend() -> None:
    assert "ssl=true" in maxscale_config(mysql_backend(), "pw").decode()
    assert service_grants("mysql")[-1] == "REPLICATION CLIENT ON *.*"


def test_maxscale_api_parsing() -> None:
    assert server_state(parse_api(api_doc("servers", "server1", state="Master, Running"))) == "Master, Running"
    with pytest.raises(CheckFailed, match="no JSON"):
        parse_api("Error: Could not connect to MaxScale")
    with pytest.raises(CheckFailed, match="not a REST API document"):
        parse_api('{"errors": [{"detail": "Not found"}]}')


async def test_maxscale_monitor_check_fails_on_a_slave_only_state() -> None:
    r = rig()
    backend_server(r.host)
    r.host.execs_to(maxctrl(["Slave, Running"]))
    r.host.sql(through("maxscale", LISTENER_PORT))
    probe = MaxScaleProbe(context(r, MAXSCALE, MARIADB))
    await probe.start()
    await probe.smoke()
    assert r.checks()["monitor"].outcome.value == "fail"


async def test_router_bypasses_the_bootstrap_entrypoint_and_routes_both_ports() -> None:
    r = rig()
    backend_server(r.host)
    r.host.sql(through("127.0.0.1", 6446))
    r.host.sql(through("127.0.0.1", 6447))
    banner = "MySQL Router  Ver 8.4.0 for Linux on x86_64 (MySQL Community - GPL)\n"
    r.host.execs_to(lambda c, argv: ok(banner) if argv == ["mysqlrouter", "--version"] else None)
    probe = RouterProbe(context(r, ROUTER, MYSQL))
    await probe.start()
    await probe.smoke()
    router = r.host.by_role("router")
    assert router.spec.entrypoint == ("mysqlrouter", "-c", ROUTER_CONFIG)
    routed = [c for c in r.host.sql_log if c.via.role == "router"]
    assert {c.port for c in routed} == {6446, 6447} and all(c.host == "127.0.0.1" for c in routed)
    checks = r.checks()
    assert all(c.outcome.value == "pass" for c in checks.values()), checks
    assert checks["version"].detail == banner.strip()
    assert checks["ro-route"].detail == f"6447 -> backend-server (@@hostname {BACKEND_HOSTNAME}, port 3306)"


async def test_router_route_check_fails_when_another_server_answers() -> None:
    r = rig()
    backend_server(r.host)

    @r.host.sql
    def elsewhere(call: Sql):
        return [{"host": "somewhere-else", "port": 3306}] if call.via.role == "router" else None

    probe = RouterProbe(context(r, ROUTER, MYSQL))
    await probe.start()
    with pytest.raises(CheckFailed, match="somewhere-else"):
        await probe._route(6446)


def test_router_config_and_version() -> None:
    conf = router_config(mysql_backend()).decode()
    assert "[routing:rw]" in conf and "bind_port=6446" in conf and "routing_strategy=first-available" in conf
    assert "[routing:ro]" in conf and "bind_port=6447" in conf and "routing_strategy=round-robin" in conf
    assert conf.count("destinations=backend-server:3306") == 2 and "client_ssl_mode=PASSTHROUGH" in conf
    assert parse_version("MySQL Router  Ver 9.7.0 for Linux on aarch64 (MySQL Community - GPL)").endswith(
        "(MySQL Community - GPL)"
    )
    with pytest.raises(CheckFailed):
        parse_version("mysqlrouter: command not found")
