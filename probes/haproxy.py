"""HAProxy as a MySQL load balancer: a TCP frontend with a MySQL health check on the
backend server; queries through the frontend reach the backend.

The config follows the official haproxy image's contract (/usr/local/etc/haproxy/
haproxy.cfg, `haproxy -f` as the command). The health check logs in as a password-less
user that can do nothing, created on the backend by the probe, then says COM_QUIT.

How it logs in depends on the backend's flavour. HAProxy's own `option mysql-check user`
sends a login without CLIENT_PLUGIN_AUTH, which a server takes as `mysql_native_password`:
MariaDB's default, but MySQL 8.4 disables that plugin and 9.x removed it, so against an
account of `caching_sha2_password` (their default) the server answers error 1251 ("Client
does not support authentication protocol") and the check never passes (HAProxy's own
regression test reg-tests/checks/mysql-check.vtc shows that answer). For MySQL and
Percona Server the check is a `tcp-check` sequence instead: the same login, with
CLIENT_PLUGIN_AUTH and `caching_sha2_password` named, and an empty auth response, which
that plugin accepts for an account without a password (no TLS or RSA key needed); an OK
packet passes, anything else fails. Both are what a user would configure in front of
each server (docs/components.md).
bench: sysbench through the frontend against the backend (`app/probe_api/bench.py`).
"""

from __future__ import annotations

from ecoready.probe_api import BenchTarget, CheckFailed, Probe, SqlError, SqlTarget, bench_detail, run_bench
from ecoready.probes.shared.sql_server import Server

CONFIG = "/usr/local/etc/haproxy/haproxy.cfg"
ADMIN_SOCKET = "/tmp/haproxy-admin.sock"
FRONTEND_PORT = 3306
CHECK_USER = "haproxy_check"


# MySQL protocol capability flags of the check's login (HandshakeResponse41)
CLIENT_PROTOCOL_41 = 0x0200
CLIENT_SECURE_CONNECTION = 0x8000
CLIENT_PLUGIN_AUTH = 0x80000
SHA2_PLUGIN = "caching_sha2_password"


def sha2_login_packet(user: str) -> bytes:
    """The client's login packet (sequence 1) for a password-less `caching_sha2_password`
    account: capabilities, max packet size, utf8 charset, 23 filler bytes, the user, an
    empty auth response and the plugin's name."""
    flags = CLIENT_PROTOCOL_41 | CLIENT_SECURE_CONNECTION | CLIENT_PLUGIN_AUTH
    payload = (
        flags.to_bytes(4, "little")
        + (1 << 24).to_bytes(4, "little")
        + b"\x21"
        + bytes(23)
        + user.encode()
        + b"\x00"
        + b"\x00"  # auth response: length 0
        + SHA2_PLUGIN.encode()
        + b"\x00"
    )
    return len(payload).to_bytes(3, "little") + b"\x01" + payload


COM_QUIT = bytes.fromhex("0100000001")


def check_lines(flavor: str) -> str:
    """The backend's health check (see the module doc): HAProxy's `mysql-check` for
    MariaDB, a plugin-aware login as a `tcp-check` sequence for MySQL and Percona Server."""
    if flavor not in ("mysql", "percona"):
        return f"    option mysql-check user {CHECK_USER} post-41\n"
    return (
        "    option tcp-check\n"
        "    tcp-check connect\n"
        # the server's greeting: any length, sequence 0, protocol version 10
        "    tcp-check expect rbinary ^[0-9A-F]{6}000A\n"
        f"    tcp-check send-binary {sha2_login_packet(CHECK_USER).hex().upper()}\n"
        # OK (0x00) at sequence 2; an error packet (0xFF) or an auth switch (0xFE) fails
        "    tcp-check expect rbinary ^[0-9A-F]{6}0200\n"
        f"    tcp-check send-binary {COM_QUIT.hex().upper()}\n"
    )


def haproxy_config(backend_host: str, backend_port: int = 3306, flavor: str = "mariadb") -> str:
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
{check_lines(flavor)}    server db1 {backend_host}:{backend_port} check inter 1s rise 1 fall 3
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
        # no password, and on MySQL and Percona Server the plugin the check logs in with said
        plugin = f" IDENTIFIED WITH {SHA2_PLUGIN}" if backend.flavor in ("mysql", "percona") else ""
        await self.backend.query(f"CREATE USER IF NOT EXISTS '{CHECK_USER}'@'%'{plugin}")
        self.proxy = await ctx.start_container(
            "haproxy",
            command=["haproxy", "-W", "-db", "-f", CONFIG],
            files={CONFIG: haproxy_config(backend.host, backend.port, backend.flavor).encode()},
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
        how = (
            "a caching_sha2_password login"
            if self.endpoint and self.endpoint.flavor in ("mysql", "percona")
            else "mysql-check"
        )
        return f"backend db1 UP by the MySQL health check ({how})"

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
