"""What the probes with several servers share (galera, pxc, replication,
group-replication): waiting until rows written on one server show on another, checking that
a server refuses writes because it is read-only, and running statements that carry a
password from a script file (so the password never reaches an argv).
"""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING

from ecoready.probe_api import CheckFailed, Row, SqlError, SqlTarget
from ecoready.probes.shared.accounts import run_script
from ecoready.probes.shared.sql_server import PORT, version_numbers

if TYPE_CHECKING:
    from ecoready.probe_api import Secret
    from ecoready.probes.shared.sql_server import Server

ER_OPTION_PREVENTS_STATEMENT = 1290  # "running with the --read-only option" (MySQL and MariaDB)


async def wait_for_count(server: Server, query: str, want: int, *, seconds: float = 30.0) -> str | None:
    """Poll `query` (one row with a column `n`) on `server` for up to `seconds` (scaled for
    emulation) until `n` equals `want`. None when it did, else what was seen last."""
    deadline = time.monotonic() + server.ctx.scaled(seconds)
    seen = "nothing"
    while True:
        try:
            rows = await server.query(query)
            seen = str(rows[0].get("n")) if rows else "no row"
        except SqlError as exc:
            seen = f"an error ({exc.message})"
        if seen == str(want):
            return None
        if time.monotonic() >= deadline:
            return seen
        await asyncio.sleep(0.5)


async def write_refused(
    server: Server,
    statement: str,
    *,
    user: str = "root",
    password: Secret | None = None,
    database: str | None = None,
) -> str:
    """Pass (a one-line detail) when `server` refuses `statement` as read-only, fail when
    the write succeeds or fails for another reason."""
    try:
        await server.query(statement, user=user, password=password, database=database)
    except SqlError as exc:
        if exc.code == ER_OPTION_PREVENTS_STATEMENT:
            return f"a write by {user} is refused: {exc.message}"
        raise CheckFailed(f"the write failed, but not as read-only: {exc.message}") from None
    raise CheckFailed(f"{user} could write on {server.alias}")


async def run_secret_script(server: Server, name: str, statements: list[str]) -> list[Row]:
    """Run `statements` (which hold a password) on `server` as root from a script file in
    its own container: `source <file>`; the rows of the last result set."""
    script = ("\n".join(s.rstrip(";") + ";" for s in statements) + "\n").encode()
    target = SqlTarget("127.0.0.1", PORT, "root")
    return await run_script(server.ctx, server.container, target, server.root, name, script)


def reset_binary_logs(flavor: str, version: str) -> str:
    """Empty the binary logs and the executed GTID set. MySQL 8.4 removed `RESET MASTER`
    (its replacement arrived in 8.2); MariaDB keeps it."""
    if flavor != "mariadb" and version_numbers(version) >= (8, 2, 0):
        return "RESET BINARY LOGS AND GTIDS"
    return "RESET MASTER"
