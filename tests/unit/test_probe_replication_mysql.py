"""The replication probe's two dialects over a fake engine: MySQL 8.4's statements (the
ones MariaDB keeps are removed there), the setup order, passwords only in script files,
and the parsing of each family's replica status.

Canned formats:
- MySQL 8.4 `SHOW REPLICA STATUS` columns `Replica_IO_Running`, `Replica_SQL_Running`,
  `Seconds_Behind_Source`, `Last_IO_Error`, `Last_SQL_Error` (MySQL 8.4 Reference Manual,
  "SHOW REPLICA STATUS Statement"); MariaDB's `SHOW SLAVE STATUS` `Slave_IO_Running`,
  `Seconds_Behind_Master` (MariaDB KB; the lab run shows them).
- `@@gtid_executed` as `<server_uuid>:1-5` (MySQL manual, "GTID Format and Storage").
- the refusal of a write on a read-only server: `ERROR 1290 (HY000): The MySQL server is
  running with the --read-only option so it cannot execute this statement`
  (ER_OPTION_PREVENTS_STATEMENT, MySQL Server Error Message Reference).
- `SELECT @@version` of the `mysql:8.4` image: `8.4.6`.
"""

from __future__ import annotations

import pytest

from ecoready.domain.model import Category
from ecoready.probes.replication import DIALECTS, ReplicationProbe, dialect, replica_state
from ecoready.probes.shared.cluster import reset_binary_logs
from tests.support.fake_host import Rig, Sql, SqlFailure, component, context, rig

REPLICATION = component("replication-mysql", "replication", "mysql:8.4", category=Category.HA)
PRIMARY_UUID = "3e11fa47-71ca-11e1-9e33-c80aa9429562"


def mysql_pair(r: Rig, *, io: str = "Yes") -> list[str]:
    """A MySQL 8.4 primary and replica; returns the statements each received, in order."""
    seen: list[str] = []
    rows = {"n": 0}

    @r.host.sql
    def server(call: Sql) -> list[dict[str, object]] | None:
        role = call.via.role
        seen.append(f"{role}: {call.script or call.statement}")
        if call.statement == "SELECT 1 AS ok":
            return [{"ok": 1}]
        if call.statement == "SELECT @@version AS v":
            return [{"v": "8.4.6"}]
        if call.statement in ("RESET BINARY LOGS AND GTIDS", "START REPLICA"):
            return []
        if call.script is not None:
            return [{"users": 2}] if role == "primary" else []
        if call.statement == "SHOW REPLICA STATUS":
            assert role == "replica"
            return [
                {
                    "Replica_IO_State": "Waiting for source to send event",
                    "Source_Host": "primary",
                    "Replica_IO_Running": io,
                    "Replica_SQL_Running": "Yes",
                    "Last_IO_Error": "" if io == "Yes" else "error connecting to source 'repl@primary:3306'",
                    "Last_SQL_Error": "",
                    "Seconds_Behind_Source": 0,
                    "Auto_Position": 1,
                }
            ]
        if call.statement.startswith("CREATE TABLE ecoready_repl.t"):
            rows["n"] = 3
            return []
        if call.statement == "SELECT @@gtid_executed AS v":
            return [{"v": f"{PRIMARY_UUID}:1-5"}]
        if call.statement == "SELECT COUNT(*) AS n FROM ecoready_repl.t":
            return [{"n": rows["n"]}]
        if call.statement == "SELECT @@read_only AS v":
            return [{"v": 1}]
        if call.statement.startswith("INSERT INTO ecoready_repl.t VALUES (99"):
            assert (role, call.user) == ("replica", "app")
            raise SqlFailure(
                1290,
                "HY000",
                "The MySQL server is running with the --read-only option so it cannot execute this statement",
            )
        return None

    return seen


