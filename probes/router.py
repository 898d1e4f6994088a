"""The router probe: MySQL Router (Oracle's `container-registry.oracle.com/mysql/community-router`)
with a static routing configuration in front of the cell's backend server.

Contract (docs/image-contracts.md "MySQL Router"; mysql/mysql-docker
`mysql-router/8.4/Dockerfile`): the image's `run.sh` entrypoint always bootstraps against
an InnoDB Cluster when its command is `mysqlrouter`, which fails against a plain server, so
the probe replaces the entrypoint with `mysqlrouter -c <static config>`. The image runs as
uid 999 and ships the MySQL client (its HEALTHCHECK uses `mysqladmin --port 6446`), so
queries go through the router from inside its own container.

Static routes (MySQL Router manual, "Basic Connection Routing"): 6446 read/write with
`first-available`, 6447 read-only with `round-robin`, both to the backend. TLS is passed
through to the server (`client_ssl_mode=PASSTHROUGH`), so MySQL 8.4's caching_sha2_password
full authentication works end to end.

start: the router accepts on 6446 and a query through it reaches the backend.
smoke: the router's version, @@hostname through 6446 and through 6447 equal to the
backend's own, CRUD through 6446.
"""

from __future__ import annotations

import re

from ecoready.probe_api import CheckFailed, Endpoint, Probe, Row, SqlTarget
from ecoready.probes.shared.proxy_checks import backend_hostname, crud_through, routed_to_backend

CONFIG_PATH = "/etc/ecoready/mysqlrouter.conf"
RW_PORT = 6446
RO_PORT = 6447
_VERSION = re.compile(r"MySQL Router\s+Ver\s+(\S+)")


def router_config(backend: Endpoint) -> bytes:
    destination = f"{backend.host}:{backend.port}"
    routes = []
    for name, port, strategy in (("rw", RW_PORT, "first-available"), ("ro", RO_PORT, "round-robin")):
        routes.append(
            f"[routing:{name}]\nbind_address=0.0.0.0\nbind_port={port}\ndestinations={destination}\n"
            f"routing_strategy={strategy}\nclient_ssl_mode=PASSTHROUGH\nserver_ssl_mode=AS_CLIENT\n"
        )
    # An empty logging_folder logs to the console (docker logs); the image's user owns /tmp.
    head = "[DEFAULT]\nlogging_folder=\nruntime_folder=/tmp\ndata_folder=/tmp\n\n[logger]\nlevel=INFO\n\n"
    return (head + "\n".join(routes)).encode()


def parse_version(text: str) -> str:
    """`mysqlrouter --version` prints e.g. `MySQL Router  Ver 8.4.0 for Linux on x86_64 (MySQL
    Community - GPL)`; the version and the platform part."""
    match = _VERSION.search(text)
    if not match:
        raise CheckFailed(f"unexpected --version output: {text.strip()[:160]!r}")
    return text[match.start() :].strip().splitlines()[0]


class RouterProbe(Probe):
    kind = "router"

    async def start(self) -> None:
        ctx = self.ctx
        self.backend = await ctx.backend()
        self.backend_host = await backend_hostname(ctx, self.backend)
        self.container = await ctx.start_container(
            "router",
            entrypoint=["mysqlrouter", "-c", CONFIG_PATH],
            command=[],
            files={CONFIG_PATH: router_config(self.backend)},
        )
        await ctx.wait_ready(self.container, self._ping, what="a query through 6446", port=RW_PORT)

    async def via(self, port: int, statement: str, timeout: float | None = None) -> list[Row]:
        target = SqlTarget("127.0.0.1", port, self.backend.user)
        return await self.ctx.sql(self.container, target, self.backend.password, statement, timeout=timeout)

    async def _ping(self) -> None:
        await self.via(RW_PORT, "SELECT 1 AS ok", timeout=self.ctx.scaled(10))

    async def smoke(self) -> None:
        ctx = self.ctx
        await ctx.check("version", self._version)
        await ctx.check("rw-route", lambda: self._route(RW_PORT))
        await ctx.check("ro-route", lambda: self._route(RO_PORT))
        await ctx.check("crud-through-router", self._crud)

    async def _version(self) -> str:
        result = await self.ctx.exec(self.container, ["mysqlrouter", "--version"], timeout=self.ctx.scaled(20))
        if not result.ok:
            raise CheckFailed(f"mysqlrouter --version: {result.last_line()}")
        return parse_version(result.stdout)

    async def _route(self, port: int) -> str:
        return await routed_to_backend(self.backend, self.backend_host, lambda sql: self.via(port, sql), str(port))

    async def _crud(self) -> str:
        return await crud_through(lambda sql: self.via(RW_PORT, sql), str(RW_PORT))


PROBE = RouterProbe
