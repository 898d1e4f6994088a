"""mydumper and percona-toolkit against MySQL 8.4 / Percona Server 8.4 backends, the rows
of the default matrix, over a fake engine: containers of the upstream tool images, the
option files and command lines (no password on an argv), the login that warms MySQL
8.4's caching_sha2_password cache, and the parsing of the tools' real output.

Canned formats:
- pt-summary: `# Percona Toolkit System Summary Report ####...` and `Architecture | CPU =
  64-bit, OS = 64-bit` (section() and name_val() in bin/pt-summary, NAME_VAL_LEN=12).
- pt-mysql-summary: `# Percona Toolkit MySQL Summary Report ###...` and `Version |
  <version> <version_comment>` right-aligned to 25 (get_mysql_version() in
  bin/pt-mysql-summary).
- pt-table-checksum: the header `TS ERRORS DIFFS ROWS DIFF_ROWS CHUNKS SKIPPED TIME TABLE`
  and one line per table (its OUTPUT section).
- pt-query-digest: the `# Profile` table, `# Rank Query ID Response time Calls R/Call V/M`
  (as printed in the lab by 3.2.1; the format is unchanged in 3.7).
- pt-online-schema-change: `Successfully altered `db`.`table`.` on its last line (the
  tool's --execute output, bin/pt-online-schema-change).
- a MySQL 8.4 slow log entry: `# Time: ...`, `# User@Host: ...`, `# Query_time: ...`
  (MySQL manual, "The Slow Query Log").
- `SELECT CURRENT_USER()` over the network as root: `root@%`.
"""

from __future__ import annotations

from typing import Any

from ecoready.domain.model import Category
from ecoready.probes.mydumper import COPY_DB, DUMP_DIR, SOURCE_DB, MydumperProbe
from ecoready.probes.mydumper import SEED as DUMP_SEED
from ecoready.probes.toolkit import CNF, OSC_ROWS, OSC_SEED, SEED, SLOW_LOG, ToolkitProbe
from tests.support.fake_host import FakeContainer, FakeHost, Sql, component, context, ok, rig

MYSQL84 = component("mysql-8.4", "server", "mysql:8.4")
PS84 = component("percona-server-8.4", "server", "percona/percona-server:8.4")
MYDUMPER = component(
    "mydumper", "mydumper", "mydumper/mydumper:v1.0.3-1", category=Category.BACKUP, backend="mysql-8.4"
)
TOOLKIT = component(
    "percona-toolkit",
    "toolkit",
    "percona/percona-toolkit:3.7.1",
    category=Category.TOOLKIT,
    backend="percona-server-8.4",
)
SLOW = """/usr/sbin/mysqld, Version: 8.4.10-10 (Percona Server (GPL), Release 10, Revision 5eb4d2bc). started with:
Tcp port: 3306  Unix socket: /var/lib/mysql/mysql.sock
Time                 Id Command    Argument
# Time: 2026-11-22T10:00:00.000001Z
# User@Host: root[root] @  [127.0.0.1]  Id:    12
# Query_time: 0.000812  Lock_time: 0.000002 Rows_sent: 1  Rows_examined: 5000
SET timestamp=1795341600;
SELECT COUNT(*) AS n FROM ecoready_toolkit.t WHERE id > 0;
"""


def backend(host: FakeHost, warmed: list[str]) -> None:
    checksums = {"ecoready_dump.t": 1959281432, "ecoready_copy.t": 1959281432}

    @host.sql
    def server(call: Sql) -> list[dict[str, object]] | None:
        if call.via.role not in ("backend-server", "target"):
            return None
        if call.statement == "SELECT 1 AS ok":
            return [{"ok": 1}]
        if call.statement == "SELECT CURRENT_USER() AS me":
            warmed.append(call.host)
            return [{"me": "root@%"}]
        if (
            call.statement in (SEED, OSC_SEED, DUMP_SEED)
            or call.statement.startswith("SET GLOBAL")
            or "SELECT v FROM" in call.statement
        ):
            return []
        if call.statement.startswith("SELECT COUNT(*) AS n, SUM(added_online = 7) AS altered"):
            return [{"n": str(OSC_ROWS), "altered": str(OSC_ROWS), "triggers": "0"}]
        if call.statement.startswith("SELECT COUNT(*) AS n FROM ecoready_toolkit.t"):
            return [{"n": 4900}]
        if call.statement == f"SELECT COUNT(*) AS n FROM {COPY_DB}.t":
            assert call.via.role == "target"
            return [{"n": 2000}]
        if call.statement.startswith("CHECKSUM TABLE "):
            table = call.statement.removeprefix("CHECKSUM TABLE ")
            return [{"Table": table, "Checksum": checksums[table]}]
        return None


