"""The physical-backup flow (probes/shared/physical_backup.py) as xtrabackup and mariabackup run
it, over a fake engine: containers, volumes and option files, the tool's command
sequence, XtraBackup's version rule, and how a refusal is reported.

Canned formats:
- `xtrabackup --version` on stderr: `xtrabackup version 8.4.0-6 based on MySQL server
  8.4.0 Linux (x86_64) (revision id: 0c6bf3d6)` (print_version() in percona-xtrabackup
  storage/innobase/xtrabackup/src/xtrabackup.cc).
- the end of a successful run: `... completed OK!` (both tools; pxb-docs quickstart, the
  lab's mariadb-backup).
- XtraBackup refusing a server: `Error: Unsupported server version 8.0.23-0ubuntu0.20.04.1.`
  then `Please upgrade PXB, if a new version is available. To continue with risk, use the
  option --no-server-version-check.` (quoted from xtrabackup's stderr in Vitess' backup
  docs).
- `SELECT @@version, @@version_comment` of `percona/percona-server:8.4`: `8.4.10-10`,
  `Percona Server (GPL), Release 10, Revision 5eb4d2bc`.
"""

from __future__ import annotations

from typing import Any

import pytest

from ecoready.domain.errors import BackendFailed
from ecoready.domain.model import Category
from ecoready.probes.mariabackup import MariabackupProbe
from ecoready.probes.shared.physical_backup import OPTION_FILE, SEED, TABLE
from ecoready.probes.xtrabackup import (
    VERSION_QUERY,
    XtrabackupProbe,
    parse_tool_version,
    unsupported_version,
    version_rule,
)
from tests.support.fake_host import FakeContainer, FakeHost, Sql, component, context, failed, ok, rig

PS84 = component("percona-server-8.4", "server", "percona/percona-server:8.4")
PXB = component(
    "xtrabackup-8.4",
    "xtrabackup",
    "percona/percona-xtrabackup:8.4",
    category=Category.BACKUP,
    backend="percona-server-8.4",
)
MARIABACKUP = component("mariadb-backup", "mariabackup", "mariadb:11.8", category=Category.BACKUP)
PXB_VERSION = "xtrabackup version 8.4.0-6 based on MySQL server 8.4.0 Linux (x86_64) (revision id: 0c6bf3d6)\n"
REFUSAL = (
    "Error: Unsupported server version 8.0.23-0ubuntu0.20.04.1.\n"
    "Please upgrade PXB, if a new version is available. To continue with risk, use the option "
    "--no-server-version-check.\n"
)


def servers(host: FakeHost, version: str = "8.4.10-10") -> None:
    @host.sql
    def server(call: Sql) -> list[dict[str, object]] | None:
        if call.via.role not in ("source", "restored"):
            return None
        if call.statement == "SELECT 1 AS ok":
            return [{"ok": 1}]
        if call.statement == SEED:
            assert call.via.role == "source"
            return []
        if call.statement == VERSION_QUERY:
            return [{"version": version, "comment": "Percona Server (GPL), Release 10, Revision 5eb4d2bc"}]
        if call.statement == f"CHECKSUM TABLE {TABLE}":
            return [{"Table": "ecoready_backup.t", "Checksum": 4055812508}]
        return None


def tool(host: FakeHost, binary: str, *, backup_output: str = "[00] 2026-11-21 23:20:01 completed OK!\n") -> list[str]:
    """The tool container: answers --version, backup, prepare, copy-back and the chown."""
    calls: list[str] = []

    @host.execs_to
    def run(container: FakeContainer, argv: list[str]) -> Any:
        if container.role != "backup-tool":
            return None
        if argv == [binary, "--version"]:
            calls.append("version")
            return ok(stderr=PXB_VERSION)
        if argv[:2] == [binary, f"--defaults-extra-file={OPTION_FILE}"]:
            calls.append(argv[2])
            if argv[2] == "--backup":
                return ok(stderr=backup_output) if "completed OK!" in backup_output else failed(1, backup_output)
            return ok(stderr="[00] 2026-11-21 23:20:03 completed OK!\n")
        if argv[0] == "chown":
            calls.append("chown")
            return ok()
        return None

    return calls


