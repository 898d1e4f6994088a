"""A logical dump from one server loaded into a second one, what the mydumper and dump
probes share: the seeded schema, the two servers and the tools container, the option files
that carry the credentials (`--defaults-file`, never an argv), and the checks on the copy
(its rows, CHECKSUM TABLE against the source's).

The source is the cell's backend; the target is a second server of the backend's image on
the cell network; the tools run in a container of the component's image (the command is
the tool: `sleep infinity` keeps it up).
"""

from __future__ import annotations

from typing import ClassVar

from ecoready.probe_api import CheckFailed, Probe, StageFailed
from ecoready.probes.shared.sql_server import Server, hex32, numbers, same_checksum, start_server

SOURCE_DB = "ecoready_dump"
COPY_DB = "ecoready_copy"
ROWS = 2000
SEED = (
    f"CREATE DATABASE {SOURCE_DB}; "
    f"CREATE TABLE {SOURCE_DB}.t (id INT PRIMARY KEY, v CHAR(32) NOT NULL, n DOUBLE) ENGINE=InnoDB; "
    f"INSERT INTO {SOURCE_DB}.t SELECT n, {hex32('n')}, n / 7 FROM {numbers(ROWS)}; "
    f"CREATE TABLE {SOURCE_DB}.empty_one (id INT PRIMARY KEY) ENGINE=InnoDB"
)
SOURCE_CNF = "/run/ecoready/source.cnf"
TARGET_CNF = "/run/ecoready/target.cnf"


def option_file(host: str, password: str, groups: tuple[str, ...]) -> bytes:
    """The same login under each group a tool reads (`[client]` for the client library)."""
    escaped = password.replace("\\", "\\\\").replace('"', '\\"')
    body = f'user=root\npassword="{escaped}"\nhost={host}\nport=3306\n'
    return "".join(f"[{group}]\n{body}" for group in groups).encode()


class DumpLoadProbe(Probe):
    """start: seed the backend, start the target server and the tools container."""

    seed: ClassVar[str] = SEED
    # more objects, created in the seeded database as their users create them (`USE` it,
    # names unqualified): MariaDB keeps a trigger's statement text as written, so a
    # qualified `ON ecoready_dump.t` would stay in its dump and load into the same schema
    objects: ClassVar[str] = ""
    groups: ClassVar[tuple[str, ...]] = ("client",)  # the option file's groups

    async def start(self) -> None:
        ctx = self.ctx
        backend = await ctx.backend()
        backend_image = ctx.cell.backend.image if ctx.cell.backend else None
        self.target: Server = await start_server(ctx, "target", image=backend_image)
        self.tools = await ctx.start_container(
            "tools",
            command=["sleep", "infinity"],
            files={
                SOURCE_CNF: option_file(backend.host, backend.password.reveal(), self.groups),
                TARGET_CNF: option_file(self.target.alias, self.target.root.reveal(), self.groups),
            },
        )
        self.source = Server(ctx, backend.container, backend.password, backend.flavor)
        await self.source.query(self.seed)
        if self.objects:
            await self.source.query(self.objects, database=SOURCE_DB)
        state = await ctx.state(self.tools)
        if not state.running:
            raise StageFailed(await ctx.why_stopped(self.tools))
        self.endpoint = backend

    async def run_tool(self, argv: list[str], *, limit: float = 120) -> str:
        """Run a tool in the tools container; its exit code decides (CheckFailed otherwise)."""
        result = await self.ctx.exec(self.tools, argv, timeout=self.ctx.scaled(limit))
        if not result.ok:
            name = argv[3] if argv[:2] == ["sh", "-c"] and len(argv) > 3 else argv[0]
            raise CheckFailed(f"`{name}` exit {result.exit_code}: {result.last_line()}")
        return result.stdout + result.stderr

    async def loaded_rows(self) -> str:
        rows = await self.target.query(f"SELECT COUNT(*) AS n FROM {COPY_DB}.t")
        if not rows or rows[0].get("n") != str(ROWS):
            raise CheckFailed(f"the loaded table has {rows[0].get('n') if rows else 'no'} rows, expected {ROWS}")
        return f"loaded into {self.target.alias} as {COPY_DB} ({ROWS} rows)"

    async def checksum(self) -> str:
        return await same_checksum(self.source, f"{SOURCE_DB}.t", self.target, f"{COPY_DB}.t", "loaded")
