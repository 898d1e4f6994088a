"""The pmm probe: Percona Monitoring and Management 3 (`percona/pmm-server:3`) with a
`percona/pmm-client:3` container that registers the cell's backend server.

Contract (docs/image-contracts.md "PMM Server and Client"; percona/pmm `api/server/v1`,
`api/inventory/v1/services.proto`, `admin/commands/management/add_mysql.go`; pmm-doc
"Install PMM Client with Docker"): PMM 3 serves HTTP on 8080 inside the container, `GET
/v1/server/readyz` needs no auth and answers `{}` when ready, `GET /v1/server/version` and
`GET /v1/inventory/services` take basic auth (admin/admin until changed; reachable only
inside the cell's private network). The client container runs pmm-agent with
`PMM_AGENT_SETUP=1`, registering itself with the server; `pmm-admin add mysql` then adds a
MySQL service it monitors.

start: the server's readiness endpoint answers (curl inside the server container).
smoke: the version API; a pmm-client container connects to the server and registers the
backend server (`pmm-admin add mysql`, query source performance_schema); the server's
inventory lists that service.
"""

from __future__ import annotations

import json
from typing import Any

from ecoready.probe_api import CheckFailed, Container, Probe, StageFailed
from ecoready.probes.shared.accounts import Account, create_accounts

HTTP = "http://127.0.0.1:8080"
DEFAULT_CLIENT_IMAGE = "percona/pmm-client:3"
PMM_USER = "ecoready_pmm"
PASSWORD_FILE = "/run/ecoready/pmm-mysql-password"  # noqa: S105 - a path
SERVICE_NAME = "ecoready-mysql"
# PMM's documented monitoring grants (pmm-doc "Connect MySQL": SELECT, PROCESS, REPLICATION
# CLIENT, RELOAD); BACKUP_ADMIN exists on MySQL/Percona only.
PMM_GRANTS = {
    "mariadb": ("SELECT, PROCESS, REPLICATION CLIENT, RELOAD ON *.*",),
    "mysql": ("SELECT, PROCESS, REPLICATION CLIENT, RELOAD, BACKUP_ADMIN ON *.*",),
}


def curl(path: str, *, auth: bool) -> list[str]:
    argv = ["curl", "-fsS", "--max-time", "20"]
    if auth:
        argv += ["-u", "admin:admin"]  # PMM's documented default; the network is private
    return [*argv, f"{HTTP}{path}"]


