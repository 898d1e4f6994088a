"""A logical dump with the server's own dump tool: `mysqldump` (MySQL, in the `mysql`
images) or `mariadb-dump` (MariaDB, in the `mariadb` images; MariaDB 11.0 and later ship
no `mysqldump` name): dump a schema from the backend server, load it with the client of
the same image into a second server under another database name, and check the copy.

What it proves, check by check:
- `dump`: the tool dumps the schema in one consistent snapshot (`--single-transaction`:
  no table locks on InnoDB) with its stored routines, triggers and events, to the end
  (the tool's `-- Dump completed` line is the last of the file). `mysqldump` also gets
  `--set-gtid-purged=OFF`: a copy under another name, not a replica's provisioning (with
  GTIDs on, the dump would otherwise set the target's GTID_PURGED).
- `load`: the client loads the file into a new database of the second server; every row
  is there.
- `checksum-equal`: CHECKSUM TABLE of the copy equals the source's.
- `routine-trigger-view`: the copy's function and view answer on the copy's table (a
  definition still naming the source's schema would fail: that schema is not on the
  target), and its trigger fires on an insert.

The tool and the client read the logins from option files (`--defaults-file`, which
must be the first option), never from the command line; the dump goes to a file with
`--result-file`, the load reads it on the client's standard input in the tools container.
"""

from __future__ import annotations

from dataclasses import dataclass

from ecoready.probe_api import CheckFailed, SqlError
from ecoready.probes.shared.dump_load import COPY_DB, ROWS, SOURCE_CNF, SOURCE_DB, TARGET_CNF, DumpLoadProbe

DUMP_FILE = "/tmp/ecoready-dump.sql"
DONE_MARKER = "-- Dump completed"  # the tool's last line, unless --skip-comments


@dataclass(frozen=True)
class DumpTool:
    client: str  # the client of the same image that loads the dump
    extra: tuple[str, ...] = ()  # options of this tool only


TOOLS = {
    "mysqldump": DumpTool("mysql", ("--set-gtid-purged=OFF",)),
    "mariadb-dump": DumpTool("mariadb"),
}
# A trigger, a stored function and a view on the seeded table (one-statement bodies: no
# DELIMITER needed); the trigger fires only on rows inserted after it, so the audit table
# starts empty on both servers.
OBJECTS = (
    "CREATE TABLE audit (id INT PRIMARY KEY, v CHAR(32) NOT NULL) ENGINE=InnoDB; "
    "CREATE TRIGGER t_audit AFTER INSERT ON t FOR EACH ROW INSERT INTO audit VALUES (NEW.id, NEW.v); "
    "CREATE FUNCTION rows_in_t() RETURNS INT READS SQL DATA RETURN (SELECT COUNT(*) FROM t); "
    "CREATE VIEW even_rows AS SELECT id, v FROM t WHERE id % 2 = 0"
)
INSERTED = ROWS + 1  # the row the trigger check inserts into the copy


def dump_command(tool: str) -> list[str]:
    return [
        tool,
        f"--defaults-file={SOURCE_CNF}",
        *TOOLS[tool].extra,
        "--single-transaction",
        "--routines",
        "--triggers",
        "--events",
        f"--result-file={DUMP_FILE}",
        SOURCE_DB,
    ]


def load_command(tool: str) -> list[str]:
    """The client, its option file and the copy's name as arguments of a fixed script."""
    script = 'exec "$0" --defaults-file="$1" "$2" < "$3"'
    return ["sh", "-c", script, TOOLS[tool].client, TARGET_CNF, COPY_DB, DUMP_FILE]


class DumpProbe(DumpLoadProbe):
    kind = "dump"
    objects = OBJECTS

    @property
    def tool(self) -> str:
        return str(self.ctx.options["tool"])

    async def smoke(self) -> None:
        ctx = self.ctx
        if await ctx.check("dump", self._dump) and await ctx.check("load", self._load):
            await ctx.check("checksum-equal", self.checksum)
            await ctx.check("routine-trigger-view", self._objects)

    async def _dump(self) -> str:
        await self.run_tool(dump_command(self.tool))
        probe = await self.ctx.exec(
            self.tools, ["sh", "-c", 'wc -c < "$0" && tail -n 1 "$0"', DUMP_FILE], timeout=self.ctx.scaled(20)
        )
        size, _, last = probe.stdout.strip().partition("\n")
        if not probe.ok or not size.strip().isdigit():
            raise CheckFailed(f"no dump file: {probe.last_line() or 'nothing at ' + DUMP_FILE}")
        if not last.startswith(DONE_MARKER):
            raise CheckFailed(f"the dump ends before `{DONE_MARKER}`: its last line is {last[:80]!r}")
        return f"{self.tool} dumped {SOURCE_DB} ({int(size)} bytes, --single-transaction, routines, triggers, events)"

    async def _load(self) -> str:
        await self.target.query(f"CREATE DATABASE {COPY_DB}")
        await self.run_tool(load_command(self.tool))
        return await self.loaded_rows()

    async def _objects(self) -> str:
        try:
            got = await self.target.row(
                f"SELECT {COPY_DB}.rows_in_t() AS f, (SELECT COUNT(*) FROM {COPY_DB}.even_rows) AS v"
            )
            results = await self.target.query_results(
                f"INSERT INTO {COPY_DB}.t VALUES ({INSERTED}, 'inserted', 0); "
                f"SELECT COUNT(*) AS audited, {COPY_DB}.rows_in_t() AS f FROM {COPY_DB}.audit WHERE id = {INSERTED}"
            )
        except SqlError as exc:
            raise CheckFailed(f"on the copy: {exc}") from None
        if got.get("f") != str(ROWS) or got.get("v") != str(ROWS // 2):
            raise CheckFailed(
                f"the copy's rows_in_t() says {got.get('f')} and its view has {got.get('v')} rows, "
                f"expected {ROWS} and {ROWS // 2}"
            )
        after = next((rows[0] for rows in results if rows), {})
        if after.get("audited") != "1" or after.get("f") != str(INSERTED):
            audited = after.get("audited")
            raise CheckFailed(f"after an insert into the copy its trigger wrote {audited} audit rows, expected 1")
        return "the copy's function and view read its own table; its trigger fired on an insert"


PROBE = DumpProbe
