"""Accounts a component needs on its backend server (a proxy's monitor and app users, a
MaxScale service user, PMM's monitoring user), created the way each server flavour wants.

Passwords never travel on a command line: the statements go into a script file inside the
client's container and the client runs it with `source`, so only the file path shows in
argv, in errors and in logs.

MySQL 8.4 disables `mysql_native_password` by default and 9.x removed it, so accounts on
MySQL and Percona Server say `caching_sha2_password` explicitly (full authentication then
needs TLS or the server's RSA key: proxies are told to use TLS to such backends). MariaDB
keeps its default (`mysql_native_password`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ecoready.probe_api import Row, SqlError, SqlTarget

if TYPE_CHECKING:
    from ecoready.probe_api import Container, Endpoint, ProbeContext, Secret

SCRIPTS_DIR = "/run/ecoready"


def sql_string(value: str) -> str:
    """A single-quoted SQL string literal (backslash and quote escaped)."""
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


def auth_clause(flavor: str) -> str:
    """How accounts authenticate on this flavour (see the module doc)."""
    return "IDENTIFIED WITH caching_sha2_password BY" if flavor in ("mysql", "percona") else "IDENTIFIED BY"


@dataclass(frozen=True)
class Account:
    user: str
    password: Secret
    grants: tuple[str, ...]  # e.g. "SELECT ON mysql.*", "PROCESS, REPLICATION CLIENT ON *.*"
    host: str = "%"


def account_script(flavor: str, accounts: Sequence[Account]) -> bytes:
    """CREATE USER + GRANT statements for `accounts`, one per line."""
    lines = []
    for account in accounts:
        who = f"{sql_string(account.user)}@{sql_string(account.host)}"
        lines.append(f"CREATE USER IF NOT EXISTS {who} {auth_clause(flavor)} {sql_string(account.password.reveal())};")
        lines.extend(f"GRANT {grant} TO {who};" for grant in account.grants)
    users = ", ".join(sql_string(a.user) for a in accounts)
    lines.append(f"SELECT COUNT(DISTINCT user) AS accounts FROM mysql.user WHERE user IN ({users});")
    return ("\n".join(lines) + "\n").encode()


async def run_script(
    ctx: ProbeContext,
    via: Container,
    target: SqlTarget,
    password: Secret | None,
    name: str,
    script: bytes,
    *,
    timeout: float | None = None,
) -> list[Row]:
    """Put `script` into `via` and run it there with `source` against `target`; the rows
    of its last result set."""
    path = f"{SCRIPTS_DIR}/{name}.sql"
    await ctx.put_files(via, {path: script})
    return await ctx.sql(via, target, password, f"source {path}", timeout=timeout)


async def create_accounts(ctx: ProbeContext, backend: Endpoint, accounts: Sequence[Account], name: str) -> None:
    """Create `accounts` on the backend server as its root, from the server's own client.
    A refusal is the backend's problem, not the component's: BackendFailed (`error`)."""
    from ecoready.probe_api import BackendFailed

    target = SqlTarget("127.0.0.1", 3306, backend.user)
    script = account_script(backend.flavor, accounts)
    try:
        rows = await run_script(ctx, backend.container, target, backend.password, name, script)
    except SqlError as exc:
        raise BackendFailed(f"the backend refused the accounts for this component: {exc}") from None
    found = rows[0].get("accounts") if rows else None
    wanted = len({a.user for a in accounts})
    if found is None or int(found) < wanted:
        raise BackendFailed(f"the backend shows {found} of the {wanted} accounts this component needs")


async def warm_auth_cache(ctx: ProbeContext, backend: Endpoint) -> None:
    """Log in to the backend once as its root over the network, from the server's own client.

    MySQL 8.4 and 9.x accounts use caching_sha2_password: a client with neither TLS nor the
    server's RSA public key can log in only after the server has cached the account's hash,
    which one full authentication over TLS does (MySQL manual, "Caching SHA-2 Pluggable
    Authentication"). The server's own client uses TLS by default, so tools whose driver may
    lack TLS (Perl's DBD::mysql in percona-toolkit) can log in after this. On MariaDB it is
    just a login. A refusal is the backend's problem: BackendFailed (`error`)."""
    from ecoready.probe_api import BackendFailed

    target = SqlTarget(backend.host, backend.port, backend.user)
    try:
        await ctx.sql(backend.container, target, backend.password, "SELECT CURRENT_USER() AS me")
    except SqlError as exc:
        raise BackendFailed(f"root cannot log in to the backend over the network: {exc}") from None