def parse_json(text: str, what: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except ValueError:
        raise CheckFailed(f"{what}: not JSON: {text.strip()[:200]!r}") from None
    if not isinstance(value, dict):
        raise CheckFailed(f"{what}: expected an object, got {text.strip()[:200]!r}")
    return value


def parse_version(text: str) -> str:
    """`GET /v1/server/version`: {"version": "3.x.y", "server": {"version", "full_version",
    "timestamp"}, "managed": {...}, "distribution_method": "DOCKER"}."""
    body = parse_json(text, "/v1/server/version")
    server = body.get("server")
    version = body.get("version") or (server.get("version") if isinstance(server, dict) else None)
    if not version:
        raise CheckFailed(f"/v1/server/version has no version: {text.strip()[:200]!r}")
    method = body.get("distribution_method")
    return f"PMM {version}" + (f" ({method})" if method else "")


def listed_service(text: str, name: str) -> dict[str, Any]:
    """The MySQL service called `name` in `GET /v1/inventory/services` ({"mysql": [...]})."""
    body = parse_json(text, "/v1/inventory/services")
    for service in body.get("mysql") or []:
        if isinstance(service, dict) and service.get("service_name") == name:
            return service
    names = [s.get("service_name") for s in body.get("mysql") or [] if isinstance(s, dict)]
    raise CheckFailed(f"the server lists no MySQL service {name!r} (it lists {names})")


def agent_connected(text: str) -> bool:
    """`pmm-admin status --json`: {"pmm_agent_status": {"agent_id", "node_id", "server_url",
    ..., "connected": bool, ...}, "pmm_admin_version": ...} (admin/commands/status.go and
    admin/agentlocal's Status struct)."""
    status = parse_json(text, "pmm-admin status").get("pmm_agent_status")
    return isinstance(status, dict) and status.get("connected") is True


def add_mysql_command(address: str) -> list[str]:
    """pmm-admin add mysql, the password read from a file inside the client container (it
    reaches pmm-admin's argv there, never the environment, the logs or the report)."""
    script = (
        f'exec pmm-admin add mysql --json --username={PMM_USER} --password="$(cat {PASSWORD_FILE})" '
        f"--query-source=perfschema {SERVICE_NAME} {address}"
    )
    return ["sh", "-c", script]


def parse_added(text: str) -> str:
    """pmm-admin's --json result of `add mysql`: {"service": {"service_id", "service_name", ...}, ...}."""
    body = parse_json(text.strip().splitlines()[-1] if text.strip() else "", "pmm-admin add mysql")
    service = body.get("service")
    if not isinstance(service, dict) or service.get("service_name") != SERVICE_NAME:
        raise CheckFailed(f"pmm-admin did not report the added service: {text.strip()[:200]!r}")
    return str(service.get("service_id") or "")


class PMMProbe(Probe):
    kind = "pmm"

    def images(self) -> tuple[str, ...]:
        return (self.client_image,)

    @property
    def client_image(self) -> str:
        return str(self.ctx.options.get("client_image") or DEFAULT_CLIENT_IMAGE)

    async def start(self) -> None:
        ctx = self.ctx
        # PMM runs PostgreSQL, ClickHouse, VictoriaMetrics and Grafana in one container.
        self.server = await ctx.start_container("pmm-server", mem_limit="4g")
        await ctx.wait_ready(self.server, self._ready, what="GET /v1/server/readyz")

    async def _ready(self) -> None:
        result = await self.ctx.exec(self.server, curl("/v1/server/readyz", auth=False), timeout=self.ctx.scaled(25))
        if not result.ok:
            raise StageFailed(f"readyz: {result.last_line()}")
        parse_json(result.stdout, "/v1/server/readyz")

    async def get(self, path: str) -> str:
        result = await self.ctx.exec(self.server, curl(path, auth=True), timeout=self.ctx.scaled(25))
        if not result.ok:
            raise CheckFailed(f"GET {path}: {result.last_line()}")
        return result.stdout

    async def smoke(self) -> None:
        ctx = self.ctx
        await ctx.check("version", self._version)
        if await ctx.check("client-registers", self._register):
            await ctx.check("server-lists", self._listed)

    async def _version(self) -> str:
        return parse_version(await self.get("/v1/server/version"))

    async def _register(self) -> str:
        ctx = self.ctx
        backend = await ctx.backend()
        password = ctx.secret("pmm-mysql")
        grants = PMM_GRANTS["mariadb" if backend.flavor == "mariadb" else "mysql"]
        await create_accounts(ctx, backend, [Account(PMM_USER, password, grants)], "pmm-accounts")
        self.client = await ctx.start_container(
            "pmm-client",
            image=self.client_image,
            env={
                "PMM_AGENT_SERVER_ADDRESS": f"{self.server.alias}:8443",
                "PMM_AGENT_SERVER_USERNAME": "admin",
                "PMM_AGENT_SERVER_PASSWORD": "admin",  # the server's default, not a secret of ours
                "PMM_AGENT_SERVER_INSECURE_TLS": "1",
                "PMM_AGENT_SETUP": "1",
                "PMM_AGENT_SETUP_FORCE": "1",
                "PMM_AGENT_CONFIG_FILE": "config/pmm-agent.yaml",
            },
            files={PASSWORD_FILE: password},
        )
        await ctx.wait_ready(self.client, lambda: self._agent_connected(self.client), what="pmm-agent connected")
        result = await ctx.exec(self.client, add_mysql_command(f"{backend.host}:{backend.port}"))
        if not result.ok:
            raise CheckFailed(f"pmm-admin add mysql: {result.last_line()}")
        service_id = parse_added(result.stdout)
        return f"{SERVICE_NAME} ({backend.host}:{backend.port}) added as {service_id}"

    async def _agent_connected(self, client: Container) -> None:
        result = await self.ctx.exec(client, ["pmm-admin", "status", "--json"], timeout=self.ctx.scaled(20))
        if not result.ok:
            raise CheckFailed(f"pmm-admin status: {result.last_line()}")
        if not agent_connected(result.stdout):
            raise CheckFailed("pmm-agent is not connected to the server yet")

    async def _listed(self) -> str:
        service = listed_service(await self.get("/v1/inventory/services"), SERVICE_NAME)
        return f"server lists {SERVICE_NAME} at {service.get('address')}:{service.get('port')}"


PROBE = PMMProbe
