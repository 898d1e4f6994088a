"""The server probe: MariaDB, MySQL and Percona Server images with the official contract.

start: the root password goes in as a file (`*_ROOT_PASSWORD_FILE`); ready means a SQL
round trip over TCP (the entrypoint's temporary init server has no network, so a log line
or a socket ping would lie). smoke: CRUD on a fresh table, the version, and
@@version_compile_machine against the cell's arch. bench: sysbench against the server
(`app/bench.py`), which then runs pinned to its own half of the host's CPUs.
"""

from __future__ import annotations

from app.bench import bench_detail, run_bench
from app.model import UNAME_MACHINE
from app.sql import SqlTarget
from probes.base import CheckFailed, Endpoint, Probe

SECRET_PATH = "/run/ecoready/root-password"  # noqa: S105 - a path
SMOKE_DB = "ecoready_smoke"


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


def server_env(flavor: str, secret_path: str) -> dict[str, str]:
    if flavor == "mariadb":
        return {"MARIADB_ROOT_PASSWORD_FILE": secret_path, "MARIADB_ROOT_HOST": "%"}
    env = {"MYSQL_ROOT_PASSWORD_FILE": secret_path, "MYSQL_ROOT_HOST": "%"}
    if flavor == "percona":
        env["PERCONA_TELEMETRY_DISABLE"] = "1"  # the image otherwise calls home
    return env


def server_command(flavor: str, args: list[str]) -> list[str] | None:
    if not args:
        return None
    return ["mariadbd" if flavor == "mariadb" else "mysqld", *args]


CRUD_SETUP = (
    f"CREATE DATABASE IF NOT EXISTS {SMOKE_DB}; "
    f"CREATE TABLE {SMOKE_DB}.crud (id INT PRIMARY KEY AUTO_INCREMENT, v VARCHAR(64) NOT NULL) ENGINE=InnoDB; "
    f"INSERT INTO {SMOKE_DB}.crud (v) VALUES ('one'), ('two'); "
    f"UPDATE {SMOKE_DB}.crud SET v = 'deux' WHERE v = 'two'; "
    f"SELECT COUNT(*) AS n, SUM(v = 'deux') AS updated FROM {SMOKE_DB}.crud"
)
CRUD_TEARDOWN = f"DELETE FROM {SMOKE_DB}.crud WHERE id > 0; SELECT COUNT(*) AS n FROM {SMOKE_DB}.crud"
CRUD_DROP = f"DROP TABLE {SMOKE_DB}.crud; DROP DATABASE {SMOKE_DB}"


class ServerProbe(Probe):
    kind = "server"

    async def start(self) -> None:
        ctx = self.ctx
        self.flavor = flavor_of(ctx.image_ref, ctx.options.get("flavor"))
        self.root = ctx.secret("root")
        env = {**server_env(self.flavor, SECRET_PATH), **{k: str(v) for k, v in ctx.options.get("env", {}).items()}}
        args = [str(a) for a in ctx.options.get("args", [])]
        self.container = await ctx.start_container(
            "server",
            env=env,
            files={SECRET_PATH: self.root},
            command=server_command(self.flavor, args),
            cpuset_cpus=ctx.cpuset("server"),
        )
        self.target = SqlTarget("127.0.0.1", 3306, "root")
        await ctx.wait_ready(self.container, self._ping, what="a SQL round trip over TCP")
        self.endpoint = Endpoint(
            host=self.container.alias,
            port=3306,
            user="root",
            password=self.root,
            container=self.container,
            flavor=self.flavor,
        )

    async def _ping(self) -> None:
        await self.query("SELECT 1 AS ok", timeout=self.ctx.scaled(10))

    async def query(self, statement: str, timeout: float | None = None) -> list[dict[str, str | None]]:
        return await self.ctx.sql(self.container, self.target, self.root, statement, timeout=timeout)

    async def smoke(self) -> None:
        await self.ctx.check("crud", self._crud)
        await self.ctx.check("version", self._version)
        await self.ctx.check("arch", self._arch)

    async def bench(self) -> str:
        assert self.endpoint is not None
        return bench_detail(await run_bench(self.ctx, self.endpoint))

    async def _crud(self) -> str:
        rows = await self.query(CRUD_SETUP)
        if not rows or rows[0].get("n") != "2" or rows[0].get("updated") != "1":
            raise CheckFailed(f"after 2 inserts and 1 update expected n=2 updated=1, got {rows}")
        rows = await self.query(CRUD_TEARDOWN)
        if not rows or rows[0].get("n") != "0":
            raise CheckFailed(f"after delete expected 0 rows, got {rows}")
        await self.query(CRUD_DROP)
        return "create, insert, update, select, delete, drop"

    async def _version(self) -> str:
        rows = await self.query("SELECT @@version AS version, @@version_comment AS comment")
        if not rows or not rows[0].get("version"):
            raise CheckFailed("SELECT @@version returned nothing")
        return f"{rows[0]['version']} ({rows[0].get('comment') or ''})"

    async def _arch(self) -> str:
        rows = await self.query("SELECT @@version_compile_machine AS machine")
        machine = (rows[0].get("machine") or "") if rows else ""
        expected = UNAME_MACHINE.get(self.ctx.arch, self.ctx.arch)
        if machine != expected:
            raise CheckFailed(f"@@version_compile_machine is {machine!r}, expected {expected!r} for {self.ctx.arch}")
        return machine


PROBE = ServerProbe