# pt-online-schema-change --execute's report (bin/pt-online-schema-change, as 3.2.1 printed
# it in the lab against MySQL 9.7)
OSC_DONE = (
    "Altering `ecoready_toolkit`.`osc`...\n"
    "Creating new table...\nCreated new table ecoready_toolkit._osc_new OK.\n"
    "Copying approximately 2000 rows...\nCopied rows OK.\n"
    "Swapped original and new tables OK.\nDropped old table `ecoready_toolkit`.`_osc_old` OK.\n"
    "Dropped triggers OK.\nSuccessfully altered `ecoready_toolkit`.`osc`.\n"
)


def answer_tools(host: FakeHost, osc_output: str = OSC_DONE) -> None:
    @host.execs_to
    def tools(container: FakeContainer, argv: list[str]) -> Any:
        if container.role == "backend-server" and argv == ["cat", SLOW_LOG]:
            return ok(SLOW)
        if container.role != "toolkit":
            return None
        if argv == ["pt-summary"]:
            return ok(
                "# Percona Toolkit System Summary Report ######################\n"
                "        Date | 2026-11-22 10:00:00 UTC (local TZ: UTC +0000)\n"
                "Architecture | CPU = 64-bit, OS = 64-bit\n"
            )
        if argv[0] == "pt-mysql-summary":
            return ok(
                "# Percona Toolkit MySQL Summary Report #######################\n"
                "                 Hostname | 4f2a9c1be07d\n"
                "                  Version | 8.4.10-10 Percona Server (GPL), Release 10, Revision 5eb4d2bc\n"
            )
        if argv[0] == "pt-table-checksum":
            return ok(
                "            TS ERRORS  DIFFS     ROWS  DIFF_ROWS  CHUNKS SKIPPED    TIME TABLE\n"
                "11-22T10:00:01      0      0     5000          0       4       0   0.041 ecoready_toolkit.t\n"
            )
        if argv[0] == "pt-online-schema-change":
            return ok(osc_output)
        if argv[0] == "pt-query-digest":
            return ok(
                "# Profile\n# Rank Query ID                           Response time Calls R/Call V/M  \n"
                "# ==== ================================== ============= ===== ====== =====\n"
                "#    1 0x1FE1379FE2A31B8D16219655761820A2 0.0040 80.0%     5 0.0008  0.00 SELECT ecoready_toolkit.t\n"
                "#    2 0x8B1A9953C4611296A827ABF8C47804D7 0.0010 20.0%     1 0.0010  0.00 SELECT ecoready_toolkit.t\n"
            )
        return None


