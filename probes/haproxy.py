"""HAProxy as a MySQL load balancer: a TCP frontend with a MySQL health check on the
backend server; queries through the frontend reach the backend.

The config follows the official haproxy image's contract (/usr/local/etc/haproxy/
haproxy.cfg, `haproxy -f` as the command). The health check logs in as a password-less
user that can do nothing (`option mysql-check`), created on the backend by the probe.
bench: sysbench through the frontend against the backend (`app/probe_api/bench.py`).
"""

from __future__ import annotations

from ecoready.probe_api import BenchTarget, CheckFailed, Probe, SqlError, SqlTarget, bench_detail, run_bench
from ecoready.probes.shared.sql_server import Server

CONFIG = "/usr/local/etc/haproxy/haproxy.cfg"
ADMIN_SOCKET = "/tmp/haproxy-admin.sock"
FRONTEND_PORT = 3306
CHECK_USER = "haproxy_check"


def haproxy_config(backend_host: str, backend_port: int = 3306) -> str:
    return f"""\
global
    log stdout format raw local0 info
    stats socket {ADMIN_SOCKET} mode 600 level admin

defaults
    log global
    mode tcp
    option tcplog
    timeout connect 5s
    timeout client 120s
    timeout server 120s

frontend mysql
    bind :{FRONTEND_PORT}
    default_backend mysql_servers

backend mysql_servers
    option mysql-check user {CHECK_USER} post-41
    server db1 {backend_host}:{backend_port} check inter 1s rise 1 fall 3
"""


def server_states(output: str) -> dict[str, str]:
    """`show servers state` -> {server name: operational state}; 2 means UP."""
    states: dict[str, str] = {}
    header: list[str] = []
    for line in output.splitlines():
        if line.startswith("#"):
            header = line.lstrip("# ").split()
            continue
        fields = line.split()
        if header and len(fields) >= len(header) - 1 and "srv_name" in header:
            row = dict(zip(header, fields, strict=False))
            states[row.get("srv_name", "")] = row.get("srv_op_state", "")
    return states


class HaproxyProbe(Probe):
    kind = "haproxy"

    async def start(self) -> None:
        ctx = self.ctx
        backend = await ctx.backend()
        self.backend = Server(ctx, backend.container, backend.password, backend.flavor)
        await self.backend.query(f"CREATE USER IF NOT EXISTS '{CHECK_USER}'@'%'")
        self.proxy = await ctx.start_container(
            "haproxy",
            command=["haproxy", "-W", "-db", "-f", CONFIG],
            files={CONFIG: haproxy_config(backend.host, backend.port).encode()},
            cpuset_cpus=ctx.cpuset("server"),  # with its backend, apart from sysbench
        )
        self.endpoint = backend
        await ctx.wait_ready(
            self.proxy, self._query_through, what="a query through the haproxy frontend", port=FRONTEND_PORT
        )

    async def _query_through(self) -> list[dict[str, str | None]]:
        """SELECT through the proxy, using the backend's client binary on the cell network."""
        assert self.endpoint is not None
        target = SqlTarget(self.proxy.alias, FRONTEND_PORT, self.endpoint.user)
        return await self.ctx.sql(
            self.endpoint.container,
            target,
            self.endpoint.password,
            "SELECT @@hostname AS host, @@port AS port, CONNECTION_ID() AS id",
        )

    async def smoke(self) -> None:
        await self.ctx.check("health-check-up", self._health)
        await self.ctx.check("query-reaches-backend", self._reaches_backend)

    async def _health(self) -> str:
        result = await self.ctx.exec(
            self.proxy,
            ["sh", "-c", f"echo 'show servers state' | socat stdio {ADMIN_SOCKET}"],
            timeout=self.ctx.scaled(20),
        )
        if not result.ok:
            raise CheckFailed(f"the admin socket did not answer: {result.last_line()}")
        states = server_states(result.stdout)
        if states.get("db1") != "2":
            raise CheckFailed(f"server db1 state {states.get('db1', 'absent')} (2 = UP): {states}")
        return "backend db1 UP by the MySQL health check"

    async def _reaches_backend(self) -> str:
        try:
            through = await self._query_through()
            direct = await self.backend.query("SELECT @@hostname AS host")
        except SqlError as exc:
            raise CheckFailed(str(exc)) from None
        if not through or not direct or through[0].get("host") != direct[0].get("host"):
            raise CheckFailed(f"through the proxy: {through}, backend: {direct}")
        return f"SELECT through :{FRONTEND_PORT} answered by backend {direct[0].get('host')}"

    async def bench(self) -> str:
        """sysbench through the frontend against the backend: with the backend's own bench
        (the server cell of the same image and arch) it gives the proxy's overhead."""
        assert self.endpoint is not None
        target = BenchTarget(
            self.proxy.alias, FRONTEND_PORT, "through haproxy", watch=(self.proxy, self.endpoint.container)
        )
        return bench_detail(await run_bench(self.ctx, self.endpoint, target=target))


PROBE = HaproxyProbe
