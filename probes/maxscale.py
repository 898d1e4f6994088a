"""The maxscale probe: MariaDB MaxScale (`mariadb/maxscale`) with a read/write-split service
in front of the cell's backend server.

Contract (docs/image-contracts.md "MariaDB MaxScale"; mariadb-corporation/maxscale-docker README and
Dockerfile): no env contract; extra configuration goes into `/etc/maxscale.cnf.d/`; the
REST API listens on 8989 with the default user admin/mariadb (reachable only inside the
cell's private network). `maxctrl`, shipped with MaxScale, speaks that REST API, so
`maxctrl api get <resource>` returns the raw JSON:API documents of `/v1/<resource>`.

start: the service account exists on the backend (MaxScale reads the grant tables and
monitors the server); the config file (server, `mariadbmon` monitor, `readwritesplit`
service, listener on 4006) is in place; the REST API answers and the monitor sees the
server Running.
smoke: REST API version, the monitor's server state, the service and listener state, a
query through the listener reaching the backend, CRUD through the listener.
"""

from __future__ import annotations

import json
from typing import Any

from ecoready.probe_api import CheckFailed, Endpoint, Probe, Row, SqlTarget, StageFailed
from ecoready.probes.shared.accounts import Account, create_accounts
from ecoready.probes.shared.proxy_checks import APP_USER, SMOKE_DB, backend_hostname, crud_through, routed_to_backend

CONFIG_PATH = "/etc/maxscale.cnf.d/ecoready.cnf"
REST_PORT = 8989
LISTENER_PORT = 4006  # the tutorials' conventional read/write-split port
SERVICE_USER = "ecoready_mxs"
SERVER = "server1"
MONITOR = "Monitor"
SERVICE = "RW-Service"
LISTENER = "RW-Listener"


def service_grants(flavor: str) -> tuple[str, ...]:
    """What MaxScale's service and monitor user needs (MaxScale docs "Required grants"):
    read the grant tables to authenticate clients, list databases, see replication."""
    monitor = "REPLICATION CLIENT, REPLICA MONITOR ON *.*" if flavor == "mariadb" else "REPLICATION CLIENT ON *.*"
    return ("SHOW DATABASES ON *.*", "SELECT ON mysql.*", monitor)


def maxscale_config(backend: Endpoint, password: str) -> bytes:
    ssl = "ssl=true\n" if backend.flavor in ("mysql", "percona") else ""
    return (
        f"[{SERVER}]\ntype=server\naddress={backend.host}\nport={backend.port}\n{ssl}\n"
        f"[{MONITOR}]\ntype=monitor\nmodule=mariadbmon\nservers={SERVER}\n"
        f"user={SERVICE_USER}\npassword={password}\nmonitor_interval=1000ms\n\n"
        f"[{SERVICE}]\ntype=service\nrouter=readwritesplit\nservers={SERVER}\n"
        f"user={SERVICE_USER}\npassword={password}\n\n"
        f"[{LISTENER}]\ntype=listener\nservice={SERVICE}\nprotocol=MariaDBClient\nport={LISTENER_PORT}\n"
    ).encode()


def parse_api(stdout: str) -> dict[str, Any]:
    """A JSON:API document printed by `maxctrl api get`."""
    try:
        document = json.loads(stdout)
    except ValueError:
        raise CheckFailed(f"maxctrl printed no JSON: {stdout.strip()[:200]!r}") from None
    if not isinstance(document, dict) or "data" not in document:
        raise CheckFailed(f"not a REST API document: {stdout.strip()[:200]!r}")
    return document


def attributes(document: dict[str, Any]) -> dict[str, Any]:
    data = document.get("data") or {}
    attrs = data.get("attributes") if isinstance(data, dict) else None
    return attrs if isinstance(attrs, dict) else {}


def server_state(document: dict[str, Any]) -> str:
    return str(attributes(document).get("state") or "")


class MaxScaleProbe(Probe):
    kind = "maxscale"

    async def start(self) -> None:
        ctx = self.ctx
        self.backend = await ctx.backend()
        self.backend_host = await backend_hostname(ctx, self.backend)
        self.service_password = ctx.secret("maxscale-service")
        self.app_password = ctx.secret("maxscale-app")
        await create_accounts(
            ctx,
            self.backend,
            [
                Account(SERVICE_USER, self.service_password, service_grants(self.backend.flavor)),
                Account(APP_USER, self.app_password, (f"ALL ON {SMOKE_DB}.*",)),
            ],
            "maxscale-accounts",
        )
        self.container = await ctx.start_container(
            "maxscale", files={CONFIG_PATH: maxscale_config(self.backend, self.service_password.reveal())}
        )
        await ctx.wait_ready(
            self.container, self._server_running, what="the REST API on 8989 and a Running server", port=REST_PORT
        )

    async def api(self, resource: str) -> dict[str, Any]:
        result = await self.ctx.exec(self.container, ["maxctrl", "api", "get", resource], timeout=self.ctx.scaled(20))
        if not result.ok:
            raise CheckFailed(f"maxctrl api get {resource}: {result.last_line()}")
        return parse_api(result.stdout)

    async def _server_running(self) -> None:
        state = server_state(await self.api(f"servers/{SERVER}"))
        if "Running" not in state:
            raise StageFailed(f"{SERVER} is {state or 'not monitored yet'}")

    async def through(self, statement: str) -> list[Row]:
        target = SqlTarget(self.container.alias, LISTENER_PORT, APP_USER)
        return await self.ctx.sql(self.backend.container, target, self.app_password, statement)

    async def smoke(self) -> None:
        ctx = self.ctx
        await ctx.check("rest-api", self._rest)
        await ctx.check("monitor", self._monitor)
        await ctx.check("service", self._service)
        await ctx.check("routing", self._routing)
        await ctx.check("crud-through-proxy", self._crud)

    async def _rest(self) -> str:
        version = attributes(await self.api("maxscale")).get("version")
        if not version:
            raise CheckFailed("GET /v1/maxscale has no version")
        return f"MaxScale {version}"

    async def _monitor(self) -> str:
        state = server_state(await self.api(f"servers/{SERVER}"))
        if "Running" not in state or "Master" not in state:
            raise CheckFailed(f"{SERVER} is {state!r}, expected 'Master, Running'")
        return f"{SERVER}: {state}"

    async def _service(self) -> str:
        service = attributes(await self.api(f"services/{SERVICE}"))
        listener = attributes(await self.api(f"listeners/{LISTENER}"))
        router, state, lstate = service.get("router"), service.get("state"), listener.get("state")
        if router != "readwritesplit" or state != "Started" or lstate != "Running":
            raise CheckFailed(f"service router={router} state={state}, listener state={lstate}")
        return f"{SERVICE} ({router}) Started, {LISTENER} Running on {LISTENER_PORT}"

    async def _routing(self) -> str:
        return await routed_to_backend(self.backend, self.backend_host, self.through, str(LISTENER_PORT))

    async def _crud(self) -> str:
        return await crud_through(self.through, str(LISTENER_PORT))


PROBE = MaxScaleProbe