async def test_toolkit_against_percona_server_84() -> None:
    r = rig()
    warmed: list[str] = []
    backend(r.host, warmed)

    answer_tools(r.host)

    probe = ToolkitProbe(context(r, TOOLKIT, PS84))
    await probe.start()
    await probe.smoke()
    checks = r.checks()
    assert {n: c.outcome.value for n, c in checks.items()} == {
        "pt-summary": "pass",
        "pt-mysql-summary": "pass",
        "pt-table-checksum": "pass",
        "pt-query-digest": "pass",
        "pt-online-schema-change": "pass",
    }
    assert checks["pt-mysql-summary"].detail == (
        "MySQL summary of backend-server: 8.4.10-10 Percona Server (GPL), Release 10, Revision 5eb4d2bc"
    )
    # root logged in once over the network (TLS, from the server's client) before any pt tool
    assert warmed == ["backend-server"]
    warm_at = next(i for i, c in enumerate(r.host.sql_log) if c.statement == "SELECT CURRENT_USER() AS me")
    assert all(c.via.role == "backend-server" for c in r.host.sql_log[: warm_at + 1])
    toolkit = r.host.by_role("toolkit")
    assert toolkit.spec.image == "img:percona/percona-toolkit:3.7.1" and toolkit.spec.command == ("sleep", "infinity")
    password = r.host.by_role("backend-server").files["/run/ecoready/root-password"].decode()
    assert toolkit.files[CNF].decode() == f'[client]\nuser=root\npassword="{password}"\n'
    checksum = next(argv for argv in r.host.argvs("toolkit") if argv[0] == "pt-table-checksum")
    assert checksum[1] == f"h=backend-server,P=3306,F={CNF}" and "--recursion-method=none" in checksum
    osc = next(argv for argv in r.host.argvs("toolkit") if argv[0] == "pt-online-schema-change")
    assert osc[1] == f"h=backend-server,P=3306,F={CNF},D=ecoready_toolkit,t=osc"
    assert "--execute" in osc and "--recursion-method=none" in osc and "--no-version-check" in osc
    summary = next(argv for argv in r.host.argvs("toolkit") if argv[0] == "pt-mysql-summary")
    assert summary[:4] == ["pt-mysql-summary", "--sleep=1", "--", f"--defaults-extra-file={CNF}"]
    assert all(password not in " ".join(argv) for _, argv in r.host.execs)


async def test_an_alter_that_did_not_happen_fails_the_online_schema_change_check() -> None:
    r = rig()
    backend(r.host, [])
    answer_tools(r.host, osc_output="Altering `ecoready_toolkit`.`osc`...\nAltered nothing.\n")
    probe = ToolkitProbe(context(r, TOOLKIT, PS84))
    await probe.start()
    await probe.smoke()
    check = r.checks()["pt-online-schema-change"]
    assert check.outcome.value == "fail" and "did not say it altered" in check.detail


async def test_mydumper_v1_against_mysql_84() -> None:
    r = rig()
    backend(r.host, [])

    @r.host.execs_to
    def tools(container: FakeContainer, argv: list[str]) -> Any:
        if container.role != "tools":
            return None
        if argv[0] in ("mydumper", "myloader"):
            return ok(stderr=f"** Message: 10:00:00.000: {argv[0]} finished\n")
        if argv[:2] == ["sh", "-c"] and argv[2] == f"ls {DUMP_DIR} | wc -l":
            # v1.0 names: <db>-schema-create.sql, <db>.<table>-schema.sql, <db>.<table>.00000.sql, metadata
            return ok("6\n")
        return None

    probe = MydumperProbe(context(r, MYDUMPER, MYSQL84))
    await probe.start()
    await probe.smoke()
    assert {n: c.outcome.value for n, c in r.checks().items()} == {
        "mydumper": "pass",
        "myloader": "pass",
        "checksum-equal": "pass",
    }
    target, tools_container = r.host.by_role("target"), r.host.by_role("tools")
    assert target.spec.image == "img:mysql:8.4" and target.spec.env["MYSQL_ROOT_PASSWORD_FILE"]
    assert tools_container.spec.image == "img:mydumper/mydumper:v1.0.3-1"
    argvs = r.host.argvs("tools")
    dump = next(a for a in argvs if a[0] == "mydumper")
    load = next(a for a in argvs if a[0] == "myloader")
    assert dump[1] == "--defaults-file=/run/ecoready/source.cnf" and dump[6:8] == ["-B", SOURCE_DB]
    assert load[1] == "--defaults-file=/run/ecoready/target.cnf" and "-o" in load and load[8:10] == ["-B", COPY_DB]
    source_cnf = tools_container.files["/run/ecoready/source.cnf"].decode()
    # v1.0 leaves user/password/host to the client library, which reads [client]
    assert source_cnf.startswith("[client]\nuser=root\n") and "host=backend-server\n" in source_cnf
    for secret_file in ("/run/ecoready/root-password",):
        for role in ("backend-server", "target"):
            password = r.host.by_role(role).files[secret_file].decode()
            assert all(password not in " ".join(argv) for _, argv in r.host.execs)
