"""mariadb-backup: backup -> prepare -> restore into a fresh server -> CHECKSUM TABLE equal.

The backup goes to a volume shared by the source and the restored server. The restored
server copies the prepared backup into its own empty datadir before the image's
entrypoint starts it (the entrypoint then skips initialisation, as the official image
does for an existing datadir). Credentials reach mariadb-backup in an option file.
"""

from __future__ import annotations

from app.sql import SqlError
from probes.base import CheckFailed, Probe
from probes.servers import Server, numbers, start_server

DATABASE = "ecoready_backup"
TARGET = "/backup/full"
OPTION_FILE = "/run/ecoready/backup.cnf"
ROWS = 2000
SEED = (
    f"CREATE DATABASE {DATABASE}; "
    f"CREATE TABLE {DATABASE}.t (id INT PRIMARY KEY, v CHAR(32) NOT NULL) ENGINE=InnoDB; "
    f"INSERT INTO {DATABASE}.t SELECT n, MD5(n) FROM {numbers(ROWS)}"
)
CHECKSUM = f"CHECKSUM TABLE {DATABASE}.t"


def backup_option_file(password: str) -> bytes:
    """mariadb-backup reads [mariadb-backup] (and [mariabackup], [xtrabackup]), not [client]."""
    escaped = password.replace("\\", "\\\\").replace('"', '\\"')
    return f'[mariadb-backup]\nuser=root\npassword="{escaped}"\nhost=127.0.0.1\nport=3306\nprotocol=TCP\n'.encode()


def restore_entrypoint(target: str = TARGET) -> list[str]:
    """Copy the prepared backup into the (empty) datadir, then run the image's entrypoint."""
    return [
        "bash",
        "-c",
        f"set -e; mariadb-backup --copy-back --target-dir={target} --datadir=/var/lib/mysql; "
        "chown -R mysql:mysql /var/lib/mysql; exec docker-entrypoint.sh mariadbd",
    ]


def completed_ok(output: str) -> bool:
    return "completed OK!" in output


class MariabackupProbe(Probe):
    kind = "mariabackup"

    async def start(self) -> None:
        self.volume = await self.ctx.volume("backup")
        self.source = await start_server(self.ctx, "source", volumes={self.volume: "/backup"})
        await self.source.query(SEED)
        await self.ctx.put_files(self.source.container, {OPTION_FILE: backup_option_file(self.source.root.reveal())})
        self.endpoint = self.source.endpoint

    async def smoke(self) -> None:
        if await self.ctx.check("backup", self._backup) and await self.ctx.check("prepare", self._prepare):
            restored = await self.ctx.check("restore", self._restore)
            if restored:
                await self.ctx.check("checksum-equal", self._checksum)

    async def _tool(self, *args: str) -> str:
        argv = ["mariadb-backup", f"--defaults-extra-file={OPTION_FILE}", *args]
        result = await self.ctx.exec(self.source.container, argv, timeout=self.ctx.scaled(180))
        output = result.stdout + result.stderr
        if not result.ok or not completed_ok(output):
            raise CheckFailed(f"`{' '.join(argv[:1] + list(args))}` exit {result.exit_code}: {result.last_line()}")
        return output

    async def _backup(self) -> str:
        await self._tool("--backup", f"--target-dir={TARGET}")
        return f"backup of {ROWS} rows to {TARGET}: completed OK!"

    async def _prepare(self) -> str:
        await self._tool("--prepare", f"--target-dir={TARGET}")
        return "prepare: completed OK!"

    async def _restore(self) -> str:
        self.restored: Server = await start_server(
            self.ctx,
            "restored",
            root=self.source.root,
            volumes={self.volume: "/backup"},
            entrypoint=restore_entrypoint(),
            wait=False,
        )
        await self.restored.wait_ready()
        return "copy-back into a fresh server, which started on it"

    async def _checksum(self) -> str:
        try:
            source = await self.source.query(CHECKSUM)
            restored = await self.restored.query(CHECKSUM)
        except SqlError as exc:
            raise CheckFailed(str(exc)) from None
        a, b = (source[0].get("Checksum") if source else None), (restored[0].get("Checksum") if restored else None)
        if not a or a != b:
            raise CheckFailed(f"CHECKSUM TABLE differs: source {a}, restored {b}")
        return f"CHECKSUM TABLE {a} on both"


PROBE = MariabackupProbe
