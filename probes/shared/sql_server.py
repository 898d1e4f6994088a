"""Server containers for probes that need several of them (clusters, replicas, restore
targets, dump/load pairs): the official images' contract, ready = SQL over TCP.

`start_server` starts one container of a server image with a root password given as a
file and waits for a real SQL round trip over TCP; the returned `Server` runs SQL through
its own client binary, so it works the same for every arch and on remote engines.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ecoready.probe_api import CheckFailed, Endpoint, InfraError, Row, SqlError, SqlTarget

if TYPE_CHECKING:
    from ecoready.probe_api import Container, ProbeContext, Secret

ROOT_SECRET_PATH = "/run/ecoready/root-password"  # noqa: S105 - a path, not a password
PORT = 3306
X_PORT = 33060  # MySQL's X Plugin (mysqlx_port), on by default in MySQL and Percona Server; MariaDB has none
X_FLAVORS = ("mysql", "percona")


def flavor_of(image: str, option: object = None) -> str:
    """mariadb | mysql | percona: decides env names and the server binary."""
    if isinstance(option, str) and option:
        return option
    name = image.lower()
    if "mariadb" in name:
        return "mariadb"
    if "percona" in name:
        return "percona"
    return "mysql"


def root_env(flavor: str, secret_path: str = ROOT_SECRET_PATH) -> dict[str, str]:
    if flavor == "mariadb":
        return {"MARIADB_ROOT_PASSWORD_FILE": secret_path, "MARIADB_ROOT_HOST": "%"}
    env = {"MYSQL_ROOT_PASSWORD_FILE": secret_path, "MYSQL_ROOT_HOST": "%"}
    if flavor == "percona":
        env["PERCONA_TELEMETRY_DISABLE"] = "1"  # the image otherwise calls home
    return env


_DIGITS = (
    "(SELECT 0 AS d UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3 UNION ALL SELECT 4 "
    "UNION ALL SELECT 5 UNION ALL SELECT 6 UNION ALL SELECT 7 UNION ALL SELECT 8 UNION ALL SELECT 9)"
)


def numbers(limit: int) -> str:
    """A derived table `n` of the integers 1..limit (at most 10,000), portable across MySQL
    and MariaDB (no sequence engine, no recursion limits): four cross-joined digit tables."""
    if not 1 <= limit <= 10_000:
        raise ValueError("numbers() supports 1..10000")
    return (
        f"(SELECT 1 + a.d + 10 * b.d + 100 * c.d + 1000 * e.d AS n FROM {_DIGITS} a CROSS JOIN {_DIGITS} b "
        f"CROSS JOIN {_DIGITS} c CROSS JOIN {_DIGITS} e WHERE 1 + a.d + 10 * b.d + 100 * c.d + 1000 * e.d "
        f"<= {limit}) AS numbers"
    )


def hex32(expression: str) -> str:
    """32 hex characters derived from `expression`, on MySQL and MariaDB alike (MySQL 9.7
    has no MD5() or SHA1() any more; SHA2() is in both)."""
    return f"LEFT(SHA2({expression}, 256), 32)"


def server_binary(flavor: str) -> str:
    return "mariadbd" if flavor == "mariadb" else "mysqld"


def version_numbers(version: str) -> tuple[int, int, int]:
    """(major, minor, patch) of a server or tool version string such as `8.4.10-10`,
    `11.8.2-MariaDB-ubu2404` or `8.0.35-31`; missing parts are 0."""
    parts = re.match(r"\s*(\d+)(?:\.(\d+))?(?:\.(\d+))?", version)
    if parts is None:
        raise ValueError(f"not a version: {version!r}")
    major, minor, patch = (int(p) if p else 0 for p in parts.groups())
    return major, minor, patch


@dataclass(frozen=True)
class Server:
    ctx: ProbeContext
    container: Container
    root: Secret
    flavor: str

    @property
    def alias(self) -> str:
        return self.container.alias

    @property
    def endpoint(self) -> Endpoint:
        return Endpoint(
            host=self.alias,
            port=PORT,
            user="root",
            password=self.root,
            container=self.container,
            flavor=self.flavor,
            x_port=X_PORT if self.flavor in X_FLAVORS else None,
        )

    async def query(
        self,
        statement: str,
        *,
        timeout: float | None = None,
        user: str = "root",
        password: Secret | None = None,
        database: str | None = None,
    ) -> list[Row]:
        """SQL over TCP to this server from its own client (127.0.0.1)."""
        target = SqlTarget("127.0.0.1", PORT, user, database)
        return await self.ctx.sql(
            self.container, target, password if user != "root" else self.root, statement, timeout=timeout
        )

    async def query_results(self, statement: str, *, timeout: float | None = None) -> list[list[Row]]:
        """Every result set of `statement` (several statements, one client run)."""
        target = SqlTarget("127.0.0.1", PORT, "root", None)
        return await self.ctx.sql_results(self.container, target, self.root, statement, timeout=timeout)

    async def status(self, name: str) -> str | None:
        rows = await self.query(f"SHOW GLOBAL STATUS LIKE '{name}'")
        return rows[0].get("Value") if rows else None

    async def row(self, statement: str, what: str = "") -> Row:
        """The one row a read-only `statement` always returns. No row at all is the client's
        output lost on its way back (an exec whose output never reached us): read once more,
        and lost twice is ours to answer for (InfraError, naming `what` or the statement),
        never the component's."""
        for _ in range(2):
            rows = await self.query(statement)
            if rows:
                return rows[0]
        lost = "came back without its row twice: the client's output was lost"
        raise InfraError(f"{what or statement} on {self.alias} {lost}")

    async def value(self, expression: str) -> str | None:
        """`SELECT expression`: None is SQL's NULL (`row`: one row, always)."""
        return (await self.row(f"SELECT {expression} AS v", f"SELECT {expression}")).get("v")

    async def checksum(self, table: str) -> str | None:
        """`CHECKSUM TABLE table`: NULL for a table that is not there (`row`: one row, always)."""
        return (await self.row(f"CHECKSUM TABLE {table}")).get("Checksum")

    async def ping(self) -> None:
        await self.query("SELECT 1 AS ok", timeout=self.ctx.scaled(10))

    async def wait_ready(self) -> None:
        await self.ctx.wait_ready(
            self.container, self.ping, what=f"a SQL round trip over TCP to {self.alias}", port=PORT
        )

    async def version(self) -> str:
        return await self.value("@@version") or ""


