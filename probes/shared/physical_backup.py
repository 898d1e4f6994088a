"""Physical backups, one flow for mariadb-backup (probes/mariabackup.py) and Percona
XtraBackup (probes/xtrabackup.py): backup -> prepare -> copy-back into a fresh server ->
CHECKSUM TABLE equal.

- The source server runs with its datadir on a volume and gets a seeded table.
- The tool runs in a container of its own, as root (like the tools' docs: `docker run
  --volumes-from <server> --user root ...`), with the source's datadir mounted at the same
  path, a backup volume and an empty restore volume. It logs in to the source over TCP with
  an option file in its own group, so no password is on its command line.
- copy-back writes into the restore volume, which is then given to the owner of the
  source's datadir (the server image's mysql user: uid 999 in docker-library images, 1001
  in Percona's). A fresh server container of the server image starts on it: its entrypoint
  finds an initialised datadir and skips set-up; root's password is the source's, because
  the users come from the backup.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ecoready.probe_api import CheckFailed, Probe, StageFailed
from ecoready.probes.shared.sql_server import Server, hex32, numbers, same_checksum, start_server

DATADIR = "/var/lib/mysql"
BACKUP_DIR = "/backup"
TARGET = "/backup/full"
RESTORE_DIR = "/restore"
OPTION_FILE = "/run/ecoready/backup.cnf"
DATABASE = "ecoready_backup"
ROWS = 2000
SEED = (
    f"CREATE DATABASE {DATABASE}; "
    f"CREATE TABLE {DATABASE}.t (id INT PRIMARY KEY, v CHAR(32) NOT NULL) ENGINE=InnoDB; "
    f"INSERT INTO {DATABASE}.t SELECT n, {hex32('n')} FROM {numbers(ROWS)}"
)
TABLE = f"{DATABASE}.t"


@dataclass(frozen=True)
class BackupTool:
    binary: str  # what the image calls the tool
    group: str  # the option-file group it reads its connection options from


def option_file(tool: BackupTool, host: str, password: str) -> bytes:
    """Connection options for the tool (`--defaults-extra-file`, which must come first)."""
    escaped = password.replace("\\", "\\\\").replace('"', '\\"')
    return f'[{tool.group}]\nuser=root\npassword="{escaped}"\nhost={host}\nport=3306\n'.encode()


def tool_command(tool: BackupTool, *args: str) -> list[str]:
    return [tool.binary, f"--defaults-extra-file={OPTION_FILE}", *args]


def backup_args() -> list[str]:
    return ["--backup", f"--target-dir={TARGET}", f"--datadir={DATADIR}"]


def prepare_args() -> list[str]:
    return ["--prepare", f"--target-dir={TARGET}"]


def copy_back_args() -> list[str]:
    return ["--copy-back", f"--target-dir={TARGET}", f"--datadir={RESTORE_DIR}"]


# The restored files belong to whoever owns the source's datadir in the server image.
CHOWN_RESTORED = ["chown", "-R", f"--reference={DATADIR}", RESTORE_DIR]


def completed_ok(output: str) -> bool:
    """Both tools end a successful run with `completed OK!` (on stderr)."""
    return "completed OK!" in output


class PhysicalBackupProbe(Probe):
    tool: ClassVar[BackupTool]

    # -- what differs between the tools ---------------------------------------------------
    def server_image(self) -> str | None:
        """The image of the source and restored servers (None: the component's own)."""
        return None

    def tool_image(self) -> str | None:
        """The image the tool runs from (None: the component's own)."""
        return None

    def server_flavor(self) -> str | None:
        return None

    async def start_source(self, volumes: dict[str, str]) -> Server:
        return await start_server(self.ctx, "source", image=self.server_image(), volumes=volumes)

    async def preflight(self) -> bool:
        """Checks that decide whether a backup can work at all (XtraBackup's version rule)."""
        return True

    def explain_failure(self, output: str) -> str | None:
        """A clearer reason for a failed run, when the tool's output names one."""
        return None

    # -- the shared flow --------------------------------------------------------------------
    async def start(self) -> None:
        ctx = self.ctx
        data, backup, restore = [await ctx.volume(name) for name in ("data", "backup", "restore")]
        self.restore_volume = restore
        self.source = await self.start_source({data: DATADIR})
        await self.source.query(SEED)
        self.tool_container = await ctx.start_container(
            "backup-tool",
            image=self.tool_image(),
            command=["sleep", "infinity"],
            user="root",
            volumes={data: DATADIR, backup: BACKUP_DIR, restore: RESTORE_DIR},
            files={OPTION_FILE: option_file(self.tool, self.source.alias, self.source.root.reveal())},
        )
        state = await ctx.state(self.tool_container)
        if not state.running:
            raise StageFailed(await ctx.why_stopped(self.tool_container))
        self.endpoint = self.source.endpoint

    async def smoke(self) -> None:
        if not await self.preflight():
            return
        if await self.ctx.check("backup", self._backup) and await self.ctx.check("prepare", self._prepare):
            restored = await self.ctx.check("restore", self._restore)
            if restored:
                await self.ctx.check("checksum-equal", self._checksum)

    async def run_tool(self, *args: str) -> str:
        argv = tool_command(self.tool, *args)
        result = await self.ctx.exec(self.tool_container, argv, timeout=self.ctx.scaled(180))
        output = result.stdout + result.stderr
        if not result.ok or not completed_ok(output):
            reason = self.explain_failure(output) or result.last_line()
            raise CheckFailed(f"`{self.tool.binary} {' '.join(args[:1])}` exit {result.exit_code}: {reason}")
        return output

    async def _backup(self) -> str:
        await self.run_tool(*backup_args())
        return f"backup of {ROWS} rows to {TARGET}: completed OK!"

    async def _prepare(self) -> str:
        await self.run_tool(*prepare_args())
        return "prepare: completed OK!"

    async def _restore(self) -> str:
        await self.run_tool(*copy_back_args())
        owned = await self.ctx.exec(self.tool_container, CHOWN_RESTORED, timeout=self.ctx.scaled(60))
        if not owned.ok:
            raise CheckFailed(f"could not give the restored files to the datadir's owner: {owned.last_line()}")
        self.restored: Server = await start_server(
            self.ctx,
            "restored",
            image=self.server_image(),
            flavor=self.server_flavor(),
            root=self.source.root,
            volumes={self.restore_volume: DATADIR},
            wait=False,
        )
        await self.restored.wait_ready()
        return "copy-back into an empty datadir; a fresh server started on it"

    async def _checksum(self) -> str:
        return await same_checksum(self.source, TABLE, self.restored, TABLE, "restored")
