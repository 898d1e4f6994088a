"""The dump probe (mysqldump, mariadb-dump) over a fake engine: its command lines and option
files (no password on an argv, `--defaults-file` first), and each check passing and
failing on what the servers answer. The fake servers keep the state the tools would leave:
the copy has rows only after the load, and routines only when the dump asked for them.

Canned formats: the dump file's last line `-- Dump completed on 2026-11-27 23:26:30` (the
comment mysqldump 9.7.4 and mariadb-dump 11.8.9 end a dump with, seen in the lab
2026-11-27); CHECKSUM TABLE's `Table`/`Checksum` columns; a client's
`ERROR 1305 (42000)` for a missing function (MySQL's and MariaDB's error lists).
The same probe against the lab's real MySQL 9.7 and MariaDB: tests/integration/test_stand_in.py
(the default matrix's rows) and containers/lab.toml (the lab's rows).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from ecoready.domain.errors import ConfigError
from ecoready.domain.model import Category
from ecoready.matrix.kinds import DUMP_TOOLS, KINDS
from ecoready.matrix.load import load
from ecoready.probes.dump import DUMP_FILE, INSERTED, OBJECTS, TOOLS, DumpProbe, dump_command, load_command
from ecoready.probes.shared.dump_load import COPY_DB, ROWS, SEED, SOURCE_CNF, SOURCE_DB, TARGET_CNF
from tests.support.fake_host import FakeContainer, FakeHost, Sql, SqlFailure, component, context, failed, ok, rig

MYSQL = component("mysql-9.7", "server", "mysql:9.7")
MARIADB = component("mariadb-11.8", "server", "mariadb:11.8")
MYSQLDUMP = component(
    "mysqldump-9.7", "dump", "mysql:9.7", category=Category.BACKUP, backend="mysql-9.7", options={"tool": "mysqldump"}
)
MARIADB_DUMP = component(
    "mariadb-dump-11.8",
    "dump",
    "mariadb:11.8",
    category=Category.BACKUP,
    backend="mariadb-11.8",
    options={"tool": "mariadb-dump"},
)
DONE = "-- Dump completed on 2026-11-27 23:26:30"


@dataclass
class Servers:
    """What the source and the target answer, and what the tools did to them."""

    dump_argv: list[str] = field(default_factory=list)
    loaded: bool = False
    checksums: dict[str, int] = field(
        default_factory=lambda: {f"{SOURCE_DB}.t": 2342308196, f"{COPY_DB}.t": 2342308196}
    )
    trigger_fires: bool = True
    dump_exit: int = 0
    last_line: str = DONE
    seeded: list[str] = field(default_factory=list)

    def install(self, host: FakeHost, tool: str) -> None:
        host.sql(self.sql)

        @host.execs_to
        def tools(container: FakeContainer, argv: list[str]) -> Any:
            if container.role != "tools":
                return None
            if argv[0] == tool:
                self.dump_argv = argv
                if self.dump_exit:
                    return failed(self.dump_exit, f"{tool}: Got error: 2013: Lost connection to server\n")
                return ok()
            if argv[:2] == ["sh", "-c"] and argv[-1] == DUMP_FILE and argv[2].startswith("wc -c"):
                return ok(f"105031\n{self.last_line}\n") if self.dump_argv else failed(1, "sh: cannot open")
            if argv[:2] == ["sh", "-c"] and argv[3] == TOOLS[tool].client:
                self.loaded = True
                return ok()
            return None

    def sql(self, call: Sql) -> Any:
        statement = call.statement
        if statement == "SELECT 1 AS ok":
            return [{"ok": 1}]
        if statement in (SEED, OBJECTS):
            self.seeded.append(statement)
            return []
        if statement == f"CREATE DATABASE {COPY_DB}":
            assert call.via.role == "target"
            return []
        if statement == f"SELECT COUNT(*) AS n FROM {COPY_DB}.t":
            return [{"n": ROWS if self.loaded else 0}]
        if statement.startswith("CHECKSUM TABLE "):
            table = statement.removeprefix("CHECKSUM TABLE ")
            return [{"Table": table, "Checksum": self.checksums[table]}]
        routines = "--routines" in self.dump_argv
        if statement.startswith(f"SELECT {COPY_DB}.rows_in_t() AS f"):
            if not routines:
                raise SqlFailure(1305, "42000", f"FUNCTION {COPY_DB}.rows_in_t does not exist")
            return [{"f": ROWS, "v": ROWS // 2}]
        if statement.startswith(f"INSERT INTO {COPY_DB}.t VALUES ({INSERTED}"):
            return [[{"audited": 1 if self.trigger_fires else 0, "f": INSERTED}]]
        return None


async def run(tool: str = "mysqldump", servers: Servers | None = None) -> tuple[Any, Servers, dict[str, str]]:
    r = rig()
    servers = servers or Servers()
    servers.install(r.host, tool)
    comp, backend = (MYSQLDUMP, MYSQL) if tool == "mysqldump" else (MARIADB_DUMP, MARIADB)
    probe = DumpProbe(context(r, comp, backend))
    await probe.start()
    await probe.smoke()
    return r, servers, {n: c.outcome.value for n, c in r.checks().items()}


ALL_PASS = {"dump": "pass", "load": "pass", "checksum-equal": "pass", "routine-trigger-view": "pass"}


@pytest.mark.parametrize("tool", ["mysqldump", "mariadb-dump"])
async def test_a_dump_loaded_into_a_second_server_passes(tool: str) -> None:
    r, servers, outcomes = await run(tool)
    assert outcomes == ALL_PASS
    assert servers.seeded == [SEED, OBJECTS]  # the objects created in the seeded schema, unqualified
    objects_call = next(argv for role, argv in r.host.execs if role == "backend-server" and OBJECTS in argv)
    assert f"--database={SOURCE_DB}" in objects_call
    image = "img:mysql:9.7" if tool == "mysqldump" else "img:mariadb:11.8"
    assert r.host.by_role("tools").spec.image == image and r.host.by_role("target").spec.image == image
    assert "105031 bytes" in r.checks()["dump"].detail and "--single-transaction" in r.checks()["dump"].detail


async def test_mysqldump_command_line_and_option_files() -> None:
    r, servers, _ = await run("mysqldump")
    assert servers.dump_argv == dump_command("mysqldump")
    assert servers.dump_argv[:3] == ["mysqldump", f"--defaults-file={SOURCE_CNF}", "--set-gtid-purged=OFF"]
    assert {"--single-transaction", "--routines", "--triggers", "--events"} <= set(servers.dump_argv)
    assert servers.dump_argv[-2:] == [f"--result-file={DUMP_FILE}", SOURCE_DB]
    load = load_command("mysqldump")
    assert load in r.host.argvs("tools") and load[3:] == ["mysql", TARGET_CNF, COPY_DB, DUMP_FILE]
    tools = r.host.by_role("tools")
    source = tools.files[SOURCE_CNF].decode()
    assert source.startswith("[client]\nuser=root\n") and "host=backend-server\n" in source
    assert "host=target\n" in tools.files[TARGET_CNF].decode()
    for role in ("backend-server", "target"):
        password = r.host.by_role(role).files["/run/ecoready/root-password"].decode()
        assert f'password="{password}"' in (source + tools.files[TARGET_CNF].decode())
        assert all(password not in " ".join(argv) for _, argv in r.host.execs)


async def test_mariadb_dump_loads_with_the_mariadb_client() -> None:
    r, servers, _ = await run("mariadb-dump")
    assert servers.dump_argv[:2] == ["mariadb-dump", f"--defaults-file={SOURCE_CNF}"]
    assert "--set-gtid-purged=OFF" not in servers.dump_argv  # mysqldump's option, not MariaDB's
    assert load_command("mariadb-dump")[3] == "mariadb" and load_command("mariadb-dump") in r.host.argvs("tools")


async def test_a_dump_without_routines_fails_the_routine_check(monkeypatch: pytest.MonkeyPatch) -> None:
    import ecoready.probes.dump as module

    def without_routines(tool: str) -> list[str]:
        return [a for a in dump_command(tool) if a != "--routines"]

    monkeypatch.setattr(module, "dump_command", without_routines)
    r, _, outcomes = await run("mysqldump")
    assert outcomes == {**ALL_PASS, "routine-trigger-view": "fail"}
    assert "rows_in_t does not exist" in r.checks()["routine-trigger-view"].detail


async def test_a_failing_dump_tool_stops_before_the_load() -> None:
    r, servers, outcomes = await run("mysqldump", Servers(dump_exit=2))
    assert outcomes == {"dump": "fail"}
    assert r.checks()["dump"].detail == "`mysqldump` exit 2: mysqldump: Got error: 2013: Lost connection to server"
    assert not servers.loaded


async def test_a_dump_cut_short_fails() -> None:
    cut = "INSERT INTO `t` VALUES (1,'c4ca4238a0b923820dcc509a6f75849b',0.14"  # a dump that stopped mid-line
    r, _, outcomes = await run("mariadb-dump", Servers(last_line=cut))
    assert outcomes == {"dump": "fail"}
    assert "ends before `-- Dump completed`" in r.checks()["dump"].detail


async def test_a_different_checksum_fails() -> None:
    servers = Servers(checksums={f"{SOURCE_DB}.t": 2342308196, f"{COPY_DB}.t": 1878914908})
    r, _, outcomes = await run("mysqldump", servers)
    assert outcomes == {**ALL_PASS, "checksum-equal": "fail"}
    assert r.checks()["checksum-equal"].detail == "CHECKSUM TABLE differs: source 2342308196, loaded 1878914908"


async def test_a_trigger_that_does_not_fire_fails() -> None:
    r, _, outcomes = await run("mariadb-dump", Servers(trigger_fires=False))
    assert outcomes == {**ALL_PASS, "routine-trigger-view": "fail"}
    assert "trigger wrote 0 audit rows, expected 1" in r.checks()["routine-trigger-view"].detail


def test_the_kind_knows_the_probes_tools_and_audits_them() -> None:
    kind = KINDS["dump"]
    assert set(DUMP_TOOLS) == set(TOOLS) and kind.choices["tool"] == DUMP_TOOLS
    assert kind.required == ("tool",) and kind.needs_backend
    assert kind.programs == (("mariadb-dump", "mysqldump"), ("mariadb", "mysql"))


@pytest.mark.parametrize(
    ("options", "said"),
    [("", "tool"), ('options = { tool = "mydumper" }', "mydumper")],
    ids=["missing", "unknown"],
)
def test_a_dump_row_must_name_a_known_tool(tmp_path: Any, options: str, said: str) -> None:
    matrix = tmp_path / "m.toml"
    matrix.write_text(
        'title = "t"\n[[components]]\nid = "db"\nname = "db"\ncategory = "server"\nprobe = "server"\n'
        'image = "mysql:9.7"\n[[components]]\nid = "d"\nname = "d"\ncategory = "backup"\nprobe = "dump"\n'
        f'image = "mysql:9.7"\nbackend = "db"\n{options}\n'
    )
    with pytest.raises(ConfigError) as error:
        load(matrix, {})
    assert said in str(error.value) and "m.toml:" in str(error.value)