async def start_server(
    ctx: ProbeContext,
    role: str,
    *,
    image: str | None = None,
    args: Sequence[str] = (),
    root: Secret | None = None,
    flavor: str | None = None,
    env: Mapping[str, str] | None = None,
    volumes: Mapping[str, str] | None = None,
    entrypoint: Sequence[str] | None = None,
    command: Sequence[str] | None = None,
    files: Mapping[str, bytes | Secret] | None = None,
    wait: bool = True,
) -> Server:
    """Start a server container (role = its alias on the cell network) and, unless
    `wait` is False, wait until it answers SQL over TCP. `files` are put into the
    container before it starts (config files, secrets), next to the root password file."""
    ref = image or ctx.image_ref
    kind = flavor or flavor_of(ref, ctx.options.get("flavor"))
    secret = root or ctx.secret(f"{role}-root")
    full_env = {**root_env(kind), **(env or {})}
    if command is None and args:
        command = [server_binary(kind), *args]
    container = await ctx.start_container(
        role,
        image=image,
        env=full_env,
        files={ROOT_SECRET_PATH: secret, **ctx.client_option_file("root", secret), **(files or {})},
        command=command,
        entrypoint=entrypoint,
        volumes=volumes,
        cpuset_cpus=ctx.cpuset("server"),  # None unless the cell benchmarks (then: apart from sysbench)
    )
    server = Server(ctx, container, secret, kind)
    if wait:
        await server.wait_ready()
    return server


async def same_checksum(source: Server, table: str, copy: Server, copy_table: str, copy_word: str) -> str:
    """The check that a copy (`copy_word`: "loaded", "restored") holds the source's table:
    CHECKSUM TABLE on both servers, equal and not NULL. A refused statement or a different
    sum is the component's (CheckFailed)."""
    try:
        a = await source.checksum(table)
        b = await copy.checksum(copy_table)
    except SqlError as exc:
        raise CheckFailed(str(exc)) from None
    if not a or a != b:
        raise CheckFailed(f"CHECKSUM TABLE differs: source {a}, {copy_word} {b}")
    return f"CHECKSUM TABLE {a} on both"
