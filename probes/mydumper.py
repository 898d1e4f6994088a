"""mydumper/myloader: dump a schema from the backend server with mydumper, load it into a
second server with myloader, and compare CHECKSUM TABLE.

The component image holds the tools (like `mydumper/mydumper`, no entrypoint: the command
is the tool); both servers come from the backend's image on the cell network. Credentials
reach the tools in option files (`--defaults-file`), never on the command line: mydumper
v1.0 takes `port` from its own group and leaves user, password and host to the client
library, which reads `[client]` (src/common.c, `load_config_file` and
`parse_key_file_group`); 0.10 passes the file to the client library as it is.

Against MySQL 8.4 (caching_sha2_password) nothing changes: the upstream image links
MySQL 8.4's client library, which uses TLS by default. `myloader -o` is
`--overwrite-tables` in 0.10 and `--drop-table` (mode DROP when given without a value) in
v1.0; the copy database is new, so it only matters for a re-run.
"""

from __future__ import annotations

from ecoready.probe_api import CheckFailed, Probe, SqlError, StageFailed
from ecoready.probes.shared.sql_server import Server, hex32, numbers, start_server

SOURCE_DB = "ecoready_dump"
COPY_DB = "ecoready_copy"
DUMP_DIR = "/tmp/ecoready-dump"
ROWS = 2000
SEED = (
    f"CREATE DATABASE {SOURCE_DB}; "
    f"CREATE TABLE {SOURCE_DB}.t (id INT PRIMARY KEY, v CHAR(32) NOT NULL, n DOUBLE) ENGINE=InnoDB; "
    f"INSERT INTO {SOURCE_DB}.t SELECT n, {hex32('n')}, n / 7 FROM {numbers(ROWS)}; "
    f"CREATE TABLE {SOURCE_DB}.empty_one (id INT PRIMARY KEY) ENGINE=InnoDB"
)


def tool_option_file(host: str, password: str) -> bytes:
    """Read by mydumper ([mydumper]), myloader ([myloader]) and the client ([client])."""
    escaped = password.replace("\\", "\\\\").replace('"', '\\"')
    body = f'user=root\npassword="{escaped}"\nhost={host}\nport=3306\n'
    return "".join(f"[{group}]\n{body}" for group in ("client", "mydumper", "myloader")).encode()


def dump_command(cnf: str, host: str) -> list[str]:
    return [
        "mydumper",
        f"--defaults-file={cnf}",
        "-h",
        host,
        "-P",
        "3306",
        "-B",
        SOURCE_DB,
        "-o",
        DUMP_DIR,
        "-t",
        "2",
        "--verbose",
        "3",
    ]


def load_command(cnf: str, host: str) -> list[str]:
    return [
        "myloader",
        f"--defaults-file={cnf}",
        "-h",
        host,
        "-P",
        "3306",
        "-d",
        DUMP_DIR,
        "-B",
        COPY_DB,
        "-o",
        "-t",
        "2",
        "--verbose",
        "3",
    ]


class MydumperProbe(Probe):
    kind = "mydumper"

    async def start(self) -> None:
        ctx = self.ctx
        backend = await ctx.backend()
        backend_image = ctx.cell.backend.image if ctx.cell.backend else None
        self.target: Server = await start_server(ctx, "target", image=backend_image)
        self.tools = await ctx.start_container(
            "tools",
            command=["sleep", "infinity"],
            files={
                "/run/ecoready/source.cnf": tool_option_file(backend.host, backend.password.reveal()),
                "/run/ecoready/target.cnf": tool_option_file(self.target.alias, self.target.root.reveal()),
            },
        )
        self.source = Server(ctx, backend.container, backend.password, backend.flavor)
        await self.source.query(SEED)
        state = await ctx.state(self.tools)
        if not state.running:
            raise StageFailed(await ctx.why_stopped(self.tools))
        self.endpoint = backend

    async def smoke(self) -> None:
        if await self.ctx.check("mydumper", self._dump) and await self.ctx.check("myloader", self._load):
            await self.ctx.check("checksum-equal", self._checksum)

    async def _run(self, argv: list[str]) -> str:
        result = await self.ctx.exec(self.tools, argv, timeout=self.ctx.scaled(120))
        if not result.ok:
            raise CheckFailed(f"`{argv[0]}` exit {result.exit_code}: {result.last_line()}")
        return result.stdout + result.stderr

    async def _dump(self) -> str:
        await self._run(dump_command("/run/ecoready/source.cnf", self.source.alias))
        listing = await self.ctx.exec(self.tools, ["sh", "-c", f"ls {DUMP_DIR} | wc -l"], timeout=self.ctx.scaled(20))
        files = listing.stdout.strip()
        if not listing.ok or not files.isdigit() or int(files) < 3:
            raise CheckFailed(f"the dump directory holds {files or 'nothing'} files")
        return f"{SOURCE_DB} dumped to {files} files"

    async def _load(self) -> str:
        await self._run(load_command("/run/ecoready/target.cnf", self.target.alias))
        rows = await self.target.query(f"SELECT COUNT(*) AS n FROM {COPY_DB}.t")
        if not rows or rows[0].get("n") != str(ROWS):
            raise CheckFailed(f"the loaded table has {rows[0].get('n') if rows else 'no'} rows, expected {ROWS}")
        return f"loaded into {self.target.alias} as {COPY_DB} ({ROWS} rows)"

    async def _checksum(self) -> str:
        try:
            a = await self.source.query(f"CHECKSUM TABLE {SOURCE_DB}.t")
            b = await self.target.query(f"CHECKSUM TABLE {COPY_DB}.t")
        except SqlError as exc:
            raise CheckFailed(str(exc)) from None
        left, right = (a[0].get("Checksum") if a else None), (b[0].get("Checksum") if b else None)
        if not left or left != right:
            raise CheckFailed(f"CHECKSUM TABLE differs: source {left}, loaded {right}")
        return f"CHECKSUM TABLE {left} on both"


PROBE = MydumperProbe