async def test_mysql_84_sequence_uses_the_replica_statements_and_gtid_auto_position() -> None:
    r = rig()
    seen = mysql_pair(r)
    probe = ReplicationProbe(context(r, REPLICATION))
    await probe.start()
    await probe.smoke()
    checks = r.checks()
    assert {n: c.outcome.value for n, c in checks.items()} == {
        "rows-replicate": "pass",
        "lag-zero": "pass",
        "replica-read-only": "pass",
    }
    assert checks["lag-zero"].detail == "Seconds_Behind_Source = 0"
    assert (
        checks["rows-replicate"].detail
        == f"3 rows on the replica (primary GTID {PRIMARY_UUID}:1-5, replica at {PRIMARY_UUID}:1-5)"
    )

    primary, replica = r.host.by_role("primary"), r.host.by_role("replica")
    assert primary.spec.command == (
        "mysqld", "--server-id=1", "--log-bin=mysql-bin", "--gtid-mode=ON", "--enforce-gtid-consistency=ON"
    )  # fmt: skip
    assert "--read-only=ON" in (replica.spec.command or ()) and "--gtid-mode=ON" in (replica.spec.command or ())

    setup = next(s for s in seen if s.startswith("primary: CREATE USER"))
    assert "CREATE USER 'repl'@'%' IDENTIFIED WITH caching_sha2_password BY" in setup
    assert "GRANT REPLICATION SLAVE ON *.* TO 'repl'@'%'" in setup
    follow = next(s for s in seen if "CHANGE REPLICATION SOURCE TO" in s)
    assert follow.startswith("replica: CHANGE REPLICATION SOURCE TO SOURCE_HOST='primary', SOURCE_PORT=3306")
    assert "SOURCE_AUTO_POSITION=1, SOURCE_SSL=1" in follow and follow.rstrip().endswith("START REPLICA;")
    assert not any("MASTER" in s or "SLAVE STATUS" in s for s in seen)  # removed in MySQL 8.4

    # binary logs reset on both before anything replicates, then users, then the replica
    order = [
        seen.index("primary: RESET BINARY LOGS AND GTIDS"),
        seen.index("replica: RESET BINARY LOGS AND GTIDS"),
        seen.index(setup),
        seen.index(follow),
    ]
    assert order == sorted(order)
    for secret in (probe.repl_password, probe.app_password):
        assert secret.reveal() in follow + setup  # in the script files...
        assert all(secret.reveal() not in " ".join(argv) for _, argv in r.host.execs)  # ...never in an argv


async def test_a_replica_that_cannot_connect_keeps_the_start_waiting_with_the_error() -> None:
    import asyncio

    r = rig()
    mysql_pair(r, io="Connecting")
    ctx = context(r, REPLICATION)
    with pytest.raises(asyncio.TimeoutError):
        await asyncio.wait_for(ReplicationProbe(ctx).start(), 2)
    assert "IO thread Connecting, SQL thread Yes: error connecting to source 'repl@primary:3306'" in ctx.waiting_for


def test_the_flavour_picks_the_dialect_in_one_place() -> None:
    assert dialect("mysql") is dialect("percona") is DIALECTS["mysql"]
    assert dialect("mariadb") is DIALECTS["mariadb"]
    maria = DIALECTS["mariadb"].change_source("primary", "repl", "pw")
    assert maria.startswith("CHANGE MASTER TO MASTER_HOST='primary'") and "MASTER_USE_GTID=slave_pos" in maria
    assert DIALECTS["mariadb"].start_replica == "START SLAVE" and DIALECTS["mariadb"].status == "SHOW SLAVE STATUS"
    assert replica_state({"Replica_IO_Running": "Yes", "Replica_SQL_Running": "Yes"}, DIALECTS["mysql"]) is None
    # MySQL's column names are not MariaDB's: a MariaDB row read as MySQL's is not running
    assert replica_state({"Slave_IO_Running": "Yes", "Slave_SQL_Running": "Yes"}, DIALECTS["mysql"]) == (
        "IO thread None, SQL thread None"
    )


@pytest.mark.parametrize(
    ("flavor", "version", "statement"),
    [
        ("mysql", "8.4.6", "RESET BINARY LOGS AND GTIDS"),
        ("percona", "8.4.10-10", "RESET BINARY LOGS AND GTIDS"),
        ("mysql", "9.7.1", "RESET BINARY LOGS AND GTIDS"),
        ("mysql", "8.0.41", "RESET MASTER"),
        ("mariadb", "11.8.2-MariaDB-ubu2404", "RESET MASTER"),
    ],
)
def test_reset_binary_logs_per_version(flavor: str, version: str, statement: str) -> None:
    assert reset_binary_logs(flavor, version) == statement
