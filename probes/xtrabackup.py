"""Percona XtraBackup: the flow of probes/shared/physical_backup.py with `xtrabackup` from the
component's image against servers of the backend's image (MySQL or Percona Server).

The source and the restored server come from the backend component's image (the probe
starts them itself: their datadirs must be volumes the tool container shares). The
`percona/percona-xtrabackup` image has the tool and a MySQL client; its entrypoint only
sends telemetry and then runs the command. `xtrabackup` reads connection options from
`[xtrabackup]` (and `[client]`).

Version rule (docs/image-contracts.md "Percona XtraBackup"; pxb-docs
`server-backup-version-comparison.md`): the XtraBackup major line must match the server's
(8.0 with 8.0, 8.4 with 8.4, 9.7 with 9.7); a server of another line makes the backup stop
with an error unless `--no-server-version-check` overrides it (which risks a corrupt
backup, so the probe never does). On the 8.0 line before 8.0.34 a server newer than
XtraBackup also stops it (pxb-docs 8.0). XtraBackup does not support MariaDB (that is
mariadb-backup). The rule is checked first and reported as the `version-rule` check; the
backup runs only when it holds.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ecoready.probe_api import BackendFailed, CheckFailed, EmulatorTooOld, StageFailed
from ecoready.probes.shared.physical_backup import BackupTool, PhysicalBackupProbe
from ecoready.probes.shared.sql_server import Server, flavor_of, start_server, version_numbers

TOOL = BackupTool(binary="xtrabackup", group="xtrabackup")
VERSION_QUERY = "SELECT @@version AS version, @@version_comment AS comment"
# print_version() in percona-xtrabackup's xtrabackup.cc: "%s version %s based on MySQL
# server %s %s (%s) (revision id: %s)" on stderr.
_TOOL_VERSION = re.compile(r"version (\d+\.\d+\.\d+(?:-\d+)?) based on MySQL server (\S+)")
_UNSUPPORTED = re.compile(r"Error: Unsupported server version[^\n]*")
CHECK_DISABLED_FROM = (8, 0, 34)  # PXB 8.0.34 stopped refusing newer 8.0 servers


def parse_tool_version(output: str) -> str | None:
    match = _TOOL_VERSION.search(output)
    return match.group(1) if match else None


@dataclass(frozen=True)
class Verdict:
    ok: bool
    detail: str


def version_rule(server_version: str, server_comment: str, tool_version: str) -> Verdict:
    """Whether XtraBackup `tool_version` can back up the server, and why (one line)."""
    if "mariadb" in f"{server_version} {server_comment}".lower():
        return Verdict(False, f"the server is MariaDB ({server_version}): XtraBackup does not support it")
    server, tool = version_numbers(server_version), version_numbers(tool_version)
    server_line, tool_line = "{}.{}".format(*server[:2]), "{}.{}".format(*tool[:2])
    if server[:2] != tool[:2]:
        relation = "newer" if server[:2] > tool[:2] else "older"
        return Verdict(
            False,
            f"server {server_version} is on the {server_line} line, {relation} than XtraBackup {tool_version} "
            f"({tool_line}): the backup would stop; it needs XtraBackup {server_line}",
        )
    if tool[:2] == (8, 0) and server > tool and tool < CHECK_DISABLED_FROM:
        return Verdict(
            False,
            f"server {server_version} is newer than XtraBackup {tool_version}: before 8.0.34 the backup would stop",
        )
    return Verdict(True, f"server {server_version} and XtraBackup {tool_version}: both on the {server_line} line")


def unsupported_version(output: str) -> str | None:
    """XtraBackup's refusal line, e.g. `Error: Unsupported server version 8.0.23-0ubuntu0.20.04.1.`"""
    match = _UNSUPPORTED.search(output)
    return match.group(0).strip() if match else None


class XtrabackupProbe(PhysicalBackupProbe):
    kind = "xtrabackup"
    tool = TOOL

    def server_image(self) -> str | None:
        backend = self.ctx.cell.backend
        return backend.image if backend else None

    def server_flavor(self) -> str | None:
        backend = self.ctx.cell.backend
        return flavor_of(backend.image, backend.options.get("flavor")) if backend else None

    async def start_source(self, volumes: dict[str, str]) -> Server:
        """The server XtraBackup backs up is the backend's: if it does not start, that is not
        XtraBackup's fault (the cell ends as `error` naming the backend)."""
        backend = self.ctx.cell.backend
        if backend is None:
            raise StageFailed(f"{self.ctx.cell.component.id} has no backend server configured")
        try:
            return await start_server(
                self.ctx, "source", image=backend.image, flavor=self.server_flavor(), volumes=volumes
            )
        except EmulatorTooOld:
            raise  # the runner retries with QEMU_CPU=max
        except StageFailed as exc:
            raise BackendFailed(f"backend {backend.id} did not start: {exc}") from None

    async def start(self) -> None:
        await super().start()
        self.ctx.main = self.tool_container  # the component under test is the tool

    async def preflight(self) -> bool:
        return await self.ctx.check("version-rule", self._version_rule)

    async def _version_rule(self) -> str:
        rows = await self.source.query(VERSION_QUERY)
        server_version = (rows[0].get("version") or "") if rows else ""
        comment = (rows[0].get("comment") or "") if rows else ""
        result = await self.ctx.exec(self.tool_container, [TOOL.binary, "--version"], timeout=self.ctx.scaled(30))
        tool_version = parse_tool_version(result.stderr + result.stdout)
        if tool_version is None:
            raise CheckFailed(f"`xtrabackup --version` printed no version: {result.last_line()}")
        verdict = version_rule(server_version, comment, tool_version)
        if not verdict.ok:
            raise CheckFailed(verdict.detail)
        return verdict.detail

    def explain_failure(self, output: str) -> str | None:
        refusal = unsupported_version(output)
        return f"{refusal} (XtraBackup's line must match the server's)" if refusal else None


PROBE = XtrabackupProbe
