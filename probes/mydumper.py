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

from ecoready.probe_api import CheckFailed
from ecoready.probes.shared.dump_load import (
    COPY_DB,
    SEED,
    SOURCE_CNF,
    SOURCE_DB,
    TARGET_CNF,
    DumpLoadProbe,
    option_file,
)

# SEED and the database names are the shared module's; the tests read them here too
__all__ = [
    "COPY_DB",
    "DUMP_DIR",
    "SEED",
    "SOURCE_DB",
    "MydumperProbe",
    "dump_command",
    "load_command",
    "tool_option_file",
]

DUMP_DIR = "/tmp/ecoready-dump"
GROUPS = ("client", "mydumper", "myloader")


def tool_option_file(host: str, password: str) -> bytes:
    """Read by mydumper ([mydumper]), myloader ([myloader]) and the client ([client])."""
    return option_file(host, password, GROUPS)


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


class MydumperProbe(DumpLoadProbe):
    kind = "mydumper"
    groups = GROUPS

    async def smoke(self) -> None:
        if await self.ctx.check("mydumper", self._dump) and await self.ctx.check("myloader", self._load):
            await self.ctx.check("checksum-equal", self.checksum)

    async def _dump(self) -> str:
        await self.run_tool(dump_command(SOURCE_CNF, self.source.alias))
        listing = await self.ctx.exec(self.tools, ["sh", "-c", f"ls {DUMP_DIR} | wc -l"], timeout=self.ctx.scaled(20))
        files = listing.stdout.strip()
        if not listing.ok or not files.isdigit() or int(files) < 3:
            raise CheckFailed(f"the dump directory holds {files or 'nothing'} files")
        return f"{SOURCE_DB} dumped to {files} files"

    async def _load(self) -> str:
        await self.run_tool(load_command(TARGET_CNF, self.target.alias))
        return await self.loaded_rows()


PROBE = MydumperProbe
