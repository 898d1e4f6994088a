"""The checks every proxy in front of a backend server passes the same way (ProxySQL,
MaxScale, MySQL Router): a query through the proxy reaches the backend, and a small CRUD
round trip works through it. `send` runs one statement batch through the proxy's port."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from ecoready.probe_api import CheckFailed, Endpoint, ProbeContext, Row, SqlTarget

SMOKE_DB = "ecoready_proxy"
APP_USER = "ecoready_app"  # the application account a proxy is configured with
Send = Callable[[str], Awaitable[list[Row]]]


async def backend_hostname(ctx: ProbeContext, backend: Endpoint) -> str | None:
    """The backend server's @@hostname, asked directly at start: what a query routed to it
    must answer later, whatever becomes of the backend meanwhile."""
    rows = await ctx.sql(
        backend.container,
        SqlTarget("127.0.0.1", 3306, backend.user),
        backend.password,
        "SELECT @@hostname AS host",
    )
    return rows[0].get("host") if rows else None


async def routed_to_backend(backend: Endpoint, want: str | None, send: Send, where: str) -> str:
    """The server that answers through the proxy is the backend (its @@hostname, `want`)."""
    routed = await send("SELECT @@hostname AS host, @@port AS port")
    got = routed[0].get("host") if routed else None
    if not got or got != want:
        raise CheckFailed(f"through {where} the server says @@hostname={got!r}, the backend is {want!r}")
    return f"{where} -> {backend.host} (@@hostname {got}, port {routed[0].get('port')})"


async def crud_through(send: Send, where: str) -> str:
    """Create, insert, update, select and drop through the proxy."""
    await send(f"CREATE DATABASE IF NOT EXISTS {SMOKE_DB}")
    rows = await send(
        f"CREATE TABLE {SMOKE_DB}.t (id INT PRIMARY KEY, v VARCHAR(32)); "
        f"INSERT INTO {SMOKE_DB}.t VALUES (1, 'one'), (2, 'two'); "
        f"UPDATE {SMOKE_DB}.t SET v = 'deux' WHERE id = 2; "
        f"SELECT COUNT(*) AS n, SUM(v = 'deux') AS updated FROM {SMOKE_DB}.t"
    )
    if not rows or rows[0].get("n") != "2" or rows[0].get("updated") != "1":
        raise CheckFailed(f"expected n=2 updated=1 through {where}, got {rows}")
    await send(f"DROP TABLE {SMOKE_DB}.t")
    return f"create, insert, update, select, drop through {where}"