async def test_xtrabackup_backs_up_a_backend_server_and_restores_into_a_fresh_one() -> None:
    r = rig()
    servers(r.host)
    calls = tool(r.host, "xtrabackup")
    ctx = context(r, PXB, PS84)
    probe = XtrabackupProbe(ctx)
    await probe.start()
    await probe.smoke()
    checks = r.checks()
    assert {n: c.outcome.value for n, c in checks.items()} == {
        "version-rule": "pass",
        "backup": "pass",
        "prepare": "pass",
        "restore": "pass",
        "checksum-equal": "pass",
    }
    assert checks["version-rule"].detail == "server 8.4.10-10 and XtraBackup 8.4.0-6: both on the 8.4 line"
    assert calls == ["version", "--backup", "--prepare", "--copy-back", "chown"]

    source, pxb, restored = (r.host.by_role(role) for role in ("source", "backup-tool", "restored"))
    # the servers are the backend's image; the tool is the component's, as root
    assert source.spec.image == restored.spec.image == "img:percona/percona-server:8.4"
    assert source.spec.env["PERCONA_TELEMETRY_DISABLE"] == "1"
    assert pxb.spec.image == "img:percona/percona-xtrabackup:8.4" and pxb.spec.user == "root"
    assert pxb.spec.command == ("sleep", "infinity") and pxb.spec.entrypoint is None  # the image's entrypoint
    assert ctx.main is not None and ctx.main.role == "backup-tool"
    # one datadir volume shared by source and tool at the same path; the restore volume
    # becomes the restored server's datadir
    data = next(v for v, path in source.spec.volumes.items() if path == "/var/lib/mysql")
    restore = next(v for v, path in pxb.spec.volumes.items() if path == "/restore")
    assert pxb.spec.volumes[data] == "/var/lib/mysql" and "/backup" in pxb.spec.volumes.values()
    assert restored.spec.volumes == {restore: "/var/lib/mysql"}
    assert restored.files["/run/ecoready/root-password"] == source.files["/run/ecoready/root-password"]
    # the connection options: [xtrabackup], to the source over the network, not on argv
    cnf = pxb.files[OPTION_FILE].decode()
    password = source.files["/run/ecoready/root-password"].decode()
    assert cnf == f'[xtrabackup]\nuser=root\npassword="{password}"\nhost=source\nport=3306\n'
    argvs = r.host.argvs("backup-tool")
    assert ["xtrabackup", f"--defaults-extra-file={OPTION_FILE}", "--backup", "--target-dir=/backup/full",
            "--datadir=/var/lib/mysql"] in argvs  # fmt: skip
    assert ["xtrabackup", f"--defaults-extra-file={OPTION_FILE}", "--copy-back", "--target-dir=/backup/full",
            "--datadir=/restore"] in argvs  # fmt: skip
    assert ["chown", "-R", "--reference=/var/lib/mysql", "/restore"] in argvs
    assert all(password not in " ".join(argv) for _, argv in r.host.execs)


async def test_a_server_of_another_line_fails_the_version_rule_and_nothing_is_backed_up() -> None:
    r = rig()
    servers(r.host, version="9.7.1-1")
    calls = tool(r.host, "xtrabackup")
    probe = XtrabackupProbe(context(r, PXB, PS84))
    await probe.start()
    await probe.smoke()
    (check,) = r.checks().values()
    assert (check.name, check.outcome.value) == ("version-rule", "fail")
    assert check.detail == (
        "server 9.7.1-1 is on the 9.7 line, newer than XtraBackup 8.4.0-6 (8.4): the backup would stop; "
        "it needs XtraBackup 9.7"
    )
    assert calls == ["version"]


async def test_a_refused_backup_names_xtrabackups_reason() -> None:
    r = rig()
    servers(r.host)
    tool(r.host, "xtrabackup", backup_output=REFUSAL)
    probe = XtrabackupProbe(context(r, PXB, PS84))
    await probe.start()
    await probe.smoke()
    checks = r.checks()
    assert checks["backup"].outcome.value == "fail" and "prepare" not in checks
    assert checks["backup"].detail == (
        "`xtrabackup --backup` exit 1: Error: Unsupported server version 8.0.23-0ubuntu0.20.04.1. "
        "(XtraBackup's line must match the server's)"
    )


async def test_a_backend_server_that_does_not_start_is_the_backends_fault() -> None:
    r = rig()

    def crash(container: FakeContainer) -> None:
        if container.role == "source":
            container.running, container.exit_code = False, 1
            container.log = ["[ERROR] [MY-010119] [Server] Aborting"]

    r.host.on_run.append(crash)
    with pytest.raises(BackendFailed, match=r"backend percona-server-8\.4 did not start: exited with code 1"):
        await XtrabackupProbe(context(r, PXB, PS84)).start()


async def test_mariabackup_runs_the_same_flow_with_its_own_image_and_group() -> None:
    r = rig()
    servers(r.host)
    calls = tool(r.host, "mariadb-backup")
    probe = MariabackupProbe(context(r, MARIABACKUP))
    await probe.start()
    await probe.smoke()
    assert {n: c.outcome.value for n, c in r.checks().items()} == {
        "backup": "pass",
        "prepare": "pass",
        "restore": "pass",
        "checksum-equal": "pass",
    }
    assert calls == ["--backup", "--prepare", "--copy-back", "chown"]  # no version rule: same image
    source, tool_container = r.host.by_role("source"), r.host.by_role("backup-tool")
    assert source.spec.image == tool_container.spec.image == "img:mariadb:11.8"
    assert source.spec.env["MARIADB_ROOT_PASSWORD_FILE"] == "/run/ecoready/root-password"
    assert tool_container.files[OPTION_FILE].decode().startswith("[mariadb-backup]\nuser=root\n")


@pytest.mark.parametrize(
    ("server", "comment", "pxb", "ok"),
    [
        ("8.4.10-10", "Percona Server (GPL), Release 10", "8.4.0-6", True),  # any 8.4.x with PXB 8.4
        ("8.4.6", "MySQL Community Server - GPL", "8.4.0-6", True),
        ("8.0.41-32", "Percona Server (GPL), Release 32", "8.4.0-6", False),  # older line
        ("9.7.1", "MySQL Community Server - GPL", "8.4.0-6", False),  # newer line
        ("8.0.36-28", "Percona Server (GPL)", "8.0.35-30", True),  # 8.0.34+ no longer refuses newer 8.0
        ("8.0.33-25", "Percona Server (GPL)", "8.0.32-26", False),  # before 8.0.34: newer server stops it
        ("8.0.30", "MySQL Community Server - GPL", "8.0.32-26", True),  # older server, same line
        ("11.8.2-MariaDB-ubu2404", "mariadb.org binary distribution", "8.4.0-6", False),
    ],
)
def test_version_rule(server: str, comment: str, pxb: str, ok: bool) -> None:
    assert version_rule(server, comment, pxb).ok is ok


def test_tool_output_parsers() -> None:
    assert parse_tool_version(PXB_VERSION) == "8.4.0-6"
    assert parse_tool_version("bash: xtrabackup: command not found") is None
    assert unsupported_version(REFUSAL) == "Error: Unsupported server version 8.0.23-0ubuntu0.20.04.1."
    assert unsupported_version("[00] completed OK!") is None
    assert "MariaDB" in version_rule("10.11.6-MariaDB", "", "8.4.0-6").detail
